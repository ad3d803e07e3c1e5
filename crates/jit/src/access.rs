//! Device memory from a block: the helpers its code calls.
//!
//! A block reads or writes device memory only after asking here, with the
//! checks the interpreter's own wave-wide paths make (`Memory::window`,
//! `ops::vmem::span_window`, `ops::vmem::lanes_window`), so both tiers
//! allow exactly the same accesses. Loads are asked in the block's check
//! phase, before it changes anything: when one says no, the block returns
//! [`super::BAIL`] and the interpreter runs its slots. A closing store is
//! asked last, after the rest of the block ran: when it says no, the
//! block returns [`super::STORE_LEFT`] and the interpreter runs the store.
//! So a block never faults, and a fault report is the interpreter's,
//! exact to the lane.

use super::emit::CHUNK_LANES as CHUNK;
use softgpu_arena::{Lanes, Memory, Quick};
use softgpu_interp::ops::vmem;
use softgpu_interp::wave::{APERTURE_SIZE, MAX_LANES, PRIVATE_APERTURE, SHARED_APERTURE};

/// What a block needs to answer the common memory check itself, without
/// a call (`Emitter::quick_allows`): this thread's allowed ranges
/// ([`Quick`]), which `Memory::window` asks first. Made by
/// [`Ranges::of_thread`] on the thread that runs the blocks, once for a
/// run of a wave, and valid there while the `Memory` lives.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Ranges {
    quick: Quick,
    /// 1 when no byte of the arena lies in the LDS or scratch aperture, so
    /// that a flat access inside an allowed range is a global one
    /// (`ops::vmem::span_window` asks); else 0.
    flat: u64,
}

impl Ranges {
    /// This thread's ranges of `mem`.
    pub fn of_thread(mem: &Memory) -> Ranges {
        let (start, end) = (mem.arena.base(), mem.arena.base() + mem.arena.space());
        let clear = |aperture: u64| end <= aperture || start >= aperture + APERTURE_SIZE;
        Ranges {
            quick: mem.quick(),
            flat: (clear(SHARED_APERTURE) && clear(PRIVATE_APERTURE)) as u64,
        }
    }
}

/// What a block is given for device memory: the `Memory` its helpers take
/// and the [`Ranges`] it asks itself.
#[repr(C)]
pub struct Context {
    ranges: Ranges,
    mem: *const Memory<'static>,
}

impl Context {
    pub const QUICK: i32 = std::mem::offset_of!(Context, ranges.quick) as i32;
    pub const FLAT: i32 = std::mem::offset_of!(Context, ranges.flat) as i32;
    pub const MEM: i32 = std::mem::offset_of!(Context, mem) as i32;

    /// `ranges` must be this thread's, of `mem`.
    pub fn new(mem: &Memory, ranges: &Ranges) -> Context {
        Context {
            ranges: *ranges,
            mem: (mem as *const Memory).cast(),
        }
    }
}

/// The most bytes `rows_ok` takes in one range (a block answering for it
/// itself takes no more): wider than the interpreter's wave-wide window
/// (`ops::vmem::span_window`), so that a 2-D workgroup's wave spanning a
/// few rows of a wide grid (a 16x16 group's wave64 over 4096 floats a row:
/// 48 KiB) stays on the rows path; as wide as the pages an allowed range
/// reaches each way (`softgpu_arena`'s `REACH_PAGES`), so one range holds
/// it.
pub const ROWS_SPAN: u64 = 256 << 10;

/// How far past its highest chunk's first address a row access reaches,
/// for `dwords` dwords a lane (see [`rows_ok`]).
pub const fn rows_reach(dwords: u32) -> u64 {
    let dwords = if dwords == 0 { 1 } else { dwords };
    4 * (CHUNK as u64 - 1) + 4 * dwords as u64
}

/// The signature of [`scalar_ok`] as the block calls it.
pub type ScalarOk = unsafe extern "C" fn(*const Memory<'static>, u64, u64) -> u32;

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

/// The signature of [`rows_ok`] as the block calls it.
pub type RowsOk = unsafe extern "C" fn(*const Memory<'static>, u64, u64, u32) -> u32;

/// `rows_ok`'s flag for a flat access.
pub const FLAT: u32 = 1;
/// `rows_ok`'s flag for a store.
pub const WRITE: u32 = 2;
/// Where `rows_ok`'s `how` says how many dwords a lane accesses (0 or 1:
/// one).
pub const DWORDS_SHIFT: u32 = 8;

/// 1 when the rows of a whole-wave load or store, each chunk's lanes
/// addressing consecutive dwords from a first address between `lowest`
/// and `highest`, and each lane the dwords `how` says from its address
/// (bits [`DWORDS_SHIFT`] on), lie in one range of at most [`ROWS_SPAN`]
/// bytes the kernel may read (or, with [`WRITE`] in `how`, write) now,
/// as the interpreter's wave-wide path checks a narrower one first
/// (`ops::vmem::span_window_within`, for a flat access with [`FLAT`]);
/// else 0. The block has checked the lanes' layout itself, and accesses
/// only the lanes' bytes.
///
/// # Safety
/// `mem` points to a live `Memory` (the one `Block::run` was given).
pub unsafe extern "C" fn rows_ok(
    mem: *const Memory<'static>,
    lowest: u64,
    highest: u64,
    how: u32,
) -> u32 {
    // SAFETY: the caller passes the `&Memory` it holds for the call.
    let mem = unsafe { &*mem };
    let (flat, write) = (how & FLAT != 0, how & WRITE != 0);
    // The last lane's dwords run this far past its chunk's first address.
    let ok = highest
        .checked_add(rows_reach(how >> DWORDS_SHIFT))
        .and_then(|end| vmem::span_window_within(mem, lowest, end, write, flat, ROWS_SPAN));
    ok.is_some() as u32
}

/// The signature of [`store_lanes`] as the block calls it.
pub type StoreLanes = unsafe extern "C" fn(
    *const Memory<'static>,
    *const [u32; MAX_LANES],
    *const [u32; MAX_LANES],
    u64,
    u64,
    u32,
    *const [u32; MAX_LANES],
) -> u32;

/// A whole-wave global or flat dword store that `rows_ok` did not take,
/// for a block: lane addresses as for [`load_rows`] (`shape`: the lane
/// count in bits 0-7, flat in bit 16), lane `l` storing `data[l]`.
/// Returns 1, having stored every active lane's dword lane by lane in
/// lane order, when the interpreter's wave-wide path takes the store
/// (every access aligned, inside one window checked for writes, none in
/// an aperture) or no lane is active; else 0, having stored nothing.
///
/// # Safety
/// `mem` points to a live `Memory`; `low`, `data`, and `high` unless
/// null, to VGPR rows nothing writes during the call.
pub unsafe extern "C" fn store_lanes(
    mem: *const Memory<'static>,
    low: *const [u32; MAX_LANES],
    high: *const [u32; MAX_LANES],
    add: u64,
    exec: u64,
    shape: u32,
    data: *const [u32; MAX_LANES],
) -> u32 {
    let flat = shape >> 16 & 1 != 0;
    // SAFETY: as the caller promises (rows of the wave's register file).
    let (mem, data) = unsafe { (&*mem, &*data) };
    let mut addrs = [0u64; MAX_LANES];
    // SAFETY: as the caller promises.
    let lanes = unsafe { wave_lanes(low, high, add, exec, shape, &mut addrs) };
    let stored = lanes.bounds().is_none()
        || softgpu_interp::ops::vmem::lanes_window(mem, &lanes, 4, true, flat)
            .is_some_and(|win| win.scatter_dwords(&lanes, std::slice::from_ref(data)));
    stored as u32
}

/// The active lanes of a whole-wave access and their addresses, written
/// to `addrs`: lane `l`'s is its `low` word, `high`'s word above it when
/// `high` is not null, plus `add`; `shape`'s bits 0-7 are the lane count.
///
/// # Safety
/// `low`, and `high` unless null, point to VGPR rows nothing writes
/// during the call.
unsafe fn wave_lanes<'a>(
    low: *const [u32; MAX_LANES],
    high: *const [u32; MAX_LANES],
    add: u64,
    exec: u64,
    shape: u32,
    addrs: &'a mut [u64; MAX_LANES],
) -> Lanes<'a> {
    // SAFETY: as the caller promises.
    let (low, high) = unsafe { (&*low, high.as_ref()) };
    let addrs = &mut addrs[..(shape & 0xff) as usize];
    for (l, a) in addrs.iter_mut().enumerate() {
        let upper = high.map_or(0, |h| (h[l] as u64) << 32);
        *a = (low[l] as u64 | upper).wrapping_add(add);
    }
    Lanes::new(addrs, exec)
}

/// The signature of [`load_rows`] as the block calls it.
pub type LoadRows = unsafe extern "C" fn(
    *const Memory<'static>,
    *const [u32; MAX_LANES],
    *const [u32; MAX_LANES],
    u64,
    u64,
    u32,
    *mut *const u32,
    *mut [u32; MAX_LANES],
) -> u32;

/// A whole-wave global or flat load that `rows_ok` did not take, for a
/// block: lane `l`'s address is `low[l]` (with `high[l]` as its upper
/// half when `high` is not null) plus `add`; `shape` packs the lane count
/// (bits 0-7), the dwords a lane (bits 8-15) and whether the load is flat
/// (bit 16). Returns 1, having gathered the lanes into `rows` (the next
/// dword of each lane a VGPR's bytes further) and written to `table[c]`
/// where chunk `c`'s are, when the interpreter's wave-wide path takes the
/// load (every access aligned, inside one checked window, none in an
/// aperture); else 0, having loaded nothing.
///
/// # Safety
/// `mem` points to a live `Memory`; `low`, and `high` unless null, to
/// VGPR rows nothing writes during the call; `table` to a chunk's entry
/// for each chunk; `rows` to as many writable rows as the dwords a lane,
/// aliasing none of the others.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn load_rows(
    mem: *const Memory<'static>,
    low: *const [u32; MAX_LANES],
    high: *const [u32; MAX_LANES],
    add: u64,
    exec: u64,
    shape: u32,
    table: *mut *const u32,
    rows: *mut [u32; MAX_LANES],
) -> u32 {
    let chunks = (shape & 0xff) as usize / CHUNK;
    let (dwords, flat) = ((shape >> 8 & 0xff) as usize, shape >> 16 & 1 != 0);
    // SAFETY: as the caller promises (the block's own stack slots, sized
    // for the chunks and the dwords).
    let (mem, table, rows) = unsafe {
        (
            &*mem,
            std::slice::from_raw_parts_mut(table, chunks),
            std::slice::from_raw_parts_mut(rows, dwords),
        )
    };
    let mut addrs = [0u64; MAX_LANES];
    // SAFETY: as the caller promises (rows of the wave's register file).
    let lanes = unsafe { wave_lanes(low, high, add, exec, shape, &mut addrs) };
    let loaded = lanes.bounds().is_none()
        || softgpu_interp::ops::vmem::lanes_window(mem, &lanes, 4 * dwords as u64, false, flat)
            .is_some_and(|win| win.gather_dwords(&lanes, rows));
    let first = rows.as_ptr().cast::<u32>();
    for (c, entry) in table.iter_mut().enumerate() {
        *entry = first.wrapping_add(c * CHUNK);
    }
    loaded as u32
}
