//! The image resource (T#, 8 dwords) and sampler (S#, 4 dwords)
//! descriptors as the image instructions use them.
//!
//! Where each field sits in RDNA3 (gfx11) and RDNA4 (gfx12) is
//! `softgpu_isa::resource`'s table, which the HIP runtime encodes texture
//! objects with; this module turns the raw fields into what sampling
//! needs (sizes rather than sizes minus one, the pitch or the depth the
//! DEPTH field holds for the image type, enums for the sampler modes).

use softgpu_isa::resource::{self, ImageResource};
use softgpu_isa::Family;

/// What the resource's TYPE field says the image is (SQ_RSRC_IMG_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageType {
    D1,
    D2,
    D3,
    Cube,
    D1Array,
    D2Array,
    D2Msaa,
    D2MsaaArray,
}

impl ImageType {
    fn from_field(t: u32) -> Option<ImageType> {
        use ImageType::*;
        Some(match t {
            8 => D1,
            9 => D2,
            10 => D3,
            11 => Cube,
            12 => D1Array,
            13 => D2Array,
            14 => D2Msaa,
            15 => D2MsaaArray,
            _ => return None,
        })
    }

    /// Whether the resource is an array of slices (its DEPTH field is the
    /// last slice, not a depth).
    pub fn is_array(self) -> bool {
        matches!(
            self,
            ImageType::D1Array | ImageType::D2Array | ImageType::D2MsaaArray | ImageType::Cube
        )
    }
}

/// A decoded image resource.
#[derive(Clone, Copy, Debug)]
pub struct Resource {
    /// Byte address of the image: BASE_ADDRESS holds address bits 47 to 8
    /// (images are 256-byte aligned).
    pub base: u64,
    /// The unified format number in gfx11's numbering (the buffer formats
    /// 1..=63 and the image-only ones above), whatever the family's.
    pub format: u8,
    pub width: u32,
    pub height: u32,
    /// 3D: the depth; arrays: the last slice index (DEPTH field); else 1.
    pub depth: u32,
    /// 1D/2D: the row pitch in texels, from the descriptor; else `None`
    /// (the linear layout's aligned width applies).
    pub pitch: Option<u32>,
    /// DST_SEL_X..W: 0 = 0, 1 = 1, 4..7 = component X..W.
    pub dst_sel: [u8; 4],
    pub base_level: u32,
    pub last_level: u32,
    /// MAX_MIP: the resource's mip levels minus one (the chain the memory
    /// holds, which the levels in view are a part of).
    pub max_mip: u32,
    /// SW_MODE: 0 is linear, the only layout softgpu reads.
    pub sw_mode: u32,
    pub ty: ImageType,
    pub base_array: u32,
}

/// Why a resource descriptor is not an image softgpu can read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    #[error("image resource TYPE {0} is not an image type (8..=15)")]
    NotAnImage(u32),
    #[error("image swizzle mode {0} (only linear, SW_MODE 0, is supported)")]
    Tiled(u32),
    #[error("image format {format} of {family:?} has no gfx11 counterpart softgpu reads")]
    Format { family: Family, format: u32 },
}

/// Decodes an 8-dword T# of `family`.
pub fn resource(family: Family, d: [u32; 8]) -> Result<Resource, ResourceError> {
    let f = ImageResource::decode(family, &d);
    let ty = ImageType::from_field(f.type_).ok_or(ResourceError::NotAnImage(f.type_))?;
    if f.sw_mode != 0 {
        return Err(ResourceError::Tiled(f.sw_mode));
    }
    let format = resource::format_number(Family::Gfx11, family, f.format)
        .and_then(|n| u8::try_from(n).ok())
        .ok_or(ResourceError::Format {
            family,
            format: f.format,
        })?;
    let (depth, pitch) = match ty {
        ImageType::D3 => (f.depth + 1, None),
        t if t.is_array() => (f.depth, None),
        _ => (1, Some(f.depth + 1)),
    };
    Ok(Resource {
        base: f.base_address << 8,
        format,
        width: f.width + 1,
        height: f.height + 1,
        depth,
        pitch,
        dst_sel: [f.dst_sel_x, f.dst_sel_y, f.dst_sel_z, f.dst_sel_w].map(|s| s as u8),
        base_level: f.base_level,
        last_level: f.last_level,
        max_mip: f.max_mip,
        sw_mode: f.sw_mode,
        ty,
        base_array: f.base_array,
    })
}

/// SQ_TEX_CLAMP: what a coordinate outside the image addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clamp {
    Wrap,
    Mirror,
    ClampLastTexel,
    MirrorOnceLastTexel,
    /// CLAMP_HALF_BORDER and CLAMP_BORDER: outside texels are the border
    /// colour. (Half-border differs in where the coordinate is clamped
    /// before filtering, which softgpu does not model: both blend the
    /// border in.)
    ClampBorder,
    /// MIRROR_ONCE_HALF_BORDER and MIRROR_ONCE_BORDER.
    MirrorOnceBorder,
}

impl Clamp {
    fn from_field(f: u32) -> Clamp {
        match f {
            0 => Clamp::Wrap,
            1 => Clamp::Mirror,
            2 => Clamp::ClampLastTexel,
            3 => Clamp::MirrorOnceLastTexel,
            4 | 6 => Clamp::ClampBorder,
            _ => Clamp::MirrorOnceBorder,
        }
    }
}

/// SQ_TEX_BORDER_COLOR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Border {
    TransparentBlack,
    OpaqueBlack,
    OpaqueWhite,
    /// From the border colour table (BORDER_COLOR_PTR): not modelled.
    Table,
}

/// A decoded sampler.
#[derive(Clone, Copy, Debug)]
pub struct Sampler {
    pub clamp: [Clamp; 3],
    /// FORCE_UNNORMALIZED: coordinates are in texels.
    pub unnormalized: bool,
    /// XY_MAG_FILTER / XY_MIN_FILTER: bilinear (1 and 3, the aniso forms,
    /// filter like bilinear here) or point (0, 2).
    pub mag_linear: bool,
    pub min_linear: bool,
    /// MIP_FILTER: 0 none (the base level), 1 point, 2 linear.
    pub mip_filter: u32,
    /// MIN_LOD / MAX_LOD: unsigned 4.8 fixed point.
    pub min_lod: f32,
    pub max_lod: f32,
    pub border: Border,
    /// DEPTH_COMPARE_FUNC: what `_c` sampling compares the reference with.
    pub depth_compare: u32,
}

/// Decodes a 4-dword S# of `family` (gfx12 widens MIN_LOD and MAX_LOD to
/// 13 bits each, MAX_LOD at bit 13).
pub fn sampler(family: Family, d: [u32; 4]) -> Sampler {
    let f = resource::Sampler::decode(family, &d);
    // MIN_LOD and MAX_LOD: unsigned fixed point, 8 fraction bits.
    let lod = |v: u32| v as f32 / 256.0;
    Sampler {
        clamp: [f.clamp_x, f.clamp_y, f.clamp_z].map(Clamp::from_field),
        unnormalized: f.force_unnormalized != 0,
        // Bilinear (1) and aniso bilinear (3) filter alike here.
        mag_linear: f.xy_mag_filter & 1 != 0,
        min_linear: f.xy_min_filter & 1 != 0,
        mip_filter: f.mip_filter,
        min_lod: lod(f.min_lod),
        max_lod: lod(f.max_lod),
        border: match f.border_color_type {
            0 => Border::TransparentBlack,
            1 => Border::OpaqueBlack,
            2 => Border::OpaqueWhite,
            _ => Border::Table,
        },
        depth_compare: f.depth_compare_func,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2D 8_8_8_8_UNORM 5x3 image at 0x1234_5600 with pitch 64, as
    /// ROCr's gfx11 PopulateImageSrd fills it.
    #[test]
    fn gfx11_2d_resource() {
        let d = [
            0x0012_3456,
            42 << 20, // WIDTH-1 = 4: low bits 0 at bit 30
            (4 >> 2) | 2 << 14,
            0x0000_0fac | 9 << 28,
            63,
            0,
            0,
            0,
        ];
        let r = resource(Family::Gfx11, d).unwrap();
        assert_eq!(r.base, 0x1234_5600);
        assert_eq!((r.format, r.width, r.height), (42, 5, 3));
        assert_eq!(r.pitch, Some(64));
        assert_eq!(r.dst_sel, [4, 5, 6, 7]);
        assert_eq!(r.ty, ImageType::D2);
    }

    /// gfx10 (ROCr's `resource_nv.h`): a 9-bit FORMAT in gfx10's numbering
    /// (56 is 8_8_8_8 UNORM, gfx11's 42), MAX_MIP at word 5 bit 4, and an
    /// image-only format or one gfx11 lacks is refused by name.
    #[test]
    fn gfx10_2d_resource() {
        let (w, h) = (640 - 1, 480 - 1);
        let mut d = [
            0x200,
            56 << 20 | (w & 3) << 30,
            w >> 2 | h << 14 | 1 << 31,
            4 | 5 << 3 | 6 << 6 | 7 << 9 | 9 << 28,
            640 - 1,
            3 << 4,
            0,
            0,
        ];
        let r = resource(Family::Gfx10, d).unwrap();
        assert_eq!(r.base, 0x2_0000);
        assert_eq!((r.format, r.width, r.height), (42, 640, 480));
        assert_eq!((r.max_mip, r.pitch), (3, Some(640)));
        // 10_11_11 UNORM (30) is gfx10's alone.
        d[1] = 30 << 20;
        assert!(matches!(
            resource(Family::Gfx10, d),
            Err(ResourceError::Format { format: 30, .. })
        ));
    }

    /// gfx12 moves FORMAT to word 1 bit 17 and widens width/height.
    #[test]
    fn gfx12_3d_resource() {
        let w = 20000 - 1;
        let d = [
            0x100,
            22 << 17 | (w & 3) << 30,
            w >> 2 | 7 << 14,
            10 << 28,
            3,
            0,
            0,
            0,
        ];
        let r = resource(Family::Gfx12, d).unwrap();
        assert_eq!(r.base, 0x1_0000);
        assert_eq!((r.format, r.width, r.height, r.depth), (22, 20000, 8, 4));
        assert_eq!(r.pitch, None);
    }

    #[test]
    fn tiled_and_buffer_descriptors_are_refused() {
        let mut d = [0u32; 8];
        assert_eq!(
            resource(Family::Gfx11, d).unwrap_err(),
            ResourceError::NotAnImage(0)
        );
        d[3] = 9 << 28 | 1 << 20;
        assert_eq!(
            resource(Family::Gfx11, d).unwrap_err(),
            ResourceError::Tiled(1)
        );
    }

    /// ROCr's sampler for CLAMP_TO_BORDER, linear, unnormalized.
    #[test]
    fn sampler_fields() {
        let s = sampler(
            Family::Gfx11,
            [
                6 | 6 << 3 | 6 << 6 | 1 << 15,
                4095 << 12,
                1 << 20 | 1 << 22,
                0,
            ],
        );
        assert_eq!(s.clamp, [Clamp::ClampBorder; 3]);
        assert!(s.unnormalized && s.mag_linear && s.min_linear);
        assert_eq!(s.border, Border::TransparentBlack);
        assert_eq!(s.max_lod, 4095.0 / 256.0);
    }

    /// gfx12's S# has MAX_LOD at bit 13 (ROCr's resource_gfx12.h): the
    /// same 4095 ROCr writes reads back as 4095/256 in each family's own
    /// layout, and gfx12's MIN_LOD has a 13th bit.
    #[test]
    fn gfx12_sampler_lods() {
        let s = sampler(Family::Gfx12, [0, 4095 << 13 | 0x1000, 0, 0]);
        assert_eq!((s.min_lod, s.max_lod), (16.0, 4095.0 / 256.0));
        assert_eq!(
            sampler(Family::Gfx11, [0, 4095 << 12, 0, 0]).max_lod,
            4095.0 / 256.0
        );
    }
}
