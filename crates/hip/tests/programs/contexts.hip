// Contexts (run with SOFTGPU_DEVICES=2), as a driver-API style program
// uses them: primary contexts retained and released, a context created on
// device 1 and pushed and popped around work there, peer access between
// contexts, and the status codes ROCm's CLR gives bad contexts.
#include "common.h"

__global__ void scale(const float* src, float* dst, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = k * src[i];
}

static int current_device() {
  int d = -1;
  HIP_CHECK(hipGetDevice(&d));
  return d;
}

// Scales n values on the current device and checks them on the host.
static void scale_on_current(float k, const char* what) {
  const int n = 4096;
  float host[n], back[n], want[n];
  for (int i = 0; i < n; ++i) {
    host[i] = (float)(i % 97) - 40.0f;
    want[i] = k * host[i];
  }
  float *src = nullptr, *dst = nullptr;
  HIP_CHECK(hipMalloc(&src, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dst, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(src, host, n * sizeof(float), hipMemcpyHostToDevice));
  scale<<<n / 256, 256>>>(src, dst, k, n);
  HIP_CHECK(hipGetLastError());
  // The context's synchronize waits for the kernel.
  HIP_CHECK(hipCtxSynchronize());
  HIP_CHECK(hipMemcpy(back, dst, n * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal(what, back, want, n);
  hipPointerAttribute_t attr;
  HIP_CHECK(hipPointerGetAttributes(&attr, dst));
  EXPECT(attr.device == current_device(), "%s: memory on device %d, current %d", what, attr.device,
         current_device());
  HIP_CHECK(hipFree(src));
  HIP_CHECK(hipFree(dst));
}

int main() {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 2, "hipGetDeviceCount gave %d with SOFTGPU_DEVICES=2", count);
  if (count < 2) return finish();

  // Primary contexts: the current context is device 0's primary one.
  hipCtx_t primary0 = nullptr, primary1 = nullptr, current = nullptr;
  HIP_CHECK(hipDevicePrimaryCtxRetain(&primary0, 0));
  HIP_CHECK(hipDevicePrimaryCtxRetain(&primary1, 1));
  EXPECT(primary0 != nullptr && primary0 != primary1, "primary contexts %p and %p", primary0,
         primary1);
  HIP_CHECK(hipCtxGetCurrent(&current));
  EXPECT(current == primary0, "current context %p, device 0's primary %p", current, primary0);
  unsigned flags = 99;
  int active = -1;
  HIP_CHECK(hipDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT(active == 1 && flags == 0, "device 1 primary: active %d flags %u", active, flags);
  HIP_CHECK(hipDevicePrimaryCtxRelease(1));
  HIP_CHECK(hipDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT(active == 0, "device 1 primary after release: active %d", active);
  // CLR: the primary context's flags are fixed once in use.
  HIP_EXPECT_ERR(hipDevicePrimaryCtxSetFlags(0, hipDeviceScheduleSpin),
                 hipErrorContextAlreadyInUse);
  HIP_EXPECT_ERR(hipDevicePrimaryCtxRetain(&current, 2), hipErrorInvalidDevice);
  HIP_EXPECT_ERR(hipDevicePrimaryCtxRetain(nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipDevicePrimaryCtxGetState(-1, &flags, &active), hipErrorInvalidDevice);
  HIP_EXPECT_ERR(hipDevicePrimaryCtxRelease(7), hipErrorInvalidDevice);
  HIP_EXPECT_ERR(hipDevicePrimaryCtxReset(7), hipErrorInvalidDevice);
  HIP_CHECK(hipDevicePrimaryCtxReset(0));
  (void)hipGetLastError();

  // A context on device 1 becomes current when created; work runs there.
  hipCtx_t ctx1 = nullptr;
  HIP_CHECK(hipCtxCreate(&ctx1, 0, 1));
  EXPECT(current_device() == 1, "after hipCtxCreate on device 1 the device is %d",
         current_device());
  int dev = -1;
  HIP_CHECK(hipCtxGetDevice(&dev));
  EXPECT(dev == 1, "hipCtxGetDevice gave %d", dev);
  scale_on_current(3.0f, "scaled on device 1");

  // Push device 0's context over it, pop back to device 1.
  HIP_CHECK(hipCtxPushCurrent(primary0));
  EXPECT(current_device() == 0, "after pushing device 0's context the device is %d",
         current_device());
  scale_on_current(-2.0f, "scaled on device 0");
  hipCtx_t popped = nullptr;
  HIP_CHECK(hipCtxPopCurrent(&popped));
  EXPECT(popped == primary0, "popped %p, pushed %p", popped, primary0);
  EXPECT(current_device() == 1, "after the pop the device is %d", current_device());
  HIP_CHECK(hipCtxGetCurrent(&current));
  EXPECT(current == ctx1, "current context %p, created %p", current, ctx1);

  // Peer access from device 1's context to device 0's.
  HIP_CHECK(hipCtxEnablePeerAccess(primary0, 0));
  HIP_EXPECT_ERR(hipCtxEnablePeerAccess(primary0, 0), hipErrorPeerAccessAlreadyEnabled);
  HIP_CHECK(hipCtxDisablePeerAccess(primary0));
  HIP_EXPECT_ERR(hipCtxDisablePeerAccess(primary0), hipErrorPeerAccessNotEnabled);

  // Settings a context reports.
  hipSharedMemConfig bank;
  HIP_CHECK(hipCtxGetSharedMemConfig(&bank));
  EXPECT(bank == hipSharedMemBankSizeFourByte, "shared memory config %d", (int)bank);
  hipFuncCache_t cache;
  HIP_CHECK(hipCtxGetCacheConfig(&cache));
  EXPECT(cache == hipFuncCachePreferNone, "cache config %d", (int)cache);
  HIP_CHECK(hipCtxSetCacheConfig(hipFuncCachePreferL1));
  HIP_EXPECT_ERR(hipCtxSetCacheConfig((hipFuncCache_t)42), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipCtxSetSharedMemConfig((hipSharedMemConfig)42), hipErrorInvalidValue);
  int api = 0, runtime = 0;
  HIP_CHECK(hipCtxGetApiVersion(ctx1, &api));
  HIP_CHECK(hipRuntimeGetVersion(&runtime));
  EXPECT(api == runtime, "context API version %d, runtime %d", api, runtime);
  HIP_CHECK(hipCtxGetFlags(&flags));
  EXPECT(flags == 0, "context flags %u", flags);

  // Destroying the current context pops it; the stack is then empty.
  HIP_CHECK(hipCtxDestroy(ctx1));
  HIP_EXPECT_ERR(hipCtxPopCurrent(&popped), hipErrorInvalidContext);

  // hipCtxSetCurrent replaces the top of the stack.
  HIP_CHECK(hipCtxSetCurrent(primary1));
  EXPECT(current_device() == 1, "after hipCtxSetCurrent the device is %d", current_device());
  HIP_CHECK(hipCtxSetCurrent(primary0));
  EXPECT(current_device() == 0, "after hipCtxSetCurrent the device is %d", current_device());
  HIP_CHECK(hipCtxPopCurrent(nullptr));
  HIP_CHECK(hipCtxSetCurrent(nullptr));

  // Bad contexts, with CLR's codes: a forged handle is never dereferenced.
  hipCtx_t forged = (hipCtx_t)(uintptr_t)0x12345678;
  HIP_EXPECT_ERR(hipCtxPushCurrent(nullptr), hipErrorInvalidContext);
  HIP_EXPECT_ERR(hipCtxPushCurrent(forged), hipErrorInvalidContext);
  HIP_EXPECT_ERR(hipCtxSetCurrent(forged), hipErrorInvalidContext);
  HIP_EXPECT_ERR(hipCtxDestroy(nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipCtxDestroy(forged), hipErrorInvalidContext);
  HIP_EXPECT_ERR(hipCtxEnablePeerAccess(forged, 0), hipErrorInvalidContext);
  HIP_EXPECT_ERR(hipCtxCreate(&current, 0, 2), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipCtxCreate(nullptr, 0, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipCtxGetDevice(nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipCtxGetCurrent(nullptr), hipErrorInvalidValue);
  (void)hipGetLastError();
  EXPECT(current_device() == 0, "bad calls changed the device to %d", current_device());

  HIP_CHECK(hipDevicePrimaryCtxRelease(0));
  return finish();
}
