//! Kernel launches, modules, function attributes and occupancy.
//!
//! A launch resolves the kernel (a registered host stub, or a module's
//! function) on the stream's device, copies the arguments out of the C
//! caller's `void** args` (or the packed `extra` buffer) at once — HIP
//! lets the caller reuse them when the call returns — and puts a
//! [`Launch`] on the stream.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::error::{c_str, get, guard, put, HipError, HipResult};
use crate::register::{with_registry, FatBinary};
use crate::state::{hip, lock, Hip};
use crate::stream::Work;

/// A kernel launch ready to put on a stream.
#[derive(Clone)]
pub struct Launch {
    pub kernel: softgpu::Kernel,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: softgpu::Args,
}

impl Launch {
    pub fn run(&self, stream: &softgpu::Stream) -> HipResult {
        stream
            .dispatch_args(&self.kernel, self.grid, self.block, &self.args)
            .map_err(|e| match e {
                // A block or LDS size beyond the kernel's or device's
                // limits: ROCm's launch validation returns
                // hipErrorInvalidValue for these.
                softgpu::Error::Launch { .. } => HipError::invalid(e.to_string()),
                e => HipError::from(e),
            })
    }
}

/// How a launch's arguments are given.
#[derive(Clone, Copy)]
pub enum ArgSource {
    /// One pointer per argument (`void** args`, `kernelParams`).
    Pointers(*mut *mut c_void),
    /// The `extra` array: a packed buffer and its size.
    Extra(*mut *mut c_void),
}

/// Copies the explicit arguments of `kernel` out of the caller's memory.
///
/// # Safety
/// `source` follows the crate's "Inputs" contract: one valid pointer per
/// explicit argument, each to as many bytes as the argument's size, or an
/// `extra` array ending in `HIP_LAUNCH_PARAM_END` whose buffer holds the
/// packed arguments.
pub unsafe fn read_args(kernel: &softgpu::Kernel, source: ArgSource) -> HipResult<softgpu::Args> {
    let info = kernel.info();
    let mut args = softgpu::Args::new();
    match source {
        ArgSource::Pointers(ptrs) => {
            if !info.described && !info.args.is_empty() {
                // One pointer per argument means nothing without the
                // arguments' sizes, and reading the whole segment through
                // the first could run past the caller's memory.
                return Err(HipError::invalid(format!(
                    "kernel {} has no metadata, so its arguments are unknown: pass its \
                     {}-byte kernarg segment as one buffer through `extra` \
                     (HIP_LAUNCH_PARAM_BUFFER_POINTER)",
                    info.name, info.args[0].size
                )));
            }
            if ptrs.is_null() && !info.args.is_empty() {
                return Err(HipError::invalid(format!(
                    "kernel {} takes {} arguments but the argument array is null",
                    info.name,
                    info.args.len()
                )));
            }
            for (i, arg) in info.args.iter().enumerate() {
                // SAFETY: one valid pointer per argument (this function's
                // contract).
                let p = unsafe { *ptrs.add(i) } as *const u8;
                if p.is_null() {
                    return Err(HipError::invalid(format!(
                        "kernel {}: the pointer to argument {i} ({}) is null",
                        info.name,
                        arg.label()
                    )));
                }
                // SAFETY: it points to the argument's `size` bytes.
                let bytes = unsafe { std::slice::from_raw_parts(p, arg.size as usize) };
                args = args.raw(bytes.to_vec());
            }
        }
        ArgSource::Extra(extra) => {
            let (mut buffer, mut size) = (std::ptr::null::<u8>(), None::<usize>);
            for i in (0..64).step_by(2) {
                // SAFETY: `extra` is key/value pairs ending in END.
                let key = unsafe { *extra.add(i) } as usize;
                if key == LAUNCH_PARAM_END {
                    break;
                }
                // SAFETY: as above: a value follows each key.
                let value = unsafe { *extra.add(i + 1) };
                match key {
                    LAUNCH_PARAM_BUFFER_POINTER => buffer = value as *const u8,
                    LAUNCH_PARAM_BUFFER_SIZE => {
                        // SAFETY: the size value points to a size_t.
                        size = Some(unsafe { get(value as *const usize, "buffer size")? })
                    }
                    k => {
                        return Err(HipError::invalid(format!(
                            "unknown launch parameter {k:#x} in extra"
                        )))
                    }
                }
            }
            let need = info
                .args
                .iter()
                .map(|a| (a.offset + a.size) as usize)
                .max()
                .unwrap_or(0);
            let size = size.unwrap_or(need);
            if buffer.is_null() && need > 0 {
                return Err(HipError::invalid(
                    "extra gives no HIP_LAUNCH_PARAM_BUFFER_POINTER",
                ));
            }
            if size < need {
                return Err(HipError::invalid(format!(
                    "kernel {} needs {need} bytes of arguments, the extra buffer has {size}",
                    info.name
                )));
            }
            for arg in &info.args {
                // SAFETY: the buffer holds `size` >= `need` bytes.
                let bytes = unsafe {
                    std::slice::from_raw_parts(buffer.add(arg.offset as usize), arg.size as usize)
                };
                args = args.raw(bytes.to_vec());
            }
        }
    }
    Ok(args)
}

/// A kernel of a loaded module (`hipFunction_t`).
pub struct Function {
    pub module: Arc<HipModule>,
    pub kernel: softgpu::Kernel,
}

/// A module loaded with `hipModuleLoad*` (`hipModule_t`), on one device.
pub struct HipModule {
    pub device: usize,
    pub module: softgpu::Module,
}

/// Kernels of registered fat binaries, resolved per (host stub, device).
static KERNELS: Mutex<Option<HashMap<(usize, usize), softgpu::Kernel>>> = Mutex::new(None);

/// The kernel a host stub (what `<<<>>>` and `hipLaunchKernel` name)
/// stands for, on `device`.
pub fn registered_kernel(stub: *const c_void, device: usize) -> HipResult<softgpu::Kernel> {
    let key = (stub as usize, device);
    if let Some(k) = lock(&KERNELS).get_or_insert_with(HashMap::new).get(&key) {
        return Ok(k.clone());
    }
    let (fatbin, name): (Arc<FatBinary>, String) = with_registry(|r| {
        let (index, name) = r.functions.get(&(stub as usize)).cloned().ok_or_else(|| {
            HipError::new(
                HIP_ERROR_INVALID_DEVICE_FUNCTION,
                format!("{stub:p} is not a registered kernel (a __global__ function's host stub)"),
            )
        })?;
        Ok::<_, HipError>((r.fatbins[index].clone(), name))
    })?;
    let kernel = fatbin
        .module(device)?
        .kernel(&name)
        .map_err(|e| HipError::new(HIP_ERROR_INVALID_DEVICE_FUNCTION, e.to_string()))?;
    lock(&KERNELS)
        .get_or_insert_with(HashMap::new)
        .insert(key, kernel.clone());
    Ok(kernel)
}

/// Puts a launch on `stream`.
///
/// # Safety
/// As for [`read_args`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    hip: &Hip,
    kernel: Option<softgpu::Kernel>,
    stub: *const c_void,
    grid: [u32; 3],
    block: [u32; 3],
    shared: usize,
    stream: hipStream_t,
    source: ArgSource,
) -> HipResult {
    let s = hip.stream(stream)?;
    let kernel = match kernel {
        Some(k) => k,
        None => registered_kernel(stub, s.device)?,
    };
    if grid.contains(&0) || block.contains(&0) {
        return Err(HipError::new(
            HIP_ERROR_INVALID_CONFIGURATION,
            format!(
                "kernel {}: grid {grid:?} and block {block:?} must be non-zero",
                kernel.name()
            ),
        ));
    }
    let shared = u32::try_from(shared).map_err(|_| {
        HipError::new(
            HIP_ERROR_INVALID_VALUE,
            format!("{shared} bytes of dynamic shared memory"),
        )
    })?;
    // SAFETY: forwarded to the caller.
    let args = unsafe { read_args(&kernel, source)? }.dynamic_lds(shared);
    s.enqueue(
        hip,
        Work::Launch(Launch {
            kernel,
            grid,
            block,
            args,
        }),
    )
}

/// A `<<<>>>` configuration clang's host code pushes before calling the
/// kernel's stub, which pops it.
#[derive(Clone, Copy)]
struct Config {
    grid: dim3,
    block: dim3,
    shared: usize,
    stream: hipStream_t,
}

thread_local! {
    static CONFIGS: RefCell<Vec<Config>> = const { RefCell::new(Vec::new()) };
    /// Arguments given with `hipSetupArgument` for `hipLaunchByPtr`.
    static SETUP: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

#[no_mangle]
pub unsafe extern "C" fn __hipPushCallConfiguration(
    grid: dim3,
    block: dim3,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    guard("__hipPushCallConfiguration", || {
        CONFIGS.with(|c| {
            c.borrow_mut().push(Config {
                grid,
                block,
                shared,
                stream,
            })
        });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn __hipPopCallConfiguration(
    grid: *mut dim3,
    block: *mut dim3,
    shared: *mut usize,
    stream: *mut hipStream_t,
) -> hipError_t {
    guard("__hipPopCallConfiguration", || {
        let c = CONFIGS.with(|c| c.borrow_mut().pop()).ok_or_else(|| {
            HipError::new(
                HIP_ERROR_MISSING_CONFIGURATION,
                "no <<<>>> configuration was pushed",
            )
        })?;
        // SAFETY: clang passes outputs of these types.
        unsafe {
            put(grid, c.grid)?;
            put(block, c.block)?;
            put(shared, c.shared)?;
            put(stream, c.stream)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipConfigureCall(
    grid: dim3,
    block: dim3,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    SETUP.with(|s| s.borrow_mut().clear());
    // SAFETY: forwarded.
    unsafe { __hipPushCallConfiguration(grid, block, shared, stream) }
}

#[no_mangle]
pub unsafe extern "C" fn hipSetupArgument(
    arg: *const c_void,
    size: usize,
    offset: usize,
) -> hipError_t {
    guard("hipSetupArgument", || {
        if arg.is_null() || size > 4096 || offset > 4096 {
            return Err(HipError::invalid(format!(
                "argument of {size} bytes at offset {offset}"
            )));
        }
        // SAFETY: `arg` points to `size` bytes (crate docs, "Inputs").
        let bytes = unsafe { std::slice::from_raw_parts(arg as *const u8, size) };
        SETUP.with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < offset + size {
                s.resize(offset + size, 0);
            }
            s[offset..offset + size].copy_from_slice(bytes);
        });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchByPtr(func: *const c_void) -> hipError_t {
    guard("hipLaunchByPtr", || {
        let hip = hip()?;
        let c = CONFIGS.with(|c| c.borrow_mut().pop()).ok_or_else(|| {
            HipError::new(
                HIP_ERROR_MISSING_CONFIGURATION,
                "hipConfigureCall was not called",
            )
        })?;
        let mut buffer = SETUP.with(|s| std::mem::take(&mut *s.borrow_mut()));
        let mut size = buffer.len();
        let mut extra = [
            LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
            buffer.as_mut_ptr() as *mut c_void,
            LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
            &mut size as *mut usize as *mut c_void,
            LAUNCH_PARAM_END as *mut c_void,
        ];
        // SAFETY: `extra` is our own, well-formed array over our buffer.
        unsafe {
            launch(
                hip,
                None,
                func,
                c.grid.array(),
                c.block.array(),
                c.shared,
                c.stream,
                ArgSource::Extra(extra.as_mut_ptr()),
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    guard("hipLaunchKernel", || {
        // SAFETY: `args` follows the "Inputs" contract.
        unsafe {
            launch(
                hip()?,
                None,
                func,
                grid.array(),
                block.array(),
                shared,
                stream,
                ArgSource::Pointers(args),
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel_spt(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipLaunchKernel(func, grid, block, args, shared, crate::stream::spt(stream)) }
}

/// `hip_impl::hipLaunchKernelGGLImpl(uintptr_t, const dim3&, const dim3&,
/// uint32_t, hipStream_t, void**)`.
#[export_name = "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv"]
pub unsafe extern "C" fn hip_launch_kernel_ggl_impl(
    func: usize,
    grid: *const dim3,
    block: *const dim3,
    shared: u32,
    stream: hipStream_t,
    args: *mut *mut c_void,
) {
    guard("hipLaunchKernelGGL", || {
        // SAFETY: references to dim3 and an argument array (crate docs).
        let (grid, block) = unsafe { (get(grid, "grid")?, get(block, "block")?) };
        // SAFETY: as above.
        unsafe {
            launch(
                hip()?,
                None,
                func as *const c_void,
                grid.array(),
                block.array(),
                shared as usize,
                stream,
                ArgSource::Pointers(args),
            )
        }
    });
}

/// Records `start` and `stop` around a launch (`hipExtLaunchKernel`).
unsafe fn with_events(
    hip: &Hip,
    stream: hipStream_t,
    start: hipEvent_t,
    stop: hipEvent_t,
    body: impl FnOnce() -> HipResult,
) -> HipResult {
    let s = hip.stream(stream)?;
    if !start.is_null() {
        s.enqueue(hip, Work::Record(hip.events.get(start as usize)?))?;
    }
    body()?;
    if !stop.is_null() {
        s.enqueue(hip, Work::Record(hip.events.get(stop as usize)?))?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipExtLaunchKernel(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
    start: hipEvent_t,
    stop: hipEvent_t,
    _flags: i32,
) -> hipError_t {
    guard("hipExtLaunchKernel", || {
        let hip = hip()?;
        // SAFETY: `args` follows the "Inputs" contract.
        unsafe {
            with_events(hip, stream, start, stop, || {
                launch(
                    hip,
                    None,
                    func,
                    grid.array(),
                    block.array(),
                    shared,
                    stream,
                    ArgSource::Pointers(args),
                )
            })
        }
    })
}

/// A cooperative grid must be resident at once, as HIP requires for a
/// grid-wide barrier: refuses one that cannot be.
fn check_cooperative_fits(
    kernel: &softgpu::Kernel,
    device: &softgpu::Device,
    grid: dim3,
    block: dim3,
    shared: u32,
) -> HipResult {
    let threads = block.x as u64 * block.y as u64 * block.z as u64;
    let per_cu = occupancy(kernel, device.properties(), threads as u32, shared as u64);
    let fits = per_cu as u64 * device.properties().compute_units as u64;
    let blocks = grid.x as u64 * grid.y as u64 * grid.z as u64;
    if blocks > fits {
        return Err(HipError::new(
            HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            format!(
                "kernel {}: a cooperative grid of {blocks} blocks cannot be resident at once ({per_cu} per compute unit x {} units)",
                kernel.name(),
                device.properties().compute_units
            ),
        ));
    }
    Ok(())
}

/// Cooperative launches run only when the whole grid can be resident at
/// once.
unsafe fn launch_cooperative(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: u32,
    stream: hipStream_t,
) -> HipResult {
    let hip = hip()?;
    let s = hip.stream(stream)?;
    let kernel = registered_kernel(func, s.device)?;
    check_cooperative_fits(&kernel, &hip.devices[s.device].device, grid, block, shared)?;
    // SAFETY: `args` follows the "Inputs" contract.
    unsafe {
        launch(
            hip,
            Some(kernel),
            func,
            grid.array(),
            block.array(),
            shared as usize,
            stream,
            ArgSource::Pointers(args),
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchCooperativeKernel(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: u32,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    guard("hipLaunchCooperativeKernel", || unsafe {
        launch_cooperative(func, grid, block, args, shared, stream)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchCooperativeKernel_spt(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: u32,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe {
        hipLaunchCooperativeKernel(func, grid, block, args, shared, crate::stream::spt(stream))
    }
}

// --- Multi-device launches ------------------------------------------------

/// `hipLaunchParams` (`hip_runtime_api.h`): one device's part of a
/// multi-device launch. `gridDim` counts blocks.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipLaunchParams {
    pub func: *const c_void,
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub args: *mut *mut c_void,
    pub sharedMem: usize,
    pub stream: hipStream_t,
}

/// What a multi-device launch puts on one stream, checked before any of
/// them is queued.
struct DeviceLaunch {
    stream: Arc<crate::stream::HipStream>,
    launch: Launch,
}

/// `hipLaunchCooperativeKernelMultiDevice` (`cooperative`) and
/// `hipExtLaunchMultiKernelMultiDevice`, as CLR does them: one launch per
/// entry, each on its entry's stream, no two on one device; unless
/// `flags` says otherwise, the streams are first waited for (no pre-sync
/// flag) and the call returns once every kernel has run (no post-sync
/// flag). Every entry is checked before any is queued.
///
/// # Safety
/// `list` is NULL or holds `count` entries, each with arguments as for
/// [`read_args`] (crate docs, "Inputs").
unsafe fn launch_multi_device(
    list: *const hipLaunchParams,
    count: i32,
    flags: u32,
    cooperative: bool,
) -> HipResult {
    let hip = hip()?;
    let devices = hip.devices.len();
    let n = usize::try_from(count)
        .ok()
        .filter(|n| (1..=devices).contains(n))
        .ok_or_else(|| {
            HipError::new(
                HIP_ERROR_INVALID_VALUE,
                format!("a launch on {count} devices (there are {devices})"),
            )
        })?;
    if list.is_null() {
        return Err(HipError::new(
            HIP_ERROR_INVALID_VALUE,
            "launch parameter list is NULL",
        ));
    }
    let known = HIP_MULTI_DEVICE_NO_PRE_SYNC | HIP_MULTI_DEVICE_NO_POST_SYNC;
    if flags & !known != 0 {
        return Err(HipError::new(
            HIP_ERROR_INVALID_VALUE,
            format!("unknown multi-device launch flags {flags:#x}"),
        ));
    }
    // SAFETY: `list` holds `count` entries (this function's contract).
    let params = unsafe { std::slice::from_raw_parts(list, n) };
    let mut launches: Vec<DeviceLaunch> = Vec::with_capacity(n);
    for (i, p) in params.iter().enumerate() {
        // SAFETY: the entry's arguments follow the "Inputs" contract.
        let l = unsafe { prepare_device_launch(hip, i, p, cooperative)? };
        if launches.iter().any(|o| o.stream.device == l.stream.device) {
            return Err(HipError::new(
                HIP_ERROR_INVALID_DEVICE,
                format!("entry {i}: a second launch on device {}", l.stream.device),
            ));
        }
        launches.push(l);
    }
    if flags & HIP_MULTI_DEVICE_NO_PRE_SYNC == 0 {
        for l in &launches {
            l.stream.synchronize(hip)?;
        }
    }
    for l in &launches {
        l.stream.enqueue(hip, Work::Launch(l.launch.clone()))?;
    }
    if flags & HIP_MULTI_DEVICE_NO_POST_SYNC == 0 {
        for l in &launches {
            l.stream.synchronize(hip)?;
        }
    }
    Ok(())
}

/// Checks entry `i` of a multi-device launch and reads its arguments.
///
/// # Safety
/// `p.args` as for [`read_args`].
unsafe fn prepare_device_launch(
    hip: &Hip,
    i: usize,
    p: &hipLaunchParams,
    cooperative: bool,
) -> HipResult<DeviceLaunch> {
    let context = |e: HipError| HipError::new(e.code, format!("entry {i}: {}", e.message));
    // CLR refuses the null stream here: each entry names its device by
    // its stream.
    if p.stream.is_null() {
        return Err(HipError::new(
            HIP_ERROR_INVALID_HANDLE,
            format!(
                "entry {i}: a multi-device launch needs a stream per device, not the null stream"
            ),
        ));
    }
    let stream = hip.stream(p.stream).map_err(context)?;
    let kernel = registered_kernel(p.func, stream.device).map_err(context)?;
    let (grid, block) = (p.gridDim.array(), p.blockDim.array());
    let too_wide = grid
        .iter()
        .zip(block)
        .any(|(&g, b)| g as u64 * b as u64 > u32::MAX as u64);
    if grid.contains(&0) || block.contains(&0) || too_wide {
        return Err(HipError::new(
            HIP_ERROR_INVALID_CONFIGURATION,
            format!(
                "entry {i}: kernel {}: grid {grid:?} and block {block:?} must be non-zero, with \
                 fewer than 2^32 work-items in each dimension",
                kernel.name()
            ),
        ));
    }
    let shared = u32::try_from(p.sharedMem).map_err(|_| {
        HipError::new(
            HIP_ERROR_INVALID_VALUE,
            format!("entry {i}: {} bytes of dynamic shared memory", p.sharedMem),
        )
    })?;
    if cooperative {
        let device = &hip.devices[stream.device].device;
        check_cooperative_fits(&kernel, device, p.gridDim, p.blockDim, shared).map_err(context)?;
    }
    // SAFETY: forwarded to the caller.
    let args = unsafe { read_args(&kernel, ArgSource::Pointers(p.args)) }
        .map_err(context)?
        .dynamic_lds(shared);
    Ok(DeviceLaunch {
        stream,
        launch: Launch {
            kernel,
            grid,
            block,
            args,
        },
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchCooperativeKernelMultiDevice(
    list: *mut hipLaunchParams,
    count: i32,
    flags: u32,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments ("Inputs").
    guard("hipLaunchCooperativeKernelMultiDevice", || unsafe {
        launch_multi_device(list, count, flags, true)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipExtLaunchMultiKernelMultiDevice(
    list: *mut hipLaunchParams,
    count: i32,
    flags: u32,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments ("Inputs").
    guard("hipExtLaunchMultiKernelMultiDevice", || unsafe {
        launch_multi_device(list, count, flags, false)
    })
}

// --- Modules -------------------------------------------------------------

fn load_module(bytes: &[u8]) -> HipResult<usize> {
    let hip = hip()?;
    let device = hip.current();
    let module = softgpu::Module::load_bytes(&device.device, bytes).map_err(|e| {
        let code = match &e {
            softgpu::Error::Runtime(r)
                if matches!(**r, softgpu::RuntimeError::IncompatibleCodeObject(_)) =>
            {
                HIP_ERROR_NO_BINARY_FOR_GPU
            }
            _ => HIP_ERROR_INVALID_IMAGE,
        };
        HipError::new(code, e.to_string())
    })?;
    Ok(hip.modules.insert(Arc::new(HipModule {
        device: device.index,
        module,
    })))
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoad(
    module: *mut hipModule_t,
    fname: *const c_char,
) -> hipError_t {
    guard("hipModuleLoad", || {
        // SAFETY: a NUL-terminated path (crate docs).
        let path = unsafe { c_str(fname, "file name")? };
        let bytes =
            softgpu_codeobj::read_file(path, softgpu_codeobj::MAX_FILE_SIZE).map_err(|e| {
                let code = match e.io_kind {
                    Some(std::io::ErrorKind::NotFound) => HIP_ERROR_FILE_NOT_FOUND,
                    _ => HIP_ERROR_INVALID_VALUE,
                };
                HipError::new(code, e.to_string())
            })?;
        let handle = load_module(&bytes)?;
        // SAFETY: output of a module handle (crate docs).
        unsafe { put(module, handle as hipModule_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut hipModule_t,
    image: *const c_void,
) -> hipError_t {
    guard("hipModuleLoadData", || {
        if image.is_null() {
            return Err(HipError::invalid("image is null"));
        }
        // SAFETY: the image is a whole bundle or code object (crate docs).
        let len = unsafe { crate::register::image_len(image as *const u8)? };
        // SAFETY: `len` bytes from the image's own headers.
        let bytes = unsafe { std::slice::from_raw_parts(image as *const u8, len) };
        let handle = load_module(bytes)?;
        // SAFETY: output of a module handle (crate docs).
        unsafe { put(module, handle as hipModule_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut hipModule_t,
    image: *const c_void,
    _num_options: u32,
    _options: *mut c_void,
    _values: *mut *mut c_void,
) -> hipError_t {
    // JIT options do not apply: the image is machine code already.
    // SAFETY: forwarded with the caller's arguments.
    unsafe { hipModuleLoadData(module, image) }
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(module: hipModule_t) -> hipError_t {
    guard("hipModuleUnload", || {
        // Queued launches hold their kernels, so the code stays until
        // they have run.
        hip()?.modules.remove(module as usize).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut hipFunction_t,
    module: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    guard("hipModuleGetFunction", || {
        let hip = hip()?;
        let m = hip.modules.get(module as usize)?;
        // SAFETY: a NUL-terminated kernel name (crate docs).
        let name = unsafe { c_str(name, "kernel name")? };
        let kernel = m
            .module
            .kernel(name)
            .map_err(|e| HipError::new(HIP_ERROR_NOT_FOUND, e.to_string()))?;
        let handle = hip
            .functions
            .insert(Arc::new(Function { module: m, kernel }));
        // SAFETY: output of a function handle (crate docs).
        unsafe { put(function, handle as hipFunction_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(
    dptr: *mut hipDeviceptr_t,
    bytes: *mut usize,
    module: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    guard("hipModuleGetGlobal", || {
        let m = hip()?.modules.get(module as usize)?;
        // SAFETY: a NUL-terminated variable name (crate docs).
        let name = unsafe { c_str(name, "variable name")? };
        let (addr, size) = m.module.global(name).ok_or_else(|| {
            HipError::new(
                HIP_ERROR_NOT_FOUND,
                format!("the module has no global named {name}"),
            )
        })?;
        // SAFETY: outputs of a pointer and a size, either may be null.
        unsafe {
            if !dptr.is_null() {
                put(dptr, addr as hipDeviceptr_t)?;
            }
            if !bytes.is_null() {
                put(bytes, size as usize)?;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: u32,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    guard("hipModuleLaunchKernel", || {
        let hip = hip()?;
        let function = hip.functions.get(f as usize)?;
        let source = match (params.is_null(), extra.is_null()) {
            (false, true) => ArgSource::Pointers(params),
            (true, false) => ArgSource::Extra(extra),
            (true, true) if function.kernel.info().args.is_empty() => ArgSource::Pointers(params),
            _ => {
                return Err(HipError::invalid(
                    "give exactly one of kernelParams and extra",
                ))
            }
        };
        let s = hip.stream(stream)?;
        if s.device != function.module.device {
            return Err(HipError::new(
                HIP_ERROR_INVALID_HANDLE,
                format!(
                    "the function was loaded on device {}, the stream is on device {}",
                    function.module.device, s.device
                ),
            ));
        }
        // SAFETY: `params`/`extra` follow the "Inputs" contract.
        unsafe {
            launch(
                hip,
                Some(function.kernel.clone()),
                std::ptr::null(),
                [gx, gy, gz],
                [bx, by, bz],
                shared as usize,
                stream,
                source,
            )
        }
    })
}

/// `hipExtModuleLaunchKernel(hipFunction_t, uint32_t globalWorkSizeX,
/// ..Y, ..Z, uint32_t localWorkSizeX, ..Y, ..Z, size_t sharedMemBytes,
/// hipStream_t, void** kernelParams, void** extra, hipEvent_t startEvent,
/// hipEvent_t stopEvent, uint32_t flags)`: the grid is in work-items.
#[export_name = "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"]
pub unsafe extern "C" fn hip_ext_module_launch_kernel(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
    _flags: u32,
) -> hipError_t {
    guard("hipExtModuleLaunchKernel", || {
        let hip = hip()?;
        if [bx, by, bz].contains(&0)
            || !gx.is_multiple_of(bx)
            || !gy.is_multiple_of(by)
            || !gz.is_multiple_of(bz)
        {
            return Err(unsupported_partial([gx, gy, gz], [bx, by, bz]));
        }
        // SAFETY: forwarded with the caller's arguments.
        unsafe {
            with_events(hip, stream, start, stop, || {
                let code = hipModuleLaunchKernel(
                    f,
                    gx / bx,
                    gy / by,
                    gz / bz,
                    bx,
                    by,
                    bz,
                    shared as u32,
                    stream,
                    params,
                    extra,
                );
                if code == HIP_SUCCESS {
                    Ok(())
                } else {
                    Err(HipError::new(code, "hipModuleLaunchKernel failed"))
                }
            })
        }
    })
}

/// `hipHccModuleLaunchKernel`: as `hipExtModuleLaunchKernel` without flags.
#[export_name = "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_"]
pub unsafe extern "C" fn hip_hcc_module_launch_kernel(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    // SAFETY: forwarded with the caller's arguments.
    unsafe {
        hip_ext_module_launch_kernel(
            f, gx, gy, gz, bx, by, bz, shared, stream, params, extra, start, stop, 0,
        )
    }
}

fn unsupported_partial(grid: [u32; 3], block: [u32; 3]) -> HipError {
    crate::error::unsupported(format!(
        "a launch of {grid:?} work-items in blocks of {block:?}: softgpu's HIP launches take whole blocks"
    ))
}

// --- Attributes and occupancy ---------------------------------------------

/// Resident blocks of `kernel` per compute unit for `threads` work-items
/// per block and `dynamic` bytes of dynamic LDS: whole workgroups within
/// what the wave slots, the vector register file and the LDS allow, by the
/// runtime's occupancy model (`softgpu_runtime::occupancy`, held to
/// LLVM's figures; the same code `softgpu inspect` reports).
pub fn occupancy(
    kernel: &softgpu::Kernel,
    profile: &softgpu::Profile,
    threads: u32,
    dynamic: u64,
) -> u32 {
    use softgpu_runtime::occupancy::{occupancy, KernelResources};
    let info = kernel.info();
    if threads == 0 || threads > profile.max_workgroup_size {
        return 0;
    }
    let lds = (info.lds_bytes as u64).saturating_add(dynamic);
    let Ok(lds_bytes) = u32::try_from(lds) else {
        return 0;
    };
    // HIP counts per "multiprocessor", a compute unit: the CU-mode view
    // (RDNA: 2 SIMDs, 64 KiB of LDS), as ROCm's occupancy calculator does.
    let per_cu = occupancy(
        profile,
        &KernelResources {
            wave_size: info.wave_size.max(32),
            vgprs: info.vgprs,
            lds_bytes,
            workgroup_size: threads,
            wgp_mode: false,
        },
    );
    per_cu.workgroups_per_wgp / profile.cus_per_wgp.max(1)
}

fn function_kernel(hip: &Hip, stub: *const c_void) -> HipResult<softgpu::Kernel> {
    registered_kernel(stub, hip.current().index)
}

fn func_attributes(kernel: &softgpu::Kernel, profile: &softgpu::Profile) -> hipFuncAttributes {
    let info = kernel.info();
    let max_threads = match info.max_workgroup_size {
        0 => profile.max_workgroup_size,
        m => m.min(profile.max_workgroup_size),
    };
    let version = profile
        .name
        .trim_start_matches("gfx")
        .get(..3)
        .and_then(|v| v.parse::<i32>().ok())
        .unwrap_or(0);
    hipFuncAttributes {
        binaryVersion: version,
        cacheModeCA: 0,
        constSizeBytes: 0,
        localSizeBytes: info.scratch_bytes as usize,
        maxDynamicSharedSizeBytes: profile.lds_bytes.saturating_sub(info.lds_bytes) as i32,
        maxThreadsPerBlock: max_threads as i32,
        numRegs: info.vgprs as i32,
        preferredShmemCarveout: 0,
        ptxVersion: version,
        sharedSizeBytes: info.lds_bytes as usize,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttributes(
    attr: *mut hipFuncAttributes,
    func: *const c_void,
) -> hipError_t {
    guard("hipFuncGetAttributes", || {
        let hip = hip()?;
        let kernel = function_kernel(hip, func)?;
        let a = func_attributes(&kernel, hip.current().device.properties());
        // SAFETY: output of a hipFuncAttributes (crate docs).
        unsafe { put(attr, a) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttribute(
    value: *mut i32,
    attrib: i32,
    f: hipFunction_t,
) -> hipError_t {
    guard("hipFuncGetAttribute", || {
        let hip = hip()?;
        let function = hip.functions.get(f as usize)?;
        let a = func_attributes(
            &function.kernel,
            hip.devices[function.module.device].device.properties(),
        );
        // hipFunction_attribute's order (hip_runtime_api.h).
        let v = match attrib {
            0 => a.maxThreadsPerBlock,
            1 => a.sharedSizeBytes as i32,
            2 => a.constSizeBytes as i32,
            3 => a.localSizeBytes as i32,
            4 => a.numRegs,
            5 => a.ptxVersion,
            6 => a.binaryVersion,
            7 => a.cacheModeCA,
            8 => a.maxDynamicSharedSizeBytes,
            9 => a.preferredShmemCarveout,
            _ => {
                return Err(HipError::invalid(format!(
                    "unknown function attribute {attrib}"
                )))
            }
        };
        // SAFETY: output of an int (crate docs).
        unsafe { put(value, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFuncSetAttribute(
    func: *const c_void,
    _attr: i32,
    _value: i32,
) -> hipError_t {
    guard("hipFuncSetAttribute", || {
        // Accepted: limits the kernel may use are checked at launch.
        function_kernel(hip()?, func).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFuncSetCacheConfig(func: *const c_void, _config: i32) -> hipError_t {
    guard("hipFuncSetCacheConfig", || {
        // Accepted: softgpu has no configurable L1/LDS split.
        function_kernel(hip()?, func).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFuncSetSharedMemConfig(
    func: *const c_void,
    _config: i32,
) -> hipError_t {
    guard("hipFuncSetSharedMemConfig", || {
        // Accepted: LDS banking does not change results.
        function_kernel(hip()?, func).map(drop)
    })
}

/// The block size with the most resident work-items per compute unit (the
/// largest such), and the grid that fills the device with it.
fn potential_block_size(
    kernel: &softgpu::Kernel,
    profile: &softgpu::Profile,
    dynamic: u64,
    limit: u32,
) -> (u32, u32) {
    let wave = kernel.info().wave_size.max(32);
    let mut max = match kernel.info().max_workgroup_size {
        0 => profile.max_workgroup_size,
        m => m.min(profile.max_workgroup_size),
    };
    if limit > 0 {
        max = max.min(limit);
    }
    let mut best = (0u32, 0u32); // (work-items resident, block size)
    let mut size = wave.min(max);
    while size <= max {
        let blocks = occupancy(kernel, profile, size, dynamic);
        let resident = blocks * size;
        if resident >= best.0 && blocks > 0 {
            best = (resident, size);
        }
        size += wave;
    }
    let blocks = occupancy(kernel, profile, best.1, dynamic);
    (blocks * profile.compute_units, best.1)
}

/// The kernel an occupancy query names, with the profile of the device it
/// runs on: a host stub (runtime API, current device) or a module function
/// (driver API, its module's device).
enum Query {
    Stub(*const c_void),
    Function(hipFunction_t),
}

impl Query {
    fn resolve(self, hip: &Hip) -> HipResult<(softgpu::Kernel, &softgpu::Profile)> {
        match self {
            Query::Stub(stub) => Ok((
                function_kernel(hip, stub)?,
                hip.current().device.properties(),
            )),
            Query::Function(f) => {
                let function = hip.functions.get(f as usize)?;
                let device = &hip.devices[function.module.device].device;
                Ok((function.kernel.clone(), device.properties()))
            }
        }
    }
}

/// `hip*OccupancyMaxPotentialBlockSize`.
fn max_potential_block_size(
    query: Query,
    grid: *mut i32,
    block: *mut i32,
    dynamic: usize,
    limit: i32,
) -> HipResult {
    let hip = hip()?;
    let (kernel, profile) = query.resolve(hip)?;
    let (g, b) = potential_block_size(&kernel, profile, dynamic as u64, limit.max(0) as u32);
    // SAFETY: outputs of ints (crate docs).
    unsafe {
        put(grid, g as i32)?;
        put(block, b as i32)
    }
}

/// `hip*OccupancyMaxActiveBlocksPerMultiprocessor`.
fn max_active_blocks(query: Query, blocks: *mut i32, block_size: i32, dynamic: usize) -> HipResult {
    let hip = hip()?;
    let (kernel, profile) = query.resolve(hip)?;
    let n = occupancy(&kernel, profile, block_size.max(0) as u32, dynamic as u64);
    // SAFETY: output of an int (crate docs).
    unsafe { put(blocks, n as i32) }
}

#[no_mangle]
pub unsafe extern "C" fn hipOccupancyMaxPotentialBlockSize(
    grid: *mut i32,
    block: *mut i32,
    func: *const c_void,
    dynamic: usize,
    limit: i32,
) -> hipError_t {
    guard("hipOccupancyMaxPotentialBlockSize", || {
        max_potential_block_size(Query::Stub(func), grid, block, dynamic, limit)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxPotentialBlockSize(
    grid: *mut i32,
    block: *mut i32,
    f: hipFunction_t,
    dynamic: usize,
    limit: i32,
) -> hipError_t {
    guard("hipModuleOccupancyMaxPotentialBlockSize", || {
        max_potential_block_size(Query::Function(f), grid, block, dynamic, limit)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxPotentialBlockSizeWithFlags(
    grid: *mut i32,
    block: *mut i32,
    f: hipFunction_t,
    dynamic: usize,
    limit: i32,
    _flags: u32,
) -> hipError_t {
    guard("hipModuleOccupancyMaxPotentialBlockSizeWithFlags", || {
        max_potential_block_size(Query::Function(f), grid, block, dynamic, limit)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut i32,
    func: *const c_void,
    block_size: i32,
    dynamic: usize,
) -> hipError_t {
    guard("hipOccupancyMaxActiveBlocksPerMultiprocessor", || {
        max_active_blocks(Query::Stub(func), blocks, block_size, dynamic)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut i32,
    func: *const c_void,
    block_size: i32,
    dynamic: usize,
    _flags: u32,
) -> hipError_t {
    guard(
        "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        || max_active_blocks(Query::Stub(func), blocks, block_size, dynamic),
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut i32,
    f: hipFunction_t,
    block_size: i32,
    dynamic: usize,
) -> hipError_t {
    guard("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", || {
        max_active_blocks(Query::Function(f), blocks, block_size, dynamic)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut i32,
    f: hipFunction_t,
    block_size: i32,
    dynamic: usize,
    _flags: u32,
) -> hipError_t {
    guard(
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        || max_active_blocks(Query::Function(f), blocks, block_size, dynamic),
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipKernelNameRef(f: hipFunction_t) -> *const c_char {
    kernel_name_c(
        hip()
            .ok()
            .and_then(|h| h.functions.get(f as usize).ok())
            .map(|f| f.kernel.name().to_string()),
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipKernelNameRefByPtr(
    func: *const c_void,
    _stream: hipStream_t,
) -> *const c_char {
    kernel_name_c(with_registry(|r| {
        r.functions.get(&(func as usize)).map(|(_, n)| n.clone())
    }))
}

/// A kernel name as a C string that lives for the process (names are few).
fn kernel_name_c(name: Option<String>) -> *const c_char {
    static NAMES: Mutex<Option<HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);
    let Some(name) = name else {
        return std::ptr::null();
    };
    let mut names = lock(&NAMES);
    let c = names
        .get_or_insert_with(HashMap::new)
        .entry(name.clone())
        .or_insert_with(|| {
            Box::leak(
                std::ffi::CString::new(name)
                    .unwrap_or_default()
                    .into_boxed_c_str(),
            )
        });
    c.as_ptr()
}

symver!("launch");
