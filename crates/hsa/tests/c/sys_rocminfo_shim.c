/* LD_PRELOAD shim that lets Debian's rocminfo (5.2) run against softgpu.
 *
 * Before it calls hsa_init, rocminfo checks for AMD's kernel driver: it
 * runs `lsmod | grep amdgpu` and opens /dev/kfd read-write, and exits if
 * either fails. softgpu needs no driver, so this shim answers just those
 * two checks (the lsmod pipeline prints "amdgpu", /dev/kfd opens as
 * /dev/null). Every HSA call still goes to the library on
 * LD_LIBRARY_PATH, unchanged. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

FILE *popen(const char *command, const char *type) {
    FILE *(*real)(const char *, const char *) =
        (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "popen");
    if (command != NULL && strstr(command, "lsmod") != NULL)
        return real("echo amdgpu", type);
    return real(command, type);
}

static const char *redirect(const char *path) {
    return path != NULL && strcmp(path, "/dev/kfd") == 0 ? "/dev/null" : path;
}

int open(const char *path, int flags, ...) {
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
    va_end(ap);
    return real(redirect(path), flags, mode);
}

int open64(const char *path, int flags, ...) {
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
    va_end(ap);
    return real(redirect(path), flags, mode);
}
