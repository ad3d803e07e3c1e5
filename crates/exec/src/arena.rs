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
//!   accessors, [`copy`] and [`fill_u32`], and atomic references to queue
//!   headers in the runtime. No `&[u8]`, `&mut` or plain load or store of it
//!   exists, so no access from Rust is a non-atomic data race. (The HSA C
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
//! - The mapping lives as long as the `Arena`, so an address that passed
//!   [`Arena::check`] stays mapped while `&self` does (freed allocations stay
//!   mapped: a stale device pointer reads stale or reused bytes, as on a
//!   GPU). Registered host memory stays valid only as long as its
//!   registrant promised (see [`Arena::register_host`]).

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

// `Arena` is `Send` and `Sync` by its fields alone (it holds the mapping's
// address as an integer): that sharing it between threads is sound is the
// accessors' business, see the module's "Concurrency".

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
            // SAFETY: a page-aligned range inside our own mapping, which
            // stays mapped: MADV_DONTNEED on private anonymous memory only
            // makes its pages read back as zeros. The block is being handed
            // out by `alloc`; a kernel still using a stale pointer into it
            // (it was free) sees old bytes or zeros, as with the stores
            // below, and no Rust reference to these bytes exists.
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
            // SAFETY: 8-aligned (the block and the pages are), inside the
            // mapping, which outlives `&self`; accessed atomically only.
            unsafe { word(at) }.store(0, Relaxed);
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

    /// Loads a little-endian 32-bit value.
    #[inline(always)]
    pub fn load_u32(&self, addr: u64) -> Result<u32, MemError> {
        let start = self.check(addr, 4)?;
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
    pub fn store_u32(&self, addr: u64, value: u32) -> Result<(), MemError> {
        let start = self.check(addr, 4)?;
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
    pub fn load_dwords(&self, addr: u64, out: &mut [u32]) -> Result<(), MemError> {
        let start = self.check(addr, 4 * out.len() as u64)?;
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
    pub fn store_dwords(&self, addr: u64, values: &[u32]) -> Result<(), MemError> {
        let start = self.check(addr, 4 * values.len() as u64)?;
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
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let start = self.check(addr, out.len() as u64)?;
        // SAFETY: `check` passed for `out.len()` bytes.
        unsafe { load_bytes(start, out) };
        Ok(())
    }

    /// Writes `data` at `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let start = self.check(addr, data.len() as u64)?;
        // SAFETY: `check` passed for `data.len()` bytes.
        unsafe { store_bytes(start, data) };
        Ok(())
    }

    /// Atomic read-modify-write of an aligned 32-bit value; returns the old
    /// value. `f` may be called more than once.
    pub fn rmw_u32(&self, addr: u64, f: impl Fn(u32) -> u32) -> Result<u32, MemError> {
        let start = self.check(addr, 4)?;
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
    pub fn rmw_u64(&self, addr: u64, f: impl Fn(u64) -> u64) -> Result<u64, MemError> {
        let start = self.check(addr, 8)?;
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

/// Copies `len` bytes from host address `src` to `dst`; the ranges may
/// overlap (as `memmove`). Every access is a relaxed atomic, so a kernel
/// racing on either range is an atomic race, not a data race: this is how
/// a runtime copies into, out of or within device memory. The bytes go
/// through a small buffer, each side split into bytes and words by its own
/// alignment, so the copy is word-wide on both sides whatever their
/// relative alignment.
///
/// # Safety
/// `[src, src + len)` must be valid for reads and `[dst, dst + len)` for
/// reads and writes during the call (arena memory that passed
/// [`Arena::check`], registered host memory, or host memory the caller
/// vouches for), and no Rust code may access either range other than
/// atomically meanwhile.
pub unsafe fn copy(dst: usize, src: usize, len: usize) {
    const CHUNK: usize = 4096;
    let mut buffer = [0u8; CHUNK];
    // A destination above an overlapping source is copied from the end,
    // so no chunk overwrites source bytes not yet read.
    let backward = dst > src && dst - src < len;
    let mut done = 0;
    while done < len {
        let n = CHUNK.min(len - done);
        let at = if backward { len - done - n } else { done };
        let chunk = &mut buffer[..n];
        // SAFETY: `[at, at + n)` lies inside both of the caller's ranges.
        unsafe {
            load_bytes(src + at, chunk);
            store_bytes(dst + at, chunk);
        }
        done += n;
    }
}

/// Stores `value` in the `count` 32-bit words from host address `dst`,
/// with relaxed atomic stores, word-wide where aligned (as [`copy`]).
///
/// # Safety
/// `dst` must be 4-aligned, and `[dst, dst + 4 * count)` valid for reads
/// and writes and accessed only atomically during the call.
pub unsafe fn fill_u32(dst: usize, value: u32, count: usize) {
    let end = dst + 4 * count;
    let mut at = dst;
    if !at.is_multiple_of(8) && at < end {
        // SAFETY: 4-aligned and inside the caller's range.
        unsafe { dword(at) }.store(value, Relaxed);
        at += 4;
    }
    let pair = u64::from(value) | u64::from(value) << 32;
    while end - at >= 8 {
        // SAFETY: 8-aligned from here and inside the caller's range.
        unsafe { word(at) }.store(pair, Relaxed);
        at += 8;
    }
    if at < end {
        // SAFETY: the last 4 bytes of the caller's range, 4-aligned.
        unsafe { dword(at) }.store(value, Relaxed);
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: mapped in `new` with this length. Every reference into
        // the mapping lives within a borrow of `self` (or the runtime keeps
        // the arena alive while it holds one, e.g. a queue's headers), so
        // none outlives the unmapping.
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
                // SAFETY: both ranges lie in the live allocation at `base`,
                // touched only through the arena here.
                unsafe { copy((base as usize) + dst, (base as usize) + src, len) };
                let mut got = vec![0u8; size];
                arena.read(base, &mut got).unwrap();
                assert!(got == model, "copy of {len} from +{src} to +{dst}");
            }
        }
    }

    #[test]
    fn fill_u32_stores_exactly_count_words() {
        let arena = Arena::new(1 << 20).unwrap();
        let base = arena.alloc(256).unwrap();
        for start in [0usize, 4, 8, 12] {
            for count in [0usize, 1, 2, 3, 8, 9] {
                arena.write(base, &[0xEE; 256]).unwrap();
                // SAFETY: inside the live allocation, 4-aligned.
                unsafe { fill_u32(base as usize + start, 0x0403_0201, count) };
                let mut got = [0u8; 256];
                arena.read(base, &mut got).unwrap();
                let mut model = [0xEEu8; 256];
                for k in 0..count {
                    model[start + 4 * k..start + 4 * k + 4].copy_from_slice(&[1, 2, 3, 4]);
                }
                assert_eq!(got, model, "{count} words at +{start}");
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
