// y[i] = alpha * x[i] + y[i] (BLAS saxpy), in place.
kernel void saxpy(float alpha, global const float *x, global float *y, int n) {
  int i = get_global_id(0);
  if (i < n)
    y[i] = alpha * x[i] + y[i];
}
