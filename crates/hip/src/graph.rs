//! Graphs: stream capture and explicit graphs, instantiated and replayed.
//!
//! A graph is a list of nodes, each one [`Work`] item with the nodes it
//! depends on. Capture turns every item a capturing stream receives into a
//! node depending on the previous one; the explicit API builds nodes with
//! given dependencies (kernel arguments and memset values are copied when
//! the node is made, as HIP does). Instantiation orders the nodes
//! topologically (rejecting cycles) and records them, in that order, as a
//! softgpu graph ([`softgpu::Graph`]: kernels as dispatch nodes, copies,
//! fills and host functions as host-function nodes), whose replay runs
//! independent branches on separate device queues and is one step of the
//! stream's order. A graph with event nodes or nested graphs, which a
//! softgpu graph cannot hold, is replayed node by node in that order.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::error::{get, guard, put, HipError, HipResult};
use crate::launch::{read_args, registered_kernel, ArgSource, Launch};
use crate::state::{hip, lock};
use crate::stream::Work;

/// One node: what it does and what it waits for.
#[derive(Clone)]
pub struct Node {
    pub work: Work,
    pub deps: Vec<usize>,
    pub kind: i32,
}

/// A graph under construction.
#[derive(Clone, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
}

/// A node handle: its graph and index.
#[derive(Clone, Copy)]
pub struct NodeRef {
    pub graph: usize,
    pub index: usize,
}

/// A stream's capture in progress.
pub struct Capture {
    pub graph: Graph,
    last: Option<usize>,
}

impl Capture {
    pub fn new() -> Capture {
        Capture {
            graph: Graph::default(),
            last: None,
        }
    }

    /// Records `work` as a node after the previous one.
    pub fn add(&mut self, work: Work) -> HipResult {
        let kind = kind_of(&work);
        self.graph.nodes.push(Node {
            work,
            deps: self.last.into_iter().collect(),
            kind,
        });
        self.last = Some(self.graph.nodes.len() - 1);
        Ok(())
    }
}

impl Default for Capture {
    fn default() -> Self {
        Capture::new()
    }
}

fn kind_of(work: &Work) -> i32 {
    match work {
        Work::Launch(_) => 1,
        Work::Copy(_) => 2,
        Work::Fill { .. } => 3,
        Work::Host(_) | Work::Callback(_) => 4,
        Work::Graph(_) => 5,
        Work::Nothing => 6,
        Work::Wait(_) => 7,
        Work::Record(_) => 8,
    }
}

/// An instantiated graph.
pub enum GraphExec {
    /// A softgpu graph: nodes laid on up to four device queues, so
    /// independent branches run concurrently.
    Softgpu(Mutex<softgpu::GraphExec>),
    /// Nodes a softgpu graph cannot hold (event records and waits, nested
    /// graphs), in a dependency order, put on the stream one by one.
    Sequential(Vec<Work>),
}

impl GraphExec {
    /// Replays the graph on `stream`.
    pub fn launch(&self, stream: &softgpu::Stream) -> HipResult {
        match self {
            GraphExec::Softgpu(exec) => Ok(stream.launch(&mut lock(exec))?),
            GraphExec::Sequential(order) => order.iter().try_for_each(|w| w.run(stream)),
        }
    }
}

impl Graph {
    /// The nodes in a dependency order (Kahn's algorithm); a cycle is an
    /// error.
    fn order(&self) -> HipResult<Vec<usize>> {
        let n = self.nodes.len();
        let mut pending: Vec<usize> = self.nodes.iter().map(|node| node.deps.len()).collect();
        let mut dependents = vec![Vec::new(); n];
        for (i, node) in self.nodes.iter().enumerate() {
            for &d in &node.deps {
                dependents[d].push(i);
            }
        }
        let mut ready: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).rev().collect();
        let mut order = Vec::with_capacity(n);
        while let Some(i) = ready.pop() {
            order.push(i);
            for &j in dependents[i].iter().rev() {
                pending[j] -= 1;
                if pending[j] == 0 {
                    ready.push(j);
                }
            }
        }
        if order.len() != n {
            return Err(HipError::invalid("the graph's dependencies form a cycle"));
        }
        Ok(order)
    }

    /// Instantiates the graph for `stream`'s device: as a softgpu graph
    /// recorded on it when every node can be one, else sequentially.
    fn instantiate(&self, stream: &softgpu::Stream) -> HipResult<GraphExec> {
        let order = self.order()?;
        let mut graph = stream.graph()?;
        let mut made: Vec<Option<softgpu::Node>> = vec![None; self.nodes.len()];
        for &i in &order {
            let node = &self.nodes[i];
            let after: Vec<softgpu::Node> = node.deps.iter().filter_map(|&d| made[d]).collect();
            made[i] = Some(match &node.work {
                Work::Launch(l) => {
                    graph.dispatch_args(&after, &l.kernel, l.grid, l.block, &l.args)?
                }
                Work::Nothing => graph.join(&after)?,
                work => match work.host_body()? {
                    Some(body) => graph.host_fn(&after, body)?,
                    None => {
                        let works = order.iter().map(|&j| self.nodes[j].work.clone()).collect();
                        return Ok(GraphExec::Sequential(works));
                    }
                },
            });
        }
        Ok(GraphExec::Softgpu(Mutex::new(graph.finish()?)))
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamBeginCapture(stream: hipStream_t, _mode: i32) -> hipError_t {
    guard("hipStreamBeginCapture", || {
        let hip = hip()?;
        if stream.is_null() {
            return Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "the null stream cannot be captured",
            ));
        }
        hip.stream(stream)?.begin_capture(Capture::new())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamEndCapture(
    stream: hipStream_t,
    graph: *mut hipGraph_t,
) -> hipError_t {
    guard("hipStreamEndCapture", || {
        let hip = hip()?;
        let capture = hip.stream(stream)?.end_capture()?;
        let handle = hip.graphs.insert(Arc::new(Mutex::new(capture.graph)));
        // SAFETY: output of a graph handle (crate docs).
        unsafe { put(graph, handle as hipGraph_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamIsCapturing(stream: hipStream_t, status: *mut i32) -> hipError_t {
    guard("hipStreamIsCapturing", || {
        let capturing = hip()?.stream(stream)?.is_capturing();
        // SAFETY: output of a hipStreamCaptureStatus (crate docs).
        unsafe { put(status, capturing as i32) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo(
    stream: hipStream_t,
    status: *mut i32,
    id: *mut u64,
) -> hipError_t {
    guard("hipStreamGetCaptureInfo", || {
        let capturing = hip()?.stream(stream)?.is_capturing();
        // SAFETY: outputs (crate docs); `id` may be null.
        unsafe {
            put(status, capturing as i32)?;
            if !id.is_null() {
                put(id, stream as u64)?;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphCreate(graph: *mut hipGraph_t, flags: u32) -> hipError_t {
    guard("hipGraphCreate", || {
        if flags != 0 {
            return Err(HipError::invalid("flags must be 0"));
        }
        let handle = hip()?.graphs.insert(Arc::new(Mutex::new(Graph::default())));
        // SAFETY: output of a graph handle (crate docs).
        unsafe { put(graph, handle as hipGraph_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroy(graph: hipGraph_t) -> hipError_t {
    guard("hipGraphDestroy", || {
        hip()?.graphs.remove(graph as usize).map(drop)
    })
}

/// Adds a node to `graph` after `deps`; writes its handle.
///
/// # Safety
/// `deps` holds `count` node handles (crate docs, "Inputs").
unsafe fn add_node(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    work: Work,
) -> HipResult {
    let hip = hip()?;
    let g = hip.graphs.get(graph as usize)?;
    if count > 0 && deps.is_null() {
        return Err(HipError::invalid("dependencies are null"));
    }
    let mut dep_indices = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: `deps` holds `count` handles (this function's contract).
        let h = unsafe { *deps.add(i) } as usize;
        let r = hip.nodes.get(h)?;
        if r.graph != graph as usize {
            return Err(HipError::invalid("a dependency belongs to another graph"));
        }
        dep_indices.push(r.index);
    }
    let index = {
        let mut g = lock(&g);
        let kind = kind_of(&work);
        g.nodes.push(Node {
            work,
            deps: dep_indices,
            kind,
        });
        g.nodes.len() - 1
    };
    let handle = hip.nodes.insert(NodeRef {
        graph: graph as usize,
        index,
    });
    // SAFETY: output of a node handle (crate docs).
    unsafe { put(node, handle as hipGraphNode_t) }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddKernelNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    params: *const hipKernelNodeParams,
) -> hipError_t {
    guard("hipGraphAddKernelNode", || {
        // SAFETY: `params` points to a hipKernelNodeParams (crate docs).
        let p = unsafe { get(params, "kernel node parameters")? };
        let hip = hip()?;
        let kernel = registered_kernel(p.func, hip.current().index)?;
        let source = if p.kernelParams.is_null() && !p.extra.is_null() {
            ArgSource::Extra(p.extra)
        } else {
            ArgSource::Pointers(p.kernelParams)
        };
        // SAFETY: the parameters' argument array follows "Inputs".
        let args = unsafe { read_args(&kernel, source)? }.dynamic_lds(p.sharedMemBytes);
        let work = Work::Launch(Launch {
            kernel,
            grid: p.gridDim.array(),
            block: p.blockDim.array(),
            args,
        });
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, work) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    params: *const hipMemcpy3DParms,
) -> hipError_t {
    guard("hipGraphAddMemcpyNode", || {
        // SAFETY: `params` points to a hipMemcpy3DParms (crate docs).
        let p = unsafe { get(params, "memcpy parameters")? };
        let rows = crate::memory::rows_3d(&p)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Work::Copy(Arc::new(rows))) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNode1D(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphAddMemcpyNode1D", || {
        if !(0..=4).contains(&kind) {
            return Err(HipError::new(
                HIP_ERROR_INVALID_MEMCPY_DIRECTION,
                format!("memcpy kind {kind}"),
            ));
        }
        let work = Work::Copy(Arc::new(vec![(dst as u64, src as u64, bytes as u64)]));
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, work) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemsetNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    params: *const hipMemsetParams,
) -> hipError_t {
    guard("hipGraphAddMemsetNode", || {
        // SAFETY: `params` points to a hipMemsetParams (crate docs).
        let p = unsafe { get(params, "memset parameters")? };
        let pattern: Vec<u8> = match p.elementSize {
            1 => vec![p.value as u8],
            2 => (p.value as u16).to_le_bytes().to_vec(),
            4 => p.value.to_le_bytes().to_vec(),
            e => return Err(HipError::invalid(format!("memset element size {e}"))),
        };
        let row = p.width * pattern.len();
        let pitch = if p.height > 1 { p.pitch } else { row };
        if row > pitch {
            return Err(HipError::new(
                HIP_ERROR_INVALID_PITCH_VALUE,
                "memset rows wider than the pitch",
            ));
        }
        let rows = (0..p.height.max(1) as u64)
            .map(|r| (p.dst as u64 + r * pitch as u64, row as u64))
            .collect();
        let work = Work::Fill {
            rows: Arc::new(rows),
            pattern: Arc::new(pattern),
        };
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, work) }
    })
}

/// `hipHostNodeParams`.
#[repr(C)]
pub struct HostNodeParams {
    func: hipHostFn_t,
    user_data: *mut c_void,
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddHostNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    params: *const HostNodeParams,
) -> hipError_t {
    guard("hipGraphAddHostNode", || {
        if params.is_null() {
            return Err(HipError::invalid("host node parameters are null"));
        }
        // SAFETY: `params` points to a hipHostNodeParams (crate docs).
        let (func, data) = unsafe { ((*params).func, (*params).user_data) };
        let call = func.ok_or_else(|| HipError::invalid("host function is null"))?;
        let work = Work::Host(crate::stream::HostCall {
            call,
            data: data as usize,
        });
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, work) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEmptyNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
) -> hipError_t {
    // SAFETY: `deps` holds `count` handles (crate docs).
    guard("hipGraphAddEmptyNode", || unsafe {
        add_node(node, graph, deps, count, Work::Nothing)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventRecordNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    event: hipEvent_t,
) -> hipError_t {
    guard("hipGraphAddEventRecordNode", || {
        let e = hip()?.events.get(event as usize)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Work::Record(e)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventWaitNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    event: hipEvent_t,
) -> hipError_t {
    guard("hipGraphAddEventWaitNode", || {
        let e = hip()?.events.get(event as usize)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Work::Wait(e)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    count: usize,
) -> hipError_t {
    guard("hipGraphAddDependencies", || {
        let hip = hip()?;
        let g = hip.graphs.get(graph as usize)?;
        if count > 0 && (from.is_null() || to.is_null()) {
            return Err(HipError::invalid("node arrays are null"));
        }
        for i in 0..count {
            // SAFETY: both arrays hold `count` handles (crate docs).
            let (a, b) = unsafe { (*from.add(i) as usize, *to.add(i) as usize) };
            let (a, b) = (hip.nodes.get(a)?, hip.nodes.get(b)?);
            if a.graph != graph as usize || b.graph != graph as usize {
                return Err(HipError::invalid("a node belongs to another graph"));
            }
            lock(&g).nodes[b.index].deps.push(a.index);
        }
        Ok(())
    })
}

/// The handles of `graph`'s nodes that pass `keep`, in node order (nodes
/// made by capture get their handles here, on first request).
fn node_handles(graph: hipGraph_t, keep: impl Fn(&Node) -> bool) -> HipResult<Vec<usize>> {
    let hip = hip()?;
    let g = hip.graphs.get(graph as usize)?;
    let nodes = lock(&g).nodes.clone();
    let mut handles = vec![None; nodes.len()];
    for (h, r) in hip.nodes.all() {
        if r.graph == graph as usize && r.index < handles.len() {
            handles[r.index] = Some(h);
        }
    }
    Ok(handles
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep(&nodes[*i]))
        .map(|(index, h)| {
            h.unwrap_or_else(|| {
                hip.nodes.insert(NodeRef {
                    graph: graph as usize,
                    index,
                })
            })
        })
        .collect())
}

/// Writes node handles in HIP's two-call style: with `nodes` null, only
/// the count.
///
/// # Safety
/// `nodes` is null or holds `*count` handles; `count` is an in/out size_t.
unsafe fn write_nodes(
    handles: Vec<usize>,
    nodes: *mut hipGraphNode_t,
    count: *mut usize,
) -> HipResult {
    if nodes.is_null() {
        // SAFETY: output of a size (this function's contract).
        return unsafe { put(count, handles.len()) };
    }
    // SAFETY: `count` is an in/out size (this function's contract).
    let room = unsafe { get(count, "count")? };
    for (i, h) in handles.iter().take(room).enumerate() {
        // SAFETY: `nodes` holds `room` handles.
        unsafe { *nodes.add(i) = *h as hipGraphNode_t };
    }
    // SAFETY: as above.
    unsafe { put(count, handles.len().min(room)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetNodes(
    graph: hipGraph_t,
    nodes: *mut hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    // SAFETY: output arrays per the crate docs.
    guard("hipGraphGetNodes", || unsafe {
        write_nodes(node_handles(graph, |_| true)?, nodes, count)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetRootNodes(
    graph: hipGraph_t,
    nodes: *mut hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    // SAFETY: output arrays per the crate docs.
    guard("hipGraphGetRootNodes", || unsafe {
        write_nodes(node_handles(graph, |n| n.deps.is_empty())?, nodes, count)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetType(node: hipGraphNode_t, kind: *mut i32) -> hipError_t {
    guard("hipGraphNodeGetType", || {
        let hip = hip()?;
        let r = hip.nodes.get(node as usize)?;
        let g = hip.graphs.get(r.graph)?;
        let k = lock(&g).nodes[r.index].kind;
        // SAFETY: output of an enum (crate docs).
        unsafe { put(kind, k) }
    })
}

fn instantiate(exec: *mut hipGraphExec_t, graph: hipGraph_t) -> HipResult {
    let hip = hip()?;
    let g = hip.graphs.get(graph as usize)?;
    let nodes = lock(&g).clone();
    let instance = hip.current().null.with(|s| nodes.instantiate(s))?;
    let handle = hip.execs.insert(Arc::new(instance));
    // SAFETY: output of an exec handle (crate docs).
    unsafe { put(exec, handle as hipGraphExec_t) }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiate(
    exec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    error_node: *mut hipGraphNode_t,
    log: *mut c_char,
    log_size: usize,
) -> hipError_t {
    guard("hipGraphInstantiate", || {
        let r = instantiate(exec, graph);
        if let Err(e) = &r {
            if !log.is_null() && log_size > 0 {
                let msg = e.message.as_bytes();
                let n = msg.len().min(log_size - 1);
                // SAFETY: `log` holds `log_size` bytes (crate docs); n + 1 fits.
                unsafe {
                    std::ptr::copy_nonoverlapping(msg.as_ptr() as *const c_char, log, n);
                    *log.add(n) = 0;
                }
            }
            if !error_node.is_null() {
                // SAFETY: output of a node handle (crate docs).
                unsafe { put(error_node, std::ptr::null_mut())? };
            }
        }
        r
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiateWithFlags(
    exec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    _flags: u64,
) -> hipError_t {
    guard("hipGraphInstantiateWithFlags", || instantiate(exec, graph))
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphLaunch(exec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    guard("hipGraphLaunch", || {
        let hip = hip()?;
        let instance = hip.execs.get(exec as usize)?;
        hip.stream(stream)?.enqueue(hip, Work::Graph(instance))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecDestroy(exec: hipGraphExec_t) -> hipError_t {
    guard("hipGraphExecDestroy", || {
        hip()?.execs.remove(exec as usize).map(drop)
    })
}

symver!("graph");
