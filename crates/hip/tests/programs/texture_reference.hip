// Texture references (`texture<T, dim, mode>` variables): a 1-D reference
// bound to linear memory read with tex1Dfetch, rebound to other memory and
// unbound; a 2-D reference bound to an array and sampled with linear
// filtering; a 2-D reference bound to pitched memory; the reference's
// settings through hipTexRef*; driver-API texture objects
// (hipTexObjectCreate) over linear memory and an array, with their
// descriptors read back; a module's reference (texture_module.hip, whose
// code object is argv[1]) found with hipModuleGetTexRef and bound with
// hipTexRefSetArray; and bad references, pointers and
// dimensions with the codes softgpu gives (CLR's for NULL arguments).
//
// Linear filtering weights the taps with 8-bit fixed-point fractions, as
// texture.hip's host reference says: floor((u - 0.5) * 256) in 24.8 fixed
// point, blended x then y.
#include "common.h"

// The texture-reference API is deprecated in HIP 5.2 but still exported.
#pragma clang diagnostic ignored "-Wdeprecated-declarations"

#include <cmath>
#include <vector>

texture<float, hipTextureType1D, hipReadModeElementType> lin;
texture<float, hipTextureType2D, hipReadModeElementType> img;
texture<int, hipTextureType2D, hipReadModeElementType> pitched;

constexpr int N = 100, W = 8, H = 4;

__global__ void fetch(float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex1Dfetch(lin, i);
}

__global__ void sample(const float2* at, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex2D(img, at[i].x, at[i].y);
}

__global__ void fetch_object(hipTextureObject_t t, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

__global__ void sample_object(hipTextureObject_t t, float* out, int w, int h) {
  int x = threadIdx.x, y = threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

__global__ void sample_pitched(int* out, int w, int h) {
  int x = threadIdx.x, y = threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D(pitched, x + 0.5f, y + 0.5f);
}

// The expected failures set the last error; a launch's check must not
// see them.
static void clear_last_error() { (void)hipGetLastError(); }

static std::vector<float> run_fetch(float* d_out) {
  std::vector<float> out(N);
  clear_last_error();
  fetch<<<1, 128>>>(d_out, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), d_out, N * sizeof(float), hipMemcpyDeviceToHost));
  return out;
}

static void check_linear() {
  std::vector<float> a(N), b(N);
  for (int i = 0; i < N; ++i) {
    a[i] = i * 0.5f + 1;
    b[i] = 1000.0f - i;
  }
  float *d_a, *d_b, *d_out;
  HIP_CHECK(hipMalloc(&d_a, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_b, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_out, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_a, a.data(), N * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_b, b.data(), N * sizeof(float), hipMemcpyHostToDevice));

  size_t offset = 99;
  HIP_CHECK(hipBindTexture(&offset, lin, d_a, N * sizeof(float)));
  // hipMalloc memory needs no shift: the offset is 0.
  EXPECT(offset == 0, "offset %zu", offset);
  EXPECT(lin.textureObject != nullptr, "the host reference names no object");
  std::vector<float> got = run_fetch(d_out);
  expect_equal("tex1Dfetch of a", got.data(), a.data(), N);

  // A rebind replaces the object (the old one is destroyed).
  hipTextureObject_t first = lin.textureObject;
  HIP_CHECK(hipBindTexture(nullptr, lin, d_b, N * sizeof(float)));
  got = run_fetch(d_out);
  expect_equal("tex1Dfetch of b", got.data(), b.data(), N);
  HIP_EXPECT_ERR(hipDestroyTextureObject(first), hipErrorInvalidResourceHandle);

  hipDeviceptr_t addr = nullptr;
  HIP_CHECK(hipTexRefGetAddress(&addr, &lin));
  EXPECT(addr == d_b, "bound to %p, expected %p", addr, (void*)d_b);

  const textureReference* ref = nullptr;
  HIP_CHECK(hipGetTextureReference(&ref, &lin));
  EXPECT(ref == &lin, "reference %p, expected %p", (const void*)ref, (const void*)&lin);
  size_t align = 7;
  HIP_CHECK(hipGetTextureAlignmentOffset(&align, &lin));
  EXPECT(align == 0, "alignment offset %zu", align);

  HIP_CHECK(hipUnbindTexture(&lin));
  EXPECT(lin.textureObject == nullptr, "unbound reference still names %p", lin.textureObject);
  HIP_EXPECT_ERR(hipTexRefGetAddress(&addr, &lin), hipErrorInvalidValue);
  // Bound again after the unbind.
  HIP_CHECK(hipBindTexture(nullptr, lin, d_a, N * sizeof(float)));
  got = run_fetch(d_out);
  expect_equal("tex1Dfetch after rebinding a", got.data(), a.data(), N);
  HIP_CHECK(hipUnbindTexture(&lin));

  // Bad arguments: CLR's hipErrorInvalidValue for NULL ones; a pointer
  // that is no texture variable is an invalid symbol (CLR finds no global
  // for it).
  hipChannelFormatDesc ch = hipCreateChannelDesc<float>();
  textureReference forged;
  memset(&forged, 0, sizeof forged);
  HIP_EXPECT_ERR(hipBindTexture(nullptr, &forged, d_a, &ch, 16), hipErrorInvalidSymbol);
  HIP_EXPECT_ERR(hipBindTexture(nullptr, nullptr, d_a, &ch, 16), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipBindTexture(nullptr, &lin, nullptr, &ch, 16), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipBindTexture(nullptr, &lin, d_a, nullptr, 16), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGetTextureReference(nullptr, &lin), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGetTextureReference(&ref, &forged), hipErrorInvalidSymbol);
  HIP_EXPECT_ERR(hipUnbindTexture(nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGetTextureAlignmentOffset(nullptr, &lin), hipErrorInvalidValue);
  HIP_CHECK(hipFree(d_a));
  HIP_CHECK(hipFree(d_b));
  HIP_CHECK(hipFree(d_out));
}

// ---- 2-D array with linear filtering ---------------------------------

struct Axis {
  long i0;
  float f;  // weight of i0 + 1
};

static Axis linear_axis(float u) {
  long fx = (long)std::floor((u - 0.5f) * 256.0f);
  return {fx >> 8, (float)(fx & 255) / 256.0f};
}

static float lerp(float a, float b, float f) { return f == 0.0f ? a : a * (1.0f - f) + b * f; }

// Clamp addressing (the reference's address mode here).
static float texel(const std::vector<float>& v, long x, long y) {
  x = x < 0 ? 0 : x >= W ? W - 1 : x;
  y = y < 0 ? 0 : y >= H ? H - 1 : y;
  return v[y * W + x];
}

static float bilinear(const std::vector<float>& v, float u, float w) {
  Axis a = linear_axis(u), b = linear_axis(w);
  float top = lerp(texel(v, a.i0, b.i0), texel(v, a.i0 + 1, b.i0), a.f);
  float bot = lerp(texel(v, a.i0, b.i0 + 1), texel(v, a.i0 + 1, b.i0 + 1), a.f);
  return lerp(top, bot, b.f);
}

static void check_array() {
  clear_last_error();
  std::vector<float> v(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) v[y * W + x] = x * 2.0f + y * 16.0f + (x * y % 3) * 0.5f;
  hipChannelFormatDesc ch = hipCreateChannelDesc<float>();
  hipArray_t arr;
  HIP_CHECK(hipMallocArray(&arr, &ch, W, H, 0));
  HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, v.data(), W * sizeof(float), W * sizeof(float), H,
                               hipMemcpyHostToDevice));
  img.filterMode = hipFilterModeLinear;
  img.addressMode[0] = img.addressMode[1] = hipAddressModeClamp;
  img.normalized = 0;
  HIP_CHECK(hipBindTextureToArray(img, arr));

  std::vector<float2> at;
  const float xs[] = {-1.0f, 0.0f, 0.5f, 0.8f, 1.25f, 3.5f, 4.1f, 7.5f, 7.9f, 9.0f};
  const float ys[] = {-0.5f, 0.5f, 1.3f, 2.0f, 3.75f, 5.0f};
  for (float x : xs)
    for (float y : ys) at.push_back(make_float2(x, y));
  int n = (int)at.size();
  float2* d_at;
  float* d_out;
  HIP_CHECK(hipMalloc(&d_at, n * sizeof(float2)));
  HIP_CHECK(hipMalloc(&d_out, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_at, at.data(), n * sizeof(float2), hipMemcpyHostToDevice));
  sample<<<1, 128>>>(d_at, d_out, n);
  HIP_CHECK(hipGetLastError());
  std::vector<float> out(n);
  HIP_CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float want = bilinear(v, at[i].x, at[i].y);
    if (std::fabs(out[i] - want) > 1e-4f && bad++ < 3)
      printf("FAIL tex2D at (%g, %g): got %g, expected %g\n", at[i].x, at[i].y, out[i], want);
  }
  if (bad) g_failures++;

  // The settings through the hipTexRef calls (a texture<> is a
  // textureReference).
  hipTextureFilterMode fm;
  HIP_CHECK(hipTexRefGetFilterMode(&fm, &img));
  EXPECT(fm == hipFilterModeLinear, "filter mode %d", (int)fm);
  HIP_CHECK(hipTexRefSetAddressMode(&img, 2, hipAddressModeBorder));
  hipTextureAddressMode am;
  HIP_CHECK(hipTexRefGetAddressMode(&am, &img, 2));
  EXPECT(am == hipAddressModeBorder, "address mode %d", (int)am);
  HIP_EXPECT_ERR(hipTexRefSetAddressMode(&img, 3, hipAddressModeWrap), hipErrorInvalidValue);
  HIP_CHECK(hipTexRefSetFlags(&img, HIP_TRSF_NORMALIZED_COORDINATES));
  unsigned flags = 0;
  HIP_CHECK(hipTexRefGetFlags(&flags, &img));
  // Without HIP_TRSF_READ_AS_INTEGER the reads are normalised floats.
  EXPECT(flags == HIP_TRSF_NORMALIZED_COORDINATES && img.readMode == hipReadModeNormalizedFloat,
         "flags %#x, read mode %d", flags, (int)img.readMode);
  HIP_CHECK(hipTexRefSetFlags(&img, HIP_TRSF_READ_AS_INTEGER));
  HIP_CHECK(hipTexRefSetMipmapLevelClamp(&img, 0.5f, 3.0f));
  float lo = 0, hi = 0;
  HIP_CHECK(hipTexRefGetMipmapLevelClamp(&lo, &hi, &img));
  EXPECT(lo == 0.5f && hi == 3.0f, "clamp %g %g", lo, hi);
  // An array binding has no address.
  hipDeviceptr_t addr;
  HIP_EXPECT_ERR(hipTexRefGetAddress(&addr, &img), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipBindTextureToArray(&img, nullptr, &ch), hipErrorInvalidValue);

  HIP_CHECK(hipUnbindTexture(&img));
  HIP_CHECK(hipFreeArray(arr));
  HIP_CHECK(hipFree(d_at));
  HIP_CHECK(hipFree(d_out));
}

// ---- 2-D pitched memory --------------------------------------------------

static void check_pitched() {
  clear_last_error();
  const int w = 5, h = 3;
  int* d_img;
  size_t pitch;
  HIP_CHECK(hipMallocPitch((void**)&d_img, &pitch, w * sizeof(int), h));
  std::vector<int> v(w * h);
  for (int i = 0; i < w * h; ++i) v[i] = i * 7 - 20;
  HIP_CHECK(hipMemcpy2D(d_img, pitch, v.data(), w * sizeof(int), w * sizeof(int), h,
                        hipMemcpyHostToDevice));
  hipChannelFormatDesc ch = hipCreateChannelDesc<int>();
  size_t offset = 5;
  HIP_CHECK(hipBindTexture2D(&offset, &pitched, d_img, &ch, w, h, pitch));
  EXPECT(offset == 0, "offset %zu", offset);
  int* d_out;
  HIP_CHECK(hipMalloc(&d_out, w * h * sizeof(int)));
  sample_pitched<<<1, dim3(w, h)>>>(d_out, w, h);
  HIP_CHECK(hipGetLastError());
  std::vector<int> out(w * h);
  HIP_CHECK(hipMemcpy(out.data(), d_out, w * h * sizeof(int), hipMemcpyDeviceToHost));
  expect_equal("tex2D of pitched memory", out.data(), v.data(), w * h);
  HIP_CHECK(hipUnbindTexture(&pitched));
  HIP_CHECK(hipFree(d_img));
  HIP_CHECK(hipFree(d_out));
}

// ---- driver-API texture objects -----------------------------------------

static void check_driver_objects() {
  clear_last_error();
  std::vector<float> v(N);
  for (int i = 0; i < N; ++i) v[i] = i * 3.0f - 7;
  float *d_v, *d_out;
  HIP_CHECK(hipMalloc(&d_v, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_out, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_v, v.data(), N * sizeof(float), hipMemcpyHostToDevice));

  HIP_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = HIP_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = d_v;
  res.res.linear.format = HIP_AD_FORMAT_FLOAT;
  res.res.linear.numChannels = 1;
  res.res.linear.sizeInBytes = N * sizeof(float);
  HIP_TEXTURE_DESC tex;
  memset(&tex, 0, sizeof tex);
  tex.flags = HIP_TRSF_READ_AS_INTEGER;
  hipTextureObject_t t;
  HIP_CHECK(hipTexObjectCreate(&t, &res, &tex, nullptr));
  fetch_object<<<1, 128>>>(t, d_out, N);
  HIP_CHECK(hipGetLastError());
  std::vector<float> out(N);
  HIP_CHECK(hipMemcpy(out.data(), d_out, N * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("tex1Dfetch of a driver texture object", out.data(), v.data(), N);

  HIP_RESOURCE_DESC res_back;
  HIP_TEXTURE_DESC tex_back;
  HIP_CHECK(hipTexObjectGetResourceDesc(&res_back, t));
  HIP_CHECK(hipTexObjectGetTextureDesc(&tex_back, t));
  EXPECT(res_back.resType == HIP_RESOURCE_TYPE_LINEAR && res_back.res.linear.devPtr == d_v &&
             res_back.res.linear.numChannels == 1 && tex_back.flags == HIP_TRSF_READ_AS_INTEGER,
         "type %d, pointer %p, %u channels, flags %#x", (int)res_back.resType,
         res_back.res.linear.devPtr, res_back.res.linear.numChannels, tex_back.flags);
  // The runtime API reads the same object's translated descriptors.
  hipResourceDesc rt;
  HIP_CHECK(hipGetTextureObjectResourceDesc(&rt, t));
  EXPECT(rt.resType == hipResourceTypeLinear && rt.res.linear.desc.x == 32 &&
             rt.res.linear.desc.f == hipChannelFormatKindFloat,
         "type %d, %d bits, kind %d", (int)rt.resType, rt.res.linear.desc.x,
         (int)rt.res.linear.desc.f);
  HIP_CHECK(hipTexObjectDestroy(t));
  HIP_EXPECT_ERR(hipTexObjectGetResourceDesc(&res_back, t), hipErrorInvalidResourceHandle);

  // A 2-D array of float through the driver API, point sampled.
  const int w = 6, h = 3;
  HIP_ARRAY_DESCRIPTOR ad;
  memset(&ad, 0, sizeof ad);
  ad.Width = w;
  ad.Height = h;
  ad.Format = HIP_AD_FORMAT_FLOAT;
  ad.NumChannels = 1;
  hipArray_t arr;
  HIP_CHECK(hipArrayCreate(&arr, &ad));
  HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, v.data(), w * sizeof(float), w * sizeof(float), h,
                               hipMemcpyHostToDevice));
  memset(&res, 0, sizeof res);
  res.resType = HIP_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = arr;
  tex.addressMode[0] = tex.addressMode[1] = HIP_TR_ADDRESS_MODE_CLAMP;
  HIP_CHECK(hipTexObjectCreate(&t, &res, &tex, nullptr));
  clear_last_error();
  sample_object<<<1, dim3(w, h)>>>(t, d_out, w, h);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), d_out, w * h * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("tex2D of a driver texture object", out.data(), v.data(), w * h);

  // Bad descriptors: NULL ones and resource flags other than 0.
  HIP_EXPECT_ERR(hipTexObjectCreate(nullptr, &res, &tex, nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipTexObjectCreate(&t, nullptr, &tex, nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipTexObjectCreate(&t, &res, nullptr, nullptr), hipErrorInvalidValue);
  res.flags = 1;
  hipTextureObject_t t2;
  HIP_EXPECT_ERR(hipTexObjectCreate(&t2, &res, &tex, nullptr), hipErrorInvalidValue);
  HIP_CHECK(hipTexObjectDestroy(t));
  HIP_CHECK(hipArrayDestroy(arr));
  HIP_CHECK(hipFree(d_v));
  HIP_CHECK(hipFree(d_out));
}

// ---- a module's texture reference (hipModuleGetTexRef) ------------------

static void check_module(const char* path) {
  hipModule_t m;
  HIP_CHECK(hipModuleLoad(&m, path));
  textureReference* ref = nullptr;
  HIP_CHECK(hipModuleGetTexRef(&ref, m, "module_tex"));
  textureReference* again = nullptr;
  HIP_CHECK(hipModuleGetTexRef(&again, m, "module_tex"));
  EXPECT(ref != nullptr && ref == again, "references %p and %p", (void*)ref, (void*)again);
  HIP_EXPECT_ERR(hipModuleGetTexRef(&again, m, "no_such_texture"), hipErrorNotFound);
  HIP_EXPECT_ERR(hipModuleGetTexRef(nullptr, m, "module_tex"), hipErrorInvalidValue);

  const int w = 7, h = 2;
  std::vector<float> v(w * h);
  for (int i = 0; i < w * h; ++i) v[i] = 0.25f * i + 3;
  HIP_ARRAY_DESCRIPTOR ad;
  memset(&ad, 0, sizeof ad);
  ad.Width = w;
  ad.Height = h;
  ad.Format = HIP_AD_FORMAT_FLOAT;
  ad.NumChannels = 1;
  hipArray_t arr;
  HIP_CHECK(hipArrayCreate(&arr, &ad));
  HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, v.data(), w * sizeof(float), w * sizeof(float), h,
                               hipMemcpyHostToDevice));
  HIP_CHECK(hipTexRefSetFormat(ref, HIP_AD_FORMAT_FLOAT, 1));
  HIP_CHECK(hipTexRefSetFlags(ref, HIP_TRSF_READ_AS_INTEGER));
  HIP_CHECK(hipTexRefSetFilterMode(ref, hipFilterModePoint));
  HIP_CHECK(hipTexRefSetAddressMode(ref, 0, hipAddressModeClamp));
  HIP_CHECK(hipTexRefSetAddressMode(ref, 1, hipAddressModeClamp));
  // HIP_TRSA_OVERRIDE_FORMAT is the one flag CLR takes.
  HIP_EXPECT_ERR(hipTexRefSetArray(ref, arr, 0), hipErrorInvalidValue);
  HIP_CHECK(hipTexRefSetArray(ref, arr, HIP_TRSA_OVERRIDE_FORMAT));
  hipArray_Format fmt;
  int channels = 0;
  HIP_CHECK(hipTexRefGetFormat(&fmt, &channels, ref));
  EXPECT(fmt == HIP_AD_FORMAT_FLOAT && channels == 1, "format %#x, %d channels", (int)fmt,
         channels);

  hipFunction_t f;
  HIP_CHECK(hipModuleGetFunction(&f, m, "sample_module_tex"));
  float* d_out;
  HIP_CHECK(hipMalloc(&d_out, w * h * sizeof(float)));
  struct {
    float* out;
    int w, h;
  } args = {d_out, w, h};
  size_t size = sizeof args;
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                    HIP_LAUNCH_PARAM_END};
  HIP_CHECK(hipModuleLaunchKernel(f, 1, 1, 1, w, h, 1, 0, nullptr, nullptr, config));
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<float> out(w * h);
  HIP_CHECK(hipMemcpy(out.data(), d_out, w * h * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("tex2D of a module's reference", out.data(), v.data(), w * h);

  HIP_CHECK(hipUnbindTexture(ref));
  HIP_CHECK(hipArrayDestroy(arr));
  HIP_CHECK(hipFree(d_out));
  HIP_CHECK(hipModuleUnload(m));
}

int main(int argc, char** argv) {
  check_linear();
  check_array();
  check_pitched();
  check_driver_objects();
  if (argc > 1) check_module(argv[1]);
  return finish();
}
