//! Private (scratch) memory from a block: the helpers its code calls.
//!
//! A block addresses the wave's private memory through its page table,
//! which [`pages`] hands it once a block run. The block itself checks, in
//! its scalar phase, that each access lies inside every lane's segment
//! (the interpreter's `ops::vmem` check: lane `l` owns `lane_bytes` from
//! `l * lane_bytes`) and inside one granule of the segment's alignment,
//! so no lane's access crosses a page; otherwise it leaves having changed
//! nothing, and the interpreter runs the access (and faults exactly where
//! it does). A lane loading from a page never written reads
//! [`ZERO_PAGE`]; before a store, [`materialise`] gives every active
//! lane's page a zeroed one, as the interpreter's write would.

use softgpu_interp::wave::{PrivateMemory, PRIVATE_PAGE};

/// What a load from a page not materialised reads: zeros.
pub static ZERO_PAGE: [u8; PRIVATE_PAGE] = [0; PRIVATE_PAGE];

/// The signature of [`pages`] as the block calls it.
pub type Pages = unsafe extern "C" fn(*mut PrivateMemory, u64, *mut u64) -> u32;

/// 1 when a block of `lanes` lanes may address `private` directly:
/// `out[0]` is then its page table (a host pointer to each page's bytes,
/// null where not materialised, `PrivateMemory::jit_pages`), which covers
/// every lane's segment, `out[1]` its bytes a lane and `out[2]` the
/// granule (1 to 16 bytes, a power of two dividing the bytes a lane) an
/// access must stay inside; else 0 (initcheck on, or fewer lanes'
/// segments than the wave has), and the interpreter runs the block's
/// slots.
///
/// # Safety
/// `private` points to the wave's `PrivateMemory`, which `Block::run`
/// holds `&mut` for the call, and `out` to three writable `u64`s.
pub unsafe extern "C" fn pages(private: *mut PrivateMemory, lanes: u64, out: *mut u64) -> u32 {
    // SAFETY: as the caller promises: nothing else uses the wave's
    // private memory during the block.
    let private = unsafe { &*private };
    let Some((table, len)) = private.jit_pages() else {
        return 0;
    };
    let lane_bytes = private.lane_bytes();
    let need = (lanes as usize).checked_mul(lane_bytes);
    if need.is_none_or(|need| need > len * PRIVATE_PAGE) {
        return 0;
    }
    // The largest power of two up to 16 dividing `lane_bytes`: every
    // lane's segment starts on such a boundary, and pages are multiples
    // of it.
    let granule = 1u64 << (lane_bytes | 16).trailing_zeros();
    // SAFETY: `out` is three `u64`s of the block's own stack frame.
    unsafe {
        out.write(table as u64);
        out.add(1).write(lane_bytes as u64);
        out.add(2).write(granule);
    }
    1
}

/// The signature of [`materialise`] as the block calls it.
pub type Materialise = unsafe extern "C" fn(*mut PrivateMemory, u64, u64, u64, u64) -> u32;

/// Before a store of `bytes` a lane at private address `addr`, which the
/// block checked lies inside every lane's segment: materialises the page
/// of each lane below `lanes` that `exec` has on, as the interpreter's
/// write does. 1 when done, 0 when the budget refused a page (the block
/// then leaves, and the interpreter's store faults).
///
/// # Safety
/// As for [`pages`]: `private` points to the wave's `PrivateMemory`.
pub unsafe extern "C" fn materialise(
    private: *mut PrivateMemory,
    addr: u64,
    bytes: u64,
    exec: u64,
    lanes: u64,
) -> u32 {
    // SAFETY: as the caller promises.
    let private = unsafe { &mut *private };
    let lane_bytes = private.lane_bytes();
    for l in (0..lanes.min(64) as usize).filter(|&l| exec >> l & 1 != 0) {
        let at = l * lane_bytes + addr as usize;
        if private.materialise_range(at, bytes as usize).is_err() {
            return 0;
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table points at each page's bytes, null where absent, and a
    /// store's pages are materialised for its active lanes only.
    #[test]
    fn pages_and_materialise() {
        let mut private = PrivateMemory::default();
        private.reset(200, 32, false, None);
        private.write(200 * 31 + 8, &[7, 8]).unwrap();
        let mut out = [0u64; 3];
        // SAFETY: a live private memory and three u64s.
        assert_eq!(unsafe { pages(&mut private, 32, out.as_mut_ptr()) }, 1);
        assert_eq!((out[1], out[2]), (200, 8));
        let table = out[0] as *const *mut u8;
        // SAFETY: the table has 200 * 32 / 4096 rounded up = 2 entries.
        let (first, second) = unsafe { (*table, *table.add(1)) };
        assert!(first.is_null());
        // SAFETY: the second page is materialised: 4096 bytes.
        assert_eq!(unsafe { *second.add(200 * 31 + 9 - PRIVATE_PAGE) }, 8);
        // SAFETY: as above.
        assert_eq!(unsafe { materialise(&mut private, 0, 4, 0b10, 32) }, 1);
        // SAFETY: as above.
        assert!(!unsafe { *table }.is_null());
        // A wave64 block needs 64 lanes' segments.
        // SAFETY: as above.
        assert_eq!(unsafe { pages(&mut private, 64, out.as_mut_ptr()) }, 0);
        // initcheck keeps its bits only in the interpreter.
        private.reset(64, 32, true, None);
        // SAFETY: as above.
        assert_eq!(unsafe { pages(&mut private, 32, out.as_mut_ptr()) }, 0);
    }
}
