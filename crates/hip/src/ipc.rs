//! Sharing device memory between processes (`hipIpcGetMemHandle`,
//! `hipIpcOpenMemHandle`, `hipIpcCloseMemHandle`), over the runtime's IPC
//! memory (`softgpu_runtime::vmem`, what `hsa_amd_ipc_memory_*` serve):
//! the exporting process moves the allocation's pages onto a memfd it
//! keeps open; the opening process maps that file into its own arena, so
//! both see the same bytes, and its kernels and copies reach them.
//!
//! A `hipIpcMemHandle_t` (64 bytes) holds, little-endian: the runtime's
//! handle (eight 32-bit words, naming the exporting process, its file
//! and the shared length), the offset of the exported pointer in its
//! allocation, the allocation's length, and the exporting process's id.
//! As ROCm's CLR (`hip_memory.cpp`), a handle is opened only by another
//! process (`hipErrorInvalidContext` in the exporting one), and a handle
//! that cannot be attached is `hipErrorInvalidDevicePointer`.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::{hip, lock, Hip};
use softgpu_runtime::vmem::IPC_HANDLE_WORDS;

/// Where the fields sit in the 64 bytes.
const OFFSET_AT: usize = 4 * IPC_HANDLE_WORDS;
const LENGTH_AT: usize = OFFSET_AT + 8;
const OWNER_AT: usize = LENGTH_AT + 8;

/// What a handle carries.
#[derive(Debug, PartialEq, Eq)]
struct MemHandle {
    words: [u32; IPC_HANDLE_WORDS],
    offset: u64,
    length: u64,
    owner: u32,
}

impl MemHandle {
    fn to_bytes(&self) -> [u8; HIP_IPC_HANDLE_SIZE] {
        let mut bytes = [0u8; HIP_IPC_HANDLE_SIZE];
        for (i, w) in self.words.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        bytes[OFFSET_AT..LENGTH_AT].copy_from_slice(&self.offset.to_le_bytes());
        bytes[LENGTH_AT..OWNER_AT].copy_from_slice(&self.length.to_le_bytes());
        bytes[OWNER_AT..OWNER_AT + 4].copy_from_slice(&self.owner.to_le_bytes());
        bytes
    }

    fn from_bytes(bytes: &[u8; HIP_IPC_HANDLE_SIZE]) -> MemHandle {
        let u32_at = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let u64_at = |at: usize| u64::from(u32_at(at)) | u64::from(u32_at(at + 4)) << 32;
        MemHandle {
            words: std::array::from_fn(|i| u32_at(4 * i)),
            offset: u64_at(OFFSET_AT),
            length: u64_at(LENGTH_AT),
            owner: u32_at(OWNER_AT),
        }
    }
}

/// Memory this process opened: the pointer handed out → the attachment's
/// start.
static OPENED: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

#[no_mangle]
pub unsafe extern "C" fn hipIpcGetMemHandle(
    handle: *mut hipIpcHandle,
    ptr: *mut c_void,
) -> hipError_t {
    guard("hipIpcGetMemHandle", || {
        hip()?;
        if handle.is_null() || ptr.is_null() {
            return Err(HipError::invalid("a null handle or pointer"));
        }
        let bytes = hipIpcHandle {
            reserved: export(ptr as u64)?,
        };
        // SAFETY: an output of a hipIpcMemHandle_t (crate docs, "Outputs").
        unsafe { put(handle, bytes) }
    })
}

/// The handle of the device memory at `addr` (`hipIpcGetMemHandle`,
/// `hipMemPoolExportPointer`): its allocation is shared from now on.
pub fn export(addr: u64) -> HipResult<[u8; HIP_IPC_HANDLE_SIZE]> {
    let (base, alloc) = crate::memory::find(addr)
        .filter(|(_, a)| a.kind == crate::memory::Kind::Device)
        .ok_or_else(|| HipError::invalid(format!("{addr:#x} is not in hipMalloc memory")))?;
    let rt = softgpu_runtime::Runtime::get()?;
    let words = rt.vmem().ipc_create(&rt, base, alloc.len)?;
    let value = MemHandle {
        words,
        offset: addr - base,
        length: alloc.len,
        owner: std::process::id(),
    };
    Ok(value.to_bytes())
}

/// Maps the memory a handle from another process names
/// (`hipIpcOpenMemHandle`, `hipMemPoolImportPointer`); the pointer the
/// exporter handed out, in this process. [`close`] undoes it.
pub fn open(bytes: &[u8; HIP_IPC_HANDLE_SIZE]) -> HipResult<u64> {
    let h = MemHandle::from_bytes(bytes);
    if h.length == 0 || h.offset >= h.length {
        return Err(HipError::invalid("not a handle from hipIpcGetMemHandle"));
    }
    if h.owner == std::process::id() {
        return Err(HipError::new(
            HIP_ERROR_INVALID_CONTEXT,
            "the handle was made by this process, which has the memory already",
        ));
    }
    let rt = softgpu_runtime::Runtime::get()?;
    let va = rt.vmem().ipc_attach(&rt, &h.words, h.length).map_err(|e| {
        HipError::new(
            HIP_ERROR_INVALID_DEVICE_POINTER,
            format!("the handle's memory cannot be attached: {e}"),
        )
    })?;
    let opened = va + h.offset;
    lock(&OPENED).insert(opened, va);
    Ok(opened)
}

/// Unmaps memory [`open`] mapped, after the device's queued work (which
/// may use it, as CLR has it). `Ok(false)`: `ptr` was not opened here.
pub fn close(hip: &Hip, ptr: u64) -> HipResult<bool> {
    let Some(va) = lock(&OPENED).remove(&ptr) else {
        return Ok(false);
    };
    let synchronized = crate::stream::synchronize_device(hip, hip.current().index);
    let rt = softgpu_runtime::Runtime::get()?;
    rt.vmem().ipc_detach(&rt, va)?;
    synchronized.map(|()| true)
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcOpenMemHandle(
    ptr: *mut *mut c_void,
    handle: hipIpcHandle,
    flags: u32,
) -> hipError_t {
    guard("hipIpcOpenMemHandle", || {
        hip()?;
        // hipIpcMemLazyEnablePeerAccess (0) is the only flag.
        if ptr.is_null() || flags != 0 {
            return Err(HipError::invalid(format!(
                "a null output pointer or flags {flags:#x}"
            )));
        }
        let opened = open(&handle.reserved)?;
        // SAFETY: an output of a pointer (crate docs, "Outputs").
        unsafe { put(ptr, opened as *mut c_void) }.inspect_err(|_| {
            let _ = hip().map(|hip| close(hip, opened));
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcCloseMemHandle(ptr: *mut c_void) -> hipError_t {
    guard("hipIpcCloseMemHandle", || {
        let hip = hip()?;
        if ptr.is_null() {
            return Err(HipError::invalid("the pointer is null"));
        }
        match close(hip, ptr as u64)? {
            true => Ok(()),
            false => Err(HipError::invalid(format!(
                "{ptr:p} was not opened with hipIpcOpenMemHandle"
            ))),
        }
    })
}

symver!("ipc");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_survives_its_bytes() {
        let h = MemHandle {
            words: [0x5347_5049, 42, 7, 4096, 1, 0, 0, 0],
            offset: 256,
            length: (1 << 32) + 4096,
            owner: 1234,
        };
        assert_eq!(MemHandle::from_bytes(&h.to_bytes()), h);
    }
}
