// rocBLAS levels 1-3 on softgpu, each call against a host reference in
// double. Matrices are column-major with leading dimensions larger than
// their rows where the API allows, so padding is exercised too.
#include "harness.h"
#include <complex>
#include <cstring>
#include <rocblas/rocblas.h>

using namespace suite;
using cd = std::complex<double>;

static rocblas_handle handle;

// ---- element types: conversions to and from double (or complex double)

static double to_d(float x) { return x; }
static double to_d(double x) { return x; }
static double to_d(rocblas_half h) {
  _Float16 f;
  std::memcpy(&f, &h, 2);
  return double(f);
}
static double to_d(rocblas_bfloat16 b) {
  uint32_t u = uint32_t(b.data) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// A host compiler sees rocBLAS's complex types as C structs {x, y}.
static cd to_c(rocblas_float_complex z) { return {z.x, z.y}; }
static cd to_c(rocblas_double_complex z) { return {z.x, z.y}; }
template <class Z> static Z make_c(double re, double im) {
  Z z;
  z.x = re;
  z.y = im;
  return z;
}

template <class T> T from_d(double x);
template <> float from_d(double x) { return float(x); }
template <> double from_d(double x) { return x; }
template <> rocblas_half from_d(double x) {
  _Float16 f = _Float16(x);
  rocblas_half h;
  std::memcpy(&h, &f, 2);
  return h;
}
template <> rocblas_bfloat16 from_d(double x) {
  // Round to nearest even, as rocBLAS's own conversion does.
  float f = float(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  rocblas_bfloat16 b;
  b.data = uint16_t(u >> 16);
  return b;
}

// Real values of type T (rounded) and the doubles they hold.
template <class T> struct Real {
  std::vector<T> v;
  std::vector<double> d;
  Real(size_t n, unsigned seed) : v(n), d(random(n, seed)) {
    for (size_t i = 0; i < n; i++) {
      v[i] = from_d<T>(d[i]);
      d[i] = to_d(v[i]);
    }
  }
};

template <class T> double err_of(const std::vector<T> &got, const std::vector<double> &want) {
  double scale = 1, worst = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); i++) worst = std::max(worst, std::fabs(to_d(got[i]) - want[i]));
  return worst / scale;
}

static rocblas_operation op(char t) {
  return t == 'N' ? rocblas_operation_none
                  : t == 'T' ? rocblas_operation_transpose : rocblas_operation_conjugate_transpose;
}

static double tol_of(float) { return 2e-5; }
static double tol_of(double) { return 1e-12; }
static double tol_of(rocblas_half) { return 5e-3; }
static double tol_of(rocblas_bfloat16) { return 3e-2; }

// ---- level 1

template <class T, class F> static void axpy(const char *name, F f, int n) {
  Real<T> x(n, 11), y(n, 12);
  T *dx = to_device(x.v), *dy = to_device(y.v);
  T alpha = from_d<T>(0.75);
  double t0 = now();
  int st = f(handle, n, &alpha, dx, 1, dy, 1);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want(n);
  for (int i = 0; i < n; i++) want[i] = 0.75 * x.d[i] + y.d[i];
  report(std::string(name) + " n=" + std::to_string(n), st, err_of(to_host(dy, n), want),
         tol_of(T()), t);
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

template <class T, class F> static void dot(const char *name, F f, int n) {
  Real<T> x(n, 13), y(n, 14);
  T *dx = to_device(x.v), *dy = to_device(y.v);
  T result;
  double t0 = now();
  int st = f(handle, n, dx, 1, dy, 1, &result);
  double t = now() - t0;
  double want = 0;
  for (int i = 0; i < n; i++) want += x.d[i] * y.d[i];
  report(std::string(name) + " n=" + std::to_string(n), st,
         std::fabs(to_d(result) - want) / std::max(1.0, std::fabs(want)), tol_of(T()), t);
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

template <class T, class F> static void scal(const char *name, F f, int n) {
  Real<T> x(n, 15);
  T *dx = to_device(x.v);
  T alpha = from_d<T>(-1.25);
  double t0 = now();
  int st = f(handle, n / 2, &alpha, dx, 2);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want = x.d;
  for (int i = 0; i < n; i += 2) want[i] *= -1.25;
  report(std::string(name) + " n=" + std::to_string(n / 2) + " incx=2", st,
         err_of(to_host(dx, n), want), tol_of(T()), t);
  HIP_OK(hipFree(dx));
}

// A reduction of x to one value (nrm2, asum): `reference` gives it in
// double from x's values.
template <class T, class F, class R>
static void reduction(const char *name, F f, int n, R reference) {
  Real<T> x(n, 16);
  T *dx = to_device(x.v);
  T result;
  double t0 = now();
  int st = f(handle, n, dx, 1, &result);
  double t = now() - t0;
  double want = reference(x.d);
  report(std::string(name) + " n=" + std::to_string(n), st, std::fabs(to_d(result) - want) / want,
         tol_of(T()), t);
  HIP_OK(hipFree(dx));
}

static double norm2(const std::vector<double> &x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

static double abs_sum(const std::vector<double> &x) {
  double s = 0;
  for (double v : x) s += std::fabs(v);
  return s;
}

template <class T, class F> static void iamax(const char *name, F f, int n) {
  Real<T> x(n, 18);
  x.v[n / 3] = from_d<T>(-7.0);  // one clear maximum of |x|
  x.d[n / 3] = -7.0;
  T *dx = to_device(x.v);
  rocblas_int result = -1;
  double t0 = now();
  int st = f(handle, n, dx, 1, &result);
  double t = now() - t0;
  // 1-based, as BLAS counts.
  report(std::string(name) + " n=" + std::to_string(n), st, result == n / 3 + 1 ? 0 : 1, 0, t);
  HIP_OK(hipFree(dx));
}

template <class T, class F> static void rot(const char *name, F f, int n) {
  Real<T> x(n, 19), y(n, 20);
  T *dx = to_device(x.v), *dy = to_device(y.v);
  T c = from_d<T>(0.6), s = from_d<T>(0.8);
  double t0 = now();
  int st = f(handle, n, dx, 1, dy, 1, &c, &s);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> wx(n), wy(n);
  for (int i = 0; i < n; i++) {
    wx[i] = 0.6 * x.d[i] + 0.8 * y.d[i];
    wy[i] = 0.6 * y.d[i] - 0.8 * x.d[i];
  }
  double e = std::max(err_of(to_host(dx, n), wx), err_of(to_host(dy, n), wy));
  report(std::string(name) + " n=" + std::to_string(n), st, e, tol_of(T()), t);
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

// ---- level 2

template <class T, class F> static void gemv(const char *name, F f, char ta, int m, int n) {
  int lda = m + 3;
  Real<T> a(size_t(lda) * n, 21), x(ta == 'N' ? n : m, 22), y(ta == 'N' ? m : n, 23);
  T *da = to_device(a.v), *dx = to_device(x.v), *dy = to_device(y.v);
  T alpha = from_d<T>(2.0), beta = from_d<T>(-1.0);
  double t0 = now();
  int st = f(handle, op(ta), m, n, &alpha, da, lda, dx, 1, &beta, dy, 1);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  int rows = ta == 'N' ? m : n, cols = ta == 'N' ? n : m;
  std::vector<double> want(rows);
  for (int i = 0; i < rows; i++) {
    double s = 0;
    for (int j = 0; j < cols; j++) s += at(a.d, lda, ta, i, j) * x.d[j];
    want[i] = 2.0 * s - y.d[i];
  }
  char label[96];
  std::snprintf(label, sizeof label, "%s %c %dx%d", name, ta, m, n);
  report(label, st, err_of(to_host(dy, rows), want), tol_of(T()), t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

template <class T, class F> static void ger(const char *name, F f, int m, int n) {
  int lda = m + 1;
  Real<T> a(size_t(lda) * n, 24), x(m, 25), y(n, 26);
  T *da = to_device(a.v), *dx = to_device(x.v), *dy = to_device(y.v);
  T alpha = from_d<T>(0.5);
  double t0 = now();
  int st = f(handle, m, n, &alpha, dx, 1, dy, 1, da, lda);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want = a.d;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) want[i + size_t(j) * lda] += 0.5 * x.d[i] * y.d[j];
  char label[96];
  std::snprintf(label, sizeof label, "%s %dx%d", name, m, n);
  report(label, st, err_of(to_host(da, a.v.size()), want), tol_of(T()), t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

// A well-conditioned triangular matrix: small off-diagonal, diagonal near 2.
template <class T> static Real<T> triangular(int n, int lda, bool lower, unsigned seed) {
  Real<T> a(size_t(lda) * n, seed);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double v = (lower ? i > j : i < j) ? a.d[i + size_t(j) * lda] / n : i == j ? 2.0 + a.d[i + size_t(j) * lda] / 4 : 0.0;
      a.v[i + size_t(j) * lda] = from_d<T>(v);
      a.d[i + size_t(j) * lda] = to_d(a.v[i + size_t(j) * lda]);
    }
  return a;
}

template <class T, class F> static void trsv(const char *name, F f, int n) {
  int lda = n + 2;
  auto a = triangular<T>(n, lda, true, 27);
  Real<T> b(n, 28);
  T *da = to_device(a.v), *dx = to_device(b.v);
  double t0 = now();
  int st = f(handle, rocblas_fill_lower, rocblas_operation_none, rocblas_diagonal_non_unit, n, da,
             lda, dx, 1);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  // Check by multiplying back: A x must give b.
  auto x = to_host(dx, n);
  std::vector<double> ax(n, 0.0);
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) ax[i] += a.d[i + size_t(j) * lda] * to_d(x[j]);
  report(std::string(name) + " lower n=" + std::to_string(n), st, err_of(ax, b.d), tol_of(T()) * 10, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(dx));
}

template <class T, class F> static void symv(const char *name, F f, int n) {
  int lda = n;
  Real<T> a(size_t(lda) * n, 29), x(n, 30), y(n, 31);
  T *da = to_device(a.v), *dx = to_device(x.v), *dy = to_device(y.v);
  T alpha = from_d<T>(1.0), beta = from_d<T>(0.5);
  double t0 = now();
  int st = f(handle, rocblas_fill_upper, n, &alpha, da, lda, dx, 1, &beta, dy, 1);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want(n);
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += (i <= j ? a.d[i + size_t(j) * lda] : a.d[j + size_t(i) * lda]) * x.d[j];
    want[i] = s + 0.5 * y.d[i];
  }
  report(std::string(name) + " upper n=" + std::to_string(n), st, err_of(to_host(dy, n), want), tol_of(T()), t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
}

// ---- level 3

template <class T, class F>
static void gemm(const char *name, F f, char ta, char tb, int m, int n, int k) {
  int lda = (ta == 'N' ? m : k) + 1, ldb = (tb == 'N' ? k : n) + 2, ldc = m + 3;
  Real<T> a(size_t(lda) * (ta == 'N' ? k : m), 1), b(size_t(ldb) * (tb == 'N' ? n : k), 2),
      c(size_t(ldc) * n, 3);
  T *da = to_device(a.v), *db = to_device(b.v), *dc = to_device(c.v);
  T alpha = from_d<T>(1.5), beta = from_d<T>(-0.5);
  double t0 = now();
  int st = f(handle, op(ta), op(tb), m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto want = gemm_ref(ta, tb, m, n, k, 1.5, a.d, lda, b.d, ldb, -0.5, c.d, ldc);
  char label[96];
  std::snprintf(label, sizeof label, "%s %c%c %dx%dx%d", name, ta, tb, m, n, k);
  // Half precision accumulates in its own type in hgemm: allow for k terms.
  double tol = tol_of(T()) * (sizeof(T) == 2 ? std::sqrt(double(k)) : 1);
  report(label, st, err_of(to_host(dc, c.v.size()), want), tol, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
}

template <class T, class F>
static void gemm_strided_batched(const char *name, F f, char ta, char tb, int m, int n, int k,
                                 int batch) {
  int lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n, ldc = m;
  size_t sa = size_t(lda) * (ta == 'N' ? k : m) + 5, sb = size_t(ldb) * (tb == 'N' ? n : k) + 7,
         sc = size_t(ldc) * n + 1;
  Real<T> a(sa * batch, 4), b(sb * batch, 5), c(sc * batch, 6);
  T *da = to_device(a.v), *db = to_device(b.v), *dc = to_device(c.v);
  T alpha = from_d<T>(1.0), beta = from_d<T>(2.0);
  double t0 = now();
  int st = f(handle, op(ta), op(tb), m, n, k, &alpha, da, lda, sa, db, ldb, sb, &beta, dc, ldc, sc,
             batch);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want = c.d;
  for (int i = 0; i < batch; i++) {
    std::vector<double> ai(a.d.begin() + i * sa, a.d.begin() + (i + 1) * sa),
        bi(b.d.begin() + i * sb, b.d.begin() + (i + 1) * sb),
        ci(c.d.begin() + i * sc, c.d.begin() + (i + 1) * sc);
    auto r = gemm_ref(ta, tb, m, n, k, 1.0, ai, lda, bi, ldb, 2.0, ci, ldc);
    std::copy(r.begin(), r.end(), want.begin() + i * sc);
  }
  char label[96];
  std::snprintf(label, sizeof label, "%s %c%c %dx%dx%d x%d", name, ta, tb, m, n, k, batch);
  report(label, st, err_of(to_host(dc, c.v.size()), want), tol_of(T()), t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
}

template <class T, class F>
static void gemm_batched(const char *name, F f, int m, int n, int k, int batch) {
  std::vector<Real<T>> as, bs, cs;
  std::vector<T *> pa, pb, pc;
  for (int i = 0; i < batch; i++) {
    as.emplace_back(size_t(m) * k, 40 + i);
    bs.emplace_back(size_t(k) * n, 50 + i);
    cs.emplace_back(size_t(m) * n, 60 + i);
    pa.push_back(to_device(as[i].v));
    pb.push_back(to_device(bs[i].v));
    pc.push_back(to_device(cs[i].v));
  }
  T **dpa = to_device(pa), **dpb = to_device(pb), **dpc = to_device(pc);
  T alpha = from_d<T>(1.0), beta = from_d<T>(1.0);
  double t0 = now();
  int st = f(handle, rocblas_operation_none, rocblas_operation_none, m, n, k, &alpha, dpa, m, dpb, k,
             &beta, dpc, m, batch);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  double e = 0;
  for (int i = 0; i < batch; i++) {
    auto want = gemm_ref('N', 'N', m, n, k, 1.0, as[i].d, m, bs[i].d, k, 1.0, cs[i].d, m);
    e = std::max(e, err_of(to_host(pc[i], cs[i].v.size()), want));
    HIP_OK(hipFree(pa[i]));
    HIP_OK(hipFree(pb[i]));
    HIP_OK(hipFree(pc[i]));
  }
  char label[96];
  std::snprintf(label, sizeof label, "%s NN %dx%dx%d x%d", name, m, n, k, batch);
  report(label, st, e, tol_of(T()), t);
  HIP_OK(hipFree(dpa));
  HIP_OK(hipFree(dpb));
  HIP_OK(hipFree(dpc));
}

template <class T, class F> static void trsm(const char *name, F f, int m, int n) {
  int lda = m + 1, ldb = m + 2;
  auto a = triangular<T>(m, lda, false, 32);
  Real<T> b(size_t(ldb) * n, 33);
  T *da = to_device(a.v), *db = to_device(b.v);
  T alpha = from_d<T>(1.0);
  double t0 = now();
  int st = f(handle, rocblas_side_left, rocblas_fill_upper, rocblas_operation_none,
             rocblas_diagonal_non_unit, m, n, &alpha, da, lda, db, ldb);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto x = to_host(db, b.v.size());
  // A X must give B (rows of the padding are left as they were).
  std::vector<double> ax = b.d;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = i; p < m; p++) s += a.d[i + size_t(p) * lda] * to_d(x[p + size_t(j) * ldb]);
      ax[i + size_t(j) * ldb] = s;
    }
  char label[96];
  std::snprintf(label, sizeof label, "%s left upper %dx%d", name, m, n);
  report(label, st, err_of(ax, b.d), tol_of(T()) * 10, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
}

template <class T, class F> static void syrk(const char *name, F f, int n, int k) {
  int lda = n, ldc = n + 1;
  Real<T> a(size_t(lda) * k, 34), c(size_t(ldc) * n, 35);
  T *da = to_device(a.v), *dc = to_device(c.v);
  T alpha = from_d<T>(1.0), beta = from_d<T>(0.25);
  double t0 = now();
  int st = f(handle, rocblas_fill_lower, rocblas_operation_none, n, k, &alpha, da, lda, &beta, dc, ldc);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  std::vector<double> want = c.d;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) s += a.d[i + size_t(p) * lda] * a.d[j + size_t(p) * lda];
      want[i + size_t(j) * ldc] = s + 0.25 * c.d[i + size_t(j) * ldc];
    }
  char label[96];
  std::snprintf(label, sizeof label, "%s lower %dx%d", name, n, k);
  report(label, st, err_of(to_host(dc, c.v.size()), want), tol_of(T()), t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(dc));
}

// Complex GEMM: C = alpha op(A) op(B) + beta C.
template <class Z, class F> static void zgemm(const char *name, F f, char ta, char tb, int m, int n, int k, double tol) {
  int lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n, ldc = m;
  size_t na = size_t(lda) * (ta == 'N' ? k : m), nb = size_t(ldb) * (tb == 'N' ? n : k), nc = size_t(ldc) * n;
  auto ra = random(2 * na, 7), rb = random(2 * nb, 8), rc = random(2 * nc, 9);
  std::vector<Z> a(na), b(nb), c(nc);
  std::vector<cd> ad(na), bd(nb), cdv(nc);
  for (size_t i = 0; i < na; i++) { a[i] = make_c<Z>(ra[2 * i], ra[2 * i + 1]); ad[i] = to_c(a[i]); }
  for (size_t i = 0; i < nb; i++) { b[i] = make_c<Z>(rb[2 * i], rb[2 * i + 1]); bd[i] = to_c(b[i]); }
  for (size_t i = 0; i < nc; i++) { c[i] = make_c<Z>(rc[2 * i], rc[2 * i + 1]); cdv[i] = to_c(c[i]); }
  Z *da = to_device(a), *db = to_device(b), *dc = to_device(c);
  Z alpha = make_c<Z>(1.0, 0.5), beta = make_c<Z>(0.0, -1.0);
  double t0 = now();
  int st = f(handle, op(ta), op(tb), m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto elem = [](const std::vector<cd> &x, int ld, char tr, int i, int j) {
    cd v = tr == 'N' ? x[i + size_t(j) * ld] : x[j + size_t(i) * ld];
    return tr == 'C' ? std::conj(v) : v;
  };
  auto got = to_host(dc, nc);
  double scale = 1, worst = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      cd s = 0;
      for (int p = 0; p < k; p++) s += elem(ad, lda, ta, i, p) * elem(bd, ldb, tb, p, j);
      cd want = cd(1.0, 0.5) * s + cd(0.0, -1.0) * cdv[i + size_t(j) * ldc];
      scale = std::max(scale, std::abs(want));
      worst = std::max(worst, std::abs(to_c(got[i + size_t(j) * ldc]) - want));
    }
  char label[96];
  std::snprintf(label, sizeof label, "%s %c%c %dx%dx%d", name, ta, tb, m, n, k);
  report(label, st, worst / scale, tol, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
}

// gemm_ex with inputs of type In, output and compute in float.
template <class In>
static void gemm_ex(const char *name, rocblas_datatype in_type, char ta, char tb, int m, int n, int k) {
  int lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n, ldc = m;
  Real<In> a(size_t(lda) * (ta == 'N' ? k : m), 36), b(size_t(ldb) * (tb == 'N' ? n : k), 37);
  Real<float> c(size_t(ldc) * n, 38);
  In *da = to_device(a.v), *db = to_device(b.v);
  float *dc = to_device(c.v), *dd = to_device(c.v);
  float alpha = 1.0f, beta = 1.0f;
  double t0 = now();
  int st = rocblas_gemm_ex(handle, op(ta), op(tb), m, n, k, &alpha, da, in_type, lda, db, in_type,
                           ldb, &beta, dc, rocblas_datatype_f32_r, ldc, dd, rocblas_datatype_f32_r,
                           ldc, rocblas_datatype_f32_r, rocblas_gemm_algo_standard, 0, 0);
  HIP_OK(hipDeviceSynchronize());
  double t = now() - t0;
  auto want = gemm_ref(ta, tb, m, n, k, 1.0, a.d, lda, b.d, ldb, 1.0, c.d, ldc);
  char label[96];
  std::snprintf(label, sizeof label, "%s %c%c %dx%dx%d", name, ta, tb, m, n, k);
  report(label, st, err_of(to_host(dd, c.v.size()), want), 2e-5, t);
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
  HIP_OK(hipFree(dd));
}

int main() {
  if (rocblas_create_handle(&handle) != rocblas_status_success) {
    std::printf("FATAL rocblas_create_handle failed\n");
    return 100;
  }
  rocblas_set_pointer_mode(handle, rocblas_pointer_mode_host);
  // Level 1.
  axpy<float>("rocblas_saxpy", rocblas_saxpy, 100003);
  axpy<double>("rocblas_daxpy", rocblas_daxpy, 4099);
  axpy<rocblas_half>("rocblas_haxpy", rocblas_haxpy, 1000);
  dot<float>("rocblas_sdot", rocblas_sdot, 100003);
  dot<double>("rocblas_ddot", rocblas_ddot, 12345);
  scal<float>("rocblas_sscal", rocblas_sscal, 2000);
  scal<double>("rocblas_dscal", rocblas_dscal, 2000);
  reduction<float>("rocblas_snrm2", rocblas_snrm2, 5000, norm2);
  reduction<double>("rocblas_dnrm2", rocblas_dnrm2, 5000, norm2);
  reduction<float>("rocblas_sasum", rocblas_sasum, 7777, abs_sum);
  iamax<float>("rocblas_isamax", rocblas_isamax, 3001);
  iamax<double>("rocblas_idamax", rocblas_idamax, 3001);
  rot<float>("rocblas_srot", rocblas_srot, 1000);
  // Level 2.
  for (char t : {'N', 'T'}) {
    gemv<float>("rocblas_sgemv", rocblas_sgemv, t, 300, 200);
    gemv<double>("rocblas_dgemv", rocblas_dgemv, t, 129, 257);
  }
  ger<float>("rocblas_sger", rocblas_sger, 100, 70);
  trsv<float>("rocblas_strsv", rocblas_strsv, 200);
  trsv<double>("rocblas_dtrsv", rocblas_dtrsv, 100);
  symv<float>("rocblas_ssymv", rocblas_ssymv, 150);
  // Level 3.
  for (auto [ta, tb] : {std::pair{'N', 'N'}, {'T', 'N'}, {'N', 'T'}, {'T', 'T'}}) {
    gemm<float>("rocblas_sgemm", rocblas_sgemm, ta, tb, 256, 256, 256);
    gemm<float>("rocblas_sgemm", rocblas_sgemm, ta, tb, 123, 457, 89);
    gemm<double>("rocblas_dgemm", rocblas_dgemm, ta, tb, 123, 457, 89);
    gemm<rocblas_half>("rocblas_hgemm", rocblas_hgemm, ta, tb, 128, 96, 64);
  }
  gemm<float>("rocblas_sgemm", rocblas_sgemm, 'N', 'N', 1, 1, 1);
  gemm<float>("rocblas_sgemm", rocblas_sgemm, 'N', 'T', 1000, 1000, 1000);
  gemm_strided_batched<float>("rocblas_sgemm_strided_batched", rocblas_sgemm_strided_batched, 'N', 'T', 64, 48, 32, 5);
  gemm_strided_batched<double>("rocblas_dgemm_strided_batched", rocblas_dgemm_strided_batched, 'T', 'N', 33, 17, 40, 3);
  gemm_batched<float>("rocblas_sgemm_batched", rocblas_sgemm_batched, 40, 30, 20, 4);
  trsm<float>("rocblas_strsm", rocblas_strsm, 96, 64);
  trsm<double>("rocblas_dtrsm", rocblas_dtrsm, 65, 33);
  syrk<float>("rocblas_ssyrk", rocblas_ssyrk, 100, 50);
  zgemm<rocblas_float_complex>("rocblas_cgemm", rocblas_cgemm, 'N', 'C', 64, 40, 50, 2e-5);
  zgemm<rocblas_double_complex>("rocblas_zgemm", rocblas_zgemm, 'T', 'N', 30, 20, 25, 1e-12);
  gemm_ex<rocblas_half>("rocblas_gemm_ex f16->f32", rocblas_datatype_f16_r, 'N', 'N', 128, 64, 96);
  gemm_ex<rocblas_bfloat16>("rocblas_gemm_ex bf16->f32", rocblas_datatype_bf16_r, 'T', 'N', 64, 64, 64);
  rocblas_destroy_handle(handle);
  return finish("rocBLAS");
}
