//! The one error type of the safe API.

use std::fmt;
use std::sync::Arc;

/// Where a kernel fault happened, as the executor reported it.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultSite {
    /// Workgroup id in each dimension.
    pub workgroup: [u32; 3],
    /// Wave index inside the workgroup.
    pub wave: u32,
    /// The lane to blame, when one lane's access faulted.
    pub lane: Option<usize>,
    /// That lane's work-item ID in its workgroup (HIP's `threadIdx`;
    /// `workgroup` is `blockIdx`).
    pub thread: Option<[u32; 3]>,
    /// Device address of the faulting instruction.
    pub pc: u64,
    /// Offset of that instruction in the code object.
    pub offset: u64,
    /// The instruction's disassembly.
    pub instruction: String,
    /// The memory address involved, if any.
    pub address: Option<u64>,
    /// The bytes the access at `address` spans, for a memory access.
    pub size: Option<u64>,
    /// The instruction's source location (innermost first, then the
    /// functions it was inlined into), when the code object has line
    /// tables (`-g`, `-gline-tables-only`).
    pub source: Vec<softgpu_codeobj::SourceFrame>,
}

/// A kernel fault: what the executor stopped the dispatch for.
///
/// Kept as data (not just a message) so tools and tests can point at the
/// exact workgroup, wave, lane and instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelFault {
    /// The kernel's name.
    pub kernel: String,
    /// What went wrong, in a sentence.
    pub reason: String,
    /// Where, when an instruction was to blame.
    pub site: Option<FaultSite>,
    /// What kind of fault it is.
    pub kind: FaultKind,
    /// For a memory fault: the allocation the access hit or missed.
    pub allocation: Option<FaultAllocation>,
    /// The kernel argument pointing into that allocation, when known.
    pub argument: Option<String>,
    /// The launch's other errors, when it ran past them
    /// (`Checks::contain`), in the order found…
    pub others: Vec<KernelFault>,
    /// …and how many more it had than `others` records.
    pub unrecorded: u64,
    /// The whole report, as printed.
    report: String,
}

pub use softgpu_runtime::exec::FaultKind;

/// The allocation a faulting access hit or missed.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultAllocation {
    /// Device address of its first byte.
    pub base: u64,
    /// Its length in bytes.
    pub len: u64,
    /// The API call that made it (e.g. `Stream::allocate`, `hipMalloc`).
    pub allocated_by: String,
    /// The API call that freed it, when the access reached freed memory.
    pub freed_by: Option<String>,
    /// The host call stack when it was made ([`crate::Config::backtraces`]).
    pub backtrace: Option<String>,
}

impl From<&softgpu_runtime::exec::Fault> for KernelFault {
    fn from(f: &softgpu_runtime::exec::Fault) -> KernelFault {
        KernelFault {
            kernel: f.kernel.clone(),
            reason: f.reason.clone(),
            site: f.site.as_ref().map(|s| FaultSite {
                workgroup: s.workgroup,
                wave: s.wave,
                lane: s.lane,
                thread: s.thread,
                pc: s.pc,
                offset: s.offset,
                instruction: s.instruction.clone(),
                address: s.address,
                size: s.size,
                source: s.source.clone(),
            }),
            kind: f.kind,
            allocation: f.allocation.as_ref().map(|a| FaultAllocation {
                base: a.base,
                len: a.len,
                allocated_by: a.allocated_by.clone(),
                freed_by: a.freed_by.clone(),
                backtrace: a.backtrace.clone(),
            }),
            argument: f.argument.clone(),
            others: f.others.recorded.iter().map(KernelFault::from).collect(),
            unrecorded: f.others.unrecorded,
            report: f.to_string(),
        }
    }
}

/// The executor's report, the same text every interface prints (HIP, HSA,
/// the CLI): kernel, reason, pc and instruction, source lines, workgroup,
/// wave, lane and HIP coordinates, address, argument, allocation, and the
/// launch's other errors.
impl fmt::Display for KernelFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

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
            Error::Runtime(e) => matches!(
                **e,
                RuntimeError::OutOfResources(_)
                    | RuntimeError::OutOfMemory { .. }
                    | RuntimeError::PoolFull { .. }
                    | RuntimeError::Spawn { .. }
                    | RuntimeError::System { .. }
                    | RuntimeError::Memory(MemError::Exhausted { .. })
            ),
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
