//! Mipmapped arrays: a chain of levels in one allocation, laid out as the
//! executor's image instructions read a T# with MAX_MIP > 0 (addrlib's
//! linear layout, `softgpu_interp`'s `ops/image`): each level's rows
//! padded to 256 bytes, the smallest level first, level 0 last. A level
//! is handed out as an array (`hipGetMipmappedArrayLevel`) over its part
//! of the memory, for the array copies; the mipmapped array owns it.
//!
//! Texture objects over a chain put every level in view (BASE_LEVEL 0,
//! LAST_LEVEL and MAX_MIP the last level) and map the texture
//! descriptor's mipmap fields to the S#: `mipmapFilterMode` point or
//! linear to MIP_FILTER 1 or 2, `minMipmapLevelClamp`/`maxMipmapLevelClamp`
//! to MIN_LOD/MAX_LOD. Linear mip filtering blends the two levels around
//! the LOD with an 8-bit weight, as the executor's sampler does. Not
//! supported (a clear error): 3-D, layered and cube mipmapped arrays, a
//! level bias (the executor's sampling does not apply LOD_BIAS).

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::abi::*;
use crate::error::{get, put, unsupported, HipError, HipResult};
use crate::memory::{allocate_device, free_device_memory};
use crate::state::lock;

use super::{driver_format, ArrayInfo, Channels, ImageSpec, ARRAYS, MAX_EXTENT, ROW_ALIGN};

/// What the runtime knows of one mipmapped array.
#[derive(Clone, Debug)]
pub(super) struct MipInfo {
    addr: u64,
    channels: Channels,
    width: u64,
    /// 1 for a 1-D chain.
    height: u64,
    dims: u32,
    /// Each level's array view (handles into `ARRAYS`), level 0 first.
    views: Vec<usize>,
}

impl MipInfo {
    /// The image a texture object over the whole chain describes.
    pub(super) fn image_spec(&self, normalized: bool) -> ImageSpec {
        let level0 = level_shape(self.channels, self.width, self.height, 0);
        ImageSpec {
            base: self.addr,
            channels: self.channels,
            normalized,
            width: self.width,
            height: self.height,
            depth_field: 0,
            pitch_texels: level0.pitch / self.channels.bytes(),
            ty: if self.dims == 1 { 8 } else { 9 },
            levels: self.views.len() as u32,
        }
    }
}

/// Mipmapped arrays by handle (the address of the runtime's
/// `hipMipmappedArray`).
static MIPMAPS: Mutex<BTreeMap<usize, MipInfo>> = Mutex::new(BTreeMap::new());

pub(super) fn info(m: *const hipMipmappedArray) -> HipResult<MipInfo> {
    lock(&MIPMAPS)
        .get(&(m as usize))
        .cloned()
        .ok_or_else(|| HipError::handle(format!("{m:p} is not a live mipmapped array")))
}

/// One level's extent and row pitch in bytes.
#[derive(Clone, Copy, Debug)]
struct Shape {
    width: u64,
    height: u64,
    pitch: u64,
}

impl Shape {
    fn bytes(&self) -> u64 {
        self.pitch * self.height
    }
}

/// Level `l`'s shape: each side halved per level, at least 1.
fn level_shape(c: Channels, width: u64, height: u64, l: u32) -> Shape {
    let w = (width >> l).max(1);
    Shape {
        width: w,
        height: (height >> l).max(1),
        pitch: (w * c.bytes()).div_ceil(ROW_ALIGN) * ROW_ALIGN,
    }
}

/// Where each level starts in the chain: after every smaller level.
fn level_offsets(c: Channels, width: u64, height: u64, levels: u32) -> (Vec<u64>, u64) {
    let sizes: Vec<u64> = (0..levels)
        .map(|l| level_shape(c, width, height, l).bytes())
        .collect();
    let offsets = (0..levels as usize)
        .map(|l| sizes[l + 1..].iter().sum())
        .collect();
    (offsets, sizes.iter().sum())
}

/// The most levels a chain of this extent has: down to 1 x 1.
fn max_levels(width: u64, height: u64) -> u32 {
    64 - width.max(height).leading_zeros()
}

fn create(
    out: *mut *mut hipMipmappedArray,
    desc: hipChannelFormatDesc,
    extent: [usize; 3],
    levels: u32,
    flags: u32,
) -> HipResult {
    if out.is_null() {
        return Err(HipError::invalid("null mipmapped array output"));
    }
    if flags != 0 || extent[2] != 0 {
        return Err(unsupported(format!(
            "3-D, layered or cube mipmapped arrays (depth {}, flags {flags:#x})",
            extent[2]
        )));
    }
    let c = Channels::of(&desc)?;
    let [w, h] = [extent[0] as u64, extent[1] as u64];
    let dims = if h == 0 { 1 } else { 2 };
    let height = h.max(1);
    let bad = w == 0 || w > MAX_EXTENT[0] || height > MAX_EXTENT[1];
    if bad || levels == 0 || levels > max_levels(w, height) {
        return Err(HipError::invalid(format!(
            "mipmapped array of {w} x {h} with {levels} levels (at most {} levels, sides 1 to {})",
            max_levels(w.max(1), height),
            MAX_EXTENT[0]
        )));
    }
    let (offsets, total) = level_offsets(c, w, height, levels);
    let addr = allocate_device(total)?;
    let handle = Box::into_raw(Box::new(hipMipmappedArray {
        data: addr as *mut c_void,
        desc,
        type_: dims,
        width: w as u32,
        height: h as u32,
        depth: 0,
        min_mipmap_level: 0,
        max_mipmap_level: levels - 1,
        flags,
        format: super::array_format(c),
    }));
    let views = (0..levels)
        .map(|l| {
            level_view(
                handle as usize,
                addr + offsets[l as usize],
                c,
                desc,
                w,
                height,
                dims,
                l,
            )
        })
        .collect();
    let info = MipInfo {
        addr,
        channels: c,
        width: w,
        height,
        dims,
        views,
    };
    lock(&MIPMAPS).insert(handle as usize, info);
    // SAFETY: an output of a mipmapped array handle (crate docs, "Outputs").
    unsafe { put(out, handle) }
}

/// Registers level `l` of chain `owner` as an array over its memory.
#[allow(clippy::too_many_arguments)]
fn level_view(
    owner: usize,
    addr: u64,
    c: Channels,
    desc: hipChannelFormatDesc,
    width: u64,
    height: u64,
    dims: u32,
    l: u32,
) -> usize {
    let s = level_shape(c, width, height, l);
    let handle = Box::into_raw(Box::new(hipArray {
        data: addr as *mut c_void,
        desc,
        type_: 0,
        width: s.width as u32,
        height: if dims == 1 { 0 } else { s.height as u32 },
        depth: 0,
        Format: super::array_format(c),
        NumChannels: c.count,
        isDrv: false,
        textureType: dims,
    })) as usize;
    let info = ArrayInfo {
        addr,
        channels: c,
        desc,
        width: s.width,
        height: s.height,
        depth: 1,
        layered: false,
        dims,
        pitch: s.pitch,
        owner: Some(owner),
    };
    lock(&ARRAYS).insert(handle, info);
    handle
}

fn free(m: *mut hipMipmappedArray) -> HipResult {
    if m.is_null() {
        return Err(HipError::invalid("null mipmapped array"));
    }
    let info = lock(&MIPMAPS)
        .remove(&(m as usize))
        .ok_or_else(|| HipError::handle(format!("{m:p} is not a live mipmapped array")))?;
    let mut arrays = lock(&ARRAYS);
    for view in &info.views {
        arrays.remove(view);
        // SAFETY: each view came from `Box::into_raw` in `level_view` and
        // belonged to this chain only, which was just removed: freed once.
        drop(unsafe { Box::from_raw(*view as *mut hipArray) });
    }
    drop(arrays);
    // SAFETY: `m` came from `Box::into_raw` in `create` and was live in
    // MIPMAPS, from which it was just removed, so it is freed once.
    drop(unsafe { Box::from_raw(m) });
    free_device_memory(info.addr)
}

fn get_level(out: *mut *mut hipArray, m: *const hipMipmappedArray, level: u32) -> HipResult {
    if out.is_null() {
        return Err(HipError::invalid("null level array output"));
    }
    let info = info(m)?;
    let view = info.views.get(level as usize).ok_or_else(|| {
        HipError::invalid(format!(
            "level {level} of a mipmapped array of {} levels",
            info.views.len()
        ))
    })?;
    // SAFETY: an output of an array handle (crate docs, "Outputs").
    unsafe { put(out, *view as *mut hipArray) }
}

/// The S# MIP_FILTER, MIN_LOD and MAX_LOD (unsigned 4.8 fixed point) of
/// a texture over a chain.
pub(super) fn sampler_fields(t: &hipTextureDesc) -> HipResult<(u32, u32, u32)> {
    let filter = match t.mipmapFilterMode {
        0 => 1, // hipFilterModePoint: SQ_TEX_MIP_FILTER_POINT
        1 => 2, // hipFilterModeLinear: SQ_TEX_MIP_FILTER_LINEAR
        m => return Err(HipError::invalid(format!("mipmap filter mode {m}"))),
    };
    if t.mipmapLevelBias != 0.0 {
        return Err(unsupported(format!(
            "mipmap level bias {} (softgpu's sampling applies no LOD bias)",
            t.mipmapLevelBias
        )));
    }
    let fixed = |v: f32, what: &str| {
        if (0.0..16.0).contains(&v) {
            Ok((v * 256.0) as u32)
        } else {
            Err(HipError::invalid(format!("{what} {v} (0 to 15.99)")))
        }
    };
    let (min, max) = (t.minMipmapLevelClamp, t.maxMipmapLevelClamp);
    if min > max {
        return Err(HipError::invalid(format!(
            "mipmap level clamp {min} above {max}"
        )));
    }
    Ok((
        filter,
        fixed(min, "minimum mipmap level clamp")?,
        fixed(max, "maximum mipmap level clamp")?,
    ))
}

guarded_exports! {
    hipMallocMipmappedArray(out: *mut *mut hipMipmappedArray, desc: *const hipChannelFormatDesc, extent: hipExtent, levels: u32, flags: u32) => {
        // SAFETY: a valid input struct (crate docs, "Inputs").
        let desc = unsafe { get(desc, "channel descriptor")? };
        create(out, desc, [extent.width, extent.height, extent.depth], levels, flags)
    };
    hipMipmappedArrayCreate(out: *mut *mut hipMipmappedArray, d: *const HIP_ARRAY3D_DESCRIPTOR, levels: u32) => {
        // SAFETY: as above.
        let d = unsafe { get(d, "array descriptor")? };
        create(out, driver_format(d.Format, d.NumChannels)?, [d.Width, d.Height, d.Depth], levels, d.Flags)
    };
    hipFreeMipmappedArray(m: *mut hipMipmappedArray) => free(m);
    hipMipmappedArrayDestroy(m: *mut hipMipmappedArray) => free(m);
    hipGetMipmappedArrayLevel(out: *mut *mut hipArray, m: *const hipMipmappedArray, level: u32) => get_level(out, m, level);
    hipMipmappedArrayGetLevel(out: *mut *mut hipArray, m: *mut hipMipmappedArray, level: u32) => get_level(out, m, level);
}

symver!("texture_mipmap");

#[cfg(test)]
mod tests {
    use super::*;

    /// A 16 x 8 float chain: levels 16x8, 8x4, 4x2, 2x1, 1x1, each row
    /// padded to 256 bytes, the smallest first (the executor's
    /// `Layout::level` offsets: the sizes of the levels above).
    #[test]
    fn level_layout() {
        let c = Channels {
            count: 1,
            bits: 32,
            kind: 2,
        };
        assert_eq!(max_levels(16, 8), 5);
        assert_eq!(max_levels(1, 1), 1);
        let (offsets, total) = level_offsets(c, 16, 8, 5);
        // Rows of 256 bytes: 8, 4, 2, 1 and 1 rows.
        assert_eq!(total, 256 * (8 + 4 + 2 + 1 + 1));
        assert_eq!(offsets, vec![256 * 8, 256 * 4, 256 * 2, 256, 0]);
    }

    #[test]
    fn sampler_clamps() {
        let t = hipTextureDesc {
            mipmapFilterMode: 1,
            minMipmapLevelClamp: 0.5,
            maxMipmapLevelClamp: 3.0,
            ..Default::default()
        };
        assert_eq!(sampler_fields(&t).unwrap(), (2, 128, 768));
        let biased = hipTextureDesc {
            mipmapLevelBias: 1.0,
            ..t
        };
        assert!(sampler_fields(&biased).is_err());
        let inverted = hipTextureDesc {
            minMipmapLevelClamp: 4.0,
            ..t
        };
        assert!(sampler_fields(&inverted).is_err());
    }
}
