//! Anonymous memory mappings the arena is made of, and the files placed
//! over parts of them (HSA's virtual and IPC memory).

use std::os::fd::{AsRawFd, BorrowedFd};

use super::MemError;

/// A private anonymous mapping reserved without swap (`MAP_NORESERVE`):
/// pages read as zero and cost memory only once written.
pub(super) struct Map {
    ptr: usize,
    len: usize,
}

impl Map {
    /// Maps `len` bytes (at least one page), at `hint` if that range is free.
    pub fn new(len: u64, hint: Option<u64>) -> Option<Map> {
        let len = usize::try_from(len.max(4096)).ok()?;
        // SAFETY: an anonymous private mapping, optionally with a hint
        // address; the kernel picks another range when the hint is taken,
        // so no existing mapping is replaced.
        let ptr = unsafe {
            libc::mmap(
                hint.unwrap_or(0) as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Map {
            ptr: ptr as usize,
            len,
        })
    }

    /// Host address of the mapping's first byte.
    pub fn base(&self) -> usize {
        self.ptr
    }

    /// Host address of byte `offset` (callers keep it below the length).
    #[inline(always)]
    pub fn at(&self, offset: u64) -> usize {
        debug_assert!((offset as usize) < self.len);
        self.ptr + offset as usize
    }

    /// Gives the whole pages inside `[offset, offset + len)` back to the
    /// OS; they read as zeros afterwards. Returns the page-aligned range
    /// given back (empty when none).
    pub fn discard(&self, offset: u64, len: u64) -> std::ops::Range<u64> {
        const PAGE: u64 = 4096;
        let (start, end) = (offset.next_multiple_of(PAGE), (offset + len) / PAGE * PAGE);
        if end <= start {
            return start..start;
        }
        // SAFETY: a page-aligned range inside our own mapping, which stays
        // mapped: MADV_DONTNEED on private anonymous memory only makes its
        // pages read back as zeros. No Rust reference to these bytes
        // exists (they are only accessed through atomics, briefly); a
        // kernel using a stale pointer into them sees old bytes or zeros.
        let done = unsafe {
            libc::madvise(
                (self.ptr + start as usize) as *mut libc::c_void,
                (end - start) as usize,
                libc::MADV_DONTNEED,
            )
        } == 0;
        if done {
            start..end
        } else {
            start..start
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: mapped in `new` with this length. Every reference into
        // the mapping lives within a borrow of its owner (the arena keeps
        // itself alive while references exist, e.g. a queue's headers), so
        // none outlives the unmapping.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Places `len` bytes of the file `fd` from `file_offset` (shared, so
/// every mapping of the file sees the same bytes) over the page-aligned
/// range at `addr`, replacing the pages there.
///
/// # Safety
/// The range must lie inside the arena's own mapping, in pages no other
/// allocation uses, with no Rust reference to its bytes (arena bytes are
/// only reached through atomics); the file must stay at least
/// `file_offset + len` bytes long while it is placed there.
pub(super) unsafe fn place_file(
    addr: u64,
    len: u64,
    fd: BorrowedFd<'_>,
    file_offset: u64,
) -> Result<(), MemError> {
    let flags = libc::MAP_SHARED | libc::MAP_FIXED;
    // SAFETY: the caller's promises; MAP_FIXED replaces only that range.
    unsafe { place(addr, len, flags, fd.as_raw_fd(), file_offset) }
}

/// Puts fresh anonymous pages (reading zeros, readable and writable like
/// the rest of the arena) back over the page-aligned range at `addr`, so
/// that it shares nothing with a file any more.
///
/// # Safety
/// As for [`place_file`]: a range of the arena's own mapping that no other
/// allocation uses and no Rust reference points into.
pub(super) unsafe fn place_anonymous(addr: u64, len: u64) -> Result<(), MemError> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED;
    // SAFETY: the caller's promises; MAP_FIXED replaces only that range.
    unsafe { place(addr, len, flags, -1, 0) }
}

/// `mmap` with `MAP_FIXED` at `addr`, read-write.
///
/// # Safety
/// As for [`place_file`].
unsafe fn place(addr: u64, len: u64, flags: i32, fd: i32, offset: u64) -> Result<(), MemError> {
    // SAFETY: the callers' promises: a range of the arena's own mapping
    // that nothing else uses.
    let placed = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            offset as libc::off_t,
        )
    };
    if placed == libc::MAP_FAILED {
        return Err(MemError::Exhausted {
            requested: len,
            free: 0,
        });
    }
    Ok(())
}
