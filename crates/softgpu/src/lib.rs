//! The safe Rust API of softgpu: devices, streams, buffers, kernels and
//! events, built on the runtime's AQL queues.
//!
//! Device addresses are host addresses in softgpu and the executor confines
//! every kernel access to memory the kernel may touch, so unlike on real
//! hardware a dispatch cannot corrupt the host: dispatch is safe, and a
//! wild access comes back as a structured [`KernelFault`].
//!
//! ```no_run
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
//! assert_eq!(out[0], 3.0);
//! # Ok::<(), softgpu::Error>(())
//! ```

//! A stream is fed by one thread at a time, so it is `Send` but not `Sync`:
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<softgpu::Stream>();
//! ```

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
    Error, FaultAllocation, FaultKind, FaultSite, FileError, KernelFault, QueueError, Result,
    RuntimeError,
};
pub use event::{Event, Readback, Submission};
pub use graph::{Graph, GraphExec, Node};
pub use instance::Instance;
pub use kernel::{ArgInfo, ArgKind, Args, Artifact, ExportInfo, Kernel, Module};
pub use scalar::Scalar;
#[cfg(feature = "compiler")]
pub use softgpu_compiler::{Compiler, Language};
pub use softgpu_exec::Checks;
pub use softgpu_exec::{jit::JitMode, Schedule};
pub use softgpu_runtime::profile::Profile;
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
