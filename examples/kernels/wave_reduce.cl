// Wave-level (wave32) reductions without LDS:
//  * sum: DPP row_xmask butterflies inside each row of 16 lanes, then
//    v_permlanex16 to add the other row — every lane ends with the wave sum;
//  * max: the cl_khr_subgroups built-in sub_group_reduce_max (device library).
// Every lane writes both results (all lanes of a wave must agree). Writing them
// from lane 0 only lets clang-19 sink the cross-lane operations into the
// lane-0 branch, where the other lanes are inactive and the sums come out wrong
// (on hardware as well).
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
kernel void wave_reduce(global const int *in, global int *sums, global int *maxes) {
  int i = get_global_id(0);
  int v = in[i];
  int s = v;
  s += __builtin_amdgcn_update_dpp(0, s, 0x161, 0xf, 0xf, false); // row_xmask:1
  s += __builtin_amdgcn_update_dpp(0, s, 0x162, 0xf, 0xf, false); // row_xmask:2
  s += __builtin_amdgcn_update_dpp(0, s, 0x164, 0xf, 0xf, false); // row_xmask:4
  s += __builtin_amdgcn_update_dpp(0, s, 0x168, 0xf, 0xf, false); // row_xmask:8
  s += __builtin_amdgcn_permlanex16(0, s, 0x76543210, 0xfedcba98, false, false);
  int m = sub_group_reduce_max(v);
  sums[i] = s;
  maxes[i] = m;
}
