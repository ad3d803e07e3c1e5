// A small harness for the ROCm library suite (scripts/rocm-libraries.sh):
// each call is timed and its result compared with a host reference in
// double; one line per call, and the process exits with the number of
// calls that failed or were wrong.
#pragma once
#include <hip/hip_runtime_api.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace suite {

inline int failures = 0;
inline int calls = 0;

// Fails the suite at once: a runtime call that should never fail did.
#define HIP_OK(x)                                                              \
  do {                                                                         \
    hipError_t e_ = (x);                                                       \
    if (e_ != hipSuccess) {                                                    \
      std::printf("FATAL %s:%d %s -> %s\n", __FILE__, __LINE__, #x,           \
                  hipGetErrorString(e_));                                      \
      std::exit(100);                                                          \
    }                                                                          \
  } while (0)

inline double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Deterministic values in [-1, 1) (small integers' sums stay exact enough).
inline std::vector<double> random(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto &x : v) x = d(g);
  return v;
}

// One call's outcome: `status` is the library's (0 = success), `err` the
// largest error relative to the reference's scale, `tol` what the
// precision allows.
inline void report(const std::string &name, int status, double err, double tol,
                   double seconds) {
  calls++;
  bool ok = status == 0 && err <= tol && !std::isnan(err);
  if (!ok) failures++;
  std::printf("%-6s %-48s status %d  max rel err %.2e (tol %.0e)  %.3f s\n",
              ok ? "ok" : "WRONG", name.c_str(), status, err, tol, seconds);
  std::fflush(stdout);
}

// Largest |got - want| over the largest |want| (at least 1).
template <class T>
double rel_err(const std::vector<T> &got, const std::vector<double> &want) {
  double scale = 1, worst = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); i++)
    worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  return worst / scale;
}

template <class T> T *to_device(const std::vector<T> &h) {
  T *d = nullptr;
  HIP_OK(hipMalloc(&d, std::max<size_t>(1, h.size()) * sizeof(T)));
  HIP_OK(hipMemcpy(d, h.data(), h.size() * sizeof(T), hipMemcpyHostToDevice));
  return d;
}

template <class T> std::vector<T> to_host(const T *d, size_t n) {
  std::vector<T> h(n);
  HIP_OK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return h;
}

template <class T> std::vector<T> cast(const std::vector<double> &v) {
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = T(v[i]);
  return out;
}

// Element (i, j) of column-major `a` (leading dimension `lda`), or of its
// transpose when `t` is not 'N'.
inline double at(const std::vector<double> &a, int lda, char t, int i, int j) {
  return t == 'N' ? a[i + size_t(j) * lda] : a[j + size_t(i) * lda];
}

// C = alpha op(A) op(B) + beta C, column-major, in double ('N' or 'T').
inline std::vector<double> gemm_ref(char ta, char tb, int m, int n, int k, double alpha,
                                    const std::vector<double> &a, int lda,
                                    const std::vector<double> &b, int ldb, double beta,
                                    std::vector<double> c, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) s += at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
      c[i + size_t(j) * ldc] = alpha * s + beta * c[i + size_t(j) * ldc];
    }
  return c;
}

inline int finish(const char *suite_name) {
  std::printf("%s: %d calls, %d right, %d wrong or failed\n", suite_name, calls,
              calls - failures, failures);
  return failures;
}

} // namespace suite
