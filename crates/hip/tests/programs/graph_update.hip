// Graph updates: a simulation loop that instantiates a graph once and
// changes its kernel and memcpy parameters every step through the
// instance; parameters read back as set; hipGraphExecUpdate with a changed
// graph (accepted) and with changed topology, node type and memcpy kind
// (refused with the result code and node); a child graph embedded as a
// copy and replaced in the instance; clone and find-in-clone; symbol
// memcpy nodes; event record and wait nodes; edges listed, removed and
// destroyed with their nodes; stream capture info and capture
// dependencies; the capture-mode rules (calls a mode prohibits fail and
// invalidate the capture; other threads; ending from the wrong thread);
// bad handles.
#include "common.h"

#include <thread>
#include <vector>

__device__ float d_scale[4];

// b[i] = a[i] * d_scale[i % 4] + c
__global__ void scale_add(const float* a, float* b, float c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * d_scale[i % 4] + c;
}

static int g_host_calls = 0;
static void count_call(void*) { g_host_calls++; }
static void add_ten(void* p) { *(int*)p += 10; }

const int N = 1024;
const size_t B = N * sizeof(float);

// The expected output of scale_add.
static void reference(const float* a, const float* scale, float c, float* want) {
  for (int i = 0; i < N; ++i) want[i] = a[i] * scale[i % 4] + c;
}

static hipGraphNodeType type_of(hipGraphNode_t n) {
  hipGraphNodeType t = hipGraphNodeTypeCount;
  HIP_CHECK(hipGraphNodeGetType(n, &t));
  return t;
}

static size_t node_count(hipGraph_t g) {
  size_t n = 0;
  HIP_CHECK(hipGraphGetNodes(g, nullptr, &n));
  return n;
}

// Ends the capture on `s`, which a prohibited call invalidated: no graph.
static void expect_invalidated(hipStream_t s, const char* what) {
  hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
  HIP_CHECK(hipStreamIsCapturing(s, &st));
  EXPECT(st == hipStreamCaptureStatusInvalidated, "%s: status %d", what, (int)st);
  hipGraph_t g = (hipGraph_t)&st;
  HIP_EXPECT_ERR(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
  EXPECT(g == nullptr, "%s: an invalidated capture gave a graph", what);
}

// hipStreamCaptureModeGlobal/ThreadLocal/Relaxed as CUDA and CLR define
// them: the calling thread's mode (hipThreadExchangeStreamCaptureMode)
// decides which captures an allocation or free breaks; synchronous copies
// and device synchronisation break every capture in every mode.
static void capture_modes(hipStream_t s, float* d_a, float* h) {
  void* p = nullptr;
  // Global capture, global thread mode: hipMalloc is refused and the
  // capture is invalidated; work after it is refused too.
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_EXPECT_ERR(hipMalloc(&p, 64), hipErrorStreamCaptureUnsupported);
  HIP_EXPECT_ERR(hipMemsetAsync(d_a, 0, 64, s), hipErrorStreamCaptureInvalidated);
  expect_invalidated(s, "hipMalloc in a global capture");
  // ... and from another thread (whose mode is global too).
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipError_t other = hipSuccess;
  std::thread([&] { other = hipMalloc(&p, 64); }).join();
  EXPECT(other == hipErrorStreamCaptureUnsupported, "hipMalloc in another thread: %d", (int)other);
  expect_invalidated(s, "hipMalloc in another thread during a global capture");
  // A thread-local capture breaks only for its own thread.
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
  std::thread([&] {
    other = hipMalloc(&p, 64);
    if (other == hipSuccess) other = hipFree(p);
  }).join();
  EXPECT(other == hipSuccess, "hipMalloc/hipFree in another thread: %d", (int)other);
  HIP_EXPECT_ERR(hipFree(d_a), hipErrorStreamCaptureUnsupported);
  expect_invalidated(s, "hipFree in a thread-local capture");
  // A relaxed thread mode refuses no allocation.
  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  HIP_CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_CHECK(hipMalloc(&p, 64));
  HIP_CHECK(hipFree(p));
  // A synchronous copy on another stream, or a device synchronisation,
  // is refused in every mode.
  HIP_EXPECT_ERR(hipMemcpy(h, d_a, 64, hipMemcpyDeviceToHost), hipErrorStreamCaptureUnsupported);
  expect_invalidated(s, "hipMemcpy during a capture");
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
  HIP_EXPECT_ERR(hipDeviceSynchronize(), hipErrorStreamCaptureUnsupported);
  HIP_EXPECT_ERR(hipStreamQuery(s), hipErrorStreamCaptureUnsupported);
  expect_invalidated(s, "hipDeviceSynchronize during a capture");
  HIP_CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  EXPECT(mode == hipStreamCaptureModeRelaxed, "restored mode %d", (int)mode);
  // Only the beginning thread ends a non-relaxed capture; any thread a
  // relaxed one.
  hipGraph_t g = nullptr;
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
  std::thread([&] { other = hipStreamEndCapture(s, &g); }).join();
  EXPECT(other == hipErrorStreamCaptureWrongThread, "ended from another thread: %d", (int)other);
  HIP_CHECK(hipMemsetAsync(d_a, 0, 64, s));
  HIP_CHECK(hipStreamEndCapture(s, &g));
  EXPECT(node_count(g) == 1, "captured %zu nodes", node_count(g));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
  std::thread([&] { other = hipStreamEndCapture(s, &g); }).join();
  EXPECT(other == hipSuccess, "relaxed capture ended from another thread: %d", (int)other);
  HIP_CHECK(hipGraphDestroy(g));
  // Nothing is left capturing: allocations work again.
  HIP_CHECK(hipMalloc(&p, 64));
  HIP_CHECK(hipFree(p));
}

int main() {
  float *h_a, *h_out[2], *h_scale_back;
  HIP_CHECK(hipHostMalloc((void**)&h_a, B, hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void**)&h_out[0], B, hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void**)&h_out[1], B, hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void**)&h_scale_back, 4 * sizeof(float), hipHostMallocDefault));
  float *d_a, *d_b;
  HIP_CHECK(hipMalloc(&d_a, B));
  HIP_CHECK(hipMalloc(&d_b, B));
  std::vector<float> want(N);
  float scale[4] = {1.0f, 2.0f, 0.5f, -1.0f};
  for (int i = 0; i < N; ++i) h_a[i] = (float)(i % 37) - 10.0f;
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));

  // The graph: scale -> symbol, a -> device, kernel, then b -> host and
  // the symbol back to the host.
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t to_sym, copy_in, kernel, copy_out, from_sym;
  HIP_CHECK(hipGraphAddMemcpyNodeToSymbol(&to_sym, g, nullptr, 0, HIP_SYMBOL(d_scale), scale,
                                          sizeof scale, 0, hipMemcpyHostToDevice));
  HIP_CHECK(hipGraphAddMemcpyNode1D(&copy_in, g, nullptr, 0, d_a, h_a, B, hipMemcpyHostToDevice));
  float c = 0.0f;
  int n = N;
  void* args[] = {&d_a, &d_b, &c, &n};
  hipKernelNodeParams kp = {};
  kp.func = (void*)scale_add;
  kp.gridDim = dim3(N / 128);
  kp.blockDim = dim3(128);
  kp.kernelParams = args;
  hipGraphNode_t before_kernel[] = {to_sym, copy_in};
  HIP_CHECK(hipGraphAddKernelNode(&kernel, g, before_kernel, 2, &kp));
  HIP_CHECK(hipGraphAddMemcpyNode1D(&copy_out, g, &kernel, 1, h_out[0], d_b, B,
                                    hipMemcpyDeviceToHost));
  HIP_CHECK(hipGraphAddMemcpyNodeFromSymbol(&from_sym, g, &kernel, 1, h_scale_back,
                                            HIP_SYMBOL(d_scale), sizeof scale, 0,
                                            hipMemcpyDeviceToHost));
  // Every memcpy node, 1D and symbol ones included, is of type Memcpy (as
  // CLR reports them).
  EXPECT(type_of(to_sym) == hipGraphNodeTypeMemcpy, "to-symbol type %d", (int)type_of(to_sym));
  EXPECT(type_of(kernel) == hipGraphNodeTypeKernel, "kernel type %d", (int)type_of(kernel));

  // Kernel parameters read back as set, from the node's own copies.
  hipKernelNodeParams got = {};
  HIP_CHECK(hipGraphKernelNodeGetParams(kernel, &got));
  EXPECT(got.func == (void*)scale_add, "func %p", got.func);
  EXPECT(got.gridDim.x == N / 128 && got.blockDim.x == 128 && got.gridDim.y == 1,
         "grid %u block %u", got.gridDim.x, got.blockDim.x);
  EXPECT(got.sharedMemBytes == 0 && got.extra == nullptr, "shared %u", got.sharedMemBytes);
  EXPECT(got.kernelParams != nullptr && got.kernelParams != args, "kernelParams %p",
         (void*)got.kernelParams);
  if (got.kernelParams) {
    EXPECT(*(float**)got.kernelParams[0] == d_a && *(float**)got.kernelParams[1] == d_b &&
               *(float*)got.kernelParams[2] == 0.0f && *(int*)got.kernelParams[3] == N,
           "argument values read back differ");
  }
  // The 1D copy reads back as one row of B bytes.
  hipMemcpy3DParms mp = {};
  HIP_CHECK(hipGraphMemcpyNodeGetParams(copy_in, &mp));
  EXPECT(mp.srcPtr.ptr == h_a && mp.dstPtr.ptr == d_a && mp.extent.width == B &&
             mp.extent.height == 1 && mp.extent.depth == 1 && mp.kind == hipMemcpyHostToDevice,
         "1D memcpy params read back differ");

  // Edges: to_sym->kernel, copy_in->kernel, kernel->copy_out, kernel->from_sym.
  size_t edges = 0;
  HIP_CHECK(hipGraphGetEdges(g, nullptr, nullptr, &edges));
  EXPECT(edges == 4, "%zu edges, expected 4", edges);
  hipGraphNode_t from[6], to[6];
  edges = 6;
  HIP_CHECK(hipGraphGetEdges(g, from, to, &edges));
  EXPECT(edges == 4 && from[4] == nullptr && to[5] == nullptr, "edges %zu, spare entries nulled",
         edges);
  int into_kernel = 0, out_of_kernel = 0;
  for (size_t i = 0; i < 4; ++i) {
    into_kernel += to[i] == kernel && (from[i] == to_sym || from[i] == copy_in);
    out_of_kernel += from[i] == kernel && (to[i] == copy_out || to[i] == from_sym);
  }
  EXPECT(into_kernel == 2 && out_of_kernel == 2, "edges into %d, out of %d the kernel",
         into_kernel, out_of_kernel);
  hipGraphNode_t deps[3] = {};
  size_t ndeps = 3;
  HIP_CHECK(hipGraphNodeGetDependencies(kernel, deps, &ndeps));
  EXPECT(ndeps == 2 && deps[2] == nullptr, "kernel has %zu dependencies", ndeps);
  HIP_CHECK(hipGraphNodeGetDependentNodes(kernel, nullptr, &ndeps));
  EXPECT(ndeps == 2, "kernel has %zu dependents", ndeps);
  HIP_CHECK(hipGraphNodeGetDependentNodes(copy_out, nullptr, &ndeps));
  EXPECT(ndeps == 0, "copy_out has %zu dependents", ndeps);

  // The simulation: one instance, its kernel constant, output buffer and
  // scale symbol changed every step through the instance.
  hipGraphExec_t exec;
  HIP_CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  for (int step = 0; step < 6; ++step) {
    float ci = 0.25f * step;
    void* step_args[] = {&d_a, &d_b, &ci, &n};
    hipKernelNodeParams sp = kp;
    sp.kernelParams = step_args;
    HIP_CHECK(hipGraphExecKernelNodeSetParams(exec, kernel, &sp));
    float* out = h_out[step % 2];
    for (int i = 0; i < N; ++i) out[i] = -99.0f;
    if (step % 2 == 0) {
      HIP_CHECK(hipGraphExecMemcpyNodeSetParams1D(exec, copy_out, out, d_b, B,
                                                  hipMemcpyDeviceToHost));
    } else {
      hipMemcpy3DParms p3 = {};
      p3.srcPtr = make_hipPitchedPtr(d_b, B, N, 1);
      p3.dstPtr = make_hipPitchedPtr(out, B, N, 1);
      p3.extent = make_hipExtent(B, 1, 1);
      p3.kind = hipMemcpyDeviceToHost;
      HIP_CHECK(hipGraphExecMemcpyNodeSetParams(exec, copy_out, &p3));
    }
    // Odd steps read back only the scale's second half, into the first
    // half of h_scale_back.
    for (int i = 0; i < 4; ++i) h_scale_back[i] = -7.0f;
    size_t half = step % 2 ? 2 * sizeof(float) : 0;
    HIP_CHECK(hipGraphExecMemcpyNodeSetParamsFromSymbol(exec, from_sym, h_scale_back,
                                                        HIP_SYMBOL(d_scale), sizeof scale - half,
                                                        half, hipMemcpyDeviceToHost));
    float step_scale[4] = {1.0f + step, 2.0f, 0.5f, -1.0f - step};
    HIP_CHECK(hipGraphExecMemcpyNodeSetParamsToSymbol(exec, to_sym, HIP_SYMBOL(d_scale),
                                                      step_scale, sizeof step_scale, 0,
                                                      hipMemcpyHostToDevice));
    HIP_CHECK(hipGraphLaunch(exec, s));
    HIP_CHECK(hipStreamSynchronize(s));
    reference(h_a, step_scale, ci, want.data());
    char what[64];
    snprintf(what, sizeof what, "simulation step %d", step);
    expect_equal(what, out, want.data(), N);
    float back[4] = {step_scale[0], step_scale[1], step_scale[2], step_scale[3]};
    if (step % 2) back[0] = back[2], back[1] = back[3], back[2] = back[3] = -7.0f;
    expect_equal("scale read back from the symbol", h_scale_back, back, 4);
  }
  // Instance updates leave the graph's own nodes as they were.
  HIP_CHECK(hipGraphKernelNodeGetParams(kernel, &got));
  EXPECT(*(float*)got.kernelParams[2] == 0.0f, "graph node's c changed to %g",
         *(float*)got.kernelParams[2]);
  // An instance memcpy node keeps its direction (CLR: invalid value).
  HIP_EXPECT_ERR(hipGraphExecMemcpyNodeSetParams1D(exec, copy_out, h_out[0], d_b, B,
                                                   hipMemcpyDeviceToDevice),
                 hipErrorInvalidValue);

  // Setting a graph node through the pointers it read back (CLR's
  // pattern), then hipGraphExecUpdate carries it to the instance.
  *(float*)got.kernelParams[2] = 3.0f;
  HIP_CHECK(hipGraphKernelNodeSetParams(kernel, &got));
  // And the graph's copy-out (3D form now) and scale change too.
  hipMemcpy3DParms out3 = {};
  out3.srcPtr = make_hipPitchedPtr(d_b, B, N, 1);
  out3.dstPtr = make_hipPitchedPtr(h_out[1], B, N, 1);
  out3.extent = make_hipExtent(B, 1, 1);
  out3.kind = hipMemcpyDeviceToHost;
  HIP_CHECK(hipGraphMemcpyNodeSetParams(copy_out, &out3));
  HIP_CHECK(hipGraphMemcpyNodeGetParams(copy_out, &mp));
  EXPECT(mp.dstPtr.ptr == h_out[1] && mp.extent.width == B, "3D copy read back differs");
  float scale2[4] = {-3.0f, 0.25f, 4.0f, 1.0f};
  HIP_CHECK(hipGraphMemcpyNodeSetParamsToSymbol(to_sym, HIP_SYMBOL(d_scale), scale2,
                                                sizeof scale2, 0, hipMemcpyHostToDevice));
  HIP_CHECK(hipGraphKernelNodeGetParams(kernel, &got));
  EXPECT(*(float*)got.kernelParams[2] == 3.0f, "c read back %g", *(float*)got.kernelParams[2]);
  hipGraphNode_t error_node = (hipGraphNode_t)1;
  hipGraphExecUpdateResult result = hipGraphExecUpdateError;
  HIP_CHECK(hipGraphExecUpdate(exec, g, &error_node, &result));
  EXPECT(result == hipGraphExecUpdateSuccess, "update result %d", (int)result);
  for (int i = 0; i < N; ++i) h_out[1][i] = -99.0f;
  HIP_CHECK(hipGraphLaunch(exec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  reference(h_a, scale2, 3.0f, want.data());
  expect_equal("after hipGraphExecUpdate", h_out[1], want.data(), N);

  // Clone and find-in-clone.
  hipGraph_t clone;
  HIP_CHECK(hipGraphClone(&clone, g));
  EXPECT(node_count(clone) == 5, "clone has %zu nodes", node_count(clone));
  hipGraphNode_t kernel2 = nullptr, copy_in2 = nullptr;
  HIP_CHECK(hipGraphNodeFindInClone(&kernel2, kernel, clone));
  HIP_CHECK(hipGraphNodeFindInClone(&copy_in2, copy_in, clone));
  EXPECT(kernel2 != nullptr && kernel2 != kernel, "kernel's copy %p", kernel2);
  EXPECT(type_of(kernel2) == hipGraphNodeTypeKernel, "copy's type %d", (int)type_of(kernel2));
  HIP_EXPECT_ERR(hipGraphNodeFindInClone(&kernel2, kernel, g), hipErrorInvalidValue);
  // A changed clone updates the instance: c = -1.
  hipKernelNodeParams cp = {};
  HIP_CHECK(hipGraphKernelNodeGetParams(kernel2, &cp));
  *(float*)cp.kernelParams[2] = -1.0f;
  HIP_CHECK(hipGraphKernelNodeSetParams(kernel2, &cp));
  HIP_CHECK(hipGraphExecUpdate(exec, clone, &error_node, &result));
  EXPECT(result == hipGraphExecUpdateSuccess, "update from the clone: result %d", (int)result);
  HIP_CHECK(hipGraphLaunch(exec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  reference(h_a, scale2, -1.0f, want.data());
  expect_equal("after the update from the clone", h_out[1], want.data(), N);

  // Refused updates change nothing and name the node. A different memcpy
  // kind: hipGraphExecUpdateErrorParametersChanged, the clone's node.
  HIP_CHECK(hipGraphMemcpyNodeSetParams1D(copy_in2, d_a, h_a, B, hipMemcpyDefault));
  HIP_EXPECT_ERR(hipGraphExecUpdate(exec, clone, &error_node, &result),
                 hipErrorGraphExecUpdateFailure);
  EXPECT(result == hipGraphExecUpdateErrorParametersChanged && error_node == copy_in2,
         "memcpy kind change: result %d node %p", (int)result, error_node);
  HIP_CHECK(hipGraphMemcpyNodeSetParams1D(copy_in2, d_a, h_a, B, hipMemcpyHostToDevice));
  // A node of another type in the same place: NodeTypeChanged.
  hipGraphNode_t from_sym2 = nullptr, memset2 = nullptr;
  HIP_CHECK(hipGraphNodeFindInClone(&from_sym2, from_sym, clone));
  HIP_CHECK(hipGraphDestroyNode(from_sym2));
  HIP_EXPECT_ERR(hipGraphNodeGetType(from_sym2, nullptr), hipErrorInvalidValue);
  HIP_CHECK(hipGraphGetEdges(clone, nullptr, nullptr, &edges));
  EXPECT(edges == 3, "clone has %zu edges after a destroyed node", edges);
  hipMemsetParams msp = {};
  msp.dst = d_b;
  msp.elementSize = 4;
  msp.width = N;
  msp.height = 1;
  HIP_CHECK(hipGraphAddMemsetNode(&memset2, clone, &kernel2, 1, &msp));
  HIP_EXPECT_ERR(hipGraphExecUpdate(exec, clone, &error_node, &result),
                 hipErrorGraphExecUpdateFailure);
  EXPECT(result == hipGraphExecUpdateErrorNodeTypeChanged && error_node == memset2,
         "node type change: result %d node %p (memset %p)", (int)result, error_node, memset2);
  // One more node: TopologyChanged, no node named.
  hipGraphNode_t empty2;
  HIP_CHECK(hipGraphAddEmptyNode(&empty2, clone, nullptr, 0));
  HIP_EXPECT_ERR(hipGraphExecUpdate(exec, clone, &error_node, &result),
                 hipErrorGraphExecUpdateFailure);
  EXPECT(result == hipGraphExecUpdateErrorTopologyChanged && error_node == nullptr,
         "topology change: result %d node %p", (int)result, error_node);
  // The instance still runs what it had.
  for (int i = 0; i < N; ++i) h_out[1][i] = -99.0f;
  HIP_CHECK(hipGraphLaunch(exec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  expect_equal("after refused updates", h_out[1], want.data(), N);

  // Edge removal and the roots it makes; a missing, repeated or
  // self edge is refused.
  HIP_CHECK(hipGraphRemoveDependencies(clone, &kernel2, &memset2, 1));
  size_t roots = 0;
  HIP_CHECK(hipGraphGetRootNodes(clone, nullptr, &roots));
  EXPECT(roots == 4, "clone has %zu roots after removing an edge", roots);
  HIP_EXPECT_ERR(hipGraphRemoveDependencies(clone, &kernel2, &memset2, 1), hipErrorInvalidValue);
  HIP_CHECK(hipGraphAddDependencies(clone, &kernel2, &memset2, 1));
  HIP_EXPECT_ERR(hipGraphAddDependencies(clone, &kernel2, &memset2, 1), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphAddDependencies(clone, &kernel2, &kernel2, 1), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphAddDependencies(clone, &kernel, &memset2, 1), hipErrorInvalidValue);
  HIP_CHECK(hipGraphDestroy(clone));
  HIP_EXPECT_ERR(hipGraphNodeGetType(kernel2, nullptr), hipErrorInvalidValue);

  // Memset and host node parameters read back and update.
  hipGraph_t mg;
  HIP_CHECK(hipGraphCreate(&mg, 0));
  hipGraphNode_t mset, host;
  msp.value = 0x40400000;  // 3.0f
  HIP_CHECK(hipGraphAddMemsetNode(&mset, mg, nullptr, 0, &msp));
  hipHostNodeParams hp = {count_call, nullptr};
  HIP_CHECK(hipGraphAddHostNode(&host, mg, &mset, 1, &hp));
  hipMemsetParams mget = {};
  HIP_CHECK(hipGraphMemsetNodeGetParams(mset, &mget));
  EXPECT(mget.dst == d_b && mget.value == 0x40400000 && mget.width == N && mget.elementSize == 4,
         "memset params read back differ");
  hipHostNodeParams hget = {};
  HIP_CHECK(hipGraphHostNodeGetParams(host, &hget));
  EXPECT(hget.fn == count_call && hget.userData == nullptr, "host params read back differ");
  int marker = 0;
  hipHostNodeParams hp2 = {count_call, &marker};
  HIP_CHECK(hipGraphHostNodeSetParams(host, &hp2));
  HIP_CHECK(hipGraphHostNodeGetParams(host, &hget));
  EXPECT(hget.fn == count_call && hget.userData == &marker, "host params set read back differ");
  hipGraphExec_t mexec;
  HIP_CHECK(hipGraphInstantiateWithFlags(&mexec, mg, 0));
  // The instance's host node adds ten to the marker instead of counting.
  hipHostNodeParams hp3 = {add_ten, &marker};
  HIP_CHECK(hipGraphExecHostNodeSetParams(mexec, host, &hp3));
  msp.value = 0x40a00000;  // 5.0f
  HIP_CHECK(hipGraphExecMemsetNodeSetParams(mexec, mset, &msp));
  HIP_CHECK(hipGraphLaunch(mexec, s));
  HIP_CHECK(hipMemcpyAsync(h_out[1], d_b, B, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < N; ++i) want[i] = 5.0f;
  expect_equal("memset after an instance update", h_out[1], want.data(), N);
  EXPECT(g_host_calls == 0 && marker == 10, "instance host node: %d calls, marker %d",
         g_host_calls, marker);
  HIP_EXPECT_ERR(hipGraphKernelNodeGetParams(mset, &got), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphExecKernelNodeSetParams(mexec, mset, &kp), hipErrorInvalidValue);

  // A child graph is embedded as a copy: changing the original later
  // changes neither the parent nor its instance, until the instance's
  // child node is set from it.
  hipGraph_t parent;
  HIP_CHECK(hipGraphCreate(&parent, 0));
  hipGraphNode_t child_node, after_child;
  HIP_CHECK(hipGraphAddChildGraphNode(&child_node, parent, nullptr, 0, mg));
  HIP_CHECK(hipGraphAddHostNode(&after_child, parent, &child_node, 1, &hp));
  EXPECT(type_of(child_node) == hipGraphNodeTypeGraph, "child type %d", (int)type_of(child_node));
  hipGraph_t embedded = nullptr;
  HIP_CHECK(hipGraphChildGraphNodeGetGraph(child_node, &embedded));
  EXPECT(embedded != nullptr && embedded != mg && node_count(embedded) == 2,
         "embedded graph %p with %zu nodes", embedded, embedded ? node_count(embedded) : 0);
  msp.value = 0x41000000;  // 8.0f, set on the original only
  HIP_CHECK(hipGraphMemsetNodeSetParams(mset, &msp));
  hipGraphExec_t pexec;
  HIP_CHECK(hipGraphInstantiate(&pexec, parent, nullptr, nullptr, 0));
  g_host_calls = 0;
  HIP_CHECK(hipGraphLaunch(pexec, s));
  HIP_CHECK(hipMemcpyAsync(h_out[1], d_b, B, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < N; ++i) want[i] = 3.0f;
  expect_equal("child graph as embedded", h_out[1], want.data(), N);
  EXPECT(g_host_calls == 2, "child and parent host nodes ran %d times", g_host_calls);
  HIP_CHECK(hipGraphExecChildGraphNodeSetParams(pexec, child_node, mg));
  HIP_CHECK(hipGraphLaunch(pexec, s));
  HIP_CHECK(hipMemcpyAsync(h_out[1], d_b, B, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < N; ++i) want[i] = 8.0f;
  expect_equal("child graph set in the instance", h_out[1], want.data(), N);
  // A child of other node types is refused (CLR: hipErrorUnknown).
  HIP_EXPECT_ERR(hipGraphExecChildGraphNodeSetParams(pexec, child_node, g), hipErrorUnknown);

  // Event nodes: record after the kernel graph, wait in another.
  hipEvent_t start, ev1, ev2, ev3;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&ev1));
  HIP_CHECK(hipEventCreate(&ev2));
  HIP_CHECK(hipEventCreate(&ev3));
  hipGraph_t eg;
  HIP_CHECK(hipGraphCreate(&eg, 0));
  hipGraphNode_t record, wait, eg_kernel;
  HIP_CHECK(hipGraphAddKernelNode(&eg_kernel, eg, nullptr, 0, &kp));
  HIP_CHECK(hipGraphAddEventRecordNode(&record, eg, &eg_kernel, 1, ev1));
  HIP_CHECK(hipGraphAddEventWaitNode(&wait, eg, nullptr, 0, start));
  hipEvent_t e_got = nullptr;
  HIP_CHECK(hipGraphEventRecordNodeGetEvent(record, &e_got));
  EXPECT(e_got == ev1, "record node's event %p", e_got);
  HIP_CHECK(hipGraphEventRecordNodeSetEvent(record, ev2));
  HIP_CHECK(hipGraphEventRecordNodeGetEvent(record, &e_got));
  EXPECT(e_got == ev2, "record node's event after set %p", e_got);
  HIP_CHECK(hipGraphEventWaitNodeGetEvent(wait, &e_got));
  EXPECT(e_got == start, "wait node's event %p", e_got);
  HIP_CHECK(hipGraphEventWaitNodeSetEvent(wait, ev1));
  HIP_CHECK(hipGraphEventWaitNodeGetEvent(wait, &e_got));
  EXPECT(e_got == ev1, "wait node's event after set %p", e_got);
  HIP_EXPECT_ERR(hipGraphEventWaitNodeGetEvent(record, &e_got), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphEventRecordNodeSetEvent(record, nullptr), hipErrorInvalidValue);
  EXPECT(type_of(record) == hipGraphNodeTypeEventRecord && type_of(wait) == hipGraphNodeTypeWaitEvent,
         "event node types %d %d", (int)type_of(record), (int)type_of(wait));
  hipGraphExec_t eexec;
  HIP_CHECK(hipGraphInstantiate(&eexec, eg, nullptr, nullptr, 0));
  // The instance records ev3 instead: it has a time only once launched.
  HIP_CHECK(hipGraphExecEventRecordNodeSetEvent(eexec, record, ev3));
  HIP_CHECK(hipGraphExecEventWaitNodeSetEvent(eexec, wait, start));
  HIP_CHECK(hipEventRecord(start, s));
  float ms = 0.0f;
  HIP_EXPECT_ERR(hipEventElapsedTime(&ms, start, ev3), hipErrorInvalidHandle);
  HIP_CHECK(hipGraphLaunch(eexec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipEventElapsedTime(&ms, start, ev3));
  HIP_EXPECT_ERR(hipEventElapsedTime(&ms, start, ev2), hipErrorInvalidHandle);

  // Bad handles and arguments: clear errors, nothing lost.
  hipGraphNode_t forged = (hipGraphNode_t)0x5000000001234ull;
  hipGraphNodeType t;
  HIP_EXPECT_ERR(hipGraphNodeGetType(forged, &t), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphNodeGetType(nullptr, &t), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphKernelNodeGetParams(forged, &got), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphKernelNodeGetParams(kernel, nullptr), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphExecKernelNodeSetParams(nullptr, kernel, &kp), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphExecKernelNodeSetParams((hipGraphExec_t)0x1234, kernel, &kp),
                 hipErrorInvalidValue);
  // A node of another graph is not in this instance.
  HIP_EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, eg_kernel, &kp), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphMemcpyNodeSetParamsFromSymbol(from_sym, h_scale_back, nullptr, 16, 0,
                                                       hipMemcpyDeviceToHost),
                 hipErrorInvalidSymbol);
  // Past the end of the 16-byte variable.
  HIP_EXPECT_ERR(hipGraphMemcpyNodeSetParamsFromSymbol(from_sym, h_scale_back,
                                                       HIP_SYMBOL(d_scale), 16, 4,
                                                       hipMemcpyDeviceToHost),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphDestroy((hipGraph_t)0x1234), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphExecUpdate(exec, g, nullptr, &result), hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphAddChildGraphNode(&child_node, parent, nullptr, 0, parent),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipGraphGetEdges(g, from, nullptr, &edges), hipErrorInvalidValue);
  // A memset node's rows must lie in one device allocation (CLR checks
  // its destination as it checks a plain memset's).
  int on_stack[4];
  hipMemsetParams bad = msp;
  bad.dst = on_stack;
  bad.width = 4;
  hipGraphNode_t bad_node = nullptr;
  HIP_EXPECT_ERR(hipGraphAddMemsetNode(&bad_node, g, nullptr, 0, &bad), hipErrorInvalidValue);
  bad = msp;
  bad.height = 4;
  bad.pitch = B;  // four rows of B bytes in B bytes
  HIP_EXPECT_ERR(hipGraphMemsetNodeSetParams(mset, &bad), hipErrorInvalidValue);
  bad.height = 0;
  HIP_EXPECT_ERR(hipGraphExecMemsetNodeSetParams(mexec, mset, &bad), hipErrorInvalidValue);
  EXPECT(bad_node == nullptr && node_count(g) == 5, "a refused node was added");

  // Stream capture info: the graph and the nodes the next capture joins.
  hipStreamCaptureStatus st = hipStreamCaptureStatusActive;
  HIP_CHECK(hipStreamGetCaptureInfo_v2(nullptr, &st, nullptr, nullptr, nullptr, nullptr));
  EXPECT(st == hipStreamCaptureStatusNone, "null stream status %d", (int)st);
  hipGraphNode_t dummy[1] = {kernel};
  HIP_EXPECT_ERR(hipStreamUpdateCaptureDependencies(s, dummy, 1, hipStreamSetCaptureDependencies),
                 hipErrorIllegalState);
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  unsigned long long id = 0, id1 = 0;
  hipGraph_t cg = nullptr;
  const hipGraphNode_t* cdeps = nullptr;
  size_t cn = 99;
  HIP_CHECK(hipStreamGetCaptureInfo_v2(s, &st, &id, &cg, &cdeps, &cn));
  EXPECT(st == hipStreamCaptureStatusActive && id != 0 && cg != nullptr && cn == 0,
         "capture info: status %d id %llu graph %p deps %zu", (int)st, id, cg, cn);
  HIP_CHECK(hipStreamGetCaptureInfo(s, &st, &id1));
  EXPECT(id1 == id, "capture ids %llu and %llu", id, id1);
  HIP_CHECK(hipMemsetAsync(d_b, 0, B, s));
  HIP_CHECK(hipStreamGetCaptureInfo_v2(s, &st, nullptr, nullptr, &cdeps, &cn));
  EXPECT(cn == 1 && type_of(cdeps[0]) == hipGraphNodeTypeMemset, "after memset: %zu deps", cn);
  hipGraphNode_t memset_node = cdeps[0];
  HIP_CHECK(hipMemcpyAsync(d_a, h_a, B, hipMemcpyHostToDevice, s));
  HIP_CHECK(hipStreamGetCaptureInfo_v2(s, &st, nullptr, nullptr, &cdeps, &cn));
  hipGraphNode_t copy_node = cdeps[0];
  EXPECT(cn == 1 && copy_node != memset_node, "after memcpy: %zu deps", cn);
  // Next nodes join both the memset and the copy.
  HIP_CHECK(hipStreamUpdateCaptureDependencies(s, &memset_node, 1,
                                               hipStreamSetCaptureDependencies));
  HIP_CHECK(hipStreamUpdateCaptureDependencies(s, &copy_node, 1,
                                               hipStreamAddCaptureDependencies));
  HIP_CHECK(hipStreamGetCaptureInfo_v2(s, &st, nullptr, nullptr, &cdeps, &cn));
  EXPECT(cn == 2, "after updates: %zu deps", cn);
  HIP_EXPECT_ERR(hipStreamUpdateCaptureDependencies(s, &kernel, 1, hipStreamAddCaptureDependencies),
                 hipErrorInvalidValue);
  HIP_EXPECT_ERR(hipStreamUpdateCaptureDependencies(s, &copy_node, 1, 7), hipErrorInvalidValue);
  c = 1.5f;
  HIP_CHECK(hipMemcpyToSymbolAsync(HIP_SYMBOL(d_scale), scale, sizeof scale, 0,
                                   hipMemcpyHostToDevice, s));
  scale_add<<<N / 128, 128, 0, s>>>(d_a, d_b, c, N);
  HIP_CHECK(hipMemcpyAsync(h_out[1], d_b, B, hipMemcpyDeviceToHost, s));
  hipGraph_t captured = nullptr;
  HIP_CHECK(hipStreamEndCapture(s, &captured));
  EXPECT(captured == cg, "captured graph %p, capture info said %p", captured, cg);
  HIP_CHECK(hipStreamGetCaptureInfo_v2(s, &st, nullptr, nullptr, nullptr, nullptr));
  EXPECT(st == hipStreamCaptureStatusNone, "status %d after capture", (int)st);
  size_t captured_nodes = node_count(captured);
  EXPECT(captured_nodes == 5, "captured %zu nodes", captured_nodes);
  hipGraphNode_t cnodes[5] = {};
  HIP_CHECK(hipGraphGetNodes(captured, cnodes, &captured_nodes));
  HIP_CHECK(hipGraphNodeGetDependencies(cnodes[2], nullptr, &ndeps));
  EXPECT(ndeps == 2, "the node after the updates has %zu dependencies", ndeps);
  hipGraphExec_t cexec;
  HIP_CHECK(hipGraphInstantiate(&cexec, captured, nullptr, nullptr, 0));
  HIP_CHECK(hipGraphLaunch(cexec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  reference(h_a, scale, 1.5f, want.data());
  expect_equal("captured graph", h_out[1], want.data(), N);
  // A captured kernel node has no HIP parameters to read back here.
  HIP_EXPECT_ERR(hipGraphKernelNodeGetParams(cnodes[3], &got), hipErrorNotSupported);
  EXPECT(type_of(cnodes[3]) == hipGraphNodeTypeKernel, "captured kernel type %d",
         (int)type_of(cnodes[3]));
  // Set through the instance or on the graph, a captured kernel node
  // takes (and then reads back) HIP parameters.
  float c25 = 2.5f;
  void* cargs[] = {&d_a, &d_b, &c25, &n};
  hipKernelNodeParams ckp = kp;
  ckp.kernelParams = cargs;
  HIP_CHECK(hipGraphExecKernelNodeSetParams(cexec, cnodes[3], &ckp));
  HIP_CHECK(hipGraphLaunch(cexec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  reference(h_a, scale, 2.5f, want.data());
  expect_equal("captured graph, kernel set in the instance", h_out[1], want.data(), N);
  HIP_CHECK(hipGraphKernelNodeSetParams(cnodes[3], &ckp));
  HIP_CHECK(hipGraphKernelNodeGetParams(cnodes[3], &got));
  EXPECT(got.func == (void*)scale_add && *(float*)got.kernelParams[2] == 2.5f,
         "captured kernel node's parameters after a set");

  // Capture mode exchange: returns the thread's previous mode.
  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  HIP_CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  EXPECT(mode == hipStreamCaptureModeGlobal, "first mode %d", (int)mode);
  HIP_CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  EXPECT(mode == hipStreamCaptureModeRelaxed, "exchanged mode %d", (int)mode);
  mode = (hipStreamCaptureMode)7;
  HIP_EXPECT_ERR(hipThreadExchangeStreamCaptureMode(&mode), hipErrorInvalidValue);
  capture_modes(s, d_a, h_out[0]);

  HIP_CHECK(hipGraphExecDestroy(cexec));
  HIP_CHECK(hipGraphExecDestroy(eexec));
  HIP_CHECK(hipGraphExecDestroy(pexec));
  HIP_CHECK(hipGraphExecDestroy(mexec));
  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_EXPECT_ERR(hipGraphExecDestroy(exec), hipErrorInvalidValue);
  HIP_CHECK(hipGraphDestroy(captured));
  HIP_CHECK(hipGraphDestroy(eg));
  HIP_CHECK(hipGraphDestroy(parent));
  HIP_EXPECT_ERR(hipGraphNodeGetType(child_node, &t), hipErrorInvalidValue);
  HIP_CHECK(hipGraphDestroy(mg));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(ev1));
  HIP_CHECK(hipEventDestroy(ev2));
  HIP_CHECK(hipEventDestroy(ev3));
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(d_a));
  HIP_CHECK(hipFree(d_b));
  HIP_CHECK(hipHostFree(h_a));
  HIP_CHECK(hipHostFree(h_out[0]));
  HIP_CHECK(hipHostFree(h_out[1]));
  HIP_CHECK(hipHostFree(h_scale_back));
  return finish();
}
