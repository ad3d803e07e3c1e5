// Debian's prebuilt rocSPARSE 5.3.0 and hipSPARSE 5.3.3 (librocsparse0,
// libhipsparse0), whose fat binaries carry gfx1030 code objects AMD's
// build made: this program has no kernel of its own, so every kernel that
// runs is the library's. Run on a gfx1030 device.
//
// A random sparse matrix (a fixed LCG: a few empty rows, a dense row, so
// the libraries' row-length paths are taken) is multiplied by a vector
// (SpMV: rocsparse_scsrmv, hipsparseSpMV) and a dense matrix
// (rocsparse_scsrmm), and converted to dense and back (rocsparse_scsr2dense,
// rocsparse_snnz + rocsparse_sdense2csr), each checked against the same
// computation on the host in double. The sums may be added in another
// order than the host's, so products are compared within float rounding
// of the sum of the terms' magnitudes; conversions must be exact.
#include "common.h"

#include <hipsparse/hipsparse.h>
#include <rocsparse/rocsparse.h>

#include <cmath>
#include <vector>

#define RS_CHECK(expr)                                                         \
  do {                                                                         \
    rocsparse_status s_ = (expr);                                              \
    if (s_ != rocsparse_status_success) {                                      \
      printf("FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #expr, (int)s_); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define HS_CHECK(expr)                                                         \
  do {                                                                         \
    hipsparseStatus_t s_ = (expr);                                             \
    if (s_ != HIPSPARSE_STATUS_SUCCESS) {                                      \
      printf("FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #expr, (int)s_); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static unsigned lcg_state = 12345;
static unsigned lcg() { return lcg_state = lcg_state * 1664525u + 1013904223u; }
// A value in [-8, 8) on a 1/256 grid, never zero: a stored zero would be
// no nonzero of the dense matrix, and dense2csr would rightly drop it.
static float value() {
  float v = (int)(lcg() >> 20) / 256.0f - 8.0f;
  return v == 0.0f ? 0.5f : v;
}

struct Csr {
  int m, n;
  std::vector<int> row_ptr, col;
  std::vector<float> val;
};

// An m x n matrix: row 3 is dense, every seventh row is empty, the others
// hold up to 40 entries in increasing columns.
static Csr make_matrix(int m, int n) {
  Csr a{m, n, {0}, {}, {}};
  for (int r = 0; r < m; r++) {
    if (r % 7 != 6) {
      for (int c = 0; c < n; c++) {
        if (r == 3 || lcg() % n < 40) {
          a.col.push_back(c);
          a.val.push_back(value());
        }
      }
    }
    a.row_ptr.push_back((int)a.col.size());
  }
  return a;
}

template <typename T>
static T* upload(const std::vector<T>& v) {
  T* d;
  HIP_CHECK(hipMalloc(&d, v.size() * sizeof(T) + 4));
  HIP_CHECK(hipMemcpy(d, v.data(), v.size() * sizeof(T), hipMemcpyHostToDevice));
  return d;
}

template <typename T>
static std::vector<T> download(const T* d, size_t n) {
  std::vector<T> v(n);
  HIP_CHECK(hipMemcpy(v.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return v;
}

// y = alpha * A x + beta * y0 on the host: the value and the bound of its
// rounding error.
static void spmv_reference(const Csr& a, const std::vector<float>& x, float alpha, float beta,
                           const std::vector<float>& y0, std::vector<double>& y,
                           std::vector<double>& tol) {
  y.assign(a.m, 0);
  tol.assign(a.m, 0);
  for (int r = 0; r < a.m; r++) {
    double s = 0, mag = 0;
    for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; k++) {
      s += (double)a.val[k] * x[a.col[k]];
      mag += std::fabs((double)a.val[k] * x[a.col[k]]);
    }
    y[r] = alpha * s + beta * y0[r];
    tol[r] = 1e-5 * (std::fabs(alpha) * mag + std::fabs(beta * y0[r])) + 1e-6;
  }
}

static void check_close(const char* what, const std::vector<float>& got,
                        const std::vector<double>& want, const std::vector<double>& tol) {
  int bad = 0;
  for (size_t i = 0; i < want.size(); i++) {
    if (!(std::fabs(got[i] - want[i]) <= tol[i]) && bad++ < 5)
      printf("FAIL %s[%zu]: %.9g, reference %.9g\n", what, i, got[i], want[i]);
  }
  EXPECT(bad == 0, "%s: %d of %zu values wrong", what, bad, want.size());
}

static void rocsparse_checks(const Csr& a) {
  rocsparse_handle h;
  RS_CHECK(rocsparse_create_handle(&h));
  rocsparse_mat_descr descr;
  RS_CHECK(rocsparse_create_mat_descr(&descr));
  int nnz = (int)a.val.size();
  int *d_ptr = upload(a.row_ptr), *d_col = upload(a.col);
  float* d_val = upload(a.val);

  // SpMV.
  std::vector<float> x(a.n), y0(a.m);
  for (float& v : x) v = value();
  for (float& v : y0) v = value();
  float alpha = 1.5f, beta = -0.5f;
  float *d_x = upload(x), *d_y = upload(y0);
  RS_CHECK(rocsparse_scsrmv(h, rocsparse_operation_none, a.m, a.n, nnz, &alpha, descr, d_val,
                            d_ptr, d_col, nullptr, d_x, &beta, d_y));
  std::vector<double> want, tol;
  spmv_reference(a, x, alpha, beta, y0, want, tol);
  check_close("rocsparse_scsrmv", download(d_y, a.m), want, tol);

  // SpMM: C (m x k, column-major) = alpha A B + beta C, B n x k.
  const int k = 5;
  std::vector<float> b(a.n * k), c0(a.m * k);
  for (float& v : b) v = value();
  for (float& v : c0) v = value();
  float *d_b = upload(b), *d_c = upload(c0);
  RS_CHECK(rocsparse_scsrmm(h, rocsparse_operation_none, rocsparse_operation_none, a.m, k, a.n,
                            nnz, &alpha, descr, d_val, d_ptr, d_col, d_b, a.n, &beta, d_c, a.m));
  std::vector<float> got_c = download(d_c, a.m * k);
  std::vector<double> want_c(a.m * k), tol_c(a.m * k);
  for (int j = 0; j < k; j++) {
    std::vector<float> bj(b.begin() + j * a.n, b.begin() + (j + 1) * a.n);
    std::vector<float> cj(c0.begin() + j * a.m, c0.begin() + (j + 1) * a.m);
    spmv_reference(a, bj, alpha, beta, cj, want, tol);
    std::copy(want.begin(), want.end(), want_c.begin() + j * a.m);
    std::copy(tol.begin(), tol.end(), tol_c.begin() + j * a.m);
  }
  check_close("rocsparse_scsrmm", got_c, want_c, tol_c);

  // CSR -> dense (column-major, ld = m), exact.
  float* d_dense;
  HIP_CHECK(hipMalloc(&d_dense, sizeof(float) * a.m * a.n));
  RS_CHECK(rocsparse_scsr2dense(h, a.m, a.n, descr, d_val, d_ptr, d_col, d_dense, a.m));
  std::vector<float> dense = download(d_dense, (size_t)a.m * a.n);
  std::vector<float> want_dense((size_t)a.m * a.n, 0.0f);
  for (int r = 0; r < a.m; r++)
    for (int q = a.row_ptr[r]; q < a.row_ptr[r + 1]; q++) want_dense[(size_t)a.col[q] * a.m + r] = a.val[q];
  expect_equal("rocsparse_scsr2dense", dense.data(), want_dense.data(), dense.size());

  // Dense -> CSR: the nonzeros per row, then the arrays, exact.
  int* d_nnz_row;
  HIP_CHECK(hipMalloc(&d_nnz_row, sizeof(int) * a.m));
  int total = -1;
  RS_CHECK(rocsparse_snnz(h, rocsparse_direction_row, a.m, a.n, descr, d_dense, a.m, d_nnz_row,
                          &total));
  EXPECT(total == nnz, "rocsparse_snnz counted %d nonzeros, the matrix has %d", total, nnz);
  int *d_ptr2, *d_col2;
  float* d_val2;
  HIP_CHECK(hipMalloc(&d_ptr2, sizeof(int) * (a.m + 1)));
  HIP_CHECK(hipMalloc(&d_col2, sizeof(int) * nnz));
  HIP_CHECK(hipMalloc(&d_val2, sizeof(float) * nnz));
  RS_CHECK(rocsparse_sdense2csr(h, a.m, a.n, descr, d_dense, a.m, d_nnz_row, d_val2, d_ptr2,
                                d_col2));
  std::vector<int> ptr2 = download(d_ptr2, a.m + 1), col2 = download(d_col2, nnz);
  std::vector<float> val2 = download(d_val2, nnz);
  expect_equal("rocsparse_sdense2csr row pointers", ptr2.data(), a.row_ptr.data(), ptr2.size());
  expect_equal("rocsparse_sdense2csr columns", col2.data(), a.col.data(), col2.size());
  expect_equal("rocsparse_sdense2csr values", val2.data(), a.val.data(), val2.size());

  for (void* p : {(void*)d_ptr, (void*)d_col, (void*)d_val, (void*)d_x, (void*)d_y, (void*)d_b,
                  (void*)d_c, (void*)d_dense, (void*)d_nnz_row, (void*)d_ptr2, (void*)d_col2,
                  (void*)d_val2})
    HIP_CHECK(hipFree(p));
  RS_CHECK(rocsparse_destroy_mat_descr(descr));
  RS_CHECK(rocsparse_destroy_handle(h));
}

// hipSPARSE's generic SpMV over rocSPARSE.
static void hipsparse_spmv(const Csr& a) {
  hipsparseHandle_t h;
  HS_CHECK(hipsparseCreate(&h));
  int *d_ptr = upload(a.row_ptr), *d_col = upload(a.col);
  float* d_val = upload(a.val);
  std::vector<float> x(a.n), y0(a.m);
  for (float& v : x) v = value();
  for (float& v : y0) v = value();
  float *d_x = upload(x), *d_y = upload(y0);
  hipsparseSpMatDescr_t mat;
  hipsparseDnVecDescr_t vx, vy;
  HS_CHECK(hipsparseCreateCsr(&mat, a.m, a.n, (int64_t)a.val.size(), d_ptr, d_col, d_val,
                              HIPSPARSE_INDEX_32I, HIPSPARSE_INDEX_32I, HIPSPARSE_INDEX_BASE_ZERO,
                              HIP_R_32F));
  HS_CHECK(hipsparseCreateDnVec(&vx, a.n, d_x, HIP_R_32F));
  HS_CHECK(hipsparseCreateDnVec(&vy, a.m, d_y, HIP_R_32F));
  float alpha = -2.0f, beta = 0.25f;
  size_t bytes = 0;
  HS_CHECK(hipsparseSpMV_bufferSize(h, HIPSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta,
                                    vy, HIP_R_32F, HIPSPARSE_MV_ALG_DEFAULT, &bytes));
  void* buffer = nullptr;
  HIP_CHECK(hipMalloc(&buffer, bytes ? bytes : 4));
  HS_CHECK(hipsparseSpMV(h, HIPSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy,
                         HIP_R_32F, HIPSPARSE_MV_ALG_DEFAULT, buffer));
  std::vector<double> want, tol;
  spmv_reference(a, x, alpha, beta, y0, want, tol);
  check_close("hipsparseSpMV", download(d_y, a.m), want, tol);
  HS_CHECK(hipsparseDestroySpMat(mat));
  HS_CHECK(hipsparseDestroyDnVec(vx));
  HS_CHECK(hipsparseDestroyDnVec(vy));
  for (void* p : {(void*)d_ptr, (void*)d_col, (void*)d_val, (void*)d_x, (void*)d_y, buffer})
    HIP_CHECK(hipFree(p));
  HS_CHECK(hipsparseDestroy(h));
}

int main() {
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  printf("device %s\n", p.gcnArchName);
  Csr a = make_matrix(300, 257);
  printf("matrix %d x %d, %zu nonzeros\n", a.m, a.n, a.val.size());
  rocsparse_checks(a);
  hipsparse_spmv(a);
  return finish();
}
