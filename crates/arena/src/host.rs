//! Host memory a client only gave us a pointer to.
//!
//! A pointer outside the arena that a runtime call is handed (the host side
//! of a copy, the destination of a fill, a range to lock) may be wild.
//! Dereferencing it would turn the client's mistake into a SIGSEGV of the
//! whole process, so every such range is checked before it is touched,
//! once per call (not per byte, so copies keep their speed):
//!
//! 1. `msync(MS_ASYNC)` over the range's pages, which fails with `ENOMEM`
//!    when any page of it is not mapped: the operating system's own answer,
//!    current at the moment of the call (a range unmapped a moment ago is
//!    refused), for a few hundred nanoseconds and no page walk.
//! 2. The permissions, from a cached copy of the process's mappings
//!    (`/proc/self/maps`), read again whenever it does not show the range
//!    readable (and writable, for a destination): new mappings are found
//!    on their first use, and a guard page (`PROT_NONE`) or a read-only
//!    page is refused.
//!
//! What this cannot see: a range whose permissions another thread lowers
//! (`mprotect`) after the cache last read them, or that another thread
//! unmaps between the check and the transfer. Both are races of the
//! client's own making on memory it handed to the runtime.
//!
//! [`is_mapped`] is how host ranges are vetted before kernels may reach
//! them (`hsa_amd_memory_lock`, `hipHostRegister`): it reads the mappings
//! afresh.

use std::sync::RwLock;

use super::MemError;

/// One mapping: `[start, end)` and whether it is readable and writable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mapping {
    start: u64,
    end: u64,
    read: bool,
    write: bool,
}

/// The process's mappings as last read, in address order.
static MAPPINGS: RwLock<Vec<Mapping>> = RwLock::new(Vec::new());

/// Checks that `[addr, addr + len)` is mapped in this process for its whole
/// length, readable, and writable too when `write`; else says which range
/// is not.
pub fn check(addr: u64, len: u64, write: bool) -> Result<(), MemError> {
    let refused = MemError::Unmapped { addr, len, write };
    if len == 0 {
        return Ok(());
    }
    let end = addr.checked_add(len).ok_or(refused.clone())?;
    if usize::try_from(end).is_err() || !all_pages_mapped(addr, end) {
        return Err(refused);
    }
    let cached = MAPPINGS.read().unwrap_or_else(|e| e.into_inner());
    if covered(&cached, addr, end, write) {
        return Ok(());
    }
    drop(cached);
    let fresh = read_mappings().ok_or(refused.clone())?;
    let ok = covered(&fresh, addr, end, write);
    *MAPPINGS.write().unwrap_or_else(|e| e.into_inner()) = fresh;
    ok.then_some(()).ok_or(refused)
}

/// Whether every page of `[addr, addr + len)` is mapped now, whatever its
/// permissions: one system call, cheap enough to ask before every dispatch.
pub fn pages_mapped(addr: u64, len: u64) -> bool {
    addr.checked_add(len)
        .is_some_and(|end| usize::try_from(end).is_ok() && all_pages_mapped(addr, end))
}

/// Whether every page of `[addr, end)` is mapped now (`msync` fails with
/// `ENOMEM` for a range holding an unmapped page).
fn all_pages_mapped(addr: u64, end: u64) -> bool {
    const PAGE: u64 = 4096;
    let first = addr / PAGE * PAGE;
    let Ok(len) = usize::try_from(end.next_multiple_of(PAGE) - first) else {
        return false;
    };
    // SAFETY: MS_ASYNC on any address range only checks that it is mapped
    // (and starts an asynchronous writeback of shared file pages, which
    // changes nothing the process can see); it reads and writes no memory
    // of ours.
    unsafe { libc::msync(first as *mut libc::c_void, len, libc::MS_ASYNC) == 0 }
}

/// Whether `[addr, addr + len)` is mapped in this process for its whole
/// length, readable, and writable too when `write`, as the process's
/// mappings say at the time of the call.
pub fn is_mapped(addr: u64, len: u64, write: bool) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let Some(fresh) = read_mappings() else {
        return false;
    };
    let ok = covered(&fresh, addr, end, write);
    *MAPPINGS.write().unwrap_or_else(|e| e.into_inner()) = fresh;
    ok
}

/// The process's mappings, from `/proc/self/maps`.
fn read_mappings() -> Option<Vec<Mapping>> {
    let text = std::fs::read_to_string("/proc/self/maps").ok()?;
    Some(parse(&text))
}

/// The mappings listed in `maps` (the format of `/proc/PID/maps`).
fn parse(maps: &str) -> Vec<Mapping> {
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (lo, hi) = fields.next()?.split_once('-')?;
            let perms = fields.next()?.as_bytes();
            Some(Mapping {
                start: u64::from_str_radix(lo, 16).ok()?,
                end: u64::from_str_radix(hi, 16).ok()?,
                read: perms.first() == Some(&b'r'),
                write: perms.get(1) == Some(&b'w'),
            })
        })
        .collect()
}

/// Whether `maps` (in address order) cover `[start, end)` without a gap,
/// each readable (and writable when `write`).
fn covered(maps: &[Mapping], start: u64, end: u64, write: bool) -> bool {
    let first = maps.partition_point(|m| m.end <= start);
    let mut at = start;
    for m in &maps[first..] {
        if at >= end {
            break;
        }
        if m.start > at || !m.read || (write && !m.write) {
            return false;
        }
        at = m.end;
    }
    at >= end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_memory_passes_and_wild_addresses_do_not() {
        let heap = Box::new([0u8; 100]);
        assert!(check(heap.as_ptr() as u64, 100, true).is_ok());
        for wild in [0x1000u64, 0xdea_dbee_f000, u64::MAX - 4] {
            for write in [false, true] {
                let got = check(wild, 16, write);
                assert!(matches!(got, Err(MemError::Unmapped { addr, .. }) if addr == wild));
            }
        }
        assert!(check(0x1000, 0, true).is_ok(), "nothing to touch");
    }

    #[test]
    fn read_only_memory_is_not_writable() {
        static CONSTANT: [u8; 32] = [1; 32];
        let at = CONSTANT.as_ptr() as u64;
        assert!(check(at, 32, false).is_ok());
        assert!(matches!(
            check(at, 32, true),
            Err(MemError::Unmapped { write: true, .. })
        ));
        assert!(is_mapped(at, 32, false));
        assert!(!is_mapped(at, 32, true));
    }

    #[test]
    fn unmapped_and_protected_pages_are_found_even_after_caching() {
        let page = 4096usize;
        // SAFETY: a fresh anonymous mapping of three pages, not referenced
        // by Rust code; pages are unmapped or protected below.
        let base = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                3 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            p as u64
        };
        let page = page as u64;
        // Cached as mapped and writable…
        assert!(check(base, 3 * page, true).is_ok());
        // SAFETY: pages of our own mapping, which no Rust code references.
        unsafe {
            libc::munmap((base + 2 * page) as *mut libc::c_void, page as usize);
            libc::mprotect(
                (base + page) as *mut libc::c_void,
                page as usize,
                libc::PROT_NONE,
            );
        }
        // …then the third page is gone: msync sees that at once, whatever
        // the cache says.
        assert!(check(base + 100, 2 * page, false).is_err());
        // The second page's new protection is what the cache cannot see
        // until the mappings are read again (the documented blind spot);
        // `is_mapped` reads them, and `check` then refuses the guard page.
        assert!(!is_mapped(base, page + 1, false));
        assert!(check(base + page, 1, false).is_err());
        assert!(check(base, page, true).is_ok());
        assert!(is_mapped(base, page, true));
        // SAFETY: the rest of our own mapping.
        unsafe { libc::munmap(base as *mut libc::c_void, 2 * page as usize) };
    }

    #[test]
    fn mappings_must_cover_the_range_without_gaps() {
        let maps =
            parse("1000-3000 rw-p 0 0:0 0\n3000-4000 r--p 0 0:0 0\n5000-6000 rw-p 0 0:0 0\n");
        assert!(covered(&maps, 0x1000, 0x4000, false));
        assert!(!covered(&maps, 0x1000, 0x4000, true));
        assert!(covered(&maps, 0x1800, 0x3000, true));
        assert!(!covered(&maps, 0x3800, 0x5800, false));
        assert!(!covered(&maps, 0x800, 0x1800, false));
        assert!(!covered(&maps, 0x5800, 0x6001, false));
        assert!(covered(&maps, 0x5000, 0x6000, true));
    }
}
