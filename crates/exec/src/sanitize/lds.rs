//! The LDS shadow of one workgroup: a "written" bit per byte (initcheck)
//! and, per byte, the last plain write and the waves that read it in the
//! current barrier interval (racecheck).
//!
//! A worker keeps one shadow and reuses it for each workgroup it runs. The
//! racecheck state is stamped with a barrier-interval number that grows
//! over the worker's life (a new workgroup and each released barrier start
//! a new interval), so a stamp from an earlier interval simply does not
//! count and nothing is cleared between workgroups. Two accesses conflict
//! when they are in the same interval, by different waves, at least one a
//! write, neither atomic: whichever order the scheduler ran them in, the
//! later one finds the earlier one's stamp.

use super::{Earlier, Hazard, Report, Space, Use};
use crate::checks::Checks;

/// Waves per workgroup racecheck can tell apart (readers are a bitset).
/// The largest workgroup, 1024 work-items at wave32, has 32.
pub const MAX_WAVES: usize = 64;

/// One access: the wave and the instruction slot it ran.
#[derive(Clone, Copy, Default)]
struct Who {
    wave: u32,
    slot: u32,
}

/// Racecheck state of one LDS byte.
#[derive(Clone, Copy, Default)]
struct ByteState {
    /// Interval of the last plain write (0: none since the worker began).
    write_interval: u32,
    writer: Who,
    /// Interval `readers` belong to.
    read_interval: u32,
    /// Waves that read the byte in `read_interval`, as bits.
    readers: u64,
    /// The interval's first reader, and its first reader of another wave:
    /// for any writing wave, one of the two is a different wave whenever
    /// `readers` has another wave's bit.
    first_reader: Who,
    other_reader: Who,
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
    pub(crate) fn begin(&mut self, len: usize, checks: Checks) {
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
    pub(crate) fn barrier(&mut self) {
        if self.race {
            self.next_interval();
        }
    }

    /// The current barrier interval (also stamps the workgroup's global
    /// accesses).
    pub(crate) fn interval(&self) -> u32 {
        self.interval
    }

    /// Checks and records an access by `wave` at instruction `slot` of
    /// `len` bytes at offset `addr`. One not wholly inside LDS touches
    /// nothing and is not checked.
    pub(crate) fn access(
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
        if self.race && u != Use::Atomic {
            let who = Who { wave, slot };
            for b in range {
                if let Some((hazard, earlier)) = self.race_at(b, who, u == Use::Write) {
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
                        atomic: false,
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
    /// hazard and the earlier access it conflicts with, if any.
    fn race_at(&mut self, b: usize, who: Who, write: bool) -> Option<(Hazard, Who)> {
        let now = self.interval;
        let s = &mut self.bytes[b];
        let bit = 1u64 << who.wave;
        if s.write_interval == now && s.writer.wave != who.wave {
            let hazard = if write {
                Hazard::WriteAfterWrite
            } else {
                Hazard::ReadAfterWrite
            };
            return Some((hazard, s.writer));
        }
        if write {
            if s.read_interval == now && s.readers & !bit != 0 {
                let reader = if s.first_reader.wave != who.wave {
                    s.first_reader
                } else {
                    s.other_reader
                };
                return Some((Hazard::WriteAfterRead, reader));
            }
            s.write_interval = now;
            s.writer = who;
        } else {
            if s.read_interval != now {
                s.read_interval = now;
                s.readers = 0;
                s.first_reader = who;
            } else if s.readers & !(1u64 << s.first_reader.wave) == 0
                && s.first_reader.wave != who.wave
            {
                s.other_reader = who;
            }
            s.readers |= bit;
        }
        None
    }
}
