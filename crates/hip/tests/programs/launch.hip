// Launches: <<<>>>, hipLaunchKernelGGL, templates, 2D and 3D grids,
// __shared__ with __syncthreads (a block reduction), dynamic extern
// __shared__, atomics on int/unsigned/float/double, warp shuffles and
// ballots (wave32), and a struct argument by value. (The shared-tile
// matrix transpose is the transpose sample.)
#include "common.h"

#include <vector>

template <typename T>
__global__ void axpb(T* p, T a, T b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = a * p[i] + b;
}

__global__ void grid2d(int* out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) out[y * width + x] = x + 1000 * y;
}

// Every thread of a 3D grid writes its coordinates, packed, at its linear index.
__global__ void grid3d(int* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  int w = gridDim.x * blockDim.x, h = gridDim.y * blockDim.y;
  out[(z * h + y) * w + x] = x | (y << 8) | (z << 16);
}

// Sum of each block's 256 values with a shared-memory tree.
__global__ void block_sum(const int* in, int* out) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int step = 128; step > 0; step /= 2) {
    if (t < step) s[t] += s[t + step];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// Reverses each block's values through dynamic shared memory.
__global__ void reverse_block(int* p) {
  extern __shared__ int buf[];
  int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  buf[t] = p[base + t];
  __syncthreads();
  p[base + t] = buf[blockDim.x - 1 - t];
}

__global__ void atomics(int* i_sum, unsigned* u_max, int* i_min, float* f_sum, double* d_sum,
                        int* cas_count, int* slots) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(i_sum, i);
  atomicMax(u_max, (unsigned)(i * 7919u % 10007u));
  atomicMin(i_min, 500 - i);
  atomicAdd(f_sum, 0.5f);
  atomicAdd(d_sum, 0.25);
  // An increment made of a compare-and-swap loop.
  int old = *cas_count, seen;
  while ((seen = atomicCAS(cas_count, old, old + 1)) != old) old = seen;
  // One winner per slot.
  atomicCAS(&slots[i % 16], -1, i);
}

__global__ void warp_ops(const int* in, int* down_sum, int* xor_sum, unsigned long long* ballot,
                         int* wsize) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32, wave = i / 32;
  int v = in[i];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down(v, off, 32);
  if (lane == 0) down_sum[wave] = v;
  int x = in[i];
  for (int mask = 1; mask < 32; mask *= 2) x += __shfl_xor(x, mask, 32);
  xor_sum[i] = x;  // every lane has the wave's sum
  // A ballot spans the whole wave: 32 lanes on RDNA, 64 on CDNA.
  unsigned long long b = __ballot(in[i] % 3 == 0);
  if (threadIdx.x % warpSize == 0) ballot[i / warpSize] = b;
  if (i == 0) *wsize = warpSize;
}

struct Params {
  float scale;
  int offset;
  double bias;
  char tag[3];
  int weights[4];
};

__global__ void with_struct(Params p, float* out) {
  int i = threadIdx.x;
  out[i] = p.scale * i + p.offset + (float)p.bias + p.tag[i % 3] + p.weights[i % 4];
}

int main() {
  // Templates for int, float and double, through <<<>>> and hipLaunchKernelGGL.
  const int N = 1000;
  {
    std::vector<int> hi(N), wi(N);
    std::vector<float> hf(N), wf(N);
    std::vector<double> hd(N), wd(N);
    for (int i = 0; i < N; ++i) {
      hi[i] = i;
      hf[i] = i * 0.5f;
      hd[i] = i * 0.25;
      wi[i] = 3 * i - 4;
      wf[i] = 2.0f * (i * 0.5f) + 1.0f;
      wd[i] = -1.0 * (i * 0.25) + 0.5;
    }
    int* di;
    float* df;
    double* dd;
    HIP_CHECK(hipMalloc(&di, N * sizeof(int)));
    HIP_CHECK(hipMalloc(&df, N * sizeof(float)));
    HIP_CHECK(hipMalloc(&dd, N * sizeof(double)));
    HIP_CHECK(hipMemcpy(di, hi.data(), N * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(df, hf.data(), N * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dd, hd.data(), N * sizeof(double), hipMemcpyHostToDevice));
    axpb<int><<<(N + 127) / 128, 128>>>(di, 3, -4, N);
    axpb<<<dim3((N + 63) / 64), dim3(64)>>>(df, 2.0f, 1.0f, N);
    hipLaunchKernelGGL(axpb<double>, dim3((N + 255) / 256), dim3(256), 0, 0, dd, -1.0, 0.5, N);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(hi.data(), di, N * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(hf.data(), df, N * sizeof(float), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(hd.data(), dd, N * sizeof(double), hipMemcpyDeviceToHost));
    expect_equal("axpb<int>", hi.data(), wi.data(), N);
    expect_equal("axpb<float>", hf.data(), wf.data(), N);
    expect_equal("axpb<double>", hd.data(), wd.data(), N);
    HIP_CHECK(hipFree(di));
    HIP_CHECK(hipFree(df));
    HIP_CHECK(hipFree(dd));
  }

  // 2D grid with a partial edge, and a 3D grid.
  {
    const int W = 70, H = 45;
    std::vector<int> out(W * H), want(W * H);
    int* d;
    HIP_CHECK(hipMalloc(&d, W * H * sizeof(int)));
    grid2d<<<dim3((W + 15) / 16, (H + 15) / 16), dim3(16, 16)>>>(d, W, H);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(out.data(), d, W * H * sizeof(int), hipMemcpyDeviceToHost));
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) want[y * W + x] = x + 1000 * y;
    expect_equal("2D grid", out.data(), want.data(), W * H);
    HIP_CHECK(hipFree(d));

    dim3 grid(3, 2, 4), block(4, 8, 2);
    const int w = 12, h = 16, dz = 8;
    std::vector<int> o3(w * h * dz), w3(w * h * dz);
    HIP_CHECK(hipMalloc(&d, o3.size() * sizeof(int)));
    grid3d<<<grid, block>>>(d);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(o3.data(), d, o3.size() * sizeof(int), hipMemcpyDeviceToHost));
    for (int z = 0; z < dz; ++z)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) w3[(z * h + y) * w + x] = x | (y << 8) | (z << 16);
    expect_equal("3D grid", o3.data(), w3.data(), o3.size());
    HIP_CHECK(hipFree(d));
  }

  // __shared__ + __syncthreads, and dynamic shared memory.
  {
    const int blocks = 8;
    std::vector<int> in(blocks * 256), sums(blocks), want(blocks, 0);
    for (int i = 0; i < blocks * 256; ++i) {
      in[i] = (i * 37) % 101 - 50;
      want[i / 256] += in[i];
    }
    int *d, *ds;
    HIP_CHECK(hipMalloc(&d, in.size() * sizeof(int)));
    HIP_CHECK(hipMalloc(&ds, blocks * sizeof(int)));
    HIP_CHECK(hipMemcpy(d, in.data(), in.size() * sizeof(int), hipMemcpyHostToDevice));
    block_sum<<<blocks, 256>>>(d, ds);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(sums.data(), ds, blocks * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("block sums", sums.data(), want.data(), blocks);

    const int bs = 192;  // not a power of two
    std::vector<int> r(4 * bs), wr(4 * bs);
    for (int i = 0; i < 4 * bs; ++i) r[i] = i;
    for (int b = 0; b < 4; ++b)
      for (int t = 0; t < bs; ++t) wr[b * bs + t] = b * bs + bs - 1 - t;
    HIP_CHECK(hipMemcpy(d, r.data(), r.size() * sizeof(int), hipMemcpyHostToDevice));
    reverse_block<<<4, bs, bs * sizeof(int)>>>(d);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(r.data(), d, r.size() * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("dynamic shared reverse", r.data(), wr.data(), r.size());
    HIP_CHECK(hipFree(d));
    HIP_CHECK(hipFree(ds));
  }

  // Atomics.
  {
    const int T = 64 * 40;
    struct Acc {
      int i_sum;
      unsigned u_max;
      int i_min;
      float f_sum;
      double d_sum;
      int cas;
      int slots[16];
    } h = {0, 0, 1 << 30, 0.0f, 0.0, 0, {}};
    for (int k = 0; k < 16; ++k) h.slots[k] = -1;
    Acc* d;
    HIP_CHECK(hipMalloc(&d, sizeof(Acc)));
    HIP_CHECK(hipMemcpy(d, &h, sizeof h, hipMemcpyHostToDevice));
    atomics<<<40, 64>>>(&d->i_sum, &d->u_max, &d->i_min, &d->f_sum, &d->d_sum, &d->cas, d->slots);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(&h, d, sizeof h, hipMemcpyDeviceToHost));
    unsigned umax = 0;
    for (int i = 0; i < T; ++i) umax = std::max(umax, (unsigned)(i * 7919u % 10007u));
    EXPECT(h.i_sum == T * (T - 1) / 2, "atomicAdd int %d, expected %d", h.i_sum, T * (T - 1) / 2);
    EXPECT(h.u_max == umax, "atomicMax unsigned %u, expected %u", h.u_max, umax);
    EXPECT(h.i_min == 500 - (T - 1), "atomicMin int %d, expected %d", h.i_min, 500 - (T - 1));
    // Sums of 0.5 and 0.25 are exact in any order at these sizes.
    EXPECT(h.f_sum == 0.5f * T, "atomicAdd float %g, expected %g", h.f_sum, 0.5 * T);
    EXPECT(h.d_sum == 0.25 * T, "atomicAdd double %g, expected %g", h.d_sum, 0.25 * T);
    EXPECT(h.cas == T, "atomicCAS increments %d, expected %d", h.cas, T);
    for (int k = 0; k < 16; ++k)
      EXPECT(h.slots[k] >= 0 && h.slots[k] % 16 == k, "slot %d won by %d", k, h.slots[k]);
    HIP_CHECK(hipFree(d));
  }

  // Warp shuffles and ballots.
  {
    const int T = 128, W = T / 32;
    std::vector<int> in(T), down(W), xs(T);
    std::vector<unsigned long long> ballot(W);
    for (int i = 0; i < T; ++i) in[i] = (i * 13) % 29;
    int *din, *ddown, *dxs, *dws;
    unsigned long long* dballot;
    HIP_CHECK(hipMalloc(&din, T * sizeof(int)));
    HIP_CHECK(hipMalloc(&ddown, W * sizeof(int)));
    HIP_CHECK(hipMalloc(&dxs, T * sizeof(int)));
    HIP_CHECK(hipMalloc(&dws, sizeof(int)));
    HIP_CHECK(hipMalloc(&dballot, W * sizeof(unsigned long long)));
    HIP_CHECK(hipMemcpy(din, in.data(), T * sizeof(int), hipMemcpyHostToDevice));
    warp_ops<<<2, 64>>>(din, ddown, dxs, dballot, dws);
    HIP_CHECK(hipGetLastError());
    int ws = 0;
    HIP_CHECK(hipMemcpy(down.data(), ddown, W * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(xs.data(), dxs, T * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(ballot.data(), dballot, W * sizeof(unsigned long long),
                        hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(&ws, dws, sizeof ws, hipMemcpyDeviceToHost));
    hipDeviceProp_t prop;
    HIP_CHECK(hipGetDeviceProperties(&prop, 0));
    EXPECT(ws == prop.warpSize && (ws == 32 || ws == 64), "device warpSize %d, properties say %d",
           ws, prop.warpSize);
    std::vector<int> wdown(W, 0), wxs(T);
    std::vector<unsigned long long> wballot(W, 0);
    for (int i = 0; i < T; ++i) {
      wdown[i / 32] += in[i];
      int wave = ws == 64 ? 64 : 32;
      if (in[i] % 3 == 0) wballot[i / wave] |= 1ull << (i % wave);
    }
    for (int i = 0; i < T; ++i) wxs[i] = wdown[i / 32];
    expect_equal("__shfl_down sums", down.data(), wdown.data(), W);
    expect_equal("__shfl_xor sums", xs.data(), wxs.data(), T);
    for (int w = 0; w < T / (ws == 64 ? 64 : 32); ++w)
      EXPECT(ballot[w] == wballot[w], "__ballot of wave %d: %llx, expected %llx", w, ballot[w],
             wballot[w]);
    HIP_CHECK(hipFree(din));
    HIP_CHECK(hipFree(ddown));
    HIP_CHECK(hipFree(dxs));
    HIP_CHECK(hipFree(dws));
    HIP_CHECK(hipFree(dballot));
  }

  // A struct argument by value.
  {
    Params p = {1.5f, -3, 0.25, {10, 20, 30}, {1, 2, 3, 4}};
    float* d;
    HIP_CHECK(hipMalloc(&d, 64 * sizeof(float)));
    with_struct<<<1, 64>>>(p, d);
    HIP_CHECK(hipGetLastError());
    float out[64], want[64];
    HIP_CHECK(hipMemcpy(out, d, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; ++i)
      want[i] = p.scale * i + p.offset + (float)p.bias + p.tag[i % 3] + p.weights[i % 4];
    expect_equal("struct argument", out, want, 64);
    HIP_CHECK(hipFree(d));
  }
  return finish();
}
