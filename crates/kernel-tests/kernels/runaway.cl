// Runaway, racy and badly synchronised kernels (and correct ones), for the
// watchdog, the dispatch budget, seeded schedules and synccheck. Workgroups
// of 2 W work-items are two waves of W lanes (clang's wave width: 32 on
// RDNA, 64 on CDNA): wave 0 is lid 0 to W - 1, wave 1 the rest.

#define W __AMDGCN_WAVEFRONT_SIZE

// Spins until *flag is set (never), counting its turns in *turns.
kernel void spin_counting(global volatile int *flag, global int *turns) {
  while (*flag == 0)
    atomic_inc(turns);
}

// Wave 0 spins; wave 1 waits at the barrier for it.
kernel void spin_or_wait(global volatile int *flag, global int *out) {
  int lid = get_local_id(0);
  int n = 0;
  if (lid < W) {
    while (*flag == 0)
      n++;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  out[get_global_id(0)] = n;
}

// Both waves write the same LDS word before the barrier (a write-write
// race): whichever wave writes last decides every output.
kernel void lds_race(global int *out) {
  local int winner;
  int lid = get_local_id(0);
  if (lid == 0)
    winner = 1;
  if (lid == W)
    winner = 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = winner;
}

// (a) Wave 1 returns early while wave 0 waits at the barrier.
kernel void early_exit(global int *out) {
  local int tmp[W];
  int lid = get_local_id(0);
  if (lid >= W)
    return;
  tmp[lid] = lid;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[lid] = tmp[W - 1 - lid];
}

// (b) The waves meet at two different barrier instructions.
kernel void split_barrier(global int *out) {
  local int tmp[2 * W];
  int lid = get_local_id(0);
  if (lid < W) {
    tmp[lid] = lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[lid] = tmp[2 * W - 1 - lid];
  } else {
    tmp[lid] = 2 * lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[lid] = tmp[2 * W - 1 - lid] + 1000;
  }
}

// (c) Half the lanes of every wave execute the barrier.
kernel void divergent_barrier(global int *out) {
  local int tmp[2 * W];
  int lid = get_local_id(0);
  tmp[lid] = lid;
  if (lid % 2 == 0)
    barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tmp[lid ^ 1];
}

// Correct: barriers in a loop, every work-item reaching each of them.
kernel void barrier_loop(global int *out, int rounds) {
  local int tmp[256];
  int lid = get_local_id(0);
  int n = get_local_size(0);
  int v = lid + (int)get_group_id(0);
  for (int r = 0; r < rounds; r++) {
    tmp[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    v = tmp[(lid + 1) % n] + r;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[get_global_id(0)] = v;
}
