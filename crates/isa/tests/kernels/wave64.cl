// Kernels compiled with -mwavefrontsize64: lane masks are SGPR pairs, VCC
// is the full vcc, EXEC manipulation uses the _b64 SALU ops.

#define GID (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

kernel void select(global float *x, global int *y, float k) {
    uint i = GID;
    float v = x[i];
    x[i] = v > k ? v * 2.0f : (v < -k ? -v : k);
    y[i] = y[i] != 3 ? y[i] + 7 : y[i] - 1;
}

kernel void branchy(global int *x, int n) {
    uint i = GID;
    int v = x[i];
    if (v > n) {
        for (int k = 0; k < v; k++)
            v = v * 3 + (k & 1 ? 1 : -1);
    } else {
        v = -v;
    }
    x[i] = v;
}

kernel void wide(global ulong *x, global long *y, ulong k) {
    uint i = GID;
    x[i] = x[i] + k * 0x1234567ull;
    y[i] = y[i] / 5 + (y[i] < 0 ? 1 : 0);
}

kernel void fdiv(global float *x, global double *d) {
    uint i = GID;
    x[i] = x[i] / (x[i + 1] + 1.0f);
    d[i] = d[i] / (d[i + 1] + 3.0);
}

kernel void ballot(global uint *x) {
    uint i = GID;
    ulong b = __builtin_amdgcn_ballot_w64(x[i] > 10);
    x[i] = (uint)b + (uint)(b >> 32) + __builtin_amdgcn_readfirstlane(x[i]);
}
