// HIP arrays, texture objects and surface objects: 2D textures with point
// and linear filtering, normalised and texel coordinates, the four address
// modes, uchar4 read as normalised floats and as elements, a 3D and a
// layered texture, a 1D texture of linear memory, and a surface written by
// one kernel and read by another. Each result is checked against a host
// computation of the same sampling.
//
// Linear filtering on AMD hardware weights the taps with 8-bit fixed-point
// fractions: the host reference truncates (u - 0.5) * 256 the same way and
// blends x, then y (then z) as a * (1 - f) + b * f. The tolerance (1e-4)
// only absorbs float rounding differences (a host compiler may contract
// the blend into an FMA); an unquantised blend misses it by up to 1/256.
#include "common.h"

// hipMemcpyToArray and hipMemcpyFromArray are deprecated in HIP 5.2 but
// still exported, so they are tested here.
#pragma clang diagnostic ignored "-Wdeprecated-declarations"

#include <cmath>
#include <vector>

// Power-of-two sizes: HIP 5.2's tex2D snaps point-sampled normalised
// coordinates to floor(u * W) / W with a reciprocal, exact only then.
constexpr int W = 8, H = 4;

__global__ void sample2d(hipTextureObject_t t, const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void sample_uchar4(hipTextureObject_t norm, hipTextureObject_t raw, float4* f,
                              uchar4* u) {
  int x = threadIdx.x, y = threadIdx.y;
  int i = y * blockDim.x + x;
  f[i] = tex2D<float4>(norm, x + 0.5f, y + 0.5f);
  u[i] = tex2D<uchar4>(raw, x + 0.5f, y + 0.5f);
}

__global__ void sample3d(hipTextureObject_t t, const float4* at, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}

__global__ void sample_layered(hipTextureObject_t t, float* out, int w, int h, int layers) {
  int x = threadIdx.x, y = threadIdx.y, l = threadIdx.z;
  if (x < w && y < h && l < layers)
    out[(l * h + y) * w + x] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, l);
}

__global__ void fetch1d(hipTextureObject_t t, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

// HIP 5.2's surface functions convert the value to float4 (static_cast)
// for the image store, so a float surface is the one whose bits round-trip
// whatever the format conversion.
__global__ void surface_write(hipSurfaceObject_t s, int w, int h) {
  int x = threadIdx.x, y = threadIdx.y;
  if (x < w && y < h) surf2Dwrite(x + 100.0f * y + 0.5f, s, x * 4, y);
}

__global__ void surface_read(hipSurfaceObject_t s, float* out, int w, int h) {
  int x = threadIdx.x, y = threadIdx.y;
  if (x < w && y < h) {
    float v;
    surf2Dread(&v, s, x * 4, y);
    out[y * w + x] = v + 1000.0f;
  }
}

// ---- host reference --------------------------------------------------

// hipTextureAddressMode applied to texel index i of an axis of n texels;
// -1 for the border.
static int address(int mode, long i, int n) {
  switch (mode) {
    case hipAddressModeWrap: return (int)(((i % n) + n) % n);
    case hipAddressModeMirror: {
      long m = ((i % (2 * n)) + 2 * n) % (2 * n);
      return (int)(m >= n ? 2 * n - 1 - m : m);
    }
    case hipAddressModeClamp: return (int)(i < 0 ? 0 : i >= n ? n - 1 : i);
    default: return i < 0 || i >= n ? -1 : (int)i;
  }
}

struct Axis {
  long i0;
  float f;  // weight of i0 + 1
};

// One axis of a linear sample: floor((u - 0.5) * 256) as 24.8 fixed point.
static Axis linear_axis(float u) {
  long fx = (long)std::floor((u - 0.5f) * 256.0f);
  return {fx >> 8, (float)(fx & 255) / 256.0f};
}

static float lerp(float a, float b, float f) { return f == 0.0f ? a : a * (1.0f - f) + b * f; }

static float texel2d(const float* img, int w, int h, const hipTextureDesc& d, long x, long y) {
  int ix = address(d.addressMode[0], x, w), iy = address(d.addressMode[1], y, h);
  if (ix < 0 || iy < 0) return 0.0f;  // transparent black
  return img[iy * w + ix];
}

static float ref2d(const float* img, int w, int h, const hipTextureDesc& d, float x, float y) {
  float u = d.normalizedCoords ? x * w : x, v = d.normalizedCoords ? y * h : y;
  if (d.filterMode == hipFilterModePoint)
    return texel2d(img, w, h, d, (long)std::floor(u), (long)std::floor(v));
  Axis a = linear_axis(u), b = linear_axis(v);
  float top = lerp(texel2d(img, w, h, d, a.i0, b.i0), texel2d(img, w, h, d, a.i0 + 1, b.i0), a.f);
  float bot = lerp(texel2d(img, w, h, d, a.i0, b.i0 + 1),
                   texel2d(img, w, h, d, a.i0 + 1, b.i0 + 1), a.f);
  return lerp(top, bot, b.f);
}

static bool near(float got, float want) { return std::fabs(got - want) <= 1e-4f; }

static hipTextureDesc tex_desc(int mode, int filter, int normalized) {
  hipTextureDesc d;
  memset(&d, 0, sizeof d);
  d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = (hipTextureAddressMode)mode;
  d.filterMode = (hipTextureFilterMode)filter;
  d.readMode = hipReadModeElementType;
  d.normalizedCoords = normalized;
  return d;
}

static hipResourceDesc array_res(hipArray_t a) {
  hipResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  return r;
}

// ---- the checks ------------------------------------------------------

static void check_2d_float() {
  std::vector<float> img(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) img[y * W + x] = x * 1.5f + y * 10.0f + (x * y % 3) * 0.25f;
  hipChannelFormatDesc ch = hipCreateChannelDesc<float>();
  hipArray_t arr;
  HIP_CHECK(hipMallocArray(&arr, &ch, W, H, 0));
  HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H,
                               hipMemcpyHostToDevice));
  hipChannelFormatDesc back;
  HIP_CHECK(hipGetChannelDesc(&back, arr));
  EXPECT(back.x == 32 && back.y == 0 && back.f == hipChannelFormatKindFloat, "%d %d %d", back.x,
         back.y, (int)back.f);

  // Points inside, on texel edges and centres, and outside on every side.
  std::vector<float2> texel_at, norm_at;
  const float xs[] = {-2.3f, -0.5f, 0.0f, 0.5f, 1.2f, 3.75f, 4.0f, 7.5f, 7.9f, 8.0f, 9.6f, 17.1f};
  const float ys[] = {-1.7f, 0.3f, 1.5f, 2.0f, 3.9f, 4.2f, 6.6f};
  for (float x : xs)
    for (float y : ys) {
      texel_at.push_back(make_float2(x, y));
      norm_at.push_back(make_float2(x / W, y / H));
    }
  int n = (int)texel_at.size();
  float2* d_at;
  float* d_out;
  HIP_CHECK(hipMalloc(&d_at, n * sizeof(float2)));
  HIP_CHECK(hipMalloc(&d_out, n * sizeof(float)));
  std::vector<float> out(n);
  const char* mode_names[] = {"wrap", "clamp", "mirror", "border"};
  for (int mode = 0; mode < 4; ++mode)
    for (int filter = 0; filter < 2; ++filter)
      for (int normalized = 0; normalized < 2; ++normalized) {
        // HIP and CUDA allow wrap and mirror with normalised coordinates only.
        if (!normalized && (mode == hipAddressModeWrap || mode == hipAddressModeMirror)) continue;
        hipTextureDesc d = tex_desc(mode, filter, normalized);
        hipResourceDesc r = array_res(arr);
        hipTextureObject_t t;
        HIP_CHECK(hipCreateTextureObject(&t, &r, &d, nullptr));
        std::vector<float2>& at = normalized ? norm_at : texel_at;
        HIP_CHECK(hipMemcpy(d_at, at.data(), n * sizeof(float2), hipMemcpyHostToDevice));
        sample2d<<<1, 128>>>(t, d_at, d_out, n);
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < n; ++i) {
          float want = ref2d(img.data(), W, H, d, at[i].x, at[i].y);
          if (!near(out[i], want) && bad++ < 3)
            printf("FAIL 2D %s %s %s at (%g, %g): got %g, expected %g\n", mode_names[mode],
                   filter ? "linear" : "point", normalized ? "normalised" : "texel", at[i].x,
                   at[i].y, out[i], want);
        }
        if (bad) g_failures++;
        HIP_CHECK(hipDestroyTextureObject(t));
      }
  hipTextureDesc d = tex_desc(hipAddressModeClamp, hipFilterModePoint, 0);
  hipResourceDesc r = array_res(arr);
  hipTextureDesc got_d;
  hipResourceDesc got_r;
  hipTextureObject_t t;
  HIP_CHECK(hipCreateTextureObject(&t, &r, &d, nullptr));
  HIP_CHECK(hipGetTextureObjectTextureDesc(&got_d, t));
  HIP_CHECK(hipGetTextureObjectResourceDesc(&got_r, t));
  EXPECT(got_d.addressMode[0] == hipAddressModeClamp && got_r.res.array.array == arr,
         "descriptors read back");
  HIP_CHECK(hipDestroyTextureObject(t));
  // A red border colour has no border-colour type on the hardware.
  d.addressMode[0] = hipAddressModeBorder;
  d.borderColor[0] = d.borderColor[3] = 1.0f;
  EXPECT(hipCreateTextureObject(&t, &r, &d, nullptr) != hipSuccess, "red border accepted");
  EXPECT(hipCreateTextureObject(&t, nullptr, &d, nullptr) != hipSuccess, "null resource");
  EXPECT(hipCreateTextureObject(nullptr, &r, &d, nullptr) != hipSuccess, "null output");
  HIP_CHECK(hipFree(d_at));
  HIP_CHECK(hipFree(d_out));
  HIP_CHECK(hipFreeArray(arr));
  EXPECT(hipFreeArray(arr) != hipSuccess, "double free of an array");
  (void)hipGetLastError();  // clear the expected failures' last error
}

static void check_uchar4() {
  const int w = 4, h = 4;
  std::vector<uchar4> img(w * h);
  for (int i = 0; i < w * h; ++i) img[i] = make_uchar4(i * 17, 255 - i, i * 3, 128 + i);
  // Spelled out: HIP 5.2.3's hipCreateChannelDesc<uchar4>() says
  // hipChannelFormatKindSigned (a header bug), which reads as SNORM.
  hipChannelFormatDesc ch = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
  hipArray_t arr;
  HIP_CHECK(hipMallocArray(&arr, &ch, w, h, 0));
  HIP_CHECK(hipMemcpyToArray(arr, 0, 0, img.data(), w * h * sizeof(uchar4), hipMemcpyHostToDevice));
  hipResourceDesc r = array_res(arr);
  hipTextureDesc dn = tex_desc(hipAddressModeClamp, hipFilterModePoint, 0);
  dn.readMode = hipReadModeNormalizedFloat;
  hipTextureDesc de = tex_desc(hipAddressModeClamp, hipFilterModePoint, 0);
  hipTextureObject_t tn, te;
  HIP_CHECK(hipCreateTextureObject(&tn, &r, &dn, nullptr));
  HIP_CHECK(hipCreateTextureObject(&te, &r, &de, nullptr));
  float4* d_f;
  uchar4* d_u;
  HIP_CHECK(hipMalloc(&d_f, w * h * sizeof(float4)));
  HIP_CHECK(hipMalloc(&d_u, w * h * sizeof(uchar4)));
  sample_uchar4<<<1, dim3(w, h)>>>(tn, te, d_f, d_u);
  HIP_CHECK(hipGetLastError());
  std::vector<float4> f(w * h);
  std::vector<uchar4> u(w * h);
  HIP_CHECK(hipMemcpy(f.data(), d_f, w * h * sizeof(float4), hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(u.data(), d_u, w * h * sizeof(uchar4), hipMemcpyDeviceToHost));
  for (int i = 0; i < w * h; ++i) {
    // UNORM8: byte / 255.
    float4 want = make_float4(img[i].x / 255.0f, img[i].y / 255.0f, img[i].z / 255.0f,
                              img[i].w / 255.0f);
    EXPECT(near(f[i].x, want.x) && near(f[i].y, want.y) && near(f[i].z, want.z) &&
               near(f[i].w, want.w),
           "texel %d normalised: (%g %g %g %g)", i, f[i].x, f[i].y, f[i].z, f[i].w);
    EXPECT(u[i].x == img[i].x && u[i].y == img[i].y && u[i].z == img[i].z && u[i].w == img[i].w,
           "texel %d element: (%d %d %d %d)", i, u[i].x, u[i].y, u[i].z, u[i].w);
  }
  // hipMemcpyFromArray returns the rows without their padding.
  std::vector<uchar4> back(w * h);
  HIP_CHECK(hipMemcpyFromArray(back.data(), arr, 0, 0, w * h * sizeof(uchar4),
                               hipMemcpyDeviceToHost));
  EXPECT(memcmp(back.data(), img.data(), w * h * sizeof(uchar4)) == 0, "array read back");
  HIP_CHECK(hipDestroyTextureObject(tn));
  HIP_CHECK(hipDestroyTextureObject(te));
  HIP_CHECK(hipFree(d_f));
  HIP_CHECK(hipFree(d_u));
  HIP_CHECK(hipFreeArray(arr));
}

static float ref3d(const float* img, int n, float x, float y, float z) {
  Axis a = linear_axis(x * n), b = linear_axis(y * n), c = linear_axis(z * n);
  auto at = [&](long i, long j, long k) {
    auto cl = [&](long v) { return v < 0 ? 0 : v >= n ? n - 1 : v; };
    return img[(cl(k) * n + cl(j)) * n + cl(i)];
  };
  float z0 = lerp(lerp(at(a.i0, b.i0, c.i0), at(a.i0 + 1, b.i0, c.i0), a.f),
                  lerp(at(a.i0, b.i0 + 1, c.i0), at(a.i0 + 1, b.i0 + 1, c.i0), a.f), b.f);
  float z1 = lerp(lerp(at(a.i0, b.i0, c.i0 + 1), at(a.i0 + 1, b.i0, c.i0 + 1), a.f),
                  lerp(at(a.i0, b.i0 + 1, c.i0 + 1), at(a.i0 + 1, b.i0 + 1, c.i0 + 1), a.f),
                  b.f);
  return lerp(z0, z1, c.f);
}

static void check_3d_and_layered() {
  const int n = 4;
  std::vector<float> img(n * n * n);
  for (int i = 0; i < n * n * n; ++i) img[i] = (float)(i * 7 % 23);
  hipChannelFormatDesc ch = hipCreateChannelDesc<float>();
  hipArray_t vol;
  HIP_CHECK(hipMalloc3DArray(&vol, &ch, make_hipExtent(n, n, n), 0));
  hipMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_hipPitchedPtr(img.data(), n * sizeof(float), n, n);
  p.dstArray = vol;
  p.extent = make_hipExtent(n, n, n);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  hipResourceDesc r = array_res(vol);
  hipTextureDesc d = tex_desc(hipAddressModeClamp, hipFilterModeLinear, 1);
  hipTextureObject_t t;
  HIP_CHECK(hipCreateTextureObject(&t, &r, &d, nullptr));
  std::vector<float4> at;
  for (int k = 0; k < 40; ++k)
    at.push_back(make_float4((k % 7) * 0.16f - 0.05f, (k % 5) * 0.23f, (k % 3) * 0.37f + 0.02f, 0));
  int m = (int)at.size();
  float4* d_at;
  float* d_out;
  HIP_CHECK(hipMalloc(&d_at, m * sizeof(float4)));
  HIP_CHECK(hipMalloc(&d_out, m * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_at, at.data(), m * sizeof(float4), hipMemcpyHostToDevice));
  sample3d<<<1, 64>>>(t, d_at, d_out, m);
  HIP_CHECK(hipGetLastError());
  std::vector<float> out(m);
  HIP_CHECK(hipMemcpy(out.data(), d_out, m * sizeof(float), hipMemcpyDeviceToHost));
  for (int k = 0; k < m; ++k) {
    float want = ref3d(img.data(), n, at[k].x, at[k].y, at[k].z);
    EXPECT(near(out[k], want), "3D trilinear at (%g %g %g): got %g, expected %g", at[k].x,
           at[k].y, at[k].z, out[k], want);
  }
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFreeArray(vol));

  // Three layers of 4x2; the copy in, then a point sample of every texel.
  const int lw = 4, lh = 2, layers = 3;
  std::vector<float> lay(lw * lh * layers);
  for (int i = 0; i < lw * lh * layers; ++i) lay[i] = 100.0f + i;
  hipArray_t la;
  HIP_CHECK(hipMalloc3DArray(&la, &ch, make_hipExtent(lw, lh, layers), hipArrayLayered));
  memset(&p, 0, sizeof p);
  p.srcPtr = make_hipPitchedPtr(lay.data(), lw * sizeof(float), lw, lh);
  p.dstArray = la;
  p.extent = make_hipExtent(lw, lh, layers);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  r = array_res(la);
  d = tex_desc(hipAddressModeClamp, hipFilterModePoint, 0);
  HIP_CHECK(hipCreateTextureObject(&t, &r, &d, nullptr));
  sample_layered<<<1, dim3(lw, lh, layers)>>>(t, d_out, lw, lh, layers);
  HIP_CHECK(hipGetLastError());
  std::vector<float> lout(lw * lh * layers);
  HIP_CHECK(hipMemcpy(lout.data(), d_out, lout.size() * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("layered", lout.data(), lay.data(), lout.size());
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFreeArray(la));
  HIP_CHECK(hipFree(d_at));
  HIP_CHECK(hipFree(d_out));
}

static void check_linear_memory() {
  const int n = 50;
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = i * 0.5f - 3.0f;
  float *d_v, *d_out;
  HIP_CHECK(hipMalloc(&d_v, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_out, 64 * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_v, v.data(), n * sizeof(float), hipMemcpyHostToDevice));
  hipResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeLinear;
  r.res.linear.devPtr = d_v;
  r.res.linear.desc = hipCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = n * sizeof(float);
  hipTextureDesc d = tex_desc(hipAddressModeClamp, hipFilterModePoint, 0);
  hipTextureObject_t t;
  HIP_CHECK(hipCreateTextureObject(&t, &r, &d, nullptr));
  fetch1d<<<1, 64>>>(t, d_out, 64);
  HIP_CHECK(hipGetLastError());
  std::vector<float> out(64);
  HIP_CHECK(hipMemcpy(out.data(), d_out, 64 * sizeof(float), hipMemcpyDeviceToHost));
  expect_equal("tex1Dfetch", out.data(), v.data(), n);
  // Past the end the buffer descriptor's range check reads 0.
  for (int i = n; i < 64; ++i) EXPECT(out[i] == 0.0f, "tex1Dfetch past the end [%d]: %g", i, out[i]);
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFree(d_v));
  HIP_CHECK(hipFree(d_out));
}

static void check_surface() {
  const int w = 6, h = 5;
  hipChannelFormatDesc ch = hipCreateChannelDesc<float>();
  hipArray_t arr;
  HIP_CHECK(hipMallocArray(&arr, &ch, w, h, hipArraySurfaceLoadStore));
  hipResourceDesc r = array_res(arr);
  hipSurfaceObject_t s;
  HIP_CHECK(hipCreateSurfaceObject(&s, &r));
  float* d_out;
  HIP_CHECK(hipMalloc(&d_out, w * h * sizeof(float)));
  surface_write<<<1, dim3(8, 8)>>>(s, w, h);
  surface_read<<<1, dim3(8, 8)>>>(s, d_out, w, h);
  HIP_CHECK(hipGetLastError());
  std::vector<float> out(w * h), arr_back(w * h), want(w * h), want_read(w * h);
  HIP_CHECK(hipMemcpy(out.data(), d_out, w * h * sizeof(float), hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy2DFromArray(arr_back.data(), w * sizeof(float), arr, 0, 0, w * sizeof(float),
                                 h, hipMemcpyDeviceToHost));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      want[y * w + x] = x + 100.0f * y + 0.5f;
      want_read[y * w + x] = want[y * w + x] + 1000.0f;
    }
  expect_equal("surface array", arr_back.data(), want.data(), w * h);
  expect_equal("surface read", out.data(), want_read.data(), w * h);
  HIP_CHECK(hipDestroySurfaceObject(s));
  EXPECT(hipDestroySurfaceObject(s) != hipSuccess, "double destroy of a surface");
  (void)hipGetLastError();
  HIP_CHECK(hipFree(d_out));
  HIP_CHECK(hipFreeArray(arr));
}

int main() {
  int image = 0;
  HIP_CHECK(hipDeviceGetAttribute(&image, hipDeviceAttributeImageSupport, 0));
  EXPECT(image == 1, "hipDeviceAttributeImageSupport = %d", image);
  hipDeviceProp_t props;
  HIP_CHECK(hipGetDeviceProperties(&props, 0));
  EXPECT(props.maxTexture2D[0] >= 4096 && props.maxTexture3D[2] >= 2048, "texture limits %d %d",
         props.maxTexture2D[0], props.maxTexture3D[2]);
  check_2d_float();
  check_uchar4();
  check_3d_and_layered();
  check_linear_memory();
  check_surface();
  if (g_failures) return 1;
  printf("PASS\n");
  return 0;
}
