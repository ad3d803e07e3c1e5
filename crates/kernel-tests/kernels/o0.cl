// A stencil built without optimisation (-O0): its locals in private memory.
kernel void stencil(global const float *x, global float *y, int n) {
  int i = get_global_id(0);
  if (i >= n)
    return;
  float acc = 0.0f;
  for (int k = -2; k <= 2; ++k) {
    int j = i + k;
    if (j >= 0 && j < n)
      acc += x[j] * (float)(3 - (k < 0 ? -k : k));
  }
  y[i] = acc;
}
