//! Sharing allocations between processes (`hsa_amd_ipc_memory_*`), on the
//! virtual memory machinery.
//!
//! Creating a handle moves the allocation's pages onto a sealed memfd
//! (`Arena::share_pages`: its bytes are copied over first), which the
//! exporting runtime keeps open until the allocation is freed. The handle
//! names the exporting process, that descriptor and the shared length, so
//! another process (or this one) attaching opens the same file through
//! `/proc/<pid>/fd/<fd>` and maps it into a reservation of its own arena,
//! the way `hsa_amd_vmem_import_shareable_handle` and `hsa_amd_vmem_map`
//! would, with every GPU agent given read-write access. Both sides then
//! see the same bytes. Freeing the exported allocation puts anonymous
//! pages back (`Arena::unshare_pages`), so its address range shares
//! nothing once reused; a process still attached keeps the file's pages.

use std::collections::hash_map::Entry;
use std::fs::OpenOptions;
use std::os::fd::{AsFd, OwnedFd};

use super::{sealed_memfd, Permission, VirtualMemory, PAGE};
use crate::agent::{AgentKind, PoolKind};
use crate::error::{invalid, Error, Result};
use crate::memory::AllocationKind;
use crate::runtime::Runtime;

/// The 32-bit words of an `hsa_amd_ipc_memory_t`.
pub const IPC_HANDLE_WORDS: usize = 8;

/// The first word of a softgpu IPC handle ("SGPI").
const MAGIC: u32 = 0x5347_5049;

/// An allocation this process shares.
pub(super) struct Export {
    /// The memfd behind its pages, kept open for attaching processes.
    fd: OwnedFd,
    /// Bytes shared: the allocation's length rounded up to pages.
    len: u64,
}

impl VirtualMemory {
    /// A handle another process can attach to share the GPU-pool
    /// allocation that starts at `addr`, whose length `len` must be (or be
    /// rounded up to a page), as ROCr's `Runtime::IPCCreate` (runtime.cpp)
    /// requires; anything else is an invalid argument there too.
    pub fn ipc_create(&self, rt: &Runtime, addr: u64, len: u64) -> Result<[u32; IPC_HANDLE_WORDS]> {
        let alloc_len = device_allocation(rt, addr)?;
        if len != alloc_len && len != alloc_len.next_multiple_of(PAGE) {
            return Err(invalid(format!(
                "{len} bytes asked to be shared of the {alloc_len}-byte allocation at {addr:#x} (all of it must be)"
            )));
        }
        let mut state = self.state();
        let export = match state.exports.entry(addr) {
            Entry::Occupied(shared) => shared.into_mut(),
            Entry::Vacant(slot) => {
                let pages = alloc_len.next_multiple_of(PAGE);
                let fd = sealed_memfd(pages)?;
                // SAFETY: the memfd is `pages` long and sealed against
                // shrinking, and this runtime keeps it open (in `exports`)
                // for as long as the pages are shared.
                unsafe { rt.arena.share_pages(addr, pages, fd.as_fd()) }?;
                slot.insert(Export { fd, len: pages })
            }
        };
        let fd = std::os::fd::AsRawFd::as_raw_fd(&export.fd) as u32;
        let len = export.len;
        Ok([
            MAGIC,
            std::process::id(),
            fd,
            len as u32,
            (len >> 32) as u32,
            0,
            0,
            0,
        ])
    }

    /// Maps the memory `handle` names (from this process or another) and
    /// returns its address here.
    pub fn ipc_attach(
        &self,
        rt: &Runtime,
        handle: &[u32; IPC_HANDLE_WORDS],
        len: u64,
    ) -> Result<u64> {
        self.attach(rt, handle, len, false)
    }

    /// [`VirtualMemory::ipc_attach`] for memory the runtime itself holds
    /// (an IPC signal's value): only [`VirtualMemory::ipc_detach_held`]
    /// unmaps it.
    pub(crate) fn ipc_attach_held(
        &self,
        rt: &Runtime,
        handle: &[u32; IPC_HANDLE_WORDS],
        len: u64,
    ) -> Result<u64> {
        self.attach(rt, handle, len, true)
    }

    /// The address of the allocation `handle` shares when this process
    /// made the handle.
    pub(crate) fn exported_by_this_process(&self, handle: &[u32; IPC_HANDLE_WORDS]) -> Option<u64> {
        let [magic, pid, fd, ..] = *handle;
        if magic != MAGIC || pid != std::process::id() {
            return None;
        }
        let state = self.state();
        let fd_of = |e: &Export| std::os::fd::AsRawFd::as_raw_fd(&e.fd) as u32;
        let found = state.exports.iter().find(|(_, e)| fd_of(e) == fd);
        found.map(|(&addr, _)| addr)
    }

    fn attach(
        &self,
        rt: &Runtime,
        handle: &[u32; IPC_HANDLE_WORDS],
        len: u64,
        held: bool,
    ) -> Result<u64> {
        let [magic, pid, fd, lo, hi, ..] = *handle;
        let shared = lo as u64 | (hi as u64) << 32;
        if magic != MAGIC {
            return Err(invalid("not an IPC memory handle softgpu made"));
        }
        if len == 0 || len > shared {
            return Err(invalid(format!(
                "{len} bytes of a {shared}-byte shared allocation"
            )));
        }
        let path = format!("/proc/{pid}/fd/{fd}");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|source| Error::IpcOpen {
                pid,
                path: path.into(),
                source,
            })?;
        let handle = self.import(rt, file.as_fd()).map_err(|e| Error::Ipc {
            what: "importing the shared memory",
            source: Box::new(e),
        })?;
        let attached = self.map_whole(rt, handle, shared);
        self.release(handle)?;
        let va = attached?;
        self.state().attachments.insert(va, (shared, held));
        Ok(va)
    }

    /// Reserves room for the handle's `len` bytes, maps them and lets
    /// every GPU agent read and write them.
    fn map_whole(&self, rt: &Runtime, handle: u64, len: u64) -> Result<u64> {
        let va = self.reserve(rt, len, 0, 0)?;
        let mapped = self.map(rt, va, len, 0, handle).and_then(|()| {
            let grants: Vec<(u64, u32)> = rt
                .agents
                .iter()
                .filter(|a| a.kind == AgentKind::Gpu)
                .map(|a| (rt.agent_handles[a.index], Permission::ReadWrite as u32))
                .collect();
            self.set_access(rt, va, len, &grants)
        });
        if let Err(e) = mapped {
            let _ = self.unmap(rt, va, len);
            let _ = self.free(rt, va, len);
            return Err(e);
        }
        Ok(va)
    }

    /// Unmaps what `ipc_attach` mapped at `va`.
    pub fn ipc_detach(&self, rt: &Runtime, va: u64) -> Result<()> {
        self.detach(rt, va, false)
    }

    /// Unmaps what `ipc_attach_held` mapped at `va`.
    pub(crate) fn ipc_detach_held(&self, rt: &Runtime, va: u64) -> Result<()> {
        self.detach(rt, va, true)
    }

    fn detach(&self, rt: &Runtime, va: u64, held: bool) -> Result<()> {
        let mut state = self.state();
        let len = match state.attachments.get(&va) {
            Some(&(len, h)) if h == held => len,
            Some(_) => {
                return Err(invalid(format!(
                    "{va:#x} holds an attached IPC signal's value: destroy the signal instead"
                )))
            }
            None => {
                return Err(invalid(format!(
                    "{va:#x} was not attached with hsa_amd_ipc_memory_attach"
                )))
            }
        };
        state.attachments.remove(&va);
        drop(state);
        self.unmap(rt, va, len)?;
        self.free(rt, va, len).map_err(|e| Error::Ipc {
            what: "freeing the attachment's reservation",
            source: Box::new(e),
        })
    }

    /// Stops sharing the allocation at `addr` before it is freed (nothing
    /// when it was never shared).
    pub(crate) fn ipc_forget(&self, rt: &Runtime, addr: u64) -> Result<()> {
        let Some(export) = self.state().exports.remove(&addr) else {
            return Ok(());
        };
        rt.arena.unshare_pages(addr, export.len)?;
        Ok(())
    }
}

/// The length of the live GPU-pool allocation that starts at `addr`.
fn device_allocation(rt: &Runtime, addr: u64) -> Result<u64> {
    let info = rt.pointer_info(addr);
    let on_gpu = match info.kind {
        Some(AllocationKind::Pool(pool)) if info.base == addr => rt
            .pool(pool)
            .is_ok_and(|p| p.kind == PoolKind::CoarseDevice),
        _ => false,
    };
    if !on_gpu {
        return Err(invalid(format!(
            "{addr:#x} is not the start of an allocation from a GPU agent's pool"
        )));
    }
    Ok(info.len)
}
