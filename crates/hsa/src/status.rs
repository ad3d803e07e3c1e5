//! HSA status codes, the mapping from runtime errors, and
//! `hsa_status_string`.

use std::ffi::c_char;

use softgpu_runtime::exec::MemError;
use softgpu_runtime::Error;

use crate::{guard, put};

symver!("status");

/// `hsa_status_t`.
pub type Status = u32;

pub const HSA_STATUS_SUCCESS: Status = 0x0;
pub const HSA_STATUS_INFO_BREAK: Status = 0x1;
pub const HSA_STATUS_ERROR: Status = 0x1000;
pub const HSA_STATUS_ERROR_INVALID_ARGUMENT: Status = 0x1001;
pub const HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: Status = 0x1002;
pub const HSA_STATUS_ERROR_INVALID_ALLOCATION: Status = 0x1003;
pub const HSA_STATUS_ERROR_INVALID_AGENT: Status = 0x1004;
pub const HSA_STATUS_ERROR_INVALID_REGION: Status = 0x1005;
pub const HSA_STATUS_ERROR_INVALID_SIGNAL: Status = 0x1006;
pub const HSA_STATUS_ERROR_INVALID_QUEUE: Status = 0x1007;
pub const HSA_STATUS_ERROR_OUT_OF_RESOURCES: Status = 0x1008;
pub const HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: Status = 0x1009;
pub const HSA_STATUS_ERROR_RESOURCE_FREE: Status = 0x100A;
pub const HSA_STATUS_ERROR_NOT_INITIALIZED: Status = 0x100B;
pub const HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: Status = 0x100C;
pub const HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: Status = 0x100D;
pub const HSA_STATUS_ERROR_INVALID_INDEX: Status = 0x100E;
pub const HSA_STATUS_ERROR_INVALID_ISA: Status = 0x100F;
pub const HSA_STATUS_ERROR_INVALID_CODE_OBJECT: Status = 0x1010;
pub const HSA_STATUS_ERROR_INVALID_EXECUTABLE: Status = 0x1011;
pub const HSA_STATUS_ERROR_FROZEN_EXECUTABLE: Status = 0x1012;
pub const HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: Status = 0x1013;
pub const HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: Status = 0x1014;
pub const HSA_STATUS_ERROR_VARIABLE_UNDEFINED: Status = 0x1015;
pub const HSA_STATUS_ERROR_EXCEPTION: Status = 0x1016;
pub const HSA_STATUS_ERROR_INVALID_ISA_NAME: Status = 0x1017;
pub const HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: Status = 0x1018;
pub const HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: Status = 0x1019;
pub const HSA_STATUS_ERROR_INVALID_FILE: Status = 0x1020;
pub const HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: Status = 0x1021;
pub const HSA_STATUS_ERROR_INVALID_CACHE: Status = 0x1022;
pub const HSA_STATUS_ERROR_INVALID_WAVEFRONT: Status = 0x1023;
pub const HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: Status = 0x1024;
pub const HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: Status = 0x1025;
pub const HSA_STATUS_ERROR_FATAL: Status = 0x1026;
pub const HSA_STATUS_ERROR_INVALID_MEMORY_POOL: Status = 40;
pub const HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: Status = 41;
pub const HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: Status = 42;
pub const HSA_STATUS_ERROR_MEMORY_FAULT: Status = 43;
/// A success: the CU mask was set, without units the process-wide mask
/// disables.
pub const HSA_STATUS_CU_MASK_REDUCED: Status = 44;

/// The status a runtime error is reported as, by its variant.
pub fn status_of(e: &Error) -> Status {
    match e {
        Error::NotInitialized => HSA_STATUS_ERROR_NOT_INITIALIZED,
        Error::RefcountOverflow => HSA_STATUS_ERROR_REFCOUNT_OVERFLOW,
        e if e.is_bad_input() => HSA_STATUS_ERROR_INVALID_ARGUMENT,
        Error::InvalidHandle { kind, .. } => match *kind {
            "agent" => HSA_STATUS_ERROR_INVALID_AGENT,
            "memory pool" => HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
            "region" => HSA_STATUS_ERROR_INVALID_REGION,
            "ISA" => HSA_STATUS_ERROR_INVALID_ISA,
            "signal" => HSA_STATUS_ERROR_INVALID_SIGNAL,
            "signal group" => HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP,
            "queue" => HSA_STATUS_ERROR_INVALID_QUEUE,
            "code object reader" => HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
            "executable" => HSA_STATUS_ERROR_INVALID_EXECUTABLE,
            "executable symbol" => HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
            _ => HSA_STATUS_ERROR_INVALID_ARGUMENT,
        },
        e if e.lacks_resources() => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        Error::InvalidAllocation(_) => HSA_STATUS_ERROR_INVALID_ALLOCATION,
        Error::InvalidCodeObject(_) | Error::CodeObject(_) => HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        Error::IncompatibleCodeObject(_) => HSA_STATUS_ERROR_INVALID_ISA,
        Error::FrozenExecutable => HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
        Error::NotFrozen => HSA_STATUS_ERROR_INVALID_EXECUTABLE,
        Error::InvalidSymbolName(_) => HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
        Error::InvalidQueueCreation(_) => HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
        Error::VariableAlreadyDefined(_) => HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED,
        // A wild host pointer, or a host range to lock that overlaps one
        // already locked, is a bad argument, not a bad allocation.
        Error::Memory(MemError::Unmapped { .. } | MemError::Overlap { .. }) => {
            HSA_STATUS_ERROR_INVALID_ARGUMENT
        }
        Error::Memory(_) => HSA_STATUS_ERROR_INVALID_ALLOCATION,
        Error::Device(_) | Error::Unsupported(_) | Error::InUse(_) => HSA_STATUS_ERROR,
        _ => HSA_STATUS_ERROR,
    }
}

/// The description `hsa_status_string` gives.
pub fn describe(status: Status) -> Option<&'static std::ffi::CStr> {
    Some(match status {
        HSA_STATUS_SUCCESS => c"HSA_STATUS_SUCCESS: The function has been executed successfully.",
        HSA_STATUS_INFO_BREAK => c"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing.",
        HSA_STATUS_ERROR => c"HSA_STATUS_ERROR: A generic error has occurred.",
        HSA_STATUS_ERROR_INVALID_ARGUMENT => c"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument.",
        HSA_STATUS_ERROR_INVALID_QUEUE_CREATION => c"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.",
        HSA_STATUS_ERROR_INVALID_ALLOCATION => c"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.",
        HSA_STATUS_ERROR_INVALID_AGENT => c"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.",
        HSA_STATUS_ERROR_INVALID_REGION => c"HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.",
        HSA_STATUS_ERROR_INVALID_SIGNAL => c"HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.",
        HSA_STATUS_ERROR_INVALID_QUEUE => c"HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.",
        HSA_STATUS_ERROR_OUT_OF_RESOURCES => c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => c"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.",
        HSA_STATUS_ERROR_RESOURCE_FREE => c"HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource.",
        HSA_STATUS_ERROR_NOT_INITIALIZED => c"HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the runtime is zero.",
        HSA_STATUS_ERROR_REFCOUNT_OVERFLOW => c"HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for the object has been reached.",
        HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => c"HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a function are not compatible.",
        HSA_STATUS_ERROR_INVALID_INDEX => c"HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.",
        HSA_STATUS_ERROR_INVALID_ISA => c"HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.",
        HSA_STATUS_ERROR_FROZEN_EXECUTABLE => c"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.",
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME => c"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.",
        HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED => c"HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined.",
        HSA_STATUS_ERROR_VARIABLE_UNDEFINED => c"HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined.",
        HSA_STATUS_ERROR_EXCEPTION => c"HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.",
        HSA_STATUS_ERROR_INVALID_ISA_NAME => c"HSA_STATUS_ERROR_INVALID_ISA_NAME: The ISA name is invalid.",
        HSA_STATUS_ERROR_INVALID_CODE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid.",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid.",
        HSA_STATUS_ERROR_INVALID_FILE => c"HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.",
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.",
        HSA_STATUS_ERROR_INVALID_CACHE => c"HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.",
        HSA_STATUS_ERROR_INVALID_WAVEFRONT => c"HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.",
        HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP => c"HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.",
        HSA_STATUS_ERROR_INVALID_RUNTIME_STATE => c"HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The runtime is in an invalid state.",
        HSA_STATUS_ERROR_FATAL => c"HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination.",
        HSA_STATUS_ERROR_INVALID_MEMORY_POOL => c"HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.",
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION => c"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address.",
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION => c"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent executed an invalid instruction.",
        HSA_STATUS_ERROR_MEMORY_FAULT => c"HSA_STATUS_ERROR_MEMORY_FAULT: The agent attempted to access an inaccessible address.",
        HSA_STATUS_CU_MASK_REDUCED => c"HSA_STATUS_CU_MASK_REDUCED: The CU mask was set, without compute units disabled for the process.",
        _ => return None,
    })
}

/// `hsa_status_string`: works before `hsa_init`, as clients print errors
/// from a failed init with it.
#[no_mangle]
pub unsafe extern "C" fn hsa_status_string(status: Status, out: *mut *const c_char) -> Status {
    guard("hsa_status_string", || {
        let text = describe(status).ok_or_else(|| {
            softgpu_runtime::error::invalid(format!("unknown status {status:#x}"))
        })?;
        // SAFETY: the C caller's output for a string pointer (crate docs,
        // "Outputs"); `put` refuses NULL. The string is static.
        unsafe { put(out, text.as_ptr()) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use softgpu_runtime::error::DataError;
    use softgpu_runtime::Error;

    /// Each class of runtime error reports the status it reported before. The runtime holds each typed-cause variant to the class of
    /// the string variant it replaced (`Error::is_bad_input`,
    /// `Error::lacks_resources`); here each class maps to its code.
    #[test]
    fn typed_causes_keep_the_status_of_the_variant_they_replaced() {
        let bad_input = Error::Profile {
            place: None,
            source: DataError::from(String::from_utf8(vec![0xff]).unwrap_err()),
        };
        assert_eq!(status_of(&bad_input), HSA_STATUS_ERROR_INVALID_ARGUMENT);
        let lacks = Error::Spawn {
            thread: "a queue's packet processor".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert_eq!(status_of(&lacks), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
        let code = softgpu_codeobj::load(&[]).unwrap_err();
        assert_eq!(
            status_of(&Error::CodeObject(code)),
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT
        );
    }
}
