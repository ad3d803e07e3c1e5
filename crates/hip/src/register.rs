//! What clang's HIP host code calls before `main`: the fat binary of each
//! translation unit, its kernels' host stubs and its device variables.
//!
//! Code is loaded lazily, per device, the first time a kernel of the fat
//! binary is launched or one of its variables is used (as ROCm does), so a
//! program with code for other targets only fails when it uses them.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::error::{c_str, HipError, HipResult};
use crate::state::{hip, lock};

/// `__CudaFatBinaryWrapper`'s magic for HIP (`"HIPF"`).
const FATBIN_MAGIC: u32 = 0x4849_5046;
/// Handles of registered fat binaries: `FATBIN_TAG | index`.
const FATBIN_TAG: usize = 0xFA7B_0000_0000;

/// One translation unit's device code.
pub struct FatBinary {
    /// The offload bundle (or code object), read in place in the program's
    /// `.hip_fatbin` section: a library's bundles hold every target's code
    /// (rocSOLVER's: 1.5 GB), which a copy at registration would fault in
    /// at start-up, while a device needs one entry of the bundles it uses.
    /// `None` once the program has unregistered it (its library unloaded).
    image: Mutex<Option<&'static [u8]>>,
    /// The image loaded per device, on first use.
    loaded: Mutex<HashMap<usize, Arc<softgpu::Module>>>,
    /// Managed variables to set up in each loaded copy.
    managed: Mutex<Vec<Managed>>,
    /// Devices whose missing code has been reported on stderr (once each).
    missing_reported: Mutex<std::collections::HashSet<usize>>,
}

/// A `__managed__` variable: one allocation every device sees, whose
/// address is written into the host shadow and each device's copy.
#[derive(Clone)]
struct Managed {
    name: String,
    address: u64,
}

/// A `__device__`/`__constant__` variable's host shadow.
#[derive(Clone)]
pub struct Var {
    pub fatbin: usize,
    pub name: String,
    pub size: u64,
}

/// Everything registered.
#[derive(Default)]
pub struct Registry {
    pub fatbins: Vec<Arc<FatBinary>>,
    /// Host stub address → (fat binary, kernel name).
    pub functions: HashMap<usize, (usize, String)>,
    /// Host shadow address → variable.
    pub vars: HashMap<usize, Var>,
}

pub static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// Runs `f` on the registry.
pub fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    f(lock(&REGISTRY).get_or_insert_with(Registry::default))
}

impl FatBinary {
    /// The image loaded on `device` (loaded now if it was not).
    pub fn module(&self, device: usize) -> HipResult<Arc<softgpu::Module>> {
        let mut loaded = lock(&self.loaded);
        if let Some(m) = loaded.get(&device) {
            return Ok(m.clone());
        }
        let hip = hip()?;
        let dev = &hip.device(device as i32)?.device;
        let image = (*lock(&self.image)).ok_or_else(|| {
            HipError::new(
                HIP_ERROR_INVALID_IMAGE,
                "the fat binary was unregistered (its library unloaded) before device code was loaded from it",
            )
        })?;
        let module = softgpu::Module::load_bytes(dev, image).map_err(|e| {
            let why = format!(
                "the program's device code cannot run on device {device} ({}): {e}",
                dev.target()
            );
            // As ROCm does, say it on stderr whatever the program does with
            // the error code (the message names the targets the binary has),
            // but once per device rather than aborting.
            if lock(&self.missing_reported).insert(device) {
                eprintln!("softgpu: hipErrorNoBinaryForGpu: {why}");
            }
            HipError::new(HIP_ERROR_NO_BINARY_FOR_GPU, why)
        })?;
        for m in lock(&self.managed).iter() {
            if let Some((addr, _)) = module.global(&m.name) {
                write_device(addr, &m.address.to_le_bytes())?;
            }
        }
        let module = Arc::new(module);
        loaded.insert(device, module.clone());
        Ok(module)
    }
}

/// Writes host bytes to device memory.
pub fn write_device(addr: u64, bytes: &[u8]) -> HipResult {
    let rt = softgpu_runtime::Runtime::get()?;
    // SAFETY: the source is our own slice, valid for its length and not
    // accessed elsewhere; the device side is checked by `copy`.
    unsafe { rt.copy(addr, bytes.as_ptr() as u64, bytes.len() as u64) }?;
    Ok(())
}

/// The fat binary behind a registration handle.
pub fn fatbin(handle: *mut *mut c_void) -> HipResult<(usize, Arc<FatBinary>)> {
    let h = handle as usize;
    let index = h.checked_sub(FATBIN_TAG).filter(|i| *i < 1 << 32);
    with_registry(|r| {
        index
            .and_then(|i| r.fatbins.get(i).map(|f| (i, f.clone())))
            .ok_or_else(|| HipError::handle(format!("{h:#x} is not a registered fat binary")))
    })
}

/// Reports a failed registration (C gets no status from these calls): the
/// program learns of it when it launches the kernel.
fn report(what: &str, r: HipResult) {
    if let Err(e) = r {
        eprintln!("softgpu: {what}: {}", e.message);
    }
}

/// How many bytes the offload bundle or ELF code object at `p` spans,
/// from its headers.
///
/// # Safety
/// `p` must point to a whole bundle or ELF image (the fat binary clang
/// emitted, or an image given to `hipModuleLoadData`).
pub unsafe fn image_len(p: *const u8) -> HipResult<usize> {
    let read = |at: usize, n: usize| -> Vec<u8> {
        // SAFETY: every read lies inside the image: the caller promises a
        // whole, well-formed image, and each offset read comes from
        // headers already read (and is capped at 4 GiB). HIP gives no
        // size with the image, so a malformed one cannot be detected
        // before reading its headers.
        unsafe { std::slice::from_raw_parts(p.add(at), n) }.to_vec()
    };
    let u64_at = |at: usize| u64::from_le_bytes(read(at, 8).try_into().expect("8 bytes"));
    let u16_at = |at: usize| u16::from_le_bytes(read(at, 2).try_into().expect("2 bytes")) as u64;
    let too_big = |n: u64| {
        HipError::new(
            HIP_ERROR_INVALID_IMAGE,
            format!("an image header claims {n} bytes"),
        )
    };
    const LIMIT: u64 = 1 << 32;
    let head = read(0, 24);
    if head == b"__CLANG_OFFLOAD_BUNDLE__" {
        let count = u64_at(24);
        if count > 1024 {
            return Err(too_big(count));
        }
        let (mut at, mut end) = (32u64, 0u64);
        for _ in 0..count {
            let (offset, size, id_len) = (
                u64_at(at as usize),
                u64_at(at as usize + 8),
                u64_at(at as usize + 16),
            );
            if id_len > 4096 || offset > LIMIT || size > LIMIT {
                return Err(too_big(offset.max(size).max(id_len)));
            }
            at += 24 + id_len;
            end = end.max(offset + size);
        }
        return Ok(end.max(at) as usize);
    }
    if head.starts_with(b"CCOB") {
        // A compressed bundle (clang --offload-compress): version 2 gives
        // its total size; version 1 gives none.
        let version = u16_at(4);
        let total = u32::from_le_bytes(read(8, 4).try_into().expect("4 bytes")) as u64;
        if version != 2 || !(24..=LIMIT).contains(&total) {
            return Err(HipError::new(
                HIP_ERROR_INVALID_IMAGE,
                format!("a compressed offload bundle of version {version} states no usable size; build with clang-19's --offload-compress (version 2) or without compression"),
            ));
        }
        return Ok(total as usize);
    }
    if head.starts_with(b"\x7fELF") {
        let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
        let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
        let (shentsize, shnum) = (u16_at(0x3a), u16_at(0x3c));
        if phoff > LIMIT || shoff > LIMIT {
            return Err(too_big(phoff.max(shoff)));
        }
        let mut end = (phoff + phentsize * phnum)
            .max(shoff + shentsize * shnum)
            .max(64);
        for i in 0..shnum {
            let sh = (shoff + i * shentsize) as usize;
            let kind = u32::from_le_bytes(read(sh + 4, 4).try_into().expect("4 bytes"));
            let (offset, size) = (u64_at(sh + 0x18), u64_at(sh + 0x20));
            if kind != 8 && offset <= LIMIT && size <= LIMIT {
                end = end.max(offset + size);
            }
        }
        return Ok(end as usize);
    }
    Err(HipError::new(
        HIP_ERROR_INVALID_IMAGE,
        "not an offload bundle or AMDGPU code object",
    ))
}

#[repr(C)]
#[derive(Clone, Copy)]
struct FatbinWrapper {
    magic: u32,
    version: u32,
    binary: *const u8,
    dummy: *const c_void,
}

#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let mut handle = std::ptr::null_mut();
    let r = crate::guard("__hipRegisterFatBinary", || {
        // SAFETY: clang passes its `__hip_fatbin_wrapper`.
        let w = unsafe { crate::error::get(data as *const FatbinWrapper, "fat binary wrapper")? };
        if w.magic != FATBIN_MAGIC || w.binary.is_null() {
            return Err(HipError::new(
                HIP_ERROR_INVALID_IMAGE,
                format!(
                    "fat binary wrapper magic {:#x}, version {}",
                    w.magic, w.version
                ),
            ));
        }
        // SAFETY: the wrapper points at clang's whole `.hip_fatbin` bundle.
        let len = unsafe { image_len(w.binary)? };
        // SAFETY: as above, `len` bytes from the bundle's own headers, in
        // the program's read-only data: mapped until the program (or its
        // library) unregisters the fat binary, which forgets the slice.
        let image: &'static [u8] = unsafe { std::slice::from_raw_parts(w.binary, len) };
        let fatbin = Arc::new(FatBinary {
            image: Mutex::new(Some(image)),
            loaded: Mutex::new(HashMap::new()),
            managed: Mutex::new(Vec::new()),
            missing_reported: Mutex::default(),
        });
        let index = with_registry(|r| {
            r.fatbins.push(fatbin);
            r.fatbins.len() - 1
        });
        handle = (FATBIN_TAG + index) as *mut *mut c_void;
        Ok(())
    });
    if r != HIP_SUCCESS {
        // The program cannot be told; its launches will fail naming it.
        handle = (FATBIN_TAG + (1 << 32)) as *mut *mut c_void;
    }
    handle
}

#[no_mangle]
pub unsafe extern "C" fn __hipUnregisterFatBinary(handle: *mut *mut c_void) {
    // Loaded code stays until exit: kernels may still be queued, and
    // destructors run in no particular order at exit. The bundle's bytes
    // go with the library, so a device that has not loaded it yet cannot.
    // (Not through `guard`: at exit this runs after the trace is flushed,
    // and a call recorded then would be cut short in it.)
    let forget = || {
        if let Ok((_, fatbin)) = fatbin(handle) {
            *lock(&fatbin.image) = None;
        }
    };
    // Nothing here panics (`lock` takes a poisoned lock too); a panic must
    // not unwind into the C caller all the same.
    let _ = std::panic::catch_unwind(forget);
}

#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFunction(
    handle: *mut *mut c_void,
    host_function: *const c_void,
    device_function: *mut c_char,
    device_name: *const c_char,
    _thread_limit: u32,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut dim3,
    _grid_dim: *mut dim3,
    _wsize: *mut i32,
) {
    let r = (|| {
        let (index, _) = fatbin(handle)?;
        // SAFETY: clang passes NUL-terminated kernel names.
        let name = unsafe {
            c_str(
                if device_name.is_null() {
                    device_function
                } else {
                    device_name
                },
                "kernel name",
            )?
        };
        with_registry(|r| {
            r.functions
                .insert(host_function as usize, (index, name.to_string()))
        });
        Ok(())
    })();
    report("__hipRegisterFunction", r);
}

#[no_mangle]
pub unsafe extern "C" fn __hipRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_void,
    _host_name: *mut c_char,
    device_name: *const c_char,
    _ext: i32,
    size: usize,
    _constant: i32,
    _global: i32,
) {
    let r = (|| {
        let (index, _) = fatbin(handle)?;
        // SAFETY: clang passes a NUL-terminated variable name.
        let name = unsafe { c_str(device_name, "variable name")? };
        let var = Var {
            fatbin: index,
            name: name.to_string(),
            size: size as u64,
        };
        with_registry(|r| r.vars.insert(host_var as usize, var));
        Ok(())
    })();
    report("__hipRegisterVar", r);
}

#[no_mangle]
pub unsafe extern "C" fn __hipRegisterManagedVar(
    handle: *mut c_void,
    pointer: *mut *mut c_void,
    init_value: *const c_void,
    name: *const c_char,
    size: usize,
    _align: u32,
) {
    let r = (|| {
        let (_, fatbin) = fatbin(handle as *mut *mut c_void)?;
        // SAFETY: clang passes a NUL-terminated variable name.
        let name = unsafe { c_str(name, "variable name")? }.to_string();
        let address = crate::memory::allocate_managed(size as u64)?;
        if !init_value.is_null() && size > 0 {
            // SAFETY: clang's initial value holds `size` bytes.
            let init = unsafe { std::slice::from_raw_parts(init_value as *const u8, size) };
            write_device(address, init)?;
        }
        // SAFETY: `pointer` is clang's host shadow of the variable, a
        // pointer-sized global the runtime is to set.
        unsafe { crate::error::put(pointer, address as *mut c_void)? };
        lock(&fatbin.managed).push(Managed { name, address });
        Ok(())
    })();
    report("__hipRegisterManagedVar", r);
}

#[no_mangle]
pub unsafe extern "C" fn __hipRegisterSurface(
    _handle: *mut *mut c_void,
    _var: *mut c_void,
    _host: *mut c_char,
    name: *const c_char,
    _dim: i32,
    _ext: i32,
) {
    // SAFETY: clang passes a NUL-terminated name.
    let name = unsafe { c_str(name, "surface name") }.unwrap_or("?");
    crate::error::unsupported(format!(
        "surface reference {name} (__hipRegisterSurface): images are not supported yet"
    ));
}

/// A `texture<T, dim, mode>` variable: its host object is the reference
/// (a `textureReference`) the binding functions take, and the device
/// variable of the same name the copy device code reads. Registered as a
/// variable (so its device copy is found like any symbol's) and as a
/// texture reference.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterTexture(
    handle: *mut *mut c_void,
    var: *mut c_void,
    _host: *mut c_char,
    name: *const c_char,
    _dim: i32,
    _norm: i32,
    _ext: i32,
) {
    let r = (|| {
        let (index, _) = fatbin(handle)?;
        if var.is_null() {
            return Err(HipError::invalid("null texture variable"));
        }
        // SAFETY: clang passes a NUL-terminated variable name.
        let name = unsafe { c_str(name, "texture name")? };
        let var_info = Var {
            fatbin: index,
            name: name.to_string(),
            size: std::mem::size_of::<textureReference>() as u64,
        };
        with_registry(|r| r.vars.insert(var as usize, var_info));
        crate::texture::reference::register_static(var as usize);
        Ok(())
    })();
    report("__hipRegisterTexture", r);
}

#[no_mangle]
pub unsafe extern "C" fn __hipGetPCH(pch: *mut *const c_char, size: *mut u32) {
    // No precompiled header ships with softgpu: its hiprtc includes
    // Debian's HIP headers as they are (see `rtc`).
    // SAFETY: outputs of a string pointer and a size (crate docs).
    let _ = unsafe { crate::error::put(pch, c"".as_ptr()) };
    // SAFETY: as above.
    let _ = unsafe { crate::error::put(size, 0) };
}

symver!("register");
