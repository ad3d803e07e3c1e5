#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// Transcendentals from the ROCm device library (ocml). Each work-item applies
// function number `f` to x[i] (and y[i] for the two-argument functions).
// Function numbers (shared with tests/math.rs):
//  0 sin 1 cos 2 tan 3 exp 4 exp2 5 log 6 log2 7 pow 8 sqrt 9 tanh
//  10 atan2 11 cbrt 12 asin 13 sinh 14 log1p 15 expm1 16 rsqrt 17 hypot
#define APPLY(T)                                                                                  \
  switch (f) {                                                                                    \
  case 0: r = sin(v); break;                                                                      \
  case 1: r = cos(v); break;                                                                      \
  case 2: r = tan(v); break;                                                                      \
  case 3: r = exp(v); break;                                                                      \
  case 4: r = exp2(v); break;                                                                     \
  case 5: r = log(v); break;                                                                      \
  case 6: r = log2(v); break;                                                                     \
  case 7: r = pow(v, w); break;                                                                   \
  case 8: r = sqrt(v); break;                                                                     \
  case 9: r = tanh(v); break;                                                                     \
  case 10: r = atan2(v, w); break;                                                                \
  case 11: r = cbrt(v); break;                                                                    \
  case 12: r = asin(v); break;                                                                    \
  case 13: r = sinh(v); break;                                                                    \
  case 14: r = log1p(v); break;                                                                   \
  case 15: r = expm1(v); break;                                                                   \
  case 16: r = rsqrt(v); break;                                                                   \
  case 17: r = hypot(v, w); break;                                                                \
  default: r = (T)0; break;                                                                       \
  }

kernel void math_f32(global const float *x, global const float *y, global float *out, int f,
                     uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  float v = x[i], w = y[i], r;
  APPLY(float)
  out[i] = r;
}

kernel void math_f64(global const double *x, global const double *y, global double *out, int f,
                     uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  double v = x[i], w = y[i], r;
  APPLY(double)
  out[i] = r;
}
