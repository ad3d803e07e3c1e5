// y[r][c] = alpha * x[r][c] + y[r][c] on a 2D grid with partial workgroups.
kernel void saxpy2d(global float *y, global const float *x, float alpha, int width, int height) {
  int c = get_global_id(0);
  int r = get_global_id(1);
  if (c < width && r < height) {
    int i = r * width + c;
    y[i] = alpha * x[i] + y[i];
  }
}
