// Virtual memory management, as a growable device buffer uses it: an
// address range reserved once, physical chunks created and mapped into it
// back to back, access given to the device, a kernel writing across the
// chunks' seam; a chunk exported as a file descriptor, imported and mapped
// at a second address where the same bytes show; unmapping, releasing and
// freeing; the status codes ROCm's CLR gives bad arguments.
#include "common.h"

#include <unistd.h>

#include <cstdint>

__global__ void stamp(int* data, int base, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = base + (int)i;
}

int main() {
  hipMemAllocationProp prop = {};
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = 0;
  prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
  size_t gran = 0;
  HIP_CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityMinimum));
  EXPECT(gran >= 4096 && (gran & (gran - 1)) == 0, "granularity %zu", gran);

  // Two chunks of 16 granules each, mapped back to back in a reservation
  // with room for four.
  const size_t chunk = 16 * gran;
  void* base = nullptr;
  HIP_CHECK(hipMemAddressReserve(&base, 4 * chunk, 0, nullptr, 0));
  hipMemGenericAllocationHandle_t h[2];
  for (int i = 0; i < 2; ++i) {
    HIP_CHECK(hipMemCreate(&h[i], chunk, &prop, 0));
    HIP_CHECK(hipMemMap((char*)base + i * chunk, chunk, 0, h[i], 0));
  }
  hipMemAccessDesc rw = {{hipMemLocationTypeDevice, 0}, hipMemAccessFlagsProtReadWrite};
  HIP_CHECK(hipMemSetAccess(base, 2 * chunk, &rw, 1));
  unsigned long long flags = 0;
  hipMemLocation dev0 = {hipMemLocationTypeDevice, 0};
  HIP_CHECK(hipMemGetAccess(&flags, &dev0, (char*)base + chunk + 8));
  EXPECT(flags == hipMemAccessFlagsProtReadWrite, "access %llu", flags);

  // A kernel writes across both chunks; the host reads it back.
  const size_t n = 2 * chunk / sizeof(int);
  int* data = (int*)base;
  stamp<<<(n + 255) / 256, 256>>>(data, 11, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  int* back = new int[n];
  int* want = new int[n];
  for (size_t i = 0; i < n; ++i) want[i] = 11 + (int)i;
  HIP_CHECK(hipMemcpy(back, data, n * sizeof(int), hipMemcpyDeviceToHost));
  expect_equal("across two mapped chunks", back, want, n);

  // The handle behind an address, and its properties.
  hipMemGenericAllocationHandle_t again = nullptr;
  HIP_CHECK(hipMemRetainAllocationHandle(&again, (char*)base + chunk));
  EXPECT(again == h[1], "retained %p, mapped %p", (void*)again, (void*)h[1]);
  HIP_CHECK(hipMemRelease(again));
  hipMemAllocationProp got = {};
  HIP_CHECK(hipMemGetAllocationPropertiesFromHandle(&got, h[0]));
  EXPECT(got.type == hipMemAllocationTypePinned && got.location.id == 0 &&
             got.requestedHandleType == hipMemHandleTypePosixFileDescriptor,
         "properties: type %d device %d handle type %d", (int)got.type, got.location.id,
         (int)got.requestedHandleType);

  // Chunk 1 exported and imported again, mapped at a second address.
  int fd = -1;
  HIP_CHECK(hipMemExportToShareableHandle(&fd, h[1], hipMemHandleTypePosixFileDescriptor, 0));
  EXPECT(fd >= 0, "exported descriptor %d", fd);
  hipMemGenericAllocationHandle_t imported = nullptr;
  HIP_CHECK(hipMemImportFromShareableHandle(&imported, (void*)(uintptr_t)fd,
                                            hipMemHandleTypePosixFileDescriptor));
  close(fd);
  void* view = nullptr;
  HIP_CHECK(hipMemAddressReserve(&view, chunk, 0, nullptr, 0));
  HIP_CHECK(hipMemMap(view, chunk, 0, imported, 0));
  HIP_CHECK(hipMemSetAccess(view, chunk, &rw, 1));
  const size_t m = chunk / sizeof(int);
  HIP_CHECK(hipMemcpy(back, view, m * sizeof(int), hipMemcpyDeviceToHost));
  expect_equal("the imported chunk", back, want + m, m);
  // A write through the second address shows through the first.
  stamp<<<(m + 255) / 256, 256>>>((int*)view, -500, m);
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(back, data + m, m * sizeof(int), hipMemcpyDeviceToHost));
  for (size_t i = 0; i < m; ++i) want[i] = -500 + (int)i;
  expect_equal("written through the import", back, want, m);

  // Bad arguments (CLR's codes).
  hipMemGenericAllocationHandle_t bad = nullptr;
  HIP_EXPECT_ERR(hipMemCreate(&bad, gran + 1, &prop, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemCreate(&bad, chunk, &prop, 1), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemCreate(nullptr, chunk, &prop, 0), hipErrorInvalidValue);
  hipMemAllocationProp wrong = prop;
  wrong.location.id = 5;
  HIP_EXPECT_ERR(hipMemCreate(&bad, chunk, &wrong, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemGetAllocationGranularity(&gran, &wrong, hipMemAllocationGranularityMinimum),
                 hipErrorInvalidValue);
  void* r = nullptr;
  HIP_EXPECT_ERR(hipMemAddressReserve(&r, gran + 1, 0, nullptr, 0), hipErrorOutOfMemory);
  HIP_EXPECT_ERR(hipMemAddressReserve(&r, gran, 3, nullptr, 0), hipErrorOutOfMemory);
  HIP_EXPECT_ERR(hipMemAddressReserve(&r, gran, 0, nullptr, 1), hipErrorInvalidValue);
  // Mapping over a mapped range, at an offset, or a forged handle.
  HIP_EXPECT_ERR(hipMemMap(base, chunk, 0, h[0], 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemMap((char*)base + 2 * chunk, chunk, gran, h[0], 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemMap((char*)base + 2 * chunk, chunk, 0,
                           (hipMemGenericAllocationHandle_t)(uintptr_t)0x4242, 0),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemRelease((hipMemGenericAllocationHandle_t)(uintptr_t)0x4242),
                 hipErrorInvalidValue);
  hipMemAccessDesc far = {{hipMemLocationTypeDevice, 3}, hipMemAccessFlagsProtReadWrite};
  HIP_EXPECT_ERR(hipMemSetAccess(base, chunk, &far, 1), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemImportFromShareableHandle(&bad, (void*)(uintptr_t)987654,
                                                 hipMemHandleTypePosixFileDescriptor),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipMemExportToShareableHandle(&fd, h[0], hipMemHandleTypeNone, 0),
                 hipErrorInvalidValue);
  // A reservation still mapped cannot be freed.
  HIP_EXPECT_ERR(hipMemAddressFree(view, chunk), hipErrorInvalidValue);
  (void)hipGetLastError();

  // Tear down: unmap, release, free.
  HIP_CHECK(hipMemUnmap(view, chunk));
  HIP_CHECK(hipMemRelease(imported));
  HIP_CHECK(hipMemAddressFree(view, chunk));
  for (int i = 0; i < 2; ++i) {
    HIP_CHECK(hipMemUnmap((char*)base + i * chunk, chunk));
    HIP_CHECK(hipMemRelease(h[i]));
  }
  HIP_CHECK(hipMemAddressFree(base, 4 * chunk));
  HIP_EXPECT_ERR(hipMemRelease(h[0]), hipErrorInvalidValue);
  (void)hipGetLastError();
  delete[] back;
  delete[] want;
  return finish();
}
