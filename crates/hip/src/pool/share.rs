//! Memory pools shared between processes, as CUDA and ROCm's CLR share
//! them. A pool made with `hipMemHandleTypePosixFileDescriptor` exports a
//! file descriptor (`hipMemPoolExportToShareableHandle`): an unnamed file
//! holding the pool's description (device, handle types, reuse policies
//! and release threshold, as CLR's shared pool state does), which the
//! program passes to another process (over a Unix socket, or as
//! `/proc/PID/fd/N`); there `hipMemPoolImportFromShareableHandle` makes a
//! pool of that description. A block of the exporting pool is named by
//! `hipMemPoolExportPointer`'s 64 bytes, an IPC memory handle
//! (`crate::ipc`), and mapped in the importing process by
//! `hipMemPoolImportPointer`; freeing it there (`hipFree`, `hipFreeAsync`)
//! unmaps it, and the exporter's block lives on until the exporter frees
//! it.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

use super::{pools, Pool, BUSY};
use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::{hip, lock, Hip};
use crate::vmm::{put_shareable_fd, with_shareable_fd};

/// Marks an exported pool's file ("sgpupool").
const MAGIC: u64 = u64::from_le_bytes(*b"sgpupool");

/// The description an exported pool's file holds, little-endian: magic,
/// device, handle types, the three reuse policies, release threshold.
const DESCRIPTION_LEN: usize = 8 + 4 + 4 + 3 * 4 + 8;

/// Pointers imported into this process, by address, with their pool (an
/// imported block holds its pool, as in CLR).
static IMPORTED: Mutex<BTreeMap<u64, Arc<Pool>>> = Mutex::new(BTreeMap::new());

fn describe(pool: &Pool) -> [u8; DESCRIPTION_LEN] {
    let state = lock(&pool.state);
    let mut bytes = [0u8; DESCRIPTION_LEN];
    let mut at = 0;
    let mut field = |b: &[u8]| {
        bytes[at..at + b.len()].copy_from_slice(b);
        at += b.len();
    };
    field(&MAGIC.to_le_bytes());
    field(&(pool.device as u32).to_le_bytes());
    field(&pool.handle_types.to_le_bytes());
    for policy in state.reuse {
        field(&policy.to_le_bytes());
    }
    field(&state.release_threshold.to_le_bytes());
    bytes
}

/// A pool of the description in `bytes`, on its device if this process
/// has it, else on device 0 (as CLR imports onto its first device).
fn from_description(hip: &Hip, bytes: &[u8; DESCRIPTION_LEN]) -> HipResult<Pool> {
    let u32_at =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let u64_at = |at: usize| u64::from(u32_at(at)) | u64::from(u32_at(at + 4)) << 32;
    if u64_at(0) != MAGIC {
        return Err(HipError::invalid(
            "the file descriptor is not an exported memory pool",
        ));
    }
    let device = (u32_at(8) as usize).min(hip.devices.len() - 1);
    let pool = Pool::new(device, false, u32_at(12) as i32);
    {
        let mut state = lock(&pool.state);
        state.reuse = [u32_at(16) as i32, u32_at(20) as i32, u32_at(24) as i32];
        state.release_threshold = u64_at(28);
    }
    Ok(pool)
}

/// Whether `handle_type` is one the pool was made to share.
fn check_handle_type(pool: &Pool, handle_type: i32) -> HipResult {
    if handle_type == 0 || handle_type != pool.handle_types {
        // CLR: the type must be the pool's, and not hipMemHandleTypeNone.
        return Err(HipError::invalid(format!(
            "handle type {handle_type:#x}; the pool shares {:#x}",
            pool.handle_types
        )));
    }
    Ok(())
}

/// Frees a pointer `hipMemPoolImportPointer` mapped here (`hipFree`,
/// `hipFreeAsync`): `Ok(false)` if it is none.
pub fn free_imported(hip: &Hip, addr: u64) -> HipResult<bool> {
    if lock(&IMPORTED).remove(&addr).is_none() {
        return Ok(false);
    }
    crate::ipc::close(hip, addr)
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolExportToShareableHandle(
    shared_handle: *mut c_void,
    pool: hipMemPool_t,
    handle_type: i32,
    flags: u32,
) -> hipError_t {
    guard("hipMemPoolExportToShareableHandle", || {
        let hip = hip()?;
        if shared_handle.is_null() || flags != 0 {
            return Err(HipError::invalid(format!(
                "a null handle output or flags {flags:#x}"
            )));
        }
        let pool = pools(hip).get(pool)?;
        check_handle_type(&pool, handle_type)?;
        // An unnamed file of its own for each export: the caller owns and
        // closes the descriptor.
        let file_error = |e: std::io::Error| {
            HipError::new(
                HIP_ERROR_OUT_OF_MEMORY,
                format!("the pool's export file: {e}"),
            )
        };
        let mut file = tempfile::tempfile().map_err(file_error)?;
        file.write_all(&describe(&pool)).map_err(file_error)?;
        // SAFETY: `shared_handle` is the caller's output of a shareable
        // handle (checked non-null above).
        unsafe { put_shareable_fd(shared_handle, file.into()) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolImportFromShareableHandle(
    pool: *mut hipMemPool_t,
    shared_handle: *mut c_void,
    handle_type: i32,
    flags: u32,
) -> hipError_t {
    guard("hipMemPoolImportFromShareableHandle", || {
        let hip = hip()?;
        if pool.is_null() || shared_handle.is_null() || flags != 0 {
            return Err(HipError::invalid(format!(
                "a null pool output or handle, or flags {flags:#x}"
            )));
        }
        if handle_type != HIP_MEM_HANDLE_TYPE_POSIX_FD {
            return Err(HipError::invalid(format!(
                "handle type {handle_type:#x} (POSIX file descriptors only)"
            )));
        }
        let mut bytes = [0u8; DESCRIPTION_LEN];
        with_shareable_fd(shared_handle, |fd| {
            let owned = fd
                .try_clone_to_owned()
                .map_err(|e| HipError::invalid(e.to_string()))?;
            let file = File::from(owned);
            file.read_exact_at(&mut bytes, 0).map_err(|_| {
                HipError::invalid("the file descriptor is not an exported memory pool")
            })
        })?;
        let imported = from_description(hip, &bytes)?;
        let pools = pools(hip);
        let handle = pools.insert(imported);
        super::out_pool(pool, handle).inspect_err(|_| {
            lock(&pools.live).remove(&handle);
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolExportPointer(
    export_data: *mut hipMemPoolPtrExportData,
    ptr: *mut c_void,
) -> hipError_t {
    guard("hipMemPoolExportPointer", || {
        hip()?;
        if export_data.is_null() || ptr.is_null() {
            return Err(HipError::invalid("a null output or pointer"));
        }
        let addr = ptr as u64;
        let shareable = lock(&BUSY)
            .range(..=addr)
            .next_back()
            .is_some_and(|(&base, (pool, a))| addr < base + a.len && pool.handle_types != 0);
        if !shareable {
            return Err(HipError::invalid(format!(
                "{ptr:p} is not in a block of a pool made to be shared"
            )));
        }
        let reserved = crate::ipc::export(addr)?;
        // SAFETY: an output of 64 bytes (crate docs, "Outputs").
        unsafe { put(export_data, hipMemPoolPtrExportData { reserved }) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolImportPointer(
    ptr: *mut *mut c_void,
    pool: hipMemPool_t,
    export_data: *mut hipMemPoolPtrExportData,
) -> hipError_t {
    guard("hipMemPoolImportPointer", || {
        let hip = hip()?;
        if ptr.is_null() || export_data.is_null() {
            return Err(HipError::invalid("a null output or export data"));
        }
        let pool = pools(hip).get(pool)?;
        // SAFETY: `export_data` is an input of 64 bytes (crate docs,
        // "Inputs"), checked non-null.
        let data = unsafe { crate::error::get(export_data, "export data")? };
        let addr = crate::ipc::open(&data.reserved)?;
        lock(&IMPORTED).insert(addr, pool);
        super::out_ptr(ptr, addr).inspect_err(|_| {
            let _ = free_imported(hip, addr);
        })
    })
}

symver!("pool_share");
