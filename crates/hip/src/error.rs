//! `hipError_t` results, the per-thread last error, and the guard every
//! export runs in.
//!
//! HIP (like CUDA) records an error a call returns as the calling thread's
//! *last error*, which `hipGetLastError` returns and clears and
//! `hipPeekAtLastError` returns. A kernel fault is *sticky* as in CUDA: the
//! device keeps reporting it from every synchronizing call, launch and
//! copy until `hipDeviceReset` (on ROCm the process aborts instead). Its
//! report is printed once on stderr when first seen.

use std::cell::Cell;
use std::ffi::{c_char, CStr};

use crate::abi::*;

/// An error with the `hipError_t` it maps to and what went wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct HipError {
    pub code: hipError_t,
    pub message: String,
}

pub type HipResult<T = ()> = Result<T, HipError>;

impl HipError {
    pub fn new(code: hipError_t, message: impl Into<String>) -> HipError {
        HipError {
            code,
            message: message.into(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> HipError {
        HipError::new(HIP_ERROR_INVALID_VALUE, message)
    }
    pub fn handle(message: impl Into<String>) -> HipError {
        HipError::new(HIP_ERROR_INVALID_HANDLE, message)
    }
}

impl From<softgpu::Error> for HipError {
    fn from(e: softgpu::Error) -> HipError {
        use softgpu::Error as E;
        let code = match &e {
            E::Fault(f) => fault_code(f.kind()),
            E::Budget { .. } => HIP_ERROR_OUT_OF_MEMORY,
            E::Runtime(r) => runtime_code(r),
            E::Launch { .. } => HIP_ERROR_INVALID_CONFIGURATION,
            E::Argument { .. } | E::ArgumentCount { .. } | E::Invalid(_) => HIP_ERROR_INVALID_VALUE,
            E::OutOfBounds { .. } => HIP_ERROR_INVALID_VALUE,
            E::NoSuchKernel { .. } => HIP_ERROR_INVALID_DEVICE_FUNCTION,
            E::Bindings { .. } => HIP_ERROR_INVALID_VALUE,
            E::NoDevice { .. } | E::WrongTarget { .. } => HIP_ERROR_INVALID_DEVICE,
            E::Stream(_) => HIP_ERROR_LAUNCH_FAILURE,
            _ => HIP_ERROR_UNKNOWN,
        };
        HipError::new(code, e.to_string())
    }
}

impl From<softgpu_runtime::Error> for HipError {
    fn from(e: softgpu_runtime::Error) -> HipError {
        HipError::new(runtime_code(&e), e.to_string())
    }
}

/// The HIP code of a kernel fault, by its kind: a memory access is
/// `hipErrorIllegalAddress`, a dispatch stopped by the watchdog or its
/// instruction budget `hipErrorLaunchTimeOut`, anything else (`s_trap`,
/// an unimplemented instruction, a sanitizer's report)
/// `hipErrorLaunchFailure`.
pub fn fault_code(kind: softgpu::FaultKind) -> hipError_t {
    use softgpu::FaultKind as K;
    match kind {
        K::Memory | K::BadJump => HIP_ERROR_ILLEGAL_ADDRESS,
        K::Timeout | K::Budget => HIP_ERROR_LAUNCH_TIMEOUT,
        _ => HIP_ERROR_LAUNCH_FAILURE,
    }
}

/// The HIP code of a runtime error, by its variant.
fn runtime_code(e: &softgpu_runtime::Error) -> hipError_t {
    use softgpu_runtime::exec::MemError;
    use softgpu_runtime::Error as E;
    match e {
        e if e.lacks_resources() => HIP_ERROR_OUT_OF_MEMORY,
        E::Memory(MemError::Exhausted { .. }) => HIP_ERROR_OUT_OF_MEMORY,
        E::InvalidAllocation(_) | E::Memory(_) => HIP_ERROR_INVALID_VALUE,
        E::Unsupported(_) => HIP_ERROR_NOT_SUPPORTED,
        E::InvalidCodeObject(_) | E::CodeObject(_) => HIP_ERROR_INVALID_IMAGE,
        E::IncompatibleCodeObject(_) => HIP_ERROR_NO_BINARY_FOR_GPU,
        // Bad input (`is_bad_input`) and the rest.
        _ => HIP_ERROR_INVALID_VALUE,
    }
}

thread_local! {
    static LAST_ERROR: Cell<hipError_t> = const { Cell::new(HIP_SUCCESS) };
    /// The HIP function this thread is in (allocations are named after it
    /// in fault reports).
    static CURRENT_API: Cell<&'static str> = const { Cell::new("HIP") };
}

/// The HIP function the calling thread is in.
pub fn current_api() -> &'static str {
    CURRENT_API.get()
}

/// Records `code` as this thread's last error (success records nothing).
pub fn set_last_error(code: hipError_t) {
    if code != HIP_SUCCESS {
        LAST_ERROR.with(|e| e.set(code));
    }
}

/// This thread's last error; `clear` resets it to success.
pub fn last_error(clear: bool) -> hipError_t {
    LAST_ERROR.with(|e| {
        if clear {
            e.replace(HIP_SUCCESS)
        } else {
            e.get()
        }
    })
}

/// Runs an export's body: contains panics, maps the error to its code,
/// records it as the thread's last error, says why on stderr when
/// `SOFTGPU_VERBOSE` is set, and traces the call.
pub fn guard(name: &'static str, body: impl FnOnce() -> HipResult) -> hipError_t {
    let start = softgpu_runtime::trace::now_ns();
    let outer = CURRENT_API.replace(name);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    CURRENT_API.set(outer);
    let code = match result {
        Ok(Ok(())) => HIP_SUCCESS,
        Ok(Err(e)) => {
            if softgpu_env::verbose() {
                eprintln!("softgpu: {name}: {}", e.message);
            }
            e.code
        }
        Err(_) => {
            eprintln!("softgpu: internal error in {name} (a panic was contained)");
            HIP_ERROR_UNKNOWN
        }
    };
    set_last_error(code);
    if let Ok(rt) = softgpu_runtime::Runtime::get() {
        rt.tracer.api(name, start, code as u32);
    }
    code
}

/// What a generated stub for an unimplemented export does: says once which
/// function was called and why it is absent, and returns `status`.
pub fn absent(name: &'static str, why: &'static str, status: i32) -> i32 {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(name) {
        eprintln!("softgpu: {name} is not supported by softgpu's HIP runtime: {why}");
    }
    if status == HIP_ERROR_NOT_SUPPORTED {
        set_last_error(status);
    }
    status
}

/// The error for a request softgpu does not support, reported once.
pub fn unsupported(what: impl Into<String>) -> HipError {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let what = what.into();
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(what.clone()) {
        eprintln!("softgpu: not supported: {what}");
    }
    HipError::new(HIP_ERROR_NOT_SUPPORTED, what)
}

/// Writes `value` through an output pointer, refusing null.
///
/// # Safety
/// A non-null `ptr` must be valid for a write of `T` (any alignment): the
/// C caller's output contract (crate docs, "Outputs").
pub unsafe fn put<T>(ptr: *mut T, value: T) -> HipResult {
    if ptr.is_null() {
        return Err(HipError::invalid("null output pointer"));
    }
    // SAFETY: non-null (checked) and valid for a write of `T` (this
    // function's contract); `write_unaligned` needs no alignment.
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// Reads `*ptr`, refusing null.
///
/// # Safety
/// A non-null `ptr` must point to a valid `T` (crate docs, "Inputs").
pub unsafe fn get<T: Copy>(ptr: *const T, what: &str) -> HipResult<T> {
    if ptr.is_null() {
        return Err(HipError::invalid(format!("{what} is null")));
    }
    // SAFETY: non-null and valid for reads of `T` (this function's
    // contract); unaligned reads need no alignment.
    Ok(unsafe { ptr.read_unaligned() })
}

/// A C string argument, refusing null and invalid UTF-8.
///
/// # Safety
/// A non-null `s` must be NUL-terminated (crate docs, "Inputs").
pub unsafe fn c_str<'a>(s: *const c_char, what: &str) -> HipResult<&'a str> {
    if s.is_null() {
        return Err(HipError::invalid(format!("{what} is null")));
    }
    // SAFETY: non-null and NUL-terminated (this function's contract).
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str()
        .map_err(|_| HipError::invalid(format!("{what} is not UTF-8")))
}

/// The static, NUL-terminated name and message of an error code.
fn describe(code: hipError_t) -> Option<(&'static str, &'static str)> {
    ERRORS
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, n, m)| (*n, *m))
}

/// Interns `s` as a C string that lives for the whole process.
fn static_c(s: &'static str) -> *const c_char {
    use std::collections::HashMap;
    use std::ffi::CString;
    use std::sync::Mutex;
    static STRINGS: Mutex<Option<HashMap<&'static str, &'static CStr>>> = Mutex::new(None);
    let mut map = STRINGS.lock().unwrap_or_else(|e| e.into_inner());
    let c = map
        .get_or_insert_with(HashMap::new)
        .entry(s)
        .or_insert_with(|| {
            let owned = CString::new(s).unwrap_or_default();
            Box::leak(owned.into_boxed_c_str())
        });
    c.as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn hipGetErrorName(code: hipError_t) -> *const c_char {
    static_c(describe(code).map_or("hipErrorUnknown", |d| d.0))
}

#[no_mangle]
pub unsafe extern "C" fn hipGetErrorString(code: hipError_t) -> *const c_char {
    static_c(describe(code).map_or("unknown error", |d| d.1))
}

#[no_mangle]
pub unsafe extern "C" fn hipGetLastError() -> hipError_t {
    last_error(true)
}

#[no_mangle]
pub unsafe extern "C" fn hipPeekAtLastError() -> hipError_t {
    last_error(false)
}

symver!("error");

#[cfg(test)]
mod tests {
    use super::*;
    use softgpu_runtime::error::DataError;
    use softgpu_runtime::Error;

    /// Each class of runtime error gives the HIP code it gave before. The runtime holds each typed-cause variant to the class of
    /// the string variant it replaced (`Error::is_bad_input`,
    /// `Error::lacks_resources`); here each class maps to its code.
    #[test]
    fn typed_causes_keep_the_code_of_the_variant_they_replaced() {
        let bad_input = Error::Profile {
            place: None,
            source: DataError::from(String::from_utf8(vec![0xff]).unwrap_err()),
        };
        assert_eq!(runtime_code(&bad_input), HIP_ERROR_INVALID_VALUE);
        let lacks = Error::Spawn {
            thread: "a queue's packet processor".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert_eq!(runtime_code(&lacks), HIP_ERROR_OUT_OF_MEMORY);
        let code = softgpu_codeobj::load(&[]).unwrap_err();
        assert_eq!(
            runtime_code(&Error::CodeObject(code)),
            HIP_ERROR_INVALID_IMAGE
        );
    }
}
