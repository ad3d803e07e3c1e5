/* Signals through softgpu's libhsa-runtime64.so.1: every operation in every
 * memory order, waits with conditions and timeouts (without burning a
 * core), two threads ping-ponging, async handlers, wait-any, the value
 * pointer, signal groups, and bad handles.
 *
 * Usage: signal SCENARIO
 * Scenarios: ops create wait pingpong handlers waitany valueptr groups
 *            invalid shutdown
 * Prints OK on success; any failed expectation exits with status 1. */

#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"


static double now_s(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static hsa_status_t find_gpu(hsa_agent_t agent, void *data) {
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU) {
        *(hsa_agent_t *)data = agent;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

/* ---------- every operation's arithmetic, in every order ---------- */

typedef void (*update_fn)(hsa_signal_t, hsa_signal_value_t);
typedef hsa_signal_value_t (*exchange_fn)(hsa_signal_t, hsa_signal_value_t);
typedef hsa_signal_value_t (*cas_fn)(hsa_signal_t, hsa_signal_value_t, hsa_signal_value_t);
typedef hsa_signal_value_t (*load_fn)(hsa_signal_t);

/* The seven orders of the read-modify-write families. */
#define ORDERS(op)                                                           \
    {hsa_signal_##op##_relaxed, hsa_signal_##op##_scacquire,                 \
     hsa_signal_##op##_acquire, hsa_signal_##op##_screlease,                 \
     hsa_signal_##op##_release, hsa_signal_##op##_scacq_screl,               \
     hsa_signal_##op##_acq_rel}

static void check_update(const char *name, update_fn const fns[7], hsa_signal_value_t start,
                         hsa_signal_value_t operand, hsa_signal_value_t want) {
    hsa_signal_t s = make_signal(start);
    for (int i = 0; i < 7; i++) {
        hsa_signal_store_relaxed(s, start);
        fns[i](s, operand);
        hsa_signal_value_t got = hsa_signal_load_relaxed(s);
        if (got != want) {
            fprintf(stderr, "%s (order %d): %ld op %ld gave %ld, expected %ld\n", name, i, (long)start,
                    (long)operand, (long)got, (long)want);
            exit(1);
        }
    }
    CHECK(hsa_signal_destroy(s));
}

static void scenario_ops(void) {
    CHECK(hsa_init());
    update_fn add[7] = ORDERS(add), sub[7] = ORDERS(subtract), and_[7] = ORDERS(and),
              or_[7] = ORDERS(or), xor_[7] = ORDERS(xor);
    exchange_fn xchg[7] = ORDERS(exchange);
    cas_fn cas[7] = ORDERS(cas);

    check_update("add", add, 40, 2, 42);
    check_update("add", add, -5, -10, -15);
    check_update("add", add, INT64_MAX, 1, INT64_MIN); /* wraps */
    check_update("subtract", sub, 40, 2, 38);
    check_update("subtract", sub, 0, 1, -1);
    check_update("subtract", sub, INT64_MIN, 1, INT64_MAX);
    check_update("and", and_, 0xff0f, 0x0ff0, 0x0f00);
    check_update("and", and_, -1, 0x1234, 0x1234);
    check_update("or", or_, 0xf000, 0x000f, 0xf00f);
    check_update("or", or_, 0, -2, -2);
    check_update("xor", xor_, 0xff00, 0x0ff0, 0xf0f0);
    check_update("xor", xor_, -1, -1, 0);

    hsa_signal_t s = make_signal(0);
    for (int i = 0; i < 7; i++) {
        hsa_signal_store_relaxed(s, 10 + i);
        EXPECT(xchg[i](s, 100 + i) == 10 + i);
        EXPECT(hsa_signal_load_relaxed(s) == 100 + i);
        /* A failing compare-and-swap returns the value and changes nothing. */
        EXPECT(cas[i](s, 7, 8) == 100 + i);
        EXPECT(hsa_signal_load_relaxed(s) == 100 + i);
        EXPECT(cas[i](s, 100 + i, -3) == 100 + i);
        EXPECT(hsa_signal_load_relaxed(s) == -3);
    }

    /* Loads and stores in every order, including the deprecated names. */
    load_fn loads[3] = {hsa_signal_load_relaxed, hsa_signal_load_scacquire, hsa_signal_load_acquire};
    update_fn stores[5] = {hsa_signal_store_relaxed, hsa_signal_store_screlease, hsa_signal_store_release,
                           hsa_signal_silent_store_relaxed, hsa_signal_silent_store_screlease};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) {
            hsa_signal_value_t v = (hsa_signal_value_t)0x123456789ll * (i + 1) - j;
            stores[i](s, v);
            EXPECT(loads[j](s) == v);
        }
    /* 64-bit values survive. */
    hsa_signal_store_screlease(s, INT64_MIN);
    EXPECT(hsa_signal_load_scacquire(s) == INT64_MIN);
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_shut_down());
}

/* ---------- creation ---------- */

static void scenario_create(void) {
    hsa_signal_t s;
    EXPECT_STATUS(hsa_signal_create(0, 0, NULL, &s), HSA_STATUS_ERROR_NOT_INITIALIZED);
    CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    EXPECT_STATUS(hsa_iterate_agents(find_gpu, &gpu), HSA_STATUS_INFO_BREAK);

    CHECK(hsa_signal_create(7, 1, &gpu, &s));
    EXPECT(s.handle != 0);
    EXPECT(hsa_signal_load_relaxed(s) == 7);
    CHECK(hsa_signal_destroy(s));
    hsa_agent_t bad = {gpu.handle + 12345}, twice[2] = {gpu, gpu};
    EXPECT_STATUS(hsa_signal_create(0, 1, &bad, &s), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_signal_create(0, 2, twice, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_signal_create(0, 1, NULL, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_signal_create(0, 0, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    CHECK(hsa_amd_signal_create(-9, 0, NULL, 0, &s));
    EXPECT(hsa_signal_load_relaxed(s) == -9);
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_amd_signal_create(1, 1, &gpu, HSA_AMD_SIGNAL_AMD_GPU_ONLY, &s));
    EXPECT(hsa_signal_load_relaxed(s) == 1);
    CHECK(hsa_signal_destroy(s));
    /* Interprocess: works as any other (sharing it: tests/c/vmem.c). */
    CHECK(hsa_amd_signal_create(3, 0, NULL, HSA_AMD_SIGNAL_IPC, &s));
    hsa_signal_add_relaxed(s, 4);
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 7, UINT64_MAX,
                                     HSA_WAIT_STATE_BLOCKED) == 7);
    CHECK(hsa_signal_destroy(s));
    EXPECT_STATUS(hsa_amd_signal_create(0, 0, NULL, 0x100, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_signal_create(0, 1, &bad, 0, &s), HSA_STATUS_ERROR_INVALID_AGENT);

    /* Many signals, all distinct. */
    hsa_signal_t many[500];
    for (int i = 0; i < 500; i++) {
        many[i] = make_signal(i);
        EXPECT(i == 0 || many[i].handle != many[i - 1].handle);
    }
    for (int i = 0; i < 500; i++) {
        EXPECT(hsa_signal_load_relaxed(many[i]) == i);
        CHECK(hsa_signal_destroy(many[i]));
    }
    CHECK(hsa_shut_down());
}

/* ---------- waits ---------- */

struct delayed_store {
    hsa_signal_t signal;
    hsa_signal_value_t value;
    int delay_ms;
};

static void *store_later(void *arg) {
    struct delayed_store *d = arg;
    sleep_ms(d->delay_ms);
    hsa_signal_store_screlease(d->signal, d->value);
    return NULL;
}

static void scenario_wait(void) {
    CHECK(hsa_init());
    hsa_signal_t s = make_signal(5);
    /* Conditions that already hold return at once with the value. */
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 5, TEN_SECONDS, HSA_WAIT_STATE_ACTIVE) == 5);
    EXPECT(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_NE, 4, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 5);
    EXPECT(hsa_signal_wait_acquire(s, HSA_SIGNAL_CONDITION_LT, 6, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 5);
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, 5, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 5);
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, -100, 0, HSA_WAIT_STATE_BLOCKED) == 5);

    /* A timeout returns the (unsatisfying) value after about that long,
     * having slept rather than spun. */
    double t0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    hsa_signal_value_t v =
        hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, 300000000ull, HSA_WAIT_STATE_BLOCKED);
    double waited = now_s(CLOCK_MONOTONIC) - t0, cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    EXPECT(v == 5);
    if (waited < 0.29 || waited > 5.0 || cpu > 0.1) {
        fprintf(stderr, "a 300 ms timeout waited %.3f s using %.3f s of CPU\n", waited, cpu);
        exit(1);
    }
    /* An ACTIVE hint may spin a little more, but still sleeps. */
    c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    v = hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_LT, 0, 200000000ull, HSA_WAIT_STATE_ACTIVE);
    EXPECT(v == 5);
    EXPECT(now_s(CLOCK_THREAD_CPUTIME_ID) - c0 < 0.1);

    /* Woken by another thread's store, forever-timeout (UINT64_MAX). */
    struct delayed_store d = {s, 0, 100};
    pthread_t t;
    pthread_create(&t, NULL, store_later, &d);
    t0 = now_s(CLOCK_MONOTONIC);
    c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
    waited = now_s(CLOCK_MONOTONIC) - t0;
    cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    EXPECT(v == 0);
    EXPECT(waited >= 0.09 && waited < 5.0);
    EXPECT(cpu < 0.05);
    pthread_join(t, NULL);

    /* Each condition, satisfied by a later store. */
    hsa_signal_condition_t conds[4] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_NE, HSA_SIGNAL_CONDITION_LT,
                                       HSA_SIGNAL_CONDITION_GTE};
    hsa_signal_value_t compare[4] = {9, 0, -1, 1000}, later[4] = {9, 3, -7, 1001};
    for (int i = 0; i < 4; i++) {
        hsa_signal_store_relaxed(s, 0);
        struct delayed_store ds = {s, later[i], 30};
        pthread_create(&t, NULL, store_later, &ds);
        EXPECT(hsa_signal_wait_scacquire(s, conds[i], compare[i], TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == later[i]);
        pthread_join(t, NULL);
    }
    /* A silent store is seen by a waiter too (within its recheck). */
    hsa_signal_store_relaxed(s, 1);
    hsa_signal_silent_store_screlease(s, 0);
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 0);
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_shut_down());
}

/* ---------- two threads ping-pong ---------- */

#define ROUNDS 2000

static void *pong(void *arg) {
    hsa_signal_t *s = arg; /* s[0]: ping, s[1]: pong */
    for (hsa_signal_value_t i = 1; i <= ROUNDS; i++) {
        hsa_signal_value_t v =
            hsa_signal_wait_scacquire(s[0], HSA_SIGNAL_CONDITION_EQ, i, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED);
        if (v != i) {
            fprintf(stderr, "pong: waited for %ld, saw %ld\n", (long)i, (long)v);
            exit(1);
        }
        hsa_signal_store_screlease(s[1], i);
    }
    return NULL;
}

static void *decrement_many(void *arg) {
    hsa_signal_t *s = arg;
    for (int i = 0; i < 1000; i++)
        hsa_signal_subtract_scacq_screl(*s, 1);
    return NULL;
}

static void scenario_pingpong(void) {
    CHECK(hsa_init());
    hsa_signal_t s[2] = {make_signal(0), make_signal(0)};
    pthread_t t;
    pthread_create(&t, NULL, pong, s);
    for (hsa_signal_value_t i = 1; i <= ROUNDS; i++) {
        hsa_signal_store_screlease(s[0], i);
        hsa_signal_value_t v =
            hsa_signal_wait_scacquire(s[1], HSA_SIGNAL_CONDITION_GTE, i, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED);
        if (v != i) {
            fprintf(stderr, "ping: waited for %ld, saw %ld\n", (long)i, (long)v);
            exit(1);
        }
    }
    pthread_join(t, NULL);
    /* A counter four threads decrement 1000 times each reaches exactly 0,
     * and a waiter on it wakes. */
    hsa_signal_store_relaxed(s[0], 4 * 1000);
    pthread_t workers[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&workers[i], NULL, decrement_many, &s[0]);
    EXPECT(hsa_signal_wait_scacquire(s[0], HSA_SIGNAL_CONDITION_EQ, 0, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(workers[i], NULL);
    EXPECT(hsa_signal_load_relaxed(s[0]) == 0);
    CHECK(hsa_signal_destroy(s[0]));
    CHECK(hsa_signal_destroy(s[1]));
    CHECK(hsa_shut_down());
}

/* ---------- async handlers ---------- */

struct handler_state {
    hsa_signal_t ack;        /* incremented by each call */
    hsa_signal_value_t last; /* value the handler saw */
    int stop_after;
    int calls;
    pthread_t thread;
};

static bool handler(hsa_signal_value_t value, void *arg) {
    struct handler_state *h = arg;
    h->calls++;
    h->last = value;
    h->thread = pthread_self();
    hsa_signal_add_screlease(h->ack, 1);
    return h->calls < h->stop_after;
}

static void async_function(void *arg) {
    handler(0, arg);
}

static void scenario_handlers(void) {
    CHECK(hsa_init());
    hsa_signal_t s = make_signal(0);

    /* One-shot: runs once the condition holds, on the runtime's thread. */
    struct handler_state once = {make_signal(0), 0, 1, 0, 0};
    CHECK(hsa_amd_signal_async_handler(s, HSA_SIGNAL_CONDITION_EQ, 7, handler, &once));
    sleep_ms(30);
    EXPECT(hsa_signal_load_scacquire(once.ack) == 0);
    hsa_signal_store_screlease(s, 7);
    EXPECT(hsa_signal_wait_scacquire(once.ack, HSA_SIGNAL_CONDITION_EQ, 1, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 1);
    EXPECT(once.last == 7);
    EXPECT(!pthread_equal(once.thread, pthread_self()));

    /* Re-armed while it returns true: called again after each change that
     * satisfies the condition, then no more. */
    struct handler_state thrice = {make_signal(0), 0, 3, 0, 0};
    hsa_signal_store_relaxed(s, 0);
    CHECK(hsa_amd_signal_async_handler(s, HSA_SIGNAL_CONDITION_GTE, 1, handler, &thrice));
    for (hsa_signal_value_t i = 1; i <= 3; i++) {
        hsa_signal_store_screlease(s, 10 * i);
        EXPECT(hsa_signal_wait_scacquire(thrice.ack, HSA_SIGNAL_CONDITION_EQ, i, TEN_SECONDS,
                                         HSA_WAIT_STATE_BLOCKED) == i);
        EXPECT(thrice.last == 10 * i);
    }
    hsa_signal_store_screlease(s, 40);
    sleep_ms(150);
    EXPECT(hsa_signal_load_scacquire(thrice.ack) == 3);
    EXPECT(once.calls == 1);

    /* A condition that already holds runs at once. */
    struct handler_state now = {make_signal(0), 0, 1, 0, 0};
    CHECK(hsa_amd_signal_async_handler(s, HSA_SIGNAL_CONDITION_NE, 0, handler, &now));
    EXPECT(hsa_signal_wait_scacquire(now.ack, HSA_SIGNAL_CONDITION_EQ, 1, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 1);
    EXPECT(now.last == 40);

    /* hsa_amd_async_function runs a function once on the same thread. */
    struct handler_state fn = {make_signal(0), 0, 1, 0, 0};
    CHECK(hsa_amd_async_function(async_function, &fn));
    EXPECT(hsa_signal_wait_scacquire(fn.ack, HSA_SIGNAL_CONDITION_EQ, 1, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 1);
    EXPECT(pthread_equal(fn.thread, once.thread));
    sleep_ms(60);
    EXPECT(fn.calls == 1);
    EXPECT_STATUS(hsa_amd_async_function(NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    hsa_signal_t forged = {s.handle ^ (1ull << 33)};
    EXPECT_STATUS(hsa_amd_signal_async_handler(forged, HSA_SIGNAL_CONDITION_EQ, 0, handler, &now),
                  HSA_STATUS_ERROR_INVALID_SIGNAL);
    EXPECT_STATUS(hsa_amd_signal_async_handler(s, HSA_SIGNAL_CONDITION_EQ, 0, NULL, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_signal_async_handler(s, (hsa_signal_condition_t)9, 0, handler, &now),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_shut_down());
}

/* ---------- wait any ---------- */

static void scenario_waitany(void) {
    CHECK(hsa_init());
    hsa_signal_t s[3] = {make_signal(1), make_signal(1), make_signal(1)};
    hsa_signal_condition_t conds[3] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_LT};
    hsa_signal_value_t values[3] = {0, 0, 0};
    hsa_signal_value_t seen = 99;

    /* Nothing holds: a timeout gives UINT32_MAX. */
    double c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    EXPECT(hsa_amd_signal_wait_any(3, s, conds, values, 100000000ull, HSA_WAIT_STATE_BLOCKED, &seen) == UINT32_MAX);
    EXPECT(now_s(CLOCK_THREAD_CPUTIME_ID) - c0 < 0.05);

    /* The third drops below 0 later. */
    struct delayed_store d = {s[2], -4, 50};
    pthread_t t;
    pthread_create(&t, NULL, store_later, &d);
    EXPECT(hsa_amd_signal_wait_any(3, s, conds, values, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED, &seen) == 2);
    EXPECT(seen == -4);
    pthread_join(t, NULL);
    /* Already satisfied; satisfying_value may be NULL. */
    hsa_signal_store_relaxed(s[1], 0);
    uint32_t i = hsa_amd_signal_wait_any(3, s, conds, values, UINT64_MAX, HSA_WAIT_STATE_ACTIVE, NULL);
    EXPECT(i == 1 || i == 2);
    /* Bad arguments are reported and give UINT32_MAX. */
    hsa_signal_t bad[2] = {s[0], {s[0].handle + 77}};
    EXPECT(hsa_amd_signal_wait_any(2, bad, conds, values, 1000, HSA_WAIT_STATE_BLOCKED, &seen) == UINT32_MAX);
    EXPECT(hsa_amd_signal_wait_any(0, s, conds, values, 1000, HSA_WAIT_STATE_BLOCKED, &seen) == UINT32_MAX);
    for (int k = 0; k < 3; k++)
        CHECK(hsa_signal_destroy(s[k]));
    CHECK(hsa_shut_down());
}

/* ---------- value pointer ---------- */

static void scenario_valueptr(void) {
    CHECK(hsa_init());
    hsa_signal_t s = make_signal(11);
    volatile hsa_signal_value_t *p = NULL;
    CHECK(hsa_amd_signal_value_pointer(s, &p));
    EXPECT(p != NULL);
    EXPECT(*p == 11);
    hsa_signal_store_screlease(s, -123456789012ll);
    EXPECT(*p == -123456789012ll);
    hsa_signal_add_relaxed(s, 12);
    EXPECT(*p == -123456789000ll);
    *p = 77; /* a write through the pointer is what loads see */
    EXPECT(hsa_signal_load_scacquire(s) == 77);
    /* ... and what waiters see, at the latest on their recheck. */
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 77, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 77);
    EXPECT_STATUS(hsa_amd_signal_value_pointer(s, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_signal_t forged = {s.handle + 1};
    EXPECT_STATUS(hsa_amd_signal_value_pointer(forged, &p), HSA_STATUS_ERROR_INVALID_SIGNAL);
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_shut_down());
}

/* ---------- signal groups ---------- */

static void scenario_groups(void) {
    CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    EXPECT_STATUS(hsa_iterate_agents(find_gpu, &gpu), HSA_STATUS_INFO_BREAK);
    hsa_signal_t s[2] = {make_signal(1), make_signal(1)};
    hsa_signal_group_t g;
    CHECK(hsa_signal_group_create(2, s, 1, &gpu, &g));
    hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
    hsa_signal_value_t values[2] = {0, 0};
    struct delayed_store d = {s[1], 0, 40};
    pthread_t t;
    pthread_create(&t, NULL, store_later, &d);
    hsa_signal_t which = {0};
    hsa_signal_value_t v = 5;
    CHECK(hsa_signal_group_wait_any_scacquire(g, conds, values, HSA_WAIT_STATE_BLOCKED, &which, &v));
    EXPECT(which.handle == s[1].handle && v == 0);
    pthread_join(t, NULL);
    CHECK(hsa_signal_group_wait_any_relaxed(g, conds, values, HSA_WAIT_STATE_ACTIVE, &which, &v));
    EXPECT(which.handle == s[1].handle);
    EXPECT_STATUS(hsa_signal_group_wait_any_relaxed(g, NULL, values, HSA_WAIT_STATE_ACTIVE, &which, &v),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_signal_t dup[2] = {s[0], s[0]};
    hsa_signal_group_t g2;
    EXPECT_STATUS(hsa_signal_group_create(2, dup, 1, &gpu, &g2), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_signal_group_create(0, s, 1, &gpu, &g2), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_signal_group_destroy(g));
    EXPECT_STATUS(hsa_signal_group_destroy(g), HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
    EXPECT_STATUS(hsa_signal_group_wait_any_relaxed(g, conds, values, HSA_WAIT_STATE_ACTIVE, &which, &v),
                  HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
    CHECK(hsa_shut_down());
}

/* ---------- destroyed and forged handles ---------- */

static void scenario_invalid(void) {
    CHECK(hsa_init());
    hsa_signal_t s = make_signal(3);
    hsa_signal_t forged = {s.handle ^ 0xff00000000ull}, zero = {0};
    CHECK(hsa_signal_destroy(s));
    EXPECT_STATUS(hsa_signal_destroy(s), HSA_STATUS_ERROR_INVALID_SIGNAL);
    EXPECT_STATUS(hsa_signal_destroy(forged), HSA_STATUS_ERROR_INVALID_SIGNAL);
    EXPECT_STATUS(hsa_signal_destroy(zero), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Value-returning and void functions report on stderr and go on. */
    EXPECT(hsa_signal_load_scacquire(s) == 0);
    hsa_signal_store_relaxed(s, 1);
    hsa_signal_add_screlease(forged, 1);
    EXPECT(hsa_signal_exchange_relaxed(s, 5) == 0);
    EXPECT(hsa_signal_cas_scacq_screl(forged, 0, 1) == 0);
    /* A wait on a bad handle returns a value that fails its condition. */
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0);
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) >= 1);
    /* A new signal does not bring the old handle back. */
    hsa_signal_t fresh = make_signal(9);
    EXPECT(fresh.handle != s.handle);
    EXPECT(hsa_signal_load_relaxed(s) == 0);
    EXPECT(hsa_signal_load_relaxed(fresh) == 9);
    CHECK(hsa_shut_down());
    /* After shutdown, even the fresh handle is gone. */
    CHECK(hsa_init());
    EXPECT_STATUS(hsa_signal_destroy(fresh), HSA_STATUS_ERROR_INVALID_SIGNAL);
    CHECK(hsa_shut_down());
}

/* ---------- shutting down ends waits ---------- */

struct shutdown_waiter {
    hsa_signal_t signal;
    hsa_signal_value_t seen;
    int any; /* wait through hsa_amd_signal_wait_any instead */
    uint32_t index;
};

static void *wait_forever(void *arg) {
    struct shutdown_waiter *w = arg;
    if (w->any) {
        hsa_signal_condition_t cond = HSA_SIGNAL_CONDITION_EQ;
        hsa_signal_value_t zero = 0;
        w->index = hsa_amd_signal_wait_any(1, &w->signal, &cond, &zero, UINT64_MAX,
                                           HSA_WAIT_STATE_BLOCKED, &w->seen);
    } else {
        w->seen = hsa_signal_wait_scacquire(w->signal, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                            HSA_WAIT_STATE_BLOCKED);
    }
    return NULL;
}

/* Threads waiting without a timeout on signals nothing will set return
 * when the runtime shuts down, their condition unmet (ROCr would leave
 * them blocked forever). */
static void scenario_shutdown(void) {
    CHECK(hsa_init());
    struct shutdown_waiter w[2] = {{make_signal(7), 0, 0, 0}, {make_signal(7), 0, 1, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, wait_forever, &w[i]);
    /* Let both park. */
    struct timespec nap = {0, 100 * 1000 * 1000};
    nanosleep(&nap, NULL);
    CHECK(hsa_shut_down());
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    for (int i = 0; i < 2; i++) {
        if (pthread_timedjoin_np(t[i], NULL, &deadline) != 0) {
            fprintf(stderr, "waiter %d still blocked 10 s after hsa_shut_down\n", i);
            exit(1);
        }
    }
    EXPECT(w[0].seen == 7);
    EXPECT(w[1].index == UINT32_MAX);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
        return 2;
    }
    const char *s = argv[1];
    if (!strcmp(s, "ops"))
        scenario_ops();
    else if (!strcmp(s, "create"))
        scenario_create();
    else if (!strcmp(s, "wait"))
        scenario_wait();
    else if (!strcmp(s, "pingpong"))
        scenario_pingpong();
    else if (!strcmp(s, "handlers"))
        scenario_handlers();
    else if (!strcmp(s, "waitany"))
        scenario_waitany();
    else if (!strcmp(s, "valueptr"))
        scenario_valueptr();
    else if (!strcmp(s, "groups"))
        scenario_groups();
    else if (!strcmp(s, "invalid"))
        scenario_invalid();
    else if (!strcmp(s, "shutdown"))
        scenario_shutdown();
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    printf("OK %s\n", s);
    return 0;
}
