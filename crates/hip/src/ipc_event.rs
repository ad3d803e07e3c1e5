//! Events shared between processes (`hipEventInterprocess` events,
//! `hipIpcGetEventHandle`, `hipIpcOpenEventHandle`), made as ROCm's CLR
//! makes them: a small POSIX shared-memory object, named in the handle,
//! that every process holding the event maps. It counts the records made
//! of the event and the records their streams have reached: a record
//! takes the next number when it is enqueued and its stream writes that
//! number when it gets there; a wait (`hipEventSynchronize`, or
//! `hipStreamWaitEvent` on a stream) waits until the count reached is at
//! least the count made at the time of the call, so in any process it
//! waits for the work before the last record made anywhere.
//!
//! A `hipIpcEventHandle_t` holds the object's name, NUL-terminated. As in
//! CLR, an event without `hipEventInterprocess` has no handle
//! (`hipErrorInvalidConfiguration`), a handle that names no live event is
//! `hipErrorInvalidValue`, and one opened in the process that made it is
//! `hipErrorInvalidContext`.

use std::ffi::{c_void, CStr, CString};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::hip;
use crate::stream::HipEvent;

/// `hipEventInterprocess`.
pub const HIP_EVENT_INTERPROCESS: u32 = 0x4;

/// What the shared object holds.
#[repr(C)]
struct State {
    /// `MAGIC` once the creating process has set it up.
    magic: AtomicU64,
    /// The creating process.
    owner: AtomicU32,
    _pad: u32,
    /// Records made, and records their streams have reached.
    made: AtomicU64,
    reached: AtomicU64,
}

/// Marks a shared object as a softgpu event's ("sgpuevnt").
const MAGIC: u64 = u64::from_le_bytes(*b"sgpuevnt");

/// Every name starts so; a handle naming anything else is refused unopened.
const PREFIX: &str = "/softgpu-event-";

/// Names made by this process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// One process's mapping of an event's shared object.
pub struct SharedEvent {
    state: NonNull<State>,
    name: CString,
    /// The creating process removes the name when its event goes.
    owned: bool,
}

// SAFETY: `state` points at a mapping only this value unmaps (in `drop`),
// and every field behind it is an atomic, shared between threads (and
// processes) by design.
unsafe impl Send for SharedEvent {}
// SAFETY: as above: all access is through `&State`'s atomics.
unsafe impl Sync for SharedEvent {}

impl SharedEvent {
    /// A new shared object for an interprocess event of this process.
    pub fn create() -> HipResult<SharedEvent> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{}-{n}", std::process::id());
        let name = CString::new(name).map_err(|e| HipError::invalid(e.to_string()))?;
        let flags = libc::O_CREAT | libc::O_EXCL | libc::O_RDWR;
        let event = SharedEvent::map(name, flags, true)?;
        let state = event.state();
        state.owner.store(std::process::id(), Ordering::Relaxed);
        state.magic.store(MAGIC, Ordering::Release);
        Ok(event)
    }

    /// Maps the event a handle names.
    fn open(name: CString) -> HipResult<SharedEvent> {
        if !name.to_bytes().starts_with(PREFIX.as_bytes()) {
            return Err(HipError::invalid("not a handle from hipIpcGetEventHandle"));
        }
        let event = SharedEvent::map(name, libc::O_RDWR, false)?;
        if event.state().magic.load(Ordering::Acquire) != MAGIC {
            return Err(HipError::invalid("the handle names no interprocess event"));
        }
        Ok(event)
    }

    /// Opens (or creates, sized) the named object and maps it.
    fn map(name: CString, flags: i32, create: bool) -> HipResult<SharedEvent> {
        let size = std::mem::size_of::<State>();
        let gone = |what: &str| {
            HipError::invalid(format!(
                "{what} the event's shared memory {}: {}",
                name.to_string_lossy(),
                std::io::Error::last_os_error()
            ))
        };
        // SAFETY: `name` is a NUL-terminated string; the descriptor
        // returned is closed below on every path.
        let fd = unsafe { libc::shm_open(name.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(gone("cannot open"));
        }
        // SAFETY: `fd` is the descriptor just opened; `stat` is a plain
        // output struct.
        let sized = unsafe {
            let mut stat: libc::stat = std::mem::zeroed();
            if create {
                libc::ftruncate(fd, size as libc::off_t) == 0
            } else {
                libc::fstat(fd, &mut stat) == 0 && stat.st_size as usize >= size
            }
        };
        let addr = match sized {
            // SAFETY: a fresh shared mapping of `size` bytes of the object
            // (at least that long, checked or just set), at an address the
            // kernel picks; nothing else is overwritten.
            true => unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    size,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            },
            false => libc::MAP_FAILED,
        };
        let error = (addr == libc::MAP_FAILED).then(|| gone("cannot map"));
        // SAFETY: `fd` is ours; the mapping (if any) stays valid without it.
        unsafe { libc::close(fd) };
        if let Some(error) = error {
            if create {
                // SAFETY: removes the name this call made.
                unsafe { libc::shm_unlink(name.as_ptr()) };
            }
            return Err(error);
        }
        Ok(SharedEvent {
            state: NonNull::new(addr as *mut State).ok_or_else(|| gone("cannot map"))?,
            name,
            owned: create,
        })
    }

    fn state(&self) -> &State {
        // SAFETY: the mapping is `size_of::<State>()` bytes, page-aligned,
        // alive until `drop`, and holds only atomics (any bit pattern is
        // valid, other processes change them only atomically).
        unsafe { self.state.as_ref() }
    }

    /// The handle's bytes: the name, NUL-terminated.
    fn handle(&self) -> hipIpcHandle {
        let mut reserved = [0u8; HIP_IPC_HANDLE_SIZE];
        let name = self.name.as_bytes();
        reserved[..name.len()].copy_from_slice(name);
        hipIpcHandle { reserved }
    }

    /// A record enqueued: its number, for its stream to mark reached.
    pub fn make_record(&self) -> u64 {
        self.state().made.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Marks record `n` reached.
    pub fn reach(&self, n: u64) {
        self.state().reached.fetch_max(n, Ordering::AcqRel);
    }

    /// The number of the last record made: what a wait waits for.
    pub fn last_made(&self) -> u64 {
        self.state().made.load(Ordering::Acquire)
    }

    /// Whether record `n` has been reached.
    pub fn has_reached(&self, n: u64) -> bool {
        self.state().reached.load(Ordering::Acquire) >= n
    }

    /// Waits until record `n` has been reached (by any process's stream).
    pub fn wait_for(&self, n: u64) {
        let mut pause = Duration::from_micros(10);
        while !self.has_reached(n) {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }
}

impl Drop for SharedEvent {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once, here; no
        // reference from `state()` outlives `&self`.
        unsafe {
            libc::munmap(
                self.state.as_ptr() as *mut c_void,
                std::mem::size_of::<State>(),
            )
        };
        if self.owned {
            // SAFETY: the name this process made.
            unsafe { libc::shm_unlink(self.name.as_ptr()) };
        }
    }
}

/// The shared state a handle names, mapped in this process.
fn open_event(handle: &hipIpcHandle) -> HipResult<Arc<SharedEvent>> {
    let name = CStr::from_bytes_until_nul(&handle.reserved)
        .map_err(|_| HipError::invalid("not a handle from hipIpcGetEventHandle"))?;
    let shared = SharedEvent::open(name.to_owned())?;
    if shared.state().owner.load(Ordering::Relaxed) == std::process::id() {
        return Err(HipError::new(
            HIP_ERROR_INVALID_CONTEXT,
            "the handle was made by this process, which has the event already",
        ));
    }
    Ok(Arc::new(shared))
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcGetEventHandle(
    handle: *mut hipIpcHandle,
    event: hipEvent_t,
) -> hipError_t {
    guard("hipIpcGetEventHandle", || {
        let hip = hip()?;
        if handle.is_null() || event.is_null() {
            return Err(HipError::invalid("a null handle or event"));
        }
        let event = hip.events.get(event as usize)?;
        let shared = event.shared.as_ref().ok_or_else(|| {
            HipError::new(
                HIP_ERROR_INVALID_CONFIGURATION,
                "the event was not created with hipEventInterprocess",
            )
        })?;
        // SAFETY: an output of a hipIpcEventHandle_t (crate docs, "Outputs").
        unsafe { put(handle, shared.handle()) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcOpenEventHandle(
    event: *mut hipEvent_t,
    handle: hipIpcHandle,
) -> hipError_t {
    guard("hipIpcOpenEventHandle", || {
        let hip = hip()?;
        if event.is_null() {
            return Err(HipError::invalid("the output event pointer is null"));
        }
        let shared = open_event(&handle)?;
        let opened = HipEvent {
            device: hip.current().index,
            flags: HIP_EVENT_INTERPROCESS | HIP_EVENT_DISABLE_TIMING,
            recorded: Mutex::new(None),
            shared: Some(shared),
        };
        let h = hip.events.insert(Arc::new(opened));
        // SAFETY: an output of a hipEvent_t (crate docs, "Outputs").
        unsafe { put(event, h as hipEvent_t) }.inspect_err(|_| {
            let _ = hip.events.remove(h);
        })
    })
}

symver!("ipc_event");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_waited_for_through_a_second_mapping() {
        let made = SharedEvent::create().unwrap();
        let name = made.name.clone();
        let seen = SharedEvent::open(name).unwrap();
        assert!(seen.has_reached(seen.last_made()));
        let n = made.make_record();
        assert_eq!(seen.last_made(), n);
        assert!(!seen.has_reached(n));
        made.reach(n);
        assert!(seen.has_reached(n));
        seen.wait_for(n);
    }

    #[test]
    fn handles_naming_nothing_of_ours_are_refused() {
        for name in ["/etc-passwd", "/softgpu-event-0-none"] {
            let r = SharedEvent::open(CString::new(name).unwrap());
            assert!(r.is_err(), "{name} opened");
        }
        let made = SharedEvent::create().unwrap();
        let name = made.name.clone();
        drop(made);
        assert!(SharedEvent::open(name).is_err(), "a destroyed event opened");
    }
}
