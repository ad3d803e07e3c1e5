// hiprtc: a kernel compiled at run time from source with a named header,
// a template kernel found through a name expression, loaded with
// hipModuleLoadData and launched; and hiprtc's own errors (a compile error
// with its log, a dead handle, lowered names before compiling).
#include "common.h"

#include <hip/hiprtc.h>

#include <string>
#include <vector>

#define RTC_CHECK(expr)                                                                 \
  do {                                                                                  \
    hiprtcResult r_ = (expr);                                                           \
    if (r_ != HIPRTC_SUCCESS) {                                                         \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr,                 \
             hiprtcGetErrorString(r_));                                                 \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

static const char* header = "#define SCALE 3\n";
static const char* source = R"(
#include "scale.h"
template <typename T>
__global__ void scaled(const T* in, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * SCALE + (T)sqrt((double)i);
}
extern "C" __global__ void plain(int* out) { out[threadIdx.x] = threadIdx.x + 1; }
)";

int main() {
  hipDeviceProp_t props;
  HIP_CHECK(hipGetDeviceProperties(&props, 0));
  std::string arch = std::string("--gpu-architecture=") + props.gcnArchName;

  hiprtcProgram prog;
  const char* headers[] = {header};
  const char* names[] = {"scale.h"};
  RTC_CHECK(hiprtcCreateProgram(&prog, source, "rtc_test.cu", 1, headers, names));
  const char* lowered = nullptr;
  EXPECT(hiprtcGetLoweredName(prog, "scaled<float>", &lowered) ==
             HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION,
         "a lowered name before compiling");
  RTC_CHECK(hiprtcAddNameExpression(prog, "scaled<float>"));
  const char* options[] = {arch.c_str(), "-O3", "-std=c++14"};
  RTC_CHECK(hiprtcCompileProgram(prog, 3, options));
  RTC_CHECK(hiprtcGetLoweredName(prog, "scaled<float>", &lowered));
  EXPECT(std::string(lowered) == "_Z6scaledIfEvPKT_PS0_i", "lowered name %s", lowered);
  size_t size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &size));
  std::vector<char> code(size);
  RTC_CHECK(hiprtcGetCode(prog, code.data()));
  std::string kernel = lowered;  // the program owns `lowered`
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  EXPECT(prog == nullptr, "the destroyed program's handle is cleared");

  hipModule_t module;
  HIP_CHECK(hipModuleLoadData(&module, code.data()));
  hipFunction_t scaled, plain;
  HIP_CHECK(hipModuleGetFunction(&scaled, module, kernel.c_str()));
  HIP_CHECK(hipModuleGetFunction(&plain, module, "plain"));
  const int N = 300;
  std::vector<float> in(N), out(N), want(N);
  for (int i = 0; i < N; ++i) {
    in[i] = 0.5f * i;
    want[i] = in[i] * 3 + (float)sqrt((double)i);
  }
  float *din, *dout;
  HIP_CHECK(hipMalloc(&din, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&dout, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(din, in.data(), N * sizeof(float), hipMemcpyHostToDevice));
  int n = N;
  void* params[] = {&din, &dout, &n};
  HIP_CHECK(hipModuleLaunchKernel(scaled, (N + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  HIP_CHECK(hipMemcpy(out.data(), dout, N * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("scaled<float> compiled by hiprtc", out.data(), want.data(), N);
  int* dints;
  HIP_CHECK(hipMalloc(&dints, 32 * sizeof(int)));
  void* plain_params[] = {&dints};
  HIP_CHECK(hipModuleLaunchKernel(plain, 1, 1, 1, 32, 1, 1, 0, nullptr, plain_params, nullptr));
  int ints[32];
  HIP_CHECK(hipMemcpy(ints, dints, sizeof ints, hipMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i) EXPECT(ints[i] == i + 1, "plain[%d] = %d", i, ints[i]);

  // A compile error: hiprtc's code, and a log naming the error.
  hiprtcProgram broken;
  RTC_CHECK(hiprtcCreateProgram(&broken, "__global__ void k() { undeclared(); }", "broken.cu", 0,
                                nullptr, nullptr));
  EXPECT(hiprtcCompileProgram(broken, 1, options) == HIPRTC_ERROR_COMPILATION, "a compile error");
  size_t log_size = 0;
  RTC_CHECK(hiprtcGetProgramLogSize(broken, &log_size));
  std::vector<char> log(log_size);
  RTC_CHECK(hiprtcGetProgramLog(broken, log.data()));
  EXPECT(strstr(log.data(), "undeclared") != nullptr, "the log names the error: %s", log.data());
  EXPECT(hiprtcGetCodeSize(broken, &size) == HIPRTC_ERROR_INVALID_PROGRAM, "no code after an error");
  RTC_CHECK(hiprtcDestroyProgram(&broken));
  // A destroyed program is not a program.
  hiprtcProgram dead = broken;
  EXPECT(hiprtcGetCodeSize((hiprtcProgram)0x1234, &size) == HIPRTC_ERROR_INVALID_PROGRAM,
         "a forged handle");
  (void)dead;
  EXPECT(strcmp(hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION), "HIPRTC_ERROR_COMPILATION") == 0,
         "error string");

  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipFree(dints));
  HIP_CHECK(hipModuleUnload(module));
  return finish();
}
