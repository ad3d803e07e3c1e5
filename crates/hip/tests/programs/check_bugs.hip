// Planted bugs for `softgpu check` (the harness runs it under each tool
// and checks the report field by field): an out-of-bounds kernel, a
// shared-memory race, a read of device memory nothing wrote, and an
// allocation never freed. Each bug is on its own line, named below.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void scale(const float* in, float* out, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i] * k;  // line 10: no bounds check, threads past n overrun
}

__global__ void neighbour_sum(int* out) {
  __shared__ int tile[64];
  tile[threadIdx.x] = threadIdx.x;              // line 15: the write
  int right = tile[(threadIdx.x + 32) % 64];    // line 16: read, no __syncthreads
  out[threadIdx.x] = right;
}

__global__ void copy(const int* in, int* out) {
  out[threadIdx.x] = in[threadIdx.x];  // line 21: in was never written
}

int main() {
  const int n = 1000;
  float *in = nullptr, *out = nullptr;
  int *tile_out = nullptr, *never_written = nullptr, *copied = nullptr, *leaked = nullptr;
  (void)hipMalloc(&in, n * sizeof(float));
  (void)hipMalloc(&out, n * sizeof(float));
  (void)hipMalloc(&tile_out, 64 * sizeof(int));
  (void)hipMalloc(&never_written, 64 * sizeof(int));
  (void)hipMalloc(&copied, 64 * sizeof(int));
  (void)hipMalloc(&leaked, 256);  // line 33: never freed
  (void)hipMemset(in, 0, n * sizeof(float));
  neighbour_sum<<<1, 64>>>(tile_out);
  copy<<<1, 64>>>(never_written, copied);
  printf("race and copy: %s\n", hipGetErrorName(hipDeviceSynchronize()));
  scale<<<4, 256>>>(in, out, 2.0f);  // line 38: the launch
  printf("scale: %s\n", hipGetErrorName(hipDeviceSynchronize()));
  (void)hipFree(in);
  (void)hipFree(out);
  (void)hipFree(tile_out);
  (void)hipFree(never_written);
  (void)hipFree(copied);
  return 0;
}
