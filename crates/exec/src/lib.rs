//! The softgpu executor: runs decoded AMD RDNA kernels over a confined
//! device arena, a whole wave per instruction, workgroups in parallel.
//!
//! A runtime uses it in this order:
//!
//! 1. [`Device::new`] (or [`Device::with_arena`] to share an [`Arena`]
//!    between devices) from a [`DeviceConfig`]: the processor, memory and
//!    compute units, and the execution [`Settings`] (threads, budget,
//!    timeout, sanitizers, schedule, scratch limit, JIT), each checked as
//!    it is set.
//! 2. [`Device::load`] a code object into a [`Program`]; find the kernel
//!    with [`Program::kernel`].
//! 3. Allocate and fill memory ([`Device::alloc_from`], or the
//!    [`arena`] directly), and lay out kernel arguments ([`Arg`], or
//!    [`build_kernarg`] for a runtime that places the segment itself).
//! 4. Describe the dispatch in a [`DispatchDesc`] and run it with
//!    [`Device::dispatch`] ([`Device::check`] checks one without running
//!    it). It returns a [`DispatchOutcome`] (its [`DispatchCounters`] and, if
//!    asked, its per-instruction [`Hotspots`]) or a [`DispatchError`], a
//!    [`Fault`] report when the kernel faulted.
//!
//! Sanitizers and wave order are [`Checks`] and [`Schedule`]; the compute
//! units workgroups run on are a [`Topology`] and, per dispatch,
//! [`ComputeUnits`].

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

// Implementation: the machine that runs dispatches (devices, workgroup
// scheduling, the launch ABI, faults and their reports, the watchdog, grid
// barriers). Instruction semantics, programs and the sanitizers are the
// interpreter's (softgpu-interp), compiled blocks the JIT's (softgpu-jit).
// Their public items are the crate's only through the re-exports below.
mod abi;
mod args;
mod config;
mod desc;
mod device;
mod dispatch;
mod error;
mod fault;
mod gws;
mod hotspots;
mod plan;
mod pool;
mod schedule;
mod synccheck;
mod tier;
mod watch;

// Hidden: the one-wave bench the instruction-level tests (tests/instructions,
// an integration test and so a separate crate) drive single instructions
// on, with the register file and trap types they inspect. Not an interface.
#[doc(hidden)]
pub mod harness;

pub use arena::{Access, Arena, Origin};
pub use args::{build_kernarg, build_kernarg_with, Arg, Buffer, Launch, Services};
pub use config::{default_scratch_limit, DeviceConfig, Settings, DEFAULT_DISPATCH_BUDGET};
pub use desc::{DispatchDesc, DispatchOutcome, Grid, InMemory, Kernarg, RawDispatch};
pub use device::{
    check_private_segment, max_private_segment_bytes, Device, MAX_WAVE_SCRATCH_BYTES,
};
pub use dispatch::DispatchCounters;
pub use error::{ConfigError, DispatchError, LaunchRule};
pub use fault::{Alone, Errors, Fault, Site, Wait, WaveState};
pub use softgpu_interp::checks::{Checks, Schedule, DEFAULT_TIMEOUT};
pub use softgpu_interp::placement::{ComputeUnits, Topology};
pub use softgpu_interp::trap::FaultKind;
pub use tier::JitMode;
// Hidden: tests and the load benchmark look at which blocks a kernel's
// unit compiled; the blocks are the executor's own.
pub use hotspots::{Hotspots, SlotCount, SlotEntry};
pub use softgpu_interp::program::NoSuchKernel;
pub use softgpu_interp::program::{Program, EAGER_TEXT_BYTES, TIER_UP_INSTRUCTIONS};
#[cfg(feature = "jit")]
#[doc(hidden)]
pub use softgpu_jit::Jit;
