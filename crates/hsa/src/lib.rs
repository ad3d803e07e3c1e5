//! `libhsa-runtime64.so.1`: the HSA C ABI over the softgpu runtime.
//!
//! Every export is a thin translation: check the C arguments, call
//! [`softgpu_runtime`], write the outputs, map the error to an HSA status.
//! [`guard`] wraps each body so a panic never crosses into C, and records
//! the call in the `SOFTGPU_TRACE` trace. A function or option softgpu does
//! not support returns an error status and is reported once on stderr with
//! what was asked ([`unsupported`]).
//!
//! - [`status`]: status codes and `hsa_status_string`.
//! - [`system`]: init, shutdown, system and agent information, ISAs,
//!   extensions and the AMD loader table.
//! - [`memory`]: regions, pools, allocation, copies, host registration.
//! - [`signal`]: signals and their waits.
//! - [`queue`]: AQL queues.
//! - [`executable`]: code object readers, executables, symbols.
//! - [`vmem`]: ROCm 6's virtual memory API (reservations, memory handles,
//!   mappings, access, shareable handles).
//! - [`absent`]: exports for features softgpu does not provide (images,
//!   samplers, IPC, SVM, interop), which return clear errors.
//!
//! # What C callers promise
//!
//! The exports are `unsafe extern "C"` functions: their arguments come from
//! C, and every `unsafe` block in this crate rests on the contract `hsa.h`
//! and `hsa_ext_amd.h` give C callers. Each SAFETY comment names the part it
//! relies on:
//!
//! - **Outputs**: an output argument (`value`, `result`, `signal`, ...) is
//!   NULL or valid for a write of the type the function or, for
//!   `*_get_info`, the attribute declares ("if the buffer is not large
//!   enough ... the behavior is undefined"). NULL is refused ([`put`] checks
//!   it); writes are unaligned, so alignment is not relied on.
//! - **Inputs**: an input array is valid for reads of the count passed with
//!   it, an input struct (`hsa_pitched_ptr_t`, `hsa_dim3_t`,
//!   `hsa_amd_pointer_info_t`) is a properly aligned, initialised object,
//!   and a string is NUL-terminated.
//! - **Callbacks**: a callback is a function of the declared signature that
//!   may be called on any thread (HSA calls them from runtime threads), with
//!   the client's own `data` pointer passed back untouched.
//! - **Memory**: host memory a copy reads or writes stays valid until the
//!   copy completes; registered or locked host memory stays valid until it
//!   is deregistered or unlocked and no kernel uses it any more; a file
//!   descriptor stays open for the call.
//! - **No races on arguments**: nothing else (another thread, a kernel)
//!   writes the memory an argument points to during the call, as for any C
//!   function. Output arguments are plain, non-atomic writes; device memory
//!   the runtime copies or fills is accessed atomically (see
//!   `softgpu_exec::arena`).
//!
//! A helper that dereferences a raw pointer is an `unsafe fn` whose
//! `# Safety` section is the part of this contract it needs.

#![allow(clippy::missing_safety_doc)]
// The crate's Rust docs are for its maintainers (its users see a C
// library), so they link the private helpers every export goes through.
#![allow(rustdoc::private_intra_doc_links)]

/// Versions this file's exports as ROCR_1 (the directives are generated
/// by build.rs from the file's `extern "C" fn hsa_…` definitions).
macro_rules! symver {
    ($file:literal) => {
        std::arch::global_asm!(include_str!(concat!(
            env!("OUT_DIR"),
            "/symver_",
            $file,
            ".s"
        )));
    };
}

pub mod absent;
pub mod events;
pub mod executable;
pub mod memory;
pub mod queue;
pub mod signal;
pub mod status;
pub mod system;
pub mod vmem;

use std::sync::Arc;

use softgpu_runtime::{Error, Runtime};

pub use status::*;

/// Runs an export's body: maps errors to statuses, contains panics and
/// traces the call.
pub(crate) fn guard(name: &'static str, body: impl FnOnce() -> Result<(), Error>) -> Status {
    guard_status(name, || body().map(|()| HSA_STATUS_SUCCESS))
}

/// Like [`guard`], for bodies that decide the status themselves: an
/// iteration returns the status a callback stopped it with, and a few
/// errors have HSA statuses no runtime error maps to (invalid ISA name,
/// file, cache, wavefront, index).
pub(crate) fn guard_status(
    name: &'static str,
    body: impl FnOnce() -> Result<Status, Error>,
) -> Status {
    let start = softgpu_runtime::trace::now_ns();
    let status = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            if softgpu_env::verbose() {
                eprintln!("softgpu: {name}: {e}");
            }
            status_of(&e)
        }
        Err(_) => {
            eprintln!("softgpu: internal error in {name} (a panic was contained)");
            HSA_STATUS_ERROR
        }
    };
    if let Ok(rt) = Runtime::get() {
        rt.tracer.api(name, start, status);
    }
    status
}

/// Like [`guard`] for exports that return a value instead of a status
/// (signal loads, queue indices): a failure returns `fallback` and is
/// reported on stderr, since C cannot be told otherwise.
pub(crate) fn guard_value<T>(
    name: &'static str,
    fallback: T,
    body: impl FnOnce() -> Result<T, Error>,
) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            eprintln!("softgpu: {name}: {e}");
            fallback
        }
        Err(_) => {
            eprintln!("softgpu: internal error in {name} (a panic was contained)");
            fallback
        }
    }
}

/// The initialised runtime.
pub(crate) fn runtime() -> Result<Arc<Runtime>, Error> {
    Runtime::get()
}

/// Writes `value` through an output pointer, refusing null.
///
/// # Safety
/// A non-null `ptr` must be valid for a write of `T` (any alignment): the
/// C caller's output contract (crate docs, "Outputs").
pub(crate) unsafe fn put<T>(ptr: *mut T, value: T) -> Result<(), Error> {
    if ptr.is_null() {
        return Err(softgpu_runtime::error::invalid("null output pointer"));
    }
    // SAFETY: non-null (checked) and valid for a write of `T` (this
    // function's contract); `write_unaligned` needs no alignment and drops
    // nothing at the destination.
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// Refuses a null input pointer.
pub(crate) fn non_null<T>(ptr: *const T, what: &str) -> Result<(), Error> {
    if ptr.is_null() {
        Err(softgpu_runtime::error::invalid(format!("{what} is null")))
    } else {
        Ok(())
    }
}

/// Reports a request softgpu cannot honour and returns the error for it.
/// Each distinct request is printed once.
pub(crate) fn unsupported(what: impl Into<String>) -> Error {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let what = what.into();
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(what.clone()) {
        eprintln!("softgpu: not supported: {what}");
    }
    Error::Unsupported(what)
}
