// Modules: code compiled separately (module_kernels.hip), loaded with
// hipModuleLoad (argv[1], a code object) and hipModuleLoadData (argv[2],
// read into memory), functions and globals looked up by name, launched
// with kernelParams and with the `extra` argument buffer.
#include "common.h"

#include <cstring>
#include <vector>

static std::vector<char> read_file(const char* path) {
  std::vector<char> data;
  FILE* f = fopen(path, "rb");
  if (!f) {
    printf("FAIL cannot open %s\n", path);
    exit(1);
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
  fclose(f);
  return data;
}

static void run_axpy(hipModule_t mod, const char* how) {
  hipFunction_t f;
  HIP_CHECK(hipModuleGetFunction(&f, mod, "axpy"));
  const int N = 1000;
  std::vector<float> x(N), y(N), want(N);
  for (int i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
    want[i] = 2.0f * i + 1.0f;  // two launches of y = 1.0 x + y on y = 1
  }
  float *dx, *dy;
  HIP_CHECK(hipMalloc(&dx, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&dy, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(dx, x.data(), N * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dy, y.data(), N * sizeof(float), hipMemcpyHostToDevice));

  // kernelParams: one pointer per argument.
  float a = 1.0f;
  int n = N;
  void* params[] = {&a, &dx, &dy, &n};
  HIP_CHECK(hipModuleLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));

  // extra: the arguments laid out as the kernel sees them.
  struct {
    float a;
    const float* x;
    float* y;
    int n;
  } buf = {1.0f, dx, dy, N};
  size_t size = sizeof buf;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   HIP_LAUNCH_PARAM_END};
  HIP_CHECK(hipModuleLaunchKernel(f, (N + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, nullptr, extra));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(y.data(), dy, N * sizeof(float), hipMemcpyDeviceToHost));
  char what[64];
  snprintf(what, sizeof what, "axpy from %s", how);
  expect_equal(what, y.data(), want.data(), N);
  HIP_CHECK(hipFree(dx));
  HIP_CHECK(hipFree(dy));

  int threads = 0;
  HIP_CHECK(hipFuncGetAttribute(&threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
  EXPECT(threads >= 128 && threads <= 1024, "axpy max threads per block %d", threads);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    printf("FAIL usage: modules CODE_OBJECT CODE_OBJECT_OR_BUNDLE\n");
    return 1;
  }
  hipModule_t m1, m2;
  HIP_CHECK(hipModuleLoad(&m1, argv[1]));
  std::vector<char> image = read_file(argv[2]);
  HIP_CHECK(hipModuleLoadData(&m2, image.data()));
  run_axpy(m1, "hipModuleLoad");
  run_axpy(m2, "hipModuleLoadData");

  // Globals: each module has its own.
  hipDeviceptr_t table, calls;
  size_t bytes = 0;
  HIP_CHECK(hipModuleGetGlobal(&table, &bytes, m1, "module_table"));
  EXPECT(bytes == 16 * sizeof(float), "module_table is %zu bytes", bytes);
  HIP_CHECK(hipModuleGetGlobal(&calls, &bytes, m1, "module_calls"));
  EXPECT(bytes == sizeof(int), "module_calls is %zu bytes", bytes);
  int ncalls = -1;
  HIP_CHECK(hipMemcpyDtoH(&ncalls, calls, sizeof ncalls));
  EXPECT(ncalls == 2, "module 1 counted %d launches, expected 2", ncalls);
  float t[16];
  for (int i = 0; i < 16; ++i) t[i] = 100.0f + i;
  HIP_CHECK(hipMemcpyHtoD(table, t, sizeof t));

  hipFunction_t lookup;
  HIP_CHECK(hipModuleGetFunction(&lookup, m1, "lookup"));
  const int N = 300;
  std::vector<int> idx(N);
  std::vector<float> out(N), want(N);
  for (int i = 0; i < N; ++i) {
    idx[i] = (i * 7) % 16;
    want[i] = 100.0f + idx[i];
  }
  int* didx;
  float* dout;
  HIP_CHECK(hipMalloc(&didx, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&dout, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(didx, idx.data(), N * sizeof(int), hipMemcpyHostToDevice));
  int n = N;
  void* params[] = {&didx, &dout, &n};
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipModuleLaunchKernel(lookup, (N + 63) / 64, 1, 1, 64, 1, 1, 0, s, params, nullptr));
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipMemcpy(out.data(), dout, N * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("lookup through module_table", out.data(), want.data(), N);

  int shared = -1;
  HIP_CHECK(hipFuncGetAttribute(&shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, lookup));
  EXPECT(shared == 16 * sizeof(float), "lookup static shared size %d, expected 64", shared);

  hipFunction_t missing;
  HIP_EXPECT_ERR(hipModuleGetFunction(&missing, m1, "no_such_kernel"), hipErrorNotFound);
  (void)hipGetLastError();

  // Not a code object at all, and an offload bundle with code for another
  // GPU only: the first is a bad image, the second has no binary for this
  // GPU. The bundle's layout (magic, entry count, then offset, size, ID
  // length and ID per entry, all little-endian u64) is clang's
  // offload-bundler format.
  hipModule_t bad;
  std::vector<char> junk(256, 'x');
  HIP_EXPECT_ERR(hipModuleLoadData(&bad, junk.data()), hipErrorInvalidImage);
  std::vector<char> bundle(4096, 0);
  const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  const char id[] = "hipv4-amdgcn-amd-amdhsa--gfx908";
  uint64_t header[4] = {1, 1024, 64, sizeof id - 1};
  memcpy(bundle.data(), magic, 24);
  memcpy(bundle.data() + 24, header, sizeof header);
  memcpy(bundle.data() + 24 + sizeof header, id, sizeof id - 1);
  HIP_EXPECT_ERR(hipModuleLoadData(&bad, bundle.data()), hipErrorNoBinaryForGpu);
  (void)hipGetLastError();

  // The same code object with its metadata note's type changed, so no note
  // describes its kernels: they are found by their descriptor symbols
  // (axpy.kd), as ROCm's loader finds kernels, and take their kernarg
  // segment as one buffer. Per-argument pointers mean nothing then, and a
  // buffer shorter than the segment (its hidden arguments too) is refused.
  std::vector<char> bare = read_file(argv[1]);
  const char owner[] = "AMDGPU\0\0";
  bool patched = false;
  for (size_t i = 12; i + sizeof owner <= bare.size(); ++i) {
    uint32_t type;
    memcpy(&type, &bare[i - 4], 4);
    if (type == 32 && memcmp(&bare[i], owner, 8) == 0) {
      type = 33;
      memcpy(&bare[i - 4], &type, 4);
      patched = true;
    }
  }
  EXPECT(patched, "no NT_AMDGPU_METADATA note found in %s", argv[1]);
  hipModule_t m3;
  HIP_CHECK(hipModuleLoadData(&m3, bare.data()));
  hipFunction_t bare_axpy;
  HIP_CHECK(hipModuleGetFunction(&bare_axpy, m3, "axpy"));
  float one = 1.0f;
  void* bare_params[] = {&one, &didx, &dout, &n};
  HIP_EXPECT_ERR(hipModuleLaunchKernel(bare_axpy, 1, 1, 1, 64, 1, 1, 0, s, bare_params, nullptr),
                 hipErrorInvalidValue);
  (void)hipGetLastError();
  struct {
    float a;
    const void* x;
    void* y;
    int n;
  } explicit_only = {1.0f, didx, dout, 0};
  size_t explicit_size = sizeof explicit_only;
  void* bare_extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &explicit_only,
                        HIP_LAUNCH_PARAM_BUFFER_SIZE, &explicit_size, HIP_LAUNCH_PARAM_END};
  HIP_EXPECT_ERR(hipModuleLaunchKernel(bare_axpy, 1, 1, 1, 64, 1, 1, 0, s, nullptr, bare_extra),
                 hipErrorInvalidValue);
  (void)hipGetLastError();
  HIP_CHECK(hipModuleUnload(m3));

  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(didx));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipModuleUnload(m1));
  HIP_CHECK(hipModuleUnload(m2));
  return finish();
}
