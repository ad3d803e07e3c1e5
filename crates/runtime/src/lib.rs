//! The HSA model over the softgpu executor, in safe Rust.
//!
//! A [`Runtime`] is the process-wide state behind `hsa_init`: the agents
//! (one CPU agent and one or more GPU agents, each GPU an executor
//! [`softgpu_exec::Device`] over one shared arena), their memory pools,
//! signals, user-mode AQL queues with a packet processor thread each, and
//! executables. Everything a client names is a generation-checked handle
//! ([`handle`]), so a stale or forged handle is an error, never undefined
//! behaviour. The C ABI (`softgpu-hsa`) is a thin translation of this API.
//!
//! - [`profile`]: device profiles (JSON) and their selection.
//! - [`agent`]: agents, ISAs and memory pools.
//! - [`memory`]: allocation, copies, fills, host registration, pointer info.
//! - [`signal`]: HSA signals and async signal handlers.
//! - [`queue`]: AQL queues and their packet processors.
//! - [`packet`]: `hsa_queue_t` and the AQL packets as `#[repr(C)]` structs.
//! - [`occupancy`]: resident waves of a kernel on the real part.
//! - [`estimate`]: an analytical estimate of a dispatch's time on the real part.
//! - [`cu_mask`]: CU masks (per queue and `HSA_CU_MASK`), as ROCr applies them.
//! - [`executable`]: code object readers, executables and symbols.
//! - [`printf`]: device printf formatting, output sinks, buffered printf.
//! - [`hostcall`]: the hostcall buffer and listener (HIP's default printf).
//! - [`devmem`]: device-side `malloc`: the heap and its memory service.
//! - [`statistics`]: the latest dispatches' counts, occupancy and estimate.
//! - [`trace`]: the JSON-lines event trace and dispatch capture.
//! - [`vmem`]: virtual memory: reservations, memory handles, mappings.
//! - [`ipc_signal`]: signals shared between processes.

pub mod agent;
pub mod capture;
pub mod config;
pub mod cu_mask;
pub mod devmem;
pub mod error;
pub mod estimate;
pub mod exec;
pub mod executable;
pub mod handle;
pub mod hostcall;
pub mod ipc_signal;
pub mod memory;
pub mod occupancy;
/// `hsa_queue_t` and the AQL packets (the executor reads the same layout
/// behind a kernel's dispatch pointer, so it is defined there).
pub use softgpu_exec::packet;
pub mod printf;
pub mod profile;
pub mod queue;
pub mod report;
pub mod runtime;
pub mod signal;
pub mod statistics;
pub mod trace;
pub mod vmem;

pub use config::Config;
pub use error::{Error, Result};
pub use runtime::Runtime;
