// The kernels of `softgpu bench --suite`. One source, compiled by clang-19
// for softgpu and by pocl for the host CPU, so it keeps to OpenCL C 1.2
// (what both accept). Sizes come in as arguments: one compile serves all.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define TILE 16

// C = A * B, all n x n (n a multiple of TILE), through 16x16 LDS tiles.
kernel void sgemm(global const float *a, global const float *b, global float *c, int n) {
    local float ta[TILE][TILE];
    local float tb[TILE][TILE];
    int lx = get_local_id(0), ly = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        ta[ly][lx] = a[row * n + t + lx];
        tb[ly][lx] = b[(t + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            acc += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}

// 5-point Jacobi step on a w x h grid; the border is copied.
kernel void stencil2d(global const float *in, global float *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}

// 7-point step on an n^3 grid; the border is copied.
kernel void stencil3d(global const float *in, global float *out, int n) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int s = n * n;
    int i = z * s + y * n + x;
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.4f * in[i] + 0.1f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - s] + in[i + s]);
}

// 5x5 convolution of a w x h image, clamped at the edges.
kernel void conv2d(global const float *in, constant float *filter, global float *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; dy++) {
        int yy = clamp(y + dy, 0, h - 1);
        for (int dx = -2; dx <= 2; dx++) {
            int xx = clamp(x + dx, 0, w - 1);
            acc += filter[(dy + 2) * 5 + dx + 2] * in[yy * w + xx];
        }
    }
    out[y * w + x] = acc;
}

// Float atomic add by compare-and-swap (OpenCL 1.2 has no float atomics).
void atomic_add_f32(volatile global float *p, float v) {
    volatile global uint *u = (volatile global uint *)p;
    uint old = *u, seen;
    while ((seen = atomic_cmpxchg(u, old, as_uint(as_float(old) + v))) != old)
        old = seen;
}

// sum[0] += the sum of in[0..n): each work-item adds a strided run, the
// group reduces in an LDS tree, one atomic per group. 256-item groups.
kernel void reduce(global const float *in, global float *sum, int n) {
    local float part[256];
    int l = get_local_id(0);
    float acc = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        acc += in[i];
    part[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 128; s > 0; s >>= 1) {
        if (l < s)
            part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        atomic_add_f32(sum, part[0]);
}

// Inclusive prefix sum of each 256-item group's slice (Hillis-Steele in LDS).
kernel void scan(global const uint *in, global uint *out) {
    local uint buf[2][256];
    int l = get_local_id(0), g = get_global_id(0);
    int src = 0;
    buf[0][l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < 256; d <<= 1) {
        uint v = buf[src][l];
        if (l >= d)
            v += buf[src][l - d];
        buf[1 - src][l] = v;
        src = 1 - src;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = buf[src][l];
}

// 256-bin histogram of the low byte of in[0..n): local atomics per group,
// then one global atomic per bin and group. 256-item groups.
kernel void histogram(global const uint *in, global uint *bins, int n) {
    local uint h[256];
    int l = get_local_id(0);
    h[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&h[in[i] & 255]);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&bins[l], h[l]);
}

kernel void saxpy(float a, global const float *x, global const float *y, global float *z) {
    int i = get_global_id(0);
    z[i] = a * x[i] + y[i];
}

// STREAM's triad: a = b + s * c.
kernel void triad(global float *a, global const float *b, global const float *c, float s) {
    int i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}

// Every other float of the input, gathered: a strided read, a dense write.
kernel void strided(global const float *in, global float *out) {
    int i = get_global_id(0);
    out[i] = in[2 * i] * 2.0f;
}

kernel void copy(global const float4 *in, global float4 *out) {
    int i = get_global_id(0);
    out[i] = in[i];
}

// out = in^T for an n x n matrix, through a padded 16x16 LDS tile so both
// the read and the write are row-contiguous.
kernel void transpose(global const float *in, global float *out, int n) {
    local float tile[TILE][TILE + 1];
    int lx = get_local_id(0), ly = get_local_id(1);
    int bx = get_group_id(0) * TILE, by = get_group_id(1) * TILE;
    tile[ly][lx] = in[(by + ly) * n + bx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(bx + ly) * n + by + lx] = tile[lx][ly];
}

// `rounds` rounds of a xorshift-multiply mix on each u32.
kernel void hash(global const uint *in, global uint *out, int rounds) {
    int i = get_global_id(0);
    uint h = in[i];
    for (int r = 0; r < rounds; r++) {
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        h += (uint)r;
    }
    out[i] = h;
}

// y = a*x + p(x), p a degree-8 polynomial by Horner, in f64.
kernel void f64_poly(double a, global const double *x, global double *y) {
    int i = get_global_id(0);
    double v = x[i];
    double p = 0.0078125;
    p = p * v + 0.015625;
    p = p * v - 0.03125;
    p = p * v + 0.0625;
    p = p * v - 0.125;
    p = p * v + 0.25;
    p = p * v - 0.5;
    p = p * v + 1.0;
    p = p * v - 2.0;
    y[i] = a * v + p;
}

// The many-small-launches case: one group of work per launch.
kernel void tiny(global const int *in, global int *out) {
    int i = get_global_id(0);
    out[i] = in[i] * 3 + 1;
}
