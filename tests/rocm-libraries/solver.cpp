// rocSOLVER's LAPACK routines on softgpu, each result checked by what it
// must satisfy, in double on the host: getrf+getrs solve A x = b, potrf's
// factor gives L L^T = A, geqrf's R gives R^T R = A^T A (Q is orthogonal).
#include "harness.h"
#include <rocsolver/rocsolver.h>

using namespace suite;

static rocblas_handle handle;

template <class T> static double tol_of() { return sizeof(T) == 4 ? 2e-4 : 1e-11; }

// A diagonally dominant n x n matrix (well conditioned), column-major.
template <class T> static std::vector<T> dominant(int n, int lda, unsigned seed, bool symmetric) {
  auto r = random(size_t(lda) * n, seed);
  std::vector<T> a(size_t(lda) * n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double v = symmetric ? r[std::min(i, j) + size_t(std::max(i, j)) * lda] : r[i + size_t(j) * lda];
      a[i + size_t(j) * lda] = T(i == j ? n + v : v);
    }
  return a;
}

template <class T, class Getrf, class Getrs>
static void getrf_getrs(const char *name, Getrf getrf, Getrs getrs, int n, int nrhs) {
  int lda = n + 1, ldb = n;
  auto a = dominant<T>(n, lda, 1, false);
  auto b = cast<T>(random(size_t(ldb) * nrhs, 2));
  T *da = to_device(a), *db = to_device(b);
  rocblas_int *ipiv, *info;
  HIP_OK(hipMalloc(&ipiv, n * sizeof(rocblas_int)));
  HIP_OK(hipMalloc(&info, sizeof(rocblas_int)));
  double t0 = now();
  int st = getrf(handle, n, n, da, lda, ipiv, info);
  if (st == 0) st = getrs(handle, rocblas_operation_none, n, nrhs, da, lda, ipiv, db, ldb);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto x = to_host(db, b.size());
  int h_info = to_host(info, 1)[0];
  std::vector<double> ax(b.size(), 0.0), want(b.begin(), b.end());
  for (int c = 0; c < nrhs; c++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        ax[i + size_t(c) * ldb] += double(a[i + size_t(j) * lda]) * double(x[j + size_t(c) * ldb]);
  char label[96];
  std::snprintf(label, sizeof label, "%s+getrs n=%d nrhs=%d", name, n, nrhs);
  report(label, st ? st : h_info, rel_err(ax, want), tol_of<T>(), t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(ipiv));
  HIP_OK(hipFree(info));
}

template <class T, class Potrf> static void potrf(const char *name, Potrf f, int n) {
  int lda = n + 2;
  auto a = dominant<T>(n, lda, 3, true);
  T *da = to_device(a);
  rocblas_int *info;
  HIP_OK(hipMalloc(&info, sizeof(rocblas_int)));
  double t0 = now();
  int st = f(handle, rocblas_fill_lower, n, da, lda, info);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto l = to_host(da, a.size());
  int h_info = to_host(info, 1)[0];
  std::vector<double> llt, want;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      double s = 0;
      for (int p = 0; p <= j; p++) s += double(l[i + size_t(p) * lda]) * double(l[j + size_t(p) * lda]);
      llt.push_back(s);
      want.push_back(double(a[i + size_t(j) * lda]));
    }
  report(std::string(name) + " lower n=" + std::to_string(n), st ? st : h_info, rel_err(llt, want),
         tol_of<T>(), t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(info));
}

template <class T, class Geqrf> static void geqrf(const char *name, Geqrf f, int m, int n) {
  int lda = m;
  auto a = cast<T>(random(size_t(lda) * n, 4));
  T *da = to_device(a), *tau;
  HIP_OK(hipMalloc(&tau, n * sizeof(T)));
  double t0 = now();
  int st = f(handle, m, n, da, lda, tau);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto qr = to_host(da, a.size());
  // R^T R against A^T A (upper triangles).
  std::vector<double> rtr, ata;
  for (int j = 0; j < n; j++)
    for (int i = 0; i <= j; i++) {
      double s = 0, w = 0;
      for (int p = 0; p <= i; p++) s += double(qr[p + size_t(i) * lda]) * double(qr[p + size_t(j) * lda]);
      for (int p = 0; p < m; p++) w += double(a[p + size_t(i) * lda]) * double(a[p + size_t(j) * lda]);
      rtr.push_back(s);
      ata.push_back(w);
    }
  char label[96];
  std::snprintf(label, sizeof label, "%s %dx%d", name, m, n);
  report(label, st, rel_err(rtr, ata), tol_of<T>() * 10, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(tau));
}

int main() {
  if (rocblas_create_handle(&handle) != rocblas_status_success) {
    std::printf("FATAL rocblas_create_handle failed\n");
    return 100;
  }
  getrf_getrs<float>("rocsolver_sgetrf", rocsolver_sgetrf, rocsolver_sgetrs, 64, 3);
  getrf_getrs<double>("rocsolver_dgetrf", rocsolver_dgetrf, rocsolver_dgetrs, 100, 2);
  getrf_getrs<float>("rocsolver_sgetrf", rocsolver_sgetrf, rocsolver_sgetrs, 300, 1);
  potrf<float>("rocsolver_spotrf", rocsolver_spotrf, 80);
  potrf<double>("rocsolver_dpotrf", rocsolver_dpotrf, 130);
  geqrf<float>("rocsolver_sgeqrf", rocsolver_sgeqrf, 70, 40);
  geqrf<double>("rocsolver_dgeqrf", rocsolver_dgeqrf, 50, 50);
  rocblas_destroy_handle(handle);
  return finish("rocSOLVER");
}
