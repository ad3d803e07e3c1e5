//! Reserved address ranges and shared mappings inside the arena: the
//! executor's half of HSA's virtual memory API (`hsa_amd_vmem_*`).
//!
//! A *reservation* is arena address space that no allocation may take and
//! no kernel or host copy may touch until memory is mapped into it. Its
//! bytes (and a red zone behind them) are covered by *tiles*: blocks in the
//! arena's allocation map, so first fit, overlap checks and fault reports
//! see them like any allocation.
//!
//! - An unmapped tile has serial 0 and length 0: nothing in it is
//!   addressable (its shadow is zero), and the host copy checks, which ask
//!   for a live allocation holding every byte, refuse it too. The red zone
//!   behind a reservation is such a tile too, marked never to be mapped.
//! - A mapped tile is an ordinary allocation record (serial, access,
//!   origin) whose span is exactly its length: a file (the memfd behind an
//!   HSA memory handle) is mapped `MAP_SHARED | MAP_FIXED` over its bytes,
//!   so the same file mapped at two addresses shows the same bytes there.
//!
//! Mapping splits the unmapped tile it lands in; unmapping turns the mapped
//! tile back into an unmapped one. The tiles of a reservation always cover
//! it without gaps, so the allocation map's invariants hold (no block's
//! span overlaps another's).
//!
//! Every byte of the arena stays mapped readable and writable for the
//! arena's life (see the module's "Concurrency"): unmapping puts a fresh
//! anonymous mapping back, never `PROT_NONE`, so a kernel that passed its
//! check just before an unmap reads zeros instead of crashing the process.

use std::os::fd::BorrowedFd;
use std::sync::atomic::Ordering::Relaxed;

use super::blocks::{red_zone, Block, Blocks, Origin};
use super::shadow::Access;
use super::{map, Arena, MemError, FIRST};

/// The page size: reservations, mappings and file offsets are multiples of
/// it, since `mmap` places whole pages.
pub const PAGE: u64 = 4096;

/// An unmapped tile of a reservation (see the module docs).
fn unmapped(span: u64, origin: Origin) -> Block {
    Block {
        len: 0,
        span,
        serial: 0,
        prior: 0,
        access: Access::HostOnly,
        origin,
        freed: None,
        written: None,
    }
}

/// The `prior` that marks the tile of a reservation's red zone, which is
/// never mapped (a real `prior` is only read for blocks with a serial).
const RED_ZONE: u32 = 1;

/// The tile of a reservation's red zone.
fn red_zone_tile(span: u64, origin: Origin) -> Block {
    Block {
        prior: RED_ZONE,
        ..unmapped(span, origin)
    }
}

/// Whether `b` is a tile of a live reservation with nothing mapped.
fn is_reserved(b: &Block) -> bool {
    b.serial == 0 && b.len == 0 && b.freed.is_none()
}

/// Whether `b` is an unmapped tile of a live reservation's own pages.
fn is_unmapped(b: &Block) -> bool {
    is_reserved(b) && b.prior != RED_ZONE
}

/// Whether `b` is a live mapped tile `len` bytes long.
fn is_mapped(b: &Block, len: u64) -> bool {
    b.serial != 0 && b.freed.is_none() && b.len == len && b.span == len
}

impl Arena {
    /// Reserves `len` bytes (a multiple of [`PAGE`]) of device address
    /// space aligned to `align` (a power of two; at least a page), at
    /// `want` when that range is free and suitably aligned, else wherever
    /// first fit finds room. Returns the address.
    pub fn reserve(
        &self,
        len: u64,
        align: u64,
        want: Option<u64>,
        origin: Origin,
    ) -> Result<u64, MemError> {
        let bad = MemError::OutOfRange {
            addr: want.unwrap_or(0),
            len,
        };
        if len == 0 || !len.is_multiple_of(PAGE) || !align.is_power_of_two() {
            return Err(bad);
        }
        let align = align.max(PAGE);
        let guard = red_zone(len);
        let span = len.checked_add(guard).ok_or(bad)?;
        let mut blocks = self.blocks();
        let offset = match want.and_then(|a| self.free_at(&blocks, a, span, align)) {
            Some(o) => o,
            None => self.find_aligned(&mut blocks, span, align)?,
        };
        self.touched.fetch_max(offset + span, Relaxed);
        blocks
            .map
            .insert(offset + len, red_zone_tile(guard, origin.clone()));
        blocks.map.insert(offset, unmapped(len, origin));
        Ok(self.base + offset)
    }

    /// The offset of `addr` when `[addr, addr + span)` is free arena space
    /// above the first allocatable offset and `addr` is `align`-aligned.
    fn free_at(&self, blocks: &Blocks, addr: u64, span: u64, align: u64) -> Option<u64> {
        let offset = addr.checked_sub(self.base)?;
        let fits = offset >= FIRST && offset.checked_add(span)? <= self.space;
        (fits && addr.is_multiple_of(align) && !blocks.overlaps(offset, span)).then_some(offset)
    }

    /// First fit for `span` bytes whose *address* (not only offset) is
    /// `align`-aligned: the arena's base is only page-aligned when the
    /// preferred base was taken, so the search then asks for room to slide.
    fn find_aligned(&self, blocks: &mut Blocks, span: u64, align: u64) -> Result<u64, MemError> {
        let exhausted = || MemError::Exhausted {
            requested: span,
            free: 0,
        };
        if self.base.is_multiple_of(align) {
            return blocks
                .find_gap(span, align, FIRST, self.space)
                .ok_or_else(exhausted);
        }
        let room = span.checked_add(align).ok_or_else(exhausted)?;
        let gap = blocks
            .find_gap(room, PAGE, FIRST, self.space)
            .ok_or_else(exhausted)?;
        Ok((self.base + gap).next_multiple_of(align) - self.base)
    }

    /// Gives back a reservation of `len` bytes at `addr` that has nothing
    /// mapped: its address space waits in quarantine (reports of stale
    /// accesses name `by`) and is then reusable.
    pub fn unreserve(&self, addr: u64, len: u64, by: &'static str) -> Result<(), MemError> {
        let offset = addr.wrapping_sub(self.base);
        let span = len.saturating_add(red_zone(len));
        let mut blocks = self.blocks();
        let tiles =
            reservation_tiles(&blocks, offset, span).ok_or(MemError::NotAllocated { addr })?;
        if !tiles.iter().all(|&t| is_reserved(&blocks.map[&t])) {
            return Err(MemError::Overlap { addr, len });
        }
        let origin = blocks.map[&offset].origin.clone();
        for t in tiles {
            blocks.map.remove(&t);
        }
        let mut whole = unmapped(span, origin);
        whole.freed = Some(by.into());
        blocks.map.insert(offset, whole);
        blocks.quarantine(offset);
        Ok(())
    }

    /// Maps `len` bytes of the file `fd` from `file_offset` at `addr`,
    /// inside a reservation where nothing is mapped yet, and records the
    /// range as an allocation kernels may touch as `access` says. The same
    /// file mapped elsewhere shows the same bytes (`MAP_SHARED`).
    ///
    /// # Safety
    /// The file must stay at least `file_offset + len` bytes long while
    /// the range is mapped (a memfd sealed against shrinking), or accesses
    /// past its end would raise `SIGBUS`; its bytes are then accessed like
    /// all arena memory, atomically, and must not be reached by Rust code
    /// any other way.
    pub unsafe fn map_shared(
        &self,
        addr: u64,
        len: u64,
        fd: BorrowedFd<'_>,
        file_offset: u64,
        access: Access,
        origin: Origin,
    ) -> Result<(), MemError> {
        let offset = self.page_range(addr, len)?;
        if !file_offset.is_multiple_of(PAGE) {
            return Err(MemError::OutOfRange { addr, len });
        }
        let mut blocks = self.blocks();
        let (lo, hi, tiles) =
            unmapped_cover(&blocks, offset, len).ok_or(MemError::Overlap { addr, len })?;
        // SAFETY: `[addr, addr + len)` is page-aligned and inside our own
        // mapping (checked by `page_range`), in tiles of a reservation that
        // nothing else maps or allocates (checked above, under the block
        // lock), so MAP_FIXED replaces only pages this arena owns and no
        // live allocation's. No Rust reference to them exists (arena bytes
        // are only reached through atomics). The file's length is the
        // caller's promise.
        unsafe { map::place_file(addr, len, fd, file_offset) }?;
        let origin_of_tiles = blocks.map[&lo].origin.clone();
        for t in tiles {
            blocks.map.remove(&t);
        }
        if lo < offset {
            let before = unmapped(offset - lo, origin_of_tiles.clone());
            blocks.map.insert(lo, before);
        }
        if offset + len < hi {
            let after = unmapped(hi - offset - len, origin_of_tiles);
            blocks.map.insert(offset + len, after);
        }
        let serial = self.serial.fetch_add(1, Relaxed).wrapping_add(1);
        let prior = self.owners.take(offset, len, serial);
        if prior != 0 {
            self.recycled.fetch_max(serial, Relaxed);
        }
        self.shadow.mark(offset, len, access);
        let block = Block {
            len,
            span: len,
            serial,
            prior,
            access,
            origin,
            freed: None,
            written: None,
        };
        blocks.map.insert(offset, block);
        Ok(())
    }

    /// Undoes [`Arena::map_shared`] of exactly `[addr, addr + len)`: kernels
    /// are refused at once, and fresh anonymous memory (reading zeros)
    /// replaces the file's pages, so the range is reserved and unmapped
    /// again (`origin` names the unmapped tile in fault reports).
    pub fn unmap_shared(&self, addr: u64, len: u64, origin: Origin) -> Result<(), MemError> {
        let offset = self.page_range(addr, len)?;
        let mut blocks = self.blocks();
        let mapped = blocks.map.get(&offset).is_some_and(|b| is_mapped(b, len));
        if !mapped {
            return Err(MemError::NotAllocated { addr });
        }
        self.shadow.clear(offset, len);
        // SAFETY: the range is page-aligned, inside our mapping, and is a
        // mapped tile (checked under the block lock), so MAP_FIXED
        // replaces only the file pages `map_shared` put there with
        // anonymous ones, readable and writable like the rest of the arena;
        // no Rust reference to these bytes exists.
        if let Err(e) = unsafe { map::place_anonymous(addr, len) } {
            let access = blocks.map[&offset].access;
            self.shadow.mark(offset, len, access);
            return Err(e);
        }
        blocks.map.insert(offset, unmapped(len, origin));
        Ok(())
    }

    /// Sets what kernels may do with the mapped range `[addr, addr + len)`
    /// (one whole [`Arena::map_shared`] range); fault reports name the
    /// new access.
    pub fn set_mapped_access(&self, addr: u64, len: u64, access: Access) -> Result<(), MemError> {
        let offset = self.page_range(addr, len)?;
        let mut blocks = self.blocks();
        match blocks.map.get_mut(&offset) {
            Some(b) if is_mapped(b, len) => {
                b.access = access;
                self.shadow.mark(offset, len, access);
                Ok(())
            }
            _ => Err(MemError::NotAllocated { addr }),
        }
    }

    /// Backs the first `len` bytes (whole pages) of the live allocation at
    /// `addr` with the file `fd` from its start, so that another process
    /// mapping the file sees and changes the allocation's bytes (HSA's
    /// IPC). The allocation's current bytes are copied into the file first;
    /// a kernel or copy writing it during the call may lose its writes
    /// (HSA asks for sharing to be set up before the memory is used
    /// across processes). The pages past the allocation's end up to `len`
    /// lie in its red zone, whose shadow still refuses every access.
    ///
    /// # Safety
    /// The file must be at least `len` bytes long and stay so while the
    /// pages are shared (a memfd sealed against shrinking), or accesses
    /// would raise `SIGBUS`; its bytes are accessed like all arena memory,
    /// atomically, and must not be reached by Rust code any other way.
    pub unsafe fn share_pages(
        &self,
        addr: u64,
        len: u64,
        fd: BorrowedFd<'_>,
    ) -> Result<(), MemError> {
        let offset = self.page_range(addr, len)?;
        let blocks = self.blocks();
        let block =
            allocation_pages(&blocks, offset, len).ok_or(MemError::NotAllocated { addr })?;
        let mut bytes = vec![0u8; block.len.min(len) as usize];
        self.read(addr, &mut bytes)?;
        let file =
            std::fs::File::from(fd.try_clone_to_owned().map_err(|_| MemError::Exhausted {
                requested: len,
                free: 0,
            })?);
        std::os::unix::fs::FileExt::write_all_at(&file, &bytes, 0).map_err(|_| {
            MemError::Exhausted {
                requested: len,
                free: 0,
            }
        })?;
        // SAFETY: `[addr, addr + len)` is page-aligned, inside our mapping
        // (`page_range`) and inside the span of a live allocation (checked
        // under the block lock, held until the mapping is placed), so
        // MAP_FIXED replaces only that allocation's pages, with a file
        // holding the same bytes; no Rust reference to them exists (arena
        // bytes are only reached through atomics). The file's length is the
        // caller's promise.
        unsafe { map::place_file(addr, len, fd, 0) }
    }

    /// Undoes [`Arena::share_pages`] before the allocation is freed: fresh
    /// anonymous pages (reading zeros) replace the file's, so the address
    /// range shares nothing with another process when it is reused.
    pub fn unshare_pages(&self, addr: u64, len: u64) -> Result<(), MemError> {
        let offset = self.page_range(addr, len)?;
        let blocks = self.blocks();
        allocation_pages(&blocks, offset, len).ok_or(MemError::NotAllocated { addr })?;
        // SAFETY: the range is page-aligned, inside our mapping and inside
        // the span of a live allocation (checked under the block lock, held
        // until the pages are placed), so MAP_FIXED replaces only that
        // allocation's pages; no Rust reference to these bytes exists.
        unsafe { map::place_anonymous(addr, len) }
    }

    /// The offset of a page-aligned, non-empty range inside the arena.
    fn page_range(&self, addr: u64, len: u64) -> Result<u64, MemError> {
        let offset = addr.wrapping_sub(self.base);
        let inside = offset < self.space && len <= self.space - offset;
        if len == 0 || !inside || !addr.is_multiple_of(PAGE) || !len.is_multiple_of(PAGE) {
            return Err(MemError::OutOfRange { addr, len });
        }
        Ok(offset)
    }
}

/// The live allocation starting at `offset` when its span (its bytes and
/// red zone) holds the `len` bytes from there.
fn allocation_pages(blocks: &Blocks, offset: u64, len: u64) -> Option<&Block> {
    blocks
        .map
        .get(&offset)
        .filter(|b| b.serial != 0 && b.freed.is_none() && len <= b.span)
}

/// The offsets of the tiles covering exactly `[offset, offset + span)`,
/// the first starting at `offset`, or `None` when they do not tile it.
fn reservation_tiles(blocks: &Blocks, offset: u64, span: u64) -> Option<Vec<u64>> {
    let end = offset.checked_add(span)?;
    let mut cursor = offset;
    let mut tiles = Vec::new();
    for (&start, b) in blocks.map.range(offset..end) {
        if start != cursor {
            return None;
        }
        tiles.push(start);
        cursor = start + b.span;
    }
    (cursor == end && !tiles.is_empty()).then_some(tiles)
}

/// The unmapped tiles covering `[offset, offset + len)` without a gap:
/// where the first starts, where the last ends, and their offsets; `None`
/// when any byte is mapped, allocated or outside a reservation.
fn unmapped_cover(blocks: &Blocks, offset: u64, len: u64) -> Option<(u64, u64, Vec<u64>)> {
    let (&lo, first) = blocks.map.range(..=offset).next_back()?;
    if !is_unmapped(first) || lo + first.span <= offset {
        return None;
    }
    let end = offset + len;
    let mut tiles = vec![lo];
    let mut cursor = lo + first.span;
    while cursor < end {
        let b = blocks.map.get(&cursor).filter(|b| is_unmapped(b))?;
        tiles.push(cursor);
        cursor += b.span;
    }
    Some((lo, cursor, tiles))
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

    use super::super::{AllocSpec, Memory};
    use super::*;

    /// A memfd of `len` bytes (the tests' stand-in for a memory handle).
    fn memfd(len: u64) -> OwnedFd {
        // SAFETY: a NUL-terminated name and valid flags; the result is a
        // new descriptor we own (checked non-negative) or -1.
        let fd = unsafe { libc::memfd_create(c"arena-test".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: resizing our own memfd.
        assert_eq!(unsafe { libc::ftruncate(fd.as_raw_fd(), len as i64) }, 0);
        fd
    }

    #[test]
    fn reservations_are_unreachable_and_avoided_by_allocations() {
        let arena = Arena::new(1 << 24).unwrap();
        let r = arena
            .reserve(4 * PAGE, PAGE, None, Origin::internal("reserve"))
            .unwrap();
        assert!(r.is_multiple_of(PAGE));
        let k = Memory::new(&arena, None);
        assert!(k.load_u32(r).is_err(), "a kernel cannot touch it");
        assert!(arena.load_u32(r + 8).is_err(), "nor the host");
        assert_eq!(arena.allocation_of(r + 8), None);
        for _ in 0..8 {
            let a = arena.alloc(3 * PAGE).unwrap();
            assert!(
                a + 3 * PAGE <= r || a >= r + 4 * PAGE,
                "allocation in a reservation"
            );
        }
        let again = arena
            .reserve(PAGE, PAGE, Some(r), Origin::internal("reserve"))
            .unwrap();
        assert_ne!(again, r, "a taken address is not handed out twice");
        let aligned = arena
            .reserve(PAGE, 1 << 20, None, Origin::internal("reserve"))
            .unwrap();
        assert!(aligned.is_multiple_of(1 << 20));
        arena.unreserve(r, 4 * PAGE, "free").unwrap();
        assert!(arena.unreserve(r, 4 * PAGE, "free").is_err(), "twice");
    }

    #[test]
    fn a_file_mapped_twice_aliases_and_honours_access() {
        let arena = Arena::new(1 << 24).unwrap();
        let r = arena
            .reserve(8 * PAGE, PAGE, None, Origin::internal("reserve"))
            .unwrap();
        let fd = memfd(2 * PAGE);
        let map = |at: u64| {
            // SAFETY: the memfd is 2 pages long and outlives the mappings
            // (unmapped below before it is dropped).
            unsafe {
                arena.map_shared(
                    at,
                    2 * PAGE,
                    fd.as_fd(),
                    0,
                    Access::HostOnly,
                    Origin::internal("map"),
                )
            }
        };
        map(r + PAGE).unwrap();
        map(r + 4 * PAGE).unwrap();
        assert!(map(r + 2 * PAGE).is_err(), "overlaps a mapping");
        assert!(
            map(r + 7 * PAGE).is_err(),
            "runs past the reservation's pages"
        );
        let k = Memory::new(&arena, None);
        assert!(k.load_u32(r + PAGE).is_err(), "no access granted yet");
        let (why, hit) = arena.explain(r + PAGE, 4, false);
        assert!(why.contains("may not touch"), "{why}");
        assert_eq!(hit.map(|a| a.base), Some(r + PAGE));
        arena
            .set_mapped_access(r + PAGE, 2 * PAGE, Access::ReadWrite)
            .unwrap();
        arena
            .set_mapped_access(r + 4 * PAGE, 2 * PAGE, Access::ReadOnly)
            .unwrap();
        k.store_dwords(r + PAGE + 40, &[7, 8]).unwrap();
        assert_eq!(
            k.load_u32(r + 4 * PAGE + 44).unwrap(),
            8,
            "the alias sees the store"
        );
        assert!(k.write(r + 4 * PAGE, &[1]).is_err(), "read-only alias");
        assert!(k.load_u32(r).is_err(), "unmapped page of the reservation");
        assert!(
            arena.unreserve(r, 8 * PAGE, "free").is_err(),
            "still mapped"
        );
        arena
            .unmap_shared(r + PAGE, 2 * PAGE, Origin::internal("unmap"))
            .unwrap();
        assert!(
            arena
                .unmap_shared(r + PAGE, 2 * PAGE, Origin::internal("unmap"))
                .is_err(),
            "twice"
        );
        assert!(k.load_u32(r + PAGE + 40).is_err(), "unmapped again");
        assert_eq!(
            arena.load_u32(r + 4 * PAGE + 40).unwrap(),
            7,
            "the file keeps its bytes"
        );
        map(r + PAGE).unwrap();
        arena
            .unmap_shared(r + PAGE, 2 * PAGE, Origin::internal("unmap"))
            .unwrap();
        arena
            .unmap_shared(r + 4 * PAGE, 2 * PAGE, Origin::internal("unmap"))
            .unwrap();
        arena.unreserve(r, 8 * PAGE, "free").unwrap();
        let a = arena.alloc_with(AllocSpec::new(64, "after")).unwrap();
        assert_eq!(arena.load_u32(a).unwrap(), 0);
    }
}
