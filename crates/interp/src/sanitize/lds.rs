//! The LDS shadow of one workgroup: a "written" bit per byte (initcheck)
//! and, per byte, the last plain write and the waves that read it or used
//! it atomically in the current barrier interval (racecheck).
//!
//! A worker keeps one shadow and reuses it for each workgroup it runs. The
//! racecheck state is stamped with a barrier-interval number that grows
//! over the worker's life (a new workgroup and each released barrier start
//! a new interval), so a stamp from an earlier interval simply does not
//! count and nothing is cleared between workgroups. Two accesses conflict
//! when they are in the same interval, by different waves, at least one a
//! write, not both atomic: whichever order the scheduler ran them in, the
//! later one finds the earlier one's stamp.

use crate::checks::Checks;
use crate::trap::{Earlier, Hazard, Report, Space, Use};

/// Waves per workgroup racecheck can tell apart (readers are a bitset).
/// The largest workgroup, 1024 work-items at wave32, has 32.
pub const MAX_WAVES: usize = 64;

/// One access: the wave and the instruction slot it ran.
#[derive(Clone, Copy, Default)]
struct Who {
    wave: u32,
    slot: u32,
}

/// The waves that made one kind of access to a byte in one interval.
#[derive(Clone, Copy, Default)]
struct Waves {
    /// The interval `bits` belong to.
    interval: u32,
    /// Waves, as bits.
    bits: u64,
    /// The interval's first wave, and its first of another wave: for any
    /// wave asking, one of the two is a different wave whenever `bits` has
    /// another wave's bit.
    first: Who,
    other: Who,
}

impl Waves {
    fn add(&mut self, now: u32, who: Who) {
        if self.interval != now {
            *self = Waves {
                interval: now,
                bits: 0,
                first: who,
                other: who,
            };
        } else if self.bits & !(1u64 << self.first.wave) == 0 && self.first.wave != who.wave {
            self.other = who;
        }
        self.bits |= 1u64 << who.wave;
    }

    /// An access of this interval by a wave other than `wave`.
    fn other_than(&self, now: u32, wave: u32) -> Option<Who> {
        if self.interval != now || self.bits & !(1u64 << wave) == 0 {
            return None;
        }
        Some(if self.first.wave != wave {
            self.first
        } else {
            self.other
        })
    }
}

/// Racecheck state of one LDS byte.
#[derive(Clone, Copy, Default)]
struct ByteState {
    /// Interval of the last plain write (0: none since the worker began).
    write_interval: u32,
    writer: Who,
    /// Plain reads of the current interval.
    readers: Waves,
    /// Atomics of the current interval.
    atomics: Waves,
}

/// A worker's LDS shadow (empty until a check needs it).
#[derive(Default)]
pub struct LdsShadow {
    /// LDS bytes of the current workgroup.
    len: usize,
    init: bool,
    race: bool,
    /// initcheck: bit `b % 64` of word `b / 64` is set once byte `b` was
    /// written.
    written: Vec<u64>,
    /// racecheck: per byte (at least `len` of them).
    bytes: Vec<ByteState>,
    /// The current barrier interval (see the module doc).
    interval: u32,
}

impl LdsShadow {
    /// Starts a workgroup with `len` bytes of LDS: every byte unwritten,
    /// a new barrier interval.
    pub fn begin(&mut self, len: usize, checks: Checks) {
        self.len = len;
        self.init = checks.init;
        self.race = checks.race;
        if self.init {
            self.written.clear();
            self.written.resize(len.div_ceil(64), 0);
        }
        if self.race {
            if self.bytes.len() < len {
                self.bytes.resize(len, ByteState::default());
            }
            self.next_interval();
        }
    }

    fn next_interval(&mut self) {
        if self.interval == u32::MAX {
            // Stamps would repeat: forget them all (once per 4 billion).
            self.bytes.fill(ByteState::default());
            self.interval = 0;
        }
        self.interval += 1;
    }

    /// The workgroup barrier was released.
    pub fn barrier(&mut self) {
        if self.race {
            self.next_interval();
        }
    }

    /// The current barrier interval (also stamps the workgroup's global
    /// accesses).
    pub fn interval(&self) -> u32 {
        self.interval
    }

    /// Checks and records an access by `wave` at instruction `slot` of
    /// `len` bytes at offset `addr`. One not wholly inside LDS touches
    /// nothing and is not checked.
    pub fn access(
        &mut self,
        wave: u32,
        slot: u32,
        lane: Option<usize>,
        u: Use,
        addr: u64,
        len: u64,
    ) -> Result<(), Box<Report>> {
        let Some(end) = addr.checked_add(len).filter(|&e| e <= self.len as u64) else {
            return Ok(());
        };
        let range = addr as usize..end as usize;
        if self.init {
            if u != Use::Write {
                if let Some(first) = range.clone().find(|&b| !self.is_written(b)) {
                    return Err(Box::new(Report::Uninitialized {
                        space: Space::Lds,
                        lane,
                        addr,
                        len,
                        first: first as u64,
                    }));
                }
            }
            if u != Use::Read {
                range
                    .clone()
                    .for_each(|b| self.written[b / 64] |= 1 << (b % 64));
            }
        }
        if self.race {
            let who = Who { wave, slot };
            for b in range {
                if let Some((hazard, earlier, atomic)) = self.race_at(b, who, u) {
                    return Err(Box::new(Report::Race {
                        hazard,
                        space: Space::Lds,
                        lane,
                        addr,
                        len,
                        first: b as u64,
                        earlier: Earlier {
                            group: 0,
                            wave: earlier.wave,
                            slot: earlier.slot,
                        },
                        atomic,
                    }));
                }
            }
        }
        Ok(())
    }

    fn is_written(&self, b: usize) -> bool {
        self.written[b / 64] >> (b % 64) & 1 != 0
    }

    /// Checks byte `b` against the access of `who`, then records it: the
    /// hazard, the earlier access it conflicts with and whether one of the
    /// two is atomic, if any. An atomic conflicts with another wave's plain
    /// read or write of the interval (it writes; the plain access is not
    /// atomic), never with another atomic.
    fn race_at(&mut self, b: usize, who: Who, u: Use) -> Option<(Hazard, Who, bool)> {
        let now = self.interval;
        let s = &mut self.bytes[b];
        let writes = u != Use::Read;
        let hazard_after_write = if writes {
            Hazard::WriteAfterWrite
        } else {
            Hazard::ReadAfterWrite
        };
        if s.write_interval == now && s.writer.wave != who.wave {
            return Some((hazard_after_write, s.writer, u == Use::Atomic));
        }
        if writes {
            if let Some(reader) = s.readers.other_than(now, who.wave) {
                return Some((Hazard::WriteAfterRead, reader, u == Use::Atomic));
            }
        }
        if u != Use::Atomic {
            if let Some(atomic) = s.atomics.other_than(now, who.wave) {
                return Some((hazard_after_write, atomic, true));
            }
        }
        match u {
            Use::Read => s.readers.add(now, who),
            Use::Write => {
                s.write_interval = now;
                s.writer = who;
            }
            Use::Atomic => s.atomics.add(now, who),
        }
        None
    }
}
