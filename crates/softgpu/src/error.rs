//! The one error type of the safe API.

use std::fmt;
use std::sync::Arc;

/// The executor's fault report, which a [`KernelFault`] carries whole.
pub use softgpu_runtime::exec::Fault;

/// The instruction a kernel fault happened at, as the executor reported
/// it: workgroup, wave, lane and work-item, pc, code offset, the
/// instruction and its bytes, the address and size of the access, and the
/// source lines.
pub use softgpu_runtime::exec::Site as FaultSite;

/// The allocation a faulting access hit or missed: its base and length,
/// the API call that made it (and freed it), the host call stack when it
/// was made ([`crate::Config::backtraces`]).
pub use softgpu_runtime::exec::Allocation as FaultAllocation;

pub use softgpu_runtime::exec::FaultKind;

/// A kernel fault: what the executor stopped the dispatch for.
///
/// It carries the executor's whole report ([`KernelFault::fault`]), so
/// tools and tests can point at the exact workgroup, wave, lane and
/// instruction; its `Display` is the executor's report, the same text
/// every interface prints (HIP, HSA, the CLI): kernel, reason, pc and
/// instruction, source lines, workgroup, wave, lane and HIP coordinates,
/// address, argument, allocation, the waves in flight of a runaway
/// dispatch, and the launch's other errors.
#[derive(Clone, Debug, PartialEq)]
#[repr(transparent)]
pub struct KernelFault(Fault);

impl KernelFault {
    /// The executor's report, whole.
    pub fn fault(&self) -> &Fault {
        &self.0
    }

    /// The executor's report, whole.
    pub fn into_fault(self) -> Fault {
        self.0
    }

    /// The kernel's name (as in the code object: mangled for C++).
    pub fn kernel(&self) -> &str {
        &self.0.kernel
    }

    /// What went wrong, in a sentence.
    pub fn reason(&self) -> &str {
        &self.0.reason
    }

    /// What kind of fault it is.
    pub fn kind(&self) -> FaultKind {
        self.0.kind
    }

    /// Where, when an instruction was to blame.
    pub fn site(&self) -> Option<&FaultSite> {
        self.0.site.as_ref()
    }

    /// The faulting wave's workgroup id in each dimension (HIP's
    /// `blockIdx`), when an instruction was to blame.
    pub fn workgroup(&self) -> Option<[u32; 3]> {
        self.site().map(|s| s.workgroup)
    }

    /// The faulting wave's index in its workgroup.
    pub fn wave(&self) -> Option<u32> {
        self.site().map(|s| s.wave)
    }

    /// The lane to blame, when one lane's access faulted.
    pub fn lane(&self) -> Option<usize> {
        self.site().and_then(|s| s.lane)
    }

    /// That lane's work-item id in its workgroup (HIP's `threadIdx`).
    pub fn thread(&self) -> Option<[u32; 3]> {
        self.site().and_then(|s| s.thread)
    }

    /// Device address of the faulting instruction.
    pub fn pc(&self) -> Option<u64> {
        self.site().map(|s| s.pc)
    }

    /// The faulting instruction's disassembly.
    pub fn instruction(&self) -> Option<&str> {
        self.site().map(|s| s.instruction.as_str())
    }

    /// The memory address involved, if any.
    pub fn address(&self) -> Option<u64> {
        self.site().and_then(|s| s.address)
    }

    /// For a memory fault: the allocation the access hit or missed.
    pub fn allocation(&self) -> Option<&FaultAllocation> {
        self.0.allocation.as_ref()
    }

    /// The kernel argument pointing into that allocation, when known.
    pub fn argument(&self) -> Option<&str> {
        self.0.argument.as_deref()
    }

    /// The launch's other errors, when it ran past them
    /// ([`crate::Checks::contain`]), in the order found (the first
    /// [`softgpu_runtime::exec::Errors::RECORDED`])…
    pub fn others(&self) -> impl ExactSizeIterator<Item = &KernelFault> {
        self.0.others.recorded.iter().map(KernelFault::from_ref)
    }

    /// …and how many more it had than [`KernelFault::others`] yields.
    pub fn unrecorded(&self) -> u64 {
        self.0.others.unrecorded
    }

    /// How many errors the launch had: this one and its others.
    pub fn error_count(&self) -> u64 {
        self.0.error_count()
    }

    /// The executor's report seen as a `KernelFault`.
    fn from_ref(fault: &Fault) -> &KernelFault {
        // SAFETY: `KernelFault` is `repr(transparent)` over `Fault`, so
        // both references have the same layout and validity; the lifetime
        // is kept.
        unsafe { &*(fault as *const Fault as *const KernelFault) }
    }
}

impl From<Fault> for KernelFault {
    fn from(f: Fault) -> KernelFault {
        KernelFault(f)
    }
}

impl From<&Fault> for KernelFault {
    fn from(f: &Fault) -> KernelFault {
        KernelFault(f.clone())
    }
}

/// The executor's report (see [`KernelFault`]).
impl fmt::Display for KernelFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for KernelFault {}

/// Why a file could not be read.
pub use softgpu_codeobj::FileError;
/// A compiler failure and its diagnostics.
#[cfg(feature = "compiler")]
pub use softgpu_compiler::{CompileError, Diagnostic};
/// Why a stream's queue stopped (a kernel fault is reported as
/// [`Error::Fault`] instead).
pub use softgpu_runtime::queue::QueueError;
/// The runtime's error (an HSA-level refusal: out of resources, a bad
/// code object, an invalid handle).
pub use softgpu_runtime::Error as RuntimeError;

/// Anything the safe API can fail with.
///
/// Errors from the layers below are kept whole: [`std::error::Error::source`]
/// returns the runtime's, compiler's or queue's own error, so a caller can
/// match on it (see [`Error::is_out_of_memory`], [`Error::diagnostics`]).
/// The sources are shared (`Arc`) so that every waiter on a failed stream
/// gets the same error.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The runtime refused (out of memory, bad code object, bad handle).
    #[error("runtime: {0}")]
    Runtime(#[source] Arc<RuntimeError>),
    /// The device's target is not the one asked for.
    #[error("device {index} is {actual}, not {wanted}")]
    WrongTarget {
        /// The device's index.
        index: usize,
        /// The processor asked for.
        wanted: String,
        /// The device's processor.
        actual: String,
    },
    /// No such device: the index, and how many devices there are.
    #[error("no device {index} (there are {count})")]
    NoDevice {
        /// The index asked for.
        index: i64,
        /// How many GPUs there are.
        count: usize,
    },
    /// A view or range lies outside its buffer (or overflows).
    #[error("range {start}..{end} is outside a buffer of {len} bytes")]
    OutOfBounds {
        /// First byte of the range.
        start: u64,
        /// One past its last byte (saturated when it overflows).
        end: u64,
        /// The buffer's (or view's) length.
        len: u64,
    },
    /// A kernel argument does not match the kernel's metadata.
    #[error("kernel {kernel}: argument {index} ({name}): {why}")]
    Argument {
        /// The kernel's name.
        kernel: String,
        /// The argument's position (explicit arguments only).
        index: usize,
        /// The argument as the metadata names it.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The kernel takes a different number of arguments.
    #[error("kernel {kernel} takes {expected} arguments ({names}), got {given}")]
    ArgumentCount {
        /// The kernel's name.
        kernel: String,
        /// The arguments it takes.
        expected: usize,
        /// The arguments given.
        given: usize,
        /// Its arguments, named, comma-separated.
        names: String,
    },
    /// Bindings or constants of a [`crate::Stream::dispatch`] do not match
    /// the kernel's [`crate::ExportInfo`].
    #[error("kernel {kernel} takes {expected} {what}, got {given}")]
    Bindings {
        /// The kernel's name.
        kernel: String,
        /// `"bindings"`, `"constant bytes"` or `"index constants"`.
        what: &'static str,
        /// How many the kernel takes.
        expected: usize,
        /// How many were given.
        given: usize,
    },
    /// A launch the device cannot run (shape, LDS).
    #[error("kernel {kernel}: bad launch: {why}")]
    Launch {
        /// The kernel's name.
        kernel: String,
        /// What is wrong with the launch.
        why: String,
    },
    /// The code object has no kernel of that name.
    #[error("no kernel named {name}; the module has: {available}")]
    NoSuchKernel {
        /// The name asked for.
        name: String,
        /// The kernels the module has, comma-separated.
        available: String,
    },
    /// A dispatched kernel faulted.
    #[error("{0}")]
    Fault(Box<KernelFault>),
    /// The stream's queue stopped for another reason (a failed host
    /// operation, an invalid packet, a failed dependency).
    #[error("stream failed: {0}")]
    Stream(#[source] Arc<QueueError>),
    /// The stream's queue stopped before reaching the work waited for,
    /// without saying why.
    #[error("the stream stopped before this point")]
    Stopped,
    /// Two values that must agree do not (sizes of a copy, element sizes).
    #[error("invalid: {0}")]
    Invalid(String),
    /// Compiling source failed; [`Error::diagnostics`] lists the
    /// compiler's diagnostics.
    #[cfg(feature = "compiler")]
    #[error("compile: {0}")]
    Compile(#[source] Arc<CompileError>),
    /// A memory budget would be exceeded.
    #[error("{what} of {bytes} bytes exceeds the memory budget ({free} of {limit} bytes free)")]
    Budget {
        /// What was being charged (an allocation, staging, scratch).
        what: String,
        /// Its size.
        bytes: u64,
        /// Bytes of the budget left.
        free: u64,
        /// The budget's limit.
        limit: u64,
    },
    /// Reading a file failed.
    #[error("{0}")]
    Io(#[source] Arc<FileError>),
}

impl Error {
    /// Whether the runtime ran out of resources: device memory or a pool
    /// of it (most often), or a thread or memory file it needed. A budget
    /// refusal is [`Error::Budget`] instead.
    pub fn is_out_of_memory(&self) -> bool {
        use softgpu_runtime::exec::MemError;
        match self {
            Error::Runtime(e) => {
                e.lacks_resources()
                    || matches!(**e, RuntimeError::Memory(MemError::Exhausted { .. }))
            }
            _ => false,
        }
    }

    /// The compiler's diagnostics, when compiling failed on the source.
    #[cfg(feature = "compiler")]
    pub fn diagnostics(&self) -> Option<&[Diagnostic]> {
        match self {
            Error::Compile(e) => match &**e {
                CompileError::Diagnostics { diagnostics, .. } => Some(diagnostics),
                _ => None,
            },
            _ => None,
        }
    }
}

impl From<RuntimeError> for Error {
    fn from(e: RuntimeError) -> Error {
        Error::Runtime(Arc::new(e))
    }
}

#[cfg(feature = "compiler")]
impl From<CompileError> for Error {
    fn from(e: CompileError) -> Error {
        Error::Compile(Arc::new(e))
    }
}

/// A [`crate::Config`] setting refused: the runtime's invalid argument.
impl From<softgpu_runtime::exec::ConfigError> for Error {
    fn from(e: softgpu_runtime::exec::ConfigError) -> Error {
        Error::Runtime(Arc::new(RuntimeError::Config(e)))
    }
}

impl From<softgpu_runtime::exec::MemError> for Error {
    fn from(e: softgpu_runtime::exec::MemError) -> Error {
        Error::Runtime(Arc::new(RuntimeError::Memory(e)))
    }
}

impl From<FileError> for Error {
    fn from(e: FileError) -> Error {
        Error::Io(Arc::new(e))
    }
}

impl From<&QueueError> for Error {
    fn from(e: &QueueError) -> Error {
        match e {
            QueueError::KernelFault(f) => Error::Fault(Box::new(KernelFault::from(&**f))),
            other => Error::Stream(Arc::new(other.clone())),
        }
    }
}

/// Shorthand result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
