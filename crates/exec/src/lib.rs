//! The softgpu executor: runs decoded AMD RDNA kernels over a confined
//! device arena, a whole wave per instruction, workgroups in parallel.
//!
//! A runtime uses it in this order:
//!
//! 1. [`Device::new`] (or [`Device::with_arena`] to share an [`Arena`]
//!    between devices) from a [`DeviceConfig`].
//! 2. [`Device::load`] a code object into a [`Program`]; find the kernel
//!    with [`Program::kernel`].
//! 3. Allocate and fill memory ([`Device::alloc_from`], or the
//!    [`arena`] directly), and lay out kernel arguments ([`Arg`], or
//!    [`build_kernarg`] for a runtime that places the segment itself).
//! 4. Describe the dispatch in a [`DispatchDesc`] and run it with
//!    [`Device::dispatch`] ([`Device::check`] checks one without running
//!    it). It returns a [`DispatchOutcome`] (its [`DispatchStats`] and, if
//!    asked, an [`InstructionProfile`]) or a [`DispatchError`], a
//!    [`Fault`] report when the kernel faulted.
//!
//! Sanitizers and wave order are [`Checks`] and [`Schedule`]; the compute
//! units workgroups run on are a [`Topology`] and, per dispatch,
//! [`ComputeUnits`].

// Float predicates are written exactly as the ISA defines them for NaN:
// `!(a >= b)` (true for NaN) is not `a < b`, and `a < b || a > b` is not
// `a != b`. Clippy's suggestions would change results, so they are off.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::double_comparisons)]

// Device memory, every access checked: public because the runtime is built
// on it (allocation, protection, host registration, virtual memory).
pub use softgpu_arena as arena;

// The AQL packet and queue descriptor layouts: the executor builds and
// reads packets behind a kernel's dispatch pointer, and the runtime's
// queues hold them.
pub mod packet;

// The behaviours of the real parts the executor honours, by name, for the
// profiles that list them.
pub mod quirks;

// Implementation: the dispatch path, instruction semantics, the JIT tier,
// the sanitizers and the watchdog. Their public items are the crate's only
// through the re-exports below.
mod abi;
mod checks;
mod desc;
mod device;
mod dispatch;
mod fault;
mod gws;
mod jit;
mod ops;
mod placement;
mod pool;
mod profile;
mod program;
mod sanitize;
mod schedule;
mod synccheck;
mod watch;
mod wave;

// Hidden: the one-wave bench the instruction-level tests (tests/instructions,
// an integration test and so a separate crate) drive single instructions
// on, with the register file and trap types they inspect. Not an interface.
#[doc(hidden)]
pub mod harness;

pub use arena::{Access, Arena, Origin};
pub use checks::{Checks, Schedule, DEFAULT_TIMEOUT};
pub use desc::{DispatchDesc, DispatchOutcome, Grid, InMemory, Kernarg, RawDispatch};
pub use device::{
    build_kernarg, build_kernarg_with, check_private_segment, default_scratch_limit,
    max_private_segment_bytes, Arg, Buffer, Device, DeviceConfig, DispatchError, Launch,
    LaunchRule, Services, DEFAULT_DISPATCH_BUDGET, MAX_WAVE_SCRATCH_BYTES,
};
pub use dispatch::DispatchStats;
pub use fault::{Alone, Errors, Fault, FaultKind, Site, Wait, WaveState};
pub use jit::JitMode;
pub use placement::{ComputeUnits, Topology};
pub use profile::{InstructionProfile, SlotCount, SlotEntry};
pub use program::{Program, EAGER_TEXT_BYTES, TIER_UP_INSTRUCTIONS};
