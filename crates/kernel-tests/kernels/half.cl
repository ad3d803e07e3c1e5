#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// Packed f16 math on half2/half4 vectors (v_pk_* instructions).
// out has 6 half2 per input half2:
//  0 a*b, 1 a+b, 2 a-b, 3 fma(a,b,c), 4 min(a,b), 5 max(a,b)
kernel void half2_ops(global const half2 *a, global const half2 *b, global const half2 *c,
                      global half2 *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  half2 x = a[i], y = b[i], z = c[i];
  global half2 *o = out + i * 6;
  o[0] = x * y;
  o[1] = x + y;
  o[2] = x - y;
  o[3] = fma(x, y, z);
  o[4] = fmin(x, y);
  o[5] = fmax(x, y);
}

// half4 dot-ish accumulation in half: r = ((a.x*b.x + a.y*b.y) + a.z*b.z) + a.w*b.w
// plus conversions to/from float.
kernel void half4_dot(global const half4 *a, global const half4 *b, global half *out,
                      global float *outf, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  half4 p = a[i] * b[i];
  half r = ((p.x + p.y) + p.z) + p.w;
  out[i] = r;
  outf[i] = (float)a[i].x * (float)b[i].x; // exact in f32
}
