// HIP kernels with blockIdx / threadIdx / blockDim / __shared__ / __syncthreads.

__global__ void hip_vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

// Matrix transpose through a padded shared tile; 2D blocks of TILE x TILE.
#define TILE 16
__global__ void hip_transpose(const float *in, float *out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  if (x < cols && y < rows)
    tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  int tx = blockIdx.y * TILE + threadIdx.x;  // output column = input row
  int ty = blockIdx.x * TILE + threadIdx.y;  // output row = input column
  if (tx < rows && ty < cols)
    out[ty * rows + tx] = tile[threadIdx.x][threadIdx.y];
}

// Block sum with dynamic shared memory (size given at launch), integers.
extern __shared__ unsigned dyn[];
__global__ void hip_block_sum(const unsigned *in, unsigned *out, int n) {
  unsigned t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  dyn[t] = i < n ? in[i] : 0u;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      dyn[t] += dyn[t + s];
    __syncthreads();
  }
  if (t == 0)
    out[blockIdx.x] = dyn[0];
}

// Grid-stride loop using gridDim, and a global atomic.
__global__ void hip_grid_stride(const unsigned *in, unsigned *out, unsigned *total, int n) {
  unsigned sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = in[i] * 2u + 1u;
    sum += in[i];
  }
  atomicAdd(total, sum);
}
