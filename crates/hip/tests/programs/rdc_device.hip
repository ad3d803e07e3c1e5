// Relocatable device code, half 1: device functions and a device variable
// that another translation unit's kernel uses (built with -fgpu-rdc, so
// the device code of both is linked when the program is).
#include <hip/hip_runtime.h>

__device__ int rdc_calls;

__device__ float rdc_polynomial(float x) {
  atomicAdd(&rdc_calls, 1);
  return (2.0f * x - 3.0f) * x + 1.0f;
}
