// The README's HIP example: an unmodified HIP program (vector addition)
// that checks its result on the host. Build and run it on softgpu with
//   target/release/softgpu hipcc -O2 examples/hip/vector_add.hip -o vector_add
//   ./vector_add
#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

#define CHECK(call)                                                          \
  do {                                                                       \
    hipError_t e = (call);                                                   \
    if (e != hipSuccess) {                                                   \
      std::printf("%s failed: %s\n", #call, hipGetErrorString(e));           \
      return 1;                                                              \
    }                                                                        \
  } while (0)

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 2.0f - i;
  }
  float *da, *db, *dc;
  CHECK(hipMalloc(&da, n * sizeof(float)));
  CHECK(hipMalloc(&db, n * sizeof(float)));
  CHECK(hipMalloc(&dc, n * sizeof(float)));
  CHECK(hipMemcpy(da, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), n * sizeof(float), hipMemcpyHostToDevice));
  vector_add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(c.data(), dc, n * sizeof(float), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  std::printf("%d additions on %s (%s), %d wrong\n%s\n", n, props.name,
              props.gcnArchName, wrong, wrong ? "FAIL" : "PASS");
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
  return wrong != 0;
}
