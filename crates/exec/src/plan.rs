//! What a dispatch runs with: everything fixed for it, shared by all its
//! workers and read by the fault reports.

use softgpu_arena::Arena;
use softgpu_codeobj::Kernel;
use softgpu_interp::checks::{Checks, Schedule};
use softgpu_interp::placement::ComputeUnits;
use softgpu_interp::program::Program;

/// Everything fixed for the dispatch, shared by all workers.
pub struct Plan<'a> {
    pub program: &'a Program,
    pub kernel: &'a Kernel,
    pub arena: &'a Arena,
    /// Number of workgroups in each dimension.
    pub groups: [u32; 3],
    /// Work-items in each dimension of the grid (may end in a partial group).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub lds_bytes: usize,
    pub scratch_lane_bytes: usize,
    /// The private memory all waves of the dispatch may materialise.
    pub scratch_budget: std::sync::Arc<softgpu_interp::wave::PrivateBudget>,
    pub kernarg: u64,
    /// The arena's serial when the dispatch was queued (`None`: just now),
    /// for refusing accesses to memory reallocated since.
    pub epoch: Option<u32>,
    pub dispatch_packet: u64,
    pub queue: u64,
    pub dispatch_id: u64,
    pub threads: usize,
    /// Wave instructions the whole dispatch may run (all waves together)
    /// before it is stopped as a runaway.
    pub budget: u64,
    /// Sanitizers on for this dispatch.
    pub checks: Checks,
    /// Wall-clock limit of the dispatch.
    pub timeout: std::time::Duration,
    pub schedule: Schedule,
    /// How compiled blocks run.
    pub jit: crate::tier::JitMode,
    /// The compute units workgroups are placed on (not empty).
    pub units: ComputeUnits,
}

impl Plan<'_> {
    /// Lanes per wave.
    pub fn lanes(&self) -> usize {
        if self.kernel.descriptor.wave32 {
            32
        } else {
            64
        }
    }
}
