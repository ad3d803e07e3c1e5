//! Stream capture: what a capturing stream receives becomes nodes of a
//! graph that exists (and has a handle) from the start of the capture,
//! as `hipStreamGetCaptureInfo_v2` hands it out.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

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

/// `hipStreamCaptureMode`.
const MODE_GLOBAL: i32 = 0;
const MODE_THREAD_LOCAL: i32 = 1;
const MODE_RELAXED: i32 = 2;

/// `hipStreamCaptureStatus`.
const STATUS_NONE: i32 = 0;
const STATUS_ACTIVE: i32 = 1;
const STATUS_INVALIDATED: i32 = 2;

/// A stream's capture in progress.
pub struct Capture {
    /// The graph's handle and the graph.
    pub handle: usize,
    graph: Arc<Mutex<Graph>>,
    /// The nodes the next captured item depends on.
    last: Vec<usize>,
    pub id: u64,
    /// The `hipStreamCaptureMode` it began with, and the thread that began
    /// it (which alone may end it, unless the mode is relaxed).
    mode: i32,
    thread: ThreadId,
    /// Broken by a call the capture rules prohibit: it records nothing
    /// more and ends with `hipErrorStreamCaptureInvalidated`.
    invalidated: bool,
}

impl Capture {
    /// A capture into a new graph.
    pub fn new(hip: &Hip, mode: i32) -> Capture {
        let graph = Arc::new(Mutex::new(Graph::default()));
        Capture {
            handle: hip.graphs.insert(graph.clone()),
            graph,
            last: Vec::new(),
            id: CAPTURE_IDS.fetch_add(1, Ordering::Relaxed),
            mode,
            thread: std::thread::current().id(),
            invalidated: false,
        }
    }

    /// The `hipStreamCaptureStatus` of a stream with this capture.
    pub fn status(&self) -> i32 {
        match self.invalidated {
            true => STATUS_INVALIDATED,
            false => STATUS_ACTIVE,
        }
    }

    /// Records `work` as a node after the stream's last nodes.
    pub fn add(&mut self, work: Work) -> HipResult {
        if self.invalidated {
            return Err(invalidated());
        }
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

fn invalidated() -> HipError {
    HipError::new(
        HIP_ERROR_STREAM_CAPTURE_INVALIDATED,
        "the capture was invalidated by a call its mode prohibits",
    )
}

thread_local! {
    /// This thread's `hipStreamCaptureMode` (`hipThreadExchangeStreamCaptureMode`).
    static CAPTURE_MODE: Cell<i32> = const { Cell::new(MODE_GLOBAL) };
}

/// A capture in progress as the capture-mode rules see it: its stream's
/// handle, its mode and the thread that began it.
struct Active {
    stream: usize,
    mode: i32,
    thread: ThreadId,
}

/// Every capture in progress, in any thread.
static ACTIVE: Mutex<Vec<Active>> = Mutex::new(Vec::new());

/// Refuses a call that is unsafe during a capture (an allocation or a
/// free, which may synchronise the device) under the calling thread's
/// mode, as CUDA and CLR define it: in global mode, while this thread or
/// any thread has a global-mode capture, or this thread has a
/// thread-local one; in thread-local mode, while this thread has a
/// non-relaxed capture; relaxed mode refuses nothing. The captures the
/// call would have broken are invalidated, and the call fails with
/// `hipErrorStreamCaptureUnsupported`.
pub fn refuse_unsafe_call(what: &str) -> HipResult {
    let mode = CAPTURE_MODE.with(Cell::get);
    let me = std::thread::current().id();
    refuse_if(what, |a| match mode {
        MODE_GLOBAL => a.mode == MODE_GLOBAL || (a.mode != MODE_RELAXED && a.thread == me),
        MODE_THREAD_LOCAL => a.mode != MODE_RELAXED && a.thread == me,
        _ => false,
    })
}

/// Refuses a synchronous call (a blocking copy or fill, a device
/// synchronisation) while any stream anywhere is capturing, in every
/// mode, as CLR does: every capture in progress is invalidated.
pub fn refuse_synchronous_call(what: &str) -> HipResult {
    refuse_if(what, |_| true)
}

/// Forgets the capture of a stream being destroyed.
pub fn forget(stream: hipStream_t) {
    lock(&ACTIVE).retain(|a| a.stream != stream as usize);
}

fn refuse_if(what: &str, breaks: impl Fn(&Active) -> bool) -> HipResult {
    let broken: Vec<usize> = lock(&ACTIVE)
        .iter()
        .filter(|a| breaks(a))
        .map(|a| a.stream)
        .collect();
    if broken.is_empty() {
        return Ok(());
    }
    let hip = hip()?;
    for stream in broken {
        // A stream destroyed meanwhile has no capture left to break.
        if let Ok(s) = hip.stream(stream as hipStream_t) {
            s.with_capture(|c| c.map(|c| c.invalidated = true));
        }
    }
    Err(HipError::new(
        HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        format!("{what} is not permitted while a stream is capturing"),
    ))
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamBeginCapture(stream: hipStream_t, mode: i32) -> hipError_t {
    guard("hipStreamBeginCapture", || {
        let hip = hip()?;
        if !(MODE_GLOBAL..=MODE_RELAXED).contains(&mode) {
            return Err(HipError::invalid(format!("capture mode {mode}")));
        }
        if stream.is_null() || stream as usize == STREAM_LEGACY {
            return Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "the null stream cannot be captured",
            ));
        }
        let s = hip.stream(stream)?;
        let capture = Capture::new(hip, mode);
        let (handle, thread) = (capture.handle, capture.thread);
        s.begin_capture(capture).inspect_err(|_| {
            let _ = hip.graphs.remove(handle);
        })?;
        lock(&ACTIVE).push(Active {
            stream: stream as usize,
            mode,
            thread,
        });
        Ok(())
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
        let s = hip.stream(stream)?;
        let me = std::thread::current().id();
        let wrong_thread =
            s.with_capture(|c| c.is_some_and(|c| c.mode != MODE_RELAXED && c.thread != me));
        if wrong_thread {
            // CLR: only the beginning thread ends a non-relaxed capture.
            return Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_WRONG_THREAD,
                "the capture was begun by another thread",
            ));
        }
        let capture = s.end_capture()?;
        lock(&ACTIVE).retain(|a| a.stream != stream as usize);
        if capture.invalidated {
            let _ = hip.graphs.remove(capture.handle);
            // SAFETY: as below.
            unsafe { put(graph, std::ptr::null_mut())? };
            return Err(invalidated());
        }
        // SAFETY: output of a graph handle (crate docs), checked non-null.
        unsafe { put(graph, capture.handle as hipGraph_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamIsCapturing(stream: hipStream_t, status: *mut i32) -> hipError_t {
    guard("hipStreamIsCapturing", || {
        let s = hip()?.stream(stream)?;
        let status_now = s.with_capture(|c| c.map_or(STATUS_NONE, |c| c.status()));
        // SAFETY: output of a hipStreamCaptureStatus (crate docs).
        unsafe { put(status, status_now) }
    })
}

/// What `hipStreamGetCaptureInfo_v2` reports of an active capture.
struct Info {
    status: i32,
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
            status: c.status(),
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
            put(status, info.as_ref().map_or(STATUS_NONE, |i| i.status))?;
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
            put(status, info.as_ref().map_or(STATUS_NONE, |i| i.status))?;
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
        if !(MODE_GLOBAL..=MODE_RELAXED).contains(&new) {
            return Err(HipError::invalid(format!("capture mode {new}")));
        }
        // The mode decides which captures an unsafe call breaks
        // (`refuse_unsafe_call`).
        let old = CAPTURE_MODE.with(|m| m.replace(new));
        // SAFETY: as above.
        unsafe { put(mode, old) }
    })
}

symver!("graph_capture");
