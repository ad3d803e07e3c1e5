//! Allocations, copies, fills, symbols and pointer attributes.
//!
//! Device memory is softgpu device memory, whose device address is its
//! host address (the gfx1151 APU's unified memory), so one copy routine
//! serves every direction: `hipMemcpyKind` is checked but the pointers
//! themselves decide. Copies and fills are [`Work`] items on a stream; the
//! synchronous calls put them on the null stream and wait for it, as HIP
//! orders them. Every device-side range is checked against live
//! allocations when the copy runs, so a copy to a freed or wild address is
//! an error, never a stray write.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::error::{get, guard, put, HipError, HipResult};
use crate::state::{hip, lock, Hip};
use crate::stream::Work;

/// What kind of memory an allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Device,
    /// `hipHostMalloc`: fine-grained system memory.
    Host,
    Managed,
    /// Host memory the program owns, made reachable by `hipHostRegister`.
    Registered,
}

/// One allocation or registered range.
pub struct Alloc {
    pub len: u64,
    pub device: usize,
    pub kind: Kind,
    pub flags: u32,
    /// The memory (none for registered host memory).
    pub buffer: Option<softgpu::Buffer>,
}

static ALLOCS: Mutex<BTreeMap<u64, Arc<Alloc>>> = Mutex::new(BTreeMap::new());

/// The allocation holding `addr`, with its start.
pub fn find(addr: u64) -> Option<(u64, Arc<Alloc>)> {
    let allocs = lock(&ALLOCS);
    let (&base, a) = allocs.range(..=addr).next_back()?;
    (addr < base + a.len.max(1)).then(|| (base, a.clone()))
}

/// Whether any allocation or registration shares a byte with
/// `[addr, last]`: one holding `addr`, or one starting inside the range.
fn overlaps(addr: u64, last: u64) -> bool {
    find(addr).is_some() || lock(&ALLOCS).range(addr..=last).next().is_some()
}

/// Allocates `len` bytes of `kind` on the current device.
fn allocate(hip: &Hip, len: u64, kind: Kind, flags: u32) -> HipResult<u64> {
    allocate_on(hip.current(), len, kind, flags)
}

/// Allocates `len` bytes of `kind` on `device` (memory pools allocate on
/// theirs, whichever device is current).
pub fn allocate_on(
    device: &crate::state::DeviceState,
    len: u64,
    kind: Kind,
    flags: u32,
) -> HipResult<u64> {
    device.check_sticky()?;
    let buffer = device.null.with(|s| {
        let b = match kind {
            Kind::Device => s.allocate_for(len as usize, crate::error::current_api()),
            _ => s.allocate_shared_for(len as usize, crate::error::current_api()),
        };
        b.map_err(|e| {
            HipError::new(
                HIP_ERROR_OUT_OF_MEMORY,
                format!("allocation of {len} bytes: {e}"),
            )
        })
    })?;
    let addr = buffer.address();
    let alloc = Alloc {
        len,
        device: device.index,
        kind,
        flags,
        buffer: Some(buffer),
    };
    lock(&ALLOCS).insert(addr, Arc::new(alloc));
    Ok(addr)
}

/// A managed allocation for a `__managed__` variable.
pub fn allocate_managed(len: u64) -> HipResult<u64> {
    allocate(hip()?, len.max(1), Kind::Managed, 1)
}

/// Frees the allocation starting at `addr`, after the device's queued work
/// (HIP's `hipFree` synchronizes, so no kernel still uses it).
fn free(hip: &Hip, addr: u64, kinds: &[Kind]) -> HipResult {
    if addr == 0 {
        return Ok(());
    }
    let found = lock(&ALLOCS).get(&addr).cloned();
    let alloc = match found {
        Some(a) if kinds.contains(&a.kind) => a,
        Some(a) => {
            return Err(HipError::invalid(format!(
                "{addr:#x} is {:?} memory; free it with the matching call",
                a.kind
            )))
        }
        // A pointer imported from another process's pool.
        None if crate::pool::free_imported(hip, addr)? => return Ok(()),
        None => {
            return Err(HipError::invalid(format!(
                "{addr:#x} is not the start of a live allocation"
            )))
        }
    };
    let synchronized = crate::stream::synchronize_device(hip, alloc.device);
    // Memory from a pool goes back to its pool.
    if crate::pool::owns(addr, &alloc) {
        lock(&ALLOCS).remove(&addr);
        crate::pool::release(addr, alloc);
        return synchronized;
    }
    // Freed even when the device has failed (the call still returns the
    // sticky error, as CUDA's does): work still queued holds its buffers
    // until it is done, and a program that frees what it allocated does
    // not leak it.
    if let Some(buffer) = &alloc.buffer {
        buffer.freed_by(crate::error::current_api());
    }
    lock(&ALLOCS).remove(&addr);
    synchronized
}

/// Frees every allocation of `device` (`hipDeviceReset`).
pub fn free_device(device: usize) {
    let mut allocs = lock(&ALLOCS);
    let freed = |a: &Alloc| a.device == device && a.kind != Kind::Registered;
    // leakcheck reports what the reset frees, as compute-sanitizer does
    // at cudaDeviceReset.
    if let Ok(rt) = softgpu_runtime::Runtime::get() {
        if rt.reporter.checks_leaks() {
            let live: Vec<_> = (rt.arena.program_allocations().into_iter())
                .filter(|a| allocs.get(&a.base).is_some_and(|h| freed(h)))
                .collect();
            rt.reporter.leaks(&live);
        }
    }
    allocs.retain(|_, a| !freed(a));
}

fn out_ptr(ptr: *mut *mut c_void, addr: u64) -> HipResult {
    // SAFETY: an output of a pointer (crate docs, "Outputs").
    unsafe { put(ptr, addr as *mut c_void) }
}

fn malloc_kind(ptr: *mut *mut c_void, size: usize, kind: Kind, flags: u32) -> HipResult {
    if ptr.is_null() {
        return Err(HipError::invalid("null output pointer"));
    }
    if size == 0 {
        return out_ptr(ptr, 0);
    }
    let addr = allocate(hip()?, size as u64, kind, flags)?;
    out_ptr(ptr, addr)
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    guard("hipMalloc", || {
        crate::graph::capture::refuse_unsafe_call("hipMalloc")?;
        malloc_kind(ptr, size, Kind::Device, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipExtMallocWithFlags(
    ptr: *mut *mut c_void,
    size: usize,
    flags: u32,
) -> hipError_t {
    guard("hipExtMallocWithFlags", || {
        malloc_kind(ptr, size, Kind::Device, flags)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    flags: u32,
) -> hipError_t {
    guard("hipMallocManaged", || {
        crate::graph::capture::refuse_unsafe_call("hipMallocManaged")?;
        if flags != 1 && flags != 2 {
            return Err(HipError::invalid(format!(
                "managed memory flags {flags:#x}"
            )));
        }
        malloc_kind(ptr, size, Kind::Managed, flags)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: u32,
) -> hipError_t {
    guard("hipHostMalloc", || {
        crate::graph::capture::refuse_unsafe_call("hipHostMalloc")?;
        malloc_kind(ptr, size, Kind::Host, flags)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostAlloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: u32,
) -> hipError_t {
    guard("hipHostAlloc", || {
        crate::graph::capture::refuse_unsafe_call("hipHostAlloc")?;
        malloc_kind(ptr, size, Kind::Host, flags)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    guard("hipMallocHost", || {
        crate::graph::capture::refuse_unsafe_call("hipMallocHost")?;
        malloc_kind(ptr, size, Kind::Host, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAllocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    guard("hipMemAllocHost", || {
        crate::graph::capture::refuse_unsafe_call("hipMemAllocHost")?;
        malloc_kind(ptr, size, Kind::Host, 0)
    })
}

/// ROCm (clr's `ihipFree`) frees any allocation it knows through either of
/// `hipFree` and `hipHostFree`, so a `hipHostMalloc` pointer given to
/// `hipFree` (or a `hipMalloc` one to `hipHostFree`) is freed with
/// success, as there; registered host memory and pointers it never
/// allocated are `hipErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    guard("hipFree", || {
        crate::graph::capture::refuse_unsafe_call("hipFree")?;
        free(
            hip()?,
            ptr as u64,
            &[Kind::Device, Kind::Managed, Kind::Host],
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> hipError_t {
    guard("hipHostFree", || {
        crate::graph::capture::refuse_unsafe_call("hipHostFree")?;
        free(
            hip()?,
            ptr as u64,
            &[Kind::Host, Kind::Device, Kind::Managed],
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeHost(ptr: *mut c_void) -> hipError_t {
    // ROCm's deprecated alias of hipHostFree.
    guard("hipFreeHost", || {
        crate::graph::capture::refuse_unsafe_call("hipFreeHost")?;
        free(
            hip()?,
            ptr as u64,
            &[Kind::Host, Kind::Device, Kind::Managed],
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    // From the current pool of the stream's device (`crate::pool`).
    guard("hipMallocAsync", || {
        crate::pool::malloc_async(ptr, size, None, stream)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeAsync(ptr: *mut c_void, stream: hipStream_t) -> hipError_t {
    guard("hipFreeAsync", || {
        let hip = hip()?;
        let s = hip.stream(stream)?;
        let addr = ptr as u64;
        if addr == 0 {
            return Ok(());
        }
        let Some(alloc) = lock(&ALLOCS).remove(&addr) else {
            // A pointer imported from another process's pool is unmapped
            // at once (after the device's queued work), not in stream order.
            return match crate::pool::free_imported(hip, addr)? {
                true => Ok(()),
                false => Err(HipError::invalid(format!(
                    "{addr:#x} is not the start of a live allocation"
                ))),
            };
        };
        // Freed (or given back to its memory pool) when the stream reaches
        // this point: the host function holds the last reference. (Other
        // streams must be ordered before it by the program, as HIP
        // requires.)
        let holder = Arc::new(Mutex::new(Some((addr, alloc))));
        let call = crate::stream::HostCall {
            call: release_alloc,
            data: Arc::into_raw(holder) as usize,
        };
        s.enqueue(hip, Work::Host(call))
    })
}

/// What a `hipFreeAsync` host call holds: the allocation and its start.
type FreedAlloc = Mutex<Option<(u64, Arc<Alloc>)>>;

/// Drops the allocation a `hipFreeAsync` host call holds, or gives it
/// back to its memory pool.
unsafe extern "C" fn release_alloc(data: *mut c_void) {
    // SAFETY: `data` is the `Arc` `hipFreeAsync` leaked for this one call.
    let holder = unsafe { Arc::from_raw(data as *const FreedAlloc) };
    let taken = lock(&holder).take();
    if let Some((addr, alloc)) = taken {
        if crate::pool::owns(addr, &alloc) {
            crate::pool::release(addr, alloc);
        }
    }
}

/// Makes `alloc` at `addr` live again (memory a pool hands out anew).
pub fn remember(addr: u64, alloc: Arc<Alloc>) {
    lock(&ALLOCS).insert(addr, alloc);
}

/// The live allocation starting at `addr`.
pub fn starting_at(addr: u64) -> Option<Arc<Alloc>> {
    lock(&ALLOCS).get(&addr).cloned()
}

#[no_mangle]
pub unsafe extern "C" fn hipHostRegister(ptr: *mut c_void, size: usize, flags: u32) -> hipError_t {
    guard("hipHostRegister", || {
        crate::graph::capture::refuse_unsafe_call("hipHostRegister")?;
        let hip = hip()?;
        let addr = ptr as u64;
        if addr == 0 || size == 0 {
            return Err(HipError::invalid(
                "registering a null pointer or zero bytes",
            ));
        }
        let last = addr.checked_add(size as u64 - 1).ok_or_else(|| {
            HipError::invalid(format!(
                "{addr:#x}+{size} runs past the end of the address space"
            ))
        })?;
        if overlaps(addr, last) {
            return Err(HipError::new(
                HIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                format!("{addr:#x}+{size} overlaps memory already registered or allocated"),
            ));
        }
        let rt = softgpu_runtime::Runtime::get()?;
        // SAFETY: the program keeps the range valid until it unregisters
        // it and no kernel uses it (hipHostRegister's contract).
        unsafe { rt.lock(addr, size as u64) }?;
        let alloc = Alloc {
            len: size as u64,
            device: hip.current().index,
            kind: Kind::Registered,
            flags,
            buffer: None,
        };
        lock(&ALLOCS).insert(addr, Arc::new(alloc));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostUnregister(ptr: *mut c_void) -> hipError_t {
    guard("hipHostUnregister", || {
        crate::graph::capture::refuse_unsafe_call("hipHostUnregister")?;
        let hip = hip()?;
        let addr = ptr as u64;
        let registered = matches!(lock(&ALLOCS).get(&addr), Some(a) if a.kind == Kind::Registered);
        if !registered {
            return Err(HipError::new(
                HIP_ERROR_HOST_MEMORY_NOT_REGISTERED,
                format!("{addr:#x} was not registered with hipHostRegister"),
            ));
        }
        for d in 0..hip.devices.len() {
            crate::stream::synchronize_device(hip, d)?;
        }
        lock(&ALLOCS).remove(&addr);
        softgpu_runtime::Runtime::get()?.unlock(addr)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostGetDevicePointer(
    dev: *mut *mut c_void,
    host: *mut c_void,
    flags: u32,
) -> hipError_t {
    guard("hipHostGetDevicePointer", || {
        if flags != 0 {
            return Err(HipError::invalid(format!(
                "flags must be 0, got {flags:#x}"
            )));
        }
        match find(host as u64) {
            Some((_, a)) if a.kind != Kind::Device => out_ptr(dev, host as u64),
            _ => Err(HipError::invalid(format!(
                "{host:p} is not host memory from hipHostMalloc or hipHostRegister"
            ))),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostGetFlags(flags: *mut u32, host: *mut c_void) -> hipError_t {
    guard("hipHostGetFlags", || match find(host as u64) {
        // SAFETY: output of an unsigned int (crate docs).
        Some((_, a)) if a.kind == Kind::Host || a.kind == Kind::Registered => unsafe {
            put(flags, a.flags)
        },
        _ => Err(HipError::invalid(format!(
            "{host:p} is not host memory from hipHostMalloc"
        ))),
    })
}

/// Pitch of a pitched allocation: rows start 256-byte aligned.
const PITCH_ALIGN: usize = 256;

#[no_mangle]
pub unsafe extern "C" fn hipMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> hipError_t {
    guard("hipMallocPitch", || {
        crate::graph::capture::refuse_unsafe_call("hipMallocPitch")?;
        let p = width.div_ceil(PITCH_ALIGN).max(1) * PITCH_ALIGN;
        let bytes = p
            .checked_mul(height)
            .ok_or_else(|| HipError::invalid("pitched size overflows"))?;
        malloc_kind(ptr, bytes, Kind::Device, 0)?;
        // SAFETY: output of a size (crate docs).
        unsafe { put(pitch, p) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAllocPitch(
    ptr: *mut hipDeviceptr_t,
    pitch: *mut usize,
    width: usize,
    height: usize,
    _element: u32,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipMallocPitch(ptr, pitch, width, height) }
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc3D(pitched: *mut hipPitchedPtr, extent: hipExtent) -> hipError_t {
    guard("hipMalloc3D", || {
        crate::graph::capture::refuse_unsafe_call("hipMalloc3D")?;
        let p = extent.width.div_ceil(PITCH_ALIGN).max(1) * PITCH_ALIGN;
        let bytes = p
            .checked_mul(extent.height)
            .and_then(|b| b.checked_mul(extent.depth))
            .ok_or_else(|| HipError::invalid("3D size overflows"))?;
        let mut addr: *mut c_void = std::ptr::null_mut();
        malloc_kind(&mut addr, bytes, Kind::Device, 0)?;
        let value = hipPitchedPtr {
            ptr: addr,
            pitch: p,
            xsize: extent.width,
            ysize: extent.height,
        };
        // SAFETY: output of a hipPitchedPtr (crate docs).
        unsafe { put(pitched, value) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    guard("hipMemGetInfo", || {
        let (f, t) = hip()?.current().device.memory_info()?;
        // SAFETY: outputs of sizes (crate docs).
        unsafe {
            put(free, f as usize)?;
            put(total, t as usize)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAddressRange(
    base: *mut hipDeviceptr_t,
    size: *mut usize,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    guard("hipMemGetAddressRange", || {
        let (b, a) = find(ptr as u64).ok_or_else(|| {
            HipError::new(HIP_ERROR_NOT_FOUND, format!("{ptr:p} is in no allocation"))
        })?;
        // SAFETY: outputs (crate docs); either may be null.
        unsafe {
            if !base.is_null() {
                put(base, b as hipDeviceptr_t)?;
            }
            if !size.is_null() {
                put(size, a.len as usize)?;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize) -> hipError_t {
    guard("hipMemPtrGetInfo", || {
        let (_, a) = find(ptr as u64)
            .ok_or_else(|| HipError::invalid(format!("{ptr:p} is in no allocation")))?;
        // SAFETY: output of a size (crate docs).
        unsafe { put(size, a.len as usize) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttributes(
    attr: *mut hipPointerAttribute_t,
    ptr: *const c_void,
) -> hipError_t {
    guard("hipPointerGetAttributes", || {
        let addr = ptr as u64;
        let (_, a) = find(addr).ok_or_else(|| {
            HipError::invalid(format!(
                "{ptr:p} is neither device memory nor registered host memory"
            ))
        })?;
        let (memory_type, host) = match a.kind {
            Kind::Device => (HIP_MEMORY_TYPE_DEVICE, std::ptr::null_mut()),
            Kind::Managed => (HIP_MEMORY_TYPE_DEVICE, ptr as *mut c_void),
            Kind::Host | Kind::Registered => (HIP_MEMORY_TYPE_HOST, ptr as *mut c_void),
        };
        let value = hipPointerAttribute_t {
            memoryType: memory_type,
            device: a.device as i32,
            devicePointer: ptr as *mut c_void,
            hostPointer: host,
            isManaged: (a.kind == Kind::Managed) as i32,
            allocationFlags: a.flags,
        };
        // SAFETY: output of a hipPointerAttribute_t (crate docs).
        unsafe { put(attr, value) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPrefetchAsync(
    ptr: *const c_void,
    count: usize,
    device: i32,
    stream: hipStream_t,
) -> hipError_t {
    guard("hipMemPrefetchAsync", || {
        let hip = hip()?;
        hip.stream(stream)?;
        if device != -1 {
            hip.device(device)?;
        }
        // Memory is unified: there is nothing to move; the range
        // attributes report the prefetch (`crate::advice`).
        check_managed(ptr, count)?;
        crate::advice::prefetched(ptr, count, device);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAdvise(
    ptr: *const c_void,
    count: usize,
    advice: i32,
    device: i32,
) -> hipError_t {
    guard("hipMemAdvise", || {
        if device != -1 {
            hip()?.device(device)?;
        }
        if !crate::advice::is_advice(advice) {
            return Err(HipError::invalid(format!("unknown advice {advice}")));
        }
        // Memory is unified: advice changes nothing; the range attributes
        // report it (`crate::advice`).
        check_managed(ptr, count)?;
        crate::advice::advise(ptr, count, advice, device);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamAttachMemAsync(
    stream: hipStream_t,
    ptr: *mut c_void,
    _len: usize,
    _flags: u32,
) -> hipError_t {
    guard("hipStreamAttachMemAsync", || {
        hip()?.stream(stream)?;
        check_managed(ptr, 0)
    })
}

fn check_managed(ptr: *const c_void, count: usize) -> HipResult {
    match find(ptr as u64) {
        Some((base, a)) if ptr as u64 + count as u64 <= base + a.len => Ok(()),
        _ => Err(HipError::invalid(format!(
            "{ptr:p}+{count} is not in one allocation"
        ))),
    }
}

// --- Copies ------------------------------------------------------------

fn check_kind(kind: i32) -> HipResult {
    if (HIP_MEMCPY_HOST_TO_HOST..=HIP_MEMCPY_DEFAULT).contains(&kind) {
        Ok(())
    } else {
        Err(HipError::new(
            HIP_ERROR_INVALID_MEMCPY_DIRECTION,
            format!("memcpy kind {kind}"),
        ))
    }
}

/// Puts `work` on `stream` and, if `sync`, waits for the stream.
///
/// A copy to or from pageable host memory (neither device memory nor
/// registered or `hipHostMalloc` memory) is synchronous even when called
/// as asynchronous, as CUDA and HIP define it: the program may reuse a
/// pageable buffer as soon as the call returns.
pub fn submit(stream: hipStream_t, work: Work, sync: bool) -> HipResult {
    let hip = hip()?;
    if sync {
        crate::graph::capture::refuse_synchronous_call("a synchronous copy or fill")?;
    }
    let s = hip.stream(stream)?;
    let pageable = match &work {
        Work::Copy(rows) => rows
            .first()
            .is_some_and(|&(dst, src, len)| is_pageable(dst, len) || is_pageable(src, len)),
        _ => false,
    };
    s.enqueue(hip, work)?;
    if (sync || pageable) && !s.is_capturing() {
        s.synchronize(hip)?;
    }
    Ok(())
}

/// Whether `len` bytes at `addr` are host memory the runtime does not know
/// (not arena memory, not registered).
fn is_pageable(addr: u64, len: u64) -> bool {
    let in_arena = softgpu_runtime::Runtime::get().is_ok_and(|rt| {
        let (base, cap) = (rt.arena.base(), rt.arena.space());
        addr >= base && addr.saturating_add(len) <= base + cap
    });
    !in_arena && find(addr).is_none()
}

fn copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: i32,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    check_kind(kind)?;
    if size == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(HipError::invalid("copy to or from a null pointer"));
    }
    let rows = split_at_allocations(vec![(dst as u64, src as u64, size as u64)])?;
    check_copy(&rows)?;
    submit(stream, Work::Copy(Arc::new(rows)), sync)
}

/// Checks a copy's rows when the call is made, as ROCm's validation does
/// (a side in device memory must fit inside one live allocation), and
/// beyond it: a host side must be mapped, readable for the source and
/// writable for the destination. So a copy past an allocation or from a
/// wild pointer is `hipErrorInvalidValue` from the call itself, never a
/// crash and never a failed stream.
///
/// Two host pointers with a device `hipMemcpyKind` are accepted: ROCm
/// refuses them only where the CPU cannot reach GPU memory, and softgpu's
/// memory is the host's, as on an APU.
/// The rows of a copy cut where a side crosses from one allocation into
/// the next one that starts right there, as mappings laid back to back in
/// a virtual memory reservation do (`hipMemMap`): each piece then lies in
/// one allocation, which is what the runtime's copies check. A side that
/// runs into anything else is left whole, for [`check_copy`] to refuse.
pub fn split_at_allocations(rows: Vec<(u64, u64, u64)>) -> HipResult<Vec<(u64, u64, u64)>> {
    let rt = softgpu_runtime::Runtime::get()?;
    let room = |addr: u64| {
        rt.arena
            .allocation_of(addr)
            .map(|(start, size)| (start + size).saturating_sub(addr))
    };
    let mut out = Vec::with_capacity(rows.len());
    for (mut dst, mut src, mut len) in rows {
        while len > 0 {
            let piece = [room(dst), room(src)]
                .into_iter()
                .flatten()
                .filter(|&r| r > 0)
                .fold(len, u64::min);
            out.push((dst, src, piece));
            // (Wrapping only where the loop ends: the last piece.)
            (dst, src, len) = (
                dst.wrapping_add(piece),
                src.wrapping_add(piece),
                len - piece,
            );
        }
    }
    Ok(out)
}

pub fn check_copy(rows: &[(u64, u64, u64)]) -> HipResult {
    let rt = softgpu_runtime::Runtime::get()?;
    for &(dst, src, len) in rows.iter().filter(|r| r.2 > 0) {
        rt.check_queued(dst, len, "copy destination", true)?;
        rt.check_queued(src, len, "copy source", false)?;
    }
    Ok(())
}

/// Checks a fill's rows when the call is made: each must be device memory
/// (one live allocation, or registered host memory), as ROCm requires of
/// `hipMemset`'s destination.
fn check_fill(rows: &[(u64, u64)]) -> HipResult {
    let rt = softgpu_runtime::Runtime::get()?;
    for &(dst, len) in rows.iter().filter(|r| r.1 > 0) {
        rt.check_device(dst, len, "fill destination")?;
    }
    Ok(())
}

guarded_exports! {
    hipMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: i32) => copy(dst, src, size, kind, std::ptr::null_mut(), true);
    hipMemcpy_spt(dst: *mut c_void, src: *const c_void, size: usize, kind: i32) => copy(dst, src, size, kind, STREAM_PER_THREAD as hipStream_t, true);
    hipMemcpyWithStream(dst: *mut c_void, src: *const c_void, size: usize, kind: i32, stream: hipStream_t) => copy(dst, src, size, kind, stream, true);
    hipMemcpyAsync(dst: *mut c_void, src: *const c_void, size: usize, kind: i32, stream: hipStream_t) => copy(dst, src, size, kind, stream, false);
    hipMemcpyAsync_spt(dst: *mut c_void, src: *const c_void, size: usize, kind: i32, stream: hipStream_t) => copy(dst, src, size, kind, crate::stream::spt(stream), false);
    hipMemcpyHtoD(dst: hipDeviceptr_t, src: *mut c_void, size: usize) => copy(dst, src, size, HIP_MEMCPY_HOST_TO_DEVICE, std::ptr::null_mut(), true);
    hipMemcpyDtoH(dst: *mut c_void, src: hipDeviceptr_t, size: usize) => copy(dst, src, size, HIP_MEMCPY_DEVICE_TO_HOST, std::ptr::null_mut(), true);
    hipMemcpyDtoD(dst: hipDeviceptr_t, src: hipDeviceptr_t, size: usize) => copy(dst, src, size, HIP_MEMCPY_DEVICE_TO_DEVICE, std::ptr::null_mut(), true);
    hipMemcpyHtoDAsync(dst: hipDeviceptr_t, src: *mut c_void, size: usize, stream: hipStream_t) => copy(dst, src, size, HIP_MEMCPY_HOST_TO_DEVICE, stream, false);
    hipMemcpyDtoHAsync(dst: *mut c_void, src: hipDeviceptr_t, size: usize, stream: hipStream_t) => copy(dst, src, size, HIP_MEMCPY_DEVICE_TO_HOST, stream, false);
    hipMemcpyDtoDAsync(dst: hipDeviceptr_t, src: hipDeviceptr_t, size: usize, stream: hipStream_t) => copy(dst, src, size, HIP_MEMCPY_DEVICE_TO_DEVICE, stream, false);
    hipMemcpyPeer(dst: *mut c_void, dst_device: i32, src: *const c_void, src_device: i32, size: usize) => {
        let hip = hip()?;
        hip.device(dst_device)?;
        hip.device(src_device)?;
        copy(dst, src, size, HIP_MEMCPY_DEVICE_TO_DEVICE, std::ptr::null_mut(), true)
    };
    hipMemcpyPeerAsync(dst: *mut c_void, dst_device: i32, src: *const c_void, src_device: i32, size: usize, stream: hipStream_t) => {
        let hip = hip()?;
        hip.device(dst_device)?;
        hip.device(src_device)?;
        copy(dst, src, size, HIP_MEMCPY_DEVICE_TO_DEVICE, stream, false)
    };
    hipMemcpy2D(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: i32) => copy_2d(dst, dpitch, src, spitch, width, height, kind, std::ptr::null_mut(), true);
    hipMemcpy2D_spt(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: i32) => copy_2d(dst, dpitch, src, spitch, width, height, kind, STREAM_PER_THREAD as hipStream_t, true);
    hipMemcpy2DAsync(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: i32, stream: hipStream_t) => copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, false);
    // SAFETY: `p` points to a hipMemcpy3DParms (crate docs, "Inputs").
    hipMemcpy3D(p: *const hipMemcpy3DParms) => copy_3d(unsafe { get(p, "parameters")? }, std::ptr::null_mut(), true);
    // SAFETY: as above.
    hipMemcpy3D_spt(p: *const hipMemcpy3DParms) => copy_3d(unsafe { get(p, "parameters")? }, STREAM_PER_THREAD as hipStream_t, true);
    // SAFETY: as above.
    hipMemcpy3DAsync(p: *const hipMemcpy3DParms, stream: hipStream_t) => copy_3d(unsafe { get(p, "parameters")? }, stream, false);
    hipMemcpyToSymbol(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: i32) => to_symbol(symbol, src, size, offset, kind, std::ptr::null_mut(), true);
    hipMemcpyToSymbol_spt(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: i32) => to_symbol(symbol, src, size, offset, kind, STREAM_PER_THREAD as hipStream_t, true);
    hipMemcpyToSymbolAsync(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: i32, stream: hipStream_t) => to_symbol(symbol, src, size, offset, kind, stream, false);
    hipMemcpyFromSymbol(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: i32) => from_symbol(dst, symbol, size, offset, kind, std::ptr::null_mut(), true);
    hipMemcpyFromSymbol_spt(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: i32) => from_symbol(dst, symbol, size, offset, kind, STREAM_PER_THREAD as hipStream_t, true);
    hipMemcpyFromSymbolAsync(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: i32, stream: hipStream_t) => from_symbol(dst, symbol, size, offset, kind, stream, false);
    hipMemset(dst: *mut c_void, value: i32, size: usize) => fill(dst, &[value as u8], size, std::ptr::null_mut(), true);
    hipMemset_spt(dst: *mut c_void, value: i32, size: usize) => fill(dst, &[value as u8], size, STREAM_PER_THREAD as hipStream_t, true);
    hipMemsetAsync(dst: *mut c_void, value: i32, size: usize, stream: hipStream_t) => fill(dst, &[value as u8], size, stream, false);
    hipMemsetD8(dst: hipDeviceptr_t, value: u8, count: usize) => fill(dst, &[value], count, std::ptr::null_mut(), true);
    hipMemsetD8Async(dst: hipDeviceptr_t, value: u8, count: usize, stream: hipStream_t) => fill(dst, &[value], count, stream, false);
    hipMemsetD16(dst: hipDeviceptr_t, value: u16, count: usize) => fill(dst, &value.to_le_bytes(), count, std::ptr::null_mut(), true);
    hipMemsetD16Async(dst: hipDeviceptr_t, value: u16, count: usize, stream: hipStream_t) => fill(dst, &value.to_le_bytes(), count, stream, false);
    hipMemsetD32(dst: hipDeviceptr_t, value: i32, count: usize) => fill(dst, &value.to_le_bytes(), count, std::ptr::null_mut(), true);
    hipMemsetD32Async(dst: hipDeviceptr_t, value: i32, count: usize, stream: hipStream_t) => fill(dst, &value.to_le_bytes(), count, stream, false);
    hipMemset2D(dst: *mut c_void, pitch: usize, value: i32, width: usize, height: usize) => fill_2d(dst, pitch, value, width, height, 1, std::ptr::null_mut(), true);
    hipMemset2D_spt(dst: *mut c_void, pitch: usize, value: i32, width: usize, height: usize) => fill_2d(dst, pitch, value, width, height, 1, STREAM_PER_THREAD as hipStream_t, true);
    hipMemset2DAsync(dst: *mut c_void, pitch: usize, value: i32, width: usize, height: usize, stream: hipStream_t) => fill_2d(dst, pitch, value, width, height, 1, stream, false);
    hipMemset3D(p: hipPitchedPtr, value: i32, e: hipExtent) => fill_2d(p.ptr, p.pitch, value, e.width, p.ysize.max(e.height), e.depth, std::ptr::null_mut(), true);
    hipMemset3D_spt(p: hipPitchedPtr, value: i32, e: hipExtent) => fill_2d(p.ptr, p.pitch, value, e.width, p.ysize.max(e.height), e.depth, STREAM_PER_THREAD as hipStream_t, true);
    hipMemset3DAsync(p: hipPitchedPtr, value: i32, e: hipExtent, stream: hipStream_t) => fill_2d(p.ptr, p.pitch, value, e.width, p.ysize.max(e.height), e.depth, stream, false);
}

/// Device memory for the runtime's own objects (HIP arrays, texture
/// descriptors) on the current device.
pub fn allocate_device(len: u64) -> HipResult<u64> {
    allocate(hip()?, len.max(1), Kind::Device, 0)
}

/// Frees what [`allocate_device`] gave.
pub fn free_device_memory(addr: u64) -> HipResult {
    free(hip()?, addr, &[Kind::Device])
}

/// Checks and queues a copy of `rows` (dst, src, bytes) on `stream`,
/// waiting for it when `sync`: the one path every copy takes.
pub fn copy_rows(rows: Vec<(u64, u64, u64)>, stream: hipStream_t, sync: bool) -> HipResult {
    check_copy(&rows)?;
    submit(stream, Work::Copy(Arc::new(rows)), sync)
}

/// The rows of a pitched copy: `height` rows of `width` bytes.
pub fn rows_2d(
    dst: u64,
    dpitch: usize,
    src: u64,
    spitch: usize,
    width: usize,
    height: usize,
) -> HipResult<Vec<(u64, u64, u64)>> {
    if width > dpitch || width > spitch {
        return Err(HipError::new(
            HIP_ERROR_INVALID_PITCH_VALUE,
            format!("width {width} exceeds a pitch ({dpitch}, {spitch})"),
        ));
    }
    Ok((0..height as u64)
        .map(|r| {
            (
                dst + r * dpitch as u64,
                src + r * spitch as u64,
                width as u64,
            )
        })
        .collect())
}

#[allow(clippy::too_many_arguments)]
fn copy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    check_kind(kind)?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(HipError::invalid("copy to or from a null pointer"));
    }
    let rows = rows_2d(dst as u64, dpitch, src as u64, spitch, width, height)?;
    check_copy(&rows)?;
    submit(stream, Work::Copy(Arc::new(rows)), sync)
}

/// Most rows one 3-D copy may have (2^28: a quarter-billion rows of at
/// least a byte each is beyond any device memory softgpu models).
const MAX_COPY_ROWS: usize = 1 << 28;

/// The rows of a 3D copy between pitched pointers.
pub fn rows_3d(p: &hipMemcpy3DParms) -> HipResult<Vec<(u64, u64, u64)>> {
    check_kind(p.kind)?;
    // An array side is its memory as a pitched pointer, with the extent
    // in elements (hipMemcpy3D's rule for arrays): widths become bytes.
    let (s, sbytes) = crate::texture::pitched_side(p.srcArray, p.srcPtr)?;
    let (d, dbytes) = crate::texture::pitched_side(p.dstArray, p.dstPtr)?;
    let scale = sbytes.max(dbytes) as usize;
    let (s, d) = (&s, &d);
    let mut extent = p.extent;
    let mut src_pos = p.srcPos;
    let mut dst_pos = p.dstPos;
    if scale > 1 {
        extent.width = extent.width.saturating_mul(scale);
        src_pos.x = src_pos.x.saturating_mul(sbytes as usize);
        dst_pos.x = dst_pos.x.saturating_mul(dbytes as usize);
    }
    let e = &extent;
    if s.ptr.is_null() || d.ptr.is_null() {
        return Err(HipError::invalid("3D copy to or from a null pointer"));
    }
    if e.width > s.pitch || e.width > d.pitch {
        return Err(HipError::new(
            HIP_ERROR_INVALID_PITCH_VALUE,
            "extent wider than a pitch",
        ));
    }
    // One row per (y, z): a forged extent must not make a list larger than
    // any copy could be (each row is at least a byte of some allocation).
    let count = e
        .height
        .checked_mul(e.depth)
        .filter(|&n| n <= MAX_COPY_ROWS)
        .ok_or_else(|| {
            HipError::invalid(format!(
                "3D copy of {} x {} rows: more rows than device memory could hold",
                e.height, e.depth
            ))
        })?;
    let slice = |pp: &hipPitchedPtr| (pp.pitch as u64).checked_mul(pp.ysize.max(1) as u64);
    let mut rows = Vec::with_capacity(count);
    let past_the_address_space =
        || HipError::invalid("3D copy position or pitch past the end of the address space");
    for z in 0..e.depth as u64 {
        for y in 0..e.height as u64 {
            // Checked: a forged position or pitch must not wrap around to
            // memory the copy was never meant to touch.
            let at = |pp: &hipPitchedPtr, pos: &hipPos| {
                let z_off = (pos.z as u64).checked_add(z)?.checked_mul(slice(pp)?)?;
                let y_off = (pos.y as u64)
                    .checked_add(y)?
                    .checked_mul(pp.pitch as u64)?;
                (pp.ptr as u64)
                    .checked_add(z_off)?
                    .checked_add(y_off)?
                    .checked_add(pos.x as u64)
            };
            let (to, from) = (at(d, &dst_pos), at(s, &src_pos));
            let (Some(to), Some(from)) = (to, from) else {
                return Err(past_the_address_space());
            };
            rows.push((to, from, e.width as u64));
        }
    }
    Ok(rows)
}

fn copy_3d(p: hipMemcpy3DParms, stream: hipStream_t, sync: bool) -> HipResult {
    let rows = rows_3d(&p)?;
    check_copy(&rows)?;
    submit(stream, Work::Copy(Arc::new(rows)), sync)
}

/// The fill of `count` copies of `pattern` at `dst`.
pub fn fill_work(dst: u64, pattern: &[u8], count: usize) -> Work {
    Work::Fill {
        rows: Arc::new(vec![(dst, (count * pattern.len()) as u64)]),
        pattern: Arc::new(pattern.to_vec()),
    }
}

fn fill(
    dst: *mut c_void,
    pattern: &[u8],
    count: usize,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    if count == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::invalid("fill of a null pointer"));
    }
    if !(dst as usize).is_multiple_of(pattern.len()) {
        return Err(HipError::invalid(format!(
            "{dst:p} is not aligned to {} bytes",
            pattern.len()
        )));
    }
    let len = count
        .checked_mul(pattern.len())
        .ok_or_else(|| HipError::invalid("fill size overflows"))?;
    check_fill(&[(dst as u64, len as u64)])?;
    submit(stream, fill_work(dst as u64, pattern, count), sync)
}

#[allow(clippy::too_many_arguments)]
fn fill_2d(
    dst: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
    depth: usize,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    if width == 0 || height == 0 || depth == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::invalid("fill of a null pointer"));
    }
    if width > pitch {
        return Err(HipError::new(
            HIP_ERROR_INVALID_PITCH_VALUE,
            format!("width {width} exceeds pitch {pitch}"),
        ));
    }
    let rows: Vec<_> = (0..(height * depth) as u64)
        .map(|r| (dst as u64 + r * pitch as u64, width as u64))
        .collect();
    check_fill(&rows)?;
    let work = Work::Fill {
        rows: Arc::new(rows),
        pattern: Arc::new(vec![value as u8]),
    };
    submit(stream, work, sync)
}

/// The device address and size of a `__device__`/`__constant__` variable
/// on the current device, from its host shadow.
pub fn symbol(hip: &Hip, symbol: *const c_void) -> HipResult<(u64, u64)> {
    let var = crate::register::with_registry(|r| r.vars.get(&(symbol as usize)).cloned())
        .ok_or_else(|| {
            HipError::new(
                HIP_ERROR_INVALID_SYMBOL,
                format!("{symbol:p} is not a registered device variable"),
            )
        })?;
    let fatbin = crate::register::with_registry(|r| r.fatbins[var.fatbin].clone());
    let module = fatbin.module(hip.current().index)?;
    let (addr, size) = module.global(&var.name).ok_or_else(|| {
        HipError::new(
            HIP_ERROR_INVALID_SYMBOL,
            format!("the device code defines no variable {}", var.name),
        )
    })?;
    Ok((addr, size.max(var.size)))
}

fn symbol_range(symbol_ptr: *const c_void, size: usize, offset: usize) -> HipResult<u64> {
    let (addr, len) = symbol(hip()?, symbol_ptr)?;
    if (offset as u64)
        .checked_add(size as u64)
        .is_none_or(|end| end > len)
    {
        return Err(HipError::invalid(format!(
            "{size} bytes at offset {offset} exceed the {len}-byte variable"
        )));
    }
    Ok(addr + offset as u64)
}

fn to_symbol(
    sym: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: i32,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    let addr = symbol_range(sym, size, offset)?;
    copy(addr as *mut c_void, src, size, kind, stream, sync)
}

fn from_symbol(
    dst: *mut c_void,
    sym: *const c_void,
    size: usize,
    offset: usize,
    kind: i32,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    let addr = symbol_range(sym, size, offset)?;
    copy(dst, addr as *const c_void, size, kind, stream, sync)
}

#[no_mangle]
pub unsafe extern "C" fn hipGetSymbolAddress(
    dev: *mut *mut c_void,
    sym: *const c_void,
) -> hipError_t {
    guard("hipGetSymbolAddress", || {
        out_ptr(dev, symbol(hip()?, sym)?.0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetSymbolSize(size: *mut usize, sym: *const c_void) -> hipError_t {
    // SAFETY: output of a size (crate docs).
    guard("hipGetSymbolSize", || unsafe {
        put(size, symbol(hip()?, sym)?.1 as usize)
    })
}

symver!("memory");
