#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// C[M][N] = A[M][K] * B[K][N], row-major, with 16x16 LDS tiles; sizes need not
// be multiples of the tile (zero padding). The k order is sequential so the
// CPU reference (sequential k loop, no fma) is bit exact.
#define T 16
kernel void sgemm_tiled(global const float *A, global const float *B, global float *C, int M,
                        int N, int K) {
  local float As[T][T];
  local float Bs[T][T + 1];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_group_id(0) * T + tx;
  int row = get_group_id(1) * T + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (col < N && k0 + ty < K) ? B[(k0 + ty) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    int kmax = min(T, K - k0);
    for (int kk = 0; kk < kmax; kk++)
      acc = acc + As[ty][kk] * Bs[kk][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N)
    C[row * N + col] = acc;
}

// Double precision: C = alpha * A * B + beta * C with LDS tiles.
kernel void dgemm_tiled(global const double *A, global const double *B, global double *C, int M,
                        int N, int K, double alpha, double beta) {
  local double As[T][T];
  local double Bs[T][T];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_group_id(0) * T + tx;
  int row = get_group_id(1) * T + ty;
  double acc = 0.0;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0;
    Bs[ty][tx] = (col < N && k0 + ty < K) ? B[(k0 + ty) * N + col] : 0.0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int kmax = min(T, K - k0);
    for (int kk = 0; kk < kmax; kk++)
      acc = acc + As[ty][kk] * Bs[kk][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N)
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
