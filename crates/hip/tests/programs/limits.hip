// Hostile limits through HIP: hipModuleLoad of a device file or a
// directory is an error at once (never an endless read), and private
// memory reads zero until written (softgpu zeroes it for every wave; real
// hardware leaves what an earlier wave wrote).
#include "common.h"

__global__ void peek_then_dirty(unsigned* out, unsigned at, unsigned mark) {
  volatile unsigned a[256];
  out[blockIdx.x * blockDim.x + threadIdx.x] = a[at & 255];
  for (unsigned i = 0; i < 256; i++) a[i] = mark;
}

int main() {
  hipModule_t m = nullptr;
  EXPECT(hipModuleLoad(&m, "/dev/zero") == hipErrorInvalidValue, "/dev/zero loaded");
  EXPECT(hipModuleLoad(&m, "/") == hipErrorInvalidValue, "/ loaded");
  EXPECT(hipModuleLoad(&m, "/no/such/file.hsaco") == hipErrorFileNotFound, "missing file");
  (void)hipGetLastError();

  const int n = 64 * 64;
  unsigned* d = nullptr;
  HIP_CHECK(hipMalloc(&d, n * sizeof(unsigned)));
  unsigned h[n];
  for (int round = 0; round < 2; ++round) {
    peek_then_dirty<<<64, 64>>>(d, 5, 0xdeadbeefu);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
    int seen = 0;
    for (int i = 0; i < n; ++i) seen += h[i] != 0;
    EXPECT(seen == 0, "round %d: %d work-items saw earlier private data", round, seen);
  }
  HIP_CHECK(hipFree(d));
  return finish();
}
