//! Host memory a client only gave us a pointer to.
//!
//! A pointer outside the arena that a runtime call is handed (the host side
//! of a copy, the destination of a fill, a range to lock) may be wild.
//! Dereferencing it would turn the client's mistake into a SIGSEGV of the
//! whole process. Instead the bytes move through the operating system's
//! checked copy between two ranges of this same process
//! (`process_vm_readv`/`process_vm_writev`), which answers an unmapped page,
//! or a read-only page written, with `EFAULT`: an error naming the address,
//! never a signal. The cost is one system call per chunk of a transfer
//! (chunks are large), not per byte.
//!
//! Where those calls are refused (a seccomp filter that forbids them), the
//! range is first checked against the process's mappings
//! (`/proc/self/maps`) and then accessed directly; that check is as good as
//! the mappings it read, so a range unmapped by another thread between the
//! check and the access would still fault, as it would in any C library.
//!
//! [`is_mapped`] is also how host ranges are vetted before kernels may
//! reach them (`hsa_amd_memory_lock`, `hipHostRegister`): kernels access
//! registered memory directly, so it must be mapped, with the right
//! permissions, for its whole length when it is registered.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::MemError;

/// Set once the system calls are found to be refused: every later transfer
/// checks the mappings instead.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// Reads `out.len()` bytes of host memory at `addr`, or says that part of
/// the range is not readable memory of this process.
///
/// # Safety
/// If `[addr, addr + out.len())` is mapped, nothing may write it during the
/// call other than through atomics (a kernel racing on registered memory)
/// or the client's own C code, whose race it is.
pub unsafe fn read(addr: u64, out: &mut [u8]) -> Result<(), MemError> {
    transfer(addr, out.as_mut_ptr(), out.len(), false)
}

/// Writes `data` to host memory at `addr`, or says that part of the range
/// is not writable memory of this process.
///
/// # Safety
/// If `[addr, addr + data.len())` is mapped, nothing else may be relying on
/// its contents: it must not be memory Rust code holds a reference to,
/// and the client that named it accepts that it is overwritten.
pub unsafe fn write(addr: u64, data: &[u8]) -> Result<(), MemError> {
    transfer(addr, data.as_ptr() as *mut u8, data.len(), true)
}

/// Checks that every page of `[addr, addr + len)` is mapped readable (and
/// writable when `write`) before a transfer is queued, so that a wild
/// pointer is refused when the call is made rather than when the transfer
/// runs. One byte per page is read through the checked call and, for
/// `write`, written back unchanged: a few system calls per 4 MiB.
///
/// # Safety
/// When `write`, the range must be one the client is about to have
/// overwritten (a copy's or fill's destination): a byte it changes between
/// our read and write-back may be lost.
pub unsafe fn probe(addr: u64, len: u64, write: bool) -> Result<(), MemError> {
    const PAGE: u64 = 4096;
    const BATCH: usize = 1024; // IOV_MAX
    let fault = |at: u64| MemError::Unmapped {
        addr: at,
        len: len - (at - addr),
        write,
    };
    if len == 0 {
        return Ok(());
    }
    let end = addr.checked_add(len).ok_or(fault(addr))?;
    if REFUSED.load(Relaxed) {
        return if is_mapped(addr, len, write) {
            Ok(())
        } else {
            Err(fault(addr))
        };
    }
    // The first byte, then the first byte of every later page.
    let mut points =
        std::iter::once(addr).chain((addr / PAGE + 1..end.div_ceil(PAGE)).map(|page| page * PAGE));
    let mut bytes = [0u8; BATCH];
    let mut remote = Vec::with_capacity(BATCH);
    loop {
        remote.clear();
        remote.extend(points.by_ref().take(BATCH).map(|at| libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: 1,
        }));
        if remote.is_empty() {
            return Ok(());
        }
        let local = libc::iovec {
            iov_base: bytes.as_mut_ptr().cast(),
            iov_len: remote.len(),
        };
        let n = remote.len();
        for (k, call) in [false, true]
            .into_iter()
            .take(1 + write as usize)
            .enumerate()
        {
            // SAFETY: `local` is our own buffer of `n` bytes; the remote
            // bytes are touched only by the kernel, which checks them; a
            // write puts back the bytes just read (the caller accepts the
            // race, see above).
            let moved = unsafe {
                let pid = libc::getpid();
                if call {
                    libc::process_vm_writev(pid, &local, 1, remote.as_ptr(), n as _, 0)
                } else {
                    libc::process_vm_readv(pid, &local, 1, remote.as_ptr(), n as _, 0)
                }
            };
            if moved < 0 {
                let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                if k == 0 && (errno == libc::ENOSYS || errno == libc::EPERM) {
                    REFUSED.store(true, Relaxed);
                    return if is_mapped(addr, len, write) {
                        Ok(())
                    } else {
                        Err(fault(addr))
                    };
                }
                return Err(fault(remote[0].iov_base as u64));
            }
            if (moved as usize) < n {
                return Err(fault(remote[moved as usize].iov_base as u64));
            }
        }
    }
}

/// Moves `len` bytes between the client's range at `remote` and our own
/// buffer at `local` (into `local` when reading).
fn transfer(remote: u64, local: *mut u8, len: usize, write: bool) -> Result<(), MemError> {
    let fault = |at: u64| MemError::Unmapped {
        addr: at,
        len: len as u64 - (at - remote),
        write,
    };
    if len == 0 {
        return Ok(());
    }
    let end = remote.checked_add(len as u64).ok_or(fault(remote))?;
    if usize::try_from(end).is_err() {
        return Err(fault(remote));
    }
    if !REFUSED.load(Relaxed) {
        let mut done = 0usize;
        while done < len {
            let n = match vm_copy(
                remote + done as u64,
                local.wrapping_add(done),
                len - done,
                write,
            ) {
                Ok(n) => n,
                Err(errno) if errno == libc::EINTR => continue,
                Err(errno) if errno == libc::ENOSYS || errno == libc::EPERM => {
                    REFUSED.store(true, Relaxed);
                    break;
                }
                // EFAULT (or anything else): the first byte not moved is
                // not accessible.
                Err(_) => return Err(fault(remote + done as u64)),
            };
            if n == 0 {
                return Err(fault(remote + done as u64));
            }
            done += n;
        }
        if done == len {
            return Ok(());
        }
    }
    if !is_mapped(remote, len as u64, write) {
        return Err(fault(remote));
    }
    let (from, to) = if write {
        (local as *const u8, remote as *mut u8)
    } else {
        (remote as *const u8, local)
    };
    // SAFETY: the remote range is mapped with the needed permission (just
    // checked against the process's mappings), the local buffer is the
    // caller's slice, and the two do not overlap (the client's memory is
    // not our buffer, which the caller owns exclusively or borrows shared
    // for a write).
    unsafe { std::ptr::copy(from, to, len) };
    Ok(())
}

/// One `process_vm_readv`/`writev` of up to `len` bytes against this
/// process: the count moved, or the `errno`.
fn vm_copy(remote: u64, local: *mut u8, len: usize, write: bool) -> Result<usize, i32> {
    let local = libc::iovec {
        iov_base: local.cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: remote as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: `local` is the caller's buffer of `len` bytes (written only
    // when reading, when it is exclusively borrowed); the remote range is
    // only ever touched by the kernel, which checks it and reports EFAULT
    // instead of faulting.
    let n = unsafe {
        let pid = libc::getpid();
        if write {
            libc::process_vm_writev(pid, &local, 1, &remote, 1, 0)
        } else {
            libc::process_vm_readv(pid, &local, 1, &remote, 1, 0)
        }
    };
    if n < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(n as usize)
    }
}

/// Whether `[addr, addr + len)` is mapped in this process for its whole
/// length, readable, and writable too when `write` (read from
/// `/proc/self/maps` at the time of the call).
pub fn is_mapped(addr: u64, len: u64, write: bool) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    covered(&maps, addr, end, write)
}

/// Whether the mappings listed in `maps` (the format of `/proc/PID/maps`)
/// cover `[start, end)` without a gap, each readable (and writable when
/// `write`).
fn covered(maps: &str, start: u64, end: u64, write: bool) -> bool {
    let mut at = start;
    for line in maps.lines() {
        if at >= end {
            break;
        }
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else {
            continue;
        };
        if hi <= at {
            continue;
        }
        // The list is sorted: a mapping starting past `at` leaves a gap.
        let allowed = perms.starts_with('r') && (!write || perms.as_bytes().get(1) == Some(&b'w'));
        if lo > at || !allowed {
            return false;
        }
        at = hi;
    }
    at >= end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_own_memory() {
        let source = [7u8; 100];
        let mut out = [0u8; 100];
        // SAFETY: `source` is ours and only read.
        unsafe { read(source.as_ptr() as u64, &mut out) }.unwrap();
        assert_eq!(out, source);
        let mut target = vec![0u8; 64];
        // SAFETY: `target` is ours and not referenced during the call.
        unsafe { write(target.as_mut_ptr() as u64, &[3; 64]) }.unwrap();
        assert_eq!(target, [3; 64]);
    }

    #[test]
    fn wild_addresses_are_errors() {
        let mut out = [0u8; 16];
        for wild in [0x1000u64, 0xdea_dbee_f000, u64::MAX - 4] {
            // SAFETY: not mapped, so nothing can be read.
            let got = unsafe { read(wild, &mut out) };
            assert!(matches!(got, Err(MemError::Unmapped { write: false, .. })));
            // SAFETY: not mapped, so nothing can be overwritten.
            assert!(unsafe { write(wild, &out) }.is_err());
        }
    }

    #[test]
    fn read_only_memory_is_not_writable() {
        static CONSTANT: [u8; 32] = [1; 32];
        let at = CONSTANT.as_ptr() as u64;
        // SAFETY: the write must fail: the page is read-only.
        let refused = unsafe { write(at, &[0; 32]) };
        assert!(matches!(
            refused,
            Err(MemError::Unmapped { write: true, .. })
        ));
        assert_eq!(CONSTANT, [1; 32]);
        assert!(is_mapped(at, 32, false));
        assert!(!is_mapped(at, 32, true));
    }

    #[test]
    fn a_fault_names_the_first_inaccessible_byte() {
        // Two pages, the second unmapped after mapping both.
        let page = 4096usize;
        // SAFETY: a fresh anonymous mapping of two pages, then the second
        // is unmapped; neither is referenced by Rust code.
        let base = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            libc::munmap(p.cast::<u8>().add(page).cast(), page);
            p as u64
        };
        let mut out = vec![0u8; 2 * page];
        // SAFETY: the mapped page is ours and nothing writes it.
        match unsafe { read(base + 16, &mut out) } {
            Err(MemError::Unmapped { addr, .. }) => assert_eq!(addr, base + page as u64),
            other => panic!("{other:?}"),
        }
        assert!(is_mapped(base, page as u64, true));
        assert!(!is_mapped(base, page as u64 + 1, false));
        // SAFETY: the first page is still ours.
        unsafe { libc::munmap(base as *mut libc::c_void, page) };
    }

    #[test]
    fn probes_find_the_first_inaccessible_page() {
        let page = 4096usize;
        // SAFETY: a fresh anonymous mapping of three pages, the third then
        // unmapped, the second made read-only; not referenced by Rust code.
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
            libc::munmap(p.cast::<u8>().add(2 * page).cast(), page);
            libc::mprotect(p.cast::<u8>().add(page).cast(), page, libc::PROT_READ);
            p.cast::<u8>().write(42);
            p as u64
        };
        let page = page as u64;
        // SAFETY: every probe touches the mapping made above, ours alone,
        // or unmapped addresses; the final unmap is of that mapping.
        unsafe {
            assert!(probe(base + 5, page, false).is_ok());
            assert!(probe(base + 5, page, true).is_err());
            assert!(probe(base, page, true).is_ok());
            let unmapped = probe(base + 100, 2 * page, false);
            assert!(
                matches!(unmapped, Err(MemError::Unmapped { addr, .. }) if addr == base + 2 * page)
            );
            let read_only = probe(base, 2 * page, true);
            assert!(
                matches!(read_only, Err(MemError::Unmapped { addr, .. }) if addr == base + page)
            );
            assert!(probe(0x1000, 1, false).is_err());
            assert!(probe(u64::MAX - 10, 100, false).is_err());
            assert_eq!(
                (base as *const u8).read(),
                42,
                "a write probe changes nothing"
            );
            libc::munmap(base as *mut libc::c_void, 2 * page as usize);
        }
    }

    #[test]
    fn mappings_must_cover_the_range_without_gaps() {
        let maps = "1000-3000 rw-p 0 0:0 0\n3000-4000 r--p 0 0:0 0\n5000-6000 rw-p 0 0:0 0\n";
        assert!(covered(maps, 0x1000, 0x4000, false));
        assert!(!covered(maps, 0x1000, 0x4000, true));
        assert!(covered(maps, 0x1800, 0x3000, true));
        assert!(!covered(maps, 0x3800, 0x5800, false));
        assert!(!covered(maps, 0x800, 0x1800, false));
        assert!(!covered(maps, 0x5800, 0x6001, false));
    }
}
