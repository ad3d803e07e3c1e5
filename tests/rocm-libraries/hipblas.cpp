// hipBLAS (the portable BLAS interface, over rocBLAS) on softgpu, each call
// against a host reference in double.
#include "harness.h"
#include <hipblas/hipblas.h>

using namespace suite;

static hipblasHandle_t handle;

template <class T, class F> static void gemm(const char *name, F f, bool ta, bool tb, int m, int n, int k) {
  int lda = ta ? k : m, ldb = tb ? n : k, ldc = m;
  auto a = random(size_t(lda) * (ta ? m : k), 1), b = random(size_t(ldb) * (tb ? k : n), 2),
       c = random(size_t(ldc) * n, 3);
  auto ta_ = cast<T>(a), tb_ = cast<T>(b), tc_ = cast<T>(c);
  for (size_t i = 0; i < a.size(); i++) a[i] = ta_[i];
  for (size_t i = 0; i < b.size(); i++) b[i] = tb_[i];
  for (size_t i = 0; i < c.size(); i++) c[i] = tc_[i];
  T *da = to_device(ta_), *db = to_device(tb_), *dc = to_device(tc_);
  T alpha = 2, beta = 0.5;
  double t0 = now();
  int st = f(handle, ta ? HIPBLAS_OP_T : HIPBLAS_OP_N, tb ? HIPBLAS_OP_T : HIPBLAS_OP_N, m, n, k,
             &alpha, da, lda, db, ldb, &beta, dc, ldc);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto want = gemm_ref(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 2, a, lda, b, ldb, 0.5, c, ldc);
  char label[96];
  std::snprintf(label, sizeof label, "%s %c%c %dx%dx%d", name, ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k);
  report(label, st, rel_err(to_host(dc, c.size()), want), sizeof(T) == 4 ? 2e-5 : 1e-12, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
}

template <class T, class F> static void axpy(const char *name, F f, int n) {
  auto x = random(n, 4), y = random(n, 5);
  auto tx = cast<T>(x), ty = cast<T>(y);
  T *dx = to_device(tx), *dy = to_device(ty);
  T alpha = -3;
  double t0 = now();
  int st = f(handle, n, &alpha, dx, 1, dy, 1);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want(n);
  for (int i = 0; i < n; i++) want[i] = -3 * double(tx[i]) + double(ty[i]);
  report(std::string(name) + " n=" + std::to_string(n), st, rel_err(to_host(dy, n), want),
         sizeof(T) == 4 ? 2e-5 : 1e-12, t);
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

template <class T, class F> static void gemv(const char *name, F f, int m, int n) {
  auto a = random(size_t(m) * n, 6), x = random(n, 7), y = random(m, 8);
  auto ta = cast<T>(a), tx = cast<T>(x), ty = cast<T>(y);
  T *da = to_device(ta), *dx = to_device(tx), *dy = to_device(ty);
  T alpha = 1, beta = 1;
  double t0 = now();
  int st = f(handle, HIPBLAS_OP_N, m, n, &alpha, da, m, dx, 1, &beta, dy, 1);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want(m);
  for (int i = 0; i < m; i++) {
    double s = ty[i];
    for (int j = 0; j < n; j++) s += double(ta[i + size_t(j) * m]) * double(tx[j]);
    want[i] = s;
  }
  report(std::string(name) + " N " + std::to_string(m) + "x" + std::to_string(n), st,
         rel_err(to_host(dy, m), want), sizeof(T) == 4 ? 2e-5 : 1e-12, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

template <class T, class F> static void gemm_strided_batched(const char *name, F f, int m, int n, int k, int batch) {
  long sa = long(m) * k, sb = long(k) * n, sc = long(m) * n;
  auto a = random(sa * batch, 9), b = random(sb * batch, 10), c = random(sc * batch, 11);
  auto ta = cast<T>(a), tb = cast<T>(b), tc = cast<T>(c);
  T *da = to_device(ta), *db = to_device(tb), *dc = to_device(tc);
  T alpha = 1, beta = -1;
  double t0 = now();
  int st = f(handle, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &alpha, da, m, sa, db, k, sb, &beta, dc, m, sc, batch);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want;
  for (int i = 0; i < batch; i++) {
    std::vector<double> ai(ta.begin() + i * sa, ta.begin() + (i + 1) * sa),
        bi(tb.begin() + i * sb, tb.begin() + (i + 1) * sb), ci(tc.begin() + i * sc, tc.begin() + (i + 1) * sc);
    auto r = gemm_ref('N', 'N', m, n, k, 1, ai, m, bi, k, -1, ci, m);
    want.insert(want.end(), r.begin(), r.end());
  }
  char label[96];
  std::snprintf(label, sizeof label, "%s NN %dx%dx%d x%d", name, m, n, k, batch);
  report(label, st, rel_err(to_host(dc, tc.size()), want), sizeof(T) == 4 ? 2e-5 : 1e-12, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
}

int main() {
  if (hipblasCreate(&handle) != HIPBLAS_STATUS_SUCCESS) {
    std::printf("FATAL hipblasCreate failed\n");
    return 100;
  }
  axpy<float>("hipblasSaxpy", hipblasSaxpy, 10000);
  axpy<double>("hipblasDaxpy", hipblasDaxpy, 3333);
  gemv<float>("hipblasSgemv", hipblasSgemv, 200, 100);
  gemv<double>("hipblasDgemv", hipblasDgemv, 77, 150);
  gemm<float>("hipblasSgemm", hipblasSgemm, false, false, 128, 96, 64);
  gemm<float>("hipblasSgemm", hipblasSgemm, true, false, 100, 50, 70);
  gemm<double>("hipblasDgemm", hipblasDgemm, false, true, 64, 64, 64);
  gemm_strided_batched<float>("hipblasSgemmStridedBatched", hipblasSgemmStridedBatched, 32, 32, 32, 4);
  hipblasDestroy(handle);
  return finish("hipBLAS");
}
