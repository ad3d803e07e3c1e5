//! What programs said about managed memory (`hipMemAdvise`,
//! `hipMemPrefetchAsync`), and the range attributes that report it
//! (`hipMemRangeGetAttribute(s)`).
//!
//! softgpu's memory is unified, so advice and prefetches move nothing;
//! they are recorded so the range attributes answer what the program
//! asked for, as CUDA and HIP define them: a value holds for a range when
//! it holds for every byte of it; a range whose parts differ reads as
//! "none" (read-mostly 0, locations `hipInvalidDeviceId` (-2), coherency
//! `hipMemRangeCoherencyModeIndeterminate`).

use std::ffi::c_void;
use std::sync::{Arc, Mutex, Weak};

use crate::abi::*;
use crate::error::{get, guard, put, HipError, HipResult};
use crate::memory::{Alloc, Kind};
use crate::state::{hip, lock};

/// `hipMemoryAdvise` values.
const SET_READ_MOSTLY: i32 = 1;
const UNSET_READ_MOSTLY: i32 = 2;
const SET_PREFERRED_LOCATION: i32 = 3;
const UNSET_PREFERRED_LOCATION: i32 = 4;
const SET_ACCESSED_BY: i32 = 5;
const UNSET_ACCESSED_BY: i32 = 6;
const SET_COARSE_GRAIN: i32 = 100;
const UNSET_COARSE_GRAIN: i32 = 101;
/// A prefetch, recorded among the advice.
const PREFETCH: i32 = -1;

/// `hipMemRangeAttribute` values.
const READ_MOSTLY: i32 = 1;
const PREFERRED_LOCATION: i32 = 2;
const ACCESSED_BY: i32 = 3;
const LAST_PREFETCH_LOCATION: i32 = 4;
const COHERENCY_MODE: i32 = 100;

/// `hipInvalidDeviceId`: no location.
const NO_DEVICE: i32 = -2;

/// One piece of advice (or a prefetch) on `[start, end)` of an allocation
/// that is still the one it was given for.
struct Record {
    start: u64,
    end: u64,
    advice: i32,
    device: i32,
    alloc: Weak<Alloc>,
}

static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

/// The allocation wholly holding `[ptr, ptr + count)`, if it is memory
/// the range attributes describe (managed or `hipHostMalloc` memory).
fn managed_range(ptr: u64, count: u64) -> HipResult<Arc<Alloc>> {
    let end = ptr
        .checked_add(count)
        .ok_or_else(|| HipError::invalid("the range overflows"))?;
    match crate::memory::find(ptr) {
        Some((base, a)) if end <= base + a.len && matches!(a.kind, Kind::Managed | Kind::Host) => {
            Ok(a)
        }
        _ => Err(HipError::invalid(format!(
            "{ptr:#x}+{count} is not inside one managed or host allocation"
        ))),
    }
}

/// Whether `advice` is a `hipMemoryAdvise` value.
pub fn is_advice(advice: i32) -> bool {
    matches!(advice, 1..=6 | SET_COARSE_GRAIN | UNSET_COARSE_GRAIN)
}

/// Records advice (or, with `PREFETCH`, a prefetch) on a range.
fn note(ptr: u64, count: u64, advice: i32, device: i32) {
    let Some((_, alloc)) = crate::memory::find(ptr) else {
        return;
    };
    let mut records = lock(&RECORDS);
    records.retain(|r| r.alloc.strong_count() > 0);
    records.push(Record {
        start: ptr,
        end: ptr.saturating_add(count),
        advice,
        device,
        alloc: Arc::downgrade(&alloc),
    });
}

/// Records `hipMemAdvise`'s advice (already checked by the caller).
pub fn advise(ptr: *const c_void, count: usize, advice: i32, device: i32) {
    note(ptr as u64, count as u64, advice, device);
}

/// Records a `hipMemPrefetchAsync` to `device` (-1: the host).
pub fn prefetched(ptr: *const c_void, count: usize, device: i32) {
    note(ptr as u64, count as u64, PREFETCH, device);
}

/// A value over a range: the same for all of it, or not.
#[derive(Clone, Copy, PartialEq)]
enum Uniform {
    Known(i32),
    Mixed,
}

/// Folds the records that touch `[start, end)` of `alloc` into one value:
/// `effect` gives a record's new value (None: the record does not bear on
/// this attribute).
fn fold(
    alloc: &Arc<Alloc>,
    start: u64,
    end: u64,
    initial: i32,
    effect: impl Fn(&Record) -> Option<i32>,
) -> Uniform {
    let records = lock(&RECORDS);
    let mut value = Uniform::Known(initial);
    let ours = records
        .iter()
        .filter(|r| r.alloc.upgrade().is_some_and(|a| Arc::ptr_eq(&a, alloc)));
    for r in ours.filter(|r| r.start < end && start < r.end) {
        let Some(new) = effect(r) else { continue };
        if r.start <= start && end <= r.end {
            value = Uniform::Known(new);
        } else if value != Uniform::Known(new) {
            value = Uniform::Mixed;
        }
    }
    value
}

/// One range attribute's value, as the ints it writes.
fn attribute(attr: i32, ptr: u64, count: u64, data_size: usize) -> HipResult<Vec<i32>> {
    let alloc = managed_range(ptr, count)?;
    let (start, end) = (ptr, ptr + count);
    let one = |v: Uniform, mixed: i32| {
        if data_size != 4 {
            return Err(HipError::invalid(format!(
                "attribute {attr} is one int, not {data_size} bytes"
            )));
        }
        Ok(vec![match v {
            Uniform::Known(x) => x,
            Uniform::Mixed => mixed,
        }])
    };
    match attr {
        READ_MOSTLY => one(
            fold(&alloc, start, end, 0, |r| match r.advice {
                SET_READ_MOSTLY => Some(1),
                UNSET_READ_MOSTLY => Some(0),
                _ => None,
            }),
            0,
        ),
        PREFERRED_LOCATION => one(
            fold(&alloc, start, end, NO_DEVICE, |r| match r.advice {
                SET_PREFERRED_LOCATION => Some(r.device),
                UNSET_PREFERRED_LOCATION => Some(NO_DEVICE),
                _ => None,
            }),
            NO_DEVICE,
        ),
        LAST_PREFETCH_LOCATION => one(
            fold(&alloc, start, end, NO_DEVICE, |r| {
                (r.advice == PREFETCH).then_some(r.device)
            }),
            NO_DEVICE,
        ),
        // hipMemRangeCoherencyModeFineGrain (0) unless advised coarse;
        // mixed parts are ...Indeterminate (2).
        COHERENCY_MODE => one(
            fold(&alloc, start, end, 0, |r| match r.advice {
                SET_COARSE_GRAIN => Some(1),
                UNSET_COARSE_GRAIN => Some(0),
                _ => None,
            }),
            2,
        ),
        ACCESSED_BY => {
            if data_size == 0 || !data_size.is_multiple_of(4) {
                return Err(HipError::invalid(format!(
                    "{data_size} bytes do not hold whole device ids"
                )));
            }
            let devices = hip()?.devices.len() as i32;
            let mut out: Vec<i32> = (0..devices)
                .filter(|&d| {
                    let by = fold(&alloc, start, end, 0, |r| match r.advice {
                        SET_ACCESSED_BY if r.device == d => Some(1),
                        UNSET_ACCESSED_BY if r.device == d => Some(0),
                        _ => None,
                    });
                    by == Uniform::Known(1)
                })
                .collect();
            // The rest of the array: no device.
            out.resize((data_size / 4).max(out.len()), NO_DEVICE);
            out.truncate(data_size / 4);
            Ok(out)
        }
        other => Err(HipError::invalid(format!(
            "unknown range attribute {other}"
        ))),
    }
}

/// Writes ints to `data`.
///
/// # Safety
/// `data` is valid for writes of `values.len()` ints (the caller's
/// `data_size`; crate docs, "Outputs").
unsafe fn write(data: *mut c_void, values: &[i32]) -> HipResult {
    for (i, v) in values.iter().enumerate() {
        // SAFETY: within the caller's `data_size` bytes (contract above).
        unsafe { put((data as *mut i32).add(i), *v)? };
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRangeGetAttribute(
    data: *mut c_void,
    data_size: usize,
    attr: i32,
    ptr: *const c_void,
    count: usize,
) -> hipError_t {
    guard("hipMemRangeGetAttribute", || {
        hip()?;
        if data.is_null() || data_size == 0 || ptr.is_null() || count == 0 {
            return Err(HipError::invalid("a null or empty argument"));
        }
        let values = attribute(attr, ptr as u64, count as u64, data_size)?;
        // SAFETY: `data` holds `data_size` bytes (C caller); `values` has
        // at most `data_size / 4` ints.
        unsafe { write(data, &values) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRangeGetAttributes(
    data: *mut *mut c_void,
    data_sizes: *const usize,
    attrs: *const i32,
    num: usize,
    ptr: *const c_void,
    count: usize,
) -> hipError_t {
    guard("hipMemRangeGetAttributes", || {
        hip()?;
        if data.is_null()
            || data_sizes.is_null()
            || attrs.is_null()
            || num == 0
            || ptr.is_null()
            || count == 0
        {
            return Err(HipError::invalid("a null or empty argument"));
        }
        // Everything is checked before anything is written.
        let mut answers = Vec::with_capacity(num.min(16));
        for i in 0..num {
            // SAFETY: the three arrays hold `num` entries (crate docs,
            // "Inputs").
            let (out, size, attr) = unsafe {
                (
                    get(data.add(i), "data")?,
                    get(data_sizes.add(i), "data size")?,
                    get(attrs.add(i), "attribute")?,
                )
            };
            if out.is_null() {
                return Err(HipError::invalid(format!("data[{i}] is null")));
            }
            answers.push((out, attribute(attr, ptr as u64, count as u64, size)?));
        }
        for (out, values) in answers {
            // SAFETY: as in hipMemRangeGetAttribute, for entry `i`.
            unsafe { write(out, &values)? };
        }
        Ok(())
    })
}

symver!("advice");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_advice_value_is_known() {
        for a in [1, 2, 3, 4, 5, 6, 100, 101] {
            assert!(is_advice(a), "{a}");
        }
        for a in [0, 7, 99, 102, -1] {
            assert!(!is_advice(a), "{a}");
        }
    }
}
