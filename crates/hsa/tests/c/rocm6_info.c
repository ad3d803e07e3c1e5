/* ROCm 6 information attributes and exports: the system, agent and pool
 * attributes ROCm 6 added, allocation flags, copies on a named engine and
 * the functions softgpu refuses (dma-buf, SPM, logging of blit packets).
 *
 * Debian's headers are ROCm 5.2, so the ROCm 6 names are declared here
 * (prefixed R6_ so they cannot clash with a header that has them).
 *
 * Usage: rocm6_info SCENARIO. Prints "key: value" lines the Rust driver
 * (tests/rocm6.rs) checks, and "OK SCENARIO" at the end; any failed
 * expectation exits with status 1. */

#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* hsa_system_info_t (ROCm 6). */
#define R6_SYSTEM_INFO_MWAITX_ENABLED 0x203
#define R6_SYSTEM_INFO_DMABUF_SUPPORTED 0x204
#define R6_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED 0x205
#define R6_SYSTEM_INFO_XNACK_ENABLED 0x206
#define R6_SYSTEM_INFO_EXT_VERSION_MAJOR 0x207
#define R6_SYSTEM_INFO_EXT_VERSION_MINOR 0x208

/* hsa_amd_agent_info_t (ROCm 6 additions). */
#define R6_AGENT_INFO_HDP_FLUSH 0xA00E
#define R6_AGENT_INFO_MEMORY_AVAIL 0xA015
#define R6_AGENT_INFO_TIMESTAMP_FREQUENCY 0xA016
#define R6_AGENT_INFO_ASIC_FAMILY_ID 0xA107
#define R6_AGENT_INFO_UCODE_VERSION 0xA108
#define R6_AGENT_INFO_SDMA_UCODE_VERSION 0xA109
#define R6_AGENT_INFO_NUM_SDMA_ENG 0xA10A
#define R6_AGENT_INFO_NUM_SDMA_XGMI_ENG 0xA10B
#define R6_AGENT_INFO_IOMMU_SUPPORT 0xA110
#define R6_AGENT_INFO_NUM_XCC 0xA111
#define R6_AGENT_INFO_DRIVER_UID 0xA112
#define R6_AGENT_INFO_NEAREST_CPU 0xA113
#define R6_AGENT_INFO_MEMORY_PROPERTIES 0xA114
#define R6_AGENT_INFO_AQL_EXTENSIONS 0xA115
#define R6_MEMORY_PROPERTY_AGENT_IS_APU 0x1

/* hsa_amd_memory_pool_info_t and hsa_amd_memory_pool_location_t. */
#define R6_POOL_INFO_LOCATION 17
#define R6_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE 18
#define R6_POOL_LOCATION_CPU 0
#define R6_POOL_LOCATION_GPU 1

/* hsa_amd_memory_pool_flag_t. */
#define R6_POOL_PCIE_FLAG (1u << 0)
#define R6_POOL_CONTIGUOUS_FLAG (1u << 1)
#define R6_POOL_EXECUTABLE_FLAG (1u << 2)

/* hsa_amd_sdma_engine_id_t. */
#define R6_SDMA_ENGINE_0 0x1u
#define R6_SDMA_ENGINE_1 0x2u
#define R6_SDMA_ENGINE_2 0x4u

/* ROCm 6 functions (Debian's hsa.h only has the first two in a
 * comment). */
hsa_status_t hsa_agent_get_info_size(hsa_agent_t agent, hsa_agent_info_t attribute, size_t *size);
hsa_status_t hsa_agent_set_info(hsa_agent_t agent, hsa_agent_info_t attribute, void *value);
hsa_status_t hsa_amd_agent_set_async_scratch_limit(hsa_agent_t agent, size_t threshold);
hsa_status_t hsa_amd_enable_logging(uint8_t *flags, void *file);
hsa_status_t hsa_amd_memory_async_copy_on_engine(void *dst, hsa_agent_t dst_agent, const void *src,
                                                 hsa_agent_t src_agent, size_t size,
                                                 uint32_t num_dep_signals,
                                                 const hsa_signal_t *dep_signals,
                                                 hsa_signal_t completion_signal,
                                                 uint32_t engine_id, bool force_copy_on_sdma);
hsa_status_t hsa_amd_memory_copy_engine_status(hsa_agent_t dst_agent, hsa_agent_t src_agent,
                                               uint32_t *engine_ids_mask);
hsa_status_t hsa_amd_portable_export_dmabuf(const void *ptr, size_t size, int *dmabuf,
                                            uint64_t *offset);
hsa_status_t hsa_amd_portable_close_dmabuf(int dmabuf);
hsa_status_t hsa_amd_spm_acquire(hsa_agent_t preferred_agent);
hsa_status_t hsa_amd_spm_release(hsa_agent_t preferred_agent);
hsa_status_t hsa_amd_spm_set_dest_buffer(hsa_agent_t preferred_agent, size_t size_in_bytes,
                                         uint32_t *timeout, uint32_t *size_copied, void *dest,
                                         bool *is_data_loss);

/* ---------------------------------------------------------------------- */
/* Agents and pools. */

#define MAX_AGENTS 8
static hsa_agent_t agents[MAX_AGENTS];
static int agent_count;
static hsa_agent_t cpu;
static hsa_agent_t gpu; /* the first GPU */

static hsa_status_t collect_agent(hsa_agent_t a, void *data) {
    (void)data;
    EXPECT(agent_count < MAX_AGENTS);
    agents[agent_count++] = a;
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_CPU) cpu = a;
    if (type == HSA_DEVICE_TYPE_GPU && gpu.handle == 0) gpu = a;
    return HSA_STATUS_SUCCESS;
}

static bool is_gpu(hsa_agent_t a) {
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type));
    return type == HSA_DEVICE_TYPE_GPU;
}

#define MAX_POOLS 8
struct pools {
    int n;
    hsa_amd_memory_pool_t p[MAX_POOLS];
};

static hsa_status_t collect_pool(hsa_amd_memory_pool_t p, void *data) {
    struct pools *ps = data;
    EXPECT(ps->n < MAX_POOLS);
    ps->p[ps->n++] = p;
    return HSA_STATUS_SUCCESS;
}

static struct pools pools_of(hsa_agent_t a) {
    struct pools ps = {0};
    CHECK(hsa_amd_agent_iterate_memory_pools(a, collect_pool, &ps));
    return ps;
}

/* The first pool of `a` that allows allocation (a GPU's device pool, the
 * CPU's fine-grained system pool). */
static hsa_amd_memory_pool_t alloc_pool(hsa_agent_t a) {
    struct pools ps = pools_of(a);
    for (int i = 0; i < ps.n; i++) {
        bool ok = false;
        CHECK(hsa_amd_memory_pool_get_info(ps.p[i], HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                           &ok));
        if (ok) return ps.p[i];
    }
    EXPECT(!"no allocatable pool");
    return ps.p[0];
}

static uint64_t memory_avail(hsa_agent_t a) {
    uint64_t v = 0;
    CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)R6_AGENT_INFO_MEMORY_AVAIL, &v));
    return v;
}

static void init(void) {
    CHECK(hsa_init());
    CHECK(hsa_iterate_agents(collect_agent, NULL));
    EXPECT(cpu.handle != 0 && gpu.handle != 0);
}

/* ---------------------------------------------------------------------- */
/* Scenarios. */

/* Every new export answers HSA_STATUS_ERROR_NOT_INITIALIZED before
 * hsa_init, and so do the new attributes. */
static void uninit(void) {
    hsa_agent_t a = {1};
    size_t size;
    uint8_t flags[8] = {0};
    uint32_t mask;
    bool b;
    char buf[16];
    hsa_signal_t none = {0};
    EXPECT_STATUS(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_MWAITX_ENABLED, &b),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_agent_get_info_size(a, HSA_AGENT_INFO_NAME, &size),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_agent_set_info(a, HSA_AGENT_INFO_NAME, buf),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_agent_set_async_scratch_limit(a, 1), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_enable_logging(flags, NULL), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(buf, a, buf + 8, a, 8, 0, NULL, none,
                                                      R6_SDMA_ENGINE_0, false),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_memory_copy_engine_status(a, a, &mask),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
    int fd;
    uint64_t off;
    EXPECT_STATUS(hsa_amd_portable_export_dmabuf(buf, 8, &fd, &off),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_portable_close_dmabuf(0), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_spm_acquire(a), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_spm_release(a), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_amd_spm_set_dest_buffer(a, 0, NULL, NULL, NULL, NULL),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
}

static void system_info(void) {
    init();
    bool b = true;
    CHECK(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_MWAITX_ENABLED, &b));
    printf("mwaitx: %d\n", b);
    CHECK(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_DMABUF_SUPPORTED, &b));
    printf("dmabuf: %d\n", b);
    CHECK(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED, &b));
    printf("vmem: %d\n", b);
    CHECK(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_XNACK_ENABLED, &b));
    printf("xnack: %d\n", b);
    uint16_t major = 0, minor = 0;
    CHECK(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_EXT_VERSION_MAJOR, &major));
    CHECK(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_EXT_VERSION_MINOR, &minor));
    printf("ext version: %u.%u\n", major, minor);
    EXPECT_STATUS(hsa_system_get_info((hsa_system_info_t)0x209, &b),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_system_get_info((hsa_system_info_t)R6_SYSTEM_INFO_XNACK_ENABLED, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

/* Every attribute of hsa_agent_info_t and hsa_amd_agent_info_t. */
static const uint32_t all_attributes[] = {
    0,      1,      2,      3,      4,      5,      6,      7,      8,      9,
    10,     11,     12,     13,     14,     15,     16,     17,     18,     19,
    20,     21,     22,     23,     24,     0xA000, 0xA001, 0xA002, 0xA003, 0xA004,
    0xA005, 0xA006, 0xA007, 0xA008, 0xA009, 0xA00A, 0xA00B, 0xA00C, 0xA00D, 0xA00E,
    0xA00F, 0xA010, 0xA011, 0xA012, 0xA013, 0xA014, 0xA015, 0xA016, 0xA107, 0xA108,
    0xA109, 0xA10A, 0xA10B, 0xA110, 0xA111, 0xA112, 0xA113, 0xA114, 0xA115,
};

/* hsa_agent_get_info_size knows every attribute, and hsa_agent_get_info
 * writes exactly that many bytes at most (the rest of a guard-filled buffer
 * stays untouched); numbers that are no attribute are refused by both. */
static void check_sizes(hsa_agent_t a) {
    for (size_t i = 0; i < sizeof all_attributes / sizeof all_attributes[0]; i++) {
        uint32_t attr = all_attributes[i];
        size_t size = 0;
        CHECK(hsa_agent_get_info_size(a, (hsa_agent_info_t)attr, &size));
        EXPECT(size >= 1 && size <= 128);
        unsigned char buf[256];
        memset(buf, 0xAB, sizeof buf);
        hsa_status_t s = hsa_agent_get_info(a, (hsa_agent_info_t)attr, buf);
        if (attr == R6_AGENT_INFO_HDP_FLUSH) {
            /* A GPU's HDP flush registers; the CPU has none. */
            hsa_device_type_t type;
            CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type));
            EXPECT_STATUS(s, type == HSA_DEVICE_TYPE_GPU ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR);
            if (type != HSA_DEVICE_TYPE_GPU)
                continue;
        }
        if (s != HSA_STATUS_SUCCESS) {
            fprintf(stderr, "attribute %#x: status %#x\n", attr, (unsigned)s);
            EXPECT(s == HSA_STATUS_SUCCESS);
        }
        for (size_t j = size; j < sizeof buf; j++) {
            if (buf[j] != 0xAB) {
                fprintf(stderr, "attribute %#x: size %zu but byte %zu written\n", attr, size, j);
                EXPECT(buf[j] == 0xAB);
            }
        }
    }
    static const uint32_t not_attributes[] = {25, 0x2000, 0xA017, 0xA100, 0xA10C, 0xA116};
    for (size_t i = 0; i < sizeof not_attributes / sizeof not_attributes[0]; i++) {
        size_t size;
        unsigned char buf[256];
        EXPECT_STATUS(hsa_agent_get_info_size(a, (hsa_agent_info_t)not_attributes[i], &size),
                      HSA_STATUS_ERROR_INVALID_ARGUMENT);
        EXPECT_STATUS(hsa_agent_get_info(a, (hsa_agent_info_t)not_attributes[i], buf),
                      HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
}

static void agent_info(void) {
    init();
    uint32_t uids[MAX_AGENTS];
    int gpus = 0;
    for (int i = 0; i < agent_count; i++) {
        hsa_agent_t a = agents[i];
        bool g = is_gpu(a);
        printf("agent %d: %s\n", i, g ? "GPU" : "CPU");
        check_sizes(a);

        uint64_t avail = memory_avail(a), pool_total = 0;
        struct pools ps = pools_of(a);
        for (int j = 0; j < ps.n; j++) {
            bool ok = false;
            size_t size = 0;
            CHECK(hsa_amd_memory_pool_get_info(
                ps.p[j], HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &ok));
            CHECK(hsa_amd_memory_pool_get_info(ps.p[j], HSA_AMD_MEMORY_POOL_INFO_SIZE, &size));
            /* The CPU's extended-scope fine and coarse-grained pools are
             * views of its fine-grained heap: count that heap once. */
            uint32_t flags = 0;
            CHECK(hsa_amd_memory_pool_get_info(ps.p[j], HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
            bool view = (flags & 8) || (!g && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED));
            if (ok && !view) pool_total += size;
        }
        /* Nothing allocated yet: everything is free. */
        printf("  memory avail: %llu\n", (unsigned long long)avail);
        EXPECT(avail == pool_total && avail > 0);

        uint64_t freq = 0;
        CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)R6_AGENT_INFO_TIMESTAMP_FREQUENCY, &freq));
        printf("  timestamp frequency: %llu\n", (unsigned long long)freq);
        uint32_t v;
#define U32(name, attr)                                                          \
    do {                                                                         \
        v = 0xDEADBEEF;                                                          \
        CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)(attr), &v));              \
        printf("  " name ": %u\n", v);                                           \
    } while (0)
        U32("family", R6_AGENT_INFO_ASIC_FAMILY_ID);
        U32("ucode", R6_AGENT_INFO_UCODE_VERSION);
        U32("sdma ucode", R6_AGENT_INFO_SDMA_UCODE_VERSION);
        U32("sdma engines", R6_AGENT_INFO_NUM_SDMA_ENG);
        U32("xgmi engines", R6_AGENT_INFO_NUM_SDMA_XGMI_ENG);
        U32("iommu", R6_AGENT_INFO_IOMMU_SUPPORT);
        U32("xcc", R6_AGENT_INFO_NUM_XCC);
        U32("driver uid", R6_AGENT_INFO_DRIVER_UID);
        if (g) {
            EXPECT(v != 0);
            for (int k = 0; k < gpus; k++) EXPECT(uids[k] != v);
            uids[gpus++] = v;
        } else {
            EXPECT(v == 0);
        }
        hsa_agent_t nearest = {0xDEAD};
        CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)R6_AGENT_INFO_NEAREST_CPU, &nearest));
        EXPECT(nearest.handle == (g ? cpu.handle : 0));
        uint8_t props[8], aql[8];
        memset(props, 0xFF, sizeof props);
        memset(aql, 0xFF, sizeof aql);
        CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)R6_AGENT_INFO_MEMORY_PROPERTIES, props));
        CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)R6_AGENT_INFO_AQL_EXTENSIONS, aql));
        printf("  apu: %d\n", (props[0] & R6_MEMORY_PROPERTY_AGENT_IS_APU) != 0);
        for (int k = 0; k < 8; k++) {
            EXPECT(aql[k] == 0);
            EXPECT(props[k] == 0 || (k == 0 && props[0] == R6_MEMORY_PROPERTY_AGENT_IS_APU));
        }
    }
}

static void pool_info(void) {
    init();
    for (int i = 0; i < agent_count; i++) {
        bool g = is_gpu(agents[i]);
        struct pools ps = pools_of(agents[i]);
        for (int j = 0; j < ps.n; j++) {
            hsa_amd_memory_pool_t p = ps.p[j];
            hsa_amd_segment_t segment;
            bool allowed = false;
            size_t granule = 1, rec = 1;
            uint32_t location = 0xFF;
            CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
            CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                               &allowed));
            CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
                                               &granule));
            CHECK(hsa_amd_memory_pool_get_info(
                p, (hsa_amd_memory_pool_info_t)R6_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE, &rec));
            if (allowed) {
                EXPECT(granule > 0 && rec > 0 && rec % granule == 0);
            } else {
                EXPECT(granule == 0 && rec == 0);
            }
            hsa_status_t s = hsa_amd_memory_pool_get_info(
                p, (hsa_amd_memory_pool_info_t)R6_POOL_INFO_LOCATION, &location);
            if (segment == HSA_AMD_SEGMENT_GROUP) {
                /* An LDS pool has no location (as in ROCr). */
                EXPECT_STATUS(s, HSA_STATUS_ERROR_INVALID_ARGUMENT);
            } else {
                CHECK(s);
                EXPECT(location == (g ? R6_POOL_LOCATION_GPU : R6_POOL_LOCATION_CPU));
            }
            printf("agent %d pool %d: segment %d granule %zu rec %zu location %u\n", i, j,
                   (int)segment, granule, rec, location);
        }
        EXPECT_STATUS(hsa_amd_memory_pool_get_info(ps.p[0], (hsa_amd_memory_pool_info_t)19,
                                                   &(size_t){0}),
                      HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
}

/* MEMORY_AVAIL drops by the granules an allocation is charged and comes
 * back after the free; allocation flags. */
static void alloc_flags(void) {
    init();
    hsa_agent_t owners[2] = {gpu, cpu};
    for (int k = 0; k < 2; k++) {
        hsa_agent_t a = owners[k];
        hsa_amd_memory_pool_t pool = alloc_pool(a);
        size_t granule = 0;
        CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
                                           &granule));
        uint64_t before = memory_avail(a);
        size_t size = (1u << 20) + 1;
        size_t charged = (size + granule - 1) / granule * granule;
        void *p = NULL;
        CHECK(hsa_amd_memory_pool_allocate(pool, size, R6_POOL_CONTIGUOUS_FLAG, &p));
        EXPECT(p != NULL);
        memset(p, 0x5A, size); /* contiguous: every byte reachable */
        EXPECT(((unsigned char *)p)[size - 1] == 0x5A);
        uint64_t during = memory_avail(a);
        printf("agent %s: avail %llu -> %llu\n", k == 0 ? "gpu" : "cpu",
               (unsigned long long)before, (unsigned long long)during);
        EXPECT(before - during == charged);
        void *q = NULL;
        CHECK(hsa_amd_memory_pool_allocate(pool, 4096, R6_POOL_PCIE_FLAG | R6_POOL_CONTIGUOUS_FLAG,
                                           &q));
        EXPECT(memory_avail(a) == during - 4096);
        CHECK(hsa_amd_memory_pool_free(q));
        CHECK(hsa_amd_memory_pool_free(p));
        EXPECT(memory_avail(a) == before);

        /* Executable memory cannot be honoured; unknown bits are refused
         * as invalid; nothing is charged for either. */
        q = NULL;
        EXPECT_STATUS(hsa_amd_memory_pool_allocate(pool, 4096, R6_POOL_EXECUTABLE_FLAG, &q),
                      HSA_STATUS_ERROR);
        EXPECT_STATUS(hsa_amd_memory_pool_allocate(pool, 4096, 1u << 3, &q),
                      HSA_STATUS_ERROR_INVALID_ARGUMENT);
        EXPECT_STATUS(hsa_amd_memory_pool_allocate(pool, 4096, 0x80000000u | R6_POOL_CONTIGUOUS_FLAG,
                                                   &q),
                      HSA_STATUS_ERROR_INVALID_ARGUMENT);
        EXPECT(q == NULL);
        EXPECT(memory_avail(a) == before);
    }
}

static void wait_zero(hsa_signal_t s) {
    EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, TEN_SECONDS,
                                     HSA_WAIT_STATE_BLOCKED) == 0);
}

static void copy_engine(void) {
    init();
    uint32_t engines = 0;
    CHECK(hsa_agent_get_info(gpu, (hsa_agent_info_t)R6_AGENT_INFO_NUM_SDMA_ENG, &engines));
    EXPECT(engines >= 1 && engines < 16);
    uint32_t all = (1u << engines) - 1;

    /* Engine status: every engine of the GPU is free, both directions. */
    uint32_t mask = 0;
    CHECK(hsa_amd_memory_copy_engine_status(gpu, cpu, &mask));
    printf("engines gpu<-cpu: %#x\n", mask);
    EXPECT(mask == all);
    mask = 0;
    CHECK(hsa_amd_memory_copy_engine_status(cpu, gpu, &mask));
    EXPECT(mask == all);
    EXPECT_STATUS(hsa_amd_memory_copy_engine_status(gpu, gpu, &mask),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_memory_copy_engine_status((hsa_agent_t){0x1234}, cpu, &mask),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_memory_copy_engine_status(gpu, cpu, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < agent_count; i++) {
        if (is_gpu(agents[i]) && agents[i].handle != gpu.handle) {
            mask = 0;
            CHECK(hsa_amd_memory_copy_engine_status(agents[i], gpu, &mask));
            EXPECT(mask == all);
            printf("gpu to gpu engines: %#x\n", mask);
        }
    }

    const size_t n = 64 * 1024;
    unsigned char *host = NULL, *dev = NULL, *back = NULL;
    CHECK(hsa_amd_memory_pool_allocate(alloc_pool(cpu), n, 0, (void **)&host));
    CHECK(hsa_amd_memory_pool_allocate(alloc_pool(gpu), n, 0, (void **)&dev));
    CHECK(hsa_amd_memory_pool_allocate(alloc_pool(cpu), n, 0, (void **)&back));
    for (size_t i = 0; i < n; i++) host[i] = (unsigned char)(i * 7 + 1);
    memset(back, 0, n);

    /* Host to device on engine 0, behind a dependency. */
    hsa_signal_t dep = make_signal(1), done = make_signal(1);
    CHECK(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 1, &dep, done,
                                              R6_SDMA_ENGINE_0, false));
    sleep_ms(50);
    EXPECT(hsa_signal_load_scacquire(done) == 1); /* waits for its dependency */
    hsa_signal_store_screlease(dep, 0);
    wait_zero(done);
    /* Device to host on the last engine, forced onto SDMA. */
    hsa_signal_store_screlease(done, 1);
    CHECK(hsa_amd_memory_async_copy_on_engine(back, cpu, dev, gpu, n, 0, NULL, done,
                                              1u << (engines - 1), true));
    wait_zero(done);
    EXPECT(memcmp(back, host, n) == 0);
    /* Within the GPU (a blit kernel in ROCr unless forced). */
    hsa_signal_store_screlease(done, 1);
    CHECK(hsa_amd_memory_async_copy_on_engine(dev + n / 2, gpu, dev, gpu, n / 2, 0, NULL, done,
                                              R6_SDMA_ENGINE_0, false));
    wait_zero(done);
    EXPECT(memcmp(dev + n / 2, host, n / 2) == 0);
    /* An empty copy completes. */
    hsa_signal_store_screlease(done, 1);
    CHECK(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, 0, 0, NULL, done,
                                              R6_SDMA_ENGINE_0, false));
    wait_zero(done);

    /* Engine ids: exactly one bit, of an engine the GPU has. */
    hsa_signal_store_screlease(done, 1);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 0, NULL, done, 0,
                                                      false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 0, NULL, done,
                                                      R6_SDMA_ENGINE_0 | R6_SDMA_ENGINE_1, false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 0, NULL, done,
                                                      1u << engines, false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 0, NULL, done,
                                                      0x80000000u, false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Arguments as for hsa_amd_memory_async_copy. */
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(NULL, gpu, host, cpu, n, 0, NULL, done,
                                                      R6_SDMA_ENGINE_0, false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 1, NULL, done,
                                                      R6_SDMA_ENGINE_0, false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 0, &dep, done,
                                                      R6_SDMA_ENGINE_0, false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 0, NULL,
                                                      (hsa_signal_t){0}, R6_SDMA_ENGINE_0, false),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, (hsa_agent_t){0x1234}, host, cpu, n,
                                                      0, NULL, done, R6_SDMA_ENGINE_0, false),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, gpu, host, cpu, n, 0, NULL,
                                                      (hsa_signal_t){0x1234}, R6_SDMA_ENGINE_0,
                                                      false),
                  HSA_STATUS_ERROR_INVALID_SIGNAL);
    /* Copy engines belong to a GPU. */
    EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(back, cpu, host, cpu, n, 0, NULL, done,
                                                      R6_SDMA_ENGINE_0, false),
                  HSA_STATUS_ERROR);
    /* A refused copy touched nothing and did not signal. */
    EXPECT(hsa_signal_load_scacquire(done) == 1);

    CHECK(hsa_signal_destroy(dep));
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_amd_memory_pool_free(host));
    CHECK(hsa_amd_memory_pool_free(dev));
    CHECK(hsa_amd_memory_pool_free(back));
}

static void exports(void) {
    init();
    hsa_agent_t forged = {0x1234};
    char name[64];

    /* hsa_agent_get_info_size */
    size_t size = 0;
    CHECK(hsa_agent_get_info_size(gpu, HSA_AGENT_INFO_NAME, &size));
    EXPECT(size == 64);
    CHECK(hsa_agent_get_info_size(cpu, (hsa_agent_info_t)R6_AGENT_INFO_MEMORY_AVAIL, &size));
    EXPECT(size == 8);
    CHECK(hsa_agent_get_info_size(gpu, (hsa_agent_info_t)R6_AGENT_INFO_MEMORY_PROPERTIES, &size));
    EXPECT(size == 8);
    EXPECT_STATUS(hsa_agent_get_info_size(forged, HSA_AGENT_INFO_NAME, &size),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_agent_get_info_size(gpu, HSA_AGENT_INFO_NAME, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* hsa_agent_set_info: every attribute is read-only. */
    CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
    EXPECT_STATUS(hsa_agent_set_info(gpu, HSA_AGENT_INFO_NAME, name), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_agent_set_info(gpu, (hsa_agent_info_t)0xA117, name),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_agent_set_info(gpu, HSA_AGENT_INFO_NAME, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_agent_set_info(forged, HSA_AGENT_INFO_NAME, name),
                  HSA_STATUS_ERROR_INVALID_AGENT);

    /* hsa_amd_agent_set_async_scratch_limit: GPU agents only. */
    CHECK(hsa_amd_agent_set_async_scratch_limit(gpu, 1 << 20));
    CHECK(hsa_amd_agent_set_async_scratch_limit(gpu, 0));
    EXPECT_STATUS(hsa_amd_agent_set_async_scratch_limit(cpu, 1 << 20),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_agent_set_async_scratch_limit(forged, 1 << 20),
                  HSA_STATUS_ERROR_INVALID_AGENT);

    /* hsa_amd_enable_logging */
    uint8_t flags[8] = {0};
    CHECK(hsa_amd_enable_logging(flags, NULL));
    CHECK(hsa_amd_enable_logging(flags, stderr));
    flags[0] = 1; /* HSA_AMD_LOG_FLAG_BLIT_KERNEL_PKTS */
    EXPECT_STATUS(hsa_amd_enable_logging(flags, NULL), HSA_STATUS_ERROR);
    flags[0] = 2;
    EXPECT_STATUS(hsa_amd_enable_logging(flags, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    flags[0] = 0;
    flags[7] = 0x80;
    EXPECT_STATUS(hsa_amd_enable_logging(flags, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_enable_logging(NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* dma-buf: not supported, arguments checked first. */
    void *p = NULL;
    CHECK(hsa_amd_memory_pool_allocate(alloc_pool(gpu), 4096, 0, &p));
    int fd = -7;
    uint64_t offset = 99;
    EXPECT_STATUS(hsa_amd_portable_export_dmabuf(p, 4096, &fd, &offset), HSA_STATUS_ERROR);
    EXPECT(fd == -7 && offset == 99); /* untouched on failure */
    EXPECT_STATUS(hsa_amd_portable_export_dmabuf(NULL, 4096, &fd, &offset),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_portable_export_dmabuf(p, 4096, NULL, &offset),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_portable_export_dmabuf(p, 4096, &fd, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_portable_export_dmabuf(p, 0, &fd, &offset),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_memory_pool_free(p));
    /* Closing refuses and leaves the client's descriptor open. */
    int mine = open("/dev/null", O_RDONLY);
    EXPECT(mine >= 0);
    EXPECT_STATUS(hsa_amd_portable_close_dmabuf(mine), HSA_STATUS_ERROR);
    EXPECT(fcntl(mine, F_GETFD) != -1);
    close(mine);

    /* SPM: GPU agents only, then not supported. */
    uint32_t timeout = 10, copied = 0;
    bool lost = false;
    char dest[256];
    EXPECT_STATUS(hsa_amd_spm_acquire(gpu), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_amd_spm_release(gpu), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_amd_spm_set_dest_buffer(gpu, sizeof dest, &timeout, &copied, dest, &lost),
                  HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_amd_spm_acquire(cpu), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_spm_release(forged), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_spm_set_dest_buffer(cpu, sizeof dest, &timeout, &copied, dest, &lost),
                  HSA_STATUS_ERROR_INVALID_AGENT);
}

int main(int argc, char **argv) {
    const char *scenario = argc > 1 ? argv[1] : "";
    if (!strcmp(scenario, "uninit")) {
        uninit();
    } else if (!strcmp(scenario, "system")) {
        system_info();
    } else if (!strcmp(scenario, "agents")) {
        agent_info();
    } else if (!strcmp(scenario, "pools")) {
        pool_info();
    } else if (!strcmp(scenario, "alloc")) {
        alloc_flags();
    } else if (!strcmp(scenario, "copy_engine")) {
        copy_engine();
    } else if (!strcmp(scenario, "exports")) {
        exports();
    } else {
        fprintf(stderr, "unknown scenario %s\n", scenario);
        return 2;
    }
    if (strcmp(scenario, "uninit")) CHECK(hsa_shut_down());
    printf("OK %s\n", scenario);
    return 0;
}
