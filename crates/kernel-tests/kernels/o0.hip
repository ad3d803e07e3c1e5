// Kernels the tests build without optimisation (-O0): every local lives
// in private memory, calls save and restore registers through it, so
// scratch loads and stores run between nearly every two instructions.

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__device__ __noinline__ unsigned mix(unsigned h, unsigned v) {
  h ^= v;
  h *= 0x9e3779b1u;
  return h ^ (h >> 15);
}

// A loop calling a helper: arguments, the return address and spilled
// SGPRs pass through the stack.
__global__ void hashloop(const unsigned *in, unsigned *out, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned h = in[i];
  for (int k = 0; k < iters; ++k)
    h = mix(h, (unsigned)k);
  out[i] = h;
}

// Bytes, halves and wide values in private memory.
struct mixed {
  unsigned char b;
  short s;
  unsigned long long q;
  float f[4];
};

__global__ void widths(const unsigned *in, unsigned *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  struct mixed m;
  m.b = (unsigned char)in[i];
  m.s = (short)(in[i] >> 8);
  m.q = (unsigned long long)in[i] * 0x100000001ull;
  for (int k = 0; k < 4; ++k)
    m.f[k] = (float)(in[i] >> (8 * k) & 0xff);
  out[i] = m.b + (unsigned)(int)m.s + (unsigned)(m.q >> 17) +
           (unsigned)(m.f[0] + m.f[1] * 2.0f + m.f[2] * 3.0f + m.f[3] * 4.0f);
}
