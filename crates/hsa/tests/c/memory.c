/* Memory through softgpu's libhsa-runtime64.so.1: regions and pools with
 * their attributes, allocation and its failures, copies (synchronous,
 * asynchronous with dependencies, 3-D pitched), fills, host locking and
 * registration (used by a kernel), pointer info, access control and
 * deallocation notifiers.
 *
 * Usage: memory SCENARIO KERNELS.hsaco
 * Scenarios: pools alloc copy async rect fill lock pointerinfo dealloc
 *            access
 * Prints OK on success; any failed expectation exits with status 1. */

#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include <sys/mman.h>

#define GRANULE 4096

/* ---------- agents and pools ---------- */

typedef struct {
    hsa_agent_t cpu, gpu;
    int agents;
} agents_t;

static hsa_status_t collect_agent(hsa_agent_t agent, void *data) {
    agents_t *a = data;
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_CPU)
        a->cpu = agent;
    else if (type == HSA_DEVICE_TYPE_GPU && a->gpu.handle == 0)
        a->gpu = agent;
    a->agents++;
    return HSA_STATUS_SUCCESS;
}

#define MAX_POOLS 16
typedef struct {
    hsa_amd_memory_pool_t pool[MAX_POOLS];
    int count;
} pools_t;

static hsa_status_t collect_pool(hsa_amd_memory_pool_t pool, void *data) {
    pools_t *p = data;
    EXPECT(p->count < MAX_POOLS);
    p->pool[p->count++] = pool;
    return HSA_STATUS_SUCCESS;
}

typedef struct {
    hsa_region_t region[MAX_POOLS];
    int count;
} regions_t;

static hsa_status_t collect_region(hsa_region_t region, void *data) {
    regions_t *r = data;
    EXPECT(r->count < MAX_POOLS);
    r->region[r->count++] = region;
    return HSA_STATUS_SUCCESS;
}

static uint32_t pool_flags(hsa_amd_memory_pool_t pool) {
    uint32_t flags = 0;
    hsa_amd_segment_t segment;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    if (segment != HSA_AMD_SEGMENT_GLOBAL)
        return 0;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    return flags;
}

/* The first pool of `agent` whose global flags are exactly `flags`. */
static hsa_amd_memory_pool_t pool_exactly(hsa_agent_t agent, uint32_t flags) {
    pools_t p = {{{0}}, 0};
    CHECK(hsa_amd_agent_iterate_memory_pools(agent, collect_pool, &p));
    for (int i = 0; i < p.count; i++)
        if (pool_flags(p.pool[i]) == flags)
            return p.pool[i];
    fprintf(stderr, "no pool with flags %#x\n", flags);
    exit(1);
}

static hsa_amd_memory_pool_t group_pool(hsa_agent_t agent) {
    pools_t p = {{{0}}, 0};
    CHECK(hsa_amd_agent_iterate_memory_pools(agent, collect_pool, &p));
    for (int i = 0; i < p.count; i++) {
        hsa_amd_segment_t segment;
        CHECK(hsa_amd_memory_pool_get_info(p.pool[i], HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
        if (segment == HSA_AMD_SEGMENT_GROUP)
            return p.pool[i];
    }
    fprintf(stderr, "no group pool\n");
    exit(1);
}

typedef struct {
    agents_t a;
    hsa_amd_memory_pool_t fine, kernarg, coarse, group;
} env_t;

static env_t setup(void) {
    env_t e;
    memset(&e, 0, sizeof e);
    CHECK(hsa_init());
    CHECK(hsa_iterate_agents(collect_agent, &e.a));
    EXPECT(e.a.cpu.handle != 0 && e.a.gpu.handle != 0);
    e.fine = pool_exactly(e.a.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
    e.kernarg = pool_exactly(e.a.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED |
                                          HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT);
    e.coarse = pool_exactly(e.a.gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
    e.group = group_pool(e.a.gpu);
    return e;
}

static void *pool_alloc(hsa_amd_memory_pool_t pool, size_t bytes) {
    void *p = NULL;
    CHECK(hsa_amd_memory_pool_allocate(pool, bytes, 0, &p));
    EXPECT(p != NULL);
    return p;
}

/* ---------- pools and regions ---------- */

static void check_global_pool(hsa_amd_memory_pool_t pool, uint32_t want_flags) {
    uint32_t flags = 0;
    size_t size = 0, granule = 0, align = 0, max = 0;
    bool alloc = false, all = false;
    hsa_amd_segment_t segment;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    EXPECT(segment == HSA_AMD_SEGMENT_GLOBAL);
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    EXPECT(flags == want_flags);
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size));
    EXPECT(size >= (64u << 20));
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
    EXPECT(alloc);
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE, &granule));
    EXPECT(granule == GRANULE);
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT, &align));
    EXPECT(align == GRANULE);
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, &all));
    EXPECT(all);
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE, &max));
    EXPECT(max == size);
}

static hsa_status_t stop_at_first(hsa_amd_memory_pool_t pool, void *data) {
    (*(int *)data)++;
    (void)pool;
    return HSA_STATUS_INFO_BREAK;
}

static void scenario_pools(void) {
    env_t e = setup();
    pools_t cpu = {{{0}}, 0}, gpu = {{{0}}, 0};
    CHECK(hsa_amd_agent_iterate_memory_pools(e.a.cpu, collect_pool, &cpu));
    CHECK(hsa_amd_agent_iterate_memory_pools(e.a.gpu, collect_pool, &gpu));
    /* The CPU agent's pools as ROCr lists them (CpuAgent::InitRegionList):
     * fine, extended-scope fine (ROCm 6's flag 8), kernarg and
     * coarse-grained system memory, the three system pools one heap. */
    EXPECT(cpu.count == 4);
    EXPECT(gpu.count == 2);
    hsa_amd_memory_pool_t ext_fine = pool_exactly(e.a.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED | 8);
    hsa_amd_memory_pool_t cpu_coarse = pool_exactly(e.a.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
    check_global_pool(ext_fine, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED | 8);
    check_global_pool(cpu_coarse, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
    size_t fine_size = 0, coarse_size = 0;
    CHECK(hsa_amd_memory_pool_get_info(e.fine, HSA_AMD_MEMORY_POOL_INFO_SIZE, &fine_size));
    CHECK(hsa_amd_memory_pool_get_info(cpu_coarse, HSA_AMD_MEMORY_POOL_INFO_SIZE, &coarse_size));
    EXPECT(fine_size == coarse_size);
    /* One heap: what the coarse pool holds, the fine pool cannot give. */
    void *most = NULL, *more = NULL;
    CHECK(hsa_amd_memory_pool_allocate(cpu_coarse, coarse_size - GRANULE, 0, &most));
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.fine, 2 * GRANULE, 0, &more),
                  HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK(hsa_amd_memory_pool_free(most));
    CHECK(hsa_amd_memory_pool_allocate(e.fine, 2 * GRANULE, 0, &more));
    CHECK(hsa_amd_memory_pool_free(more));
    check_global_pool(e.fine, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
    check_global_pool(e.kernarg, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED |
                                     HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT);
    check_global_pool(e.coarse, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);

    /* The group segment: the LDS, reported but not allocatable. */
    size_t lds = 0, max = 0;
    bool alloc = true, all = true;
    CHECK(hsa_amd_memory_pool_get_info(e.group, HSA_AMD_MEMORY_POOL_INFO_SIZE, &lds));
    EXPECT(lds == 65536);
    CHECK(hsa_amd_memory_pool_get_info(e.group, HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE, &max));
    EXPECT(max == lds);
    CHECK(hsa_amd_memory_pool_get_info(e.group, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
    EXPECT(!alloc);
    CHECK(hsa_amd_memory_pool_get_info(e.group, HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, &all));
    EXPECT(!all);

    /* Agent access: global memory everywhere, the LDS only from its GPU. */
    hsa_amd_memory_pool_access_t access;
    uint32_t hops = 99;
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.gpu, e.coarse, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
    EXPECT(access == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.gpu, e.coarse, HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, &hops));
    EXPECT(hops == 0);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.gpu, e.fine, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
    EXPECT(access == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.gpu, e.fine, HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, &hops));
    EXPECT(hops == 1);
    hsa_amd_memory_pool_link_info_t link;
    memset(&link, 0, sizeof link);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.gpu, e.fine, HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO, &link));
    EXPECT(link.atomic_support_32bit && link.atomic_support_64bit && link.coherent_support);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.cpu, e.coarse, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
    EXPECT(access == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.cpu, e.group, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
    EXPECT(access == HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.cpu, e.group, HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, &hops));
    EXPECT(hops == 0);
    CHECK(hsa_amd_agent_memory_pool_get_info(e.a.gpu, e.group, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
    EXPECT(access == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);

    /* A callback's non-success status stops the walk and is returned. */
    int calls = 0;
    EXPECT_STATUS(hsa_amd_agent_iterate_memory_pools(e.a.cpu, stop_at_first, &calls), HSA_STATUS_INFO_BREAK);
    EXPECT(calls == 1);
    EXPECT_STATUS(hsa_amd_agent_iterate_memory_pools(e.a.cpu, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* Legacy regions: the same memory. The GPU agent also lists the system
     * regions, the CPU agent only its own. */
    regions_t rc = {{{0}}, 0}, rg = {{{0}}, 0};
    CHECK(hsa_agent_iterate_regions(e.a.cpu, collect_region, &rc));
    CHECK(hsa_agent_iterate_regions(e.a.gpu, collect_region, &rg));
    EXPECT(rc.count == 4);
    EXPECT(rg.count == 6);
    int kernarg_regions = 0, coarse_regions = 0, group_regions = 0;
    for (int i = 0; i < rg.count; i++) {
        hsa_region_t r = rg.region[i];
        hsa_region_segment_t segment;
        uint32_t flags = 0;
        size_t size = 0, max = 0, granule = 0, align = 0;
        bool alloc = false, host = false;
        void *base = NULL;
        CHECK(hsa_region_get_info(r, HSA_REGION_INFO_SEGMENT, &segment));
        CHECK(hsa_region_get_info(r, HSA_REGION_INFO_SIZE, &size));
        CHECK(hsa_region_get_info(r, HSA_REGION_INFO_ALLOC_MAX_SIZE, &max));
        CHECK(hsa_region_get_info(r, HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
        CHECK(hsa_region_get_info(r, HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE, &granule));
        CHECK(hsa_region_get_info(r, HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT, &align));
        CHECK(hsa_region_get_info(r, (hsa_region_info_t)HSA_AMD_REGION_INFO_HOST_ACCESSIBLE, &host));
        CHECK(hsa_region_get_info(r, (hsa_region_info_t)HSA_AMD_REGION_INFO_BASE, &base));
        EXPECT(size > 0 && max == size);
        if (segment == HSA_REGION_SEGMENT_GROUP) {
            group_regions++;
            EXPECT(!alloc && !host && size == 65536);
            continue;
        }
        EXPECT(segment == HSA_REGION_SEGMENT_GLOBAL);
        EXPECT(alloc && host && base != NULL && granule == GRANULE && align == GRANULE);
        CHECK(hsa_region_get_info(r, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
        if (flags & HSA_REGION_GLOBAL_FLAG_KERNARG) {
            kernarg_regions++;
            EXPECT(flags & HSA_REGION_GLOBAL_FLAG_FINE_GRAINED);
            EXPECT(r.handle == e.kernarg.handle);
        }
        if (flags & HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED) {
            coarse_regions++;
            EXPECT(r.handle == e.coarse.handle || r.handle == cpu_coarse.handle);
            EXPECT(!(flags & HSA_REGION_GLOBAL_FLAG_FINE_GRAINED));
        }
    }
    EXPECT(kernarg_regions == 1 && coarse_regions == 2 && group_regions == 1);
    uint32_t private_wg = 0;
    CHECK(hsa_region_get_info(rg.region[0], HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE, &private_wg));
    EXPECT(private_wg >= 65536);

    /* Bad handles and attributes. */
    size_t size;
    hsa_region_t bad_region = {e.fine.handle + 1000};
    hsa_amd_memory_pool_t bad_pool = {e.fine.handle + 1000};
    EXPECT_STATUS(hsa_region_get_info(bad_region, HSA_REGION_INFO_SIZE, &size), HSA_STATUS_ERROR_INVALID_REGION);
    EXPECT_STATUS(hsa_amd_memory_pool_get_info(bad_pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size),
                  HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
    EXPECT_STATUS(hsa_amd_memory_pool_get_info(e.fine, (hsa_amd_memory_pool_info_t)12345, &size),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_region_get_info(rc.region[0], (hsa_region_info_t)3, &size), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_pool_get_info(e.fine, HSA_AMD_MEMORY_POOL_INFO_SIZE, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_agent_t bad_agent = {e.a.gpu.handle + 77};
    EXPECT_STATUS(hsa_amd_agent_iterate_memory_pools(bad_agent, collect_pool, &cpu), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_agent_iterate_regions(bad_agent, collect_region, &rc), HSA_STATUS_ERROR_INVALID_AGENT);
    CHECK(hsa_shut_down());
    EXPECT_STATUS(hsa_amd_memory_pool_get_info(e.fine, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
}

/* ---------- allocation ---------- */

static void scenario_alloc(void) {
    env_t e = setup();
    hsa_region_t kernarg_region = {e.kernarg.handle};
    /* A queue in between makes the arena's own allocations unaligned. */
    hsa_queue_t *q = NULL;
    CHECK(hsa_queue_create(e.a.gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
    void *ptrs[6];
    size_t sizes[6] = {1, 100, 4096, 5000, 1 << 20, 3};
    hsa_amd_memory_pool_t from[3] = {e.fine, e.kernarg, e.coarse};
    for (int i = 0; i < 6; i++) {
        ptrs[i] = pool_alloc(from[i % 3], sizes[i]);
        EXPECT(((uintptr_t)ptrs[i] % GRANULE) == 0);
        memset(ptrs[i], 0xa5, sizes[i]); /* all memory is host-visible */
        for (int j = 0; j < i; j++)
            EXPECT(ptrs[i] != ptrs[j]);
    }
    void *k = NULL;
    CHECK(hsa_memory_allocate(kernarg_region, 256, &k));
    EXPECT(((uintptr_t)k % GRANULE) == 0);
    CHECK(hsa_memory_free(k));
    for (int i = 0; i < 6; i++)
        CHECK(hsa_amd_memory_pool_free(ptrs[i]));

    /* Freeing twice, or something never allocated. */
    EXPECT_STATUS(hsa_amd_memory_pool_free(ptrs[0]), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_memory_free(k), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    int local;
    EXPECT_STATUS(hsa_amd_memory_pool_free(&local), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    CHECK(hsa_memory_free(NULL));

    /* Bad requests. */
    void *p = NULL;
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.fine, 0, 0, &p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.fine, 64, 0, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Bit 3 is no hsa_amd_memory_pool_flag_t (PCIE, CONTIGUOUS and
     * EXECUTABLE are bits 0-2: tests/rocm6.rs covers them). */
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.fine, 64, 1u << 3, &p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.group, 64, 0, &p), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    hsa_amd_memory_pool_t bad_pool = {12345};
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(bad_pool, 64, 0, &p), HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
    hsa_region_t bad_region = {12345};
    EXPECT_STATUS(hsa_memory_allocate(bad_region, 64, &p), HSA_STATUS_ERROR_INVALID_REGION);
    EXPECT_STATUS(hsa_memory_allocate(kernarg_region, 0, &p), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* More than the pool holds is an invalid allocation (hsa.h); more than
     * is left right now runs out of resources, through either API. (The big
     * blocks are placed in fresh arena space and never reused, so the
     * arena has nothing to clear.) */
    size_t size = 0, kernarg_size = 0;
    CHECK(hsa_amd_memory_pool_get_info(e.coarse, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size));
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.coarse, size + 1, 0, &p), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    hsa_region_t coarse_region = {e.coarse.handle};
    EXPECT_STATUS(hsa_memory_allocate(coarse_region, size + 1, &p), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    void *big = NULL;
    CHECK(hsa_memory_allocate(coarse_region, size / 2 + size / 8, &big));
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.coarse, size / 2, 0, &p), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    EXPECT_STATUS(hsa_memory_allocate(coarse_region, size / 2, &p), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK(hsa_region_get_info(kernarg_region, HSA_REGION_INFO_SIZE, &kernarg_size));
    void *most = NULL;
    CHECK(hsa_memory_allocate(kernarg_region, kernarg_size - GRANULE, &most));
    EXPECT_STATUS(hsa_memory_allocate(kernarg_region, 2 * GRANULE, &p), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.kernarg, 2 * GRANULE, 0, &p), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    /* Another pool is not affected. */
    void *other = pool_alloc(e.fine, 2 * GRANULE);
    CHECK(hsa_amd_memory_pool_free(other));
    /* The space comes back after a free. */
    CHECK(hsa_memory_free(most));
    CHECK(hsa_memory_allocate(kernarg_region, 2 * GRANULE, &p));
    CHECK(hsa_memory_free(p));
    CHECK(hsa_memory_free(big));

    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_shut_down());
}

/* ---------- copies ---------- */

static void scenario_copy(void) {
    env_t e = setup();
    const size_t n = 10000;
    uint8_t *host = malloc(n), *back = malloc(n);
    for (size_t i = 0; i < n; i++)
        host[i] = (uint8_t)(i * 7 + 3);
    uint8_t *dev = pool_alloc(e.coarse, n), *dev2 = pool_alloc(e.fine, n);
    CHECK(hsa_memory_copy(dev, host, n));       /* host to device */
    CHECK(hsa_memory_copy(dev2, dev, n));       /* device to device */
    memset(back, 0, n);
    CHECK(hsa_memory_copy(back, dev2, n));      /* device to host */
    EXPECT(memcmp(back, host, n) == 0);
    CHECK(hsa_memory_copy(back, host, 0));
    EXPECT_STATUS(hsa_memory_copy(NULL, host, n), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_memory_copy(back, NULL, n), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Past the end of a device allocation (it holds 12288 bytes). */
    EXPECT_STATUS(hsa_memory_copy(dev + 8192, host, 8192), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Wild host pointers on either side, and a read-only destination: an
     * error, never a crash; the device side is left as it was. */
    static const uint8_t constant[64] = {1};
    uint8_t *wild[] = {(uint8_t *)0x1000, (uint8_t *)0xdeadbeef000ull};
    for (int w = 0; w < 2; w++) {
        EXPECT_STATUS(hsa_memory_copy(dev, wild[w], 64), HSA_STATUS_ERROR_INVALID_ARGUMENT);
        EXPECT_STATUS(hsa_memory_copy(wild[w], dev, 64), HSA_STATUS_ERROR_INVALID_ARGUMENT);
        EXPECT_STATUS(hsa_memory_copy(back, wild[w], n), HSA_STATUS_ERROR_INVALID_ARGUMENT);
        EXPECT_STATUS(hsa_memory_copy(wild[w], host, n), HSA_STATUS_ERROR_INVALID_ARGUMENT);
        /* ROCr: a fill target it did not allocate or lock. */
        EXPECT_STATUS(hsa_amd_memory_fill(wild[w], 7, 16), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    }
    EXPECT_STATUS(hsa_memory_copy((void *)constant, dev, 64), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT(constant[0] == 1 && constant[1] == 0);
    memset(back, 0, n);
    CHECK(hsa_memory_copy(back, dev, n));
    EXPECT(memcmp(back, host, n) == 0);
    CHECK(hsa_amd_memory_pool_free(dev));
    /* A freed device buffer. */
    EXPECT_STATUS(hsa_memory_copy(dev, host, 16), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_memory_pool_free(dev2));
    free(host);
    free(back);
    CHECK(hsa_shut_down());
}

struct later {
    hsa_signal_t signal;
    uint8_t *data;
    size_t n;
    int delay_ms;
};

static void *fill_then_signal(void *arg) {
    struct later *l = arg;
    sleep_ms(l->delay_ms);
    for (size_t i = 0; i < l->n; i++)
        l->data[i] = (uint8_t)(255 - i % 251);
    hsa_signal_subtract_screlease(l->signal, 1);
    return NULL;
}

static void scenario_async(void) {
    env_t e = setup();
    const size_t n = 1 << 16;
    uint8_t *src = pool_alloc(e.fine, n), *dst = pool_alloc(e.coarse, n), *host = malloc(n);
    memset(src, 0, n);
    memset(dst, 0, n);
    CHECK(hsa_amd_profiling_async_copy_enable(true));

    /* The copy waits for its dependency, which another thread drops after
     * writing the source. */
    hsa_signal_t dep = make_signal(1), done = make_signal(1);
    CHECK(hsa_amd_memory_async_copy(dst, e.a.gpu, src, e.a.cpu, n, 1, &dep, done));
    struct later l = {dep, src, n, 300};
    pthread_t t;
    pthread_create(&t, NULL, fill_then_signal, &l);
    sleep_ms(30);
    EXPECT(hsa_signal_load_scacquire(done) == 1); /* still waiting */
    EXPECT(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 0);
    pthread_join(t, NULL);
    for (size_t i = 0; i < n; i++)
        EXPECT(dst[i] == (uint8_t)(255 - i % 251));
    hsa_amd_profiling_async_copy_time_t times;
    CHECK(hsa_amd_profiling_get_async_copy_time(done, &times));
    EXPECT(times.start != 0 && times.end >= times.start);

    /* Device to host with no dependencies; a chain of two copies. */
    hsa_signal_t first = make_signal(1), second = make_signal(1);
    uint8_t *mid = pool_alloc(e.fine, n);
    CHECK(hsa_amd_memory_async_copy(mid, e.a.cpu, dst, e.a.gpu, n, 0, NULL, first));
    CHECK(hsa_amd_memory_async_copy(host, e.a.cpu, mid, e.a.cpu, n, 1, &first, second));
    EXPECT(hsa_signal_wait_scacquire(second, HSA_SIGNAL_CONDITION_EQ, 0, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 0);
    EXPECT(memcmp(host, dst, n) == 0);

    /* Size 0 copies nothing and still completes. */
    hsa_signal_store_relaxed(done, 1);
    CHECK(hsa_amd_memory_async_copy(dst, e.a.gpu, src, e.a.cpu, 0, 0, NULL, done));
    EXPECT(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 0);

    /* Refused before anything happens. */
    hsa_signal_store_relaxed(done, 1);
    hsa_signal_t zero = {0}, forged = {done.handle ^ (1ull << 40)};
    hsa_agent_t bad_agent = {4242};
    EXPECT_STATUS(hsa_amd_memory_async_copy(dst, e.a.gpu, src, e.a.cpu, n, 0, NULL, zero),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy(dst, e.a.gpu, src, e.a.cpu, n, 0, NULL, forged),
                  HSA_STATUS_ERROR_INVALID_SIGNAL);
    EXPECT_STATUS(hsa_amd_memory_async_copy(dst, bad_agent, src, e.a.cpu, n, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy(dst, e.a.gpu, src, e.a.cpu, n, 1, &forged, done),
                  HSA_STATUS_ERROR_INVALID_SIGNAL);
    EXPECT_STATUS(hsa_amd_memory_async_copy(dst, e.a.gpu, src, e.a.cpu, n, 1, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy(NULL, e.a.gpu, src, e.a.cpu, n, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy(dst + 4096, e.a.gpu, src, e.a.cpu, n, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Wild host pointers on either side are refused by the call. */
    EXPECT_STATUS(hsa_amd_memory_async_copy(dst, e.a.gpu, (void *)0x1000, e.a.cpu, n, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy((void *)0xdeadbeef000ull, e.a.cpu, src, e.a.gpu, n, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT(hsa_signal_load_relaxed(done) == 1);

    CHECK(hsa_amd_profiling_async_copy_enable(false));
    free(host);
    CHECK(hsa_shut_down());
}

/* ---------- 3-D pitched copy ---------- */

static void scenario_rect(void) {
    env_t e = setup();
    /* Source: 4 layers of 10 rows of 64 bytes; copy a 3x5x20-byte box at
     * (8, 2, 1) to (4, 1, 0) in a destination of 3 layers of 8 rows of 32. */
    const size_t sp = 64, ss = 64 * 10, dp = 32, ds = 32 * 8;
    uint8_t *src = pool_alloc(e.fine, ss * 4), *dst = pool_alloc(e.coarse, ds * 3);
    for (size_t i = 0; i < ss * 4; i++)
        src[i] = (uint8_t)(i * 13 + 1);
    memset(dst, 0, ds * 3);
    hsa_pitched_ptr_t s = {src, sp, ss}, d = {dst, dp, ds};
    hsa_dim3_t so = {8, 2, 1}, dof = {4, 1, 0}, range = {20, 5, 3};
    hsa_signal_t dep = make_signal(0), done = make_signal(1);
    CHECK(hsa_amd_memory_async_copy_rect(&d, &dof, &s, &so, &range, e.a.gpu, hsaHostToDevice, 1, &dep, done));
    EXPECT(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED) == 0);
    for (size_t z = 0; z < 3; z++)
        for (size_t y = 0; y < 8; y++)
            for (size_t x = 0; x < 32; x++) {
                int inside = x >= 4 && x < 24 && y >= 1 && y < 6;
                uint8_t want = inside ? src[(z + 1) * ss + (y - 1 + 2) * sp + (x - 4 + 8)] : 0;
                if (dst[z * ds + y * dp + x] != want) {
                    fprintf(stderr, "dst[%zu][%zu][%zu] = %u, expected %u\n", z, y, x,
                            dst[z * ds + y * dp + x], want);
                    exit(1);
                }
            }
    /* A box that does not fit its pitch, a layer past the end, a CPU copy
     * agent, unaligned pitches. */
    hsa_signal_store_relaxed(done, 1);
    hsa_dim3_t wide = {30, 1, 1}, deep = {4, 4, 20}; /* 20 layers leave both 4 KiB blocks */
    EXPECT_STATUS(hsa_amd_memory_async_copy_rect(&d, &dof, &s, &so, &wide, e.a.gpu, hsaHostToDevice, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_rect(&d, &dof, &s, &so, &deep, e.a.gpu, hsaHostToDevice, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_rect(&d, &dof, &s, &so, &range, e.a.cpu, hsaHostToDevice, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    hsa_pitched_ptr_t odd = {dst, 30, ds};
    EXPECT_STATUS(hsa_amd_memory_async_copy_rect(&odd, &dof, &s, &so, &range, e.a.gpu, hsaHostToDevice, 0, NULL, done),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT(hsa_signal_load_relaxed(done) == 1);
    CHECK(hsa_shut_down());
}

/* ---------- fill ---------- */

static void scenario_fill(void) {
    env_t e = setup();
    uint32_t *p = pool_alloc(e.coarse, 1000 * 4);
    memset(p, 0, 1000 * 4);
    CHECK(hsa_amd_memory_fill(p + 10, 0xdeadbeefu, 500));
    for (int i = 0; i < 1000; i++)
        EXPECT(p[i] == ((i >= 10 && i < 510) ? 0xdeadbeefu : 0));
    CHECK(hsa_amd_memory_fill(p, 7, 0));
    EXPECT(p[0] == 0);
    EXPECT_STATUS(hsa_amd_memory_fill((uint8_t *)p + 2, 1, 4), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_fill(NULL, 1, 4), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Beyond the allocation (4096 bytes), and memory the runtime never saw. */
    EXPECT_STATUS(hsa_amd_memory_fill(p, 1, 1025), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    uint32_t *host = malloc(64);
    EXPECT_STATUS(hsa_amd_memory_fill(host, 1, 16), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    /* Locked host memory is the runtime's to fill. */
    void *agent_ptr = NULL;
    CHECK(hsa_amd_memory_lock(host, 64, NULL, 0, &agent_ptr));
    CHECK(hsa_amd_memory_fill(agent_ptr, 0x01020304u, 16));
    for (int i = 0; i < 16; i++)
        EXPECT(host[i] == 0x01020304u);
    CHECK(hsa_amd_memory_unlock(host));
    free(host);
    CHECK(hsa_shut_down());
}

/* ---------- host memory a kernel writes into ---------- */

typedef struct {
    hsa_executable_t exe;
    hsa_code_object_reader_t reader;
    uint64_t object;
    uint32_t kernarg_size, group_size, private_size;
} kernel_t;

static kernel_t load_kernel(env_t *e, const char *path, const char *name) {
    kernel_t k;
    hsa_profile_t profile;
    int fd = open(path, O_RDONLY);
    EXPECT(fd >= 0);
    CHECK(hsa_code_object_reader_create_from_file(fd, &k.reader));
    close(fd);
    CHECK(hsa_agent_get_info(e->a.gpu, HSA_AGENT_INFO_PROFILE, &profile));
    CHECK(hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &k.exe));
    CHECK(hsa_executable_load_agent_code_object(k.exe, e->a.gpu, k.reader, NULL, NULL));
    CHECK(hsa_executable_freeze(k.exe, NULL));
    hsa_executable_symbol_t sym;
    CHECK(hsa_executable_get_symbol_by_name(k.exe, name, &e->a.gpu, &sym));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.object));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &k.kernarg_size));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &k.group_size));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &k.private_size));
    return k;
}

typedef struct {
    hsa_signal_t seen;
} fault_state_t;

static void on_error(hsa_status_t status, hsa_queue_t *q, void *data) {
    (void)q;
    hsa_signal_store_screlease(((fault_state_t *)data)->seen, (hsa_signal_value_t)status);
}

/* Runs `store(out, base)` (out[i] = base + i) over n work-items. Returns
 * whether the dispatch completed, or 0 once the queue's error callback
 * stored a status in `fault`. */
static int run_store(env_t *e, kernel_t *k, hsa_queue_t *q, hsa_signal_t fault, uint32_t *out, uint32_t base,
                     uint32_t n) {
    return run_store_kernel(q, e->kernarg, k->object, k->kernarg_size, k->private_size, k->group_size,
                            fault, out, base, n);
}

static void scenario_lock(const char *path) {
    env_t e = setup();
    kernel_t k = load_kernel(&e, path, "store.kd");
    fault_state_t st = {make_signal(0)};
    hsa_queue_t *q = NULL;
    CHECK(hsa_queue_create(e.a.gpu, 64, HSA_QUEUE_TYPE_MULTI, on_error, &st, UINT32_MAX, UINT32_MAX, &q));

    const uint32_t n = 300;
    uint32_t *host = malloc(n * 4);
    memset(host, 0, n * 4);
    uint32_t *agent_ptr = NULL;
    CHECK(hsa_amd_memory_lock(host, n * 4, &e.a.gpu, 1, (void **)&agent_ptr));
    EXPECT(agent_ptr != NULL);
    EXPECT(run_store(&e, &k, q, st.seen, agent_ptr, 100, n));
    for (uint32_t i = 0; i < n; i++)
        EXPECT(host[i] == 100 + i);

    hsa_amd_pointer_info_t info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    CHECK(hsa_amd_pointer_info(host + 5, &info, NULL, NULL, NULL));
    EXPECT(info.type == HSA_EXT_POINTER_TYPE_LOCKED);
    EXPECT(info.hostBaseAddress == host && info.sizeInBytes == n * 4);

    /* Locked twice, unlocked twice; a third unlock is refused. */
    void *again = NULL;
    CHECK(hsa_amd_memory_lock(host, n * 4, NULL, 0, &again));
    EXPECT(again == agent_ptr);
    CHECK(hsa_amd_memory_unlock(host));
    CHECK(hsa_amd_memory_unlock(host));
    EXPECT(hsa_amd_memory_unlock(host) != HSA_STATUS_SUCCESS);

    /* Bad lock requests. */
    void *out = NULL;
    EXPECT_STATUS(hsa_amd_memory_lock(host, 0, NULL, 0, &out), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_lock(NULL, 64, NULL, 0, &out), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_lock(host, 64, NULL, 0, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_lock(host, 64, &e.a.gpu, 0, &out), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_lock(host, 64, NULL, 1, &out), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_agent_t bad_agent = {9999};
    EXPECT_STATUS(hsa_amd_memory_lock(host, 64, &bad_agent, 1, &out), HSA_STATUS_ERROR_INVALID_AGENT);
    /* Only mapped, writable memory, for exactly the length asked, can be
     * locked: not past the end of the mappings, not an unmapped page, not
     * a read-only one (a kernel writing there would crash the process). */
    EXPECT_STATUS(hsa_amd_memory_lock(host, (size_t)1 << 44, NULL, 0, &out), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_lock((void *)0xdeadbeef000ull, 4096, NULL, 0, &out),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    void *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(gone != MAP_FAILED);
    EXPECT(munmap((uint8_t *)gone + 4096, 4096) == 0);
    EXPECT_STATUS(hsa_amd_memory_lock(gone, 8192, NULL, 0, &out), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT(mprotect(gone, 4096, PROT_READ) == 0);
    EXPECT_STATUS(hsa_amd_memory_lock(gone, 4096, NULL, 0, &out), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_memory_register(gone, 4096), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT(munmap(gone, 4096) == 0);

    /* Locked to the CPU's fine-grained pool; a GPU pool is refused. */
    CHECK(hsa_amd_memory_lock_to_pool(host, n * 4, NULL, 0, e.fine, 0, (void **)&agent_ptr));
    EXPECT(run_store(&e, &k, q, st.seen, agent_ptr, 7, n));
    EXPECT(host[0] == 7 && host[n - 1] == 7 + n - 1);
    CHECK(hsa_amd_memory_unlock(host));
    EXPECT_STATUS(hsa_amd_memory_lock_to_pool(host, n * 4, NULL, 0, e.coarse, 0, &out),
                  HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
    EXPECT_STATUS(hsa_amd_memory_lock_to_pool(host, n * 4, NULL, 0, e.fine, 1, &out),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* hsa_memory_register does the same for the core API. */
    CHECK(hsa_memory_register(host, n * 4));
    CHECK(hsa_memory_register(host, n * 4)); /* already registered: nothing */
    EXPECT(run_store(&e, &k, q, st.seen, host, 5000, n));
    EXPECT(host[0] == 5000 && host[n - 1] == 5000 + n - 1);
    CHECK(hsa_memory_deregister(host, n * 4));
    EXPECT_STATUS(hsa_memory_register(host, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_memory_register(NULL, 0));
    CHECK(hsa_memory_deregister(NULL, 0));

    /* Unlocked memory is out of the kernel's reach: the store faults. */
    EXPECT(!run_store(&e, &k, q, st.seen, host, 1, n));
    hsa_signal_value_t status = hsa_signal_wait_scacquire(st.seen, HSA_SIGNAL_CONDITION_NE, 0, TEN_SECONDS,
                                                          HSA_WAIT_STATE_BLOCKED);
    EXPECT(status == HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION);
    EXPECT(host[0] == 5000);
    CHECK(hsa_queue_destroy(q));
    free(host);
    CHECK(hsa_shut_down());
}

/* ---------- pointer info ---------- */

static void *counting_alloc_calls;
static void *my_alloc(size_t n) {
    counting_alloc_calls = (void *)((uintptr_t)counting_alloc_calls + 1);
    return malloc(n);
}

static void scenario_pointerinfo(void) {
    env_t e = setup();
    uint8_t *p = pool_alloc(e.coarse, 10000);
    uint8_t *f = pool_alloc(e.fine, 100);
    hsa_amd_pointer_info_t info;
    uint32_t count = 0;
    hsa_agent_t *agents = NULL;

    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    CHECK(hsa_amd_pointer_info(p + 1234, &info, my_alloc, &count, &agents));
    EXPECT(info.size == sizeof info);
    EXPECT(info.type == HSA_EXT_POINTER_TYPE_HSA);
    EXPECT(info.agentBaseAddress == p && info.hostBaseAddress == p);
    EXPECT(info.sizeInBytes >= 10000 && info.sizeInBytes % GRANULE == 0);
    EXPECT(info.agentOwner.handle == e.a.gpu.handle);
    EXPECT(info.global_flags == HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
    EXPECT(info.userData == NULL);
    EXPECT(count == (uint32_t)e.a.agents);
    EXPECT(counting_alloc_calls == (void *)1);
    int saw_cpu = 0, saw_gpu = 0;
    for (uint32_t i = 0; i < count; i++) {
        saw_cpu |= agents[i].handle == e.a.cpu.handle;
        saw_gpu |= agents[i].handle == e.a.gpu.handle;
    }
    EXPECT(saw_cpu && saw_gpu);
    free(agents);

    /* User data sticks to the allocation (set at its first byte). */
    CHECK(hsa_amd_pointer_info_set_userdata(f, (void *)0x1234));
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    CHECK(hsa_amd_pointer_info(f + 50, &info, NULL, NULL, NULL));
    EXPECT(info.userData == (void *)0x1234);
    EXPECT(info.agentOwner.handle == e.a.cpu.handle);
    EXPECT(info.global_flags == HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
    EXPECT_STATUS(hsa_amd_pointer_info_set_userdata(f + 1, (void *)1), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* A caller with an older, shorter struct: nothing past its size is
     * written, and the size stays what it said. */
    hsa_amd_pointer_info_t old;
    memset(&old, 0x5a, sizeof old);
    old.size = offsetof(hsa_amd_pointer_info_t, agentOwner);
    CHECK(hsa_amd_pointer_info(f, &old, NULL, NULL, NULL));
    EXPECT(old.size == offsetof(hsa_amd_pointer_info_t, agentOwner));
    EXPECT(old.type == HSA_EXT_POINTER_TYPE_HSA && old.userData == (void *)0x1234);
    EXPECT(old.agentOwner.handle == 0x5a5a5a5a5a5a5a5aull);
    EXPECT(old.global_flags == 0x5a5a5a5au);
    /* A newer, longer struct: the size comes back as ours. */
    struct {
        hsa_amd_pointer_info_t info;
        uint64_t future[4];
    } newer;
    memset(&newer, 0x77, sizeof newer);
    newer.info.size = sizeof newer;
    CHECK(hsa_amd_pointer_info(f, &newer.info, NULL, NULL, NULL));
    EXPECT(newer.info.size == sizeof(hsa_amd_pointer_info_t));
    EXPECT(newer.future[0] == 0x7777777777777777ull);

    /* Memory the runtime does not know. */
    int local = 0;
    memset(&info, 0x33, sizeof info);
    info.size = sizeof info;
    count = 99;
    agents = (hsa_agent_t *)&local;
    CHECK(hsa_amd_pointer_info(&local, &info, my_alloc, &count, &agents));
    EXPECT(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);
    EXPECT(info.sizeInBytes == 0);
    EXPECT(count == 0);
    EXPECT(agents == NULL);
    EXPECT(counting_alloc_calls == (void *)1);
    EXPECT_STATUS(hsa_amd_pointer_info(NULL, &info, NULL, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_pointer_info(p, NULL, NULL, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* After a free the pointer is unknown again. */
    CHECK(hsa_amd_memory_pool_free(p));
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    CHECK(hsa_amd_pointer_info(p, &info, NULL, NULL, NULL));
    EXPECT(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);
    CHECK(hsa_shut_down());
}

/* ---------- deallocation notifiers ---------- */

static int dealloc_calls;
static void *dealloc_ptr, *dealloc_data;
static void on_dealloc(void *ptr, void *data) {
    dealloc_calls++;
    dealloc_ptr = ptr;
    dealloc_data = data;
}
static void on_dealloc_other(void *ptr, void *data) {
    (void)ptr;
    (void)data;
    dealloc_calls += 100;
}

static void scenario_dealloc(void) {
    env_t e = setup();
    uint8_t *p = pool_alloc(e.fine, 8192);
    CHECK(hsa_amd_register_deallocation_callback(p + 16, on_dealloc, (void *)0xfeed));
    EXPECT(dealloc_calls == 0);
    CHECK(hsa_amd_memory_pool_free(p));
    EXPECT(dealloc_calls == 1);
    EXPECT(dealloc_ptr == p + 16 && dealloc_data == (void *)0xfeed);

    /* Deregistered notifiers stay silent; so do other allocations' frees. */
    uint8_t *q = pool_alloc(e.fine, 100), *r = pool_alloc(e.coarse, 100);
    CHECK(hsa_amd_register_deallocation_callback(q, on_dealloc_other, NULL));
    CHECK(hsa_amd_register_deallocation_callback(r, on_dealloc, NULL));
    CHECK(hsa_amd_deregister_deallocation_callback(q, on_dealloc_other));
    EXPECT_STATUS(hsa_amd_deregister_deallocation_callback(q, on_dealloc_other),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_memory_pool_free(q));
    EXPECT(dealloc_calls == 1);
    CHECK(hsa_memory_free(r));
    EXPECT(dealloc_calls == 2 && dealloc_ptr == r);

    int local;
    EXPECT_STATUS(hsa_amd_register_deallocation_callback(&local, on_dealloc, NULL),
                  HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_register_deallocation_callback(NULL, on_dealloc, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    uint8_t *s = pool_alloc(e.fine, 100);
    EXPECT_STATUS(hsa_amd_register_deallocation_callback(s, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_memory_pool_free(s));
    EXPECT(dealloc_calls == 2);
    CHECK(hsa_shut_down());
}

/* ---------- access, coherency, ownership, migration ---------- */

static void scenario_access(void) {
    env_t e = setup();
    void *p = pool_alloc(e.coarse, 4096);
    hsa_agent_t both[2] = {e.a.cpu, e.a.gpu};
    CHECK(hsa_amd_agents_allow_access(2, both, NULL, p));
    CHECK(hsa_amd_agents_allow_access(1, &e.a.cpu, NULL, (uint8_t *)p + 100));
    uint32_t flags = 0;
    EXPECT_STATUS(hsa_amd_agents_allow_access(1, both, &flags, p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_agents_allow_access(0, both, NULL, p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_agents_allow_access(1, NULL, NULL, p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_agent_t bad = {31337};
    EXPECT_STATUS(hsa_amd_agents_allow_access(1, &bad, NULL, p), HSA_STATUS_ERROR_INVALID_AGENT);
    int local;
    EXPECT_STATUS(hsa_amd_agents_allow_access(1, both, NULL, &local), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    hsa_amd_coherency_type_t type;
    CHECK(hsa_amd_coherency_get_type(e.a.gpu, &type));
    EXPECT(type == HSA_AMD_COHERENCY_TYPE_COHERENT);
    CHECK(hsa_amd_coherency_set_type(e.a.gpu, HSA_AMD_COHERENCY_TYPE_NONCOHERENT));
    CHECK(hsa_amd_coherency_get_type(e.a.gpu, &type));
    EXPECT(type == HSA_AMD_COHERENCY_TYPE_NONCOHERENT);
    CHECK(hsa_amd_coherency_set_type(e.a.gpu, HSA_AMD_COHERENCY_TYPE_COHERENT));
    EXPECT_STATUS(hsa_amd_coherency_set_type(e.a.gpu, (hsa_amd_coherency_type_t)5), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_coherency_get_type(e.a.cpu, &type), HSA_STATUS_ERROR_INVALID_AGENT);

    CHECK(hsa_memory_assign_agent(p, e.a.gpu, HSA_ACCESS_PERMISSION_RW));
    EXPECT_STATUS(hsa_memory_assign_agent(p, e.a.gpu, (hsa_access_permission_t)0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_memory_assign_agent(p, bad, HSA_ACCESS_PERMISSION_RO), HSA_STATUS_ERROR_INVALID_AGENT);

    bool can = false;
    CHECK(hsa_amd_memory_pool_can_migrate(e.coarse, e.fine, &can));
    EXPECT(can);
    CHECK(hsa_amd_memory_pool_can_migrate(e.coarse, e.group, &can));
    EXPECT(!can);
    memset(p, 0x42, 4096);
    CHECK(hsa_amd_memory_migrate(p, e.fine, 0));
    EXPECT(((uint8_t *)p)[4095] == 0x42); /* same address, same bytes */
    EXPECT_STATUS(hsa_amd_memory_migrate(p, e.fine, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_migrate(&local, e.fine, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_memory_pool_free(p));
    CHECK(hsa_shut_down());
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SCENARIO KERNELS.hsaco\n", argv[0]);
        return 2;
    }
    const char *s = argv[1];
    if (!strcmp(s, "pools"))
        scenario_pools();
    else if (!strcmp(s, "alloc"))
        scenario_alloc();
    else if (!strcmp(s, "copy"))
        scenario_copy();
    else if (!strcmp(s, "async"))
        scenario_async();
    else if (!strcmp(s, "rect"))
        scenario_rect();
    else if (!strcmp(s, "fill"))
        scenario_fill();
    else if (!strcmp(s, "lock"))
        scenario_lock(argv[2]);
    else if (!strcmp(s, "pointerinfo"))
        scenario_pointerinfo();
    else if (!strcmp(s, "dealloc"))
        scenario_dealloc();
    else if (!strcmp(s, "access"))
        scenario_access();
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    printf("OK %s\n", s);
    return 0;
}
