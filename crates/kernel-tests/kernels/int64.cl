// 64-bit (and 32-bit) integer division and remainder, signed and unsigned.
// Inputs never contain a zero divisor or LONG_MIN / -1.
// out has 8 ulongs per element:
//  0 (long)a / (long)b, 1 (long)a % (long)b, 2 a / b unsigned, 3 a % b unsigned,
//  4 (int)a / (int)b32, 5 (int)a % (int)b32, 6 (uint)a / (uint)b32, 7 (uint)a % (uint)b32
kernel void divmod64(global const ulong *a, global const ulong *b, global const uint *b32,
                     global ulong *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  ulong x = a[i], y = b[i];
  uint y32 = b32[i];
  global ulong *o = out + i * 8;
  o[0] = (ulong)((long)x / (long)y);
  o[1] = (ulong)((long)x % (long)y);
  o[2] = x / y;
  o[3] = x % y;
  o[4] = (ulong)(long)((int)(uint)x / (int)y32);
  o[5] = (ulong)(long)((int)(uint)x % (int)y32);
  o[6] = (ulong)((uint)x / y32);
  o[7] = (ulong)((uint)x % y32);
}

// 64-bit multiply, mul_hi, shifts and rotates.
kernel void mul64(global const ulong *a, global const ulong *b, global ulong *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  ulong x = a[i], y = b[i];
  global ulong *o = out + i * 5;
  o[0] = x * y;
  o[1] = mul_hi(x, y);
  o[2] = (ulong)mul_hi((long)x, (long)y);
  o[3] = (x << (y & 63)) ^ (x >> ((y >> 8) & 63));
  o[4] = (ulong)((long)x >> (y & 63));
}
