// Sample: three ways to sum a large array, as applications write them — a
// __shared__ tree per block and a second pass, warp shuffles with one
// atomicAdd per wave, and a grid-stride loop with a block atomic — on an
// integer array (exact) and a float array (compared with a host sum in
// double: 16384 threads' partial sums of 64 values each, then a block's 256
// and the grid's 64 atomic adds, in any order; each rounding errs by at
// most 2^-24 of the running magnitude, so 1e-6 * sum|x| is a safe bound
// that still catches a single element of magnitude above 0.5 lost or
// added twice).
#include "common.h"

#include <cmath>
#include <vector>

__global__ void block_sum(const int* in, long long* partial, int n) {
  extern __shared__ long long sdata[];
  int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  long long v = 0;
  if (i < n) v += in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  sdata[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sdata[0];
}

__global__ void shuffle_sum(const int* in, unsigned long long* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long v = i < n ? (unsigned long long)(long long)in[i] : 0ull;
  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_down(v, off);
  if ((threadIdx.x % warpSize) == 0) atomicAdd(total, v);
}

__global__ void grid_stride_sum(const float* in, float* total, int n) {
  __shared__ float block_total;
  if (threadIdx.x == 0) block_total = 0.0f;
  __syncthreads();
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  atomicAdd(&block_total, v);
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(total, block_total);
}

int main() {
  const int n = 1 << 20, threads = 256;
  std::vector<int> xi(n);
  std::vector<float> xf(n);
  long long want_i = 0;
  double want_f = 0, mag = 0;
  for (int i = 0; i < n; ++i) {
    xi[i] = (int)((i * 2654435761u) % 2001) - 1000;
    xf[i] = xi[i] / 1000.0f;
    want_i += xi[i];
    want_f += xf[i];
    mag += std::fabs(xf[i]);
  }
  int* di;
  float* df;
  HIP_CHECK(hipMalloc(&di, n * sizeof(int)));
  HIP_CHECK(hipMalloc(&df, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(di, xi.data(), n * sizeof(int), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(df, xf.data(), n * sizeof(float), hipMemcpyHostToDevice));

  int blocks = (n + threads * 2 - 1) / (threads * 2);
  long long* partial;
  HIP_CHECK(hipMalloc(&partial, blocks * sizeof(long long)));
  block_sum<<<blocks, threads, threads * sizeof(long long)>>>(di, partial, n);
  HIP_CHECK(hipGetLastError());
  std::vector<long long> parts(blocks);
  HIP_CHECK(hipMemcpy(parts.data(), partial, blocks * sizeof(long long), hipMemcpyDeviceToHost));
  long long tree = 0;
  for (long long p : parts) tree += p;
  EXPECT(tree == want_i, "tree sum %lld, expected %lld", tree, want_i);

  unsigned long long* dtotal;
  HIP_CHECK(hipMalloc(&dtotal, sizeof(unsigned long long)));
  HIP_CHECK(hipMemset(dtotal, 0, sizeof(unsigned long long)));
  shuffle_sum<<<(n + threads - 1) / threads, threads>>>(di, dtotal, n);
  HIP_CHECK(hipGetLastError());
  unsigned long long shuffled = 0;
  HIP_CHECK(hipMemcpy(&shuffled, dtotal, sizeof(shuffled), hipMemcpyDeviceToHost));
  EXPECT((long long)shuffled == want_i, "shuffle sum %lld, expected %lld", (long long)shuffled, want_i);

  float* dftotal;
  HIP_CHECK(hipMalloc(&dftotal, sizeof(float)));
  HIP_CHECK(hipMemset(dftotal, 0, sizeof(float)));
  grid_stride_sum<<<64, threads>>>(df, dftotal, n);
  HIP_CHECK(hipGetLastError());
  float fsum = 0;
  HIP_CHECK(hipMemcpy(&fsum, dftotal, sizeof(float), hipMemcpyDeviceToHost));
  double tol = 1e-6 * mag;
  EXPECT(std::fabs(fsum - want_f) <= tol, "float sum %.7g, expected %.7g (tolerance %.3g)", fsum, want_f, tol);

  HIP_CHECK(hipFree(di));
  HIP_CHECK(hipFree(df));
  HIP_CHECK(hipFree(partial));
  HIP_CHECK(hipFree(dtotal));
  HIP_CHECK(hipFree(dftotal));
  return finish();
}
