// Occupancy: hipOccupancyMaxPotentialBlockSize and
// hipOccupancyMaxActiveBlocksPerMultiprocessor give sane values, and
// hipFuncGetAttributes describes a kernel; a launch with the suggested
// block size works.
#include "common.h"

#include <vector>

__global__ void smooth(const float* in, float* out, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % 256] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = 2.0f * tile[threadIdx.x % 256];
}

int main() {
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));

  int grid = 0, block = 0;
  HIP_CHECK(hipOccupancyMaxPotentialBlockSize(&grid, &block, smooth, 0, 0));
  EXPECT(block > 0 && block <= p.maxThreadsPerBlock && block % p.warpSize == 0,
         "suggested block size %d", block);
  EXPECT(grid > 0, "suggested grid size %d", grid);

  HIP_CHECK(hipOccupancyMaxPotentialBlockSize(&grid, &block, smooth, 0, 128));
  EXPECT(block > 0 && block <= 128, "block size with a limit of 128: %d", block);

  for (int bs : {32, 64, 256, 1024}) {
    int blocks = 0;
    HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, smooth, bs, 0));
    EXPECT(blocks >= 1 && blocks * bs <= p.maxThreadsPerMultiProcessor,
           "%d active blocks of %d threads per CU (CU holds %d threads)", blocks, bs,
           p.maxThreadsPerMultiProcessor);
  }
  // Dynamic shared memory limits the blocks per CU.
  int few = 0, many = 0;
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&many, smooth, 64, 0));
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&few, smooth, 64, p.sharedMemPerBlock - 1024));
  EXPECT(few >= 1 && few <= many, "blocks with a full LDS %d, without %d", few, many);

  hipFuncAttributes fa;
  HIP_CHECK(hipFuncGetAttributes(&fa, (const void*)smooth));
  EXPECT(fa.maxThreadsPerBlock > 0 && fa.maxThreadsPerBlock <= p.maxThreadsPerBlock,
         "maxThreadsPerBlock %d", fa.maxThreadsPerBlock);
  EXPECT(fa.sharedSizeBytes == 256 * sizeof(float), "sharedSizeBytes %zu, expected 1024",
         fa.sharedSizeBytes);
  EXPECT(fa.numRegs > 0, "numRegs %d", fa.numRegs);

  HIP_CHECK(hipOccupancyMaxPotentialBlockSize(&grid, &block, smooth, 0, 0));
  const int N = 5000;
  std::vector<float> in(N), out(N), want(N);
  for (int i = 0; i < N; ++i) {
    in[i] = i * 0.5f;
    want[i] = 2.0f * in[i];
  }
  float *din, *dout;
  HIP_CHECK(hipMalloc(&din, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&dout, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(din, in.data(), N * sizeof(float), hipMemcpyHostToDevice));
  int bs = block > 256 ? 256 : block;  // the kernel's tile holds 256
  smooth<<<(N + bs - 1) / bs, bs>>>(din, dout, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), dout, N * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("launch with the suggested block size", out.data(), want.data(), N);
  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dout));
  return finish();
}
