// Sample: a CUDA-style source file (.cu, built with `-x hip` as hipified
// code is): 2-D Jacobi relaxation with a halo, ping-ponging two buffers
// for many iterations on a non-blocking stream, with an event-timed loop;
// checked exactly against the same float arithmetic on the host (each
// point is (n + s + e + w) * 0.25f, evaluated in the same order).
#include "common.h"

#include <vector>

__global__ void jacobi(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
    out[y * w + x] = in[y * w + x];  // the boundary holds its value
    return;
  }
  out[y * w + x] = (in[(y - 1) * w + x] + in[(y + 1) * w + x] + in[y * w + x + 1] + in[y * w + x - 1]) * 0.25f;
}

int main() {
  const int w = 70, h = 45, iters = 50;
  std::vector<float> a(w * h, 0.0f), b(w * h);
  for (int x = 0; x < w; ++x) a[x] = 100.0f;            // a hot top edge
  for (int y = 0; y < h; ++y) a[y * w + w - 1] = 50.0f;  // a warm right edge
  float *d0, *d1;
  HIP_CHECK(hipMalloc(&d0, w * h * sizeof(float)));
  HIP_CHECK(hipMalloc(&d1, w * h * sizeof(float)));
  hipStream_t s;
  HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  HIP_CHECK(hipMemcpyAsync(d0, a.data(), w * h * sizeof(float), hipMemcpyHostToDevice, s));
  HIP_CHECK(hipEventRecord(start, s));
  dim3 block(16, 8), grid((w + 15) / 16, (h + 7) / 8);
  for (int i = 0; i < iters; ++i) {
    jacobi<<<grid, block, 0, s>>>(i % 2 ? d1 : d0, i % 2 ? d0 : d1, w, h);
  }
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(stop, s));
  std::vector<float> got(w * h);
  HIP_CHECK(hipMemcpyAsync(got.data(), iters % 2 ? d1 : d0, w * h * sizeof(float), hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  float ms = -1;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0.0f, "elapsed time %g ms", ms);
  for (int i = 0; i < iters; ++i) {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
          b[y * w + x] = a[y * w + x];
          continue;
        }
        b[y * w + x] = (a[(y - 1) * w + x] + a[(y + 1) * w + x] + a[y * w + x + 1] + a[y * w + x - 1]) * 0.25f;
      }
    a.swap(b);
  }
  expect_equal("grid", got.data(), a.data(), a.size());
  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(stop));
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(d0));
  HIP_CHECK(hipFree(d1));
  return finish();
}
