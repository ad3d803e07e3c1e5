//! Adding nodes to a graph, and reading and setting their parameters.
//!
//! The checks and status codes are CLR's (`hip_graph.cpp`): a null
//! output, graph or parameter pointer, or a node handle that is not a
//! live node of the right kind, is `hipErrorInvalidValue`.

use std::ffi::c_void;
use std::sync::Arc;

use super::params::{KernelNode, Memset, Transfer};
use super::{graph_of, kind, owner_of, with_node, wrong_kind, Child, EventRef, Node, Params};
use crate::abi::*;
use crate::error::{get, guard, put, HipError, HipResult};
use crate::state::{hip, lock};
use crate::stream::HostCall;

/// Adds a node with `params` to `graph` after `deps`; writes its handle.
///
/// # Safety
/// `deps` holds `count` node handles (crate docs, "Inputs").
pub unsafe fn add_node(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    params: Params,
) -> HipResult {
    let hip = hip()?;
    let g = graph_of(hip, graph)?;
    if node.is_null() {
        return Err(HipError::invalid("the output node pointer is null"));
    }
    // SAFETY: `deps` holds `count` handles (this function's contract).
    let deps = unsafe { node_array(deps, count) }?;
    for &d in &deps {
        if owner_of(hip, d as hipGraphNode_t)? != graph as usize {
            return Err(HipError::invalid("a dependency belongs to another graph"));
        }
    }
    let mut unique = deps.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != deps.len() {
        return Err(HipError::invalid("a dependency is named twice"));
    }
    let new = Node::register(hip, graph as usize, deps, params);
    let handle = new.handle;
    lock(&g).nodes.push(new);
    // SAFETY: output of a node handle (crate docs), checked non-null.
    unsafe { put(node, handle as hipGraphNode_t) }
}

/// `count` node handles from a C array (null only when `count` is 0).
///
/// # Safety
/// `nodes` is null or holds `count` handles (crate docs, "Inputs").
pub unsafe fn node_array(nodes: *const hipGraphNode_t, count: usize) -> HipResult<Vec<usize>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if nodes.is_null() {
        return Err(HipError::invalid(format!(
            "{count} nodes but the array is null"
        )));
    }
    // SAFETY: `nodes` holds `count` handles (this function's contract).
    let slice = unsafe { std::slice::from_raw_parts(nodes, count) };
    Ok(slice.iter().map(|&h| h as usize).collect())
}

/// A kernel node's parameters, for the current device.
///
/// # Safety
/// `params` is null or a valid `hipKernelNodeParams` whose argument array
/// follows "Inputs" (crate docs).
pub unsafe fn kernel_params(params: *const hipKernelNodeParams) -> HipResult<Params> {
    // SAFETY: `params` points to a hipKernelNodeParams (this function's
    // contract).
    let p = unsafe { get(params, "kernel node parameters")? };
    let device = hip()?.current().index;
    // SAFETY: its argument array follows "Inputs" (this function's contract).
    Ok(Params::Kernel(Arc::new(unsafe {
        KernelNode::new(&p, device)?
    })))
}

/// A host node's parameters.
///
/// # Safety
/// `params` is null or a valid `hipHostNodeParams` (crate docs).
pub unsafe fn host_params(params: *const HostNodeParams) -> HipResult<HostCall> {
    // SAFETY: `params` points to a hipHostNodeParams (this function's
    // contract).
    let p = unsafe { get(params, "host node parameters")? };
    let call = p
        .func
        .ok_or_else(|| HipError::invalid("host function is null"))?;
    Ok(HostCall {
        call,
        data: p.user_data as usize,
    })
}

/// An event node's event, checked.
pub fn event_ref(event: hipEvent_t) -> HipResult<EventRef> {
    if event.is_null() {
        return Err(HipError::invalid("the event is null"));
    }
    let e = hip()?.events.get(event as usize)?;
    Ok(EventRef {
        handle: event as usize,
        event: e,
    })
}

/// A registered copy of `graph` to embed as a child graph (CLR clones
/// the graph given to `hipGraphAddChildGraphNode`).
pub fn child_of(graph: hipGraph_t) -> HipResult<Child> {
    let hip = hip()?;
    let g = graph_of(hip, graph)?;
    let copy = lock(&g).snapshot();
    Ok(super::register_copy(hip, &copy))
}

/// `hipHostNodeParams`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HostNodeParams {
    func: hipHostFn_t,
    user_data: *mut c_void,
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
        // SAFETY: `params` and `deps` follow "Inputs" (crate docs).
        unsafe { add_node(node, graph, deps, count, kernel_params(params)?) }
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
        let copy = Transfer::three_d(unsafe { get(params, "memcpy parameters")? })?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Memcpy(copy)) }
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
        let copy = Transfer::one_d(dst, src, bytes, kind)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Memcpy(copy)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNodeFromSymbol(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    dst: *mut c_void,
    symbol: *const c_void,
    bytes: usize,
    offset: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphAddMemcpyNodeFromSymbol", || {
        let copy = Transfer::from_symbol(dst, symbol, bytes, offset, kind)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Memcpy(copy)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNodeToSymbol(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    symbol: *const c_void,
    src: *const c_void,
    bytes: usize,
    offset: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphAddMemcpyNodeToSymbol", || {
        let copy = Transfer::to_symbol(symbol, src, bytes, offset, kind)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Memcpy(copy)) }
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
        let memset = Memset::new(&unsafe { get(params, "memset parameters")? })?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Memset(memset)) }
    })
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
        // SAFETY: `params` is null or a hipHostNodeParams (crate docs).
        let host = unsafe { host_params(params)? };
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Host(host)) }
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
        add_node(node, graph, deps, count, Params::Empty)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddChildGraphNode(
    node: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    child: hipGraph_t,
) -> hipError_t {
    guard("hipGraphAddChildGraphNode", || {
        if child == graph {
            return Err(HipError::invalid("a graph cannot contain itself"));
        }
        let hip = hip()?;
        graph_of(hip, graph)?;
        let embedded = child_of(child)?;
        let handle = embedded.handle;
        // SAFETY: `deps` holds `count` handles (crate docs).
        let added = unsafe { add_node(node, graph, deps, count, Params::Child(embedded.clone())) };
        if added.is_err() {
            let _ = hip.graphs.remove(handle);
            super::unregister(hip, &lock(&embedded.graph));
        }
        added
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
        let e = event_ref(event)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Record(e)) }
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
        let e = event_ref(event)?;
        // SAFETY: `deps` holds `count` handles (crate docs).
        unsafe { add_node(node, graph, deps, count, Params::Wait(e)) }
    })
}

/// Replaces the parameters of a node whose current ones pass `fits`
/// (CLR's check of the node's type), naming `what` if they do not.
pub fn set_params(
    node: hipGraphNode_t,
    what: &str,
    fits: impl Fn(&Params) -> bool,
    params: Params,
) -> HipResult {
    with_node(node, |n| {
        if !fits(&n.params) {
            return Err(wrong_kind(n, what));
        }
        n.params = params;
        Ok(())
    })
}

// A captured kernel, memcpy or memset node takes new parameters too (it
// then has HIP parameters to read back).
pub fn is_kernel(p: &Params) -> bool {
    p.kind() == kind::KERNEL
}
pub fn is_memcpy(p: &Params) -> bool {
    p.kind() == kind::MEMCPY
}
pub fn is_memset(p: &Params) -> bool {
    p.kind() == kind::MEMSET
}
pub fn is_host(p: &Params) -> bool {
    matches!(p, Params::Host(_))
}
pub fn is_record(p: &Params) -> bool {
    matches!(p, Params::Record(_))
}
pub fn is_wait(p: &Params) -> bool {
    matches!(p, Params::Wait(_))
}

/// A node's parameters of one kind, which `pick` takes from its `Params`;
/// a node of that kind made by stream capture has no HIP parameters to
/// give (`captured_kind`), and a node of another kind is the wrong kind.
fn node_params<T>(
    node: hipGraphNode_t,
    what: &str,
    captured_kind: i32,
    pick: impl FnOnce(&Params) -> Option<T>,
) -> HipResult<T> {
    with_node(node, |n| match (pick(&n.params), &n.params) {
        (Some(p), _) => Ok(p),
        (None, Params::Captured { kind, .. }) if *kind == captured_kind => Err(captured(n)),
        (None, _) => Err(wrong_kind(n, what)),
    })
}

/// The message for a captured node whose parameters HIP never gave.
fn captured(n: &Node) -> HipError {
    crate::error::unsupported(format!(
        "reading the parameters of node {:#x}, made by stream capture (softgpu keeps \
         only the work of captured launches, copies and fills)",
        n.handle
    ))
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipKernelNodeParams,
) -> hipError_t {
    guard("hipGraphKernelNodeGetParams", || {
        let p = node_params(node, "kernel", kind::KERNEL, |p| match p {
            Params::Kernel(k) => Some(k.params()),
            _ => None,
        })?;
        // SAFETY: output of a hipKernelNodeParams (crate docs).
        unsafe { put(params, p) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipKernelNodeParams,
) -> hipError_t {
    guard("hipGraphKernelNodeSetParams", || {
        with_node(node, |n| match is_kernel(&n.params) {
            true => Ok(()),
            false => Err(wrong_kind(n, "kernel")),
        })?;
        // SAFETY: `params` follows "Inputs" (crate docs).
        let p = unsafe { kernel_params(params)? };
        set_params(node, "kernel", is_kernel, p)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipMemcpy3DParms,
) -> hipError_t {
    guard("hipGraphMemcpyNodeGetParams", || {
        let copy = node_params(node, "memcpy", kind::MEMCPY, |p| match p {
            Params::Memcpy(c) => Some(*c),
            _ => None,
        })?;
        let p = copy.params()?;
        // SAFETY: output of a hipMemcpy3DParms (crate docs).
        unsafe { put(params, p) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipMemcpy3DParms,
) -> hipError_t {
    guard("hipGraphMemcpyNodeSetParams", || {
        // SAFETY: `params` points to a hipMemcpy3DParms (crate docs).
        let copy = Transfer::three_d(unsafe { get(params, "memcpy parameters")? })?;
        set_params(node, "memcpy", is_memcpy, Params::Memcpy(copy))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParams1D(
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphMemcpyNodeSetParams1D", || {
        let copy = Transfer::one_d_replacing(dst, src, bytes, kind)?;
        set_params(node, "memcpy", is_memcpy, Params::Memcpy(copy))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParamsFromSymbol(
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    bytes: usize,
    offset: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphMemcpyNodeSetParamsFromSymbol", || {
        let copy = Transfer::from_symbol(dst, symbol, bytes, offset, kind)?;
        set_params(node, "memcpy", is_memcpy, Params::Memcpy(copy))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParamsToSymbol(
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    bytes: usize,
    offset: usize,
    kind: i32,
) -> hipError_t {
    guard("hipGraphMemcpyNodeSetParamsToSymbol", || {
        let copy = Transfer::to_symbol(symbol, src, bytes, offset, kind)?;
        set_params(node, "memcpy", is_memcpy, Params::Memcpy(copy))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemsetNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipMemsetParams,
) -> hipError_t {
    guard("hipGraphMemsetNodeGetParams", || {
        let p = node_params(node, "memset", kind::MEMSET, |p| match p {
            Params::Memset(m) => Some(m.params()),
            _ => None,
        })?;
        // SAFETY: output of a hipMemsetParams (crate docs).
        unsafe { put(params, p) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemsetNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipMemsetParams,
) -> hipError_t {
    guard("hipGraphMemsetNodeSetParams", || {
        // SAFETY: `params` points to a hipMemsetParams (crate docs).
        let memset = Memset::new(&unsafe { get(params, "memset parameters")? })?;
        set_params(node, "memset", is_memset, Params::Memset(memset))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphHostNodeGetParams(
    node: hipGraphNode_t,
    params: *mut HostNodeParams,
) -> hipError_t {
    guard("hipGraphHostNodeGetParams", || {
        let h = node_params(node, "host", kind::HOST, |p| match p {
            Params::Host(h) => Some(*h),
            _ => None,
        })?;
        let p = HostNodeParams {
            func: Some(h.call),
            user_data: h.data as *mut c_void,
        };
        // SAFETY: output of a hipHostNodeParams (crate docs).
        unsafe { put(params, p) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphHostNodeSetParams(
    node: hipGraphNode_t,
    params: *const HostNodeParams,
) -> hipError_t {
    guard("hipGraphHostNodeSetParams", || {
        // SAFETY: `params` is null or a hipHostNodeParams (crate docs).
        let host = unsafe { host_params(params)? };
        set_params(node, "host", is_host, Params::Host(host))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphChildGraphNodeGetGraph(
    node: hipGraphNode_t,
    graph: *mut hipGraph_t,
) -> hipError_t {
    guard("hipGraphChildGraphNodeGetGraph", || {
        let handle = node_params(node, "child graph", kind::GRAPH, |p| match p {
            Params::Child(c) => Some(c.handle),
            _ => None,
        })?;
        // SAFETY: output of a graph handle (crate docs).
        unsafe { put(graph, handle as hipGraph_t) }
    })
}

/// The event of an event record node (`record`) or wait node.
fn node_event(node: hipGraphNode_t, record: bool) -> HipResult<usize> {
    let what = if record { "event record" } else { "event wait" };
    // No captured node is of either kind (captured events keep theirs).
    node_params(node, what, -1, |p| match (p, record) {
        (Params::Record(e), true) | (Params::Wait(e), false) => Some(e.handle),
        _ => None,
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventRecordNodeGetEvent(
    node: hipGraphNode_t,
    event: *mut hipEvent_t,
) -> hipError_t {
    guard("hipGraphEventRecordNodeGetEvent", || {
        let e = node_event(node, true)?;
        // SAFETY: output of an event handle (crate docs).
        unsafe { put(event, e as hipEvent_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventRecordNodeSetEvent(
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    guard("hipGraphEventRecordNodeSetEvent", || {
        let e = event_ref(event)?;
        set_params(node, "event record", is_record, Params::Record(e))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventWaitNodeGetEvent(
    node: hipGraphNode_t,
    event: *mut hipEvent_t,
) -> hipError_t {
    guard("hipGraphEventWaitNodeGetEvent", || {
        let e = node_event(node, false)?;
        // SAFETY: output of an event handle (crate docs).
        unsafe { put(event, e as hipEvent_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventWaitNodeSetEvent(
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    guard("hipGraphEventWaitNodeSetEvent", || {
        let e = event_ref(event)?;
        set_params(node, "event wait", is_wait, Params::Wait(e))
    })
}

symver!("graph_nodes");
