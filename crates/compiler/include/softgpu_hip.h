// Minimal HIP device-side header, force-included by softgpu-compiler.
// We compile HIP with -nogpuinc (no HIP runtime headers), so this provides the
// few pieces the test kernels use: the function/variable qualifiers, the
// built-in index variables, __syncthreads and a handful of math declarations
// that resolve to the ROCm device library (ocml).
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))

typedef unsigned int uint;
typedef unsigned long long u64;

#define SOFTGPU_DIM3_BUILTIN(NAME, FN)                                              \
  struct NAME##_t {                                                                 \
    __device__ unsigned int __get_x() const { return FN##_x(); }                    \
    __device__ unsigned int __get_y() const { return FN##_y(); }                    \
    __device__ unsigned int __get_z() const { return FN##_z(); }                    \
    __declspec(property(get = __get_x)) unsigned int x;                             \
    __declspec(property(get = __get_y)) unsigned int y;                             \
    __declspec(property(get = __get_z)) unsigned int z;                             \
  };                                                                                \
  extern const __device__ __attribute__((weak)) NAME##_t NAME;

SOFTGPU_DIM3_BUILTIN(threadIdx, __builtin_amdgcn_workitem_id)
SOFTGPU_DIM3_BUILTIN(blockIdx, __builtin_amdgcn_workgroup_id)
SOFTGPU_DIM3_BUILTIN(blockDim, __builtin_amdgcn_workgroup_size)

// gridDim in blocks: grid size (work-items) from the hidden arguments / dispatch
// packet divided by the block size. Read from the v5 implicit arguments
// (hidden_block_count_{x,y,z} are the first three dwords).
struct gridDim_t {
  __device__ unsigned int __get_x() const { return ((const unsigned int *)__builtin_amdgcn_implicitarg_ptr())[0]; }
  __device__ unsigned int __get_y() const { return ((const unsigned int *)__builtin_amdgcn_implicitarg_ptr())[1]; }
  __device__ unsigned int __get_z() const { return ((const unsigned int *)__builtin_amdgcn_implicitarg_ptr())[2]; }
  __declspec(property(get = __get_x)) unsigned int x;
  __declspec(property(get = __get_y)) unsigned int y;
  __declspec(property(get = __get_z)) unsigned int z;
};
extern const __device__ __attribute__((weak)) gridDim_t gridDim;

#define warpSize __builtin_amdgcn_wavefrontsize()

__device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__device__ inline void __threadfence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }

template <typename T> __device__ inline T atomicAdd(T *p, T v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> __device__ inline T atomicMax(T *p, T v) {
  return __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> __device__ inline T atomicCAS(T *p, T expected, T desired) {
  __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return expected;
}

extern "C" __device__ float __ocml_sin_f32(float);
extern "C" __device__ float __ocml_exp_f32(float);
extern "C" __device__ float __ocml_sqrt_f32(float);
extern "C" __device__ double __ocml_sqrt_f64(double);
__device__ inline float sinf(float x) { return __ocml_sin_f32(x); }
__device__ inline float expf(float x) { return __ocml_exp_f32(x); }
__device__ inline float sqrtf(float x) { return __ocml_sqrt_f32(x); }

// Device printf. clang lowers it by -mprintf-kind: hostcall (the default,
// through ockl's __ockl_printf_* and the hidden hostcall buffer) or
// buffered (records in the hidden printf buffer, reserved by
// __printf_alloc below).
extern "C" __device__ int printf(const char *, ...);

// The buffered-printf allocator HIP's buffered printf calls. Debian's
// rocm-device-libs 5.2.3 has it only in the OpenCL library, so it is
// defined here, with the same buffer layout (header: bytes used, buffer
// size; records from byte 8). A record that does not fit is dropped and
// counted in the two words just past the size softgpu gives the device
// (dropped bytes, dropped records), which the host reports.
extern "C" __device__ __attribute__((weak)) __attribute__((address_space(1))) char *
__printf_alloc(unsigned int bytes) {
  typedef __attribute__((address_space(1))) unsigned int gu32;
  const unsigned long long *implicit = (const unsigned long long *)__builtin_amdgcn_implicitarg_ptr();
  gu32 *buf = (gu32 *)implicit[9]; // hidden_printf_buffer (code object v5)
  if (!buf) return 0;
  unsigned int size = buf[1];
  unsigned int off = __hip_atomic_load(buf, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  for (;;) {
    if ((unsigned long long)off + bytes + 8 > size) {
      gu32 *dropped = buf + size / 4;
      __hip_atomic_fetch_add(dropped, bytes, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      __hip_atomic_fetch_add(dropped + 1, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      return 0;
    }
    if (__hip_atomic_compare_exchange_strong(buf, &off, off + bytes, __ATOMIC_RELAXED,
                                             __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT))
      break;
  }
  return (__attribute__((address_space(1))) char *)buf + 8 + off;
}

// assert(), as ROCm's HIP headers do it: the message to stderr through
// hostcall fprintf, then a trap (a kernel fault).
extern "C" __device__ unsigned long long __ockl_fprintf_stderr_begin();
extern "C" __device__ unsigned long long __ockl_fprintf_append_string_n(unsigned long long, const char *,
                                                                        unsigned long long, unsigned int);
extern "C" __device__ unsigned long long __ockl_fprintf_append_args(unsigned long long, unsigned int,
                                                                    unsigned long long, unsigned long long,
                                                                    unsigned long long, unsigned long long,
                                                                    unsigned long long, unsigned long long,
                                                                    unsigned long long, unsigned int);
__device__ inline unsigned long long __softgpu_strlen_nul(const char *s) {
  const char *p = s;
  while (*p++) {
  }
  return p - s;
}
extern "C" __device__ __attribute__((noinline)) __attribute__((weak)) void
__assert_fail(const char *assertion, const char *file, unsigned int line, const char *function) {
  const char *fmt = "%s:%u: %s: Device-side assertion `%s' failed.\n";
  unsigned long long msg = __ockl_fprintf_stderr_begin();
  msg = __ockl_fprintf_append_string_n(msg, fmt, __softgpu_strlen_nul(fmt), 0);
  msg = __ockl_fprintf_append_string_n(msg, file, __softgpu_strlen_nul(file), 0);
  msg = __ockl_fprintf_append_args(msg, 1, line, 0, 0, 0, 0, 0, 0, 0);
  msg = __ockl_fprintf_append_string_n(msg, function, __softgpu_strlen_nul(function), 0);
  msg = __ockl_fprintf_append_string_n(msg, assertion, __softgpu_strlen_nul(assertion), 1);
  __builtin_trap();
}
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __assert_fail(#e, __FILE__, __LINE__, __func__))
#endif
