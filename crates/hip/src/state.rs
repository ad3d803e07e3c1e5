//! The process-wide state: devices (opened on the first HIP call), the
//! current device of each thread, and the handle tables behind every HIP
//! handle.
//!
//! A handle C sees (`hipStream_t`, `hipEvent_t`, ...) is not a pointer to
//! anything: it packs a kind tag and a serial number, and every use looks
//! it up in its table, so a forged, stale or other-kind handle is
//! `hipErrorInvalidHandle`, never a wild dereference.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::abi::*;
use crate::error::{HipError, HipResult};
use crate::stream::HipStream;

/// Locks a mutex, ignoring poisoning (a contained panic must not wedge
/// the library).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One GPU as HIP sees it.
pub struct DeviceState {
    pub index: usize,
    pub device: softgpu::Device,
    /// The null (legacy default) stream.
    pub null: Arc<HipStream>,
    /// The first kernel fault seen, reported by every later synchronizing
    /// call until `hipDeviceReset` (CUDA's sticky errors).
    pub sticky: Mutex<Option<HipError>>,
    /// Devices whose memory this one's kernels were allowed to reach
    /// (`hipDeviceEnablePeerAccess`).
    pub peers: Mutex<Vec<usize>>,
    /// Flags given to `hipSetDeviceFlags`.
    pub flags: Mutex<u32>,
}

impl DeviceState {
    /// Fails with the sticky fault, if the device has one.
    pub fn check_sticky(&self) -> HipResult {
        match &*lock(&self.sticky) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// The whole library's state.
pub struct Hip {
    pub devices: Vec<DeviceState>,
    pub streams: Table<Arc<HipStream>>,
    pub events: Table<Arc<crate::stream::HipEvent>>,
    pub graphs: Table<Arc<Mutex<crate::graph::Graph>>>,
    pub execs: Table<Arc<crate::graph::GraphExec>>,
    pub nodes: Table<crate::graph::NodeRef>,
    pub modules: Table<Arc<crate::launch::HipModule>>,
    pub functions: Table<Arc<crate::launch::Function>>,
}

static STATE: OnceLock<Result<Hip, HipError>> = OnceLock::new();

/// The state, initialised on first use (HIP initialises implicitly).
pub fn hip() -> HipResult<&'static Hip> {
    STATE.get_or_init(Hip::init).as_ref().map_err(Clone::clone)
}

impl Hip {
    fn init() -> HipResult<Hip> {
        // The runtime HSA calls of the process share, configured from
        // the environment; each device holds it.
        let instance = softgpu::Instance::global(softgpu_env::library_config)
            .map_err(|e| HipError::new(HIP_ERROR_NO_DEVICE, format!("softgpu runtime: {e}")))?;
        let count = instance.device_count();
        let mut devices = Vec::with_capacity(count);
        for index in 0..count {
            let device = instance.device(index)?;
            let null = HipStream::new(&device, index, 0, 0, true)?;
            devices.push(DeviceState {
                index,
                device,
                null: Arc::new(null),
                sticky: Mutex::new(None),
                peers: Mutex::new(Vec::new()),
                flags: Mutex::new(0),
            });
        }
        // The trace is buffered; C programs end with `exit`, which runs no
        // Rust destructors, so flush it then.
        extern "C" fn flush_trace() {
            if let Ok(rt) = softgpu_runtime::Runtime::get() {
                rt.tracer.flush();
            }
        }
        // SAFETY: registers a plain `extern "C"` function with no
        // arguments, as `atexit` requires.
        unsafe { libc::atexit(flush_trace) };
        if devices.is_empty() {
            return Err(HipError::new(HIP_ERROR_NO_DEVICE, "softgpu has no GPU"));
        }
        Ok(Hip {
            devices,
            streams: Table::new(1),
            events: Table::new(2),
            graphs: Table::new(3),
            execs: Table::new(4),
            nodes: Table::new(5),
            modules: Table::new(6),
            functions: Table::new(7),
        })
    }

    /// Device `index`, or `hipErrorInvalidDevice`.
    pub fn device(&self, index: i32) -> HipResult<&DeviceState> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.devices.get(i))
            .ok_or_else(|| {
                HipError::new(
                    HIP_ERROR_INVALID_DEVICE,
                    format!("no device {index} (softgpu has {})", self.devices.len()),
                )
            })
    }

    /// The calling thread's current device.
    pub fn current(&self) -> &DeviceState {
        let i = CURRENT.with(Cell::get);
        &self.devices[i.min(self.devices.len() - 1)]
    }

    /// The device whose memory holds `addr`, if any device's does (all
    /// devices share one arena, so this is the allocation's owner).
    pub fn stream(&self, handle: hipStream_t) -> HipResult<Arc<HipStream>> {
        match handle as usize {
            0 | STREAM_LEGACY => Ok(self.current().null.clone()),
            STREAM_PER_THREAD => crate::stream::per_thread(self),
            _ => self.streams.get(handle as usize),
        }
    }
}

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

/// Makes `index` the calling thread's current device.
pub fn set_current(index: usize) {
    CURRENT.with(|c| c.set(index));
}

/// A table of objects behind handles of one kind.
pub struct Table<T> {
    kind: u64,
    next: AtomicU64,
    items: Mutex<HashMap<usize, T>>,
}

/// Handles are `kind << 44 | serial`: far above any address a program
/// might confuse them with, and distinct per kind.
const KIND_SHIFT: u32 = 44;

impl<T: Clone> Table<T> {
    pub fn new(kind: u64) -> Table<T> {
        Table {
            kind,
            next: AtomicU64::new(1),
            items: Mutex::new(HashMap::new()),
        }
    }

    /// Stores `item`; returns its handle.
    pub fn insert(&self, item: T) -> usize {
        let serial = self.next.fetch_add(1, Ordering::Relaxed);
        let handle = (self.kind << KIND_SHIFT | serial) as usize;
        lock(&self.items).insert(handle, item);
        handle
    }

    pub fn get(&self, handle: usize) -> HipResult<T> {
        lock(&self.items).get(&handle).cloned().ok_or_else(|| {
            HipError::handle(format!("{handle:#x} is not a live {} handle", self.name()))
        })
    }

    pub fn remove(&self, handle: usize) -> HipResult<T> {
        lock(&self.items).remove(&handle).ok_or_else(|| {
            HipError::handle(format!("{handle:#x} is not a live {} handle", self.name()))
        })
    }

    /// Every live item.
    pub fn all(&self) -> Vec<(usize, T)> {
        lock(&self.items)
            .iter()
            .map(|(h, t)| (*h, t.clone()))
            .collect()
    }

    fn name(&self) -> &'static str {
        match self.kind {
            1 => "stream",
            2 => "event",
            3 => "graph",
            4 => "graph exec",
            5 => "graph node",
            6 => "module",
            _ => "function",
        }
    }
}
