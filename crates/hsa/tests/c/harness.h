/* Shared by the C test programs: check HSA calls and expectations, and
 * exit with status 1 and the failing line on the first miss. */

#ifndef SOFTGPU_TEST_HARNESS_H
#define SOFTGPU_TEST_HARNESS_H

#include <hsa/hsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* A call that must succeed. */
#define CHECK(call)                                                          \
    do {                                                                     \
        hsa_status_t s_ = (call);                                            \
        if (s_ != HSA_STATUS_SUCCESS) {                                      \
            const char *m_ = NULL;                                           \
            hsa_status_string(s_, &m_);                                      \
            fprintf(stderr, "%s:%d: %s returned %#x (%s)\n", __FILE__,       \
                    __LINE__, #call, (unsigned)s_, m_ ? m_ : "?");           \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* A condition that must hold. */
#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__,      \
                    #cond);                                                  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* A call that must return exactly `want`. */
#define EXPECT_STATUS(call, want)                                            \
    do {                                                                     \
        hsa_status_t s_ = (call);                                            \
        if (s_ != (hsa_status_t)(want)) {                                    \
            fprintf(stderr, "%s:%d: %s returned %#x, expected %s (%#x)\n",   \
                    __FILE__, __LINE__, #call, (unsigned)s_, #want,          \
                    (unsigned)(want));                                       \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* 10 s in the system timestamp unit (ns). */
#define TEN_SECONDS 10000000000ull

/* A new signal with value `v` (the test fails if it cannot be made). */
static inline hsa_signal_t make_signal(hsa_signal_value_t v) {
    hsa_signal_t s;
    CHECK(hsa_signal_create(v, 0, NULL, &s));
    return s;
}

static inline void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

#endif
