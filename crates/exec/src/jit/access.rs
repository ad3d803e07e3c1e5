//! Device memory from a block: the helpers its code calls.
//!
//! A block reads device memory only after asking here, with the checks the
//! interpreter's own wave-wide paths make (`Memory::window`,
//! `ops::vmem::lanes_window`), so both tiers allow exactly the same
//! accesses. Every call is made in the block's check phase, before it
//! changes anything: when one says no, the block returns
//! [`super::BAIL`] and the interpreter runs its slots, faulting or
//! reading as the rules say. So a block never faults, and a fault report
//! is the interpreter's, exact to the lane.

use crate::arena::{Lanes, Memory};
use crate::wave::MAX_LANES;

/// The signature of [`scalar_ok`] as the block calls it.
pub type ScalarOk = unsafe extern "C" fn(*const Memory<'static>, u64, u64) -> u32;

/// The signature of [`gather`] as the block calls it.
pub type Gather = unsafe extern "C" fn(
    *const Memory<'static>,
    *const u64,
    u64,
    u32,
    u32,
    u32,
    *mut [u32; MAX_LANES],
) -> u32;

/// 1 when the `bytes` from `addr` may be read now by a kernel (an
/// `s_load` the block then reads itself), else 0.
///
/// # Safety
/// `mem` points to a live `Memory` (the one `Block::run` was given).
pub unsafe extern "C" fn scalar_ok(mem: *const Memory<'static>, addr: u64, bytes: u64) -> u32 {
    // SAFETY: the caller passes the `&Memory` it holds for the call.
    let mem = unsafe { &*mem };
    let ok = addr
        .checked_add(bytes)
        .is_some_and(|end| mem.window(addr, end, false).is_some());
    ok as u32
}

/// The signature of [`span_ok`] as the block calls it.
pub type SpanOk = unsafe extern "C" fn(*const Memory<'static>, u64, u64, u32) -> u32;

/// 1 when a whole-wave global or flat (`flat` non-zero) load of one dword
/// a lane, every lane active, whose lanes read consecutive dwords a chunk
/// of lanes at a time from 4-aligned chunk starts in `[start, end)`, may
/// read now (so the block loads the chunks itself, as vectors straight
/// into registers); else 0, and the block asks [`gather`]. The rule of
/// `gather` (`ops::vmem::lanes_window`) for such lanes: a range of at
/// most `WINDOW_SPAN` bytes all of which the arena allows, none in an
/// aperture.
///
/// # Safety
/// `mem` points to a live `Memory` (the one `Block::run` was given).
pub unsafe extern "C" fn span_ok(
    mem: *const Memory<'static>,
    start: u64,
    end: u64,
    flat: u32,
) -> u32 {
    // SAFETY: the caller passes the `&Memory` it holds for the call.
    let mem = unsafe { &*mem };
    crate::ops::vmem::span_window(mem, start, end, false, flat != 0).is_some() as u32
}

/// A global or flat (`flat` non-zero) load of `dwords` whole dwords a
/// lane at the first `lanes` of `addrs`, for the lanes `exec` selects,
/// into `rows[k][lane]`: 1 when the interpreter's
/// wave-wide path takes it (every access aligned, inside one checked
/// window, none in an aperture) and it is done, else 0, having loaded
/// nothing. With no lane selected there is nothing to load: 1.
///
/// # Safety
/// `mem` points to a live `Memory`, `addrs` to the lane count's addresses,
/// `rows` to as many writable rows as the dwords a lane, none of them
/// aliasing anything the caller uses during the call.
pub unsafe extern "C" fn gather(
    mem: *const Memory<'static>,
    addrs: *const u64,
    exec: u64,
    lanes: u32,
    dwords: u32,
    flat: u32,
    rows: *mut [u32; MAX_LANES],
) -> u32 {
    let (lanes, dwords) = (lanes as usize, dwords as usize);
    // SAFETY: as the caller promises (the block's own 16-byte-aligned
    // stack slots, sized for the lane count and the dwords, and the
    // `&Memory` it was run with).
    let (mem, addrs, rows) = unsafe {
        (
            &*mem,
            std::slice::from_raw_parts(addrs, lanes.min(MAX_LANES)),
            std::slice::from_raw_parts_mut(rows, dwords),
        )
    };
    let lanes = Lanes::new(addrs, exec);
    if lanes.bounds().is_none() {
        return 1;
    }
    let bytes = 4 * dwords as u64;
    let loaded = crate::ops::vmem::lanes_window(mem, &lanes, bytes, false, flat != 0)
        .is_some_and(|win| win.gather_dwords(&lanes, rows));
    loaded as u32
}
