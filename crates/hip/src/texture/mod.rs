//! HIP arrays, texture objects and surface objects.
//!
//! An array is device memory in the linear layout the executor's image
//! instructions read (`softgpu_interp`'s `ops/image`): rows padded to 256
//! bytes, slices (or layers) one after another. A texture object is what
//! HIP's device code reads through its pointer: 12 dwords of image (the
//! 8-dword T# or, for linear memory, the 4-dword buffer V#, then the
//! channel type, channel order and width that ockl reads from dwords 8-10,
//! as ROCr's image extension writes them) and 8 dwords of sampler (the
//! 4-dword S#), `HIP_TEXTURE_OBJECT_SIZE_DWORD` in all; a surface object
//! is the image part alone. The descriptors are built for the current
//! device's family through `softgpu_isa::resource`, the layout table the
//! executor decodes them with, with ROCr's field values (`image_manager_gfx11.cpp`,
//! `image_manager_gfx12.cpp`): linear tiling, identity-or-fill DST_SEL,
//! MAX_LOD 4095, transparent black border.
//!
//! Mipmapped arrays are `mipmap.rs`, the driver API's objects `driver.rs`,
//! texture references `reference.rs`.
//!
//! Not supported (a clear error): 3-D and layered mipmapped arrays, cube maps, sRGB, a
//! border colour other than transparent or opaque black or opaque white,
//! resource views, three-channel and mixed-width formats.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use softgpu_isa::resource::{self, BufferResource, FieldError, ImageResource, Sampler};
use softgpu_isa::Family;

use crate::abi::*;
use crate::error::{get, guard, put, unsupported, HipError, HipResult};
use crate::memory::{allocate_device, copy_rows, free_device_memory, rows_2d};
use crate::state::{hip, lock};

mod driver;
mod mipmap;
pub mod reference;

/// `hipArrayLayered`, `hipArrayCubemap` (hipMalloc3DArray's flags).
const ARRAY_LAYERED: u32 = 1;
const ARRAY_CUBEMAP: u32 = 4;

/// Bytes a linear image's rows are padded to (addrlib's linear pitch
/// alignment, which the executor assumes for arrays and 3D images).
const ROW_ALIGN: u64 = 256;

/// The largest width, height and depth the T# fields hold on both
/// families (gfx11's 14-bit width and height; depth 13 bits).
pub const MAX_EXTENT: [u64; 3] = [16384, 16384, 8192];

/// A channel layout HIP describes with `hipChannelFormatDesc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Channels {
    count: u32,
    bits: u32,
    /// hipChannelFormatKind: 0 signed, 1 unsigned, 2 float.
    kind: i32,
}

impl Channels {
    fn of(d: &hipChannelFormatDesc) -> HipResult<Channels> {
        let widths = [d.x, d.y, d.z, d.w];
        let count = widths.iter().take_while(|&&b| b > 0).count() as u32;
        let bits = d.x;
        let uniform = widths[..count as usize].iter().all(|&b| b == bits)
            && widths[count as usize..].iter().all(|&b| b == 0);
        let ok = uniform
            && matches!(count, 1 | 2 | 4)
            && matches!((d.f, bits), (0 | 1, 8 | 16 | 32) | (2, 16 | 32));
        if !ok {
            return Err(HipError::invalid(format!(
                "channel format ({}, {}, {}, {}, kind {}) is not 1, 2 or 4 channels of 8, 16 or 32 bits",
                d.x, d.y, d.z, d.w, d.f
            )));
        }
        Ok(Channels {
            count,
            bits: bits as u32,
            kind: d.f,
        })
    }

    fn bytes(self) -> u64 {
        (self.count * self.bits / 8) as u64
    }

    /// The unified format number (RDNA3 §10.7 table 52): the element type,
    /// or for `normalized` 8/16-bit integers UNORM/SNORM.
    fn format(self, normalized: bool) -> u32 {
        // Offsets in each integer block: UNORM, SNORM, USCALED, SSCALED,
        // UINT, SINT.
        let int = match (normalized, self.kind) {
            (true, 1) => 0,
            (true, _) => 1,
            (false, 1) => 4,
            (false, _) => 5,
        };
        let float = self.kind == 2;
        match (self.bits, self.count) {
            (8, 1) => 1 + int,
            (8, 2) => 14 + int,
            (8, _) => 42 + int,
            (16, 1) if float => 13,
            (16, 1) => 7 + int,
            (16, 2) if float => 29,
            (16, 2) => 23 + int,
            (16, _) if float => 57,
            (16, _) => 51 + int,
            (32, c) => {
                let base = match c {
                    1 => 20,
                    2 => 48,
                    _ => 61,
                };
                base + if float { 2 } else { int - 4 }
            }
            _ => 0,
        }
    }

    /// hsa_ext_image_channel_type_t, which ockl reads from dword 8.
    fn hsa_type(self, normalized: bool) -> u32 {
        match (self.kind, self.bits, normalized) {
            (0, 8, true) => 0,
            (0, 16, true) => 1,
            (1, 8, true) => 2,
            (1, 16, true) => 3,
            (0, 8, _) => 8,
            (0, 16, _) => 9,
            (0, _, _) => 10,
            (1, 8, _) => 11,
            (1, 16, _) => 12,
            (1, _, _) => 13,
            (_, 16, _) => 14,
            _ => 15,
        }
    }

    /// hsa_ext_image_channel_order_t (dword 9): R, RG, RGBA.
    fn hsa_order(self) -> u32 {
        match self.count {
            1 => 1,
            2 => 3,
            _ => 8,
        }
    }

    /// DST_SEL as ROCr maps R, RG and RGBA: the channels, then 0 for the
    /// missing colours and 1 for a missing alpha (SEL_0 = 0, SEL_1 = 1,
    /// SEL_X..W = 4..7).
    fn dst_sel(self) -> [u32; 4] {
        match self.count {
            1 => [4, 0, 0, 1],
            2 => [4, 5, 0, 1],
            _ => [4, 5, 6, 7],
        }
    }
}

/// hipArray_Format (driver API) as a channel kind and width.
pub(crate) fn driver_format(format: i32, channels: u32) -> HipResult<hipChannelFormatDesc> {
    let (bits, f) = match format {
        0x01 => (8, 1),
        0x02 => (16, 1),
        0x03 => (32, 1),
        0x08 => (8, 0),
        0x09 => (16, 0),
        0x0a => (32, 0),
        0x10 => (16, 2),
        0x20 => (32, 2),
        _ => return Err(HipError::invalid(format!("array format {format:#x}"))),
    };
    let at = |k: u32| if k < channels { bits } else { 0 };
    Ok(hipChannelFormatDesc {
        x: at(0),
        y: at(1),
        z: at(2),
        w: at(3),
        f,
    })
}

/// What the runtime knows of one array.
#[derive(Clone, Copy, Debug)]
struct ArrayInfo {
    addr: u64,
    channels: Channels,
    desc: hipChannelFormatDesc,
    width: u64,
    /// 1 for a 1D array.
    height: u64,
    /// Depth (3D) or layers (layered); 1 otherwise.
    depth: u64,
    /// Whether the array's height (1D) or depth (2D) counts layers.
    layered: bool,
    /// 1, 2 or 3 dimensions (of each layer).
    dims: u32,
    pitch: u64,
    /// The mipmapped array this is a level of (`hipGetMipmappedArrayLevel`),
    /// which owns its memory.
    owner: Option<usize>,
}

impl ArrayInfo {
    fn slice_bytes(&self) -> u64 {
        self.pitch * if self.dims == 1 { 1 } else { self.height }
    }

    fn row_bytes(&self) -> u64 {
        self.width * self.channels.bytes()
    }

    /// The T# TYPE field: 1D 8, 2D 9, 3D 10, 1D array 12, 2D array 13.
    fn image_type(&self) -> u32 {
        match (self.dims, self.layered) {
            (1, false) => 8,
            (2, false) => 9,
            (1, true) => 12,
            (2, true) => 13,
            _ => 10,
        }
    }

    /// The rows of the array, for copies: (address of row r, bytes).
    fn rows(&self) -> u64 {
        if self.dims == 1 {
            if self.layered {
                self.height
            } else {
                1
            }
        } else {
            self.height * self.depth
        }
    }
}

/// Arrays by handle (the address of the `hipArray` the runtime owns).
static ARRAYS: Mutex<BTreeMap<usize, ArrayInfo>> = Mutex::new(BTreeMap::new());

fn array_info(a: *const hipArray) -> HipResult<ArrayInfo> {
    lock(&ARRAYS)
        .get(&(a as usize))
        .copied()
        .ok_or_else(|| HipError::handle(format!("{a:p} is not a live HIP array")))
}

/// Creates an array of `extent` (width, height or 0, depth or 0) with
/// `flags` and writes its handle to `out`.
fn create_array(
    out: *mut *mut hipArray,
    desc: hipChannelFormatDesc,
    extent: [usize; 3],
    flags: u32,
    driver: bool,
) -> HipResult {
    if out.is_null() {
        return Err(HipError::invalid("null array output"));
    }
    if flags & ARRAY_CUBEMAP != 0 {
        return Err(unsupported("cube map arrays (hipArrayCubemap)"));
    }
    let channels = Channels::of(&desc)?;
    let layered = flags & ARRAY_LAYERED != 0;
    let [w, h, d] = extent.map(|v| v as u64);
    let dims = match (h, d, layered) {
        (0, _, true) => 1,
        (_, _, true) => 2,
        (0, 0, _) => 1,
        (_, 0, _) => 2,
        (0, _, _) => return Err(HipError::invalid("a 3D array needs a height")),
        _ => 3,
    };
    let (height, depth) = match (dims, layered) {
        (1, true) => (d.max(1), 1),
        _ => (h.max(1), d.max(1)),
    };
    let too_big = w == 0 || w > MAX_EXTENT[0] || height > MAX_EXTENT[1] || depth > MAX_EXTENT[2];
    if too_big {
        return Err(HipError::invalid(format!(
            "array extent {w} x {h} x {d} (each at most {MAX_EXTENT:?}, width at least 1)"
        )));
    }
    let pitch = (w * channels.bytes()).div_ceil(ROW_ALIGN) * ROW_ALIGN;
    let mut info = ArrayInfo {
        addr: 0,
        channels,
        desc,
        width: w,
        height,
        depth,
        layered,
        dims,
        pitch,
        owner: None,
    };
    info.addr =
        allocate_device(info.slice_bytes() * if dims == 1 && layered { height } else { depth })?;
    let texture_type = match (dims, layered) {
        (1, false) => 1,
        (2, false) => 2,
        (3, _) => 3,
        (1, true) => 0xf1,
        _ => 0xf2,
    };
    let handle = Box::into_raw(Box::new(hipArray {
        data: info.addr as *mut c_void,
        desc,
        type_: flags,
        width: w as u32,
        height: h as u32,
        depth: d as u32,
        Format: array_format(channels),
        NumChannels: channels.count,
        isDrv: driver,
        textureType: texture_type,
    }));
    lock(&ARRAYS).insert(handle as usize, info);
    // SAFETY: an output of an array handle (crate docs, "Outputs").
    unsafe { put(out, handle) }
}

/// hipArray_Format of a channel layout.
fn array_format(c: Channels) -> i32 {
    match (c.kind, c.bits) {
        (1, 8) => 0x01,
        (1, 16) => 0x02,
        (1, _) => 0x03,
        (0, 8) => 0x08,
        (0, 16) => 0x09,
        (0, _) => 0x0a,
        (_, 16) => 0x10,
        _ => 0x20,
    }
}

fn free_array(a: *mut hipArray) -> HipResult {
    if a.is_null() {
        return Err(HipError::invalid("null array"));
    }
    let mut arrays = lock(&ARRAYS);
    match arrays.get(&(a as usize)) {
        None => return Err(HipError::handle(format!("{a:p} is not a live HIP array"))),
        Some(i) if i.owner.is_some() => {
            return Err(HipError::invalid(format!(
                "{a:p} is a level of a mipmapped array: free the mipmapped array"
            )))
        }
        Some(_) => {}
    }
    let info = arrays.remove(&(a as usize)).expect("checked above");
    drop(arrays);
    // SAFETY: `a` came from `Box::into_raw` in `create_array` and was
    // live in ARRAYS, from which it was just removed, so it is freed once.
    drop(unsafe { Box::from_raw(a) });
    free_device_memory(info.addr)
}

/// A side of a 3D copy: the array's memory as a pitched pointer and its
/// element size, or the pointer itself (element size 1, as the extent is
/// then in bytes).
pub fn pitched_side(array: *mut c_void, ptr: hipPitchedPtr) -> HipResult<(hipPitchedPtr, u64)> {
    if array.is_null() {
        return Ok((ptr, 1));
    }
    let a = array_info(array as *const hipArray)?;
    let pp = hipPitchedPtr {
        ptr: a.addr as *mut c_void,
        pitch: a.pitch as usize,
        xsize: a.width as usize,
        ysize: if a.dims == 1 { 1 } else { a.height as usize },
    };
    Ok((pp, a.channels.bytes()))
}

/// The rows of a 2D copy into or out of `a`: `height` rows of `width`
/// bytes from byte `x` of row `y`, which must lie inside the array.
fn array_rows(a: &ArrayInfo, x: usize, y: usize, width: usize, height: usize) -> HipResult<u64> {
    let fits = (x as u64)
        .checked_add(width as u64)
        .is_some_and(|e| e <= a.row_bytes())
        && (y as u64)
            .checked_add(height as u64)
            .is_some_and(|e| e <= a.rows());
    if !fits {
        return Err(HipError::invalid(format!(
            "{width} x {height} bytes at ({x}, {y}) exceed the array's {} x {} rows",
            a.row_bytes(),
            a.rows()
        )));
    }
    Ok(a.addr + y as u64 * a.pitch + x as u64)
}

#[allow(clippy::too_many_arguments)]
fn copy_2d_to_array(
    dst: *mut hipArray,
    x: usize,
    y: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    let a = array_info(dst)?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if src.is_null() {
        return Err(HipError::invalid("copy from a null pointer"));
    }
    let at = array_rows(&a, x, y, width, height)?;
    let rows = rows_2d(at, a.pitch as usize, src as u64, spitch, width, height)?;
    copy_rows(rows, stream, sync)
}

#[allow(clippy::too_many_arguments)]
fn copy_2d_from_array(
    dst: *mut c_void,
    dpitch: usize,
    src: *const hipArray,
    x: usize,
    y: usize,
    width: usize,
    height: usize,
    stream: hipStream_t,
    sync: bool,
) -> HipResult {
    let a = array_info(src)?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::invalid("copy to a null pointer"));
    }
    let at = array_rows(&a, x, y, width, height)?;
    let rows = rows_2d(dst as u64, dpitch, at, a.pitch as usize, width, height)?;
    copy_rows(rows, stream, sync)
}

/// The rows of a linear copy of `count` bytes starting at byte `x` of
/// row `y` of `a`, continuing row after row (`hipMemcpyToArray`).
fn linear_rows(a: &ArrayInfo, x: usize, y: usize, count: usize) -> HipResult<Vec<(u64, u64)>> {
    let (row, total) = (a.row_bytes(), a.rows() * a.row_bytes());
    let start = (y as u64)
        .checked_mul(row)
        .and_then(|s| s.checked_add(x as u64));
    let fits = x as u64 <= row
        && start
            .and_then(|s| s.checked_add(count as u64))
            .is_some_and(|e| e <= total);
    if !fits {
        return Err(HipError::invalid(format!(
            "{count} bytes at ({x}, {y}) exceed the array"
        )));
    }
    let (mut at, mut left, mut out) = (start.unwrap_or(0), count as u64, Vec::new());
    while left > 0 {
        let (r, c) = (at / row, at % row);
        let n = (row - c).min(left);
        out.push((a.addr + r * a.pitch + c, n));
        at += n;
        left -= n;
    }
    Ok(out)
}

fn copy_to_array(
    dst: *mut hipArray,
    x: usize,
    y: usize,
    src: *const c_void,
    count: usize,
) -> HipResult {
    let a = array_info(dst)?;
    if count == 0 {
        return Ok(());
    }
    if src.is_null() {
        return Err(HipError::invalid("copy from a null pointer"));
    }
    let mut from = src as u64;
    let mut rows = Vec::new();
    for (to, n) in linear_rows(&a, x, y, count)? {
        rows.push((to, from, n));
        from += n;
    }
    copy_rows(rows, std::ptr::null_mut(), true)
}

fn copy_from_array(
    dst: *mut c_void,
    src: *const hipArray,
    x: usize,
    y: usize,
    count: usize,
) -> HipResult {
    let a = array_info(src)?;
    if count == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::invalid("copy to a null pointer"));
    }
    let mut to = dst as u64;
    let mut rows = Vec::new();
    for (from, n) in linear_rows(&a, x, y, count)? {
        rows.push((to, from, n));
        to += n;
    }
    copy_rows(rows, std::ptr::null_mut(), true)
}

// ---- descriptors -----------------------------------------------------

/// The image an object describes: where, its format and its shape.
#[derive(Clone, Copy, Debug)]
struct ImageSpec {
    base: u64,
    channels: Channels,
    normalized: bool,
    width: u64,
    height: u64,
    /// The T# DEPTH field: depth-1 (3D), the last layer (arrays), else
    /// unused (the pitch goes there).
    depth_field: u64,
    pitch_texels: u64,
    ty: u32,
    /// Mip levels in the chain at `base` (1 for a plain image).
    levels: u32,
}

/// The current device's family, whose T# and S# layouts the objects use.
fn family() -> HipResult<Family> {
    let target = hip()?.current().device.target().to_string();
    Family::of_target(&target)
        .ok_or_else(|| HipError::invalid(format!("no descriptor layout for target {target}")))
}

/// A descriptor field that does not fit (an extent past the family's
/// limits) is the caller's invalid value.
fn field_error(e: FieldError) -> HipError {
    HipError::invalid(e.to_string())
}

/// The unified format `gfx11` (gfx11's number, as [`Channels::format`]
/// gives it) in `family`'s numbering.
fn format_in(family: Family, gfx11: u32) -> HipResult<u32> {
    resource::format_number(family, Family::Gfx11, gfx11)
        .ok_or_else(|| HipError::invalid(format!("format {gfx11} has no {family:?} counterpart")))
}

/// The 8-dword T# ROCr's PopulateImageSrd writes for a linear image, then
/// dwords 8-10 (channel type, channel order, width).
fn image_words(family: Family, s: &ImageSpec) -> HipResult<[u32; 12]> {
    if !s.base.is_multiple_of(ROW_ALIGN) {
        return Err(HipError::invalid(format!(
            "image memory at {:#x} is not 256-byte aligned (textureAlignment)",
            s.base
        )));
    }
    let [x, y, z, w] = s.channels.dst_sel();
    let t = ImageResource {
        base_address: s.base >> 8,
        format: format_in(family, s.channels.format(s.normalized))?,
        // RESOURCE_LEVEL is 1 where the family has it (gfx10), as ROCr
        // writes it.
        resource_level: (ImageResource::field_bits(family, "resource_level") > 0) as u32,
        width: (s.width - 1) as u32,
        height: (s.height.max(1) - 1) as u32,
        dst_sel_x: x,
        dst_sel_y: y,
        dst_sel_z: z,
        dst_sel_w: w,
        // BC_SWIZZLE as ROCr's GetBcSwizzle picks it: XYZW when the
        // second channel is Y, else XWYZ (1).
        bc_swizzle: if y == 5 { 0 } else { 1 },
        type_: s.ty,
        // A mip chain's levels, all in view.
        max_mip: s.levels - 1,
        last_level: s.levels - 1,
        // DEPTH holds pitch − 1 for 1D and 2D images.
        depth: match s.ty {
            8 | 9 => (s.pitch_texels - 1) as u32,
            _ => s.depth_field as u32,
        },
        ..Default::default()
    };
    let mut d = [0u32; 12];
    d[..8].copy_from_slice(&t.encode(family).map_err(field_error)?);
    d[8] = s.channels.hsa_type(s.normalized);
    d[9] = s.channels.hsa_order();
    d[10] = s.width as u32;
    Ok(d)
}

/// The 4-dword buffer V# for a linear (`tex1Dfetch`) texture: stride the
/// element size, NUM_RECORDS the elements (ROCr counts bytes there; an
/// element count keeps `idxen` loads past the end out of range), the
/// unified format, then dwords 8-10 as for images.
fn buffer_words(
    family: Family,
    base: u64,
    c: Channels,
    normalized: bool,
    elements: u64,
) -> HipResult<[u32; 12]> {
    let [x, y, z, w] = c.dst_sel();
    let records = elements.min(u32::MAX as u64) as u32;
    let v = BufferResource {
        base_address: base,
        stride: c.bytes() as u32,
        num_records: records,
        dst_sel_x: x,
        dst_sel_y: y,
        dst_sel_z: z,
        dst_sel_w: w,
        format: format_in(family, c.format(normalized))?,
        resource_level: (BufferResource::field_bits(family, "resource_level") > 0) as u32,
        ..Default::default()
    };
    let mut d = [0u32; 12];
    d[..4].copy_from_slice(&v.encode(family).map_err(field_error)?);
    d[8] = c.hsa_type(normalized);
    d[9] = c.hsa_order();
    d[10] = records;
    Ok(d)
}

/// The S# ROCr's PopulateSamplerSrd writes, with HIP's per-dimension
/// address modes: SQ_TEX_CLAMP per axis, FORCE_UNNORMALIZED, MAX_LOD
/// 4095, the XY filters, and the border colour type.
fn sampler_words(family: Family, t: &hipTextureDesc, mipmapped: bool) -> HipResult<[u32; 4]> {
    let mut clamp = [0u32; 3];
    for (k, &m) in t.addressMode.iter().enumerate() {
        clamp[k] = match m {
            0 => 0, // hipAddressModeWrap: SQ_TEX_WRAP
            1 => 2, // Clamp: SQ_TEX_CLAMP_LAST_TEXEL
            2 => 1, // Mirror: SQ_TEX_MIRROR
            3 => 6, // Border: SQ_TEX_CLAMP_BORDER
            m => return Err(HipError::invalid(format!("address mode {m}"))),
        };
    }
    let linear = match t.filterMode {
        0 => 0,
        1 => 1,
        m => return Err(HipError::invalid(format!("filter mode {m}"))),
    };
    if t.sRGB != 0 {
        return Err(unsupported("sRGB textures"));
    }
    let border = match t.borderColor {
        [0.0, 0.0, 0.0, 0.0] => 0,
        [0.0, 0.0, 0.0, 1.0] => 1,
        [1.0, 1.0, 1.0, 1.0] => 2,
        c => return Err(unsupported(format!("border colour {c:?}"))),
    };
    let (mip_filter, min_lod, max_lod) = if mipmapped {
        mipmap::sampler_fields(t)?
    } else {
        (0, 0, 4095)
    };
    let s = Sampler {
        clamp_x: clamp[0],
        clamp_y: clamp[1],
        clamp_z: clamp[2],
        force_unnormalized: (t.normalizedCoords == 0) as u32,
        min_lod,
        max_lod,
        mip_filter,
        xy_mag_filter: linear,
        xy_min_filter: linear,
        border_color_type: border,
        ..Default::default()
    };
    s.encode(family).map_err(field_error)
}

/// Reads the resource of a texture or surface: the image words it
/// describes.
fn resource_words(res: &hipResourceDesc, normalized: bool) -> HipResult<[u32; 12]> {
    let family = family()?;
    match res.resType {
        HIP_RESOURCE_TYPE_ARRAY => {
            // SAFETY: `res` is a valid hipResourceDesc (crate docs,
            // "Inputs"); every union member is plain data, so reading the
            // one resType names is a read of initialised bytes.
            let a = array_info(unsafe { res.res.array })?;
            let spec = ImageSpec {
                base: a.addr,
                channels: a.channels,
                normalized,
                width: a.width,
                height: if a.dims == 1 { 1 } else { a.height },
                depth_field: match (a.dims, a.layered) {
                    (1, true) => a.height - 1,
                    _ => a.depth - 1,
                },
                pitch_texels: a.pitch / a.channels.bytes(),
                ty: a.image_type(),
                levels: 1,
            };
            image_words(family, &spec)
        }
        HIP_RESOURCE_TYPE_LINEAR => {
            // SAFETY: as above.
            let l = unsafe { res.res.linear };
            let c = Channels::of(&l.desc)?;
            if l.devPtr.is_null() {
                return Err(HipError::invalid("linear texture of a null pointer"));
            }
            buffer_words(
                family,
                l.devPtr as u64,
                c,
                normalized,
                l.sizeInBytes as u64 / c.bytes(),
            )
        }
        HIP_RESOURCE_TYPE_PITCH2D => {
            // SAFETY: as above.
            let p = unsafe { res.res.pitch2D };
            let c = Channels::of(&p.desc)?;
            let bad = p.devPtr.is_null()
                || p.width == 0
                || p.height == 0
                || p.width as u64 > MAX_EXTENT[0]
                || p.height as u64 > MAX_EXTENT[1]
                || !(p.pitchInBytes as u64).is_multiple_of(c.bytes())
                || (p.pitchInBytes as u64) < p.width as u64 * c.bytes();
            if bad {
                return Err(HipError::invalid(
                    "pitch2D resource: null, empty, too large or a bad pitch",
                ));
            }
            let spec = ImageSpec {
                base: p.devPtr as u64,
                channels: c,
                normalized,
                width: p.width as u64,
                height: p.height as u64,
                depth_field: 0,
                pitch_texels: p.pitchInBytes as u64 / c.bytes(),
                ty: 9,
                levels: 1,
            };
            image_words(family, &spec)
        }
        HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY => {
            // SAFETY: as above.
            let m = mipmap::info(unsafe { res.res.mipmap } as *const hipMipmappedArray)?;
            image_words(family, &m.image_spec(normalized))
        }
        t => Err(HipError::invalid(format!("resource type {t}"))),
    }
}

/// What the runtime keeps of a texture or surface object.
#[derive(Clone, Copy)]
struct Object {
    res: hipResourceDesc,
    tex: Option<hipTextureDesc>,
    /// The driver API's descriptors, for an object `hipTexObjectCreate`
    /// made (its getters hand them back as given).
    driver: Option<(HIP_RESOURCE_DESC, HIP_TEXTURE_DESC)>,
}

// SAFETY: the raw pointers in a kept hipResourceDesc (the array handle,
// the device pointer) are addresses the program gave, which the runtime
// only hands back (hipGetTextureObjectResourceDesc) and never dereferences
// through this copy, so moving them between threads shares nothing.
unsafe impl Send for Object {}

/// Texture and surface objects by device address.
static OBJECTS: Mutex<BTreeMap<u64, Object>> = Mutex::new(BTreeMap::new());

/// Writes `words` to new device memory and registers the object.
fn publish(words: &[u32], object: Object) -> HipResult<u64> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let addr = allocate_device(bytes.len() as u64)?;
    let copied = copy_rows(
        vec![(addr, bytes.as_ptr() as u64, bytes.len() as u64)],
        std::ptr::null_mut(),
        true,
    );
    if let Err(e) = copied {
        let _ = free_device_memory(addr);
        return Err(e);
    }
    lock(&OBJECTS).insert(addr, object);
    Ok(addr)
}

fn object(addr: u64, texture: bool) -> HipResult<Object> {
    match lock(&OBJECTS).get(&addr) {
        Some(o) if o.tex.is_some() == texture => Ok(*o),
        _ => Err(HipError::handle(format!(
            "{addr:#x} is not a live {} object",
            if texture { "texture" } else { "surface" }
        ))),
    }
}

fn destroy(addr: u64, texture: bool) -> HipResult {
    if addr == 0 {
        return Ok(());
    }
    object(addr, texture)?;
    lock(&OBJECTS).remove(&addr);
    free_device_memory(addr)
}

/// Creates a texture object over `res` sampled as `tex`: its device
/// address (the `hipTextureObject_t`).
pub(crate) fn create_object(
    res: hipResourceDesc,
    tex: hipTextureDesc,
    driver: Option<(HIP_RESOURCE_DESC, HIP_TEXTURE_DESC)>,
) -> HipResult<u64> {
    let normalized = tex.readMode == 1;
    let mut words = [0u32; 20];
    words[..12].copy_from_slice(&resource_words(&res, normalized)?);
    let mipmapped = res.resType == HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    words[12..16].copy_from_slice(&sampler_words(family()?, &tex, mipmapped)?);
    publish(
        &words,
        Object {
            res,
            tex: Some(tex),
            driver,
        },
    )
}

/// Destroys texture object `addr` (0 is none).
pub(crate) fn destroy_texture(addr: u64) -> HipResult {
    destroy(addr, true)
}

/// The driver-API descriptors texture object `addr` was made of, if
/// `hipTexObjectCreate` made it.
pub(crate) fn driver_descs(addr: u64) -> HipResult<Option<(HIP_RESOURCE_DESC, HIP_TEXTURE_DESC)>> {
    Ok(object(addr, true)?.driver)
}

/// The resource and texture descriptors texture object `addr` was made of.
pub(crate) fn texture_descs(addr: u64) -> HipResult<(hipResourceDesc, hipTextureDesc)> {
    let o = object(addr, true)?;
    Ok((o.res, o.tex.unwrap_or_default()))
}

fn create_texture(
    out: *mut hipTextureObject_t,
    res: *const hipResourceDesc,
    tex: *const hipTextureDesc,
    view: *const c_void,
) -> HipResult {
    if out.is_null() {
        return Err(HipError::invalid("null texture object output"));
    }
    if !view.is_null() {
        return Err(unsupported("texture resource views (hipResourceViewDesc)"));
    }
    // SAFETY: valid input structs (crate docs, "Inputs").
    let (res, tex) = unsafe {
        (
            get(res, "resource descriptor")?,
            get(tex, "texture descriptor")?,
        )
    };
    let addr = create_object(res, tex, None)?;
    // SAFETY: an output of a texture object (crate docs, "Outputs").
    unsafe { put(out, addr as hipTextureObject_t) }
}

fn create_surface(out: *mut hipSurfaceObject_t, res: *const hipResourceDesc) -> HipResult {
    if out.is_null() {
        return Err(HipError::invalid("null surface object output"));
    }
    // SAFETY: a valid input struct (crate docs, "Inputs").
    let res = unsafe { get(res, "resource descriptor")? };
    if res.resType != HIP_RESOURCE_TYPE_ARRAY {
        return Err(HipError::invalid(
            "a surface object's resource must be an array",
        ));
    }
    let words = resource_words(&res, false)?;
    let addr = publish(
        &words,
        Object {
            res,
            tex: None,
            driver: None,
        },
    )?;
    // SAFETY: an output of a surface object (crate docs, "Outputs").
    unsafe { put(out, addr as hipSurfaceObject_t) }
}

pub type hipTextureObject_t = *mut c_void;
pub type hipSurfaceObject_t = *mut c_void;

guarded_exports! {
    hipMallocArray(array: *mut *mut hipArray, desc: *const hipChannelFormatDesc, width: usize, height: usize, flags: u32) => {
        // SAFETY: a valid input struct (crate docs, "Inputs").
        let desc = unsafe { get(desc, "channel descriptor")? };
        create_array(array, desc, [width, height, 0], flags, false)
    };
    hipMalloc3DArray(array: *mut *mut hipArray, desc: *const hipChannelFormatDesc, extent: hipExtent, flags: u32) => {
        // SAFETY: as above.
        let desc = unsafe { get(desc, "channel descriptor")? };
        create_array(array, desc, [extent.width, extent.height, extent.depth], flags, false)
    };
    hipArrayCreate(array: *mut *mut hipArray, d: *const HIP_ARRAY_DESCRIPTOR) => {
        // SAFETY: as above.
        let d = unsafe { get(d, "array descriptor")? };
        create_array(array, driver_format(d.Format, d.NumChannels)?, [d.Width, d.Height, 0], 0, true)
    };
    hipArray3DCreate(array: *mut *mut hipArray, d: *const HIP_ARRAY3D_DESCRIPTOR) => {
        // SAFETY: as above.
        let d = unsafe { get(d, "array descriptor")? };
        create_array(array, driver_format(d.Format, d.NumChannels)?, [d.Width, d.Height, d.Depth], d.Flags, true)
    };
    hipFreeArray(array: *mut hipArray) => free_array(array);
    hipArrayDestroy(array: *mut hipArray) => free_array(array);
    hipGetChannelDesc(desc: *mut hipChannelFormatDesc, array: *const hipArray) => {
        let a = array_info(array)?;
        // SAFETY: an output of a channel descriptor (crate docs, "Outputs").
        unsafe { put(desc, a.desc) }
    };
    hipMemcpy2DToArray(dst: *mut hipArray, x: usize, y: usize, src: *const c_void, spitch: usize, width: usize, height: usize, _kind: i32) => copy_2d_to_array(dst, x, y, src, spitch, width, height, std::ptr::null_mut(), true);
    hipMemcpy2DToArray_spt(dst: *mut hipArray, x: usize, y: usize, src: *const c_void, spitch: usize, width: usize, height: usize, _kind: i32) => copy_2d_to_array(dst, x, y, src, spitch, width, height, STREAM_PER_THREAD as hipStream_t, true);
    hipMemcpy2DToArrayAsync(dst: *mut hipArray, x: usize, y: usize, src: *const c_void, spitch: usize, width: usize, height: usize, _kind: i32, stream: hipStream_t) => copy_2d_to_array(dst, x, y, src, spitch, width, height, stream, false);
    hipMemcpy2DFromArray(dst: *mut c_void, dpitch: usize, src: *const hipArray, x: usize, y: usize, width: usize, height: usize, _kind: i32) => copy_2d_from_array(dst, dpitch, src, x, y, width, height, std::ptr::null_mut(), true);
    hipMemcpy2DFromArray_spt(dst: *mut c_void, dpitch: usize, src: *const hipArray, x: usize, y: usize, width: usize, height: usize, _kind: i32) => copy_2d_from_array(dst, dpitch, src, x, y, width, height, STREAM_PER_THREAD as hipStream_t, true);
    hipMemcpy2DFromArrayAsync(dst: *mut c_void, dpitch: usize, src: *const hipArray, x: usize, y: usize, width: usize, height: usize, _kind: i32, stream: hipStream_t) => copy_2d_from_array(dst, dpitch, src, x, y, width, height, stream, false);
    hipMemcpyToArray(dst: *mut hipArray, x: usize, y: usize, src: *const c_void, count: usize, _kind: i32) => copy_to_array(dst, x, y, src, count);
    hipMemcpyFromArray(dst: *mut c_void, src: *const hipArray, x: usize, y: usize, count: usize, _kind: i32) => copy_from_array(dst, src, x, y, count);
    hipMemcpyHtoA(dst: *mut hipArray, offset: usize, src: *const c_void, count: usize) => copy_to_array(dst, offset, 0, src, count);
    hipMemcpyAtoH(dst: *mut c_void, src: *mut hipArray, offset: usize, count: usize) => copy_from_array(dst, src, offset, 0, count);
    hipCreateTextureObject(out: *mut hipTextureObject_t, res: *const hipResourceDesc, tex: *const hipTextureDesc, view: *const c_void) => create_texture(out, res, tex, view);
    hipDestroyTextureObject(t: hipTextureObject_t) => destroy(t as u64, true);
    hipGetTextureObjectResourceDesc(out: *mut hipResourceDesc, t: hipTextureObject_t) => {
        let o = object(t as u64, true)?;
        // SAFETY: an output of a resource descriptor (crate docs, "Outputs").
        unsafe { put(out, o.res) }
    };
    hipGetTextureObjectTextureDesc(out: *mut hipTextureDesc, t: hipTextureObject_t) => {
        let o = object(t as u64, true)?;
        // SAFETY: an output of a texture descriptor (crate docs, "Outputs").
        unsafe { put(out, o.tex.unwrap_or_default()) }
    };
    hipGetTextureObjectResourceViewDesc(_out: *mut c_void, t: hipTextureObject_t) => {
        object(t as u64, true)?;
        Err(unsupported("texture resource views (hipResourceViewDesc)"))
    };
}

#[export_name = "_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc"]
pub unsafe extern "C" fn hip_create_surface_object(
    out: *mut hipSurfaceObject_t,
    res: *const hipResourceDesc,
) -> hipError_t {
    guard("hipCreateSurfaceObject", || create_surface(out, res))
}

#[export_name = "_Z23hipDestroySurfaceObjectP13__hip_surface"]
pub unsafe extern "C" fn hip_destroy_surface_object(s: hipSurfaceObject_t) -> hipError_t {
    guard("hipDestroySurfaceObject", || destroy(s as u64, false))
}

symver!("texture");

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(bits: i32, count: usize, f: i32) -> hipChannelFormatDesc {
        let at = |k: usize| if k < count { bits } else { 0 };
        hipChannelFormatDesc {
            x: at(0),
            y: at(1),
            z: at(2),
            w: at(3),
            f,
        }
    }

    /// The unified formats (RDNA3 §10.7 table 52) HIP's element types
    /// and normalised reads map to.
    #[test]
    fn formats() {
        let c = |bits, count, f| Channels::of(&desc(bits, count, f)).unwrap();
        assert_eq!(c(8, 4, 1).format(true), 42); // uchar4 normalised: 8_8_8_8_UNORM
        assert_eq!(c(8, 4, 1).format(false), 46); // uchar4: 8_8_8_8_UINT
        assert_eq!(c(8, 1, 0).format(true), 2); // char: 8_SNORM
        assert_eq!(c(32, 1, 2).format(false), 22); // float: 32_FLOAT
        assert_eq!(c(32, 2, 0).format(false), 49); // int2: 32_32_SINT
        assert_eq!(c(16, 4, 2).format(false), 57); // half4: 16_16_16_16_FLOAT
        assert_eq!(c(32, 4, 1).format(false), 61); // uint4: 32_32_32_32_UINT
        assert!(Channels::of(&desc(8, 3, 1)).is_err());
        assert!(Channels::of(&desc(8, 1, 2)).is_err());
    }

    /// A 5x3 uchar4 image at 0x1234_5600 with a 256-byte pitch: the gfx11
    /// T# the executor's decoder reads back (its unit test uses the same).
    #[test]
    fn gfx11_image_words() {
        let spec = ImageSpec {
            base: 0x1234_5600,
            channels: Channels::of(&desc(8, 4, 1)).unwrap(),
            normalized: true,
            width: 5,
            height: 3,
            depth_field: 0,
            pitch_texels: 64,
            ty: 9,
            levels: 1,
        };
        let d = image_words(Family::Gfx11, &spec).unwrap();
        assert_eq!(d[..5], [0x0012_3456, 42 << 20, 1 | 2 << 14, 0x90000fac, 63]);
        assert_eq!(d[8..11], [2, 8, 5]); // UNORM_INT8, RGBA, width
        let misaligned = ImageSpec {
            base: 0x1234_5610,
            ..spec
        };
        assert!(image_words(Family::Gfx11, &misaligned).is_err());
    }

    #[test]
    fn sampler_modes() {
        let t = hipTextureDesc {
            addressMode: [3, 1, 2],
            filterMode: 1,
            ..Default::default()
        };
        let s = sampler_words(Family::Gfx11, &t, false).unwrap();
        assert_eq!(
            s,
            [
                6 | 2 << 3 | 1 << 6 | 1 << 15,
                4095 << 12,
                1 << 20 | 1 << 22,
                0
            ]
        );
        let red = hipTextureDesc {
            borderColor: [1.0, 0.0, 0.0, 1.0],
            ..t
        };
        assert!(sampler_words(Family::Gfx11, &red, false).is_err());
    }
}
