//! Allocation records: where each allocation lies with its red zone, who
//! made it, and the quarantine freed memory waits in before it is reused.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::shadow::Access;

/// Where an allocation came from, for fault reports: the API call that made
/// it and, when the arena keeps backtraces ([`super::ArenaOptions`]), the
/// host call stack at that moment.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub api: Cow<'static, str>,
    pub backtrace: Option<Arc<std::backtrace::Backtrace>>,
    /// A program's allocation (not the runtime's own memory): the kind
    /// whose call stack is worth keeping.
    pub by_program: bool,
}

impl Origin {
    /// An origin named after `api` (e.g. `hipMalloc`): a program's
    /// allocation.
    pub fn new(api: impl Into<Cow<'static, str>>) -> Origin {
        Origin {
            api: api.into(),
            backtrace: None,
            by_program: true,
        }
    }

    /// The runtime's own memory: never given a backtrace.
    pub const fn internal(api: &'static str) -> Origin {
        Origin {
            api: Cow::Borrowed(api),
            backtrace: None,
            by_program: false,
        }
    }
}

/// How to allocate.
#[derive(Clone, Debug)]
pub struct AllocSpec {
    /// Bytes kernels may touch; the allocation is exactly this long.
    pub len: u64,
    /// Alignment of the start (a power of two; at least the arena's 256).
    pub align: u64,
    pub access: Access,
    pub origin: Origin,
    /// Written only by kernels and the runtime, never through a host
    /// pointer (a discrete GPU's device memory): initcheck can see every
    /// write, so it tracks them ([`super::written`]).
    pub device_only: bool,
}

impl AllocSpec {
    /// `len` bytes of ordinary device memory made by `api`.
    pub fn new(len: u64, api: impl Into<Cow<'static, str>>) -> AllocSpec {
        AllocSpec {
            len,
            align: super::GRANULE,
            access: Access::ReadWrite,
            origin: Origin::new(api),
            device_only: false,
        }
    }

    /// `len` bytes of the runtime's own memory (`what` names it in
    /// reports), with no backtrace.
    pub fn internal(len: u64, what: &'static str, access: Access) -> AllocSpec {
        AllocSpec {
            len,
            align: super::GRANULE,
            access,
            origin: Origin::internal(what),
            device_only: false,
        }
    }

    pub fn access(mut self, access: Access) -> AllocSpec {
        self.access = access;
        self
    }

    pub fn align(mut self, align: u64) -> AllocSpec {
        self.align = align;
        self
    }

    /// Marks the allocation [`AllocSpec::device_only`].
    pub fn device_only(mut self) -> AllocSpec {
        self.device_only = true;
        self
    }
}

/// One allocation, live or in quarantine.
#[derive(Clone, Debug)]
pub(super) struct Block {
    /// Requested length: the addressable bytes.
    pub len: u64,
    /// Bytes reserved from the start: the length rounded up to the granule
    /// plus the red zone behind it.
    pub span: u64,
    /// Allocation serial number (see [`super::Arena::serial`]).
    pub serial: u32,
    /// Serial of the newest allocation that owned any of this memory
    /// before (0: the memory was fresh).
    pub prior: u32,
    pub access: Access,
    pub origin: Origin,
    /// The API call that freed it, while it waits in quarantine.
    pub freed: Option<Cow<'static, str>>,
    /// initcheck's written bits, for a device-only allocation made while
    /// initcheck was on.
    pub written: Option<Arc<super::written::Written>>,
}

/// Freed allocations wait this many bytes (at most) before their memory
/// may be reused, so a stale pointer meets poison, not a new owner
/// (`SOFTGPU_QUARANTINE` sets another number of bytes; 0 turns it off)…
pub(super) const QUARANTINE_BYTES: u64 = 1 << 30;
/// …and at most this many of them (each costs a record and first-fit
/// steps).
const QUARANTINE_COUNT: usize = 4096;

/// The red zone behind an allocation of `len` bytes: at least 8 KiB (so
/// an overflow of a few KiB lands in it), an eighth of larger allocations,
/// at most 1 MiB. Red zones are address space only: nothing writes them.
pub(super) fn red_zone(len: u64) -> u64 {
    (len / 8)
        .clamp(8 << 10, 1 << 20)
        .next_multiple_of(super::GRANULE)
}

/// A block and its offset, if there is one.
pub(super) type Neighbour<'a> = Option<(u64, &'a Block)>;

/// The arena's allocations: offset of the first byte → block.
pub(super) struct Blocks {
    pub map: BTreeMap<u64, Block>,
    /// Offsets of quarantined blocks, oldest first.
    quarantine: VecDeque<u64>,
    quarantined_bytes: u64,
    /// Most bytes the quarantine holds.
    pub quarantine_limit: u64,
    /// An offset up to which blocks' spans cover every byte from the
    /// first allocatable one, with no gap (the end of a block's span, or
    /// that first offset): first fit may start its scan here. Without it
    /// every allocation walked every block, quarantined ones included (up
    /// to 4096), which made a small launch's kernel-argument allocation
    /// cost microseconds.
    dense: u64,
    /// Bytes of memory held by live blocks that [`super::Arena`] placed
    /// (their lengths; guards and reservations hold address space only).
    pub held: u64,
}

impl Blocks {
    /// No blocks yet; none will start below `first`.
    pub fn new(quarantine_limit: u64, first: u64) -> Blocks {
        Blocks {
            map: BTreeMap::new(),
            quarantine: VecDeque::new(),
            quarantined_bytes: 0,
            quarantine_limit,
            dense: first,
            held: 0,
        }
    }

    /// Forgets the block at `offset`; its span becomes a gap.
    fn remove(&mut self, offset: u64) -> Option<Block> {
        let block = self.map.remove(&offset)?;
        self.dense = self.dense.min(offset);
        Some(block)
    }

    /// The lowest offset from `floor` where `span` bytes aligned to
    /// `align` fit before `limit` between the blocks (first fit).
    /// The blocks it walks past with no gap before them move `dense` on,
    /// so each is walked once until a gap opens below it.
    pub fn find_gap(&mut self, span: u64, align: u64, floor: u64, limit: u64) -> Option<u64> {
        // No gap lies between `floor` and `dense` when `floor` is below it.
        let mut cursor = floor.max(self.dense);
        let mut gapless = cursor == self.dense;
        for (&start, block) in self.map.range(cursor..) {
            gapless &= start == cursor;
            if gapless {
                self.dense = start + block.span;
            }
            let at = cursor.checked_next_multiple_of(align)?;
            if at.checked_add(span)? <= start {
                return Some(at);
            }
            cursor = cursor.max(start + block.span);
        }
        let at = cursor.checked_next_multiple_of(align)?;
        (at.checked_add(span)? <= limit).then_some(at)
    }

    /// Whether `[offset, offset + span)` overlaps any block's span.
    pub fn overlaps(&self, offset: u64, span: u64) -> bool {
        self.map
            .range(..offset + span)
            .next_back()
            .is_some_and(|(&s, b)| s + b.span > offset)
    }

    /// Puts a freed block in quarantine; returns the blocks pushed out of
    /// it, whose memory is free again, as (offset, span).
    pub fn quarantine(&mut self, offset: u64) -> Vec<(u64, u64)> {
        if let Some(b) = self.map.get(&offset) {
            // Memory, not address space: a window's gap holds none.
            self.quarantined_bytes += b.len;
            self.quarantine.push_back(offset);
        }
        let mut evicted = Vec::new();
        while self.quarantined_bytes > self.quarantine_limit
            || self.quarantine.len() > QUARANTINE_COUNT
        {
            let Some(old) = self.quarantine.pop_front() else {
                break;
            };
            if let Some(b) = self.remove(old) {
                self.quarantined_bytes -= b.len;
                evicted.push((old, b.span));
            }
        }
        evicted
    }

    /// The block whose reserved span holds `offset`, else the nearest
    /// blocks before and after it.
    pub fn around(&self, offset: u64) -> (Neighbour<'_>, Neighbour<'_>) {
        let before = self.map.range(..=offset).next_back().map(|(&s, b)| (s, b));
        let after = self.map.range(offset + 1..).next().map(|(&s, b)| (s, b));
        (before, after)
    }

    /// Bytes held by live (not quarantined) allocations.
    pub fn live_bytes(&self) -> u64 {
        self.map
            .values()
            .filter(|b| b.freed.is_none())
            .map(|b| b.len)
            .sum()
    }
}

/// What a fault report says about the memory an access hit or missed.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// Device address of the allocation's first byte.
    pub base: u64,
    pub len: u64,
    pub access: Access,
    /// The API call that made it.
    pub allocated_by: String,
    /// The host call stack when it was made (`SOFTGPU_BACKTRACE=1`).
    pub backtrace: Option<String>,
    /// The API call that freed it, if it is freed.
    pub freed_by: Option<String>,
}

/// The function of a backtrace's frame line ("  N: function"; each is
/// followed by "at file:line" lines).
fn is_frame(line: &str) -> Option<&str> {
    line.trim_start()
        .split_once(": ")
        .filter(|(n, _)| n.parse::<u32>().is_ok())
        .map(|(_, function)| function)
}

/// A backtrace's text from the caller of the API call `api` on (frames
/// inside softgpu are noise to its user); all of it when `api`'s frame is
/// not found.
fn from_caller(trace: &str, api: &str) -> String {
    let name = api.split_whitespace().next().unwrap_or(api);
    let name = name.rsplit("::").next().unwrap_or(name);
    backtrace_after(trace, |function| function == name)
}

/// A backtrace's text (`std::backtrace::Backtrace`'s) from the frame
/// after the last one whose function `is_entry` accepts (softgpu's entry
/// point: what called it is the program's); all of it when none does.
pub fn backtrace_after(trace: &str, is_entry: impl Fn(&str) -> bool) -> String {
    let lines: Vec<&str> = trace.lines().collect();
    let Some(entry) = lines
        .iter()
        .rposition(|l| is_frame(l).is_some_and(&is_entry))
    else {
        return trace.to_string();
    };
    let caller = (entry + 1..lines.len())
        .find(|&i| is_frame(lines[i]).is_some())
        .unwrap_or(lines.len());
    lines[caller..].join("\n")
}

impl Allocation {
    pub(super) fn of(base: u64, b: &Block) -> Allocation {
        Allocation {
            base,
            len: b.len,
            access: b.access,
            allocated_by: b.origin.api.to_string(),
            backtrace: (b.origin.backtrace.as_ref())
                .map(|t| from_caller(&t.to_string(), &b.origin.api)),
            freed_by: b.freed.as_ref().map(|f| f.to_string()),
        }
    }

    /// "a 4096-byte allocation at 0x… (made by hipMalloc)".
    pub fn describe(&self) -> String {
        let what = match self.access {
            Access::ReadWrite => "allocation",
            Access::ReadOnly => "read-only allocation",
            Access::HostOnly => "runtime-private allocation",
        };
        format!(
            "a {}-byte {what} at {:#x} (made by {})",
            self.len, self.base, self.allocated_by
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_allocation_backtrace_starts_at_the_caller_of_the_api() {
        let trace = "   0: alloc_with\n             at arena/mod.rs:331:25\n   1: hipMalloc\n             at hip/src/memory.rs:155:5\n   2: main\n             at prog.hip:31:9\n   3: _start";
        assert_eq!(
            super::from_caller(trace, "hipMalloc"),
            "   2: main\n             at prog.hip:31:9\n   3: _start"
        );
        // A call named with a path or a note matches its last segment.
        let rust = "   0: x\n   1: allocate_for\n   2: user";
        assert_eq!(
            super::from_caller(rust, "Stream::allocate_for"),
            "   2: user"
        );
        assert_eq!(super::from_caller(trace, "cudaMalloc"), trace);
    }
}
