// Stream memory operations and CU-masked streams: a consumer stream held
// back by hipStreamWaitValue32 until a producer stream's
// hipStreamWriteValue32 releases it, 64-bit writes and every wait
// comparison, a stream confined to some compute units, device UUIDs and
// links, and the status codes ROCm's CLR gives bad arguments.
#include "common.h"

#include <unistd.h>

#include <cstdint>

__global__ void add_one(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

static int popcount(uint32_t w) {
  int c = 0;
  for (; w; w &= w - 1) c++;
  return c;
}

int main() {
  const int n = 1024;
  int* data = nullptr;
  uint32_t* flag = nullptr;
  uint64_t* wide = nullptr;
  HIP_CHECK(hipMalloc(&data, n * sizeof(int)));
  HIP_CHECK(hipHostMalloc(&flag, sizeof(uint32_t)));
  HIP_CHECK(hipMalloc(&wide, sizeof(uint64_t)));
  *flag = 0;
  HIP_CHECK(hipMemset(data, 0, n * sizeof(int)));

  hipStream_t producer, consumer;
  HIP_CHECK(hipStreamCreateWithFlags(&producer, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&consumer, hipStreamNonBlocking));

  // The consumer waits for the flag to equal 1, then adds one.
  HIP_CHECK(hipStreamWaitValue32(consumer, flag, 1, hipStreamWaitValueEq, 0xffffffff));
  add_one<<<n / 256, 256, 0, consumer>>>(data, n);
  HIP_CHECK(hipGetLastError());
  usleep(50 * 1000);
  HIP_EXPECT_ERR(hipStreamQuery(consumer), hipErrorNotReady);
  // The producer adds one first, then releases the consumer.
  add_one<<<n / 256, 256, 0, producer>>>(data, n);
  HIP_CHECK(hipStreamWriteValue32(producer, flag, 1, 0));
  HIP_CHECK(hipStreamSynchronize(consumer));
  EXPECT(*flag == 1, "the flag is %u after the producer's write", *flag);
  int back[n], want[n];
  for (int i = 0; i < n; ++i) want[i] = 2;
  HIP_CHECK(hipMemcpy(back, data, sizeof back, hipMemcpyDeviceToHost));
  expect_equal("after producer and consumer", back, want, n);

  // 64-bit writes, then waits whose conditions hold at once.
  const uint64_t big = 0x123456789abcdef0ull;
  HIP_CHECK(hipStreamWriteValue64(producer, wide, big, 0));
  HIP_CHECK(hipStreamWaitValue64(producer, wide, big, hipStreamWaitValueEq, ~0ull));
  // (big & 0xffff) = 0xdef0 >= 0xde00.
  HIP_CHECK(hipStreamWaitValue64(producer, wide, 0xde00, hipStreamWaitValueGte, 0xffff));
  // big & 0xf0 has bit 7 set.
  HIP_CHECK(hipStreamWaitValue64(producer, wide, 0x80, hipStreamWaitValueAnd, 0xff));
  // Bit 0 is clear in both big and the value: ~(big | 0x6) & 0xf != 0.
  HIP_CHECK(hipStreamWaitValue64(producer, wide, 0x6, hipStreamWaitValueNor, 0xf));
  HIP_CHECK(hipStreamWaitValue32(producer, flag, 1, hipStreamWaitValueGte, 0xffffffff));
  HIP_CHECK(hipStreamSynchronize(producer));
  uint64_t got = 0;
  HIP_CHECK(hipMemcpy(&got, wide, sizeof got, hipMemcpyDeviceToHost));
  EXPECT(got == big, "hipStreamWriteValue64 wrote %llx", (unsigned long long)got);

  // Bad arguments (CLR: an invalid stream is hipErrorContextIsDestroyed).
  uint32_t on_stack = 0;
  HIP_EXPECT_ERR(hipStreamWriteValue32(producer, nullptr, 1, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipStreamWriteValue32(producer, &on_stack, 1, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipStreamWaitValue32(producer, flag, 1, 7, 0xffffffff), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipStreamWriteValue64(producer, (char*)wide + 4, 1, 0), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipStreamWriteValue32((hipStream_t)(uintptr_t)0x777, flag, 1, 0),
                 hipErrorContextIsDestroyed);
  (void)hipGetLastError();

  // A stream confined to compute units 0-3.
  hipDeviceProp_t props;
  HIP_CHECK(hipGetDeviceProperties(&props, 0));
  const int units = props.multiProcessorCount;
  const uint32_t words = (units + 31) / 32;
  uint32_t mask[8] = {0xf};
  hipStream_t masked;
  HIP_CHECK(hipExtStreamCreateWithCUMask(&masked, 1, mask));
  uint32_t applied[8] = {0};
  HIP_CHECK(hipExtStreamGetCUMask(masked, words, applied));
  EXPECT(applied[0] == 0xf, "the masked stream's CU mask is %x", applied[0]);
  for (uint32_t w = 1; w < words; ++w) EXPECT(applied[w] == 0, "mask word %u is %x", w, applied[w]);
  add_one<<<n / 256, 256, 0, masked>>>(data, n);
  HIP_CHECK(hipStreamSynchronize(masked));
  for (int i = 0; i < n; ++i) want[i] = 3;
  HIP_CHECK(hipMemcpy(back, data, sizeof back, hipMemcpyDeviceToHost));
  expect_equal("on the masked stream", back, want, n);
  // The null stream has every unit.
  HIP_CHECK(hipExtStreamGetCUMask(nullptr, words, applied));
  int on = 0;
  for (uint32_t w = 0; w < words; ++w) on += popcount(applied[w]);
  EXPECT(on == units, "the null stream has %d of %d units", on, units);
  HIP_EXPECT_ERR(hipExtStreamGetCUMask(masked, 0, applied), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipExtStreamGetCUMask(masked, words, nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipExtStreamCreateWithCUMask(&masked, 0, mask), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipExtStreamCreateWithCUMask(nullptr, 1, mask), hipErrorInvalidHandle);
  // One CU of a WGP pair: gfx11 enables them together.
  mask[0] = 0x1;
  hipStream_t odd;
  HIP_EXPECT_ERR(hipExtStreamCreateWithCUMask(&odd, 1, mask), hipErrorInvalidValue);
  (void)hipGetLastError();
  HIP_CHECK(hipStreamDestroy(masked));

  // UUIDs are stable; links need two devices.
  hipUUID u1, u2;
  HIP_CHECK(hipDeviceGetUuid(&u1, 0));
  HIP_CHECK(hipDeviceGetUuid(&u2, 0));
  EXPECT(memcmp(u1.bytes, u2.bytes, 16) == 0, "the UUID changed between calls");
  int nonzero = 0;
  for (int i = 0; i < 16; ++i) nonzero |= u1.bytes[i];
  EXPECT(nonzero, "the UUID is all zero");
  HIP_EXPECT_ERR(hipDeviceGetUuid(&u1, 3), hipErrorInvalidDevice);
  HIP_EXPECT_ERR(hipDeviceGetUuid(nullptr, 0), hipErrorInvalidValue);
  uint32_t link = 0, hops = 0;
  HIP_EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 0, &link, &hops), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 1, &link, &hops), hipErrorInvalidDevice);
  (void)hipGetLastError();

  HIP_CHECK(hipStreamDestroy(producer));
  HIP_CHECK(hipStreamDestroy(consumer));
  HIP_CHECK(hipFree(data));
  HIP_CHECK(hipHostFree(flag));
  HIP_CHECK(hipFree(wide));
  return finish();
}
