// diffgen: OpenCL side of the operators the generator uses. Built-ins are
// called directly; these helpers give C operators defined results for every
// input, exactly as host_prelude.c computes them:
//  * + - * << wrap: scalars go through a wide unsigned type (no signed
//    overflow, which is undefined and which clang exploits through nsw),
//    vectors (no integer promotion) through their unsigned twin;
//  * shift counts are masked to the element width;
//  * a divisor of 0, or (signed types) −1 with a dividend of MIN, is
//    replaced by 1. Unsigned types test only for 0, so a constant divisor
//    stays a constant after inlining (clang's division-by-constant code).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define OVL static inline __attribute__((overloadable))

#define DIVISOR_S(T, MN) (b == (T)0 || (a == (T)(MN) && b == (T)-1)) ? (T)1 : b
#define DIVISOR_U(T, MN) b == (T)0 ? (T)1 : b
#define VDIVISOR_S(T, MN) select(b, (T)1, (b == (T)0) | ((a == (T)(MN)) & (b == (T)-1)))
#define VDIVISOR_U(T, MN) select(b, (T)1, b == (T)0)

#define SCALAR_INT(T, UT, W, BITS, MN, DIV)                                   \
  OVL T op_add(T a, T b) { return (T)((W)a + (W)b); }                         \
  OVL T op_sub(T a, T b) { return (T)((W)a - (W)b); }                         \
  OVL T op_mul(T a, T b) { return (T)((W)a * (W)b); }                         \
  OVL T op_shl(T a, T b) { return (T)((W)a << ((UT)b & (BITS - 1))); }        \
  OVL T op_shr(T a, T b) { return (T)(a >> ((UT)b & (BITS - 1))); }           \
  OVL T op_and(T a, T b) { return (T)(a & b); }                               \
  OVL T op_or(T a, T b) { return (T)(a | b); }                                \
  OVL T op_xor(T a, T b) { return (T)(a ^ b); }                               \
  OVL T divisor(T a, T b) { return DIV(T, MN); }                             \
  OVL T op_div(T a, T b) { return (T)(a / divisor(a, b)); }                   \
  OVL T op_rem(T a, T b) { return (T)(a % divisor(a, b)); }

#define VECTOR_INT(T, UT, BITS, MN, DIV)                                      \
  OVL T op_add(T a, T b) { return as_##T(as_##UT(a) + as_##UT(b)); }         \
  OVL T op_sub(T a, T b) { return as_##T(as_##UT(a) - as_##UT(b)); }         \
  OVL T op_mul(T a, T b) { return as_##T(as_##UT(a) * as_##UT(b)); }         \
  OVL T op_shl(T a, T b) {                                                    \
    return as_##T(as_##UT(a) << as_##UT(b & (T)(BITS - 1)));                 \
  }                                                                           \
  OVL T op_shr(T a, T b) { return a >> (b & (T)(BITS - 1)); }                 \
  OVL T op_and(T a, T b) { return a & b; }                                    \
  OVL T op_or(T a, T b) { return a | b; }                                     \
  OVL T op_xor(T a, T b) { return a ^ b; }                                    \
  OVL T divisor(T a, T b) { return V##DIV(T, MN); }                          \
  OVL T op_div(T a, T b) { return a / divisor(a, b); }                        \
  OVL T op_rem(T a, T b) { return a % divisor(a, b); }

#define FLOAT_OPS(T)                                                          \
  OVL T op_add(T a, T b) { return a + b; }                                    \
  OVL T op_sub(T a, T b) { return a - b; }                                    \
  OVL T op_mul(T a, T b) { return a * b; }                                    \
  OVL T op_div(T a, T b) { return a / b; }

#define VECTORS_INT(T, UT, BITS, MN, DIV)                                     \
  VECTOR_INT(T##2, UT##2, BITS, MN, DIV) VECTOR_INT(T##3, UT##3, BITS, MN, DIV) \
  VECTOR_INT(T##4, UT##4, BITS, MN, DIV) VECTOR_INT(T##8, UT##8, BITS, MN, DIV) \
  VECTOR_INT(T##16, UT##16, BITS, MN, DIV)
#define ALL_FLOAT(T)                                                          \
  FLOAT_OPS(T) FLOAT_OPS(T##2) FLOAT_OPS(T##3) FLOAT_OPS(T##4)                \
  FLOAT_OPS(T##8) FLOAT_OPS(T##16)

SCALAR_INT(char, uchar, uint, 8, -128, DIVISOR_S)
SCALAR_INT(uchar, uchar, uint, 8, 0, DIVISOR_U)
SCALAR_INT(short, ushort, uint, 16, -32768, DIVISOR_S)
SCALAR_INT(ushort, ushort, uint, 16, 0, DIVISOR_U)
SCALAR_INT(int, uint, uint, 32, (-2147483647 - 1), DIVISOR_S)
SCALAR_INT(uint, uint, uint, 32, 0, DIVISOR_U)
SCALAR_INT(long, ulong, ulong, 64, (-9223372036854775807L - 1L), DIVISOR_S)
SCALAR_INT(ulong, ulong, ulong, 64, 0, DIVISOR_U)
VECTORS_INT(char, uchar, 8, -128, DIVISOR_S)
VECTORS_INT(uchar, uchar, 8, 0, DIVISOR_U)
VECTORS_INT(short, ushort, 16, -32768, DIVISOR_S)
VECTORS_INT(ushort, ushort, 16, 0, DIVISOR_U)
VECTORS_INT(int, uint, 32, (-2147483647 - 1), DIVISOR_S)
VECTORS_INT(uint, uint, 32, 0, DIVISOR_U)
VECTORS_INT(long, ulong, 64, (-9223372036854775807L - 1L), DIVISOR_S)
VECTORS_INT(ulong, ulong, 64, 0, DIVISOR_U)
ALL_FLOAT(half)
ALL_FLOAT(float)
ALL_FLOAT(double)
