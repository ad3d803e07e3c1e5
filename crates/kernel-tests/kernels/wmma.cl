#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// One wave32 computes D = A * B + C for a 16x16x16 tile with
// v_wmma_f32_16x16x16_f16. A is row-major 16x16 half, B row-major 16x16 half,
// C/D row-major 16x16 float. RDNA3 lane layout (wave32):
//  A: lane l holds row (l % 16), all 16 k values (lanes 16-31 replicate 0-15);
//  B: lane l holds column (l % 16), all 16 k values;
//  C/D: lane l, element e holds row 2*e + l/16, column l % 16.
//
// RDNA4 (gfx12) layout (wave32), as AMD's RDNA4 guide and its matrix
// instruction calculator give it: A and B are not replicated; element e of
// lane l holds k = 8 * (e / 4) + 4 * (l / 16) + e % 4 of row (A) or column
// (B) l % 16; C/D element e of lane l holds row e + 8 * (l / 16), column
// l % 16.
kernel void wmma_f16_16x16x16(global const half *A, global const half *B, global const float *C,
                              global float *D) {
  uint lane = get_local_id(0);
#if defined(__gfx1200__) || defined(__gfx1201__)
  uint l16 = lane % 16, h = lane / 16;
  half8 a, b;
  float8 c;
  for (int e = 0; e < 8; e++) {
    int k = 8 * (e / 4) + 4 * h + e % 4;
    a[e] = A[l16 * 16 + k];
    b[e] = B[k * 16 + l16];
    c[e] = C[(e + 8 * h) * 16 + l16];
  }
  float8 d = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c);
  for (int e = 0; e < 8; e++)
    D[(e + 8 * h) * 16 + l16] = d[e];
#else
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
#endif
}
