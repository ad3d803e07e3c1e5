//! Streams, events and host functions.
//!
//! A HIP stream is a softgpu [`softgpu::Stream`] behind a mutex (HIP
//! streams are used from any thread). Everything a HIP call puts on a
//! stream is a [`Work`] item: run at once on the stream, or, while the
//! stream is capturing, recorded as a graph node ([`crate::graph`]) and
//! run the same way when the graph is launched.
//!
//! The null stream keeps HIP's legacy ordering: work on it waits for all
//! work queued before on the device's *blocking* streams, and work on a
//! blocking stream waits for the null stream's earlier work. Both are
//! waits on the device (event records and barriers), never on the host.
//! `hipStreamNonBlocking` streams take no part.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::{hip, lock, Hip};

/// One HIP stream.
pub struct HipStream {
    pub device: usize,
    pub flags: u32,
    pub priority: i32,
    pub is_null: bool,
    inner: Mutex<Inner>,
    /// Work items enqueued so far (the null stream's count is what a
    /// blocking stream compares with what it has waited for).
    enqueued: AtomicU64,
}

struct Inner {
    stream: softgpu::Stream,
    /// The graph being captured, when capturing.
    capture: Option<crate::graph::Capture>,
    /// The null stream's `enqueued` count this stream has waited for.
    seen_null: u64,
    /// Work was enqueued since the null stream last waited for this one.
    dirty: bool,
    /// The stream's `enqueued` count known to have completed.
    done: u64,
    /// The last query's submission and the count it covers.
    query: Option<(u64, softgpu::Submission)>,
}

/// A host function and its argument, called on a runtime thread.
#[derive(Clone, Copy)]
pub struct HostCall {
    pub call: unsafe extern "C" fn(*mut c_void),
    pub data: usize,
}

/// A stream callback (`hipStreamAddCallback`).
#[derive(Clone, Copy)]
pub struct StreamCallback {
    pub call: unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void),
    pub stream: usize,
    pub data: usize,
}

/// What a call puts on a stream.
#[derive(Clone)]
pub enum Work {
    Launch(crate::launch::Launch),
    /// Copies `(dst, src, len)`, in order (rows of a 2D/3D copy).
    Copy(Arc<Vec<(u64, u64, u64)>>),
    /// Fills each `(dst, len)` with the repeated pattern.
    Fill {
        rows: Arc<Vec<(u64, u64)>>,
        pattern: Arc<Vec<u8>>,
    },
    Host(HostCall),
    Callback(StreamCallback),
    Record(Arc<HipEvent>),
    Wait(Arc<HipEvent>),
    /// An instantiated graph (`hipGraphLaunch`).
    Graph(Arc<crate::graph::GraphExec>),
    /// Nothing (an empty graph node).
    Nothing,
}

impl Work {
    /// Puts the work on `stream` (in its order, asynchronously).
    pub fn run(&self, stream: &softgpu::Stream) -> HipResult {
        match self {
            Work::Launch(launch) => launch.run(stream),
            Work::Record(event) => {
                let recorded = stream.record_event()?;
                *lock(&event.recorded) = Some(recorded);
                if let Some(shared) = event.shared.clone() {
                    let n = shared.make_record();
                    stream.host_fn(move || {
                        shared.reach(n);
                        Ok(())
                    })?;
                }
                Ok(())
            }
            // An interprocess event may have been recorded by another
            // process: the stream waits for the last record made anywhere.
            Work::Wait(event) => match (&event.shared, &*lock(&event.recorded)) {
                (Some(shared), _) => {
                    let (shared, n) = (shared.clone(), shared.last_made());
                    Ok(stream.host_fn(move || {
                        shared.wait_for(n);
                        Ok(())
                    })?)
                }
                (None, Some(e)) => Ok(stream.wait_event(e)?),
                (None, None) => Ok(()),
            },
            Work::Graph(exec) => exec.launch(stream),
            Work::Nothing => Ok(()),
            Work::Copy(_) | Work::Fill { .. } | Work::Host(_) | Work::Callback(_) => {
                let body = self.host_body()?.ok_or_else(|| {
                    HipError::new(HIP_ERROR_UNKNOWN, "a host work item without a body")
                })?;
                Ok(stream.host_fn(move || body())?)
            }
        }
    }

    /// What a host-side item (copy, fill, host function, callback) runs on
    /// the host, for a stream or a graph node that replays it; `None` for
    /// device-side items.
    pub fn host_body(&self) -> HipResult<Option<softgpu::HostFn>> {
        let rt = softgpu_runtime::Runtime::get()?;
        let body: softgpu::HostFn = match self {
            Work::Copy(rows) => {
                let rows = rows.clone();
                Arc::new(move || copy(&rt, &rows))
            }
            Work::Fill { rows, pattern } => {
                let (rows, pattern) = (rows.clone(), pattern.clone());
                Arc::new(move || fill(&rt, &rows, &pattern))
            }
            Work::Host(h) => {
                let h = *h;
                Arc::new(move || {
                    // SAFETY: a host function may be called on any thread
                    // with its own data (crate docs, "Callbacks").
                    unsafe { (h.call)(h.data as *mut c_void) };
                    Ok(())
                })
            }
            Work::Callback(c) => {
                let c = *c;
                Arc::new(move || {
                    // SAFETY: as for `Work::Host`.
                    unsafe {
                        (c.call)(c.stream as hipStream_t, HIP_SUCCESS, c.data as *mut c_void)
                    };
                    Ok(())
                })
            }
            _ => return Ok(None),
        };
        Ok(Some(body))
    }
}

/// Copies rows `(dst, src, len)`.
fn copy(rt: &softgpu_runtime::Runtime, rows: &[(u64, u64, u64)]) -> Result<(), String> {
    let start = softgpu_runtime::trace::now_ns();
    for &(dst, src, len) in rows {
        // SAFETY: host sides are valid for `len` bytes until the copy has
        // run (crate docs, "Host memory"); device sides are checked by
        // `copy`.
        unsafe { rt.copy(dst, src, len) }
            .map_err(|e| format!("copy of {len} bytes from {src:#x} to {dst:#x}: {e}"))?;
    }
    let bytes = rows.iter().map(|r| r.2).sum();
    let (dst, src) = rows.first().map_or((0, 0), |r| (r.0, r.1));
    rt.tracer.transfer("memcpy", start, bytes, dst, Some(src));
    Ok(())
}

/// Fills rows with a repeated pattern, each row checked once and written
/// at copy speed (`Runtime::fill_pattern`).
fn fill(rt: &softgpu_runtime::Runtime, rows: &[(u64, u64)], pattern: &[u8]) -> Result<(), String> {
    let start = softgpu_runtime::trace::now_ns();
    for &(dst, len) in rows {
        // SAFETY: a host side is valid for `len` bytes until the fill has
        // run (crate docs, "Host memory"); a device side is checked by
        // `fill_pattern`.
        unsafe { rt.fill_pattern(dst, len, pattern) }
            .map_err(|e| format!("fill of {len} bytes at {dst:#x}: {e}"))?;
    }
    let bytes = rows.iter().map(|r| r.1).sum();
    rt.tracer.transfer(
        "memset",
        start,
        bytes,
        rows.first().map_or(0, |r| r.0),
        None,
    );
    Ok(())
}

impl HipStream {
    pub fn new(
        device: &softgpu::Device,
        index: usize,
        flags: u32,
        priority: i32,
        is_null: bool,
    ) -> HipResult<HipStream> {
        Ok(HipStream {
            device: index,
            flags,
            priority,
            is_null,
            inner: Mutex::new(Inner {
                stream: device.stream()?,
                capture: None,
                seen_null: 0,
                dirty: false,
                done: 0,
                query: None,
            }),
            enqueued: AtomicU64::new(0),
        })
    }

    fn blocking(&self) -> bool {
        !self.is_null && self.flags & HIP_STREAM_NON_BLOCKING == 0
    }

    /// Puts `work` on the stream (or into the graph it is capturing),
    /// after the legacy-stream waits it needs.
    pub fn enqueue(&self, hip: &Hip, work: Work) -> HipResult {
        let device = &hip.devices[self.device];
        device.check_sticky()?;
        if let Some(capture) = &mut lock(&self.inner).capture {
            return capture.add(work);
        }
        let mut waits = Vec::new();
        if self.is_null {
            // Wait for every blocking stream's work since the last time.
            for (_, s) in hip.streams.all() {
                if s.device == self.device && s.blocking() {
                    let mut inner = lock(&s.inner);
                    if inner.dirty && inner.capture.is_none() {
                        waits.push(inner.stream.record_event()?);
                        inner.dirty = false;
                    }
                }
            }
        } else if self.blocking() {
            let null = &device.null;
            let count = null.enqueued.load(Ordering::Acquire);
            if count > lock(&self.inner).seen_null {
                waits.push(lock(&null.inner).stream.record_event()?);
                lock(&self.inner).seen_null = count;
            }
        }
        let mut inner = lock(&self.inner);
        for event in &waits {
            inner.stream.wait_event(event)?;
        }
        work.run(&inner.stream)?;
        inner.dirty = true;
        self.enqueued.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Waits for everything enqueued so far. A kernel fault is reported
    /// once on stderr and becomes the device's sticky error.
    pub fn synchronize(&self, hip: &Hip) -> HipResult {
        if self.is_capturing() {
            return Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "synchronizing a capturing stream",
            ));
        }
        self.wait_queued(hip)
    }

    /// Waits for the work queued so far, of a capturing stream too (the
    /// work queued before its capture began), as a free must.
    fn wait_queued(&self, hip: &Hip) -> HipResult {
        let device = &hip.devices[self.device];
        device.check_sticky()?;
        let (count, submission) = {
            let inner = lock(&self.inner);
            let count = self.enqueued.load(Ordering::Acquire);
            if inner.done == count {
                return Ok(());
            }
            (count, inner.stream.submit()?)
        };
        submission.wait().map_err(|e| failed(device, e))?;
        let mut inner = lock(&self.inner);
        inner.done = inner.done.max(count);
        Ok(())
    }

    /// Whether everything enqueued so far has run. Repeated queries reuse
    /// one submission while nothing new is enqueued, so polling does not
    /// add work.
    pub fn is_idle(&self) -> HipResult<bool> {
        let mut inner = lock(&self.inner);
        let count = self.enqueued.load(Ordering::Acquire);
        if inner.done == count {
            return Ok(true);
        }
        let complete = match &inner.query {
            // A failed stream counts as complete here: the failure is
            // reported by the synchronisation that follows.
            Some((c, s)) if *c == count => s.is_complete().unwrap_or(true),
            _ => {
                let s = inner.stream.submit()?;
                let complete = s.is_complete().unwrap_or(true);
                inner.query = Some((count, s));
                complete
            }
        };
        if complete {
            inner.done = count;
            inner.query = None;
        }
        Ok(complete)
    }

    /// Starts capturing into `capture`.
    pub fn begin_capture(&self, capture: crate::graph::Capture) -> HipResult {
        let mut inner = lock(&self.inner);
        if inner.capture.is_some() {
            return Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_ILLEGAL,
                "the stream is already capturing",
            ));
        }
        inner.capture = Some(capture);
        Ok(())
    }

    /// Stops capturing; returns what was captured.
    pub fn end_capture(&self) -> HipResult<crate::graph::Capture> {
        lock(&self.inner).capture.take().ok_or_else(|| {
            HipError::new(
                HIP_ERROR_STREAM_CAPTURE_UNMATCHED,
                "the stream is not capturing",
            )
        })
    }

    pub fn is_capturing(&self) -> bool {
        lock(&self.inner).capture.is_some()
    }

    /// Runs `f` with the capture in progress, if any (capture info).
    pub fn with_capture<T>(&self, f: impl FnOnce(Option<&mut crate::graph::Capture>) -> T) -> T {
        f(lock(&self.inner).capture.as_mut())
    }

    /// Runs `f` with the underlying softgpu stream (allocation).
    pub fn with<T>(&self, f: impl FnOnce(&softgpu::Stream) -> HipResult<T>) -> HipResult<T> {
        f(&lock(&self.inner).stream)
    }
}

/// Turns a failed wait into the error HIP reports; a kernel fault is
/// printed once and made sticky.
pub fn failed(device: &crate::state::DeviceState, e: softgpu::Error) -> HipError {
    let error = HipError::from(e);
    if matches!(
        error.code,
        HIP_ERROR_ILLEGAL_ADDRESS | HIP_ERROR_LAUNCH_FAILURE | HIP_ERROR_LAUNCH_TIMEOUT
    ) {
        let mut sticky = lock(&device.sticky);
        if sticky.is_none() {
            // A checked run's report has printed it already.
            let reported = softgpu_runtime::Runtime::get().is_ok_and(|rt| rt.reporter.is_on());
            if !reported {
                eprintln!("softgpu: {}", error.message);
            }
            *sticky = Some(error.clone());
        }
    }
    error
}

/// The calling thread's `hipStreamPerThread` stream (a blocking stream of
/// the current device, made on first use).
pub fn per_thread(hip: &Hip) -> HipResult<Arc<HipStream>> {
    thread_local! {
        static MINE: std::cell::RefCell<Vec<(usize, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let device = hip.current().index;
    if let Some(h) = MINE.with(|m| m.borrow().iter().find(|(d, _)| *d == device).map(|p| p.1)) {
        if let Ok(s) = hip.streams.get(h) {
            return Ok(s);
        }
    }
    let stream = Arc::new(HipStream::new(&hip.current().device, device, 0, 0, false)?);
    let h = hip.streams.insert(stream.clone());
    MINE.with(|m| m.borrow_mut().push((device, h)));
    Ok(stream)
}

/// `stream`, with the null stream read as the per-thread stream (the
/// `_spt` entry points).
pub fn spt(stream: hipStream_t) -> hipStream_t {
    if stream.is_null() {
        STREAM_PER_THREAD as hipStream_t
    } else {
        stream
    }
}

/// Every stream of a device, the null stream first.
pub fn device_streams(hip: &Hip, device: usize) -> Vec<Arc<HipStream>> {
    let mut all = vec![hip.devices[device].null.clone()];
    all.extend(
        hip.streams
            .all()
            .into_iter()
            .map(|(_, s)| s)
            .filter(|s| s.device == device),
    );
    all
}

/// Synchronizes every stream of a device.
pub fn synchronize_device(hip: &Hip, device: usize) -> HipResult {
    device_streams(hip, device)
        .iter()
        .try_for_each(|s| s.wait_queued(hip))
}

/// One HIP event: the point of a stream it was last recorded at.
pub struct HipEvent {
    pub device: usize,
    pub flags: u32,
    pub recorded: Mutex<Option<softgpu::Event>>,
    /// An interprocess event's state shared with other processes.
    pub shared: Option<Arc<crate::ipc_event::SharedEvent>>,
}

fn create_stream(out: *mut hipStream_t, flags: u32, priority: i32) -> HipResult {
    let hip = hip()?;
    if flags & !HIP_STREAM_NON_BLOCKING != 0 {
        return Err(HipError::invalid(format!(
            "unknown stream flags {flags:#x}"
        )));
    }
    let device = hip.current();
    let stream = HipStream::new(
        &device.device,
        device.index,
        flags,
        priority.clamp(-1, 0),
        false,
    )?;
    let handle = hip.streams.insert(Arc::new(stream));
    // SAFETY: `out` is an output of a `hipStream_t` (crate docs).
    unsafe { put(out, handle as hipStream_t) }.inspect_err(|_| {
        let _ = hip.streams.remove(handle);
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t {
    guard("hipStreamCreate", || create_stream(stream, 0, 0))
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithFlags(
    stream: *mut hipStream_t,
    flags: u32,
) -> hipError_t {
    guard("hipStreamCreateWithFlags", || {
        create_stream(stream, flags, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithPriority(
    stream: *mut hipStream_t,
    flags: u32,
    priority: i32,
) -> hipError_t {
    guard("hipStreamCreateWithPriority", || {
        create_stream(stream, flags, priority)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetStreamPriorityRange(
    least: *mut i32,
    greatest: *mut i32,
) -> hipError_t {
    guard("hipDeviceGetStreamPriorityRange", || {
        // Priorities are accepted and recorded; softgpu's scheduler does
        // not rank queues, as HIP's range of 0 (low) to -1 (high) allows.
        if !least.is_null() {
            // SAFETY: non-null output of an int (crate docs).
            unsafe { put(least, 0)? };
        }
        if !greatest.is_null() {
            // SAFETY: as above.
            unsafe { put(greatest, -1)? };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    guard("hipStreamDestroy", || {
        let hip = hip()?;
        let s = hip.streams.get(stream as usize)?;
        // HIP lets queued work finish; the stream's handle goes now.
        let result = s.synchronize(hip);
        hip.streams.remove(stream as usize)?;
        crate::graph::capture::forget(stream);
        result
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
    guard("hipStreamSynchronize", || {
        let hip = hip()?;
        hip.stream(stream)?.synchronize(hip)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamSynchronize_spt(stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipStreamSynchronize(spt(stream)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
    guard("hipStreamQuery", || {
        let hip = hip()?;
        let s = hip.stream(stream)?;
        hip.devices[s.device].check_sticky()?;
        if s.is_capturing() {
            return Err(HipError::new(
                HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "querying a capturing stream",
            ));
        }
        if s.is_idle()? {
            Ok(())
        } else {
            Err(HipError::new(HIP_ERROR_NOT_READY, "work is still queued"))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamQuery_spt(stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipStreamQuery(spt(stream)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetFlags(stream: hipStream_t, flags: *mut u32) -> hipError_t {
    guard("hipStreamGetFlags", || {
        let s = hip()?.stream(stream)?;
        // SAFETY: output of an unsigned int (crate docs).
        unsafe { put(flags, s.flags) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetFlags_spt(stream: hipStream_t, flags: *mut u32) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipStreamGetFlags(spt(stream), flags) }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetPriority(
    stream: hipStream_t,
    priority: *mut i32,
) -> hipError_t {
    guard("hipStreamGetPriority", || {
        let s = hip()?.stream(stream)?;
        // SAFETY: output of an int (crate docs).
        unsafe { put(priority, s.priority) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetPriority_spt(
    stream: hipStream_t,
    priority: *mut i32,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipStreamGetPriority(spt(stream), priority) }
}

#[no_mangle]
pub unsafe extern "C" fn hipGetStreamDeviceId(stream: hipStream_t) -> i32 {
    let mut id = -1;
    guard("hipGetStreamDeviceId", || {
        id = hip()?.stream(stream)?.device as i32;
        Ok(())
    });
    id
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitEvent(
    stream: hipStream_t,
    event: hipEvent_t,
    flags: u32,
) -> hipError_t {
    guard("hipStreamWaitEvent", || {
        let hip = hip()?;
        if flags != 0 {
            return Err(HipError::invalid(format!(
                "flags must be 0, got {flags:#x}"
            )));
        }
        let event = hip.events.get(event as usize)?;
        hip.stream(stream)?.enqueue(hip, Work::Wait(event))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitEvent_spt(
    stream: hipStream_t,
    event: hipEvent_t,
    flags: u32,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipStreamWaitEvent(spt(stream), event, flags) }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamAddCallback(
    stream: hipStream_t,
    callback: hipStreamCallback_t,
    user_data: *mut c_void,
    flags: u32,
) -> hipError_t {
    guard("hipStreamAddCallback", || {
        let hip = hip()?;
        let call = callback.ok_or_else(|| HipError::invalid("callback is null"))?;
        if flags != 0 {
            return Err(HipError::invalid(format!(
                "flags must be 0, got {flags:#x}"
            )));
        }
        let s = hip.stream(stream)?;
        s.enqueue(
            hip,
            Work::Callback(StreamCallback {
                call,
                stream: stream as usize,
                data: user_data as usize,
            }),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchHostFunc(
    stream: hipStream_t,
    func: hipHostFn_t,
    user_data: *mut c_void,
) -> hipError_t {
    guard("hipLaunchHostFunc", || {
        let hip = hip()?;
        let call = func.ok_or_else(|| HipError::invalid("host function is null"))?;
        hip.stream(stream)?.enqueue(
            hip,
            Work::Host(HostCall {
                call,
                data: user_data as usize,
            }),
        )
    })
}

fn create_event(out: *mut hipEvent_t, flags: u32) -> HipResult {
    let hip = hip()?;
    let known = 0x1 | HIP_EVENT_DISABLE_TIMING | 0x4 | 0x4000_0000 | 0x8000_0000;
    if flags & !known != 0 {
        return Err(HipError::invalid(format!("unknown event flags {flags:#x}")));
    }
    let interprocess = flags & crate::ipc_event::HIP_EVENT_INTERPROCESS != 0;
    if interprocess && flags & HIP_EVENT_DISABLE_TIMING == 0 {
        // CLR: an interprocess event must also disable timing.
        return Err(HipError::invalid(
            "hipEventInterprocess needs hipEventDisableTiming",
        ));
    }
    let event = HipEvent {
        device: hip.current().index,
        flags,
        recorded: Mutex::new(None),
        shared: match interprocess {
            true => Some(Arc::new(crate::ipc_event::SharedEvent::create()?)),
            false => None,
        },
    };
    let handle = hip.events.insert(Arc::new(event));
    // SAFETY: `out` is an output of a `hipEvent_t` (crate docs).
    unsafe { put(out, handle as hipEvent_t) }.inspect_err(|_| {
        let _ = hip.events.remove(handle);
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreate(event: *mut hipEvent_t) -> hipError_t {
    guard("hipEventCreate", || create_event(event, 0))
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreateWithFlags(event: *mut hipEvent_t, flags: u32) -> hipError_t {
    guard("hipEventCreateWithFlags", || create_event(event, flags))
}

#[no_mangle]
pub unsafe extern "C" fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    guard("hipEventRecord", || {
        let hip = hip()?;
        let event = hip.events.get(event as usize)?;
        hip.stream(stream)?.enqueue(hip, Work::Record(event))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
    guard("hipEventDestroy", || {
        hip()?.events.remove(event as usize).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventSynchronize(event: hipEvent_t) -> hipError_t {
    guard("hipEventSynchronize", || {
        let hip = hip()?;
        let event = hip.events.get(event as usize)?;
        let recorded = lock(&event.recorded).clone();
        if let Some(e) = recorded {
            e.synchronize()
                .map_err(|err| failed(&hip.devices[event.device], err))?;
        }
        if let Some(shared) = &event.shared {
            shared.wait_for(shared.last_made());
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventQuery(event: hipEvent_t) -> hipError_t {
    guard("hipEventQuery", || {
        let event = hip()?.events.get(event as usize)?;
        let done = lock(&event.recorded)
            .as_ref()
            // A failed stream's event counts as done; the failure is
            // reported by synchronisation.
            .is_none_or(|e| e.is_complete().unwrap_or(true))
            && event
                .shared
                .as_ref()
                .is_none_or(|s| s.has_reached(s.last_made()));
        if done {
            Ok(())
        } else {
            Err(HipError::new(
                HIP_ERROR_NOT_READY,
                "the event has not completed",
            ))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventElapsedTime(
    ms: *mut f32,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    guard("hipEventElapsedTime", || {
        let hip = hip()?;
        let (start, stop) = (
            hip.events.get(start as usize)?,
            hip.events.get(stop as usize)?,
        );
        if (start.flags | stop.flags) & HIP_EVENT_DISABLE_TIMING != 0 {
            return Err(HipError::handle(
                "an event was created with hipEventDisableTiming",
            ));
        }
        let (a, b) = (lock(&start.recorded).clone(), lock(&stop.recorded).clone());
        let (Some(a), Some(b)) = (a, b) else {
            return Err(HipError::handle("an event has not been recorded"));
        };
        if !a.is_complete().unwrap_or(true) || !b.is_complete().unwrap_or(true) {
            return Err(HipError::new(
                HIP_ERROR_NOT_READY,
                "an event has not completed",
            ));
        }
        // Completion times of the two points (a stop before its start
        // reads as 0, where CUDA would report a negative time).
        let elapsed = b.elapsed_since(&a)?.as_secs_f64() * 1e3;
        // SAFETY: output of a float (crate docs).
        unsafe { put(ms, elapsed as f32) }
    })
}

symver!("stream");
