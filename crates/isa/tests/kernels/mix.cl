// Small OpenCL kernels covering the instruction mix clang-19 emits for gfx11.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half v16h __attribute__((ext_vector_type(16)));
typedef float v8f __attribute__((ext_vector_type(8)));

#define GID (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

kernel void vadd(global const float *a, global const float *b, global float *c) {
    uint i = GID;
    c[i] = a[i] + b[i];
}

kernel void fmath(global float *x, float k) {
    uint i = GID;
    float v = x[i];
    x[i] = __builtin_fmaf(v, k, 1.5f) / (v + 0.25f) - __builtin_sqrtf(v) * __builtin_fabsf(k);
}

kernel void hmath(global half *x, half k) {
    uint i = GID;
    x[i] = x[i] * k + (half)2.0f - x[i + 1];
}

kernel void dmath(global double *x, double k) {
    uint i = GID;
    x[i] = x[i] * k + 1.0 / (x[i] + 3.0);
}

kernel void idiv(global int *x, global uint *y, int d) {
    uint i = GID;
    x[i] = x[i] / d + x[i] % 7;
    y[i] = y[i] / (uint)d;
    ulong z = (ulong)y[i] * 0x123456789ull;
    y[i + 1] = (uint)(z >> 17);
}

kernel void lds(global float *x) {
    local float tile[256];
    uint l = __builtin_amdgcn_workitem_id_x();
    tile[l] = x[GID];
    __builtin_amdgcn_s_barrier();
    x[GID] = tile[255 - l] + tile[(l + 1) & 255];
}

kernel void atomics(global int *x, local int *l, global long *y) {
    __atomic_fetch_add(x, 1, __ATOMIC_RELAXED);
    int old = __atomic_fetch_max(x + 1, (int)GID, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(l, old, __ATOMIC_RELAXED);
    __atomic_fetch_add(y, 3L, __ATOMIC_RELAXED);
    int e = 5;
    __atomic_compare_exchange_n(x + 3, &e, old, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    x[GID + 2] = old;
}

kernel void dpp(global int *x) {
    int v = x[GID];
    v += __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);
    v += __builtin_amdgcn_mov_dpp(v, 0x1b, 0xf, 0xf, true);
    v += __builtin_amdgcn_ds_swizzle(v, 0x041f);
    v += __builtin_amdgcn_ds_swizzle(v, 0x801b);
    v += __builtin_amdgcn_readfirstlane(v);
    x[GID] = v;
}

#ifdef __GFX12__
// gfx12's WMMA takes A and B in half the registers.
typedef half v8h __attribute__((ext_vector_type(8)));
kernel void wmma(global v8h *a, global v8f *c) {
    uint i = __builtin_amdgcn_workitem_id_x();
    c[i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], a[i + 32], c[i]);
}
#elif defined(__GFX11__)
kernel void wmma(global v16h *a, global v8f *c) {
    uint i = __builtin_amdgcn_workitem_id_x();
    c[i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[i], a[i + 32], c[i]);
}
#endif
// gfx10.3 has no WMMA.

kernel void priv(global int *x, int n) {
    int arr[64];
    for (int k = 0; k < 64; k++)
        arr[k] = x[k] * n;
    x[GID] = arr[(GID * 7 + n) & 63];
}

// Globals addressed pc-relative: the linker resolves the high half of the
// offset into a 32-bit literal of 0 or -1 (`s_addc_u32 s1, s1, 0`).
constant float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
global int counter;

kernel void globals(global float *out, int n) {
    uint i = GID;
    out[i] = table[i & 3] * n;
    __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}
