#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// CDNA matrix-core GEMMs: D (M x N, row-major) = A (M x K, row-major) *
// B (K x N, row-major), one wave64 per output tile, K walked in the MFMA's
// steps with D accumulated in the MFMA's C. Launch with 64 work-items per
// group and the grid (N / tile, M / tile) in groups.
//
// Lane layouts (AMD's Matrix Instruction Calculator, single-block forms;
// l = lane, e = element index in the lane's vector):
//  32x32xK: A row l % 32, k = (K / 2) * (l / 32) + e; B column l % 32,
//           same k; D element e: row 8 * (e / 4) + 4 * (l / 32) + e % 4,
//           column l % 32.
//  16x16xK: A row l % 16, k = (K / 4) * (l / 16) + e; B column l % 16,
//           same k; D element e: row 4 * (l / 16) + e, column l % 16.
//  f64 16x16x4: A and B as 16x16xK; D element e (one double each): row
//           l / 16 + 4 * e, column l % 16 (the lane groups hold rows
//           modulo 4, unlike the f32 forms' four consecutive rows).

// ROW(s, e): the row of D element e of a lane in lane group s (l / TILE).
#define TILE_GEMM(NAME, T, VIN, WIDTH, VACC, ACC, TILE, KSTEP, CALL, PACK, ROW)                  \
  kernel void NAME(global const T *A, global const T *B, global ACC *D, int K, int N) {           \
    uint l = get_local_id(0);                                                                   \
    uint row0 = get_group_id(1) * TILE, col0 = get_group_id(0) * TILE;                          \
    uint slices = 64 / TILE, per = KSTEP / slices;                                              \
    uint r = l % TILE, s = l / TILE;                                                            \
    VACC acc = (VACC)(0);                                                                       \
    for (int k0 = 0; k0 < K; k0 += KSTEP) {                                                     \
      T a[WIDTH], b[WIDTH];                                                                     \
      for (uint e = 0; e < WIDTH; e++) {                                                        \
        uint k = k0 + per * s + e;                                                              \
        a[e] = A[(row0 + r) * K + k];                                                           \
        b[e] = B[k * N + col0 + r];                                                             \
      }                                                                                         \
      VIN va = PACK(a), vb = PACK(b);                                                           \
      acc = CALL(va, vb, acc, 0, 0, 0);                                                         \
    }                                                                                           \
    for (uint e = 0; e < sizeof(VACC) / sizeof(ACC); e++) {                                     \
      uint i = ROW(s, e);                                                                       \
      D[(row0 + i) * N + col0 + r] = acc[e];                                                    \
    }                                                                                           \
  }

#define ROW32(s, e) (8 * ((e) / 4) + 4 * (s) + (e) % 4)
#define ROW16(s, e) (4 * (s) + (e))
#define ROW_F64(s, e) ((s) + 4 * (e))

#define PACK1(x) (x[0])
#define PACK4(x) ((half4)(x[0], x[1], x[2], x[3]))
#define PACK4S(x) ((short4)(x[0], x[1], x[2], x[3]))
// Four (eight) i8 values, k ascending from the low byte.
#define PACK4I8(x)                                                                               \
  ((int)((uchar)x[0] | (uint)(uchar)x[1] << 8 | (uint)(uchar)x[2] << 16 | (uint)(uchar)x[3] << 24))
#define PACK8I8(x) ((long)((ulong)(uint)PACK4I8(x) | (ulong)(uint)PACK4I8((x + 4)) << 32))

TILE_GEMM(gemm_f16_32x32x8, half, half4, 4, float16, float, 32, 8,
          __builtin_amdgcn_mfma_f32_32x32x8f16, PACK4, ROW32)
TILE_GEMM(gemm_f16_16x16x16, half, half4, 4, float4, float, 16, 16,
          __builtin_amdgcn_mfma_f32_16x16x16f16, PACK4, ROW16)
TILE_GEMM(gemm_f32_16x16x4, float, float, 1, float4, float, 16, 4,
          __builtin_amdgcn_mfma_f32_16x16x4f32, PACK1, ROW16)
// bf16 as its bits; clang-19 has one builtin (the `_1k` form, gfx90a's
// v_mfma_f32_16x16x16bf16_1k, gfx94's v_mfma_f32_16x16x16_bf16).
TILE_GEMM(gemm_bf16_16x16x16, short, short4, 4, float4, float, 16, 16,
          __builtin_amdgcn_mfma_f32_16x16x16bf16_1k, PACK4S, ROW16)
TILE_GEMM(gemm_f64_16x16x4, double, double, 1, double4, double, 16, 4,
          __builtin_amdgcn_mfma_f64_16x16x4f64, PACK1, ROW_F64)
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
// gfx94 dropped the 16x16x16 i8 form for one with K doubled.
TILE_GEMM(gemm_i8_16x16, char, long, 8, int4, int, 16, 32,
          __builtin_amdgcn_mfma_i32_16x16x32_i8, PACK8I8, ROW16)
#else
TILE_GEMM(gemm_i8_16x16, char, int, 4, int4, int, 16, 16,
          __builtin_amdgcn_mfma_i32_16x16x16i8, PACK4I8, ROW16)
#endif
