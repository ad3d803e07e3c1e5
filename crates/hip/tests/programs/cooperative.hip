// Cooperative launch: every block writes, the whole grid syncs, then every
// block reads values another block wrote (wrong without the grid sync).
// A grid larger than can be resident at once is refused.
#include "common.h"

#include <hip/hip_cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

__global__ void rotate(int* a, int* b, int n, int spin) {
  cg::grid_group grid = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Block 0 is slow to write, so its readers would see stale values.
  int acc = 0;
  if (blockIdx.x == 0)
    for (int k = 0; k < spin; ++k) acc = acc * 1664525 + 1013904223 + k;
  a[i] = 3 * i + 1 + (acc == 1 && i == n + 12345);
  grid.sync();
  // Read from the block "opposite" this one.
  b[i] = a[(i + n / 2) % n];
}

int main() {
  int coop = 0;
  HIP_CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
  EXPECT(coop == 1, "hipDeviceAttributeCooperativeLaunch %d", coop);
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));

  const int bs = 64;
  int per_cu = 0;
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, rotate, bs, 0));
  EXPECT(per_cu >= 1, "blocks per CU %d", per_cu);
  int max_blocks = per_cu * p.multiProcessorCount;
  int blocks = max_blocks < 8 ? max_blocks : 8;
  int n = blocks * bs, spin = 3000;
  int *a, *b;
  HIP_CHECK(hipMalloc(&a, (size_t)(max_blocks + 1) * bs * sizeof(int)));
  HIP_CHECK(hipMalloc(&b, (size_t)(max_blocks + 1) * bs * sizeof(int)));
  HIP_CHECK(hipMemset(a, 0, n * sizeof(int)));
  void* args[] = {&a, &b, &n, &spin};
  HIP_CHECK(hipLaunchCooperativeKernel((const void*)rotate, dim3(blocks), dim3(bs), args, 0, 0));
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> out(n), want(n);
  HIP_CHECK(hipMemcpy(out.data(), b, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = 3 * ((i + n / 2) % n) + 1;
  expect_equal("values read after grid.sync()", out.data(), want.data(), n);

  // One block more than fits at once.
  int big = (max_blocks + 1) * bs;
  void* big_args[] = {&a, &b, &big, &spin};
  HIP_EXPECT_ERR(hipLaunchCooperativeKernel((const void*)rotate, dim3(max_blocks + 1), dim3(bs),
                                            big_args, 0, 0),
                 hipErrorCooperativeLaunchTooLarge);
  (void)hipGetLastError();
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  return finish();
}
