//! AMD system events: `hsa_amd_register_system_event_handler`.
//!
//! A kernel's invalid memory access is delivered to every registered
//! handler as `HSA_AMD_GPU_MEMORY_FAULT_EVENT` (agent, faulting address,
//! "page not present"), before the queue's own error callback runs, as
//! HIP's fault reporting expects. Freeing memory a live queue uses is
//! delivered as `HSA_AMD_GPU_MEMORY_ERROR_EVENT` ("memory in use").

use std::ffi::c_void;
use std::sync::Mutex;

use crate::{guard, runtime, Status};

symver!("events");

/// `hsa_amd_system_event_callback_t`.
type EventCallback = unsafe extern "C" fn(event: *const Event, data: *mut c_void) -> Status;

/// `hsa_amd_event_t` with its memory-fault (or the same-shaped
/// memory-error) member.
#[repr(C)]
pub struct Event {
    event_type: u32,
    agent: u64,
    virtual_address: u64,
    fault_reason_mask: u32,
}

const HSA_AMD_GPU_MEMORY_FAULT_EVENT: u32 = 0;
const HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT: u32 = 1;
const HSA_AMD_GPU_MEMORY_ERROR_EVENT: u32 = 2;
const HSA_AMD_MEMORY_ERROR_MEMORY_IN_USE: u32 = 1;

/// A registered handler and its client data (an address, sent to the
/// queue threads that deliver events).
static HANDLERS: Mutex<Vec<(EventCallback, usize)>> = Mutex::new(Vec::new());

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_register_system_event_handler(
    callback: Option<EventCallback>,
    data: *mut c_void,
) -> Status {
    guard("hsa_amd_register_system_event_handler", || {
        runtime()?;
        let cb = callback.ok_or_else(|| softgpu_runtime::error::invalid("callback is NULL"))?;
        HANDLERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((cb, data as usize));
        Ok(())
    })
}

/// Tells every handler that a kernel on `agent` faulted at `address`.
pub(crate) fn memory_fault(agent: u64, address: u64) {
    deliver(&Event {
        event_type: HSA_AMD_GPU_MEMORY_FAULT_EVENT,
        agent,
        virtual_address: address,
        fault_reason_mask: HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT,
    });
}

/// Tells every handler that memory at `address` that `agent`'s hardware
/// still uses (a live queue's ring or descriptor) was asked to be freed:
/// `HSA_AMD_GPU_MEMORY_ERROR_EVENT` with `HSA_AMD_MEMORY_ERROR_MEMORY_IN_USE`
/// (its `hsa_amd_gpu_memory_error_info_t` has the fault info's layout).
/// ROCr's `Runtime::FreeMemory` (runtime.cpp) raises it when the driver
/// refuses such a free, and aborts the process when no handler takes it;
/// softgpu only refuses the free.
pub(crate) fn memory_in_use(agent: u64, address: u64) {
    deliver(&Event {
        event_type: HSA_AMD_GPU_MEMORY_ERROR_EVENT,
        agent,
        virtual_address: address,
        fault_reason_mask: HSA_AMD_MEMORY_ERROR_MEMORY_IN_USE,
    });
}

/// Calls every registered handler with `event`.
fn deliver(event: &Event) {
    let handlers = HANDLERS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for (cb, data) in handlers {
        // SAFETY: the client's handler, of the signature hsa_ext_amd.h
        // declares, called with its own `data` (crate docs, "Callbacks")
        // and an event that lives for the call.
        unsafe { cb(event, data as *mut c_void) };
    }
}
