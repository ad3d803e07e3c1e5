//! Virtual memory (ROCm 6's `hsa_amd_vmem_*`): reserved address ranges,
//! physical memory handles, mappings of handles into reservations, and
//! per-agent access to the mappings.
//!
//! A handle's memory is a memfd, sealed against shrinking and growing, and
//! charged to its pool like an allocation. Mapping places the memfd over
//! the reserved range in the arena's own host mapping (device addresses
//! are host addresses), so one handle mapped at two addresses shows the
//! same bytes at both, and an exported file descriptor is that memfd
//! (duplicated), which another process can map too.
//!
//! A mapped range is an arena allocation record whose access follows the
//! GPU agents' permission: kernels are refused (a memory fault naming the
//! range) until `set_access` grants a GPU agent access, exactly as outside
//! any allocation. What cannot be modelled is refused, not ignored:
//!
//! - every GPU agent shares one arena and one confinement, so GPU agents
//!   must be given the same permission;
//! - the confinement knows read-write, read-only and no access, not
//!   write-only;
//! - the host reaches a mapped range through the same pages the emulated
//!   GPU uses, so the CPU agent can be given read-write access only (the
//!   host's own loads and stores to a mapped range are never blocked).
//!
//! Statuses and checks follow ROCr's `Runtime::VMemory*` functions
//! (runtime.cpp) and their exports in hsa_ext_amd.cpp.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use softgpu_exec::arena::vmem::PAGE;
use softgpu_exec::arena::{Access, Origin};

use crate::agent::{AgentKind, Pool, PoolKind, POOL_GRANULE};

pub(crate) mod ipc;
use crate::error::{invalid, Error, Result};
use crate::runtime::Runtime;
pub use ipc::IPC_HANDLE_WORDS;

/// `hsa_access_permission_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    None = 0,
    ReadOnly = 1,
    WriteOnly = 2,
    ReadWrite = 3,
}

impl Permission {
    /// The permission with HSA value `v`.
    pub fn from_raw(v: u32) -> Result<Permission> {
        Ok(match v {
            0 => Permission::None,
            1 => Permission::ReadOnly,
            2 => Permission::WriteOnly,
            3 => Permission::ReadWrite,
            _ => return Err(invalid(format!("{v} is not an hsa_access_permission_t"))),
        })
    }
}

/// Outcomes the C layer reports with statuses no [`Error`] maps to.
#[derive(Debug, thiserror::Error)]
pub enum VmemError {
    /// Freeing a reservation that still has mappings (ROCr:
    /// `HSA_STATUS_ERROR_RESOURCE_FREE`).
    #[error("the reservation at {addr:#x} still has {mappings} mapping(s)")]
    StillMapped { addr: u64, mappings: u32 },
    /// Importing a descriptor that is not shareable memory (ROCr:
    /// `HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS`).
    #[error("file descriptor {fd} is not shareable memory: {why}")]
    NotShareable {
        fd: i32,
        #[source]
        why: Unshareable,
    },
    #[error(transparent)]
    Runtime(#[from] Error),
}

/// Physical memory behind one or more handles: a sealed memfd.
struct Physical {
    fd: OwnedFd,
    size: u64,
    /// The pool it is reported as coming from.
    pool: u64,
    /// The pool charged for it (none for memory imported from another
    /// process, which that process's pool holds).
    charged: Option<Arc<Pool>>,
    pinned: bool,
    /// The file's device and inode: an import of a descriptor for memory
    /// already here shares it.
    id: (u64, u64),
}

impl Drop for Physical {
    fn drop(&mut self) {
        if let Some(pool) = &self.charged {
            pool.release(self.size);
        }
    }
}

/// One client handle: its memory, the references `create`, `import` and
/// `retain` took, and the mappings made through it. It stays until both
/// are zero (ROCr lets a handle be released while still mapped).
struct HandleRecord {
    memory: Arc<Physical>,
    refs: u32,
    uses: u32,
}

struct Reservation {
    len: u64,
    mappings: u32,
}

struct Mapping {
    len: u64,
    handle: u64,
    reservation: u64,
    /// Permission by agent index (absent: none).
    perms: BTreeMap<usize, Permission>,
}

#[derive(Default)]
struct State {
    reservations: BTreeMap<u64, Reservation>,
    mappings: BTreeMap<u64, Mapping>,
    handles: HashMap<u64, HandleRecord>,
    /// Allocations shared for IPC, by address (`ipc.rs`).
    exports: HashMap<u64, ipc::Export>,
    /// IPC attachments: mapped address → mapped bytes, and whether the
    /// runtime holds it (an IPC signal's value) rather than a client
    /// (`ipc.rs`).
    attachments: BTreeMap<u64, (u64, bool)>,
}

/// The virtual memory state of one runtime.
pub struct VirtualMemory {
    state: Mutex<State>,
}

/// Handles carry this tag in their top byte, then a serial that is never
/// reused in the process, so a forged, stale or foreign number is refused.
const HANDLE_TAG: u64 = 0x56 << 56;

fn fresh_handle() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    HANDLE_TAG | NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Each live runtime's virtual memory state.
type Registry = Vec<(Weak<Runtime>, Arc<VirtualMemory>)>;

fn registry() -> MutexGuard<'static, Registry> {
    static ALL: Mutex<Registry> = Mutex::new(Vec::new());
    let mut all = ALL.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|(rt, _)| rt.strong_count() > 0);
    all
}

impl Runtime {
    /// This runtime's virtual memory state (made on first use; a runtime
    /// made after a shutdown gets a fresh one).
    pub fn vmem(self: &Arc<Runtime>) -> Arc<VirtualMemory> {
        let mut all = registry();
        if let Some(v) = find(&all, self) {
            return v;
        }
        let v = Arc::new(VirtualMemory {
            state: Mutex::new(State::default()),
        });
        all.push((Arc::downgrade(self), v.clone()));
        v
    }

    /// This runtime's virtual memory state if it has been made.
    pub(crate) fn vmem_if_used(&self) -> Option<Arc<VirtualMemory>> {
        find(&registry(), self)
    }
}

fn find(all: &Registry, rt: &Runtime) -> Option<Arc<VirtualMemory>> {
    all.iter()
        .find(|(r, _)| std::ptr::eq(r.as_ptr(), rt))
        .map(|(_, v)| v.clone())
}

impl VirtualMemory {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves `len` bytes of device addresses aligned to `align` (0: a
    /// page), at `want` if that range is free. Flags are ignored, as ROCr
    /// does (`VMemoryAddressReserve`: none are defined).
    pub fn reserve(&self, rt: &Runtime, len: u64, want: u64, align: u64) -> Result<u64> {
        if len == 0 || !len.is_multiple_of(POOL_GRANULE) {
            return Err(invalid(format!(
                "size {len} is not a non-zero multiple of the {POOL_GRANULE}-byte granule"
            )));
        }
        let align = if align == 0 { PAGE } else { align };
        if !align.is_power_of_two() || align < PAGE {
            return Err(invalid(format!(
                "alignment {align} is not a power of two of at least {PAGE}"
            )));
        }
        let want = (want != 0).then_some(want);
        let mut state = self.state();
        let origin = Origin::new("hsa_amd_vmem_address_reserve (reserved, nothing mapped)");
        let addr = rt
            .arena
            .reserve(len, align, want, origin)
            .map_err(|source| Error::OutOfMemory {
                what: format!("a reservation of {len} bytes"),
                source,
            })?;
        state
            .reservations
            .insert(addr, Reservation { len, mappings: 0 });
        Ok(addr)
    }

    /// Frees the reservation at `va` of exactly `len` bytes (ROCr
    /// `VMemoryAddressFree`: unknown → invalid allocation, other size →
    /// invalid argument, still mapped → resource free).
    pub fn free(&self, rt: &Runtime, va: u64, len: u64) -> Result<(), VmemError> {
        let mut state = self.state();
        let r = state.reservations.get(&va).ok_or_else(|| {
            Error::InvalidAllocation(format!("{va:#x} is not the start of a reservation"))
        })?;
        if r.len != len {
            return Err(invalid(format!(
                "the reservation at {va:#x} is {} bytes, not {len}",
                r.len
            ))
            .into());
        }
        if r.mappings > 0 {
            return Err(VmemError::StillMapped {
                addr: va,
                mappings: r.mappings,
            });
        }
        rt.arena
            .unreserve(va, len, "hsa_amd_vmem_address_free")
            .map_err(Error::from)?;
        state.reservations.remove(&va);
        Ok(())
    }

    /// Makes a handle to `size` bytes of new memory from `pool` (ROCr
    /// `VMemoryHandleCreate` and its export: a bad pool or a size that is
    /// not a multiple of the granule is an invalid argument).
    pub fn create(&self, rt: &Runtime, pool: u64, size: u64, pinned: bool) -> Result<u64> {
        let p = rt
            .pool(pool)
            .map_err(|_| invalid(format!("{pool:#x} is not a memory pool")))?;
        if !p.allocatable() {
            return Err(invalid(
                "the group-segment pool cannot back a memory handle",
            ));
        }
        if size == 0 || !size.is_multiple_of(POOL_GRANULE) {
            return Err(invalid(format!(
                "size {size} is not a non-zero multiple of the pool's {POOL_GRANULE}-byte granule"
            )));
        }
        p.charge(size)?;
        let made = sealed_memfd(size).and_then(|fd| {
            let (_, id) =
                shareable_size(fd.as_fd()).map_err(|source| Error::NotShareable { source })?;
            Ok((fd, id))
        });
        let memory = match made {
            Ok((fd, id)) => Physical {
                fd,
                size,
                pool,
                charged: Some(p),
                pinned,
                id,
            },
            Err(e) => {
                p.release(size);
                return Err(e);
            }
        };
        Ok(self.add_handle(Arc::new(memory)))
    }

    fn add_handle(&self, memory: Arc<Physical>) -> u64 {
        let handle = fresh_handle();
        let record = HandleRecord {
            memory,
            refs: 1,
            uses: 0,
        };
        self.state().handles.insert(handle, record);
        handle
    }

    /// Drops one reference to a handle (ROCr `VMemoryHandleRelease`: an
    /// unknown or already released handle is an invalid allocation). Its
    /// memory lives on while mapped.
    pub fn release(&self, handle: u64) -> Result<()> {
        let mut state = self.state();
        let record = state
            .handles
            .get_mut(&handle)
            .filter(|r| r.refs > 0)
            .ok_or_else(|| unknown_handle(handle))?;
        record.refs -= 1;
        if record.refs == 0 && record.uses == 0 {
            state.handles.remove(&handle);
        }
        Ok(())
    }

    /// Maps `len` bytes of `handle`'s memory from `offset` at `va`, inside
    /// a reservation where nothing is mapped yet (ROCr `VMemoryHandleMap`:
    /// every refusal is an invalid argument). Kernels may not touch the
    /// range until [`VirtualMemory::set_access`] allows a GPU agent.
    pub fn map(&self, rt: &Runtime, va: u64, len: u64, offset: u64, handle: u64) -> Result<()> {
        if !(va | len | offset).is_multiple_of(PAGE) {
            return Err(invalid(format!(
                "address {va:#x}, size {len} and offset {offset} must be multiples of {PAGE}"
            )));
        }
        let mut state = self.state();
        let reservation = reservation_of(&state, va, len)?;
        if overlaps_mapping(&state, va, len) {
            return Err(invalid(format!("{va:#x}+{len} overlaps a mapped range")));
        }
        let record = state
            .handles
            .get(&handle)
            .ok_or_else(|| invalid(format!("{handle:#x} is not a memory handle")))?;
        let memory = record.memory.clone();
        if offset.checked_add(len).is_none_or(|end| end > memory.size) {
            return Err(invalid(format!(
                "offset {offset} + size {len} exceed the handle's {} bytes",
                memory.size
            )));
        }
        // SAFETY: the memfd was sealed against shrinking when it was made
        // (or checked to be when imported), so it stays `size` ≥ `offset +
        // len` bytes long for as long as anything maps it; its bytes are
        // reached only through the arena, atomically. (The handle's record,
        // which holds the descriptor, stays while this mapping counts as
        // one of its uses.)
        unsafe {
            rt.arena.map_shared(
                va,
                len,
                memory.fd.as_fd(),
                offset,
                Access::HostOnly,
                Origin::new("hsa_amd_vmem_map"),
            )
        }
        .map_err(|source| Error::VmemMap { va, len, source })?;
        if let Some(r) = state.handles.get_mut(&handle) {
            r.uses += 1;
        }
        if let Some(r) = state.reservations.get_mut(&reservation) {
            r.mappings += 1;
        }
        let mapping = Mapping {
            len,
            handle,
            reservation,
            perms: BTreeMap::new(),
        };
        state.mappings.insert(va, mapping);
        Ok(())
    }

    /// Unmaps the range mapped at `va`, of exactly `len` bytes (ROCr
    /// `VMemoryHandleUnmap`: nothing mapped there → invalid allocation,
    /// another size → invalid argument). The range reads as unmapped
    /// again; a released handle's memory is freed with its last mapping.
    pub fn unmap(&self, rt: &Runtime, va: u64, len: u64) -> Result<()> {
        let mut state = self.state();
        let m = state
            .mappings
            .get(&va)
            .ok_or_else(|| Error::InvalidAllocation(format!("nothing is mapped at {va:#x}")))?;
        if m.len != len {
            return Err(invalid(format!(
                "the mapping at {va:#x} is {} bytes, not {len}",
                m.len
            )));
        }
        let origin = Origin::internal("hsa_amd_vmem_unmap (reserved, nothing mapped)");
        rt.arena.unmap_shared(va, len, origin)?;
        let Some(m) = state.mappings.remove(&va) else {
            return Ok(());
        };
        if let Some(r) = state.reservations.get_mut(&m.reservation) {
            r.mappings -= 1;
        }
        if let Some(h) = state.handles.get_mut(&m.handle) {
            h.uses -= 1;
            if h.uses == 0 && h.refs == 0 {
                state.handles.remove(&m.handle);
            }
        }
        Ok(())
    }

    /// Sets agents' permissions on the mapped ranges that exactly tile
    /// `[va, va + len)` (ROCr `VMemorySetAccess`: a bad agent is checked
    /// first, a range outside a reservation is an invalid argument, one
    /// not tiled by mappings an invalid allocation). Every range is
    /// checked before any changes, so a refusal changes nothing.
    pub fn set_access(&self, rt: &Runtime, va: u64, len: u64, grants: &[(u64, u32)]) -> Result<()> {
        let mut asked = Vec::with_capacity(grants.len());
        for &(agent, perm) in grants {
            let a = rt.agent(agent)?;
            asked.push((a.index, Permission::from_raw(perm)?));
        }
        let mut state = self.state();
        reservation_of(&state, va, len)?;
        let ranges = tiling_mappings(&state, va, len)?;
        let mut plans = Vec::with_capacity(ranges.len());
        for &start in &ranges {
            let mut perms = state.mappings[&start].perms.clone();
            perms.extend(asked.iter().copied());
            let access = kernel_access(rt, &perms)?;
            plans.push((start, perms, access));
        }
        for (start, perms, access) in plans {
            let m = state.mappings.get_mut(&start).expect("checked above");
            rt.arena.set_mapped_access(start, m.len, access)?;
            m.perms = perms;
        }
        Ok(())
    }

    /// The permission GPU agent `agent` has on the mapping holding `va`
    /// (ROCr `VMemoryGetAccess`: no mapping → invalid allocation, then a
    /// bad or non-GPU agent → invalid agent; never set → none).
    pub fn get_access(&self, rt: &Runtime, va: u64, agent: u64) -> Result<Permission> {
        let state = self.state();
        let m = match state.mappings.range(..=va).next_back() {
            Some((&s, m)) if va < s + m.len => m,
            _ => {
                return Err(Error::InvalidAllocation(format!(
                    "{va:#x} is not inside a mapped range"
                )))
            }
        };
        let a = rt.agent(agent)?;
        if a.kind != AgentKind::Gpu {
            return Err(Error::InvalidHandle {
                kind: "agent",
                handle: agent,
            });
        }
        Ok(m.perms.get(&a.index).copied().unwrap_or(Permission::None))
    }

    /// A new descriptor for a handle's memory, for another process or a
    /// later import (ROCr `VMemoryExportShareableHandle`: an unknown handle
    /// is an invalid allocation). Flags are ignored, as ROCr does.
    pub fn export(&self, handle: u64) -> Result<OwnedFd> {
        let state = self.state();
        let record = state
            .handles
            .get(&handle)
            .ok_or_else(|| unknown_handle(handle))?;
        record
            .memory
            .fd
            .try_clone()
            .map_err(|source| Error::System {
                what: "duplicating the memfd",
                source,
            })
    }

    /// A new handle over the memory behind `fd` (ROCr
    /// `VMemoryImportShareableHandle`: a descriptor that is not shareable
    /// memory is incompatible). Memory this runtime exported keeps its
    /// pool and type; memory from another process is reported as the
    /// first GPU's device memory and charged to no pool here.
    pub fn import(&self, rt: &Runtime, fd: BorrowedFd<'_>) -> Result<u64, VmemError> {
        let not_shareable = |why| VmemError::NotShareable {
            fd: fd.as_raw_fd(),
            why,
        };
        let (size, id) = shareable_size(fd).map_err(not_shareable)?;
        let known = self
            .state()
            .handles
            .values()
            .find(|r| r.memory.id == id)
            .map(|r| r.memory.clone());
        let memory = match known {
            Some(m) => m,
            None => Arc::new(foreign(rt, fd, size, id)?),
        };
        Ok(self.add_handle(memory))
    }

    /// The handle mapped at `va`, with one more reference (ROCr
    /// `VMemoryRetainAllocHandle`: no mapping starts there → invalid
    /// allocation).
    pub fn retain(&self, va: u64) -> Result<u64> {
        let mut state = self.state();
        let handle = state
            .mappings
            .get(&va)
            .map(|m| m.handle)
            .ok_or_else(|| Error::InvalidAllocation(format!("no mapping starts at {va:#x}")))?;
        let record = state
            .handles
            .get_mut(&handle)
            .ok_or_else(|| unknown_handle(handle))?;
        record.refs = record
            .refs
            .checked_add(1)
            .ok_or_else(|| Error::OutOfResources("handle reference count".into()))?;
        Ok(handle)
    }

    /// The pool a handle's memory came from and whether it was made pinned
    /// (ROCr `VMemoryGetAllocPropertiesFromHandle`: an unknown handle is an
    /// invalid allocation).
    pub fn properties(&self, handle: u64) -> Result<(u64, bool)> {
        let state = self.state();
        let record = state
            .handles
            .get(&handle)
            .ok_or_else(|| unknown_handle(handle))?;
        Ok((record.memory.pool, record.memory.pinned))
    }
}

/// Physical memory over another process's memfd: kept open by a duplicate
/// of the descriptor, reported as the first GPU's device memory.
fn foreign(rt: &Runtime, fd: BorrowedFd<'_>, size: u64, id: (u64, u64)) -> Result<Physical> {
    let pool = rt
        .gpus()
        .next()
        .and_then(|g| {
            g.pools
                .iter()
                .copied()
                .find(|&p| rt.pool(p).is_ok_and(|p| p.kind == PoolKind::CoarseDevice))
        })
        .ok_or_else(|| invalid("no GPU device pool to import into"))?;
    let fd = fd.try_clone_to_owned().map_err(|source| Error::System {
        what: "duplicating the descriptor",
        source,
    })?;
    Ok(Physical {
        fd,
        size,
        pool,
        charged: None,
        pinned: false,
        id,
    })
}

/// The mapped ranges that tile `[va, va + len)` exactly, the first
/// starting at `va`.
fn tiling_mappings(state: &State, va: u64, len: u64) -> Result<Vec<u64>> {
    let end = va + len;
    let mut at = va;
    let mut ranges = Vec::new();
    while at < end {
        let m = state.mappings.get(&at).ok_or_else(|| {
            Error::InvalidAllocation(format!(
                "{va:#x}+{len} is not covered by whole mapped ranges (none starts at {at:#x})"
            ))
        })?;
        ranges.push(at);
        at += m.len;
    }
    if at != end {
        return Err(Error::InvalidAllocation(format!(
            "{va:#x}+{len} ends inside a mapped range"
        )));
    }
    Ok(ranges)
}

/// What kernels may do with a range given every agent's permission. The
/// GPU agents share one confinement, so they must agree; write-only has
/// no counterpart in it; the host always reaches the range, so the CPU
/// agent can only be granted read-write.
fn kernel_access(rt: &Runtime, perms: &BTreeMap<usize, Permission>) -> Result<Access> {
    let cpu_limited = rt.agents.iter().any(|a| {
        a.kind == AgentKind::Cpu
            && perms
                .get(&a.index)
                .is_some_and(|&p| p != Permission::ReadWrite)
    });
    if cpu_limited {
        return Err(Error::Unsupported(
            "limiting the CPU agent's access to a mapped range (the host shares the pages \
             the emulated GPU uses; only HSA_ACCESS_PERMISSION_RW can be granted to it)"
                .into(),
        ));
    }
    let mut gpu = rt
        .gpus()
        .map(|g| perms.get(&g.index).copied().unwrap_or(Permission::None));
    let first = gpu.next().unwrap_or(Permission::None);
    if gpu.any(|p| p != first) {
        return Err(Error::Unsupported(
            "different permissions for different GPU agents on one mapped range \
             (every GPU agent shares one arena and one confinement)"
                .into(),
        ));
    }
    match first {
        Permission::None => Ok(Access::HostOnly),
        Permission::ReadOnly => Ok(Access::ReadOnly),
        Permission::ReadWrite => Ok(Access::ReadWrite),
        Permission::WriteOnly => Err(Error::Unsupported(
            "HSA_ACCESS_PERMISSION_WO for a GPU agent (kernels are confined to \
             read-write, read-only or no access)"
                .into(),
        )),
    }
}

/// The reservation holding all of `[va, va + len)`.
fn reservation_of(state: &State, va: u64, len: u64) -> Result<u64> {
    let end = va
        .checked_add(len)
        .ok_or_else(|| invalid("range overflows"))?;
    match state.reservations.range(..=va).next_back() {
        Some((&start, r)) if end <= start + r.len => Ok(start),
        _ => Err(invalid(format!(
            "{va:#x}+{len} is not inside a reserved address range"
        ))),
    }
}

/// Whether `[va, va + len)` overlaps a mapped range.
fn overlaps_mapping(state: &State, va: u64, len: u64) -> bool {
    state
        .mappings
        .range(..va + len)
        .next_back()
        .is_some_and(|(&s, m)| s + m.len > va)
}

fn unknown_handle(handle: u64) -> Error {
    Error::InvalidAllocation(format!("{handle:#x} is not a live memory handle"))
}

/// A new memfd of `size` bytes, sealed so that nobody (another process it
/// is shared with included) can shrink or grow it: a shrink under a
/// mapping would make accesses raise SIGBUS.
fn sealed_memfd(size: u64) -> Result<OwnedFd> {
    let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: a NUL-terminated name and valid flags; the call returns a new
    // descriptor or -1.
    let raw = unsafe { libc::memfd_create(c"softgpu-vmem".as_ptr(), flags) };
    if raw < 0 {
        return Err(os_error("memfd_create"));
    }
    // SAFETY: `raw` is a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let len = libc::off_t::try_from(size).map_err(|_| invalid("size too large"))?;
    // SAFETY: resizing the memfd we own.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
        return Err(os_error("ftruncate"));
    }
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: adding seals to the memfd we own (made with sealing allowed).
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(os_error("sealing the memfd"));
    }
    Ok(fd)
}

fn os_error(what: &'static str) -> Error {
    Error::System {
        what,
        source: std::io::Error::last_os_error(),
    }
}

/// Why a descriptor is not shareable memory.
#[derive(Debug, thiserror::Error)]
pub enum Unshareable {
    /// `fstat` on it failed.
    #[error("fstat: {0}")]
    Stat(#[source] std::io::Error),
    #[error("not a memory file")]
    NotAFile,
    #[error("not a memfd sealed against shrinking")]
    NotSealed,
    #[error("its size {size} is not a non-zero multiple of {PAGE}")]
    Size { size: u64 },
}

/// The size of a descriptor's file when it is shareable memory: a memfd or
/// shared-memory file sealed against shrinking, a non-zero multiple of a
/// page long.
fn shareable_size(fd: BorrowedFd<'_>) -> std::result::Result<(u64, (u64, u64)), Unshareable> {
    // SAFETY: `stat` is plain data, valid when zeroed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is an open descriptor (borrowed for the call) and `st`
    // a writable stat buffer.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(Unshareable::Stat(std::io::Error::last_os_error()));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(Unshareable::NotAFile);
    }
    // SAFETY: F_GET_SEALS reads the seals of an open descriptor; it fails
    // (EINVAL) on files that are not shared memory.
    let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
    if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
        return Err(Unshareable::NotSealed);
    }
    let size = st.st_size as u64;
    if size == 0 || !size.is_multiple_of(PAGE) {
        return Err(Unshareable::Size { size });
    }
    Ok((size, (st.st_dev, st.st_ino)))
}
