//! AQL queues: creation with an error callback, destruction, inactivation,
//! the read/write index operations in every memory order `hsa.h` declares,
//! the AMD queue controls (CU mask, priority) and dispatch/copy profiling.
//!
//! A queue pointer is looked up in the runtime's table of live queues
//! (`Runtime::queue`) before anything else: a forged or destroyed pointer is
//! `HSA_STATUS_ERROR_INVALID_QUEUE` and is never dereferenced.
//!
//! Timestamps (dispatch and copy profiling) are nanoseconds on the runtime's
//! monotonic clock, which is also the system timestamp domain
//! (`HSA_SYSTEM_INFO_TIMESTAMP`, 1 GHz); agent ticks are the same unit.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use softgpu_runtime::cu_mask::Applied;
use softgpu_runtime::error::invalid;
use softgpu_runtime::queue::{FaultKind, PacketRule, Queue, QueueError, QueueSpec};
use softgpu_runtime::{Error, Runtime};

use crate::signal::CPointer;
use crate::status::*;
use crate::{guard, guard_status, guard_value, put, runtime, unsupported};

symver!("queue");

/// `hsa_queue_type_t`.
const QUEUE_TYPE_MULTI: u32 = 0;
const QUEUE_TYPE_SINGLE: u32 = 1;
const QUEUE_TYPE_COOPERATIVE: u32 = 2;

/// Largest private segment (scratch) per work-item a queue may be created
/// for. The emulator gives each lane its own scratch, so this only bounds
/// an unreasonable hint.
pub const MAX_PRIVATE_SEGMENT_BYTES: u32 = 1 << 20;

/// `hsa_amd_queue_priority_t`: LOW..=HIGH.
const PRIORITY_HIGH: u32 = 2;

/// Whether `hsa_amd_profiling_async_copy_enable(true)` was called (copies
/// record their times either way).
static ASYNC_COPY_PROFILING: AtomicBool = AtomicBool::new(false);

/// The C error callback of `hsa_queue_create`.
pub type ErrorCallbackFn = unsafe extern "C" fn(Status, *mut c_void, *mut c_void);

/// The live queue whose `hsa_queue_t` is at `queue`.
pub(crate) fn queue_at(rt: &Runtime, queue: *const c_void) -> Result<Arc<Queue>, Error> {
    if queue.is_null() {
        return Err(invalid("queue is NULL"));
    }
    rt.queue(queue as u64)
}

/// The status a queue error is reported to the callback with.
pub fn error_status(error: &QueueError) -> Status {
    match error {
        QueueError::InvalidPacket(rule, _) | QueueError::LaunchRefused { rule, .. } => {
            packet_status(*rule)
        }
        QueueError::UnreadablePacket { .. } => packet_status(PacketRule::Format),
        // The dispatch's own memory (scratch, kernarg copies) or a host
        // operation failed: not the packet's fault.
        QueueError::DispatchFailed(_)
        | QueueError::NoDevice(_)
        | QueueError::HostOpFailed(_)
        | QueueError::Internal(_)
        | QueueError::Spawn(_) => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        QueueError::KernelFault(fault) => fault_status(fault.kind),
        QueueError::DependencyFailed { .. } => HSA_STATUS_ERROR,
    }
}

/// The status each refused packet is reported with: ROCr's mapping of the
/// command processor's queue exceptions (`amd_aql_queue.cpp`,
/// `AqlQueue::ExceptionHandler` and `DynamicQueueEventsHandler`: invalid
/// dimensions, group segment, code, packet format, workgroup size, and
/// scratch it cannot provide). Two checks there is no exception for:
/// a kernarg segment the kernel could not read is the memory fault its
/// first load would raise (as a kernel's own faults are reported), and a
/// dead signal handle is named as such.
fn packet_status(rule: PacketRule) -> Status {
    match rule {
        PacketRule::Format => HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
        PacketRule::Dimensions => HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
        PacketRule::WorkgroupSize => HSA_STATUS_ERROR_INVALID_ARGUMENT,
        PacketRule::GroupSegment => HSA_STATUS_ERROR_INVALID_ALLOCATION,
        PacketRule::CodeObject => HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        PacketRule::PrivateSegment => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        PacketRule::Kernarg => HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
        // No ROCr status: a GPU would never start such a dispatch.
        PacketRule::ComputeUnits => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        PacketRule::Signal => HSA_STATUS_ERROR_INVALID_SIGNAL,
    }
}

/// The status a kernel fault of each kind is reported with.
fn fault_status(kind: FaultKind) -> Status {
    match kind {
        FaultKind::Memory => HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
        FaultKind::Instruction => HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
        _ => HSA_STATUS_ERROR_EXCEPTION,
    }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hsa_queue_create(
    agent: u64,
    size: u32,
    queue_type: u32,
    callback: Option<ErrorCallbackFn>,
    data: *mut c_void,
    private_segment_size: u32,
    group_segment_size: u32,
    queue: *mut *mut c_void,
) -> Status {
    guard("hsa_queue_create", || {
        let rt = runtime()?;
        let a = rt.agent(agent)?;
        if queue.is_null() {
            return Err(invalid("queue (the output pointer) is NULL"));
        }
        let single = match queue_type {
            QUEUE_TYPE_MULTI => false,
            QUEUE_TYPE_SINGLE => true,
            QUEUE_TYPE_COOPERATIVE => {
                return Err(Error::InvalidQueueCreation(
                    "cooperative queues are not supported: softgpu cannot guarantee that all workgroups of a dispatch run at once".into(),
                ))
            }
            other => return Err(invalid(format!("{other} is not an hsa_queue_type_t"))),
        };
        if size == 0 || !size.is_power_of_two() {
            return Err(invalid(format!("queue size {size} is not a power of two")));
        }
        // hsa.h: the queue gets at least the agent's minimum size.
        let size = size.max(a.profile.queues.min_size);
        if group_segment_size != u32::MAX && group_segment_size > a.profile.lds_bytes {
            return Err(invalid(format!(
                "group segment size {group_segment_size} exceeds the agent's {} bytes of LDS",
                a.profile.lds_bytes
            )));
        }
        if private_segment_size != u32::MAX && private_segment_size > MAX_PRIVATE_SEGMENT_BYTES {
            return Err(invalid(format!(
                "private segment size {private_segment_size} exceeds softgpu's {MAX_PRIVATE_SEGMENT_BYTES} bytes per work-item"
            )));
        }
        // The callback needs the queue's address, known only once it exists;
        // no packet can run before the client has the pointer, so it is set
        // before the callback can be called.
        let address = Arc::new(AtomicU64::new(0));
        let data = CPointer(data);
        let fault_agent = agent;
        let on_error = {
            let address = address.clone();
            Box::new(move |error: &QueueError| {
                let queue = address.load(Ordering::Acquire);
                eprintln!("softgpu: queue at {queue:#x} stopped: {error}");
                if let QueueError::KernelFault(fault) = error {
                    if error_status(error) == HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION {
                        let at = fault.site.as_ref().and_then(|s| s.address).unwrap_or(0);
                        crate::events::memory_fault(fault_agent, at);
                    }
                }
                if let Some(cb) = callback {
                    // SAFETY: the client's callback, of the signature hsa.h
                    // declares, called (on the queue's thread) with its own
                    // `data` (crate docs, "Callbacks").
                    unsafe { cb(error_status(error), queue as *mut c_void, data.get()) };
                }
            }) as softgpu_runtime::queue::ErrorCallback
        };
        let q = rt.create_queue(
            agent,
            QueueSpec {
                size,
                single,
                on_error: Some(on_error),
            },
        )?;
        address.store(q.address, Ordering::Release);
        // SAFETY: non-null (checked) and the C caller's output for an
        // hsa_queue_t pointer (crate docs, "Outputs").
        unsafe { put(queue, q.address as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_soft_queue_create(
    _region: u64,
    _size: u32,
    _queue_type: u32,
    _features: u32,
    _doorbell_signal: u64,
    _queue: *mut *mut c_void,
) -> Status {
    guard("hsa_soft_queue_create", || {
        runtime()?;
        Err(unsupported(
            "hsa_soft_queue_create (soft queues with a client-side packet processor); use hsa_queue_create",
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_queue_destroy(queue: *mut c_void) -> Status {
    guard("hsa_queue_destroy", || {
        let rt = runtime()?;
        queue_at(&rt, queue)?;
        rt.destroy_queue(queue as u64)
    })
}

/// Stops the queue's packet processor after the packet it is running;
/// later packets are ignored. The queue stays valid until destroyed.
#[no_mangle]
pub unsafe extern "C" fn hsa_queue_inactivate(queue: *mut c_void) -> Status {
    guard("hsa_queue_inactivate", || {
        let rt = runtime()?;
        queue_at(&rt, queue)?.stop();
        Ok(())
    })
}

/// Runs `op` on a live queue; a bad pointer is reported on stderr and
/// gives 0.
fn with_queue(name: &'static str, queue: *const c_void, op: impl FnOnce(&Queue) -> u64) -> u64 {
    guard_value(name, 0, || Ok(op(&*queue_at(&*runtime()?, queue)?)))
}

/// Index loads: `pub unsafe extern "C" fn NAME(queue) => INDEX, ORDERING;`.
macro_rules! index_loads {
    ($(pub unsafe extern "C" fn $name:ident(queue) => $index:ident, $order:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(queue: *const c_void) -> u64 {
            with_queue(stringify!($name), queue, |q| q.$index.load(Ordering::$order))
        }
    )*};
}

index_loads! {
    pub unsafe extern "C" fn hsa_queue_load_read_index_relaxed(queue) => read_index, Relaxed;
    pub unsafe extern "C" fn hsa_queue_load_read_index_scacquire(queue) => read_index, Acquire;
    pub unsafe extern "C" fn hsa_queue_load_read_index_acquire(queue) => read_index, Acquire;
    pub unsafe extern "C" fn hsa_queue_load_write_index_relaxed(queue) => write_index, Relaxed;
    pub unsafe extern "C" fn hsa_queue_load_write_index_scacquire(queue) => write_index, Acquire;
    pub unsafe extern "C" fn hsa_queue_load_write_index_acquire(queue) => write_index, Acquire;
}

/// Index stores: `pub unsafe extern "C" fn NAME(queue, value) => INDEX,
/// ORDERING;`.
macro_rules! index_stores {
    ($(pub unsafe extern "C" fn $name:ident(queue, value) => $index:ident, $order:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(queue: *const c_void, value: u64) {
            with_queue(stringify!($name), queue, |q| {
                q.$index.store(value, Ordering::$order);
                0
            });
        }
    )*};
}

index_stores! {
    pub unsafe extern "C" fn hsa_queue_store_write_index_relaxed(queue, value) => write_index, Relaxed;
    pub unsafe extern "C" fn hsa_queue_store_write_index_screlease(queue, value) => write_index, Release;
    pub unsafe extern "C" fn hsa_queue_store_write_index_release(queue, value) => write_index, Release;
    pub unsafe extern "C" fn hsa_queue_store_read_index_relaxed(queue, value) => read_index, Relaxed;
    pub unsafe extern "C" fn hsa_queue_store_read_index_screlease(queue, value) => read_index, Release;
    pub unsafe extern "C" fn hsa_queue_store_read_index_release(queue, value) => read_index, Release;
}

/// Write-index compare-and-swaps: `pub unsafe extern "C" fn NAME(queue,
/// expected, value) => SUCCESS_ORDERING, FAILURE_ORDERING;`, returning the
/// value observed before.
macro_rules! index_cases {
    ($(pub unsafe extern "C" fn $name:ident(queue, expected, value) => $ok:ident, $fail:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(queue: *const c_void, expected: u64, value: u64) -> u64 {
            with_queue(stringify!($name), queue, |q| {
                match q.write_index.compare_exchange(expected, value, Ordering::$ok, Ordering::$fail) {
                    Ok(v) | Err(v) => v,
                }
            })
        }
    )*};
}

index_cases! {
    pub unsafe extern "C" fn hsa_queue_cas_write_index_relaxed(queue, expected, value) => Relaxed, Relaxed;
    pub unsafe extern "C" fn hsa_queue_cas_write_index_scacquire(queue, expected, value) => Acquire, Acquire;
    pub unsafe extern "C" fn hsa_queue_cas_write_index_acquire(queue, expected, value) => Acquire, Acquire;
    pub unsafe extern "C" fn hsa_queue_cas_write_index_screlease(queue, expected, value) => Release, Relaxed;
    pub unsafe extern "C" fn hsa_queue_cas_write_index_release(queue, expected, value) => Release, Relaxed;
    pub unsafe extern "C" fn hsa_queue_cas_write_index_scacq_screl(queue, expected, value) => AcqRel, Acquire;
    pub unsafe extern "C" fn hsa_queue_cas_write_index_acq_rel(queue, expected, value) => AcqRel, Acquire;
}

/// Write-index additions: `pub unsafe extern "C" fn NAME(queue, value) =>
/// ORDERING;`, returning the previous value.
macro_rules! index_adds {
    ($(pub unsafe extern "C" fn $name:ident(queue, value) => $order:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(queue: *const c_void, value: u64) -> u64 {
            with_queue(stringify!($name), queue, |q| q.write_index.fetch_add(value, Ordering::$order))
        }
    )*};
}

index_adds! {
    pub unsafe extern "C" fn hsa_queue_add_write_index_relaxed(queue, value) => Relaxed;
    pub unsafe extern "C" fn hsa_queue_add_write_index_scacquire(queue, value) => Acquire;
    pub unsafe extern "C" fn hsa_queue_add_write_index_acquire(queue, value) => Acquire;
    pub unsafe extern "C" fn hsa_queue_add_write_index_screlease(queue, value) => Release;
    pub unsafe extern "C" fn hsa_queue_add_write_index_release(queue, value) => Release;
    pub unsafe extern "C" fn hsa_queue_add_write_index_scacq_screl(queue, value) => AcqRel;
    pub unsafe extern "C" fn hsa_queue_add_write_index_acq_rel(queue, value) => AcqRel;
}

/// Sets a queue's CU mask (`num_cu_mask_count` bits, a multiple of 32; 0
/// enables every unit again), as ROCr's `AqlQueue::SetCUMasking`
/// (`amd_aql_queue.cpp`) does: held to the agent's units and to the
/// process-wide `HSA_CU_MASK` (then `HSA_STATUS_CU_MASK_REDUCED`),
/// refused when it enables one CU of a WGP's pair. Later dispatches of
/// the queue run their workgroups on the units left on, as kernels see
/// through `HW_REG_HW_ID1`; a mask of no unit makes each dispatch fail.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_queue_cu_set_mask(
    queue: *const c_void,
    num_cu_mask_count: u32,
    cu_mask: *const u32,
) -> Status {
    guard_status("hsa_amd_queue_cu_set_mask", || {
        let q = queue_at(&*runtime()?, queue)?;
        if !num_cu_mask_count.is_multiple_of(32) {
            return Err(invalid(format!(
                "num_cu_mask_count {num_cu_mask_count} is not a multiple of 32"
            )));
        }
        let words = (num_cu_mask_count / 32) as usize;
        let requested = if words == 0 {
            None
        } else {
            crate::non_null(cu_mask, "cu_mask")?;
            // SAFETY: non-null (checked) and the C caller's array of
            // `num_cu_mask_count` bits, `words` uint32_t (crate docs,
            // "Inputs").
            Some(unsafe { std::slice::from_raw_parts(cu_mask, words) }.to_vec())
        };
        Ok(match q.set_cu_mask(requested.as_deref())? {
            Applied::Exactly => HSA_STATUS_SUCCESS,
            Applied::Reduced => HSA_STATUS_CU_MASK_REDUCED,
        })
    })
}

/// Writes the first `num_cu_mask_count` bits of the queue's CU mask (every
/// unit until one is set; bits past the agent's units 0), as ROCr's
/// `AqlQueue::GetCUMasking`.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_queue_cu_get_mask(
    queue: *const c_void,
    num_cu_mask_count: u32,
    cu_mask: *mut u32,
) -> Status {
    guard("hsa_amd_queue_cu_get_mask", || {
        let q = queue_at(&*runtime()?, queue)?;
        if num_cu_mask_count == 0 || !num_cu_mask_count.is_multiple_of(32) {
            return Err(invalid(format!(
                "num_cu_mask_count {num_cu_mask_count} must be a non-zero multiple of 32"
            )));
        }
        crate::non_null(cu_mask, "cu_mask")?;
        let mask = q.cu_mask();
        for w in 0..num_cu_mask_count as usize / 32 {
            let word = mask.get(w).copied().unwrap_or(0);
            // SAFETY: non-null (checked) and the C caller's output array of
            // `num_cu_mask_count` bits, so word `w` lies inside it (crate
            // docs, "Outputs").
            unsafe { cu_mask.add(w).write_unaligned(word) };
        }
        Ok(())
    })
}

/// Records a queue's priority (`hsa_amd_queue_priority_t`); queues are
/// served by their own threads, so it does not change scheduling.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_queue_set_priority(queue: *mut c_void, priority: u32) -> Status {
    guard("hsa_amd_queue_set_priority", || {
        let q = queue_at(&*runtime()?, queue)?;
        if priority > PRIORITY_HIGH {
            return Err(invalid(format!(
                "{priority} is not an hsa_amd_queue_priority_t"
            )));
        }
        q.priority.store(priority as u64, Ordering::Relaxed);
        Ok(())
    })
}

/// `hsa_queue_info_attribute_t` (ROCm 6).
const QUEUE_INFO_AGENT: u32 = 0;
const QUEUE_INFO_DOORBELL_ID: u32 = 1;

/// The agent a queue runs on, or its doorbell's id. ROCr
/// (`AqlQueue::GetInfo`, `amd_aql_queue.cpp`) answers the doorbell with
/// the address of the queue's hardware doorbell; softgpu's doorbell is
/// the queue's doorbell signal, so its handle is the id: unique per live
/// queue and the same for the queue's lifetime.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_queue_get_info(
    queue: *mut c_void,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_amd_queue_get_info", || {
        let rt = runtime()?;
        let q = queue_at(&rt, queue)?;
        // The agent's index is its place in the handle list.
        let agent = rt.agent_handles[q.agent.index];
        // SAFETY: `value` is NULL (refused by `put`) or valid for a write of
        // the attribute's type (crate docs, "Outputs").
        unsafe {
            match attribute {
                QUEUE_INFO_AGENT => put(value as *mut u64, agent),
                QUEUE_INFO_DOORBELL_ID => put(value as *mut u64, q.doorbell_handle),
                other => Err(invalid(format!(
                    "{other} is not an hsa_queue_info_attribute_t"
                ))),
            }
        }
    })
}

/// Accepted for a live queue: every dispatch records its start and end
/// times in its completion signal whether or not profiling is enabled.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_profiling_set_profiler_enabled(
    queue: *mut c_void,
    _enable: i32,
) -> Status {
    guard("hsa_amd_profiling_set_profiler_enabled", || {
        queue_at(&*runtime()?, queue).map(|_| ())
    })
}

/// Recorded; every asynchronous copy records its times anyway.
#[no_mangle]
pub extern "C" fn hsa_amd_profiling_async_copy_enable(enable: bool) -> Status {
    guard("hsa_amd_profiling_async_copy_enable", || {
        runtime()?;
        ASYNC_COPY_PROFILING.store(enable, Ordering::Relaxed);
        Ok(())
    })
}

/// `hsa_amd_profiling_dispatch_time_t` / `hsa_amd_profiling_async_copy_time_t`.
#[repr(C)]
pub struct StartEnd {
    pub start: u64,
    pub end: u64,
}

/// The times the work that last completed `signal` recorded.
///
/// # Safety
/// `out` must be NULL or valid for a write of a [`StartEnd`] (the exports'
/// `time` output argument).
unsafe fn recorded_times(signal: u64, out: *mut StartEnd, what: &str) -> Result<(), Error> {
    let s = crate::signal::signal_of(signal)?;
    crate::non_null(out, "time")?;
    let (start, end) = s
        .times()
        .ok_or_else(|| invalid(format!("signal {signal:#x} has not completed {what} yet")))?;
    // SAFETY: this function's contract is `put`'s.
    unsafe { put(out, StartEnd { start, end }) }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time(
    agent: u64,
    signal: u64,
    time: *mut StartEnd,
) -> Status {
    guard("hsa_amd_profiling_get_dispatch_time", || {
        runtime()?.agent(agent)?;
        // SAFETY: `time` is the C caller's output for the struct (crate
        // docs, "Outputs").
        unsafe { recorded_times(signal, time, "a kernel dispatch") }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_profiling_get_async_copy_time(
    signal: u64,
    time: *mut StartEnd,
) -> Status {
    guard("hsa_amd_profiling_get_async_copy_time", || {
        runtime()?;
        // SAFETY: `time` is the C caller's output for the struct (crate
        // docs, "Outputs").
        unsafe { recorded_times(signal, time, "an asynchronous copy") }
    })
}

/// Agent ticks are already system-domain nanoseconds: the identity.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain(
    agent: u64,
    agent_tick: u64,
    system_tick: *mut u64,
) -> Status {
    guard("hsa_amd_profiling_convert_tick_to_system_domain", || {
        runtime()?.agent(agent)?;
        // SAFETY: the C caller's output for a uint64_t (crate docs,
        // "Outputs"); `put` refuses NULL.
        unsafe { put(system_tick, agent_tick) }
    })
}
