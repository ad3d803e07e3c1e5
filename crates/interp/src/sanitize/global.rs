//! Racecheck for global memory: one table per dispatch, shared by the
//! worker threads, keyed by dword address.
//!
//! Each tracked dword remembers up to two plain writes and two plain reads
//! (who: workgroup, wave, instruction, barrier interval, grid interval, and
//! which of its 4 bytes). An access conflicts with a remembered one when
//! they share a byte, at least one is a write, and nothing orders them:
//! both between the same pair of grid barriers, and either in different
//! workgroups or in different waves of one workgroup between the same pair
//! of workgroup barriers. Atomics are remembered too (two per dword): an
//! atomic conflicts with an unordered plain access to the same bytes (a
//! plain read may see a torn or stale value, a plain write may be lost),
//! never with another atomic.
//!
//! Limits, by design:
//! - Ordering through memory is not modelled: a workgroup that publishes
//!   data with a fence and an atomic flag another workgroup waits on (the
//!   "last block" reduction, a producer/consumer queue) has its handoff
//!   reported as a race. Run such kernels without racecheck.
//! - Two writes and two reads are remembered per dword and grid interval;
//!   with more distinct waves touching one dword, a hazard with one that
//!   was forgotten can go unreported (never the reverse: every report is
//!   a real pair of unordered accesses).
//! - At most [`TRACKED_DWORDS`] distinct dwords are tracked per dispatch
//!   (bounding the table to about 160 MiB); accesses to further dwords are
//!   not checked, and a warning says so on stderr once per dispatch.
//! - Each checked lane takes a lock: racecheck is slow.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::trap::{Earlier, Hazard, Report, Space, Use};

/// Whether one of two conflicting accesses is atomic (see [`Report::Race`]).
type Atomic = bool;

/// Distinct dwords one dispatch's racecheck tracks at most.
pub const TRACKED_DWORDS: usize = 1 << 21;

/// Lock shards of the table (a power of two).
const SHARDS: usize = 64;

/// One plain access to a dword.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Linear workgroup index.
    pub group: u32,
    /// Instruction slot.
    pub slot: u32,
    /// Workgroup barrier interval (a number unique within the worker that
    /// ran the workgroup, so compared only within one workgroup).
    pub interval: u32,
    /// Grid barriers the workgroup had passed.
    pub grid: u16,
    pub wave: u8,
    /// Which of the dword's bytes (bits 0..4); 0 marks an empty stamp.
    pub bytes: u8,
}

impl Stamp {
    /// Whether nothing orders the two accesses.
    fn unordered(&self, other: &Stamp) -> bool {
        self.grid == other.grid
            && (self.group != other.group
                || (self.wave != other.wave && self.interval == other.interval))
    }

    /// Whether `self` (remembered) conflicts with `other`'s bytes.
    fn conflicts(&self, other: &Stamp) -> bool {
        self.bytes & other.bytes != 0 && self.unordered(other)
    }

    fn same_wave_and_interval(&self, other: &Stamp) -> bool {
        self.group == other.group
            && self.wave == other.wave
            && self.interval == other.interval
            && self.grid == other.grid
    }

    fn earlier(&self) -> Earlier {
        Earlier {
            group: self.group,
            wave: self.wave as u32,
            slot: self.slot,
        }
    }
}

/// What is remembered of one dword.
#[derive(Clone, Copy, Default)]
struct Entry {
    writes: [Stamp; 2],
    reads: [Stamp; 2],
    atomics: [Stamp; 2],
}

/// Remembers `new` in one of two slots: merged into the same wave's stamp
/// of this interval, else in an empty slot, one from an earlier grid
/// interval, or one ordered before `new` whose bytes `new` covers (every
/// later access unordered with that one is unordered with `new` too), else
/// over the second.
fn remember(slots: &mut [Stamp; 2], new: Stamp) {
    if let Some(s) = slots
        .iter_mut()
        .find(|s| s.bytes != 0 && s.same_wave_and_interval(&new))
    {
        s.bytes |= new.bytes;
        s.slot = new.slot;
        return;
    }
    let free = slots.iter().position(|s| {
        s.bytes == 0 || s.grid != new.grid || (s.bytes & !new.bytes == 0 && !s.unordered(&new))
    });
    slots[free.unwrap_or(1)] = new;
}

/// A multiplicative hash of dword addresses (the default SipHash is slow
/// and its collision resistance is not needed here).
#[derive(Default)]
struct DwordHasher(u64);

impl Hasher for DwordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Shard = HashMap<u64, Entry, BuildHasherDefault<DwordHasher>>;

/// The racecheck table of one dispatch.
pub struct GlobalRace {
    shards: Box<[Mutex<Shard>]>,
    tracked: AtomicUsize,
    limit: usize,
    warned: AtomicBool,
}

impl Default for GlobalRace {
    fn default() -> Self {
        Self::new()
    }
}

impl GlobalRace {
    pub fn new() -> GlobalRace {
        Self::with_limit(TRACKED_DWORDS)
    }

    /// A table tracking at most `limit` distinct dwords.
    pub fn with_limit(limit: usize) -> GlobalRace {
        GlobalRace {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            tracked: AtomicUsize::new(0),
            limit,
            warned: AtomicBool::new(false),
        }
    }

    /// Checks and records a plain access of `len` bytes at `addr` by
    /// `who` (its `bytes` are filled in per dword).
    pub fn access(
        &self,
        who: Stamp,
        lane: Option<usize>,
        u: Use,
        addr: u64,
        len: u64,
    ) -> Result<(), Box<Report>> {
        if len == 0 {
            return Ok(());
        }
        let end = addr.saturating_add(len);
        let mut dword = addr >> 2;
        while dword <= (end - 1) >> 2 {
            let lo = (dword << 2).max(addr);
            let hi = ((dword + 1) << 2).min(end);
            let bytes = ((1u32 << (hi - lo)) - 1) << (lo & 3);
            let stamp = Stamp {
                bytes: bytes as u8,
                ..who
            };
            if let Some((hazard, earlier, atomic)) = self.access_dword(dword, stamp, u) {
                let shared = earlier.bytes & stamp.bytes;
                return Err(Box::new(Report::Race {
                    hazard,
                    space: Space::Global,
                    lane,
                    addr,
                    len,
                    first: (dword << 2) + shared.trailing_zeros() as u64,
                    earlier: earlier.earlier(),
                    atomic,
                }));
            }
            dword += 1;
        }
        Ok(())
    }

    /// Checks `stamp` against dword `dword`'s entry and records it; a
    /// conflict comes back with the earlier access and whether one of the
    /// two is atomic.
    fn access_dword(&self, dword: u64, stamp: Stamp, u: Use) -> Option<(Hazard, Stamp, Atomic)> {
        let shard = &self.shards[(dword >> 4) as usize % SHARDS];
        let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
        let entry = match map.get_mut(&dword) {
            Some(e) => e,
            None => {
                if !self.reserve() {
                    return None;
                }
                map.entry(dword).or_default()
            }
        };
        let find = |slots: &[Stamp; 2]| slots.iter().find(|s| s.conflicts(&stamp)).copied();
        // An atomic read-modify-write writes: it meets plain writes and
        // reads as a write would, and atomics not at all.
        let (against_atomics, hazard_after_write) = match u {
            Use::Read => (true, Hazard::ReadAfterWrite),
            Use::Write => (true, Hazard::WriteAfterWrite),
            Use::Atomic => (false, Hazard::WriteAfterWrite),
        };
        let atomic = u == Use::Atomic;
        if let Some(w) = find(&entry.writes) {
            return Some((hazard_after_write, w, atomic));
        }
        if u != Use::Read {
            if let Some(r) = find(&entry.reads) {
                return Some((Hazard::WriteAfterRead, r, atomic));
            }
        }
        if against_atomics {
            if let Some(a) = find(&entry.atomics) {
                return Some((hazard_after_write, a, true));
            }
        }
        match u {
            Use::Read => remember(&mut entry.reads, stamp),
            Use::Write => remember(&mut entry.writes, stamp),
            Use::Atomic => remember(&mut entry.atomics, stamp),
        }
        None
    }

    /// Counts one more tracked dword; false (with a warning, once) when
    /// the limit is reached.
    fn reserve(&self) -> bool {
        if self.tracked.fetch_add(1, Ordering::Relaxed) < self.limit {
            return true;
        }
        self.tracked.fetch_sub(1, Ordering::Relaxed);
        if !self.warned.swap(true, Ordering::Relaxed) {
            eprintln!(
                "softgpu racecheck: this dispatch touched more than {} distinct dwords of global memory; accesses to further addresses are not checked",
                self.limit
            );
        }
        false
    }

    /// Whether some access went unchecked for the limit.
    #[cfg(test)]
    pub fn saturated(&self) -> bool {
        self.warned.load(Ordering::Relaxed)
    }
}
