//! The opt-in sanitizers that watch memory accesses: initcheck for LDS and
//! device-only global memory (`softgpu_arena::written`), racecheck for LDS
//! and global memory (`SOFTGPU_CHECK=init,race`).
//!
//! Handlers call the hooks of a workgroup's [`Sanitizer`] (reached through
//! [`Env::sanitizer`](crate::ops::Env)) before they touch memory, once per
//! memory instruction behind one `if let Some(..)`, so a dispatch with the
//! checks off pays one predictable branch per memory instruction and
//! nothing per lane. With a check on, every active lane's bytes are looked
//! up in a shadow: the sanitizer mode is slow by design.
//!
//! - [`lds`]: per workgroup, a "written" bit per LDS byte (initcheck) and
//!   per byte the last plain write and the reads of the current barrier
//!   interval (racecheck).
//! - [`global`]: per dispatch, a table shared by the worker threads keyed
//!   by dword address, with the last plain writes and reads of each dword.
//!
//! What orders two accesses: the same wave; a workgroup barrier
//! (`s_barrier` released) between them when both are in one workgroup; a
//! grid barrier (`ds_gws_barrier`, counted per workgroup) for global
//! memory. An atomic conflicts with an unordered plain access to the same
//! bytes, never with another atomic. Nothing else is modelled (see
//! `global.rs` for what that misses).

pub mod global;
pub mod lds;

use crate::checks::Checks;
#[cfg(test)]
use crate::trap::{Earlier, Hazard};
use crate::trap::{Report, Space, Trap, Use};
use crate::wave::Wave;
use std::sync::Arc;

pub use global::GlobalRace;
pub use lds::LdsShadow;

/// A dispatch too large for racecheck's stamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TooLarge {
    #[error("racecheck supports at most {max} workgroups per dispatch; this one has {0}", max = u32::MAX)]
    Workgroups(u64),
    #[error("racecheck supports at most {max} waves per workgroup; this one has {0}", max = lds::MAX_WAVES)]
    Waves(u64),
}

/// The sanitizer state of one dispatch, shared by its workers.
pub struct Dispatch {
    checks: Checks,
    /// Global-memory racecheck, when race is on.
    global: Option<GlobalRace>,
}

impl Dispatch {
    /// The state for a dispatch of `groups` workgroups of `block`
    /// work-items in waves of `lanes`, or `None` when no memory check is
    /// on.
    pub fn new(
        checks: Checks,
        groups: [u32; 3],
        block: [u32; 3],
        lanes: u32,
    ) -> Result<Option<Dispatch>, TooLarge> {
        if !checks.init && !checks.race {
            return Ok(None);
        }
        let total: u64 = groups.iter().map(|&g| g as u64).product();
        if checks.race && total > u32::MAX as u64 {
            return Err(TooLarge::Workgroups(total));
        }
        let threads: u64 = block.iter().map(|&b| b as u64).product();
        let waves = threads.div_ceil(lanes as u64);
        if checks.race && waves > lds::MAX_WAVES as u64 {
            return Err(TooLarge::Waves(waves));
        }
        Ok(Some(Dispatch {
            checks,
            global: checks.race.then(GlobalRace::new),
        }))
    }

    /// Starts workgroup `group` of a dispatch of `groups` workgroups, each
    /// with `lds_bytes` of LDS, on a worker whose LDS shadow is `shadow`.
    pub fn workgroup<'a>(
        &'a self,
        shadow: &'a mut LdsShadow,
        arena: &'a softgpu_arena::Arena,
        lds_bytes: usize,
        groups: [u32; 3],
        group: [u32; 3],
    ) -> Sanitizer<'a> {
        shadow.begin(lds_bytes, self.checks);
        let [gx, gy, _] = groups.map(u64::from);
        let [x, y, z] = group.map(u64::from);
        // Exact with racecheck on (`new` refused more than u32::MAX
        // groups); initcheck does not use it.
        let index = (x + gx * (y + gy * z)) as u32;
        Sanitizer {
            lds: shadow,
            global: self.global.as_ref(),
            group: index,
            grid: 0,
            written: self.checks.init.then_some(Written { arena, last: None }),
            contained: crate::trap::Contained::new(self.checks.contain),
        }
    }
}

/// The sanitizers of one running workgroup: what handlers call.
pub struct Sanitizer<'a> {
    lds: &'a mut LdsShadow,
    global: Option<&'a GlobalRace>,
    /// Linear workgroup index.
    group: u32,
    /// Grid barriers (`ds_gws_barrier`) this workgroup has passed.
    grid: u16,
    /// Global-memory initcheck, when init is on.
    written: Option<Written<'a>>,
    /// Findings run past under `Checks::contain`.
    pub contained: crate::trap::Contained,
}

/// initcheck of global memory for one workgroup: the written bits of the
/// allocations it touches ([`softgpu_arena::written`]).
struct Written<'a> {
    arena: &'a softgpu_arena::Arena,
    /// The allocation touched last (address, length, bits): a kernel's
    /// accesses come in runs over one buffer, and the lookup takes the
    /// arena's lock.
    last: Option<(u64, u64, Arc<softgpu_arena::written::Written>)>,
}

impl Written<'_> {
    /// Checks that a read's bytes were written, then marks a write's.
    /// Memory that tracks nothing (host-visible, the runtime's own) is
    /// not checked.
    fn access(&mut self, lane: Option<usize>, u: Use, addr: u64, len: u64) -> Result<(), Trap> {
        let hit = |&(start, size, _): &(u64, u64, _)| addr.wrapping_sub(start) < size;
        if !self.last.as_ref().is_some_and(hit) {
            self.last = self.arena.written(addr);
        }
        let Some((start, _, bits)) = &self.last else {
            return Ok(());
        };
        let from = addr - start;
        let to = from.saturating_add(len);
        if u != Use::Write {
            if let Some(first) = bits.first_unwritten(from, to) {
                return Err(Trap::Sanitizer(Box::new(Report::Uninitialized {
                    space: Space::Global,
                    lane,
                    addr,
                    len,
                    first: start + first,
                })));
            }
        }
        if u != Use::Read {
            bits.mark(from, to);
        }
        Ok(())
    }
}

impl Sanitizer<'_> {
    /// Checks and records lane `lane`'s (or the wave's) access of `len`
    /// bytes at LDS offset `addr`. Accesses not wholly inside LDS touch
    /// nothing (they read zero, writes are dropped) and are not checked.
    pub fn lds(
        &mut self,
        w: &Wave,
        lane: Option<usize>,
        u: Use,
        addr: u64,
        len: u64,
    ) -> Result<(), Trap> {
        let found = self.lds.access(w.id, w.pc, lane, u, addr, len);
        self.contained.or(w, found.map_err(Trap::Sanitizer), ())
    }

    /// [`Sanitizer::lds`] for every active lane, at the offset `addr`
    /// gives for it.
    pub fn lds_lanes(
        &mut self,
        w: &Wave,
        u: Use,
        len: u64,
        addr: impl Fn(&Wave, usize) -> u64,
    ) -> Result<(), Trap> {
        let exec = w.exec();
        for l in 0..w.lanes {
            if exec >> l & 1 != 0 {
                self.lds(w, Some(l), u, addr(w, l), len)?;
            }
        }
        Ok(())
    }

    /// Checks and records an access of `len` bytes of global memory at
    /// `addr` (initcheck of tracked allocations, racecheck).
    pub fn global(
        &mut self,
        w: &Wave,
        lane: Option<usize>,
        u: Use,
        addr: u64,
        len: u64,
    ) -> Result<(), Trap> {
        if let Some(written) = &mut self.written {
            let found = written.access(lane, u, addr, len);
            self.contained.or(w, found, ())?;
        }
        let Some(table) = self.global else {
            return Ok(());
        };
        let stamp = global::Stamp {
            group: self.group,
            slot: w.pc,
            interval: self.lds.interval(),
            grid: self.grid,
            wave: w.id as u8,
            bytes: 0,
        };
        let found = table.access(stamp, lane, u, addr, len);
        self.contained.or(w, found.map_err(Trap::Sanitizer), ())
    }

    /// The workgroup barrier was released: accesses before it are ordered
    /// before those after it.
    pub fn barrier(&mut self) {
        self.lds.barrier();
    }

    /// This workgroup passed a grid barrier (`ds_gws_barrier`): it orders
    /// global accesses across workgroups (every workgroup arrives at each
    /// such barrier in HIP's grid sync). It orders nothing inside the
    /// workgroup: its other waves are ordered by the workgroup barriers
    /// around it.
    pub fn grid_barrier(&mut self) {
        self.grid = self.grid.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests;
