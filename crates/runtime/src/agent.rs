//! Agents, their ISAs and memory pools.
//!
//! The system has one CPU agent and N GPU agents (`SOFTGPU_DEVICES`, default
//! 1). Each GPU agent is an executor device; all of them share one arena,
//! because HSA's system memory (kernargs, fine-grained buffers) must be
//! reachable by every agent, as it is on the APU this models.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use softgpu_exec::Device;

use crate::error::{Error, Result};
use crate::profile::Profile;

/// What an agent is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    Cpu,
    Gpu,
}

/// One HSA agent.
pub struct Agent {
    /// Position in the runtime's agent list (the CPU agent is 0).
    pub index: usize,
    pub kind: AgentKind,
    /// The GPU's profile (for the CPU agent, the profile of GPU 0, whose
    /// memory sizes give the system pools).
    pub profile: Arc<Profile>,
    /// The executor, for GPU agents.
    pub device: Option<Arc<Device>>,
    /// Handles of this agent's memory pools, in reporting order.
    pub pools: Vec<u64>,
    /// Handle of this agent's ISA (GPU agents).
    pub isa: Option<u64>,
}

impl Agent {
    /// The executor of a GPU agent.
    pub fn device(&self) -> Result<&Arc<Device>> {
        self.device
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("the CPU agent cannot run kernels".into()))
    }

    /// Name HSA reports: the processor for GPUs, the host CPU's model name.
    pub fn name(&self) -> String {
        match self.kind {
            AgentKind::Gpu => self.profile.name.clone(),
            AgentKind::Cpu => host_cpu_name(),
        }
    }

    /// Vendor HSA reports: the profile's for GPUs, the host CPU's vendor.
    pub fn vendor(&self) -> String {
        match self.kind {
            AgentKind::Gpu => self.profile.vendor.clone(),
            AgentKind::Cpu => host_cpu_vendor(),
        }
    }
}

/// The host's CPU model name, from /proc/cpuinfo.
pub fn host_cpu_name() -> String {
    cpuinfo_field("model name").unwrap_or_else(|| "host CPU".into())
}

/// The host CPU's vendor (`AuthenticAMD`, `GenuineIntel`, …), from
/// /proc/cpuinfo; `CPU` when it does not say.
pub fn host_cpu_vendor() -> String {
    cpuinfo_field("vendor_id").unwrap_or_else(|| "CPU".into())
}

/// The first value of `key` in /proc/cpuinfo.
fn cpuinfo_field(key: &str) -> Option<String> {
    std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| {
        t.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().to_string())
    })
}

/// The kinds of memory pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    /// A GPU's coarse-grained device memory.
    CoarseDevice,
    /// Fine-grained system memory (CPU agent).
    FineSystem,
    /// Fine-grained system memory whose coherence extends to the device
    /// scope of every agent (`HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED`):
    /// the same memory as [`PoolKind::FineSystem`].
    ExtFineSystem,
    /// Coarse-grained system memory (CPU agent): the same memory again,
    /// coherent only at dispatch boundaries by contract.
    CoarseSystem,
    /// Fine-grained system memory for kernel arguments (CPU agent).
    Kernarg,
    /// A GPU's LDS (group segment); reported, not allocatable.
    Group,
}

/// A memory pool (and the legacy region of the same memory).
pub struct Pool {
    pub kind: PoolKind,
    /// The agent owning the pool.
    pub agent: usize,
    /// Bytes the pool holds.
    pub capacity: u64,
    /// Bytes allocated from it now: shared by the pools over the same
    /// memory (the CPU agent's system pools), as in ROCr, where they are
    /// views of one heap.
    pub used: Arc<AtomicU64>,
}

/// Allocation granule and alignment of the global pools.
pub const POOL_GRANULE: u64 = 4096;

impl Pool {
    pub fn new(kind: PoolKind, agent: usize, capacity: u64) -> Pool {
        Pool {
            kind,
            agent,
            capacity,
            used: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A pool of another kind over `other`'s memory: same owner, same
    /// capacity, one count of what is allocated.
    pub fn sharing(kind: PoolKind, other: &Pool) -> Pool {
        Pool {
            kind,
            agent: other.agent,
            capacity: other.capacity,
            used: other.used.clone(),
        }
    }

    /// Whether `other` is a view of the same memory (one allocation count).
    pub fn same_memory(&self, other: &Pool) -> bool {
        Arc::ptr_eq(&self.used, &other.used)
    }

    /// Bytes not allocated now.
    pub fn free_bytes(&self) -> u64 {
        self.capacity
            .saturating_sub(self.used.load(Ordering::Relaxed))
    }

    /// Whether clients may allocate from this pool.
    pub fn allocatable(&self) -> bool {
        self.kind != PoolKind::Group
    }

    pub fn fine_grained(&self) -> bool {
        matches!(
            self.kind,
            PoolKind::FineSystem | PoolKind::ExtFineSystem | PoolKind::Kernarg
        )
    }

    /// Charges `bytes` against the pool's capacity.
    pub fn charge(&self, bytes: u64) -> Result<()> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                u.checked_add(bytes).filter(|&n| n <= self.capacity)
            })
            .map(|_| ())
            .map_err(|used| Error::PoolFull {
                pool: self.kind,
                requested: bytes,
                free: self.capacity - used,
                capacity: self.capacity,
            })
    }

    pub fn release(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// An instruction set an agent supports.
pub struct Isa {
    /// Full name, e.g. `amdgcn-amd-amdhsa--gfx1151`.
    pub name: String,
    pub profile: Arc<Profile>,
}
