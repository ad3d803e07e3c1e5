// Sample: tiled single-precision matrix multiply C = alpha*A*B + beta*C
// through __shared__ tiles, on sizes that are no multiple of the tile, the
// way a hand-written GEMM in an application looks; checked against a host
// GEMM in double precision (tolerance: K products of values in [-1, 1],
// each rounded once in float, so |error| <= K * 2^-23 * sum|a*b| bounds it).
#include "common.h"

#include <cmath>
#include <vector>

#define TILE 16

__global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B,
                      float beta, float* C) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    int ka = t + threadIdx.x, kb = t + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

int main() {
  const int M = 131, N = 97, K = 75;
  const float alpha = 1.5f, beta = -0.5f;
  std::vector<float> A(M * K), B(K * N), C(M * N), out(M * N);
  unsigned s = 12345;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f; };
  for (auto& v : A) v = rnd();
  for (auto& v : B) v = rnd();
  for (auto& v : C) v = rnd();
  float *dA, *dB, *dC;
  HIP_CHECK(hipMalloc(&dA, A.size() * sizeof(float)));
  HIP_CHECK(hipMalloc(&dB, B.size() * sizeof(float)));
  HIP_CHECK(hipMalloc(&dC, C.size() * sizeof(float)));
  HIP_CHECK(hipMemcpy(dA, A.data(), A.size() * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dB, B.data(), B.size() * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dC, C.data(), C.size() * sizeof(float), hipMemcpyHostToDevice));
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  hipLaunchKernelGGL(sgemm, grid, block, 0, 0, M, N, K, alpha, dA, dB, beta, dC);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), dC, out.size() * sizeof(float), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        acc += (double)A[i * K + k] * B[k * N + j];
        mag += std::fabs((double)A[i * K + k] * B[k * N + j]);
      }
      double want = alpha * acc + beta * C[i * N + j];
      double tol = (K + 2) * std::ldexp(1.0, -23) * (std::fabs(alpha) * mag + std::fabs(beta * C[i * N + j])) + 1e-6;
      if (std::fabs(out[i * N + j] - want) > tol && bad++ < 5)
        printf("FAIL C[%d][%d] = %.7g, expected %.7g\n", i, j, out[i * N + j], want);
    }
  EXPECT(bad == 0, "%d elements wrong", bad);
  HIP_CHECK(hipFree(dA));
  HIP_CHECK(hipFree(dB));
  HIP_CHECK(hipFree(dC));
  return finish();
}
