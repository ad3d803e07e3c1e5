//! The safe Rust API of softgpu: devices, streams, buffers, kernels,
//! events and graphs on a software AMD RDNA3 GPU, with the names and
//! signatures of hrx-rs.
//!
//! # A first kernel
//!
//! A [`Stream`] is an ordered, asynchronous queue of work on a [`Device`].
//! Calls enqueue and return; waits ([`Stream::synchronize`], the
//! `*_blocking` transfers, [`Readback::wait`]) return the first failure of
//! the work before them, a kernel fault included.
//!
//! ```
//! use softgpu::{Args, Device, Language};
//!
//! let device = Device::open(0)?;
//! let stream = device.stream()?;
//! let module = stream.compile(
//!     "__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }",
//!     Language::OpenCl,
//! )?;
//! let twice = module.kernel("twice")?;
//! let x = stream.allocate(4 * 256)?;
//! stream.upload(&x, &[1.5f32; 256])?;
//! stream.dispatch_args(&twice, 4, 64, &Args::new().view(&x))?;
//! let out: Vec<f32> = stream.read_vec(&x)?;
//! assert_eq!(out, vec![3.0; 256]);
//! # Ok::<(), softgpu::Error>(())
//! ```
//!
//! # hrx's form: bindings and constants
//!
//! Every function hrx-rs also has takes hrx's arguments in hrx's order:
//! sizes and offsets are `usize` bytes, transfers take the destination
//! first, and [`Stream::dispatch`] takes the kernel's pointer arguments as
//! views (bindings) and its value arguments packed in a [`Constants`],
//! both checked against [`Kernel::info`]. A program written for hrx runs
//! with only `use softgpu as hrx;`.
//!
//! ```
//! # let device = softgpu::Device::open(0)?;
//! # let stream = device.stream()?;
//! # let module = stream.compile(
//! #     "__kernel void axpy(__global const float* x, __global float* y, float a) {
//! #          uint i = get_global_id(0); y[i] += a * x[i]; }",
//! #     softgpu::Language::OpenCl,
//! # )?;
//! let axpy = module.kernel("axpy")?;
//! assert_eq!((axpy.info().binding_count, axpy.info().constant_byte_length), (2, 4));
//! let (x, y) = (stream.allocate(4 * 64)?, stream.allocate_zeroed(4 * 64)?);
//! stream.upload(x.binding(), &[1.0f32; 64])?;
//! let mut constants = softgpu::Constants::new();
//! constants.push(3.0f32)?;
//! stream.dispatch(&axpy, [1, 1, 1], [64, 1, 1], &constants, &[x.binding(), y.binding()])?;
//! let mut out = [0.0f32; 64];
//! stream.read_blocking(y.binding(), &mut out)?;
//! assert_eq!(out, [3.0; 64]);
//! # Ok::<(), softgpu::Error>(())
//! ```
//!
//! # Safety
//!
//! Device addresses are host addresses in softgpu, and the executor
//! confines every kernel access to memory the kernel may touch (its
//! buffers, its code, its arguments read-only). So unlike on hardware a
//! dispatch cannot corrupt the host or a neighbouring buffer: `load` and
//! `dispatch`, `unsafe` in hrx, are safe here, and a wild access comes
//! back as a structured [`KernelFault`] naming the kernel, workgroup,
//! wave, lane, instruction, address and the allocation it missed. The one
//! `unsafe` call is [`Stream::import_host`], which lends host memory to
//! the device.
//!
//! # Configuration
//!
//! [`Device::open`] is a GPU of a default instance: one gfx1151, every
//! setting at its default. An [`Instance`] built from a [`Config`] sets
//! the GPUs (mixed targets allowed), the executor's [`Settings`] (worker
//! threads, instruction budget, timeout, sanitizers, schedule, scratch
//! limit, JIT), trace file and capture folder in code; instances are
//! independent. As in wasmtime, each setter checks its value and returns
//! a [`ConfigError`] naming the setting when it cannot have it, so a
//! `Config` that exists is valid. The library never reads environment variables (the
//! C libraries and the CLI turn `SOFTGPU_*` into a `Config` through the
//! `softgpu-env` crate).
//!
//! # Features
//!
//! Both are on by default; a program that does without them builds less
//! than half the crates (no Cranelift, no compiler driver).
//!
//! - `compiler`: `Stream::compile` and `Compiler`, OpenCL C and HIP
//!   source through clang-19. Without it, kernels come from code objects
//!   ([`Stream::load`], [`Stream::load_bytes`]).
//! - `jit`: the executor's JIT tier (Cranelift), which runs hot code as
//!   compiled blocks. Without it the interpreter runs everything, with the
//!   same results, more slowly; [`JitMode::default`] is then
//!   [`JitMode::Off`], and a [`Config`] asking for [`JitMode::On`] or
//!   [`JitMode::Verify`] is refused when its [`Instance`] is made, the
//!   error naming the feature.
//!
//! # Errors
//!
//! One [`Error`] type. A kernel fault is [`Error::Fault`]; the runtime's,
//! compiler's and queue's errors are kept whole as the error's
//! [`source`](std::error::Error::source) ([`RuntimeError`],
//! [`CompileError`] with its [`Diagnostic`]s, [`QueueError`]).
//!
//! A stream is fed by one thread at a time, so it is `Send` but not `Sync`:
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<softgpu::Stream>();
//! ```

#![warn(missing_docs)]

mod budget;
mod buffer;
mod constants;
mod device;
mod error;
mod event;
mod graph;
mod instance;
mod kernel;
mod lane;
mod scalar;
mod scratch;
mod services;
mod staging;
mod stream;

/// Where device printf output goes: the C library's `stdout`/`stderr` by
/// default; [`printf::set_sink`] installs another [`printf::Sink`] (for
/// example a [`printf::CaptureSink`] in tests).
pub mod printf {
    pub use softgpu_runtime::printf::{set_sink, CaptureSink, OutStream, Sink, StdioSink};
}

pub use budget::MemoryBudget;
pub use buffer::{Buffer, View};
pub use constants::Constants;
pub use device::{Device, Target};
#[cfg(feature = "compiler")]
pub use error::{CompileError, Diagnostic};
pub use error::{
    Error, Fault, FaultAllocation, FaultKind, FaultSite, FileError, KernelFault, QueueError,
    Result, RuntimeError,
};
pub use event::{Event, Readback, Submission};
pub use graph::{Graph, GraphExec, Node};
pub use instance::Instance;
pub use kernel::{ArgInfo, ArgKind, Args, Artifact, ExportInfo, Kernel, Module};
pub use scalar::Scalar;
#[cfg(feature = "compiler")]
pub use softgpu_compiler::{Compiler, Language};
pub use softgpu_runtime::estimate::{Bound, Estimate, Work};
pub use softgpu_runtime::exec::Checks;
pub use softgpu_runtime::exec::{ConfigError, JitMode, Schedule, Settings};
pub use softgpu_runtime::occupancy::{Limit, Occupancy};
pub use softgpu_runtime::profile::{Fidelity, Profile};
/// The statistics of one dispatch ([`Instance::dispatch_statistics`]).
pub use softgpu_runtime::statistics::DispatchStatistics;
pub use softgpu_runtime::Config;
pub use stream::{Dim3, HostFn, Pattern, Stream};

/// Compile-time checks of the thread-safety promises.
#[allow(dead_code)]
fn _assert_traits() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<Stream>();
    send_sync::<Buffer>();
    send_sync::<Event>();
    send_sync::<Kernel>();
    send_sync::<Device>();
    send_sync::<Module>();
}
