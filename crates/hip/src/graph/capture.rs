//! Stream capture: what a capturing stream receives becomes nodes of a
//! graph that exists (and has a handle) from the start of the capture,
//! as `hipStreamGetCaptureInfo_v2` hands it out.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::nodes::node_array;
use super::{kind, EventRef, Graph, Node, Params};
use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::{hip, lock, Hip};
use crate::stream::{HipEvent, Work};

/// Capture sequence numbers (`hipStreamGetCaptureInfo`'s id).
static CAPTURE_IDS: AtomicU64 = AtomicU64::new(1);

/// `hipStreamAddCaptureDependencies`, `hipStreamSetCaptureDependencies`.
const ADD_CAPTURE_DEPENDENCIES: u32 = 0;
const SET_CAPTURE_DEPENDENCIES: u32 = 1;

/// A stream's capture in progress.
pub struct Capture {
    /// The graph's handle and the graph.
    pub handle: usize,
    graph: Arc<Mutex<Graph>>,
    /// The nodes the next captured item depends on.
    last: Vec<usize>,
    pub id: u64,
}

impl Capture {
    /// A capture into a new graph.
    pub fn new(hip: &Hip) -> Capture {
        let graph = Arc::new(Mutex::new(Graph::default()));
        Capture {
            handle: hip.graphs.insert(graph.clone()),
            graph,
            last: Vec::new(),
            id: CAPTURE_IDS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Records `work` as a node after the stream's last nodes.
    pub fn add(&mut self, work: Work) -> HipResult {
        let hip = hip()?;
        let params = captured_params(hip, work);
        let node = Node::register(hip, self.handle, self.last.clone(), params);
        self.last = vec![node.handle];
        lock(&self.graph).nodes.push(node);
        Ok(())
    }

    /// Changes the dependencies of the next captured node
    /// (`hipStreamUpdateCaptureDependencies`).
    fn update(&mut self, nodes: Vec<usize>, flags: u32) -> HipResult {
        let g = lock(&self.graph);
        if nodes.iter().any(|&h| g.find(h).is_none()) {
            return Err(HipError::invalid("a node is not in the capture's graph"));
        }
        match flags {
            SET_CAPTURE_DEPENDENCIES => self.last = nodes,
            _ => {
                for h in nodes {
                    if !self.last.contains(&h) {
                        self.last.push(h);
                    }
                }
            }
        }
        Ok(())
    }
}

/// What a captured item is as a node: host functions, empty nodes and
/// event records and waits keep their HIP parameters; the rest keep
/// their work.
fn captured_params(hip: &Hip, work: Work) -> Params {
    match work {
        Work::Host(h) => Params::Host(h),
        Work::Nothing => Params::Empty,
        Work::Record(e) => Params::Record(event_ref(hip, e)),
        Work::Wait(e) => Params::Wait(event_ref(hip, e)),
        work => {
            let kind = match &work {
                Work::Launch(_) => kind::KERNEL,
                Work::Copy(_) => kind::MEMCPY,
                Work::Fill { .. } => kind::MEMSET,
                Work::Graph(_) => kind::GRAPH,
                _ => kind::HOST,
            };
            Params::Captured { kind, work }
        }
    }
}

/// An event with its handle, found in the event table (0 if it was
/// destroyed meanwhile).
fn event_ref(hip: &Hip, event: Arc<HipEvent>) -> EventRef {
    let handle = hip
        .events
        .all()
        .into_iter()
        .find(|(_, e)| Arc::ptr_eq(e, &event))
        .map_or(0, |(h, _)| h);
    EventRef { handle, event }
}

thread_local! {
    /// This thread's `hipStreamCaptureMode` (`hipThreadExchangeStreamCaptureMode`).
    static CAPTURE_MODE: Cell<i32> = const { Cell::new(0) };
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamBeginCapture(stream: hipStream_t, mode: i32) -> hipError_t {
    guard("hipStreamBeginCapture", || {
        let hip = hip()?;
        if !(0..=2).contains(&mode) {
            return Err(HipError::invalid(format!("capture mode {mode}")));
        }
        if stream.is_null() || stream as usize == STREAM_LEGACY {
            return Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "the null stream cannot be captured",
            ));
        }
        let s = hip.stream(stream)?;
        let capture = Capture::new(hip);
        let handle = capture.handle;
        s.begin_capture(capture).inspect_err(|_| {
            let _ = hip.graphs.remove(handle);
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamEndCapture(
    stream: hipStream_t,
    graph: *mut hipGraph_t,
) -> hipError_t {
    guard("hipStreamEndCapture", || {
        let hip = hip()?;
        if graph.is_null() {
            return Err(HipError::invalid("the output graph pointer is null"));
        }
        let capture = hip.stream(stream)?.end_capture()?;
        // SAFETY: output of a graph handle (crate docs), checked non-null.
        unsafe { put(graph, capture.handle as hipGraph_t) }
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

/// What `hipStreamGetCaptureInfo_v2` reports of an active capture.
struct Info {
    id: u64,
    graph: usize,
    deps: *const hipGraphNode_t,
    count: usize,
}

/// The capture `stream` is in, if any (the null stream never is).
fn capture_info(stream: hipStream_t) -> HipResult<Option<Info>> {
    if stream.is_null() || stream as usize == STREAM_LEGACY {
        return Ok(None);
    }
    let s = hip()?.stream(stream)?;
    Ok(s.with_capture(|c| {
        c.map(|c| Info {
            id: c.id,
            graph: c.handle,
            // The array stays the stream's; it is valid until the next
            // capture call changes it, as in CLR.
            deps: match c.last.is_empty() {
                true => std::ptr::null(),
                false => c.last.as_ptr() as *const hipGraphNode_t,
            },
            count: c.last.len(),
        })
    }))
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo(
    stream: hipStream_t,
    status: *mut i32,
    id: *mut u64,
) -> hipError_t {
    guard("hipStreamGetCaptureInfo", || {
        if status.is_null() {
            return Err(HipError::invalid("the status pointer is null"));
        }
        let info = capture_info(stream)?;
        // SAFETY: outputs (crate docs); `status` checked, `id` may be
        // null and is written only for an active capture, as in CLR.
        unsafe {
            put(status, info.is_some() as i32)?;
            if let (Some(info), false) = (&info, id.is_null()) {
                put(id, info.id)?;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo_v2(
    stream: hipStream_t,
    status: *mut i32,
    id: *mut u64,
    graph: *mut hipGraph_t,
    deps: *mut *const hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    guard("hipStreamGetCaptureInfo_v2", || {
        if status.is_null() {
            return Err(HipError::invalid("the status pointer is null"));
        }
        let info = capture_info(stream)?;
        // SAFETY: outputs (crate docs); `status` checked, the others may
        // be null and are written only for an active capture, as in CLR.
        unsafe {
            put(status, info.is_some() as i32)?;
            let Some(info) = info else { return Ok(()) };
            if !id.is_null() {
                put(id, info.id)?;
            }
            if !graph.is_null() {
                put(graph, info.graph as hipGraph_t)?;
            }
            if !deps.is_null() {
                put(deps, info.deps)?;
            }
            if !count.is_null() {
                put(count, info.count)?;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamUpdateCaptureDependencies(
    stream: hipStream_t,
    deps: *mut hipGraphNode_t,
    count: usize,
    flags: u32,
) -> hipError_t {
    guard("hipStreamUpdateCaptureDependencies", || {
        let s = hip()?.stream(stream)?;
        if flags != ADD_CAPTURE_DEPENDENCIES && flags != SET_CAPTURE_DEPENDENCIES {
            return Err(HipError::invalid(format!(
                "capture dependency flags {flags}"
            )));
        }
        // SAFETY: `deps` holds `count` handles (crate docs).
        let nodes = unsafe { node_array(deps, count)? };
        s.with_capture(|c| match c {
            Some(c) => c.update(nodes, flags),
            // CLR: hipErrorIllegalState when the stream is not capturing.
            None => Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_ILLEGAL,
                "the stream is not capturing",
            )),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipThreadExchangeStreamCaptureMode(mode: *mut i32) -> hipError_t {
    guard("hipThreadExchangeStreamCaptureMode", || {
        // SAFETY: `mode` is null or an in/out hipStreamCaptureMode
        // (crate docs).
        let new = unsafe { crate::error::get(mode, "capture mode")? };
        if !(0..=2).contains(&new) {
            return Err(HipError::invalid(format!("capture mode {new}")));
        }
        // softgpu keeps the mode for the exchange but refuses no call by
        // it (CLR refuses, say, hipMalloc during a global-mode capture).
        let old = CAPTURE_MODE.with(|m| m.replace(new));
        // SAFETY: as above.
        unsafe { put(mode, old) }
    })
}

symver!("graph_capture");
