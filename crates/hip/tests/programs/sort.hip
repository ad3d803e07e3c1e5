// Sample: bitonic sort of key/value pairs, one kernel launch per merge
// step (log2(n)^2/2 launches on one stream, as GPU sorts do), for 32-bit
// keys with duplicates and a payload that must follow its key; checked
// against std::sort on the keys (the payload records the original
// index, so each pair must match an input pair).
#include "common.h"

#include <algorithm>
#include <vector>

template <typename K, typename V>
__global__ void bitonic_step(K* keys, V* vals, unsigned j, unsigned k) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned partner = i ^ j;
  if (partner <= i) return;
  bool up = (i & k) == 0;
  K a = keys[i], b = keys[partner];
  if ((a > b) == up) {
    keys[i] = b;
    keys[partner] = a;
    V t = vals[i];
    vals[i] = vals[partner];
    vals[partner] = t;
  }
}

int main() {
  const unsigned n = 1 << 14;
  std::vector<unsigned> keys(n), vals(n);
  unsigned s = 7;
  for (unsigned i = 0; i < n; ++i) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    keys[i] = s % 5000;  // duplicates on purpose
    vals[i] = i;
  }
  unsigned *dk, *dv;
  HIP_CHECK(hipMalloc(&dk, n * sizeof(unsigned)));
  HIP_CHECK(hipMalloc(&dv, n * sizeof(unsigned)));
  HIP_CHECK(hipMemcpy(dk, keys.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dv, vals.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
  int launches = 0;
  for (unsigned k = 2; k <= n; k <<= 1)
    for (unsigned j = k >> 1; j > 0; j >>= 1, ++launches)
      bitonic_step<unsigned, unsigned><<<n / 256, 256>>>(dk, dv, j, k);
  HIP_CHECK(hipGetLastError());
  std::vector<unsigned> gk(n), gv(n);
  HIP_CHECK(hipMemcpy(gk.data(), dk, n * sizeof(unsigned), hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(gv.data(), dv, n * sizeof(unsigned), hipMemcpyDeviceToHost));
  EXPECT(launches == 105, "%d launches", launches);  // 14 * 15 / 2
  std::vector<unsigned> want = keys;
  std::sort(want.begin(), want.end());
  expect_equal("keys", gk.data(), want.data(), n);
  int lost = 0;
  std::vector<bool> seen(n, false);
  for (unsigned i = 0; i < n; ++i) {
    if (gv[i] >= n || seen[gv[i]] || keys[gv[i]] != gk[i]) lost++;
    else seen[gv[i]] = true;
  }
  EXPECT(lost == 0, "%d payloads do not follow their key", lost);
  HIP_CHECK(hipFree(dk));
  HIP_CHECK(hipFree(dv));
  return finish();
}
