// Tree reduction in LDS: each 256-wide workgroup sums 512 inputs (two per
// work-item on load) and writes one partial sum. Every level of the tree is
// separated by a barrier, so all 8 waves of the group take part.
#define BLOCK 256
kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void reduce_sum(global const float *in, global float *partial, int n) {
  local float s[BLOCK];
  int lid = get_local_id(0);
  int i = get_group_id(0) * (2 * BLOCK) + lid;
  float a = i < n ? in[i] : 0.0f;
  float b = i + BLOCK < n ? in[i + BLOCK] : 0.0f;
  s[lid] = a + b;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (lid < stride)
      s[lid] = s[lid] + s[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    partial[get_group_id(0)] = s[0];
}
