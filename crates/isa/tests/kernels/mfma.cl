// CDNA matrix cores through clang's builtins: every MFMA input type, the
// broadcast controls, AccVGPR traffic (the accumulators live in AccVGPRs
// across the loop) and, on gfx940+, xf32, fp8/bf8 and a sparse SMFMAC.
typedef float float4_ __attribute__((ext_vector_type(4)));
typedef float float16_ __attribute__((ext_vector_type(16)));
typedef half half4_ __attribute__((ext_vector_type(4)));
typedef short short4_ __attribute__((ext_vector_type(4)));
typedef int int4_ __attribute__((ext_vector_type(4)));
typedef double double4_ __attribute__((ext_vector_type(4)));

__kernel void mfma_f16(__global const half4_ *a, __global const half4_ *b,
                       __global float16_ *d, int steps) {
  size_t l = __builtin_amdgcn_workitem_id_x();
  float16_ acc = d[l];
  for (int s = 0; s < steps; s++)
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[l + s], b[l + s], acc, 0, 0, 0);
  d[l] = acc;
}

__kernel void mfma_mixed(__global const float *x, __global const short4_ *h,
                         __global const int *q, __global const double *e,
                         __global float4_ *f, __global int4_ *i, __global double4_ *g) {
  size_t l = __builtin_amdgcn_workitem_id_x();
  f[l] = __builtin_amdgcn_mfma_f32_4x4x1f32(x[l], x[l + 1], f[l], 4, 1, 0);
  f[l + 64] = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(h[l], h[l + 1], f[l + 64], 0, 0, 3);
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
  // gfx940 doubles i8's K (two dwords of A and B per lane).
  long qa = (long)q[l] << 32 | (uint)q[l + 2];
  i[l] = __builtin_amdgcn_mfma_i32_16x16x32_i8(qa, qa ^ 0x5a5a, i[l], 0, 0, 0);
#else
  i[l] = __builtin_amdgcn_mfma_i32_16x16x16i8(q[l], q[l + 1], i[l], 0, 0, 0);
#endif
  g[l] = __builtin_amdgcn_mfma_f64_16x16x4f64(e[l], e[l + 1], g[l], 0, 0, 0);
}

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
typedef float float2_ __attribute__((ext_vector_type(2)));
__kernel void mfma_gfx940(__global const long *p, __global const float2_ *x,
                          __global const half4_ *a, __global const half *b8,
                          __global float4_ *f, __global const int *idx) {
  size_t l = __builtin_amdgcn_workitem_id_x();
  f[l] = __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(p[l], p[l + 1], f[l], 0, 0, 0);
  f[l + 64] = __builtin_amdgcn_mfma_f32_16x16x8_xf32(x[l], x[l + 1], f[l + 64], 0, 0, 0);
  typedef half half8_ __attribute__((ext_vector_type(8)));
  half8_ bb = *(__global const half8_ *)(b8 + 8 * l);
  f[l + 128] = __builtin_amdgcn_smfmac_f32_16x16x32_f16(a[l], bb, f[l + 128], idx[l], 0, 0);
}
#endif
