// Run with Debian's own HIP runtime (AMD's CLR 5.2.3) over softgpu's HSA
// library on two emulated gfx1030 devices: what AMD's runtime does with an
// HSA implementation when a program enumerates devices, allocates, copies,
// launches, and orders work with streams and events. Nothing here is
// softgpu's: every HIP call is CLR's.
#include "common.h"

#include <vector>

__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Each block sums its slice into shared memory, then one atomic per block.
__global__ void block_sum(const int* x, int* total, int n) {
  __shared__ int part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, part[0]);
}

static void devices() {
  int n = 0;
  HIP_CHECK(hipGetDeviceCount(&n));
  EXPECT(n == 2, "hipGetDeviceCount gave %d with SOFTGPU_DEVICES=2", n);
  for (int d = 0; d < n; d++) {
    hipDeviceProp_t p;
    HIP_CHECK(hipGetDeviceProperties(&p, d));
    EXPECT(strncmp(p.gcnArchName, "gfx1030", 7) == 0, "device %d gcnArchName '%s'", d,
           p.gcnArchName);
    EXPECT(p.warpSize == 32, "device %d warpSize %d", d, p.warpSize);
    EXPECT(p.totalGlobalMem >= ((size_t)1 << 28), "device %d totalGlobalMem %zu", d,
           p.totalGlobalMem);
    EXPECT(p.multiProcessorCount > 0, "device %d multiProcessorCount %d", d,
           p.multiProcessorCount);
  }
  HIP_EXPECT_ERR(hipSetDevice(n), hipErrorInvalidDevice);
  (void)hipGetLastError();
}

static void memory_and_launch(int dev) {
  HIP_CHECK(hipSetDevice(dev));
  const int n = 10000;
  std::vector<float> x(n), y(n), want(n);
  for (int i = 0; i < n; i++) {
    x[i] = i * 0.25f;
    y[i] = 1000.0f - i;
    want[i] = 3.0f * x[i] + y[i];
  }
  float *dx, *dy;
  HIP_CHECK(hipMalloc(&dx, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dy, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(axpy, dim3((n + 255) / 256), dim3(256), 0, 0, 3.0f, dx, dy, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("axpy", y.data(), want.data(), n);

  // Memset, device-to-device copy, pinned host memory.
  HIP_CHECK(hipMemset(dx, 0, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(dx, dy, n / 2 * sizeof(float), hipMemcpyDeviceToDevice));
  float* pinned;
  HIP_CHECK(hipHostMalloc(&pinned, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(pinned, dx, n * sizeof(float), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += pinned[i] != (i < n / 2 ? want[i] : 0.0f);
  EXPECT(bad == 0, "device %d: %d values wrong after memset and device copy", dev, bad);
  HIP_CHECK(hipHostFree(pinned));
  HIP_CHECK(hipFree(dx));
  HIP_CHECK(hipFree(dy));
}

static void streams_and_events() {
  HIP_CHECK(hipSetDevice(0));
  const int n = 1 << 16;
  std::vector<int> x(n);
  long long want = 0;
  for (int i = 0; i < n; i++) want += x[i] = (i * 7) % 1000 - 500;
  int *dx, *dtotal;
  HIP_CHECK(hipMalloc(&dx, n * sizeof(int)));
  HIP_CHECK(hipMalloc(&dtotal, sizeof(int)));
  hipStream_t s1, s2;
  HIP_CHECK(hipStreamCreate(&s1));
  HIP_CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t copied, start, stop;
  HIP_CHECK(hipEventCreate(&copied));
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  // s1 copies; s2 waits for the copy, then sums.
  HIP_CHECK(hipMemsetAsync(dtotal, 0, sizeof(int), s1));
  HIP_CHECK(hipMemcpyAsync(dx, x.data(), n * sizeof(int), hipMemcpyHostToDevice, s1));
  HIP_CHECK(hipEventRecord(copied, s1));
  HIP_CHECK(hipStreamWaitEvent(s2, copied, 0));
  HIP_CHECK(hipEventRecord(start, s2));
  hipLaunchKernelGGL(block_sum, dim3(n / 256), dim3(256), 0, s2, dx, dtotal, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(stop, s2));
  HIP_CHECK(hipEventSynchronize(stop));
  HIP_CHECK(hipEventQuery(stop));
  float ms = -1;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0, "elapsed time %f ms", ms);
  int total = 0;
  HIP_CHECK(hipMemcpyAsync(&total, dtotal, sizeof(int), hipMemcpyDeviceToHost, s2));
  HIP_CHECK(hipStreamSynchronize(s2));
  EXPECT(total == want, "block_sum gave %d, expected %lld", total, want);
  HIP_CHECK(hipStreamQuery(s1));
  HIP_CHECK(hipDeviceSynchronize());
  for (hipEvent_t e : {copied, start, stop}) HIP_CHECK(hipEventDestroy(e));
  HIP_CHECK(hipStreamDestroy(s1));
  HIP_CHECK(hipStreamDestroy(s2));
  HIP_CHECK(hipFree(dx));
  HIP_CHECK(hipFree(dtotal));
}

int main() {
  devices();
  memory_and_launch(0);
  memory_and_launch(1);
  streams_and_events();
  return finish();
}
