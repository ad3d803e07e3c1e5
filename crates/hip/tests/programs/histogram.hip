// Sample: a 256-bin histogram of bytes, each block counting into a
// __shared__ histogram with atomics, then adding it to the global one.
#include "common.h"

#include <vector>

__global__ void histogram(const unsigned char* data, int n, unsigned* bins) {
  __shared__ unsigned local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}

int main() {
  const int N = 200000;
  std::vector<unsigned char> data(N);
  unsigned x = 12345;
  for (int i = 0; i < N; ++i) {
    x = x * 1103515245u + 12345u;
    // Skewed: low bins are hit far more often, so blocks collide on them.
    unsigned v = (x >> 16) & 0xFF;
    data[i] = (unsigned char)((v * v) >> 8);
  }
  std::vector<unsigned> want(256, 0), bins(256);
  for (int i = 0; i < N; ++i) want[data[i]]++;
  unsigned char* dd;
  unsigned* db;
  HIP_CHECK(hipMalloc(&dd, N));
  HIP_CHECK(hipMalloc(&db, 256 * sizeof(unsigned)));
  HIP_CHECK(hipMemcpy(dd, data.data(), N, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(db, 0, 256 * sizeof(unsigned)));
  histogram<<<24, 256>>>(dd, N, db);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(bins.data(), db, 256 * sizeof(unsigned), hipMemcpyDeviceToHost));
  expect_equal("bins", bins.data(), want.data(), 256);
  HIP_CHECK(hipFree(dd));
  HIP_CHECK(hipFree(db));
  return finish();
}
