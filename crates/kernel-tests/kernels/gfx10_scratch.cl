// Private memory reached through gfx10's private segment buffer (LLVM's
// MUBUF scratch for gfx10): private arrays indexed dynamically, of mixed
// widths (bytes, shorts, dwords, 64-bit and 128-bit members), and a call
// whose frame sits above the caller's (the stack pointer in SOFFSET).

typedef struct {
  uchar b[3];
  ushort h;
  uint w;
  ulong d;
  uint4 q;
} rec;

__attribute__((noinline)) uint walk(uint seed, uint steps) {
  uint a[48];
  uint s = seed;
  for (int k = 0; k < 48; k++) {
    s = s * 1664525u + 1013904223u;
    a[k] = s;
  }
  uint acc = 0, p = seed % 48;
  for (uint k = 0; k < steps; k++) {
    acc += a[p];
    a[(p * 5 + 1) % 48] ^= acc;
    p = a[p] % 48;
  }
  return acc;
}

kernel void mixed(global const uint *in, global uint *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  rec r[12];
  for (int k = 0; k < 12; k++) {
    uint v = in[(i + k) % n];
    r[k].b[0] = v;
    r[k].b[1] = v >> 8;
    r[k].b[2] = v >> 16;
    r[k].h = v >> 3;
    r[k].w = v * 3;
    r[k].d = ((ulong)v << 20) | k;
    r[k].q = (uint4)(v, v + 1, v + 2, v + k);
  }
  uint j = in[i] % 12, m = (in[i] >> 4) % 12;
  r[m].w += 5;
  r[m].q.y ^= 0xffu;
  r[m].b[1] += 1;
  rec s = r[j];
  rec t = r[(j + m) % 12];
  out[i] = s.b[0] + s.b[1] * 3u + s.b[2] * 5u + s.h * 7u + s.w + (uint)(s.d >> 7) + (uint)s.d +
           s.q.x + s.q.w * 11u + t.w + t.q.y + t.b[1] + walk(in[i], 20 + i % 7);
}
