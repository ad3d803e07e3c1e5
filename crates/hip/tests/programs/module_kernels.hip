// Device code for modules.hip, compiled on its own into a code object
// (--cuda-device-only) and loaded at run time with hipModuleLoad*.
#include <hip/hip_runtime.h>

extern "C" __device__ float module_table[16];
__device__ float module_table[16];
extern "C" __device__ int module_calls;
__device__ int module_calls;

extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i == 0) atomicAdd(&module_calls, 1);
}

extern "C" __global__ void lookup(const int* idx, float* out, int n) {
  __shared__ float cache[16];
  if (threadIdx.x < 16) cache[threadIdx.x] = module_table[threadIdx.x];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = cache[idx[i] & 15];
}
