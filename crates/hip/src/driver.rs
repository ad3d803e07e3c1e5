//! Driver-style copies (`hipMemcpyParam2D`, `hipDrvMemcpy2DUnaligned`,
//! `hipDrvMemcpy3D`) and pointer attributes by name
//! (`hipPointerGetAttribute`, `hipDrvPointerGetAttributes`), as ROCm's CLR
//! defines them (`hip_memory.cpp`).
//!
//! A driver-style copy names each side by memory type: host memory
//! (`srcHost`), device or unified memory (`srcDevice`), or a HIP array.
//! Sides in memory become the rows of an ordinary pitched copy
//! (`memory.rs`'s `Work::Copy`), checked when the call is made. HIP arrays
//! are texture memory, which softgpu does not have yet: a copy with an
//! array side is `hipErrorNotSupported`, naming the call.

use std::ffi::c_void;
use std::sync::Arc;

use crate::abi::*;
use crate::error::{get, guard, put, unsupported, HipError, HipResult};
use crate::memory::Kind;
use crate::state::hip;
use crate::stream::Work;

/// One side of a driver-style copy, in memory.
struct Side {
    base: u64,
    x: u64,
    y: u64,
    z: u64,
    pitch: u64,
    /// Rows per slice (3-D copies).
    height: u64,
}

/// A side's address from its memory type, or the error CLR gives.
fn side_address(
    call: &str,
    memory_type: i32,
    host: *const c_void,
    device: hipDeviceptr_t,
) -> HipResult<u64> {
    let addr = match memory_type {
        HIP_MEMORY_TYPE_HOST => host as u64,
        HIP_MEMORY_TYPE_DEVICE | HIP_MEMORY_TYPE_UNIFIED => device as u64,
        HIP_MEMORY_TYPE_ARRAY => {
            return Err(unsupported(format!(
                "{call} with a HIP array side (softgpu has no HIP arrays yet)"
            )))
        }
        other => return Err(HipError::invalid(format!("memory type {other}"))),
    };
    if addr == 0 {
        return Err(HipError::invalid("a copy side's pointer is null"));
    }
    Ok(addr)
}

/// The most rows one driver-style copy may have (each is a work item).
const MAX_ROWS: u64 = 1 << 22;

/// The rows `(dst, src, len)` of a `width` × `height` × `depth` copy.
fn rows(
    dst: &Side,
    src: &Side,
    width: u64,
    height: u64,
    depth: u64,
) -> HipResult<Vec<(u64, u64, u64)>> {
    let overflow = || HipError::invalid("the copy's addresses overflow");
    if height.checked_mul(depth).is_none_or(|n| n > MAX_ROWS) {
        return Err(HipError::invalid(format!(
            "{height} x {depth} rows: at most {MAX_ROWS} rows per copy"
        )));
    }
    for side in [dst, src] {
        if (height > 1 || depth > 1) && width > side.pitch {
            return Err(HipError::new(
                HIP_ERROR_INVALID_PITCH_VALUE,
                format!("width {width} exceeds pitch {}", side.pitch),
            ));
        }
        if depth > 1 && side.height < height {
            return Err(HipError::invalid(format!(
                "{height} rows do not fit slices of {} rows",
                side.height
            )));
        }
    }
    let at = |s: &Side, y: u64, z: u64| -> HipResult<u64> {
        let row = (s.z + z)
            .checked_mul(s.height)
            .and_then(|r| r.checked_add(s.y + y))
            .ok_or_else(overflow)?;
        row.checked_mul(s.pitch)
            .and_then(|o| o.checked_add(s.x))
            .and_then(|o| o.checked_add(s.base))
            .filter(|a| a.checked_add(width).is_some())
            .ok_or_else(overflow)
    };
    let mut out = Vec::with_capacity((height * depth) as usize);
    for z in 0..depth {
        for y in 0..height {
            out.push((at(dst, y, z)?, at(src, y, z)?, width));
        }
    }
    Ok(out)
}

/// Checks and submits a driver-style copy's rows.
fn submit_rows(rows: Vec<(u64, u64, u64)>, stream: hipStream_t, sync: bool) -> HipResult {
    let rows = crate::memory::split_at_allocations(rows)?;
    crate::memory::check_copy(&rows)?;
    crate::memory::submit(stream, Work::Copy(Arc::new(rows)), sync)
}

fn copy_2d(call: &str, p: &hip_Memcpy2D, stream: hipStream_t, sync: bool) -> HipResult {
    hip()?;
    if p.WidthInBytes == 0 || p.Height == 0 {
        return Ok(());
    }
    let src = Side {
        base: side_address(call, p.srcMemoryType, p.srcHost, p.srcDevice)?,
        x: p.srcXInBytes as u64,
        y: p.srcY as u64,
        z: 0,
        pitch: p.srcPitch as u64,
        height: 0,
    };
    let dst = Side {
        base: side_address(call, p.dstMemoryType, p.dstHost, p.dstDevice)?,
        x: p.dstXInBytes as u64,
        y: p.dstY as u64,
        z: 0,
        pitch: p.dstPitch as u64,
        height: 0,
    };
    let rows = rows(&dst, &src, p.WidthInBytes as u64, p.Height as u64, 1)?;
    submit_rows(rows, stream, sync)
}

fn copy_3d(call: &str, p: &HIP_MEMCPY3D, stream: hipStream_t, sync: bool) -> HipResult {
    hip()?;
    // Mipmap levels belong to arrays; a linear side has level 0 only.
    if p.srcLOD != 0 || p.dstLOD != 0 {
        return Err(HipError::invalid("a level of detail other than 0"));
    }
    if p.WidthInBytes == 0 || p.Height == 0 || p.Depth == 0 {
        return Ok(());
    }
    let src = Side {
        base: side_address(call, p.srcMemoryType, p.srcHost, p.srcDevice)?,
        x: p.srcXInBytes.into(),
        y: p.srcY.into(),
        z: p.srcZ.into(),
        pitch: p.srcPitch.into(),
        height: p.srcHeight.into(),
    };
    let dst = Side {
        base: side_address(call, p.dstMemoryType, p.dstHost, p.dstDevice)?,
        x: p.dstXInBytes.into(),
        y: p.dstY.into(),
        z: p.dstZ.into(),
        pitch: p.dstPitch.into(),
        height: p.dstHeight.into(),
    };
    let rows = rows(
        &dst,
        &src,
        p.WidthInBytes.into(),
        p.Height.into(),
        p.Depth.into(),
    )?;
    submit_rows(rows, stream, sync)
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyParam2D(p: *const hip_Memcpy2D) -> hipError_t {
    guard("hipMemcpyParam2D", || {
        // SAFETY: `p` is null or a valid hip_Memcpy2D (crate docs, "Inputs").
        let p = unsafe { get(p, "copy parameters")? };
        copy_2d("hipMemcpyParam2D", &p, std::ptr::null_mut(), true)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyParam2DAsync(
    p: *const hip_Memcpy2D,
    stream: hipStream_t,
) -> hipError_t {
    guard("hipMemcpyParam2DAsync", || {
        // SAFETY: as in hipMemcpyParam2D.
        let p = unsafe { get(p, "copy parameters")? };
        copy_2d("hipMemcpyParam2DAsync", &p, stream, false)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvMemcpy2DUnaligned(p: *const hip_Memcpy2D) -> hipError_t {
    // Copies here have no alignment rules, so "unaligned" is the same copy.
    guard("hipDrvMemcpy2DUnaligned", || {
        // SAFETY: as in hipMemcpyParam2D.
        let p = unsafe { get(p, "copy parameters")? };
        copy_2d("hipDrvMemcpy2DUnaligned", &p, std::ptr::null_mut(), true)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvMemcpy3D(p: *const HIP_MEMCPY3D) -> hipError_t {
    guard("hipDrvMemcpy3D", || {
        // SAFETY: `p` is null or a valid HIP_MEMCPY3D (crate docs, "Inputs").
        let p = unsafe { get(p, "copy parameters")? };
        copy_3d("hipDrvMemcpy3D", &p, std::ptr::null_mut(), true)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvMemcpy3DAsync(
    p: *const HIP_MEMCPY3D,
    stream: hipStream_t,
) -> hipError_t {
    guard("hipDrvMemcpy3DAsync", || {
        // SAFETY: as in hipDrvMemcpy3D.
        let p = unsafe { get(p, "copy parameters")? };
        copy_3d("hipDrvMemcpy3DAsync", &p, stream, false)
    })
}

// --- Pointer attributes -------------------------------------------------

/// The `hipPointer_attribute` values.
const ATTR_CONTEXT: i32 = 1;
const ATTR_MEMORY_TYPE: i32 = 2;
const ATTR_DEVICE_POINTER: i32 = 3;
const ATTR_HOST_POINTER: i32 = 4;
const ATTR_SYNC_MEMOPS: i32 = 6;
const ATTR_BUFFER_ID: i32 = 7;
const ATTR_IS_MANAGED: i32 = 8;
const ATTR_DEVICE_ORDINAL: i32 = 9;
const ATTR_RANGE_START_ADDR: i32 = 11;
const ATTR_RANGE_SIZE: i32 = 12;
const ATTR_MAPPED: i32 = 13;
const ATTR_ACCESS_FLAGS: i32 = 16;
/// P2P tokens, legacy IPC capability, allowed handle types, GPUDirect
/// RDMA and the pool handle: CLR answers none of them.
const ATTRS_NOT_SUPPORTED: [i32; 5] = [5, 10, 14, 15, 17];

/// One attribute's value, as CLR writes it (its C type decides the width).
enum Value {
    Pointer(u64),
    U32(u32),
    I32(i32),
    Bool(bool),
}

/// One attribute of `ptr`. On an error CLR still writes the attribute's
/// "nothing" value (`fallback`), which `hipDrvPointerGetAttributes`
/// leaves in place.
fn attribute(attr: i32, ptr: u64) -> (Value, HipResult) {
    let found = crate::memory::find(ptr);
    let missing = |what: &str| HipError::invalid(format!("{ptr:#x} is not in {what}"));
    let Some((base, a)) = found else {
        let fallback = match attr {
            ATTR_DEVICE_ORDINAL => Value::I32(-2),
            ATTR_MEMORY_TYPE | ATTR_BUFFER_ID | ATTR_RANGE_SIZE => Value::U32(0),
            // CLR: access flags of unknown memory are 0, with success.
            ATTR_ACCESS_FLAGS => return (Value::U32(0), Ok(())),
            ATTR_SYNC_MEMOPS | ATTR_IS_MANAGED | ATTR_MAPPED => Value::Bool(false),
            _ => Value::Pointer(0),
        };
        return (
            fallback,
            known(attr).and(Err(missing("memory HIP allocated or registered"))),
        );
    };
    let host_side = matches!(a.kind, Kind::Host | Kind::Registered | Kind::Managed);
    let value = match attr {
        ATTR_CONTEXT => Value::Pointer(crate::context::handle_of(a.device) as u64),
        ATTR_MEMORY_TYPE => {
            // As hipPointerGetAttributes reports them (memory.rs).
            let host = matches!(a.kind, Kind::Host | Kind::Registered);
            Value::U32(if host { 0 } else { 1 })
        }
        ATTR_DEVICE_POINTER => Value::Pointer(ptr),
        ATTR_HOST_POINTER if host_side => Value::Pointer(ptr),
        ATTR_HOST_POINTER => return (Value::Pointer(0), Err(missing("host memory"))),
        ATTR_SYNC_MEMOPS => Value::Bool(false),
        // Distinct for live allocations: their starts are distinct pages
        // of an arena smaller than 2^44 bytes.
        ATTR_BUFFER_ID => Value::U32((base >> 12) as u32),
        ATTR_IS_MANAGED => Value::Bool(a.kind == Kind::Managed),
        ATTR_DEVICE_ORDINAL => Value::I32(a.device as i32),
        ATTR_RANGE_START_ADDR => Value::Pointer(base),
        // CLR writes the size as a 32-bit value.
        ATTR_RANGE_SIZE => Value::U32(a.len as u32),
        ATTR_MAPPED => Value::Bool(true),
        ATTR_ACCESS_FLAGS => Value::U32(a.flags),
        other => return (Value::Pointer(0), known(other)),
    };
    (value, Ok(()))
}

/// `Ok` for an attribute softgpu answers, else CLR's error.
fn known(attr: i32) -> HipResult {
    if ATTRS_NOT_SUPPORTED.contains(&attr) {
        return Err(unsupported(format!("pointer attribute {attr}")));
    }
    if (ATTR_CONTEXT..=17).contains(&attr) {
        Ok(())
    } else {
        Err(HipError::invalid(format!(
            "unknown pointer attribute {attr}"
        )))
    }
}

/// Writes `value` to `data` in its attribute's C type.
///
/// # Safety
/// `data` is valid for a write of the attribute's type (the C caller's
/// contract for `hipPointerGetAttribute`'s `data`; crate docs,
/// "Outputs").
unsafe fn write(data: *mut c_void, value: Value) -> HipResult {
    // SAFETY: this function's contract.
    unsafe {
        match value {
            Value::Pointer(p) => put(data as *mut *mut c_void, p as *mut c_void),
            Value::U32(v) => put(data as *mut u32, v),
            Value::I32(v) => put(data as *mut i32, v),
            Value::Bool(v) => put(data as *mut bool, v),
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttribute(
    data: *mut c_void,
    attr: i32,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    guard("hipPointerGetAttribute", || {
        hip()?;
        if data.is_null() || ptr.is_null() {
            return Err(HipError::invalid("a null data or pointer argument"));
        }
        let (value, result) = attribute(attr, ptr as u64);
        if known(attr).is_ok() {
            // SAFETY: `data` holds the attribute's type (C caller).
            unsafe { write(data, value)? };
        }
        result
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvPointerGetAttributes(
    count: u32,
    attrs: *const i32,
    data: *mut *mut c_void,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    guard("hipDrvPointerGetAttributes", || {
        hip()?;
        if count == 0 || attrs.is_null() || data.is_null() || ptr.is_null() {
            return Err(HipError::invalid("a null or empty attribute list"));
        }
        // CLR answers every attribute it can and returns success: one
        // that does not apply to the pointer gets its "nothing" value.
        for i in 0..count as usize {
            // SAFETY: `attrs` and `data` hold `count` entries (crate docs,
            // "Inputs").
            let (attr, out) =
                unsafe { (get(attrs.add(i), "attribute")?, get(data.add(i), "data")?) };
            if out.is_null() || known(attr).is_err() {
                continue;
            }
            let (value, _) = attribute(attr, ptr as u64);
            // SAFETY: `out` holds attribute `attr`'s type (C caller).
            unsafe { write(out, value)? };
        }
        Ok(())
    })
}

symver!("driver");
