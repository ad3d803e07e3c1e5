//! Device memory: one arena the executor owns.
//!
//! Every device address a kernel can use maps into this arena (or into host
//! memory a runtime registered explicitly) or is refused. Accesses go through
//! relaxed atomics, so workgroups running on several host threads may touch
//! the same bytes (as GPU kernels do) without undefined behaviour, and an
//! address outside allocated memory is an error, never a host access.
//!
//! Device addresses are host addresses: the arena is mapped once and a
//! device pointer is the host pointer of the same byte, as on an APU such as
//! gfx1151. A host program given a pointer by the HSA runtime can therefore
//! write kernel arguments or AQL packets through it directly.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Mutex, RwLock};

/// Where the first device's arena is mapped when that range is free, so
/// device addresses are the same run to run (captures replay at the same
/// addresses). Below 2^47, so it never meets the LDS and scratch apertures.
pub const PREFERRED_BASE: u64 = 0x1000_0000_0000;
/// Allocation granularity and alignment.
const GRANULE: u64 = 256;

/// Why an arena operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    #[error("address {addr:#x} (+{len} bytes) is outside device memory")]
    OutOfRange { addr: u64, len: u64 },
    #[error("device memory exhausted: {requested} bytes requested, {free} bytes free")]
    Exhausted { requested: u64, free: u64 },
    #[error("{addr:#x} is not the start of a live allocation")]
    NotAllocated { addr: u64 },
    #[error(
        "host range {addr:#x} (+{len} bytes) overlaps device memory or another registered range"
    )]
    Overlap { addr: u64, len: u64 },
}

/// The device's memory. Shared by reference between worker threads.
pub struct Arena {
    /// Host (and device) address of the first byte.
    base: u64,
    bytes: u64,
    /// Live allocations: start offset → length (granule-rounded).
    live: Mutex<BTreeMap<u64, u64>>,
    /// High-water mark of allocations. Accesses are confined below it, so
    /// above it the memory is still the OS's zero pages and allocations
    /// there need no clearing.
    touched: AtomicU64,
    /// Host memory outside the arena that a runtime made reachable
    /// (locked or registered host buffers): start → length.
    host: RwLock<BTreeMap<u64, u64>>,
    /// Whether `host` is non-empty, so the common check takes no lock.
    has_host: AtomicBool,
}

// SAFETY: the arena's memory is only ever accessed through atomics.
unsafe impl Send for Arena {}
unsafe impl Sync for Arena {}

impl Arena {
    /// Reserves `bytes` of zeroed device memory (pages are committed lazily by
    /// the host OS, so a large arena costs only what kernels touch).
    pub fn new(bytes: u64) -> Result<Arena, MemError> {
        let bytes = bytes.max(GRANULE).next_multiple_of(GRANULE);
        let exhausted = MemError::Exhausted {
            requested: bytes,
            free: 0,
        };
        let len = usize::try_from(bytes).map_err(|_| exhausted.clone())?;
        // SAFETY: an anonymous private mapping with a hint address; the
        // kernel picks another range when the hint is taken.
        let ptr = unsafe {
            libc::mmap(
                PREFERRED_BASE as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(exhausted);
        }
        Ok(Arena {
            base: ptr as u64,
            bytes,
            live: Mutex::new(BTreeMap::new()),
            touched: AtomicU64::new(0),
            host: RwLock::new(BTreeMap::new()),
            has_host: AtomicBool::new(false),
        })
    }

    /// Device (and host) address of the arena's first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Total capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.bytes
    }

    /// Allocates `len` zeroed bytes; returns the device address.
    pub fn alloc(&self, len: u64) -> Result<u64, MemError> {
        let size = len
            .max(1)
            .checked_next_multiple_of(GRANULE)
            .ok_or(MemError::Exhausted {
                requested: len,
                free: 0,
            })?;
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        // First fit between live allocations.
        let mut cursor = 0u64;
        for (&start, &length) in live.iter() {
            if start - cursor >= size {
                break;
            }
            cursor = start + length;
        }
        if self.bytes - cursor < size {
            let used: u64 = live.values().sum();
            return Err(MemError::Exhausted {
                requested: len,
                free: self.bytes - used,
            });
        }
        live.insert(cursor, size);
        let touched = self.touched.fetch_max(cursor + size, Relaxed);
        drop(live);
        if cursor < touched {
            self.zero(cursor, size.min(touched - cursor));
        }
        Ok(self.base + cursor)
    }

    /// Allocates `len` zeroed bytes at exactly `addr` (replaying a capture
    /// at the addresses it was recorded at).
    pub fn alloc_at(&self, addr: u64, len: u64) -> Result<u64, MemError> {
        let taken = MemError::Overlap { addr, len };
        let offset = addr.wrapping_sub(self.base);
        let size = len.max(1).next_multiple_of(GRANULE);
        if !offset.is_multiple_of(GRANULE) || offset >= self.bytes || self.bytes - offset < size {
            return Err(MemError::OutOfRange { addr, len });
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((&s, &l)) = live.range(..offset + size).next_back() {
            if s + l > offset {
                return Err(taken);
            }
        }
        live.insert(offset, size);
        let touched = self.touched.fetch_max(offset + size, Relaxed);
        drop(live);
        if offset < touched {
            self.zero(offset, size.min(touched - offset));
        }
        Ok(addr)
    }

    /// Frees an allocation made by [`Arena::alloc`].
    pub fn free(&self, addr: u64) -> Result<(), MemError> {
        let offset = addr.wrapping_sub(self.base);
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.remove(&offset)
            .map(|_| ())
            .ok_or(MemError::NotAllocated { addr })
    }

    fn zero(&self, offset: u64, len: u64) {
        let start = (self.base + offset) as usize;
        let end = start + len as usize;
        // Whole pages of a large block go back to the OS, which maps fresh
        // zero pages on the next touch: a large reused block costs nothing
        // until used. A small block is cleared by stores: giving pages back
        // costs a TLB shootdown on every core plus a fault per page on the
        // next touch, far more than clearing a few KiB (kernarg segments
        // are reused this way at every dispatch).
        const PAGE: usize = 4096;
        const GIVE_BACK_FROM: usize = 256 * 1024;
        let (inner_start, inner_end) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
        let (clear_to, clear_from) = if len as usize >= GIVE_BACK_FROM
            && inner_end > inner_start
            // SAFETY: a page-aligned range inside our own mapping that no
            // one can reach (it is being handed out by `alloc` right now).
            && unsafe {
                libc::madvise(
                    inner_start as *mut libc::c_void,
                    inner_end - inner_start,
                    libc::MADV_DONTNEED,
                )
            } == 0
        {
            (inner_start, inner_end)
        } else {
            (end, end)
        };
        for at in (start..clear_to)
            .step_by(8)
            .chain((clear_from..end).step_by(8))
        {
            Self::word(at).store(0, Relaxed);
        }
    }

    /// Checks `[addr, addr + len)` is reachable device memory; returns the
    /// host address of its first byte.
    #[inline(always)]
    pub fn check(&self, addr: u64, len: u64) -> Result<usize, MemError> {
        let offset = addr.wrapping_sub(self.base);
        // Only memory that has ever been allocated is reachable: above the
        // high-water mark nothing valid can live, so an access there is wild.
        let limit = self.touched.load(Relaxed);
        if offset < limit && len <= limit - offset {
            Ok(addr as usize)
        } else if self.has_host.load(Relaxed) {
            self.check_host(addr, len)
        } else {
            Err(MemError::OutOfRange { addr, len })
        }
    }

    #[cold]
    fn check_host(&self, addr: u64, len: u64) -> Result<usize, MemError> {
        let host = self.host.read().unwrap_or_else(|e| e.into_inner());
        match host.range(..=addr).next_back() {
            Some((&start, &length)) if addr - start < length && len <= length - (addr - start) => {
                Ok(addr as usize)
            }
            _ => Err(MemError::OutOfRange { addr, len }),
        }
    }

    /// Makes host memory outside the arena reachable by kernels at its own
    /// address (locked or registered host buffers, zero-copy imports).
    ///
    /// # Safety
    /// `[addr, addr + len)` must stay valid, writable host memory until
    /// [`Arena::unregister_host`] is called for it.
    pub unsafe fn register_host(&self, addr: u64, len: u64) -> Result<(), MemError> {
        let overlap = MemError::Overlap { addr, len };
        let end = addr.checked_add(len).ok_or(overlap.clone())?;
        if len == 0 || (addr < self.base + self.bytes && self.base < end) {
            return Err(overlap);
        }
        let mut host = self.host.write().unwrap_or_else(|e| e.into_inner());
        let before = host.range(..end).next_back();
        if before.is_some_and(|(&s, &l)| s + l > addr) {
            return Err(overlap);
        }
        host.insert(addr, len);
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
        if offset < self.bytes {
            let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            let (&start, &len) = live.range(..=offset).next_back()?;
            return (offset - start < len).then_some((self.base + start, len));
        }
        let host = self.host.read().unwrap_or_else(|e| e.into_inner());
        let (&start, &len) = host.range(..=addr).next_back()?;
        (addr - start < len).then_some((start, len))
    }

    /// Bytes currently allocated.
    pub fn used(&self) -> u64 {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.values().sum()
    }

    #[inline(always)]
    fn word(at: usize) -> &'static AtomicU64 {
        // SAFETY: callers pass a checked, 8-aligned address of live memory.
        unsafe { &*(at as *const AtomicU64) }
    }

    #[inline(always)]
    fn byte(at: usize) -> &'static AtomicU8 {
        // SAFETY: a checked address; AtomicU8 has alignment 1.
        unsafe { &*(at as *const AtomicU8) }
    }

    #[inline(always)]
    fn dword(at: usize) -> &'static AtomicU32 {
        // SAFETY: a checked, 4-aligned address.
        unsafe { &*(at as *const AtomicU32) }
    }

    /// Loads a little-endian 32-bit value.
    #[inline(always)]
    pub fn load_u32(&self, addr: u64) -> Result<u32, MemError> {
        let start = self.check(addr, 4)?;
        if start.is_multiple_of(4) {
            Ok(Self::dword(start).load(Relaxed))
        } else {
            let mut b = [0u8; 4];
            Self::read_bytes_at(start, &mut b);
            Ok(u32::from_le_bytes(b))
        }
    }

    /// Stores a little-endian 32-bit value.
    #[inline(always)]
    pub fn store_u32(&self, addr: u64, value: u32) -> Result<(), MemError> {
        let start = self.check(addr, 4)?;
        if start.is_multiple_of(4) {
            Self::dword(start).store(value, Relaxed);
        } else {
            Self::write_bytes_at(start, &value.to_le_bytes());
        }
        Ok(())
    }

    /// Loads consecutive dwords at `addr` with one range check (the common
    /// case of vector loads).
    #[inline(always)]
    pub fn load_dwords(&self, addr: u64, out: &mut [u32]) -> Result<(), MemError> {
        let start = self.check(addr, 4 * out.len() as u64)?;
        if start.is_multiple_of(4) {
            for (k, v) in out.iter_mut().enumerate() {
                *v = Self::dword(start + 4 * k).load(Relaxed);
            }
        } else {
            for (k, v) in out.iter_mut().enumerate() {
                let mut b = [0u8; 4];
                Self::read_bytes_at(start + 4 * k, &mut b);
                *v = u32::from_le_bytes(b);
            }
        }
        Ok(())
    }

    /// Stores consecutive dwords at `addr` with one range check.
    #[inline(always)]
    pub fn store_dwords(&self, addr: u64, values: &[u32]) -> Result<(), MemError> {
        let start = self.check(addr, 4 * values.len() as u64)?;
        if start.is_multiple_of(4) {
            for (k, v) in values.iter().enumerate() {
                Self::dword(start + 4 * k).store(*v, Relaxed);
            }
        } else {
            for (k, v) in values.iter().enumerate() {
                Self::write_bytes_at(start + 4 * k, &v.to_le_bytes());
            }
        }
        Ok(())
    }

    /// Reads `out.len()` bytes at `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let start = self.check(addr, out.len() as u64)?;
        Self::read_bytes_at(start, out);
        Ok(())
    }

    /// Writes `data` at `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let start = self.check(addr, data.len() as u64)?;
        Self::write_bytes_at(start, data);
        Ok(())
    }

    /// Bulk reads and writes go a byte at a time up to an 8-byte boundary,
    /// then a word at a time: relaxed word accesses compile to plain moves,
    /// so a transfer runs near memory speed while a kernel racing on the
    /// same bytes stays defined behaviour.
    fn read_bytes_at(start: usize, out: &mut [u8]) {
        let head = (start.next_multiple_of(8) - start).min(out.len());
        let (first, rest) = out.split_at_mut(head);
        for (i, b) in first.iter_mut().enumerate() {
            *b = Self::byte(start + i).load(Relaxed);
        }
        let mut words = rest.chunks_exact_mut(8);
        let mut at = start + head;
        for w in &mut words {
            w.copy_from_slice(&Self::word(at).load(Relaxed).to_le_bytes());
            at += 8;
        }
        for (i, b) in words.into_remainder().iter_mut().enumerate() {
            *b = Self::byte(at + i).load(Relaxed);
        }
    }

    fn write_bytes_at(start: usize, data: &[u8]) {
        let head = (start.next_multiple_of(8) - start).min(data.len());
        let (first, rest) = data.split_at(head);
        for (i, b) in first.iter().enumerate() {
            Self::byte(start + i).store(*b, Relaxed);
        }
        let mut words = rest.chunks_exact(8);
        let mut at = start + head;
        for w in &mut words {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            Self::word(at).store(v, Relaxed);
            at += 8;
        }
        for (i, b) in words.remainder().iter().enumerate() {
            Self::byte(at + i).store(*b, Relaxed);
        }
    }

    /// Atomic read-modify-write of an aligned 32-bit value; returns the old
    /// value. `f` may be called more than once.
    pub fn rmw_u32(&self, addr: u64, f: impl Fn(u32) -> u32) -> Result<u32, MemError> {
        let start = self.check(addr, 4)?;
        if !start.is_multiple_of(4) {
            return Err(MemError::OutOfRange { addr, len: 4 });
        }
        let cell = Self::dword(start);
        let mut old = cell.load(Relaxed);
        loop {
            match cell.compare_exchange_weak(old, f(old), Relaxed, Relaxed) {
                Ok(v) => return Ok(v),
                Err(v) => old = v,
            }
        }
    }

    /// Atomic read-modify-write of an aligned 64-bit value; returns the old value.
    pub fn rmw_u64(&self, addr: u64, f: impl Fn(u64) -> u64) -> Result<u64, MemError> {
        let start = self.check(addr, 8)?;
        if !start.is_multiple_of(8) {
            return Err(MemError::OutOfRange { addr, len: 8 });
        }
        let cell = Self::word(start);
        let mut old = cell.load(Relaxed);
        loop {
            match cell.compare_exchange_weak(old, f(old), Relaxed, Relaxed) {
                Ok(v) => return Ok(v),
                Err(v) => old = v,
            }
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: mapped in `new` with this length; no borrows outlive self.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.bytes as usize) };
    }
}

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
        assert_eq!(arena.alloc(16).unwrap(), a, "first fit reuses the hole");
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

    #[test]
    fn never_allocated_memory_is_unreachable_and_reuse_is_zeroed() {
        let arena = Arena::new(1 << 20).unwrap();
        let a = arena.alloc(512).unwrap();
        assert!(
            arena.store_u32(a + 600, 1).is_err(),
            "above the high-water mark"
        );
        arena.store_u32(a + 100, 7).unwrap();
        arena.free(a).unwrap();
        let b = arena.alloc(512).unwrap();
        assert_eq!(b, a);
        assert_eq!(
            arena.load_u32(b + 100).unwrap(),
            0,
            "a reused block starts zeroed"
        );
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
