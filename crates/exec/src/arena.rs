//! Device memory: one arena the executor owns.
//!
//! Every device address a kernel can use maps into this arena or is refused.
//! Accesses go through relaxed atomics, so workgroups running on several host
//! threads may touch the same bytes (as GPU kernels do) without undefined
//! behaviour, and an address outside a live allocation is an error, never a
//! host access.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;

/// Device address of the arena's first byte. Non-zero so that null and small
/// pointers fault.
pub const ARENA_BASE: u64 = 0x1_0000_0000;
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
}

/// The device's memory. Shared by reference between worker threads.
pub struct Arena {
    words: *mut AtomicU64,
    bytes: u64,
    /// Live allocations: start offset → length (granule-rounded).
    live: Mutex<BTreeMap<u64, u64>>,
    /// High-water mark of allocations. Accesses are confined below it, so
    /// above it the memory is still the OS's zero pages and allocations
    /// there need no clearing.
    touched: AtomicU64,
}

// SAFETY: the arena's memory is only ever accessed through atomics.
unsafe impl Send for Arena {}
unsafe impl Sync for Arena {}

impl Arena {
    /// Reserves `bytes` of zeroed device memory (pages are committed lazily by
    /// the host OS, so a large arena costs only what kernels touch).
    pub fn new(bytes: u64) -> Result<Arena, MemError> {
        let bytes = bytes.max(GRANULE).next_multiple_of(GRANULE);
        let layout = Self::layout(bytes).ok_or(MemError::Exhausted {
            requested: bytes,
            free: 0,
        })?;
        // SAFETY: the layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) } as *mut AtomicU64;
        if ptr.is_null() {
            return Err(MemError::Exhausted {
                requested: bytes,
                free: 0,
            });
        }
        Ok(Arena {
            words: ptr,
            bytes,
            live: Mutex::new(BTreeMap::new()),
            touched: AtomicU64::new(0),
        })
    }

    fn layout(bytes: u64) -> Option<Layout> {
        // Alignment 16 lets the system allocator use calloc, which maps
        // fresh zero pages lazily instead of clearing the whole arena.
        Layout::from_size_align(usize::try_from(bytes).ok()?, 16).ok()
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
        Ok(ARENA_BASE + cursor)
    }

    /// Frees an allocation made by [`Arena::alloc`].
    pub fn free(&self, addr: u64) -> Result<(), MemError> {
        let offset = addr.wrapping_sub(ARENA_BASE);
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.remove(&offset)
            .map(|_| ())
            .ok_or(MemError::NotAllocated { addr })
    }

    fn zero(&self, offset: u64, len: u64) {
        for word in (offset / 8)..(offset + len).div_ceil(8) {
            self.word(word as usize).store(0, Relaxed);
        }
    }

    #[inline(always)]
    fn word(&self, index: usize) -> &AtomicU64 {
        // SAFETY: callers check index < bytes / 8.
        unsafe { &*self.words.add(index) }
    }

    /// Checks `[addr, addr + len)` lies in the arena; returns the offset.
    #[inline(always)]
    pub fn check(&self, addr: u64, len: u64) -> Result<usize, MemError> {
        let offset = addr.wrapping_sub(ARENA_BASE);
        // Only memory that has ever been allocated is reachable: above the
        // high-water mark nothing valid can live, so an access there is wild.
        let limit = self.touched.load(Relaxed);
        if offset < limit && len <= limit - offset {
            Ok(offset as usize)
        } else {
            Err(MemError::OutOfRange { addr, len })
        }
    }

    #[inline(always)]
    fn byte(&self, offset: usize) -> &AtomicU8 {
        // SAFETY: in bounds (checked by the caller); AtomicU8 has alignment 1.
        unsafe { &*(self.words as *const AtomicU8).add(offset) }
    }

    #[inline(always)]
    fn dword(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: in bounds and 4-aligned (checked by the caller).
        unsafe { &*((self.words as *const u8).add(offset) as *const AtomicU32) }
    }

    /// Loads a little-endian 32-bit value.
    #[inline(always)]
    pub fn load_u32(&self, addr: u64) -> Result<u32, MemError> {
        let offset = self.check(addr, 4)?;
        if offset.is_multiple_of(4) {
            Ok(self.dword(offset).load(Relaxed))
        } else {
            let mut b = [0u8; 4];
            self.read_bytes_at(offset, &mut b);
            Ok(u32::from_le_bytes(b))
        }
    }

    /// Stores a little-endian 32-bit value.
    #[inline(always)]
    pub fn store_u32(&self, addr: u64, value: u32) -> Result<(), MemError> {
        let offset = self.check(addr, 4)?;
        if offset.is_multiple_of(4) {
            self.dword(offset).store(value, Relaxed);
        } else {
            self.write_bytes_at(offset, &value.to_le_bytes());
        }
        Ok(())
    }

    /// Loads consecutive dwords at `addr` with one range check (the common
    /// case of vector loads).
    #[inline(always)]
    pub fn load_dwords(&self, addr: u64, out: &mut [u32]) -> Result<(), MemError> {
        let offset = self.check(addr, 4 * out.len() as u64)?;
        if offset.is_multiple_of(4) {
            for (k, v) in out.iter_mut().enumerate() {
                *v = self.dword(offset + 4 * k).load(Relaxed);
            }
        } else {
            for (k, v) in out.iter_mut().enumerate() {
                let mut b = [0u8; 4];
                self.read_bytes_at(offset + 4 * k, &mut b);
                *v = u32::from_le_bytes(b);
            }
        }
        Ok(())
    }

    /// Stores consecutive dwords at `addr` with one range check.
    #[inline(always)]
    pub fn store_dwords(&self, addr: u64, values: &[u32]) -> Result<(), MemError> {
        let offset = self.check(addr, 4 * values.len() as u64)?;
        if offset.is_multiple_of(4) {
            for (k, v) in values.iter().enumerate() {
                self.dword(offset + 4 * k).store(*v, Relaxed);
            }
        } else {
            for (k, v) in values.iter().enumerate() {
                self.write_bytes_at(offset + 4 * k, &v.to_le_bytes());
            }
        }
        Ok(())
    }

    /// Reads `out.len()` bytes at `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let offset = self.check(addr, out.len() as u64)?;
        self.read_bytes_at(offset, out);
        Ok(())
    }

    /// Writes `data` at `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let offset = self.check(addr, data.len() as u64)?;
        self.write_bytes_at(offset, data);
        Ok(())
    }

    fn read_bytes_at(&self, offset: usize, out: &mut [u8]) {
        let mut i = 0;
        while i < out.len() {
            let at = offset + i;
            if at.is_multiple_of(4) && out.len() - i >= 4 {
                out[i..i + 4].copy_from_slice(&self.dword(at).load(Relaxed).to_le_bytes());
                i += 4;
            } else {
                out[i] = self.byte(at).load(Relaxed);
                i += 1;
            }
        }
    }

    fn write_bytes_at(&self, offset: usize, data: &[u8]) {
        let mut i = 0;
        while i < data.len() {
            let at = offset + i;
            if at.is_multiple_of(4) && data.len() - i >= 4 {
                let v = u32::from_le_bytes(data[i..i + 4].try_into().unwrap());
                self.dword(at).store(v, Relaxed);
                i += 4;
            } else {
                self.byte(at).store(data[i], Relaxed);
                i += 1;
            }
        }
    }

    /// Atomic read-modify-write of an aligned 32-bit value; returns the old
    /// value. `f` may be called more than once.
    pub fn rmw_u32(&self, addr: u64, f: impl Fn(u32) -> u32) -> Result<u32, MemError> {
        let offset = self.check(addr, 4)?;
        if !offset.is_multiple_of(4) {
            return Err(MemError::OutOfRange { addr, len: 4 });
        }
        let cell = self.dword(offset);
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
        let offset = self.check(addr, 8)?;
        if !offset.is_multiple_of(8) {
            return Err(MemError::OutOfRange { addr, len: 8 });
        }
        let cell = self.word(offset / 8);
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
        if let Some(layout) = Self::layout(self.bytes) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.words as *mut u8, layout) }
        }
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
        assert!(arena.load_u32(ARENA_BASE + 4094).is_err());
        assert!(arena.store_u32(u64::MAX - 1, 0).is_err());
        assert!(matches!(
            arena.alloc(1 << 20),
            Err(MemError::Exhausted { .. })
        ));
    }
}
