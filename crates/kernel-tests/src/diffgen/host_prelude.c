/* diffgen: the host-C oracle. Each OpenCL C built-in over element type T is
 * the function NAME_T, written from the OpenCL C 2.0 specification; vectors
 * are handled by the generated code, one component at a time. Nothing here
 * has undefined behaviour for any input the generator feeds it: integer
 * arithmetic is done in 64-bit unsigned or 128-bit types, and float
 * conversions go through long double (x87, 64-bit significand), which holds
 * every value of every OpenCL scalar type exactly, so each conversion is
 * exactly one rounding, done by round_fmt / round_int below. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int8_t i8;
typedef uint8_t u8;
typedef int16_t i16;
typedef uint16_t u16;
typedef int32_t i32;
typedef uint32_t u32;
typedef int64_t i64;
typedef uint64_t u64;
typedef uint16_t f16; /* IEEE binary16 bits; arithmetic goes through ld */
typedef float f32;
typedef double f64;
typedef long double ld;
typedef __int128 s128;
typedef unsigned __int128 u128;

enum { RTE, RTZ, RTP, RTN };

/* Set when a statement's result is not pinned down: a NaN result of
 * arithmetic (IEEE 754 §6.3 leaves a NaN's sign open, and its payload when
 * passed on, which shows once the result is reinterpreted as integers; and
 * LLVM's default FP model does not keep "signalling" apart from "quiet",
 * so it may fold 0 - x into -x, keeping an sNaN the subtraction would have
 * quieted), a signalling NaN operand of min/max/clamp, or of a _sat
 * conversion (the library builds those on min/max). LLVM's minnum/maxnum may return a quiet NaN
 * or the other operand for it, RDNA3's v_min/v_max in IEEE mode return the
 * quiet NaN, and clang-19 canonicalises some operands first and not others,
 * so no one answer is right; the lane is left out of the comparison. The
 * instruction-level cases prove the hardware rule. */
static int unspecified;
static int snan_f32(f32 x) { u32 b; memcpy(&b, &x, 4); return (b & 0x7fc00000u) == 0x7f800000u && (b & 0x3fffffu); }
static int snan_f64(f64 x) { u64 b; memcpy(&b, &x, 8); return (b & 0x7ff8000000000000ull) == 0x7ff0000000000000ull && (b & 0x7ffffffffffffull); }
static int nan_f16(f16 x) { return (x & 0x7c00) == 0x7c00 && (x & 0x3ff); }
static int snan_f16(f16 x) { return (x & 0x7e00) == 0x7c00 && (x & 0x1ff); }
#define SNAN_i8(x) 0
#define SNAN_u8(x) 0
#define SNAN_i16(x) 0
#define SNAN_u16(x) 0
#define SNAN_i32(x) 0
#define SNAN_u32(x) 0
#define SNAN_i64(x) 0
#define SNAN_u64(x) 0
#define SNAN_f16(x) snan_f16(x)
#define SNAN_f32(x) snan_f32(x)
#define SNAN_f64(x) snan_f64(x)

/* ---- Rounding ---------------------------------------------------------- */

/* x rounded to an integer in `mode`. */
static ld round_int(ld x, int mode) {
  if (x != x || x == floorl(x)) return x;
  ld f = floorl(x);
  switch (mode) {
  case RTZ: return x < 0 ? f + 1 : f;
  case RTP: return f + 1;
  case RTN: return f;
  default: {
    ld d = x - f; /* exact: x is not an integer, so |x| < 2^63 */
    if (d != 0.5L) return d < 0.5L ? f : f + 1;
    return fmodl(f, 2.0L) == 0 ? f : f + 1;
  }
  }
}

/* x rounded to a binary format with p significand bits, minimum normal
 * exponent emin and maximum exponent emax, in `mode` (IEEE 754: round with
 * unbounded exponent, then overflow to infinity or the largest finite value
 * as the mode says; subnormals keep the quantum of the smallest normal). */
static ld round_fmt(ld x, int p, int emin, int emax, int mode) {
  if (x != x || x == 0 || isinf(x)) return x;
  int neg = x < 0;
  ld a = fabsl(x);
  int e = ilogbl(a);
  if (e < emin) e = emin;
  ld q = ldexpl(1.0L, e - (p - 1)); /* the quantum at a's exponent */
  ld m = a / q;                     /* exact: q is a power of two */
  ld lo = floorl(m);
  ld r;
  int up; /* rounding the magnitude up? */
  switch (mode) {
  case RTZ: up = 0; break;
  case RTP: up = !neg; break;
  case RTN: up = neg; break;
  default: {
    ld d = m - lo;
    up = d > 0.5L || (d == 0.5L && fmodl(lo, 2.0L) != 0);
  }
  }
  r = (m == lo ? lo : (up ? lo + 1 : lo)) * q;
  ld max = ldexpl(ldexpl(1.0L, p) - 1, emax - (p - 1));
  if (r > max) {
    int to_inf = mode == RTE || (mode == RTP && !neg) || (mode == RTN && neg);
    r = to_inf ? INFINITY : max;
  }
  return neg ? -r : r;
}

/* ---- half <-> long double ---------------------------------------------- */

static ld ld_of_f16(f16 h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  ld v;
  if (e == 31) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexpl((ld)m, -24);
  else v = ldexpl((ld)(m + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Encodes v, already a half value (or ±inf, NaN), as binary16 bits. */
static f16 f16_bits(ld v) {
  f16 s = signbit(v) ? 0x8000 : 0;
  if (v != v) return 0x7e00;
  v = fabsl(v);
  if (isinf(v)) return s | 0x7c00;
  if (v < ldexpl(1.0L, -14)) return s | (f16)(v * ldexpl(1.0L, 24));
  int e = ilogbl(v);
  return s | (f16)((e + 15) << 10) | (f16)(ldexpl(v, 10 - e) - 1024);
}

/* ---- Conversions (convert_T{_sat}{_rtX}) --------------------------------
 * Source → ld is exact; ld → destination rounds once. Integer destinations
 * without _sat only see in-range float inputs (the generator's domain) and
 * wrap modulo 2^bits for integer inputs (C99 6.3.1.3 as clang implements
 * it); with _sat, out-of-range values give the nearest bound.
 *
 * NaN with _sat: the OpenCL C spec says 0, but ROCm's device library (the
 * one clang links) computes convert_T_sat(x) as fptosi(min(max(x, MIN),
 * MAX)), and max(NaN, MIN) is MIN (IEEE maxNum), so a NaN gives MIN: 0 for
 * unsigned types, the most negative value for signed ones. Real hardware
 * gives the same; the oracle follows the library, since the test is about
 * softgpu running the code clang emits. */
#define LD_OF(T) static ld ld_of_##T(T x) { return (ld)x; }
LD_OF(i8) LD_OF(u8) LD_OF(i16) LD_OF(u16) LD_OF(i32) LD_OF(u32) LD_OF(i64)
LD_OF(u64) LD_OF(f32) LD_OF(f64)

#define TO_INT(T, MN, MX)                                                      \
  static T T##_of(ld v, int sat, int mode) {                                   \
    if (v != v) return sat ? (T)(MN) : 0; /* see above */                      \
    v = round_int(v, mode);                                                    \
    if (sat) return v < (ld)(MN) ? (T)(MN) : v > (ld)(MX) ? (T)(MX) : (T)v;    \
    if (!(v >= -0x1p63L && v < 0x1p64L)) return 0; /* never generated */       \
    return v < 0 ? (T)(u64)(i64)v : (T)(u64)v;                                 \
  }
TO_INT(i8, INT8_MIN, INT8_MAX)
TO_INT(u8, 0, UINT8_MAX)
TO_INT(i16, INT16_MIN, INT16_MAX)
TO_INT(u16, 0, UINT16_MAX)
TO_INT(i32, INT32_MIN, INT32_MAX)
TO_INT(u32, 0, UINT32_MAX)
TO_INT(i64, INT64_MIN, INT64_MAX)
TO_INT(u64, 0, UINT64_MAX)
/* A NaN converted to a float format keeps an unspecified sign and payload
 * (clang emits nothing for convert_half(half), so a signalling NaN passes
 * as is): unspecified. */
static f16 f16_of(ld v, int sat, int mode) { (void)sat; if (v != v) unspecified = 1; return f16_bits(round_fmt(v, 11, -14, 15, mode)); }
static f32 f32_of(ld v, int sat, int mode) { (void)sat; if (v != v) unspecified = 1; return (f32)round_fmt(v, 24, -126, 127, mode); }
static f64 f64_of(ld v, int sat, int mode) { (void)sat; if (v != v) unspecified = 1; return (f64)round_fmt(v, 53, -1022, 1023, mode); }

/* From half the library clamps to the half range instead, [-65504, 65504]
 * (or [MIN, MAX] when narrower), so a NaN gives -65504 saturated to D. */
enum { HALF_i8 = 0, HALF_u8 = 0, HALF_i16 = 0, HALF_u16 = 0, HALF_i32 = 0, HALF_u32 = 0,
       HALF_i64 = 0, HALF_u64 = 0, HALF_f32 = 0, HALF_f64 = 0, HALF_f16 = 1 };
#define CVT(D, S)                                                              \
  static D cvt_##D##_##S(S x, int sat, int mode) {                             \
    if (sat && SNAN_##S(x)) unspecified = 1;                                   \
    ld v = ld_of_##S(x);                                                       \
    if (sat && v != v && HALF_##S) v = -65504.0L;                              \
    return D##_of(v, sat, mode);                                               \
  }
#define CVT_FROM(S) CVT(i8, S) CVT(u8, S) CVT(i16, S) CVT(u16, S) CVT(i32, S) CVT(u32, S) \
  CVT(i64, S) CVT(u64, S) CVT(f16, S) CVT(f32, S) CVT(f64, S)
CVT_FROM(i8) CVT_FROM(u8) CVT_FROM(i16) CVT_FROM(u16) CVT_FROM(i32) CVT_FROM(u32)
CVT_FROM(i64) CVT_FROM(u64) CVT_FROM(f16) CVT_FROM(f32) CVT_FROM(f64)

/* ---- as_T: reinterpretation between types of one size ------------------ */
#define AS(D, S) static D as_##D##_##S(S x) { D r; memcpy(&r, &x, sizeof r); return r; }
AS(i8, u8) AS(u8, i8)
AS(i16, u16) AS(i16, f16) AS(u16, i16) AS(u16, f16) AS(f16, i16) AS(f16, u16)
AS(i32, u32) AS(i32, f32) AS(u32, i32) AS(u32, f32) AS(f32, i32) AS(f32, u32)
AS(i64, u64) AS(i64, f64) AS(u64, i64) AS(u64, f64) AS(f64, i64) AS(f64, u64)

/* ---- Integer built-ins (§6.13.3) and operators -------------------------
 * abs_diff of int and long: ROCm's library subtracts with `sub nsw`, which
 * is undefined when the difference overflows the signed type, and LLVM
 * then computes abs(x - y) of the wrapped difference; such lanes are
 * unspecified (the spec's answer is computed for every other lane).
 * T: the type, U: its unsigned twin, P: a type holding T*T exactly. */
#define SAT(T, W, MN, MX, v) ((v) < (W)(MN) ? (T)(MN) : (v) > (W)(MX) ? (T)(MX) : (T)(v))
#define INT_OPS(T, U, P, BITS, MN, MX)                                              \
  static T add_sat_##T(T a, T b) { s128 s = (s128)a + b; return SAT(T, s128, MN, MX, s); } \
  static T sub_sat_##T(T a, T b) { s128 s = (s128)a - b; return SAT(T, s128, MN, MX, s); } \
  static T hadd_##T(T a, T b) { return (T)(((s128)a + b) >> 1); }                   \
  static T rhadd_##T(T a, T b) { return (T)(((s128)a + b + 1) >> 1); }              \
  static T mul_hi_##T(T a, T b) { return (T)(((P)a * (P)b) >> BITS); }              \
  static T mad_hi_##T(T a, T b, T c) { return (T)((u64)mul_hi_##T(a, b) + (u64)c); } \
  static T mad_sat_##T(T a, T b, T c) { P m = (P)a * (P)b + (P)c; return SAT(T, P, MN, MX, m); } \
  static T rotate_##T(T v, T i) {                                                   \
    int s = (int)((U)i & (BITS - 1));                                               \
    return s ? (T)(U)(((U)v << s) | ((U)v >> (BITS - s))) : v;                      \
  }                                                                                 \
  static T clz_##T(T a) { int n = 0; while (n < BITS && !(((U)a >> (BITS - 1 - n)) & 1)) n++; return (T)n; } \
  static T ctz_##T(T a) { int n = 0; while (n < BITS && !(((U)a >> n) & 1)) n++; return (T)n; } \
  static T popcount_##T(T a) { int n = 0; for (int i = 0; i < BITS; i++) n += ((U)a >> i) & 1; return (T)n; } \
  static U abs_##T(T a) { return (U)(a < 0 ? -(s128)a : (s128)a); }               \
  static U abs_diff_##T(T a, T b) {                                                 \
    s128 d = (s128)a - b;                                                           \
    if ((MN) < 0 && BITS >= 32 && (d > (s128)(MX) || -d > (s128)(MX))) unspecified = 1; \
    return (U)(d < 0 ? -d : d);                                                     \
  }                                                                                 \
  static T min_##T(T a, T b) { return b < a ? b : a; }                              \
  static T max_##T(T a, T b) { return a < b ? b : a; }                              \
  static T clamp_##T(T x, T lo, T hi) { return min_##T(max_##T(x, lo), hi); }      \
  static T select_##T(T a, T b, int pick) { return pick ? b : a; }                  \
  static T bitselect_##T(T a, T b, T c) { return (T)(((U)a & (U)~(U)c) | ((U)b & (U)c)); } \
  static int msb_##T(T c) { return ((U)c >> (BITS - 1)) & 1; }                      \
  static int nz_##T(T c) { return c != 0; }                                         \
  static T op_add_##T(T a, T b) { return (T)((u64)a + (u64)b); }                   \
  static T op_sub_##T(T a, T b) { return (T)((u64)a - (u64)b); }                   \
  static T op_mul_##T(T a, T b) { return (T)((u64)a * (u64)b); }                   \
  static T op_shl_##T(T a, T b) { return (T)((u64)a << ((U)b & (BITS - 1))); }      \
  static T op_shr_##T(T a, T b) { return (T)(a >> ((U)b & (BITS - 1))); }           \
  static T op_and_##T(T a, T b) { return (T)(a & b); }                              \
  static T op_or_##T(T a, T b) { return (T)(a | b); }                               \
  static T op_xor_##T(T a, T b) { return (T)(a ^ b); }                              \
  /* the same divisor guard as ocl_prelude.cl */                                    \
  static T divisor_##T(T a, T b) { return (b == 0 || (MN < 0 && a == (T)(MN) && b == (T)-1)) ? 1 : b; } \
  static T op_div_##T(T a, T b) { return (T)(a / divisor_##T(a, b)); }              \
  static T op_rem_##T(T a, T b) { return (T)(a % divisor_##T(a, b)); }
INT_OPS(i8, u8, s128, 8, INT8_MIN, INT8_MAX)
INT_OPS(u8, u8, u128, 8, 0, UINT8_MAX)
INT_OPS(i16, u16, s128, 16, INT16_MIN, INT16_MAX)
INT_OPS(u16, u16, u128, 16, 0, UINT16_MAX)
INT_OPS(i32, u32, s128, 32, INT32_MIN, INT32_MAX)
INT_OPS(u32, u32, u128, 32, 0, UINT32_MAX)
INT_OPS(i64, u64, s128, 64, INT64_MIN, INT64_MAX)
INT_OPS(u64, u64, u128, 64, 0, UINT64_MAX)

/* upsample(hi, lo) = hi << bits(lo) | lo, R the result, H/L the halves. */
#define UPSAMPLE(R, UR, H, L, BITS) \
  static R upsample_##R(H hi, L lo) { return (R)(UR)(((UR)(L)hi << BITS) | (UR)lo); }
UPSAMPLE(i16, u16, i8, u8, 8) UPSAMPLE(u16, u16, u8, u8, 8)
UPSAMPLE(i32, u32, i16, u16, 16) UPSAMPLE(u32, u32, u16, u16, 16)
UPSAMPLE(i64, u64, i32, u32, 32) UPSAMPLE(u64, u64, u32, u32, 32)

/* mul24/mad24: the generator keeps operands in the 24-bit range, where the
 * result is the plain (wrapping) product. */
static i32 mul24_i32(i32 a, i32 b) { return op_mul_i32(a, b); }
static u32 mul24_u32(u32 a, u32 b) { return op_mul_u32(a, b); }
static i32 mad24_i32(i32 a, i32 b, i32 c) { return op_add_i32(op_mul_i32(a, b), c); }
static u32 mad24_u32(u32 a, u32 b, u32 c) { return op_add_u32(op_mul_u32(a, b), c); }

/* ---- Float built-ins ----------------------------------------------------
 * min/max: clang lowers OpenCL min/max to llvm.minnum/maxnum (v_min/v_max
 * after canonicalising): a NaN operand yields the other one, and −0 < +0
 * as the RDNA3 ISA defines. clamp(x, lo, hi) = min(max(x, lo), hi). */
#define FLOAT_OPS(T, B)                                                              \
  static T op_add_##T(T a, T b) { T r = a + b; if (r != r) unspecified = 1; return r; } \
  static T op_sub_##T(T a, T b) { T r = a - b; if (r != r) unspecified = 1; return r; } \
  static T op_mul_##T(T a, T b) { T r = a * b; if (r != r) unspecified = 1; return r; } \
  static T op_div_##T(T a, T b) { T r = a / b; if (r != r) unspecified = 1; return r; } \
  static T min_##T(T a, T b) {                                                      \
    if (SNAN_##T(a) || SNAN_##T(b)) unspecified = 1;                                \
    if (a != a) return b;                                                           \
    if (b != b) return a;                                                           \
    if (a == 0 && b == 0) return signbit(a) ? a : b;                                \
    return b < a ? b : a;                                                           \
  }                                                                                 \
  static T max_##T(T a, T b) {                                                      \
    if (SNAN_##T(a) || SNAN_##T(b)) unspecified = 1;                                \
    if (a != a) return b;                                                           \
    if (b != b) return a;                                                           \
    if (a == 0 && b == 0) return signbit(a) ? b : a;                                \
    return a < b ? b : a;                                                           \
  }                                                                                 \
  static T clamp_##T(T x, T lo, T hi) { return min_##T(max_##T(x, lo), hi); }      \
  static T select_##T(T a, T b, int pick) { return pick ? b : a; }                  \
  static T bitselect_##T(T a, T b, T c) {                                           \
    B x, y, z;                                                                      \
    memcpy(&x, &a, sizeof x); memcpy(&y, &b, sizeof y); memcpy(&z, &c, sizeof z);   \
    x = (x & ~z) | (y & z);                                                         \
    memcpy(&a, &x, sizeof a);                                                       \
    return a;                                                                       \
  }
FLOAT_OPS(f32, u32)
FLOAT_OPS(f64, u64)

/* half arithmetic: exact in long double (a sum or product of two halves
 * needs at most 40 significand bits), then one rounding to half. */
static f16 op_add_f16(f16 a, f16 b) { f16 r = f16_of(ld_of_f16(a) + ld_of_f16(b), 0, RTE); if (nan_f16(r)) unspecified = 1; return r; }
static f16 op_sub_f16(f16 a, f16 b) { f16 r = f16_of(ld_of_f16(a) - ld_of_f16(b), 0, RTE); if (nan_f16(r)) unspecified = 1; return r; }
static f16 op_mul_f16(f16 a, f16 b) { f16 r = f16_of(ld_of_f16(a) * ld_of_f16(b), 0, RTE); if (nan_f16(r)) unspecified = 1; return r; }
static f16 min_f16(f16 a, f16 b) {
  if (snan_f16(a) || snan_f16(b)) unspecified = 1;
  ld x = ld_of_f16(a), y = ld_of_f16(b);
  if (x != x) return b;
  if (y != y) return a;
  if (x == 0 && y == 0) return (a & 0x8000) ? a : b;
  return y < x ? b : a;
}
static f16 max_f16(f16 a, f16 b) {
  if (snan_f16(a) || snan_f16(b)) unspecified = 1;
  ld x = ld_of_f16(a), y = ld_of_f16(b);
  if (x != x) return b;
  if (y != y) return a;
  if (x == 0 && y == 0) return (a & 0x8000) ? b : a;
  return x < y ? b : a;
}
static f16 clamp_f16(f16 x, f16 lo, f16 hi) { return min_f16(max_f16(x, lo), hi); }
static f16 select_f16(f16 a, f16 b, int pick) { return pick ? b : a; }
static f16 bitselect_f16(f16 a, f16 b, f16 c) { return (f16)((a & ~c) | (b & c)); }

/* vload_half / vstore_half{_rtX} */
static f32 load_half(f16 h) { return (f32)ld_of_f16(h); }
static f16 store_half(ld v, int mode) { return f16_of(v, 0, mode); }
