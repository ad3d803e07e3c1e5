//! The executor's values a client of the runtime works with: kernel
//! arguments and the kernarg layout, the execution [`Settings`] of a
//! [`crate::Config`] (sanitizers, schedule, JIT mode, …) and their
//! [`ConfigError`], fault reports (their sites, in-flight waves and the
//! allocations they name) and memory errors, allocation origins, the
//! quirks of the parts it honours. The Rust
//! API and the HIP library reach the executor only through these (and the
//! runtime's own calls); `softgpu-exec` itself stays behind the runtime.

pub use softgpu_exec::arena::{Access, Allocation, MemError, Origin};
pub use softgpu_exec::quirks;
pub use softgpu_exec::{
    build_kernarg_with, check_private_segment, Arg, Checks, ConfigError, DispatchError, Errors,
    Fault, FaultKind, JitMode, Schedule, Services, Settings, Site, Wait, WaveState,
};
