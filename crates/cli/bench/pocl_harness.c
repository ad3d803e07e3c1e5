/* Runs one OpenCL kernel on pocl for `softgpu bench --suite`.
 *
 * Usage: pocl_harness SOURCE KERNEL GX,GY,GZ LX,LY,LZ LAUNCHES ARG...
 *        pocl_harness --probe   (prints the pocl device's name)
 * GX.. is the global size in work-items, LX.. the work-group size; an ARG
 * is in:PATH (a buffer from a file), out:BYTES:PATH (a zeroed buffer written
 * to PATH after the first run) or val:HEX (a scalar's little-endian bytes).
 *
 * It builds the program, runs the kernel LAUNCHES times (which also makes
 * pocl compile it for this work-group size), writes the outputs and prints
 * "ready". Then each line N on stdin runs N x LAUNCHES enqueues and a
 * clFinish and prints the seconds they took, so the caller can interleave
 * these trials with its own. Exit status 3: no pocl platform. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ARGS 16

static void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) {
        fprintf(stderr, "pocl_harness: %s failed (OpenCL error %d)\n", what, err);
        exit(1);
    }
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(*len + 1);
    if (fread(data, 1, *len, f) != *len) {
        perror(path);
        exit(1);
    }
    data[*len] = 0;
    fclose(f);
    return data;
}

/* The pocl platform's CPU device, or exit 3. */
static cl_device_id pocl_device(void) {
    cl_platform_id platforms[16];
    cl_uint n = 0;
    if (clGetPlatformIDs(16, platforms, &n) != CL_SUCCESS)
        n = 0;
    for (cl_uint i = 0; i < n; i++) {
        char name[256] = "";
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        cl_device_id dev;
        if (strstr(name, "Portable Computing Language") &&
            clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) == CL_SUCCESS)
            return dev;
    }
    fprintf(stderr, "pocl_harness: no pocl OpenCL platform found\n");
    exit(3);
}

static void dims(const char *s, size_t d[3]) {
    d[0] = d[1] = d[2] = 1;
    sscanf(s, "%zu,%zu,%zu", &d[0], &d[1], &d[2]);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--probe")) {
        char name[256] = "";
        clGetDeviceInfo(pocl_device(), CL_DEVICE_NAME, sizeof name, name, NULL);
        printf("%s\n", name);
        return 0;
    }
    if (argc < 6 || argc - 6 > MAX_ARGS) {
        fprintf(stderr, "usage: pocl_harness SOURCE KERNEL GX,GY,GZ LX,LY,LZ LAUNCHES ARG...\n");
        return 2;
    }
    cl_int err;
    cl_device_id dev = pocl_device();
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    check(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    check(err, "clCreateCommandQueue");

    size_t len;
    const char *src = slurp(argv[1], &len);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, &len, &err);
    check(err, "clCreateProgramWithSource");
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        char log[16384] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "pocl_harness: build failed:\n%s\n", log);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, argv[2], &err);
    check(err, "clCreateKernel");
    size_t global[3], local[3];
    dims(argv[3], global);
    dims(argv[4], local);
    long launches = atol(argv[5]);

    cl_mem outs[MAX_ARGS];
    const char *out_paths[MAX_ARGS];
    size_t out_bytes[MAX_ARGS];
    int nouts = 0;
    for (int i = 6; i < argc; i++) {
        char *a = argv[i];
        cl_uint index = (cl_uint)(i - 6);
        if (!strncmp(a, "in:", 3) || !strncmp(a, "out:", 4)) {
            int out = a[0] == 'o';
            size_t bytes;
            void *data;
            const char *path;
            if (out) {
                bytes = strtoull(a + 4, &a, 10);
                path = a + 1;
                data = calloc(bytes, 1);
            } else {
                path = a + 3;
                data = slurp(path, &bytes);
            }
            cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, data, &err);
            check(err, "clCreateBuffer");
            free(data);
            check(clSetKernelArg(k, index, sizeof m, &m), "clSetKernelArg");
            if (out) {
                outs[nouts] = m;
                out_paths[nouts] = path;
                out_bytes[nouts++] = bytes;
            }
        } else if (!strncmp(a, "val:", 4)) {
            unsigned char v[16];
            size_t n = strlen(a + 4) / 2;
            for (size_t b = 0; b < n && b < sizeof v; b++)
                sscanf(a + 4 + 2 * b, "%2hhx", &v[b]);
            check(clSetKernelArg(k, index, n, v), "clSetKernelArg");
        } else {
            fprintf(stderr, "pocl_harness: bad argument %s\n", a);
            return 2;
        }
    }

    for (long i = 0; i < launches; i++)
        check(clEnqueueNDRangeKernel(q, k, 3, NULL, global, local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    check(clFinish(q), "clFinish");
    for (int o = 0; o < nouts; o++) {
        void *data = malloc(out_bytes[o]);
        check(clEnqueueReadBuffer(q, outs[o], CL_TRUE, 0, out_bytes[o], data, 0, NULL, NULL), "clEnqueueReadBuffer");
        FILE *f = fopen(out_paths[o], "wb");
        if (!f || fwrite(data, 1, out_bytes[o], f) != out_bytes[o] || fclose(f)) {
            perror(out_paths[o]);
            return 1;
        }
        free(data);
    }
    printf("ready\n");
    fflush(stdout);

    long reps;
    while (scanf("%ld", &reps) == 1) {
        double t = now();
        for (long r = 0; r < reps * launches; r++)
            check(clEnqueueNDRangeKernel(q, k, 3, NULL, global, local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
        check(clFinish(q), "clFinish");
        printf("%.9f\n", now() - t);
        fflush(stdout);
    }
    return 0;
}
