// A correct program for `softgpu check --tool all`: shared memory ordered
// by __syncthreads, atomics, a reduction, every buffer written before it
// is read and freed at the end. The report must be empty.
#include "common.h"

__global__ void block_sum(const int* in, int* sums, int* total, int n) {
  __shared__ int part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    sums[blockIdx.x] = part[0];
    atomicAdd(total, part[0]);
  }
}

int main() {
  const int n = 1000, blocks = 4;
  int host[n];
  long want = 0;
  for (int i = 0; i < n; i++) {
    host[i] = i % 17;
    want += host[i];
  }
  int *in = nullptr, *sums = nullptr, *total = nullptr;
  EXPECT(hipMalloc(&in, sizeof host) == hipSuccess, "hipMalloc");
  EXPECT(hipMalloc(&sums, blocks * sizeof(int)) == hipSuccess, "hipMalloc");
  EXPECT(hipMalloc(&total, sizeof(int)) == hipSuccess, "hipMalloc");
  EXPECT(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice) == hipSuccess, "hipMemcpy");
  EXPECT(hipMemset(total, 0, sizeof(int)) == hipSuccess, "hipMemset");
  block_sum<<<blocks, 256>>>(in, sums, total, n);
  int got = 0;
  EXPECT(hipMemcpy(&got, total, sizeof got, hipMemcpyDeviceToHost) == hipSuccess, "hipMemcpy");
  EXPECT(got == want, "total %d, expected %ld", got, want);
  EXPECT(hipFree(in) == hipSuccess && hipFree(sums) == hipSuccess && hipFree(total) == hipSuccess,
         "hipFree");
  return finish();
}
