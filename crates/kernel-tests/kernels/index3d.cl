// Every work-item writes its 3D ids; out has 12 uints per work-item, stored at
// the linearised global id.
kernel void index3d(global uint *out, uint gx, uint gy, uint gz) {
  uint x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= gx || y >= gy || z >= gz)
    return;
  uint lin = (z * gy + y) * gx + x;
  global uint *o = out + lin * 12;
  o[0] = get_local_id(0);
  o[1] = get_local_id(1);
  o[2] = get_local_id(2);
  o[3] = get_group_id(0);
  o[4] = get_group_id(1);
  o[5] = get_group_id(2);
  o[6] = get_local_size(0) * 10000 + get_local_size(1) * 100 + get_local_size(2);
  o[7] = get_num_groups(0) * 10000 + get_num_groups(1) * 100 + get_num_groups(2);
  o[8] = get_global_size(0);
  o[9] = get_global_size(1) * 1000 + get_global_size(2);
  o[10] = get_local_linear_id();
  o[11] = get_work_dim();
}
