//! Anonymous memory mappings the arena is made of.

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
