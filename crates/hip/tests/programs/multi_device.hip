// Multi-device launches (SOFTGPU_DEVICES=2), as CLR does them: one entry
// of hipLaunchParams per device, each naming its device by its stream.
//
// 1. hipLaunchCooperativeKernelMultiDevice: a grid-synchronising kernel on
//    both devices, each with its own buffers and size; with no flags the
//    call waits for both kernels, so the results are there when it returns.
// 2. hipExtLaunchMultiKernelMultiDevice: a different kernel per device,
//    with both "no sync" flags; the streams are then synchronised by hand.
// 3. What CLR refuses: no devices or more than exist, unknown flags, a NULL
//    list (hipErrorInvalidValue); the null stream
//    (hipErrorInvalidResourceHandle); two entries on one device
//    (hipErrorInvalidDevice); an empty block (hipErrorInvalidConfiguration);
//    a cooperative grid that cannot be resident at once
//    (hipErrorCooperativeLaunchTooLarge). Nothing of a refused launch runs.
//
// Grid-wide sync (this_grid) works on each device; a sync across devices
// (this_multi_grid) is not provided by softgpu.
#include "common.h"

#include <hip/hip_cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

// Every block writes, the grid syncs, then every work-item reads what a
// block on the other side of the grid wrote.
__global__ void rotate(int* a, int* b, int n, int base) {
  cg::grid_group grid = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = base + 3 * i;
  grid.sync();
  b[i] = a[(i + n / 2) % n];
}

__global__ void scale(int* x, int k) { x[blockIdx.x * blockDim.x + threadIdx.x] *= k; }

__global__ void add(int* x, int k) { x[blockIdx.x * blockDim.x + threadIdx.x] += k; }

struct DeviceData {
  hipStream_t stream;
  int *a, *b;
  int n;
};

static hipLaunchParams params(const void* f, int blocks, int threads, void** args,
                              hipStream_t stream) {
  hipLaunchParams p;
  p.func = const_cast<void*>(f);
  p.gridDim = dim3(blocks);
  p.blockDim = dim3(threads);
  p.args = args;
  p.sharedMem = 0;
  p.stream = stream;
  return p;
}

static std::vector<int> read(const int* d, int n) {
  std::vector<int> h(n);
  HIP_CHECK(hipMemcpy(h.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  return h;
}

static void cooperative_on_both(DeviceData* dev, const int* blocks, const int* base) {
  void* args[2][4] = {{&dev[0].a, &dev[0].b, &dev[0].n, (void*)&base[0]},
                      {&dev[1].a, &dev[1].b, &dev[1].n, (void*)&base[1]}};
  hipLaunchParams list[2];
  for (int d = 0; d < 2; ++d) list[d] = params((const void*)rotate, blocks[d], 64, args[d], dev[d].stream);
  HIP_CHECK(hipLaunchCooperativeKernelMultiDevice(list, 2, 0));
  for (int d = 0; d < 2; ++d) {
    int n = dev[d].n;
    std::vector<int> got = read(dev[d].b, n), want(n);
    for (int i = 0; i < n; ++i) want[i] = base[d] + 3 * ((i + n / 2) % n);
    expect_equal(d == 0 ? "device 0 after grid.sync()" : "device 1 after grid.sync()", got.data(),
                 want.data(), n);
  }
}

static void different_kernels(DeviceData* dev) {
  int k0 = 2, k1 = 1000;
  void* args0[] = {&dev[0].b, &k0};
  void* args1[] = {&dev[1].b, &k1};
  std::vector<int> before0 = read(dev[0].b, dev[0].n), before1 = read(dev[1].b, dev[1].n);
  hipLaunchParams list[2] = {params((const void*)scale, dev[0].n / 64, 64, args0, dev[0].stream),
                             params((const void*)add, dev[1].n / 64, 64, args1, dev[1].stream)};
  HIP_CHECK(hipExtLaunchMultiKernelMultiDevice(
      list, 2, hipCooperativeLaunchMultiDeviceNoPreSync | hipCooperativeLaunchMultiDeviceNoPostSync));
  for (int d = 0; d < 2; ++d) {
    HIP_CHECK(hipSetDevice(d));
    HIP_CHECK(hipStreamSynchronize(dev[d].stream));
  }
  HIP_CHECK(hipSetDevice(0));
  std::vector<int> got0 = read(dev[0].b, dev[0].n), got1 = read(dev[1].b, dev[1].n);
  for (int& v : before0) v *= k0;
  for (int& v : before1) v += k1;
  expect_equal("device 0 scaled", got0.data(), before0.data(), dev[0].n);
  expect_equal("device 1 added to", got1.data(), before1.data(), dev[1].n);
}

static void refusals(DeviceData* dev, int too_many_blocks) {
  int k = 7;
  void* args0[] = {&dev[0].b, &k};
  void* args1[] = {&dev[1].b, &k};
  std::vector<int> before = read(dev[0].b, dev[0].n);
  hipLaunchParams list[2] = {params((const void*)scale, 1, 64, args0, dev[0].stream),
                             params((const void*)scale, 1, 64, args1, dev[1].stream)};
  HIP_EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(list, 0, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(list, 3, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(list, 2, 4), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(nullptr, 2, 0), hipErrorInvalidValue);

  hipLaunchParams null_stream[2] = {list[0], list[1]};
  null_stream[1].stream = nullptr;
  HIP_EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(null_stream, 2, 0), hipErrorInvalidResourceHandle);

  hipLaunchParams same_device[2] = {list[0], list[0]};
  HIP_EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(same_device, 2, 0), hipErrorInvalidDevice);

  hipLaunchParams empty_block[2] = {list[0], list[1]};
  empty_block[1].blockDim = dim3(0);
  HIP_EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(empty_block, 2, 0), hipErrorInvalidConfiguration);

  int n = too_many_blocks * 64, base = 0;
  void* rargs0[] = {&dev[0].a, &dev[0].b, &n, &base};
  void* rargs1[] = {&dev[1].a, &dev[1].b, &n, &base};
  hipLaunchParams too_large[2] = {params((const void*)rotate, 1, 64, rargs0, dev[0].stream),
                                  params((const void*)rotate, too_many_blocks, 64, rargs1, dev[1].stream)};
  HIP_EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(too_large, 2, 0), hipErrorCooperativeLaunchTooLarge);
  (void)hipGetLastError();

  // Every refusal came before anything was queued: device 0's first entry
  // never ran.
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> after = read(dev[0].b, dev[0].n);
  expect_equal("device 0 after refused launches", after.data(), before.data(), dev[0].n);
}

int main() {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 2, "%d devices (SOFTGPU_DEVICES=2 expected)", count);
  if (count < 2) return finish();

  int per_cu = 0;
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, rotate, 64, 0));
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  int max_blocks = per_cu * p.multiProcessorCount;

  DeviceData dev[2];
  const int blocks[2] = {max_blocks < 4 ? max_blocks : 4, max_blocks < 6 ? max_blocks : 6};
  const int base[2] = {1, 5000};
  for (int d = 0; d < 2; ++d) {
    HIP_CHECK(hipSetDevice(d));
    HIP_CHECK(hipStreamCreate(&dev[d].stream));
    dev[d].n = blocks[d] * 64;
    size_t bytes = (size_t)(max_blocks + 1) * 64 * sizeof(int);
    HIP_CHECK(hipMalloc(&dev[d].a, bytes));
    HIP_CHECK(hipMalloc(&dev[d].b, bytes));
  }
  HIP_CHECK(hipSetDevice(0));

  cooperative_on_both(dev, blocks, base);
  different_kernels(dev);
  refusals(dev, max_blocks + 1);

  for (int d = 0; d < 2; ++d) {
    HIP_CHECK(hipSetDevice(d));
    HIP_CHECK(hipStreamDestroy(dev[d].stream));
    HIP_CHECK(hipFree(dev[d].a));
    HIP_CHECK(hipFree(dev[d].b));
  }
  return finish();
}
