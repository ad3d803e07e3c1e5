// Compiled with -mwavefrontsize64.
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

// 4 results per lane: sub-group size, sub-group local id, sub-group sum,
// inclusive scan.
kernel void wave64_subgroups(global const int *in, global int *out) {
  uint i = get_global_id(0);
  int v = in[i];
  global int *o = out + i * 4;
  o[0] = get_sub_group_size();
  o[1] = get_sub_group_local_id();
  o[2] = sub_group_reduce_add(v);
  o[3] = sub_group_scan_inclusive_add(v);
}

// LDS reduction + saxpy in wave64, block 256 (4 waves).
kernel void wave64_reduce(global const uint *in, global uint *out, uint n) {
  local uint s[256];
  uint lid = get_local_id(0);
  uint gid = get_global_id(0);
  s[lid] = gid < n ? in[gid] : 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = 128; stride > 0; stride >>= 1) {
    if (lid < stride)
      s[lid] += s[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    out[get_group_id(0)] = s[0];
}

kernel void wave64_saxpy(global float *y, global const float *x, float a, uint n) {
  uint i = get_global_id(0);
  if (i < n)
    y[i] = a * x[i] + y[i];
}
