//! Streams with CU masks, stream memory operations, device UUIDs and
//! links, as ROCm's CLR defines them (`hip_stream.cpp`,
//! `hip_stream_ops.cpp`, `hip_device.cpp`, `hip_peer.cpp`).
//!
//! `hipStreamWaitValue*` and `hipStreamWriteValue*` are host operations
//! in stream order (the stream's queue runs them in its turn, as it runs
//! copies): a wait polls the word, through the runtime's checked atomic
//! reads, until its condition holds, holding back everything queued after
//! it on that stream; a write stores the word. The word must lie in memory
//! HIP knows (`hipMalloc`, `hipHostMalloc`, registered or managed memory),
//! as CLR requires.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::{hip, lock};
use crate::stream::{HipStream, HostCall, Work};

/// What a stream memory operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum MemOp {
    /// Waits until the word compares true (`flags`: the comparison).
    Wait {
        value: u64,
        mask: u64,
        flags: u32,
    },
    Write {
        value: u64,
    },
}

/// One stream memory operation on a 4- or 8-byte word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct StreamOp {
    addr: u64,
    width: u64,
    op: MemOp,
}

/// Whether a wait's condition holds for `word`, as the header defines the
/// comparisons (`hip_runtime_api.h`, `hipStreamWaitValue32`).
fn condition_holds(word: u64, value: u64, mask: u64, flags: u32) -> bool {
    let masked = word & mask;
    match flags {
        HIP_STREAM_WAIT_VALUE_GTE => masked >= value,
        HIP_STREAM_WAIT_VALUE_EQ => masked == value,
        HIP_STREAM_WAIT_VALUE_AND => masked & value != 0,
        // "mask is applied on both 'value' and '*ptr'": some bit of the
        // mask is clear in both, which is how ROCclr's packet tests it
        // (`~value & mask` compared with the word under that mask).
        _ => !(masked | value) & mask != 0,
    }
}

/// The bits of a `width`-byte word.
fn width_mask(width: u64) -> u64 {
    if width == 8 {
        u64::MAX
    } else {
        u64::from(u32::MAX)
    }
}

impl StreamOp {
    /// Runs the operation (on the stream's queue thread).
    fn run(&self) -> Result<(), String> {
        let rt = softgpu_runtime::Runtime::get().map_err(|e| e.to_string())?;
        match self.op {
            MemOp::Write { value } => {
                let bytes = value.to_le_bytes();
                // SAFETY: `bytes` is our own memory, valid for `width`
                // (4 or 8) bytes; the device side is checked by `copy`.
                unsafe { rt.copy(self.addr, bytes.as_ptr() as u64, self.width) }
                    .map_err(|e| format!("hipStreamWriteValue at {:#x}: {e}", self.addr))
            }
            MemOp::Wait { value, mask, flags } => {
                let within = width_mask(self.width);
                let mut spins = 0u32;
                loop {
                    let mut bytes = [0u8; 8];
                    // SAFETY: `bytes` is our own memory, valid for
                    // `width` bytes; the other side is checked by `copy`.
                    unsafe { rt.copy(bytes.as_mut_ptr() as u64, self.addr, self.width) }
                        .map_err(|e| format!("hipStreamWaitValue at {:#x}: {e}", self.addr))?;
                    let word = u64::from_le_bytes(bytes);
                    if condition_holds(word, value & within, mask & within, flags) {
                        return Ok(());
                    }
                    spins = spins.saturating_add(1);
                    if spins < 1000 {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                }
            }
        }
    }
}

/// Every distinct operation ever enqueued, leaked once: a graph captured
/// from the stream may replay a host call any number of times, so what it
/// points to must live for the process. Interning bounds that to one copy
/// per distinct operation.
static OPS: Mutex<Option<HashMap<StreamOp, &'static StreamOp>>> = Mutex::new(None);

fn interned(op: StreamOp) -> &'static StreamOp {
    let mut ops = lock(&OPS);
    ops.get_or_insert_with(HashMap::new)
        .entry(op)
        .or_insert_with(|| Box::leak(Box::new(op)))
}

/// The host call that runs an interned operation.
unsafe extern "C" fn run_op(data: *mut c_void) {
    // SAFETY: `data` is a `&'static StreamOp` from `interned`.
    let op = unsafe { &*(data as *const StreamOp) };
    if let Err(e) = op.run() {
        // A host function cannot fail its stream through this path; the
        // word's memory was checked when the call was made, so this is
        // memory freed while the operation was queued.
        eprintln!("softgpu: {e}");
    }
}

/// Checks and enqueues a stream memory operation, with CLR's codes.
fn enqueue(stream: hipStream_t, ptr: *mut c_void, width: u64, op: MemOp) -> HipResult {
    let hip = hip()?;
    if ptr.is_null() {
        return Err(HipError::invalid("the word's address is null"));
    }
    // CLR: a stream that is not valid is hipErrorContextIsDestroyed here.
    let s = hip
        .stream(stream)
        .map_err(|e| HipError::new(HIP_ERROR_CONTEXT_IS_DESTROYED, e.message))?;
    let addr = ptr as u64;
    let in_allocation = crate::memory::find(addr).is_some_and(|(base, a)| {
        addr.checked_add(width)
            .is_some_and(|end| end <= base + a.len)
    });
    if !in_allocation {
        return Err(HipError::invalid(format!(
            "{addr:#x}+{width} is not inside memory HIP allocated or registered"
        )));
    }
    if !addr.is_multiple_of(width) {
        return Err(HipError::invalid(format!(
            "{addr:#x} is not aligned to {width} bytes"
        )));
    }
    if let MemOp::Wait { flags, .. } = op {
        if flags > HIP_STREAM_WAIT_VALUE_NOR {
            return Err(HipError::invalid(format!("wait flags {flags:#x}")));
        }
    }
    let op = interned(StreamOp { addr, width, op });
    let call = HostCall {
        call: run_op,
        data: op as *const StreamOp as usize,
    };
    s.enqueue(hip, Work::Host(call))
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitValue32(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u32,
    flags: u32,
    mask: u32,
) -> hipError_t {
    guard("hipStreamWaitValue32", || {
        let op = MemOp::Wait {
            value: value.into(),
            mask: mask.into(),
            flags,
        };
        enqueue(stream, ptr, 4, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitValue64(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: u32,
    mask: u64,
) -> hipError_t {
    guard("hipStreamWaitValue64", || {
        enqueue(stream, ptr, 8, MemOp::Wait { value, mask, flags })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWriteValue32(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u32,
    _flags: u32,
) -> hipError_t {
    // CLR ignores the flags (none are defined).
    guard("hipStreamWriteValue32", || {
        enqueue(
            stream,
            ptr,
            4,
            MemOp::Write {
                value: value.into(),
            },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWriteValue64(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    _flags: u32,
) -> hipError_t {
    guard("hipStreamWriteValue64", || {
        enqueue(stream, ptr, 8, MemOp::Write { value })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipExtStreamCreateWithCUMask(
    stream: *mut hipStream_t,
    size: u32,
    mask: *const u32,
) -> hipError_t {
    guard("hipExtStreamCreateWithCUMask", || {
        let hip = hip()?;
        // CLR: a null output is hipErrorInvalidHandle.
        if stream.is_null() {
            return Err(HipError::handle("null stream output pointer"));
        }
        if size == 0 || mask.is_null() {
            return Err(HipError::invalid("an empty CU mask"));
        }
        // Bits past the device's units are ignored, as ROCr does; more
        // words than that cannot matter.
        let words = (size as usize).min(1024);
        // SAFETY: `mask` holds `size` words (crate docs, "Inputs"); we
        // read at most that many.
        let mask = unsafe { std::slice::from_raw_parts(mask, words) }.to_vec();
        let device = hip.current();
        let s = HipStream::new(&device.device, device.index, 0, 0, false)?;
        s.with(|st| Ok(st.set_cu_mask(Some(&mask))?))?;
        let handle = hip.streams.insert(Arc::new(s));
        // SAFETY: an output of a `hipStream_t` (crate docs, "Outputs").
        unsafe { put(stream, handle as hipStream_t) }.inspect_err(|_| {
            let _ = hip.streams.remove(handle);
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipExtStreamGetCUMask(
    stream: hipStream_t,
    size: u32,
    mask: *mut u32,
) -> hipError_t {
    guard("hipExtStreamGetCUMask", || {
        let hip = hip()?;
        if mask.is_null() {
            return Err(HipError::invalid("null mask output pointer"));
        }
        let s = hip.stream(stream)?;
        let applied = s.with(|st| Ok(st.cu_mask()?))?;
        // CLR: the caller's array must hold one bit per compute unit.
        let units = hip.devices[s.device].device.properties().compute_units;
        let needed = units.div_ceil(32) as usize;
        if (size as usize) < needed {
            return Err(HipError::invalid(format!(
                "{size} words cannot hold {units} compute units' bits"
            )));
        }
        for (i, word) in applied.iter().take(needed).enumerate() {
            // SAFETY: `mask` holds `size` >= `needed` words (crate docs,
            // "Outputs").
            unsafe { put(mask.add(i), *word)? };
        }
        Ok(())
    })
}

/// A device's UUID: stable across runs and distinct per device and
/// target (an FNV-1a hash of both; the bytes carry no other meaning).
fn uuid_of(index: usize, target: &str) -> [u8; 16] {
    let text = format!("softgpu:{target}:{index}");
    let fnv = |seed: u64| {
        text.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&fnv(0xcbf2_9ce4_8422_2325).to_le_bytes());
    bytes[8..].copy_from_slice(&fnv(0x6c62_272e_07bb_0142).to_le_bytes());
    bytes
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetUuid(uuid: *mut hipUUID, device: i32) -> hipError_t {
    guard("hipDeviceGetUuid", || {
        let hip = hip()?;
        let d = hip.device(device)?;
        let bytes = uuid_of(d.index, d.device.target().as_str());
        // SAFETY: an output of a hipUUID (crate docs, "Outputs").
        unsafe { put(uuid, hipUUID { bytes }) }
    })
}

/// `HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT`: what softgpu's HSA layer
/// reports between its GPUs (the on-die fabric of an APU), one hop.
const LINK_TYPE_HYPERTRANSPORT: u32 = 0;

#[no_mangle]
pub unsafe extern "C" fn hipExtGetLinkTypeAndHopCount(
    device1: i32,
    device2: i32,
    link_type: *mut u32,
    hops: *mut u32,
) -> hipError_t {
    guard("hipExtGetLinkTypeAndHopCount", || {
        let hip = hip()?;
        // CLR: null outputs, one device twice or a negative ordinal are
        // hipErrorInvalidValue; an ordinal past the last device
        // hipErrorInvalidDevice.
        if link_type.is_null() || hops.is_null() || device1 == device2 || device1 < 0 || device2 < 0
        {
            return Err(HipError::invalid(format!(
                "link between devices {device1} and {device2}"
            )));
        }
        hip.device(device1)?;
        hip.device(device2)?;
        // SAFETY: outputs of unsigned ints (crate docs, "Outputs").
        unsafe {
            put(link_type, LINK_TYPE_HYPERTRANSPORT)?;
            put(hops, 1)
        }
    })
}

symver!("stream_ops");

#[cfg(test)]
mod tests {
    use super::*;

    /// The four comparisons as the header words them, on 32-bit words.
    #[test]
    fn wait_conditions_follow_the_header() {
        let m = 0xffff_ffff;
        assert!(condition_holds(5, 5, m, HIP_STREAM_WAIT_VALUE_GTE));
        assert!(!condition_holds(4, 5, m, HIP_STREAM_WAIT_VALUE_GTE));
        assert!(condition_holds(
            0x1_0005,
            5,
            0xffff,
            HIP_STREAM_WAIT_VALUE_EQ
        ));
        assert!(!condition_holds(6, 5, m, HIP_STREAM_WAIT_VALUE_EQ));
        assert!(condition_holds(
            0b0110,
            0b0100,
            m,
            HIP_STREAM_WAIT_VALUE_AND
        ));
        assert!(!condition_holds(
            0b0010,
            0b0100,
            m,
            HIP_STREAM_WAIT_VALUE_AND
        ));
        // NOR: true unless word and value together cover every bit of
        // the mask.
        assert!(!condition_holds(
            0x0f,
            0xf0,
            0xff,
            HIP_STREAM_WAIT_VALUE_NOR
        ));
        assert!(condition_holds(0x0f, 0x30, 0xff, HIP_STREAM_WAIT_VALUE_NOR));
    }

    #[test]
    fn uuids_are_stable_and_distinct() {
        assert_eq!(uuid_of(0, "gfx1151"), uuid_of(0, "gfx1151"));
        assert_ne!(uuid_of(0, "gfx1151"), uuid_of(1, "gfx1151"));
        assert_ne!(uuid_of(0, "gfx1151"), uuid_of(0, "gfx1201"));
    }
}
