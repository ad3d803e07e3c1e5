//! Exports for features softgpu does not provide. Each checks its
//! arguments (`HSA_STATUS_ERROR_NOT_INITIALIZED` before `hsa_init`, a bad
//! agent or signal as such, a null required pointer as
//! `HSA_STATUS_ERROR_INVALID_ARGUMENT`), then refuses with an error status
//! and a one-time message saying what was asked ([`unsupported`]); none
//! ever reports success.
//!
//! - **Images and samplers** (`hsa_ext_image.h`, `hsa_amd_image_create`,
//!   `hsa_amd_image_get_info_max_dim`):
//!   the executor has no image path yet (no texture sampling or image
//!   loads/stores in its instruction semantics), so the images extension is
//!   not reported (`HSA_SYSTEM_INFO_EXTENSIONS`, extension queries) and
//!   these return `HSA_STATUS_ERROR`.
//! - **SVM** (`hsa_amd_svm_*`): `HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED` is
//!   false; kernels reach pool allocations and locked or registered host
//!   memory, not arbitrary host pages.
//! - **Graphics interop** (`hsa_amd_interop_*`): there is no graphics
//!   driver whose buffers could be mapped.
//! - **dma-buf export** (`hsa_amd_portable_export_dmabuf`,
//!   `hsa_amd_portable_close_dmabuf`): `HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED`
//!   is false; there is no kernel driver to make a dma-buf of softgpu's
//!   memory (which is the process's own), so no descriptor is ever handed
//!   out, and closing one is refused rather than closing whatever file the
//!   number names.
//! - **Streaming performance monitor** (`hsa_amd_spm_*`): softgpu has no
//!   SPM hardware or driver to stream counters from.
//! - **HSAIL-era code objects** (`hsa_code_object_*`, `hsa_code_symbol_*`,
//!   `hsa_executable_load_code_object`): deprecated by HSA 1.1; code
//!   objects are loaded through readers (`executable.rs`).

use std::ffi::{c_char, c_void};

use softgpu_runtime::agent::AgentKind;
use softgpu_runtime::error::invalid;
use softgpu_runtime::Error;

use crate::{guard, non_null, runtime, unsupported, Status};

symver!("absent");

/// Checks the runtime and an agent handle.
fn agent_ok(agent: u64) -> Result<(), Error> {
    runtime()?.agent(agent).map(|_| ())
}

/// Why images are refused.
fn no_images(function: &str) -> Error {
    unsupported(format!(
        "{function}: images are not supported (the executor has no image path; the images \
         extension is not reported)"
    ))
}

/// Why SVM is refused.
fn no_svm(function: &str) -> Error {
    unsupported(format!(
        "{function}: shared virtual memory is not supported (HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED is \
         false; allocate from a pool or lock host memory)"
    ))
}

/// Why interop is refused.
fn no_interop(function: &str) -> Error {
    unsupported(format!(
        "{function}: graphics interop is not supported (there is no graphics driver)"
    ))
}

/// Why dma-buf export is refused.
fn no_dmabuf(function: &str) -> Error {
    unsupported(format!(
        "{function}: dma-buf export is not supported (HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED is \
         false: there is no kernel driver to export softgpu's memory through)"
    ))
}

/// Why the streaming performance monitor is refused.
fn no_spm(function: &str) -> Error {
    unsupported(format!(
        "{function}: the streaming performance monitor is not supported (softgpu has no SPM \
         hardware or driver)"
    ))
}

/// Checks the runtime and that an agent is a GPU agent (SPM belongs to
/// one); a CPU agent is `HSA_STATUS_ERROR_INVALID_AGENT`, as in ROCr's
/// `hsa_amd_spm_*` (hsa_ext_amd.cpp).
fn gpu_agent_ok(agent: u64) -> Result<(), Error> {
    if runtime()?.agent(agent)?.kind == AgentKind::Gpu {
        Ok(())
    } else {
        Err(Error::InvalidHandle {
            kind: "agent",
            handle: agent,
        })
    }
}

/// Why the deprecated code object API is refused.
fn no_code_object_v2(function: &str) -> Error {
    unsupported(format!(
        "{function}: the deprecated hsa_code_object_t API is not supported (load code objects \
         through hsa_code_object_reader_* and hsa_executable_load_agent_code_object)"
    ))
}

// ---------------------------------------------------------------------------
// dma-buf export (hsa_ext_amd.h)

/// Checks the arguments as ROCr's `hsa_amd_portable_export_dmabuf`
/// (hsa_ext_amd.cpp) does (NULL pointers and size 0 are
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`), then refuses.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_portable_export_dmabuf(
    ptr: *const c_void,
    size: usize,
    dmabuf: *mut i32,
    offset: *mut u64,
) -> Status {
    guard("hsa_amd_portable_export_dmabuf", || {
        runtime()?;
        non_null(ptr, "ptr")?;
        non_null(dmabuf, "dmabuf")?;
        non_null(offset, "offset")?;
        if size == 0 {
            return Err(invalid("size 0"));
        }
        Err(no_dmabuf("hsa_amd_portable_export_dmabuf"))
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_portable_close_dmabuf(dmabuf: i32) -> Status {
    guard("hsa_amd_portable_close_dmabuf", || {
        runtime()?;
        Err(no_dmabuf(&format!(
            "hsa_amd_portable_close_dmabuf({dmabuf}) (softgpu never exported one)"
        )))
    })
}

// ---------------------------------------------------------------------------
// Streaming performance monitor (hsa_ext_amd.h)

#[no_mangle]
pub extern "C" fn hsa_amd_spm_acquire(preferred_agent: u64) -> Status {
    guard("hsa_amd_spm_acquire", || {
        gpu_agent_ok(preferred_agent)?;
        Err(no_spm("hsa_amd_spm_acquire"))
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_spm_release(preferred_agent: u64) -> Status {
    guard("hsa_amd_spm_release", || {
        gpu_agent_ok(preferred_agent)?;
        Err(no_spm("hsa_amd_spm_release"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_spm_set_dest_buffer(
    preferred_agent: u64,
    _size_in_bytes: usize,
    _timeout: *mut u32,
    _size_copied: *mut u32,
    _dest: *mut c_void,
    _is_data_loss: *mut bool,
) -> Status {
    guard("hsa_amd_spm_set_dest_buffer", || {
        gpu_agent_ok(preferred_agent)?;
        Err(no_spm("hsa_amd_spm_set_dest_buffer"))
    })
}

// ---------------------------------------------------------------------------
// hsa_ext_image.h

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_get_capability(
    agent: u64,
    geometry: u32,
    image_format: *const c_void,
    capability_mask: *mut u32,
) -> Status {
    guard("hsa_ext_image_get_capability", || {
        agent_ok(agent)?;
        non_null(image_format, "image_format")?;
        non_null(capability_mask, "capability_mask")?;
        Err(no_images(&format!(
            "hsa_ext_image_get_capability(geometry {geometry})"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_get_capability_with_layout(
    agent: u64,
    geometry: u32,
    image_format: *const c_void,
    image_data_layout: u32,
    capability_mask: *mut u32,
) -> Status {
    guard("hsa_ext_image_get_capability_with_layout", || {
        agent_ok(agent)?;
        non_null(image_format, "image_format")?;
        non_null(capability_mask, "capability_mask")?;
        Err(no_images(&format!(
            "hsa_ext_image_get_capability_with_layout(geometry {geometry}, layout {image_data_layout})"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_data_get_info(
    agent: u64,
    image_descriptor: *const c_void,
    _access_permission: u32,
    image_data_info: *mut c_void,
) -> Status {
    guard("hsa_ext_image_data_get_info", || {
        agent_ok(agent)?;
        non_null(image_descriptor, "image_descriptor")?;
        non_null(image_data_info, "image_data_info")?;
        Err(no_images("hsa_ext_image_data_get_info"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_data_get_info_with_layout(
    agent: u64,
    image_descriptor: *const c_void,
    _access_permission: u32,
    _image_data_layout: u32,
    _image_data_row_pitch: usize,
    _image_data_slice_pitch: usize,
    image_data_info: *mut c_void,
) -> Status {
    guard("hsa_ext_image_data_get_info_with_layout", || {
        agent_ok(agent)?;
        non_null(image_descriptor, "image_descriptor")?;
        non_null(image_data_info, "image_data_info")?;
        Err(no_images("hsa_ext_image_data_get_info_with_layout"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_create(
    agent: u64,
    image_descriptor: *const c_void,
    image_data: *const c_void,
    _access_permission: u32,
    image: *mut u64,
) -> Status {
    guard("hsa_ext_image_create", || {
        agent_ok(agent)?;
        non_null(image_descriptor, "image_descriptor")?;
        non_null(image_data, "image_data")?;
        non_null(image, "image")?;
        Err(no_images("hsa_ext_image_create"))
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_create_with_layout(
    agent: u64,
    image_descriptor: *const c_void,
    image_data: *const c_void,
    _access_permission: u32,
    _image_data_layout: u32,
    _image_data_row_pitch: usize,
    _image_data_slice_pitch: usize,
    image: *mut u64,
) -> Status {
    guard("hsa_ext_image_create_with_layout", || {
        agent_ok(agent)?;
        non_null(image_descriptor, "image_descriptor")?;
        non_null(image_data, "image_data")?;
        non_null(image, "image")?;
        Err(no_images("hsa_ext_image_create_with_layout"))
    })
}

/// No image can exist, so every image handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_destroy(agent: u64, image: u64) -> Status {
    guard("hsa_ext_image_destroy", || {
        agent_ok(agent)?;
        Err(no_images(&format!(
            "hsa_ext_image_destroy(image {image:#x})"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_copy(
    agent: u64,
    _src_image: u64,
    src_offset: *const c_void,
    _dst_image: u64,
    dst_offset: *const c_void,
    range: *const c_void,
) -> Status {
    guard("hsa_ext_image_copy", || {
        agent_ok(agent)?;
        non_null(src_offset, "src_offset")?;
        non_null(dst_offset, "dst_offset")?;
        non_null(range, "range")?;
        Err(no_images("hsa_ext_image_copy"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_import(
    agent: u64,
    src_memory: *const c_void,
    _src_row_pitch: usize,
    _src_slice_pitch: usize,
    _dst_image: u64,
    image_region: *const c_void,
) -> Status {
    guard("hsa_ext_image_import", || {
        agent_ok(agent)?;
        non_null(src_memory, "src_memory")?;
        non_null(image_region, "image_region")?;
        Err(no_images("hsa_ext_image_import"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_export(
    agent: u64,
    _src_image: u64,
    dst_memory: *mut c_void,
    _dst_row_pitch: usize,
    _dst_slice_pitch: usize,
    image_region: *const c_void,
) -> Status {
    guard("hsa_ext_image_export", || {
        agent_ok(agent)?;
        non_null(dst_memory, "dst_memory")?;
        non_null(image_region, "image_region")?;
        Err(no_images("hsa_ext_image_export"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_image_clear(
    agent: u64,
    _image: u64,
    data: *const c_void,
    image_region: *const c_void,
) -> Status {
    guard("hsa_ext_image_clear", || {
        agent_ok(agent)?;
        non_null(data, "data")?;
        non_null(image_region, "image_region")?;
        Err(no_images("hsa_ext_image_clear"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ext_sampler_create(
    agent: u64,
    sampler_descriptor: *const c_void,
    sampler: *mut u64,
) -> Status {
    guard("hsa_ext_sampler_create", || {
        agent_ok(agent)?;
        non_null(sampler_descriptor, "sampler_descriptor")?;
        non_null(sampler, "sampler")?;
        Err(no_images("hsa_ext_sampler_create"))
    })
}

/// No sampler can exist, so every sampler handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hsa_ext_sampler_destroy(agent: u64, sampler: u64) -> Status {
    guard("hsa_ext_sampler_destroy", || {
        agent_ok(agent)?;
        Err(no_images(&format!(
            "hsa_ext_sampler_destroy(sampler {sampler:#x})"
        )))
    })
}

// ---------------------------------------------------------------------------
// hsa_ext_amd.h: images, IPC, interop, SVM

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_image_create(
    agent: u64,
    image_descriptor: *const c_void,
    image_layout: *const c_void,
    image_data: *const c_void,
    _access_permission: u32,
    image: *mut u64,
) -> Status {
    guard("hsa_amd_image_create", || {
        agent_ok(agent)?;
        non_null(image_descriptor, "image_descriptor")?;
        non_null(image_layout, "image_layout")?;
        non_null(image_data, "image_data")?;
        non_null(image, "image")?;
        Err(no_images("hsa_amd_image_create"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_image_get_info_max_dim(
    agent: u64,
    _attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_amd_image_get_info_max_dim", || {
        agent_ok(agent)?;
        non_null(value, "value")?;
        Err(no_images("hsa_amd_image_get_info_max_dim"))
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_interop_map_buffer(
    num_agents: u32,
    agents: *mut u64,
    interop_handle: i32,
    _flags: u32,
    size: *mut usize,
    ptr: *mut *mut c_void,
    _metadata_size: *mut usize,
    _metadata: *mut *const c_void,
) -> Status {
    guard("hsa_amd_interop_map_buffer", || {
        runtime()?;
        non_null(agents, "agents")?;
        non_null(size, "size")?;
        non_null(ptr, "ptr")?;
        Err(no_interop(&format!(
            "hsa_amd_interop_map_buffer(handle {interop_handle}, {num_agents} agents)"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_interop_unmap_buffer(ptr: *mut c_void) -> Status {
    guard("hsa_amd_interop_unmap_buffer", || {
        runtime()?;
        non_null(ptr, "ptr")?;
        Err(no_interop("hsa_amd_interop_unmap_buffer"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_svm_attributes_set(
    ptr: *mut c_void,
    size: usize,
    attribute_list: *mut c_void,
    attribute_count: usize,
) -> Status {
    guard("hsa_amd_svm_attributes_set", || {
        runtime()?;
        non_null(ptr, "ptr")?;
        non_null(attribute_list, "attribute_list")?;
        Err(no_svm(&format!(
            "hsa_amd_svm_attributes_set({ptr:p}, {size} bytes, {attribute_count} attributes)"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_svm_attributes_get(
    ptr: *mut c_void,
    size: usize,
    attribute_list: *mut c_void,
    attribute_count: usize,
) -> Status {
    guard("hsa_amd_svm_attributes_get", || {
        runtime()?;
        non_null(ptr, "ptr")?;
        non_null(attribute_list, "attribute_list")?;
        Err(no_svm(&format!(
            "hsa_amd_svm_attributes_get({ptr:p}, {size} bytes, {attribute_count} attributes)"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_svm_prefetch_async(
    ptr: *mut c_void,
    size: usize,
    agent: u64,
    num_dep_signals: u32,
    dep_signals: *const u64,
    _completion_signal: u64,
) -> Status {
    guard("hsa_amd_svm_prefetch_async", || {
        agent_ok(agent)?;
        non_null(ptr, "ptr")?;
        if num_dep_signals > 0 {
            non_null(dep_signals, "dep_signals")?;
        }
        Err(no_svm(&format!(
            "hsa_amd_svm_prefetch_async({ptr:p}, {size} bytes)"
        )))
    })
}

// ---------------------------------------------------------------------------
// hsa.h: the deprecated code object API

/// `alloc_callback(size, callback_data, address)`.
pub type SerializeAlloc = unsafe extern "C" fn(usize, u64, *mut *mut c_void) -> Status;
/// `callback(code_object, symbol, data)`.
pub type CodeSymbolCallback = unsafe extern "C" fn(u64, u64, *mut c_void) -> Status;

#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_serialize(
    _code_object: u64,
    alloc_callback: Option<SerializeAlloc>,
    _callback_data: u64,
    _options: *const c_char,
    serialized_code_object: *mut *mut c_void,
    serialized_code_object_size: *mut usize,
) -> Status {
    guard("hsa_code_object_serialize", || {
        runtime()?;
        crate::system::callback(alloc_callback)?;
        non_null(serialized_code_object, "serialized_code_object")?;
        non_null(serialized_code_object_size, "serialized_code_object_size")?;
        Err(no_code_object_v2("hsa_code_object_serialize"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_deserialize(
    serialized_code_object: *mut c_void,
    serialized_code_object_size: usize,
    _options: *const c_char,
    code_object: *mut u64,
) -> Status {
    guard("hsa_code_object_deserialize", || {
        runtime()?;
        non_null(serialized_code_object, "serialized_code_object")?;
        non_null(code_object, "code_object")?;
        Err(no_code_object_v2(&format!(
            "hsa_code_object_deserialize({serialized_code_object_size} bytes)"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_destroy(_code_object: u64) -> Status {
    guard("hsa_code_object_destroy", || {
        runtime()?;
        Err(no_code_object_v2("hsa_code_object_destroy"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_get_info(
    _code_object: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_code_object_get_info", || {
        runtime()?;
        non_null(value, "value")?;
        Err(no_code_object_v2(&format!(
            "hsa_code_object_get_info(attribute {attribute})"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_executable_load_code_object(
    executable: u64,
    agent: u64,
    _code_object: u64,
    _options: *const c_char,
) -> Status {
    guard("hsa_executable_load_code_object", || {
        let rt = runtime()?;
        rt.executables.get(executable)?;
        rt.agent(agent)?;
        Err(no_code_object_v2("hsa_executable_load_code_object"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_get_symbol(
    _code_object: u64,
    symbol_name: *const c_char,
    symbol: *mut u64,
) -> Status {
    guard("hsa_code_object_get_symbol", || {
        runtime()?;
        non_null(symbol_name, "symbol_name")?;
        non_null(symbol, "symbol")?;
        Err(no_code_object_v2("hsa_code_object_get_symbol"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_get_symbol_from_name(
    _code_object: u64,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    symbol: *mut u64,
) -> Status {
    guard("hsa_code_object_get_symbol_from_name", || {
        runtime()?;
        non_null(symbol_name, "symbol_name")?;
        non_null(symbol, "symbol")?;
        Err(no_code_object_v2("hsa_code_object_get_symbol_from_name"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_code_symbol_get_info(
    _code_symbol: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_code_symbol_get_info", || {
        runtime()?;
        non_null(value, "value")?;
        Err(no_code_object_v2(&format!(
            "hsa_code_symbol_get_info(attribute {attribute})"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_iterate_symbols(
    _code_object: u64,
    callback: Option<CodeSymbolCallback>,
    _data: *mut c_void,
) -> Status {
    guard("hsa_code_object_iterate_symbols", || {
        runtime()?;
        crate::system::callback(callback)?;
        Err(no_code_object_v2("hsa_code_object_iterate_symbols"))
    })
}
