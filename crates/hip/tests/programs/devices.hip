// Devices (run with SOFTGPU_DEVICES=2): count, selection, properties,
// attributes, versions, memory info, synchronize/reset, and peer access:
// a kernel on device 1 reading device 0's memory.
#include "common.h"

#include <dlfcn.h>

#include "../../../../include/softgpu_ext.h"

__global__ void twice(const int* src, int* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = 2 * src[i];
}

static int attr(hipDeviceAttribute_t a, int dev) {
  int v = -1;
  HIP_CHECK(hipDeviceGetAttribute(&v, a, dev));
  return v;
}

int main() {
  int n = 0;
  HIP_CHECK(hipGetDeviceCount(&n));
  EXPECT(n == 2, "hipGetDeviceCount gave %d with SOFTGPU_DEVICES=2", n);
  if (n < 2) return finish();

  for (int d = n - 1; d >= 0; --d) {
    HIP_CHECK(hipSetDevice(d));
    int cur = -1;
    HIP_CHECK(hipGetDevice(&cur));
    EXPECT(cur == d, "hipGetDevice gave %d after hipSetDevice(%d)", cur, d);
  }
  HIP_EXPECT_ERR(hipSetDevice(n), hipErrorInvalidDevice);
  (void)hipGetLastError();

  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  EXPECT(strncmp(p.gcnArchName, "gfx1151", 7) == 0, "gcnArchName '%s'", p.gcnArchName);
  EXPECT(p.name[0] != 0, "empty name");
  EXPECT(p.warpSize == 32, "warpSize %d", p.warpSize);
  EXPECT(p.major == 11 && p.minor == 5, "compute capability %d.%d", p.major, p.minor);
  EXPECT(p.maxThreadsPerBlock >= 256 && p.maxThreadsPerBlock <= 1024, "maxThreadsPerBlock %d",
         p.maxThreadsPerBlock);
  EXPECT(p.maxThreadsDim[0] >= 256 && p.maxThreadsDim[1] >= 1 && p.maxThreadsDim[2] >= 1,
         "maxThreadsDim %d %d %d", p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
  EXPECT(p.maxGridSize[0] >= 65535 && p.maxGridSize[1] >= 1 && p.maxGridSize[2] >= 1,
         "maxGridSize %d %d %d", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
  EXPECT(p.multiProcessorCount > 0, "multiProcessorCount %d", p.multiProcessorCount);
  EXPECT(p.sharedMemPerBlock >= 32768, "sharedMemPerBlock %zu", p.sharedMemPerBlock);
  EXPECT(p.totalGlobalMem >= ((size_t)1 << 28), "totalGlobalMem %zu", p.totalGlobalMem);
  EXPECT(p.regsPerBlock > 0, "regsPerBlock %d", p.regsPerBlock);
  EXPECT(p.clockRate > 0, "clockRate %d", p.clockRate);
  EXPECT(p.maxThreadsPerMultiProcessor >= p.maxThreadsPerBlock, "maxThreadsPerMultiProcessor %d",
         p.maxThreadsPerMultiProcessor);
  HIP_EXPECT_ERR(hipGetDeviceProperties(&p, n), hipErrorInvalidDevice);
  (void)hipGetLastError();
  HIP_CHECK(hipGetDeviceProperties(&p, 1));
  EXPECT(strncmp(p.gcnArchName, "gfx1151", 7) == 0, "device 1 gcnArchName '%s'", p.gcnArchName);

  // softgpu's extension: the profile a device emulates and its fidelity,
  // found the way a program linked against ROCm's library would.
  softgpu_hip_device_get_profile_t get_profile =
      (softgpu_hip_device_get_profile_t)dlsym(RTLD_DEFAULT, "softgpuHipDeviceGetProfile");
  EXPECT(get_profile != NULL, "softgpuHipDeviceGetProfile is not exported");
  if (get_profile) {
    char id[64];
    unsigned rev = 0, fid = 9;
    EXPECT(get_profile(1, id, sizeof id, &rev, &fid) == hipSuccess, "profile of device 1");
    EXPECT(strcmp(id, "softgpu/gfx1151/radeon-8060s") == 0, "profile id '%s'", id);
    EXPECT(rev >= 1 && fid == SOFTGPU_FIDELITY_TIMING_ESTIMATED, "revision %u fidelity %u", rev,
           fid);
    EXPECT(get_profile(n, id, sizeof id, &rev, &fid) == hipErrorInvalidDevice,
           "a device past the last");
    EXPECT(get_profile(0, id, 4, &rev, &fid) == hipErrorInvalidValue, "a buffer too small");
    (void)hipGetLastError();
  }

  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  EXPECT(attr(hipDeviceAttributeWarpSize, 0) == 32, "attribute warp size");
  EXPECT(attr(hipDeviceAttributeMaxThreadsPerBlock, 0) == p.maxThreadsPerBlock, "max threads");
  EXPECT(attr(hipDeviceAttributeMaxBlockDimX, 0) == p.maxThreadsDim[0], "block dim x");
  EXPECT(attr(hipDeviceAttributeMaxGridDimX, 0) == p.maxGridSize[0], "grid dim x");
  EXPECT(attr(hipDeviceAttributeMultiprocessorCount, 0) == p.multiProcessorCount, "CUs");
  EXPECT((size_t)attr(hipDeviceAttributeMaxSharedMemoryPerBlock, 0) == p.sharedMemPerBlock,
         "shared memory");
  EXPECT(attr(hipDeviceAttributeComputeCapabilityMajor, 0) == p.major, "major");
  EXPECT(attr(hipDeviceAttributeComputeCapabilityMinor, 0) == p.minor, "minor");
  EXPECT(attr(hipDeviceAttributeClockRate, 0) == p.clockRate, "clock rate");
  EXPECT(attr(hipDeviceAttributeMaxThreadsPerMultiProcessor, 0) == p.maxThreadsPerMultiProcessor,
         "threads per CU");

  int rt = 0, drv = 0;
  HIP_CHECK(hipRuntimeGetVersion(&rt));
  HIP_CHECK(hipDriverGetVersion(&drv));
  EXPECT(rt > 0, "runtime version %d", rt);
  EXPECT(drv > 0, "driver version %d", drv);

  HIP_CHECK(hipSetDevice(0));
  size_t free0 = 0, total = 0;
  HIP_CHECK(hipMemGetInfo(&free0, &total));
  EXPECT(total > 0 && free0 > 0 && free0 <= total, "free %zu total %zu", free0, total);
  void* big = nullptr;
  HIP_CHECK(hipMalloc(&big, 64 << 20));
  size_t free1 = 0;
  HIP_CHECK(hipMemGetInfo(&free1, &total));
  EXPECT(free1 <= free0, "free memory grew after a 64 MiB hipMalloc: %zu -> %zu", free0, free1);
  HIP_CHECK(hipFree(big));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipDeviceReset());
  HIP_CHECK(hipMalloc(&big, 4096));  // the device works after a reset
  HIP_CHECK(hipFree(big));

  // Peer access: device 1 reads device 0's memory.
  int can = -1;
  HIP_CHECK(hipDeviceCanAccessPeer(&can, 1, 0));
  EXPECT(can == 1, "hipDeviceCanAccessPeer(1, 0) = %d", can);
  const int N = 1000;
  static int h[N], out[N];
  for (int i = 0; i < N; ++i) h[i] = i * 7 - 300;
  int *src = nullptr, *dst = nullptr;
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipMalloc(&src, N * sizeof(int)));
  HIP_CHECK(hipMemcpy(src, h, sizeof h, hipMemcpyHostToDevice));
  HIP_CHECK(hipSetDevice(1));
  HIP_CHECK(hipDeviceEnablePeerAccess(0, 0));
  HIP_EXPECT_ERR(hipDeviceEnablePeerAccess(0, 0), hipErrorPeerAccessAlreadyEnabled);
  (void)hipGetLastError();
  HIP_CHECK(hipMalloc(&dst, N * sizeof(int)));
  twice<<<(N + 255) / 256, 256>>>(src, dst, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out, dst, sizeof out, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += out[i] != 2 * h[i];
  EXPECT(bad == 0, "%d of %d values wrong after the peer read (out[1] = %d)", bad, N, out[1]);
  HIP_CHECK(hipFree(dst));
  HIP_CHECK(hipDeviceDisablePeerAccess(0));
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipFree(src));
  return finish();
}
