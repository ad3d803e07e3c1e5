// Sample: vector addition over a size that is no multiple of the block.
#include "common.h"

#include <vector>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int N = 100003;
  std::vector<float> a(N), b(N), c(N), want(N);
  for (int i = 0; i < N; ++i) {
    a[i] = 0.001f * i;
    b[i] = 1.0f - 0.5f * (i % 7);
    want[i] = a[i] + b[i];  // one rounding, the same on both sides
  }
  float *da, *db, *dc;
  HIP_CHECK(hipMalloc(&da, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&db, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&dc, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(da, a.data(), N * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b.data(), N * sizeof(float), hipMemcpyHostToDevice));
  vector_add<<<(N + 255) / 256, 256>>>(da, db, dc, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(c.data(), dc, N * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("c", c.data(), want.data(), N);
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  return finish();
}
