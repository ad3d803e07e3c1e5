// Device-side malloc and free: clang's HIP headers map them to ockl's
// allocator (__ockl_dm_alloc/__ockl_dm_dealloc), which keeps its state in
// the heap buffer of the hidden_heap_v1 argument and gets memory from the
// host through hostcall service 3 (SERVICE_DEVMEM).
//
// 1. Every thread mallocs a buffer of its own size (3076 to 6668 bytes:
//    blocks over 3072 bytes, each given by the host), fills it and stores
//    the pointer; a second
//    kernel reads each buffer back through the stored pointers and frees
//    it. The host checks the sums and that no two buffers overlap.
// 2. The heap limit: hipDeviceGetLimit reports CLR's initial heap size
//    (8 MiB); with a 1 MiB limit set, a
//    2 MiB malloc returns NULL in the kernel; with a higher one it succeeds.
//
// Not yet working, so not tested here: blocks of 3072 bytes or less. ockl
// carves them from 2 MiB slabs, and under softgpu a kernel asking for one
// spins until the watchdog stops it (a hipErrorLaunchTimeOut fault, never
// a wrong result); the cause is still to be found.
//    hipDeviceSetLimit is newer than Debian's HIP 5.2.3, so it is found
//    with dlsym (softgpu's library exports it; ROCm 5.2's does not).
// 3. A kernel writing one int past a 4096-byte malloc'd block (a block of
//    its own): the store is refused, hipErrorIllegalAddress, and the
//    report names the allocation as device malloc (the harness checks it).
//    What is not caught: a small block (3072 bytes or less) shares its
//    2 MiB slab with its neighbours, so an overflow into the next block is
//    seen only at the slab's end.
#include "common.h"

#include <dlfcn.h>

#include <algorithm>
#include <vector>

constexpr int kThreads = 256;

// Ints of thread t's buffer: 769 to 1667, so every size is over ockl's
// 3072-byte threshold (a block of its own; see the top for smaller ones).
__host__ __device__ int ints_of(int t) { return 769 + (t * 37) % 899; }

__global__ void alloc_fill(int** ptrs) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = ints_of(t);
  int* p = (int*)malloc(n * sizeof(int));
  if (p)
    for (int k = 0; k < n; ++k) p[k] = t * 1000 + k;
  ptrs[t] = p;
}

__global__ void read_free(int** ptrs, long long* sums) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int* p = ptrs[t];
  long long s = -1;
  if (p) {
    s = 0;
    for (int k = 0; k < ints_of(t); ++k) s += p[k];
    free(p);
  }
  sums[t] = s;
}

// One thread mallocs `bytes`, writes its first and last int, frees it;
// reports whether it got memory.
__global__ void big_alloc(size_t bytes, int* got) {
  int* p = (int*)malloc(bytes);
  *got = p != nullptr;
  if (p) {
    p[0] = 1;
    p[bytes / sizeof(int) - 1] = 2;
    free(p);
  }
}

__global__ void overflow_malloc(int* done) {
  int* p = (int*)malloc(4096);
  if (!p) return;
  p[1024] = 7;  // the bug: one int past the 4096 bytes
  *done = 1;
}

typedef hipError_t (*SetLimit)(hipLimit_t, size_t);

static void check_heap_limit(SetLimit set_limit, int* d_got) {
  size_t limit = 0;
  HIP_CHECK(hipDeviceGetLimit(&limit, hipLimitMallocHeapSize));
  // CLR's initial heap size (HIP_INITIAL_DM_SIZE: 8 MiB).
  EXPECT(limit == 8u << 20, "initial heap limit %zu", limit);
  size_t free_mem = 0, total = 0;
  HIP_CHECK(hipMemGetInfo(&free_mem, &total));
  // CLR refuses a limit of the whole device memory or more.
  HIP_EXPECT_ERR(set_limit(hipLimitMallocHeapSize, total), hipErrorInvalidValue);
  // Only the heap size can be set (CLR: hipErrorUnsupportedLimit otherwise).
  HIP_EXPECT_ERR(set_limit(hipLimitPrintfFifoSize, 1 << 20), hipErrorUnsupportedLimit);

  // A 1 MiB limit leaves no room for 2 MiB.
  HIP_CHECK(set_limit(hipLimitMallocHeapSize, 1 << 20));
  HIP_CHECK(hipDeviceGetLimit(&limit, hipLimitMallocHeapSize));
  EXPECT(limit == 1u << 20, "limit after setting 1 MiB: %zu", limit);
  int got = -1;
  big_alloc<<<1, 1>>>(2u << 20, d_got);
  HIP_CHECK(hipMemcpy(&got, d_got, sizeof got, hipMemcpyDeviceToHost));
  EXPECT(got == 0, "a 2 MiB malloc past a 1 MiB limit got memory (%d)", got);

  HIP_CHECK(set_limit(hipLimitMallocHeapSize, 256u << 20));
  big_alloc<<<1, 1>>>(2u << 20, d_got);
  HIP_CHECK(hipMemcpy(&got, d_got, sizeof got, hipMemcpyDeviceToHost));
  EXPECT(got == 1, "a 2 MiB malloc within a 256 MiB limit failed (%d)", got);
}

int main() {
  int** d_ptrs = nullptr;
  long long* d_sums = nullptr;
  int* d_got = nullptr;
  HIP_CHECK(hipMalloc(&d_ptrs, kThreads * sizeof(int*)));
  HIP_CHECK(hipMalloc(&d_sums, kThreads * sizeof(long long)));
  HIP_CHECK(hipMalloc(&d_got, sizeof(int)));

  alloc_fill<<<kThreads / 64, 64>>>(d_ptrs);
  HIP_CHECK(hipGetLastError());
  std::vector<int*> ptrs(kThreads);
  HIP_CHECK(hipMemcpy(ptrs.data(), d_ptrs, kThreads * sizeof(int*), hipMemcpyDeviceToHost));
  read_free<<<kThreads / 64, 64>>>(d_ptrs, d_sums);
  HIP_CHECK(hipGetLastError());
  std::vector<long long> sums(kThreads), want(kThreads);
  HIP_CHECK(hipMemcpy(sums.data(), d_sums, kThreads * sizeof(long long), hipMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    long long n = ints_of(t);
    want[t] = n * t * 1000 + n * (n - 1) / 2;
  }
  expect_equal("sums", sums.data(), want.data(), kThreads);

  // No two live buffers overlap.
  std::vector<std::pair<char*, char*>> ranges;
  for (int t = 0; t < kThreads; ++t)
    if (ptrs[t]) ranges.push_back({(char*)ptrs[t], (char*)ptrs[t] + ints_of(t) * sizeof(int)});
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT(ranges[i].first >= ranges[i - 1].second, "buffers %zu and %zu overlap", i - 1, i);

  SetLimit set_limit = (SetLimit)dlsym(RTLD_DEFAULT, "hipDeviceSetLimit");
  EXPECT(set_limit != nullptr, "hipDeviceSetLimit is not exported");
  if (set_limit) check_heap_limit(set_limit, d_got);

  overflow_malloc<<<1, 1>>>(d_got);
  hipError_t sync = hipDeviceSynchronize();
  EXPECT(sync == hipErrorIllegalAddress, "hipDeviceSynchronize gave %s, expected hipErrorIllegalAddress",
         hipGetErrorName(sync));
  printf("device malloc overflow reported as %s\n", hipGetErrorName(sync));
  fflush(stderr);
  return finish();
}
