// Private arrays indexed dynamically (register indexing or scratch memory).

// Small array: filled with a data-dependent pattern, then read at
// data-dependent indices.
kernel void private_small(global const uint *idx, global const uint *vals, global uint *out,
                          uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  uint a[16];
  for (int k = 0; k < 16; k++)
    a[k] = vals[i] * (k + 1) + k;
  uint j = idx[i];
  a[j & 15] ^= 0xdeadbeefu;
  a[(j >> 4) & 15] += 7;
  out[i] = a[(j >> 8) & 15] + a[(j >> 12) & 15] * 3;
}

// Large array (definitely scratch): a per-lane sieve-like walk.
kernel void private_large(global const uint *seed, global uint *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  uint a[200];
  uint s = seed[i];
  for (int k = 0; k < 200; k++) {
    s = s * 1664525u + 1013904223u;
    a[k] = s;
  }
  uint acc = 0;
  uint p = seed[i] % 200;
  for (int k = 0; k < 300; k++) {
    acc += a[p];
    a[(p * 7 + 3) % 200] ^= acc;
    p = a[p] % 200;
  }
  out[i] = acc;
}
