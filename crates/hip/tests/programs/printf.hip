// Device printf from several threads of several blocks. The harness checks
// the lines in the program's standard output.
#include "common.h"

__global__ void hello(int base) {
  int t = threadIdx.x, b = blockIdx.x;
  printf("hello from thread %d of block %d: value %d\n", t, b, base + 10 * b + t);
  if (t == 0 && b == 0) printf("formats: %.2f %s %c %x %lld\n", 2.5f, "text", 'Z', 255, -9000000000ll);
}

int main() {
  hello<<<3, 4>>>(1000);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  fflush(stdout);
  return finish();
}
