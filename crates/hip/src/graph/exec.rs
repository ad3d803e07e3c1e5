//! Instantiated graphs: a private copy of the graph, its replay, and the
//! updates (`hipGraphExec*SetParams`, `hipGraphExecUpdate`) that change
//! the copy and so the next launch.
//!
//! The replay is built when the graph is instantiated (so errors show
//! there) and again at the first launch after an update. A replaced
//! softgpu graph is dropped on a thread of its own: dropping waits for
//! its replays in flight, and an update must not block on work the
//! caller has queued.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use super::nodes::{event_ref, host_params, kernel_params};
use super::params::Transfer;
use super::HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
use super::{graph_of, kind, owner_of, wrong_kind, Graph, Node, Params, Step};
use crate::abi::*;
use crate::error::{get, guard, put, HipError, HipResult};
use crate::state::{hip, lock};
use crate::stream::Work;

/// `hipGraphExecUpdateResult` values (HIP 5.2.3).
mod update_result {
    pub const SUCCESS: i32 = 0;
    pub const TOPOLOGY_CHANGED: i32 = 2;
    pub const NODE_TYPE_CHANGED: i32 = 3;
    pub const PARAMETERS_CHANGED: i32 = 5;
}

/// `hipGraphInstantiateFlagAutoFreeOnLaunch`: frees a graph's memory
/// allocations at launch; softgpu graphs have none, so it changes nothing.
const INSTANTIATE_AUTO_FREE_ON_LAUNCH: u64 = 1;

/// An instantiated graph.
pub struct GraphExec {
    state: Mutex<ExecState>,
}

struct ExecState {
    /// The instance's copy of the graph (node handles are the original
    /// graph's, so updates can name them).
    graph: Graph,
    /// The replay of `graph`; `None` after an update, until the next
    /// launch builds it again.
    replay: Option<Arc<Replay>>,
}

/// How a graph is replayed.
enum Replay {
    /// A softgpu graph: nodes laid on up to four device queues, so
    /// independent branches run concurrently.
    Softgpu(Mutex<softgpu::GraphExec>),
    /// Work a softgpu graph cannot hold (event records and waits, captured
    /// graph launches), in a dependency order, put on the stream one by
    /// one.
    Sequential(Vec<Work>),
}

impl Replay {
    /// The replay of `graph`, recorded on `stream`'s device.
    fn build(graph: &Graph, stream: &softgpu::Stream) -> HipResult<Replay> {
        let mut steps = Vec::new();
        graph.flatten(&mut steps, &[])?;
        let sequential = steps
            .iter()
            .any(|s| matches!(s.work, Work::Record(_) | Work::Wait(_) | Work::Graph(_)));
        if sequential {
            return Ok(Replay::Sequential(
                steps.into_iter().map(|s| s.work).collect(),
            ));
        }
        let mut recording = stream.graph()?;
        let mut made: Vec<softgpu::Node> = Vec::with_capacity(steps.len());
        for Step { work, deps } in &steps {
            let after: Vec<softgpu::Node> = deps.iter().map(|&d| made[d]).collect();
            let node = match work {
                Work::Launch(l) => {
                    recording.dispatch_args(&after, &l.kernel, l.grid, l.block, &l.args)?
                }
                Work::Nothing => recording.join(&after)?,
                work => {
                    let body = work.host_body()?.ok_or_else(|| {
                        HipError::new(HIP_ERROR_UNKNOWN, "a graph step without a body")
                    })?;
                    recording.host_fn(&after, body)?
                }
            };
            made.push(node);
        }
        Ok(Replay::Softgpu(Mutex::new(recording.finish()?)))
    }

    fn launch(&self, stream: &softgpu::Stream) -> HipResult {
        match self {
            Replay::Softgpu(exec) => Ok(stream.launch(&mut lock(exec))?),
            Replay::Sequential(order) => order.iter().try_for_each(|w| w.run(stream)),
        }
    }
}

/// Drops a replay no longer used, on a thread of its own when dropping it
/// waits (a softgpu graph waits for its replays in flight).
fn retire(old: Option<Arc<Replay>>) {
    if let Some(old) = old.filter(|r| matches!(**r, Replay::Softgpu(_))) {
        // If no thread can be made, the closure (and `old`) is dropped
        // here, which waits.
        let _ = std::thread::Builder::new()
            .name("softgpu-graph-retire".into())
            .spawn(move || drop(old));
    }
}

impl GraphExec {
    /// Instantiates `graph` (the instance's own copy) for `stream`'s
    /// device.
    pub fn new(graph: Graph, stream: &softgpu::Stream) -> HipResult<GraphExec> {
        let replay = Replay::build(&graph, stream)?;
        Ok(GraphExec {
            state: Mutex::new(ExecState {
                graph,
                replay: Some(Arc::new(replay)),
            }),
        })
    }

    /// Replays the graph on `stream`, rebuilding it first after an update.
    pub fn launch(&self, stream: &softgpu::Stream) -> HipResult {
        let replay = {
            let mut state = lock(&self.state);
            match &state.replay {
                Some(r) => r.clone(),
                None => {
                    let r = Arc::new(Replay::build(&state.graph, stream)?);
                    state.replay = Some(r.clone());
                    r
                }
            }
        };
        replay.launch(stream)
    }

    /// Applies `change` to the instance's copy of the graph; the next
    /// launch replays the changed graph.
    fn update<T>(&self, change: impl FnOnce(&mut Graph) -> HipResult<T>) -> HipResult<T> {
        let mut state = lock(&self.state);
        let value = change(&mut state.graph)?;
        retire(state.replay.take());
        Ok(value)
    }
}

/// The instance behind a handle (null, forged and destroyed ones are
/// `hipErrorInvalidValue`, as in CLR).
fn exec_of(exec: hipGraphExec_t) -> HipResult<Arc<GraphExec>> {
    if exec.is_null() {
        return Err(HipError::invalid("the graph exec is null"));
    }
    hip()?
        .execs
        .get(exec as usize)
        .map_err(|e| HipError::invalid(e.message))
}

/// Runs `change` on the instance's copy of node `node` (a live node of
/// the graph the instance was made from).
fn update_node(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    change: impl FnOnce(&mut Node) -> HipResult,
) -> HipResult {
    let instance = exec_of(exec)?;
    owner_of(hip()?, node)?;
    instance.update(|g| {
        let n = g
            .find_mut(node as usize)
            .ok_or_else(|| HipError::invalid("the node is not a node of the instantiated graph"))?;
        change(n)
    })
}

/// Checks the instance and node handles before the parameters, as CLR
/// does (both `hipErrorInvalidValue`).
fn check_target(exec: hipGraphExec_t, node: hipGraphNode_t) -> HipResult {
    exec_of(exec)?;
    owner_of(hip()?, node).map(drop)
}

/// Sets a memcpy node of an instance to `copy`, which must keep its
/// `hipMemcpyKind` (CLR refuses a change with `hipErrorInvalidValue`).
fn set_copy(exec: hipGraphExec_t, node: hipGraphNode_t, copy: Transfer) -> HipResult {
    update_node(exec, node, |n| match &n.params {
        Params::Memcpy(old) if old.kind() == copy.kind() => {
            n.params = Params::Memcpy(copy);
            Ok(())
        }
        // A captured copy kept no kind to compare.
        Params::Captured {
            kind: kind::MEMCPY, ..
        } => {
            n.params = Params::Memcpy(copy);
            Ok(())
        }
        Params::Memcpy(old) => Err(HipError::invalid(format!(
            "an instantiated memcpy node's kind cannot change ({} to {})",
            old.kind(),
            copy.kind()
        ))),
        _ => Err(wrong_kind(n, "memcpy")),
    })
}

fn instantiate(exec: *mut hipGraphExec_t, graph: hipGraph_t) -> HipResult {
    let hip = hip()?;
    let g = graph_of(hip, graph)?;
    if exec.is_null() {
        return Err(HipError::invalid("the output exec pointer is null"));
    }
    let copy = lock(&g).snapshot();
    let instance = hip.current().null.with(|s| GraphExec::new(copy, s))?;
    let handle = hip.execs.insert(Arc::new(instance));
    // SAFETY: output of an exec handle (crate docs), checked non-null.
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
    flags: u64,
) -> hipError_t {
    guard("hipGraphInstantiateWithFlags", || {
        if flags & !INSTANTIATE_AUTO_FREE_ON_LAUNCH != 0 {
            return Err(HipError::invalid(format!(
                "graph instantiation flags {flags:#x}"
            )));
        }
        instantiate(exec, graph)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphLaunch(exec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    guard("hipGraphLaunch", || {
        let hip = hip()?;
        let instance = exec_of(exec)?;
        hip.stream(stream)?.enqueue(hip, Work::Graph(instance))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecDestroy(exec: hipGraphExec_t) -> hipError_t {
    guard("hipGraphExecDestroy", || {
        exec_of(exec)?;
        hip()?.execs.remove(exec as usize).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecKernelNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const hipKernelNodeParams,
) -> hipError_t {
    guard("hipGraphExecKernelNodeSetParams", || {
        check_target(exec, node)?;
        // SAFETY: `params` follows "Inputs" (crate docs).
        let p = unsafe { kernel_params(params)? };
        update_node(exec, node, |n| match n.params.kind() {
            kind::KERNEL => {
                n.params = p;
                Ok(())
            }
            _ => Err(wrong_kind(n, "kernel")),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *mut hipMemcpy3DParms,
) -> hipError_t {
    guard("hipGraphExecMemcpyNodeSetParams", || {
        check_target(exec, node)?;
        // SAFETY: `params` points to a hipMemcpy3DParms (crate docs).
        let copy = Transfer::three_d(unsafe { get(params, "memcpy parameters")? })?;
        set_copy(exec, node, copy)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams1D(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphExecMemcpyNodeSetParams1D", || {
        check_target(exec, node)?;
        set_copy(
            exec,
            node,
            Transfer::one_d_replacing(dst, src, bytes, kind)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParamsFromSymbol(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    bytes: usize,
    offset: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphExecMemcpyNodeSetParamsFromSymbol", || {
        check_target(exec, node)?;
        let copy = Transfer::from_symbol(dst, symbol, bytes, offset, kind)?;
        set_copy(exec, node, copy)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParamsToSymbol(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    bytes: usize,
    offset: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphExecMemcpyNodeSetParamsToSymbol", || {
        check_target(exec, node)?;
        let copy = Transfer::to_symbol(symbol, src, bytes, offset, kind)?;
        set_copy(exec, node, copy)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemsetNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const hipMemsetParams,
) -> hipError_t {
    guard("hipGraphExecMemsetNodeSetParams", || {
        check_target(exec, node)?;
        // SAFETY: `params` points to a hipMemsetParams (crate docs).
        let memset = super::params::Memset::new(&unsafe { get(params, "memset parameters")? })?;
        update_node(exec, node, |n| match &n.params {
            // CLR: a 2D memset of an instance keeps its row size and rows.
            Params::Memset(old) if old.shape().1 > 1 || memset.shape().1 > 1 => {
                if old.shape() != memset.shape() {
                    return Err(HipError::invalid(
                        "an instantiated 2D memset node keeps its width and height",
                    ));
                }
                n.params = Params::Memset(memset);
                Ok(())
            }
            Params::Memset(_)
            | Params::Captured {
                kind: kind::MEMSET, ..
            } => {
                n.params = Params::Memset(memset);
                Ok(())
            }
            _ => Err(wrong_kind(n, "memset")),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecHostNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const super::nodes::HostNodeParams,
) -> hipError_t {
    guard("hipGraphExecHostNodeSetParams", || {
        check_target(exec, node)?;
        // SAFETY: `params` is null or a hipHostNodeParams (crate docs).
        let host = unsafe { host_params(params)? };
        update_node(exec, node, |n| match n.params {
            Params::Host(_) => {
                n.params = Params::Host(host);
                Ok(())
            }
            _ => Err(wrong_kind(n, "host")),
        })
    })
}

/// Sets the event of an instance's event node of kind `want`.
fn set_event(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    event: hipEvent_t,
    want: i32,
) -> HipResult {
    let e = event_ref(event)?;
    update_node(exec, node, |n| match (&n.params, want) {
        (Params::Record(_), kind::EVENT_RECORD) => {
            n.params = Params::Record(e);
            Ok(())
        }
        (Params::Wait(_), kind::WAIT_EVENT) => {
            n.params = Params::Wait(e);
            Ok(())
        }
        _ => Err(wrong_kind(n, "event")),
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecEventRecordNodeSetEvent(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    guard("hipGraphExecEventRecordNodeSetEvent", || {
        set_event(exec, node, event, kind::EVENT_RECORD)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecEventWaitNodeSetEvent(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    guard("hipGraphExecEventWaitNodeSetEvent", || {
        set_event(exec, node, event, kind::WAIT_EVENT)
    })
}

/// Node types in a dependency order, child graphs' nodes inside theirs:
/// what must match for an instance's child graph to be replaced.
fn shape(graph: &Graph) -> HipResult<Vec<i32>> {
    let mut kinds = Vec::new();
    for i in graph.order()? {
        kinds.push(graph.nodes[i].params.kind());
        if let Params::Child(c) = &graph.nodes[i].params {
            kinds.extend(shape(&lock(&c.graph))?);
        }
    }
    Ok(kinds)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecChildGraphNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    child: hipGraph_t,
) -> hipError_t {
    guard("hipGraphExecChildGraphNodeSetParams", || {
        let hip = hip()?;
        let new = graph_of(hip, child)?;
        if owner_of(hip, node)? == child as usize {
            // CLR: hipErrorUnknown when the child is the node's own graph.
            return Err(HipError::new(
                HIP_ERROR_UNKNOWN,
                "a child graph cannot be the graph holding its node",
            ));
        }
        let copy = lock(&new).snapshot();
        let new_shape = shape(&copy)?;
        update_node(exec, node, |n| {
            let Params::Child(c) = &n.params else {
                return Err(wrong_kind(n, "child graph"));
            };
            if shape(&lock(&c.graph))? != new_shape {
                // CLR: hipErrorUnknown when the node types in order differ.
                return Err(HipError::new(
                    HIP_ERROR_UNKNOWN,
                    "the new child graph's nodes differ from the instantiated one's",
                ));
            }
            *lock(&c.graph) = copy;
            Ok(())
        })
    })
}

/// Why an instance cannot take a graph's parameters: the
/// `hipGraphExecUpdateResult` and the new graph's offending node.
struct Mismatch {
    result: i32,
    node: usize,
    why: String,
}

/// Checks that `new` has `old`'s topology and node types (child graphs
/// included), memcpy nodes their kinds; on success, pairs old and new
/// node indices.
fn match_graphs(old: &Graph, new: &Graph) -> Result<Vec<(usize, usize)>, Mismatch> {
    let fail = |result, node, why: &str| Mismatch {
        result,
        node,
        why: why.into(),
    };
    let invalid = |e: HipError| fail(update_result::TOPOLOGY_CHANGED, 0, &e.message);
    let (a, b) = (old.order().map_err(invalid)?, new.order().map_err(invalid)?);
    if a.len() != b.len() {
        return Err(fail(
            update_result::TOPOLOGY_CHANGED,
            0,
            "node counts differ",
        ));
    }
    // Position in the dependency order, per node index.
    let position = |order: &[usize]| {
        let mut p = vec![0; order.len()];
        order.iter().enumerate().for_each(|(k, &i)| p[i] = k);
        p
    };
    let (pa, pb) = (position(&a), position(&b));
    let deps = |g: &Graph, p: &[usize], i: usize| {
        let mut d: Vec<usize> = g.nodes[i]
            .deps
            .iter()
            .filter_map(|&h| g.index_of(h))
            .map(|j| p[j])
            .collect();
        d.sort_unstable();
        d
    };
    for (&i, &j) in a.iter().zip(&b) {
        let (x, y) = (&old.nodes[i], &new.nodes[j]);
        if x.params.kind() != y.params.kind() {
            return Err(fail(
                update_result::NODE_TYPE_CHANGED,
                y.handle,
                "a node's type changed",
            ));
        }
        if deps(old, &pa, i) != deps(new, &pb, j) {
            return Err(fail(
                update_result::TOPOLOGY_CHANGED,
                y.handle,
                "a node's dependencies changed",
            ));
        }
        match (&x.params, &y.params) {
            (Params::Memcpy(p), Params::Memcpy(q)) if p.kind() != q.kind() => {
                return Err(fail(
                    update_result::PARAMETERS_CHANGED,
                    y.handle,
                    "a memcpy node's kind changed",
                ));
            }
            (Params::Child(p), Params::Child(q)) => {
                match_graphs(&lock(&p.graph), &lock(&q.graph))?;
            }
            _ => {}
        }
    }
    Ok(a.into_iter().zip(b).collect())
}

/// Gives `old`'s nodes the parameters of their `new` counterparts.
fn take_params(old: &mut Graph, new: &Graph, pairs: &[(usize, usize)]) {
    for &(i, j) in pairs {
        old.nodes[i].params = match &new.nodes[j].params {
            Params::Child(c) => Params::Child(super::Child {
                handle: 0,
                graph: Arc::new(Mutex::new(lock(&c.graph).snapshot())),
            }),
            p => p.clone(),
        };
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecUpdate(
    exec: hipGraphExec_t,
    graph: hipGraph_t,
    error_node: *mut hipGraphNode_t,
    result: *mut i32,
) -> hipError_t {
    guard("hipGraphExecUpdate", || {
        let hip = hip()?;
        let instance = exec_of(exec)?;
        let new = graph_of(hip, graph)?;
        if error_node.is_null() || result.is_null() {
            return Err(HipError::invalid("an output pointer is null"));
        }
        let new = lock(&new).snapshot();
        // All or nothing: the instance changes only if every node fits
        // (CLR stops at the first misfit, having updated those before).
        let outcome = instance.update(|old| match match_graphs(old, &new) {
            Ok(pairs) => {
                take_params(old, &new, &pairs);
                Ok(Ok(()))
            }
            Err(m) => Ok(Err(m)),
        })?;
        // SAFETY: outputs of a hipGraphExecUpdateResult and a node handle
        // (crate docs), checked non-null.
        unsafe {
            match outcome {
                Ok(()) => put(result, update_result::SUCCESS),
                Err(m) => {
                    put(result, m.result)?;
                    put(error_node, m.node as hipGraphNode_t)?;
                    Err(HipError::new(
                        HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
                        format!("hipGraphExecUpdate: {}", m.why),
                    ))
                }
            }
        }
    })
}

symver!("graph_exec");
