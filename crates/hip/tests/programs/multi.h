// Shared between multi_kernel.hip and multi_main.hip.
#pragma once
#include <hip/hip_runtime.h>

hipError_t launch_square_plus(const float* in, float* out, float c, int n, hipStream_t s);
