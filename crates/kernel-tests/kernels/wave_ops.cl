// Wave-level (wave32) operations: DPP, ds_swizzle, permlanex16 and the
// cl_khr_subgroups built-ins. Launched with 32-lane waves (the default on gfx11).

// DPP row_xmask butterflies: every lane ends with the sum of its row of 16.
kernel void dpp_row_sum(global const int *in, global int *out) {
  uint i = get_global_id(0);
  int v = in[i];
  v += __builtin_amdgcn_update_dpp(0, v, 0x161, 0xf, 0xf, false); // row_xmask:1
  v += __builtin_amdgcn_update_dpp(0, v, 0x162, 0xf, 0xf, false); // row_xmask:2
  v += __builtin_amdgcn_update_dpp(0, v, 0x164, 0xf, 0xf, false); // row_xmask:4
  v += __builtin_amdgcn_update_dpp(0, v, 0x168, 0xf, 0xf, false); // row_xmask:8
  out[i] = v;
}

// Individual DPP controls, 6 results per lane:
//  0 quad_perm [3,2,1,0], 1 row_shr:1 bound_ctrl (0 fill), 2 row_shr:3 no
//  bound_ctrl (keeps old = -1), 3 row_ror:5, 4 row_mirror, 5 row_half_mirror
kernel void dpp_controls(global const int *in, global int *out) {
  uint i = get_global_id(0);
  int v = in[i];
  global int *o = out + i * 6;
  o[0] = __builtin_amdgcn_update_dpp(-1, v, 0x1b, 0xf, 0xf, false);
  o[1] = __builtin_amdgcn_update_dpp(-1, v, 0x111, 0xf, 0xf, true);
  o[2] = __builtin_amdgcn_update_dpp(-1, v, 0x113, 0xf, 0xf, false);
  o[3] = __builtin_amdgcn_update_dpp(-1, v, 0x125, 0xf, 0xf, false);
  o[4] = __builtin_amdgcn_update_dpp(-1, v, 0x140, 0xf, 0xf, false);
  o[5] = __builtin_amdgcn_update_dpp(-1, v, 0x141, 0xf, 0xf, false);
}

// ds_swizzle patterns, 4 results per lane:
//  0 bitmask mode xor 1 (swap neighbours), 1 bitmask mode and 0x18 | or 3
//  (broadcast lane 3 of each group of 8), 2 quad-perm mode [2,3,0,1],
//  3 bitmask xor 0x1f (reverse 32)
kernel void swizzle(global const int *in, global int *out) {
  uint i = get_global_id(0);
  int v = in[i];
  global int *o = out + i * 4;
  o[0] = __builtin_amdgcn_ds_swizzle(v, (1 << 10) | 0x1f);
  o[1] = __builtin_amdgcn_ds_swizzle(v, (3 << 5) | 0x18);
  o[2] = __builtin_amdgcn_ds_swizzle(v, 0x8000 | (2 << 0) | (3 << 2) | (0 << 4) | (1 << 6));
  o[3] = __builtin_amdgcn_ds_swizzle(v, (0x1f << 10) | 0x1f);
}

// Full wave32 sum: DPP within rows, permlanex16 across the two rows.
kernel void wave_sum_dpp(global const int *in, global int *out) {
  uint i = get_global_id(0);
  int v = in[i];
  v += __builtin_amdgcn_update_dpp(0, v, 0x161, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x162, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x164, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x168, 0xf, 0xf, false);
  v += __builtin_amdgcn_permlanex16(0, v, 0x76543210, 0xfedcba98, false, false);
  out[i] = v;
}

#pragma OPENCL EXTENSION cl_khr_subgroups : enable
// Sub-group built-ins (device library): 6 results per lane.
kernel void subgroup_ops(global const int *in, global int *out) {
  uint i = get_global_id(0);
  int v = in[i];
  global int *o = out + i * 6;
  o[0] = get_sub_group_size();
  o[1] = get_sub_group_local_id();
  o[2] = sub_group_reduce_add(v);
  o[3] = sub_group_scan_inclusive_add(v);
  o[4] = sub_group_broadcast(v, 5);
  o[5] = sub_group_reduce_max(v);
}

#if defined(__gfx1200__) || defined(__gfx1201__)
// gfx12's split workgroup barrier: the barrier's state before the wave
// signals (signal count bits 16..22, members 4..10, valid bit 0) and, in
// bit 31, whether its signal was the first.
kernel void barrier_first_signal(global uint *states) {
  uint before = __builtin_amdgcn_s_get_barrier_state(-1);
  uint first = __builtin_amdgcn_s_barrier_signal_isfirst(-1);
  __builtin_amdgcn_s_barrier_wait(-1);
  states[get_global_id(0)] = before | (first ? 1u << 31 : 0);
}
#endif
