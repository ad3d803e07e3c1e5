//! The body of the `hip` fuzz target: random sequences of HIP calls into
//! softgpu's `libamdhip64.so` (loaded with `dlopen`) with wild, freed,
//! interior and read-only pointers, forged streams and events, every
//! `hipMemcpyKind` and more, and sizes up to 2^64-1. The library must
//! survive every call, a canary allocation must keep its bytes, and a
//! valid copy must still work afterwards (a refused call must not make the
//! device's error sticky).
//!
//! As in the `api` target, the harness's own host buffer is offered only
//! with sizes that fit it: the library cannot know a host buffer's size.
//!
//! Shared by `fuzz/fuzz_targets/hip.rs` (cargo-fuzz, nightly) and the
//! stable test `crates/hip/tests/fuzz.rs`, which includes this file.

use std::ffi::c_void;
use std::path::Path;

use crate::aql::{open_library, symbol};
pub use crate::sequence::Counts;
use crate::sequence::{Input, Target};

type HipError = i32;
const SUCCESS: HipError = 0;
const MEMCPY_DEVICE_TO_HOST: i32 = 2;
const MEMCPY_HOST_TO_DEVICE: i32 = 1;

/// The HIP functions the target calls (declarations of HIP 5.2's
/// `hip_runtime_api.h`).
struct Api {
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    free: unsafe extern "C" fn(*mut c_void) -> HipError,
    host_malloc: unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> HipError,
    host_free: unsafe extern "C" fn(*mut c_void) -> HipError,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, i32) -> HipError,
    memcpy_async:
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, i32, *mut c_void) -> HipError,
    memset: unsafe extern "C" fn(*mut c_void, i32, usize) -> HipError,
    memset_d32: unsafe extern "C" fn(*mut c_void, i32, usize) -> HipError,
    host_register: unsafe extern "C" fn(*mut c_void, usize, u32) -> HipError,
    host_unregister: unsafe extern "C" fn(*mut c_void) -> HipError,
    pointer_attributes: unsafe extern "C" fn(*mut u8, *const c_void) -> HipError,
    stream_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    stream_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    event_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    event_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    device_synchronize: unsafe extern "C" fn() -> HipError,
    get_last_error: unsafe extern "C" fn() -> HipError,
}

/// Sizes at and around the edges the library checks.
const SIZES: [u64; 11] = [
    0,
    1,
    3,
    4,
    255,
    4096,
    4097,
    65536,
    1 << 32,
    1 << 44,
    u64::MAX,
];
/// Addresses no one allocated.
const WILD: [u64; 5] = [0, 0x1000, 0xdea_dbee_f000, 0x7fff_ffff_f000, u64::MAX - 7];
/// `hipMemcpyKind` values: the five kinds and two that are none.
const KINDS: [i32; 7] = [0, 1, 2, 3, 4, 5, -1];
const HOST_BYTES: usize = 1 << 20;
const ALLOC_BYTES: usize = 4096;
const CANARY: u8 = 0x3C;

static READ_ONLY: [u8; 4096] = [0x22; 4096];

pub struct Harness {
    api: Api,
    canary: u64,
    /// Live `hipMalloc` / `hipHostMalloc` allocations of [`ALLOC_BYTES`],
    /// with whether each is host memory.
    live: Vec<(u64, bool)>,
    freed: Vec<u64>,
    _host: Vec<u8>,
    host_at: u64,
}

impl Harness {
    /// Loads the library at `library` and allocates the canary.
    pub fn new(library: &Path) -> Result<Harness, String> {
        let lib = open_library(library)?;
        // SAFETY: each type below is HIP 5.2's declaration of its symbol.
        let api = unsafe {
            Api {
                malloc: symbol(lib, "hipMalloc")?,
                free: symbol(lib, "hipFree")?,
                host_malloc: symbol(lib, "hipHostMalloc")?,
                host_free: symbol(lib, "hipHostFree")?,
                memcpy: symbol(lib, "hipMemcpy")?,
                memcpy_async: symbol(lib, "hipMemcpyAsync")?,
                memset: symbol(lib, "hipMemset")?,
                memset_d32: symbol(lib, "hipMemsetD32")?,
                host_register: symbol(lib, "hipHostRegister")?,
                host_unregister: symbol(lib, "hipHostUnregister")?,
                pointer_attributes: symbol(lib, "hipPointerGetAttributes")?,
                stream_synchronize: symbol(lib, "hipStreamSynchronize")?,
                stream_destroy: symbol(lib, "hipStreamDestroy")?,
                event_destroy: symbol(lib, "hipEventDestroy")?,
                event_synchronize: symbol(lib, "hipEventSynchronize")?,
                device_synchronize: symbol(lib, "hipDeviceSynchronize")?,
                get_last_error: symbol(lib, "hipGetLastError")?,
            }
        };
        let mut canary: *mut c_void = std::ptr::null_mut();
        let pattern = [CANARY; ALLOC_BYTES];
        // SAFETY: plain HIP calls on an output local and our own pattern.
        unsafe {
            let s = (api.malloc)(&mut canary, ALLOC_BYTES);
            if s != SUCCESS {
                return Err(format!("hipMalloc returned {s}"));
            }
            let s = (api.memcpy)(
                canary,
                pattern.as_ptr().cast(),
                ALLOC_BYTES,
                MEMCPY_HOST_TO_DEVICE,
            );
            if s != SUCCESS {
                return Err(format!("hipMemcpy returned {s}"));
            }
        }
        let mut host = vec![0u8; HOST_BYTES];
        let host_at = host.as_mut_ptr() as u64;
        Ok(Harness {
            api,
            canary: canary as u64,
            live: Vec::new(),
            freed: Vec::new(),
            _host: host,
            host_at,
        })
    }

    /// A pointer for a call, and the most bytes the harness lets a call
    /// write through it (`u64::MAX`: any; the library must refuse what it
    /// cannot hold).
    fn pointer(&self, input: &mut Input) -> Option<(u64, u64)> {
        let offsets = [
            0u64,
            1,
            4,
            ALLOC_BYTES as u64 - 4,
            ALLOC_BYTES as u64,
            1 << 20,
        ];
        Some(match input.byte()? % 6 {
            0 => (input.pick(&WILD)?, u64::MAX),
            1 if !self.live.is_empty() => {
                let (at, host) = input.pick(&self.live)?;
                let offset = input.pick(&offsets)?;
                // Host allocations are the harness's to overrun, so they are
                // offered only within their bytes.
                let room = if host {
                    (ALLOC_BYTES as u64).saturating_sub(offset)
                } else {
                    u64::MAX
                };
                (at + offset, room)
            }
            2 if !self.freed.is_empty() => (input.pick(&self.freed)?, u64::MAX),
            3 => (READ_ONLY.as_ptr() as u64, u64::MAX),
            4 => {
                let offset = input.pick(&[0usize, 1, 4096, HOST_BYTES - 64])?;
                (self.host_at + offset as u64, (HOST_BYTES - offset) as u64)
            }
            _ => (self.canary + input.pick(&offsets)?, 0),
        })
    }

    fn size(input: &mut Input, room: u64) -> Option<u64> {
        Some(input.pick(&SIZES)?.min(room))
    }

    /// One call chosen by `input`; `None` when the input ran out.
    fn call(&mut self, input: &mut Input) -> Option<HipError> {
        let op = input.byte()? % 12;
        let api = &self.api;
        // SAFETY: every call below hands the library pointers that are
        // wild (it must refuse them), the harness's own memory with sizes
        // that fit, read-only memory (it must refuse writes), or memory it
        // allocated; outputs are locals of the right type.
        let status = unsafe {
            match op {
                0 | 1 => {
                    let host = op == 1;
                    let size = input.pick(&[0u64, 1, ALLOC_BYTES as u64, 1 << 50])?;
                    let mut p: *mut c_void = std::ptr::null_mut();
                    let s = if host {
                        (api.host_malloc)(&mut p, size as usize, 0)
                    } else {
                        (api.malloc)(&mut p, size as usize)
                    };
                    if s == SUCCESS && size == ALLOC_BYTES as u64 {
                        self.live.push((p as u64, host));
                    } else if s == SUCCESS && !p.is_null() {
                        (api.free)(p);
                    }
                    s
                }
                2 => {
                    let (p, _) = self.pointer(input)?;
                    if p == self.canary {
                        return Some(SUCCESS);
                    }
                    let s = if input.byte()? % 2 == 0 {
                        (api.free)(p as *mut c_void)
                    } else {
                        (api.host_free)(p as *mut c_void)
                    };
                    if let Some(i) = self
                        .live
                        .iter()
                        .position(|l| l.0 == p)
                        .filter(|_| s == SUCCESS)
                    {
                        self.freed.push(self.live.swap_remove(i).0);
                    }
                    s
                }
                3 | 4 => {
                    let (dst, room) = self.pointer(input)?;
                    let (src, _) = self.pointer(input)?;
                    let size = Self::size(input, room)? as usize;
                    let kind = input.pick(&KINDS)?;
                    let (dst, src) = (dst as *mut c_void, src as *const c_void);
                    if op == 3 {
                        (api.memcpy)(dst, src, size, kind)
                    } else {
                        let s = (api.memcpy_async)(dst, src, size, kind, std::ptr::null_mut());
                        (api.device_synchronize)();
                        s
                    }
                }
                5 => {
                    let (dst, room) = self.pointer(input)?;
                    let size = Self::size(input, room)?;
                    if input.byte()? % 2 == 0 {
                        (api.memset)(dst as *mut c_void, 0x5a, size as usize)
                    } else {
                        (api.memset_d32)(dst as *mut c_void, 0x5a5a, (size / 4) as usize)
                    }
                }
                6 => {
                    let (p, room) = self.pointer(input)?;
                    let size = Self::size(input, room)?;
                    let s = (api.host_register)(p as *mut c_void, size as usize, 0);
                    if s == SUCCESS {
                        (api.host_unregister)(p as *mut c_void);
                    }
                    s
                }
                7 => {
                    let (p, _) = self.pointer(input)?;
                    let mut attributes = [0u8; 256];
                    (api.pointer_attributes)(attributes.as_mut_ptr(), p as *const c_void)
                }
                8 => {
                    let (p, _) = self.pointer(input)?;
                    (api.stream_synchronize)(p as *mut c_void)
                }
                9 => {
                    let (p, _) = self.pointer(input)?;
                    if p == self.canary || self.live.iter().any(|l| l.0 == p) {
                        return Some(SUCCESS);
                    }
                    (api.stream_destroy)(p as *mut c_void)
                }
                10 => {
                    let (p, _) = self.pointer(input)?;
                    if p == self.canary || self.live.iter().any(|l| l.0 == p) {
                        return Some(SUCCESS);
                    }
                    if input.byte()? % 2 == 0 {
                        (api.event_destroy)(p as *mut c_void)
                    } else {
                        (api.event_synchronize)(p as *mut c_void)
                    }
                }
                _ => (api.device_synchronize)(),
            }
        };
        // SAFETY: a plain HIP call.
        unsafe { (self.api.get_last_error)() };
        Some(status)
    }

    /// Runs the calls `data` chooses; after each, the canary must hold its
    /// bytes, read through a valid copy.
    pub fn run(&mut self, data: &[u8]) -> Result<Counts, String> {
        let counts = crate::sequence::run(self, data)?;
        for (p, _) in self.live.drain(..) {
            // SAFETY: an allocation of the library's.
            unsafe { (self.api.free)(p as *mut c_void) };
        }
        self.freed.truncate(64);
        Ok(counts)
    }

    fn canary_intact(&self) -> Result<(), String> {
        let mut back = vec![0u8; ALLOC_BYTES];
        // SAFETY: the canary is a live allocation of `ALLOC_BYTES`; `back`
        // is ours.
        let s = unsafe {
            (self.api.memcpy)(
                back.as_mut_ptr().cast(),
                self.canary as *const c_void,
                ALLOC_BYTES,
                MEMCPY_DEVICE_TO_HOST,
            )
        };
        if s != SUCCESS {
            return Err(format!("a valid copy of the canary failed: hipError_t {s}"));
        }
        crate::sequence::canary_holds(&back, CANARY)
    }
}

impl Target for Harness {
    fn step(&mut self, input: &mut Input) -> Option<bool> {
        Some(self.call(input)? == SUCCESS)
    }

    fn check(&self) -> Result<(), String> {
        self.canary_intact()
    }
}
