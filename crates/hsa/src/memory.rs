//! Memory: the legacy regions, the AMD memory pools, allocation, copies
//! (synchronous, asynchronous and 3-D pitched), fills, host locking and
//! registration, pointer information, access control, coherency,
//! migration and deallocation notifiers.
//!
//! Regions and pools are the same objects with the same handles
//! (`Runtime::pools`). A GPU agent's pools are its coarse-grained device
//! memory and its LDS (group segment); the CPU agent's are fine-grained
//! system memory and the kernarg pool. Like ROCm, `hsa_agent_iterate_regions`
//! on a GPU agent also lists the system regions, which is where classic HSA
//! programs look for their kernarg region.
//!
//! All memory is one unified arena that every agent (and the host) reaches
//! at the same address, so access grants, coherency settings and migration
//! change nothing physical: they are checked and recorded.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, Weak};

use softgpu_runtime::agent::{Agent, AgentKind, Pool, PoolKind, POOL_GRANULE};
use softgpu_runtime::error::invalid;
use softgpu_runtime::memory::AllocationKind;
use softgpu_runtime::signal::{Order, Signal};
use softgpu_runtime::{Error, Runtime};

use crate::queue::MAX_PRIVATE_SEGMENT_BYTES;
use crate::signal::{signal_of, CPointer};
use crate::{guard, non_null, put, runtime, Status, HSA_STATUS_SUCCESS};

symver!("memory");

// hsa_region_segment_t / hsa_amd_segment_t (same values).
const SEGMENT_GLOBAL: u32 = 0;
const SEGMENT_GROUP: u32 = 3;

// hsa_region_global_flag_t / hsa_amd_memory_pool_global_flag_t (same values).
const FLAG_KERNARG: u32 = 1;
const FLAG_FINE_GRAINED: u32 = 2;
const FLAG_COARSE_GRAINED: u32 = 4;
/// `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED` (pools only).
const FLAG_EXTENDED_SCOPE_FINE_GRAINED: u32 = 8;

// hsa_region_info_t.
const REGION_INFO_SEGMENT: u32 = 0;
const REGION_INFO_GLOBAL_FLAGS: u32 = 1;
const REGION_INFO_SIZE: u32 = 2;
const REGION_INFO_ALLOC_MAX_SIZE: u32 = 4;
const REGION_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
const REGION_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
const REGION_INFO_RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
const REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE: u32 = 8;
// hsa_amd_region_info_t.
const AMD_REGION_INFO_HOST_ACCESSIBLE: u32 = 0xA000;
const AMD_REGION_INFO_BASE: u32 = 0xA001;
const AMD_REGION_INFO_BUS_WIDTH: u32 = 0xA002;
const AMD_REGION_INFO_MAX_CLOCK_FREQUENCY: u32 = 0xA003;

// hsa_amd_memory_pool_info_t.
const POOL_INFO_SEGMENT: u32 = 0;
const POOL_INFO_GLOBAL_FLAGS: u32 = 1;
const POOL_INFO_SIZE: u32 = 2;
const POOL_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
const POOL_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
const POOL_INFO_RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
const POOL_INFO_ACCESSIBLE_BY_ALL: u32 = 15;
const POOL_INFO_ALLOC_MAX_SIZE: u32 = 16;
const POOL_INFO_LOCATION: u32 = 17;
const POOL_INFO_RUNTIME_ALLOC_REC_GRANULE: u32 = 18;

// hsa_amd_memory_pool_location_t.
const POOL_LOCATION_CPU: u32 = 0;
const POOL_LOCATION_GPU: u32 = 1;

// hsa_amd_memory_pool_flag_t (hsa_amd_memory_pool_allocate's flags).
const POOL_FLAG_PCIE: u32 = 1 << 0;
const POOL_FLAG_CONTIGUOUS: u32 = 1 << 1;
const POOL_FLAG_EXECUTABLE: u32 = 1 << 2;

// hsa_amd_agent_memory_pool_info_t and hsa_amd_memory_pool_access_t.
const AGENT_POOL_INFO_ACCESS: u32 = 0;
const AGENT_POOL_INFO_NUM_LINK_HOPS: u32 = 1;
const AGENT_POOL_INFO_LINK_INFO: u32 = 2;
const ACCESS_NEVER_ALLOWED: u32 = 0;
const ACCESS_ALLOWED_BY_DEFAULT: u32 = 1;
/// `HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT`: the on-die fabric of an APU.
const LINK_TYPE_HYPERTRANSPORT: u32 = 0;

// hsa_amd_pointer_type_t.
const POINTER_TYPE_UNKNOWN: u32 = 0;
const POINTER_TYPE_HSA: u32 = 1;
const POINTER_TYPE_LOCKED: u32 = 2;

// hsa_amd_coherency_type_t.
const COHERENCY_COHERENT: u32 = 0;
const COHERENCY_NONCOHERENT: u32 = 1;

// hsa_access_permission_t.
const ACCESS_PERMISSION_RO: u32 = 1;
const ACCESS_PERMISSION_RW: u32 = 3;

/// `hsa_amd_copy_direction_t`: hsaHostToHost..=hsaDeviceToDevice.
const COPY_DIRECTION_LAST: u32 = 3;

/// A pool looked up through the legacy region API: a bad handle is an
/// invalid region, not an invalid memory pool.
fn region_pool(rt: &Runtime, region: u64) -> Result<Arc<Pool>, Error> {
    rt.pool(region).map_err(|_| Error::InvalidHandle {
        kind: "region",
        handle: region,
    })
}

/// The segment a pool is in.
fn segment(pool: &Pool) -> u32 {
    if pool.kind == PoolKind::Group {
        SEGMENT_GROUP
    } else {
        SEGMENT_GLOBAL
    }
}

/// The global flags of a pool (regions use the same bits).
fn global_flags(pool: &Pool) -> u32 {
    match pool.kind {
        PoolKind::CoarseDevice | PoolKind::CoarseSystem => FLAG_COARSE_GRAINED,
        PoolKind::FineSystem => FLAG_FINE_GRAINED,
        PoolKind::ExtFineSystem => FLAG_FINE_GRAINED | FLAG_EXTENDED_SCOPE_FINE_GRAINED,
        PoolKind::Kernarg => FLAG_KERNARG | FLAG_FINE_GRAINED,
        PoolKind::Group => 0,
    }
}

/// Allocation granule (and alignment) of a pool; 0 where allocation is
/// not allowed.
fn granule(pool: &Pool) -> usize {
    if pool.allocatable() {
        POOL_GRANULE as usize
    } else {
        0
    }
}

/// Writes one attribute value of type `T`.
///
/// # Safety
/// `out` must be NULL or valid for a write of `T`: the attribute's type,
/// by the C caller's output contract (crate docs, "Outputs").
unsafe fn answer<T>(out: *mut c_void, value: T) -> Result<(), Error> {
    // SAFETY: this function's contract is `put`'s.
    unsafe { put(out.cast::<T>(), value) }
}

/// Calls an iteration callback for each handle; a status other than
/// success stops the walk and is returned.
fn iterate(
    handles: &[u64],
    callback: Option<unsafe extern "C" fn(u64, *mut c_void) -> Status>,
    data: *mut c_void,
    stopped: &mut Status,
) -> Result<(), Error> {
    let callback = callback.ok_or_else(|| invalid("callback is NULL"))?;
    for &h in handles {
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        let status = unsafe { callback(h, data) };
        if status != HSA_STATUS_SUCCESS {
            *stopped = status;
            break;
        }
    }
    Ok(())
}

/// The regions `hsa_agent_iterate_regions` reports: the agent's pools and,
/// for a GPU agent, the system (CPU agent) pools too.
fn regions_of(rt: &Runtime, agent: u64) -> Result<Vec<u64>, Error> {
    let a = rt.agent(agent)?;
    let mut list = a.pools.clone();
    if a.kind == AgentKind::Gpu {
        list.extend(
            rt.agents
                .iter()
                .filter(|x| x.kind == AgentKind::Cpu)
                .flat_map(|x| x.pools.iter().copied()),
        );
    }
    Ok(list)
}

#[no_mangle]
pub unsafe extern "C" fn hsa_agent_iterate_regions(
    agent: u64,
    callback: Option<unsafe extern "C" fn(u64, *mut c_void) -> Status>,
    data: *mut c_void,
) -> Status {
    let mut stopped = HSA_STATUS_SUCCESS;
    let status = guard("hsa_agent_iterate_regions", || {
        let list = regions_of(&*runtime()?, agent)?;
        iterate(&list, callback, data, &mut stopped)
    });
    if status == HSA_STATUS_SUCCESS {
        stopped
    } else {
        status
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_region_get_info(
    region: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_region_get_info", || {
        let rt = runtime()?;
        let pool = region_pool(&rt, region)?;
        non_null(value, "value")?;
        let global = pool.kind != PoolKind::Group;
        // SAFETY: `value` is non-null (checked) and, by the C caller's
        // output contract (crate docs, "Outputs"), valid for a write of the
        // attribute's type; each arm writes the type the header gives it.
        unsafe {
            match attribute {
                REGION_INFO_SEGMENT => answer(value, segment(&pool)),
                REGION_INFO_GLOBAL_FLAGS => answer(value, global_flags(&pool)),
                REGION_INFO_SIZE | REGION_INFO_ALLOC_MAX_SIZE => {
                    answer(value, pool.capacity as usize)
                }
                REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE => {
                    let per_group =
                        MAX_PRIVATE_SEGMENT_BYTES as u64 * pool_agent_workgroup(&rt, &pool);
                    answer(value, per_group.min(u32::MAX as u64) as u32)
                }
                REGION_INFO_RUNTIME_ALLOC_ALLOWED => answer(value, pool.allocatable()),
                REGION_INFO_RUNTIME_ALLOC_GRANULE | REGION_INFO_RUNTIME_ALLOC_ALIGNMENT => {
                    answer(value, granule(&pool))
                }
                AMD_REGION_INFO_HOST_ACCESSIBLE => answer(value, global),
                AMD_REGION_INFO_BASE => {
                    let base = if global { rt.arena.base() } else { 0 };
                    answer(value, base as *mut c_void)
                }
                // Memory width and clock are not modelled (deprecated
                // attributes; 0 means unknown).
                AMD_REGION_INFO_BUS_WIDTH | AMD_REGION_INFO_MAX_CLOCK_FREQUENCY => {
                    answer(value, 0u32)
                }
                other => Err(invalid(format!("{other:#x} is not an hsa_region_info_t"))),
            }
        }
    })
}

/// Largest workgroup of the agent owning a pool.
fn pool_agent_workgroup(rt: &Runtime, pool: &Pool) -> u64 {
    rt.agents
        .get(pool.agent)
        .map_or(1024, |a| a.profile.max_workgroup_size as u64)
}

/// Allocates from a pool: size 0 is a bad argument, more than the pool
/// holds an invalid allocation, and more than is free now runs out of
/// resources.
///
/// # Safety
/// `out` must be NULL or valid for a write of a pointer (the exports' `ptr`
/// output argument).
unsafe fn allocate(
    rt: &Runtime,
    pool: &Pool,
    handle: u64,
    size: usize,
    out: *mut *mut c_void,
) -> Result<(), Error> {
    non_null(out, "ptr")?;
    if size == 0 {
        return Err(invalid("size 0"));
    }
    if !pool.allocatable() {
        return Err(Error::InvalidAllocation(format!(
            "{:?} pool: the host cannot allocate from it",
            pool.kind
        )));
    }
    if size as u64 > pool.capacity {
        return Err(Error::InvalidAllocation(format!(
            "{size} bytes is more than the {:?} pool's maximum allocation of {} bytes",
            pool.kind, pool.capacity
        )));
    }
    let addr = rt.allocate(handle, size as u64)?;
    // SAFETY: this function's contract is `put`'s.
    unsafe { put(out, addr as *mut c_void) }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_memory_allocate(
    region: u64,
    size: usize,
    ptr: *mut *mut c_void,
) -> Status {
    guard("hsa_memory_allocate", || {
        let rt = runtime()?;
        let pool = region_pool(&rt, region)?;
        // SAFETY: `ptr` is the C caller's output for the allocation's
        // address (crate docs, "Outputs").
        unsafe { allocate(&rt, &pool, region, size, ptr) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(
    memory_pool: u64,
    size: usize,
    flags: u32,
    ptr: *mut *mut c_void,
) -> Status {
    guard("hsa_amd_memory_pool_allocate", || {
        let rt = runtime()?;
        let pool = rt.pool(memory_pool)?;
        check_allocation_flags(flags)?;
        // SAFETY: `ptr` is the C caller's output for the allocation's
        // address (crate docs, "Outputs").
        unsafe { allocate(&rt, &pool, memory_pool, size, ptr) }
    })
}

/// Checks `hsa_amd_memory_pool_allocate`'s flags. Accepted:
/// - `HSA_AMD_MEMORY_POOL_CONTIGUOUS_FLAG`: every allocation is one range
///   of the arena, contiguous in the only address space there is;
/// - `HSA_AMD_MEMORY_POOL_PCIE_FLAG`: asks for memory whose ordering need
///   only hold per link; softgpu's memory is coherent for every agent, which
///   is stronger, so the request is met.
///
/// Refused: `HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG` with `HSA_STATUS_ERROR`
/// (the executor runs only code loaded through executables, never code a
/// client writes into an allocation), and bits `hsa_ext_amd.h` does not
/// define with `HSA_STATUS_ERROR_INVALID_ARGUMENT`. (ROCr's
/// `hsa_amd_memory_pool_allocate`, hsa_ext_amd.cpp, maps the three known
/// bits to its allocation flags and passes unknown bits by; softgpu is
/// stricter so a newer client's request is not silently dropped.)
fn check_allocation_flags(flags: u32) -> Result<(), Error> {
    let known = POOL_FLAG_PCIE | POOL_FLAG_CONTIGUOUS | POOL_FLAG_EXECUTABLE;
    if flags & !known != 0 {
        return Err(invalid(format!(
            "flags {flags:#x}: bits {:#x} are not hsa_amd_memory_pool_flag_t values",
            flags & !known
        )));
    }
    if flags & POOL_FLAG_EXECUTABLE != 0 {
        return Err(crate::unsupported(
            "hsa_amd_memory_pool_allocate(HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG): kernels run only \
             code loaded through hsa_executable_*, not code written into an allocation",
        ));
    }
    Ok(())
}

/// Frees a pool allocation (NULL does nothing) and runs the deallocation
/// notifiers registered on it.
fn free(ptr: *mut c_void) -> Result<(), Error> {
    let rt = runtime()?;
    if ptr.is_null() {
        return Ok(());
    }
    if let Some(queue) = queue_using(&rt, ptr as u64) {
        let agent = rt.agent_handles[queue.agent.index];
        crate::events::memory_in_use(agent, ptr as u64);
        return Err(Error::InUse(format!(
            "{ptr:p} is memory of live queue {} (its ring or descriptor): destroy the queue first",
            queue.id
        )));
    }
    rt.free(ptr as u64)?;
    notify_deallocation(&rt, ptr as u64);
    Ok(())
}

/// The live queue whose ring or `hsa_queue_t` holds `addr`, if any.
fn queue_using(rt: &Runtime, addr: u64) -> Option<Arc<softgpu_runtime::queue::Queue>> {
    let queues = rt.queues.lock().unwrap_or_else(|e| e.into_inner());
    let inside = |start: u64, len: u64| addr >= start && addr - start < len;
    queues
        .values()
        .find(|q| {
            let ring = q.size as u64 * softgpu_runtime::queue::PACKET_BYTES;
            inside(q.ring, ring) || addr == q.address
        })
        .cloned()
}

#[no_mangle]
pub unsafe extern "C" fn hsa_memory_free(ptr: *mut c_void) -> Status {
    guard("hsa_memory_free", || free(ptr))
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> Status {
    guard("hsa_amd_memory_pool_free", || free(ptr))
}

/// Copies `size` bytes at once. Device addresses must lie in live
/// allocations; any other address is host memory the caller vouches for.
#[no_mangle]
pub unsafe extern "C" fn hsa_memory_copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
) -> Status {
    guard("hsa_memory_copy", || {
        let rt = runtime()?;
        non_null(dst, "dst")?;
        non_null(src, "src")?;
        // SAFETY: `copy` checks device-memory sides itself; a host side is
        // the C caller's buffer of `size` bytes, valid for the call and not
        // written by anyone else meanwhile (crate docs, "Memory", "No races
        // on arguments").
        unsafe { rt.copy(dst as u64, src as u64, size as u64) }
    })
}

/// Ownership transfer of coarse-grained memory: every agent sees the same
/// memory, so this checks its arguments and succeeds.
#[no_mangle]
pub unsafe extern "C" fn hsa_memory_assign_agent(
    ptr: *mut c_void,
    agent: u64,
    access: u32,
) -> Status {
    guard("hsa_memory_assign_agent", || {
        let rt = runtime()?;
        rt.agent(agent)?;
        non_null(ptr, "ptr")?;
        if !(ACCESS_PERMISSION_RO..=ACCESS_PERMISSION_RW).contains(&access) {
            return Err(invalid(format!(
                "{access} is not an hsa_access_permission_t"
            )));
        }
        Ok(())
    })
}

/// Makes host memory reachable by kernels at its own address. Memory the
/// runtime allocated, or already registered, needs nothing.
#[no_mangle]
pub unsafe extern "C" fn hsa_memory_register(ptr: *mut c_void, size: usize) -> Status {
    guard("hsa_memory_register", || {
        let rt = runtime()?;
        if ptr.is_null() {
            return Ok(());
        }
        if size == 0 {
            return Err(invalid("size 0 with a non-NULL pointer"));
        }
        let info = rt.pointer_info(ptr as u64);
        let end = (ptr as u64)
            .checked_add(size as u64)
            .ok_or_else(|| invalid("the range runs past the end of the address space"))?;
        if info.kind.is_some() && info.base + info.len >= end {
            return Ok(());
        }
        // SAFETY: the C caller keeps registered memory valid until it
        // deregisters it and no kernel uses it (crate docs, "Memory"),
        // which is `lock`'s contract.
        unsafe { rt.lock(ptr as u64, size as u64) }.map(|_| ())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_memory_deregister(ptr: *mut c_void, _size: usize) -> Status {
    guard("hsa_memory_deregister", || {
        let rt = runtime()?;
        if ptr.is_null() {
            return Ok(());
        }
        rt.unlock(ptr as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools(
    agent: u64,
    callback: Option<unsafe extern "C" fn(u64, *mut c_void) -> Status>,
    data: *mut c_void,
) -> Status {
    let mut stopped = HSA_STATUS_SUCCESS;
    let status = guard("hsa_amd_agent_iterate_memory_pools", || {
        let pools = runtime()?.agent(agent)?.pools.clone();
        iterate(&pools, callback, data, &mut stopped)
    });
    if status == HSA_STATUS_SUCCESS {
        stopped
    } else {
        status
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_pool_get_info(
    memory_pool: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_amd_memory_pool_get_info", || {
        let rt = runtime()?;
        let pool = rt.pool(memory_pool)?;
        non_null(value, "value")?;
        let global = pool.kind != PoolKind::Group;
        // SAFETY: `value` is non-null (checked) and, by the C caller's
        // output contract (crate docs, "Outputs"), valid for a write of the
        // attribute's type; each arm writes the type the header gives it.
        unsafe {
            match attribute {
                POOL_INFO_SEGMENT => answer(value, segment(&pool)),
                POOL_INFO_GLOBAL_FLAGS => answer(value, global_flags(&pool)),
                POOL_INFO_SIZE | POOL_INFO_ALLOC_MAX_SIZE => answer(value, pool.capacity as usize),
                POOL_INFO_RUNTIME_ALLOC_ALLOWED => answer(value, pool.allocatable()),
                POOL_INFO_RUNTIME_ALLOC_GRANULE | POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => {
                    answer(value, granule(&pool))
                }
                POOL_INFO_ACCESSIBLE_BY_ALL => answer(value, global),
                // Where the memory lives: the CPU agent's pools are system
                // memory, a GPU agent's device pool is "GPU" memory (in the
                // shared arena, as on an APU). An LDS pool has no location,
                // as in ROCr's `MemoryRegion::GetPoolInfo`
                // (amd_memory_region.cpp), which refuses pools that are
                // neither local nor system memory.
                POOL_INFO_LOCATION => match pool.kind {
                    PoolKind::FineSystem
                    | PoolKind::ExtFineSystem
                    | PoolKind::CoarseSystem
                    | PoolKind::Kernarg => answer(value, POOL_LOCATION_CPU),
                    PoolKind::CoarseDevice => answer(value, POOL_LOCATION_GPU),
                    PoolKind::Group => Err(invalid(
                        "HSA_AMD_MEMORY_POOL_INFO_LOCATION of a group-segment pool (it has none)",
                    )),
                },
                // ROCr recommends its fragment allocator's 2 MiB block for
                // device pools and the page for system pools, and the page
                // when fragment allocation is off (`GetPoolInfo`,
                // amd_memory_region.cpp). softgpu has no sub-allocator:
                // each allocation is charged and aligned in whole
                // granules, so the granule is also the size that wastes
                // nothing (0 where allocation is not allowed, like ROCr).
                POOL_INFO_RUNTIME_ALLOC_REC_GRANULE => answer(value, granule(&pool)),
                other => Err(invalid(format!(
                    "{other} is not an hsa_amd_memory_pool_info_t"
                ))),
            }
        }
    })
}

/// `hsa_amd_memory_pool_link_info_t`.
#[repr(C)]
pub struct LinkInfo {
    pub min_latency: u32,
    pub max_latency: u32,
    pub min_bandwidth: u32,
    pub max_bandwidth: u32,
    pub atomic_support_32bit: bool,
    pub atomic_support_64bit: bool,
    pub coherent_support: bool,
    pub link_type: u32,
    pub numa_distance: u32,
}

/// Global memory is reachable by every agent without asking; an LDS pool
/// only by its own agent.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info(
    agent: u64,
    memory_pool: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_amd_agent_memory_pool_get_info", || {
        let rt = runtime()?;
        let a = rt.agent(agent)?;
        let pool = rt.pool(memory_pool)?;
        non_null(value, "value")?;
        let own = pool.agent == a.index;
        let allowed = own || pool.kind != PoolKind::Group;
        let hops: u32 = if own || !allowed { 0 } else { 1 };
        // SAFETY: `value` is non-null (checked) and, by the C caller's
        // output contract (crate docs, "Outputs"), valid for a write of the
        // attribute's type; each arm writes the type the header gives it.
        unsafe {
            match attribute {
                AGENT_POOL_INFO_ACCESS => answer(
                    value,
                    if allowed {
                        ACCESS_ALLOWED_BY_DEFAULT
                    } else {
                        ACCESS_NEVER_ALLOWED
                    },
                ),
                AGENT_POOL_INFO_NUM_LINK_HOPS => answer(value, hops),
                AGENT_POOL_INFO_LINK_INFO => {
                    if hops == 0 {
                        return Ok(());
                    }
                    // One hop over the APU's on-die fabric; latency and
                    // bandwidth are not modelled (0).
                    answer(
                        value,
                        LinkInfo {
                            min_latency: 0,
                            max_latency: 0,
                            min_bandwidth: 0,
                            max_bandwidth: 0,
                            atomic_support_32bit: true,
                            atomic_support_64bit: true,
                            coherent_support: true,
                            link_type: LINK_TYPE_HYPERTRANSPORT,
                            numa_distance: 0,
                        },
                    )
                }
                other => Err(invalid(format!(
                    "{other} is not an hsa_amd_agent_memory_pool_info_t"
                ))),
            }
        }
    })
}

/// Reads `count` signal handles and looks each up.
///
/// # Safety
/// A non-null `list` must be valid for reads of `count` handles when
/// `count` is non-zero (the C caller's input contract, crate docs,
/// "Inputs").
unsafe fn dependencies(count: u32, list: *const u64) -> Result<Vec<Arc<Signal>>, Error> {
    if count == 0 {
        return Ok(Vec::new());
    }
    non_null(list, "dep_signals (with num_dep_signals > 0)")?;
    // SAFETY: non-null (checked), `count` handles by this function's
    // contract; a C array is aligned for its elements.
    let handles = unsafe { std::slice::from_raw_parts(list, count as usize) };
    handles.iter().map(|&h| signal_of(h)).collect()
}

/// The completion signal of an asynchronous operation (0 is refused).
fn completion(handle: u64) -> Result<Arc<Signal>, Error> {
    if handle == 0 {
        return Err(invalid("completion_signal is 0"));
    }
    signal_of(handle)
}

/// Marks a failed asynchronous operation as HSA asks: a negative signal
/// value (the runtime then subtracts its 1 as usual).
fn fail_async(completion: &Signal, e: Error) -> Result<(), Error> {
    completion.store(-1, Order::Release);
    Err(e)
}

/// Copies once every dependency is 0, then decrements the completion
/// signal. Both ranges are checked before returning; host memory outside
/// the arena is the caller's to keep valid until the copy completes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hsa_amd_memory_async_copy(
    dst: *mut c_void,
    dst_agent: u64,
    src: *const c_void,
    src_agent: u64,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const u64,
    completion_signal: u64,
) -> Status {
    guard("hsa_amd_memory_async_copy", || {
        let copy = CopyRequest {
            dst,
            dst_agent,
            src,
            src_agent,
            size,
            num_dep_signals,
            dep_signals,
            completion_signal,
        };
        // SAFETY: the C caller's arguments of hsa_amd_memory_async_copy,
        // which are `start`'s contract.
        unsafe { copy.start(|_, _| Ok(())) }
    })
}

/// The arguments of an asynchronous copy.
struct CopyRequest {
    dst: *mut c_void,
    dst_agent: u64,
    src: *const c_void,
    src_agent: u64,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const u64,
    completion_signal: u64,
}

impl CopyRequest {
    /// Checks the copy, lets `engine` check the agents (with the source
    /// and destination agents), then runs the copy once every dependency
    /// is 0 and decrements the completion signal.
    ///
    /// # Safety
    /// `dep_signals` must be NULL or valid for reads of `num_dep_signals`
    /// handles, and host memory on either side must stay valid until the
    /// copy completes (the C caller's contract of
    /// `hsa_amd_memory_async_copy`, crate docs, "Inputs", "Memory").
    unsafe fn start(
        self,
        engine: impl FnOnce(&Agent, &Agent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let rt = runtime()?;
        let to = rt.agent(self.dst_agent)?;
        let from = rt.agent(self.src_agent)?;
        non_null(self.dst, "dst")?;
        non_null(self.src, "src")?;
        let done = completion(self.completion_signal)?;
        // SAFETY: `dep_signals` is the C caller's array of
        // `num_dep_signals` handles (this function's contract).
        let deps = unsafe { dependencies(self.num_dep_signals, self.dep_signals)? };
        engine(&from, &to)?;
        let (dst, src, len) = (self.dst as u64, self.src as u64, self.size as u64);
        if len > 0 {
            rt.check_queued(dst, len, "destination", true)?;
            rt.check_queued(src, len, "source", false)?;
        }
        let worker = rt.clone();
        let signal = done.clone();
        rt.after_signals(deps, Some(done), move || {
            // SAFETY: `copy` checks device-memory sides again now; a host
            // side is the C caller's buffer, valid until the copy completes
            // (crate docs, "Memory").
            match unsafe { worker.copy(dst, src, len) } {
                Ok(()) => Ok(()),
                Err(e) => fail_async(&signal, e),
            }
        });
        Ok(())
    }
}

/// `hsa_amd_memory_async_copy_on_engine`: runs as
/// `hsa_amd_memory_async_copy` does (a host copy; softgpu has no SDMA
/// hardware) once the engine is checked the way ROCr checks it
/// (`hsa_amd_memory_async_copy_on_engine` in hsa_ext_amd.cpp,
/// `Runtime::CopyMemoryOnEngine` in runtime.cpp, `GpuAgent::DmaCopyOnEngine`
/// in amd_gpu_agent.cpp):
/// - a dependency count without a list, or a list with count 0:
///   `HSA_STATUS_ERROR_INVALID_ARGUMENT`;
/// - `engine_id` not exactly one `hsa_amd_sdma_engine_id_t` bit, or an
///   engine the copy agent does not have (more than
///   `HSA_AMD_AGENT_INFO_NUM_SDMA_ENG` + `NUM_SDMA_XGMI_ENG`):
///   `HSA_STATUS_ERROR_INVALID_ARGUMENT` (ROCr checks the engine only for a
///   non-empty copy; softgpu checks it always);
/// - neither agent a GPU (SDMA engines belong to a GPU): `HSA_STATUS_ERROR`,
///   as ROCr's base `Agent::DmaCopyOnEngine`.
///
/// `force_copy_on_sdma` picks SDMA over a blit kernel for a copy within
/// one GPU in ROCr; every softgpu copy is a host copy, so it changes
/// nothing.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hsa_amd_memory_async_copy_on_engine(
    dst: *mut c_void,
    dst_agent: u64,
    src: *const c_void,
    src_agent: u64,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const u64,
    completion_signal: u64,
    engine_id: u32,
    _force_copy_on_sdma: bool,
) -> Status {
    guard("hsa_amd_memory_async_copy_on_engine", || {
        runtime()?;
        if (num_dep_signals == 0) != dep_signals.is_null() {
            return Err(invalid(format!(
                "num_dep_signals {num_dep_signals} with dep_signals {dep_signals:p}"
            )));
        }
        let copy = CopyRequest {
            dst,
            dst_agent,
            src,
            src_agent,
            size,
            num_dep_signals,
            dep_signals,
            completion_signal,
        };
        let engine = |from: &Agent, to: &Agent| {
            if !engine_id.is_power_of_two() {
                return Err(invalid(format!(
                    "engine_id {engine_id:#x} is not one hsa_amd_sdma_engine_id_t"
                )));
            }
            if from.kind != AgentKind::Gpu && to.kind != AgentKind::Gpu {
                return Err(crate::unsupported(
                    "hsa_amd_memory_async_copy_on_engine between CPU agents: copy engines \
                     belong to a GPU agent (use hsa_amd_memory_async_copy)",
                ));
            }
            let number = engine_id.trailing_zeros() + 1;
            if number > crate::system::SDMA_ENGINES {
                return Err(invalid(format!(
                    "engine_id {engine_id:#x}: the GPU agent has {} copy engines \
                     (HSA_AMD_AGENT_INFO_NUM_SDMA_ENG)",
                    crate::system::SDMA_ENGINES
                )));
            }
            Ok(())
        };
        // SAFETY: the C caller's arguments of
        // hsa_amd_memory_async_copy_on_engine, which has
        // hsa_amd_memory_async_copy's contract (`start`'s).
        unsafe { copy.start(engine) }
    })
}

/// `hsa_amd_memory_copy_engine_status`: the engines free for copies
/// between two agents, as ROCr's `Runtime::CopyMemoryStatus` (runtime.cpp)
/// and `GpuAgent::DmaCopyStatus` (amd_gpu_agent.cpp) report them for a GPU
/// outside an xGMI hive: engine 0 (host to device) and engine 1 (device to
/// host; there are `HSA_AMD_AGENT_INFO_NUM_SDMA_ENG` = 2). Host copies never
/// keep an engine busy, so both are always free. The same agent twice is
/// `HSA_STATUS_ERROR_INVALID_AGENT`, as in ROCr (such copies use shaders).
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_copy_engine_status(
    dst_agent: u64,
    src_agent: u64,
    engine_ids_mask: *mut u32,
) -> Status {
    guard("hsa_amd_memory_copy_engine_status", || {
        let rt = runtime()?;
        rt.agent(dst_agent)?;
        rt.agent(src_agent)?;
        if dst_agent == src_agent {
            return Err(Error::InvalidHandle {
                kind: "agent",
                handle: src_agent,
            })
            .inspect_err(|_| {
                eprintln!(
                    "softgpu: hsa_amd_memory_copy_engine_status: the source and destination \
                     agents are the same (such copies use no copy engine)"
                )
            });
        }
        // With one CPU agent, two different agents include a GPU, whose
        // engines 0..NUM_SDMA_ENG are all free.
        let mask = (1u32 << crate::system::SDMA_ENGINES) - 1;
        // SAFETY: the C caller's output for a uint32_t (crate docs,
        // "Outputs"); `put` refuses NULL.
        unsafe { put(engine_ids_mask, mask) }
    })
}

/// `hsa_pitched_ptr_t`.
#[repr(C)]
pub struct PitchedPtr {
    pub base: *mut c_void,
    pub pitch: usize,
    pub slice: usize,
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// One side of a 3-D copy: where each row starts.
#[derive(Clone, Copy)]
struct Rect {
    base: u64,
    pitch: u64,
    slice: u64,
    offset: Dim3,
}

impl Rect {
    /// Checks the layout and that every row of `range` lies in one
    /// reachable range of memory.
    fn check(&self, rt: &Runtime, range: Dim3, what: &str) -> Result<(), Error> {
        if self.base == 0 {
            return Err(invalid(format!("{what} base is NULL")));
        }
        if !(self.base | self.pitch | self.slice).is_multiple_of(4) {
            return Err(invalid(format!(
                "{what} base, pitch and slice must be 4-byte aligned"
            )));
        }
        let row_end = self.offset.x as u64 + range.x as u64;
        if row_end > self.pitch {
            return Err(invalid(format!(
                "{what}: x offset + width ({row_end} bytes) exceeds the pitch ({})",
                self.pitch
            )));
        }
        let rows = self.offset.y as u64 + range.y as u64;
        if range.z > 1 && rows * self.pitch > self.slice {
            return Err(invalid(format!(
                "{what}: {rows} rows of {} bytes exceed the slice ({})",
                self.pitch, self.slice
            )));
        }
        let overflow = || invalid(format!("{what} range overflows"));
        let first = self.row(0, 0).ok_or_else(overflow)?;
        let last = self.row(range.y - 1, range.z - 1).ok_or_else(overflow)?;
        let end = last.checked_add(range.x as u64).ok_or_else(overflow)?;
        rt.check_side(first, end - first, what).map(|_| ())
    }

    /// Address of row `y` of layer `z` of the copied range.
    fn row(&self, y: u32, z: u32) -> Option<u64> {
        let layer = (self.offset.z as u64 + z as u64).checked_mul(self.slice)?;
        let line = (self.offset.y as u64 + y as u64).checked_mul(self.pitch)?;
        self.base
            .checked_add(layer)?
            .checked_add(line)?
            .checked_add(self.offset.x as u64)
    }
}

/// Reads a pitched pointer and offset into a [`Rect`].
///
/// # Safety
/// Each pointer must be NULL or point to an initialised, aligned object of
/// its type (the C caller's input contract, crate docs, "Inputs").
unsafe fn rect(p: *const PitchedPtr, offset: *const Dim3, what: &str) -> Result<Rect, Error> {
    non_null(p, what)?;
    non_null(offset, "offset")?;
    // SAFETY: both non-null (checked), hence valid objects by this
    // function's contract; the reference lives only for this statement.
    let (p, offset) = unsafe { (&*p, *offset) };
    Ok(Rect {
        base: p.base as u64,
        pitch: p.pitch as u64,
        slice: p.slice as u64,
        offset,
    })
}

/// The 3-D pitched copy: `range.z` layers of `range.y` rows of `range.x`
/// bytes, offsets in bytes (x), rows (y) and layers (z). Done by the host
/// like every copy; `copy_agent` must be a GPU agent as the header asks.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hsa_amd_memory_async_copy_rect(
    dst: *const PitchedPtr,
    dst_offset: *const Dim3,
    src: *const PitchedPtr,
    src_offset: *const Dim3,
    range: *const Dim3,
    copy_agent: u64,
    dir: u32,
    num_dep_signals: u32,
    dep_signals: *const u64,
    completion_signal: u64,
) -> Status {
    guard("hsa_amd_memory_async_copy_rect", || {
        let rt = runtime()?;
        if rt.agent(copy_agent)?.kind != AgentKind::Gpu {
            return Err(Error::InvalidHandle {
                kind: "agent",
                handle: copy_agent,
            })
            .inspect_err(|_| {
                eprintln!(
                    "softgpu: hsa_amd_memory_async_copy_rect: the copy agent must be a GPU agent"
                )
            });
        }
        if dir > COPY_DIRECTION_LAST {
            return Err(invalid(format!("{dir} is not an hsa_amd_copy_direction_t")));
        }
        // SAFETY: the C caller's hsa_pitched_ptr_t and hsa_dim3_t inputs
        // (crate docs, "Inputs").
        let (d, s) = unsafe { (rect(dst, dst_offset, "dst")?, rect(src, src_offset, "src")?) };
        non_null(range, "range")?;
        // SAFETY: non-null (checked), and the C caller's hsa_dim3_t input.
        let range = unsafe { *range };
        let done = completion(completion_signal)?;
        // SAFETY: `dep_signals` is the C caller's array of
        // `num_dep_signals` handles (crate docs, "Inputs").
        let deps = unsafe { dependencies(num_dep_signals, dep_signals)? };
        let empty = range.x == 0 || range.y == 0 || range.z == 0;
        if !empty {
            d.check(&rt, range, "destination")?;
            s.check(&rt, range, "source")?;
        }
        let worker = rt.clone();
        let signal = done.clone();
        rt.after_signals(deps, Some(done), move || {
            if empty {
                return Ok(());
            }
            for z in 0..range.z {
                for y in 0..range.y {
                    let (to, from) = (d.row(y, z), s.row(y, z));
                    let (Some(to), Some(from)) = (to, from) else {
                        return fail_async(&signal, invalid("row address overflows"));
                    };
                    // SAFETY: `copy` checks device-memory rows again now; a
                    // host row is in the C caller's buffer, valid until the
                    // copy completes (crate docs, "Memory").
                    if let Err(e) = unsafe { worker.copy(to, from, range.x as u64) } {
                        return fail_async(&signal, e);
                    }
                }
            }
            Ok(())
        });
        Ok(())
    })
}

/// Fills `count` 32-bit words; the range must be memory the runtime
/// allocated or locked.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> Status {
    guard("hsa_amd_memory_fill", || {
        let rt = runtime()?;
        non_null(ptr, "ptr")?;
        let addr = ptr as u64;
        if !addr.is_multiple_of(4) {
            return Err(invalid("ptr is not 4-byte aligned"));
        }
        let len = (count as u64)
            .checked_mul(4)
            .ok_or_else(|| invalid("count overflows"))?;
        let info = rt.pointer_info(addr);
        if info.kind.is_none() || addr + len > info.base + info.len {
            return Err(Error::InvalidAllocation(format!(
                "{addr:#x}+{len} is not inside memory allocated or locked with the runtime"
            )));
        }
        // SAFETY: 4-aligned and inside one tracked range (checked above):
        // a pool allocation (checked again by `fill`) or host memory the C
        // caller locked, valid until unlocked (crate docs, "Memory").
        unsafe { rt.fill(addr, value, count as u64) }
    })
}

/// Checks a lock's agent list: NULL with 0 means every agent.
///
/// # Safety
/// A non-null `agents` must be valid for reads of `count` handles (the C
/// caller's input contract, crate docs, "Inputs").
unsafe fn check_lock_agents(rt: &Runtime, agents: *const u64, count: i32) -> Result<(), Error> {
    match (agents.is_null(), count) {
        (true, 0) => Ok(()),
        (false, n) if n > 0 => {
            // SAFETY: non-null with `n > 0` handles, by this function's
            // contract.
            let list = unsafe { std::slice::from_raw_parts(agents, n as usize) };
            list.iter().try_for_each(|&a| rt.agent(a).map(|_| ()))
        }
        _ => Err(invalid(format!("agents and num_agent ({count}) disagree"))),
    }
}

/// Locks host memory: kernels reach it at its own address, which is the
/// agent pointer returned.
///
/// # Safety
/// The C caller's contract of `hsa_amd_memory_lock`: `agents` as for
/// [`check_lock_agents`], `out` NULL or valid for a write of a pointer, and
/// `[host_ptr, host_ptr + size)` valid host memory until unlocked and no
/// kernel uses it (crate docs, "Inputs", "Outputs", "Memory").
unsafe fn lock(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const u64,
    count: i32,
    out: *mut *mut c_void,
) -> Result<(), Error> {
    let rt = runtime()?;
    non_null(host_ptr, "host_ptr")?;
    non_null(out, "agent_ptr")?;
    if size == 0 {
        return Err(invalid("size 0"));
    }
    // SAFETY: `agents` as this function's contract says.
    unsafe { check_lock_agents(&rt, agents, count)? };
    // SAFETY: the range stays valid until unlocked and unused, by this
    // function's contract, which is `Runtime::lock`'s.
    let addr = unsafe { rt.lock(host_ptr as u64, size as u64)? };
    // SAFETY: `out` is NULL or valid for the write, by this function's
    // contract.
    unsafe { put(out, addr as *mut c_void) }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_lock(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const u64,
    num_agent: i32,
    agent_ptr: *mut *mut c_void,
) -> Status {
    // SAFETY: the C caller's arguments meet `lock`'s contract, which is
    // this export's (hsa_ext_amd.h).
    guard("hsa_amd_memory_lock", || unsafe {
        lock(host_ptr, size, agents, num_agent, agent_ptr)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hsa_amd_memory_lock_to_pool(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const u64,
    num_agent: i32,
    pool: u64,
    flags: u32,
    agent_ptr: *mut *mut c_void,
) -> Status {
    guard("hsa_amd_memory_lock_to_pool", || {
        let rt = runtime()?;
        let p = rt.pool(pool)?;
        let cpu_owned = rt
            .agents
            .get(p.agent)
            .is_some_and(|a| a.kind == AgentKind::Cpu);
        if !cpu_owned || p.kind == PoolKind::Group {
            return Err(Error::InvalidHandle {
                kind: "memory pool",
                handle: pool,
            })
            .inspect_err(|_| {
                eprintln!("softgpu: hsa_amd_memory_lock_to_pool: the pool must be a global pool of the CPU agent")
            });
        }
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} (reserved, must be 0)")));
        }
        // SAFETY: the C caller's arguments meet `lock`'s contract, which is
        // this export's as for hsa_amd_memory_lock.
        unsafe { lock(host_ptr, size, agents, num_agent, agent_ptr) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> Status {
    guard("hsa_amd_memory_unlock", || {
        let rt = runtime()?;
        non_null(host_ptr, "host_ptr")?;
        rt.unlock(host_ptr as u64)
    })
}

/// `hsa_amd_pointer_info_t`, as the header lays it out.
#[repr(C)]
pub struct PointerInfo {
    pub size: u32,
    pub kind: u32,
    pub agent_base_address: *mut c_void,
    pub host_base_address: *mut c_void,
    pub size_in_bytes: usize,
    pub user_data: *mut c_void,
    pub agent_owner: u64,
    pub global_flags: u32,
}

/// Writes the fields of `info` that fit in the caller's `size` bytes and
/// lowers `size` to ours if the caller's is larger.
///
/// # Safety
/// `out` must point to a (C-aligned) `hsa_amd_pointer_info_t` whose `size`
/// is set, valid for reads and writes of `(*out).size` bytes (the C
/// caller's contract of `hsa_amd_pointer_info`).
unsafe fn write_pointer_info(out: *mut PointerInfo, info: &PointerInfo) {
    use std::mem::{offset_of, size_of_val};
    // SAFETY: by this function's contract `size` (the first field, 4 bytes
    // at an aligned address) is readable and writable, and so are the
    // `room` bytes; only fields ending within them are written, through
    // raw field pointers (no reference to the whole struct is made).
    unsafe {
        let room = ((*out).size as usize).min(size_of::<PointerInfo>());
        macro_rules! field {
            ($f:ident) => {
                if offset_of!(PointerInfo, $f) + size_of_val(&info.$f) <= room {
                    std::ptr::addr_of_mut!((*out).$f).write_unaligned(std::ptr::read(&info.$f));
                }
            };
        }
        field!(kind);
        field!(agent_base_address);
        field!(host_base_address);
        field!(size_in_bytes);
        field!(user_data);
        field!(agent_owner);
        field!(global_flags);
        (*out).size = room as u32;
    }
}

/// What the runtime knows of `ptr`; the agents that may access it come
/// back in an array made with the caller's allocator (every agent, for
/// known memory: all of it is one shared arena).
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_pointer_info(
    ptr: *const c_void,
    info: *mut PointerInfo,
    alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut u64,
) -> Status {
    guard("hsa_amd_pointer_info", || {
        let rt = runtime()?;
        non_null(ptr, "ptr")?;
        non_null(info, "info")?;
        let found = rt.pointer_info(ptr as u64);
        let (kind, flags) = match found.kind {
            None => (POINTER_TYPE_UNKNOWN, 0),
            Some(AllocationKind::Locked) => (POINTER_TYPE_LOCKED, FLAG_COARSE_GRAINED),
            Some(AllocationKind::Pool(p)) => {
                (POINTER_TYPE_HSA, rt.pool(p).map_or(0, |p| global_flags(&p)))
            }
        };
        let known = found.kind.is_some();
        let owner = if known {
            rt.agent_handles.get(found.owner).copied().unwrap_or(0)
        } else {
            0
        };
        let record = PointerInfo {
            size: 0,
            kind,
            agent_base_address: found.base as *mut c_void,
            host_base_address: found.base as *mut c_void,
            size_in_bytes: found.len as usize,
            user_data: found.user_data as *mut c_void,
            agent_owner: owner,
            global_flags: flags,
        };
        // SAFETY: non-null (checked); the C caller's hsa_amd_pointer_info_t
        // with `size` set, as hsa_ext_amd.h requires of `info`.
        unsafe { write_pointer_info(info, &record) };
        let agents: &[u64] = if known { &rt.agent_handles } else { &[] };
        if num_agents_accessible.is_null() {
            return Ok(());
        }
        // SAFETY: non-null (checked) and the C caller's output for a
        // uint32_t (crate docs, "Outputs").
        unsafe { put(num_agents_accessible, agents.len() as u32)? };
        let (Some(alloc), false) = (alloc, accessible.is_null()) else {
            return Ok(());
        };
        let array = if agents.is_empty() {
            std::ptr::null_mut()
        } else {
            // SAFETY: the client's allocator, of the signature the header
            // declares (crate docs, "Callbacks"); it returns NULL or a block
            // of at least the bytes asked for.
            let block = unsafe { alloc(std::mem::size_of_val(agents)) }.cast::<u8>();
            if block.is_null() {
                return Err(Error::OutOfResources(
                    "the allocator for the accessible agents returned NULL".into(),
                ));
            }
            // SAFETY: a fresh block of `size_of_val(agents)` bytes, not
            // overlapping `agents`; copied as bytes, so its alignment does
            // not matter.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    agents.as_ptr().cast::<u8>(),
                    block,
                    std::mem::size_of_val(agents),
                )
            };
            block.cast::<u64>()
        };
        // SAFETY: non-null (checked) and the C caller's output for a
        // pointer (crate docs, "Outputs").
        unsafe { put(accessible, array) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_pointer_info_set_userdata(
    ptr: *const c_void,
    userdata: *mut c_void,
) -> Status {
    guard("hsa_amd_pointer_info_set_userdata", || {
        let rt = runtime()?;
        non_null(ptr, "ptr")?;
        rt.set_user_data(ptr as u64, userdata as u64)
    })
}

/// Every agent already reaches every allocation: checks the request and
/// succeeds.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_agents_allow_access(
    num_agents: u32,
    agents: *const u64,
    flags: *const u32,
    ptr: *const c_void,
) -> Status {
    guard("hsa_amd_agents_allow_access", || {
        let rt = runtime()?;
        if num_agents == 0 {
            return Err(invalid("num_agents is 0"));
        }
        non_null(agents, "agents")?;
        if !flags.is_null() {
            return Err(invalid("flags must be NULL (reserved)"));
        }
        non_null(ptr, "ptr")?;
        // SAFETY: non-null (checked above) and the C caller's array of
        // `num_agents` handles (crate docs, "Inputs").
        let list = unsafe { std::slice::from_raw_parts(agents, num_agents as usize) };
        for &a in list {
            rt.agent(a)?;
        }
        if rt.pointer_info(ptr as u64).kind.is_none() {
            return Err(invalid(format!(
                "{ptr:p} is not memory allocated or locked with the runtime"
            )));
        }
        Ok(())
    })
}

/// Coherency type recorded per GPU agent (memory is coherent whatever is
/// set: the emulated agents share the host's caches).
fn coherency() -> &'static Mutex<BTreeMap<u64, u32>> {
    static TYPES: Mutex<BTreeMap<u64, u32>> = Mutex::new(BTreeMap::new());
    &TYPES
}

/// A GPU agent by handle.
fn gpu(rt: &Runtime, agent: u64) -> Result<(), Error> {
    if rt.agent(agent)?.kind == AgentKind::Gpu {
        Ok(())
    } else {
        Err(Error::InvalidHandle {
            kind: "agent",
            handle: agent,
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_coherency_get_type(agent: u64, kind: *mut u32) -> Status {
    guard("hsa_amd_coherency_get_type", || {
        gpu(&*runtime()?, agent)?;
        let t = coherency()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&agent)
            .copied();
        // SAFETY: the C caller's output for an hsa_amd_coherency_type_t
        // (crate docs, "Outputs"); `put` refuses NULL.
        unsafe { put(kind, t.unwrap_or(COHERENCY_COHERENT)) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_coherency_set_type(agent: u64, kind: u32) -> Status {
    guard("hsa_amd_coherency_set_type", || {
        gpu(&*runtime()?, agent)?;
        if kind > COHERENCY_NONCOHERENT {
            return Err(invalid(format!(
                "{kind} is not an hsa_amd_coherency_type_t"
            )));
        }
        coherency()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(agent, kind);
        Ok(())
    })
}

/// Whether a pool can receive migrated buffers: any global pool can, since
/// all are views of one memory.
fn migratable(pool: &Pool) -> bool {
    pool.allocatable()
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_pool_can_migrate(
    src_memory_pool: u64,
    dst_memory_pool: u64,
    result: *mut bool,
) -> Status {
    guard("hsa_amd_memory_pool_can_migrate", || {
        let rt = runtime()?;
        let src = rt.pool(src_memory_pool)?;
        let dst = rt.pool(dst_memory_pool)?;
        // SAFETY: the C caller's output for a bool (crate docs,
        // "Outputs"); `put` refuses NULL.
        unsafe { put(result, migratable(&src) && migratable(&dst)) }
    })
}

/// Memory is unified, so a migration has nothing to move: the request is
/// checked (a runtime allocation, a global destination pool, flags 0) and
/// succeeds with the buffer where it is.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_migrate(
    ptr: *const c_void,
    memory_pool: u64,
    flags: u32,
) -> Status {
    guard("hsa_amd_memory_migrate", || {
        let rt = runtime()?;
        let pool = rt.pool(memory_pool)?;
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} (reserved, must be 0)")));
        }
        if !migratable(&pool) {
            return Err(invalid("buffers cannot migrate to a group-segment pool"));
        }
        non_null(ptr, "ptr")?;
        match rt.pointer_info(ptr as u64).kind {
            Some(AllocationKind::Pool(_)) => Ok(()),
            _ => Err(invalid(format!("{ptr:p} is not a pool allocation"))),
        }
    })
}

/// `hsa_amd_deallocation_callback_t`.
pub type DeallocationCallback = unsafe extern "C" fn(*mut c_void, *mut c_void);

/// One registered deallocation notifier.
struct Notifier {
    runtime: Weak<Runtime>,
    /// Start of the allocation watched.
    base: u64,
    /// The address registered (passed back to the callback).
    ptr: u64,
    callback: DeallocationCallback,
    data: CPointer,
}

fn notifiers() -> &'static Mutex<Vec<Notifier>> {
    static NOTIFIERS: Mutex<Vec<Notifier>> = Mutex::new(Vec::new());
    &NOTIFIERS
}

/// Runs (and drops) the notifiers of the allocation at `base`, after it
/// was freed, outside the lock.
fn notify_deallocation(rt: &Arc<Runtime>, base: u64) {
    let due: Vec<Notifier> = {
        let mut all = notifiers().lock().unwrap_or_else(|e| e.into_inner());
        let (due, keep) = std::mem::take(&mut *all)
            .into_iter()
            .partition(|n: &Notifier| {
                n.base == base && n.runtime.upgrade().is_some_and(|r| Arc::ptr_eq(&r, rt))
            });
        *all = keep;
        due
    };
    for n in due {
        // SAFETY: the client's notifier, of the signature the header
        // declares, called with its own pointer and data (crate docs,
        // "Callbacks").
        unsafe { (n.callback)(n.ptr as *mut c_void, n.data.get()) };
    }
}

/// Calls `callback(ptr, user_data)` once the pool allocation holding `ptr`
/// is freed (then forgets it).
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_register_deallocation_callback(
    ptr: *mut c_void,
    callback: Option<DeallocationCallback>,
    user_data: *mut c_void,
) -> Status {
    guard("hsa_amd_register_deallocation_callback", || {
        let rt = runtime()?;
        non_null(ptr, "ptr")?;
        let callback = callback.ok_or_else(|| invalid("callback is NULL"))?;
        let info = rt.pointer_info(ptr as u64);
        if !matches!(info.kind, Some(AllocationKind::Pool(_))) {
            return Err(Error::InvalidAllocation(format!(
                "{ptr:p} is not inside a pool allocation"
            )));
        }
        notifiers()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Notifier {
                runtime: Arc::downgrade(&rt),
                base: info.base,
                ptr: ptr as u64,
                callback,
                data: CPointer(user_data),
            });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_deregister_deallocation_callback(
    ptr: *mut c_void,
    callback: Option<DeallocationCallback>,
) -> Status {
    guard("hsa_amd_deregister_deallocation_callback", || {
        runtime()?;
        let callback = callback.ok_or_else(|| invalid("callback is NULL"))?;
        let mut all = notifiers().lock().unwrap_or_else(|e| e.into_inner());
        let at = all
            .iter()
            .position(|n| n.ptr == ptr as u64 && n.callback as usize == callback as usize)
            .ok_or_else(|| invalid(format!("no deallocation callback registered for {ptr:p}")))?;
        all.remove(at);
        Ok(())
    })
}
