/* Shared by the C test programs: check HSA calls and expectations, and
 * exit with status 1 and the failing line on the first miss. */

#ifndef SOFTGPU_TEST_HARNESS_H
#define SOFTGPU_TEST_HARNESS_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Runs the tests' `store(global uint *out, uint base)` kernel (out[i] =
 * base + i) over `n` work-items in groups of 64 on `q`: kernarg from
 * `kernarg_pool` with the code object v5 hidden arguments from offset 16
 * (block count, group sizes, remainder, grid dimensions), a packet
 * without the barrier bit. Returns 1 when the dispatch completed, 0 once
 * the queue's error callback stored a status in `fault`. */
static inline int run_store_kernel(hsa_queue_t *q, hsa_amd_memory_pool_t kernarg_pool,
                                   uint64_t object, uint32_t kernarg_size, uint32_t private_size,
                                   uint32_t group_size, hsa_signal_t fault, void *out,
                                   uint32_t base, uint32_t n) {
    void *ka = NULL;
    CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, kernarg_size, 0, &ka));
    memset(ka, 0, kernarg_size);
    memcpy(ka, &out, 8);
    memcpy((uint8_t *)ka + 8, &base, 4);
    uint32_t count = n / 64, ones = 1;
    uint16_t size = 64, rem = (uint16_t)(n % 64), one = 1, dims = 1;
    uint8_t *h = (uint8_t *)ka + 16;
    memcpy(h, &count, 4);
    memcpy(h + 4, &ones, 4);
    memcpy(h + 8, &ones, 4);
    memcpy(h + 12, &size, 2);
    memcpy(h + 14, &one, 2);
    memcpy(h + 16, &one, 2);
    memcpy(h + 18, &rem, 2);
    memcpy(h + 64, &dims, 2);

    hsa_signal_t done = make_signal(1);
    uint64_t index = hsa_queue_add_write_index_relaxed(q, 1);
    hsa_kernel_dispatch_packet_t *p =
        (hsa_kernel_dispatch_packet_t *)q->base_address + (index & (q->size - 1));
    memset((uint8_t *)p + 4, 0, 60);
    p->workgroup_size_x = 64;
    p->workgroup_size_y = p->workgroup_size_z = 1;
    p->grid_size_x = n;
    p->grid_size_y = p->grid_size_z = 1;
    p->kernel_object = object;
    p->kernarg_address = ka;
    p->private_segment_size = private_size;
    p->group_segment_size = group_size;
    p->completion_signal = done;
    uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    __atomic_store_n((uint32_t *)p, header | (1u << 16), __ATOMIC_RELEASE);
    hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
    /* Whichever comes first: completion, or the error callback. */
    hsa_signal_t watch[2] = {done, fault};
    hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_NE};
    hsa_signal_value_t values[2] = {0, 0};
    uint32_t which = hsa_amd_signal_wait_any(2, watch, conds, values, TEN_SECONDS,
                                             HSA_WAIT_STATE_BLOCKED, NULL);
    EXPECT(which == 0 || which == 1);
    CHECK(hsa_signal_destroy(done));
    return which == 0;
}

#endif
