//! Device memory: one arena the executor owns.
//!
//! Every device address a kernel can use maps into this arena (or into host
//! memory a runtime registered explicitly) or is refused: an address outside
//! allocated memory is an error, never a host access.
//!
//! Device addresses are host addresses: the arena is mapped once and a
//! device pointer is the host pointer of the same byte, as on an APU such as
//! gfx1151. A host program given a pointer by the HSA runtime can therefore
//! write kernel arguments or AQL packets through it directly.
//!
//! # Concurrency
//!
//! Workgroups run on several host threads and may touch the same bytes, as
//! GPU kernels do; the host (a runtime's copies and fills, the packet
//! processor) may touch them while kernels run. What keeps that defined:
//!
//! - Rust code reaches arena memory, and host memory registered with
//!   [`Arena::register_host`], only through relaxed atomics: this module's
//!   accessors, [`copy`], [`fill_u32`] and [`fill_pattern`], and atomic
//!   references to queue headers in the runtime. Bulk transfers (the host's
//!   [`Arena::read`] and [`Arena::write`] of 64 bytes or more, copies and
//!   fills) are per-byte atomic copies in inline assembly (`move_bytes`:
//!   `rep movsb` on x86-64, where every byte access is single-copy
//!   atomic), checked once per call and as fast as `memcpy`. No `&[u8]`,
//!   `&mut` or plain load or store of it exists, so no access from Rust is
//!   a non-atomic data race. (The HSA C
//!   library also writes output arguments through pointers its C caller
//!   passes, which may point here; the C contract of every such call is that
//!   nothing else touches those bytes during it.)
//! - Accesses keep the width the kernel or the host asked for: a dword load
//!   is one 32-bit atomic, a 64-bit atomic is one 64-bit atomic, bulk
//!   transfers go a byte at a time to an 8-byte boundary and then a word at
//!   a time. So when two threads *race* on the same bytes with different
//!   widths (a byte store against a dword load, say), that is a mixed-size
//!   atomic race. Rust's documented memory model leaves those undefined (it
//!   inherits C++'s rule; Miri reports them). We rely instead on what rustc
//!   lowers them to: LLVM atomic loads and stores of the given width, which
//!   LLVM's memory model defines byte by byte (a load returns, for each
//!   byte, a value some store wrote to it), and plain moves on x86-64 and
//!   AArch64. Forbidding such races would mean forbidding what GPU programs
//!   legally do (or making every access a byte, or a compare-and-swap on a
//!   whole word, several times slower). Only racing programs are affected:
//!   accesses ordered by the runtime's signals, or never overlapping, are
//!   ordinary atomics.
//! - Memory that a C client writes through the host pointers it was given
//!   (kernel arguments, AQL packets, buffers) is outside Rust's control: the
//!   C program is responsible for its own races with kernels, as it would be
//!   on a GPU, and its plain stores are ordered before a dispatch by the
//!   release store of a packet header or doorbell that the runtime reads with
//!   acquire.
//! - The mapping lives as long as the `Arena`, so an address that passed a
//!   check stays mapped while `&self` does (freed allocations stay mapped;
//!   their shadow refuses kernels, see below). Registered host memory stays
//!   valid only as long as its registrant promised (see
//!   [`Arena::register_host`]).
//!
//! # Confinement
//!
//! Every kernel access must fall inside one live allocation, byte-exactly,
//! and be allowed by the allocation's [`Access`] (kernel arguments, AQL
//! packets, queue descriptors and code are read-only to kernels). The
//! [`shadow`] map answers that with one load per access. Each allocation
//! sits in a window of its own, more than 4 GiB ([`WINDOW_GAP`]) of
//! unaddressable space on each side, for the first
//! [`ArenaOptions::windows`] blocks, and behind a red zone after that (see
//! `blocks.rs`), so an overflow does not land in a neighbour (the address
//! space is reserved, not committed: docs/ARCHITECTURE.md, "Windows"), and
//! freed memory waits in a quarantine before it is
//! reused, so a stale pointer meets poison instead of a new owner. When the
//! memory is reused anyway, each allocation's serial number tells a
//! dispatch queued before the reuse from one queued after it
//! ([`Memory::stale_epoch`]). When an access is refused, [`Arena::explain`]
//! says which allocation it hit or missed, and by how much.

mod allowed;
mod blocks;
pub mod host;
mod map;
pub mod shadow;
pub mod vmem;
pub mod written;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, RwLock};

pub use allowed::Quick;
pub use blocks::{backtrace_after, AllocSpec, Allocation, Origin};
use blocks::{Block, Blocks};
use map::Map;
pub use shadow::{Access, Who};
use shadow::{Owners, Shadow};

/// Where the first device's arena is mapped when that range is free, so
/// device addresses are the same run to run (captures replay at the same
/// addresses). Below 2^47, so it never meets the LDS and scratch apertures.
pub const PREFERRED_BASE: u64 = 0x1000_0000_0000;
/// Allocation granularity and alignment.
const GRANULE: u64 = 256;
/// No allocation starts below this offset, so an access just below the
/// first one is refused too.
const FIRST: u64 = 64 << 10;

/// Why an arena operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    #[error("address {addr:#x} (+{len} bytes) is outside device memory")]
    OutOfRange { addr: u64, len: u64 },
    /// A kernel access the confinement refuses (see [`Arena::explain`]).
    #[error("{} of {len} bytes at {addr:#x} is outside what the kernel may touch", if *.write { "write" } else { "read" })]
    Refused { addr: u64, len: u64, write: bool },
    /// A dispatch touching memory freed and reallocated after it was queued.
    #[error("access of {len} bytes at {addr:#x} reaches memory reallocated after the dispatch was queued")]
    Stale { addr: u64, len: u64 },
    #[error("device memory exhausted: {requested} bytes requested, {free} bytes free")]
    Exhausted { requested: u64, free: u64 },
    #[error("{addr:#x} is not the start of a live allocation")]
    NotAllocated { addr: u64 },
    /// Host memory a client named that this process has not mapped (or
    /// not writable, for a write): a wild pointer, refused before it is
    /// touched (see [`host`]).
    #[error("{len} bytes of host memory at {addr:#x} are not mapped {} in this process", if *.write { "writable" } else { "readable" })]
    Unmapped { addr: u64, len: u64, write: bool },
    #[error(
        "host range {addr:#x} (+{len} bytes) overlaps device memory or another registered range"
    )]
    Overlap { addr: u64, len: u64 },
}

/// The device's memory. Shared by reference between worker threads.
pub struct Arena {
    memory: Map,
    /// Host (and device) address of the first byte.
    base: u64,
    /// Bytes of address space the arena spans: its capacity plus the
    /// windows' gaps (see "Windows" in the module docs).
    space: u64,
    /// Bytes of memory its allocations may hold together.
    capacity: u64,
    /// The guard behind each of the first [`Arena::windows`] blocks (0:
    /// the address space had no room for windows).
    gap: u64,
    /// How many blocks (live or in quarantine) get [`Arena::gap`] behind
    /// them; blocks beyond that get ordinary red zones.
    windows: usize,
    /// Lowest offset an allocation may start at.
    floor: u64,
    shadow: Shadow,
    owners: Owners,
    blocks: Mutex<Blocks>,
    /// High-water mark of allocations: above it the memory is still the
    /// OS's zero pages, so allocations there need no clearing.
    touched: AtomicU64,
    /// Serial number of the newest allocation (see [`Arena::serial`]).
    serial: AtomicU32,
    /// Serial of the newest allocation that took over memory another
    /// allocation had owned: dispatches queued after it need no stale check.
    recycled: AtomicU32,
    /// Host memory outside the arena that a runtime made reachable
    /// (locked or registered host buffers): start → range.
    host: RwLock<BTreeMap<u64, HostRange>>,
    /// Whether `host` is non-empty, so the common check takes no lock.
    has_host: AtomicBool,
    /// Whether a program's allocations record the host call stack.
    backtraces: bool,
    /// Whether device-only allocations made now track their written bytes
    /// (initcheck is on; see [`written`]).
    track_writes: AtomicBool,
}

/// A registered host range ([`Arena::register_host`]).
#[derive(Clone, Copy, Debug)]
struct HostRange {
    len: u64,
    /// Found unmapped before a dispatch ([`Arena::forget_unmapped_host`]):
    /// kernels may no longer touch it, though it stays registered until
    /// the runtime unregisters it.
    unmapped: bool,
}

/// How an arena keeps its records.
#[derive(Clone, Copy, Debug)]
pub struct ArenaOptions {
    /// Freed bytes held back from reuse, so a stale pointer keeps
    /// faulting for a while (default [`DEFAULT_QUARANTINE_BYTES`]).
    pub quarantine_bytes: u64,
    /// Whether a program's allocations record the host call stack, for
    /// fault reports (costly: off by default).
    pub backtraces: bool,
    /// How many allocations (live or in quarantine) get a window of their
    /// own: more than [`WINDOW_GAP`] bytes of unaddressable space on each
    /// side (default [`DEFAULT_WINDOWS`]; 0: ordinary red zones only).
    /// The address space this needs is reserved, not committed; when the
    /// process cannot give that much, fewer windows are made.
    pub windows: u32,
}

/// The guard between windowed allocations: more than 4 GiB, so no
/// overflow or underflow of less than 4 GiB from one reaches another.
pub const WINDOW_GAP: u64 = (4 << 30) + (64 << 10);
/// The default [`ArenaOptions::windows`].
pub const DEFAULT_WINDOWS: u32 = 16384;

/// The default quarantine size.
pub const DEFAULT_QUARANTINE_BYTES: u64 = blocks::QUARANTINE_BYTES;

impl Default for ArenaOptions {
    fn default() -> Self {
        ArenaOptions {
            quarantine_bytes: DEFAULT_QUARANTINE_BYTES,
            backtraces: false,
            windows: DEFAULT_WINDOWS,
        }
    }
}

// `Arena` is `Send` and `Sync` by its fields alone (it holds the mappings'
// addresses as integers): that sharing it between threads is sound is the
// accessors' business, see the module's "Concurrency".

impl Arena {
    /// Reserves `bytes` of zeroed device memory (pages are committed lazily by
    /// the host OS, so a large arena costs only what kernels touch).
    pub fn new(bytes: u64) -> Result<Arena, MemError> {
        Arena::with_options(bytes, ArenaOptions::default())
    }

    /// [`Arena::new`] with `options`.
    pub fn with_options(bytes: u64, options: ArenaOptions) -> Result<Arena, MemError> {
        let capacity = bytes.max(2 * FIRST).next_multiple_of(GRANULE);
        let exhausted = MemError::Exhausted {
            requested: capacity,
            free: 0,
        };
        // As many windows as the process's address space allows: each
        // halving trades the guarantee's reach for room (several arenas in
        // one process, a strict overcommit policy).
        let mut windows = u64::from(options.windows);
        let (memory, shadow, owners, space) = loop {
            let space = windows
                .checked_add(1)
                .and_then(|n| n.checked_mul(WINDOW_GAP))
                .and_then(|gaps| gaps.checked_add(capacity))
                .filter(|&s| windows == 0 || s < 1 << 47);
            let maps = space.and_then(|space| {
                let memory = Map::new(space, Some(PREFERRED_BASE))?;
                Some((memory, Shadow::new(space)?, Owners::new(space)?, space))
            });
            match maps {
                Some(maps) => break maps,
                None if windows == 0 => return Err(exhausted),
                None => windows /= 2,
            }
        };
        let (gap, floor) = if windows == 0 {
            (0, FIRST)
        } else {
            (WINDOW_GAP, WINDOW_GAP)
        };
        Ok(Arena {
            base: memory.base() as u64,
            memory,
            space,
            capacity,
            gap,
            windows: windows as usize,
            floor,
            shadow,
            owners,
            blocks: Mutex::new(Blocks::new(options.quarantine_bytes, floor)),
            backtraces: options.backtraces,
            touched: AtomicU64::new(0),
            serial: AtomicU32::new(0),
            recycled: AtomicU32::new(0),
            host: RwLock::new(BTreeMap::new()),
            has_host: AtomicBool::new(false),
            track_writes: AtomicBool::new(false),
        })
    }

    /// Device (and host) address of the arena's first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes of memory allocations may hold together.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes of address space from [`Arena::base`] that the arena spans:
    /// every device address is in `[base, base + space)`.
    pub fn space(&self) -> u64 {
        self.space
    }

    /// For a report of an access past `b`'s end: a note when `b` has no
    /// window of its own (more allocations than windows, or an address
    /// space too small for them), so an overflow farther than its red zone
    /// could have reached another allocation unreported.
    fn guard_note(&self, b: &Block) -> String {
        let guard = b
            .span
            .saturating_sub(b.len.max(1).next_multiple_of(GRANULE));
        if guard >= WINDOW_GAP {
            return String::new();
        }
        format!(
            " (it has only a {guard}-byte guard, not a window of its own: more than {} \
             allocations were live, so an overflow farther than that could have reached \
             another allocation)",
            self.windows
        )
    }

    fn blocks(&self) -> MutexGuard<'_, Blocks> {
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The serial number of the newest allocation. A runtime records it
    /// when work is queued ([`Memory::stale_epoch`]).
    pub fn serial(&self) -> u32 {
        self.serial.load(Relaxed)
    }

    /// Allocates `len` zeroed bytes of ordinary device memory; returns the
    /// device address.
    pub fn alloc(&self, len: u64) -> Result<u64, MemError> {
        self.alloc_with(AllocSpec::internal(len, "device memory", Access::ReadWrite))
    }

    /// Allocates `spec.len` zeroed bytes as `spec` says, followed by a red
    /// zone; returns the device address.
    pub fn alloc_with(&self, mut spec: AllocSpec) -> Result<u64, MemError> {
        if self.backtraces && spec.origin.by_program && spec.origin.backtrace.is_none() {
            // Taken here, before any lock, in the caller's call stack.
            let trace = std::backtrace::Backtrace::force_capture();
            spec.origin.backtrace = Some(std::sync::Arc::new(trace));
        }
        let exhausted = |free| MemError::Exhausted {
            requested: spec.len,
            free,
        };
        let rounded = spec
            .len
            .max(1)
            .checked_next_multiple_of(GRANULE)
            .ok_or(exhausted(0))?;
        let align = spec
            .align
            .max(GRANULE)
            .checked_next_power_of_two()
            .ok_or(exhausted(0))?;
        let mut blocks = self.blocks();
        let free = self.capacity.saturating_sub(blocks.held);
        if rounded > free {
            return Err(exhausted(free));
        }
        // A window of its own while there are windows left, else (or when
        // the address space is too fragmented for one) a red zone.
        let window = (blocks.map.len() < self.windows).then_some(self.gap);
        let Some((offset, span)) = [window, Some(blocks::red_zone(spec.len))]
            .into_iter()
            .flatten()
            .find_map(|guard| {
                let span = rounded.checked_add(guard)?;
                let offset = blocks.find_gap(span, align, self.floor, self.space)?;
                Some((offset, span))
            })
        else {
            return Err(exhausted(free));
        };
        self.place(&mut blocks, offset, span, spec);
        drop(blocks);
        Ok(self.base + offset)
    }

    /// Allocates `len` zeroed bytes at exactly `addr`, with no red zone
    /// (replaying a capture at the addresses it was recorded at).
    pub fn alloc_at(&self, addr: u64, len: u64) -> Result<u64, MemError> {
        let offset = addr.wrapping_sub(self.base);
        let span = len.max(1).next_multiple_of(GRANULE);
        if !offset.is_multiple_of(GRANULE) || offset >= self.space || self.space - offset < span {
            return Err(MemError::OutOfRange { addr, len });
        }
        let mut blocks = self.blocks();
        if blocks.overlaps(offset, span) {
            return Err(MemError::Overlap { addr, len });
        }
        self.place(
            &mut blocks,
            offset,
            span,
            AllocSpec::new(len, "capture replay"),
        );
        Ok(addr)
    }

    /// Records a block at `offset`, clears its bytes and opens them to
    /// kernels.
    fn place(&self, blocks: &mut Blocks, offset: u64, span: u64, spec: AllocSpec) {
        let serial = self.serial.fetch_add(1, Relaxed).wrapping_add(1);
        let prior = self.owners.take(offset, spec.len, serial);
        if prior != 0 {
            self.recycled.fetch_max(serial, Relaxed);
        }
        let touched = self.touched.fetch_max(offset + span, Relaxed);
        if offset < touched {
            self.zero(offset, spec.len.max(1).min(touched - offset));
        }
        self.shadow.mark(offset, spec.len, spec.access);
        let written = (spec.device_only && self.track_writes.load(Relaxed))
            .then(|| std::sync::Arc::new(written::Written::new(spec.len)));
        blocks.held += spec.len;
        blocks.map.insert(
            offset,
            Block {
                len: spec.len,
                span,
                serial,
                prior,
                access: spec.access,
                origin: spec.origin,
                freed: None,
                written,
            },
        );
    }

    /// Whether device-only allocations made from now on track which of
    /// their bytes were written, for initcheck of global memory
    /// ([`written`]). Allocations made before keep what they had.
    pub fn track_writes(&self, on: bool) {
        self.track_writes.store(on, Relaxed);
    }

    /// The live allocation holding `addr` when it tracks its written
    /// bytes: its address, length and bits.
    pub fn written(&self, addr: u64) -> Option<(u64, u64, std::sync::Arc<written::Written>)> {
        let offset = addr.wrapping_sub(self.base);
        if offset >= self.space {
            return None;
        }
        let blocks = self.blocks();
        let (&start, b) = blocks.map.range(..=offset).next_back()?;
        if b.freed.is_some() || offset - start >= b.len {
            return None;
        }
        Some((self.base + start, b.len, b.written.clone()?))
    }

    /// Records that the runtime wrote `[addr, addr + len)` (a copy or fill
    /// into device memory), for initcheck. Costs one relaxed load unless
    /// some allocation was made with initcheck on.
    pub fn mark_written(&self, addr: u64, len: u64) {
        if !self.track_writes.load(Relaxed) || len == 0 {
            return;
        }
        if let Some((start, _, bits)) = self.written(addr) {
            let from = addr - start;
            bits.mark(from, from.saturating_add(len));
        }
    }

    /// Frees an allocation: its memory is refused to kernels at once and
    /// waits in quarantine before it is reused (`by` names the API call,
    /// for reports of accesses to it).
    pub fn free_by(&self, addr: u64, by: &'static str) -> Result<(), MemError> {
        let offset = addr.wrapping_sub(self.base);
        let mut blocks = self.blocks();
        let block = match blocks.map.get_mut(&offset) {
            Some(b) if b.freed.is_none() => b,
            _ => return Err(MemError::NotAllocated { addr }),
        };
        block.freed = Some(by.into());
        let len = block.len;
        blocks.held = blocks.held.saturating_sub(len);
        self.shadow.clear(offset, len);
        // A large block's pages go back to the OS now: nothing may read
        // them until they are reallocated, and then they must be zeros.
        if len >= GIVE_BACK_FROM {
            self.memory.discard(offset, len);
        }
        blocks.quarantine(offset);
        Ok(())
    }

    /// Frees an allocation made by [`Arena::alloc`] (see [`Arena::free_by`]).
    pub fn free(&self, addr: u64) -> Result<(), MemError> {
        self.free_by(addr, "free")
    }

    /// Clears `len` bytes from `offset` for a new owner.
    fn zero(&self, offset: u64, len: u64) {
        // Whole pages of a large block go back to the OS, which maps fresh
        // zero pages on the next touch: a large reused block costs nothing
        // until used. A small block is cleared by stores: giving pages back
        // costs a TLB shootdown on every core plus a fault per page on the
        // next touch, far more than clearing a few KiB (kernarg segments
        // are reused this way at every dispatch).
        let given = if len >= GIVE_BACK_FROM {
            self.memory.discard(offset, len)
        } else {
            offset..offset
        };
        let end = offset + len;
        let clear = |from: u64, to: u64| {
            let mut at = from;
            while at < to {
                let host = self.memory.at(at);
                if at.is_multiple_of(8) && to - at >= 8 {
                    // SAFETY: 8-aligned (the arena base is page-aligned),
                    // inside the mapping, which outlives `&self`; accessed
                    // atomically only.
                    unsafe { word(host) }.store(0, Relaxed);
                    at += 8;
                } else {
                    // SAFETY: one byte inside the mapping, as above.
                    unsafe { byte(host) }.store(0, Relaxed);
                    at += 1;
                }
            }
        };
        clear(offset, given.start.max(offset).min(end));
        clear(given.end.max(offset).min(end), end);
    }

    /// Checks `who` may access `[addr, addr + len)`; returns the host
    /// address of its first byte. Arena memory must lie inside one live
    /// allocation and allow the access; outside the arena, in a registered
    /// host range.
    #[inline(always)]
    pub fn check_for(&self, addr: u64, len: u64, who: Who) -> Result<usize, MemError> {
        let offset = addr.wrapping_sub(self.base);
        if offset < self.space && len <= self.space - offset {
            if len == 0 || self.shadow.allows(offset, len, who) {
                return Ok(addr as usize);
            }
            return Err(match who {
                Who::Host => MemError::OutOfRange { addr, len },
                _ => MemError::Refused {
                    addr,
                    len,
                    write: who == Who::KernelWrite,
                },
            });
        }
        if self.has_host.load(Relaxed) {
            if let Ok(at) = self.check_host(addr, len) {
                return Ok(at);
            }
        }
        Err(MemError::OutOfRange { addr, len })
    }

    /// Checks the host may access `[addr, addr + len)` (see
    /// [`Arena::check_for`]).
    #[inline(always)]
    pub fn check(&self, addr: u64, len: u64) -> Result<usize, MemError> {
        self.check_for(addr, len, Who::Host)
    }

    #[cold]
    fn check_host(&self, addr: u64, len: u64) -> Result<usize, MemError> {
        match self.host_range(addr) {
            Some((start, r)) if !r.unmapped && len <= r.len - (addr - start) => Ok(addr as usize),
            _ => Err(MemError::OutOfRange { addr, len }),
        }
    }

    /// The registered host range holding `addr`, and its start.
    fn host_range(&self, addr: u64) -> Option<(u64, HostRange)> {
        let host = self.host.read().unwrap_or_else(|e| e.into_inner());
        let (&start, &r) = host.range(..=addr).next_back()?;
        (addr - start < r.len).then_some((start, r))
    }

    /// Closes to kernels every registered host range the client has
    /// unmapped since it registered it (one `msync` per range), so a
    /// dispatch that touches one is refused and told why instead of
    /// taking the process down. Runtimes call it as each dispatch starts;
    /// a range unmapped while a kernel runs is not caught (see
    /// [`Arena::register_host`]'s contract).
    pub fn forget_unmapped_host(&self) {
        if !self.has_host.load(Relaxed) {
            return;
        }
        let gone: Vec<u64> = {
            let host = self.host.read().unwrap_or_else(|e| e.into_inner());
            host.iter()
                .filter(|(&start, r)| !r.unmapped && !host::pages_mapped(start, r.len))
                .map(|(&start, _)| start)
                .collect()
        };
        if gone.is_empty() {
            return;
        }
        let mut host = self.host.write().unwrap_or_else(|e| e.into_inner());
        for start in gone {
            if let Some(r) = host.get_mut(&start) {
                r.unmapped = true;
            }
        }
    }

    /// Makes host memory outside the arena reachable by kernels at its own
    /// address (locked or registered host buffers, zero-copy imports).
    ///
    /// Kernels reach the range with the same atomics as arena memory (see
    /// the module's "Concurrency"); a kernel that strays into it through a
    /// wild pointer reaches it too, like any device memory.
    ///
    /// # Safety
    /// `[addr, addr + len)` must stay valid, writable host memory until
    /// [`Arena::unregister_host`] is called for it *and* every kernel that
    /// might access it has finished (an access checked just before the
    /// unregistration may land just after it), and Rust code may access it
    /// only atomically meanwhile.
    pub unsafe fn register_host(&self, addr: u64, len: u64) -> Result<(), MemError> {
        let overlap = MemError::Overlap { addr, len };
        let end = addr.checked_add(len).ok_or(overlap.clone())?;
        if len == 0 || (addr < self.base + self.space && self.base < end) {
            return Err(overlap);
        }
        // Kernels will touch the range directly: it must be there, whole
        // and writable, now (an unmapped or read-only page, or a length
        // running past the client's buffer, is refused).
        if !host::is_mapped(addr, len, true) {
            return Err(MemError::Unmapped {
                addr,
                len,
                write: true,
            });
        }
        let mut host = self.host.write().unwrap_or_else(|e| e.into_inner());
        let before = host.range(..end).next_back();
        if before.is_some_and(|(&s, r)| s + r.len > addr) {
            return Err(overlap);
        }
        host.insert(
            addr,
            HostRange {
                len,
                unmapped: false,
            },
        );
        self.has_host.store(true, Relaxed);
        Ok(())
    }

    /// Makes a range registered with [`Arena::register_host`] unreachable.
    pub fn unregister_host(&self, addr: u64) -> Result<(), MemError> {
        let mut host = self.host.write().unwrap_or_else(|e| e.into_inner());
        host.remove(&addr).ok_or(MemError::NotAllocated { addr })?;
        self.has_host.store(!host.is_empty(), Relaxed);
        Ok(())
    }

    /// The live allocation or registered host range containing `addr`:
    /// its start and length.
    pub fn allocation_of(&self, addr: u64) -> Option<(u64, u64)> {
        let offset = addr.wrapping_sub(self.base);
        if offset < self.space {
            let blocks = self.blocks();
            let (&start, b) = blocks.map.range(..=offset).next_back()?;
            return (b.freed.is_none() && offset - start < b.len.max(1))
                .then_some((self.base + start, b.len));
        }
        self.host_range(addr).map(|(start, r)| (start, r.len))
    }

    /// The program's live allocations (not the runtime's own memory) in
    /// address order: at exit, what it never freed.
    pub fn program_allocations(&self) -> Vec<Allocation> {
        let blocks = self.blocks();
        (blocks.map.iter())
            .filter(|(_, b)| b.freed.is_none() && b.origin.by_program)
            .map(|(&start, b)| Allocation::of(self.base + start, b))
            .collect()
    }

    /// Bytes currently allocated.
    pub fn used(&self) -> u64 {
        self.blocks().live_bytes()
    }

    /// Opens `[addr, addr + len)` of a live allocation to kernels with
    /// `access` (a code object's writable segments inside its read-only
    /// image, say). The range must lie inside the allocation.
    pub fn protect(&self, addr: u64, len: u64, access: Access) -> Result<(), MemError> {
        let offset = addr.wrapping_sub(self.base);
        let blocks = self.blocks();
        match blocks.map.range(..=offset).next_back() {
            Some((&start, b))
                if b.freed.is_none()
                    && offset.is_multiple_of(8)
                    && offset - start <= b.len
                    && len <= b.len - (offset - start) =>
            {
                self.shadow.mark(offset, len, access);
                Ok(())
            }
            _ => Err(MemError::OutOfRange { addr, len }),
        }
    }

    /// Whether an access at `addr` by a dispatch queued when the arena's
    /// serial was `epoch` reaches an allocation made after that which took
    /// over memory an older allocation owned: the dispatch's pointer was to
    /// the old owner, freed since (see [`Memory::stale_epoch`]). An
    /// allocation made later from fresh memory is not stale: the dispatch
    /// may have been given its address through memory.
    #[cold]
    fn is_stale(&self, offset: u64, epoch: u32) -> bool {
        let blocks = self.blocks();
        blocks
            .map
            .range(..=offset)
            .next_back()
            .is_some_and(|(_, b)| b.serial > epoch && b.prior != 0 && b.prior <= epoch)
    }

    /// What `[addr, addr + len)` hit or missed, for a fault report: the
    /// allocation involved and a sentence ("4 bytes at 0x… are 0 bytes
    /// past the end of a 4096-byte allocation at 0x… (made by hipMalloc)").
    pub fn explain(&self, addr: u64, len: u64, write: bool) -> (String, Option<Allocation>) {
        let offset = addr.wrapping_sub(self.base);
        let what = format!("{len} bytes at {addr:#x}");
        if offset >= self.space {
            if let Some((start, r)) = self.host_range(addr) {
                let text = if r.unmapped {
                    format!("{what} are in the {}-byte host range at {start:#x} registered with the device, which the program unmapped after registering it", r.len)
                } else if self.check_host(addr, len).is_ok() {
                    format!("{what} are in registered host memory")
                } else {
                    format!("{what} run past the end of the {}-byte host range at {start:#x} registered with the device", r.len)
                };
                return (text, None);
            }
            return (
                format!("{what} are outside device memory (no allocation, registered host range or code object holds them)"),
                None,
            );
        }
        let blocks = self.blocks();
        let (before, after) = blocks.around(offset);
        let end = offset.saturating_add(len);
        if let Some((start, b)) = before {
            let a = Allocation::of(self.base + start, b);
            let inside = offset - start < b.len;
            if let (true, Some(by)) = (offset - start < b.len.max(1), &b.freed) {
                let text = format!(
                    "{what} are {} bytes into {}, freed by {by}",
                    offset - start,
                    a.describe()
                );
                return (text, Some(a));
            }
            if inside && end > start + b.len {
                let text = format!(
                    "{what} run {} bytes past the end of {}{}",
                    end - (start + b.len),
                    a.describe(),
                    self.guard_note(b)
                );
                return (text, Some(a));
            }
            if inside {
                let text = match Access::from_shadow(self.shadow.at(offset)) {
                    Access::ReadOnly if write => {
                        format!(
                            "{what} are inside {}, which kernels may only read",
                            a.describe()
                        )
                    }
                    Access::HostOnly => format!(
                        "{what} are inside {}, which kernels may not touch",
                        a.describe()
                    ),
                    _ => format!("{what} are inside {}", a.describe()),
                };
                return (text, Some(a));
            }
            // An access in this allocation's red zone or the gap after it
            // is blamed on it (an overflow is the likelier bug), unless it
            // is clearly nearer the next allocation's start: within a
            // quarter of the distance past this one's end.
            let past = offset - (start + b.len);
            let nearer_next =
                after.is_some_and(|(next, _)| next.saturating_sub(end).saturating_mul(4) < past);
            if !nearer_next && offset < start + b.span {
                let text = format!(
                    "{what} are {past} bytes past the end of {}{}",
                    a.describe(),
                    self.guard_note(b)
                );
                return (text, Some(a));
            }
        }
        if let Some((next, b)) = after {
            let a = Allocation::of(self.base + next, b);
            if next - offset <= blocks::red_zone(b.len).max(FIRST).max(self.gap) {
                let text = if end > next {
                    format!(
                        "{what} start {} bytes before the start of {}",
                        next - offset,
                        a.describe()
                    )
                } else {
                    format!(
                        "{what} are {} bytes before the start of {}",
                        next - end,
                        a.describe()
                    )
                };
                return (text, Some(a));
            }
        }
        (
            format!("{what} are not inside any allocation (never allocated, or freed long ago)"),
            None,
        )
    }

    /// [`Arena::check_for`], then the stale-dispatch check when
    /// `stale_after` is not `u32::MAX` (see [`Memory::stale_epoch`]).
    #[inline(always)]
    fn reach(&self, who: Who, stale_after: u32, addr: u64, len: u64) -> Result<usize, MemError> {
        let at = self.check_for(addr, len, who)?;
        if stale_after != u32::MAX {
            let offset = addr.wrapping_sub(self.base);
            if offset < self.space
                && self.owners.of(offset) > stale_after
                && self.is_stale(offset, stale_after)
            {
                return Err(MemError::Stale { addr, len });
            }
        }
        Ok(at)
    }

    /// Reads `out.len()` bytes at `addr` for the host (the runtime),
    /// checked once for the whole range, then moved in bulk
    /// (`move_bytes`: per-byte atomic, at memory speed).
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let start = self.reach(Who::Host, u32::MAX, addr, out.len() as u64)?;
        // SAFETY: `reach` passed for `out.len()` bytes, so they are mapped
        // arena memory (or registered host memory) for as long as `self`;
        // `out` is ours to write.
        unsafe { load_bulk(start, out) };
        Ok(())
    }

    /// Writes `data` at `addr` for the host, checked once and moved in
    /// bulk as [`Arena::read`].
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let start = self.reach(Who::Host, u32::MAX, addr, data.len() as u64)?;
        // SAFETY: as for `read`.
        unsafe { store_bulk(start, data) };
        self.mark_written(addr, data.len() as u64);
        Ok(())
    }

    /// Loads a little-endian 32-bit value for the host.
    pub fn load_u32(&self, addr: u64) -> Result<u32, MemError> {
        self.load_u32_as(Who::Host, u32::MAX, addr)
    }

    /// Loads consecutive dwords for the host.
    pub fn load_dwords(&self, addr: u64, out: &mut [u32]) -> Result<(), MemError> {
        self.load_dwords_as(Who::Host, u32::MAX, addr, out)
    }

    /// Stores consecutive dwords for the host.
    pub fn store_dwords(&self, addr: u64, values: &[u32]) -> Result<(), MemError> {
        self.store_dwords_as(Who::Host, u32::MAX, addr, values)?;
        self.mark_written(addr, 4 * values.len() as u64);
        Ok(())
    }

    /// Atomic read-modify-write of an aligned 32-bit value for the host.
    pub fn rmw_u32(&self, addr: u64, f: impl Fn(u32) -> u32) -> Result<u32, MemError> {
        self.rmw_u32_as(Who::Host, u32::MAX, addr, f)
    }

    /// Atomic read-modify-write of an aligned 64-bit value for the host.
    pub fn rmw_u64(&self, addr: u64, f: impl Fn(u64) -> u64) -> Result<u64, MemError> {
        self.rmw_u64_as(Who::Host, u32::MAX, addr, f)
    }

    /// Stores a little-endian 32-bit value for the host.
    pub fn store_u32(&self, addr: u64, value: u32) -> Result<(), MemError> {
        self.store_u32_as(Who::Host, u32::MAX, addr, value)?;
        self.mark_written(addr, 4);
        Ok(())
    }

    /// Loads a little-endian 32-bit value.
    #[inline(always)]
    fn load_u32_as(&self, who: Who, stale_after: u32, addr: u64) -> Result<u32, MemError> {
        let start = self.reach(who, stale_after, addr, 4)?;
        if start.is_multiple_of(4) {
            // SAFETY: `check` passed for these 4 bytes, which are aligned.
            Ok(unsafe { dword(start) }.load(Relaxed))
        } else {
            let mut b = [0u8; 4];
            // SAFETY: `check` passed for these 4 bytes.
            unsafe { load_bytes(start, &mut b) };
            Ok(u32::from_le_bytes(b))
        }
    }

    /// Stores a little-endian 32-bit value.
    #[inline(always)]
    fn store_u32_as(
        &self,
        who: Who,
        stale_after: u32,
        addr: u64,
        value: u32,
    ) -> Result<(), MemError> {
        let start = self.reach(who, stale_after, addr, 4)?;
        if start.is_multiple_of(4) {
            // SAFETY: `check` passed for these 4 bytes, which are aligned.
            unsafe { dword(start) }.store(value, Relaxed);
        } else {
            // SAFETY: `check` passed for these 4 bytes.
            unsafe { store_bytes(start, &value.to_le_bytes()) };
        }
        Ok(())
    }

    /// Loads consecutive dwords at `addr` with one range check (the common
    /// case of vector loads).
    #[inline(always)]
    fn load_dwords_as(
        &self,
        who: Who,
        stale_after: u32,
        addr: u64,
        out: &mut [u32],
    ) -> Result<(), MemError> {
        let start = self.reach(who, stale_after, addr, 4 * out.len() as u64)?;
        if start.is_multiple_of(4) {
            for (k, v) in out.iter_mut().enumerate() {
                // SAFETY: `check` passed for all `out.len()` dwords from
                // `start`, which is aligned.
                *v = unsafe { dword(start + 4 * k) }.load(Relaxed);
            }
        } else {
            for (k, v) in out.iter_mut().enumerate() {
                let mut b = [0u8; 4];
                // SAFETY: `check` passed for all `out.len()` dwords.
                unsafe { load_bytes(start + 4 * k, &mut b) };
                *v = u32::from_le_bytes(b);
            }
        }
        Ok(())
    }

    /// Stores consecutive dwords at `addr` with one range check.
    #[inline(always)]
    fn store_dwords_as(
        &self,
        who: Who,
        stale_after: u32,
        addr: u64,
        values: &[u32],
    ) -> Result<(), MemError> {
        let start = self.reach(who, stale_after, addr, 4 * values.len() as u64)?;
        if start.is_multiple_of(4) {
            for (k, v) in values.iter().enumerate() {
                // SAFETY: `check` passed for all `values.len()` dwords from
                // `start`, which is aligned.
                unsafe { dword(start + 4 * k) }.store(*v, Relaxed);
            }
        } else {
            for (k, v) in values.iter().enumerate() {
                // SAFETY: `check` passed for all `values.len()` dwords.
                unsafe { store_bytes(start + 4 * k, &v.to_le_bytes()) };
            }
        }
        Ok(())
    }

    /// Reads `out.len()` bytes at `addr`.
    fn read_as(
        &self,
        who: Who,
        stale_after: u32,
        addr: u64,
        out: &mut [u8],
    ) -> Result<(), MemError> {
        let start = self.reach(who, stale_after, addr, out.len() as u64)?;
        // SAFETY: `check` passed for `out.len()` bytes.
        unsafe { load_bytes(start, out) };
        Ok(())
    }

    /// Writes `data` at `addr`.
    fn write_as(&self, who: Who, stale_after: u32, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let start = self.reach(who, stale_after, addr, data.len() as u64)?;
        // SAFETY: `check` passed for `data.len()` bytes.
        unsafe { store_bytes(start, data) };
        Ok(())
    }

    /// Atomic read-modify-write of an aligned 32-bit value; returns the old
    /// value. `f` may be called more than once.
    fn rmw_u32_as(
        &self,
        who: Who,
        stale_after: u32,
        addr: u64,
        f: impl Fn(u32) -> u32,
    ) -> Result<u32, MemError> {
        let start = self.reach(who, stale_after, addr, 4)?;
        if !start.is_multiple_of(4) {
            return Err(MemError::OutOfRange { addr, len: 4 });
        }
        // SAFETY: `check` passed for these 4 bytes, which are aligned.
        let cell = unsafe { dword(start) };
        let mut old = cell.load(Relaxed);
        loop {
            match cell.compare_exchange_weak(old, f(old), Relaxed, Relaxed) {
                Ok(v) => return Ok(v),
                Err(v) => old = v,
            }
        }
    }

    /// Atomic read-modify-write of an aligned 64-bit value; returns the old value.
    fn rmw_u64_as(
        &self,
        who: Who,
        stale_after: u32,
        addr: u64,
        f: impl Fn(u64) -> u64,
    ) -> Result<u64, MemError> {
        let start = self.reach(who, stale_after, addr, 8)?;
        if !start.is_multiple_of(8) {
            return Err(MemError::OutOfRange { addr, len: 8 });
        }
        // SAFETY: `check` passed for these 8 bytes, which are aligned.
        let cell = unsafe { word(start) };
        let mut old = cell.load(Relaxed);
        loop {
            match cell.compare_exchange_weak(old, f(old), Relaxed, Relaxed) {
                Ok(v) => return Ok(v),
                Err(v) => old = v,
            }
        }
    }
}

/// The arena as one dispatch's kernels see it: every access confined to a
/// live allocation that allows it, and, for a dispatch queued before some
/// memory changed owner, refused on the new owner's memory.
#[derive(Clone, Copy)]
pub struct Memory<'a> {
    pub arena: &'a Arena,
    /// The arena's serial when the dispatch was queued, or `u32::MAX` for
    /// a dispatch that runs as it is queued.
    epoch: u32,
}

impl<'a> Memory<'a> {
    /// The view of a dispatch queued when the arena's serial was `epoch`
    /// (`None`: queued just now).
    pub fn new(arena: &'a Arena, epoch: Option<u32>) -> Memory<'a> {
        let epoch = epoch.unwrap_or(u32::MAX);
        Memory { arena, epoch }
    }

    /// The serial stale accesses are checked against (`u32::MAX`: none).
    /// Asked at every access, not once per workgroup: memory freed and
    /// given to a new owner while the dispatch runs is refused to the
    /// workgroups already running too. The check is on only once some
    /// allocation made since the dispatch was queued took over another's
    /// memory, so until then it costs one relaxed load. (The allocation
    /// raises `recycled` before it opens the memory in the shadow map; on
    /// x86-64's ordered stores and loads an access that sees the memory
    /// open sees `recycled` raised too.)
    #[inline(always)]
    fn stale_after(&self) -> u32 {
        if self.epoch != u32::MAX && self.arena.recycled.load(Relaxed) > self.epoch {
            self.epoch
        } else {
            u32::MAX
        }
    }

    /// What compiled code needs to ask this thread's allowed ranges itself
    /// (see [`Quick`]): valid on this thread while `self` lives.
    pub fn quick(&self) -> Quick {
        Quick {
            entries: allowed::entries_of_thread(),
            changes: self.arena.shadow.changes_ptr(),
            recycled: self.arena.recycled.as_ptr(),
            epoch: self.epoch,
            arena: self.arena as *const Arena as usize,
            base: self.arena.base,
        }
    }

    /// The serial the dispatch checks stale accesses against, if memory
    /// has changed owner since it was queued (see [`Memory::new`]).
    pub fn stale_epoch(&self) -> Option<u32> {
        let e = self.stale_after();
        (e != u32::MAX).then_some(e)
    }

    #[inline(always)]
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        self.arena
            .read_as(Who::KernelRead, self.stale_after(), addr, out)
    }
    #[inline(always)]
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        self.arena
            .write_as(Who::KernelWrite, self.stale_after(), addr, data)
    }
    #[inline(always)]
    pub fn load_u32(&self, addr: u64) -> Result<u32, MemError> {
        self.arena
            .load_u32_as(Who::KernelRead, self.stale_after(), addr)
    }
    #[inline(always)]
    pub fn load_dwords(&self, addr: u64, out: &mut [u32]) -> Result<(), MemError> {
        self.arena
            .load_dwords_as(Who::KernelRead, self.stale_after(), addr, out)
    }
    #[inline(always)]
    pub fn store_dwords(&self, addr: u64, values: &[u32]) -> Result<(), MemError> {
        self.arena
            .store_dwords_as(Who::KernelWrite, self.stale_after(), addr, values)
    }
    #[inline(always)]
    pub fn rmw_u32(&self, addr: u64, f: impl Fn(u32) -> u32) -> Result<u32, MemError> {
        self.arena
            .rmw_u32_as(Who::KernelWrite, self.stale_after(), addr, f)
    }
    #[inline(always)]
    pub fn rmw_u64(&self, addr: u64, f: impl Fn(u64) -> u64) -> Result<u64, MemError> {
        self.arena
            .rmw_u64_as(Who::KernelWrite, self.stale_after(), addr, f)
    }
}

impl<'a> Memory<'a> {
    /// `[start, end)` as one window for a kernel's `write` or read access,
    /// when the whole range may be accessed: every byte of it addressable
    /// and allowed, exactly as [`Arena::check_for`] decides for one access.
    /// Any access inside such a range would pass its own check, so a wave
    /// whose lanes all fall in one short range is checked once this way
    /// instead of lane by lane. (Red zones between allocations keep such a
    /// range to one allocation, except blocks placed back to back by
    /// [`Arena::alloc_at`]; nothing here depends on it.) `None` (also for
    /// registered host memory, and whenever the stale-dispatch check is
    /// on) sends the caller to the per-lane checks, which report faults.
    ///
    /// The check is made once, when the window is made: an allocation freed
    /// by the host while the wave uses the window is still reached through
    /// it, as a lane's access checked just before the free is on the
    /// per-lane path. Either way the bytes stay mapped (see the module's
    /// "Concurrency"), so that is a race in the program, not in Rust.
    #[inline(always)]
    pub fn window(&self, start: u64, end: u64, write: bool) -> Option<Window<'a>> {
        let shadow = &self.arena.shadow;
        let arena = self.arena as *const Arena as usize;
        self.window_if(start, end, write, |offset, span, who| {
            // The shadow's answer for a range this thread was allowed
            // since it last changed, or the shadow asked (`allowed`).
            let changes = shadow.changes();
            if allowed::allows(arena, changes, offset, span, write) {
                return true;
            }
            let ok = shadow.allows(offset, span, who);
            if ok {
                let widened = shadow.widen(offset, offset + span, who);
                allowed::record(arena, changes, offset, widened, write);
            }
            ok
        })
    }

    /// [`Memory::window`] for a wide range most of whose bytes no lane
    /// touches (a stencil's rows, a strided column): the range must lie in
    /// the arena's mapping, but only the `len`-byte accesses at `addrs` are
    /// checked, each as [`Arena::check_for`] decides for one access (one
    /// shadow word for the lanes inside a wholly allowed 64-byte block, a
    /// byte or two for any other lane; not a byte per 8 bytes of range).
    /// Every access the caller then makes through the window must be one of
    /// those checked here; the window's own assertion only keeps it in the
    /// mapping.
    #[inline(always)]
    pub fn window_at(
        &self,
        start: u64,
        end: u64,
        write: bool,
        len: u64,
        addrs: impl Iterator<Item = u64>,
    ) -> Option<Window<'a>> {
        let (shadow, base) = (&self.arena.shadow, self.arena.base);
        self.window_if(start, end, write, |_, _, who| {
            len != 0 && shadow.allows_each(addrs.map(|a| a - base), len, who)
        })
    }

    /// The window `[start, end)` when the range is non-empty and inside the
    /// arena, the stale-dispatch check is off, and `allowed(offset of
    /// start, length, who)` says the accesses may be made.
    #[inline(always)]
    fn window_if(
        &self,
        start: u64,
        end: u64,
        write: bool,
        allowed: impl FnOnce(u64, u64, Who) -> bool,
    ) -> Option<Window<'a>> {
        let who = if write {
            Who::KernelWrite
        } else {
            Who::KernelRead
        };
        let arena = self.arena;
        let offset = start.wrapping_sub(arena.base);
        let span = end.checked_sub(start)?;
        let inside = offset < arena.space && span <= arena.space - offset;
        (self.stale_after() == u32::MAX && inside && span != 0 && allowed(offset, span, who))
            .then_some(Window {
                start,
                end,
                write,
                arena: std::marker::PhantomData,
            })
    }
}

/// A range of device memory checked once (see [`Memory::window`]), for
/// reads, or for reads and writes when it was checked for writes. Its
/// accessors check only that an access lies inside the window (and is a
/// read, unless the window allows writes); that check is what makes them
/// safe to call, so it is an `assert!`, not a debug assertion.
#[derive(Clone, Copy)]
pub struct Window<'a> {
    start: u64,
    end: u64,
    /// Whether the range was checked for kernel writes.
    write: bool,
    /// The window borrows the arena: the mapping its range lies in stays
    /// mapped while the window exists.
    arena: std::marker::PhantomData<&'a Arena>,
}

impl Window<'_> {
    /// The host address of `[addr, addr + len)`, which must lie inside.
    #[inline(always)]
    fn at(&self, addr: u64, len: u64) -> usize {
        assert!(
            addr >= self.start && addr <= self.end && len <= self.end - addr,
            "access outside its checked window"
        );
        addr as usize
    }

    /// [`Window::at`] for a store.
    #[inline(always)]
    fn at_for_write(&self, addr: u64, len: u64) -> usize {
        assert!(self.write, "store through a window checked for reads");
        self.at(addr, len)
    }

    /// Loads the little-endian dword at `addr`.
    #[inline(always)]
    pub fn load_u32(&self, addr: u64) -> u32 {
        let start = self.at(addr, 4);
        if start.is_multiple_of(4) {
            // SAFETY: the 4 bytes lie inside the window (`at`), so inside
            // the arena's mapping (`Memory::window` checked the range is
            // in the arena), which stays mapped while the window borrows
            // the arena; every access to arena memory is atomic (the
            // module's "Concurrency"), as this one is; aligned.
            unsafe { dword(start) }.load(Relaxed)
        } else {
            let mut b = [0u8; 4];
            // SAFETY: as above, bytes and words as the per-access path
            // (`Arena::load_u32_as`) reads an unaligned dword.
            unsafe { load_bytes(start, &mut b) };
            u32::from_le_bytes(b)
        }
    }

    /// Stores the little-endian dword `value` at `addr`.
    #[inline(always)]
    pub fn store_u32(&self, addr: u64, value: u32) {
        let start = self.at_for_write(addr, 4);
        if start.is_multiple_of(4) {
            // SAFETY: inside the window, so mapped, and atomic, as for
            // `load_u32`; aligned.
            unsafe { dword(start) }.store(value, Relaxed);
        } else {
            // SAFETY: as for `load_u32`.
            unsafe { store_bytes(start, &value.to_le_bytes()) };
        }
    }

    /// Reads `out.len()` bytes at `addr`.
    #[inline(always)]
    pub fn read(&self, addr: u64, out: &mut [u8]) {
        let start = self.at(addr, out.len() as u64);
        // SAFETY: inside the window, so mapped, and atomic, as for
        // `load_u32`.
        unsafe { load_bytes(start, out) };
    }

    /// Writes `data` at `addr`.
    #[inline(always)]
    pub fn write(&self, addr: u64, data: &[u8]) {
        let start = self.at_for_write(addr, data.len() as u64);
        // SAFETY: inside the window, so mapped, and atomic, as for
        // `load_u32`.
        unsafe { store_bytes(start, data) };
    }

    /// Whether the `count` dwords from the address of every lane `lanes`
    /// selects are 4-aligned and inside the window: O(1) from the bounds
    /// [`Lanes::new`] found, so the accesses that follow need no check of
    /// their own.
    #[inline(always)]
    fn dwords_inside(&self, lanes: &Lanes, count: usize) -> bool {
        let Some(last) = self.end.checked_sub(4 * count as u64) else {
            return false;
        };
        let b = lanes.bounds;
        lanes.mask == 0 || (b.lo >= self.start && b.hi <= last && b.low_bits & 3 == 0)
    }

    /// The wave-wide load of `rows.len()` dwords a lane: `rows[k][l]` =
    /// the dword at `addrs[l] + 4 * k` for each lane `l` that `lanes`
    /// selects (lanes past a row's length are not loaded). Returns false,
    /// having loaded nothing, unless every one of those dwords is aligned
    /// and inside the window.
    #[inline(always)]
    pub fn gather_dwords<const L: usize>(&self, lanes: &Lanes, rows: &mut [[u32; L]]) -> bool {
        if lanes.addrs.len() > L || !self.dwords_inside(lanes, rows.len()) {
            return false;
        }
        // SAFETY: every selected lane's dwords were just checked to be
        // aligned and inside this window. The usual counts go as arrays of
        // a known length, so the inner loop unrolls.
        unsafe {
            match rows {
                [a] => gather_lanes(lanes, &mut [a]),
                [a, b] => gather_lanes(lanes, &mut [a, b]),
                [a, b, c] => gather_lanes(lanes, &mut [a, b, c]),
                [a, b, c, d] => gather_lanes(lanes, &mut [a, b, c, d]),
                _ => gather_lanes(lanes, rows),
            }
        }
        true
    }

    /// The wave-wide store of `rows.len()` dwords a lane: for each lane `l`
    /// that `lanes` selects, `rows[k][l]` to `addrs[l] + 4 * k`, lane by
    /// lane in lane order (so of lanes storing to the same dword the last
    /// wins, as one lane at a time would store). Returns false, having
    /// stored nothing, unless every one of those dwords is aligned and
    /// inside a window checked for writes.
    #[inline(always)]
    pub fn scatter_dwords<const L: usize>(&self, lanes: &Lanes, rows: &[[u32; L]]) -> bool {
        if !self.write || lanes.addrs.len() > L || !self.dwords_inside(lanes, rows.len()) {
            return false;
        }
        // SAFETY: every selected lane's dwords were just checked to be
        // aligned and inside this window, which was checked for writes.
        unsafe {
            match rows {
                [a] => scatter_lanes(lanes, &[a]),
                [a, b] => scatter_lanes(lanes, &[a, b]),
                [a, b, c] => scatter_lanes(lanes, &[a, b, c]),
                [a, b, c, d] => scatter_lanes(lanes, &[a, b, c, d]),
                _ => scatter_lanes(lanes, rows),
            }
        }
        true
    }
}

/// The addresses of a wave's lanes (one per lane, up to 64), which of them
/// a wave-wide access makes (`mask`), and the bounds of those, found in one
/// pass: what lets a [`Window`] check a whole gather or scatter at once.
/// Built only by [`Lanes::new`] and [`Lanes::from_fn`], so the bounds are
/// always the addresses'.
pub struct Lanes<'l> {
    addrs: &'l [u64],
    mask: u64,
    bounds: Bounds,
}

/// The bounds of the selected addresses, folded one lane at a time.
#[derive(Clone, Copy)]
struct Bounds {
    /// The lowest and highest selected address (`u64::MAX`, 0 for none).
    lo: u64,
    hi: u64,
    /// The OR of the selected addresses (their common misalignment).
    low_bits: u64,
}

impl Bounds {
    const NONE: Bounds = Bounds {
        lo: u64::MAX,
        hi: 0,
        low_bits: 0,
    };

    /// Folds lane `l`'s address `a` in when `mask` selects it;
    /// branch-free, so the loops around it vectorise.
    #[inline(always)]
    fn take(&mut self, mask: u64, l: usize, a: u64) {
        // All ones when lane `l` is selected, else zero.
        let on = 0u64.wrapping_sub(mask >> l & 1);
        self.lo = self.lo.min(a | !on);
        self.hi = self.hi.max(a & on);
        self.low_bits |= a & on;
    }
}

impl<'l> Lanes<'l> {
    /// The lanes of `addrs` (the first 64) that `mask` selects.
    #[inline(always)]
    pub fn new(addrs: &'l [u64], mask: u64) -> Self {
        let addrs = &addrs[..addrs.len().min(64)];
        let mask = mask & lane_bits(addrs.len());
        let mut bounds = Bounds::NONE;
        for (l, &a) in addrs.iter().enumerate() {
            bounds.take(mask, l, a);
        }
        Lanes {
            addrs,
            mask,
            bounds,
        }
    }

    /// The first `N` (at most 64) lanes, lane `l`'s address `addr(l)`
    /// written to `out[l]` in the same pass that bounds them (a fixed-length
    /// loop with no bounds checks, which vectorises).
    #[inline(always)]
    pub fn from_fn<const N: usize>(
        out: &'l mut [u64; 64],
        mask: u64,
        mut addr: impl FnMut(usize) -> u64,
    ) -> Self {
        let mask = mask & lane_bits(N);
        let mut bounds = Bounds::NONE;
        for (l, slot) in out[..N].iter_mut().enumerate() {
            let a = addr(l);
            *slot = a;
            bounds.take(mask, l, a);
        }
        Lanes {
            addrs: &out[..N],
            mask,
            bounds,
        }
    }

    /// The lowest and highest selected address, if any lane is selected.
    #[inline(always)]
    pub fn bounds(&self) -> Option<(u64, u64)> {
        (self.mask != 0).then_some((self.bounds.lo, self.bounds.hi))
    }

    /// The selected lanes' addresses, in lane order.
    pub fn selected(&self) -> impl Iterator<Item = u64> + '_ {
        let mask = self.mask;
        self.addrs
            .iter()
            .enumerate()
            .filter(move |(l, _)| mask >> l & 1 != 0)
            .map(|(_, &a)| a)
    }

    /// Whether every lane is selected (the usual case).
    #[inline(always)]
    fn all_selected(&self) -> bool {
        self.mask == lane_bits(self.addrs.len())
    }

    /// Calls `f(l, address)` for every selected lane, in lane order; when
    /// every lane is selected (the usual case) without a test per lane.
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(usize, u64)) {
        if self.all_selected() {
            for (l, &a) in self.addrs.iter().enumerate() {
                f(l, a);
            }
        } else {
            for (l, &a) in self.addrs.iter().enumerate() {
                if self.mask >> l & 1 != 0 {
                    f(l, a);
                }
            }
        }
    }
}

/// A mask of the first `n` lanes (all 64 for `n >= 64`).
#[inline(always)]
fn lane_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The loads of [`Window::gather_dwords`]: for each lane `lanes`
/// selects, `rows[k][l]` = the dword at `addrs[l] + 4 * k`.
///
/// # Safety
/// Every such dword must be 4-aligned and inside a window.
#[inline(always)]
unsafe fn gather_lanes<R: AsMut<[u32]>>(lanes: &Lanes, rows: &mut [R]) {
    if lanes.all_selected() {
        // Row by row, the lane loop free of tests and of the row pointer
        // kept in memory that the lane-major loop compiled to.
        for (k, row) in rows.iter_mut().enumerate() {
            let skip = 4 * k as u64;
            for (out, &a) in row.as_mut().iter_mut().zip(lanes.addrs) {
                // SAFETY: as below.
                *out = unsafe { dword(a.wrapping_add(skip) as usize) }.load(Relaxed);
            }
        }
        return;
    }
    lanes.for_each(|l, a| {
        for (k, row) in rows.iter_mut().enumerate() {
            // SAFETY: the caller's contract: aligned and inside a window,
            // so mapped and accessed atomically, as for `Window::load_u32`.
            row.as_mut()[l] = unsafe { dword(a.wrapping_add(4 * k as u64) as usize) }.load(Relaxed);
        }
    });
}

/// The stores of [`Window::scatter_dwords`]: for each lane `lanes`
/// selects, in lane order, `rows[k][l]` to `addrs[l] + 4 * k`.
///
/// # Safety
/// Every such dword must be 4-aligned and inside a window checked for
/// writes (see [`Window::dwords_inside`]).
#[inline(always)]
unsafe fn scatter_lanes<R: AsRef<[u32]>>(lanes: &Lanes, rows: &[R]) {
    lanes.for_each(|l, a| {
        for (k, row) in rows.iter().enumerate() {
            // SAFETY: the caller's contract: aligned and inside a window
            // checked for writes, so mapped and accessed atomically, as
            // for `Window::load_u32`.
            unsafe { dword(a.wrapping_add(4 * k as u64) as usize) }.store(row.as_ref()[l], Relaxed);
        }
    });
}

// The atomic views every access goes through. Each returns a reference of
// any lifetime the caller picks: callers in this module hold it only within
// a method borrowing the `Arena` (so the mapping outlives it), callers of
// `copy` and `fill_u32` only within those calls.

/// The 64-bit cell at host address `at`.
///
/// # Safety
/// `at` must be 8-aligned and valid for reads and writes of 8 bytes while
/// the reference is used, and no Rust code may access those bytes other
/// than atomically meanwhile (see the module's "Concurrency").
#[inline(always)]
unsafe fn word<'a>(at: usize) -> &'a AtomicU64 {
    // SAFETY: the caller's contract: aligned, valid, and only ever accessed
    // atomically, which is what `AtomicU64` requires of its bytes.
    unsafe { &*(at as *const AtomicU64) }
}

/// The 32-bit cell at host address `at`.
///
/// # Safety
/// As for [`word`], with 4 bytes, 4-aligned.
#[inline(always)]
unsafe fn dword<'a>(at: usize) -> &'a AtomicU32 {
    // SAFETY: as for `word`.
    unsafe { &*(at as *const AtomicU32) }
}

/// The byte at host address `at`.
///
/// # Safety
/// As for [`word`], with 1 byte (`AtomicU8` needs no alignment).
#[inline(always)]
unsafe fn byte<'a>(at: usize) -> &'a AtomicU8 {
    // SAFETY: as for `word`.
    unsafe { &*(at as *const AtomicU8) }
}

/// Bulk reads and writes go a byte at a time up to an 8-byte boundary,
/// then a word at a time: relaxed word accesses compile to plain moves, so
/// a transfer runs near memory speed while a kernel racing on the same
/// bytes stays an atomic race (see the module's "Concurrency").
///
/// # Safety
/// `[start, start + out.len())` must be valid for reads and writes and
/// accessed only atomically during the call.
#[inline]
unsafe fn load_bytes(start: usize, out: &mut [u8]) {
    let head = (start.next_multiple_of(8) - start).min(out.len());
    let (first, rest) = out.split_at_mut(head);
    for (i, b) in first.iter_mut().enumerate() {
        // SAFETY: inside the caller's range.
        *b = unsafe { byte(start + i) }.load(Relaxed);
    }
    let mut words = rest.chunks_exact_mut(8);
    let mut at = start + head;
    for w in &mut words {
        // SAFETY: inside the caller's range, and 8-aligned past the head.
        w.copy_from_slice(&unsafe { word(at) }.load(Relaxed).to_le_bytes());
        at += 8;
    }
    for (i, b) in words.into_remainder().iter_mut().enumerate() {
        // SAFETY: inside the caller's range.
        *b = unsafe { byte(at + i) }.load(Relaxed);
    }
}

/// Writes `data` at `start`, split as [`load_bytes`] splits reads.
///
/// # Safety
/// As for [`load_bytes`], for `data.len()` bytes.
#[inline]
unsafe fn store_bytes(start: usize, data: &[u8]) {
    let head = (start.next_multiple_of(8) - start).min(data.len());
    let (first, rest) = data.split_at(head);
    for (i, b) in first.iter().enumerate() {
        // SAFETY: inside the caller's range.
        unsafe { byte(start + i) }.store(*b, Relaxed);
    }
    let mut words = rest.chunks_exact(8);
    let mut at = start + head;
    for w in &mut words {
        let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        // SAFETY: inside the caller's range, and 8-aligned past the head.
        unsafe { word(at) }.store(v, Relaxed);
        at += 8;
    }
    for (i, b) in words.remainder().iter().enumerate() {
        // SAFETY: inside the caller's range.
        unsafe { byte(at + i) }.store(*b, Relaxed);
    }
}

/// Transfers at least this long go through [`move_bytes`]; shorter ones
/// (a kernel's odd-width access, a header) through [`load_bytes`] and
/// [`store_bytes`], which have no start-up cost.
const BULK_FROM: usize = 64;

/// Copies `len` bytes forward from host address `src` to host address
/// `dst` (`dst` at or below `src` when they overlap, as for `memmove`'s
/// forward case), as fast as the machine copies memory.
///
/// What it is, for Rust's memory model: a *per-byte atomic copy* (the
/// `atomic_load_per_byte_memcpy`/`atomic_store_per_byte_memcpy` of C++
/// proposal P1478): every byte is read once and written once, each as if
/// by a relaxed atomic byte access, in no particular order among them. On
/// x86-64 it is one `rep movsb` in inline assembly. The assembly is opaque
/// to the compiler, which therefore cannot assume that no other thread
/// touches these bytes (what makes a plain `copy_nonoverlapping` racing
/// with a kernel a data race, undefined behaviour, even though the machine
/// moves the same bytes); and on x86-64 every byte load and store, string
/// moves included, is single-copy atomic, so a kernel racing on the bytes
/// (another thread's relaxed atomics) sees, and leaves, for each byte some
/// value one of the racing accesses wrote: the undefined *values* the GPU
/// memory model gives racing programs, never undefined behaviour. Bytes are
/// not grouped into wider atomics, so a racing kernel's dword may be seen
/// torn, as on a GPU, whose copy engines give no wider guarantee either.
/// Elsewhere it falls back to relaxed atomic words through a buffer.
///
/// # Safety
/// Both ranges must be valid for `len` bytes (reads at `src`, writes at
/// `dst`) during the call, `dst` at or below `src` if they overlap, and
/// no Rust code may access them other than atomically meanwhile (a `&mut`
/// slice the caller owns exclusively is fine: nothing else touches it).
#[inline]
unsafe fn move_bytes(dst: usize, src: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract: both ranges valid for `len` bytes, a
    // forward copy right for any overlap allowed. `rep movsb` reads
    // `[rsi, rsi + rcx)` and writes `[rdi, rdi + rcx)` forward (the
    // direction flag is clear on entry to Rust inline assembly, as the
    // ABI requires), touches no stack and leaves the flags alone.
    unsafe {
        std::arch::asm!(
            "rep movsb",
            inout("rdi") dst => _,
            inout("rsi") src => _,
            inout("rcx") len => _,
            options(nostack, preserves_flags),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        const CHUNK: usize = 4096;
        let mut buffer = [0u8; CHUNK];
        let mut done = 0;
        while done < len {
            let n = CHUNK.min(len - done);
            // SAFETY: inside the caller's ranges, accessed atomically; in
            // order chunk by chunk, which is right for a forward overlap.
            unsafe {
                load_bytes(src + done, &mut buffer[..n]);
                store_bytes(dst + done, &buffer[..n]);
            }
            done += n;
        }
    }
}

/// Stores the 64-bit `value` in the `count` words from the 8-aligned host
/// address `dst`: on x86-64 one `rep stosq` (each word a single-copy atomic
/// store, as a relaxed `AtomicU64` store is: see [`move_bytes`] for why
/// the assembly is one), elsewhere relaxed atomic stores.
///
/// # Safety
/// `dst` must be 8-aligned and `[dst, dst + 8 * count)` valid for writes
/// and accessed only atomically during the call.
#[inline]
unsafe fn store_words(dst: usize, value: u64, count: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract: `count` aligned words valid for
    // writes. `rep stosq` stores `rax` to `[rdi, rdi + 8 * rcx)` forward
    // (direction flag clear on entry), touches no stack nor flags.
    unsafe {
        std::arch::asm!(
            "rep stosq",
            inout("rdi") dst => _,
            inout("rcx") count => _,
            in("rax") value,
            options(nostack, preserves_flags),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    for k in 0..count {
        // SAFETY: 8-aligned and inside the caller's range.
        unsafe { word(dst + 8 * k) }.store(value, Relaxed);
    }
}

/// [`load_bytes`], or [`move_bytes`] for a long transfer.
///
/// # Safety
/// As for [`load_bytes`].
#[inline]
unsafe fn load_bulk(start: usize, out: &mut [u8]) {
    if out.len() >= BULK_FROM {
        // SAFETY: the caller's range, and `out`, ours alone; they cannot
        // overlap (`out` is a Rust slice, never arena memory).
        unsafe { move_bytes(out.as_mut_ptr() as usize, start, out.len()) }
    } else {
        // SAFETY: forwarded.
        unsafe { load_bytes(start, out) }
    }
}

/// [`store_bytes`], or [`move_bytes`] for a long transfer.
///
/// # Safety
/// As for [`store_bytes`].
#[inline]
unsafe fn store_bulk(start: usize, data: &[u8]) {
    if data.len() >= BULK_FROM {
        // SAFETY: as for `load_bulk`.
        unsafe { move_bytes(start, data.as_ptr() as usize, data.len()) }
    } else {
        // SAFETY: forwarded.
        unsafe { store_bytes(start, data) }
    }
}

/// One side of a runtime's transfer ([`copy`], [`fill_u32`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Arena memory that passed [`Arena::check`] for the whole range.
    Device(u64),
    /// Host memory outside the arena that a client named: it may be wild,
    /// so it is checked ([`host::check`]) before it is touched.
    Host(u64),
}

impl Side {
    /// The side's first byte.
    pub fn addr(self) -> u64 {
        match self {
            Side::Device(a) | Side::Host(a) => a,
        }
    }

    /// Checks a host side's `len` bytes are mapped (writable when `write`).
    fn check(self, len: usize, write: bool) -> Result<(), MemError> {
        match self {
            Side::Device(_) => Ok(()),
            Side::Host(a) => host::check(a, len as u64, write),
        }
    }
}

/// Copies `len` bytes from `src` to `dst`; the ranges may overlap (as
/// `memmove`). A host side is first checked to be mapped, readable (and
/// writable for the destination), so a wild host pointer is
/// [`MemError::Unmapped`] before any byte moves, never a signal. The bytes
/// then move in one per-byte atomic copy (`move_bytes`: `rep movsb` on
/// x86-64), so a kernel racing on either range is an atomic race, not a
/// data race: this is how a runtime copies into, out of or within device
/// memory. A destination above an overlapping source goes backward, a
/// chunk at a time through a small buffer.
///
/// # Safety
/// A [`Side::Device`] range must be arena memory that passed
/// [`Arena::check`], and both ranges must stay mapped during the call (a
/// host range checked here and unmapped by another thread meanwhile would
/// still fault); no Rust code may access either range other than
/// atomically meanwhile.
pub unsafe fn copy(dst: Side, src: Side, len: usize) -> Result<(), MemError> {
    const CHUNK: usize = 4096;
    dst.check(len, true)?;
    src.check(len, false)?;
    let (dst, src) = (dst.addr() as usize, src.addr() as usize);
    // A destination above an overlapping source is copied from the end,
    // so no chunk overwrites source bytes not yet read.
    let backward = dst > src && dst - src < len;
    if !backward {
        // SAFETY: both ranges mapped with the needed permissions (checked
        // above or by the caller) and accessed only atomically or through
        // `move_bytes` (see its comment); a forward move is right for a
        // destination at or below an overlapping source, as `memmove`.
        unsafe { move_bytes(dst, src, len) };
        return Ok(());
    }
    let mut buffer = [0u8; CHUNK];
    let mut done = 0;
    while done < len {
        let n = CHUNK.min(len - done);
        let at = if backward { len - done - n } else { done };
        let chunk = &mut buffer[..n];
        // SAFETY: `[at, at + n)` lies inside both of the caller's ranges,
        // mapped with the needed permissions (checked above or by the
        // caller) and accessed only atomically.
        unsafe {
            load_bulk(src + at, chunk);
            store_bulk(dst + at, chunk);
        }
        done += n;
    }
    Ok(())
}

/// Stores `value` in the `count` 32-bit words from `dst`, with relaxed
/// atomic stores, word-wide where aligned (as [`copy`]); a host side is
/// checked first.
///
/// # Safety
/// `dst` must be 4-aligned, and its range as for [`copy`]'s destination.
pub unsafe fn fill_u32(dst: Side, value: u32, count: usize) -> Result<(), MemError> {
    let len = count.checked_mul(4).ok_or(MemError::Unmapped {
        addr: dst.addr(),
        len: u64::MAX,
        write: true,
    })?;
    dst.check(len, true)?;
    // SAFETY: forwarded from the caller; a host range was just checked.
    unsafe { fill_words(dst.addr() as usize, value, count) };
    Ok(())
}

/// Repeats `pattern` over the `len` bytes from `dst` (the pattern's first
/// byte at `dst`; a last partial pattern is cut short), through
/// `move_bytes` from a buffer of whole patterns, so a fill runs at copy
/// speed; a host side is checked first. An empty pattern writes nothing.
///
/// # Safety
/// `dst`'s range as for [`copy`]'s destination.
pub unsafe fn fill_pattern(dst: Side, pattern: &[u8], len: usize) -> Result<(), MemError> {
    const CHUNK: usize = 4096;
    if pattern.is_empty() || len == 0 {
        return Ok(());
    }
    dst.check(len, true)?;
    let whole = (CHUNK / pattern.len()).max(1);
    let chunk = pattern.repeat(whole);
    let dst = dst.addr() as usize;
    let mut done = 0;
    while done < len {
        let n = chunk.len().min(len - done);
        // SAFETY: `chunk` is our own memory, `[dst + done, + n)` inside the
        // caller's range (checked above or by the caller); the two never
        // overlap.
        unsafe { move_bytes(dst + done, chunk.as_ptr() as usize, n) };
        done += n;
    }
    Ok(())
}

/// [`fill_u32`] of checked memory at host address `dst`.
///
/// # Safety
/// `dst` must be 4-aligned, and `[dst, dst + 4 * count)` valid for reads
/// and writes and accessed only atomically during the call.
unsafe fn fill_words(dst: usize, value: u32, count: usize) {
    let end = dst + 4 * count;
    let mut at = dst;
    if !at.is_multiple_of(8) && at < end {
        // SAFETY: 4-aligned and inside the caller's range.
        unsafe { dword(at) }.store(value, Relaxed);
        at += 4;
    }
    let pair = u64::from(value) | u64::from(value) << 32;
    let words = (end - at) / 8;
    // SAFETY: `words` 8-aligned words from `at` lie inside the caller's
    // range.
    unsafe { store_words(at, pair, words) };
    at += 8 * words;
    if at < end {
        // SAFETY: the last 4 bytes of the caller's range, 4-aligned.
        unsafe { dword(at) }.store(value, Relaxed);
    }
}

/// Blocks at least this large give their pages back to the OS instead of
/// being cleared by stores.
const GIVE_BACK_FROM: u64 = 256 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_read_write_free() {
        let arena = Arena::new(1 << 20).unwrap();
        let a = arena.alloc(10).unwrap();
        let b = arena.alloc(1000).unwrap();
        assert_ne!(a, b);
        arena.write(b + 3, &[1, 2, 3, 4, 5, 6, 7]).unwrap();
        let mut out = [0u8; 7];
        arena.read(b + 3, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(
            arena.load_u32(b + 4).unwrap(),
            u32::from_le_bytes([2, 3, 4, 5])
        );
        arena.free(a).unwrap();
        assert_eq!(arena.free(a), Err(MemError::NotAllocated { addr: a }));
        assert_ne!(
            arena.alloc(16).unwrap(),
            a,
            "freed memory waits in quarantine"
        );
    }

    /// Bulk transfers split into bytes and words at every alignment and
    /// length and still land exactly where a byte-by-byte model says.
    #[test]
    fn bulk_transfers_at_every_alignment_match_a_byte_model() {
        let arena = Arena::new(1 << 20).unwrap();
        let base = arena.alloc(256).unwrap();
        let mut model = vec![0u8; 256];
        let mut seed = 0x9e37_79b9u32;
        for start in 0..17usize {
            for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 40, 100] {
                let data: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                        (seed >> 24) as u8
                    })
                    .collect();
                arena.write(base + start as u64, &data).unwrap();
                model[start..start + len].copy_from_slice(&data);
                let mut all = vec![0u8; 256];
                arena.read(base, &mut all).unwrap();
                assert_eq!(all, model, "write of {len} at +{start}");
                let mut part = vec![0u8; len];
                arena.read(base + start as u64 + 1, &mut part).unwrap();
                assert_eq!(part, model[start + 1..start + 1 + len], "read at +{start}");
            }
        }
    }

    /// `copy` is `memmove`: at every source and destination alignment,
    /// with the ranges overlapping either way and with more than one chunk
    /// of its bounce buffer, it leaves what `copy_within` leaves.
    #[test]
    fn copy_matches_copy_within_at_every_alignment_and_overlap() {
        let size = 4 * 4096;
        let arena = Arena::new(1 << 20).unwrap();
        let base = arena.alloc(size as u64).unwrap();
        let initial: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
        for (src, dst, len) in [
            (0, 1, 100),
            (1, 0, 100),
            (3, 8, 17),
            (8, 3, 17),
            (5, 5 + 4096, 4096),
            (7, 12, 2 * 4096 + 33),
            (12, 7, 2 * 4096 + 33),
            (0, 2 * 4096, 4096 + 64),
            (4, 0, 0),
        ] {
            for shift in 0..9 {
                let (src, dst) = (src + shift, dst + (shift * 3) % 8);
                arena.write(base, &initial).unwrap();
                let mut model = initial.clone();
                model.copy_within(src..src + len, dst);
                let (d, s) = (
                    Side::Device(base + dst as u64),
                    Side::Device(base + src as u64),
                );
                // SAFETY: both ranges lie in the live allocation at `base`,
                // touched only through the arena here.
                unsafe { copy(d, s, len) }.unwrap();
                let mut got = vec![0u8; size];
                arena.read(base, &mut got).unwrap();
                assert!(got == model, "copy of {len} from +{src} to +{dst}");
                // The same between host vectors, through the checked path.
                let mut host = initial.clone();
                let at = host.as_mut_ptr() as u64;
                let (d, s) = (Side::Host(at + dst as u64), Side::Host(at + src as u64));
                // SAFETY: `host` is not referenced during the call.
                unsafe { copy(d, s, len) }.unwrap();
                assert!(host == model, "host copy of {len} from +{src} to +{dst}");
            }
        }
    }

    #[test]
    fn fill_u32_stores_exactly_count_words() {
        let arena = Arena::new(1 << 20).unwrap();
        let base = arena.alloc(256).unwrap();
        for start in [0usize, 4, 8, 12] {
            for count in [0usize, 1, 2, 3, 8, 9, 40, 59] {
                arena.write(base, &[0xEE; 256]).unwrap();
                let at = Side::Device(base + start as u64);
                // SAFETY: inside the live allocation, 4-aligned.
                unsafe { fill_u32(at, 0x0403_0201, count) }.unwrap();
                let mut got = [0u8; 256];
                arena.read(base, &mut got).unwrap();
                let mut model = [0xEEu8; 256];
                for k in 0..count {
                    model[start + 4 * k..start + 4 * k + 4].copy_from_slice(&[1, 2, 3, 4]);
                }
                assert_eq!(got, model, "{count} words at +{start}");
                let mut host = [0xEEu8; 256];
                let at = Side::Host(host.as_mut_ptr() as u64 + start as u64);
                // SAFETY: `host` is not referenced during the call.
                unsafe { fill_u32(at, 0x0403_0201, count) }.unwrap();
                assert_eq!(host, model, "{count} host words at +{start}");
            }
        }
    }

    /// `fill_pattern` repeats its pattern from the first byte, across its
    /// buffer's chunks, cutting the last one short, on both sides.
    #[test]
    fn fill_pattern_repeats_the_pattern_exactly() {
        let size = 3 * 4096;
        let arena = Arena::new(1 << 20).unwrap();
        let base = arena.alloc(size as u64).unwrap();
        for pattern in [&[7u8][..], &[1, 2], &[1, 2, 3], &[9, 8, 7, 6, 5, 4, 3, 2]] {
            for (start, len) in [
                (0usize, 0usize),
                (1, 5),
                (3, 100),
                (0, 4096),
                (5, 2 * 4096 + 7),
            ] {
                arena.write(base, &vec![0xEE; size]).unwrap();
                let mut model = vec![0xEEu8; size];
                for k in 0..len {
                    model[start + k] = pattern[k % pattern.len()];
                }
                // SAFETY: inside the live allocation at `base`.
                unsafe { fill_pattern(Side::Device(base + start as u64), pattern, len) }.unwrap();
                let mut got = vec![0u8; size];
                arena.read(base, &mut got).unwrap();
                assert!(got == model, "{pattern:?} over {len} at +{start}");
                let mut host = vec![0xEEu8; size];
                let at = Side::Host(host.as_mut_ptr() as u64 + start as u64);
                // SAFETY: `host` is not referenced during the call.
                unsafe { fill_pattern(at, pattern, len) }.unwrap();
                assert!(host == model, "host {pattern:?} over {len} at +{start}");
            }
        }
    }

    #[test]
    fn wild_host_sides_are_errors_and_leave_the_device_side_intact() {
        let arena = Arena::new(1 << 20).unwrap();
        let buffer = arena.alloc(1 << 16).unwrap();
        arena.write(buffer, &[9; 64]).unwrap();
        for wild in [0x1000u64, 0xdea_dbee_f000] {
            for len in [4usize, 1 << 16] {
                let (dev, host) = (Side::Device(buffer), Side::Host(wild));
                // SAFETY: the device side is a live allocation; the host
                // side is not mapped.
                let into = unsafe { copy(dev, host, len) };
                assert!(matches!(into, Err(MemError::Unmapped { write: false, .. })));
                // SAFETY: as above.
                let out = unsafe { copy(host, dev, len) };
                assert!(matches!(out, Err(MemError::Unmapped { write: true, .. })));
                // SAFETY: as above.
                let fill = unsafe { fill_u32(host, 1, len / 4) };
                assert!(matches!(fill, Err(MemError::Unmapped { addr, .. }) if addr == wild));
            }
        }
        let mut kept = [0u8; 64];
        arena.read(buffer, &mut kept).unwrap();
        assert_eq!(kept, [9; 64]);
    }

    /// First fit with the `dense` shortcut places every allocation where a
    /// scan of every block from the first offset would: a seeded mix of
    /// sizes, frees in any order and a small quarantine (so holes open
    /// below and above the shortcut), each placement checked against the
    /// full scan.
    #[test]
    fn first_fit_shortcut_places_as_a_full_scan() {
        // Red zones only, so that allocations pack and holes matter.
        let options = ArenaOptions {
            windows: 0,
            ..ArenaOptions::default()
        };
        let arena = Arena::with_options(1 << 26, options).unwrap();
        arena.blocks().quarantine_limit = 64 << 10;
        let full_scan = |span: u64| {
            let blocks = arena.blocks();
            let mut cursor = FIRST;
            for (&start, b) in &blocks.map {
                if cursor + span <= start {
                    return cursor;
                }
                cursor = cursor.max(start + b.span);
            }
            cursor
        };
        let mut live = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for step in 0..3000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if seed.is_multiple_of(3) && !live.is_empty() {
                let a = live.swap_remove((seed >> 8) as usize % live.len());
                arena.free(a).unwrap();
                continue;
            }
            let len = [1, 200, 256, 4096, 9000, 70_000][(seed >> 20) as usize % 6];
            let span = (len as u64).next_multiple_of(GRANULE) + blocks::red_zone(len as u64);
            let want = arena.base + full_scan(span);
            let got = arena.alloc(len as u64).unwrap();
            assert_eq!(got, want, "step {step}: {len} bytes");
            live.push(got);
        }
    }

    /// A range allowed once is allowed again from this thread's cache
    /// (`allowed`) only while the shadow is unchanged: the cache widens a
    /// streaming wave's rows to the pages around them and a small
    /// allocation's range to its bytes, never past them, and a free, a
    /// new allocation or a change of access makes it ask the shadow again.
    #[test]
    fn allowed_ranges_are_forgotten_when_the_shadow_changes() {
        let arena = Arena::new(1 << 26).unwrap();
        let big = arena.alloc(1 << 20).unwrap();
        let small = arena.alloc(20).unwrap();
        let memory = Memory::new(&arena, None);
        // The second range of each pair is inside the widened first.
        assert!(memory.window(big + 4096, big + 4224, false).is_some());
        assert!(memory.window(big + 8192, big + 8320, true).is_some());
        assert!(memory.window(big + 8320, big + 8448, false).is_some());
        assert!(memory.window(small + 4, small + 8, false).is_some());
        assert!(memory.window(small, small + 20, false).is_some());
        // Never past the allocation's bytes, cached or not.
        assert!(memory.window(small + 16, small + 24, false).is_none());
        assert!(memory
            .window(big + (1 << 20) - 64, big + (1 << 20) + 4, false)
            .is_none());
        arena.protect(big, 1 << 20, Access::ReadOnly).unwrap();
        assert!(memory.window(big + 8192, big + 8320, true).is_none());
        assert!(memory.window(big + 8192, big + 8320, false).is_some());
        arena.free(small).unwrap();
        assert!(memory.window(small + 4, small + 8, false).is_none());
        let other = arena.alloc(64).unwrap();
        assert!(memory.window(big + 4096, big + 4224, false).is_some());
        arena.free(big).unwrap();
        assert!(memory.window(big + 4096, big + 4224, false).is_none());
        assert!(memory.window(other, other + 64, true).is_some());
    }

    /// A range checked at an allocation's unaligned end is widened over
    /// the allocation's whole pages before it too, so the waves at its end
    /// do not each ask the shadow; and never past its last byte.
    #[test]
    fn a_range_at_an_unaligned_end_reaches_into_the_whole_pages() {
        let arena = Arena::new(1 << 26).unwrap();
        let len = 5 * 4096 + 100;
        let a = arena.alloc(len).unwrap();
        let memory = Memory::new(&arena, None);
        let end = a + len;
        assert!(memory.window(end - 64, end, false).is_some());
        let (id, changes) = (&arena as *const Arena as usize, arena.shadow.changes());
        let middle = a.div_ceil(4096) * 4096 + 4096 - arena.base;
        assert!(allowed::allows(id, changes, middle, 4096, false));
        assert!(!allowed::allows(id, changes, end - arena.base, 1, false));
    }

    /// Every allocation sits in a window of its own: writes at any distance
    /// up to 4 GiB past its end (or before its start) are refused and
    /// blamed on it, and its neighbours are never written.
    #[test]
    fn windows_refuse_overflows_at_any_distance_below_4_gib() {
        let arena = Arena::new(1 << 26).unwrap();
        assert!(arena.windows > 0, "the test process has room for windows");
        let len = 4096u64;
        let a = arena.alloc_with(AllocSpec::new(len, "first")).unwrap();
        let b = arena
            .alloc_with(AllocSpec::new(4 << 20, "neighbour"))
            .unwrap();
        assert!(a - arena.base() >= WINDOW_GAP && b - (a + len) > 4 << 30);
        arena.write(b, &[0x5a; 64]).unwrap();
        let memory = Memory::new(&arena, None);
        // Geometrically spaced distances from 0 to 4 GiB (1200 of them),
        // plus the last granule before 4 GiB.
        let mut distances: Vec<u64> = (0..1200).map(|k| (1.0185f64.powi(k) as u64) - 1).collect();
        distances.extend([4 << 30, (4 << 30) - 4]);
        for d in distances.into_iter().filter(|&d| d <= 4 << 30) {
            let at = a + len + d;
            assert!(
                memory.store_dwords(at, &[0xdead]).is_err(),
                "+{d} was written"
            );
            // Blamed on `a` unless clearly nearer the neighbour's start
            // (the last fifth of the gap).
            let (text, hit) = arena.explain(at, 4, true);
            let culprit = if d <= 3 << 30 {
                a
            } else {
                hit.as_ref().map_or(0, |h| h.base)
            };
            assert!([a, b].contains(&culprit), "+{d}: {text}");
            assert_eq!(hit.map(|h| h.base), Some(culprit), "+{d}: {text}");
            if d <= a - arena.base() - 4 {
                assert!(
                    memory.store_dwords(a - 4 - d, &[1]).is_err(),
                    "-{d} was written"
                );
            }
        }
        let mut kept = [0u8; 64];
        arena.read(b, &mut kept).unwrap();
        assert_eq!(kept, [0x5a; 64], "the neighbour is unchanged");
        assert!(arena.capacity() < arena.space());
        assert_eq!(arena.used(), len + (4 << 20));
    }

    /// Past the windows an allocation gets a red zone, and a report of an
    /// overflow of it says so.
    #[test]
    fn allocations_beyond_the_windows_get_red_zones_and_say_so() {
        let options = ArenaOptions {
            windows: 2,
            ..ArenaOptions::default()
        };
        let arena = Arena::with_options(1 << 24, options).unwrap();
        let first = arena.alloc(100).unwrap();
        let second = arena.alloc(100).unwrap();
        let third = arena.alloc(100).unwrap();
        assert!(second - first > 4 << 30 && third - second > 4 << 30);
        let fourth = arena.alloc(100).unwrap();
        assert!(fourth - third < 1 << 20, "packed after the windows");
        let (windowed, _) = arena.explain(first + 200, 4, true);
        assert!(!windowed.contains("guard"), "{windowed}");
        let (packed, _) = arena.explain(third + 200, 4, true);
        assert!(packed.contains("not a window of its own"), "{packed}");
        // Capacity is memory, not address space.
        assert!(matches!(
            arena.alloc(1 << 24),
            Err(MemError::Exhausted { .. })
        ));
    }

    /// A dispatch whose workgroups are already running when its memory is
    /// freed and given to a new owner (quarantine off) is refused on the
    /// new owner's memory from then on: staleness is asked per access.
    #[test]
    fn staleness_is_decided_at_every_access() {
        let options = ArenaOptions {
            quarantine_bytes: 0,
            ..ArenaOptions::default()
        };
        let arena = Arena::with_options(1 << 22, options).unwrap();
        let a = arena.alloc(512).unwrap();
        let running = Memory::new(&arena, Some(arena.serial()));
        running.store_dwords(a, &[1]).unwrap();
        assert!(running.window(a, a + 4, true).is_some());
        arena.free(a).unwrap();
        let b = arena.alloc(512).unwrap();
        assert_eq!(b, a, "the memory is reused at once");
        assert_eq!(
            running.store_dwords(b, &[2]),
            Err(MemError::Stale { addr: b, len: 4 })
        );
        assert!(running.window(b, b + 4, true).is_none());
        assert_eq!(running.stale_epoch(), Some(arena.serial() - 1));
        assert_eq!(
            arena.load_u32(b).unwrap(),
            0,
            "the new owner is never written"
        );
    }

    #[test]
    fn reuse_after_quarantine_is_zeroed_and_marks_the_new_owner() {
        let arena = Arena::new(1 << 22).unwrap();
        arena.blocks().quarantine_limit = 0;
        let a = arena.alloc(512).unwrap();
        assert!(arena.store_u32(a + 600, 1).is_err(), "in the red zone");
        arena.store_u32(a + 100, 7).unwrap();
        let queued = arena.serial();
        arena.free(a).unwrap();
        let b = arena.alloc(512).unwrap();
        assert_eq!(b, a, "no quarantine: first fit reuses the hole");
        assert_eq!(
            arena.load_u32(b + 100).unwrap(),
            0,
            "a reused block starts zeroed"
        );
        // A dispatch queued before the reuse is refused on the new owner…
        let stale = Memory::new(&arena, Some(queued));
        assert_eq!(stale.load_u32(b), Err(MemError::Stale { addr: b, len: 4 }));
        // …one queued after it is not, nor one that runs as it is queued.
        assert!(Memory::new(&arena, Some(arena.serial()))
            .load_u32(b)
            .is_ok());
        assert!(Memory::new(&arena, None).load_u32(b).is_ok());
        // Memory that was fresh is not stale even for an old dispatch.
        let fresh = arena.alloc(64).unwrap();
        assert!(Memory::new(&arena, Some(queued)).load_u32(fresh).is_ok());
    }

    /// Kernels reach exactly the bytes of live allocations, as their access
    /// allows; the host reaches every live byte.
    #[test]
    fn confinement_is_byte_exact_and_honours_access() {
        let arena = Arena::new(1 << 22).unwrap();
        let k = Memory::new(&arena, None);
        let a = arena.alloc_with(AllocSpec::new(1001, "test")).unwrap();
        let mut one = [0u8; 1];
        assert!(k.read(a + 1000, &mut one).is_ok(), "the last byte");
        assert!(k.read(a + 1001, &mut one).is_err(), "one past the end");
        assert!(k.read(a - 1, &mut one).is_err(), "one before the start");
        assert!(k.load_dwords(a + 996, &mut [0; 1]).is_ok());
        assert!(
            k.load_dwords(a + 998, &mut [0; 1]).is_err(),
            "straddles the end"
        );
        assert!(
            k.load_dwords(a, &mut [0; 250]).is_ok(),
            "a whole-buffer load"
        );
        let ro = arena
            .alloc_with(AllocSpec::new(64, "test").access(Access::ReadOnly))
            .unwrap();
        assert!(k.load_u32(ro).is_ok());
        assert!(matches!(
            k.write(ro, &[1]),
            Err(MemError::Refused { write: true, .. })
        ));
        assert!(
            arena.write(ro, &[1]).is_ok(),
            "the host writes read-only memory"
        );
        let private = arena
            .alloc_with(AllocSpec::new(64, "test").access(Access::HostOnly))
            .unwrap();
        assert!(k.load_u32(private).is_err());
        assert!(arena.load_u32(private).is_ok());
        let empty = arena.alloc_with(AllocSpec::new(0, "test")).unwrap();
        assert!(
            k.read(empty, &mut one).is_err(),
            "a zero-byte allocation has no bytes"
        );
        arena.free(a).unwrap();
        assert!(k.read(a, &mut one).is_err(), "freed");
        assert!(arena.read(a, &mut one).is_err(), "freed, for the host too");
    }

    #[test]
    fn refused_accesses_are_explained_by_the_allocation_they_missed() {
        let arena = Arena::new(1 << 22).unwrap();
        let a = arena.alloc_with(AllocSpec::new(4096, "hipMalloc")).unwrap();
        let (past, hit) = arena.explain(a + 4096, 4, true);
        assert!(
            past.contains("0 bytes past the end of a 4096-byte allocation"),
            "{past}"
        );
        assert!(past.contains("hipMalloc"), "{past}");
        assert_eq!(hit.map(|h| (h.base, h.len)), Some((a, 4096)));
        let (far, _) = arena.explain(a + 8192, 4, true);
        assert!(far.contains("4096 bytes past the end"), "{far}");
        let (before, _) = arena.explain(a - 4, 4, false);
        assert!(before.contains("0 bytes before the start"), "{before}");
        let (straddle, _) = arena.explain(a + 4094, 4, false);
        assert!(straddle.contains("run 2 bytes past the end"), "{straddle}");
        arena.free_by(a, "hipFree").unwrap();
        let (freed, _) = arena.explain(a + 16, 4, false);
        assert!(freed.contains("freed by hipFree"), "{freed}");
        let (wild, hit) = arena.explain(0x1000, 4, false);
        assert!(
            wild.contains("outside device memory") && hit.is_none(),
            "{wild}"
        );
    }

    /// An access past one allocation's end is blamed on it through its red
    /// zone and most of the gap, and on the next allocation only when it is
    /// clearly nearer that one's start; at both ends of several sizes.
    #[test]
    fn accesses_between_allocations_are_blamed_on_the_nearer_culprit() {
        for len in [1u64, 100, 4096, 65536, 1 << 20] {
            let arena = Arena::new(1 << 26).unwrap();
            let a = arena.alloc_with(AllocSpec::new(len, "first")).unwrap();
            let b = arena.alloc_with(AllocSpec::new(len, "second")).unwrap();
            let end = a + len;
            assert!(b > end, "allocations are separated");
            let gap = b - end;
            for past in [0, 4, len.min(4096), gap / 2, gap * 3 / 4] {
                let (text, hit) = arena.explain(end + past, 4, true);
                assert_eq!(hit.map(|h| h.base), Some(a), "{len}: +{past}: {text}");
                assert!(
                    text.contains(&format!("{past} bytes past the end")),
                    "{text}"
                );
            }
            for before in [4u64, 64, gap / 8] {
                let (text, hit) = arena.explain(b - before, 4, false);
                assert_eq!(hit.map(|h| h.base), Some(b), "{len}: -{before}: {text}");
                assert!(text.contains("before the start"), "{text}");
            }
        }
    }

    #[test]
    fn out_of_range_is_an_error() {
        let arena = Arena::new(4096).unwrap();
        assert!(arena.load_u32(0).is_err());
        assert!(arena.load_u32(arena.base() + 4094).is_err());
        assert!(arena.store_u32(u64::MAX - 1, 0).is_err());
        assert!(matches!(
            arena.alloc(1 << 20),
            Err(MemError::Exhausted { .. })
        ));
    }
}
