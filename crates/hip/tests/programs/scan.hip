// Sample: an inclusive prefix sum of 100000 ints in three launches: each
// block scans its 256 values in __shared__ memory and writes its total;
// one block scans the totals; every block adds the totals before it.
#include "common.h"

#include <vector>

#define BLOCK 256

// Hillis-Steele scan of one block's values; writes the block total.
__global__ void block_scan(const int* in, int* out, int* totals, int n) {
  __shared__ int s[2][BLOCK];
  int t = threadIdx.x, i = blockIdx.x * BLOCK + t;
  int cur = 0;
  s[0][t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < BLOCK; off *= 2) {
    int v = s[cur][t];
    if (t >= off) v += s[cur][t - off];
    s[1 - cur][t] = v;
    cur = 1 - cur;
    __syncthreads();
  }
  if (i < n) out[i] = s[cur][t];
  if (t == BLOCK - 1) totals[blockIdx.x] = s[cur][t];
}

__global__ void add_offsets(int* out, const int* scanned_totals, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (blockIdx.x > 0 && i < n) out[i] += scanned_totals[blockIdx.x - 1];
}

int main() {
  const int N = 100000, blocks = (N + BLOCK - 1) / BLOCK;  // 391 blocks
  std::vector<int> in(N), out(N), want(N);
  for (int i = 0; i < N; ++i) in[i] = (i * 17) % 23 - 11;
  int run = 0;
  for (int i = 0; i < N; ++i) want[i] = run += in[i];
  int *din, *dout, *dtot, *dtot_scan, *dtot_tot;
  const int tblocks = (blocks + BLOCK - 1) / BLOCK;  // 2: the totals need a second level
  HIP_CHECK(hipMalloc(&din, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&dout, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&dtot, blocks * sizeof(int)));
  HIP_CHECK(hipMalloc(&dtot_scan, blocks * sizeof(int)));
  HIP_CHECK(hipMalloc(&dtot_tot, tblocks * sizeof(int)));
  HIP_CHECK(hipMemcpy(din, in.data(), N * sizeof(int), hipMemcpyHostToDevice));
  block_scan<<<blocks, BLOCK>>>(din, dout, dtot, N);
  // Scan the block totals (two levels, since there are more than 256).
  block_scan<<<tblocks, BLOCK>>>(dtot, dtot_scan, dtot_tot, blocks);
  int tt[2];
  HIP_CHECK(hipMemcpy(tt, dtot_tot, tblocks * sizeof(int), hipMemcpyDeviceToHost));
  int* dtt;
  HIP_CHECK(hipMalloc(&dtt, tblocks * sizeof(int)));
  tt[1] += tt[0];
  HIP_CHECK(hipMemcpy(dtt, tt, tblocks * sizeof(int), hipMemcpyHostToDevice));
  add_offsets<<<tblocks, BLOCK>>>(dtot_scan, dtt, blocks);
  add_offsets<<<blocks, BLOCK>>>(dout, dtot_scan, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), dout, N * sizeof(int), hipMemcpyDeviceToHost));
  expect_equal("inclusive scan", out.data(), want.data(), N);
  for (int* p : {din, dout, dtot, dtot_scan, dtot_tot, dtt}) HIP_CHECK(hipFree(p));
  return finish();
}
