// Tree reduction in LDS, one partial result per workgroup (block size 256).
#define BLOCK 256
kernel void reduce_u32(global const uint *in, global uint *out, uint n) {
  local uint s[BLOCK];
  uint lid = get_local_id(0);
  uint gid = get_global_id(0);
  s[lid] = gid < n ? in[gid] : 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (lid < stride)
      s[lid] += s[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    out[get_group_id(0)] = s[0];
}

// Same tree in f32: the CPU reference reproduces the tree order, so the
// result is bit exact.
kernel void reduce_f32(global const float *in, global float *out, uint n) {
  local float s[BLOCK];
  uint lid = get_local_id(0);
  uint gid = get_global_id(0);
  s[lid] = gid < n ? in[gid] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (lid < stride)
      s[lid] = s[lid] + s[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    out[get_group_id(0)] = s[0];
}

// Many barriers: each of `rounds` rounds rotates the LDS array by one slot and
// adds the lane id, with two barriers per round.
kernel void barrier_rotate(global uint *data, uint rounds) {
  local uint s[BLOCK];
  uint lid = get_local_id(0);
  uint base = get_group_id(0) * BLOCK;
  s[lid] = data[base + lid];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = 0; r < rounds; r++) {
    uint v = s[(lid + 1) % BLOCK];
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] = v + lid;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  data[base + lid] = s[lid];
}
