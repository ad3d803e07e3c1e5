// Memory: allocation, copies in every direction, memsets, pitched 2D and
// 3D memory, pinned, registered and managed host memory, pointer
// attributes, and __constant__ / __device__ symbols.
#include "common.h"

#include <vector>

__constant__ float c_coef[4];
__device__ int d_table[64];
__device__ int d_sum;

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

__global__ void write_iota3(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 3 * i;
}

// Adds 1 to every float of a pitched width x height array.
__global__ void add_pitched(float* base, size_t pitch, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) ((float*)((char*)base + y * pitch))[x] += 1.0f;
}

// poly[i] = c0 + c1 x + c2 x^2 + c3 x^3 with x = d_table[i]; d_sum += table.
__global__ void use_symbols(float* poly) {
  int i = threadIdx.x;
  float x = (float)d_table[i];
  poly[i] = c_coef[0] + x * (c_coef[1] + x * (c_coef[2] + x * c_coef[3]));
  atomicAdd(&d_sum, d_table[i]);
}

static void check_bytes(const char* what, const unsigned char* p, size_t n, unsigned char v) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += p[i] != v;
  EXPECT(bad == 0, "%s: %zu of %zu bytes not 0x%02x (first 0x%02x)", what, bad, n, v, p[0]);
}

int main() {
  const int N = 4096;
  const size_t B = N * sizeof(int);
  std::vector<int> h(N), back(N), want(N);
  for (int i = 0; i < N; ++i) h[i] = i * 31 % 1009;

  // hipMemcpy: H2D, D2D, D2H, H2H and hipMemcpyDefault for each.
  int *a = nullptr, *b = nullptr;
  HIP_CHECK(hipMalloc(&a, B));
  HIP_CHECK(hipMalloc(&b, B));
  EXPECT(a != nullptr && b != nullptr && a != b, "hipMalloc pointers %p %p", (void*)a, (void*)b);
  HIP_CHECK(hipMemcpy(a, h.data(), B, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(b, a, B, hipMemcpyDeviceToDevice));
  HIP_CHECK(hipMemcpy(back.data(), b, B, hipMemcpyDeviceToHost));
  expect_equal("H2D+D2D+D2H", back.data(), h.data(), N);
  std::vector<int> hh(N, 0);
  HIP_CHECK(hipMemcpy(hh.data(), h.data(), B, hipMemcpyHostToHost));
  expect_equal("H2H", hh.data(), h.data(), N);
  for (int i = 0; i < N; ++i) h[i] = N - i;
  HIP_CHECK(hipMemcpy(a, h.data(), B, hipMemcpyDefault));
  HIP_CHECK(hipMemcpy(b, a, B, hipMemcpyDefault));
  std::fill(back.begin(), back.end(), 0);
  HIP_CHECK(hipMemcpy(back.data(), b, B, hipMemcpyDefault));
  expect_equal("Default copies", back.data(), h.data(), N);
  // A partial copy at offsets.
  HIP_CHECK(hipMemcpy(b + 100, h.data() + 10, 50 * sizeof(int), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(back.data(), b, B, hipMemcpyDeviceToHost));
  want = h;
  for (int i = 0; i < 50; ++i) want[100 + i] = h[10 + i];
  expect_equal("offset copy", back.data(), want.data(), N);

  // hipMemcpyAsync and a kernel on one stream.
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipMemcpyAsync(a, h.data(), B, hipMemcpyHostToDevice, s));
  add_one<<<N / 256, 256, 0, s>>>(a, N);
  HIP_CHECK(hipMemcpyAsync(back.data(), a, B, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < N; ++i) want[i] = h[i] + 1;
  expect_equal("async copy + kernel", back.data(), want.data(), N);

  // Memsets.
  std::vector<unsigned char> bytes(B);
  HIP_CHECK(hipMemset(a, 0xAB, B));
  HIP_CHECK(hipMemcpy(bytes.data(), a, B, hipMemcpyDeviceToHost));
  check_bytes("hipMemset", bytes.data(), B, 0xAB);
  HIP_CHECK(hipMemsetD8(a, 0x5C, B));
  HIP_CHECK(hipMemcpy(bytes.data(), a, B, hipMemcpyDeviceToHost));
  check_bytes("hipMemsetD8", bytes.data(), B, 0x5C);
  std::vector<unsigned short> shorts(N * 2);
  HIP_CHECK(hipMemsetD16(a, 0xBEEF, N * 2));
  HIP_CHECK(hipMemcpy(shorts.data(), a, B, hipMemcpyDeviceToHost));
  std::vector<unsigned short> want16(N * 2, 0xBEEF);
  expect_equal("hipMemsetD16", shorts.data(), want16.data(), N * 2);
  HIP_CHECK(hipMemsetD32(a, 0x12345678, N));
  HIP_CHECK(hipMemcpy(back.data(), a, B, hipMemcpyDeviceToHost));
  std::vector<int> want32(N, 0x12345678);
  expect_equal("hipMemsetD32", back.data(), want32.data(), N);
  // A memset of part of a buffer leaves the rest alone.
  HIP_CHECK(hipMemset(a + 10, 0, 20 * sizeof(int)));
  HIP_CHECK(hipMemcpy(back.data(), a, B, hipMemcpyDeviceToHost));
  for (int i = 10; i < 30; ++i) want32[i] = 0;
  expect_equal("partial hipMemset", back.data(), want32.data(), N);
  HIP_CHECK(hipMemsetAsync(a, 0x01, B, s));
  HIP_CHECK(hipMemsetD32Async(b, -7, N, s));
  HIP_CHECK(hipMemsetD16Async((char*)b + 2, 0x0102, 1, s));
  HIP_CHECK(hipMemsetD8Async((char*)b + B - 1, 0x11, 1, s));
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipMemcpy(bytes.data(), a, B, hipMemcpyDeviceToHost));
  check_bytes("hipMemsetAsync", bytes.data(), B, 0x01);
  HIP_CHECK(hipMemcpy(back.data(), b, B, hipMemcpyDeviceToHost));
  std::vector<int> wantb(N, -7);
  wantb[0] = (int)((0x0102u << 16) | 0xFFF9u);
  wantb[N - 1] = (int)(0x11FFFFF9u);
  expect_equal("Async D32/D16/D8", back.data(), wantb.data(), N);

  // hipMallocPitch + hipMemcpy2D, a kernel over the pitched rows, and back
  // into a host array with its own pitch.
  const int W = 37, H = 19;
  float* pd = nullptr;
  size_t pitch = 0;
  HIP_CHECK(hipMallocPitch((void**)&pd, &pitch, W * sizeof(float), H));
  EXPECT(pitch >= W * sizeof(float), "pitch %zu for rows of %zu bytes", pitch, W * sizeof(float));
  std::vector<float> img(W * H), img_back((W + 3) * H, -1.0f);
  for (int i = 0; i < W * H; ++i) img[i] = i * 0.5f;
  HIP_CHECK(hipMemcpy2D(pd, pitch, img.data(), W * sizeof(float), W * sizeof(float), H,
                        hipMemcpyHostToDevice));
  add_pitched<<<dim3((W + 15) / 16, (H + 15) / 16), dim3(16, 16)>>>(pd, pitch, W, H);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy2D(img_back.data(), (W + 3) * sizeof(float), pd, pitch, W * sizeof(float), H,
                        hipMemcpyDeviceToHost));
  {
    std::vector<float> w((W + 3) * H, -1.0f);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) w[y * (W + 3) + x] = img[y * W + x] + 1.0f;
    expect_equal("2D pitched", img_back.data(), w.data(), w.size());
  }
  HIP_CHECK(hipFree(pd));

  // hipMalloc3D + hipMemcpy3D there and back.
  const int X = 13, Y = 7, Z = 5;
  hipPitchedPtr vol;
  HIP_CHECK(hipMalloc3D(&vol, make_hipExtent(X * sizeof(int), Y, Z)));
  EXPECT(vol.pitch >= X * sizeof(int) && vol.ptr != nullptr, "3D pitch %zu", vol.pitch);
  std::vector<int> cube(X * Y * Z), cube_back(X * Y * Z, 0);
  for (int i = 0; i < X * Y * Z; ++i) cube[i] = i * 3 + 1;
  hipMemcpy3DParms p3 = {};
  p3.srcPtr = make_hipPitchedPtr(cube.data(), X * sizeof(int), X, Y);
  p3.dstPtr = vol;
  p3.extent = make_hipExtent(X * sizeof(int), Y, Z);
  p3.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p3));
  hipMemcpy3DParms q3 = {};
  q3.srcPtr = vol;
  q3.dstPtr = make_hipPitchedPtr(cube_back.data(), X * sizeof(int), X, Y);
  q3.extent = make_hipExtent(X * sizeof(int), Y, Z);
  q3.kind = hipMemcpyDeviceToHost;
  HIP_CHECK(hipMemcpy3D(&q3));
  expect_equal("3D copy", cube_back.data(), cube.data(), cube.size());
  // A forged extent (2^40 x 2^30 rows) is refused, not a quintillion-row
  // copy list (which would abort the process on allocation).
  hipMemcpy3DParms huge = q3;
  huge.extent = make_hipExtent(X * sizeof(int), (size_t)1 << 40, (size_t)1 << 30);
  HIP_EXPECT_ERR(hipMemcpy3D(&huge), hipErrorInvalidValue);
  // A position past the end of the address space is refused (it must not
  // wrap around onto the volume itself).
  huge = q3;
  huge.srcPos = make_hipPos(0, 0, (size_t)1 << 62);
  HIP_EXPECT_ERR(hipMemcpy3D(&huge), hipErrorInvalidValue);
  (void)hipGetLastError();  // the refusals above leave it set
  HIP_CHECK(hipFree(vol.ptr));

  // Pinned host memory as copy source and destination.
  int *pin_in = nullptr, *pin_out = nullptr;
  HIP_CHECK(hipHostMalloc((void**)&pin_in, B, hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void**)&pin_out, B, hipHostMallocDefault));
  for (int i = 0; i < N; ++i) pin_in[i] = i ^ 0x55;
  HIP_CHECK(hipMemcpyAsync(a, pin_in, B, hipMemcpyHostToDevice, s));
  add_one<<<N / 256, 256, 0, s>>>(a, N);
  HIP_CHECK(hipMemcpyAsync(pin_out, a, B, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < N; ++i) want[i] = (i ^ 0x55) + 1;
  expect_equal("pinned copies", pin_out, want.data(), N);
  hipPointerAttribute_t at;
  HIP_CHECK(hipPointerGetAttributes(&at, pin_in));
  EXPECT(at.memoryType == hipMemoryTypeHost, "pinned memory type %d", (int)at.memoryType);
  EXPECT(at.hostPointer == pin_in, "pinned host pointer %p, expected %p", at.hostPointer,
         (void*)pin_in);
  HIP_CHECK(hipHostFree(pin_in));
  HIP_CHECK(hipHostFree(pin_out));

  // hipHostRegister + hipHostGetDevicePointer: a kernel writes host memory.
  std::vector<int> reg(N, -1);
  HIP_CHECK(hipHostRegister(reg.data(), B, hipHostRegisterMapped));
  int* reg_dev = nullptr;
  HIP_CHECK(hipHostGetDevicePointer((void**)&reg_dev, reg.data(), 0));
  EXPECT(reg_dev != nullptr, "no device pointer for registered memory");
  write_iota3<<<N / 256, 256>>>(reg_dev, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < N; ++i) want[i] = 3 * i;
  expect_equal("registered host memory written by a kernel", reg.data(), want.data(), N);
  HIP_CHECK(hipHostUnregister(reg.data()));

  // A range around memory already registered, or one running past the end
  // of the address space, is refused (and nothing is registered).
  {
    std::vector<char> host(3 * 4096);
    HIP_CHECK(hipHostRegister(host.data() + 4096, 4096, 0));
    EXPECT(hipHostRegister(host.data(), host.size(), 0) == hipErrorHostMemoryAlreadyRegistered,
           "a range around registered memory was registered again");
    HIP_CHECK(hipHostUnregister(host.data() + 4096));
    EXPECT(hipHostRegister(host.data(), SIZE_MAX, 0) == hipErrorInvalidValue,
           "a range past the end of the address space was registered");
    HIP_CHECK(hipHostRegister(host.data(), host.size(), 0));
    HIP_CHECK(hipHostUnregister(host.data()));
    (void)hipGetLastError();
  }

  // Managed memory used by the host and a kernel.
  int* m = nullptr;
  HIP_CHECK(hipMallocManaged((void**)&m, B));
  for (int i = 0; i < N; ++i) m[i] = 5 * i;
  add_one<<<N / 256, 256>>>(m, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < N; ++i) want[i] = 5 * i + 1;
  expect_equal("managed memory", m, want.data(), N);
  HIP_CHECK(hipPointerGetAttributes(&at, m));
  EXPECT(at.isManaged == 1, "managed isManaged %d", at.isManaged);
  HIP_CHECK(hipFree(m));

  // Pointer attributes of device memory, also inside an allocation.
  HIP_CHECK(hipPointerGetAttributes(&at, a));
  EXPECT(at.memoryType == hipMemoryTypeDevice, "device memory type %d", (int)at.memoryType);
  EXPECT(at.devicePointer == a, "devicePointer %p, expected %p", at.devicePointer, (void*)a);
  EXPECT(at.device == 0, "device %d", at.device);
  EXPECT(at.isManaged == 0, "device memory isManaged %d", at.isManaged);
  HIP_CHECK(hipPointerGetAttributes(&at, a + 10));
  EXPECT(at.devicePointer == a + 10, "interior devicePointer %p, expected %p", at.devicePointer,
         (void*)(a + 10));

  // Symbols.
  const float coef[4] = {1.0f, -2.0f, 0.5f, 0.25f};
  HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_coef), coef, sizeof coef));
  int table[64];
  for (int i = 0; i < 64; ++i) table[i] = i - 20;
  HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(d_table), table, 32 * sizeof(int)));
  HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(d_table), table + 32, 32 * sizeof(int),
                              32 * sizeof(int), hipMemcpyHostToDevice));
  int zero = 0;
  HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(d_sum), &zero, sizeof zero));
  float* poly = nullptr;
  HIP_CHECK(hipMalloc(&poly, 64 * sizeof(float)));
  use_symbols<<<1, 64>>>(poly);
  HIP_CHECK(hipGetLastError());
  float poly_h[64], poly_w[64];
  HIP_CHECK(hipMemcpy(poly_h, poly, sizeof poly_h, hipMemcpyDeviceToHost));
  int sum = 0, sum_w = 0;
  for (int i = 0; i < 64; ++i) {
    float x = (float)table[i];  // small integers: every step is exact
    poly_w[i] = coef[0] + x * (coef[1] + x * (coef[2] + x * coef[3]));
    sum_w += table[i];
  }
  expect_equal("__constant__ polynomial", poly_h, poly_w, 64);
  HIP_CHECK(hipMemcpyFromSymbol(&sum, HIP_SYMBOL(d_sum), sizeof sum));
  EXPECT(sum == sum_w, "d_sum %d, expected %d", sum, sum_w);
  int tail[4];
  HIP_CHECK(hipMemcpyFromSymbol(tail, HIP_SYMBOL(d_table), sizeof tail, 60 * sizeof(int),
                                hipMemcpyDeviceToHost));
  expect_equal("hipMemcpyFromSymbol with offset", tail, table + 60, 4);
  void* addr = nullptr;
  size_t size = 0;
  HIP_CHECK(hipGetSymbolAddress(&addr, HIP_SYMBOL(d_table)));
  HIP_CHECK(hipGetSymbolSize(&size, HIP_SYMBOL(d_table)));
  EXPECT(size == sizeof table, "hipGetSymbolSize %zu, expected %zu", size, sizeof table);
  int via_addr[64];
  HIP_CHECK(hipMemcpy(via_addr, addr, sizeof via_addr, hipMemcpyDeviceToHost));
  expect_equal("d_table through hipGetSymbolAddress", via_addr, table, 64);

  HIP_CHECK(hipFree(poly));
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  return finish();
}
