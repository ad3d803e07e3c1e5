// Driver-style copies and pointer attributes by name, as a program ported
// from the CUDA driver API uses them: a sub-rectangle of a host image
// copied into a pitched device image with hipMemcpyParam2D, transformed by
// a kernel and copied back; a box of a 3-D volume moved between pitched
// device volumes with hipDrvMemcpy3D (and its async form); the attributes
// of device, pinned and managed memory; range attributes reporting advice
// and prefetches; the status codes ROCm's CLR gives bad parameters.
#include "common.h"

#include <cstdint>

__global__ void negate(int* img, size_t pitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) {
    int* row = (int*)((char*)img + y * pitch);
    row[x] = -row[x];
  }
}

int main() {
  // A 64x40 host image; the 24x10 rectangle at (8, 5) goes to the device.
  const int W = 64, H = 40, RW = 24, RH = 10, RX = 8, RY = 5;
  static int image[H][W];
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) image[y][x] = y * 1000 + x;
  int* dimg = nullptr;
  size_t dpitch = 0;
  HIP_CHECK(hipMallocPitch((void**)&dimg, &dpitch, RW * sizeof(int), RH));

  hip_Memcpy2D up = {};
  up.srcMemoryType = hipMemoryTypeHost;
  up.srcHost = image;
  up.srcPitch = W * sizeof(int);
  up.srcXInBytes = RX * sizeof(int);
  up.srcY = RY;
  up.dstMemoryType = hipMemoryTypeDevice;
  up.dstDevice = dimg;
  up.dstPitch = dpitch;
  up.WidthInBytes = RW * sizeof(int);
  up.Height = RH;
  HIP_CHECK(hipMemcpyParam2D(&up));
  negate<<<dim3(1, RH), 32>>>(dimg, dpitch, RW, RH);
  HIP_CHECK(hipGetLastError());

  // Back into a fresh host buffer, through the unaligned form.
  static int back[RH][RW];
  hip_Memcpy2D down = {};
  down.srcMemoryType = hipMemoryTypeDevice;
  down.srcDevice = dimg;
  down.srcPitch = dpitch;
  down.dstMemoryType = hipMemoryTypeHost;
  down.dstHost = back;
  down.dstPitch = RW * sizeof(int);
  down.WidthInBytes = RW * sizeof(int);
  down.Height = RH;
  HIP_CHECK(hipDrvMemcpy2DUnaligned(&down));
  int bad = 0;
  for (int y = 0; y < RH; ++y)
    for (int x = 0; x < RW; ++x)
      if (back[y][x] != -image[RY + y][RX + x]) bad++;
  EXPECT(bad == 0, "%d of %d values of the rectangle wrong", bad, RW * RH);

  // A 3-D volume (NX x NY x NZ ints, pitched) and a box of it moved into
  // a second volume at another position.
  const int NX = 20, NY = 12, NZ = 6;
  hipPitchedPtr a, b;
  hipExtent ext = make_hipExtent(NX * sizeof(int), NY, NZ);
  HIP_CHECK(hipMalloc3D(&a, ext));
  HIP_CHECK(hipMalloc3D(&b, ext));
  static int vol[NZ][NY][NX], out[NZ][NY][NX];
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) vol[z][y][x] = z * 10000 + y * 100 + x;
  HIP_CHECK(hipMemset3D(b, 0, ext));
  hipMemcpy3DParms fill = {};
  fill.srcPtr = make_hipPitchedPtr(vol, NX * sizeof(int), NX * sizeof(int), NY);
  fill.dstPtr = a;
  fill.extent = ext;
  fill.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&fill));

  const int BX = 5, BY = 4, BZ = 3;  // box size
  HIP_MEMCPY3D box = {};
  box.srcMemoryType = hipMemoryTypeDevice;
  box.srcDevice = a.ptr;
  box.srcPitch = (unsigned)a.pitch;
  box.srcHeight = NY;
  box.srcXInBytes = 2 * sizeof(int);
  box.srcY = 3;
  box.srcZ = 1;
  box.dstMemoryType = hipMemoryTypeDevice;
  box.dstDevice = b.ptr;
  box.dstPitch = (unsigned)b.pitch;
  box.dstHeight = NY;
  box.dstXInBytes = 10 * sizeof(int);
  box.dstY = 6;
  box.dstZ = 2;
  box.WidthInBytes = BX * sizeof(int);
  box.Height = BY;
  box.Depth = BZ;
  HIP_CHECK(hipDrvMemcpy3D(&box));
  // The same box again with the async form, one slice further on.
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  box.dstZ = 3;
  HIP_CHECK(hipDrvMemcpy3DAsync(&box, s));
  HIP_CHECK(hipStreamSynchronize(s));
  hipMemcpy3DParms read = {};
  read.srcPtr = b;
  read.dstPtr = make_hipPitchedPtr(out, NX * sizeof(int), NX * sizeof(int), NY);
  read.extent = ext;
  read.kind = hipMemcpyDeviceToHost;
  HIP_CHECK(hipMemcpy3D(&read));
  bad = 0;
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) {
        // Slices 2..4 hold the first copy, 3..5 the second (which wins).
        int want = 0;
        int bz = z >= 3 ? z - 3 : z - 2;
        if (z >= 2 && bz < BZ && y >= 6 && y < 6 + BY && x >= 10 && x < 10 + BX)
          want = vol[1 + bz][3 + (y - 6)][2 + (x - 10)];
        if (out[z][y][x] != want) {
          if (bad < 5) printf("FAIL volume[%d][%d][%d] = %d, expected %d\n", z, y, x, out[z][y][x], want);
          bad++;
        }
      }
  EXPECT(bad == 0, "%d values of the volume wrong", bad);

  // Bad parameters (CLR's codes).
  hip_Memcpy2D wrong = up;
  wrong.srcMemoryType = (hipMemoryType)9;
  HIP_EXPECT_ERR(hipMemcpyParam2D(&wrong), hipErrorInvalidValue);
  wrong = up;
  wrong.dstPitch = 4;
  HIP_EXPECT_ERR(hipMemcpyParam2D(&wrong), hipErrorInvalidPitchValue);
  wrong = up;
  wrong.Height = 1000;  // far past the device image's end
  HIP_EXPECT_ERR(hipMemcpyParam2D(&wrong), hipErrorInvalidValue);
  wrong = up;
  wrong.dstDevice = nullptr;
  HIP_EXPECT_ERR(hipMemcpyParam2D(&wrong), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemcpyParam2D(nullptr), hipErrorInvalidValue);
  HIP_MEMCPY3D wrong3 = box;
  wrong3.srcLOD = 1;
  HIP_EXPECT_ERR(hipDrvMemcpy3D(&wrong3), hipErrorInvalidValue);
  wrong3 = box;
  wrong3.srcHeight = 2;  // slices shorter than the box
  HIP_EXPECT_ERR(hipDrvMemcpy3D(&wrong3), hipErrorInvalidValue);
  // HIP arrays are not supported by softgpu: a clear error, not a copy.
  wrong3 = box;
  wrong3.srcMemoryType = hipMemoryTypeArray;
  HIP_EXPECT_ERR(hipDrvMemcpy3D(&wrong3), hipErrorNotSupported);
  (void)hipGetLastError();

  // Pointer attributes.
  unsigned type = 99;
  HIP_CHECK(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, dimg));
  EXPECT(type == hipMemoryTypeDevice, "memory type %u", type);
  int ordinal = -1;
  HIP_CHECK(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dimg + 3));
  EXPECT(ordinal == 0, "device ordinal %d", ordinal);
  void* start = nullptr;
  HIP_CHECK(hipPointerGetAttribute(&start, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, dimg + 3));
  EXPECT(start == dimg, "range start %p, allocation %p", start, (void*)dimg);
  unsigned size = 0;
  HIP_CHECK(hipPointerGetAttribute(&size, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, dimg));
  EXPECT(size == dpitch * RH, "range size %u, allocated %zu", size, dpitch * RH);
  void* host = (void*)1;
  HIP_EXPECT_ERR(hipPointerGetAttribute(&host, HIP_POINTER_ATTRIBUTE_HOST_POINTER, dimg),
                 hipErrorInvalidValue);
  EXPECT(host == nullptr, "host pointer of device memory %p", host);
  int* managed = nullptr;
  HIP_CHECK(hipMallocManaged(&managed, 4096, hipMemAttachGlobal));
  bool is_managed = false, mapped = false;
  HIP_CHECK(hipPointerGetAttribute(&is_managed, HIP_POINTER_ATTRIBUTE_IS_MANAGED, managed));
  EXPECT(is_managed, "managed memory is not managed");
  int* pinned = nullptr;
  HIP_CHECK(hipHostMalloc(&pinned, 4096, 0));
  HIP_CHECK(hipPointerGetAttribute(&host, HIP_POINTER_ATTRIBUTE_HOST_POINTER, pinned + 1));
  EXPECT(host == pinned + 1, "host pointer %p of %p", host, (void*)(pinned + 1));
  HIP_CHECK(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, pinned));
  EXPECT(type == hipMemoryTypeHost, "pinned memory type %u", type);
  unsigned id1 = 0, id2 = 0;
  HIP_CHECK(hipPointerGetAttribute(&id1, HIP_POINTER_ATTRIBUTE_BUFFER_ID, pinned));
  HIP_CHECK(hipPointerGetAttribute(&id2, HIP_POINTER_ATTRIBUTE_BUFFER_ID, managed));
  EXPECT(id1 != id2, "two allocations share buffer id %u", id1);
  hipCtx_t ctx = nullptr, current = nullptr;
  HIP_CHECK(hipPointerGetAttribute(&ctx, HIP_POINTER_ATTRIBUTE_CONTEXT, dimg));
  HIP_CHECK(hipCtxGetCurrent(&current));
  EXPECT(ctx == current, "the allocation's context %p, current %p", ctx, current);
  int stack_value = 0;
  HIP_EXPECT_ERR(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, &stack_value),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipPointerGetAttribute(&type, (hipPointer_attribute)99, dimg),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_P2P_TOKENS, dimg),
                 hipErrorNotSupported);
  HIP_EXPECT_ERR(hipPointerGetAttribute(nullptr, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, dimg),
                 hipErrorInvalidValue);
  (void)hipGetLastError();

  // Several at once; CLR's form always succeeds, writing "nothing" values
  // for a pointer it does not know.
  hipPointer_attribute which[3] = {HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   HIP_POINTER_ATTRIBUTE_MAPPED,
                                   HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR};
  void* data[3] = {&ordinal, &mapped, &start};
  HIP_CHECK(hipDrvPointerGetAttributes(3, which, data, managed));
  EXPECT(ordinal == 0 && mapped && start == managed, "managed: ordinal %d mapped %d start %p",
         ordinal, (int)mapped, start);
  HIP_CHECK(hipDrvPointerGetAttributes(3, which, data, &stack_value));
  EXPECT(ordinal == -2 && !mapped && start == nullptr,
         "unknown pointer: ordinal %d mapped %d start %p", ordinal, (int)mapped, start);
  HIP_EXPECT_ERR(hipDrvPointerGetAttributes(0, which, data, dimg), hipErrorInvalidValue);
  (void)hipGetLastError();

  // Range attributes report the advice and prefetches given to managed
  // memory; a range whose parts differ reads as "none".
  int mostly = -1, where = 7, coherency = -1, by[2] = {7, 7};
  HIP_CHECK(hipMemAdvise(managed, 4096, hipMemAdviseSetReadMostly, 0));
  HIP_CHECK(hipMemRangeGetAttribute(&mostly, 4, hipMemRangeAttributeReadMostly, managed, 4096));
  EXPECT(mostly == 1, "read-mostly %d after advising it", mostly);
  HIP_CHECK(hipMemAdvise(managed, 2048, hipMemAdviseUnsetReadMostly, 0));
  HIP_CHECK(hipMemRangeGetAttribute(&mostly, 4, hipMemRangeAttributeReadMostly, managed, 4096));
  EXPECT(mostly == 0, "read-mostly %d over a half-unset range", mostly);
  HIP_CHECK(hipMemRangeGetAttribute(&mostly, 4, hipMemRangeAttributeReadMostly,
                                    (char*)managed + 2048, 2048));
  EXPECT(mostly == 1, "read-mostly %d over the half still set", mostly);
  HIP_CHECK(hipMemRangeGetAttribute(&where, 4, hipMemRangeAttributePreferredLocation, managed, 4096));
  EXPECT(where == hipInvalidDeviceId, "preferred location %d before advice", where);
  HIP_CHECK(hipMemAdvise(managed, 4096, hipMemAdviseSetPreferredLocation, 0));
  HIP_CHECK(hipMemAdvise(managed, 4096, hipMemAdviseSetAccessedBy, 0));
  HIP_CHECK(hipMemPrefetchAsync(managed, 4096, 0, s));
  HIP_CHECK(hipStreamSynchronize(s));
  hipMemRangeAttribute which_range[2] = {hipMemRangeAttributePreferredLocation,
                                         hipMemRangeAttributeAccessedBy};
  void* range_data[2] = {&where, by};
  size_t range_sizes[2] = {sizeof where, sizeof by};
  HIP_CHECK(hipMemRangeGetAttributes(range_data, range_sizes, which_range, 2, managed, 4096));
  EXPECT(where == 0 && by[0] == 0 && by[1] == hipInvalidDeviceId,
         "preferred %d, accessed by %d %d", where, by[0], by[1]);
  where = 7;
  HIP_CHECK(hipMemRangeGetAttribute(&where, 4, hipMemRangeAttributeLastPrefetchLocation, managed,
                                    4096));
  EXPECT(where == 0, "last prefetch location %d", where);
  HIP_CHECK(hipMemRangeGetAttribute(&coherency, 4, hipMemRangeAttributeCoherencyMode, managed, 4096));
  EXPECT(coherency == hipMemRangeCoherencyModeFineGrain, "coherency %d", coherency);
  HIP_EXPECT_ERR(hipMemRangeGetAttribute(&mostly, 4, hipMemRangeAttributeReadMostly, dimg, 64),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemRangeGetAttribute(&mostly, 8, hipMemRangeAttributeReadMostly, managed, 64),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemRangeGetAttribute(&mostly, 4, (hipMemRangeAttribute)7, managed, 64),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemRangeGetAttribute(&mostly, 4, hipMemRangeAttributeReadMostly, managed, 8192),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemAdvise(managed, 4096, (hipMemoryAdvise)77, 0), hipErrorInvalidValue);
  (void)hipGetLastError();

  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(dimg));
  HIP_CHECK(hipFree(a.ptr));
  HIP_CHECK(hipFree(b.ptr));
  HIP_CHECK(hipFree(managed));
  HIP_CHECK(hipHostFree(pinned));
  return finish();
}
