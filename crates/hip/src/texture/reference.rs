//! Texture references: the `texture<T, dim, mode>` variables of HIP's
//! older texture API, and the driver API's `textureReference` handles.
//!
//! A reference lives twice: the program's host variable (a
//! `textureReference`, registered by clang's `__hipRegisterTexture`) holds
//! its sampling settings, and the device variable of the same name is a
//! copy of it, whose `textureObject` the device code reads
//! (texture_fetch_functions.h, `TEXTURE_PARAMETERS_INIT`). Binding
//! memory, as CLR does it, makes a texture object from the reference's
//! settings and the memory, stores it in the host reference and copies the
//! whole reference to its device variable on the current device. A
//! driver-API reference (`hipModuleGetTexRef`) is a `textureReference` the
//! runtime allocates for a module's global of that name.
//!
//! Settings changed after a bind (`hipTexRefSet*`) apply at the next bind,
//! as in CLR. Not supported (a clear error): border colours (the 5.2
//! `textureReference` has no field for one).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, c_void};
use std::sync::Mutex;

use crate::abi::*;
use crate::error::{c_str, get, put, HipError, HipResult};
use crate::state::{hip, lock};

use super::{create_object, destroy_texture, driver_format, texture_descs};

/// `hipReadModeNormalizedFloat` and `hipReadModeElementType`.
const READ_NORMALIZED: i32 = 1;
const READ_ELEMENT: i32 = 0;

/// Host variables clang registered as texture references.
static STATIC_REFS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

/// A driver-API reference: the module and global it was looked up by
/// (looked up again at each bind, so a reference whose module was unloaded
/// is refused rather than written to freed memory).
struct DynamicRef {
    module: usize,
    name: String,
}

/// Driver-API references by the address of the runtime's
/// `textureReference` (boxed, so the address is stable; kept for the
/// process, as the program may hold the pointer past its module).
static DYNAMIC_REFS: Mutex<BTreeMap<usize, (Box<TexRef>, DynamicRef)>> =
    Mutex::new(BTreeMap::new());

/// A `textureReference` the runtime owns, which moves between threads
/// inside `DYNAMIC_REFS`.
struct TexRef(textureReference);

// SAFETY: the only pointer in a textureReference is its texture object's
// device address, which the runtime only compares and hands back.
unsafe impl Send for TexRef {}

/// Records a host variable clang registered with `__hipRegisterTexture`.
pub(crate) fn register_static(host_var: usize) {
    lock(&STATIC_REFS).insert(host_var);
}

/// The device address of `r`'s device copy on the current device: a
/// registered texture variable's, or a driver-API reference's global. A
/// null reference is an invalid value and anything else unregistered an
/// invalid symbol, as CLR's global-variable lookup answers.
fn device_copy(r: *const textureReference) -> HipResult<u64> {
    let at = checked(r)?;
    let dynamic = lock(&DYNAMIC_REFS)
        .get(&at)
        .map(|(_, d)| (d.module, d.name.clone()));
    match dynamic {
        Some((module, name)) => Ok(module_global(module, &name)?.0),
        None => Ok(crate::memory::symbol(hip()?, r as *const c_void)?.0),
    }
}

/// The device address and size of global `name` of module handle `module`.
fn module_global(module: usize, name: &str) -> HipResult<(u64, u64)> {
    let m = hip()?.modules.get(module)?;
    m.module.global(name).ok_or_else(|| {
        HipError::new(
            HIP_ERROR_NOT_FOUND,
            format!("the module has no global named {name}"),
        )
    })
}

/// `r` as a key, once it is known to be a reference the runtime knows.
fn checked(r: *const textureReference) -> HipResult<usize> {
    if r.is_null() {
        return Err(HipError::invalid("null texture reference"));
    }
    let at = r as usize;
    if lock(&STATIC_REFS).contains(&at) || lock(&DYNAMIC_REFS).contains_key(&at) {
        return Ok(at);
    }
    Err(HipError::new(
        HIP_ERROR_INVALID_SYMBOL,
        format!("{r:p} is not a registered texture reference"),
    ))
}

/// A copy of reference `r`'s fields.
fn read(r: *const textureReference) -> HipResult<textureReference> {
    checked(r)?;
    // SAFETY: `r` is a registered texture variable (clang's host
    // `texture<>` object, a textureReference) or a reference the runtime
    // allocated and keeps for the process: valid for reads.
    unsafe { get(r, "texture reference") }
}

/// Changes reference `r`'s fields with `change`.
fn update(r: *const textureReference, change: impl FnOnce(&mut textureReference)) -> HipResult {
    let mut t = read(r)?;
    change(&mut t);
    // SAFETY: as in `read`; the program's texture variables are writable
    // globals, and a const pointer here is only the C declaration's (CLR
    // writes through it too).
    unsafe { put(r as *mut textureReference, t) }
}

/// The sampling settings of reference `t`, as a texture descriptor (what
/// CLR's `getTextureDesc` takes over): no border colour.
fn texture_desc(t: &textureReference) -> hipTextureDesc {
    hipTextureDesc {
        addressMode: t.addressMode,
        filterMode: t.filterMode,
        readMode: t.readMode,
        sRGB: t.sRGB,
        borderColor: [0.0; 4],
        normalizedCoords: t.normalized,
        maxAnisotropy: t.maxAnisotropy,
        mipmapFilterMode: t.mipmapFilterMode,
        mipmapLevelBias: t.mipmapLevelBias,
        minMipmapLevelClamp: t.minMipmapLevelClamp,
        maxMipmapLevelClamp: t.maxMipmapLevelClamp,
    }
}

/// Binds reference `r` to `res`: a new texture object replaces the old
/// one (destroyed), and the reference goes to its device copy.
fn bind(r: *const textureReference, res: hipResourceDesc) -> HipResult {
    let device = device_copy(r)?;
    let mut t = read(r)?;
    let object = create_object(res, texture_desc(&t), None)?;
    let old = t.textureObject as u64;
    t.textureObject = object as *mut c_void;
    let published = publish(r, device, t);
    if let Err(e) = published {
        let _ = destroy_texture(object);
        return Err(e);
    }
    // The reference now names the new object; a failure to free the old
    // one is the program's forged object, reported after the bind.
    destroy_texture(old)
}

/// Writes `t` to the host reference `r` and its device copy at `device`.
fn publish(r: *const textureReference, device: u64, t: textureReference) -> HipResult {
    crate::register::write_device(device, &reference_bytes(&t))?;
    update(r, |host| *host = t)
}

/// The bytes of `t` as C lays it out (its padding zero).
fn reference_bytes(t: &textureReference) -> Vec<u8> {
    use std::mem::offset_of;
    let mut b = vec![0u8; std::mem::size_of::<textureReference>()];
    let mut at =
        |offset: usize, bytes: &[u8]| b[offset..offset + bytes.len()].copy_from_slice(bytes);
    at(
        offset_of!(textureReference, normalized),
        &t.normalized.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, readMode),
        &t.readMode.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, filterMode),
        &t.filterMode.to_le_bytes(),
    );
    for (k, m) in t.addressMode.iter().enumerate() {
        at(
            offset_of!(textureReference, addressMode) + 4 * k,
            &m.to_le_bytes(),
        );
    }
    let c = &t.channelDesc;
    for (k, v) in [c.x, c.y, c.z, c.w, c.f].iter().enumerate() {
        at(
            offset_of!(textureReference, channelDesc) + 4 * k,
            &v.to_le_bytes(),
        );
    }
    at(offset_of!(textureReference, sRGB), &t.sRGB.to_le_bytes());
    at(
        offset_of!(textureReference, maxAnisotropy),
        &t.maxAnisotropy.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, mipmapFilterMode),
        &t.mipmapFilterMode.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, mipmapLevelBias),
        &t.mipmapLevelBias.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, minMipmapLevelClamp),
        &t.minMipmapLevelClamp.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, maxMipmapLevelClamp),
        &t.maxMipmapLevelClamp.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, textureObject),
        &(t.textureObject as u64).to_le_bytes(),
    );
    at(
        offset_of!(textureReference, numChannels),
        &t.numChannels.to_le_bytes(),
    );
    at(
        offset_of!(textureReference, format),
        &t.format.to_le_bytes(),
    );
    b
}

fn unbind(r: *const textureReference) -> HipResult {
    let device = device_copy(r)?;
    let mut t = read(r)?;
    let old = t.textureObject as u64;
    t.textureObject = std::ptr::null_mut();
    // The device copy is cleared too (CLR leaves it): a kernel reading the
    // reference afterwards faults at address 0 rather than reading freed
    // memory.
    publish(r, device, t)?;
    destroy_texture(old)
}

fn channel_desc(desc: *const hipChannelFormatDesc) -> HipResult<hipChannelFormatDesc> {
    // SAFETY: a valid input struct (crate docs, "Inputs").
    unsafe { get(desc, "channel descriptor") }
}

/// Sets `*offset` to 0 when given: softgpu's linear textures read from any
/// byte address, so nothing is shifted (CLR's offset for `hipMalloc`
/// memory, which is aligned, is 0 as well).
fn zero_offset(offset: *mut usize) -> HipResult {
    if offset.is_null() {
        return Ok(());
    }
    // SAFETY: an output of a size (crate docs, "Outputs").
    unsafe { put(offset, 0) }
}

fn bind_linear(
    offset: *mut usize,
    r: *const textureReference,
    ptr: *const c_void,
    desc: *const hipChannelFormatDesc,
    size: usize,
) -> HipResult {
    device_copy(r)?;
    if ptr.is_null() {
        return Err(HipError::invalid("texture bound to a null pointer"));
    }
    let res = hipResourceDesc {
        resType: HIP_RESOURCE_TYPE_LINEAR,
        res: hipResourceUnion {
            linear: hipResourceLinear {
                devPtr: ptr as *mut c_void,
                desc: channel_desc(desc)?,
                sizeInBytes: size,
            },
        },
    };
    bind(r, res)?;
    zero_offset(offset)
}

#[allow(clippy::too_many_arguments)]
fn bind_pitch2d(
    offset: *mut usize,
    r: *const textureReference,
    ptr: *const c_void,
    desc: hipChannelFormatDesc,
    width: usize,
    height: usize,
    pitch: usize,
) -> HipResult {
    device_copy(r)?;
    if ptr.is_null() {
        return Err(HipError::invalid("texture bound to a null pointer"));
    }
    let res = hipResourceDesc {
        resType: HIP_RESOURCE_TYPE_PITCH2D,
        res: hipResourceUnion {
            pitch2D: hipResourcePitch2D {
                devPtr: ptr as *mut c_void,
                desc,
                width,
                height,
                pitchInBytes: pitch,
            },
        },
    };
    bind(r, res)?;
    zero_offset(offset)
}

/// Binds `r` to `array`. The array's own format is read (the channel
/// descriptor CLR turns into a resource view must be given, but softgpu
/// reads no views, so it is not otherwise used).
fn bind_array(r: *const textureReference, array: *const hipArray) -> HipResult {
    device_copy(r)?;
    if array.is_null() {
        return Err(HipError::invalid("texture bound to a null array"));
    }
    let res = hipResourceDesc {
        resType: HIP_RESOURCE_TYPE_ARRAY,
        res: hipResourceUnion {
            array: array as *mut hipArray,
        },
    };
    bind(r, res)
}

/// Binds `r` to mipmapped array `m` (its own format read, as for arrays).
fn bind_mipmapped(r: *const textureReference, m: *const hipMipmappedArray) -> HipResult {
    device_copy(r)?;
    if m.is_null() {
        return Err(HipError::invalid("texture bound to a null mipmapped array"));
    }
    let res = hipResourceDesc {
        resType: HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY,
        res: hipResourceUnion {
            mipmap: m as *mut c_void,
        },
    };
    bind(r, res)
}

/// The channel layout a driver-API reference's format and channel count
/// (`hipTexRefSetFormat`) describe.
fn format_of(t: &textureReference) -> HipResult<hipChannelFormatDesc> {
    if !(1..=4).contains(&t.numChannels) {
        return Err(HipError::invalid(format!(
            "texture reference has {} channels (set a format with hipTexRefSetFormat)",
            t.numChannels
        )));
    }
    driver_format(t.format, t.numChannels as u32)
}

/// The resource reference `r` is bound to.
fn bound(r: *const textureReference) -> HipResult<hipResourceDesc> {
    let t = read(r)?;
    if t.textureObject.is_null() {
        return Err(HipError::invalid("the texture reference is not bound"));
    }
    Ok(texture_descs(t.textureObject as u64)?.0)
}

/// `hipModuleGetTexRef`: the runtime's reference for the module's global
/// `name` (the same one each time it is asked).
fn module_reference(module: hipModule_t, name: *const c_char) -> HipResult<*mut textureReference> {
    // SAFETY: a NUL-terminated name (crate docs, "Inputs").
    let name = unsafe { c_str(name, "texture name")? };
    let (_, size) = module_global(module as usize, name)?;
    if (size as usize) < std::mem::size_of::<textureReference>() {
        return Err(HipError::invalid(format!(
            "global {name} ({size} bytes) is not a texture reference"
        )));
    }
    let mut refs = lock(&DYNAMIC_REFS);
    let known = refs
        .iter()
        .find(|(_, (_, d))| d.module == module as usize && d.name == name);
    if let Some((&at, _)) = known {
        return Ok(at as *mut textureReference);
    }
    let mut boxed = Box::new(TexRef(fresh_reference()));
    let at = &mut boxed.0 as *mut textureReference;
    let info = DynamicRef {
        module: module as usize,
        name: name.to_string(),
    };
    refs.insert(at as usize, (boxed, info));
    Ok(at)
}

/// A driver-API reference before any setting: CLR's zeroed one.
fn fresh_reference() -> textureReference {
    textureReference {
        normalized: 0,
        readMode: READ_ELEMENT,
        filterMode: 0,
        addressMode: [0; 3],
        channelDesc: hipChannelFormatDesc {
            x: 0,
            y: 0,
            z: 0,
            w: 0,
            f: 0,
        },
        sRGB: 0,
        maxAnisotropy: 0,
        mipmapFilterMode: 0,
        mipmapLevelBias: 0.0,
        minMipmapLevelClamp: 0.0,
        maxMipmapLevelClamp: 0.0,
        textureObject: std::ptr::null_mut(),
        numChannels: 0,
        format: 0,
    }
}

/// A getter's output: NULL is an invalid value, as in CLR.
fn out<T>(p: *mut T, value: T) -> HipResult {
    // SAFETY: an output of a value of the C type (crate docs, "Outputs").
    unsafe { put(p, value) }
}

fn check_dim(dim: i32) -> HipResult<usize> {
    match dim {
        0..=2 => Ok(dim as usize),
        _ => Err(HipError::invalid(format!(
            "texture dimension {dim} (0, 1 or 2)"
        ))),
    }
}

guarded_exports! {
    hipBindTexture(offset: *mut usize, r: *const textureReference, ptr: *const c_void, desc: *const hipChannelFormatDesc, size: usize) =>
        bind_linear(offset, r, ptr, desc, size);
    hipBindTexture2D(offset: *mut usize, r: *const textureReference, ptr: *const c_void, desc: *const hipChannelFormatDesc, width: usize, height: usize, pitch: usize) => {
        device_copy(r)?;
        bind_pitch2d(offset, r, ptr, channel_desc(desc)?, width, height, pitch)
    };
    hipBindTextureToArray(r: *const textureReference, array: *const hipArray, desc: *const hipChannelFormatDesc) => {
        device_copy(r)?;
        channel_desc(desc)?;
        bind_array(r, array)
    };
    hipBindTextureToMipmappedArray(r: *const textureReference, m: *const hipMipmappedArray, desc: *const hipChannelFormatDesc) => {
        device_copy(r)?;
        channel_desc(desc)?;
        bind_mipmapped(r, m)
    };
    hipTexRefSetMipmappedArray(r: *mut textureReference, m: *mut hipMipmappedArray, flags: u32) => {
        checked(r)?;
        if flags != HIP_TRSA_OVERRIDE_FORMAT {
            return Err(HipError::invalid(format!(
                "hipTexRefSetMipmappedArray with flags {flags:#x} (HIP_TRSA_OVERRIDE_FORMAT)"
            )));
        }
        bind_mipmapped(r, m)
    };
    hipUnbindTexture(r: *const textureReference) => unbind(r);
    hipGetTextureReference(out_ref: *mut *const textureReference, symbol: *const c_void) => {
        if out_ref.is_null() {
            return Err(HipError::invalid("null texture reference output"));
        }
        // A texture variable's host object is its reference (CLR returns
        // the symbol itself); softgpu checks it was registered as one.
        checked(symbol as *const textureReference)?;
        out(out_ref, symbol as *const textureReference)
    };
    hipGetTextureAlignmentOffset(offset: *mut usize, r: *const textureReference) => {
        if offset.is_null() {
            return Err(HipError::invalid("null offset output"));
        }
        checked(r)?;
        zero_offset(offset)
    };
    hipModuleGetTexRef(out_ref: *mut *mut textureReference, module: hipModule_t, name: *const c_char) => {
        if out_ref.is_null() || name.is_null() {
            return Err(HipError::invalid("null texture reference output or name"));
        }
        let r = module_reference(module, name)?;
        out(out_ref, r)
    };
    hipTexRefSetArray(r: *mut textureReference, array: *const hipArray, flags: u32) => {
        checked(r)?;
        if array.is_null() || flags != HIP_TRSA_OVERRIDE_FORMAT {
            return Err(HipError::invalid(format!(
                "hipTexRefSetArray of array {array:p} with flags {flags:#x} (a non-null array and HIP_TRSA_OVERRIDE_FORMAT)"
            )));
        }
        bind_array(r, array)
    };
    hipTexRefSetAddress(offset: *mut usize, r: *mut textureReference, ptr: hipDeviceptr_t, bytes: usize) => {
        let desc = format_of(&read(r)?)?;
        bind_linear(offset, r, ptr as *const c_void, &desc, bytes)
    };
    hipTexRefSetAddress2D(r: *mut textureReference, desc: *const HIP_ARRAY_DESCRIPTOR, ptr: hipDeviceptr_t, pitch: usize) => {
        checked(r)?;
        // SAFETY: a valid input struct (crate docs, "Inputs").
        let d = unsafe { get(desc, "array descriptor")? };
        let channels = driver_format(d.Format, d.NumChannels)?;
        bind_pitch2d(std::ptr::null_mut(), r, ptr as *const c_void, channels, d.Width, d.Height, pitch)
    };
    hipTexRefGetAddress(ptr: *mut hipDeviceptr_t, r: *const textureReference) => {
        if ptr.is_null() {
            return Err(HipError::invalid("null address output"));
        }
        let res = bound(r)?;
        // SAFETY: the union member resType names, of plain data (as in
        // the texture module's resource reader).
        let at = unsafe {
            match res.resType {
                HIP_RESOURCE_TYPE_LINEAR => res.res.linear.devPtr,
                HIP_RESOURCE_TYPE_PITCH2D => res.res.pitch2D.devPtr,
                _ => return Err(HipError::invalid("the texture reference is bound to an array, not memory")),
            }
        };
        out(ptr, at as hipDeviceptr_t)
    };
    hipTexRefSetAddressMode(r: *mut textureReference, dim: i32, mode: i32) => {
        let k = check_dim(dim)?;
        update(r, |t| t.addressMode[k] = mode)
    };
    hipTexRefGetAddressMode(mode: *mut i32, r: *const textureReference, dim: i32) => {
        let t = read(r)?;
        out(mode, t.addressMode[check_dim(dim)?])
    };
    hipTexRefSetFilterMode(r: *mut textureReference, mode: i32) => update(r, |t| t.filterMode = mode);
    hipTexRefGetFilterMode(mode: *mut i32, r: *const textureReference) => out(mode, read(r)?.filterMode);
    hipTexRefSetFlags(r: *mut textureReference, flags: u32) => update(r, |t| {
        // As CLR: normalised float reads unless READ_AS_INTEGER.
        t.readMode = if flags & HIP_TRSF_READ_AS_INTEGER != 0 { READ_ELEMENT } else { READ_NORMALIZED };
        t.normalized = (flags & HIP_TRSF_NORMALIZED_COORDINATES != 0) as i32;
        t.sRGB = (flags & HIP_TRSF_SRGB != 0) as i32;
    });
    hipTexRefGetFlags(flags: *mut u32, r: *const textureReference) => {
        let t = read(r)?;
        let mut f = 0;
        if t.readMode == READ_ELEMENT {
            f |= HIP_TRSF_READ_AS_INTEGER;
        }
        if t.normalized == 1 {
            f |= HIP_TRSF_NORMALIZED_COORDINATES;
        }
        if t.sRGB == 1 {
            f |= HIP_TRSF_SRGB;
        }
        out(flags, f)
    };
    hipTexRefSetFormat(r: *mut textureReference, format: i32, channels: i32) => update(r, |t| {
        t.format = format;
        t.numChannels = channels;
    });
    hipTexRefGetFormat(format: *mut i32, channels: *mut i32, r: *const textureReference) => {
        let t = read(r)?;
        if channels.is_null() {
            return Err(HipError::invalid("null channel count output"));
        }
        out(format, t.format)?;
        out(channels, t.numChannels)
    };
    hipTexRefSetMaxAnisotropy(r: *mut textureReference, max: u32) => update(r, |t| t.maxAnisotropy = max);
    hipTexRefGetMaxAnisotropy(max: *mut i32, r: *const textureReference) => out(max, read(r)?.maxAnisotropy as i32);
    hipTexRefSetMipmapFilterMode(r: *mut textureReference, mode: i32) => update(r, |t| t.mipmapFilterMode = mode);
    hipTexRefGetMipmapFilterMode(mode: *mut i32, r: *const textureReference) => out(mode, read(r)?.mipmapFilterMode);
    hipTexRefSetMipmapLevelBias(r: *mut textureReference, bias: f32) => update(r, |t| t.mipmapLevelBias = bias);
    hipTexRefGetMipmapLevelBias(bias: *mut f32, r: *const textureReference) => out(bias, read(r)?.mipmapLevelBias);
    hipTexRefSetMipmapLevelClamp(r: *mut textureReference, min: f32, max: f32) => update(r, |t| {
        t.minMipmapLevelClamp = min;
        t.maxMipmapLevelClamp = max;
    });
    hipTexRefGetMipmapLevelClamp(min: *mut f32, max: *mut f32, r: *const textureReference) => {
        let t = read(r)?;
        if max.is_null() {
            return Err(HipError::invalid("null clamp output"));
        }
        out(min, t.minMipmapLevelClamp)?;
        out(max, t.maxMipmapLevelClamp)
    };
}

symver!("texture_reference");

#[cfg(test)]
mod tests {
    use super::*;

    /// The device copy's bytes put `textureObject` at offset 72, where
    /// texture_fetch_functions.h's device code reads it (the 5.2 header's
    /// 18 four-byte fields, then the 8-byte-aligned pointer).
    #[test]
    fn reference_bytes_layout() {
        let mut t = fresh_reference();
        t.textureObject = 0x1122_3344_5566_7788usize as *mut c_void;
        t.format = 0x20;
        t.addressMode = [1, 2, 3];
        let b = reference_bytes(&t);
        assert_eq!(b.len(), 88);
        assert_eq!(b[72..80], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(b[84..88], 0x20i32.to_le_bytes());
        assert_eq!(b[12..24], [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
    }
}
