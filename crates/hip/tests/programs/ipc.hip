// Device memory shared between processes: the parent fills a buffer with
// a kernel, passes hipIpcGetMemHandle's handle (as hex) to a child
// process (this program run again with "child HANDLE"), which opens it,
// checks what the parent wrote, adds to it with a kernel of its own and
// closes it; the parent then sees the child's writes. The parent's fill
// is still running when the child starts: the child waits for it through
// an interprocess event (hipIpcGetEventHandle/OpenEventHandle) and
// records the event after its own kernel. Also the status codes ROCm's
// CLR gives bad handles and pointers.
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>

// Slow on purpose (`spins` rounds of a generator kept in `sink`), so the
// child starts while it runs.
__global__ void fill(int* data, unsigned* sink, int base, int n, int spins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = i;
  for (int k = 0; k < spins; ++k) x = x * 1103515245u + 12345u;
  if (i < n) {
    sink[i] = x;
    data[i] = base + i;
  }
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

static std::string to_hex(const hipIpcEventHandle_t& h) {
  hipIpcMemHandle_t m;
  memcpy(m.reserved, h.reserved, HIP_IPC_HANDLE_SIZE);
  return to_hex(m);
}

static bool from_hex(const char* s, char* reserved) {
  if (strlen(s) != 2 * HIP_IPC_HANDLE_SIZE) return false;
  for (int i = 0; i < HIP_IPC_HANDLE_SIZE; ++i) {
    unsigned v = 0;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
    reserved[i] = (char)v;
  }
  return true;
}

// The child: opens the parent's memory and event, waits for the parent's
// fill through the event, checks it, adds 1000 on the GPU and records
// the event.
static int child(const char* hex, const char* event_hex) {
  hipIpcMemHandle_t handle;
  hipIpcEventHandle_t event_handle;
  if (!from_hex(hex, handle.reserved) || !from_hex(event_hex, event_handle.reserved)) {
    printf("FAIL child: bad handle text\n");
    return 1;
  }
  int* shared = nullptr;
  HIP_CHECK(hipIpcOpenMemHandle((void**)&shared, handle, hipIpcMemLazyEnablePeerAccess));
  hipEvent_t parent_done;
  HIP_CHECK(hipIpcOpenEventHandle(&parent_done, event_handle));
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipStreamWaitEvent(s, parent_done, 0));
  const int n = N - OFFSET;
  int* back = new int[n];
  int* want = new int[n];
  HIP_CHECK(hipMemcpyAsync(back, shared, n * sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipEventSynchronize(parent_done));
  HIP_CHECK(hipEventQuery(parent_done));
  for (int i = 0; i < n; ++i) want[i] = 7 + OFFSET + i;
  expect_equal("child: the parent's values", back, want, n);
  add<<<(n + 255) / 256, 256, 0, s>>>(shared, 1000, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(parent_done, s));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipEventDestroy(parent_done));
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipIpcCloseMemHandle(shared));
  HIP_EXPECT_ERR(hipIpcCloseMemHandle(shared), hipErrorInvalidValue);
  (void)hipGetLastError();
  delete[] back;
  delete[] want;
  if (g_failures) printf("child: %d check(s) failed\n", g_failures);
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);

  int* data = nullptr;
  unsigned* sink = nullptr;
  HIP_CHECK(hipMalloc(&data, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&sink, N * sizeof(unsigned)));
  HIP_CHECK(hipMemset(data, 0, N * sizeof(int)));
  hipIpcMemHandle_t handle;
  HIP_CHECK(hipIpcGetMemHandle(&handle, data + OFFSET));

  // Interprocess events: timing must be disabled; a plain event has no
  // handle; the making process cannot open its own (CLR's codes).
  hipEvent_t done, plain;
  HIP_EXPECT_ERR(hipEventCreateWithFlags(&done, hipEventInterprocess), hipErrorInvalidValue);
  HIP_CHECK(hipEventCreateWithFlags(&done, hipEventInterprocess | hipEventDisableTiming));
  HIP_CHECK(hipEventCreate(&plain));
  hipIpcEventHandle_t event_handle, zero_event;
  memset(&zero_event, 0, sizeof zero_event);
  HIP_EXPECT_ERR(hipIpcGetEventHandle(&event_handle, plain), hipErrorInvalidConfiguration);
  HIP_EXPECT_ERR(hipIpcGetEventHandle(nullptr, done), hipErrorInvalidValue);
  HIP_CHECK(hipIpcGetEventHandle(&event_handle, done));
  hipEvent_t reopened;
  HIP_EXPECT_ERR(hipIpcOpenEventHandle(&reopened, event_handle), hipErrorInvalidContext);
  HIP_EXPECT_ERR(hipIpcOpenEventHandle(&reopened, zero_event), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipIpcOpenEventHandle(nullptr, event_handle), hipErrorInvalidValue);
  (void)hipGetLastError();
  // The fill, still running when the child starts; the event marks its end.
  fill<<<N / 256, 256>>>(data, sink, 7, N, 4000);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(done, 0));

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
    std::string event_hex = to_hex(event_handle);
    char* args[] = {self, mode, (char*)hex.c_str(), (char*)event_hex.c_str(), nullptr};
    execv(self, args);
    _exit(127);
  }
  int status = 0;
  EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid, "fork or wait failed");
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %d)", status);

  // The child's record of the event was reached before it exited.
  HIP_CHECK(hipEventQuery(done));
  HIP_CHECK(hipEventSynchronize(done));
  HIP_CHECK(hipEventDestroy(done));
  HIP_CHECK(hipEventDestroy(plain));

  // The parent sees the child's kernel's writes; before OFFSET nothing changed.
  int* back = new int[N];
  int* want = new int[N];
  HIP_CHECK(hipMemcpy(back, data, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i) want[i] = 7 + i + (i >= OFFSET ? 1000 : 0);
  expect_equal("parent: after the child", back, want, N);
  HIP_CHECK(hipFree(data));
  HIP_CHECK(hipFree(sink));
  delete[] back;
  delete[] want;
  return finish();
}
