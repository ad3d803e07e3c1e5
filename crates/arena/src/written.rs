//! initcheck for global memory: which bytes of an allocation were written
//! since it was made, one bit per byte.
//!
//! Kept only for allocations every write to which the runtime sees
//! ([`super::AllocSpec::device_only`]: device memory a program reaches
//! through kernels and runtime copies and fills, never through a host
//! pointer), and only while initcheck is on when they are made
//! ([`super::Arena::track_writes`]). Kernels' writes are marked by the
//! sanitizer before each store, the runtime's by the arena's host writes
//! and by the runtime's copies and fills ([`super::Arena::mark_written`]).

use std::alloc::Layout;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One allocation's written bits: bit `b % 64` of word `b / 64` is set once
/// byte `b` was written.
pub struct Written {
    words: Box<[AtomicU64]>,
}

impl Written {
    /// No byte of `len` written. The bits come from zeroed memory, which
    /// the OS maps lazily: a large allocation pays for the parts touched.
    pub(super) fn new(len: u64) -> Written {
        let n = len.div_ceil(64) as usize;
        if n == 0 {
            return Written {
                words: Box::new([]),
            };
        }
        let layout = Layout::array::<AtomicU64>(n).expect("bitmap of an arena allocation");
        // SAFETY: `layout` is non-zero-sized. All-zero bytes are a valid
        // `AtomicU64` (value 0), so the zeroed allocation is `n`
        // initialised atomics, allocated by the global allocator with the
        // layout of `[AtomicU64; n]`, which is what `Box` frees it with.
        let words = unsafe {
            let p = std::alloc::alloc_zeroed(layout).cast::<AtomicU64>();
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n))
        };
        Written { words }
    }

    /// Bytes covered.
    fn len(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// Marks bytes `[from, to)` written (offsets in the allocation; past
    /// its end ignored).
    pub fn mark(&self, from: u64, to: u64) {
        let to = to.min(self.len());
        let mut at = from;
        while at < to {
            let (word, bit) = ((at / 64) as usize, at % 64);
            let n = (to - at).min(64 - bit);
            let mask = mask(bit, n);
            let w = &self.words[word];
            if mask == u64::MAX {
                w.store(u64::MAX, Relaxed);
            } else if w.load(Relaxed) & mask != mask {
                w.fetch_or(mask, Relaxed);
            }
            at += n;
        }
    }

    /// The first byte of `[from, to)` never written (offsets in the
    /// allocation; past its end not checked).
    pub fn first_unwritten(&self, from: u64, to: u64) -> Option<u64> {
        let to = to.min(self.len());
        let mut at = from;
        while at < to {
            let (word, bit) = ((at / 64) as usize, at % 64);
            let n = (to - at).min(64 - bit);
            let missing = !self.words[word].load(Relaxed) & mask(bit, n);
            if missing != 0 {
                return Some(at - bit + u64::from(missing.trailing_zeros()));
            }
            at += n;
        }
        None
    }
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Written({} bytes)", self.len())
    }
}

/// `n` set bits (1..=64) from bit `bit`.
fn mask(bit: u64, n: u64) -> u64 {
    let ones = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    ones << bit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_finds_exact_bytes_across_words() {
        let w = Written::new(300);
        assert_eq!(w.first_unwritten(0, 300), Some(0));
        w.mark(3, 130);
        assert_eq!(w.first_unwritten(3, 130), None);
        assert_eq!(w.first_unwritten(0, 4), Some(0));
        assert_eq!(w.first_unwritten(100, 140), Some(130));
        w.mark(0, 3);
        w.mark(130, 300);
        assert_eq!(w.first_unwritten(0, 300), None);
        // Past the end: ignored.
        w.mark(290, 1000);
        assert_eq!(w.first_unwritten(299, 1000), None);
        assert!(Written::new(0).first_unwritten(0, 8).is_none());
    }
}
