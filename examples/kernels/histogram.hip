// HIP: 256-bin byte histogram. Each block keeps a private histogram in LDS
// (__shared__, LDS atomics), walks the input with a grid-stride loop, then
// merges its bins into the global histogram with global atomics.
// Compiled device-only with -nogpuinc: the few HIP names used are defined here.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

#define BINS 256

extern "C" __global__ void histogram(const unsigned char *data, unsigned int *hist, int n) {
  __shared__ unsigned int local_hist[BINS];
  unsigned int tid = __builtin_amdgcn_workitem_id_x();
  unsigned int block = __builtin_amdgcn_workgroup_size_x();
  unsigned int blocks = ((const unsigned int *)__builtin_amdgcn_implicitarg_ptr())[0];
  for (unsigned int b = tid; b < BINS; b += block)
    local_hist[b] = 0;
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");

  unsigned int stride = blocks * block;
  for (unsigned int i = __builtin_amdgcn_workgroup_id_x() * block + tid; i < (unsigned int)n; i += stride)
    __hip_atomic_fetch_add(&local_hist[data[i]], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);

  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  for (unsigned int b = tid; b < BINS; b += block)
    if (local_hist[b] != 0)
      __hip_atomic_fetch_add(&hist[b], local_hist[b], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
