/* System, agent, ISA, cache and extension information from softgpu's
 * libhsa-runtime64.so.1, queried the way a plain HSA client (rocminfo,
 * a HIP runtime) does.
 *
 * Prints one line per fact ("key: value") for the Rust test to check; any
 * failed expectation exits with status 1 after saying which. */

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_loader.h>
#include <softgpu_ext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static hsa_status_t count_agent(hsa_agent_t agent, void *data) {
    (void)agent;
    ++*(int *)data;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t stop_at_first(hsa_agent_t agent, void *data) {
    *(hsa_agent_t *)data = agent;
    return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t first_isa(hsa_isa_t isa, void *data) {
    *(hsa_isa_t *)data = isa;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t print_wavefront(hsa_wavefront_t wf, void *data) {
    uint32_t size = 0;
    CHECK(hsa_wavefront_get_info(wf, HSA_WAVEFRONT_INFO_SIZE, &size));
    printf("  wavefront: %u\n", size);
    ++*(int *)data;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t print_cache(hsa_cache_t cache, void *data) {
    uint32_t len = 0, size = 0;
    uint8_t level = 0;
    char name[64] = {0};
    CHECK(hsa_cache_get_info(cache, HSA_CACHE_INFO_NAME_LENGTH, &len));
    EXPECT(len > 0 && len < sizeof name);
    CHECK(hsa_cache_get_info(cache, HSA_CACHE_INFO_NAME, name));
    CHECK(hsa_cache_get_info(cache, HSA_CACHE_INFO_LEVEL, &level));
    CHECK(hsa_cache_get_info(cache, HSA_CACHE_INFO_SIZE, &size));
    EXPECT(size > 0);
    printf("  cache %s: level %u size %u\n", name, level, size);
    ++*(int *)data;
    return HSA_STATUS_SUCCESS;
}

/* Prints the ISA the agent reports through hsa_agent_iterate_isas. */
static void print_isa(hsa_agent_t agent) {
    hsa_isa_t isa = {0};
    CHECK(hsa_agent_iterate_isas(agent, first_isa, &isa));
    EXPECT(isa.handle != 0);
    uint32_t len = 0;
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &len));
    EXPECT(len > 0 && len < 128);
    char *name = malloc(len); /* as rocminfo does: exactly the length */
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, name));
    EXPECT(strlen(name) + 1 == len);
    printf("  isa: %s\n", name);

    /* The ISA's name round-trips through hsa_isa_from_name (to this ISA
     * or, with several GPUs, another agent's ISA of the same name). */
    hsa_isa_t again = {0};
    bool same = false;
    CHECK(hsa_isa_from_name(name, &again));
    CHECK(hsa_isa_compatible(again, isa, &same));
    EXPECT(same);
    free(name);

    bool models[2] = {0}, profiles[2] = {0}, rounding[3] = {0}, base[3] = {0};
    bool f16 = false;
    uint16_t wg_dim[3] = {0};
    uint32_t wg_size = 0, fbarrier = 99, conventions = 0, cc_wave = 0;
    hsa_dim3_t grid_dim = {0, 0, 0};
    uint64_t grid_size = 0;
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_MACHINE_MODELS, models));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_PROFILES, profiles));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES, rounding));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES, base));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_FAST_F16_OPERATION, &f16));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_WORKGROUP_MAX_DIM, wg_dim));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_WORKGROUP_MAX_SIZE, &wg_size));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_GRID_MAX_DIM, &grid_dim));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_GRID_MAX_SIZE, &grid_size));
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_FBARRIER_MAX_SIZE, &fbarrier));
    EXPECT(!models[HSA_MACHINE_MODEL_SMALL] && models[HSA_MACHINE_MODEL_LARGE]);
    EXPECT(profiles[HSA_PROFILE_BASE]);
    EXPECT(!base[HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT]);
    EXPECT(base[HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR]);
    EXPECT(rounding[HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR]);
    EXPECT(f16);
    EXPECT(wg_dim[0] == 1024 && wg_dim[1] == 1024 && wg_dim[2] == 1024);
    EXPECT(grid_dim.x == UINT32_MAX && grid_size == UINT64_MAX);
    EXPECT(fbarrier == 0);
    printf("  isa workgroup max size: %u\n", wg_size);

    /* The deprecated form: call conventions are the wave sizes. */
    CHECK(hsa_isa_get_info(isa, HSA_ISA_INFO_CALL_CONVENTION_COUNT, 0, &conventions));
    EXPECT(conventions >= 1);
    CHECK(hsa_isa_get_info(isa, HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE, 0, &cc_wave));
    EXPECT(cc_wave == 32);
    EXPECT_STATUS(hsa_isa_get_info(isa, HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE,
                                   conventions, &cc_wave),
                  HSA_STATUS_ERROR_INVALID_INDEX);
    EXPECT_STATUS(hsa_isa_get_info_alt(isa, (hsa_isa_info_t)99, &cc_wave),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);

    int waves = 0;
    CHECK(hsa_isa_iterate_wavefronts(isa, print_wavefront, &waves));
    EXPECT(waves >= 1);

    uint16_t policies = 0xFFFF;
    CHECK(hsa_isa_get_exception_policies(isa, HSA_PROFILE_BASE, &policies));
    EXPECT(policies == 0);
    hsa_round_method_t method = 0;
    CHECK(hsa_isa_get_round_method(isa, HSA_FP_TYPE_32, HSA_FLUSH_MODE_NON_FTZ, &method));
    EXPECT(method == HSA_ROUND_METHOD_SINGLE);
    bool compatible = false;
    CHECK(hsa_isa_compatible(isa, isa, &compatible));
    EXPECT(compatible);
}

static hsa_status_t print_agent(hsa_agent_t agent, void *data) {
    int *gpus = data;
    char name[64], vendor[64], product[64], uuid[24] = {0};
    hsa_device_type_t type;
    hsa_agent_feature_t feature = 0;
    uint32_t cus = 0, wave = 0, wg = 0, qmax = 0, line = 0, chip = 0,
             waves_per_cu = 0, node = 0, caches[4] = {0};
    memset(name, 0x55, sizeof name);
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name));
    EXPECT(name[63] == 0); /* NUL-padded to 64 bytes */
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_VENDOR_NAME, vendor));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_FEATURE, &feature));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_NODE, &node));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_CACHE_SIZE, caches));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_CACHELINE_SIZE, &line));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_UUID, uuid));
    EXPECT(cus > 0);
    printf("agent %u: %s name=%s vendor=%s\n", node,
           type == HSA_DEVICE_TYPE_GPU ? "GPU" : "CPU", name, vendor);
    printf("  product: %s\n", product);
    printf("  uuid: %s\n", uuid);
    printf("  compute units: %u\n", cus);
    printf("  cache line: %u\n", line);
    /* softgpu's own attributes: the GPU's device profile and fidelity; a
     * CPU agent has no profile. */
    char profile_id[64];
    uint32_t revision = 0, fidelity = 99;
    hsa_status_t ps = hsa_agent_get_info(agent, (hsa_agent_info_t)SOFTGPU_AGENT_INFO_PROFILE_ID,
                                         profile_id);
    if (type != HSA_DEVICE_TYPE_GPU) {
        EXPECT(ps == HSA_STATUS_ERROR_INVALID_ARGUMENT);
    } else {
        CHECK(ps);
        CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)SOFTGPU_AGENT_INFO_PROFILE_REVISION,
                                 &revision));
        CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)SOFTGPU_AGENT_INFO_FIDELITY, &fidelity));
        EXPECT(fidelity <= SOFTGPU_FIDELITY_TIMING_ESTIMATED);
        printf("  profile: %s revision %u fidelity %u\n", profile_id, revision, fidelity);
    }
    if (type != HSA_DEVICE_TYPE_GPU) {
        EXPECT(feature == HSA_AGENT_FEATURE_AGENT_DISPATCH);
        /* The CPU agent has no ISA. */
        hsa_isa_t none = {0};
        CHECK(hsa_agent_iterate_isas(agent, first_isa, &none));
        EXPECT(none.handle == 0);
        return HSA_STATUS_SUCCESS;
    }
    ++*gpus;
    EXPECT(feature == HSA_AGENT_FEATURE_KERNEL_DISPATCH);
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &wg));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &qmax));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_CHIP_ID, &chip));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU, &waves_per_cu));
    printf("  wavefront size: %u\n", wave);
    printf("  workgroup max size: %u\n", wg);
    printf("  queue max size: %u\n", qmax);
    printf("  chip id: %u\n", chip);
    printf("  max waves per cu: %u\n", waves_per_cu);
    printf("  caches: %u %u %u %u\n", caches[0], caches[1], caches[2], caches[3]);

    /* The rest of the attributes answer without error and sensibly. */
    uint16_t wg_dim[3], major = 0, minor = 0;
    hsa_dim3_t grid;
    uint32_t u = 0, qmin = 0;
    uint8_t ext[128] = {0};
    bool b;
    hsa_isa_t isa;
    hsa_profile_t profile = 9;
    hsa_default_float_rounding_mode_t mode = 0;
    hsa_machine_model_t model = 0;
    hsa_queue_type32_t qtype = 9;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_MACHINE_MODEL, &model));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_PROFILE, &profile));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE, &mode));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES, &u));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_FAST_F16_OPERATION, &b));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_WORKGROUP_MAX_DIM, wg_dim));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_GRID_MAX_DIM, &grid));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_GRID_MAX_SIZE, &u));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_FBARRIER_MAX_SIZE, &u));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUES_MAX, &u));
    EXPECT(u > 0);
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &qmin));
    EXPECT(qmin > 0 && qmin <= qmax && (qmin & (qmin - 1)) == 0);
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_TYPE, &qtype));
    EXPECT(qtype == HSA_QUEUE_TYPE_MULTI);
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_ISA, &isa));
    EXPECT(isa.handle != 0);
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_EXTENSIONS, ext));
    EXPECT(ext[HSA_EXTENSION_AMD_LOADER / 8] & (1 << (HSA_EXTENSION_AMD_LOADER % 8)));
    EXPECT(!(ext[HSA_EXTENSION_IMAGES / 8] & (1 << (HSA_EXTENSION_IMAGES % 8))));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_VERSION_MAJOR, &major));
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_VERSION_MINOR, &minor));
    EXPECT(model == HSA_MACHINE_MODEL_LARGE && profile == HSA_PROFILE_BASE);
    EXPECT(mode == HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR);
    EXPECT(major == 1 && minor == 1);
    EXPECT(wg_dim[0] == 1024 && grid.x > 0);
    static const hsa_amd_agent_info_t amd_u32[] = {
        HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
        HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS, HSA_AMD_AGENT_INFO_BDFID,
        HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU, HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES,
        HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE, HSA_AMD_AGENT_INFO_DOMAIN,
        HSA_AMD_AGENT_INFO_ASIC_REVISION, HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT,
    };
    for (size_t i = 0; i < sizeof amd_u32 / sizeof amd_u32[0]; i++)
        CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)amd_u32[i], &u));
    /* The documented virtual location: GPU n (from 1, as counted here) is
     * 0000:0n:00.0 on NUMA node n. */
    uint32_t bdf = 0, domain = 1;
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_BDFID, &bdf));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DOMAIN, &domain));
    EXPECT(bdf == (uint32_t)*gpus << 8 && domain == 0 && node == (uint32_t)*gpus);
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES, &b));
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS, &b));
    EXPECT(b);
    /* The HDP flush registers AMD's CLR writes after host stores: two
     * distinct words the program may write (device memory is coherent, so
     * a write flushes nothing). */
    hsa_amd_hdp_flush_t hdp = {NULL, NULL};
    CHECK(hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_HDP_FLUSH, &hdp));
    EXPECT(hdp.HDP_MEM_FLUSH_CNTL && hdp.HDP_REG_FLUSH_CNTL &&
           hdp.HDP_MEM_FLUSH_CNTL != hdp.HDP_REG_FLUSH_CNTL);
    if (hdp.HDP_MEM_FLUSH_CNTL && hdp.HDP_REG_FLUSH_CNTL) {
        *hdp.HDP_MEM_FLUSH_CNTL = 1;
        *hdp.HDP_REG_FLUSH_CNTL = 1;
    }
    EXPECT_STATUS(hsa_agent_get_info(agent, (hsa_agent_info_t)0x7777, &u),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);

    print_isa(agent);

    int caches_seen = 0;
    CHECK(hsa_agent_iterate_caches(agent, print_cache, &caches_seen));
    EXPECT(caches_seen == 3);

    bool ok = false;
    uint16_t ext_minor = 0;
    CHECK(hsa_agent_extension_supported(HSA_EXTENSION_AMD_LOADER, agent, 1, 0, &ok));
    EXPECT(ok);
    CHECK(hsa_agent_major_extension_supported(HSA_EXTENSION_AMD_LOADER, agent, 1, &ext_minor, &ok));
    EXPECT(ok && ext_minor == 3);
    CHECK(hsa_agent_extension_supported(HSA_EXTENSION_IMAGES, agent, 1, 0, &ok));
    EXPECT(!ok);
    uint16_t policies = 0xFFFF;
    CHECK(hsa_agent_get_exception_policies(agent, HSA_PROFILE_BASE, &policies));
    EXPECT(policies == 0);
    return HSA_STATUS_SUCCESS;
}

int main(void) {
    /* Before hsa_init: every call but hsa_status_string is refused. */
    uint16_t major = 0, minor = 0;
    int n = 0;
    const char *text = NULL;
    EXPECT_STATUS(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_iterate_agents(count_agent, &n), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
    CHECK(hsa_status_string(HSA_STATUS_ERROR_NOT_INITIALIZED, &text));
    printf("status NOT_INITIALIZED: %s\n", text);

    /* Reference counting: two inits need two shutdowns. */
    CHECK(hsa_init());
    CHECK(hsa_init());
    CHECK(hsa_shut_down());
    CHECK(hsa_iterate_agents(count_agent, &n));
    EXPECT(n >= 2);
    CHECK(hsa_shut_down());
    EXPECT_STATUS(hsa_iterate_agents(count_agent, &n), HSA_STATUS_ERROR_NOT_INITIALIZED);
    EXPECT_STATUS(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
    printf("refcount: ok\n");

    CHECK(hsa_init());

    /* System information. */
    uint64_t freq = 0, max_wait = 0, t0 = 0, t1 = 0;
    hsa_endianness_t endian = 9;
    hsa_machine_model_t model = 9;
    uint8_t ext[128] = {0};
    bool svm = true;
    const char *build = NULL;
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MINOR, &minor));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT, &max_wait));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_ENDIANNESS, &endian));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_MACHINE_MODEL, &model));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_EXTENSIONS, ext));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t0));
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1));
    CHECK(hsa_system_get_info(HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, &svm));
    CHECK(hsa_system_get_info(HSA_AMD_SYSTEM_INFO_BUILD_VERSION, &build));
    EXPECT(t1 >= t0);
    EXPECT(endian == HSA_ENDIANNESS_LITTLE && model == HSA_MACHINE_MODEL_LARGE);
    EXPECT(!svm);
    EXPECT(max_wait == UINT64_MAX);
    EXPECT_STATUS(hsa_system_get_info((hsa_system_info_t)0x999, &freq),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    printf("system version: %u.%u\n", major, minor);
    printf("timestamp frequency: %llu\n", (unsigned long long)freq);
    printf("build: %s\n", build);
    printf("extension loader: %s\n",
           ext[HSA_EXTENSION_AMD_LOADER / 8] & (1 << (HSA_EXTENSION_AMD_LOADER % 8)) ? "yes" : "no");
    printf("extension images: %s\n",
           ext[HSA_EXTENSION_IMAGES / 8] & (1 << (HSA_EXTENSION_IMAGES % 8)) ? "yes" : "no");

    /* Extension queries and tables. */
    bool ok = false;
    uint16_t ext_minor = 0;
    CHECK(hsa_system_extension_supported(HSA_EXTENSION_AMD_LOADER, 1, 0, &ok));
    EXPECT(ok);
    CHECK(hsa_system_extension_supported(HSA_EXTENSION_AMD_LOADER, 2, 0, &ok));
    EXPECT(!ok);
    CHECK(hsa_system_extension_supported(HSA_EXTENSION_IMAGES, 1, 0, &ok));
    EXPECT(!ok);
    CHECK(hsa_system_extension_supported(HSA_EXTENSION_FINALIZER, 1, 0, &ok));
    EXPECT(!ok);
    CHECK(hsa_system_major_extension_supported(HSA_EXTENSION_AMD_LOADER, 1, &ext_minor, &ok));
    EXPECT(ok);
    printf("loader extension: 1.%u\n", ext_minor);
    EXPECT_STATUS(hsa_system_extension_supported(0x123, 1, 0, &ok),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    const char *ext_name = NULL;
    CHECK(hsa_extension_get_name(HSA_EXTENSION_AMD_LOADER, &ext_name));
    printf("extension name: %s\n", ext_name);

    hsa_ven_amd_loader_1_03_pfn_t loader;
    memset(&loader, 0, sizeof loader);
    CHECK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader, &loader));
    EXPECT(loader.hsa_ven_amd_loader_query_host_address != NULL);
    EXPECT(loader.hsa_ven_amd_loader_query_segment_descriptors != NULL);
    EXPECT(loader.hsa_ven_amd_loader_query_executable != NULL);
    EXPECT(loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects != NULL);
    EXPECT(loader.hsa_ven_amd_loader_loaded_code_object_get_info != NULL);
    EXPECT(loader.hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size != NULL);
    EXPECT(loader.hsa_ven_amd_loader_iterate_executables != NULL);
    /* A table shorter than 1.03 gets only the entries that fit. */
    hsa_ven_amd_loader_1_00_pfn_t small[2];
    memset(small, 0, sizeof small);
    CHECK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof small[0], small));
    EXPECT(small[0].hsa_ven_amd_loader_query_executable != NULL);
    EXPECT(small[1].hsa_ven_amd_loader_query_host_address == NULL);
    hsa_ven_amd_loader_1_01_pfn_t v101;
    memset(&v101, 0, sizeof v101);
    CHECK(hsa_system_get_extension_table(HSA_EXTENSION_AMD_LOADER, 1, 1, &v101));
    EXPECT(v101.hsa_ven_amd_loader_loaded_code_object_get_info != NULL);
    size_t segments = 0;
    EXPECT_STATUS(loader.hsa_ven_amd_loader_query_segment_descriptors(NULL, &segments),
                  HSA_STATUS_ERROR);
    int local = 0;
    const void *host = NULL;
    EXPECT_STATUS(loader.hsa_ven_amd_loader_query_host_address(&local, &host),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    char table[64];
    EXPECT_STATUS(hsa_system_get_major_extension_table(HSA_EXTENSION_IMAGES, 1, sizeof table, table),
                  HSA_STATUS_ERROR);

    /* Agents. */
    int gpus = 0;
    CHECK(hsa_iterate_agents(print_agent, &gpus));
    printf("gpu agents: %d\n", gpus);
    hsa_agent_t first = {0};
    EXPECT_STATUS(hsa_iterate_agents(stop_at_first, &first), HSA_STATUS_INFO_BREAK);
    EXPECT(first.handle != 0);
    EXPECT_STATUS(hsa_iterate_agents(NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* Forged and foreign handles. */
    char name[64];
    hsa_agent_t forged = {0x1234};
    EXPECT_STATUS(hsa_agent_get_info(forged, HSA_AGENT_INFO_NAME, name),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_agent_iterate_isas(forged, first_isa, NULL), HSA_STATUS_ERROR_INVALID_AGENT);
    hsa_isa_t bad_isa = {first.handle}; /* an agent handle is not an ISA */
    uint32_t len = 0;
    EXPECT_STATUS(hsa_isa_get_info_alt(bad_isa, HSA_ISA_INFO_NAME_LENGTH, &len),
                  HSA_STATUS_ERROR_INVALID_ISA);
    hsa_wavefront_t bad_wave = {0x1234};
    EXPECT_STATUS(hsa_wavefront_get_info(bad_wave, HSA_WAVEFRONT_INFO_SIZE, &len),
                  HSA_STATUS_ERROR_INVALID_WAVEFRONT);
    hsa_cache_t bad_cache = {0x1234};
    EXPECT_STATUS(hsa_cache_get_info(bad_cache, HSA_CACHE_INFO_SIZE, &len),
                  HSA_STATUS_ERROR_INVALID_CACHE);
    hsa_isa_t isa;
    EXPECT_STATUS(hsa_isa_from_name("amdgcn-amd-amdhsa--gfx9999", &isa),
                  HSA_STATUS_ERROR_INVALID_ISA_NAME);
    EXPECT_STATUS(hsa_isa_from_name(NULL, &isa), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* Status strings. */
    hsa_status_t codes[] = {HSA_STATUS_SUCCESS, HSA_STATUS_ERROR_INVALID_AGENT,
                            HSA_STATUS_ERROR_INVALID_ISA_NAME, HSA_STATUS_ERROR_INVALID_MEMORY_POOL};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK(hsa_status_string(codes[i], &text));
        printf("status %#x: %s\n", (unsigned)codes[i], text);
    }
    EXPECT_STATUS(hsa_status_string((hsa_status_t)0x7777, &text), HSA_STATUS_ERROR_INVALID_ARGUMENT);

    CHECK(hsa_shut_down());
    printf("OK info\n");
    return 0;
}
