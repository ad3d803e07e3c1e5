// Device memory shared between processes: the parent fills a buffer with
// a kernel, passes hipIpcGetMemHandle's handle (as hex) to a child
// process (this program run again with "child HANDLE"), which opens it,
// checks what the parent wrote, adds to it with a kernel of its own and
// closes it; the parent then sees the child's writes. Also the status
// codes ROCm's CLR gives bad handles and pointers.
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>

__global__ void fill(int* data, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = base + i;
}

__global__ void add(int* data, int k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += k;
}

static const int N = 8192;
static const int OFFSET = 256;  // the handle names an element inside the buffer

static std::string to_hex(const hipIpcMemHandle_t& h) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < HIP_IPC_HANDLE_SIZE; ++i) {
    unsigned char b = (unsigned char)h.reserved[i];
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

static bool from_hex(const char* s, hipIpcMemHandle_t* h) {
  if (strlen(s) != 2 * HIP_IPC_HANDLE_SIZE) return false;
  for (int i = 0; i < HIP_IPC_HANDLE_SIZE; ++i) {
    unsigned v = 0;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
    h->reserved[i] = (char)v;
  }
  return true;
}

// The child: opens the parent's memory, checks it, adds 1000 on the GPU.
static int child(const char* hex) {
  hipIpcMemHandle_t handle;
  if (!from_hex(hex, &handle)) {
    printf("FAIL child: bad handle text\n");
    return 1;
  }
  int* shared = nullptr;
  HIP_CHECK(hipIpcOpenMemHandle((void**)&shared, handle, hipIpcMemLazyEnablePeerAccess));
  const int n = N - OFFSET;
  int* back = new int[n];
  int* want = new int[n];
  HIP_CHECK(hipMemcpy(back, shared, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = 7 + OFFSET + i;
  expect_equal("child: the parent's values", back, want, n);
  add<<<(n + 255) / 256, 256>>>(shared, 1000, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipIpcCloseMemHandle(shared));
  HIP_EXPECT_ERR(hipIpcCloseMemHandle(shared), hipErrorInvalidValue);
  (void)hipGetLastError();
  delete[] back;
  delete[] want;
  if (g_failures) printf("child: %d check(s) failed\n", g_failures);
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "child") == 0) return child(argv[2]);

  int* data = nullptr;
  HIP_CHECK(hipMalloc(&data, N * sizeof(int)));
  fill<<<N / 256, 256>>>(data, 7, N);
  HIP_CHECK(hipDeviceSynchronize());
  hipIpcMemHandle_t handle;
  HIP_CHECK(hipIpcGetMemHandle(&handle, data + OFFSET));

  // The exporting process cannot open its own handle (CLR).
  int* mine = nullptr;
  HIP_EXPECT_ERR(hipIpcOpenMemHandle((void**)&mine, handle, 0), hipErrorInvalidContext);
  // Bad arguments.
  int on_stack = 0;
  hipIpcMemHandle_t zero;
  memset(&zero, 0, sizeof zero);
  HIP_EXPECT_ERR(hipIpcGetMemHandle(&handle, &on_stack), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipIpcGetMemHandle(nullptr, data), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipIpcOpenMemHandle((void**)&mine, zero, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipIpcOpenMemHandle((void**)&mine, handle, 5), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipIpcOpenMemHandle(nullptr, handle, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipIpcCloseMemHandle(data), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipIpcCloseMemHandle(nullptr), hipErrorInvalidValue);
  (void)hipGetLastError();

  // The child process, given the handle as text.
  std::string hex = to_hex(handle);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    char self[] = "/proc/self/exe";
    char mode[] = "child";
    char* args[] = {self, mode, (char*)hex.c_str(), nullptr};
    execv(self, args);
    _exit(127);
  }
  int status = 0;
  EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid, "fork or wait failed");
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %d)", status);

  // The parent sees the child's kernel's writes; before OFFSET nothing changed.
  int* back = new int[N];
  int* want = new int[N];
  HIP_CHECK(hipMemcpy(back, data, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i) want[i] = 7 + i + (i >= OFFSET ? 1000 : 0);
  expect_equal("parent: after the child", back, want, N);
  HIP_CHECK(hipFree(data));
  delete[] back;
  delete[] want;
  return finish();
}
