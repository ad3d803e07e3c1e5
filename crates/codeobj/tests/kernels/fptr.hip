// HIP device code: a function-pointer table (relocations) and recursion
// (dynamic stack).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

__device__ int add1(int x) { return x + 1; }
__device__ int twice(int x) { return 2 * x; }
__device__ int neg(int x) { return -x; }

typedef int (*op_t)(int);
__device__ op_t ops[3] = {add1, twice, neg};

__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

extern "C" __global__ void apply(int *out, const int *in, int which) {
  int i = __builtin_amdgcn_workitem_id_x();
  out[i] = ops[which % 3](in[i]);
}

extern "C" __global__ void recurse(int *out, int n) {
  out[__builtin_amdgcn_workitem_id_x()] = fib(n);
}
