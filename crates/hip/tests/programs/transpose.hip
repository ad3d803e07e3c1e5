// Sample: matrix transpose through a padded __shared__ tile with
// __syncthreads, on a matrix whose sides are no multiple of the tile.
#include "common.h"

#include <vector>

#define TILE 16

__global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];  // +1: no bank conflicts on the column read
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  // The block's tile, written transposed: threads now walk the output rows.
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

int main() {
  const int R = 123, C = 77;
  std::vector<float> in(R * C), out(R * C, -1.0f), want(R * C);
  for (int i = 0; i < R * C; ++i) in[i] = (float)i;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) want[c * R + r] = in[r * C + c];
  float *din, *dout;
  HIP_CHECK(hipMalloc(&din, R * C * sizeof(float)));
  HIP_CHECK(hipMalloc(&dout, R * C * sizeof(float)));
  HIP_CHECK(hipMemcpy(din, in.data(), R * C * sizeof(float), hipMemcpyHostToDevice));
  dim3 block(TILE, TILE), grid((C + TILE - 1) / TILE, (R + TILE - 1) / TILE);
  transpose<<<grid, block>>>(din, dout, R, C);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), dout, R * C * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("transpose", out.data(), want.data(), R * C);
  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dout));
  return finish();
}
