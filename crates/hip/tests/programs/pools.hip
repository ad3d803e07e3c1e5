// Memory pools (run with SOFTGPU_DEVICES=2), as a stream-ordered
// allocator's user would: batches allocated with hipMallocAsync and
// hipMallocFromPoolAsync, used by kernels and freed in stream order, a
// pool that keeps its memory for reuse (release threshold), its usage
// attributes, trimming, access from the other device, and the status
// codes ROCm's CLR gives bad pools.
#include "common.h"

#include <cstdint>

__global__ void iota_times(int* out, int k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = k * i;
}

static uint64_t attr64(hipMemPool_t pool, hipMemPoolAttr a) {
  uint64_t v = 0xdeadbeef;
  HIP_CHECK(hipMemPoolGetAttribute(pool, a, &v));
  return v;
}

// Fills a fresh allocation from `pool` (or the device's current pool) on
// `s`, reads it back and frees it in stream order.
static void batch(hipMemPool_t pool, hipStream_t s, int k, int n, const char* what) {
  int* d = nullptr;
  if (pool)
    HIP_CHECK(hipMallocFromPoolAsync((void**)&d, n * sizeof(int), pool, s));
  else
    HIP_CHECK(hipMallocAsync((void**)&d, n * sizeof(int), s));
  iota_times<<<(n + 255) / 256, 256, 0, s>>>(d, k, n);
  HIP_CHECK(hipGetLastError());
  int* back = new int[n];
  int* want = new int[n];
  for (int i = 0; i < n; ++i) want[i] = k * i;
  HIP_CHECK(hipMemcpyAsync(back, d, n * sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipFreeAsync(d, s));
  HIP_CHECK(hipStreamSynchronize(s));
  expect_equal(what, back, want, n);
  delete[] back;
  delete[] want;
}

int main() {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 2, "hipGetDeviceCount gave %d with SOFTGPU_DEVICES=2", count);
  if (count < 2) return finish();
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));

  // The default pool is each device's current pool.
  hipMemPool_t default0 = nullptr, default1 = nullptr, current = nullptr;
  HIP_CHECK(hipDeviceGetDefaultMemPool(&default0, 0));
  HIP_CHECK(hipDeviceGetDefaultMemPool(&default1, 1));
  HIP_CHECK(hipDeviceGetMemPool(&current, 0));
  EXPECT(default0 && default0 != default1, "default pools %p and %p", default0, default1);
  EXPECT(current == default0, "current pool %p, default %p", current, default0);
  batch(nullptr, s, 3, 10000, "hipMallocAsync from the default pool");
  // Release threshold 0 (the default): freed memory went back.
  EXPECT(attr64(default0, hipMemPoolAttrUsedMemCurrent) == 0, "default pool still uses %llu bytes",
         (unsigned long long)attr64(default0, hipMemPoolAttrUsedMemCurrent));
  EXPECT(attr64(default0, hipMemPoolAttrReservedMemCurrent) == 0,
         "default pool still reserves %llu bytes",
         (unsigned long long)attr64(default0, hipMemPoolAttrReservedMemCurrent));

  // A pool of our own that keeps what is freed.
  hipMemPoolProps props = {};
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  hipMemPool_t pool = nullptr;
  HIP_CHECK(hipMemPoolCreate(&pool, &props));
  uint64_t keep_all = UINT64_MAX;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep_all));
  EXPECT(attr64(pool, hipMemPoolAttrReleaseThreshold) == UINT64_MAX, "release threshold %llu",
         (unsigned long long)attr64(pool, hipMemPoolAttrReleaseThreshold));
  const size_t mib = 1 << 20;
  void* a = nullptr;
  HIP_CHECK(hipMallocFromPoolAsync(&a, mib, pool, s));
  EXPECT(attr64(pool, hipMemPoolAttrUsedMemCurrent) >= mib, "used %llu after a 1 MiB allocation",
         (unsigned long long)attr64(pool, hipMemPoolAttrUsedMemCurrent));
  HIP_CHECK(hipFreeAsync(a, s));
  HIP_CHECK(hipStreamSynchronize(s));
  EXPECT(attr64(pool, hipMemPoolAttrUsedMemCurrent) == 0, "used %llu after the free",
         (unsigned long long)attr64(pool, hipMemPoolAttrUsedMemCurrent));
  uint64_t reserved = attr64(pool, hipMemPoolAttrReservedMemCurrent);
  EXPECT(reserved >= mib, "the pool keeps %llu bytes, not the freed MiB",
         (unsigned long long)reserved);
  // Reuse: another batch of the same size reserves nothing more.
  batch(pool, s, 7, (int)(mib / sizeof(int)), "hipMallocFromPoolAsync, reused memory");
  EXPECT(attr64(pool, hipMemPoolAttrReservedMemCurrent) == reserved,
         "reserved grew from %llu to %llu on reuse", (unsigned long long)reserved,
         (unsigned long long)attr64(pool, hipMemPoolAttrReservedMemCurrent));
  EXPECT(attr64(pool, hipMemPoolAttrUsedMemHigh) >= mib, "used high %llu",
         (unsigned long long)attr64(pool, hipMemPoolAttrUsedMemHigh));
  EXPECT(attr64(pool, hipMemPoolAttrReservedMemHigh) >= mib, "reserved high %llu",
         (unsigned long long)attr64(pool, hipMemPoolAttrReservedMemHigh));
  // The high-water marks reset only with 0; the current values are
  // read-only (CLR).
  uint64_t zero = 0, five = 5;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemHigh, &zero));
  EXPECT(attr64(pool, hipMemPoolAttrUsedMemHigh) == 0, "used high after reset %llu",
         (unsigned long long)attr64(pool, hipMemPoolAttrUsedMemHigh));
  HIP_EXPECT_ERR(hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemHigh, &five),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &zero),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolSetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &zero),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolGetAttribute(pool, (hipMemPoolAttr)99, &zero), hipErrorInvalidValue);
  int reuse = 0;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &reuse));
  reuse = 1;
  HIP_CHECK(hipMemPoolGetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &reuse));
  EXPECT(reuse == 0, "opportunistic reuse reads %d after setting 0", reuse);

  // Trimming releases what the pool keeps.
  HIP_CHECK(hipMemPoolTrimTo(pool, 0));
  EXPECT(attr64(pool, hipMemPoolAttrReservedMemCurrent) == 0, "reserved %llu after trimming",
         (unsigned long long)attr64(pool, hipMemPoolAttrReservedMemCurrent));

  // Access: the pool's device has it all, device 1 what it is given.
  hipMemLocation loc = {hipMemLocationTypeDevice, 0};
  hipMemAccessFlags access = hipMemAccessFlagsProtNone;
  HIP_CHECK(hipMemPoolGetAccess(&access, pool, &loc));
  EXPECT(access == hipMemAccessFlagsProtReadWrite, "own device's access %d", (int)access);
  loc.id = 1;
  HIP_CHECK(hipMemPoolGetAccess(&access, pool, &loc));
  EXPECT(access == hipMemAccessFlagsProtNone, "device 1's access before granting %d", (int)access);
  hipMemAccessDesc desc = {{hipMemLocationTypeDevice, 1}, hipMemAccessFlagsProtRead};
  HIP_CHECK(hipMemPoolSetAccess(pool, &desc, 1));
  HIP_CHECK(hipMemPoolGetAccess(&access, pool, &loc));
  EXPECT(access == hipMemAccessFlagsProtRead, "device 1's access after granting %d", (int)access);
  desc.flags = hipMemAccessFlagsProtNone;  // CLR: revoking is hipErrorInvalidDevice
  HIP_EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidDevice);
  desc.flags = hipMemAccessFlagsProtReadWrite;
  desc.location.id = 5;
  HIP_EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidDevice);
  HIP_EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 3), hipErrorInvalidDevice);
  HIP_EXPECT_ERR(hipMemPoolSetAccess(pool, nullptr, 1), hipErrorInvalidValue);

  // Made current, the pool serves hipMallocAsync; destroyed, the
  // default pool is current again.
  HIP_CHECK(hipDeviceSetMemPool(0, pool));
  HIP_CHECK(hipDeviceGetMemPool(&current, 0));
  EXPECT(current == pool, "current pool %p, set %p", current, pool);
  void* b = nullptr;
  HIP_CHECK(hipMallocAsync(&b, 4096, s));
  EXPECT(attr64(pool, hipMemPoolAttrUsedMemCurrent) >= 4096, "hipMallocAsync did not use the pool");
  HIP_EXPECT_ERR(hipDeviceSetMemPool(1, pool), hipErrorInvalidDevice);
  HIP_CHECK(hipMemPoolDestroy(pool));
  HIP_CHECK(hipDeviceGetMemPool(&current, 0));
  EXPECT(current == default0, "after destroying it the current pool is %p", current);
  // Its memory still in use stays valid until freed.
  HIP_CHECK(hipMemsetAsync(b, 0x5a, 4096, s));
  unsigned char check[4096];
  HIP_CHECK(hipMemcpyAsync(check, b, sizeof check, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipFreeAsync(b, s));
  HIP_CHECK(hipStreamSynchronize(s));
  EXPECT(check[0] == 0x5a && check[4095] == 0x5a, "memory of a destroyed pool read %x %x",
         check[0], check[4095]);

  // Bad pools and properties, with CLR's codes.
  hipMemPool_t forged = (hipMemPool_t)(uintptr_t)0x1234;
  void* p = nullptr;
  HIP_EXPECT_ERR(hipMemPoolDestroy(pool), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolDestroy(default0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolDestroy(forged), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolDestroy(nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMallocFromPoolAsync(&p, 64, nullptr, s), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMallocFromPoolAsync(&p, 64, forged, s), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolTrimTo(forged, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolGetAttribute(default0, hipMemPoolAttrUsedMemCurrent, nullptr),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipDeviceGetDefaultMemPool(&current, 2), hipErrorInvalidDevice);
  HIP_EXPECT_ERR(hipDeviceGetDefaultMemPool(nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipDeviceGetMemPool(&current, 2), hipErrorInvalidValue);
  props.allocType = hipMemAllocationTypeInvalid;
  HIP_EXPECT_ERR(hipMemPoolCreate(&pool, &props), hipErrorInvalidValue);
  props.allocType = hipMemAllocationTypePinned;
  props.location.id = 9;
  HIP_EXPECT_ERR(hipMemPoolCreate(&pool, &props), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemPoolCreate(&pool, nullptr), hipErrorInvalidValue);
  (void)hipGetLastError();

  // A pool on device 1, used from device 0's stream order.
  props.location.id = 1;
  HIP_CHECK(hipMemPoolCreate(&pool, &props));
  HIP_CHECK(hipSetDevice(1));
  hipStream_t s1;
  HIP_CHECK(hipStreamCreate(&s1));
  batch(pool, s1, -5, 3000, "hipMallocFromPoolAsync on device 1");
  HIP_CHECK(hipStreamDestroy(s1));
  HIP_CHECK(hipMemPoolDestroy(pool));
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipStreamDestroy(s));
  return finish();
}
