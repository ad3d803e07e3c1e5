// Several kernels in one file: LDS, private arrays, attributes, dynamic LDS,
// image/sampler arguments and printf.

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void lds_reverse(__global const int *in, __global int *out) {
  __local int tile[64];
  uint l = __builtin_amdgcn_workitem_id_x();
  uint g = __builtin_amdgcn_workgroup_id_x() * 64 + l;
  tile[l] = in[g];
  __builtin_amdgcn_s_barrier();
  out[g] = tile[63 - l];
}

__kernel __attribute__((work_group_size_hint(128, 2, 1)))
void private_array(__global const int *idx, __global volatile int *out, int n) {
  int scratch[67];
  uint g = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
           __builtin_amdgcn_workitem_id_x();
  for (int i = 0; i < 67; i++)
    scratch[i] = i * n + (int)g;
  out[g] = scratch[idx[g] % 67];
}

__kernel void dyn_lds(__global float *restrict out, __local float *buf, float scale, char c, long l,
                      float4 v) {
  uint l0 = __builtin_amdgcn_workitem_id_x();
  buf[l0] = scale * l0 + c + (float)l + v.y;
  __builtin_amdgcn_s_barrier();
  out[l0] = buf[(l0 + 1) % __builtin_amdgcn_workgroup_size_x()];
}

__kernel void xyz(__global int *out) {
  uint x = __builtin_amdgcn_workitem_id_x();
  uint y = __builtin_amdgcn_workitem_id_y();
  uint z = __builtin_amdgcn_workitem_id_z();
  uint gx = __builtin_amdgcn_workgroup_id_x();
  uint gy = __builtin_amdgcn_workgroup_id_y();
  uint gz = __builtin_amdgcn_workgroup_id_z();
  out[x + y * 4 + z * 16] = gx + gy + gz;
}

__kernel void images(read_only image2d_t img, sampler_t s, write_only image2d_t dst,
                     __global int *out) {
  out[0] = 1;
}

__kernel void say(__global int *out) {
  printf("hello %d %s\n", out[0], "world");
}
