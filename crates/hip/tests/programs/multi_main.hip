// The host half of the multi-file program: built with -c, linked with
// multi_kernel.o.
#include "common.h"
#include "multi.h"

#include <vector>

// A kernel in this translation unit too: both fat binaries register.
__global__ void negate(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = -p[i];
}

int main() {
  const int N = 3000;
  std::vector<float> in(N), out(N), want(N);
  for (int i = 0; i < N; ++i) {
    in[i] = (float)(i % 100) - 50.0f;
    want[i] = -(in[i] * in[i] + 0.5f);
  }
  float *din, *dout;
  HIP_CHECK(hipMalloc(&din, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&dout, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(din, in.data(), N * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(launch_square_plus(din, dout, 0.5f, N, 0));
  negate<<<(N + 127) / 128, 128>>>(dout, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), dout, N * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("square_plus then negate", out.data(), want.data(), N);
  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dout));
  return finish();
}
