// Device memory shared between processes: the parent fills a buffer with
// a kernel, passes hipIpcGetMemHandle's handle (as hex) to a child
// process (this program run again with "child HANDLE"), which opens it,
// checks what the parent wrote, adds to it with a kernel of its own and
// closes it; the parent then sees the child's writes. The parent's fill
// is still running when the child starts: the child waits for it through
// an interprocess event (hipIpcGetEventHandle/OpenEventHandle) and
// records the event after its own kernel. A memory pool made to be
// shared travels too: its file descriptor (as /proc/PID/fd/N) and a
// block's export data; the child imports both, adds to the block and
// frees it. Also the status codes ROCm's CLR gives bad handles and
// pointers.
#include "common.h"

#include <fcntl.h>
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

static std::string to_hex(const hipMemPoolPtrExportData& d) {
  hipIpcMemHandle_t m;
  memcpy(m.reserved, d.reserved, HIP_IPC_HANDLE_SIZE);
  return to_hex(m);
}

static bool from_hex(const char* s, void* out) {
  char* reserved = (char*)out;
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
static int child(const char* hex, const char* event_hex, const char* pool_fd_path,
                 const char* block_hex) {
  hipIpcMemHandle_t handle;
  hipIpcEventHandle_t event_handle;
  hipMemPoolPtrExportData block_data;
  if (!from_hex(hex, handle.reserved) || !from_hex(event_hex, event_handle.reserved) ||
      !from_hex(block_hex, block_data.reserved)) {
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

  // The shared pool and its block (filled with 3 + i before the event;
  // the export names the element at OFFSET).
  int pool_fd = open(pool_fd_path, O_RDONLY);
  EXPECT(pool_fd >= 0, "child: cannot open %s", pool_fd_path);
  hipMemPool_t pool;
  HIP_CHECK(hipMemPoolImportFromShareableHandle(&pool, (void*)(intptr_t)pool_fd,
                                                hipMemHandleTypePosixFileDescriptor, 0));
  int* block = nullptr;
  HIP_CHECK(hipMemPoolImportPointer((void**)&block, pool, &block_data));
  HIP_CHECK(hipMemcpy(back, block, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = 3 + OFFSET + i;
  expect_equal("child: the parent's pool block", back, want, n);
  add<<<(n + 255) / 256, 256>>>(block, 500, n);
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipFree(block));
  HIP_EXPECT_ERR(hipFree(block), hipErrorInvalidValue);
  HIP_CHECK(hipMemPoolDestroy(pool));
  close(pool_fd);
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
  if (argc == 6 && strcmp(argv[1], "child") == 0)
    return child(argv[2], argv[3], argv[4], argv[5]);

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

  // A pool made to be shared, and a block of it: exported as a file
  // descriptor and 64 bytes. CLR's codes: the handle type must be the
  // pool's; a pool not made to be shared, and memory of no such pool,
  // cannot be exported.
  hipMemPoolProps props = {};
  props.allocType = hipMemAllocationTypePinned;
  props.handleTypes = hipMemHandleTypePosixFileDescriptor;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  hipMemPool_t pool, plain_pool;
  HIP_CHECK(hipMemPoolCreate(&pool, &props));
  HIP_CHECK(hipDeviceGetDefaultMemPool(&plain_pool, 0));
  int* block = nullptr;
  HIP_CHECK(hipMallocFromPoolAsync((void**)&block, N * sizeof(int), pool, 0));
  fill<<<N / 256, 256>>>(block, sink, 3, N, 0);
  int pool_fd = -1;
  HIP_CHECK(hipMemPoolExportToShareableHandle(&pool_fd, pool, hipMemHandleTypePosixFileDescriptor, 0));
  EXPECT(pool_fd >= 0, "exported pool descriptor %d", pool_fd);
  HIP_EXPECT_ERR(hipMemPoolExportToShareableHandle(&pool_fd, pool, hipMemHandleTypeNone, 0),
                 hipErrorInvalidValue);
  int no_fd = -1;
  HIP_EXPECT_ERR(hipMemPoolExportToShareableHandle(&no_fd, plain_pool,
                                                   hipMemHandleTypePosixFileDescriptor, 0),
                 hipErrorInvalidValue);
  hipMemPoolPtrExportData block_data;
  HIP_CHECK(hipMemPoolExportPointer(&block_data, block + OFFSET));
  HIP_EXPECT_ERR(hipMemPoolExportPointer(&block_data, data), hipErrorInvalidValue);
  HIP_CHECK(hipMemPoolExportPointer(&block_data, block + OFFSET));
  hipMemPool_t bad_pool;
  HIP_EXPECT_ERR(hipMemPoolImportFromShareableHandle(&bad_pool, (void*)(intptr_t)987654,
                                                     hipMemHandleTypePosixFileDescriptor, 0),
                 hipErrorInvalidValue);
  (void)hipGetLastError();
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
    std::string block_hex = to_hex(block_data);
    std::string pool_path = "/proc/" + std::to_string(getppid()) + "/fd/" + std::to_string(pool_fd);
    char* args[] = {self,    mode, (char*)hex.c_str(), (char*)event_hex.c_str(),
                    (char*)pool_path.c_str(), (char*)block_hex.c_str(), nullptr};
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
  // The child's additions to the pool block.
  HIP_CHECK(hipMemcpy(back, block, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i) want[i] = 3 + i + (i >= OFFSET ? 500 : 0);
  expect_equal("parent: the pool block after the child", back, want, N);
  HIP_CHECK(hipFreeAsync(block, 0));
  HIP_CHECK(hipMemPoolDestroy(pool));
  close(pool_fd);
  HIP_CHECK(hipFree(data));
  HIP_CHECK(hipFree(sink));
  delete[] back;
  delete[] want;
  return finish();
}
