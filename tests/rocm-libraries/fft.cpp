// rocFFT on softgpu: 1-D, 2-D and 3-D transforms, complex and real, single
// and double precision, out of place, each against a direct DFT in double.
// rocFFT lengths are given fastest dimension first; data is contiguous.
#include "harness.h"
#include <complex>
#include <rocfft/rocfft.h>

using namespace suite;
using cd = std::complex<double>;

// The unnormalised DFT over dims (slowest first) of x, sign -1 forward.
static std::vector<cd> dft(const std::vector<cd> &x, const std::vector<size_t> &dims, int sign) {
  std::vector<cd> cur = x;
  size_t total = x.size(), stride = total;
  for (size_t d = 0; d < dims.size(); d++) {
    size_t n = dims[d];
    stride /= n;
    std::vector<cd> next(total);
    for (size_t base = 0; base < total; base++) {
      size_t k = (base / stride) % n;
      size_t origin = base - k * stride;
      cd s = 0;
      for (size_t j = 0; j < n; j++)
        s += cur[origin + j * stride] * std::polar(1.0, sign * 2 * M_PI * double(j * k % n) / n);
      next[base] = s;
    }
    cur = next;
  }
  return cur;
}

static double worst(const std::vector<cd> &got, const std::vector<cd> &want) {
  double scale = 1, w = 0;
  for (size_t i = 0; i < want.size(); i++) {
    scale = std::max(scale, std::abs(want[i]));
    w = std::max(w, std::abs(got[i] - want[i]));
  }
  return w / scale;
}

static int execute(rocfft_plan plan, void *in, void *out) {
  size_t work = 0;
  rocfft_plan_get_work_buffer_size(plan, &work);
  rocfft_execution_info info = nullptr;
  void *buffer = nullptr;
  if (work) {
    HIP_OK(hipMalloc(&buffer, work));
    rocfft_execution_info_create(&info);
    rocfft_execution_info_set_work_buffer(info, buffer, work);
  }
  void *ins[] = {in}, *outs[] = {out};
  int st = rocfft_execute(plan, ins, outs, info);
  HIP_OK(hipDeviceSynchronize());
  if (info) rocfft_execution_info_destroy(info);
  if (buffer) HIP_OK(hipFree(buffer));
  return st;
}

static std::string shape(const std::vector<size_t> &dims) {
  std::string s;
  for (size_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// rocFFT takes lengths fastest first.
static std::vector<size_t> lengths(std::vector<size_t> dims) { return {dims.rbegin(), dims.rend()}; }

template <class R> static void complex_fft(std::vector<size_t> dims, bool forward) {
  size_t n = 1;
  for (size_t d : dims) n *= d;
  auto r = random(2 * n, 70 + n);
  std::vector<std::complex<R>> x(n);
  std::vector<cd> xd(n);
  for (size_t i = 0; i < n; i++) {
    x[i] = {R(r[2 * i]), R(r[2 * i + 1])};
    xd[i] = {double(x[i].real()), double(x[i].imag())};
  }
  auto *din = to_device(x), *dout = to_device(x);
  rocfft_plan plan = nullptr;
  auto len = lengths(dims);
  double t0 = now();
  int st = rocfft_plan_create(&plan, rocfft_placement_notinplace,
                              forward ? rocfft_transform_type_complex_forward
                                      : rocfft_transform_type_complex_inverse,
                              sizeof(R) == 4 ? rocfft_precision_single : rocfft_precision_double,
                              dims.size(), len.data(), 1, nullptr);
  if (st == 0) st = execute(plan, din, dout);
  double t = now() - t0;
  auto got = to_host(dout, n);
  std::vector<cd> g(n);
  for (size_t i = 0; i < n; i++) g[i] = {double(got[i].real()), double(got[i].imag())};
  std::string label = std::string("rocfft ") + (sizeof(R) == 4 ? "single " : "double ") +
                      (forward ? "complex forward " : "complex inverse ") + shape(dims);
  report(label, st, worst(g, dft(xd, dims, forward ? -1 : 1)), sizeof(R) == 4 ? 2e-5 : 1e-12, t);
  if (plan) rocfft_plan_destroy(plan);
  HIP_OK(hipFree(din));
  HIP_OK(hipFree(dout));
}

// Real forward: n reals to the first n/2+1 complex outputs of the last
// (fastest) dimension.
template <class R> static void real_forward(std::vector<size_t> dims) {
  size_t n = 1;
  for (size_t d : dims) n *= d;
  size_t last = dims.back(), half = last / 2 + 1, outs = n / last * half;
  auto r = random(n, 90 + n);
  std::vector<R> x(n);
  std::vector<cd> xd(n);
  for (size_t i = 0; i < n; i++) {
    x[i] = R(r[i]);
    xd[i] = double(x[i]);
  }
  R *din = to_device(x);
  std::complex<R> *dout;
  HIP_OK(hipMalloc(&dout, outs * sizeof(std::complex<R>)));
  rocfft_plan plan = nullptr;
  auto len = lengths(dims);
  double t0 = now();
  int st = rocfft_plan_create(&plan, rocfft_placement_notinplace, rocfft_transform_type_real_forward,
                              sizeof(R) == 4 ? rocfft_precision_single : rocfft_precision_double,
                              dims.size(), len.data(), 1, nullptr);
  if (st == 0) st = execute(plan, din, dout);
  double t = now() - t0;
  auto got = to_host(dout, outs);
  auto full = dft(xd, dims, -1);
  std::vector<cd> g, want;
  for (size_t row = 0; row < n / last; row++)
    for (size_t k = 0; k < half; k++) {
      auto z = got[row * half + k];
      g.push_back({double(z.real()), double(z.imag())});
      want.push_back(full[row * last + k]);
    }
  std::string label = std::string("rocfft ") + (sizeof(R) == 4 ? "single " : "double ") +
                      "real forward " + shape(dims);
  report(label, st, worst(g, want), sizeof(R) == 4 ? 2e-5 : 1e-12, t);
  if (plan) rocfft_plan_destroy(plan);
  HIP_OK(hipFree(din));
  HIP_OK(hipFree(dout));
}

// Real inverse of a 1-D Hermitian spectrum: the n reals whose forward
// transform it is, times n.
template <class R> static void real_inverse(size_t n) {
  std::vector<cd> xd(n);
  auto r = random(n, 110 + n);
  for (size_t i = 0; i < n; i++) xd[i] = r[i];
  auto spectrum = dft(xd, {n}, -1);
  size_t half = n / 2 + 1;
  std::vector<std::complex<R>> in(half);
  for (size_t k = 0; k < half; k++) in[k] = {R(spectrum[k].real()), R(spectrum[k].imag())};
  auto *din = to_device(in);
  R *dout;
  HIP_OK(hipMalloc(&dout, n * sizeof(R)));
  rocfft_plan plan = nullptr;
  double t0 = now();
  int st = rocfft_plan_create(&plan, rocfft_placement_notinplace, rocfft_transform_type_real_inverse,
                              sizeof(R) == 4 ? rocfft_precision_single : rocfft_precision_double, 1,
                              &n, 1, nullptr);
  if (st == 0) st = execute(plan, din, dout);
  double t = now() - t0;
  auto got = to_host(dout, n);
  std::vector<cd> g(n), want(n);
  for (size_t i = 0; i < n; i++) {
    g[i] = double(got[i]);
    want[i] = xd[i] * double(n);
  }
  std::string label = std::string("rocfft ") + (sizeof(R) == 4 ? "single " : "double ") +
                      "real inverse " + std::to_string(n);
  report(label, st, worst(g, want), sizeof(R) == 4 ? 2e-5 : 1e-12, t);
  if (plan) rocfft_plan_destroy(plan);
  HIP_OK(hipFree(din));
  HIP_OK(hipFree(dout));
}

int main() {
  if (rocfft_setup() != rocfft_status_success) {
    std::printf("FATAL rocfft_setup failed\n");
    return 100;
  }
  complex_fft<float>({256}, true);
  complex_fft<float>({1000}, true);
  complex_fft<float>({17}, true);
  complex_fft<double>({512}, false);
  complex_fft<float>({48, 64}, true);
  complex_fft<double>({30, 20}, true);
  complex_fft<float>({16, 16, 16}, true);
  complex_fft<double>({8, 12, 10}, false);
  real_forward<float>({128});
  real_forward<double>({100});
  real_forward<float>({32, 32});
  real_inverse<float>(64);
  real_inverse<double>(90);
  rocfft_cleanup();
  return finish("rocFFT");
}
