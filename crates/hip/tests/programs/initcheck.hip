// initcheck of device memory (the harness sets SOFTGPU_CHECK=init): a
// kernel that reads hipMalloc'd bytes written by hipMemcpy, hipMemset, a
// device-to-device copy or an earlier kernel runs clean; one that reads an
// element nothing ever wrote fails (hipErrorLaunchFailure, sticky) and a
// report on stderr names the read and the first unwritten byte.
#include "common.h"

#include <vector>

__global__ void copy(const int* in, int* out) {
  out[threadIdx.x] = in[threadIdx.x];
}
__global__ void iota(int* out) { out[threadIdx.x] = threadIdx.x; }

const int N = 256;

// Copies `in` to a fresh buffer with the kernel and checks it against `want`.
static void copy_and_check(const char* what, const int* in, int want_base, int step) {
  int* out = nullptr;
  HIP_CHECK(hipMalloc(&out, N * sizeof(int)));
  copy<<<1, N>>>(in, out);
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> got(N), want(N);
  for (int i = 0; i < N; ++i) want[i] = want_base + step * i;
  HIP_CHECK(hipMemcpy(got.data(), out, N * sizeof(int), hipMemcpyDeviceToHost));
  expect_equal(what, got.data(), want.data(), N);
  HIP_CHECK(hipFree(out));
}

int main() {
  std::vector<int> host(N);
  for (int i = 0; i < N; ++i) host[i] = 1000 + i;
  int *a, *b, *c, *d, *e;
  for (int** p : {&a, &b, &c, &d, &e}) HIP_CHECK(hipMalloc(p, N * sizeof(int)));

  HIP_CHECK(hipMemcpy(a, host.data(), N * sizeof(int), hipMemcpyHostToDevice));
  copy_and_check("after hipMemcpy", a, 1000, 1);
  HIP_CHECK(hipMemset(b, 0, N * sizeof(int)));
  copy_and_check("after hipMemset", b, 0, 0);
  HIP_CHECK(hipMemcpy(c, a, N * sizeof(int), hipMemcpyDeviceToDevice));
  copy_and_check("after a device-to-device copy", c, 1000, 1);
  iota<<<1, N>>>(d);
  copy_and_check("after a kernel wrote it", d, 0, 1);

  // All but the last element written.
  HIP_CHECK(hipMemset(e, 0, (N - 1) * sizeof(int)));
  int* out = nullptr;
  HIP_CHECK(hipMalloc(&out, N * sizeof(int)));
  copy<<<1, N>>>(e, out);
  HIP_EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchFailure);
  HIP_EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchFailure);  // sticky, as a fault
  printf("uninitialized read reported at %p\n", (void*)(e + N - 1));
  HIP_CHECK(hipDeviceReset());
  return finish();
}
