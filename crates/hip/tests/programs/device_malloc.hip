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
// 2. Small blocks (3072 bytes or less), which ockl carves from 2 MiB slabs
//    of one size kind each: one thread mallocs 16 bytes, then 1024 threads
//    each malloc 16, 100, 1000 or 3000 bytes (four size kinds, so four
//    slabs), fill them, and a second kernel checks and frees them; the
//    host checks that no two blocks overlap and that a block lies inside
//    a 2 MiB-aligned slab past its header. This needs the device-library
//    folder softgpu's compiler crate builds: its ockl.bc reads the clock
//    in a way gfx11 and gfx12 have (Debian's reads s_memrealtime, which
//    LLVM 19 drops for gfx11, and the slab allocator then spins forever).
// 3. The heap limit: hipDeviceGetLimit reports CLR's initial heap size
//    (8 MiB); with a 1 MiB limit set, a
//    2 MiB malloc returns NULL in the kernel; with a higher one it succeeds.
//    hipDeviceSetLimit is newer than Debian's HIP 5.2.3, so it is found
//    with dlsym (softgpu's library exports it; ROCm 5.2's does not).
// 4. A kernel writing one int past a 4096-byte malloc'd block (a block of
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
// 3072-byte threshold (a block of its own; small_fill has smaller ones).
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

constexpr int kSmallThreads = 1024;
constexpr size_t kSlabBytes = 2u << 20;

// Bytes of thread t's small block: four of ockl's size kinds (16, 128,
// 1024 and 3072 bytes).
__host__ __device__ size_t small_bytes(int t) {
  const size_t sizes[4] = {16, 100, 1000, 3000};
  return sizes[t % 4];
}

__global__ void small_fill(unsigned char** ptrs) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  size_t n = small_bytes(t);
  unsigned char* p = (unsigned char*)malloc(n);
  if (p)
    for (size_t k = 0; k < n; ++k) p[k] = (unsigned char)(t + k);
  ptrs[t] = p;
}

// Counts the bytes of thread t's block that are not what small_fill
// wrote (-1: no block), then frees it.
__global__ void small_check_free(unsigned char** ptrs, int* wrong) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned char* p = ptrs[t];
  int bad = -1;
  if (p) {
    bad = 0;
    for (size_t k = 0; k < small_bytes(t); ++k) bad += p[k] != (unsigned char)(t + k);
    free(p);
  }
  wrong[t] = bad;
}

static void check_small_blocks(int* d_got) {
  // One thread, one 16-byte block (the case that used to hang).
  int got = -1;
  big_alloc<<<1, 1>>>(16, d_got);
  HIP_CHECK(hipMemcpy(&got, d_got, sizeof got, hipMemcpyDeviceToHost));
  EXPECT(got == 1, "a 16-byte malloc failed (%d)", got);

  unsigned char** d_ptrs = nullptr;
  int* d_wrong = nullptr;
  HIP_CHECK(hipMalloc(&d_ptrs, kSmallThreads * sizeof(unsigned char*)));
  HIP_CHECK(hipMalloc(&d_wrong, kSmallThreads * sizeof(int)));
  small_fill<<<kSmallThreads / 256, 256>>>(d_ptrs);
  HIP_CHECK(hipGetLastError());
  std::vector<unsigned char*> ptrs(kSmallThreads);
  HIP_CHECK(hipMemcpy(ptrs.data(), d_ptrs, kSmallThreads * sizeof(unsigned char*),
                      hipMemcpyDeviceToHost));
  small_check_free<<<kSmallThreads / 256, 256>>>(d_ptrs, d_wrong);
  HIP_CHECK(hipGetLastError());
  std::vector<int> wrong(kSmallThreads), none(kSmallThreads, 0);
  HIP_CHECK(hipMemcpy(wrong.data(), d_wrong, kSmallThreads * sizeof(int), hipMemcpyDeviceToHost));
  // 0 everywhere: every thread got a block and read back what it wrote.
  expect_equal("wrong bytes of small blocks", wrong.data(), none.data(), kSmallThreads);

  std::vector<std::pair<unsigned char*, unsigned char*>> ranges;
  for (int t = 0; t < kSmallThreads; ++t) {
    if (!ptrs[t]) continue;
    size_t at = (size_t)ptrs[t] % kSlabBytes;
    // ockl's slab header (kind, index, search start, then a bit per
    // block) comes first: no block starts at a slab's start, and a block
    // ends inside its slab.
    EXPECT(at != 0 && at + small_bytes(t) <= kSlabBytes, "thread %d's block at %p is not inside a slab",
           t, (void*)ptrs[t]);
    ranges.push_back({ptrs[t], ptrs[t] + small_bytes(t)});
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT(ranges[i].first >= ranges[i - 1].second, "small blocks %zu and %zu overlap", i - 1, i);
  HIP_CHECK(hipFree(d_ptrs));
  HIP_CHECK(hipFree(d_wrong));
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

  check_small_blocks(d_got);

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
