// Shared checking helpers for the HIP test programs: each program checks
// its results against a host computation, prints PASS and exits 0, or
// prints what was wrong and exits 1.
#pragma once
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static int g_failures = 0;

// A HIP call that must succeed; anything else ends the program.
#define HIP_CHECK(expr)                                                                 \
  do {                                                                                  \
    hipError_t e_ = (expr);                                                             \
    if (e_ != hipSuccess) {                                                             \
      printf("FAIL %s:%d: %s returned %s (%d): %s\n", __FILE__, __LINE__, #expr,        \
             hipGetErrorName(e_), (int)e_, hipGetErrorString(e_));                      \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

// A HIP call that must return `want`.
#define HIP_EXPECT_ERR(expr, want)                                                      \
  do {                                                                                  \
    hipError_t e_ = (expr);                                                             \
    if (e_ != (want)) {                                                                 \
      printf("FAIL %s:%d: %s returned %s (%d), expected %s (%d)\n", __FILE__, __LINE__, \
             #expr, hipGetErrorName(e_), (int)e_, #want, (int)(want));                  \
      g_failures++;                                                                     \
    }                                                                                   \
  } while (0)

// A condition that must hold; the message (printf format and arguments)
// says what was seen. Counting goes on so one run shows every failure.
#define EXPECT(cond, ...)                                                               \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                            \
      printf(__VA_ARGS__);                                                              \
      printf("\n");                                                                     \
      g_failures++;                                                                     \
    }                                                                                   \
  } while (0)

// Compares n values, reporting the first few mismatches.
template <typename T>
static void expect_equal(const char* what, const T* got, const T* want, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(got[i] == want[i])) {
      if (bad < 5)
        printf("FAIL %s[%zu]: got %g, expected %g\n", what, i, (double)got[i], (double)want[i]);
      bad++;
    }
  }
  if (bad) {
    printf("FAIL %s: %zu of %zu values wrong\n", what, bad, n);
    g_failures++;
  }
}

// Ends main: PASS and 0, or the failure count and 1.
static int finish() {
  if (g_failures) {
    printf("%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
