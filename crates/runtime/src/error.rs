//! The runtime's error type. The C ABI maps each variant to an HSA status.
//!
//! A failure caused by another typed error (an I/O error, a JSON error,
//! the arena's [`MemError`], a code object's error) keeps it as its
//! [`source`](std::error::Error::source), with the context the runtime
//! adds in the variant's fields; the message still says everything.

use std::path::PathBuf;

use softgpu_exec::arena::MemError;

use crate::agent::PoolKind;
use crate::vmem::{Unshareable, VmemError};

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
    /// A setting of the runtime's [`crate::Config`] given a value it
    /// cannot have (reported as an invalid argument).
    #[error("invalid argument: {0}")]
    Config(#[from] softgpu_exec::ConfigError),
    #[error("invalid {kind} handle {handle:#x} (stale, forged or of another kind)")]
    InvalidHandle { kind: &'static str, handle: u64 },
    #[error("out of resources: {0}")]
    OutOfResources(String),
    /// Device memory or address space for `what` could not be had (an
    /// allocation from a pool, a queue's ring, a hostcall or printf
    /// buffer, a virtual-memory reservation): the arena's refusal.
    #[error("out of resources: {what}: {source}")]
    OutOfMemory {
        what: String,
        #[source]
        source: MemError,
    },
    /// A pool's capacity would be exceeded.
    #[error(
        "out of resources: {pool:?} pool: {requested} bytes requested, {free} of {capacity} free"
    )]
    PoolFull {
        pool: PoolKind,
        requested: u64,
        free: u64,
        capacity: u64,
    },
    /// A thread the runtime needs (a queue's packet processor, a hostcall
    /// listener) could not be started.
    #[error("out of resources: {thread} thread: {source}")]
    Spawn {
        thread: String,
        #[source]
        source: std::io::Error,
    },
    /// A system call on memory the runtime manages (creating, sizing,
    /// sealing or duplicating a memfd) failed.
    #[error("out of resources: {what}: {source}")]
    System {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid allocation: {0}")]
    InvalidAllocation(String),
    #[error("invalid code object: {0}")]
    InvalidCodeObject(String),
    /// A code object the loader refused: its error.
    #[error("invalid code object: {0}")]
    CodeObject(#[source] softgpu_codeobj::Error),
    /// A code object built for another GPU (or a bundle without this
    /// GPU's code): the loader's error.
    #[error("incompatible code object: {0}")]
    IncompatibleCodeObject(#[source] softgpu_codeobj::Error),
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
    /// A device profile (`Profile::named_or_path`, `Profile::from_json`)
    /// that could not be read or parsed; `place` is the file or the field
    /// at fault, when the cause does not name it.
    #[error("device profile{}: {source}", place_of(.place))]
    Profile {
        place: Option<String>,
        #[source]
        source: DataError,
    },
    /// A file the runtime was configured to write (the trace file, the
    /// check report, a capture folder) could not be created or written.
    #[error("{what} {}: {source}", .path.display())]
    Output {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A JSON-lines trace (`trace::chrome_trace`) that could not be read:
    /// the line at fault (from 1).
    #[error("trace line {line}: {source}")]
    Trace {
        line: usize,
        #[source]
        source: DataError,
    },
    /// A capture (`Capture::load`, `Capture::replay`) that could not be
    /// written or read: the file at fault.
    #[error("capture{}: {source}", unless_named(.path, .source))]
    Capture {
        path: PathBuf,
        #[source]
        source: DataError,
    },
    /// A captured buffer that cannot be placed at its captured address in
    /// this process's arena for a replay.
    #[error("buffer {buffer} cannot be placed at its captured address {address:#x}: {source} (the arena is at {arena:#x} in this process)")]
    CaptureAddress {
        buffer: usize,
        address: u64,
        arena: u64,
        #[source]
        source: MemError,
    },
    /// A memory handle's pages that could not be mapped into a
    /// reservation (`hsa_amd_vmem_map`).
    #[error("invalid argument: mapping {len} bytes at {va:#x}: {source}")]
    VmemMap {
        va: u64,
        len: u64,
        #[source]
        source: MemError,
    },
    /// A memfd the runtime made for a memory handle that turned out not
    /// to be shareable memory.
    #[error("invalid argument: the new memory handle's memfd: {source}")]
    NotShareable {
        #[source]
        source: Unshareable,
    },
    /// Another process's IPC memory that could not be opened: the
    /// `/proc/<pid>/fd/<fd>` path tried.
    #[error("invalid argument: the shared memory of process {pid} cannot be opened ({}: {source}): has the process freed it or exited?", .path.display())]
    IpcOpen {
        pid: u32,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Attaching or detaching IPC memory failed in the virtual-memory
    /// calls beneath it (`what`: which step); their error.
    #[error("invalid argument: {what}: {source}")]
    Ipc {
        what: &'static str,
        #[source]
        source: Box<VmemError>,
    },
    #[error("{0}")]
    Device(#[from] softgpu_exec::DispatchError),
    #[error("device memory: {0}")]
    Memory(#[from] MemError),
}

/// Why data the runtime reads or writes (a profile, a trace, a capture)
/// could not be: the typed cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A bounded read (`softgpu_codeobj::read_file`) refused the file.
    #[error(transparent)]
    File(#[from] softgpu_codeobj::FileError),
    #[error("not UTF-8 text")]
    NotUtf8(#[from] std::string::FromUtf8Error),
}

/// " PATH" for a message, or nothing when the cause names the file.
fn unless_named(path: &std::path::Path, source: &DataError) -> String {
    match source {
        DataError::File(_) => String::new(),
        _ => format!(" {}", path.display()),
    }
}

/// " PLACE" for a message, or nothing.
fn place_of(place: &Option<String>) -> String {
    place.as_ref().map(|p| format!(" {p}")).unwrap_or_default()
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether the client's input was refused: an invalid argument, or a
    /// profile, trace or capture that does not read, an output file that
    /// cannot be written, a vmem mapping or IPC attachment the layers
    /// beneath refuse. The C libraries report each as their
    /// invalid-argument status.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidArgument(_)
                | Error::Config(_)
                | Error::Profile { .. }
                | Error::Output { .. }
                | Error::Trace { .. }
                | Error::Capture { .. }
                | Error::CaptureAddress { .. }
                | Error::VmemMap { .. }
                | Error::NotShareable { .. }
                | Error::IpcOpen { .. }
                | Error::Ipc { .. }
        )
    }

    /// Whether the runtime could not get what it needed: memory for one
    /// of its own structures, a pool's capacity, a thread or a memfd. (The
    /// arena refusing a client's allocation is `Memory(Exhausted)`, which
    /// HSA reports as a bad allocation and HIP as out of memory.)
    pub fn lacks_resources(&self) -> bool {
        matches!(
            self,
            Error::OutOfResources(_)
                | Error::OutOfMemory { .. }
                | Error::PoolFull { .. }
                | Error::Spawn { .. }
                | Error::System { .. }
        )
    }
}

/// The most clients the process-wide runtime counts, as ROCr
/// (`Runtime::Acquire` refuses at `INT32_MAX`).
pub const MAX_CLIENTS: usize = i32::MAX as usize;

/// Shorthand for [`Error::InvalidArgument`].
pub fn invalid(why: impl Into<String>) -> Error {
    Error::InvalidArgument(why.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant that keeps a typed cause is classed as the string
    /// variant it replaced was (`InvalidArgument` or `OutOfResources`), so
    /// the C libraries report the status they reported before.
    #[test]
    fn typed_causes_are_classed_as_the_variants_they_replaced() {
        let io = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let mem = || MemError::Exhausted {
            requested: 1,
            free: 0,
        };
        let data = || DataError::from(String::from_utf8(vec![0xff]).unwrap_err());
        let was_invalid_argument = [
            invalid("x"),
            Error::Config(softgpu_exec::ConfigError::new("threads", 0, "at least one")),
            Error::Profile {
                place: None,
                source: data(),
            },
            Error::Output {
                what: "trace file",
                path: "/t".into(),
                source: io(),
            },
            Error::Trace {
                line: 1,
                source: data(),
            },
            Error::Capture {
                path: "/c".into(),
                source: data(),
            },
            Error::CaptureAddress {
                buffer: 0,
                address: 0,
                arena: 0,
                source: mem(),
            },
            Error::VmemMap {
                va: 0,
                len: 0,
                source: mem(),
            },
            Error::NotShareable {
                source: Unshareable::NotAFile,
            },
            Error::IpcOpen {
                pid: 1,
                path: "/proc/1/fd/3".into(),
                source: io(),
            },
            Error::Ipc {
                what: "importing",
                source: Box::new(VmemError::StillMapped {
                    addr: 0,
                    mappings: 1,
                }),
            },
        ];
        for e in &was_invalid_argument {
            assert!(e.is_bad_input() && !e.lacks_resources(), "{e}");
        }
        let was_out_of_resources = [
            Error::OutOfResources("x".into()),
            Error::OutOfMemory {
                what: "the printf buffer".into(),
                source: mem(),
            },
            Error::PoolFull {
                pool: PoolKind::CoarseDevice,
                requested: 2,
                free: 1,
                capacity: 1,
            },
            Error::Spawn {
                thread: "a queue's packet processor".into(),
                source: io(),
            },
            Error::System {
                what: "memfd_create",
                source: io(),
            },
        ];
        for e in &was_out_of_resources {
            assert!(e.lacks_resources() && !e.is_bad_input(), "{e}");
        }
        let neither = [Error::Memory(mem()), Error::NotFrozen];
        for e in &neither {
            assert!(!e.lacks_resources() && !e.is_bad_input(), "{e}");
        }
    }
}
