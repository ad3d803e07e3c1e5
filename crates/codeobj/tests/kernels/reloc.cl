// Pointers stored in data make the linker emit dynamic relocations.

__constant int first[4] = {1, 2, 3, 4};
__constant int second[4] = {10, 20, 30, 40};
// A __constant table of pointers: R_AMDGPU_RELATIVE64 against local data.
__constant int *__constant table[2] = {first, second + 1};

__global int counter = 5;
// A global holding the address of another global.
__global int *__global counter_ptr = &counter;

__kernel void lookup(__global int *out, int which, int i) {
  out[0] = table[which & 1][i & 3];
  out[1] = *counter_ptr;
  out[2] = (int)(ulong)&counter;
}
