// A plain HIP kernel, built for two targets into one offload bundle.
#define __global__ __attribute__((global))

extern "C" __global__ void scale(float *x, float a, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
          __builtin_amdgcn_workitem_id_x();
  if (i < n)
    x[i] *= a;
}
