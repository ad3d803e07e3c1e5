//! Memory: pool allocations, host registration, copies, fills, pointer info.
//!
//! Every allocation comes from the one arena the executor confines kernels
//! to, and device addresses are host addresses, so a host program writes
//! through the pointers it is given. Host memory outside the arena becomes
//! reachable by kernels only when it is locked or registered.

use std::sync::Arc;

use softgpu_exec::arena::{Access, AllocSpec, Origin, Side};

use crate::agent::{Pool, PoolKind, POOL_GRANULE};
use crate::error::{invalid, Error, Result};
use crate::runtime::Runtime;
use crate::signal::{Condition, Order, Signal};

/// What a tracked address range is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocationKind {
    /// Allocated from the pool with this handle.
    Pool(u64),
    /// Host memory locked or registered with the runtime.
    Locked,
}

/// A tracked range.
#[derive(Clone, Debug)]
pub(crate) struct Allocation {
    pub len: u64,
    pub kind: AllocationKind,
    /// Index of the agent owning the memory.
    pub owner: usize,
    /// The value `hsa_amd_pointer_info_set_userdata` attached.
    pub user_data: u64,
    /// Locks taken on the same host range.
    pub lock_count: u32,
}

/// What `hsa_amd_pointer_info` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerInfo {
    pub kind: Option<AllocationKind>,
    /// Start and length of the range holding the pointer.
    pub base: u64,
    pub len: u64,
    /// Agent index owning it.
    pub owner: usize,
    pub user_data: u64,
}

impl Runtime {
    /// Allocates `len` bytes from a pool for an HSA client; returns the
    /// address.
    pub fn allocate(&self, pool_handle: u64, len: u64) -> Result<u64> {
        self.allocate_with(
            pool_handle,
            len,
            Origin::new("hsa_amd_memory_pool_allocate"),
            Access::ReadWrite,
        )
    }

    /// Allocates `len` bytes from a pool, recording who asked (for fault
    /// reports) and what kernels may do with them. The pool is charged
    /// whole granules. Kernels may touch exactly `len` bytes, except in the
    /// kernarg pool, whose allocations ROCr hands out as whole 4 KiB
    /// granules that kernels read: programs allocate a kernel's argument
    /// buffer at the size of its explicit arguments and the kernel reads
    /// its hidden arguments past them (AMD's own rocrtst does), so there
    /// the whole granule is readable, as on hardware.
    pub fn allocate_with(
        &self,
        pool_handle: u64,
        len: u64,
        origin: Origin,
        access: Access,
    ) -> Result<u64> {
        let pool = self.pools.get(pool_handle)?;
        if !pool.allocatable() {
            return Err(Error::InvalidAllocation(
                "the group-segment pool cannot be allocated from".into(),
            ));
        }
        if len == 0 {
            return Err(Error::InvalidAllocation("size 0".into()));
        }
        let size = len
            .checked_next_multiple_of(POOL_GRANULE)
            .ok_or_else(|| Error::OutOfResources(format!("{len} bytes")))?;
        pool.charge(size)?;
        let reach = if pool.kind == PoolKind::Kernarg {
            size
        } else {
            len
        };
        let spec = AllocSpec {
            len: reach,
            align: POOL_GRANULE,
            access,
            origin,
            // A discrete GPU's device memory, which the host does not
            // address: initcheck sees every write to it.
            device_only: pool.kind == PoolKind::CoarseDevice,
        };
        let addr = match self.arena.alloc_with(spec) {
            Ok(a) => a,
            Err(source) => {
                pool.release(size);
                return Err(Error::OutOfMemory {
                    what: format!("{len} bytes from the {:?} pool", pool.kind),
                    source,
                });
            }
        };
        self.track(addr, size, AllocationKind::Pool(pool_handle), pool.agent);
        Ok(addr)
    }

    fn track(&self, addr: u64, len: u64, kind: AllocationKind, owner: usize) {
        let mut all = self.allocations.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(
            addr,
            Allocation {
                len,
                kind,
                owner,
                user_data: 0,
                lock_count: 1,
            },
        );
    }

    /// Frees an allocation made by [`Runtime::allocate`].
    pub fn free(&self, addr: u64) -> Result<()> {
        if self.ipc_signals.holds(addr) {
            return Err(Error::InvalidAllocation(format!(
                "{addr:#x} holds an IPC signal's value: destroy the signal instead"
            )));
        }
        self.free_by(addr, "hsa_amd_memory_pool_free")
    }

    /// Frees an allocation made by [`Runtime::allocate_with`]; `by` names
    /// the API call in reports of later accesses to the freed memory.
    pub fn free_by(&self, addr: u64, by: &'static str) -> Result<()> {
        let mut all = self.allocations.lock().unwrap_or_else(|e| e.into_inner());
        let Some(Allocation {
            kind: AllocationKind::Pool(pool),
            len,
            ..
        }) = all.get(&addr).cloned()
        else {
            return Err(Error::InvalidAllocation(format!(
                "{addr:#x} is not the start of a live allocation"
            )));
        };
        all.remove(&addr);
        drop(all);
        if let Some(vmem) = self.vmem_if_used() {
            vmem.ipc_forget(self, addr)?;
        }
        self.arena.free_by(addr, by)?;
        if let Ok(pool) = self.pools.get(pool) {
            pool.release(len);
        }
        Ok(())
    }

    /// Makes `len` bytes of host memory at `addr` reachable by kernels at
    /// the same address; a range already in device memory needs nothing.
    ///
    /// # Safety
    /// As for [`softgpu_exec::arena::Arena::register_host`]: the range must
    /// stay valid host memory until [`Runtime::unlock`] has undone the
    /// last lock and no kernel that might touch it still runs, and Rust code
    /// may access it only atomically meanwhile.
    pub unsafe fn lock(&self, addr: u64, len: u64) -> Result<u64> {
        if len == 0 || addr == 0 {
            return Err(invalid("lock of a null pointer or zero bytes"));
        }
        if self.in_device_memory(addr) {
            return Ok(addr);
        }
        let mut all = self.allocations.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = all.get_mut(&addr) {
            if a.kind == AllocationKind::Locked && a.len == len {
                a.lock_count += 1;
                return Ok(addr);
            }
        }
        // SAFETY: forwarded: the caller keeps the range valid, and accesses
        // it only atomically, until it is unlocked and no kernel uses it.
        unsafe { self.arena.register_host(addr, len) }?;
        all.insert(
            addr,
            Allocation {
                len,
                kind: AllocationKind::Locked,
                owner: 0,
                user_data: 0,
                lock_count: 1,
            },
        );
        Ok(addr)
    }

    /// Whether `addr` lies in a live allocation of the arena itself (not in
    /// host memory registered with it, which `lock` counts).
    fn in_device_memory(&self, addr: u64) -> bool {
        let base = self.arena.base();
        (base..base + self.arena.space()).contains(&addr)
            && self.arena.allocation_of(addr).is_some()
    }

    /// Undoes one [`Runtime::lock`] of `addr`.
    pub fn unlock(&self, addr: u64) -> Result<()> {
        let mut all = self.allocations.lock().unwrap_or_else(|e| e.into_inner());
        match all.get_mut(&addr) {
            Some(a) if a.kind == AllocationKind::Locked => {
                a.lock_count -= 1;
                if a.lock_count == 0 {
                    all.remove(&addr);
                    self.arena.unregister_host(addr)?;
                }
                Ok(())
            }
            // Device memory: locking it did nothing.
            _ if self.in_device_memory(addr) => Ok(()),
            _ => Err(invalid(format!("{addr:#x} is not locked host memory"))),
        }
    }

    /// What the runtime knows about the memory holding `addr`.
    pub fn pointer_info(&self, addr: u64) -> PointerInfo {
        let all = self.allocations.lock().unwrap_or_else(|e| e.into_inner());
        match all.range(..=addr).next_back() {
            Some((&start, a)) if addr - start < a.len => PointerInfo {
                kind: Some(a.kind),
                base: start,
                len: a.len,
                owner: a.owner,
                user_data: a.user_data,
            },
            _ => PointerInfo {
                kind: None,
                base: 0,
                len: 0,
                owner: 0,
                user_data: 0,
            },
        }
    }

    /// Attaches a client value to the allocation starting at `addr`.
    pub fn set_user_data(&self, addr: u64, value: u64) -> Result<()> {
        let mut all = self.allocations.lock().unwrap_or_else(|e| e.into_inner());
        let a = all
            .get_mut(&addr)
            .ok_or_else(|| invalid(format!("{addr:#x} is not the start of an allocation")))?;
        a.user_data = value;
        Ok(())
    }

    /// Copies `len` bytes (the ranges may overlap). Addresses inside the
    /// arena must lie in live allocations and are accessed with relaxed
    /// atomics ([`softgpu_exec::arena::copy`]), so a kernel racing on them
    /// races atomically; others are host memory, checked to be mapped
    /// first ([`softgpu_exec::arena::host`]), so a wild host pointer is
    /// [`softgpu_exec::arena::MemError::Unmapped`], never a signal.
    ///
    /// # Safety
    /// A range outside the arena that is mapped must stay mapped for the
    /// call and not be memory Rust code references other than atomically
    /// (a C client's buffers are what it is for).
    pub unsafe fn copy(&self, dst: u64, src: u64, len: u64) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let to = self.check_side(dst, len, "destination")?;
        let from = self.check_side(src, len, "source")?;
        let n = usize::try_from(len).map_err(|_| invalid("copy size overflows"))?;
        // SAFETY: device sides were checked to lie in live allocations (so
        // inside the mapping, which `self.arena` keeps alive, and accessed
        // only atomically, as all arena memory is); host sides are the
        // caller's promise. `copy` allows overlap.
        unsafe { softgpu_exec::arena::copy(to, from, n) }?;
        self.arena.mark_written(dst, len);
        Ok(())
    }

    /// Fills `count` 32-bit words at `addr` with `value`, device memory
    /// with relaxed atomic stores and host memory checked, as
    /// [`Runtime::copy`].
    ///
    /// # Safety
    /// As for [`Runtime::copy`] for an address outside the arena.
    pub unsafe fn fill(&self, addr: u64, value: u32, count: u64) -> Result<()> {
        if !addr.is_multiple_of(4) {
            return Err(invalid("fill address must be 4-byte aligned"));
        }
        let len = count
            .checked_mul(4)
            .ok_or_else(|| invalid("fill size overflows"))?;
        let dst = self.check_side(addr, len, "fill destination")?;
        let count = usize::try_from(count).map_err(|_| invalid("fill size overflows"))?;
        // SAFETY: 4-aligned; inside one live allocation (checked above, and
        // only accessed atomically) or host memory the caller vouches for.
        unsafe { softgpu_exec::arena::fill_u32(dst, value, count) }?;
        self.arena.mark_written(addr, len);
        Ok(())
    }

    /// Repeats `pattern` over the `len` bytes at `addr` (its first byte at
    /// `addr`, the last repetition cut short), checked once for the whole
    /// range as [`Runtime::copy`] checks its sides, then written at copy
    /// speed ([`softgpu_exec::arena::fill_pattern`]). HIP's `hipMemset*`.
    ///
    /// # Safety
    /// As for [`Runtime::copy`] for an address outside the arena.
    pub unsafe fn fill_pattern(&self, addr: u64, len: u64, pattern: &[u8]) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        if pattern.is_empty() {
            return Err(invalid("fill pattern is empty"));
        }
        let dst = self.check_side(addr, len, "fill destination")?;
        let n = usize::try_from(len).map_err(|_| invalid("fill size overflows"))?;
        // SAFETY: inside one live allocation (checked above; the mapping
        // lives as long as `self.arena`) or host memory the caller vouches
        // for, which `fill_pattern` checks is mapped writable.
        unsafe { softgpu_exec::arena::fill_pattern(dst, pattern, n) }?;
        self.arena.mark_written(addr, len);
        Ok(())
    }

    /// Which side of a transfer `[addr, addr + len)` is: wholly inside one
    /// live device allocation, or wholly outside the arena (host memory,
    /// registered or not, checked when touched). Straddling or wild arena
    /// addresses are refused.
    pub fn check_side(&self, addr: u64, len: u64, what: &str) -> Result<Side> {
        if addr == 0 {
            return Err(invalid(format!("{what} is null")));
        }
        let end = addr
            .checked_add(len)
            .ok_or_else(|| invalid(format!("{what} range overflows")))?;
        let base = self.arena.base();
        let arena_end = base + self.arena.space();
        let outside = end <= base || addr >= arena_end;
        if outside {
            return Ok(Side::Host(addr));
        }
        // The arena's own bounds: exactly the bytes the client asked for.
        match self.arena.allocation_of(addr) {
            Some((start, size)) if end <= start + size => Ok(Side::Device(addr)),
            _ => Err(invalid(format!(
                "{what} {addr:#x}+{len} is not inside one live device allocation"
            ))),
        }
    }

    /// [`Runtime::check_side`] for a transfer about to be queued, with a
    /// host side checked to be mapped ([`softgpu_exec::arena::host::check`];
    /// writable for a destination), so a wild host pointer is refused by
    /// the call that names it rather than failing the queue later.
    pub fn check_queued(&self, addr: u64, len: u64, what: &str, write: bool) -> Result<Side> {
        let side = self.check_side(addr, len, what)?;
        if let Side::Host(at) = side {
            softgpu_exec::arena::host::check(at, len, write)?;
        }
        Ok(side)
    }

    /// Checks that `[addr, addr + len)` is memory a device may use: inside
    /// one live allocation, or inside one registered (locked) host range,
    /// for its whole length. For the side of a copy or fill that the call
    /// declares to be device memory (HIP's `hipMemcpyHostToDevice`
    /// destination, a fill's target): a host pointer there is the client's
    /// mistake, refused before anything is touched.
    pub fn check_device(&self, addr: u64, len: u64, what: &str) -> Result<()> {
        self.check_side(addr, len, what)?;
        let end = addr.saturating_add(len.max(1));
        match self.arena.allocation_of(addr) {
            Some((start, size)) if end <= start + size.max(1) => Ok(()),
            _ => Err(invalid(format!(
                "{what} {addr:#x}+{len} is not device memory: it is not inside one live \
                 allocation or registered host range{}",
                self.nearest(addr)
            ))),
        }
    }

    /// ", nearest: …" naming the allocation nearest `addr`, for messages.
    fn nearest(&self, addr: u64) -> String {
        let all = self.allocations.lock().unwrap_or_else(|e| e.into_inner());
        let below = all.range(..=addr).next_back();
        let above = all.range(addr.saturating_add(1)..).next();
        let distance = |(&start, a): (&u64, &Allocation)| {
            if addr < start {
                start - addr
            } else {
                addr.saturating_sub(start + a.len)
            }
        };
        match [below, above]
            .into_iter()
            .flatten()
            .min_by_key(|&e| distance(e))
        {
            Some((&start, a)) => {
                let what = match a.kind {
                    AllocationKind::Pool(_) => "allocation",
                    AllocationKind::Locked => "locked host range",
                };
                format!("; the nearest is a {}-byte {what} at {start:#x}", a.len)
            }
            None => String::new(),
        }
    }

    /// Runs `work` once every dependency signal is 0, then decrements
    /// `completion` (HSA's asynchronous copy and fill). Work whose
    /// dependencies are already met runs before returning; otherwise a
    /// thread waits for them, so no copy ever blocks another.
    pub fn after_signals(
        &self,
        deps: Vec<Arc<Signal>>,
        completion: Option<Arc<Signal>>,
        work: impl FnOnce() -> Result<()> + Send + 'static,
    ) {
        let ready = deps.iter().all(|d| d.load(Order::Acquire) == 0);
        let run = move || {
            for d in &deps {
                d.wait(
                    Condition::Eq,
                    0,
                    None,
                    crate::signal::WaitHint::Blocked,
                    Order::Acquire,
                );
            }
            let start = crate::trace::now_ns();
            if let Err(e) = work() {
                eprintln!("softgpu: asynchronous copy failed: {e}");
            }
            if let Some(c) = completion {
                c.set_times(start, crate::trace::now_ns());
                c.subtract(1, Order::Release);
            }
        };
        if ready {
            run();
        } else {
            std::thread::spawn(run);
        }
    }

    /// The pool behind a handle.
    pub fn pool(&self, handle: u64) -> Result<Arc<Pool>> {
        self.pools.get(handle)
    }
}
