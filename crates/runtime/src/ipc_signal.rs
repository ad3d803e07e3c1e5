//! Signals shared between processes (`HSA_AMD_SIGNAL_IPC`,
//! `hsa_amd_ipc_signal_create`/`attach`).
//!
//! As in ROCr (`IPCSignal` in `ipc_signal.cpp`), an IPC signal's value
//! lives in a page of shareable memory, and its handle is the IPC memory
//! handle of that page: the signal is made over a page of the first GPU's
//! device pool, `create_handle` shares the page (`VirtualMemory::
//! ipc_create`), and attaching maps it (`ipc_attach`) and makes a signal
//! over the mapping. Loads, stores, atomics and waits in either process
//! then act on one value. A change made in another process notifies no
//! waiter here, so parked waiters on shared signals look again every
//! [`SHARED_RECHECK`](crate::signal::SHARED_RECHECK); attaching in the
//! process that made the signal gives a second handle to the same signal,
//! as ROCr's `Signal::DuplicateHandle` does, so waiters there are woken at
//! once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use crate::agent::PoolKind;
use crate::error::{invalid, Result};
use crate::runtime::Runtime;
use crate::signal::Signal;
use crate::vmem::ipc::IPC_HANDLE_WORDS;
use softgpu_exec::arena::{Access, Origin};

/// Bytes of the page an IPC signal's value lives in.
const PAGE: u64 = 4096;

/// What the 8 bytes after an IPC signal's value hold, so that attaching
/// a handle of shared memory that is not a signal is refused (as ROCr
/// refuses memory without its signal block) rather than making a signal
/// of whatever the memory holds.
const MARK: u64 = u64::from_le_bytes(*b"SGPUSIGN");

/// The IPC signals this process made: the address of each one's page and
/// the signal, for attaching in this process and for handles.
#[derive(Default)]
pub struct IpcSignals {
    made: Mutex<HashMap<u64, Weak<Signal>>>,
}

impl IpcSignals {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Weak<Signal>>> {
        self.made.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `page` holds the value of an IPC signal made here.
    pub(crate) fn holds(&self, page: u64) -> bool {
        self.lock().contains_key(&page)
    }
}

impl Runtime {
    /// A signal holding `initial` that other processes can attach
    /// (`hsa_amd_signal_create` with `HSA_AMD_SIGNAL_IPC`); returns its
    /// handle.
    pub fn create_ipc_signal(self: &Arc<Self>, initial: i64) -> Result<u64> {
        let pool = self
            .gpus()
            .flat_map(|a| a.pools.iter().copied())
            .find(|&p| self.pool(p).is_ok_and(|p| p.kind == PoolKind::CoarseDevice))
            .ok_or_else(|| invalid("no GPU device pool to hold an IPC signal"))?;
        let origin = Origin::new("hsa_amd_signal_create (an IPC signal's value)");
        let page = self.allocate_with(pool, PAGE, origin, Access::ReadWrite)?;
        self.arena.write(page, &initial.to_le_bytes())?;
        self.arena.write(page + 8, &MARK.to_le_bytes())?;
        let weak = Arc::downgrade(self);
        let release = Box::new(move || {
            if let Some(rt) = weak.upgrade() {
                rt.ipc_signals.lock().remove(&page);
                let _ = rt.free_by(page, "hsa_signal_destroy (an IPC signal)");
            }
        });
        // SAFETY: the page is a live, 4 KiB-aligned arena allocation, freed
        // only by `release` (`Runtime::free` refuses it to clients), and the
        // arena never unmaps its own range.
        let signal = Arc::new(unsafe { self.signal_over(page, release) });
        self.ipc_signals
            .lock()
            .insert(page, Arc::downgrade(&signal));
        Ok(self.signals.insert(signal))
    }

    /// The handle another process attaches to share IPC signal `signal`
    /// (`hsa_amd_ipc_signal_create`); an invalid argument for a signal
    /// made without `HSA_AMD_SIGNAL_IPC`, as in ROCr.
    pub fn ipc_signal_handle(self: &Arc<Self>, signal: u64) -> Result<[u32; IPC_HANDLE_WORDS]> {
        let signal = self.signal(signal)?;
        let page = self
            .ipc_signals
            .lock()
            .iter()
            .find(|(_, s)| std::ptr::eq(s.as_ptr(), Arc::as_ptr(&signal)))
            .map(|(&page, _)| page)
            .ok_or_else(|| {
                invalid("the signal was not made interprocess (hsa_amd_signal_create with HSA_AMD_SIGNAL_IPC)")
            })?;
        self.vmem().ipc_create(self, page, PAGE)
    }

    /// A signal over the IPC signal `handle` names (from this process or
    /// another); returns its handle here.
    pub fn attach_ipc_signal(self: &Arc<Self>, handle: &[u32; IPC_HANDLE_WORDS]) -> Result<u64> {
        let vmem = self.vmem();
        if let Some(page) = vmem.exported_by_this_process(handle) {
            let made = self.ipc_signals.lock().get(&page).and_then(Weak::upgrade);
            return match made {
                Some(signal) => Ok(self.signals.insert(signal)),
                None => Err(invalid(
                    "the IPC handle names shared memory of this process that holds no IPC signal",
                )),
            };
        }
        let va = vmem.ipc_attach_held(self, handle, PAGE)?;
        let mut mark = [0u8; 8];
        let marked = self.arena.read(va + 8, &mut mark).is_ok() && u64::from_le_bytes(mark) == MARK;
        if !marked {
            vmem.ipc_detach_held(self, va)?;
            return Err(invalid(
                "the IPC handle names shared memory that holds no IPC signal (hsa_amd_ipc_memory_create's, not hsa_amd_ipc_signal_create's)",
            ));
        }
        let weak = Arc::downgrade(self);
        let release = Box::new(move || {
            if let Some(rt) = weak.upgrade() {
                let _ = rt.vmem().ipc_detach_held(&rt, va);
            }
        });
        // SAFETY: `va` is a fresh page-aligned mapping of the shared page,
        // unmapped only by `release` (`ipc_detach` refuses it to clients).
        let signal = unsafe { self.signal_over(va, release) };
        Ok(self.signals.insert(Arc::new(signal)))
    }

    /// A shared signal over the arena's `page`, keeping the arena alive.
    ///
    /// # Safety
    /// `page` is 8-byte aligned inside the arena and stays mapped until
    /// `release` has run.
    unsafe fn signal_over(&self, page: u64, release: Box<dyn FnOnce() + Send + Sync>) -> Signal {
        let arena = self.arena.clone();
        let release = Box::new(move || {
            release();
            drop(arena);
        });
        // SAFETY: as this function's contract, and the arena it lies in
        // lives until `release` has run (it holds a reference).
        unsafe { Signal::shared(page as *mut i64, release) }
    }
}
