// ALU-bound benchmark: every work-item runs `iters` rounds over 8 independent
// f32 accumulators. Each round is a dependent fma -> mul -> add chain per
// accumulator (24 VALU ops a round), so the chains are long and there is
// enough independent work to fill a pipeline. The inputs come from kernel
// arguments and the work-item id and the results are stored, so the compiler
// cannot fold or drop any of it. With a in (0,1) the values converge to a
// fixed point and stay normal (no overflow, no denormals).
#define ACC 8
kernel void alu_bench(global float *out, int iters, float a, float b, float c) {
  int gid = get_global_id(0);
  float acc[ACC];
#pragma unroll
  for (int k = 0; k < ACC; k++)
    acc[k] = (float)(gid + k) * 0.001f;
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int k = 0; k < ACC; k++) {
      float t = fma(acc[k], a, b);
      t = t * c;
      acc[k] = t + b;
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < ACC; k++)
    sum = sum + acc[k];
  out[gid] = sum;
}
