// Graphs: a stream capture of memset + memcpy + kernel + memcpy,
// instantiated once and replayed three times with new input, and the same
// work built node by node with hipGraphCreate and explicit dependencies.
#include "common.h"

#include <vector>

__global__ void accumulate(const float* in, float* out, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += f * in[i];
}

int main() {
  const int N = 2048;
  const size_t B = N * sizeof(float);
  float *h_in, *h_out;
  HIP_CHECK(hipHostMalloc((void**)&h_in, B, hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void**)&h_out, B, hipHostMallocDefault));
  float *d_in, *d_out;
  HIP_CHECK(hipMalloc(&d_in, B));
  HIP_CHECK(hipMalloc(&d_out, B));
  std::vector<float> want(N);

  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
  HIP_CHECK(hipStreamIsCapturing(s, &st));
  EXPECT(st == hipStreamCaptureStatusNone, "capture status %d before capture", (int)st);

  // Capture. out = 0; in = h_in; out += 3 in; h_out = out.
  hipGraph_t graph;
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_CHECK(hipStreamIsCapturing(s, &st));
  EXPECT(st == hipStreamCaptureStatusActive, "capture status %d during capture", (int)st);
  HIP_CHECK(hipMemsetAsync(d_out, 0, B, s));
  HIP_CHECK(hipMemcpyAsync(d_in, h_in, B, hipMemcpyHostToDevice, s));
  accumulate<<<N / 256, 256, 0, s>>>(d_in, d_out, 3.0f, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpyAsync(h_out, d_out, B, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamEndCapture(s, &graph));
  HIP_CHECK(hipStreamIsCapturing(s, &st));
  EXPECT(st == hipStreamCaptureStatusNone, "capture status %d after capture", (int)st);

  size_t nodes = 0;
  HIP_CHECK(hipGraphGetNodes(graph, nullptr, &nodes));
  EXPECT(nodes == 4, "captured graph has %zu nodes, expected 4", nodes);

  hipGraphExec_t exec;
  HIP_CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  for (int rep = 0; rep < 3; ++rep) {
    for (int i = 0; i < N; ++i) {
      h_in[i] = (float)(i * (rep + 1) % 97) - 40.0f;
      h_out[i] = -1.0f;
      want[i] = 3.0f * h_in[i];
    }
    HIP_CHECK(hipGraphLaunch(exec, s));
    HIP_CHECK(hipStreamSynchronize(s));
    char what[64];
    snprintf(what, sizeof what, "captured graph, replay %d", rep);
    expect_equal(what, h_out, want.data(), N);
  }
  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_CHECK(hipGraphDestroy(graph));

  // Explicit graph: (memset out, memcpy in) -> kernel -> memcpy back.
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t n_memset, n_copy_in, n_kernel, n_copy_out;

  hipMemsetParams mp = {};
  mp.dst = d_out;
  mp.elementSize = 4;
  mp.width = N;
  mp.height = 1;
  mp.pitch = 0;
  float one = 1.0f;
  memcpy(&mp.value, &one, 4);  // out starts at 1.0
  HIP_CHECK(hipGraphAddMemsetNode(&n_memset, g, nullptr, 0, &mp));

  hipMemcpy3DParms cin = {};
  cin.srcPtr = make_hipPitchedPtr(h_in, B, N, 1);
  cin.dstPtr = make_hipPitchedPtr(d_in, B, N, 1);
  cin.extent = make_hipExtent(B, 1, 1);
  cin.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipGraphAddMemcpyNode(&n_copy_in, g, nullptr, 0, &cin));

  float f = -2.0f;
  int n = N;
  void* args[] = {&d_in, &d_out, &f, &n};
  hipKernelNodeParams kp = {};
  kp.func = (void*)accumulate;
  kp.gridDim = dim3(N / 128);
  kp.blockDim = dim3(128);
  kp.sharedMemBytes = 0;
  kp.kernelParams = args;
  kp.extra = nullptr;
  hipGraphNode_t before_kernel[] = {n_memset, n_copy_in};
  HIP_CHECK(hipGraphAddKernelNode(&n_kernel, g, before_kernel, 2, &kp));

  hipMemcpy3DParms cout_ = {};
  cout_.srcPtr = make_hipPitchedPtr(d_out, B, N, 1);
  cout_.dstPtr = make_hipPitchedPtr(h_out, B, N, 1);
  cout_.extent = make_hipExtent(B, 1, 1);
  cout_.kind = hipMemcpyDeviceToHost;
  HIP_CHECK(hipGraphAddMemcpyNode(&n_copy_out, g, &n_kernel, 1, &cout_));

  HIP_CHECK(hipGraphGetNodes(g, nullptr, &nodes));
  EXPECT(nodes == 4, "explicit graph has %zu nodes", nodes);
  HIP_CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  for (int rep = 0; rep < 2; ++rep) {
    for (int i = 0; i < N; ++i) {
      h_in[i] = (float)(i % 50 + rep);
      h_out[i] = 0.0f;
      want[i] = 1.0f - 2.0f * h_in[i];
    }
    HIP_CHECK(hipGraphLaunch(exec, s));
    HIP_CHECK(hipStreamSynchronize(s));
    char what[64];
    snprintf(what, sizeof what, "explicit graph, launch %d", rep);
    expect_equal(what, h_out, want.data(), N);
  }
  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_CHECK(hipGraphDestroy(g));

  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(d_in));
  HIP_CHECK(hipFree(d_out));
  HIP_CHECK(hipHostFree(h_in));
  HIP_CHECK(hipHostFree(h_out));
  return finish();
}
