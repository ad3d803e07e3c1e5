// Non-inlined, recursive and indirect calls (HIP: OpenCL forbids function pointers).

// Recursive function with a data-dependent depth (needs a real call stack).
__device__ __noinline__ unsigned rec_sum(unsigned n, unsigned acc) {
  if (n == 0)
    return acc;
  unsigned local[4] = {n, n * 3u, n ^ acc, acc + 1};  // forces stack traffic
  return rec_sum(n - 1, acc * 31u + local[n & 3]);
}

__device__ __noinline__ unsigned fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__global__ void recursive(const unsigned *in, unsigned *out, unsigned *out2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = rec_sum(in[i] % 40u, in[i]);
    out2[i] = fib(in[i] % 12u);
  }
}

typedef unsigned (*binop)(unsigned, unsigned);
__device__ __noinline__ unsigned op_add(unsigned a, unsigned b) { return a + b; }
__device__ __noinline__ unsigned op_mul(unsigned a, unsigned b) { return a * b; }
__device__ __noinline__ unsigned op_xor_rot(unsigned a, unsigned b) {
  return a ^ ((b << 7) | (b >> 25));
}
__device__ __noinline__ unsigned op_sub_rec(unsigned a, unsigned b) { return rec_sum(b & 7u, a); }

// Function pointer table in global memory (needs the loader's relocations).
__device__ binop ops_table[4] = {op_add, op_mul, op_xor_rot, op_sub_rec};

__global__ void indirect_table(const unsigned *sel, const unsigned *a, const unsigned *b,
                               unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = ops_table[sel[i] & 3u](a[i], b[i]);
}

// Function pointer chosen in registers (divergent indirect call).
__global__ void indirect_select(const unsigned *sel, const unsigned *a, const unsigned *b,
                                unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  unsigned s = sel[i] & 3u;
  binop f = s == 0 ? op_add : s == 1 ? op_mul : s == 2 ? op_xor_rot : op_sub_rec;
  // apply twice, through a volatile to keep the call indirect
  volatile binop vf = f;
  out[i] = vf(vf(a[i], b[i]), b[i]);
}
