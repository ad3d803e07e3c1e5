//! The shadow map: one byte for every 8 bytes of the arena, saying how many
//! of those bytes (from the first) belong to a live allocation and what
//! kernels may do with them. It is what confines every kernel access to one
//! live allocation, byte-exactly, at the cost of one more load per access.
//!
//! A shadow byte is `n | access << 4`: `n` (0 to 8) leading bytes of the
//! 8-byte granule are addressable, with [`Access`] `access`. Zero — the
//! value of every page the OS has not handed out yet — is "nothing here":
//! never allocated, a red zone, or freed. Only live allocations have
//! non-zero shadow bytes (allocation marks them, freeing clears them).

use std::sync::atomic::{
    AtomicU32, AtomicU64, AtomicU8,
    Ordering::{Acquire, Relaxed, Release},
};

use super::map::Map;

/// What kernels may do with an allocation's bytes (the host may always
/// read and write them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// Ordinary device memory.
    #[default]
    ReadWrite,
    /// Kernels may read but not write: kernel arguments, AQL packets,
    /// queue descriptors, code.
    ReadOnly,
    /// Kernels may not touch it at all: the runtime's own bookkeeping.
    HostOnly,
}

impl Access {
    fn bits(self) -> u8 {
        match self {
            Access::ReadWrite => 0,
            Access::ReadOnly => 1 << 4,
            Access::HostOnly => 2 << 4,
        }
    }

    pub(super) fn from_shadow(s: u8) -> Access {
        match s >> 4 {
            0 => Access::ReadWrite,
            1 => Access::ReadOnly,
            _ => Access::HostOnly,
        }
    }
}

/// Who is accessing: the bits of a shadow byte that refuse the access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    KernelRead,
    KernelWrite,
    Host,
}

impl Who {
    #[inline(always)]
    fn deny(self) -> u8 {
        match self {
            Who::KernelRead => 2 << 4,
            Who::KernelWrite => 3 << 4,
            Who::Host => 0,
        }
    }
}

/// Granules in a page of the arena (4 KiB), the unit of [`Shadow::pages`].
const PAGE_GRANULES: u64 = 512;

pub(super) struct Shadow {
    map: Map,
    /// Granules the shadow covers (arena bytes / 8).
    granules: u64,
    /// One byte per arena page: the shadow byte all 512 granules of the
    /// page share when that byte is wholly addressable (`8 | access`), or
    /// 0. A range check passes such a page with one load instead of 64
    /// shadow words, so a wave whose lanes span a few kilobytes (a
    /// stencil's rows) or a bulk copy is checked for a few loads. Never
    /// non-zero for a page any of whose granules differs: `fill` clears
    /// the pages it touches before it writes their granules and sets them
    /// after.
    pages: Map,
}

/// How many times any shadow of the process has been made or changed:
/// raised after each fill and at each new shadow, so a range allowed
/// while the count was `n` (read before the check) is still allowed while
/// it is `n` (see `super::allowed`). One count for every arena, so an
/// arena made where a dropped one lived never meets that one's entries.
static CHANGES: AtomicU64 = AtomicU64::new(0);

impl Shadow {
    /// A shadow for an arena of `bytes` (a multiple of 8).
    pub fn new(bytes: u64) -> Option<Shadow> {
        let granules = bytes / 8;
        Some(Shadow {
            map: Map::new(granules, None)?,
            granules,
            pages: Map::new(granules.div_ceil(PAGE_GRANULES), None)?,
        })
        .inspect(|_| {
            CHANGES.fetch_add(1, Release);
        })
    }

    /// The summary byte of page `p` (see [`Shadow::pages`]).
    #[inline(always)]
    fn page(&self, p: u64) -> &AtomicU8 {
        // SAFETY: callers pass pages of in-arena granules, so bytes inside
        // this mapping (one per page, rounded up), which lives as long as
        // `self`; it is only ever accessed atomically.
        unsafe { &*(self.pages.at(p) as *const AtomicU8) }
    }

    #[inline(always)]
    fn byte(&self, granule: u64) -> u8 {
        // SAFETY: callers pass granules of offsets they checked are inside
        // the arena, so inside this mapping (arena bytes / 8), which lives
        // as long as `self`; it is only ever accessed atomically.
        unsafe { &*(self.map.at(granule) as *const AtomicU8) }.load(Relaxed)
    }

    /// Whether `who` may access `[offset, offset + len)` (inside the arena,
    /// `len` ≥ 1): every byte addressable and the access allowed.
    #[inline(always)]
    pub fn allows(&self, offset: u64, len: u64, who: Who) -> bool {
        let last = offset + len - 1;
        let (first_granule, last_granule) = (offset >> 3, last >> 3);
        let deny = who.deny();
        // Bytes of the last granule that must be addressable.
        let need = (last & 7) + 1;
        let last_ok = granule_allows(self.byte(last_granule), deny, need);
        last_ok
            && (first_granule == last_granule || self.all_full(first_granule, last_granule, deny))
    }

    /// Whether granules `[from, to)` are all wholly addressable and allowed:
    /// a page at a time where its summary settles it, else eight granules
    /// at a time where the shadow is aligned.
    fn all_full(&self, from: u64, to: u64, deny: u8) -> bool {
        let mut g = from;
        while g < to {
            let stop = (g / PAGE_GRANULES + 1) * PAGE_GRANULES;
            let stop = stop.min(to);
            let summary = self.page(g / PAGE_GRANULES).load(Relaxed);
            if !granule_allows(summary, deny, 8) && !self.granules_full(g, stop, deny) {
                return false;
            }
            g = stop;
        }
        true
    }

    /// [`Shadow::all_full`] granule by granule (a word for each aligned
    /// eight).
    fn granules_full(&self, from: u64, to: u64, deny: u8) -> bool {
        let ok = |s: u8| granule_allows(s, deny, 8);
        let mut g = from;
        while g < to && !g.is_multiple_of(8) {
            if !ok(self.byte(g)) {
                return false;
            }
            g += 1;
        }
        while to - g >= 8 {
            if !self.block_clear(g >> 3, deny) {
                return false;
            }
            g += 8;
        }
        (g..to).all(|g| ok(self.byte(g)))
    }

    /// Whether the 64 arena bytes of `block` (eight granules, one shadow
    /// word) are all addressable and not refused by `deny`. `block` must
    /// hold an in-arena byte: its shadow word then lies in the mapping,
    /// whose length the OS rounds up to whole pages.
    #[inline(always)]
    fn block_clear(&self, block: u64, deny: u8) -> bool {
        let low = u64::from_ne_bytes([0x0f; 8]);
        let full = u64::from_ne_bytes([8; 8]);
        let denied = u64::from_ne_bytes([deny; 8]);
        // SAFETY: the word at granule `8 * block` is inside the mapping (as
        // said above), at an 8-aligned granule index so an 8-aligned
        // address; shadow bytes are accessed atomically only.
        let w = unsafe { &*(self.map.at(block * 8) as *const AtomicU64) }.load(Relaxed);
        w & low == full && w & denied == 0
    }

    /// [`Shadow::allows`] for each `len`-byte access at `offsets` (each
    /// inside the arena). An access inside a 64-byte block whose bytes are
    /// all allowed is settled by that block's one shadow word, read once
    /// for a run of accesses that fall in it (the consecutive lanes of a
    /// wave, typically).
    #[inline(always)]
    pub fn allows_each(&self, offsets: impl Iterator<Item = u64>, len: u64, who: Who) -> bool {
        let deny = who.deny();
        let mut clear = u64::MAX;
        for offset in offsets {
            let block = offset >> 6;
            if block == (offset + len - 1) >> 6 {
                if block == clear {
                    continue;
                }
                if self.block_clear(block, deny) {
                    clear = block;
                    continue;
                }
            }
            if !self.allows(offset, len, who) {
                return false;
            }
        }
        true
    }

    /// Marks `len` bytes from `offset` (8-aligned) addressable with
    /// `access`; the tail of the last granule stays unaddressable.
    pub fn mark(&self, offset: u64, len: u64, access: Access) {
        let first = offset >> 3;
        let full = len >> 3;
        self.fill(first, full, 8 | access.bits());
        if len & 7 != 0 {
            self.fill(first + full, 1, (len & 7) as u8 | access.bits());
        }
    }

    /// Makes the granules covering `[offset, offset + len)` unaddressable.
    pub fn clear(&self, offset: u64, len: u64) {
        self.fill(offset >> 3, len.div_ceil(8), 0);
    }

    /// The shadow byte of the granule holding `offset` (reports only).
    pub fn at(&self, offset: u64) -> u8 {
        self.byte(offset >> 3)
    }

    /// Sets granules `[from, from + count)` to `value`, and the summaries
    /// of their pages to match. Callers hold the arena's block lock, so
    /// fills never overlap one another.
    fn fill(&self, from: u64, count: u64, value: u8) {
        let end = from + count;
        let pages = from / PAGE_GRANULES..end.div_ceil(PAGE_GRANULES);
        for p in pages.clone() {
            self.page(p).store(0, Relaxed);
        }
        self.fill_granules(from, end, value);
        let whole = value & 15 == 8;
        for p in pages {
            let inside = p * PAGE_GRANULES >= from && (p + 1) * PAGE_GRANULES <= end;
            let summary = if !inside {
                self.uniform(p)
            } else if whole {
                value
            } else {
                0
            };
            self.page(p).store(summary, Relaxed);
        }
        CHANGES.fetch_add(1, Release);
    }

    /// How many times any shadow has been made or changed (see
    /// `CHANGES`): read before a check whose answer is kept.
    #[inline(always)]
    pub(super) fn changes(&self) -> u64 {
        CHANGES.load(Acquire)
    }

    /// Where the change count is, for compiled code that reads it itself
    /// (`super::Quick`).
    pub(super) fn changes_ptr(&self) -> *const u64 {
        CHANGES.as_ptr()
    }

    /// `[offset, end)` (arena offsets, allowed to `who`, inside the
    /// arena) widened over the bytes `who` may access around it: within
    /// the pages holding its ends (a small allocation's granules, or all of
    /// a page whose summary allows it), and, where that reaches a page's
    /// edge, over the neighbouring pages whose summaries allow `who` all
    /// their bytes, up to [`allowed::REACH_PAGES`](super::allowed::REACH_PAGES)
    /// each way. So the waves at an allocation's unaligned ends keep a
    /// range reaching into its middle too.
    pub(super) fn widen(&self, offset: u64, end: u64, who: Who) -> [u64; 2] {
        let deny = who.deny();
        let pages = self.granules.div_ceil(PAGE_GRANULES);
        let whole = |p: u64| p < pages && granule_allows(self.page(p).load(Relaxed), deny, 8);
        let reach = super::allowed::REACH_PAGES;
        let page_bytes = PAGE_GRANULES * 8;
        let (first, last) = (offset / page_bytes, (end - 1) / page_bytes);
        let mut start = if whole(first) {
            first * page_bytes
        } else {
            self.granules_before(offset, deny)
        };
        if start == first * page_bytes {
            let mut p = first;
            while p > 0 && first - p < reach && whole(p - 1) {
                p -= 1;
            }
            start = p * page_bytes;
        }
        let mut stop = if whole(last) {
            (last + 1) * page_bytes
        } else {
            self.granules_after(end, deny)
        };
        if stop == (last + 1) * page_bytes {
            let mut p = last;
            while p - last < reach && whole(p + 1) {
                p += 1;
            }
            stop = (p + 1) * page_bytes;
        }
        [start, stop]
    }

    /// `offset` (allowed) moved down over the whole granules of its page
    /// before it that `deny` does not refuse: a small allocation's range
    /// widened to its start.
    fn granules_before(&self, offset: u64, deny: u8) -> u64 {
        let page_start = offset / 8 / PAGE_GRANULES * PAGE_GRANULES;
        let mut g = offset / 8;
        if granule_allows(self.byte(g), deny, 8) {
            while g > page_start && granule_allows(self.byte(g - 1), deny, 8) {
                g -= 1;
            }
            g * 8
        } else {
            offset
        }
    }

    /// `end` (the end of an allowed range) moved up over the addressable
    /// bytes of its page after it that `deny` does not refuse: a small
    /// allocation's range widened to its end, a partial last granule's
    /// bytes included.
    fn granules_after(&self, end: u64, deny: u8) -> u64 {
        let page_end = (end - 1) / 8 / PAGE_GRANULES * PAGE_GRANULES + PAGE_GRANULES;
        let mut g = (end - 1) / 8;
        if !granule_allows(self.byte(g), deny, 8) {
            return end;
        }
        g += 1;
        while g < page_end.min(self.granules) && granule_allows(self.byte(g), deny, 8) {
            g += 1;
        }
        let tail = if g < page_end.min(self.granules) {
            let s = self.byte(g);
            if granule_allows(s, deny, 1) {
                u64::from(s & 15)
            } else {
                0
            }
        } else {
            0
        };
        g * 8 + tail
    }

    /// The summary page `p`'s granules call for, read from them.
    fn uniform(&self, p: u64) -> u8 {
        let first = p * PAGE_GRANULES;
        if first + PAGE_GRANULES > self.granules {
            return 0;
        }
        let s = self.byte(first);
        let word = u64::from_ne_bytes([s; 8]);
        let same = (first..first + PAGE_GRANULES).step_by(8).all(|g| {
            // SAFETY: an 8-aligned word of the page, which lies inside the
            // mapping (checked above); accessed atomically only.
            unsafe { &*(self.map.at(g) as *const AtomicU64) }.load(Relaxed) == word
        });
        if same && s & 15 == 8 {
            s
        } else {
            0
        }
    }

    fn fill_granules(&self, from: u64, end: u64, value: u8) {
        let word = u64::from_ne_bytes([value; 8]);
        let mut g = from;
        while g < end {
            if g.is_multiple_of(8) && end - g >= 8 {
                // SAFETY: 8 aligned shadow bytes inside the mapping (the
                // range comes from an allocation inside the arena);
                // accessed atomically only.
                unsafe { &*(self.map.at(g) as *const AtomicU64) }.store(word, Relaxed);
                g += 8;
            } else {
                // SAFETY: as above, one byte.
                unsafe { &*(self.map.at(g) as *const AtomicU8) }.store(value, Relaxed);
                g += 1;
            }
        }
    }
}

/// Whether a granule (or a page summary) with shadow byte `s` lets an
/// access that `deny` does not refuse use its first `need` bytes (1 to 8;
/// 8 asks for the whole granule).
#[inline(always)]
fn granule_allows(s: u8, deny: u8, need: u64) -> bool {
    s & deny == 0 && u64::from(s & 15) >= need
}

/// Which allocation last owned each 256-byte granule: its serial number.
/// A dispatch queued before an allocation was made, touching memory that
/// allocation took over from one the dispatch could have known, is stale
/// (see [`super::Arena::is_stale`]).
pub(super) struct Owners {
    map: Map,
}

pub(super) const OWNER_GRANULE: u64 = 256;

impl Owners {
    pub fn new(bytes: u64) -> Option<Owners> {
        Some(Owners {
            map: Map::new(bytes / OWNER_GRANULE * 4, None)?,
        })
    }

    fn cell(&self, granule: u64) -> &AtomicU32 {
        // SAFETY: callers pass granules of in-arena offsets, so 4-aligned
        // cells inside this mapping, which lives as long as `self`; only
        // ever accessed atomically.
        unsafe { &*(self.map.at(granule * 4) as *const AtomicU32) }
    }

    /// The serial of the allocation that last owned `offset`.
    #[inline(always)]
    pub fn of(&self, offset: u64) -> u32 {
        self.cell(offset / OWNER_GRANULE).load(Relaxed)
    }

    /// Gives `[offset, offset + len)` to allocation `serial`; returns the
    /// newest serial that owned any of it before (0: fresh memory).
    pub fn take(&self, offset: u64, len: u64, serial: u32) -> u32 {
        let (first, end) = (
            offset / OWNER_GRANULE,
            (offset + len.max(1)).div_ceil(OWNER_GRANULE),
        );
        (first..end)
            .map(|g| self.cell(g).swap(serial, Relaxed))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through random fills of every size and alignment (whole pages, cut
    /// pages, runs back to back), each page's summary is exactly what its
    /// granules call for, and range checks agree byte for byte with a
    /// model that looks at every granule.
    #[test]
    fn page_summaries_and_range_checks_match_a_granule_model() {
        const PAGES: u64 = 16;
        const GRANULES: u64 = PAGES * PAGE_GRANULES;
        let shadow = Shadow::new(GRANULES * 8).unwrap();
        let mut model = vec![0u8; GRANULES as usize];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        // Wholly addressable with each access, partly addressable, nothing.
        let values = [8, 8 | 1 << 4, 8 | 2 << 4, 5, 0];
        for _ in 0..3000 {
            let from = next(GRANULES);
            let most = if next(3) == 0 { 3 * PAGE_GRANULES } else { 40 };
            let count = next((GRANULES - from).min(most) + 1);
            let value = values[next(values.len() as u64) as usize];
            shadow.fill(from, count, value);
            model[from as usize..(from + count) as usize].fill(value);
            for p in 0..PAGES {
                let granules = &model[(p * PAGE_GRANULES) as usize..][..PAGE_GRANULES as usize];
                let uniform = granules.iter().all(|&g| g == granules[0]) && granules[0] & 15 == 8;
                let expect = if uniform { granules[0] } else { 0 };
                assert_eq!(shadow.page(p).load(Relaxed), expect, "page {p}");
            }
            for _ in 0..10 {
                let offset = next(GRANULES * 8 - 1);
                let len = 1 + next((GRANULES * 8 - offset).min(3 * 4096));
                for who in [Who::KernelRead, Who::KernelWrite, Who::Host] {
                    let expect = (offset..offset + len).all(|b| {
                        let s = model[(b >> 3) as usize];
                        s & who.deny() == 0 && b & 7 < u64::from(s & 15)
                    });
                    assert_eq!(
                        shadow.allows(offset, len, who),
                        expect,
                        "{len} bytes at {offset} for {who:?}"
                    );
                }
            }
        }
    }
}
