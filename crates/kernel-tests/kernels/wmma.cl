#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// One wave32 computes D = A * B + C for a 16x16x16 tile with
// v_wmma_f32_16x16x16_f16. A is row-major 16x16 half, B row-major 16x16 half,
// C/D row-major 16x16 float. RDNA3 lane layout (wave32):
//  A: lane l holds row (l % 16), all 16 k values (lanes 16-31 replicate 0-15);
//  B: lane l holds column (l % 16), all 16 k values;
//  C/D: lane l, element e holds row 2*e + l/16, column l % 16.
kernel void wmma_f16_16x16x16(global const half *A, global const half *B, global const float *C,
                              global float *D) {
  uint lane = get_local_id(0);
  uint l16 = lane % 16;
  half16 a, b;
  float8 c;
  for (int k = 0; k < 16; k++) {
    a[k] = A[l16 * 16 + k];
    b[k] = B[k * 16 + l16];
  }
  for (int e = 0; e < 8; e++)
    c[e] = C[(2 * e + lane / 16) * 16 + l16];
  float8 d = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
  for (int e = 0; e < 8; e++)
    D[(2 * e + lane / 16) * 16 + l16] = d[e];
}
