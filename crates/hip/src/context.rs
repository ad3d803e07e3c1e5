//! Contexts and primary contexts, thin over devices as ROCm's CLR makes
//! them (`hip_context.cpp`): a `hipCtx_t` names a device, each thread has
//! a stack of contexts, and making a context current makes its device the
//! thread's current device.
//!
//! A `hipCtx_t` C sees packs a kind tag and the device's index plus one,
//! so a forged handle, or one of a device the process does not have, is
//! `hipErrorInvalidContext`, never a wild dereference (CLR's handle is the
//! device object's address).

use std::cell::RefCell;
use std::sync::Mutex;

use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::{hip, lock, set_current, Hip};

/// The kind tag of context handles, above every other table's.
const CONTEXT_KIND: usize = 8 << 44;

thread_local! {
    /// The calling thread's context stack: device indices, top last.
    static STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// How often each device's primary context was retained and not yet
/// released (`hipDevicePrimaryCtxRetain`/`Release`).
static PRIMARY_RETAINS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// The handle of device `index`'s context.
pub fn handle_of(index: usize) -> hipCtx_t {
    (CONTEXT_KIND | (index + 1)) as hipCtx_t
}

/// The device a context handle names, or `hipErrorInvalidContext`.
pub fn device_of(hip: &Hip, ctx: hipCtx_t) -> HipResult<usize> {
    let raw = ctx as usize;
    let index = (raw & !CONTEXT_KIND).wrapping_sub(1);
    if raw & CONTEXT_KIND != CONTEXT_KIND || index >= hip.devices.len() {
        return Err(HipError::new(
            HIP_ERROR_INVALID_CONTEXT,
            format!("{ctx:p} is not a context of this process"),
        ));
    }
    Ok(index)
}

/// A device ordinal as a device index, or `hipErrorInvalidDevice`.
fn device_index(hip: &Hip, device: i32) -> HipResult<usize> {
    Ok(hip.device(device)?.index)
}

/// Pushes `index`'s context and makes its device current.
fn push(index: usize) {
    STACK.with(|s| s.borrow_mut().push(index));
    set_current(index);
}

/// Pops the top context; the context below it, if any, becomes current
/// (CUDA's rule; CLR leaves the current device as it was).
fn pop() -> Option<usize> {
    let (popped, below) = STACK.with(|s| {
        let mut s = s.borrow_mut();
        let popped = s.pop();
        (popped, s.last().copied())
    });
    if let Some(below) = below {
        set_current(below);
    }
    popped
}

fn retains(index: usize, change: impl FnOnce(&mut u32)) -> u32 {
    let mut counts = lock(&PRIMARY_RETAINS);
    if counts.len() <= index {
        counts.resize(index + 1, 0);
    }
    change(&mut counts[index]);
    counts[index]
}

/// Writes a context handle through an output pointer.
fn out_ctx(out: *mut hipCtx_t, index: usize) -> HipResult {
    // SAFETY: an output of a `hipCtx_t` (crate docs, "Outputs").
    unsafe { put(out, handle_of(index)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxCreate(ctx: *mut hipCtx_t, flags: u32, device: i32) -> hipError_t {
    guard("hipCtxCreate", || {
        let hip = hip()?;
        // CLR: a device it does not have is hipErrorInvalidValue here.
        let index = usize::try_from(device)
            .ok()
            .filter(|&i| i < hip.devices.len())
            .ok_or_else(|| HipError::invalid(format!("no device {device}")))?;
        check_device_flags(flags)?;
        out_ctx(ctx, index)?;
        *lock(&hip.devices[index].flags) = flags;
        // The header: "Create a context and set it as current/default
        // context".
        push(index);
        Ok(())
    })
}

/// The scheduling flags `hipCtxCreate` takes are `hipSetDeviceFlags`'s.
fn check_device_flags(flags: u32) -> HipResult {
    if flags & !0x1f != 0 {
        return Err(HipError::invalid(format!(
            "unknown context flags {flags:#x}"
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxDestroy(ctx: hipCtx_t) -> hipError_t {
    guard("hipCtxDestroy", || {
        let hip = hip()?;
        if ctx.is_null() {
            return Err(HipError::invalid("context is null"));
        }
        let index = device_of(hip, ctx)?;
        // As CLR: the calling thread's stack loses it when it is on top;
        // the device itself lives on (its primary context is the same).
        if STACK.with(|s| s.borrow().last() == Some(&index)) {
            pop();
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxPushCurrent(ctx: hipCtx_t) -> hipError_t {
    guard("hipCtxPushCurrent", || {
        let hip = hip()?;
        push(device_of(hip, ctx)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxPopCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    guard("hipCtxPopCurrent", || {
        hip()?;
        let index = pop().ok_or_else(|| {
            HipError::new(
                HIP_ERROR_INVALID_CONTEXT,
                "the calling thread's context stack is empty",
            )
        })?;
        // CLR: the popped context is written only when asked for.
        if !ctx.is_null() {
            out_ctx(ctx, index)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxSetCurrent(ctx: hipCtx_t) -> hipError_t {
    guard("hipCtxSetCurrent", || {
        let hip = hip()?;
        if ctx.is_null() {
            // CLR: null unbinds the top context.
            STACK.with(|s| s.borrow_mut().pop());
            return Ok(());
        }
        let index = device_of(hip, ctx)?;
        STACK.with(|s| {
            let mut s = s.borrow_mut();
            s.pop();
            s.push(index);
        });
        set_current(index);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    // CLR: the current device's context, whether or not one was pushed.
    guard("hipCtxGetCurrent", || out_ctx(ctx, hip()?.current().index))
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetDevice(device: *mut i32) -> hipError_t {
    guard("hipCtxGetDevice", || {
        let index = hip()?.current().index;
        // SAFETY: an output of an int (crate docs, "Outputs").
        unsafe { put(device, index as i32) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetApiVersion(ctx: hipCtx_t, version: *mut i32) -> hipError_t {
    guard("hipCtxGetApiVersion", || {
        let hip = hip()?;
        device_of(hip, ctx)?;
        // CLR returns hipErrorNotSupported; the runtime's version is the
        // one answer that is true for every context.
        // SAFETY: an output of an int (crate docs, "Outputs").
        unsafe { put(version, crate::device::HIP_VERSION) }
    })
}

/// `hipFuncCachePreferNone` … `hipFuncCachePreferEqual`.
const CACHE_CONFIGS: std::ops::RangeInclusive<i32> = 0..=3;
/// `hipSharedMemBankSizeDefault` … `hipSharedMemBankSizeEightByte`.
const SHARED_MEM_CONFIGS: std::ops::RangeInclusive<i32> = 0..=2;

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetCacheConfig(config: *mut i32) -> hipError_t {
    guard("hipCtxGetCacheConfig", || {
        hip()?;
        // As hipDeviceGetCacheConfig: no L1/LDS split to prefer.
        // SAFETY: an output of an enum (crate docs, "Outputs").
        unsafe { put(config, 0) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxSetCacheConfig(config: i32) -> hipError_t {
    guard("hipCtxSetCacheConfig", || {
        hip()?;
        // CLR refuses a value outside the enum; a valid one changes no
        // result (softgpu has no configurable L1/LDS split).
        if !CACHE_CONFIGS.contains(&config) {
            return Err(HipError::invalid(format!("cache config {config}")));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetSharedMemConfig(config: *mut i32) -> hipError_t {
    guard("hipCtxGetSharedMemConfig", || {
        hip()?;
        // CLR: hipSharedMemBankSizeFourByte.
        // SAFETY: an output of an enum (crate docs, "Outputs").
        unsafe { put(config, 1) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxSetSharedMemConfig(config: i32) -> hipError_t {
    guard("hipCtxSetSharedMemConfig", || {
        hip()?;
        if !SHARED_MEM_CONFIGS.contains(&config) {
            return Err(HipError::invalid(format!("shared memory config {config}")));
        }
        // LDS banking changes no result.
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxSynchronize() -> hipError_t {
    guard("hipCtxSynchronize", || {
        let hip = hip()?;
        // The context is its device: wait for all of its streams.
        crate::stream::synchronize_device(hip, hip.current().index)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetFlags(flags: *mut u32) -> hipError_t {
    guard("hipCtxGetFlags", || {
        let value = *lock(&hip()?.current().flags);
        // SAFETY: an output of an unsigned int (crate docs, "Outputs").
        unsafe { put(flags, value) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxEnablePeerAccess(peer: hipCtx_t, flags: u32) -> hipError_t {
    guard("hipCtxEnablePeerAccess", || {
        let hip = hip()?;
        let index = device_of(hip, peer)?;
        // SAFETY: no pointer arguments.
        let code = unsafe { crate::device::hipDeviceEnablePeerAccess(index as i32, flags) };
        as_result(code, "hipDeviceEnablePeerAccess")
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxDisablePeerAccess(peer: hipCtx_t) -> hipError_t {
    guard("hipCtxDisablePeerAccess", || {
        let hip = hip()?;
        let index = device_of(hip, peer)?;
        // SAFETY: no pointer arguments.
        let code = unsafe { crate::device::hipDeviceDisablePeerAccess(index as i32) };
        as_result(code, "hipDeviceDisablePeerAccess")
    })
}

/// A status another export returned, as a result.
fn as_result(code: hipError_t, call: &str) -> HipResult {
    match code {
        HIP_SUCCESS => Ok(()),
        code => Err(HipError::new(code, format!("{call} failed"))),
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipDevicePrimaryCtxRetain(ctx: *mut hipCtx_t, device: i32) -> hipError_t {
    guard("hipDevicePrimaryCtxRetain", || {
        let index = device_index(hip()?, device)?;
        out_ctx(ctx, index)?;
        retains(index, |c| *c = c.saturating_add(1));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDevicePrimaryCtxRelease(device: i32) -> hipError_t {
    guard("hipDevicePrimaryCtxRelease", || {
        let index = device_index(hip()?, device)?;
        // CLR accepts a release without a retain.
        retains(index, |c| *c = c.saturating_sub(1));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDevicePrimaryCtxGetState(
    device: i32,
    flags: *mut u32,
    active: *mut i32,
) -> hipError_t {
    guard("hipDevicePrimaryCtxGetState", || {
        let hip = hip()?;
        let index = device_index(hip, device)?;
        if flags.is_null() || active.is_null() {
            return Err(HipError::invalid("a null output pointer"));
        }
        // Active: retained and not yet released (CUDA's meaning).
        let is_active = retains(index, |_| ()) > 0;
        let value = *lock(&hip.devices[index].flags);
        // SAFETY: outputs of an unsigned int and an int (crate docs).
        unsafe {
            put(flags, value)?;
            put(active, is_active as i32)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDevicePrimaryCtxReset(device: i32) -> hipError_t {
    guard("hipDevicePrimaryCtxReset", || {
        let index = device_index(hip()?, device)?;
        // As CLR, which keeps the device's state: only the retains go.
        retains(index, |c| *c = 0);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDevicePrimaryCtxSetFlags(device: i32, _flags: u32) -> hipError_t {
    guard("hipDevicePrimaryCtxSetFlags", || {
        device_index(hip()?, device)?;
        // CLR: the primary context is always in use, so its flags are
        // fixed.
        Err(HipError::new(
            HIP_ERROR_CONTEXT_ALREADY_IN_USE,
            "hipDevicePrimaryCtxSetFlags: the primary context is already in use",
        ))
    })
}

symver!("context");
