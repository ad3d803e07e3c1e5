//! Memory pools: `hipMallocAsync`'s stream-ordered allocator, as ROCm's
//! CLR models it (`hip_mempool.cpp`, `hip_mempool_impl.cpp`).
//!
//! Every device has a default pool, which is its current pool until
//! `hipDeviceSetMemPool` names another. A pool hands out device memory
//! (ordinary allocations of `memory.rs`, so copies, fills and pointer
//! attributes know them) and takes it back when it is freed
//! (`hipFreeAsync` when the stream reaches the free, `hipFree` at once):
//! freed blocks stay reserved by the pool, for its next allocations, as
//! long as the pool's reserved bytes stay within its release threshold;
//! past it they are released. `hipMemPoolTrimTo` releases down to a size.
//! (CUDA and CLR release above the threshold at synchronisation points;
//! softgpu does so when the memory comes back, which a program cannot
//! tell apart except through `hipMemPoolAttrReservedMemCurrent` read
//! between a free and the next synchronisation.)
//!
//! A `hipMemPool_t` is a checked handle (a kind tag and a serial), so a
//! forged or destroyed pool is `hipErrorInvalidValue`, the code CLR gives
//! an invalid pool. Pools made with a POSIX shareable handle type are
//! shared with other processes (`share.rs`).

mod share;
pub use share::free_imported;

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::abi::*;
use crate::error::{get, guard, put, HipError, HipResult};
use crate::memory::{Alloc, Kind};
use crate::state::{hip, lock, Hip};

/// One memory pool.
pub struct Pool {
    pub device: usize,
    is_default: bool,
    /// `hipMemPoolProps::handleTypes`: how the pool may be shared.
    handle_types: i32,
    state: Mutex<PoolState>,
}

/// The `hipMemPoolAttr` values.
const REUSE_FOLLOW_EVENT_DEPENDENCIES: i32 = 1;
const REUSE_ALLOW_OPPORTUNISTIC: i32 = 2;
const REUSE_ALLOW_INTERNAL_DEPENDENCIES: i32 = 3;
const RELEASE_THRESHOLD: i32 = 4;
const RESERVED_MEM_CURRENT: i32 = 5;
const RESERVED_MEM_HIGH: i32 = 6;
const USED_MEM_CURRENT: i32 = 7;
const USED_MEM_HIGH: i32 = 8;

struct PoolState {
    /// The three reuse policies, by attribute (1 to 3). They decide when
    /// CLR may hand freed memory to another stream; softgpu gives memory
    /// back to a pool only when the freeing stream reaches the free, so
    /// every policy is safe and they are recorded, not acted on.
    reuse: [i32; 3],
    release_threshold: u64,
    /// Bytes handed out and not yet freed, and the most ever.
    used: u64,
    used_high: u64,
    /// Freed blocks kept for reuse, by start.
    free: BTreeMap<u64, Arc<Alloc>>,
    /// The most bytes ever reserved (used plus kept).
    reserved_high: u64,
    /// Access granted to other devices (`hipMemPoolSetAccess`).
    access: BTreeMap<usize, i32>,
    destroyed: bool,
}

impl PoolState {
    fn kept(&self) -> u64 {
        self.free.values().map(|a| a.len).sum()
    }

    fn reserved(&self) -> u64 {
        self.used + self.kept()
    }

    /// Releases kept blocks, largest first, until at most `keep` bytes
    /// are reserved or none are kept.
    fn trim_to(&mut self, keep: u64) {
        while self.reserved() > keep {
            let Some(largest) = self.free.iter().max_by_key(|(_, a)| a.len).map(|(b, _)| *b) else {
                break;
            };
            if let Some(alloc) = self.free.remove(&largest) {
                release_memory(&alloc);
            }
        }
    }

    fn note_use(&mut self, len: u64) {
        self.used += len;
        self.used_high = self.used_high.max(self.used);
        self.reserved_high = self.reserved_high.max(self.reserved());
    }
}

/// Lets a block's memory go (its buffer is freed when the last work
/// holding it is done); a kernel touching it later is reported as memory
/// a pool released.
fn release_memory(alloc: &Alloc) {
    if let Some(buffer) = &alloc.buffer {
        buffer.freed_by("a memory pool (hipFreeAsync, hipMemPoolTrimTo)");
    }
}

impl Pool {
    fn new(device: usize, is_default: bool, handle_types: i32) -> Pool {
        Pool {
            device,
            is_default,
            handle_types,
            state: Mutex::new(PoolState {
                // CLR's defaults: every reuse policy on.
                reuse: [1, 1, 1],
                // CUDA's and CLR's default: release everything freed.
                release_threshold: 0,
                used: 0,
                used_high: 0,
                free: BTreeMap::new(),
                reserved_high: 0,
                access: BTreeMap::new(),
                destroyed: false,
            }),
        }
    }

    /// `len` bytes: the smallest kept block that holds them, else new
    /// memory on the pool's device.
    fn allocate(self: &Arc<Self>, hip: &Hip, len: u64) -> HipResult<u64> {
        let mut state = lock(&self.state);
        let reuse = state
            .free
            .iter()
            .filter(|(_, a)| a.len >= len)
            .min_by_key(|(_, a)| a.len)
            .map(|(b, _)| *b);
        let (addr, alloc) = match reuse.and_then(|b| state.free.remove(&b).map(|a| (b, a))) {
            Some((addr, alloc)) => {
                crate::memory::remember(addr, alloc.clone());
                (addr, alloc)
            }
            None => {
                let device = &hip.devices[self.device];
                let addr = crate::memory::allocate_on(device, len, Kind::Device, 0)?;
                let alloc = crate::memory::starting_at(addr)
                    .ok_or_else(|| HipError::new(HIP_ERROR_UNKNOWN, "a new allocation vanished"))?;
                (addr, alloc)
            }
        };
        state.note_use(alloc.len);
        lock(&BUSY).insert(addr, (Arc::clone(self), alloc));
        Ok(addr)
    }
}

/// The pool each handed-out block came from, with the block itself (so a
/// later allocation at the same address is not mistaken for it).
static BUSY: Mutex<BTreeMap<u64, Busy>> = Mutex::new(BTreeMap::new());

/// A handed-out block: its pool and the allocation.
type Busy = (Arc<Pool>, Arc<Alloc>);

/// Whether `alloc`, starting at `addr`, was handed out by a pool.
pub fn owns(addr: u64, alloc: &Arc<Alloc>) -> bool {
    lock(&BUSY)
        .get(&addr)
        .is_some_and(|(_, a)| Arc::ptr_eq(a, alloc))
}

/// Takes back a freed block (already gone from the live allocations):
/// kept for reuse within the release threshold, else released.
pub fn release(addr: u64, alloc: Arc<Alloc>) {
    let Some((pool, _)) = lock(&BUSY).remove(&addr) else {
        return;
    };
    let mut state = lock(&pool.state);
    state.used = state.used.saturating_sub(alloc.len);
    if state.destroyed {
        release_memory(&alloc);
        return;
    }
    state.free.insert(addr, alloc);
    let threshold = state.release_threshold;
    state.trim_to(threshold);
}

/// Live pools by handle.
struct Pools {
    next: AtomicUsize,
    live: Mutex<HashMap<usize, Arc<Pool>>>,
    /// Each device's default pool and current pool, by handle.
    defaults: Vec<usize>,
    current: Mutex<Vec<usize>>,
}

/// Pool handles are `POOL_KIND | serial`, apart from every other kind.
const POOL_KIND: usize = 9 << 44;

static POOLS: OnceLock<Pools> = OnceLock::new();

fn pools(hip: &Hip) -> &'static Pools {
    POOLS.get_or_init(|| {
        let pools = Pools {
            next: AtomicUsize::new(1),
            live: Mutex::new(HashMap::new()),
            defaults: Vec::new(),
            current: Mutex::new(Vec::new()),
        };
        let defaults: Vec<usize> = (0..hip.devices.len())
            .map(|d| pools.insert(Pool::new(d, true, 0)))
            .collect();
        *lock(&pools.current) = defaults.clone();
        Pools { defaults, ..pools }
    })
}

impl Pools {
    fn insert(&self, pool: Pool) -> usize {
        let handle = POOL_KIND | self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.live).insert(handle, Arc::new(pool));
        handle
    }

    /// The pool behind a handle; CLR's code for a bad pool is
    /// `hipErrorInvalidValue`.
    fn get(&self, handle: hipMemPool_t) -> HipResult<Arc<Pool>> {
        if handle.is_null() {
            return Err(HipError::invalid("memory pool is null"));
        }
        lock(&self.live)
            .get(&(handle as usize))
            .cloned()
            .ok_or_else(|| HipError::invalid(format!("{handle:p} is not a live memory pool")))
    }

    fn current_of(&self, device: usize) -> HipResult<Arc<Pool>> {
        let handle = lock(&self.current)[device];
        self.get(handle as hipMemPool_t)
    }
}

fn out_pool(out: *mut hipMemPool_t, handle: usize) -> HipResult {
    // SAFETY: an output of a `hipMemPool_t` (crate docs, "Outputs").
    unsafe { put(out, handle as hipMemPool_t) }
}

fn out_ptr(out: *mut *mut c_void, addr: u64) -> HipResult {
    // SAFETY: an output of a pointer (crate docs, "Outputs").
    unsafe { put(out, addr as *mut c_void) }
}

/// `hipMallocAsync` (`pool` None: the current pool of the stream's
/// device) and `hipMallocFromPoolAsync`. The memory exists at once, which
/// stream order allows.
pub fn malloc_async(
    ptr: *mut *mut c_void,
    size: usize,
    pool: Option<hipMemPool_t>,
    stream: hipStream_t,
) -> HipResult {
    let hip = hip()?;
    if ptr.is_null() {
        return Err(HipError::invalid("null output pointer"));
    }
    let stream = hip.stream(stream)?;
    let pools = pools(hip);
    let pool = match pool {
        Some(handle) => pools.get(handle)?,
        None => pools.current_of(stream.device)?,
    };
    if size == 0 {
        // CLR: a null pointer and success.
        return out_ptr(ptr, 0);
    }
    let addr = pool.allocate(hip, size as u64)?;
    out_ptr(ptr, addr)
}

/// A device ordinal as an index, with the code CLR gives a bad one.
fn device_index(hip: &Hip, device: i32, code: hipError_t) -> HipResult<usize> {
    usize::try_from(device)
        .ok()
        .filter(|&d| d < hip.devices.len())
        .ok_or_else(|| HipError::new(code, format!("no device {device}")))
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocFromPoolAsync(
    ptr: *mut *mut c_void,
    size: usize,
    pool: hipMemPool_t,
    stream: hipStream_t,
) -> hipError_t {
    guard("hipMallocFromPoolAsync", || {
        if pool.is_null() {
            return Err(HipError::invalid("memory pool is null"));
        }
        malloc_async(ptr, size, Some(pool), stream)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetDefaultMemPool(
    pool: *mut hipMemPool_t,
    device: i32,
) -> hipError_t {
    guard("hipDeviceGetDefaultMemPool", || {
        let hip = hip()?;
        if pool.is_null() {
            return Err(HipError::invalid("null output pointer"));
        }
        let index = device_index(hip, device, HIP_ERROR_INVALID_DEVICE)?;
        out_pool(pool, pools(hip).defaults[index])
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetMemPool(pool: *mut hipMemPool_t, device: i32) -> hipError_t {
    guard("hipDeviceGetMemPool", || {
        let hip = hip()?;
        // CLR: a bad device here is hipErrorInvalidValue.
        let index = device_index(hip, device, HIP_ERROR_INVALID_VALUE)?;
        let handle = lock(&pools(hip).current)[index];
        out_pool(pool, handle)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetMemPool(device: i32, pool: hipMemPool_t) -> hipError_t {
    guard("hipDeviceSetMemPool", || {
        let hip = hip()?;
        let index = device_index(hip, device, HIP_ERROR_INVALID_VALUE)?;
        let pools = pools(hip);
        let p = pools.get(pool)?;
        if p.device != index {
            return Err(HipError::new(
                HIP_ERROR_INVALID_DEVICE,
                format!("the pool is device {}'s, not device {index}'s", p.device),
            ));
        }
        lock(&pools.current)[index] = pool as usize;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolCreate(
    pool: *mut hipMemPool_t,
    props: *const hipMemPoolProps,
) -> hipError_t {
    guard("hipMemPoolCreate", || {
        let hip = hip()?;
        if pool.is_null() {
            return Err(HipError::invalid("null output pointer"));
        }
        // SAFETY: `props` is null or a valid hipMemPoolProps (crate docs,
        // "Inputs").
        let props = unsafe { get(props, "pool properties")? };
        if props.allocType != HIP_MEM_ALLOCATION_TYPE_PINNED {
            return Err(HipError::invalid(format!(
                "allocation type {} (only hipMemAllocationTypePinned)",
                props.allocType
            )));
        }
        if props.location.type_ != HIP_MEM_LOCATION_TYPE_DEVICE {
            return Err(HipError::invalid("a pool's location must be a device"));
        }
        let index = device_index(hip, props.location.id, HIP_ERROR_INVALID_VALUE)?;
        // None, or POSIX file descriptors (`share.rs`); Windows handles
        // have no meaning here.
        if props.handleTypes & !HIP_MEM_HANDLE_TYPE_POSIX_FD != 0 {
            return Err(crate::error::unsupported(format!(
                "hipMemPoolCreate with shareable handle types {:#x} (POSIX file descriptors only)",
                props.handleTypes
            )));
        }
        let pools = pools(hip);
        let handle = pools.insert(Pool::new(index, false, props.handleTypes));
        out_pool(pool, handle).inspect_err(|_| {
            lock(&pools.live).remove(&handle);
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolDestroy(pool: hipMemPool_t) -> hipError_t {
    guard("hipMemPoolDestroy", || {
        let hip = hip()?;
        let pools = pools(hip);
        let p = pools.get(pool)?;
        if p.is_default {
            return Err(HipError::invalid(
                "a device's default pool cannot be destroyed",
            ));
        }
        {
            let mut state = lock(&p.state);
            state.trim_to(0);
            // Blocks still in use stay valid; each is released when freed.
            state.destroyed = true;
        }
        let mut current = lock(&pools.current);
        if current[p.device] == pool as usize {
            current[p.device] = pools.defaults[p.device];
        }
        lock(&pools.live).remove(&(pool as usize));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolTrimTo(pool: hipMemPool_t, keep: usize) -> hipError_t {
    guard("hipMemPoolTrimTo", || {
        let p = pools(hip()?).get(pool)?;
        lock(&p.state).trim_to(keep as u64);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolSetAttribute(
    pool: hipMemPool_t,
    attr: i32,
    value: *mut c_void,
) -> hipError_t {
    guard("hipMemPoolSetAttribute", || {
        let p = pools(hip()?).get(pool)?;
        if value.is_null() {
            return Err(HipError::invalid("value is null"));
        }
        let mut state = lock(&p.state);
        match attr {
            REUSE_FOLLOW_EVENT_DEPENDENCIES
            | REUSE_ALLOW_OPPORTUNISTIC
            | REUSE_ALLOW_INTERNAL_DEPENDENCIES => {
                // SAFETY: these attributes' value is an int (the header's
                // hipMemPoolAttr documentation; crate docs, "Inputs").
                let flag = unsafe { get(value as *const i32, "value")? };
                state.reuse[(attr - 1) as usize] = flag;
            }
            RELEASE_THRESHOLD => {
                // SAFETY: this attribute's value is a uint64_t (as above).
                state.release_threshold = unsafe { get(value as *const u64, "value")? };
                let threshold = state.release_threshold;
                state.trim_to(threshold);
            }
            RESERVED_MEM_HIGH | USED_MEM_HIGH => {
                // SAFETY: as above.
                let reset = unsafe { get(value as *const u64, "value")? };
                // CLR: a high-water mark can only be reset, with 0, to the
                // current value.
                if reset != 0 {
                    return Err(HipError::invalid(format!(
                        "attribute {attr} can only be reset with 0, not {reset}"
                    )));
                }
                if attr == USED_MEM_HIGH {
                    state.used_high = state.used;
                } else {
                    state.reserved_high = state.reserved();
                }
            }
            RESERVED_MEM_CURRENT | USED_MEM_CURRENT => {
                return Err(HipError::invalid(format!("attribute {attr} is read-only")))
            }
            _ => return Err(HipError::invalid(format!("unknown pool attribute {attr}"))),
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolGetAttribute(
    pool: hipMemPool_t,
    attr: i32,
    value: *mut c_void,
) -> hipError_t {
    guard("hipMemPoolGetAttribute", || {
        let p = pools(hip()?).get(pool)?;
        if value.is_null() {
            return Err(HipError::invalid("value is null"));
        }
        let state = lock(&p.state);
        let wide = match attr {
            REUSE_FOLLOW_EVENT_DEPENDENCIES
            | REUSE_ALLOW_OPPORTUNISTIC
            | REUSE_ALLOW_INTERNAL_DEPENDENCIES => {
                let flag = state.reuse[(attr - 1) as usize];
                // SAFETY: these attributes' value is an int (the header's
                // hipMemPoolAttr documentation; crate docs, "Outputs").
                return unsafe { put(value as *mut i32, flag) };
            }
            RELEASE_THRESHOLD => state.release_threshold,
            RESERVED_MEM_CURRENT => state.reserved(),
            RESERVED_MEM_HIGH => state.reserved_high,
            USED_MEM_CURRENT => state.used,
            USED_MEM_HIGH => state.used_high,
            _ => return Err(HipError::invalid(format!("unknown pool attribute {attr}"))),
        };
        // SAFETY: the other attributes' value is a uint64_t (as above).
        unsafe { put(value as *mut u64, wide) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolSetAccess(
    pool: hipMemPool_t,
    list: *const hipMemAccessDesc,
    count: usize,
) -> hipError_t {
    guard("hipMemPoolSetAccess", || {
        let hip = hip()?;
        let p = pools(hip).get(pool)?;
        if list.is_null() {
            return Err(HipError::invalid("access list is null"));
        }
        if count > hip.devices.len() {
            return Err(HipError::new(
                HIP_ERROR_INVALID_DEVICE,
                format!("{count} descriptors for {} devices", hip.devices.len()),
            ));
        }
        for i in 0..count {
            // SAFETY: `list` holds `count` descriptors (crate docs,
            // "Inputs"); `count` is at most the device count.
            let desc = unsafe { get(list.add(i), "access descriptor")? };
            set_access(hip, &p, desc)?;
        }
        Ok(())
    })
}

/// One `hipMemPoolSetAccess` descriptor, with CLR's codes.
fn set_access(hip: &Hip, pool: &Pool, desc: hipMemAccessDesc) -> HipResult {
    if desc.location.type_ != HIP_MEM_LOCATION_TYPE_DEVICE {
        return Err(HipError::invalid("an access location must be a device"));
    }
    let device = device_index(hip, desc.location.id, HIP_ERROR_INVALID_DEVICE)?;
    // CLR refuses revoking access with hipErrorInvalidDevice.
    if desc.flags == HIP_MEM_ACCESS_NONE {
        return Err(HipError::new(
            HIP_ERROR_INVALID_DEVICE,
            "hipMemAccessFlagsProtNone: access cannot be revoked",
        ));
    }
    if desc.flags != HIP_MEM_ACCESS_READ && desc.flags != HIP_MEM_ACCESS_READ_WRITE {
        return Err(HipError::invalid(format!("access flags {}", desc.flags)));
    }
    // The pool's own device always has full access. (Every device shares
    // one arena, so access is a record, never a mapping.)
    if device != pool.device {
        lock(&pool.state).access.insert(device, desc.flags);
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolGetAccess(
    flags: *mut i32,
    pool: hipMemPool_t,
    location: *mut hipMemLocation,
) -> hipError_t {
    guard("hipMemPoolGetAccess", || {
        let hip = hip()?;
        let p = pools(hip).get(pool)?;
        if flags.is_null() {
            return Err(HipError::invalid("null output pointer"));
        }
        // SAFETY: `location` is null or a valid hipMemLocation (crate
        // docs, "Inputs").
        let location = unsafe { get(location as *const hipMemLocation, "location")? };
        if location.type_ != HIP_MEM_LOCATION_TYPE_DEVICE {
            return Err(HipError::invalid("an access location must be a device"));
        }
        let device = device_index(hip, location.id, HIP_ERROR_INVALID_VALUE)?;
        let access = if device == p.device {
            HIP_MEM_ACCESS_READ_WRITE
        } else {
            let state = lock(&p.state);
            state
                .access
                .get(&device)
                .copied()
                .unwrap_or(HIP_MEM_ACCESS_NONE)
        };
        // SAFETY: an output of a hipMemAccessFlags (crate docs, "Outputs").
        unsafe { put(flags, access) }
    })
}

symver!("pool");
