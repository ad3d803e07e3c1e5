// Wave-level reductions without LDS (wave32 on RDNA, wave64 on CDNA):
//  * sum: DPP row_xmask butterflies inside each row of 16 lanes, then
//    v_permlanex16 to add the other row — every lane ends with the wave sum
//    (CDNA: row scans and row broadcasts, below);
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
#if defined(__GFX9__)
  // CDNA (wave64, GCN's DPP): a scan of each row by shifts of 1, 2, 4 and
  // 8 lanes (lanes shifted in from outside the row add the old value, 0),
  // then row_bcast:15 adds each even row's total to the next row and
  // row_bcast:31 the first two rows' total to rows 2 and 3, so lane 63
  // holds the wave's sum, which every lane reads.
  s += __builtin_amdgcn_update_dpp(0, s, 0x111, 0xf, 0xf, false); // row_shr:1
  s += __builtin_amdgcn_update_dpp(0, s, 0x112, 0xf, 0xf, false); // row_shr:2
  s += __builtin_amdgcn_update_dpp(0, s, 0x114, 0xf, 0xf, false); // row_shr:4
  s += __builtin_amdgcn_update_dpp(0, s, 0x118, 0xf, 0xf, false); // row_shr:8
  s += __builtin_amdgcn_update_dpp(0, s, 0x142, 0xa, 0xf, false); // row_bcast:15
  s += __builtin_amdgcn_update_dpp(0, s, 0x143, 0xc, 0xf, false); // row_bcast:31
  s = __builtin_amdgcn_readlane(s, 63);
#else
  s += __builtin_amdgcn_update_dpp(0, s, 0x161, 0xf, 0xf, false); // row_xmask:1
  s += __builtin_amdgcn_update_dpp(0, s, 0x162, 0xf, 0xf, false); // row_xmask:2
  s += __builtin_amdgcn_update_dpp(0, s, 0x164, 0xf, 0xf, false); // row_xmask:4
  s += __builtin_amdgcn_update_dpp(0, s, 0x168, 0xf, 0xf, false); // row_xmask:8
  s += __builtin_amdgcn_permlanex16(0, s, 0x76543210, 0xfedcba98, false, false);
#endif
  int m = sub_group_reduce_max(v);
  sums[i] = s;
  maxes[i] = m;
}
