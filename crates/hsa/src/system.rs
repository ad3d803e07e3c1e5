//! Init and shutdown; system, agent, ISA, wavefront and cache information;
//! extensions and the AMD loader extension table.
//!
//! Every value comes from the runtime: GPU agents answer from their device
//! profile (`SOFTGPU_PROFILE`), the CPU agent from the host (`/proc/cpuinfo`,
//! `/sys/devices/system/cpu`). An attribute softgpu has no answer for is
//! refused with a message naming it ([`unsupported`]), never filled with a
//! made-up value.
//!
//! Handle structs (`hsa_agent_t`, `hsa_isa_t`, …) are one `uint64_t` and
//! travel by value like one, so they are `u64` here. Wavefront and cache
//! handles name no runtime object: they encode what they describe (a tag,
//! the agent and the level or wave size) and are checked on every use.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use softgpu_runtime::agent::{Agent, AgentKind, Isa, Pool};
use softgpu_runtime::error::invalid;
use softgpu_runtime::profile::Profile;
use softgpu_runtime::{Error, Runtime};

use crate::executable as exe;
use crate::{
    guard_status, non_null, put, runtime, unsupported, Status, HSA_STATUS_ERROR_INVALID_CACHE,
    HSA_STATUS_ERROR_INVALID_INDEX, HSA_STATUS_ERROR_INVALID_ISA_NAME,
    HSA_STATUS_ERROR_INVALID_WAVEFRONT, HSA_STATUS_SUCCESS,
};

symver!("system");

// ---------------------------------------------------------------------------
// Helpers shared by this crate's exports.

/// Reports an error status decided by an export (see [`crate::guard_status`]).
pub(crate) fn refuse(
    name: &str,
    status: Status,
    why: impl std::fmt::Display,
) -> Result<Status, Error> {
    if softgpu_env::verbose() {
        eprintln!("softgpu: {name}: {why}");
    }
    Ok(status)
}

/// Calls `callback` on each item until it returns something other than
/// success, which is then the iteration's result.
pub(crate) fn each<T>(
    items: impl IntoIterator<Item = T>,
    mut callback: impl FnMut(T) -> Status,
) -> Status {
    for item in items {
        let s = callback(item);
        if s != HSA_STATUS_SUCCESS {
            return s;
        }
    }
    HSA_STATUS_SUCCESS
}

/// Writes a fixed-size, NUL-padded character array of `N` bytes (the
/// string is cut to `N - 1` bytes).
///
/// # Safety
/// A non-null `value` must be valid for writes of `N` bytes (the C caller's
/// output contract, crate docs, "Outputs").
pub(crate) unsafe fn put_padded<const N: usize>(value: *mut c_void, s: &str) -> Result<(), Error> {
    let mut out = [0u8; N];
    let n = s.len().min(N - 1);
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
    // SAFETY: this function's contract is `put`'s for `[u8; N]`.
    unsafe { put(value as *mut [u8; N], out) }
}

/// Writes `bytes` (no terminator unless `bytes` has one).
///
/// # Safety
/// A non-null `value` must be valid for writes of `bytes.len()` bytes (the
/// C caller's output contract, crate docs, "Outputs").
pub(crate) unsafe fn put_bytes(value: *mut c_void, bytes: &[u8]) -> Result<(), Error> {
    non_null(value, "value")?;
    // SAFETY: non-null (checked) and valid for `bytes.len()` bytes by this
    // function's contract; a byte copy needs no alignment, and our slice
    // cannot overlap the C caller's buffer we are about to fill.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value as *mut u8, bytes.len()) };
    Ok(())
}

/// A C string argument.
///
/// # Safety
/// A non-null `s` must point to a NUL-terminated string that stays
/// unchanged for `'a` (the C caller's input contract, crate docs,
/// "Inputs"; callers use the result only during the call).
pub(crate) unsafe fn c_str<'a>(s: *const c_char, what: &str) -> Result<&'a str, Error> {
    non_null(s, what)?;
    // SAFETY: non-null (checked), NUL-terminated and unchanged for `'a` by
    // this function's contract.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| invalid(format!("{what} is not UTF-8")))
}

/// An HSA callback taking one handle.
pub type HandleCallback = unsafe extern "C" fn(u64, *mut c_void) -> Status;

/// The callback, or an error for null.
pub(crate) fn callback<F>(f: Option<F>) -> Result<F, Error> {
    f.ok_or_else(|| invalid("callback is null"))
}

// ---------------------------------------------------------------------------
// Enumerations from hsa.h and hsa_ext_amd.h.

const PROFILE_BASE: u32 = 0;
const PROFILE_FULL: u32 = 1;
const MACHINE_MODEL_LARGE: u32 = 1;
const ENDIANNESS_LITTLE: u32 = 0;
const ROUNDING_ZERO: u32 = 1;
const ROUNDING_NEAR: u32 = 2;
const FEATURE_KERNEL_DISPATCH: u32 = 1;
const FEATURE_AGENT_DISPATCH: u32 = 2;
const DEVICE_TYPE_CPU: u32 = 0;
const DEVICE_TYPE_GPU: u32 = 1;
const QUEUE_TYPE_MULTI: u32 = 0;

/// `hsa_extension_t` values.
pub(crate) const EXTENSION_FINALIZER: u16 = 0;
pub(crate) const EXTENSION_IMAGES: u16 = 1;
pub(crate) const EXTENSION_PERFORMANCE_COUNTERS: u16 = 2;
pub(crate) const EXTENSION_PROFILING_EVENTS: u16 = 3;
pub(crate) const EXTENSION_AMD_PROFILER: u16 = 0x200;
pub(crate) const EXTENSION_AMD_LOADER: u16 = 0x201;
pub(crate) const EXTENSION_AMD_AQLPROFILE: u16 = 0x202;

/// The AMD loader extension's version (`hsa_ven_amd_loader` 001003).
const LOADER_MAJOR: u16 = 1;
const LOADER_MINOR: u16 = 3;

/// HSA runtime specification version softgpu implements.
const HSA_VERSION: (u16, u16) = (1, 1);

/// Timestamps are nanoseconds since the runtime's clock started.
pub(crate) const TIMESTAMP_FREQUENCY: u64 = 1_000_000_000;

/// The name of an extension, if it is one `hsa.h` defines.
fn extension_name(extension: u16) -> Option<&'static CStr> {
    Some(match extension {
        EXTENSION_FINALIZER => c"HSA_EXTENSION_FINALIZER",
        EXTENSION_IMAGES => c"HSA_EXTENSION_IMAGES",
        EXTENSION_PERFORMANCE_COUNTERS => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
        EXTENSION_PROFILING_EVENTS => c"HSA_EXTENSION_PROFILING_EVENTS",
        EXTENSION_AMD_PROFILER => c"HSA_EXTENSION_AMD_PROFILER",
        EXTENSION_AMD_LOADER => c"HSA_EXTENSION_AMD_LOADER",
        EXTENSION_AMD_AQLPROFILE => c"HSA_EXTENSION_AMD_AQLPROFILE",
        _ => return None,
    })
}

/// Refuses an extension number `hsa.h` does not define.
fn known_extension(extension: u16) -> Result<(), Error> {
    extension_name(extension)
        .map(|_| ())
        .ok_or_else(|| invalid(format!("{extension:#x} is not an hsa_extension_t")))
}

/// The extensions softgpu implements, with their highest minor version:
/// only the AMD loader. Images are absent (no image path in the executor),
/// and so are the finalizer (no HSAIL), performance counters, profiling
/// events and AMD's profiler and AQL-profile tables.
fn supported_minor(extension: u16, major: u16) -> Option<u16> {
    (extension == EXTENSION_AMD_LOADER && major == LOADER_MAJOR).then_some(LOADER_MINOR)
}

/// The 128-byte extension bit mask (`HSA_SYSTEM_INFO_EXTENSIONS`).
fn extension_mask() -> [u8; 128] {
    let mut mask = [0u8; 128];
    let bit = EXTENSION_AMD_LOADER as usize;
    mask[bit / 8] |= 1 << (bit % 8);
    mask
}

// ---------------------------------------------------------------------------
// Init and shutdown.

/// `hsa_init`: counts one more client of the runtime.
#[no_mangle]
pub extern "C" fn hsa_init() -> Status {
    crate::guard("hsa_init", || {
        Runtime::init(softgpu_env::library_config).map(|_| ())
    })
}

/// `hsa_shut_down`: the last client's call stops queues and frees
/// everything; handles from before become invalid.
#[no_mangle]
pub extern "C" fn hsa_shut_down() -> Status {
    crate::guard("hsa_shut_down", || {
        Runtime::shut_down()?;
        if Runtime::get().is_err() {
            exe::forget_all();
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// System information and extensions.

/// `hsa_system_info_t` attributes.
const SYSTEM_INFO_VERSION_MAJOR: u32 = 0;
const SYSTEM_INFO_VERSION_MINOR: u32 = 1;
const SYSTEM_INFO_TIMESTAMP: u32 = 2;
const SYSTEM_INFO_TIMESTAMP_FREQUENCY: u32 = 3;
const SYSTEM_INFO_SIGNAL_MAX_WAIT: u32 = 4;
const SYSTEM_INFO_ENDIANNESS: u32 = 5;
const SYSTEM_INFO_MACHINE_MODEL: u32 = 6;
const SYSTEM_INFO_EXTENSIONS: u32 = 7;
const AMD_SYSTEM_INFO_BUILD_VERSION: u32 = 0x200;
const AMD_SYSTEM_INFO_SVM_SUPPORTED: u32 = 0x201;
const AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT: u32 = 0x202;
const AMD_SYSTEM_INFO_MWAITX_ENABLED: u32 = 0x203;
const AMD_SYSTEM_INFO_DMABUF_SUPPORTED: u32 = 0x204;
const AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED: u32 = 0x205;
const AMD_SYSTEM_INFO_XNACK_ENABLED: u32 = 0x206;
const AMD_SYSTEM_INFO_EXT_VERSION_MAJOR: u32 = 0x207;
const AMD_SYSTEM_INFO_EXT_VERSION_MINOR: u32 = 0x208;

/// The AMD extension interface version (`hsa_ext_amd.h`'s
/// `HSA_AMD_INTERFACE_VERSION_*`) reported by
/// `HSA_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR/MINOR`: 1.6, the version of ROCm
/// 6's header, because every function and attribute it added is exported:
/// 1.1 dma-buf export (exported, refused: `absent.rs`), 1.2
/// `hsa_amd_memory_async_copy_on_engine` (`memory.rs`), 1.3 the
/// extended-scope fine-grained pool flag (a flag value; no softgpu pool
/// sets it), 1.4 the virtual memory API and 1.6 its
/// `hsa_amd_vmem_address_reserve_align` (`vmem.rs`), 1.5
/// `HSA_AMD_AGENT_INFO_MEMORY_PROPERTIES`. Matches ROCr's
/// `Runtime::GetSystemInfo` (runtime.cpp), which reports the header's
/// version.
const AMD_EXT_VERSION: (u16, u16) = (1, 6);

/// What `HSA_AMD_SYSTEM_INFO_BUILD_VERSION` points to.
static BUILD_VERSION: &CStr = {
    const TEXT: &str = concat!("softgpu ", env!("CARGO_PKG_VERSION"), "\0");
    match CStr::from_bytes_with_nul(TEXT.as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("build version has an interior NUL"),
    }
};

/// `hsa_system_get_info`.
#[no_mangle]
pub unsafe extern "C" fn hsa_system_get_info(attribute: u32, value: *mut c_void) -> Status {
    crate::guard("hsa_system_get_info", || {
        runtime()?;
        non_null(value, "value")?;
        // SAFETY: `value` is non-null (checked) and, by the C caller's
        // output contract (crate docs, "Outputs"), valid for a write of the
        // attribute's type; each arm writes the type hsa.h gives it.
        unsafe {
            match attribute {
                SYSTEM_INFO_VERSION_MAJOR => put(value as *mut u16, HSA_VERSION.0),
                SYSTEM_INFO_VERSION_MINOR => put(value as *mut u16, HSA_VERSION.1),
                SYSTEM_INFO_TIMESTAMP => put(value as *mut u64, softgpu_runtime::trace::now_ns()),
                SYSTEM_INFO_TIMESTAMP_FREQUENCY => put(value as *mut u64, TIMESTAMP_FREQUENCY),
                SYSTEM_INFO_SIGNAL_MAX_WAIT => put(value as *mut u64, u64::MAX),
                SYSTEM_INFO_ENDIANNESS => put(value as *mut u32, ENDIANNESS_LITTLE),
                SYSTEM_INFO_MACHINE_MODEL => put(value as *mut u32, MACHINE_MODEL_LARGE),
                SYSTEM_INFO_EXTENSIONS => put(value as *mut [u8; 128], extension_mask()),
                AMD_SYSTEM_INFO_BUILD_VERSION => {
                    put(value as *mut *const c_char, BUILD_VERSION.as_ptr())
                }
                // No hsa_amd_svm_* support: device memory is allocated
                // through pools, and other host memory is reachable only
                // once locked or registered.
                AMD_SYSTEM_INFO_SVM_SUPPORTED | AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT => {
                    put(value as *mut bool, false)
                }
                // Signal waits sleep on the host's futexes; the runtime
                // never uses the CPU's MWAITX instruction (ROCr's
                // `g_use_mwaitx`).
                AMD_SYSTEM_INFO_MWAITX_ENABLED => put(value as *mut bool, false),
                // No dma-buf driver: hsa_amd_portable_export_dmabuf is
                // refused (absent.rs). ROCr answers from the KFD version.
                AMD_SYSTEM_INFO_DMABUF_SUPPORTED => put(value as *mut bool, false),
                // The hsa_amd_vmem_* functions are implemented (vmem.rs).
                AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED => put(value as *mut bool, true),
                // gfx11 has no XNACK (page-fault retry) mode, and
                // softgpu's memory never faults pages in.
                AMD_SYSTEM_INFO_XNACK_ENABLED => put(value as *mut bool, false),
                AMD_SYSTEM_INFO_EXT_VERSION_MAJOR => put(value as *mut u16, AMD_EXT_VERSION.0),
                AMD_SYSTEM_INFO_EXT_VERSION_MINOR => put(value as *mut u16, AMD_EXT_VERSION.1),
                other => Err(invalid(format!("{other:#x} is not an hsa_system_info_t"))),
            }
        }
    })
}

/// `hsa_extension_get_name`.
#[no_mangle]
pub unsafe extern "C" fn hsa_extension_get_name(
    extension: u16,
    name: *mut *const c_char,
) -> Status {
    crate::guard("hsa_extension_get_name", || {
        runtime()?;
        let text = extension_name(extension)
            .ok_or_else(|| invalid(format!("{extension:#x} is not an hsa_extension_t")))?;
        // SAFETY: the C caller's output for a string pointer (crate docs,
        // "Outputs"); `put` refuses NULL. The string is static.
        unsafe { put(name, text.as_ptr()) }
    })
}

/// `hsa_system_extension_supported` (deprecated form).
#[no_mangle]
pub unsafe extern "C" fn hsa_system_extension_supported(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> Status {
    crate::guard("hsa_system_extension_supported", || {
        runtime()?;
        known_extension(extension)?;
        let ok = supported_minor(extension, version_major).is_some_and(|m| version_minor <= m);
        // SAFETY: the C caller's output for the value written (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(result, ok) }
    })
}

/// `hsa_system_major_extension_supported`.
#[no_mangle]
pub unsafe extern "C" fn hsa_system_major_extension_supported(
    extension: u16,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> Status {
    crate::guard("hsa_system_major_extension_supported", || {
        runtime()?;
        known_extension(extension)?;
        non_null(version_minor, "version_minor")?;
        non_null(result, "result")?;
        let minor = supported_minor(extension, version_major);
        // SAFETY: both non-null (checked) and the C caller's outputs for a
        // uint16_t and a bool (crate docs, "Outputs").
        unsafe {
            put(version_minor, minor.unwrap_or(0))?;
            put(result, minor.is_some())
        }
    })
}

/// Refuses a table for an extension softgpu does not implement.
fn no_table(extension: u16, major: u16) -> Error {
    let name = extension_name(extension).map_or("?".into(), |n| n.to_string_lossy().into_owned());
    if extension == EXTENSION_IMAGES {
        unsupported(format!(
            "function table of {name} {major}.x: images are not supported (no image path in the executor)"
        ))
    } else {
        unsupported(format!(
            "function table of {name} {major}.x: softgpu implements only HSA_EXTENSION_AMD_LOADER 1.0-1.3"
        ))
    }
}

/// `hsa_system_get_extension_table` (deprecated form).
#[no_mangle]
pub unsafe extern "C" fn hsa_system_get_extension_table(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    table: *mut c_void,
) -> Status {
    crate::guard("hsa_system_get_extension_table", || {
        runtime()?;
        known_extension(extension)?;
        non_null(table, "table")?;
        match supported_minor(extension, version_major) {
            Some(m) if version_minor <= m => {
                // SAFETY: non-null (checked); by hsa.h `table` is the C
                // caller's function-pointer table of the version it asked
                // for, valid for writes of that version's entries, which is
                // how many are written.
                unsafe {
                    exe::write_loader_table(
                        table,
                        exe::LOADER_TABLE_ENTRIES[version_minor as usize],
                    )
                };
                Ok(())
            }
            _ => Err(no_table(extension, version_major)),
        }
    })
}

/// `hsa_system_get_major_extension_table`: writes as many whole function
/// pointers as `table_length` holds.
#[no_mangle]
pub unsafe extern "C" fn hsa_system_get_major_extension_table(
    extension: u16,
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> Status {
    crate::guard("hsa_system_get_major_extension_table", || {
        runtime()?;
        known_extension(extension)?;
        non_null(table, "table")?;
        if supported_minor(extension, version_major).is_none() {
            return Err(no_table(extension, version_major));
        }
        let entries = table_length / std::mem::size_of::<usize>();
        // SAFETY: non-null (checked); by hsa.h `table` is valid for
        // writes of `table_length` bytes, and only whole pointers within
        // them are written.
        unsafe { exe::write_loader_table(table, entries) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Agents.

/// `hsa_iterate_agents`: the CPU agent, then the GPUs.
#[no_mangle]
pub unsafe extern "C" fn hsa_iterate_agents(
    callback: Option<HandleCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_iterate_agents", || {
        let rt = runtime()?;
        let f = self::callback(callback)?;
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(rt.agent_handles.iter().copied(), |a| unsafe {
            f(a, data)
        }))
    })
}

/// `hsa_agent_info_t` attributes.
mod agent_info {
    pub const NAME: u32 = 0;
    pub const VENDOR_NAME: u32 = 1;
    pub const FEATURE: u32 = 2;
    pub const MACHINE_MODEL: u32 = 3;
    pub const PROFILE: u32 = 4;
    pub const DEFAULT_FLOAT_ROUNDING_MODE: u32 = 5;
    pub const WAVEFRONT_SIZE: u32 = 6;
    pub const WORKGROUP_MAX_DIM: u32 = 7;
    pub const WORKGROUP_MAX_SIZE: u32 = 8;
    pub const GRID_MAX_DIM: u32 = 9;
    pub const GRID_MAX_SIZE: u32 = 10;
    pub const FBARRIER_MAX_SIZE: u32 = 11;
    pub const QUEUES_MAX: u32 = 12;
    pub const QUEUE_MIN_SIZE: u32 = 13;
    pub const QUEUE_MAX_SIZE: u32 = 14;
    pub const QUEUE_TYPE: u32 = 15;
    pub const NODE: u32 = 16;
    pub const DEVICE: u32 = 17;
    pub const CACHE_SIZE: u32 = 18;
    pub const ISA: u32 = 19;
    pub const EXTENSIONS: u32 = 20;
    pub const VERSION_MAJOR: u32 = 21;
    pub const VERSION_MINOR: u32 = 22;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 23;
    pub const FAST_F16_OPERATION: u32 = 24;
    // hsa_amd_agent_info_t
    pub const AMD_CHIP_ID: u32 = 0xA000;
    pub const AMD_CACHELINE_SIZE: u32 = 0xA001;
    pub const AMD_COMPUTE_UNIT_COUNT: u32 = 0xA002;
    pub const AMD_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
    pub const AMD_DRIVER_NODE_ID: u32 = 0xA004;
    pub const AMD_MAX_ADDRESS_WATCH_POINTS: u32 = 0xA005;
    pub const AMD_BDFID: u32 = 0xA006;
    pub const AMD_MEMORY_WIDTH: u32 = 0xA007;
    pub const AMD_MEMORY_MAX_FREQUENCY: u32 = 0xA008;
    pub const AMD_PRODUCT_NAME: u32 = 0xA009;
    pub const AMD_MAX_WAVES_PER_CU: u32 = 0xA00A;
    pub const AMD_NUM_SIMDS_PER_CU: u32 = 0xA00B;
    pub const AMD_NUM_SHADER_ENGINES: u32 = 0xA00C;
    pub const AMD_NUM_SHADER_ARRAYS_PER_SE: u32 = 0xA00D;
    pub const AMD_HDP_FLUSH: u32 = 0xA00E;
    pub const AMD_DOMAIN: u32 = 0xA00F;
    pub const AMD_COOPERATIVE_QUEUES: u32 = 0xA010;
    pub const AMD_UUID: u32 = 0xA011;
    pub const AMD_ASIC_REVISION: u32 = 0xA012;
    pub const AMD_SVM_DIRECT_HOST_ACCESS: u32 = 0xA013;
    pub const AMD_COOPERATIVE_COMPUTE_UNIT_COUNT: u32 = 0xA014;
    pub const AMD_MEMORY_AVAIL: u32 = 0xA015;
    pub const AMD_TIMESTAMP_FREQUENCY: u32 = 0xA016;
    pub const AMD_ASIC_FAMILY_ID: u32 = 0xA107;
    pub const AMD_UCODE_VERSION: u32 = 0xA108;
    pub const AMD_SDMA_UCODE_VERSION: u32 = 0xA109;
    pub const AMD_NUM_SDMA_ENG: u32 = 0xA10A;
    pub const AMD_NUM_SDMA_XGMI_ENG: u32 = 0xA10B;
    pub const AMD_IOMMU_SUPPORT: u32 = 0xA110;
    pub const AMD_NUM_XCC: u32 = 0xA111;
    pub const AMD_DRIVER_UID: u32 = 0xA112;
    pub const AMD_NEAREST_CPU: u32 = 0xA113;
    pub const AMD_MEMORY_PROPERTIES: u32 = 0xA114;
    pub const AMD_AQL_EXTENSIONS: u32 = 0xA115;
    // softgpu's own (include/softgpu_ext.h)
    pub const SOFTGPU_PROFILE_ID: u32 = 0x5347_0000;
    pub const SOFTGPU_PROFILE_REVISION: u32 = 0x5347_0001;
    pub const SOFTGPU_FIDELITY: u32 = 0x5347_0002;

    /// The size in bytes of an attribute's value (what
    /// `hsa_agent_get_info_size` reports), or `None` for a number that is
    /// not an attribute. Every attribute `agent_info` answers has one
    /// (the test `rocm6.rs` checks both directions).
    pub fn size(attribute: u32) -> Option<usize> {
        Some(match attribute {
            NAME | VENDOR_NAME | AMD_PRODUCT_NAME | SOFTGPU_PROFILE_ID => 64,
            SOFTGPU_PROFILE_REVISION | SOFTGPU_FIDELITY => 4,
            FEATURE
            | MACHINE_MODEL
            | PROFILE
            | DEFAULT_FLOAT_ROUNDING_MODE
            | WAVEFRONT_SIZE
            | WORKGROUP_MAX_SIZE
            | GRID_MAX_SIZE
            | FBARRIER_MAX_SIZE
            | QUEUES_MAX
            | QUEUE_MIN_SIZE
            | QUEUE_MAX_SIZE
            | QUEUE_TYPE
            | NODE
            | DEVICE
            | BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => 4,
            WORKGROUP_MAX_DIM => 6,
            GRID_MAX_DIM => 12,
            CACHE_SIZE => 16,
            ISA => 8,
            EXTENSIONS => 128,
            VERSION_MAJOR | VERSION_MINOR => 2,
            FAST_F16_OPERATION => 1,
            AMD_CHIP_ID
            | AMD_CACHELINE_SIZE
            | AMD_COMPUTE_UNIT_COUNT
            | AMD_MAX_CLOCK_FREQUENCY
            | AMD_DRIVER_NODE_ID
            | AMD_MAX_ADDRESS_WATCH_POINTS
            | AMD_BDFID
            | AMD_MEMORY_WIDTH
            | AMD_MEMORY_MAX_FREQUENCY
            | AMD_MAX_WAVES_PER_CU
            | AMD_NUM_SIMDS_PER_CU
            | AMD_NUM_SHADER_ENGINES
            | AMD_NUM_SHADER_ARRAYS_PER_SE
            | AMD_DOMAIN
            | AMD_ASIC_REVISION
            | AMD_COOPERATIVE_COMPUTE_UNIT_COUNT
            | AMD_ASIC_FAMILY_ID
            | AMD_UCODE_VERSION
            | AMD_SDMA_UCODE_VERSION
            | AMD_NUM_SDMA_ENG
            | AMD_NUM_SDMA_XGMI_ENG
            | AMD_IOMMU_SUPPORT
            | AMD_NUM_XCC
            | AMD_DRIVER_UID => 4,
            // hsa_amd_hdp_flush_t: two pointers.
            AMD_HDP_FLUSH => 16,
            AMD_COOPERATIVE_QUEUES | AMD_SVM_DIRECT_HOST_ACCESS => 1,
            // "at most 21 characters including the NUL" (hsa_ext_amd.h).
            AMD_UUID => 21,
            AMD_MEMORY_AVAIL | AMD_TIMESTAMP_FREQUENCY | AMD_NEAREST_CPU => 8,
            AMD_MEMORY_PROPERTIES | AMD_AQL_EXTENSIONS => 8,
            _ => return None,
        })
    }
}

/// Copy engines a GPU agent reports (`HSA_AMD_AGENT_INFO_NUM_SDMA_ENG`):
/// two, the host-to-device and device-to-host engines ROCr's
/// `GpuAgent::DmaCopyStatus` (amd_gpu_agent.cpp) offers a GPU outside an
/// xGMI hive (`HSA_AMD_SDMA_ENGINE_0` and `_1`). softgpu has no SDMA
/// hardware: a copy "on" either engine is a host copy like every other
/// (`hsa_amd_memory_async_copy_on_engine`), so both are always free.
pub(crate) const SDMA_ENGINES: u32 = 2;

/// The rate of a GPU agent's timestamp counter: the 100 MHz REALTIME
/// counter the executor gives kernels (`s_sendmsg_rtn` GET_REALTIME, as
/// on AMD GPUs), which is what clients convert `wall_clock64()` with.
const GPU_TIMESTAMP_FREQUENCY: u64 = 100_000_000;

/// `HSA_AMD_MEMORY_PROPERTY_AGENT_IS_APU`, bit 0 of the `uint8_t[8]`
/// memory property mask.
const MEMORY_PROPERTY_AGENT_IS_APU: u8 = 1 << 0;

/// `hsa_amd_iommu_version_t`: `HSA_IOMMU_SUPPORT_NONE`.
const IOMMU_SUPPORT_NONE: u32 = 0;

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Dim3 {
    x: u32,
    y: u32,
    z: u32,
}

/// Work-group dimension limits as `uint16_t[3]`.
fn workgroup_dims(p: &Profile) -> [u16; 3] {
    p.max_workgroup_dims.map(|d| d.min(u16::MAX as u32) as u16)
}

fn grid_dims(p: &Profile) -> Dim3 {
    let [x, y, z] = p.max_grid_dims;
    Dim3 { x, y, z }
}

/// Total work-items of a grid: the product of the dimension limits,
/// saturated.
fn grid_max_size(p: &Profile) -> u64 {
    p.max_grid_dims
        .iter()
        .fold(1u64, |acc, &d| acc.saturating_mul(d as u64))
}

/// The wave size kernels get by default (gfx11: wave32).
fn default_wave_size(p: &Profile) -> u32 {
    if p.wave_sizes.contains(&32) {
        32
    } else {
        p.wave_sizes[0]
    }
}

/// The GPU agent's number among the GPUs (0 for the first).
fn gpu_number(agent: &Agent) -> usize {
    agent.index.saturating_sub(1)
}

/// Host data caches by level (1..=4), in bytes, from sysfs; 0 where the
/// host does not say.
fn host_cache_sizes() -> [u32; 4] {
    let mut sizes = [0u32; 4];
    for i in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            break;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        let level: usize = level.trim().parse().unwrap_or(0);
        let size = size.trim();
        let bytes = match size.strip_suffix('K') {
            Some(k) => k.parse::<u64>().ok().map(|k| k * 1024),
            None => match size.strip_suffix('M') {
                Some(m) => m.parse::<u64>().ok().map(|m| m << 20),
                None => size.parse::<u64>().ok(),
            },
        };
        if let (1..=4, Some(b)) = (level, bytes) {
            sizes[level - 1] = b.min(u32::MAX as u64) as u32;
        }
    }
    sizes
}

/// The host CPU's highest clock in MHz, from cpufreq or /proc/cpuinfo.
fn host_max_clock_mhz() -> Option<u32> {
    let cpufreq = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .map(|khz| (khz / 1000) as u32);
    cpufreq.or_else(|| {
        std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| {
            t.lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim() == "cpu MHz")
                .and_then(|(_, v)| v.trim().parse::<f64>().ok())
                .map(|mhz| mhz as u32)
        })
    })
}

/// Cache sizes an agent reports, by level 1..=4.
fn cache_sizes(agent: &Agent) -> [u32; 4] {
    match agent.kind {
        AgentKind::Gpu => {
            let p = &agent.profile;
            [p.l1_cache_bytes, p.l2_cache_bytes, p.l3_cache_bytes, 0]
        }
        AgentKind::Cpu => host_cache_sizes(),
    }
}

/// `hsa_agent_get_info`: every attribute of `hsa_agent_info_t` and
/// `hsa_amd_agent_info_t`. Kernel-agent limits (wavefront, work-group,
/// grid, queue sizes) are 0 for the CPU agent, which runs no kernels and
/// takes no queues.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_get_info(
    agent: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    crate::guard("hsa_agent_get_info", || {
        let rt = runtime()?;
        let a = rt.agent(agent)?;
        non_null(value, "value")?;
        // SAFETY: `value` is non-null (checked) and the C caller's output
        // for the attribute's type (crate docs, "Outputs"): `agent_info`'s
        // contract.
        unsafe { agent_info(&rt, &a, attribute, value) }
    })
}

/// The body of [`hsa_agent_get_info`].
///
/// # Safety
/// `value` must be NULL or valid for a write of the attribute's type (the
/// C caller's output contract, crate docs, "Outputs").
unsafe fn agent_info(
    rt: &Runtime,
    a: &Agent,
    attribute: u32,
    value: *mut c_void,
) -> Result<(), Error> {
    use agent_info::*;
    let gpu = a.kind == AgentKind::Gpu;
    let p = &a.profile;
    let kernel = |v: u32| if gpu { v } else { 0 };
    let u32_out = value as *mut u32;
    // SAFETY: by this function's contract `value` is valid for the
    // attribute's type; each arm writes the type hsa.h or hsa_ext_amd.h
    // gives it (checked against the headers: `char[64]` for names, a NUL-
    // terminated string for the UUID, enums as uint32_t).
    unsafe {
        match attribute {
            NAME => put_padded::<64>(value, &a.name()),
            VENDOR_NAME => put_padded::<64>(value, &a.vendor()),
            FEATURE => put(
                u32_out,
                if gpu {
                    FEATURE_KERNEL_DISPATCH
                } else {
                    FEATURE_AGENT_DISPATCH
                },
            ),
            MACHINE_MODEL => put(u32_out, MACHINE_MODEL_LARGE),
            PROFILE => put(u32_out, PROFILE_BASE),
            DEFAULT_FLOAT_ROUNDING_MODE => put(u32_out, ROUNDING_NEAR),
            BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                put(u32_out, 1 << ROUNDING_ZERO | 1 << ROUNDING_NEAR)
            }
            FAST_F16_OPERATION => put(value as *mut bool, gpu),
            WAVEFRONT_SIZE => put(u32_out, kernel(default_wave_size(p))),
            WORKGROUP_MAX_DIM => put(
                value as *mut [u16; 3],
                if gpu { workgroup_dims(p) } else { [0; 3] },
            ),
            WORKGROUP_MAX_SIZE => put(u32_out, kernel(p.max_workgroup_size)),
            GRID_MAX_DIM => put(
                value as *mut Dim3,
                if gpu {
                    grid_dims(p)
                } else {
                    Dim3 { x: 0, y: 0, z: 0 }
                },
            ),
            GRID_MAX_SIZE => put(
                u32_out,
                kernel(grid_max_size(p).min(u32::MAX as u64) as u32),
            ),
            // Fbarriers are an HSAIL feature no gfx11 code uses.
            FBARRIER_MAX_SIZE => put(u32_out, 0),
            QUEUES_MAX => put(u32_out, kernel(p.queues.max_queues)),
            QUEUE_MIN_SIZE => put(u32_out, kernel(p.queues.min_size)),
            QUEUE_MAX_SIZE => put(u32_out, kernel(p.queues.max_size)),
            QUEUE_TYPE => put(u32_out, QUEUE_TYPE_MULTI),
            NODE => put(u32_out, a.index as u32),
            DEVICE => put(
                u32_out,
                if gpu {
                    DEVICE_TYPE_GPU
                } else {
                    DEVICE_TYPE_CPU
                },
            ),
            CACHE_SIZE => put(value as *mut [u32; 4], cache_sizes(a)),
            ISA => put(value as *mut u64, a.isa.unwrap_or(0)),
            EXTENSIONS => put(
                value as *mut [u8; 128],
                if gpu { extension_mask() } else { [0; 128] },
            ),
            VERSION_MAJOR => put(value as *mut u16, HSA_VERSION.0),
            VERSION_MINOR => put(value as *mut u16, HSA_VERSION.1),
            AMD_CHIP_ID => put(u32_out, kernel(p.chip_id)),
            AMD_CACHELINE_SIZE => put(u32_out, if gpu { p.cache_line_bytes } else { 64 }),
            AMD_COMPUTE_UNIT_COUNT => put(
                u32_out,
                if gpu {
                    p.compute_units
                } else {
                    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
                },
            ),
            AMD_MAX_CLOCK_FREQUENCY => match (gpu, host_max_clock_mhz()) {
                (true, _) => put(u32_out, p.clock_mhz),
                (false, Some(mhz)) => put(u32_out, mhz),
                (false, None) => Err(unsupported(
                    "hsa_agent_get_info(HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY) of the CPU agent: \
                     the host reports no clock in cpufreq or /proc/cpuinfo",
                )),
            },
            AMD_DRIVER_NODE_ID => put(u32_out, a.index as u32),
            // softgpu has no hardware address watch points.
            AMD_MAX_ADDRESS_WATCH_POINTS => put(u32_out, 0),
            // A synthetic PCI location: bus = the GPU's number + 1,
            // device 0, function 0, so each GPU agent's differs; the CPU
            // agent has none (0).
            AMD_BDFID => put(
                u32_out,
                if gpu {
                    (gpu_number(a) as u32 + 1) << 8
                } else {
                    0
                },
            ),
            AMD_DOMAIN => put(u32_out, 0),
            AMD_MEMORY_WIDTH => put(u32_out, if gpu { p.memory_bus_width_bits } else { 0 }),
            AMD_MEMORY_MAX_FREQUENCY => put(u32_out, if gpu { p.memory_clock_mhz } else { 0 }),
            AMD_PRODUCT_NAME => put_padded::<64>(
                value,
                &if gpu {
                    p.marketing_name.clone()
                } else {
                    a.name()
                },
            ),
            AMD_MAX_WAVES_PER_CU => put(u32_out, kernel(p.max_waves_per_cu)),
            AMD_NUM_SIMDS_PER_CU => put(u32_out, kernel(p.simds_per_cu)),
            AMD_NUM_SHADER_ENGINES => put(u32_out, kernel(p.shader_engines)),
            AMD_NUM_SHADER_ARRAYS_PER_SE => put(u32_out, kernel(p.shader_arrays_per_engine)),
            // The two HDP flush control registers a runtime writes after
            // host stores to device memory (AMD's CLR does). Device memory
            // is host memory, always coherent, so a write flushes nothing:
            // they are two words of process memory every GPU agent shares.
            AMD_HDP_FLUSH if gpu => put(value as *mut [*mut u32; 2], hdp_flush_registers()),
            AMD_HDP_FLUSH => Err(unsupported(
                "hsa_agent_get_info(HSA_AMD_AGENT_INFO_HDP_FLUSH) of the CPU agent: only GPU \
                 agents have an HDP",
            )),
            // Cooperative queues (HSA_QUEUE_TYPE_COOPERATIVE) are not
            // offered.
            AMD_COOPERATIVE_QUEUES => put(value as *mut bool, false),
            AMD_UUID => {
                let uuid = if gpu {
                    format!("GPU-softgpu{:07}", gpu_number(a))
                } else {
                    "CPU-XX".to_string()
                };
                let mut bytes = uuid.into_bytes();
                bytes.push(0);
                put_bytes(value, &bytes)
            }
            AMD_ASIC_REVISION => put(u32_out, 0),
            // Device memory is host memory: the host reaches all of it.
            AMD_SVM_DIRECT_HOST_ACCESS => put(value as *mut bool, true),
            AMD_COOPERATIVE_COMPUTE_UNIT_COUNT => put(u32_out, kernel(p.compute_units)),
            // Free bytes of the agent's allocatable pools as the runtime
            // charges them (whole granules per allocation): the GPU's
            // device pool; the CPU agent's system and kernarg pools. ROCr
            // (`GpuAgent::GetInfo`, amd_gpu_agent.cpp) asks the driver for
            // the GPU's free memory; its `CpuAgent::GetInfo` refuses the
            // attribute, but softgpu's accounting knows the CPU pools too.
            AMD_MEMORY_AVAIL => put(value as *mut u64, memory_available(rt, a)),
            // The CPU agent reports the system timestamp rate, as ROCr's
            // `CpuAgent::GetInfo` (amd_cpu_agent.cpp) does.
            AMD_TIMESTAMP_FREQUENCY => put(
                value as *mut u64,
                if gpu {
                    GPU_TIMESTAMP_FREQUENCY
                } else {
                    TIMESTAMP_FREQUENCY
                },
            ),
            AMD_ASIC_FAMILY_ID => put(u32_out, kernel(p.asic_family_id)),
            // softgpu has no command-processor or SDMA firmware. 0 is what
            // ROCr reports for an agent without one (`CpuAgent::GetInfo`),
            // so clients keep firmware-version-gated paths off; a made-up
            // version could turn on workarounds for a firmware that does
            // not exist.
            AMD_UCODE_VERSION | AMD_SDMA_UCODE_VERSION => put(u32_out, 0),
            AMD_NUM_SDMA_ENG => put(u32_out, kernel(SDMA_ENGINES)),
            // No xGMI hive between softgpu's GPUs (ROCr's CPU agent: 0).
            AMD_NUM_SDMA_XGMI_ENG => put(u32_out, 0),
            // No IOMMU translates for the emulated GPU (ROCr's CPU agent:
            // NONE; a gfx11 GPU without IOMMUv2 reports NONE too).
            AMD_IOMMU_SUPPORT => put(u32_out, IOMMU_SUPPORT_NONE),
            // One compute die (XCC) per gfx11 GPU; the CPU agent has none,
            // as in ROCr's `CpuAgent::GetInfo`.
            AMD_NUM_XCC => put(u32_out, kernel(1)),
            // The KFD's GPU id in ROCr; softgpu has no KFD, so each GPU
            // gets a synthetic id, unique and non-zero (0 is what ROCr
            // reports for the CPU agent).
            AMD_DRIVER_UID => put(
                u32_out,
                if gpu {
                    DRIVER_UID_BASE + gpu_number(a) as u32
                } else {
                    0
                },
            ),
            // Every GPU's nearest CPU is the one CPU agent; the CPU agent
            // answers a null handle, as ROCr's `CpuAgent::GetInfo` does.
            AMD_NEAREST_CPU => put(
                value as *mut u64,
                if gpu {
                    rt.agents
                        .iter()
                        .find(|x| x.kind == AgentKind::Cpu)
                        .and_then(|x| rt.agent_handles.get(x.index).copied())
                        .unwrap_or(0)
                } else {
                    0
                },
            ),
            // The APU bit for profiles of an APU (gfx1151), as ROCr's
            // `GpuAgent::GetInfoMemoryProperties` sets it for integrated
            // GPUs; none for a discrete GPU or the CPU agent.
            AMD_MEMORY_PROPERTIES => {
                let mut mask = [0u8; 8];
                if gpu && p.is_apu {
                    mask[0] |= MEMORY_PROPERTY_AGENT_IS_APU;
                }
                put(value as *mut [u8; 8], mask)
            }
            // No AQL extensions: ROCr answers an all-zero mask for every
            // agent too ("not implemented yet", amd_gpu_agent.cpp and
            // amd_cpu_agent.cpp `GetInfo`).
            AMD_AQL_EXTENSIONS => put(value as *mut [u8; 8], [0u8; 8]),
            SOFTGPU_PROFILE_ID | SOFTGPU_PROFILE_REVISION | SOFTGPU_FIDELITY if !gpu => Err(
                invalid(format!("{attribute:#x}: a device profile is a GPU agent's")),
            ),
            SOFTGPU_PROFILE_ID => put_padded::<64>(value, &p.profile_id),
            SOFTGPU_PROFILE_REVISION => put(u32_out, p.revision),
            SOFTGPU_FIDELITY => put(u32_out, p.max_fidelity.code()),
            other => Err(invalid(format!(
                "{other:#x} is not an hsa_agent_info_t or hsa_amd_agent_info_t attribute"
            ))),
        }
    }
}

/// First `HSA_AMD_AGENT_INFO_DRIVER_UID` of the GPU agents (then one
/// more per GPU).
const DRIVER_UID_BASE: u32 = 0x5047_0001;

/// Free bytes of an agent's allocatable pools, each heap counted once
/// (the CPU agent's system pools are views of one).
fn memory_available(rt: &Runtime, a: &Agent) -> u64 {
    let mut heaps: Vec<Arc<Pool>> = Vec::new();
    for p in a.pools.iter().filter_map(|&h| rt.pool(h).ok()) {
        if p.allocatable() && !heaps.iter().any(|h| h.same_memory(&p)) {
            heaps.push(p);
        }
    }
    heaps
        .iter()
        .map(|p| p.free_bytes())
        .fold(0u64, u64::saturating_add)
}

/// `hsa_agent_get_info_size`: the size of an attribute's value. ROCr does
/// not export it (`hsa.h` keeps its declaration commented out, "will not
/// be in the spec unless needed"); softgpu answers it for every attribute
/// `hsa_agent_get_info` knows, so a client can size its buffer.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_get_info_size(
    agent: u64,
    attribute: u32,
    size: *mut usize,
) -> Status {
    crate::guard("hsa_agent_get_info_size", || {
        runtime()?.agent(agent)?;
        let n = agent_info::size(attribute).ok_or_else(|| {
            invalid(format!(
                "{attribute:#x} is not an hsa_agent_info_t or hsa_amd_agent_info_t attribute"
            ))
        })?;
        // SAFETY: the C caller's output for a size_t (crate docs,
        // "Outputs"); `put` refuses NULL.
        unsafe { put(size, n) }
    })
}

/// `hsa_agent_set_info`: no agent attribute can be set. ROCr does not
/// export it either (`hsa.h` keeps its declaration commented out). The
/// agent and attribute are checked first, so a bad one gets its own
/// status; a known attribute is then refused with `HSA_STATUS_ERROR`.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_set_info(
    agent: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    crate::guard("hsa_agent_set_info", || {
        runtime()?.agent(agent)?;
        if agent_info::size(attribute).is_none() {
            return Err(invalid(format!(
                "{attribute:#x} is not an hsa_agent_info_t or hsa_amd_agent_info_t attribute"
            )));
        }
        non_null(value, "value")?;
        Err(unsupported(format!(
            "hsa_agent_set_info(attribute {attribute:#x}): agent attributes are read-only \
             (ROCr does not implement hsa_agent_set_info either)"
        )))
    })
}

/// `hsa_amd_agent_set_async_scratch_limit`: accepted for a GPU agent. The
/// threshold steers how ROCr's queues keep and reclaim the device scratch
/// they grow for big dispatches; softgpu's scratch is host memory the
/// executor gives each wave for its dispatch and frees after, so there is
/// nothing to keep or reclaim and the value is not needed. A CPU agent is
/// refused with `HSA_STATUS_ERROR_INVALID_AGENT`, as in ROCr's
/// `hsa_amd_agent_set_async_scratch_limit` (hsa_ext_amd.cpp).
#[no_mangle]
pub extern "C" fn hsa_amd_agent_set_async_scratch_limit(agent: u64, _threshold: usize) -> Status {
    crate::guard("hsa_amd_agent_set_async_scratch_limit", || {
        if runtime()?.agent(agent)?.kind != AgentKind::Gpu {
            return Err(Error::InvalidHandle {
                kind: "agent",
                handle: agent,
            });
        }
        Ok(())
    })
}

/// `hsa_amd_log_flag_t` bits `hsa_amd_enable_logging` knows:
/// `HSA_AMD_LOG_FLAG_BLIT_KERNEL_PKTS` (bit 0).
const LOG_FLAG_BLIT_KERNEL_PKTS: u64 = 1 << 0;

/// `hsa_amd_enable_logging`: the one log ROCm defines is of the AQL
/// packets the runtime enqueues for its own blit kernels. softgpu runs
/// copies and fills on host threads and enqueues no packets of its own, so
/// asking for that log is refused with `HSA_STATUS_ERROR` (copies appear in
/// the `SOFTGPU_TRACE` trace as `api` events instead). All-zero flags
/// (logging off, which it is) succeed; unknown bits or NULL flags are
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT` (ROCr's `Runtime::EnableLogging`,
/// runtime.cpp, copies the flags without looking at them).
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_enable_logging(flags: *mut u8, _file: *mut c_void) -> Status {
    crate::guard("hsa_amd_enable_logging", || {
        runtime()?;
        non_null(flags, "flags")?;
        // SAFETY: non-null (checked); by hsa_ext_amd.h `flags` is a
        // uint8_t[8] (crate docs, "Inputs"); read unaligned.
        let bits = u64::from_le_bytes(unsafe { (flags as *const [u8; 8]).read_unaligned() });
        if bits & !LOG_FLAG_BLIT_KERNEL_PKTS != 0 {
            return Err(invalid(format!(
                "flags {bits:#x}: only HSA_AMD_LOG_FLAG_BLIT_KERNEL_PKTS (bit 0) is defined"
            )));
        }
        if bits == 0 {
            return Ok(());
        }
        Err(unsupported(
            "hsa_amd_enable_logging(HSA_AMD_LOG_FLAG_BLIT_KERNEL_PKTS): softgpu runs copies and \
             fills on host threads and enqueues no blit-kernel packets to log (see SOFTGPU_TRACE)",
        ))
    })
}

/// `hsa_agent_extension_supported` (deprecated form).
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_extension_supported(
    extension: u16,
    agent: u64,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> Status {
    crate::guard("hsa_agent_extension_supported", || {
        let rt = runtime()?;
        let a = rt.agent(agent)?;
        known_extension(extension)?;
        let ok = a.kind == AgentKind::Gpu
            && supported_minor(extension, version_major).is_some_and(|m| version_minor <= m);
        // SAFETY: the C caller's output for the value written (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(result, ok) }
    })
}

/// `hsa_agent_major_extension_supported`.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_major_extension_supported(
    extension: u16,
    agent: u64,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> Status {
    crate::guard("hsa_agent_major_extension_supported", || {
        let rt = runtime()?;
        let a = rt.agent(agent)?;
        known_extension(extension)?;
        non_null(version_minor, "version_minor")?;
        non_null(result, "result")?;
        let minor = supported_minor(extension, version_major).filter(|_| a.kind == AgentKind::Gpu);
        // SAFETY: both non-null (checked) and the C caller's outputs for a
        // uint16_t and a bool (crate docs, "Outputs").
        unsafe {
            put(version_minor, minor.unwrap_or(0))?;
            put(result, minor.is_some())
        }
    })
}

/// `hsa_agent_get_exception_policies` (deprecated form): as for the
/// agent's ISA; the CPU agent has none.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_get_exception_policies(
    agent: u64,
    profile: u32,
    mask: *mut u16,
) -> Status {
    crate::guard("hsa_agent_get_exception_policies", || {
        let rt = runtime()?;
        rt.agent(agent)?;
        check_profile(profile)?;
        // SAFETY: the C caller's output for the value written (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(mask, EXCEPTION_POLICIES) }
    })
}

/// The exception policies kernels get: none. softgpu does not raise HSA
/// floating-point exceptions (kernels run with the IEEE exception enables
/// their descriptor sets, and no trap handler exists to report them).
const EXCEPTION_POLICIES: u16 = 0;

fn check_profile(profile: u32) -> Result<(), Error> {
    if profile == PROFILE_BASE || profile == PROFILE_FULL {
        Ok(())
    } else {
        Err(invalid(format!("{profile} is not an hsa_profile_t")))
    }
}

// ---------------------------------------------------------------------------
// Caches.

/// Tag in the top 16 bits of a cache handle.
const CACHE_TAG: u64 = 0xCAC4 << 48;

fn cache_handle(agent: usize, level: u8) -> u64 {
    CACHE_TAG | (agent as u64) << 8 | level as u64
}

/// The agent and level a cache handle names, with the cache's size.
fn cache_of(rt: &Runtime, cache: u64) -> Option<(Arc<Agent>, u8, u32)> {
    if cache & (0xFFFF << 48) != CACHE_TAG {
        return None;
    }
    let level = (cache & 0xFF) as u8;
    let agent = rt
        .agents
        .get(((cache >> 8) & 0xFFFF_FFFF) as usize)?
        .clone();
    let size = *cache_sizes(&agent).get((level as usize).checked_sub(1)?)?;
    (size > 0).then_some((agent, level, size))
}

/// `hsa_agent_iterate_caches`: the agent's data caches by ascending level.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_iterate_caches(
    agent: u64,
    callback: Option<HandleCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_agent_iterate_caches", || {
        let rt = runtime()?;
        let a = rt.agent(agent)?;
        let f = self::callback(callback)?;
        let caches: Vec<u64> = (1..=4u8)
            .filter(|&l| cache_sizes(&a)[l as usize - 1] > 0)
            .map(|l| cache_handle(a.index, l))
            .collect();
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(caches, |c| unsafe { f(c, data) }))
    })
}

/// `hsa_cache_get_info`. The name length counts the terminating NUL and
/// the name is written with it, as ROCm does (clients size the buffer
/// from the length and print it as a C string).
#[no_mangle]
pub unsafe extern "C" fn hsa_cache_get_info(
    cache: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard_status("hsa_cache_get_info", || {
        let rt = runtime()?;
        let Some((_, level, size)) = cache_of(&rt, cache) else {
            return refuse(
                "hsa_cache_get_info",
                HSA_STATUS_ERROR_INVALID_CACHE,
                format_args!("{cache:#x} is not a cache handle"),
            );
        };
        non_null(value, "value")?;
        let name = format!("L{level}\0");
        // SAFETY: `value` is non-null (checked) and the C caller's output
        // for the attribute's type (crate docs, "Outputs"); each arm writes
        // that type (the name as long as its length attribute says).
        unsafe {
            match attribute {
                0 => put(value as *mut u32, name.len() as u32)?,
                1 => put_bytes(value, name.as_bytes())?,
                2 => put(value as *mut u8, level)?,
                3 => put(value as *mut u32, size)?,
                other => return Err(invalid(format!("{other} is not an hsa_cache_info_t"))),
            }
        }
        Ok(HSA_STATUS_SUCCESS)
    })
}

// ---------------------------------------------------------------------------
// ISAs and wavefronts.

/// `hsa_agent_iterate_isas`: a GPU agent has one ISA; the CPU agent none.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_iterate_isas(
    agent: u64,
    callback: Option<HandleCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_agent_iterate_isas", || {
        let rt = runtime()?;
        let a = rt.agent(agent)?;
        let f = self::callback(callback)?;
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(a.isa, |i| unsafe { f(i, data) }))
    })
}

/// The profile an ISA name stands for: a live agent's ISA, or a built-in
/// profile's (so a code object for another processor can be named and
/// compared, and is then refused at load).
fn isa_by_name(rt: &Runtime, name: &str) -> Option<u64> {
    let processor = name.strip_prefix("amdgcn-amd-amdhsa--")?;
    let processor = processor.split(':').next()?;
    let full = format!("amdgcn-amd-amdhsa--{processor}");
    if let Some((h, _)) = rt.isas.all().into_iter().find(|(_, i)| i.name == full) {
        return Some(h);
    }
    static INSERT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _once = INSERT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((h, _)) = rt.isas.all().into_iter().find(|(_, i)| i.name == full) {
        return Some(h);
    }
    let profile = Profile::built_in(processor).ok()?;
    Some(rt.isas.insert(Arc::new(Isa {
        name: full,
        profile: Arc::new(profile),
    })))
}

/// `hsa_isa_from_name`: `amdgcn-amd-amdhsa--gfxNNNN` (target features such
/// as `:xnack-` are accepted and ignored; gfx11 has none).
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_from_name(name: *const c_char, isa: *mut u64) -> Status {
    guard_status("hsa_isa_from_name", || {
        let rt = runtime()?;
        // SAFETY: the C caller's NUL-terminated string (crate docs,
        // "Inputs"); `c_str` refuses NULL.
        let text = unsafe { c_str(name, "name") }?;
        non_null(isa, "isa")?;
        match isa_by_name(&rt, text) {
            // SAFETY: non-null (checked) and the C caller's output for the
            // value written (crate docs, "Outputs").
            Some(h) => unsafe { put(isa, h) }.map(|_| HSA_STATUS_SUCCESS),
            None => refuse(
                "hsa_isa_from_name",
                HSA_STATUS_ERROR_INVALID_ISA_NAME,
                format_args!("no ISA named {text:?}"),
            ),
        }
    })
}

/// `hsa_isa_info_t` attributes.
mod isa_info {
    pub const NAME_LENGTH: u32 = 0;
    pub const NAME: u32 = 1;
    pub const CALL_CONVENTION_COUNT: u32 = 2;
    pub const CALL_CONVENTION_INFO_WAVEFRONT_SIZE: u32 = 3;
    pub const CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT: u32 = 4;
    pub const MACHINE_MODELS: u32 = 5;
    pub const PROFILES: u32 = 6;
    pub const DEFAULT_FLOAT_ROUNDING_MODES: u32 = 7;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 8;
    pub const FAST_F16_OPERATION: u32 = 9;
    pub const WORKGROUP_MAX_DIM: u32 = 12;
    pub const WORKGROUP_MAX_SIZE: u32 = 13;
    pub const GRID_MAX_DIM: u32 = 14;
    pub const GRID_MAX_SIZE: u32 = 16;
    pub const FBARRIER_MAX_SIZE: u32 = 17;
}

/// Answers an ISA attribute; `index` is the call convention (one per wave
/// size the profile supports).
///
/// # Safety
/// A non-null `value` must be valid for a write of the attribute's type
/// (the C caller's output contract, crate docs, "Outputs").
unsafe fn isa_attribute(
    name: &'static str,
    isa: u64,
    attribute: u32,
    index: u32,
    value: *mut c_void,
) -> Status {
    use isa_info::*;
    guard_status(name, || {
        let rt = runtime()?;
        let i = rt.isas.get(isa)?;
        non_null(value, "value")?;
        let p = &i.profile;
        let call_convention = |index: u32| p.wave_sizes.get(index as usize).copied();
        let u32_out = value as *mut u32;
        // SAFETY: `value` is non-null (checked) and valid for the
        // attribute's type by this function's contract; each arm writes the
        // type hsa.h gives it (the name as long as its length says).
        unsafe {
            match attribute {
                // The length counts the NUL, and the name is written with
                // it, as ROCm does: clients (rocminfo) allocate exactly the
                // length and print the name as a C string.
                NAME_LENGTH => put(u32_out, i.name.len() as u32 + 1)?,
                NAME => put_bytes(value, format!("{}\0", i.name).as_bytes())?,
                CALL_CONVENTION_COUNT => put(u32_out, p.wave_sizes.len() as u32)?,
                CALL_CONVENTION_INFO_WAVEFRONT_SIZE
                | CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT => {
                    let Some(wave) = call_convention(index) else {
                        return refuse(
                            name,
                            HSA_STATUS_ERROR_INVALID_INDEX,
                            format_args!(
                                "call convention {index} (the ISA has {})",
                                p.wave_sizes.len()
                            ),
                        );
                    };
                    let v = if attribute == CALL_CONVENTION_INFO_WAVEFRONT_SIZE {
                        wave
                    } else {
                        p.max_waves_per_cu
                    };
                    put(u32_out, v)?
                }
                MACHINE_MODELS => put(value as *mut [bool; 2], [false, true])?,
                PROFILES => put(value as *mut [bool; 2], [true, true])?,
                // Indexed by hsa_default_float_rounding_mode_t: default,
                // zero, near.
                DEFAULT_FLOAT_ROUNDING_MODES => put(value as *mut [bool; 3], [true, true, true])?,
                BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                    put(value as *mut [bool; 3], [false, true, true])?
                }
                FAST_F16_OPERATION => put(value as *mut bool, true)?,
                WORKGROUP_MAX_DIM => put(value as *mut [u16; 3], workgroup_dims(p))?,
                WORKGROUP_MAX_SIZE => put(u32_out, p.max_workgroup_size)?,
                GRID_MAX_DIM => put(value as *mut Dim3, grid_dims(p))?,
                GRID_MAX_SIZE => put(value as *mut u64, grid_max_size(p))?,
                FBARRIER_MAX_SIZE => put(u32_out, 0)?,
                other => return Err(invalid(format!("{other} is not an hsa_isa_info_t"))),
            }
        }
        Ok(HSA_STATUS_SUCCESS)
    })
}

/// `hsa_isa_get_info_alt`.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_info_alt(
    isa: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    // SAFETY: the C caller's arguments meet the helper's contract,
    // which is this export's.
    unsafe { isa_attribute("hsa_isa_get_info_alt", isa, attribute, 0, value) }
}

/// `hsa_isa_get_info` (deprecated form with a call convention index).
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_info(
    isa: u64,
    attribute: u32,
    index: u32,
    value: *mut c_void,
) -> Status {
    // SAFETY: the C caller's arguments meet the helper's contract,
    // which is this export's.
    unsafe { isa_attribute("hsa_isa_get_info", isa, attribute, index, value) }
}

/// `hsa_isa_get_exception_policies`: none (see [`EXCEPTION_POLICIES`]).
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_exception_policies(
    isa: u64,
    profile: u32,
    mask: *mut u16,
) -> Status {
    crate::guard("hsa_isa_get_exception_policies", || {
        runtime()?.isas.get(isa)?;
        check_profile(profile)?;
        // SAFETY: the C caller's output for the value written (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(mask, EXCEPTION_POLICIES) }
    })
}

/// `hsa_isa_get_round_method`: gfx11's multiply-add (`v_fma_*`) rounds
/// once, for every type and flush mode.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_round_method(
    isa: u64,
    fp_type: u32,
    flush_mode: u32,
    round_method: *mut u32,
) -> Status {
    crate::guard("hsa_isa_get_round_method", || {
        runtime()?.isas.get(isa)?;
        if ![1, 2, 4].contains(&fp_type) {
            return Err(invalid(format!("{fp_type} is not an hsa_fp_type_t")));
        }
        if ![1, 2].contains(&flush_mode) {
            return Err(invalid(format!("{flush_mode} is not an hsa_flush_mode_t")));
        }
        const ROUND_METHOD_SINGLE: u32 = 1;
        // SAFETY: the C caller's output for the value written (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(round_method, ROUND_METHOD_SINGLE) }
    })
}

/// `hsa_isa_compatible` (deprecated): code for one processor runs only on
/// that processor.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_compatible(
    code_object_isa: u64,
    agent_isa: u64,
    result: *mut bool,
) -> Status {
    crate::guard("hsa_isa_compatible", || {
        let rt = runtime()?;
        let a = rt.isas.get(code_object_isa)?;
        let b = rt.isas.get(agent_isa)?;
        // SAFETY: the C caller's output for the value written (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(result, a.name == b.name) }
    })
}

/// Tag in the top 16 bits of a wavefront handle; the low bits hold the
/// wave size.
const WAVEFRONT_TAG: u64 = 0x3A7E << 48;

/// `hsa_isa_iterate_wavefronts`: one wavefront per supported wave size
/// (wave32 first on gfx11).
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_iterate_wavefronts(
    isa: u64,
    callback: Option<HandleCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_isa_iterate_wavefronts", || {
        let i = runtime()?.isas.get(isa)?;
        let f = self::callback(callback)?;
        let mut sizes = i.profile.wave_sizes.clone();
        sizes.sort_unstable();
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(sizes, |w| unsafe {
            f(WAVEFRONT_TAG | w as u64, data)
        }))
    })
}

/// `hsa_wavefront_get_info`.
#[no_mangle]
pub unsafe extern "C" fn hsa_wavefront_get_info(
    wavefront: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard_status("hsa_wavefront_get_info", || {
        runtime()?;
        let size = wavefront & 0xFFFF_FFFF;
        if wavefront & !0xFFFF_FFFF != WAVEFRONT_TAG || ![32, 64].contains(&size) {
            return refuse(
                "hsa_wavefront_get_info",
                HSA_STATUS_ERROR_INVALID_WAVEFRONT,
                format_args!("{wavefront:#x} is not a wavefront handle"),
            );
        }
        if attribute != 0 {
            return Err(invalid(format!(
                "{attribute} is not an hsa_wavefront_info_t"
            )));
        }
        // SAFETY: the C caller's output for the value written (crate
        // docs, "Outputs"); `put` refuses NULL.
        unsafe { put(value as *mut u32, size as u32) }?;
        Ok(HSA_STATUS_SUCCESS)
    })
}

/// The HDP flush control registers `HSA_AMD_AGENT_INFO_HDP_FLUSH` gives
/// (`hsa_amd_hdp_flush_t`: the memory flush register, then the register
/// flush register): words the caller may write at any time.
fn hdp_flush_registers() -> [*mut u32; 2] {
    static REGISTERS: [std::sync::atomic::AtomicU32; 2] = [
        std::sync::atomic::AtomicU32::new(0),
        std::sync::atomic::AtomicU32::new(0),
    ];
    REGISTERS.each_ref().map(|r| r.as_ptr())
}
