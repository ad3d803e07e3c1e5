// Memory-bound benchmark: a streaming scale of float4 (16-byte loads and
// stores, one multiply per component), out[i] = in[i] * s.
kernel void mem_bench(global const float4 *in, global float4 *out, float s, int n) {
  int i = get_global_id(0);
  if (i < n)
    out[i] = in[i] * s;
}
