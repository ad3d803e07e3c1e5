// Sample: n-body accelerations in float, each block staging the bodies
// through __shared__ memory, checked against a double-precision host sum.
//
// Tolerance: every pair term m_j d / (r^2 + eps^2)^1.5 is computed with a
// few float roundings (relative error <= ~8 ulp, fma contraction
// included), and the N-term sum adds at most one rounding of the partial
// sum per term, each <= FLT_EPSILON times the sum of |terms|. So
// |device - exact| <= (N + 8) * FLT_EPSILON * sum_j |term_j|, per
// component; the test allows that bound.
#include "common.h"

#include <cfloat>
#include <cmath>
#include <vector>

#define BLOCK 128
#define SOFTENING 0.01f

__global__ void accelerations(const float4* body, float3* acc, int n) {
  __shared__ float4 tile[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 me = body[i < n ? i : 0];
  float3 a = make_float3(0.0f, 0.0f, 0.0f);
  for (int base = 0; base < n; base += BLOCK) {
    int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? body[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
    for (int k = 0; k < BLOCK && base + k < n; ++k) {
      float4 o = tile[k];
      float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      float r2 = dx * dx + dy * dy + dz * dz + SOFTENING * SOFTENING;
      float inv = 1.0f / sqrtf(r2);
      float s = o.w * inv * inv * inv;
      a.x += s * dx;
      a.y += s * dy;
      a.z += s * dz;
    }
    __syncthreads();
  }
  if (i < n) acc[i] = a;
}

int main() {
  const int N = 500;
  std::vector<float4> body(N);
  unsigned x = 7;
  auto rnd = [&]() {
    x = x * 1664525u + 1013904223u;
    return (float)(x >> 8) / (float)(1 << 24) * 2.0f - 1.0f;
  };
  for (int i = 0; i < N; ++i) body[i] = make_float4(rnd(), rnd(), rnd(), 0.5f + 0.5f * fabsf(rnd()));
  float4* dbody;
  float3* dacc;
  HIP_CHECK(hipMalloc(&dbody, N * sizeof(float4)));
  HIP_CHECK(hipMalloc(&dacc, N * sizeof(float3)));
  HIP_CHECK(hipMemcpy(dbody, body.data(), N * sizeof(float4), hipMemcpyHostToDevice));
  accelerations<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(dbody, dacc, N);
  HIP_CHECK(hipGetLastError());
  std::vector<float3> acc(N);
  HIP_CHECK(hipMemcpy(acc.data(), dacc, N * sizeof(float3), hipMemcpyDeviceToHost));

  int bad = 0;
  double worst = 0.0;
  for (int i = 0; i < N; ++i) {
    double sum[3] = {0, 0, 0}, abs_sum[3] = {0, 0, 0};
    for (int j = 0; j < N; ++j) {
      double d[3] = {(double)body[j].x - body[i].x, (double)body[j].y - body[i].y,
                     (double)body[j].z - body[i].z};
      double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + (double)SOFTENING * SOFTENING;
      double s = body[j].w / (r2 * sqrt(r2));
      for (int c = 0; c < 3; ++c) {
        sum[c] += s * d[c];
        abs_sum[c] += fabs(s * d[c]);
      }
    }
    float got[3] = {acc[i].x, acc[i].y, acc[i].z};
    for (int c = 0; c < 3; ++c) {
      double tol = (N + 8) * (double)FLT_EPSILON * abs_sum[c];
      double err = fabs(got[c] - sum[c]);
      if (err / tol > worst) worst = err / tol;
      if (!(err <= tol)) {
        if (bad < 5)
          printf("FAIL body %d component %d: got %.9g, expected %.9g (error %.3g > tolerance %.3g)\n",
                 i, c, got[c], sum[c], err, tol);
        bad++;
      }
    }
  }
  EXPECT(bad == 0, "%d of %d components outside the tolerance", bad, 3 * N);
  printf("worst error: %.3f of the tolerance\n", worst);
  HIP_CHECK(hipFree(dbody));
  HIP_CHECK(hipFree(dacc));
  return finish();
}
