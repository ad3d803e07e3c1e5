//! Ranges a thread's kernels were last allowed, so that a wave's range
//! check is a few compares.
//!
//! A streaming kernel asks [`super::Memory::window`] for every wave's rows
//! of every buffer, and its kernel arguments for every wave: the shadow
//! answers each with a page summary or a walk of shadow words. Here each
//! thread keeps, per allocation window, the last range the shadow allowed,
//! widened to the whole pages around it whose summaries allow the same
//! access (at most [`REACH_PAGES`] each way); a later range inside it is
//! allowed without asking the shadow again.
//!
//! What keeps that exact: every change of a shadow (an allocation, a
//! free, a registration, a change of access), and every new shadow, raises
//! the process's one change count after it is written (`Shadow::changes`),
//! and an entry holds the count read before its range was checked. An
//! entry whose count is not the current one is never used. So a range is
//! allowed from the cache only while no shadow byte has changed since the
//! shadow itself allowed it, and an arena made at a dropped one's address
//! never meets that one's entries; an access racing with a free (the count
//! not raised yet) is allowed exactly as a lane checked just before the
//! free would be.

use std::cell::Cell;

/// How far past the checked range an entry reaches, in 4 KiB pages each
/// way: a miss costs a load per page, so a wave streaming through a
/// buffer misses once in this many pages' worth of waves.
pub(super) const REACH_PAGES: u64 = 64;

/// Entries per thread, one per allocation window (an address's window
/// index modulo this): a kernel reading two buffers and writing a third
/// keeps all three.
const ENTRIES: usize = 8;

/// One allowed range: arena offsets `[start, end)`, allowed for kernel
/// reads, and for writes too when `write`, by the shadow of the arena at
/// `arena` when its change count was `changes`. `repr(C)`: compiled code
/// reads entries through [`Quick`].
#[derive(Clone, Copy)]
#[repr(C)]
struct Entry {
    arena: usize,
    changes: u64,
    start: u64,
    end: u64,
    write: bool,
}

const EMPTY: Entry = Entry {
    arena: 0,
    changes: 0,
    start: 0,
    end: 0,
    write: false,
};

thread_local! {
    static ENTRIES_OF_THREAD: [Cell<Entry>; ENTRIES] =
        const { [const { Cell::new(EMPTY) }; ENTRIES] };
}

/// The entry slot of arena offset `offset`: its 4 GiB window's.
#[inline(always)]
fn slot(offset: u64) -> usize {
    (offset >> SLOT_SHIFT) as usize % ENTRIES
}

/// An offset's slot is its bits from this one on, modulo [`ENTRIES`].
const SLOT_SHIFT: u32 = 32;

/// What code compiled outside Rust (the JIT's blocks) needs to ask this
/// thread's entries itself, the same question `allows` answers, without
/// a call: made on the thread that asks, by `Memory::quick`, and valid
/// there while the `Memory` it was made from lives.
///
/// For a kernel access of arena offsets `[offset, end)` (`offset` the
/// device address less [`Quick::base`]), the entry at `entries + ((offset
/// >> SLOT_SHIFT) & SLOT_MASK) * ENTRY_BYTES` allows it when its `arena`
/// word equals [`Quick::arena`], its `changes` word equals the `u64` at
/// [`Quick::changes`], `start <= offset`, `offset < end <= entry end`, and, for a write, its
/// `write` byte is not 0 — and the dispatch is not stale: the `u32` at
/// [`Quick::recycled`] is at most [`Quick::epoch`] (`Memory::stale_after`).
/// A plain x86-64 load is an acquire load, as `Shadow::changes` is.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Quick {
    /// This thread's entries.
    pub entries: *const u8,
    /// The process's shadow change count (`Shadow::changes`).
    pub changes: *const u64,
    /// The arena's `recycled` serial.
    pub recycled: *const u32,
    /// The serial stale accesses are checked against, `u32::MAX` for none.
    pub epoch: u32,
    /// The arena's identity in entries.
    pub arena: usize,
    /// The device address of arena offset 0.
    pub base: u64,
}

impl Quick {
    /// Bytes an entry takes.
    pub const ENTRY_BYTES: i64 = std::mem::size_of::<Entry>() as i64;
    /// Where an entry's fields are, in bytes from its start.
    pub const ENTRY_ARENA: i32 = std::mem::offset_of!(Entry, arena) as i32;
    pub const ENTRY_CHANGES: i32 = std::mem::offset_of!(Entry, changes) as i32;
    pub const ENTRY_START: i32 = std::mem::offset_of!(Entry, start) as i32;
    pub const ENTRY_END: i32 = std::mem::offset_of!(Entry, end) as i32;
    pub const ENTRY_WRITE: i32 = std::mem::offset_of!(Entry, write) as i32;
    /// An offset's entry is `(offset >> SLOT_SHIFT) & SLOT_MASK`.
    pub const SLOT_SHIFT: i64 = SLOT_SHIFT as i64;
    pub const SLOT_MASK: i64 = ENTRIES as i64 - 1;
    /// Where [`Quick`]'s fields are, in bytes from its start.
    pub const ENTRIES: i32 = std::mem::offset_of!(Quick, entries) as i32;
    pub const CHANGES: i32 = std::mem::offset_of!(Quick, changes) as i32;
    pub const RECYCLED: i32 = std::mem::offset_of!(Quick, recycled) as i32;
    pub const EPOCH: i32 = std::mem::offset_of!(Quick, epoch) as i32;
    pub const ARENA: i32 = std::mem::offset_of!(Quick, arena) as i32;
    pub const BASE: i32 = std::mem::offset_of!(Quick, base) as i32;
}

// `SLOT_MASK` is a mask only for a power-of-two count of entries.
const _: () = assert!(ENTRIES.is_power_of_two());

/// This thread's entries, for [`Quick::entries`].
pub(super) fn entries_of_thread() -> *const u8 {
    ENTRIES_OF_THREAD.with(|all| all.as_ptr().cast())
}

/// Whether this thread's entry for `offset` allows `[offset, offset +
/// span)` for a kernel read (or write) in the arena at `arena` whose shadow
/// has changed `changes` times.
#[inline(always)]
pub(super) fn allows(arena: usize, changes: u64, offset: u64, span: u64, write: bool) -> bool {
    let e = ENTRIES_OF_THREAD.with(|all| all[slot(offset)].get());
    e.arena == arena
        && e.changes == changes
        && offset >= e.start
        && span <= e.end.saturating_sub(offset)
        && (e.write || !write)
}

/// Records that the shadow of the arena at `arena`, with `changes`
/// changes when the check began, allowed `[start, end)` (arena offsets)
/// for a kernel read (or write), in the entry of the checked offset `at`.
pub(super) fn record(arena: usize, changes: u64, at: u64, [start, end]: [u64; 2], write: bool) {
    let entry = Entry {
        arena,
        changes,
        start,
        end,
        write,
    };
    ENTRIES_OF_THREAD.with(|all| all[slot(at)].set(entry));
}
