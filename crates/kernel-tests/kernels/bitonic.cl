// Bitonic sort of uints.
// bitonic_step: one (k, j) step over the whole array in global memory (one
// work-item per element pair, many dispatches).
kernel void bitonic_step(global uint *data, uint j, uint k) {
  uint i = get_global_id(0);
  uint ixj = i ^ j;
  if (ixj > i) {
    uint a = data[i], b = data[ixj];
    bool up = (i & k) == 0;
    if ((a > b) == up) {
      data[i] = b;
      data[ixj] = a;
    }
  }
}

// bitonic_local: a whole 1024-element sort in one workgroup of 512 threads
// in LDS (55 barrier-separated steps).
#define N 1024
// 512 work-items exceed the default 256, so the size is declared.
kernel __attribute__((reqd_work_group_size(512, 1, 1))) void bitonic_local(global uint *data) {
  local uint s[N];
  uint lid = get_local_id(0);
  uint base = get_group_id(0) * N;
  s[lid] = data[base + lid];
  s[lid + N / 2] = data[base + lid + N / 2];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 2; k <= N; k <<= 1) {
    for (uint j = k >> 1; j > 0; j >>= 1) {
      // each thread handles one pair
      uint i = 2 * j * (lid / j) + (lid % j);
      uint ixj = i + j;
      uint a = s[i], b = s[ixj];
      bool up = (i & k) == 0;
      if ((a > b) == up) {
        s[i] = b;
        s[ixj] = a;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  data[base + lid] = s[lid];
  data[base + lid + N / 2] = s[lid + N / 2];
}
