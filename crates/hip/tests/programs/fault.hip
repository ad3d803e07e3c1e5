// A kernel that writes through a wild pointer: hipDeviceSynchronize (or
// the launch) reports hipErrorIllegalAddress, a report naming the kernel
// appears on standard error (the harness checks it), and the process
// lives on and exits 0. After hipDeviceReset, a kernel that never ends is
// stopped by the watchdog (the harness sets SOFTGPU_TIMEOUT=2):
// hipErrorLaunchTimeOut, chosen by the fault's kind.
#include "common.h"

#include <cstdint>

__global__ void wild_write(int* p) { p[threadIdx.x] = 42; }
__global__ void spin(volatile int* flag) {
  while (*flag == 0) {
  }
}

int main() {
  int* wild = (int*)(uintptr_t)0x40;  // the first page: never mapped
  wild_write<<<1, 64>>>(wild);
  hipError_t launch = hipGetLastError();
  hipError_t sync = hipDeviceSynchronize();
  EXPECT(launch == hipSuccess || launch == hipErrorIllegalAddress, "launch gave %s",
         hipGetErrorName(launch));
  EXPECT(launch == hipErrorIllegalAddress || sync == hipErrorIllegalAddress,
         "hipDeviceSynchronize gave %s (%d), expected hipErrorIllegalAddress",
         hipGetErrorName(sync), (int)sync);
  printf("fault reported as %s\n", hipGetErrorName(launch != hipSuccess ? launch : sync));
  fflush(stderr);

  HIP_CHECK(hipDeviceReset());
  int* flag = nullptr;
  HIP_CHECK(hipMalloc(&flag, sizeof(int)));
  HIP_CHECK(hipMemset(flag, 0, sizeof(int)));
  spin<<<1, 32>>>(flag);
  HIP_EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchTimeOut);
  HIP_EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchTimeOut);  // sticky, as a fault
  HIP_CHECK(hipDeviceReset());
  return finish();
}
