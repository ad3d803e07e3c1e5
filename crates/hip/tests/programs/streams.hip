// Streams and events: creation with flags and priorities, query and
// synchronize, hipStreamWaitEvent between two streams, the order of
// hipStreamAddCallback and hipLaunchHostFunc, event timing, and the null
// stream's ordering with blocking streams.
#include "common.h"

#include <dlfcn.h>

#include <vector>

// Debian's HIP 5.2.3 headers declare hipLaunchHostFunc but its library does
// not export it, so a program linked against that library looks it up when
// it runs (softgpu's library has it).
typedef hipError_t (*LaunchHostFn)(hipStream_t, hipHostFn_t, void*);
static LaunchHostFn launch_host_func() {
  LaunchHostFn f = (LaunchHostFn)dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
  if (!f) {
    printf("FAIL the HIP library has no hipLaunchHostFunc\n");
    exit(1);
  }
  return f;
}

// Slow on purpose: each thread loops before writing, so a consumer that
// does not wait would see the old values.
__global__ void slow_fill(int* p, int v, int n, int spin) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
  for (int k = 0; k < spin; ++k) acc = acc * 1664525 + 1013904223 + k;
  if (i < n) p[i] = v;
  if (acc == 1 && i == n + 12345) p[0] = 0;  // never true; keeps the loop
}

__global__ void add_scaled(const int* src, int* dst, int f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = f * src[i] + 1;
}

__global__ void set_value(int* p, int v) { *p = v; }

struct Log {
  int order[8];
  int seen[8];
  int count;
  const int* watched;  // host-visible memory a kernel wrote before the callback
};

static void record(Log* log, int id) {
  log->seen[log->count] = *log->watched;
  log->order[log->count++] = id;
}
static void on_callback(hipStream_t, hipError_t status, void* user) {
  Log* log = (Log*)user;
  record(log, status == hipSuccess ? 1 : -1);
}
static void host_fn_2(void* user) { record((Log*)user, 2); }
static void host_fn_3(void* user) { record((Log*)user, 3); }

int main() {
  hipStream_t a, b, nb, pr;
  HIP_CHECK(hipStreamCreate(&a));
  HIP_CHECK(hipStreamCreateWithFlags(&b, hipStreamDefault));
  HIP_CHECK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
  int least = 0, greatest = 0;
  HIP_CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT(greatest <= least, "priority range least %d greatest %d", least, greatest);
  HIP_CHECK(hipStreamCreateWithPriority(&pr, hipStreamDefault, greatest));
  int prio = 12345;
  HIP_CHECK(hipStreamGetPriority(pr, &prio));
  EXPECT(prio == greatest, "stream priority %d, expected %d", prio, greatest);
  unsigned flags = 99;
  HIP_CHECK(hipStreamGetFlags(nb, &flags));
  EXPECT(flags == hipStreamNonBlocking, "non-blocking stream flags %u", flags);
  HIP_CHECK(hipStreamGetFlags(a, &flags));
  EXPECT(flags == hipStreamDefault, "default stream flags %u", flags);
  HIP_EXPECT_ERR(hipStreamQuery(a), hipSuccess);  // nothing queued

  const int N = 4096;
  std::vector<int> out(N), want(N);
  int *x, *y, *z;
  HIP_CHECK(hipMalloc(&x, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&y, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&z, N * sizeof(int)));

  // hipStreamWaitEvent: b waits for a's slow kernel.
  HIP_CHECK(hipMemset(x, 0, N * sizeof(int)));
  hipEvent_t done;
  HIP_CHECK(hipEventCreateWithFlags(&done, hipEventDisableTiming));
  slow_fill<<<N / 256, 256, 0, a>>>(x, 21, N, 2000);
  HIP_CHECK(hipEventRecord(done, a));
  HIP_CHECK(hipStreamWaitEvent(b, done, 0));
  add_scaled<<<N / 256, 256, 0, b>>>(x, y, 2, N);
  hipError_t q = hipStreamQuery(b);
  EXPECT(q == hipSuccess || q == hipErrorNotReady, "hipStreamQuery gave %s", hipGetErrorName(q));
  HIP_CHECK(hipStreamSynchronize(b));
  HIP_EXPECT_ERR(hipStreamQuery(b), hipSuccess);
  HIP_EXPECT_ERR(hipEventQuery(done), hipSuccess);
  HIP_CHECK(hipMemcpy(out.data(), y, N * sizeof(int), hipMemcpyDeviceToHost));
  std::fill(want.begin(), want.end(), 43);
  expect_equal("b after waiting for a", out.data(), want.data(), N);

  // Callbacks and host functions run in stream order, after the work
  // before them.
  int* flag = nullptr;
  HIP_CHECK(hipHostMalloc((void**)&flag, sizeof(int), hipHostMallocDefault));
  *flag = 0;
  Log log = {};
  log.watched = flag;
  set_value<<<1, 1, 0, a>>>(flag, 10);
  HIP_CHECK(hipStreamAddCallback(a, on_callback, &log, 0));
  set_value<<<1, 1, 0, a>>>(flag, 20);
  LaunchHostFn hip_launch_host_func = launch_host_func();
  HIP_CHECK(hip_launch_host_func(a, host_fn_2, &log));
  set_value<<<1, 1, 0, a>>>(flag, 30);
  HIP_CHECK(hip_launch_host_func(a, host_fn_3, &log));
  HIP_CHECK(hipStreamSynchronize(a));
  EXPECT(log.count == 3, "%d host calls ran, expected 3", log.count);
  for (int k = 0; k < 3 && k < log.count; ++k) {
    EXPECT(log.order[k] == k + 1, "host call %d was #%d", k, log.order[k]);
    EXPECT(log.seen[k] == 10 * (k + 1), "host call %d saw %d, expected %d", k, log.seen[k],
           10 * (k + 1));
  }
  HIP_CHECK(hipHostFree(flag));

  // Events: timing around a kernel.
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  HIP_CHECK(hipEventRecord(start, pr));
  slow_fill<<<N / 256, 256, 0, pr>>>(z, 5, N, 500);
  HIP_CHECK(hipEventRecord(stop, pr));
  HIP_CHECK(hipEventSynchronize(stop));
  HIP_EXPECT_ERR(hipEventQuery(stop), hipSuccess);
  float ms = -1.0f;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0.0f && ms < 60000.0f, "elapsed %g ms", ms);
  HIP_EXPECT_ERR(hipEventElapsedTime(&ms, done, stop), hipErrorInvalidHandle);  // no timing
  (void)hipGetLastError();

  // The null stream waits for blocking streams' earlier work, and blocking
  // streams' later work waits for the null stream.
  HIP_CHECK(hipMemset(x, 0, N * sizeof(int)));
  slow_fill<<<N / 256, 256, 0, a>>>(x, 7, N, 2000);
  add_scaled<<<N / 256, 256>>>(x, y, 3, N);            // null stream: after a's kernel
  add_scaled<<<N / 256, 256, 0, b>>>(y, z, 10, N);     // b: after the null stream's kernel
  HIP_CHECK(hipStreamSynchronize(b));
  HIP_CHECK(hipMemcpy(out.data(), z, N * sizeof(int), hipMemcpyDeviceToHost));
  std::fill(want.begin(), want.end(), 10 * (3 * 7 + 1) + 1);
  expect_equal("null stream ordering", out.data(), want.data(), N);

  // A non-blocking stream works on its own.
  slow_fill<<<N / 256, 256, 0, nb>>>(z, 9, N, 10);
  HIP_CHECK(hipStreamSynchronize(nb));
  HIP_CHECK(hipMemcpy(out.data(), z, N * sizeof(int), hipMemcpyDeviceToHost));
  std::fill(want.begin(), want.end(), 9);
  expect_equal("non-blocking stream", out.data(), want.data(), N);

  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(stop));
  HIP_CHECK(hipEventDestroy(done));
  for (hipStream_t s : {a, b, nb, pr}) HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(x));
  HIP_CHECK(hipFree(y));
  HIP_CHECK(hipFree(z));
  return finish();
}
