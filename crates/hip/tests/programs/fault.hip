// A kernel that writes through a wild pointer: hipDeviceSynchronize (or
// the launch) reports hipErrorIllegalAddress, a report naming the kernel
// appears on standard error (the harness checks it), and the process
// lives on and exits 0.
#include "common.h"

#include <cstdint>

__global__ void wild_write(int* p) { p[threadIdx.x] = 42; }

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
  return finish();
}
