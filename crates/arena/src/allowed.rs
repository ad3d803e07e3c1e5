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
/// `arena` when its change count was `changes`.
#[derive(Clone, Copy)]
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
    (offset >> 32) as usize % ENTRIES
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
