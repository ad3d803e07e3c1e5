// Histograms and atomics, global and LDS.

// Global histogram with atomic_inc.
kernel void hist_global_inc(global const uint *in, global uint *bins, uint nbins, uint n) {
  uint i = get_global_id(0);
  if (i < n)
    atomic_inc(&bins[in[i] % nbins]);
}

// LDS histogram (atomic_add in local memory), flushed with global atomic_add.
#define MAXBINS 256
kernel void hist_local(global const uint *in, global uint *bins, uint nbins, uint n) {
  local uint h[MAXBINS];
  uint lid = get_local_id(0);
  for (uint b = lid; b < nbins; b += get_local_size(0))
    h[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = get_global_id(0); i < n; i += get_global_size(0))
    atomic_add(&h[in[i] % nbins], 1u);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = lid; b < nbins; b += get_local_size(0))
    if (h[b])
      atomic_add(&bins[b], h[b]);
}

// Weighted float histogram with a compare-and-swap loop on the bit pattern.
kernel void hist_cas_float(global const uint *in, global const float *w, global uint *bins,
                           uint nbins, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  volatile global uint *p = &bins[in[i] % nbins];
  uint old = *p, assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg(p, assumed, as_uint(as_float(assumed) + w[i]));
  } while (old != assumed);
}

// Float atomic add: OpenCL 2.0 atomic_float, and the amdgcn builtin.
kernel void hist_fadd(global const uint *in, global const float *w, global atomic_float *bins,
                      global float *bins2, uint nbins, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  uint b = in[i] % nbins;
  // clang builtin behind atomic_fetch_add_explicit (the overloaded OpenCL name is
  // ambiguous for atomic_float with clang-19 + Debian device libs)
  __opencl_atomic_fetch_add(&bins[b], w[i], __ATOMIC_RELAXED, __OPENCL_MEMORY_SCOPE_DEVICE);
#ifdef __GFX10__
  // RDNA2 has no float add atomic on global memory (the builtin needs
  // atomic-fadd-rtn-insts): the same relaxed add, a compare-swap loop there.
  __opencl_atomic_fetch_add((global atomic_float *)&bins2[b], w[i], __ATOMIC_RELAXED,
                            __OPENCL_MEMORY_SCOPE_DEVICE);
#else
  __builtin_amdgcn_global_atomic_fadd_f32(&bins2[b], w[i]);
#endif
}

// Returned values of atomics: every work-item takes a unique ticket from a
// global counter (atomic_add return) and a per-group LDS counter (atomic_inc
// return); atomic_max / atomic_min / atomic_xchg / atomic_or on globals.
kernel void tickets(global uint *counter, global uint *tickets, global uint *ltickets,
                    global int *minmax, global uint *orbits, global const int *vals) {
  local uint lc;
  uint lid = get_local_id(0);
  if (lid == 0)
    lc = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint i = get_global_id(0);
  tickets[i] = atomic_add(counter, 1u);
  ltickets[i] = atomic_inc(&lc);
  atomic_max(&minmax[0], vals[i]);
  atomic_min(&minmax[1], vals[i]);
  atomic_or(&orbits[i % 4], 1u << (i % 32));
}
