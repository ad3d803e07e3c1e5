/* Code object readers, executables, symbols and the AMD loader extension
 * of softgpu's libhsa-runtime64.so.1.
 *
 * Usage: executable KERNELS-gfx1151.hsaco KERNELS-gfx1100.hsaco
 * The code object holds kernels `add` and `scale`, a __constant int
 * table[4] = {10, 20, 30, 40} and a __global int counter = 7.
 *
 * Prints one line per fact for the Rust test to check and OK at the end;
 * any failed expectation exits with status 1 after saying which. */

#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_loader.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static hsa_agent_t gpu;
static hsa_ven_amd_loader_1_03_pfn_t loader;

static hsa_status_t find_gpu(hsa_agent_t agent, void *data) {
    hsa_device_type_t type;
    (void)data;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU) {
        gpu = agent;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    EXPECT(f != NULL);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(*size);
    EXPECT(fread(buf, 1, *size, f) == *size);
    fclose(f);
    return buf;
}

/* The symbol's name, through NAME_LENGTH and NAME (no terminator). */
static char *symbol_name(hsa_executable_symbol_t sym) {
    uint32_t len = 0;
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len));
    char *name = calloc(len + 1, 1);
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name));
    EXPECT(strlen(name) == len);
    return name;
}

static hsa_executable_symbol_t lookup(hsa_executable_t exe, const char *name) {
    hsa_executable_symbol_t sym = {0};
    CHECK(hsa_executable_get_symbol_by_name(exe, name, &gpu, &sym));
    return sym;
}

static uint64_t kernel_object(hsa_executable_t exe, const char *name) {
    uint64_t object = 0;
    CHECK(hsa_executable_symbol_get_info(lookup(exe, name), HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                         &object));
    return object;
}

static void print_kernel(hsa_executable_t exe, const char *name) {
    hsa_executable_symbol_t sym = lookup(exe, name);
    hsa_symbol_kind_t kind = 9;
    uint64_t object = 0;
    uint32_t kernarg = 0, align = 0, group = 0, priv = 0, cc = 9;
    bool dynamic = true, definition = false;
    hsa_symbol_linkage_t linkage = 9;
    hsa_agent_t agent = {0};
    uint32_t module_len = 9;
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, &align));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &priv));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK, &dynamic));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION, &cc));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE, &linkage));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION, &definition));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_AGENT, &agent));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH, &module_len));
    EXPECT(kind == HSA_SYMBOL_KIND_KERNEL);
    EXPECT(object != 0 && object % 64 == 0);
    EXPECT(align >= 16 && (align & (align - 1)) == 0);
    EXPECT(definition && linkage == HSA_SYMBOL_LINKAGE_PROGRAM);
    EXPECT(agent.handle == gpu.handle);
    EXPECT(module_len == 0);
    EXPECT(cc == 0); /* wave32, the ISA's first call convention */
    /* Variable attributes do not apply to kernels. */
    uint64_t address;
    EXPECT_STATUS(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    char *n = symbol_name(sym);
    EXPECT(strcmp(n, name) == 0);
    free(n);
    printf("kernel %s: kernarg %u align %u group %u private %u dynamic %d\n", name, kernarg, align,
           group, priv, dynamic);
}

/* Prints a variable; returns its address. */
static void *print_variable(hsa_executable_t exe, const char *name) {
    hsa_executable_symbol_t sym = lookup(exe, name);
    hsa_symbol_kind_t kind = 9;
    uint64_t address = 0;
    uint32_t size = 0, align = 0;
    hsa_variable_segment_t segment = 9;
    hsa_variable_allocation_t allocation = 9;
    bool is_const = false;
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, &size));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT, &align));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT, &segment));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION, &allocation));
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST, &is_const));
    EXPECT(kind == HSA_SYMBOL_KIND_VARIABLE);
    EXPECT(address != 0 && address % align == 0);
    EXPECT(allocation == HSA_VARIABLE_ALLOCATION_AGENT);
    uint64_t object;
    EXPECT_STATUS(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    printf("variable %s: size %u segment %s const %d\n", name, size,
           segment == HSA_VARIABLE_SEGMENT_READONLY ? "readonly" : "global", is_const);
    return (void *)(uintptr_t)address;
}

static hsa_status_t count_symbol(hsa_executable_t exe, hsa_executable_symbol_t sym, void *data) {
    (void)exe;
    (void)sym;
    ++*(int *)data;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t print_symbol(hsa_executable_t exe, hsa_executable_symbol_t sym, void *data) {
    char *name = symbol_name(sym);
    printf("symbol: %s\n", name);
    free(name);
    return count_symbol(exe, sym, data);
}

static hsa_status_t count_agent_symbol(hsa_executable_t exe, hsa_agent_t agent,
                                       hsa_executable_symbol_t sym, void *data) {
    (void)exe;
    (void)sym;
    EXPECT(agent.handle == gpu.handle);
    ++*(int *)data;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t stop_symbols(hsa_executable_t exe, hsa_executable_symbol_t sym, void *data) {
    (void)exe;
    (void)sym;
    ++*(int *)data;
    return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t collect_loaded(hsa_executable_t exe, hsa_loaded_code_object_t lco, void *data) {
    (void)exe;
    hsa_loaded_code_object_t *out = data;
    EXPECT(out[0].handle == 0);
    out[0] = lco;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t count_executable(hsa_executable_t exe, void *data) {
    (void)exe;
    ++*(int *)data;
    return HSA_STATUS_SUCCESS;
}

/* Checks what the loader reports for a loaded code object of `size`
 * bytes; returns its URI (caller frees). */
static char *check_loaded(hsa_executable_t exe, hsa_loaded_code_object_t lco, size_t size,
                          uint64_t kernel) {
    hsa_executable_t owner = {0};
    hsa_agent_t agent = {0};
    uint32_t kind = 0, storage = 0, uri_len = 0;
    uint64_t base = 0, mem_size = 0, load_base = 0, load_size = 0;
    int64_t delta = 0;
    hsa_status_t (*info)(hsa_loaded_code_object_t, hsa_ven_amd_loader_loaded_code_object_info_t,
                         void *) = loader.hsa_ven_amd_loader_loaded_code_object_get_info;
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_EXECUTABLE, &owner));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND, &kind));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT, &agent));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE, &storage));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE, &base));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE, &mem_size));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE, &load_base));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE, &load_size));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA, &delta));
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH, &uri_len));
    char *uri = calloc(uri_len + 1, 1);
    CHECK(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI, uri));
    EXPECT(strlen(uri) == uri_len);
    EXPECT(owner.handle == exe.handle);
    EXPECT(kind == HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT);
    EXPECT(agent.handle == gpu.handle);
    EXPECT(storage == HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY);
    EXPECT(base != 0 && mem_size == size);
    /* The copy holds the code object: an ELF file. */
    EXPECT(memcmp((const void *)(uintptr_t)base, "\177ELF", 4) == 0);
    EXPECT(load_size > 0 && kernel >= load_base && kernel < load_base + load_size);
    EXPECT((uint64_t)delta == load_base);
    int fd_out = 0;
    EXPECT_STATUS(info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_FILE, &fd_out),
                  HSA_STATUS_ERROR);
    EXPECT_STATUS(info(lco, (hsa_ven_amd_loader_loaded_code_object_info_t)99, &fd_out),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    return uri;
}

int main(int argc, char **argv) {
    EXPECT(argc == 3);
    const char *path = argv[1], *other_path = argv[2];
    hsa_code_object_reader_t reader = {0};
    EXPECT_STATUS(hsa_code_object_reader_create_from_file(0, &reader), HSA_STATUS_ERROR_NOT_INITIALIZED);

    CHECK(hsa_init());
    EXPECT_STATUS(hsa_iterate_agents(find_gpu, NULL), HSA_STATUS_INFO_BREAK);
    memset(&loader, 0, sizeof loader);
    CHECK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader, &loader));

    /* Readers: from a file (from its current offset), from memory. */
    int fd = open(path, O_RDONLY);
    EXPECT(fd >= 0);
    CHECK(hsa_code_object_reader_create_from_file(fd, &reader));
    EXPECT(lseek(fd, 0, SEEK_CUR) == 0); /* the offset is left alone */
    size_t size = 0;
    void *bytes = read_file(path, &size);
    hsa_code_object_reader_t mem_reader = {0};
    CHECK(hsa_code_object_reader_create_from_memory(bytes, size, &mem_reader));
    EXPECT_STATUS(hsa_code_object_reader_create_from_file(-1, &reader), HSA_STATUS_ERROR_INVALID_FILE);
    EXPECT_STATUS(hsa_code_object_reader_create_from_file(987, &reader), HSA_STATUS_ERROR_INVALID_FILE);
    int wronly = open("/dev/null", O_WRONLY);
    hsa_code_object_reader_t dummy;
    EXPECT_STATUS(hsa_code_object_reader_create_from_file(wronly, &dummy), HSA_STATUS_ERROR_INVALID_FILE);
    close(wronly);
    /* An empty FIFO whose writer never writes (we hold its write end) is
     * an error within seconds, not a call that never returns; /dev/zero
     * is refused at once. */
    char fifo[64];
    snprintf(fifo, sizeof fifo, "/tmp/softgpu-fifo-%d", (int)getpid());
    unlink(fifo);
    EXPECT(mkfifo(fifo, 0600) == 0);
    int silent = open(fifo, O_RDWR);
    EXPECT(silent >= 0);
    time_t before = time(NULL);
    EXPECT_STATUS(hsa_code_object_reader_create_from_file(silent, &dummy), HSA_STATUS_ERROR_INVALID_FILE);
    EXPECT(time(NULL) - before < 30);
    close(silent);
    unlink(fifo);
    int zero = open("/dev/zero", O_RDONLY);
    EXPECT_STATUS(hsa_code_object_reader_create_from_file(zero, &dummy), HSA_STATUS_ERROR_INVALID_FILE);
    close(zero);
    EXPECT_STATUS(hsa_code_object_reader_create_from_memory(bytes, 0, &dummy),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_code_object_reader_create_from_memory(NULL, size, &dummy),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    /* The loader's ranged form reads the same bytes at an offset. */
    hsa_code_object_reader_t ranged = {0};
    CHECK(loader.hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(fd, 0, size, &ranged));
    EXPECT_STATUS(loader.hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(
                      fd, size + 1, 16, &dummy),
                  HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    EXPECT_STATUS(loader.hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(
                      fd, 0, 0, &dummy),
                  HSA_STATUS_ERROR_INVALID_CODE_OBJECT);

    /* An executable from the file reader. */
    hsa_executable_t exe = {0};
    CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
    hsa_loaded_code_object_t lco = {0};
    CHECK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, &lco));
    EXPECT(lco.handle != 0);
    hsa_executable_state_t state = 9;
    CHECK(hsa_executable_get_info(exe, HSA_EXECUTABLE_INFO_STATE, &state));
    EXPECT(state == HSA_EXECUTABLE_STATE_UNFROZEN);
    EXPECT(kernel_object(exe, "add.kd") == 0); /* no kernel object until frozen */
    uint32_t result = 9;
    EXPECT_STATUS(hsa_executable_validate(exe, &result), HSA_STATUS_ERROR_INVALID_EXECUTABLE);
    CHECK(hsa_executable_freeze(exe, NULL));
    CHECK(hsa_executable_get_info(exe, HSA_EXECUTABLE_INFO_STATE, &state));
    EXPECT(state == HSA_EXECUTABLE_STATE_FROZEN);
    hsa_profile_t profile = 9;
    hsa_default_float_rounding_mode_t mode = 9;
    CHECK(hsa_executable_get_info(exe, HSA_EXECUTABLE_INFO_PROFILE, &profile));
    CHECK(hsa_executable_get_info(exe, HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE, &mode));
    EXPECT(profile == HSA_PROFILE_FULL && mode == HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT);
    CHECK(hsa_executable_validate(exe, &result));
    EXPECT(result == 0);
    CHECK(hsa_executable_validate_alt(exe, NULL, &result));
    EXPECT(result == 0);

    print_kernel(exe, "add.kd");
    print_kernel(exe, "scale.kd");
    uint64_t add_object = kernel_object(exe, "add.kd");
    printf("kernel objects differ: %d\n", add_object != kernel_object(exe, "scale.kd"));
    int *table = print_variable(exe, "table");
    int *counter = print_variable(exe, "counter");
    /* Device addresses are host addresses: the initial values read back. */
    printf("table values: %d %d %d %d\n", table[0], table[1], table[2], table[3]);
    printf("counter value: %d\n", *counter);

    /* The deprecated lookup ignores the module name. */
    hsa_executable_symbol_t old_form = {0};
    CHECK(hsa_executable_get_symbol(exe, "module", "add.kd", gpu, 0, &old_form));
    EXPECT(old_form.handle == lookup(exe, "add.kd").handle);
    /* A NULL agent finds the symbol too. */
    hsa_executable_symbol_t any = {0};
    CHECK(hsa_executable_get_symbol_by_name(exe, "add.kd", NULL, &any));
    EXPECT(any.handle == old_form.handle);

    /* Symbol iteration. */
    int all = 0, agent_syms = 0, program_syms = 0, stopped = 0;
    CHECK(hsa_executable_iterate_symbols(exe, print_symbol, &all));
    CHECK(hsa_executable_iterate_agent_symbols(exe, gpu, count_agent_symbol, &agent_syms));
    CHECK(hsa_executable_iterate_program_symbols(exe, count_symbol, &program_syms));
    EXPECT_STATUS(hsa_executable_iterate_symbols(exe, stop_symbols, &stopped), HSA_STATUS_INFO_BREAK);
    EXPECT(stopped == 1);
    EXPECT_STATUS(hsa_executable_iterate_symbols(exe, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    printf("symbols: %d agent %d program %d\n", all, agent_syms, program_syms);

    /* Refusals. */
    hsa_executable_symbol_t sym;
    EXPECT_STATUS(hsa_executable_get_symbol_by_name(exe, "nope.kd", &gpu, &sym),
                  HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
    EXPECT_STATUS(hsa_executable_load_agent_code_object(exe, gpu, mem_reader, NULL, NULL),
                  HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
    EXPECT_STATUS(hsa_executable_freeze(exe, NULL), HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
    hsa_agent_t forged_agent = {0x1234};
    hsa_executable_t other = {0};
    CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR, NULL, &other));
    EXPECT_STATUS(hsa_executable_load_agent_code_object(other, forged_agent, mem_reader, NULL, NULL),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    hsa_code_object_reader_t forged_reader = {0x1234};
    EXPECT_STATUS(hsa_executable_load_agent_code_object(other, gpu, forged_reader, NULL, NULL),
                  HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
    char garbage[4096];
    memset(garbage, 0xA5, sizeof garbage);
    hsa_code_object_reader_t garbage_reader = {0};
    CHECK(hsa_code_object_reader_create_from_memory(garbage, sizeof garbage, &garbage_reader));
    EXPECT_STATUS(hsa_executable_load_agent_code_object(other, gpu, garbage_reader, NULL, NULL),
                  HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    int other_fd = open(other_path, O_RDONLY);
    EXPECT(other_fd >= 0);
    hsa_code_object_reader_t other_reader = {0};
    CHECK(hsa_code_object_reader_create_from_file(other_fd, &other_reader));
    hsa_status_t wrong_isa = hsa_executable_load_agent_code_object(other, gpu, other_reader, NULL, NULL);
    EXPECT(wrong_isa == HSA_STATUS_ERROR_INVALID_ISA || wrong_isa == HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
    printf("gfx1100 code object on the gfx1151 agent: %#x\n", (unsigned)wrong_isa);
    EXPECT_STATUS(hsa_executable_load_program_code_object(other, mem_reader, NULL, NULL), HSA_STATUS_ERROR);
    hsa_executable_t forged_exe = {0x1234};
    EXPECT_STATUS(hsa_executable_freeze(forged_exe, NULL), HSA_STATUS_ERROR_INVALID_EXECUTABLE);
    EXPECT_STATUS(hsa_executable_create_alt(HSA_PROFILE_BASE, (hsa_default_float_rounding_mode_t)7, NULL, &other),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);

    /* The ISA named by the other code object is known but differs. */
    hsa_isa_t gfx1100 = {0}, agent_isa = {0};
    bool compatible = true;
    CHECK(hsa_isa_from_name("amdgcn-amd-amdhsa--gfx1100", &gfx1100));
    CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_ISA, &agent_isa));
    CHECK(hsa_isa_compatible(gfx1100, agent_isa, &compatible));
    EXPECT(!compatible);

    /* A second executable from the memory reader: its own kernel objects. */
    hsa_executable_t exe2 = {0};
    CHECK(hsa_executable_create(HSA_PROFILE_BASE, HSA_EXECUTABLE_STATE_UNFROZEN, NULL, &exe2));
    hsa_loaded_code_object_t lco2 = {0};
    CHECK(hsa_executable_load_agent_code_object(exe2, gpu, mem_reader, NULL, &lco2));
    CHECK(hsa_executable_freeze(exe2, NULL));
    uint64_t add2 = kernel_object(exe2, "add.kd");
    EXPECT(add2 != 0 && add2 != add_object);

    /* The loader extension. */
    const void *host = NULL;
    CHECK(loader.hsa_ven_amd_loader_query_host_address(counter, &host));
    EXPECT(host == counter);
    CHECK(loader.hsa_ven_amd_loader_query_host_address((const void *)(uintptr_t)add_object, &host));
    EXPECT(host == (const void *)(uintptr_t)add_object);
    int on_stack = 0;
    EXPECT_STATUS(loader.hsa_ven_amd_loader_query_host_address(&on_stack, &host),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(loader.hsa_ven_amd_loader_query_host_address(NULL, &host),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_executable_t found = {0};
    CHECK(loader.hsa_ven_amd_loader_query_executable((const void *)(uintptr_t)add_object, &found));
    EXPECT(found.handle == exe.handle);
    CHECK(loader.hsa_ven_amd_loader_query_executable((const void *)(uintptr_t)add2, &found));
    EXPECT(found.handle == exe2.handle);
    EXPECT_STATUS(loader.hsa_ven_amd_loader_query_executable(&on_stack, &found),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_loaded_code_object_t seen[1] = {{0}};
    CHECK(loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(exe, collect_loaded, seen));
    EXPECT(seen[0].handle == lco.handle);
    char *uri = check_loaded(exe, lco, size, add_object);
    printf("uri: %.7s\n", uri);
    EXPECT(strncmp(uri, "file://", 7) == 0 && strstr(uri, "size=") != NULL);
    free(uri);
    uri = check_loaded(exe2, lco2, size, add2);
    printf("uri: %.9s\n", uri);
    EXPECT(strncmp(uri, "memory://", 9) == 0);
    free(uri);
    int executables = 0;
    CHECK(loader.hsa_ven_amd_loader_iterate_executables(count_executable, &executables));
    EXPECT(executables == 3); /* exe, other, exe2 */

    /* Variables the client defines. */
    static int agent_var = 5, readonly_var = 6, program_var = 7;
    hsa_executable_t exe3 = {0};
    CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR, NULL, &exe3));
    CHECK(hsa_executable_agent_global_variable_define(exe3, gpu, "agent_var", &agent_var));
    CHECK(hsa_executable_readonly_variable_define(exe3, gpu, "readonly_var", &readonly_var));
    CHECK(hsa_executable_global_variable_define(exe3, "program_var", &program_var));
    EXPECT_STATUS(hsa_executable_agent_global_variable_define(exe3, gpu, "agent_var", &agent_var),
                  HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
    EXPECT_STATUS(hsa_executable_global_variable_define(exe3, NULL, &program_var),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(hsa_executable_freeze(exe3, NULL));
    EXPECT_STATUS(hsa_executable_agent_global_variable_define(exe3, gpu, "late", &agent_var),
                  HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
    uint64_t address = 0;
    bool is_const = true;
    hsa_variable_allocation_t allocation = 9;
    CHECK(hsa_executable_symbol_get_info(lookup(exe3, "agent_var"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                                         &address));
    EXPECT(address == (uint64_t)(uintptr_t)&agent_var);
    CHECK(hsa_executable_symbol_get_info(lookup(exe3, "agent_var"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST,
                                         &is_const));
    EXPECT(!is_const);
    CHECK(hsa_executable_symbol_get_info(lookup(exe3, "readonly_var"),
                                         HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST, &is_const));
    EXPECT(is_const);
    hsa_executable_symbol_t program_sym = {0};
    CHECK(hsa_executable_get_symbol_by_name(exe3, "program_var", NULL, &program_sym));
    CHECK(hsa_executable_symbol_get_info(program_sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION,
                                         &allocation));
    EXPECT(allocation == HSA_VARIABLE_ALLOCATION_PROGRAM);
    program_syms = 0;
    CHECK(hsa_executable_iterate_program_symbols(exe3, count_symbol, &program_syms));
    agent_syms = 0;
    CHECK(hsa_executable_iterate_agent_symbols(exe3, gpu, count_agent_symbol, &agent_syms));
    printf("defined: agent %d program %d\n", agent_syms, program_syms);

    /* Destroying an executable invalidates its symbols and loaded code
     * objects; the others are unaffected. */
    hsa_executable_symbol_t add_sym = lookup(exe, "add.kd");
    CHECK(hsa_executable_destroy(exe));
    uint64_t object = 0;
    EXPECT_STATUS(hsa_executable_symbol_get_info(add_sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object),
                  HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL);
    EXPECT_STATUS(hsa_executable_get_symbol_by_name(exe, "add.kd", &gpu, &sym),
                  HSA_STATUS_ERROR_INVALID_EXECUTABLE);
    uint32_t kind = 0;
    EXPECT_STATUS(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
                      lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND, &kind),
                  HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    EXPECT_STATUS(loader.hsa_ven_amd_loader_query_executable((const void *)(uintptr_t)add_object, &found),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_executable_destroy(exe), HSA_STATUS_ERROR_INVALID_EXECUTABLE);
    EXPECT(kernel_object(exe2, "add.kd") == add2);

    CHECK(hsa_code_object_reader_destroy(reader));
    EXPECT_STATUS(hsa_code_object_reader_destroy(reader), HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
    CHECK(hsa_code_object_reader_destroy(mem_reader));
    CHECK(hsa_code_object_reader_destroy(ranged));
    CHECK(hsa_executable_destroy(exe2));
    CHECK(hsa_executable_destroy(exe3));
    CHECK(hsa_executable_destroy(other));
    close(fd);
    close(other_fd);
    free(bytes);
    CHECK(hsa_shut_down());
    printf("OK executable\n");
    return 0;
}
