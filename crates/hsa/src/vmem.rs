//! Virtual memory (ROCm 6's `hsa_amd_vmem_*`): reserve device addresses,
//! make handles to physical memory, map handles into reservations, grant
//! agents access, share handles through file descriptors; and, on the same
//! machinery, sharing allocations between processes
//! (`hsa_amd_ipc_memory_*`).
//!
//! The work is `softgpu_runtime::vmem`'s; each export checks its C
//! arguments in the order ROCr's hsa_ext_amd.cpp does (initialised, zero
//! sizes, null pointers) so each bad input gets ROCr's status.

use std::ffi::c_void;
use std::os::fd::{BorrowedFd, IntoRawFd};

use softgpu_runtime::error::invalid;
use softgpu_runtime::vmem::VmemError;
use softgpu_runtime::Error;

use crate::{
    guard, guard_status, non_null, put, runtime, Status, HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
    HSA_STATUS_ERROR_RESOURCE_FREE, HSA_STATUS_SUCCESS,
};

symver!("vmem");

/// `hsa_amd_memory_type_t`.
const MEMORY_TYPE_NONE: u32 = 0;
const MEMORY_TYPE_PINNED: u32 = 1;

/// `hsa_amd_memory_access_desc_t`: a permission for one agent.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AccessDesc {
    pub permissions: u32,
    pub agent_handle: u64,
}

/// Refuses a zero size, as ROCr's `IS_ZERO` does.
fn non_zero(size: usize) -> Result<u64, Error> {
    if size == 0 {
        Err(invalid("size is 0"))
    } else {
        Ok(size as u64)
    }
}

/// The status of a virtual memory outcome: the two refusals no runtime
/// error maps to get ROCr's statuses for them.
fn vmem_status(result: Result<(), VmemError>, name: &str) -> Result<Status, Error> {
    let status = match result {
        Ok(()) => return Ok(HSA_STATUS_SUCCESS),
        Err(VmemError::Runtime(e)) => return Err(e),
        Err(VmemError::StillMapped { .. }) => HSA_STATUS_ERROR_RESOURCE_FREE,
        Err(VmemError::NotShareable { .. }) => HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
    };
    if let (Err(e), Some(_)) = (result, softgpu_env::verbose().then_some(())) {
        eprintln!("softgpu: {name}: {e}");
    }
    Ok(status)
}

/// Reserves `size` bytes of device addresses at `address` if free, else
/// elsewhere; `alignment` 0 means a page.
///
/// # Safety
/// `va` is NULL or valid for a write of a pointer (crate docs, "Outputs").
unsafe fn reserve(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    align: u64,
) -> Result<(), Error> {
    let rt = runtime()?;
    let size = non_zero(size)?;
    non_null(va, "va")?;
    let addr = rt.vmem().reserve(&rt, size, address, align)?;
    // SAFETY: non-null (checked) and the C caller's output for a pointer.
    unsafe { put(va, addr as *mut c_void) }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_address_reserve(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    _flags: u64,
) -> Status {
    // SAFETY: `va` is the C caller's output (crate docs, "Outputs"), which
    // is `reserve`'s contract. Flags are ignored as ROCr ignores them.
    guard("hsa_amd_vmem_address_reserve", || unsafe {
        reserve(va, size, address, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_address_reserve_align(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    alignment: u64,
    _flags: u64,
) -> Status {
    // SAFETY: as for hsa_amd_vmem_address_reserve.
    guard("hsa_amd_vmem_address_reserve_align", || unsafe {
        reserve(va, size, address, alignment)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_address_free(va: *mut c_void, size: usize) -> Status {
    guard_status("hsa_amd_vmem_address_free", || {
        let rt = runtime()?;
        non_null(va, "va")?;
        let size = non_zero(size)?;
        let freed = rt.vmem().free(&rt, va as u64, size);
        vmem_status(freed, "hsa_amd_vmem_address_free")
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_handle_create(
    pool: u64,
    size: usize,
    kind: u32,
    _flags: u64,
    handle: *mut u64,
) -> Status {
    guard("hsa_amd_vmem_handle_create", || {
        let rt = runtime()?;
        let size = non_zero(size)?;
        let pinned = match kind {
            MEMORY_TYPE_NONE => false,
            MEMORY_TYPE_PINNED => true,
            other => return Err(invalid(format!("{other} is not an hsa_amd_memory_type_t"))),
        };
        non_null(handle, "memory_handle")?;
        let made = rt.vmem().create(&rt, pool, size, pinned)?;
        // SAFETY: non-null (checked) and the C caller's output for an
        // hsa_amd_vmem_alloc_handle_t, a struct of one uint64_t.
        unsafe { put(handle, made) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_vmem_handle_release(handle: u64) -> Status {
    guard("hsa_amd_vmem_handle_release", || {
        runtime()?.vmem().release(handle)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_map(
    va: *mut c_void,
    size: usize,
    in_offset: usize,
    handle: u64,
    _flags: u64,
) -> Status {
    guard("hsa_amd_vmem_map", || {
        let rt = runtime()?;
        non_null(va, "va")?;
        let size = non_zero(size)?;
        rt.vmem()
            .map(&rt, va as u64, size, in_offset as u64, handle)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_unmap(va: *mut c_void, size: usize) -> Status {
    guard("hsa_amd_vmem_unmap", || {
        let rt = runtime()?;
        non_null(va, "va")?;
        let size = non_zero(size)?;
        rt.vmem().unmap(&rt, va as u64, size)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_set_access(
    va: *mut c_void,
    size: usize,
    desc: *const AccessDesc,
    desc_cnt: usize,
) -> Status {
    guard("hsa_amd_vmem_set_access", || {
        let rt = runtime()?;
        non_null(va, "va")?;
        let size = non_zero(size)?;
        non_null(desc, "desc")?;
        if desc_cnt == 0 {
            return Err(invalid("desc_cnt is 0"));
        }
        // SAFETY: non-null (checked) and the C caller's array of
        // `desc_cnt` descriptors (crate docs, "Inputs").
        let list = unsafe { std::slice::from_raw_parts(desc, desc_cnt) };
        let grants: Vec<(u64, u32)> = list
            .iter()
            .map(|d| (d.agent_handle, d.permissions))
            .collect();
        rt.vmem().set_access(&rt, va as u64, size, &grants)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_get_access(
    va: *mut c_void,
    perms: *mut u32,
    agent: u64,
) -> Status {
    guard("hsa_amd_vmem_get_access", || {
        let rt = runtime()?;
        non_null(va, "va")?;
        non_null(perms, "perms")?;
        let p = rt.vmem().get_access(&rt, va as u64, agent)?;
        // SAFETY: non-null (checked) and the C caller's output for an
        // hsa_access_permission_t (crate docs, "Outputs").
        unsafe { put(perms, p as u32) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_export_shareable_handle(
    dmabuf_fd: *mut i32,
    handle: u64,
    _flags: u64,
) -> Status {
    guard("hsa_amd_vmem_export_shareable_handle", || {
        let rt = runtime()?;
        non_null(dmabuf_fd, "dmabuf_fd")?;
        let fd = rt.vmem().export(handle)?;
        // SAFETY: non-null (checked) and the C caller's output for an int;
        // the descriptor becomes the caller's to close.
        unsafe { put(dmabuf_fd, fd.into_raw_fd()) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_import_shareable_handle(
    dmabuf_fd: i32,
    handle: *mut u64,
) -> Status {
    guard_status("hsa_amd_vmem_import_shareable_handle", || {
        let rt = runtime()?;
        non_null(handle, "handle")?;
        if dmabuf_fd < 0 {
            return Err(invalid(format!("file descriptor {dmabuf_fd}")));
        }
        // SAFETY: a non-negative descriptor the C caller keeps open for
        // the call (crate docs, "Memory"); borrowed only during it.
        let fd = unsafe { BorrowedFd::borrow_raw(dmabuf_fd) };
        let imported = rt.vmem().import(&rt, fd).and_then(|h| {
            // SAFETY: non-null (checked) and the C caller's output for an
            // hsa_amd_vmem_alloc_handle_t.
            Ok(unsafe { put(handle, h) }?)
        });
        vmem_status(imported, "hsa_amd_vmem_import_shareable_handle")
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_retain_alloc_handle(
    handle: *mut u64,
    addr: *mut c_void,
) -> Status {
    guard("hsa_amd_vmem_retain_alloc_handle", || {
        let rt = runtime()?;
        non_null(addr, "addr")?;
        non_null(handle, "allocHandle")?;
        let h = rt.vmem().retain(addr as u64)?;
        // SAFETY: non-null (checked) and the C caller's output for an
        // hsa_amd_vmem_alloc_handle_t.
        unsafe { put(handle, h) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_get_alloc_properties_from_handle(
    handle: u64,
    pool: *mut u64,
    kind: *mut u32,
) -> Status {
    guard("hsa_amd_vmem_get_alloc_properties_from_handle", || {
        let rt = runtime()?;
        non_null(pool, "pool")?;
        non_null(kind, "type")?;
        let (p, pinned) = rt.vmem().properties(handle)?;
        let t = if pinned {
            MEMORY_TYPE_PINNED
        } else {
            MEMORY_TYPE_NONE
        };
        // SAFETY: both non-null (checked) and the C caller's outputs for an
        // hsa_amd_memory_pool_t and an hsa_amd_memory_type_t.
        unsafe {
            put(pool, p)?;
            put(kind, t)
        }
    })
}

/// `hsa_amd_ipc_memory_t`: eight 32-bit words.
type IpcHandle = [u32; softgpu_runtime::vmem::IPC_HANDLE_WORDS];

/// A handle another process can attach to share the GPU-pool allocation
/// at `ptr` (`len` bytes of it at most). Its pages move onto shared memory,
/// their bytes kept; set it up before kernels use the memory.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_memory_create(
    ptr: *mut c_void,
    len: usize,
    handle: *mut IpcHandle,
) -> Status {
    guard("hsa_amd_ipc_memory_create", || {
        let rt = runtime()?;
        non_null(ptr, "ptr")?;
        let words = rt.vmem().ipc_create(&rt, ptr as u64, non_zero(len)?)?;
        // SAFETY: the C caller's output for an hsa_amd_ipc_memory_t (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(handle, words) }
    })
}

/// Maps the memory a handle (from this process or another) names and gives
/// every GPU agent read-write access to it; `mapped_ptr` gets its address
/// here. The agents asked for are checked; all GPU agents share one
/// arena, so each of them can reach the memory.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_memory_attach(
    handle: *const IpcHandle,
    len: usize,
    num_agents: u32,
    mapping_agents: *const u64,
    mapped_ptr: *mut *mut c_void,
) -> Status {
    guard("hsa_amd_ipc_memory_attach", || {
        let rt = runtime()?;
        non_null(handle, "handle")?;
        non_null(mapped_ptr, "mapped_ptr")?;
        if num_agents > 0 {
            non_null(mapping_agents, "mapping_agents")?;
            // SAFETY: the C caller's array of `num_agents` agents (crate
            // docs, "Inputs").
            let agents = unsafe { std::slice::from_raw_parts(mapping_agents, num_agents as usize) };
            for &a in agents {
                rt.agent(a)?;
            }
        }
        // SAFETY: non-null (checked), the C caller's hsa_amd_ipc_memory_t
        // (crate docs, "Inputs"); read unaligned.
        let words = unsafe { handle.read_unaligned() };
        let va = rt.vmem().ipc_attach(&rt, &words, non_zero(len)?)?;
        // SAFETY: non-null (checked), the C caller's output pointer.
        unsafe { put(mapped_ptr, va as *mut c_void) }
    })
}

/// Unmaps memory `hsa_amd_ipc_memory_attach` mapped.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_memory_detach(mapped_ptr: *mut c_void) -> Status {
    guard("hsa_amd_ipc_memory_detach", || {
        let rt = runtime()?;
        non_null(mapped_ptr, "mapped_ptr")?;
        rt.vmem().ipc_detach(&rt, mapped_ptr as u64)
    })
}
