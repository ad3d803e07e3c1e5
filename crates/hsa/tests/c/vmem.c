/* ROCm 6's virtual memory API through softgpu's libhsa-runtime64.so.1:
 * reserved address ranges, memory handles, mappings (one handle at two
 * addresses shows the same bytes), per-agent access enforced on kernels,
 * shareable handles through file descriptors, handle reference counts,
 * the status of every bad request, and IPC memory shared with a second
 * process (this program again, scenario ipc_child).
 *
 * Debian's hsa_ext_amd.h is ROCm 5.2's and lacks this API, so its types
 * and functions are declared below.
 *
 * Usage: vmem SCENARIO KERNELS.hsaco [IPC-HANDLE-HEX]
 * Scenarios: kernel alias refused share refcount errors uninit ipc
 *            ipc_child (run by ipc) ipc_signal ipc_signal_child (run by
 *            ipc_signal)
 * Prints OK on success; any failed expectation exits with status 1. */

#define _GNU_SOURCE /* memfd_create */
#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sys/wait.h>

#include "harness.h"

/* ---------- the ROCm 6 declarations (our own) ---------- */

typedef struct {
    uint64_t handle;
} vmem_handle_t; /* hsa_amd_vmem_alloc_handle_t */

enum { VMEM_TYPE_NONE = 0, VMEM_TYPE_PINNED = 1 }; /* hsa_amd_memory_type_t */

typedef struct {
    hsa_access_permission_t permissions;
    hsa_agent_t agent_handle;
} vmem_access_t; /* hsa_amd_memory_access_desc_t */

hsa_status_t hsa_amd_vmem_address_reserve(void **va, size_t size, uint64_t address, uint64_t flags);
hsa_status_t hsa_amd_vmem_address_reserve_align(void **va, size_t size, uint64_t address, uint64_t alignment,
                                                uint64_t flags);
hsa_status_t hsa_amd_vmem_address_free(void *va, size_t size);
hsa_status_t hsa_amd_vmem_handle_create(hsa_amd_memory_pool_t pool, size_t size, int type, uint64_t flags,
                                        vmem_handle_t *handle);
hsa_status_t hsa_amd_vmem_handle_release(vmem_handle_t handle);
hsa_status_t hsa_amd_vmem_map(void *va, size_t size, size_t in_offset, vmem_handle_t handle, uint64_t flags);
hsa_status_t hsa_amd_vmem_unmap(void *va, size_t size);
hsa_status_t hsa_amd_vmem_set_access(void *va, size_t size, const vmem_access_t *desc, size_t desc_cnt);
hsa_status_t hsa_amd_vmem_get_access(void *va, hsa_access_permission_t *perms, hsa_agent_t agent);
hsa_status_t hsa_amd_vmem_export_shareable_handle(int *fd, vmem_handle_t handle, uint64_t flags);
hsa_status_t hsa_amd_vmem_import_shareable_handle(int fd, vmem_handle_t *handle);
hsa_status_t hsa_amd_vmem_retain_alloc_handle(vmem_handle_t *handle, void *addr);
hsa_status_t hsa_amd_vmem_get_alloc_properties_from_handle(vmem_handle_t handle, hsa_amd_memory_pool_t *pool,
                                                           int *type);

/* hsa_access_permission_t's "no access" (ROCm 6; Debian's hsa.h starts
 * at read-only). */
#define PERM_NONE ((hsa_access_permission_t)0)

#define PAGE 4096
#define N 1024 /* work-items: one page of uint32_t */

/* ---------- agents, pools, kernel ---------- */

typedef struct {
    hsa_agent_t cpu, gpu;
    hsa_amd_memory_pool_t coarse, kernarg, group;
} env_t;

static hsa_status_t collect_agent(hsa_agent_t agent, void *data) {
    env_t *e = data;
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_CPU)
        e->cpu = agent;
    else if (type == HSA_DEVICE_TYPE_GPU && e->gpu.handle == 0)
        e->gpu = agent;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t collect_pool(hsa_amd_memory_pool_t pool, void *data) {
    env_t *e = data;
    hsa_amd_segment_t segment;
    uint32_t flags = 0;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    if (segment == HSA_AMD_SEGMENT_GROUP) {
        e->group = pool;
        return HSA_STATUS_SUCCESS;
    }
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)
        e->kernarg = pool;
    else if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && e->coarse.handle == 0)
        e->coarse = pool; /* the GPU's (its pools are walked first) */
    return HSA_STATUS_SUCCESS;
}

static env_t setup(void) {
    env_t e;
    memset(&e, 0, sizeof e);
    CHECK(hsa_init());
    CHECK(hsa_iterate_agents(collect_agent, &e));
    EXPECT(e.cpu.handle != 0 && e.gpu.handle != 0);
    CHECK(hsa_amd_agent_iterate_memory_pools(e.gpu, collect_pool, &e));
    CHECK(hsa_amd_agent_iterate_memory_pools(e.cpu, collect_pool, &e));
    EXPECT(e.coarse.handle != 0 && e.kernarg.handle != 0 && e.group.handle != 0);
    return e;
}

typedef struct {
    uint64_t object;
    uint32_t kernarg_size, group_size, private_size;
    hsa_queue_t *queue;
    hsa_signal_t fault;
} kernel_t;

static void on_error(hsa_status_t status, hsa_queue_t *q, void *data) {
    (void)q;
    hsa_signal_store_screlease(*(hsa_signal_t *)data, (hsa_signal_value_t)status);
}

static kernel_t *load_kernel(env_t *e, const char *path) {
    kernel_t *k = calloc(1, sizeof *k);
    hsa_code_object_reader_t reader;
    hsa_executable_t exe;
    hsa_profile_t profile;
    int fd = open(path, O_RDONLY);
    EXPECT(fd >= 0);
    CHECK(hsa_code_object_reader_create_from_file(fd, &reader));
    close(fd);
    CHECK(hsa_agent_get_info(e->gpu, HSA_AGENT_INFO_PROFILE, &profile));
    CHECK(hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
    CHECK(hsa_executable_load_agent_code_object(exe, e->gpu, reader, NULL, NULL));
    CHECK(hsa_executable_freeze(exe, NULL));
    hsa_executable_symbol_t sym;
    CHECK(hsa_executable_get_symbol_by_name(exe, "store.kd", &e->gpu, &sym));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k->object));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                         &k->kernarg_size));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                         &k->group_size));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                         &k->private_size));
    k->fault = make_signal(0);
    CHECK(hsa_queue_create(e->gpu, 64, HSA_QUEUE_TYPE_MULTI, on_error, &k->fault, UINT32_MAX, UINT32_MAX,
                           &k->queue));
    return k;
}

/* Runs `store(out, base)` (out[i] = base + i) over N work-items. Returns 1
 * when the dispatch completed, 0 once the queue's error callback stored a
 * status in k->fault. */
static int run_store(env_t *e, kernel_t *k, void *out, uint32_t base) {
    return run_store_kernel(k->queue, e->kernarg, k->object, k->kernarg_size, k->private_size,
                            k->group_size, k->fault, out, base, N);
}

/* ---------- helpers ---------- */

static void *reserve(size_t size) {
    void *va = NULL;
    CHECK(hsa_amd_vmem_address_reserve(&va, size, 0, 0));
    EXPECT(va != NULL && (uintptr_t)va % PAGE == 0);
    return va;
}

static vmem_handle_t create(env_t *e, size_t size) {
    vmem_handle_t h = {0};
    CHECK(hsa_amd_vmem_handle_create(e->coarse, size, VMEM_TYPE_NONE, 0, &h));
    EXPECT(h.handle != 0);
    return h;
}

static void grant(env_t *e, void *va, size_t size, hsa_access_permission_t perm) {
    vmem_access_t desc[2] = {{perm, e->gpu}, {HSA_ACCESS_PERMISSION_RW, e->cpu}};
    CHECK(hsa_amd_vmem_set_access(va, size, desc, 2));
}

static void check_values(const uint32_t *p, uint32_t base) {
    for (uint32_t i = 0; i < N; i++)
        if (p[i] != base + i) {
            fprintf(stderr, "p[%u] = %u, expected %u\n", i, p[i], base + i);
            exit(1);
        }
}

/* ---------- scenarios ---------- */

/* Reserve, create, map, grant: a kernel writes through the mapped
 * addresses and the host reads its values back there. */
static void scenario_kernel(const char *path) {
    env_t e = setup();
    kernel_t *k = load_kernel(&e, path);
    char *va = reserve(4 * PAGE);
    vmem_handle_t h = create(&e, 2 * PAGE);
    CHECK(hsa_amd_vmem_map(va + PAGE, 2 * PAGE, 0, h, 0));
    hsa_access_permission_t perm = HSA_ACCESS_PERMISSION_RW;
    CHECK(hsa_amd_vmem_get_access(va + PAGE, &perm, e.gpu));
    EXPECT(perm == PERM_NONE);
    grant(&e, va + PAGE, 2 * PAGE, HSA_ACCESS_PERMISSION_RW);
    CHECK(hsa_amd_vmem_get_access(va + 2 * PAGE + 8, &perm, e.gpu));
    EXPECT(perm == HSA_ACCESS_PERMISSION_RW);

    EXPECT(run_store(&e, k, va + PAGE, 1000));
    check_values((uint32_t *)(va + PAGE), 1000);
    EXPECT(run_store(&e, k, va + 2 * PAGE, 5));
    check_values((uint32_t *)(va + 2 * PAGE), 5);

    /* Host copies reach the mapped range too. */
    uint32_t back[4] = {0};
    CHECK(hsa_memory_copy(back, va + PAGE + 16, sizeof back));
    EXPECT(back[0] == 1004 && back[3] == 1007);

    /* Read-only: a store faults (checked in `refused`); reads still work. */
    CHECK(hsa_amd_vmem_unmap(va + PAGE, 2 * PAGE));
    CHECK(hsa_amd_vmem_handle_release(h));
    CHECK(hsa_amd_vmem_address_free(va, 4 * PAGE));
    CHECK(hsa_shut_down());
    printf("OK kernel\n");
}

/* One handle mapped at two reservations: the same bytes at both. */
static void scenario_alias(const char *path) {
    env_t e = setup();
    kernel_t *k = load_kernel(&e, path);
    char *a = reserve(2 * PAGE), *b = reserve(8 * PAGE);
    EXPECT(a != b);
    vmem_handle_t h = create(&e, 2 * PAGE);
    CHECK(hsa_amd_vmem_map(a, 2 * PAGE, 0, h, 0));
    CHECK(hsa_amd_vmem_map(b + 4 * PAGE, 2 * PAGE, 0, h, 0));
    /* A second page of the handle alone, at offset PAGE. */
    CHECK(hsa_amd_vmem_map(b, PAGE, PAGE, h, 0));
    grant(&e, a, 2 * PAGE, HSA_ACCESS_PERMISSION_RW);
    grant(&e, b + 4 * PAGE, 2 * PAGE, HSA_ACCESS_PERMISSION_RW);
    grant(&e, b, PAGE, HSA_ACCESS_PERMISSION_RW);

    EXPECT(run_store(&e, k, a, 77));
    check_values((uint32_t *)(b + 4 * PAGE), 77);
    EXPECT(run_store(&e, k, b + 5 * PAGE, 300));
    check_values((uint32_t *)(a + PAGE), 300);
    check_values((uint32_t *)b, 300);
    ((volatile uint32_t *)a)[3] = 0xdeadbeef;
    EXPECT(((volatile uint32_t *)(b + 4 * PAGE))[3] == 0xdeadbeef);

    /* Unmapped again: the handle keeps its bytes, the range is refused. */
    CHECK(hsa_amd_vmem_unmap(a, 2 * PAGE));
    uint32_t x = 0;
    EXPECT(hsa_memory_copy(&x, a, 4) != HSA_STATUS_SUCCESS);
    EXPECT(((volatile uint32_t *)(b + 4 * PAGE))[3] == 0xdeadbeef);
    CHECK(hsa_amd_vmem_map(a, 2 * PAGE, 0, h, 0));
    EXPECT(((volatile uint32_t *)a)[3] == 0xdeadbeef);
    CHECK(hsa_amd_vmem_unmap(a, 2 * PAGE));
    CHECK(hsa_amd_vmem_unmap(b, PAGE));
    CHECK(hsa_amd_vmem_unmap(b + 4 * PAGE, 2 * PAGE));
    CHECK(hsa_amd_vmem_handle_release(h));
    CHECK(hsa_amd_vmem_address_free(a, 2 * PAGE));
    CHECK(hsa_amd_vmem_address_free(b, 8 * PAGE));
    CHECK(hsa_shut_down());
    printf("OK alias\n");
}

/* Kernels are refused until a GPU agent is granted access: the dispatch
 * faults (queue error callback) instead of writing, and so does a store
 * to a read-only mapping. */
static void scenario_refused(const char *path) {
    env_t e = setup();
    kernel_t *k = load_kernel(&e, path);
    char *va = reserve(PAGE);
    vmem_handle_t h = create(&e, PAGE);
    CHECK(hsa_amd_vmem_map(va, PAGE, 0, h, 0));
    memset(va, 0, PAGE);
    EXPECT(!run_store(&e, k, va, 1));
    hsa_signal_value_t status =
        hsa_signal_wait_scacquire(k->fault, HSA_SIGNAL_CONDITION_NE, 0, TEN_SECONDS, HSA_WAIT_STATE_BLOCKED);
    EXPECT(status == HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION);
    EXPECT(((uint32_t *)va)[0] == 0 && ((uint32_t *)va)[N - 1] == 0);
    CHECK(hsa_queue_destroy(k->queue));

    /* Read-only for the GPU: a store faults too; read-write then works. */
    kernel_t *k2 = load_kernel(&e, path);
    grant(&e, va, PAGE, HSA_ACCESS_PERMISSION_RO);
    hsa_access_permission_t perm;
    CHECK(hsa_amd_vmem_get_access(va, &perm, e.gpu));
    EXPECT(perm == HSA_ACCESS_PERMISSION_RO);
    EXPECT(!run_store(&e, k2, va, 1));
    EXPECT(((uint32_t *)va)[0] == 0);
    CHECK(hsa_queue_destroy(k2->queue));

    kernel_t *k3 = load_kernel(&e, path);
    grant(&e, va, PAGE, HSA_ACCESS_PERMISSION_RW);
    EXPECT(run_store(&e, k3, va, 9));
    check_values((uint32_t *)va, 9);
    /* Revoked again: refused again. */
    grant(&e, va, PAGE, PERM_NONE);
    EXPECT(!run_store(&e, k3, va, 1));
    check_values((uint32_t *)va, 9);
    CHECK(hsa_queue_destroy(k3->queue));
    printf("OK refused\n");
}

/* Export a handle as a file descriptor, import it as a new handle: the
 * same memory, mapped anywhere; the descriptor maps in any process. */
static void scenario_share(const char *path) {
    env_t e = setup();
    kernel_t *k = load_kernel(&e, path);
    char *va = reserve(2 * PAGE), *vb = reserve(2 * PAGE);
    vmem_handle_t h = {0}, imported = {0};
    CHECK(hsa_amd_vmem_handle_create(e.coarse, 2 * PAGE, VMEM_TYPE_PINNED, 0, &h));
    int fd = -1;
    CHECK(hsa_amd_vmem_export_shareable_handle(&fd, h, 0));
    EXPECT(fd >= 0);
    CHECK(hsa_amd_vmem_import_shareable_handle(fd, &imported));
    EXPECT(imported.handle != 0 && imported.handle != h.handle);
    hsa_amd_memory_pool_t pool = {0};
    int type = -1;
    CHECK(hsa_amd_vmem_get_alloc_properties_from_handle(imported, &pool, &type));
    EXPECT(pool.handle == e.coarse.handle && type == VMEM_TYPE_PINNED);

    CHECK(hsa_amd_vmem_map(va, 2 * PAGE, 0, h, 0));
    CHECK(hsa_amd_vmem_map(vb, 2 * PAGE, 0, imported, 0));
    grant(&e, va, 2 * PAGE, HSA_ACCESS_PERMISSION_RW);
    EXPECT(run_store(&e, k, va + PAGE, 40));
    check_values((uint32_t *)(vb + PAGE), 40);

    /* The descriptor is the memory itself: mmap shows the same bytes, as
     * it would in another process it is passed to. */
    uint32_t *direct = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT(direct != MAP_FAILED);
    check_values(direct + PAGE / 4, 40);
    direct[1] = 4242;
    EXPECT(((volatile uint32_t *)vb)[1] == 4242);
    munmap(direct, 2 * PAGE);
    close(fd);

    /* Neither handle needs the other: release the original first. */
    CHECK(hsa_amd_vmem_unmap(va, 2 * PAGE));
    CHECK(hsa_amd_vmem_handle_release(h));
    EXPECT(((volatile uint32_t *)vb)[1] == 4242);
    CHECK(hsa_amd_vmem_unmap(vb, 2 * PAGE));
    CHECK(hsa_amd_vmem_handle_release(imported));

    /* Not shareable memory: a pipe, a closed descriptor, a plain memfd
     * that could shrink under a mapping. */
    int p[2];
    EXPECT(pipe(p) == 0);
    EXPECT_STATUS(hsa_amd_vmem_import_shareable_handle(p[0], &imported), HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
    close(p[0]);
    close(p[1]);
    EXPECT_STATUS(hsa_amd_vmem_import_shareable_handle(p[0], &imported), HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
    EXPECT_STATUS(hsa_amd_vmem_import_shareable_handle(-1, &imported), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_import_shareable_handle(0, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    int plain = memfd_create("plain", MFD_CLOEXEC);
    EXPECT(plain >= 0 && ftruncate(plain, PAGE) == 0);
    EXPECT_STATUS(hsa_amd_vmem_import_shareable_handle(plain, &imported), HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
    close(plain);
    CHECK(hsa_queue_destroy(k->queue));
    printf("OK share\n");
}

/* Reference counts: create and retain take one each, release drops one;
 * a handle released while mapped lives until it is unmapped. Handles are
 * charged to their pool. */
static void scenario_refcount(const char *path) {
    (void)path;
    env_t e = setup();
    char *va = reserve(PAGE);
    vmem_handle_t h = create(&e, PAGE), got = {0};
    CHECK(hsa_amd_vmem_map(va, PAGE, 0, h, 0));
    CHECK(hsa_amd_vmem_retain_alloc_handle(&got, va));
    EXPECT(got.handle == h.handle);
    EXPECT_STATUS(hsa_amd_vmem_retain_alloc_handle(&got, va + 64), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    CHECK(hsa_amd_vmem_handle_release(h));
    CHECK(hsa_amd_vmem_handle_release(h));
    EXPECT_STATUS(hsa_amd_vmem_handle_release(h), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    /* Released but mapped: still there, and retained again by address. */
    ((volatile uint32_t *)va)[0] = 11;
    CHECK(hsa_amd_vmem_retain_alloc_handle(&got, va));
    EXPECT(got.handle == h.handle);
    CHECK(hsa_amd_vmem_handle_release(h));
    CHECK(hsa_amd_vmem_unmap(va, PAGE));
    /* Gone with its last mapping. */
    hsa_amd_memory_pool_t pool;
    int type;
    EXPECT_STATUS(hsa_amd_vmem_get_alloc_properties_from_handle(h, &pool, &type),
                  HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_handle_release(h), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_map(va, PAGE, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_vmem_address_free(va, PAGE));

    /* Pool accounting: a handle of the whole pool leaves nothing to
     * allocate until it is released. */
    size_t size = 0;
    CHECK(hsa_amd_memory_pool_get_info(e.coarse, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size));
    size = size / PAGE * PAGE;
    vmem_handle_t all = {0};
    EXPECT_STATUS(hsa_amd_vmem_handle_create(e.coarse, size + PAGE, VMEM_TYPE_NONE, 0, &all),
                  HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK(hsa_amd_vmem_handle_create(e.coarse, size, VMEM_TYPE_NONE, 0, &all));
    void *p = NULL;
    EXPECT_STATUS(hsa_amd_memory_pool_allocate(e.coarse, PAGE, 0, &p), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK(hsa_amd_vmem_handle_release(all));
    CHECK(hsa_amd_memory_pool_allocate(e.coarse, PAGE, 0, &p));
    CHECK(hsa_amd_memory_pool_free(p));
    CHECK(hsa_shut_down());
    printf("OK refcount\n");
}

/* Every bad request gets ROCr's status. */
static void scenario_errors(const char *path) {
    (void)path;
    env_t e = setup();
    void *out = NULL;
    const size_t huge = (size_t)1 << 60;

    /* Reserve. */
    EXPECT_STATUS(hsa_amd_vmem_address_reserve(&out, 0, 0, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_address_reserve(&out, 100, 0, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_address_reserve(NULL, PAGE, 0, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_address_reserve_align(&out, PAGE, 0, 3000, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_address_reserve_align(&out, PAGE, 0, 1024, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_address_reserve(&out, huge, 0, 0), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    char *va = reserve(4 * PAGE);
    /* A free address is honoured, a taken one replaced. */
    char *want = va + (1 << 20);
    CHECK(hsa_amd_vmem_address_reserve(&out, PAGE, (uint64_t)(uintptr_t)want, 0));
    EXPECT(out == want);
    CHECK(hsa_amd_vmem_address_free(want, PAGE));
    CHECK(hsa_amd_vmem_address_reserve(&out, PAGE, (uint64_t)(uintptr_t)(va + PAGE), 0));
    EXPECT(out != va + PAGE);
    CHECK(hsa_amd_vmem_address_free(out, PAGE));
    CHECK(hsa_amd_vmem_address_reserve_align(&out, PAGE, 0, 1 << 21, 0));
    EXPECT((uintptr_t)out % (1 << 21) == 0);
    CHECK(hsa_amd_vmem_address_free(out, PAGE));

    /* Reserved but unmapped: no host copy reaches it. */
    uint32_t word = 0;
    EXPECT(hsa_memory_copy(&word, va, 4) != HSA_STATUS_SUCCESS);
    EXPECT(hsa_memory_copy(va, &word, 4) != HSA_STATUS_SUCCESS);

    /* Create. */
    vmem_handle_t h = {0}, bad = {0x1234};
    EXPECT_STATUS(hsa_amd_vmem_handle_create(e.coarse, 0, VMEM_TYPE_NONE, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_handle_create(e.coarse, 100, VMEM_TYPE_NONE, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_handle_create(e.coarse, PAGE, 7, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_amd_memory_pool_t no_pool = {0x99};
    EXPECT_STATUS(hsa_amd_vmem_handle_create(no_pool, PAGE, VMEM_TYPE_NONE, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_handle_create(e.group, PAGE, VMEM_TYPE_NONE, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_handle_create(e.coarse, PAGE, VMEM_TYPE_NONE, 0, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_handle_create(e.coarse, huge, VMEM_TYPE_NONE, 0, &h),
                  HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    h = create(&e, 2 * PAGE);

    /* Release. */
    EXPECT_STATUS(hsa_amd_vmem_handle_release(bad), HSA_STATUS_ERROR_INVALID_ALLOCATION);

    /* Map. */
    EXPECT_STATUS(hsa_amd_vmem_map(NULL, PAGE, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(va, 0, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(&word, PAGE, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(va + 8, PAGE, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(va, 100, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(va + 3 * PAGE, 2 * PAGE, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(va, PAGE, 0, bad, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(va, 2 * PAGE, PAGE, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_map(va, PAGE, 100, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_vmem_map(va, 2 * PAGE, 0, h, 0));
    EXPECT_STATUS(hsa_amd_vmem_map(va + PAGE, PAGE, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* Set and get access. */
    vmem_access_t ok = {HSA_ACCESS_PERMISSION_RW, e.gpu};
    vmem_access_t no_agent = {HSA_ACCESS_PERMISSION_RW, {0x4242}};
    vmem_access_t wo = {HSA_ACCESS_PERMISSION_WO, e.gpu};
    vmem_access_t cpu_ro = {HSA_ACCESS_PERMISSION_RO, e.cpu};
    vmem_access_t weird = {(hsa_access_permission_t)9, e.gpu};
    EXPECT_STATUS(hsa_amd_vmem_set_access(NULL, PAGE, &ok, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, 0, &ok, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, PAGE, NULL, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, PAGE, &ok, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, 2 * PAGE, &no_agent, 1), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, 2 * PAGE, &weird, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_set_access(&word, PAGE, &ok, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va + 2 * PAGE, PAGE, &ok, 1), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, PAGE, &ok, 1), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, 3 * PAGE, &ok, 1), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, 2 * PAGE, &wo, 1), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_amd_vmem_set_access(va, 2 * PAGE, &cpu_ro, 1), HSA_STATUS_ERROR);
    hsa_access_permission_t perm;
    CHECK(hsa_amd_vmem_get_access(va, &perm, e.gpu));
    EXPECT(perm == PERM_NONE); /* refusals changed nothing */
    CHECK(hsa_amd_vmem_set_access(va, 2 * PAGE, &ok, 1));
    CHECK(hsa_amd_vmem_get_access(va + PAGE, &perm, e.gpu));
    EXPECT(perm == HSA_ACCESS_PERMISSION_RW);
    EXPECT_STATUS(hsa_amd_vmem_get_access(va + 2 * PAGE, &perm, e.gpu), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_get_access(va, &perm, e.cpu), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_vmem_get_access(va, &perm, no_agent.agent_handle), HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_amd_vmem_get_access(va, NULL, e.gpu), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_get_access(NULL, &perm, e.gpu), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* Export, retain, properties. */
    int fd;
    EXPECT_STATUS(hsa_amd_vmem_export_shareable_handle(&fd, bad, 0), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_export_shareable_handle(NULL, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    vmem_handle_t got;
    EXPECT_STATUS(hsa_amd_vmem_retain_alloc_handle(&got, va + 2 * PAGE), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_retain_alloc_handle(&got, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_amd_memory_pool_t pool;
    int type;
    EXPECT_STATUS(hsa_amd_vmem_get_alloc_properties_from_handle(bad, &pool, &type),
                  HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_get_alloc_properties_from_handle(h, NULL, &type), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_vmem_get_alloc_properties_from_handle(h, &pool, &type));
    EXPECT(pool.handle == e.coarse.handle && type == VMEM_TYPE_NONE);

    /* Free with a mapping, unmap, free. */
    EXPECT_STATUS(hsa_amd_vmem_address_free(va, 4 * PAGE), HSA_STATUS_ERROR_RESOURCE_FREE);
    EXPECT_STATUS(hsa_amd_vmem_address_free(va, 2 * PAGE), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_address_free(va + PAGE, 4 * PAGE), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_address_free(NULL, PAGE), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_address_free(va, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_unmap(va + 2 * PAGE, PAGE), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_unmap(va, PAGE), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_unmap(NULL, PAGE), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_vmem_unmap(va, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_vmem_unmap(va, 2 * PAGE));
    EXPECT_STATUS(hsa_amd_vmem_unmap(va, 2 * PAGE), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    CHECK(hsa_amd_vmem_address_free(va, 4 * PAGE));
    EXPECT_STATUS(hsa_amd_vmem_address_free(va, 4 * PAGE), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    EXPECT_STATUS(hsa_amd_vmem_map(va, PAGE, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_vmem_handle_release(h));
    EXPECT_STATUS(hsa_amd_vmem_handle_release(h), HSA_STATUS_ERROR_INVALID_ALLOCATION);
    CHECK(hsa_shut_down());
    printf("OK errors\n");
}

/* Before hsa_init, every function says so. */
static void scenario_uninit(const char *path) {
    (void)path;
    void *out = NULL;
    char buf[PAGE];
    vmem_handle_t h = {1};
    hsa_amd_memory_pool_t pool = {1};
    hsa_agent_t agent = {1};
    vmem_access_t desc = {HSA_ACCESS_PERMISSION_RW, agent};
    hsa_access_permission_t perm;
    int fd, type;
    const hsa_status_t want = HSA_STATUS_ERROR_NOT_INITIALIZED;
    EXPECT_STATUS(hsa_amd_vmem_address_reserve(&out, PAGE, 0, 0), want);
    EXPECT_STATUS(hsa_amd_vmem_address_reserve_align(&out, PAGE, 0, 0, 0), want);
    EXPECT_STATUS(hsa_amd_vmem_address_free(buf, PAGE), want);
    EXPECT_STATUS(hsa_amd_vmem_handle_create(pool, PAGE, VMEM_TYPE_NONE, 0, &h), want);
    EXPECT_STATUS(hsa_amd_vmem_handle_release(h), want);
    EXPECT_STATUS(hsa_amd_vmem_map(buf, PAGE, 0, h, 0), want);
    EXPECT_STATUS(hsa_amd_vmem_unmap(buf, PAGE), want);
    EXPECT_STATUS(hsa_amd_vmem_set_access(buf, PAGE, &desc, 1), want);
    EXPECT_STATUS(hsa_amd_vmem_get_access(buf, &perm, agent), want);
    EXPECT_STATUS(hsa_amd_vmem_export_shareable_handle(&fd, h, 0), want);
    EXPECT_STATUS(hsa_amd_vmem_import_shareable_handle(0, &h), want);
    EXPECT_STATUS(hsa_amd_vmem_retain_alloc_handle(&h, buf), want);
    EXPECT_STATUS(hsa_amd_vmem_get_alloc_properties_from_handle(h, &pool, &type), want);
    printf("OK uninit\n");
}

/* ---------- IPC memory ---------- */

typedef struct {
    uint32_t words[8];
} ipc_handle_t; /* hsa_amd_ipc_memory_t */

/* Runs this program again as `vmem SCENARIO PATH HANDLE-HEX`. */
static pid_t spawn(const char *scenario, const char *path, const ipc_handle_t *h) {
    char hex[8 * 8 + 1];
    for (int i = 0; i < 8; i++)
        snprintf(hex + 8 * i, 9, "%08x", h->words[i]);
    fflush(stdout);
    pid_t child = fork();
    EXPECT(child >= 0);
    if (child == 0) {
        execl("/proc/self/exe", "vmem", scenario, path, hex, (char *)NULL);
        _exit(127);
    }
    return child;
}

/* Waits for a child `spawn` started; it must have succeeded. */
static void wait_ok(pid_t child) {
    int status = 0;
    EXPECT(waitpid(child, &status, 0) == child);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The second process of scenario_ipc: attaches the handle given in hex,
 * finds the first process's values, overwrites them with a kernel of its
 * own (base 500) through the mapping, and detaches. */
static void scenario_ipc_child(const char *path, const char *hex) {
    ipc_handle_t h;
    for (int i = 0; i < 8; i++)
        EXPECT(sscanf(hex + 8 * i, "%8x", &h.words[i]) == 1);
    env_t e = setup();
    kernel_t *k = load_kernel(&e, path);
    /* Memory, not a signal: refused as one. */
    hsa_signal_t not_a_signal;
    EXPECT_STATUS(hsa_amd_ipc_signal_attach((hsa_amd_ipc_signal_t *)&h, &not_a_signal),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    uint32_t *mapped = NULL;
    CHECK(hsa_amd_ipc_memory_attach((hsa_amd_ipc_memory_t *)&h, N * 4, 1, &e.gpu, (void **)&mapped));
    for (uint32_t i = 0; i < N; i++)
        EXPECT(mapped[i] == 100 + i);
    EXPECT(run_store(&e, k, mapped, 500));
    CHECK(hsa_amd_ipc_memory_detach(mapped));
    CHECK(hsa_shut_down());
    printf("child attached\n");
}

/* An allocation shared with a second process: its kernel's values reach
 * the child, the child's kernel's reach the parent; attached in this
 * process too, the same bytes show at a second address. */
static void scenario_ipc(const char *path) {
    env_t e = setup();
    kernel_t *k = load_kernel(&e, path);
    uint32_t *buf = NULL;
    CHECK(hsa_amd_memory_pool_allocate(e.coarse, N * 4, 0, (void **)&buf));
    EXPECT(run_store(&e, k, buf, 7));
    ipc_handle_t h;
    memset(&h, 0, sizeof h);
    CHECK(hsa_amd_ipc_memory_create(buf, N * 4, (hsa_amd_ipc_memory_t *)&h));
    /* Sharing keeps the bytes; kernels after it write the shared pages. */
    EXPECT(buf[5] == 12);
    EXPECT(run_store(&e, k, buf, 100));

    pid_t child = spawn("ipc_child", path, &h);
    wait_ok(child);
    for (uint32_t i = 0; i < N; i++)
        EXPECT(buf[i] == 500 + i);

    /* Attached here too: a second address over the same memory. */
    uint32_t *again = NULL;
    CHECK(hsa_amd_ipc_memory_attach((hsa_amd_ipc_memory_t *)&h, N * 4, 0, NULL, (void **)&again));
    EXPECT(again != buf && again[3] == 503);
    again[3] = 42;
    EXPECT(buf[3] == 42);
    CHECK(hsa_amd_ipc_memory_detach(again));
    EXPECT_STATUS(hsa_amd_ipc_memory_detach(again), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* Bad requests. */
    ipc_handle_t forged = h;
    forged.words[0] ^= 1;
    EXPECT_STATUS(hsa_amd_ipc_memory_attach((hsa_amd_ipc_memory_t *)&forged, N * 4, 0, NULL,
                                            (void **)&again),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_ipc_memory_attach((hsa_amd_ipc_memory_t *)&h, 2 * N * 4, 0, NULL,
                                            (void **)&again),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    uint32_t host[4];
    /* As ROCr's Runtime::IPCCreate: the start of an allocation, all of it. */
    EXPECT_STATUS(hsa_amd_ipc_memory_create(host, sizeof host, (hsa_amd_ipc_memory_t *)&forged),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_ipc_memory_create(buf, 2 * N * 4, (hsa_amd_ipc_memory_t *)&forged),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_ipc_memory_create(buf, N * 4 - 4, (hsa_amd_ipc_memory_t *)&forged),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_ipc_memory_create(buf + 1, 4, (hsa_amd_ipc_memory_t *)&forged),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* Freed, the allocation is shared no more: the handle is dead. */
    CHECK(hsa_amd_memory_pool_free(buf));
    EXPECT_STATUS(hsa_amd_ipc_memory_attach((hsa_amd_ipc_memory_t *)&h, N * 4, 0, NULL,
                                            (void **)&again),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_shut_down());
    printf("OK ipc\n");
}

/* ---------- IPC signals ---------- */

static hsa_signal_value_t wait_for(hsa_signal_t s, hsa_signal_value_t v) {
    return hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, v, 10000000000ull,
                                     HSA_WAIT_STATE_BLOCKED);
}

/* The second process of scenario_ipc_signal: attaches the signal, finds
 * the parent's 5, sets 6, waits for the parent's 7 (parked, woken across
 * processes), adds 100 and leaves. */
static void scenario_ipc_signal_child(const char *hex) {
    ipc_handle_t h;
    for (int i = 0; i < 8; i++)
        EXPECT(sscanf(hex + 8 * i, "%8x", &h.words[i]) == 1);
    CHECK(hsa_init());
    hsa_signal_t s;
    CHECK(hsa_amd_ipc_signal_attach((hsa_amd_ipc_signal_t *)&h, &s));
    EXPECT(hsa_signal_load_scacquire(s) == 5);
    hsa_signal_store_screlease(s, 6);
    EXPECT(wait_for(s, 7) == 7);
    hsa_signal_add_scacq_screl(s, 100);
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_shut_down());
    printf("child signalled\n");
}

/* A signal made with HSA_AMD_SIGNAL_IPC, shared with a second process: a
 * value each side sets reaches the other, and a waiter parked in one is
 * woken by a store in the other. Attached in this process, it is the same
 * signal under a second handle. Rules as ROCr's (ipc_signal.cpp): only an
 * IPC signal has a handle. */
static void scenario_ipc_signal(void) {
    CHECK(hsa_init());
    hsa_signal_t s, plain;
    CHECK(hsa_amd_signal_create(5, 0, NULL, HSA_AMD_SIGNAL_IPC, &s));
    CHECK(hsa_signal_create(0, 0, NULL, &plain));
    ipc_handle_t h;
    memset(&h, 0, sizeof h);
    EXPECT_STATUS(hsa_amd_ipc_signal_create(plain, (hsa_amd_ipc_signal_t *)&h),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_amd_ipc_signal_create(s, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_amd_ipc_signal_create(s, (hsa_amd_ipc_signal_t *)&h));

    pid_t child = spawn("ipc_signal_child", "-", &h);
    EXPECT(wait_for(s, 6) == 6);
    hsa_signal_store_screlease(s, 7);
    EXPECT(wait_for(s, 107) == 107);
    wait_ok(child);

    /* Attached here: another handle to the same signal. */
    hsa_signal_t again;
    CHECK(hsa_amd_ipc_signal_attach((hsa_amd_ipc_signal_t *)&h, &again));
    EXPECT(again.handle != s.handle);
    hsa_signal_store_screlease(again, 9);
    EXPECT(hsa_signal_load_scacquire(s) == 9);
    CHECK(hsa_signal_destroy(again));
    EXPECT(hsa_signal_load_scacquire(s) == 9);

    /* Its value's page belongs to the signal. */
    volatile hsa_signal_value_t *value = NULL;
    CHECK(hsa_amd_signal_value_pointer(s, &value));
    EXPECT(*value == 9);
    EXPECT(hsa_amd_memory_pool_free((void *)value) != HSA_STATUS_SUCCESS);
    EXPECT_STATUS(hsa_amd_ipc_memory_detach((void *)value), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* Destroyed, the handle is dead. */
    CHECK(hsa_signal_destroy(s));
    EXPECT_STATUS(hsa_amd_ipc_signal_attach((hsa_amd_ipc_signal_t *)&h, &again),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    ipc_handle_t forged = h;
    forged.words[0] ^= 1;
    EXPECT_STATUS(hsa_amd_ipc_signal_attach((hsa_amd_ipc_signal_t *)&forged, &again),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_signal_destroy(plain));
    CHECK(hsa_shut_down());
    printf("OK ipc_signal\n");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: vmem SCENARIO KERNELS.hsaco\n");
        return 2;
    }
    const char *s = argv[1], *path = argv[2];
    if (!strcmp(s, "kernel"))
        scenario_kernel(path);
    else if (!strcmp(s, "alias"))
        scenario_alias(path);
    else if (!strcmp(s, "refused"))
        scenario_refused(path);
    else if (!strcmp(s, "share"))
        scenario_share(path);
    else if (!strcmp(s, "refcount"))
        scenario_refcount(path);
    else if (!strcmp(s, "errors"))
        scenario_errors(path);
    else if (!strcmp(s, "uninit"))
        scenario_uninit(path);
    else if (!strcmp(s, "ipc"))
        scenario_ipc(path);
    else if (!strcmp(s, "ipc_child") && argc == 4)
        scenario_ipc_child(path, argv[3]);
    else if (!strcmp(s, "ipc_signal"))
        scenario_ipc_signal();
    else if (!strcmp(s, "ipc_signal_child") && argc == 4)
        scenario_ipc_signal_child(argv[3]);
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    return 0;
}
