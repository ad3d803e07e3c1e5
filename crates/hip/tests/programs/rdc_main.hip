// Relocatable device code, half 2: a kernel calling a device function and
// counting through a device variable that are defined in rdc_device.hip.
// Built as `softgpu hipcc -fgpu-rdc -c` per file, then linked with
// `softgpu hipcc -fgpu-rdc`; a build without device linking fails to link.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

extern __device__ int rdc_calls;
__device__ float rdc_polynomial(float x);

__global__ void apply(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = rdc_polynomial(in[i]);
}

#define CHECK(x)                                                        \
  do {                                                                  \
    hipError_t e = (x);                                                 \
    if (e != hipSuccess) {                                              \
      printf("FAIL %s: %s\n", #x, hipGetErrorString(e));                \
      return 1;                                                         \
    }                                                                   \
  } while (0)

int main() {
  const int n = 1000;
  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = 0.01f * i - 3.0f;
  float *din, *dout;
  CHECK(hipMalloc(&din, n * sizeof(float)));
  CHECK(hipMalloc(&dout, n * sizeof(float)));
  CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
  apply<<<(n + 127) / 128, 128>>>(din, dout, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  int calls = 0;
  CHECK(hipMemcpyFromSymbol(&calls, HIP_SYMBOL(rdc_calls), sizeof(int)));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float want = (2.0f * in[i] - 3.0f) * in[i] + 1.0f;
    if (std::fabs(out[i] - want) > 1e-5f * (1.0f + std::fabs(want)) && bad++ < 5)
      printf("FAIL out[%d] = %g, want %g\n", i, out[i], want);
  }
  if (calls != n) {
    printf("FAIL the device function ran %d times, want %d\n", calls, n);
    bad++;
  }
  hipFree(din);
  hipFree(dout);
  if (bad) return 1;
  printf("PASS\n");
  return 0;
}
