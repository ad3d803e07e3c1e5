// The device half of the multi-file program: a kernel and the host
// function that launches it (so no -fgpu-rdc is needed).
#include <hip/hip_runtime.h>

#include "multi.h"

__global__ void square_plus(const float* in, float* out, float c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + c;
}

hipError_t launch_square_plus(const float* in, float* out, float c, int n, hipStream_t s) {
  square_plus<<<(n + 255) / 256, 256, 0, s>>>(in, out, c, n);
  return hipGetLastError();
}
