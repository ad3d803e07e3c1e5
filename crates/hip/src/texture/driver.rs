//! The driver API's texture objects (`hipTexObjectCreate` and its
//! getters): its `HIP_RESOURCE_DESC` and `HIP_TEXTURE_DESC` translated
//! into the runtime API's descriptors, over the same objects
//! `hipCreateTextureObject` makes.
//!
//! The translation is CLR's: a linear or pitched resource's format and
//! channel count become a channel descriptor, and the texture flags give
//! the read mode (normalised floats unless `HIP_TRSF_READ_AS_INTEGER`),
//! normalised coordinates and sRGB. Not supported (a clear error):
//! resource views, resource flags other than 0.

use std::ffi::c_void;

use crate::abi::*;
use crate::error::{get, put, unsupported, HipError, HipResult};

use super::{create_object, destroy_texture, driver_descs, driver_format};

/// `hipReadModeNormalizedFloat` and `hipReadModeElementType`.
const READ_NORMALIZED: i32 = 1;
const READ_ELEMENT: i32 = 0;

/// The runtime API's resource descriptor for a driver API one.
fn resource_desc(d: &HIP_RESOURCE_DESC) -> HipResult<hipResourceDesc> {
    if d.flags != 0 {
        return Err(HipError::invalid(format!(
            "resource descriptor flags {:#x} (must be 0)",
            d.flags
        )));
    }
    // SAFETY: every union member is plain data; the one resType names is
    // read (crate docs, "Inputs": a valid HIP_RESOURCE_DESC).
    let res = unsafe {
        match d.resType {
            HIP_RESOURCE_TYPE_ARRAY => hipResourceUnion { array: d.res.array },
            HIP_RESOURCE_TYPE_LINEAR => {
                let l = d.res.linear;
                hipResourceUnion {
                    linear: hipResourceLinear {
                        devPtr: l.devPtr,
                        desc: driver_format(l.format, l.numChannels)?,
                        sizeInBytes: l.sizeInBytes,
                    },
                }
            }
            HIP_RESOURCE_TYPE_PITCH2D => {
                let p = d.res.pitch2D;
                hipResourceUnion {
                    pitch2D: hipResourcePitch2D {
                        devPtr: p.devPtr,
                        desc: driver_format(p.format, p.numChannels)?,
                        width: p.width,
                        height: p.height,
                        pitchInBytes: p.pitchInBytes,
                    },
                }
            }
            HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY => hipResourceUnion {
                mipmap: d.res.mipmap,
            },
            t => return Err(HipError::invalid(format!("resource type {t}"))),
        }
    };
    Ok(hipResourceDesc {
        resType: d.resType,
        res,
    })
}

/// The runtime API's texture descriptor for a driver API one.
fn texture_desc(d: &HIP_TEXTURE_DESC) -> hipTextureDesc {
    hipTextureDesc {
        addressMode: d.addressMode,
        filterMode: d.filterMode,
        readMode: if d.flags & HIP_TRSF_READ_AS_INTEGER != 0 {
            READ_ELEMENT
        } else {
            READ_NORMALIZED
        },
        sRGB: (d.flags & HIP_TRSF_SRGB != 0) as i32,
        borderColor: d.borderColor,
        normalizedCoords: (d.flags & HIP_TRSF_NORMALIZED_COORDINATES != 0) as i32,
        maxAnisotropy: d.maxAnisotropy,
        mipmapFilterMode: d.mipmapFilterMode,
        mipmapLevelBias: d.mipmapLevelBias,
        minMipmapLevelClamp: d.minMipmapLevelClamp,
        maxMipmapLevelClamp: d.maxMipmapLevelClamp,
    }
}

fn create(
    out: *mut *mut c_void,
    res: *const HIP_RESOURCE_DESC,
    tex: *const HIP_TEXTURE_DESC,
    view: *const c_void,
) -> HipResult {
    if out.is_null() {
        return Err(HipError::invalid("null texture object output"));
    }
    if !view.is_null() {
        return Err(unsupported(
            "texture resource views (HIP_RESOURCE_VIEW_DESC)",
        ));
    }
    // SAFETY: valid input structs (crate docs, "Inputs").
    let (res, tex) = unsafe {
        (
            get(res, "resource descriptor")?,
            get(tex, "texture descriptor")?,
        )
    };
    let addr = create_object(resource_desc(&res)?, texture_desc(&tex), Some((res, tex)))?;
    // SAFETY: an output of a texture object (crate docs, "Outputs").
    unsafe { put(out, addr as *mut c_void) }
}

/// The driver descriptors of object `t`, which `hipTexObjectCreate` must
/// have made (a runtime-API object has none to give).
fn descs(t: *mut c_void) -> HipResult<(HIP_RESOURCE_DESC, HIP_TEXTURE_DESC)> {
    driver_descs(t as u64)?.ok_or_else(|| {
        HipError::invalid(format!(
            "texture object {t:p} was made by hipCreateTextureObject: read it with hipGetTextureObject*"
        ))
    })
}

guarded_exports! {
    hipTexObjectCreate(out: *mut *mut c_void, res: *const HIP_RESOURCE_DESC, tex: *const HIP_TEXTURE_DESC, view: *const c_void) =>
        create(out, res, tex, view);
    hipTexObjectDestroy(t: *mut c_void) => destroy_texture(t as u64);
    hipTexObjectGetResourceDesc(out: *mut HIP_RESOURCE_DESC, t: *mut c_void) => {
        let (res, _) = descs(t)?;
        // SAFETY: an output of a resource descriptor (crate docs, "Outputs").
        unsafe { put(out, res) }
    };
    hipTexObjectGetTextureDesc(out: *mut HIP_TEXTURE_DESC, t: *mut c_void) => {
        let (_, tex) = descs(t)?;
        // SAFETY: an output of a texture descriptor (crate docs, "Outputs").
        unsafe { put(out, tex) }
    };
    hipTexObjectGetResourceViewDesc(_out: *mut c_void, t: *mut c_void) => {
        descs(t)?;
        Err(unsupported("texture resource views (HIP_RESOURCE_VIEW_DESC)"))
    };
}

symver!("texture_driver");

#[cfg(test)]
mod tests {
    use super::*;

    /// CLR's flag translation: normalised float reads unless
    /// READ_AS_INTEGER; coordinates normalised with the flag.
    #[test]
    fn texture_flags() {
        let d = HIP_TEXTURE_DESC {
            flags: HIP_TRSF_NORMALIZED_COORDINATES,
            filterMode: 1,
            ..Default::default()
        };
        let t = texture_desc(&d);
        assert_eq!((t.readMode, t.normalizedCoords, t.filterMode), (1, 1, 1));
        let raw = texture_desc(&HIP_TEXTURE_DESC {
            flags: HIP_TRSF_READ_AS_INTEGER,
            ..d
        });
        assert_eq!((raw.readMode, raw.normalizedCoords), (0, 0));
    }

    #[test]
    fn linear_resource_formats() {
        let d = HIP_RESOURCE_DESC {
            resType: HIP_RESOURCE_TYPE_LINEAR,
            res: HIP_RESOURCE_DESC_res {
                linear: HIP_RESOURCE_DESC_linear {
                    devPtr: 0x1000 as *mut c_void,
                    format: 0x20, // HIP_AD_FORMAT_FLOAT
                    numChannels: 2,
                    sizeInBytes: 64,
                },
            },
            flags: 0,
        };
        let r = resource_desc(&d).unwrap();
        // SAFETY: the linear member was just written.
        let l = unsafe { r.res.linear };
        assert_eq!((l.desc.x, l.desc.y, l.desc.z, l.desc.f), (32, 32, 0, 2));
        assert!(resource_desc(&HIP_RESOURCE_DESC { flags: 1, ..d }).is_err());
    }
}
