// Exclusive prefix sum of uints in three passes:
//  scan_blocks: Blelloch scan of each 2*BLOCK chunk in LDS, writes the chunk total;
//  scan_blocks again on the totals (single chunk);
//  add_offsets: adds each chunk's scanned total back.
#define BLOCK 128
#define CHUNK (2 * BLOCK)
kernel void scan_blocks(global const uint *in, global uint *out, global uint *totals, uint n) {
  local uint s[CHUNK];
  uint lid = get_local_id(0);
  uint base = get_group_id(0) * CHUNK;
  uint a = base + lid, b = base + lid + BLOCK;
  s[lid] = a < n ? in[a] : 0u;
  s[lid + BLOCK] = b < n ? in[b] : 0u;
  uint offset = 1;
  for (uint d = CHUNK >> 1; d > 0; d >>= 1) { // up-sweep
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      uint ai = offset * (2 * lid + 1) - 1;
      uint bi = offset * (2 * lid + 2) - 1;
      s[bi] += s[ai];
    }
    offset <<= 1;
  }
  if (lid == 0) {
    totals[get_group_id(0)] = s[CHUNK - 1];
    s[CHUNK - 1] = 0;
  }
  for (uint d = 1; d < CHUNK; d <<= 1) { // down-sweep
    offset >>= 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < d) {
      uint ai = offset * (2 * lid + 1) - 1;
      uint bi = offset * (2 * lid + 2) - 1;
      uint t = s[ai];
      s[ai] = s[bi];
      s[bi] += t;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (a < n)
    out[a] = s[lid];
  if (b < n)
    out[b] = s[lid + BLOCK];
}

kernel void add_offsets(global uint *data, global const uint *offsets, uint n) {
  uint i = get_global_id(0);
  if (i < n)
    data[i] += offsets[i / CHUNK];
}
