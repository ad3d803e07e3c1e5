// Debian's prebuilt rocRAND 5.3.3 and hipRAND (librocrand1, libhiprand1),
// whose fat binaries carry gfx1030 code objects AMD's build made: this
// program has no kernel of its own, so every kernel that runs is the
// library's. Run on a gfx1030 device.
//
// Philox4x32-10 is checked bit for bit. The host reference follows the
// algorithm's definition (Salmon et al., SC'11: two 32x32->64 multiplies
// by 0xD2511F53 and 0xCD9E8D57 per round, the key bumped by 0x9E3779B9 and
// 0xBB67AE85 between rounds, ten rounds) and is first held to Random123's
// published known-answer vectors (kat_vectors: counter, key -> output).
// rocRAND's host generator writes the stream in counter order whatever
// its grid (each thread discards to its own counter and leaps by the
// grid's width), so value 4m+j of a seed-s stream with offset 0 is word j
// of Philox(counter = m, key = s). The other generators are checked by
// what a correct stream must show: moments of the uniform and normal
// distributions, every value in range, two seeds differ, the same seed
// repeats, and hipRAND's Philox equals rocRAND's.
#include "common.h"

#include <hiprand/hiprand.h>
#include <rocrand/rocrand.h>

#include <cmath>
#include <cstdint>
#include <vector>

#define RR_CHECK(expr)                                                         \
  do {                                                                         \
    rocrand_status s_ = (expr);                                                \
    if (s_ != ROCRAND_STATUS_SUCCESS) {                                        \
      printf("FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #expr, (int)s_); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define HR_CHECK(expr)                                                         \
  do {                                                                         \
    hiprandStatus_t s_ = (expr);                                               \
    if (s_ != HIPRAND_STATUS_SUCCESS) {                                        \
      printf("FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #expr, (int)s_); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

struct Block {
  uint32_t w[4];
};

// One Philox4x32-10 block of `ctr` under `key`.
static Block philox(Block ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = (uint64_t)0xD2511F53u * ctr.w[0];
    uint64_t p1 = (uint64_t)0xCD9E8D57u * ctr.w[2];
    Block next;
    next.w[0] = (uint32_t)(p1 >> 32) ^ ctr.w[1] ^ k0;
    next.w[1] = (uint32_t)p1;
    next.w[2] = (uint32_t)(p0 >> 32) ^ ctr.w[3] ^ k1;
    next.w[3] = (uint32_t)p0;
    ctr = next;
  }
  return ctr;
}

// Random123's kat_vectors for philox4x32 with 10 rounds.
static void known_answers() {
  struct Kat {
    Block ctr;
    uint32_t key[2];
    Block out;
  } kats[] = {
      {{{0, 0, 0, 0}}, {0, 0}, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       {0xffffffff, 0xffffffff},
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       {0xa4093822, 0x299f31d0},
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    Block got = philox(k.ctr, k.key[0], k.key[1]);
    for (int j = 0; j < 4; j++)
      EXPECT(got.w[j] == k.out.w[j], "host Philox word %d is %08x, Random123 says %08x", j,
             got.w[j], k.out.w[j]);
  }
}

// rocRAND's Philox stream of `n` values for `seed` against the reference.
static void philox_stream(unsigned long long seed, size_t n) {
  unsigned* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(unsigned)));
  rocrand_generator g;
  RR_CHECK(rocrand_create_generator(&g, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
  RR_CHECK(rocrand_set_seed(g, seed));
  RR_CHECK(rocrand_generate(g, d, n));
  std::vector<unsigned> got(n);
  HIP_CHECK(hipMemcpy(got.data(), d, n * sizeof(unsigned), hipMemcpyDeviceToHost));
  int bad = 0;
  for (size_t m = 0; 4 * m < n; m++) {
    Block ctr = {{(uint32_t)m, (uint32_t)(m >> 32), 0, 0}};
    Block want = philox(ctr, (uint32_t)seed, (uint32_t)(seed >> 32));
    for (size_t j = 0; j < 4 && 4 * m + j < n; j++) {
      if (got[4 * m + j] != want.w[j] && bad++ < 5)
        printf("FAIL philox seed %llu value %zu: %08x, reference %08x\n", seed, 4 * m + j,
               got[4 * m + j], want.w[j]);
    }
  }
  EXPECT(bad == 0, "%d of %zu Philox values differ from the reference", bad, n);
  RR_CHECK(rocrand_destroy_generator(g));
  HIP_CHECK(hipFree(d));
}

// Mean and variance of `n` floats made by `fill` on the device.
template <typename F>
static void moments(const char* what, size_t n, F fill, double mean, double var, float lo,
                    float hi) {
  float* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(float)));
  fill(d, n);
  std::vector<float> v(n);
  HIP_CHECK(hipMemcpy(v.data(), d, n * sizeof(float), hipMemcpyDeviceToHost));
  double s = 0, s2 = 0;
  size_t out = 0;
  for (float x : v) {
    s += x;
    s2 += (double)x * x;
    out += !(x >= lo && x <= hi);
  }
  double m = s / n, vr = s2 / n - m * m;
  // Standard errors of n samples: sqrt(var/n) for the mean; 6 of them
  // (and 2% of the variance) leave a correct generator a 1e-9 chance.
  EXPECT(std::fabs(m - mean) < 6 * std::sqrt(var / n), "%s: mean %f, expected %f", what, m, mean);
  EXPECT(std::fabs(vr - var) < 0.02 * var, "%s: variance %f, expected %f", what, vr, var);
  EXPECT(out == 0, "%s: %zu values outside [%g, %g]", what, out, lo, hi);
  HIP_CHECK(hipFree(d));
}

static void generators() {
  const rocrand_rng_type types[] = {ROCRAND_RNG_PSEUDO_XORWOW, ROCRAND_RNG_PSEUDO_MRG32K3A,
                                    ROCRAND_RNG_PSEUDO_MTGP32, ROCRAND_RNG_PSEUDO_PHILOX4_32_10,
                                    ROCRAND_RNG_QUASI_SOBOL32};
  const char* names[] = {"xorwow", "mrg32k3a", "mtgp32", "philox", "sobol32"};
  for (int t = 0; t < 5; t++) {
    rocrand_generator g;
    RR_CHECK(rocrand_create_generator(&g, types[t]));
    char what[64];
    snprintf(what, sizeof what, "%s uniform", names[t]);
    moments(what, 1 << 16, [&](float* d, size_t n) { RR_CHECK(rocrand_generate_uniform(g, d, n)); },
            0.5, 1.0 / 12, 0.0f, 1.0f);
    snprintf(what, sizeof what, "%s normal(2, 3)", names[t]);
    moments(what, 1 << 16,
            [&](float* d, size_t n) { RR_CHECK(rocrand_generate_normal(g, d, n, 2.0f, 3.0f)); },
            2.0, 9.0, -1e30f, 1e30f);
    RR_CHECK(rocrand_destroy_generator(g));
  }
}

// hipRAND over rocRAND: its Philox is rocRAND's stream.
static void hiprand_philox(size_t n) {
  unsigned* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(unsigned)));
  hiprandGenerator_t g;
  HR_CHECK(hiprandCreateGenerator(&g, HIPRAND_RNG_PSEUDO_PHILOX4_32_10));
  HR_CHECK(hiprandSetPseudoRandomGeneratorSeed(g, 1234));
  HR_CHECK(hiprandGenerate(g, d, n));
  std::vector<unsigned> got(n);
  HIP_CHECK(hipMemcpy(got.data(), d, n * sizeof(unsigned), hipMemcpyDeviceToHost));
  int bad = 0;
  for (size_t m = 0; 4 * m < n; m++) {
    Block want = philox({{(uint32_t)m, 0, 0, 0}}, 1234, 0);
    for (size_t j = 0; j < 4 && 4 * m + j < n; j++) bad += got[4 * m + j] != want.w[j];
  }
  EXPECT(bad == 0, "hipRAND Philox: %d of %zu values differ from the reference", bad, n);
  HR_CHECK(hiprandDestroyGenerator(g));
  HIP_CHECK(hipFree(d));
}

int main() {
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  printf("device %s\n", p.gcnArchName);
  known_answers();
  philox_stream(0, 1 << 16);
  philox_stream(0xdeadbeefcafef00dull, 100003);  // odd length: the tail path
  generators();
  hiprand_philox(4096);
  return finish();
}
