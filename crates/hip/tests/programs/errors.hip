// Errors: hipGetLastError / hipPeekAtLastError / hipGetErrorString /
// hipGetErrorName, a launch with too many threads per block, hipFree of a
// pointer HIP never allocated, an impossible allocation and an invalid
// device. The error codes are those of AMD's HIP runtime (CLR).
#include "common.h"

__global__ void fill(int* p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }

int main() {
  HIP_EXPECT_ERR(hipGetLastError(), hipSuccess);
  EXPECT(strcmp(hipGetErrorName(hipSuccess), "hipSuccess") == 0, "%s", hipGetErrorName(hipSuccess));
  EXPECT(strcmp(hipGetErrorName(hipErrorInvalidValue), "hipErrorInvalidValue") == 0, "%s",
         hipGetErrorName(hipErrorInvalidValue));
  EXPECT(strcmp(hipGetErrorName(hipErrorIllegalAddress), "hipErrorIllegalAddress") == 0, "%s",
         hipGetErrorName(hipErrorIllegalAddress));
  const char* s = hipGetErrorString(hipErrorOutOfMemory);
  EXPECT(s != nullptr && s[0] != 0, "empty string for hipErrorOutOfMemory");
  // ROCm's current runtime says "no error"; HIP 5.2.3 (Debian's) repeats the name.
  const char* ok = hipGetErrorString(hipSuccess);
  EXPECT(ok && (strcmp(ok, "no error") == 0 || strcmp(ok, "hipSuccess") == 0), "'%s'", ok ? ok : "(null)");

  // 2048 threads per block is above every AMD GPU's limit of 1024. AMD's
  // runtime (CLR: the launch check against the device's largest workgroup)
  // fails such a launch with hipErrorInvalidValue, not CUDA's
  // InvalidConfiguration; the error stays until read.
  int* d = nullptr;
  HIP_CHECK(hipMalloc(&d, 2048 * sizeof(int)));
  fill<<<1, 2048>>>(d, 1);
  HIP_EXPECT_ERR(hipPeekAtLastError(), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipPeekAtLastError(), hipErrorInvalidValue);  // peek does not reset
  HIP_EXPECT_ERR(hipGetLastError(), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGetLastError(), hipSuccess);  // get resets

  // The same with hipLaunchKernelGGL and a 3D block of 16 x 16 x 8.
  hipLaunchKernelGGL(fill, dim3(1), dim3(16, 16, 8), 0, 0, d, 1);
  HIP_EXPECT_ERR(hipGetLastError(), hipErrorInvalidValue);

  // A good launch afterwards works.
  fill<<<2, 1024>>>(d, 7);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  static int h[2048];
  HIP_CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 2048; ++i) bad += h[i] != 7;
  EXPECT(bad == 0, "%d of 2048 values not 7", bad);

  // hipFree of memory HIP never allocated is hipErrorInvalidValue;
  // hipFree(nullptr) is a no-op.
  int local = 0;
  HIP_EXPECT_ERR(hipFree(&local), hipErrorInvalidValue);
  (void)hipGetLastError();
  HIP_EXPECT_ERR(hipFree(nullptr), hipSuccess);
  HIP_CHECK(hipFree(d));

  // An impossible allocation and a device that does not exist.
  void* huge = nullptr;
  HIP_EXPECT_ERR(hipMalloc(&huge, (size_t)1 << 60), hipErrorOutOfMemory);
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  HIP_EXPECT_ERR(hipSetDevice(count), hipErrorInvalidDevice);
  (void)hipGetLastError();

  // Wild pointers in copies and fills, on either side and in every form,
  // are hipErrorInvalidValue from the call (on ROCm some of these are a
  // segmentation fault; on softgpu they were too), and nothing is sticky.
  int* dv = nullptr;
  HIP_CHECK(hipMalloc(&dv, 4096));
  static int hbuf[2048];
  static const int constant[1024] = {1};
  void* wild[] = {(void*)0x1000, (void*)0xdeadbeef000ull};
  for (void* w : wild) {
    HIP_EXPECT_ERR(hipMemcpy(dv, w, 4096, hipMemcpyHostToDevice), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemcpy(w, dv, 4096, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemcpy(w, dv, 4096, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemcpy(dv, w, 4096, hipMemcpyDefault), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemcpy(hbuf, w, 4096, hipMemcpyHostToHost), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemcpyAsync(dv, w, 4096, hipMemcpyHostToDevice, 0), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemcpyAsync(w, dv, 4096, hipMemcpyDeviceToHost, 0), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemcpy2D(dv, 64, w, 64, 64, 4, hipMemcpyHostToDevice), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemset(w, 0, 4096), hipErrorInvalidValue);
    HIP_EXPECT_ERR(hipMemsetD32((hipDeviceptr_t)w, 0, 1024), hipErrorInvalidValue);
  }
  // A read-only host destination, and host memory as a fill's target.
  HIP_EXPECT_ERR(hipMemcpy((void*)constant, dv, 4096, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemset(hbuf, 0, sizeof hbuf), hipErrorInvalidValue);
  // Past the end of an allocation: refused by the call (as ROCm's
  // validation does), and the device goes on working.
  HIP_EXPECT_ERR(hipMemcpy(dv, hbuf, 8192, hipMemcpyHostToDevice), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemcpyAsync(hbuf, dv, 8192, hipMemcpyDeviceToHost, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemset(dv, 0, 4097), hipErrorInvalidValue);
  (void)hipGetLastError();
  for (int i = 0; i < 1024; ++i) hbuf[i] = i;
  HIP_CHECK(hipMemcpy(dv, hbuf, 4096, hipMemcpyHostToDevice));
  fill<<<1, 512>>>(dv, 5);
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(hbuf, dv, 4096, hipMemcpyDeviceToHost));
  EXPECT(hbuf[0] == 5 && hbuf[511] == 5 && hbuf[512] == 512 && hbuf[1023] == 1023, "%d %d %d %d",
         hbuf[0], hbuf[511], hbuf[512], hbuf[1023]);
  HIP_CHECK(hipFree(dv));
  return finish();
}
