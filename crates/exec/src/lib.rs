//! The softgpu executor: runs decoded AMD RDNA kernels over a confined
//! device arena, a whole wave per instruction, workgroups in parallel.
//!
//! - [`arena`]: device memory, every access checked.
//! - [`program`]: a code object placed in memory and decoded once.
//! - [`wave`]: one wave's registers, laid out `[register][lane]`.
//! - [`ops`]: instruction semantics as tables of small generic handlers.
//! - [`jit`]: the JIT tier, blocks of ALU code compiled to host SIMD code.
//! - [`checks`]: the opt-in sanitizers, the watchdog and the schedule.
//! - [`dispatch`]: the launch ABI, the wave scheduler and worker threads.
//! - [`placement`]: the compute units workgroups are placed on (CU masks).
//! - `pool`: the persistent helper threads dispatches run on.
//! - [`profile`]: per-instruction execution counts of a profiled dispatch.
//! - [`device`]: the public entry point.
//! - [`harness`]: a one-wave bench for instruction-level tests.

// Float predicates are written exactly as the ISA defines them for NaN:
// `!(a >= b)` (true for NaN) is not `a < b`, and `a < b || a > b` is not
// `a != b`. Clippy's suggestions would change results, so they are off.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::double_comparisons)]

pub mod arena;
pub mod checks;
pub mod device;
pub mod dispatch;
pub mod fault;
pub mod gws;
pub mod harness;
pub mod jit;
pub mod ops;
pub mod placement;
mod pool;
pub mod profile;
pub mod program;
pub mod sanitize;
mod schedule;
mod synccheck;
pub mod watch;
pub mod wave;

pub use checks::{Checks, Schedule, DEFAULT_TIMEOUT};
pub use device::{
    build_kernarg, build_kernarg_with, check_private_segment, default_scratch_limit,
    max_private_segment_bytes, Arg, Buffer, Device, DeviceConfig, DispatchError, Launch,
    LaunchRule, RawDispatch, Services, DEFAULT_DISPATCH_BUDGET, MAX_WAVE_SCRATCH_BYTES,
};
pub use dispatch::DispatchStats;
pub use fault::{Fault, FaultKind, Site, Wait, WaveState};
pub use placement::{ComputeUnits, Topology};
pub use profile::{InstructionProfile, SlotCount, SlotEntry};
pub use program::Program;
