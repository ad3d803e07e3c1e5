/* softgpu's own extensions to HSA and HIP: which device profile a GPU
 * emulates and how close to the real part its results are.
 *
 * HSA: three hsa_agent_get_info attributes outside HSA's and AMD's ranges
 * (ROCr answers them with HSA_STATUS_ERROR_INVALID_ARGUMENT, so a client
 * can tell the runtimes apart); a CPU agent refuses them the same way.
 *
 * HIP: softgpuHipDeviceGetProfile, exported by softgpu's libamdhip64.so.
 * Programs linked against ROCm's library find it with
 * dlsym(RTLD_DEFAULT, "softgpuHipDeviceGetProfile"), which is NULL on a
 * real GPU. */

#ifndef SOFTGPU_EXT_H
#define SOFTGPU_EXT_H

#include <stddef.h>

/* char[64], NUL-terminated: the profile's id, e.g.
 * "softgpu/gfx1151/radeon-8060s". */
#define SOFTGPU_AGENT_INFO_PROFILE_ID 0x53470000u
/* uint32_t: the profile's revision. */
#define SOFTGPU_AGENT_INFO_PROFILE_REVISION 0x53470001u
/* uint32_t: a softgpu_fidelity_t, the highest fidelity the profile reaches. */
#define SOFTGPU_AGENT_INFO_FIDELITY 0x53470002u

typedef enum {
    /* The interfaces are right; results and timing are not claimed. */
    SOFTGPU_FIDELITY_ABI = 0,
    /* Every instruction's result is the hardware's; timing is not modelled. */
    SOFTGPU_FIDELITY_ISA_EXACT = 1,
    /* ISA-exact, plus an analytical estimate of time on the part. */
    SOFTGPU_FIDELITY_TIMING_ESTIMATED = 2,
} softgpu_fidelity_t;

/* HIP (hipError_t as int): the profile `device` emulates. Writes its id,
 * NUL-terminated, into `id` (`len` bytes; hipErrorInvalidValue when it does
 * not fit or a pointer is NULL), its revision and its softgpu_fidelity_t;
 * hipErrorInvalidDevice for a device that does not exist. */
typedef int (*softgpu_hip_device_get_profile_t)(int device, char *id, size_t len,
                                                unsigned *revision, unsigned *fidelity);

/* HIP: hipDeviceSetLimit, which HIP 5.3 and later declare and Debian's
 * 5.2.3 does not; softgpu's libamdhip64.so exports it. Only
 * hipLimitMallocHeapSize (2) can be set: the most device-side malloc may
 * hold together, after which malloc returns NULL in the kernel (until set,
 * the heap grows as device memory allows, as on ROCm).
 * hipErrorInvalidValue for a limit of the device's whole memory or more,
 * hipErrorUnsupportedLimit for another limit. */
typedef int (*softgpu_hip_device_set_limit_t)(int limit, size_t value);

#endif
