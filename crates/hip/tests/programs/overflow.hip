// A kernel that writes one element past the end of a hipMalloc'd buffer:
// softgpu refuses the store (on a GPU it would silently land in whatever
// lies behind), hipDeviceSynchronize reports hipErrorIllegalAddress, and
// the report on standard error names the allocation, who made it and the
// kernel argument (the harness checks it). The buffer allocated next is
// untouched.
#include "common.h"

__global__ void fill_one_too_many(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 7;  // the bug: <= instead of <
}

int main() {
  const int n = 100;
  int *out = nullptr, *next = nullptr;
  EXPECT(hipMalloc(&out, n * sizeof(int)) == hipSuccess, "hipMalloc");
  EXPECT(hipMalloc(&next, n * sizeof(int)) == hipSuccess, "hipMalloc");
  EXPECT(hipMemset(next, 0x5a, n * sizeof(int)) == hipSuccess, "hipMemset");
  fill_one_too_many<<<1, 128>>>(out, n);
  hipError_t sync = hipDeviceSynchronize();
  EXPECT(sync == hipErrorIllegalAddress, "hipDeviceSynchronize gave %s, expected hipErrorIllegalAddress",
         hipGetErrorName(sync));
  printf("overflow reported as %s\n", hipGetErrorName(sync));
  fflush(stderr);
  return finish();
}
