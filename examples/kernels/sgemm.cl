// C = A * B (row-major, A is MxK, B is KxN) with 16x16 tiles staged in LDS.
// Sizes need not be multiples of the tile: out-of-range loads read zero.
#define TILE 16
kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void sgemm(global const float *A, global const float *B, global float *C, int M, int N, int K) {
  local float As[TILE][TILE];
  local float Bs[TILE][TILE + 1]; // +1: no LDS bank conflicts on the column walk
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * TILE + ty;
  int col = get_group_id(0) * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (col < N && k0 + ty < K) ? B[(k0 + ty) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < TILE; k++)
      acc = fma(As[ty][k], Bs[k][tx], acc);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N)
    C[row * N + col] = acc;
}
