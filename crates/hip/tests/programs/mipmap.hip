// Mipmapped arrays: a 16 x 8 float chain of 5 levels, each level filled
// through its array view (hipGetMipmappedArrayLevel + hipMemcpy2DToArray)
// and read back, then sampled with tex2DLod through a texture object at
// integer and fractional levels: point mip filtering picks the nearest
// level (floor(lod + 0.5)), linear mip filtering blends the two levels
// around the LOD with weight frac(lod) as an 8-bit fraction (truncated,
// as the bilinear weights: 0.4 blends with 102/256), the level clamps
// bound the LOD. The driver API's
// forms, a texture reference bound to the chain, and bad levels, extents
// and handles with the codes softgpu gives.
#include "common.h"

#pragma clang diagnostic ignored "-Wdeprecated-declarations"

#include <cmath>
#include <vector>

constexpr int W = 16, H = 8, LEVELS = 5;

texture<float, hipTextureType2D, hipReadModeElementType> mip_ref;

struct Probe {
  float u, v, lod;
};

__global__ void sample_lod(hipTextureObject_t t, const Probe* p, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex2DLod<float>(t, p[i].u, p[i].v, p[i].lod);
}

__global__ void sample_ref_lod(const Probe* p, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex2DLod(mip_ref, p[i].u, p[i].v, p[i].lod);
}

static int side(int n, int l) { return n >> l > 0 ? n >> l : 1; }

// Texel (x, y) of level l: the level in the hundreds, so a sample shows
// which level it came from.
static float value(int l, int x, int y) { return 100.0f * l + x + 0.125f * y; }

// Point sample of level l at normalised (u, v), clamp addressing.
static float point(int l, float u, float v) {
  int w = side(W, l), h = side(H, l);
  int x = (int)std::floor(u * w), y = (int)std::floor(v * h);
  x = x < 0 ? 0 : x >= w ? w - 1 : x;
  y = y < 0 ? 0 : y >= h ? h - 1 : y;
  return value(l, x, y);
}

static std::vector<float> run(hipTextureObject_t t, const std::vector<Probe>& probes, bool ref) {
  int n = (int)probes.size();
  Probe* d_p;
  float* d_out;
  HIP_CHECK(hipMalloc(&d_p, n * sizeof(Probe)));
  HIP_CHECK(hipMalloc(&d_out, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_p, probes.data(), n * sizeof(Probe), hipMemcpyHostToDevice));
  (void)hipGetLastError();  // the expected failures before set it
  if (ref)
    sample_ref_lod<<<1, 128>>>(d_p, d_out, n);
  else
    sample_lod<<<1, 128>>>(t, d_p, d_out, n);
  HIP_CHECK(hipGetLastError());
  std::vector<float> out(n);
  HIP_CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
  HIP_CHECK(hipFree(d_p));
  HIP_CHECK(hipFree(d_out));
  return out;
}

static void expect_samples(const char* what, const std::vector<Probe>& probes,
                           const std::vector<float>& got, const std::vector<float>& want) {
  int bad = 0;
  for (size_t i = 0; i < probes.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-4f && bad++ < 4)
      printf("FAIL %s at (%g, %g) lod %g: got %g, expected %g\n", what, probes[i].u, probes[i].v,
             probes[i].lod, got[i], want[i]);
  if (bad) g_failures++;
}

static hipTextureDesc mip_desc(hipTextureFilterMode mip_filter, float max_level) {
  hipTextureDesc d;
  memset(&d, 0, sizeof d);
  d.addressMode[0] = d.addressMode[1] = hipAddressModeClamp;
  d.filterMode = hipFilterModePoint;
  d.readMode = hipReadModeElementType;
  d.normalizedCoords = 1;
  d.mipmapFilterMode = mip_filter;
  d.maxMipmapLevelClamp = max_level;
  return d;
}

int main() {
  hipChannelFormatDesc ch = hipCreateChannelDesc<float>();
  hipMipmappedArray_t mip;
  HIP_CHECK(hipMallocMipmappedArray(&mip, &ch, make_hipExtent(W, H, 0), LEVELS, 0));
  for (int l = 0; l < LEVELS; ++l) {
    int w = side(W, l), h = side(H, l);
    std::vector<float> lv(w * h), back(w * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) lv[y * w + x] = value(l, x, y);
    hipArray_t level;
    HIP_CHECK(hipGetMipmappedArrayLevel(&level, mip, l));
    HIP_CHECK(hipMemcpy2DToArray(level, 0, 0, lv.data(), w * sizeof(float), w * sizeof(float), h,
                                 hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy2DFromArray(back.data(), w * sizeof(float), level, 0, 0,
                                   w * sizeof(float), h, hipMemcpyDeviceToHost));
    expect_equal("level read back", back.data(), lv.data(), w * h);
    // A level belongs to its chain: hipFreeArray refuses it.
    HIP_EXPECT_ERR(hipFreeArray(level), hipErrorInvalidValue);
  }

  // Probes at texel centres of level 2 (4 x 2) and off-centre points, at
  // integer LODs, LODs either side of the point filter's rounding, and
  // LODs past the last level.
  std::vector<Probe> probes;
  const float us[] = {0.1f, 0.375f, 0.6f, 0.95f}, vs[] = {0.2f, 0.75f};
  const float lods[] = {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 0.4f, 1.6f, 2.25f, 3.5f, 6.0f};
  for (float lod : lods)
    for (float u : us)
      for (float v : vs) probes.push_back({u, v, lod});
  hipResourceDesc res;
  memset(&res, 0, sizeof res);
  res.resType = hipResourceTypeMipmappedArray;
  res.res.mipmap.mipmap = mip;

  // Point mip filtering: the nearest level, the LOD clamped to 4.
  hipTextureDesc d = mip_desc(hipFilterModePoint, LEVELS - 1);
  hipTextureObject_t t;
  HIP_CHECK(hipCreateTextureObject(&t, &res, &d, nullptr));
  std::vector<float> want;
  for (const Probe& p : probes) {
    float lod = std::fmin(p.lod, LEVELS - 1);
    want.push_back(point((int)std::floor(lod + 0.5f), p.u, p.v));
  }
  expect_samples("point mip", probes, run(t, probes, false), want);
  HIP_CHECK(hipDestroyTextureObject(t));

  // Linear mip filtering: level floor(lod) blended with the next by
  // frac(lod); the last level alone past it.
  d = mip_desc(hipFilterModeLinear, LEVELS - 1);
  HIP_CHECK(hipCreateTextureObject(&t, &res, &d, nullptr));
  want.clear();
  for (const Probe& p : probes) {
    float lod = std::fmin(p.lod, LEVELS - 1);
    int l = (int)std::floor(lod);
    float f = std::floor((lod - l) * 256.0f) / 256.0f;
    float a = point(l, p.u, p.v);
    want.push_back(l + 1 < LEVELS && f > 0 ? a * (1 - f) + point(l + 1, p.u, p.v) * f : a);
  }
  expect_samples("linear mip", probes, run(t, probes, false), want);
  HIP_CHECK(hipDestroyTextureObject(t));

  // The clamps: levels 1 to 2 only.
  d = mip_desc(hipFilterModePoint, 2.0f);
  d.minMipmapLevelClamp = 1.0f;
  HIP_CHECK(hipCreateTextureObject(&t, &res, &d, nullptr));
  want.clear();
  for (const Probe& p : probes) {
    float lod = std::fmin(std::fmax(p.lod, 1.0f), 2.0f);
    want.push_back(point((int)std::floor(lod + 0.5f), p.u, p.v));
  }
  expect_samples("clamped mip", probes, run(t, probes, false), want);
  hipResourceDesc res_back;
  HIP_CHECK(hipGetTextureObjectResourceDesc(&res_back, t));
  EXPECT(res_back.resType == hipResourceTypeMipmappedArray && res_back.res.mipmap.mipmap == mip,
         "type %d", (int)res_back.resType);
  HIP_CHECK(hipDestroyTextureObject(t));

  // A texture reference bound to the chain.
  mip_ref.normalized = 1;
  mip_ref.filterMode = hipFilterModePoint;
  mip_ref.addressMode[0] = mip_ref.addressMode[1] = hipAddressModeClamp;
  mip_ref.mipmapFilterMode = hipFilterModePoint;
  mip_ref.maxMipmapLevelClamp = LEVELS - 1;
  HIP_CHECK(hipBindTextureToMipmappedArray(mip_ref, mip));
  want.clear();
  for (const Probe& p : probes) {
    float lod = std::fmin(p.lod, LEVELS - 1);
    want.push_back(point((int)std::floor(lod + 0.5f), p.u, p.v));
  }
  expect_samples("reference mip", probes, run(nullptr, probes, true), want);
  HIP_CHECK(hipUnbindTexture(&mip_ref));

  // Bad requests: a level past the last, more levels than the extent
  // halves to, a bias (not applied by softgpu's sampling), a 3-D chain.
  hipArray_t level;
  HIP_EXPECT_ERR(hipGetMipmappedArrayLevel(&level, mip, LEVELS), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGetMipmappedArrayLevel(nullptr, mip, 0), hipErrorInvalidValue);
  hipMipmappedArray_t other;
  HIP_EXPECT_ERR(hipMallocMipmappedArray(&other, &ch, make_hipExtent(W, H, 0), 6, 0),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMallocMipmappedArray(&other, &ch, make_hipExtent(W, H, 4), 2, 0),
                 hipErrorNotSupported);
  d = mip_desc(hipFilterModePoint, 4);
  d.mipmapLevelBias = 1.0f;
  HIP_EXPECT_ERR(hipCreateTextureObject(&t, &res, &d, nullptr), hipErrorNotSupported);

  // The driver API's forms.
  HIP_ARRAY3D_DESCRIPTOR ad;
  memset(&ad, 0, sizeof ad);
  ad.Width = 8;
  ad.Height = 8;
  ad.Format = HIP_AD_FORMAT_UNSIGNED_INT8;
  ad.NumChannels = 4;
  hipMipmappedArray_t drv;
  HIP_CHECK(hipMipmappedArrayCreate(&drv, &ad, 4));
  HIP_CHECK(hipMipmappedArrayGetLevel(&level, drv, 3));
  EXPECT(level != nullptr && level->width == 1, "level 3 width %u", level ? level->width : 0);
  HIP_CHECK(hipMipmappedArrayDestroy(drv));
  HIP_EXPECT_ERR(hipMipmappedArrayGetLevel(&level, drv, 0), hipErrorInvalidResourceHandle);

  HIP_CHECK(hipFreeMipmappedArray(mip));
  HIP_EXPECT_ERR(hipFreeMipmappedArray(mip), hipErrorInvalidResourceHandle);
  return finish();
}
