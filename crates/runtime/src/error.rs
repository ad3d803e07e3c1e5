//! The runtime's error type. The C ABI maps each variant to an HSA status.

/// Anything a runtime operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("the runtime is not initialised (call hsa_init first)")]
    NotInitialized,
    /// `hsa_init` once more than ROCr allows (`INT32_MAX` clients).
    #[error("the runtime already has the most clients it counts ({})", MAX_CLIENTS)]
    RefcountOverflow,
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("invalid {kind} handle {handle:#x} (stale, forged or of another kind)")]
    InvalidHandle { kind: &'static str, handle: u64 },
    #[error("out of resources: {0}")]
    OutOfResources(String),
    #[error("invalid allocation: {0}")]
    InvalidAllocation(String),
    #[error("invalid code object: {0}")]
    InvalidCodeObject(String),
    #[error("incompatible code object: {0}")]
    IncompatibleCodeObject(String),
    #[error("executable is frozen")]
    FrozenExecutable,
    #[error("executable is not frozen")]
    NotFrozen,
    #[error("no symbol named {0}")]
    InvalidSymbolName(String),
    #[error("queue creation: {0}")]
    InvalidQueueCreation(String),
    #[error("not supported by softgpu: {0}")]
    Unsupported(String),
    /// Memory the runtime's own hardware structures still use (a live
    /// queue's ring) was asked to be freed.
    #[error("memory in use: {0}")]
    InUse(String),
    #[error("a variable named {0} is already defined")]
    VariableAlreadyDefined(String),
    #[error("{0}")]
    Device(#[from] softgpu_exec::DispatchError),
    #[error("device memory: {0}")]
    Memory(#[from] softgpu_exec::arena::MemError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The most clients the process-wide runtime counts, as ROCr
/// (`Runtime::Acquire` refuses at `INT32_MAX`).
pub const MAX_CLIENTS: usize = i32::MAX as usize;

/// Shorthand for [`Error::InvalidArgument`].
pub fn invalid(why: impl Into<String>) -> Error {
    Error::InvalidArgument(why.into())
}
