// Sample: a stream-pipelined copy/compute overlap. The input is cut into
// chunks; each chunk's host-to-device copy, kernel and device-to-host copy
// go on one of three streams, so one chunk's copies can overlap another's
// kernel. Events time the whole and check completion.
#include "common.h"

#include <cmath>
#include <vector>

__global__ void work(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = in[i];
    for (int k = 0; k < 8; ++k) v = v * 0.5f + 1.0f;  // exact: v is a small dyadic value
    out[i] = v;
  }
}

int main() {
  const int N = 1 << 18, CHUNKS = 8, S = 3, C = N / CHUNKS;
  float *h_in, *h_out;
  HIP_CHECK(hipHostMalloc((void**)&h_in, N * sizeof(float), hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void**)&h_out, N * sizeof(float), hipHostMallocDefault));
  std::vector<float> want(N);
  for (int i = 0; i < N; ++i) {
    h_in[i] = (float)(i % 1024);
    h_out[i] = -1.0f;
    float v = h_in[i];
    for (int k = 0; k < 8; ++k) v = v * 0.5f + 1.0f;
    want[i] = v;
  }
  float *d_in, *d_out;
  HIP_CHECK(hipMalloc(&d_in, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_out, N * sizeof(float)));
  hipStream_t s[S];
  for (auto& st : s) HIP_CHECK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));

  HIP_CHECK(hipEventRecord(start, s[0]));
  for (int c = 0; c < CHUNKS; ++c) {
    hipStream_t st = s[c % S];
    size_t off = (size_t)c * C;
    HIP_CHECK(hipMemcpyAsync(d_in + off, h_in + off, C * sizeof(float), hipMemcpyHostToDevice, st));
    work<<<C / 256, 256, 0, st>>>(d_in + off, d_out + off, C);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpyAsync(h_out + off, d_out + off, C * sizeof(float), hipMemcpyDeviceToHost, st));
  }
  // stop follows every stream's work.
  for (int k = 1; k < S; ++k) {
    hipEvent_t e;
    HIP_CHECK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
    HIP_CHECK(hipEventRecord(e, s[k]));
    HIP_CHECK(hipStreamWaitEvent(s[0], e, 0));
    HIP_CHECK(hipEventDestroy(e));
  }
  HIP_CHECK(hipEventRecord(stop, s[0]));
  HIP_CHECK(hipEventSynchronize(stop));
  float ms = 0;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  // After stop, every chunk is back.
  expect_equal("pipelined result", h_out, want.data(), N);
  EXPECT(ms >= 0.0f, "elapsed %g ms", ms);
  printf("pipeline: %d chunks on %d streams in %.3f ms\n", CHUNKS, S, ms);

  for (auto& st : s) HIP_CHECK(hipStreamDestroy(st));
  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(stop));
  HIP_CHECK(hipFree(d_in));
  HIP_CHECK(hipFree(d_out));
  HIP_CHECK(hipHostFree(h_in));
  HIP_CHECK(hipHostFree(h_out));
  return finish();
}
