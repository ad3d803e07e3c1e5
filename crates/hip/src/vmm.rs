//! Virtual memory management (`hipMemCreate`, `hipMemAddressReserve`,
//! `hipMemMap`, `hipMemSetAccess`, ...) over the runtime's virtual memory,
//! the machinery behind `hsa_amd_vmem_*` (`softgpu_runtime::vmem`):
//! physical memory is a sealed memfd, an address reservation is a range of
//! the arena nothing else may take, and a mapping puts the file's pages
//! there, where kernels reach them once a device is given access.
//!
//! Status codes follow ROCm's CLR (`hip_vm.cpp`). A
//! `hipMemGenericAllocationHandle_t` is the runtime's handle, which the
//! runtime checks on every use, so a forged one is `hipErrorInvalidValue`.
//! Shareable handles are POSIX file descriptors
//! (`hipMemHandleTypePosixFileDescriptor`).

use std::collections::HashMap;
use std::ffi::c_void;
use std::os::fd::{BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use softgpu_runtime::agent::{PoolKind, POOL_GRANULE};
use softgpu_runtime::Runtime;

use crate::abi::*;
use crate::error::{get, guard, put, unsupported, HipError, HipResult};
use crate::state::{hip, lock, Hip};

/// The handle type each handle of this process was made to be shared as.
static HANDLE_TYPES: Mutex<Option<HashMap<u64, i32>>> = Mutex::new(None);

fn handle_type(handle: u64) -> i32 {
    lock(&HANDLE_TYPES)
        .as_ref()
        .and_then(|m| m.get(&handle).copied())
        .unwrap_or(0)
}

fn set_handle_type(handle: u64, kind: i32) {
    lock(&HANDLE_TYPES)
        .get_or_insert_with(HashMap::new)
        .insert(handle, kind);
}

fn runtime() -> HipResult<Arc<Runtime>> {
    Ok(Runtime::get()?)
}

/// The GPU agent behind HIP device `id`, or `hipErrorInvalidValue` (CLR's
/// code for a bad location here).
fn gpu(rt: &Runtime, hip: &Hip, id: i32) -> HipResult<Arc<softgpu_runtime::agent::Agent>> {
    usize::try_from(id)
        .ok()
        .filter(|&i| i < hip.devices.len())
        .and_then(|i| rt.gpus().nth(i).cloned())
        .ok_or_else(|| HipError::invalid(format!("no device {id}")))
}

/// A checked allocation property: pinned memory on a device.
fn device_of_prop(prop: &hipMemAllocationProp, hip: &Hip) -> HipResult<i32> {
    if prop.type_ != HIP_MEM_ALLOCATION_TYPE_PINNED
        || prop.location.type_ != HIP_MEM_LOCATION_TYPE_DEVICE
        || usize::try_from(prop.location.id).is_ok_and(|i| i >= hip.devices.len())
        || prop.location.id < 0
    {
        return Err(HipError::invalid(
            "the properties must name pinned memory on a device",
        ));
    }
    Ok(prop.location.id)
}

/// The allocation granularity: the runtime's pool granule (a page).
fn granularity() -> u64 {
    POOL_GRANULE
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAllocationGranularity(
    out: *mut usize,
    prop: *const hipMemAllocationProp,
    option: i32,
) -> hipError_t {
    guard("hipMemGetAllocationGranularity", || {
        let hip = hip()?;
        // SAFETY: `prop` is null or a valid hipMemAllocationProp (crate
        // docs, "Inputs").
        let prop = unsafe { get(prop, "allocation properties")? };
        device_of_prop(&prop, hip)?;
        // hipMemAllocationGranularityMinimum or ...Recommended.
        if option != 0 && option != 1 {
            return Err(HipError::invalid(format!("granularity option {option}")));
        }
        // SAFETY: an output of a size (crate docs, "Outputs").
        unsafe { put(out, granularity() as usize) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemCreate(
    handle: *mut hipMemGenericAllocationHandle_t,
    size: usize,
    prop: *const hipMemAllocationProp,
    flags: u64,
) -> hipError_t {
    guard("hipMemCreate", || {
        let hip = hip()?;
        if handle.is_null() || size == 0 || flags != 0 {
            return Err(HipError::invalid("a null handle, zero size or flags"));
        }
        // SAFETY: as in hipMemGetAllocationGranularity.
        let prop = unsafe { get(prop, "allocation properties")? };
        let device = device_of_prop(&prop, hip)?;
        let kind = prop.requestedHandleType;
        if kind != 0 && kind != HIP_MEM_HANDLE_TYPE_POSIX_FD {
            return Err(unsupported(format!(
                "hipMemCreate with shareable handle type {kind:#x} (POSIX file descriptors only)"
            )));
        }
        if !(size as u64).is_multiple_of(granularity()) {
            return Err(HipError::invalid(format!(
                "size {size} is not a multiple of the {}-byte granularity",
                granularity()
            )));
        }
        let rt = runtime()?;
        let agent = gpu(&rt, hip, device)?;
        let pool = agent
            .pools
            .iter()
            .copied()
            .find(|&p| rt.pool(p).is_ok_and(|p| p.kind == PoolKind::CoarseDevice))
            .ok_or_else(|| HipError::new(HIP_ERROR_UNKNOWN, "the device has no memory pool"))?;
        let made = rt
            .vmem()
            .create(&rt, pool, size as u64, true)
            .map_err(|e| {
                let code = if e.lacks_resources() {
                    HIP_ERROR_OUT_OF_MEMORY
                } else {
                    HIP_ERROR_INVALID_VALUE
                };
                HipError::new(code, e.to_string())
            })?;
        set_handle_type(made, kind);
        // SAFETY: an output of a handle (crate docs, "Outputs").
        unsafe { put(handle, made as hipMemGenericAllocationHandle_t) }.inspect_err(|_| {
            let _ = rt.vmem().release(made);
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRelease(handle: hipMemGenericAllocationHandle_t) -> hipError_t {
    guard("hipMemRelease", || {
        hip()?;
        if handle.is_null() {
            return Err(HipError::invalid("the handle is null"));
        }
        let rt = runtime()?;
        rt.vmem().release(handle as u64)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAddressReserve(
    ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    addr: *mut c_void,
    flags: u64,
) -> hipError_t {
    guard("hipMemAddressReserve", || {
        hip()?;
        if ptr.is_null() || flags != 0 {
            return Err(HipError::invalid("a null output pointer or flags"));
        }
        // CLR: a size off the granularity or an alignment that is not a
        // power of two is hipErrorMemoryAllocation (hipErrorOutOfMemory).
        let size = size as u64;
        if size == 0
            || !size.is_multiple_of(granularity())
            || alignment & alignment.wrapping_sub(1) != 0
        {
            return Err(HipError::new(
                HIP_ERROR_OUT_OF_MEMORY,
                format!(
                    "size {size} or alignment {alignment} off the {}-byte granularity",
                    granularity()
                ),
            ));
        }
        // Any alignment up to a page is a page's.
        let align = if (alignment as u64) <= granularity() {
            0
        } else {
            alignment as u64
        };
        let rt = runtime()?;
        let va = rt
            .vmem()
            .reserve(&rt, size, addr as u64, align)
            .map_err(|e| HipError::new(HIP_ERROR_OUT_OF_MEMORY, e.to_string()))?;
        // SAFETY: an output of a pointer (crate docs, "Outputs").
        unsafe { put(ptr, va as *mut c_void) }.inspect_err(|_| {
            let _ = rt.vmem().free(&rt, va, size);
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAddressFree(ptr: *mut c_void, size: usize) -> hipError_t {
    guard("hipMemAddressFree", || {
        hip()?;
        if ptr.is_null() || size == 0 {
            return Err(HipError::invalid("a null pointer or zero size"));
        }
        let rt = runtime()?;
        rt.vmem()
            .free(&rt, ptr as u64, size as u64)
            .map_err(|e| HipError::invalid(e.to_string()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemMap(
    ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: hipMemGenericAllocationHandle_t,
    flags: u64,
) -> hipError_t {
    guard("hipMemMap", || {
        hip()?;
        // CLR maps whole handles only: the offset must be 0.
        if ptr.is_null() || handle.is_null() || size == 0 || offset != 0 || flags != 0 {
            return Err(HipError::invalid(
                "a null pointer or handle, zero size, an offset or flags",
            ));
        }
        let rt = runtime()?;
        rt.vmem()
            .map(&rt, ptr as u64, size as u64, 0, handle as u64)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemUnmap(ptr: *mut c_void, size: usize) -> hipError_t {
    guard("hipMemUnmap", || {
        let hip = hip()?;
        if ptr.is_null() || size == 0 {
            return Err(HipError::invalid("a null pointer or zero size"));
        }
        // Work still queued may use the range; CLR unmaps in stream order.
        for d in 0..hip.devices.len() {
            crate::stream::synchronize_device(hip, d)?;
        }
        let rt = runtime()?;
        rt.vmem().unmap(&rt, ptr as u64, size as u64)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemSetAccess(
    ptr: *mut c_void,
    size: usize,
    list: *const hipMemAccessDesc,
    count: usize,
) -> hipError_t {
    guard("hipMemSetAccess", || {
        let hip = hip()?;
        if ptr.is_null() || size == 0 || list.is_null() || count == 0 {
            return Err(HipError::invalid(
                "a null pointer or list, or zero size or count",
            ));
        }
        if count > hip.devices.len() {
            return Err(HipError::invalid(format!(
                "{count} descriptors for {} devices",
                hip.devices.len()
            )));
        }
        let rt = runtime()?;
        let mut grants = Vec::with_capacity(count);
        for i in 0..count {
            // SAFETY: `list` holds `count` descriptors (crate docs,
            // "Inputs"); `count` is at most the device count.
            let desc = unsafe { get(list.add(i), "access descriptor")? };
            if desc.location.type_ != HIP_MEM_LOCATION_TYPE_DEVICE {
                return Err(HipError::invalid("an access location must be a device"));
            }
            let agent = gpu(&rt, hip, desc.location.id)?;
            grants.push((rt.agent_handles[agent.index], desc.flags as u32));
        }
        rt.vmem()
            .set_access(&rt, ptr as u64, size as u64, &grants)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAccess(
    flags: *mut u64,
    location: *const hipMemLocation,
    ptr: *mut c_void,
) -> hipError_t {
    guard("hipMemGetAccess", || {
        let hip = hip()?;
        if flags.is_null() || ptr.is_null() {
            return Err(HipError::invalid("a null output or pointer"));
        }
        // SAFETY: `location` is null or a valid hipMemLocation (crate
        // docs, "Inputs").
        let location = unsafe { get(location, "location")? };
        if location.type_ != HIP_MEM_LOCATION_TYPE_DEVICE {
            return Err(HipError::invalid("an access location must be a device"));
        }
        let rt = runtime()?;
        let agent = gpu(&rt, hip, location.id)?;
        let access = rt
            .vmem()
            .get_access(&rt, ptr as u64, rt.agent_handles[agent.index])?;
        // SAFETY: an output of an unsigned long long (crate docs).
        unsafe { put(flags, access as u64) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRetainAllocationHandle(
    handle: *mut hipMemGenericAllocationHandle_t,
    addr: *mut c_void,
) -> hipError_t {
    guard("hipMemRetainAllocationHandle", || {
        hip()?;
        if handle.is_null() || addr.is_null() {
            return Err(HipError::invalid("a null output or address"));
        }
        let rt = runtime()?;
        let retained = rt.vmem().retain(addr as u64)?;
        // SAFETY: an output of a handle (crate docs, "Outputs").
        unsafe { put(handle, retained as hipMemGenericAllocationHandle_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAllocationPropertiesFromHandle(
    prop: *mut hipMemAllocationProp,
    handle: hipMemGenericAllocationHandle_t,
) -> hipError_t {
    guard("hipMemGetAllocationPropertiesFromHandle", || {
        hip()?;
        if prop.is_null() || handle.is_null() {
            return Err(HipError::invalid("a null output or handle"));
        }
        let rt = runtime()?;
        let (pool, _) = rt.vmem().properties(handle as u64)?;
        let agent = rt.pool(pool)?.agent;
        let device = rt.gpus().position(|g| g.index == agent).unwrap_or(0);
        let value = hipMemAllocationProp {
            compressionType: 0,
            location: hipMemLocation {
                type_: HIP_MEM_LOCATION_TYPE_DEVICE,
                id: device as i32,
            },
            requestedHandleType: handle_type(handle as u64),
            type_: HIP_MEM_ALLOCATION_TYPE_PINNED,
            usage: 0,
            win32HandleMetaData: std::ptr::null_mut(),
        };
        // SAFETY: an output of a hipMemAllocationProp (crate docs).
        unsafe { put(prop, value) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemExportToShareableHandle(
    shareable: *mut c_void,
    handle: hipMemGenericAllocationHandle_t,
    kind: i32,
    flags: u64,
) -> hipError_t {
    guard("hipMemExportToShareableHandle", || {
        hip()?;
        if shareable.is_null() || handle.is_null() || flags != 0 {
            return Err(HipError::invalid("a null output or handle, or flags"));
        }
        // CLR: the type must be the one the handle was made for.
        if kind != handle_type(handle as u64) || kind != HIP_MEM_HANDLE_TYPE_POSIX_FD {
            return Err(HipError::invalid(format!(
                "handle type {kind}: the handle was made for type {}",
                handle_type(handle as u64)
            )));
        }
        let rt = runtime()?;
        let fd = rt.vmem().export(handle as u64)?;
        // SAFETY: `shareable` is the caller's output of a shareable handle
        // (checked non-null above).
        unsafe { put_shareable_fd(shareable, fd) }
    })
}

/// Hands `fd` to the caller as a POSIX shareable handle: an int at
/// `out`, the caller's to close (as CUDA's and CLR's exports do).
///
/// # Safety
/// `out` is null or an output of a shareable handle (for a POSIX file
/// descriptor, an int; crate docs, "Outputs").
pub unsafe fn put_shareable_fd(out: *mut c_void, fd: OwnedFd) -> HipResult {
    let raw = fd.into_raw_fd();
    // SAFETY: as the function's contract says.
    unsafe { put(out as *mut i32, raw) }.inspect_err(|_| {
        // SAFETY: `raw` is the descriptor just given up, owned by nobody.
        drop(unsafe { OwnedFd::from_raw_fd(raw) });
    })
}

/// Runs `f` with the file descriptor a POSIX shareable handle carries in
/// its pointer's value, as CUDA's and CLR's callers pass it; a value
/// that is no open descriptor is `hipErrorInvalidValue`.
pub fn with_shareable_fd<T>(
    handle: *mut c_void,
    f: impl FnOnce(BorrowedFd<'_>) -> HipResult<T>,
) -> HipResult<T> {
    let raw = i32::try_from(handle as usize)
        .map_err(|_| HipError::invalid(format!("{handle:p} is not a file descriptor")))?;
    // SAFETY: F_GETFD only reads the descriptor table.
    if unsafe { libc::fcntl(raw, libc::F_GETFD) } < 0 {
        return Err(HipError::invalid(format!(
            "{raw} is not an open file descriptor"
        )));
    }
    // SAFETY: `raw` is open (checked above) and the caller keeps it open
    // for the call (the shareable handle is the caller's).
    f(unsafe { BorrowedFd::borrow_raw(raw) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemImportFromShareableHandle(
    handle: *mut hipMemGenericAllocationHandle_t,
    os_handle: *mut c_void,
    kind: i32,
) -> hipError_t {
    guard("hipMemImportFromShareableHandle", || {
        hip()?;
        if handle.is_null() || os_handle.is_null() {
            return Err(HipError::invalid("a null output or shareable handle"));
        }
        if kind != HIP_MEM_HANDLE_TYPE_POSIX_FD {
            return Err(unsupported(format!(
                "hipMemImportFromShareableHandle of handle type {kind:#x} (POSIX file descriptors only)"
            )));
        }
        let rt = runtime()?;
        let imported = with_shareable_fd(os_handle, |fd| {
            rt.vmem()
                .import(&rt, fd)
                .map_err(|e| HipError::invalid(e.to_string()))
        })?;
        set_handle_type(imported, kind);
        // SAFETY: an output of a handle (crate docs, "Outputs").
        unsafe { put(handle, imported as hipMemGenericAllocationHandle_t) }.inspect_err(|_| {
            let _ = rt.vmem().release(imported);
        })
    })
}

symver!("vmm");
