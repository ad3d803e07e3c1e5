// The HIP layer's host costs and one memory-bound kernel, with the same
// loop compiled for the host as the reference, in one run:
//   target/release/softgpu hipcc -O2 examples/hip/overhead.hip -o overhead
//   ./overhead
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <vector>

#define CHECK(call)                                                          \
  do {                                                                       \
    hipError_t e = (call);                                                   \
    if (e != hipSuccess) {                                                   \
      std::printf("%s failed: %s\n", #call, hipGetErrorString(e));           \
      return 1;                                                              \
    }                                                                        \
  } while (0)

using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

__global__ void empty(int* p) {
  if (threadIdx.x == 1u << 30) p[0] = 1;
}

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// The reference: the same loop on the host, one thread.
__attribute__((noinline)) static void host_saxpy(int n, float a, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

int main() {
  int* d;
  CHECK(hipMalloc(&d, 4));
  const int launches = 2000;
  empty<<<1, 32>>>(d);
  CHECK(hipDeviceSynchronize());
  auto t0 = Clock::now();
  for (int i = 0; i < launches; ++i) empty<<<1, 32>>>(d);
  CHECK(hipDeviceSynchronize());
  auto t1 = Clock::now();
  for (int i = 0; i < launches; ++i) {
    empty<<<1, 32>>>(d);
    CHECK(hipDeviceSynchronize());
  }
  auto t2 = Clock::now();
  std::printf("empty one-wave kernel, %d launches queued then synchronized: %.2f us each\n",
              launches, us(t0, t1) / launches);
  std::printf("empty one-wave kernel, launch + hipDeviceSynchronize each:    %.2f us each\n",
              us(t1, t2) / launches);

  const int n = 1 << 22;
  std::vector<float> hx(n), hy(n), want(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = 0.25f * (i % 1000);
    hy[i] = want[i] = 1.0f - (i % 7);
  }
  float *x, *y;
  CHECK(hipMalloc(&x, n * sizeof(float)));
  CHECK(hipMalloc(&y, n * sizeof(float)));
  t0 = Clock::now();
  CHECK(hipMemcpy(x, hx.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(y, hy.data(), n * sizeof(float), hipMemcpyHostToDevice));
  t1 = Clock::now();
  std::printf("hipMemcpy host to device, 2 x 16 MiB: %.2f GB/s\n",
              2.0 * n * sizeof(float) / us(t0, t1) / 1e3);

  const int reps = 5;
  // One launch first, so the timed ones do not include loading the code.
  saxpy<<<1, 32>>>(0, 2.0f, x, y);
  CHECK(hipDeviceSynchronize());
  t0 = Clock::now();
  for (int r = 0; r < reps; ++r) saxpy<<<n / 256, 256>>>(n, 2.0f, x, y);
  CHECK(hipDeviceSynchronize());
  t1 = Clock::now();
  for (int r = 0; r < reps; ++r) host_saxpy(n, 2.0f, hx.data(), want.data());
  t2 = Clock::now();
  std::printf("saxpy over %d floats: softgpu %.2f ms, host loop %.2f ms (%.1fx)\n", n,
              us(t0, t1) / reps / 1e3, us(t1, t2) / reps / 1e3, us(t0, t1) / us(t1, t2));

  CHECK(hipMemcpy(hy.data(), y, n * sizeof(float), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += hy[i] != want[i];
  std::printf("%s\n", wrong ? "FAIL" : "PASS");
  return wrong != 0;
}
