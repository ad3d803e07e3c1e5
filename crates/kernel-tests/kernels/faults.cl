// Kernels that must fault.
kernel void wild_store(global int *p, ulong offset) {
  p[offset + get_global_id(0)] = 42;
}

kernel void spin_forever(global volatile int *flag, global int *out) {
  int n = 0;
  while (*flag == 0)
    n++;
  out[get_global_id(0)] = n;
}

kernel void trap(global int *out) {
  if (get_global_id(0) == 3)
    __builtin_trap();
  out[get_global_id(0)] = 1;
}

kernel void good(global int *out) { out[get_global_id(0)] = (int)get_global_id(0) * 2; }

// Threads past `n` read and write outside both buffers.
kernel void overrun(global int *out, global const int *in) {
  size_t i = get_global_id(0);
  out[i] = in[i] + 1;
}

// Every work-item writes the same word: a race between workgroups.
kernel void racy(global int *x) { x[0] = (int)get_global_id(0); }
