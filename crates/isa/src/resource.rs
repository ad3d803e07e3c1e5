//! The memory descriptors image and buffer instructions read from SGPRs:
//! the image resource (T#, 8 dwords), the buffer resource (V#, 4 dwords)
//! and the image sampler (S#, 4 dwords), with each field where RDNA3
//! (gfx11) and RDNA4 (gfx12) put it, and the V#'s where RDNA2 (gfx10)
//! does (its T# and S# are not laid out yet).
//!
//! This is the one table of those layouts: the interpreter decodes
//! descriptors through it and the HIP runtime encodes texture objects
//! through it, so the two cannot drift apart. Field names are the ISA
//! guides' (RDNA3 ISA §8.2.1 "Image Resource", §8.2.2 "Image Sampler",
//! §9.6 "Buffer Resource"; RDNA4 likewise), and the positions are those
//! of ROCr's image extension (`resource_gfx11.h`, `resource_gfx12.h`),
//! which fills them for HSA images and HIP texture objects. Each field
//! holds its raw value: WIDTH is the width minus one, BASE_ADDRESS of a
//! T# the byte address shifted right by 8, as the hardware reads them.
//! Only the fields softgpu reads or writes are named; the others encode
//! as zero and are ignored on decode.

use crate::Family;

/// Part of a field: `bits` bits at bit `lo` of dword `word`. A field of
/// several parts takes its low bits from the first part.
type Part = (usize, u32, u32);

/// A field value too wide for the family's field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{descriptor} field {field} = {value:#x} does not fit its {bits} bits on {family:?}")]
pub struct FieldError {
    pub descriptor: &'static str,
    pub field: &'static str,
    pub value: u64,
    pub bits: u32,
    pub family: Family,
}

fn width(parts: &[Part]) -> u32 {
    parts.iter().map(|p| p.2).sum()
}

fn gather(words: &[u32], parts: &[Part]) -> u64 {
    let mut value = 0u64;
    let mut at = 0;
    for &(word, lo, bits) in parts {
        let part = (words[word] as u64 >> lo) & ((1u64 << bits) - 1);
        value |= part << at;
        at += bits;
    }
    value
}

fn scatter(words: &mut [u32], parts: &[Part], value: u64) {
    let mut at = 0;
    for &(word, lo, bits) in parts {
        let part = (value >> at) & ((1u64 << bits) - 1);
        words[word] |= (part << lo) as u32;
        at += bits;
    }
}

/// Declares a descriptor struct whose fields each have one layout per
/// family, with `encode`/`decode` over the table.
macro_rules! descriptor {
    (
        $(#[$meta:meta])*
        $name:ident, $words:literal, $label:literal {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $ty:ty = $(gfx9 [$($p9:expr),*])? $(gfx10 [$($p10:expr),*])? gfx11 [$($p11:expr),*] gfx12 [$($p12:expr),*];
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// Each field's name and parts in `family`.
            fn layout(family: Family) -> &'static [(&'static str, &'static [Part])] {
                match family {
                    Family::Gfx11 => &[$((stringify!($field), &[$($p11),*])),*],
                    Family::Gfx12 => &[$((stringify!($field), &[$($p12),*])),*],
                    // A field given no gfx10 parts is 0 bits wide there
                    // (not laid out, or not in the family), so `encode`
                    // refuses any nonzero value and `decode` reads 0.
                    Family::Gfx10 => &[$((stringify!($field), &[$($($p10),*)?])),*],
                    // CDNA's (GCN's layout): a field given no gfx9 parts
                    // is 0 bits wide there, as gfx10's. Only the V# is
                    // laid out; CDNA's T# and S# fields are all 0 bits.
                    Family::Gfx90a | Family::Gfx94 => &[$((stringify!($field), &[$($($p9),*)?])),*],
                }
            }

            /// How many fields the descriptor has.
            const FIELDS: usize = [$(stringify!($field)),*].len();

            fn values(&self) -> [u64; Self::FIELDS] {
                [$(self.$field as u64),*]
            }

            fn from_values(v: &[u64]) -> Self {
                let mut k = 0;
                let mut next = || {
                    k += 1;
                    v[k - 1]
                };
                // Every value was gathered from a field no wider than its
                // Rust type, so the casts keep every bit.
                $name { $($field: next() as $ty,)* }
            }

            /// The descriptor's dwords in `family`, or which field does not
            /// fit its bits there.
            pub fn encode(&self, family: Family) -> Result<[u32; $words], FieldError> {
                let mut words = [0u32; $words];
                for ((field, parts), value) in Self::layout(family).iter().zip(self.values()) {
                    let bits = width(parts);
                    if bits < 64 && value >> bits != 0 {
                        return Err(FieldError {
                            descriptor: $label,
                            field,
                            value,
                            bits,
                            family,
                        });
                    }
                    scatter(&mut words, parts, value);
                }
                Ok(words)
            }

            /// The fields of `words` as `family` lays them out (0 for a
            /// field the family does not lay out).
            pub fn decode(family: Family, words: &[u32; $words]) -> Self {
                let mut values = [0u64; Self::FIELDS];
                for (v, (_, parts)) in values.iter_mut().zip(Self::layout(family)) {
                    *v = gather(words, parts);
                }
                Self::from_values(&values)
            }

            /// The width in bits of field `name` in `family` (0 if the
            /// family has no such field).
            pub fn field_bits(family: Family, name: &str) -> u32 {
                Self::layout(family)
                    .iter()
                    .find(|(field, _)| *field == name)
                    .map_or(0, |(_, parts)| width(parts))
            }

            /// Every field name, in declaration order.
            pub fn field_names() -> &'static [&'static str] {
                &[$(stringify!($field)),*]
            }

            /// The descriptor with each field at `values[k]` (declaration
            /// order; missing ones zero): for tests over every field.
            pub fn from_fields(values: &[u64]) -> Self {
                let mut v = vec![0u64; Self::field_names().len()];
                for (to, from) in v.iter_mut().zip(values) {
                    *to = *from;
                }
                Self::from_values(&v)
            }
        }
    };
}

descriptor! {
    /// An image resource (T#), RDNA3 ISA §8.2.1 table "Image Resource
    /// Definition"; RDNA4 moves BASE_LEVEL to word 1, FORMAT to bit 17,
    /// and widens WIDTH, HEIGHT, MAX_MIP, LAST_LEVEL, DEPTH and BASE_ARRAY;
    /// RDNA2 (ROCr's `resource_nv.h`) has a 9-bit FORMAT in its own
    /// numbering ([`format_number`]), MAX_MIP in word 5 and RESOURCE_LEVEL.
    ImageResource, 8, "T#" {
        /// Address bits 47:8 (images are 256-byte aligned).
        base_address: u64 = gfx10 [(0, 0, 32), (1, 0, 8)] gfx11 [(0, 0, 32), (1, 0, 8)]
            gfx12 [(0, 0, 32), (1, 0, 8)];
        /// The resource's mip levels minus one.
        max_mip: u32 = gfx10 [(5, 4, 4)] gfx11 [(1, 16, 4)] gfx12 [(1, 12, 5)];
        /// The image format: the unified format number in the family's
        /// numbering.
        format: u32 = gfx10 [(1, 20, 9)] gfx11 [(1, 20, 8)] gfx12 [(1, 17, 8)];
        /// Width minus one.
        width: u32 = gfx10 [(1, 30, 2), (2, 0, 12)] gfx11 [(1, 30, 2), (2, 0, 12)]
            gfx12 [(1, 30, 2), (2, 0, 14)];
        /// Height minus one.
        height: u32 = gfx10 [(2, 14, 14)] gfx11 [(2, 14, 14)] gfx12 [(2, 14, 16)];
        /// gfx10: 1 (the resource is at the level the hardware expects).
        resource_level: u32 = gfx10 [(2, 31, 1)] gfx11 [] gfx12 [];
        /// SEL_0 = 0, SEL_1 = 1, SEL_X..W = 4..7.
        dst_sel_x: u32 = gfx10 [(3, 0, 3)] gfx11 [(3, 0, 3)] gfx12 [(3, 0, 3)];
        dst_sel_y: u32 = gfx10 [(3, 3, 3)] gfx11 [(3, 3, 3)] gfx12 [(3, 3, 3)];
        dst_sel_z: u32 = gfx10 [(3, 6, 3)] gfx11 [(3, 6, 3)] gfx12 [(3, 6, 3)];
        dst_sel_w: u32 = gfx10 [(3, 9, 3)] gfx11 [(3, 9, 3)] gfx12 [(3, 9, 3)];
        /// The first mip level in view.
        base_level: u32 = gfx10 [(3, 12, 4)] gfx11 [(3, 12, 4)] gfx12 [(1, 25, 5)];
        /// The last mip level in view.
        last_level: u32 = gfx10 [(3, 16, 4)] gfx11 [(3, 16, 4)] gfx12 [(3, 15, 5)];
        /// Swizzle (tiling) mode; 0 is linear.
        sw_mode: u32 = gfx10 [(3, 20, 5)] gfx11 [(3, 20, 5)] gfx12 [(3, 20, 5)];
        bc_swizzle: u32 = gfx10 [(3, 25, 3)] gfx11 [(3, 25, 3)] gfx12 [(3, 25, 3)];
        /// SQ_RSRC_IMG_*: 8 1D, 9 2D, 10 3D, 11 cube, 12 1D array, 13 2D
        /// array, 14 2D MSAA, 15 2D MSAA array.
        type_: u32 = gfx10 [(3, 28, 4)] gfx11 [(3, 28, 4)] gfx12 [(3, 28, 4)];
        /// DEPTH with the pitch's high bits above it (gfx10.3 and gfx11 bit
        /// 13, gfx12's PITCH_MSB bits 14-15): pitch − 1 in texels for 1D
        /// and 2D, depth − 1 for 3D, the last slice in view for arrays.
        depth: u32 = gfx10 [(4, 0, 14)] gfx11 [(4, 0, 14)] gfx12 [(4, 0, 16)];
        /// The first slice in view (gfx12: with BASE_ARRAY_MSB at bit 29).
        base_array: u32 = gfx10 [(4, 16, 13)] gfx11 [(4, 16, 13)] gfx12 [(4, 16, 14)];
    }
}

descriptor! {
    /// A buffer resource (V#), RDNA3 ISA §9.6 table "Buffer Resource
    /// Descriptor"; the fields named here sit alike in RDNA4. RDNA2's
    /// (gfx10, ROCr's `resource_nv.h` `sq_buf_rsrc_word1_t`/`word3_t`):
    /// SWIZZLE_ENABLE is one bit, at 31 (bit 30 is CACHE_SWIZZLE, a cache
    /// hint), FORMAT has 7 bits in gfx10's own numbering, and
    /// RESOURCE_LEVEL (bit 24) must be 1. CDNA's (gfx90a, gfx94: GCN's
    /// V#, CDNA3 guide "Buffer Resource" table): as gfx10's up to word 2
    /// (one-bit SWIZZLE_ENABLE at 31, CACHE_SWIZZLE at 30); word 3 has
    /// NUM_FORMAT (bits 12-14) and DATA_FORMAT (15-18) where the others
    /// have FORMAT, then USER_VM_ENABLE (19), USER_VM_MODE (20),
    /// INDEX_STRIDE, ADD_TID_ENABLE, NV (27) and TYPE; no OOB_SELECT, no
    /// element size (swizzled elements are 4 bytes).
    BufferResource, 4, "V#" {
        /// The byte address (48 bits).
        base_address: u64 = gfx9 [(0, 0, 32), (1, 0, 16)] gfx10 [(0, 0, 32), (1, 0, 16)]
            gfx11 [(0, 0, 32), (1, 0, 16)] gfx12 [(0, 0, 32), (1, 0, 16)];
        /// Bytes per record.
        stride: u32 = gfx9 [(1, 16, 14)] gfx10 [(1, 16, 14)] gfx11 [(1, 16, 14)]
            gfx12 [(1, 16, 14)];
        /// CDNA's cache hint (swizzles cache lines; no effect on results).
        cache_swizzle: u32 = gfx9 [(1, 30, 1)] gfx11 [] gfx12 [];
        /// Swizzled addressing with elements of 4 bytes (1) or 16 bytes
        /// (3, not gfx10's or CDNA's: their one bit enables 4-byte
        /// elements).
        swizzle_enable: u32 = gfx9 [(1, 31, 1)] gfx10 [(1, 31, 1)] gfx11 [(1, 30, 2)]
            gfx12 [(1, 30, 2)];
        num_records: u32 = gfx9 [(2, 0, 32)] gfx10 [(2, 0, 32)] gfx11 [(2, 0, 32)]
            gfx12 [(2, 0, 32)];
        dst_sel_x: u32 = gfx9 [(3, 0, 3)] gfx10 [(3, 0, 3)] gfx11 [(3, 0, 3)] gfx12 [(3, 0, 3)];
        dst_sel_y: u32 = gfx9 [(3, 3, 3)] gfx10 [(3, 3, 3)] gfx11 [(3, 3, 3)] gfx12 [(3, 3, 3)];
        dst_sel_z: u32 = gfx9 [(3, 6, 3)] gfx10 [(3, 6, 3)] gfx11 [(3, 6, 3)] gfx12 [(3, 6, 3)];
        dst_sel_w: u32 = gfx9 [(3, 9, 3)] gfx10 [(3, 9, 3)] gfx11 [(3, 9, 3)] gfx12 [(3, 9, 3)];
        /// The unified format number (0 is INVALID), in the family's
        /// numbering (gfx10's differs from 30 on: `sym::buf_format_gfx10`).
        /// CDNA's is DATA_FORMAT | NUM_FORMAT << 4, the number MTBUF's
        /// `aux` holds ([`gcn_format`]): DATA_FORMAT (word 3 bits 15-18)
        /// is its low part, NUM_FORMAT (bits 12-14) its high one.
        format: u32 = gfx9 [(3, 15, 4), (3, 12, 3)] gfx10 [(3, 12, 7)] gfx11 [(3, 12, 6)]
            gfx12 [(3, 12, 6)];
        /// CDNA's user VM fields (graphics virtual memory selection).
        user_vm_enable: u32 = gfx9 [(3, 19, 1)] gfx11 [] gfx12 [];
        user_vm_mode: u32 = gfx9 [(3, 20, 1)] gfx11 [] gfx12 [];
        index_stride: u32 = gfx9 [(3, 21, 2)] gfx10 [(3, 21, 2)] gfx11 [(3, 21, 2)]
            gfx12 [(3, 21, 2)];
        add_tid_enable: u32 = gfx9 [(3, 23, 1)] gfx10 [(3, 23, 1)] gfx11 [(3, 23, 1)]
            gfx12 [(3, 23, 1)];
        /// gfx10 only.
        resource_level: u32 = gfx10 [(3, 24, 1)] gfx11 [] gfx12 [];
        /// CDNA's non-volatile hint.
        nv: u32 = gfx9 [(3, 27, 1)] gfx11 [] gfx12 [];
        oob_select: u32 = gfx10 [(3, 28, 2)] gfx11 [(3, 28, 2)] gfx12 [(3, 28, 2)];
        type_: u32 = gfx9 [(3, 30, 2)] gfx10 [(3, 30, 2)] gfx11 [(3, 30, 2)] gfx12 [(3, 30, 2)];
    }
}

descriptor! {
    /// An image sampler (S#), RDNA3 ISA §8.2.2 table "Image Sampler
    /// Definition"; RDNA4 widens MIN_LOD and MAX_LOD to 13 bits each; RDNA2
    /// (ROCr's `resource_nv.h`) has BORDER_COLOR_PTR at word 3 bit 0.
    Sampler, 4, "S#" {
        /// SQ_TEX_CLAMP per axis: 0 wrap, 1 mirror, 2 clamp to the last
        /// texel, 3 mirror once, 4 clamp half border, 5 mirror once half
        /// border, 6 clamp border, 7 mirror once border.
        clamp_x: u32 = gfx10 [(0, 0, 3)] gfx11 [(0, 0, 3)] gfx12 [(0, 0, 3)];
        clamp_y: u32 = gfx10 [(0, 3, 3)] gfx11 [(0, 3, 3)] gfx12 [(0, 3, 3)];
        clamp_z: u32 = gfx10 [(0, 6, 3)] gfx11 [(0, 6, 3)] gfx12 [(0, 6, 3)];
        max_aniso_ratio: u32 = gfx10 [(0, 9, 3)] gfx11 [(0, 9, 3)] gfx12 [(0, 9, 3)];
        depth_compare_func: u32 = gfx10 [(0, 12, 3)] gfx11 [(0, 12, 3)] gfx12 [(0, 12, 3)];
        /// Coordinates are in texels.
        force_unnormalized: u32 = gfx10 [(0, 15, 1)] gfx11 [(0, 15, 1)] gfx12 [(0, 15, 1)];
        trunc_coord: u32 = gfx10 [(0, 27, 1)] gfx11 [(0, 27, 1)] gfx12 [(0, 27, 1)];
        filter_mode: u32 = gfx10 [(0, 29, 2)] gfx11 [(0, 29, 2)] gfx12 [(0, 29, 2)];
        /// Unsigned fixed point with 8 fraction bits.
        min_lod: u32 = gfx10 [(1, 0, 12)] gfx11 [(1, 0, 12)] gfx12 [(1, 0, 13)];
        max_lod: u32 = gfx10 [(1, 12, 12)] gfx11 [(1, 12, 12)] gfx12 [(1, 13, 13)];
        /// Signed fixed point with 8 fraction bits.
        lod_bias: u32 = gfx10 [(2, 0, 14)] gfx11 [(2, 0, 14)] gfx12 [(2, 0, 14)];
        /// SQ_TEX_XY_FILTER: 0 point, 1 bilinear, 2 aniso point, 3 aniso
        /// bilinear.
        xy_mag_filter: u32 = gfx10 [(2, 20, 2)] gfx11 [(2, 20, 2)] gfx12 [(2, 20, 2)];
        xy_min_filter: u32 = gfx10 [(2, 22, 2)] gfx11 [(2, 22, 2)] gfx12 [(2, 22, 2)];
        z_filter: u32 = gfx10 [(2, 24, 2)] gfx11 [(2, 24, 2)] gfx12 [(2, 24, 2)];
        /// SQ_TEX_MIP_FILTER: 0 none, 1 point, 2 linear.
        mip_filter: u32 = gfx10 [(2, 26, 2)] gfx11 [(2, 26, 2)] gfx12 [(2, 26, 2)];
        border_color_ptr: u32 = gfx10 [(3, 0, 12)] gfx11 [(3, 18, 12)] gfx12 [(3, 18, 12)];
        /// SQ_TEX_BORDER_COLOR: 0 transparent black, 1 opaque black, 2
        /// opaque white, 3 from the border colour table.
        border_color_type: u32 = gfx10 [(3, 30, 2)] gfx11 [(3, 30, 2)] gfx12 [(3, 30, 2)];
    }
}

/// Number kinds of the unified formats, in their order within a layout's
/// run: all seven, the integer six, and the 32-bit three.
const ALL: &[&str] = &[
    "UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "FLOAT",
];
const INT: &[&str] = &["UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT"];
const WIDE: &[&str] = &["UINT", "SINT", "FLOAT"];

/// Each family's unified formats from 30 on, as runs of (layout, kinds):
/// 0-29 are numbered alike in every family, after them gfx10 gives each
/// packed layout every kind it has (ROCr's `resource_nv.h` CFMT values,
/// LLVM's `UfmtGFX10`), gfx11 and gfx12 only the kinds they keep (LLVM's
/// `UfmtGFX11`: one float for the 10/11-bit layouts, no scaled
/// 10_10_10_2).
fn format_runs(family: Family) -> &'static [(&'static str, &'static [&'static str])] {
    match family {
        // GCN names formats by DFMT/NFMT, not by a unified number.
        Family::Gfx90a | Family::Gfx94 => &[],
        Family::Gfx10 => &[
            ("10_11_11", ALL),
            ("11_11_10", ALL),
            ("10_10_10_2", INT),
            ("2_10_10_10", INT),
            ("8_8_8_8", INT),
            ("32_32", WIDE),
            ("16_16_16_16", ALL),
            ("32_32_32", WIDE),
            ("32_32_32_32", WIDE),
        ],
        Family::Gfx11 | Family::Gfx12 => &[
            ("10_11_11", &["FLOAT"]),
            ("11_11_10", &["FLOAT"]),
            ("10_10_10_2", &["UNORM", "SNORM", "UINT", "SINT"]),
            ("2_10_10_10", INT),
            ("8_8_8_8", INT),
            ("32_32", WIDE),
            ("16_16_16_16", ALL),
            ("32_32_32", WIDE),
            ("32_32_32_32", WIDE),
        ],
    }
}

/// The first unified format number the runs of [`format_runs`] cover.
const FIRST_RUN: u32 = 30;

/// `family`'s unified format `f` from 30 on as (layout, number kind), e.g.
/// gfx10's 56 = (`"8_8_8_8"`, `"UNORM"`); `None` below 30 (numbered alike
/// in every family) and past the runs (image-only formats).
pub fn unified_format(family: Family, f: u32) -> Option<(&'static str, &'static str)> {
    let mut at = FIRST_RUN;
    for &(layout, kinds) in format_runs(family) {
        if let Some(k) = f.checked_sub(at).and_then(|k| kinds.get(k as usize)) {
            return Some((layout, k));
        }
        at += kinds.len() as u32;
    }
    None
}

/// The number `to` gives the unified format `from` numbers `f`, if `to`
/// has that format: the same number below 30, else the same layout and
/// kind (gfx11's 42, 8_8_8_8 UNORM, is gfx10's 56). Formats past the runs
/// (image-only ones) keep their number between gfx11 and gfx12 only.
pub fn format_number(to: Family, from: Family, f: u32) -> Option<u32> {
    let same = |a: Family, b: Family| format_runs(a) == format_runs(b);
    if f < FIRST_RUN || same(to, from) {
        return Some(f);
    }
    let want = unified_format(from, f)?;
    let mut at = FIRST_RUN;
    for &(layout, kinds) in format_runs(to) {
        if let Some(k) = kinds.iter().position(|&k| (layout, k) == want) {
            return Some(at + k as u32);
        }
        at += kinds.len() as u32;
    }
    None
}

/// GCN's DATA_FORMAT names (CDNA3 guide, buffer data formats), 1-14: the
/// layout as the unified formats name it (from the most significant
/// component); 0 (INVALID) is empty.
pub const GCN_DATA_FORMATS: [&str; 15] = [
    "",
    "8",
    "16",
    "8_8",
    "32",
    "16_16",
    "10_11_11",
    "11_11_10",
    "10_10_10_2",
    "2_10_10_10",
    "8_8_8_8",
    "32_32",
    "16_16_16_16",
    "32_32_32",
    "32_32_32_32",
];

/// GCN's NUM_FORMAT kinds, 0-7 (6, reserved, is empty).
pub const GCN_NUM_FORMATS: [&str; 8] = [
    "UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "", "FLOAT",
];

/// CDNA's buffer format `f` = DATA_FORMAT | NUM_FORMAT << 4 (MTBUF's
/// `aux`, the V#'s `format`) as (layout, number kind); `None` for
/// DATA_FORMAT 0 (INVALID) or 15, the reserved NUM_FORMAT, and the pairs
/// the unified tables have no format for (the kinds of gfx10's runs:
/// 32-bit components only integer or float, 8-bit and the 10-10-10-2
/// layouts no float).
pub fn gcn_format(f: u32) -> Option<(&'static str, &'static str)> {
    let layout = *GCN_DATA_FORMATS
        .get(f as usize & 15)
        .filter(|l| !l.is_empty())?;
    let kind = *GCN_NUM_FORMATS
        .get(f as usize >> 4)
        .filter(|k| !k.is_empty())?;
    let kinds: &[&str] = if layout.starts_with("32") {
        WIDE
    } else if layout.starts_with('8') || layout.contains("_2") || layout.starts_with("2_") {
        INT
    } else {
        ALL
    };
    kinds.contains(&kind).then_some((layout, kind))
}

/// Whether a buffer format number in `family`'s numbering is INVALID, the
/// unbound resource's mark: FORMAT 0, or on CDNA DATA_FORMAT 0 (whatever
/// NUM_FORMAT says).
pub fn format_invalid(family: Family, f: u32) -> bool {
    match family {
        Family::Gfx90a | Family::Gfx94 => f & 15 == 0,
        _ => f == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Format numbers between families, at the runs' edges, against
    /// ROCr's gfx10 CFMT values (`resource_nv.h`: 44 10_10_10_2 UNORM, 56
    /// 8_8_8_8 UNORM, 64 32_32 FLOAT, 77 32_32_32_32 FLOAT) and LLVM's
    /// gfx11 ones (32, 42, 50, 63).
    #[test]
    fn format_numbers_between_families() {
        use Family::*;
        for (g11, g10) in [(22, 22), (29, 29), (30, 36), (31, 43), (32, 44), (35, 49)] {
            assert_eq!(format_number(Gfx10, Gfx11, g11), Some(g10), "{g11}");
            assert_eq!(format_number(Gfx11, Gfx10, g10), Some(g11), "{g10}");
        }
        for (g11, g10) in [(42, 56), (50, 64), (57, 71), (63, 77)] {
            assert_eq!(format_number(Gfx10, Gfx11, g11), Some(g10), "{g11}");
            assert_eq!(format_number(Gfx11, Gfx10, g10), Some(g11), "{g10}");
        }
        // gfx10's own kinds (10_11_11 UNORM, scaled 10_10_10_2) and its
        // numbers past the runs have no gfx11 number.
        for g10 in [30, 46, 78, 130] {
            assert_eq!(format_number(Gfx11, Gfx10, g10), None, "{g10}");
        }
        // gfx11 and gfx12 number every format alike.
        assert_eq!(format_number(Gfx12, Gfx11, 130), Some(130));
        assert_eq!(unified_format(Gfx10, 56), Some(("8_8_8_8", "UNORM")));
        assert_eq!(unified_format(Gfx11, 42), Some(("8_8_8_8", "UNORM")));
    }

    /// Every field at zero, at its largest value alone and all at their
    /// largest together survives encode → decode, and no two fields share
    /// a bit (the one-field encodings' bits add up to the all-ones one's).
    fn round_trips<const N: usize, T>(
        names: &[&str],
        bits: impl Fn(Family, &str) -> u32,
        from: impl Fn(&[u64]) -> T,
        encode: impl Fn(&T, Family) -> Result<[u32; N], FieldError>,
        decode: impl Fn(Family, &[u32; N]) -> T,
    ) where
        T: PartialEq + std::fmt::Debug + Default,
    {
        for family in Family::ALL {
            let max: Vec<u64> = names
                .iter()
                .map(|name| (1u64 << bits(family, name)) - 1)
                .collect();
            let mut union = [0u32; N];
            for (k, name) in names.iter().enumerate() {
                let mut alone = vec![0u64; names.len()];
                alone[k] = max[k];
                let one = from(&alone);
                let words = encode(&one, family).unwrap();
                assert_eq!(decode(family, &words), one, "{family:?} {name}");
                let ones: u32 = words.iter().map(|w| w.count_ones()).sum();
                assert_eq!(ones, bits(family, name), "{family:?} {name}");
                for (u, w) in union.iter_mut().zip(words) {
                    assert_eq!(*u & w, 0, "{family:?} {name} overlaps another field");
                    *u |= w;
                }
                // One past the largest value is refused, naming the field
                // (a 32-bit field's is past its u32 already).
                if bits(family, name) < 32 {
                    alone[k] = max[k] + 1;
                    let err = encode(&from(&alone), family).unwrap_err();
                    assert_eq!((err.field, err.family), (*name, family));
                }
            }
            let all = from(&max);
            assert_eq!(encode(&all, family).unwrap(), union, "{family:?}");
            assert_eq!(decode(family, &union), all, "{family:?}");
            assert_eq!(encode(&T::default(), family).unwrap(), [0u32; N]);
        }
    }

    #[test]
    fn image_resource_fields_round_trip() {
        round_trips(
            ImageResource::field_names(),
            ImageResource::field_bits,
            ImageResource::from_fields,
            ImageResource::encode,
            ImageResource::decode,
        );
    }

    #[test]
    fn buffer_resource_fields_round_trip() {
        round_trips(
            BufferResource::field_names(),
            BufferResource::field_bits,
            BufferResource::from_fields,
            BufferResource::encode,
            BufferResource::decode,
        );
    }

    #[test]
    fn sampler_fields_round_trip() {
        round_trips(
            Sampler::field_names(),
            Sampler::field_bits,
            Sampler::from_fields,
            Sampler::encode,
            Sampler::decode,
        );
    }

    /// The field widths the families differ in (ROCr's
    /// `resource_gfx11.h`/`resource_gfx12.h` `*_SZ` defines).
    #[test]
    fn family_widths() {
        let t = |f, n| ImageResource::field_bits(f, n);
        assert_eq!(
            (t(Family::Gfx11, "width"), t(Family::Gfx12, "width")),
            (14, 16)
        );
        assert_eq!(
            (t(Family::Gfx11, "height"), t(Family::Gfx12, "height")),
            (14, 16)
        );
        assert_eq!(
            (t(Family::Gfx11, "max_mip"), t(Family::Gfx12, "max_mip")),
            (4, 5)
        );
        let s = |f, n| Sampler::field_bits(f, n);
        assert_eq!(
            (s(Family::Gfx11, "max_lod"), s(Family::Gfx12, "max_lod")),
            (12, 13)
        );
    }

    /// A 2D 8_8_8_8_UNORM (unified format 42) 5x3 image at 0x1234_5600
    /// with a 64-texel pitch and DST_SEL XYZW: the words ROCr's gfx11
    /// PopulateImageSrd writes (word3 0xfac = X | Y << 3 | Z << 6 | W << 9,
    /// TYPE 9 at bit 28; word4 pitch − 1), and gfx12's with FORMAT at bit
    /// 17 (resource_gfx12.h's sq_img_rsrc_word1_t).
    #[test]
    fn image_words_pinned() {
        let r = ImageResource {
            base_address: 0x1234_5600 >> 8,
            format: 42,
            width: 4,
            height: 2,
            dst_sel_x: 4,
            dst_sel_y: 5,
            dst_sel_z: 6,
            dst_sel_w: 7,
            type_: 9,
            depth: 63,
            ..Default::default()
        };
        let gfx11 = r.encode(Family::Gfx11).unwrap();
        assert_eq!(
            gfx11[..5],
            [0x0012_3456, 42 << 20, 1 | 2 << 14, 0x9000_0fac, 63]
        );
        let gfx12 = r.encode(Family::Gfx12).unwrap();
        assert_eq!(gfx12[1], 42 << 17);
        // WIDTH 20000 − 1 needs gfx12's 16 bits: gfx11 refuses it.
        let wide = ImageResource { width: 19999, ..r };
        assert!(wide.encode(Family::Gfx11).is_err());
        let w = wide.encode(Family::Gfx12).unwrap();
        assert_eq!((w[1] >> 30, w[2] & 0x3fff), (19999 & 3, 19999 >> 2));
    }

    /// ROCr's PopulateSamplerSrd for clamp-to-border, bilinear,
    /// unnormalised: CLAMP 6 on each axis, FORCE_UNNORMALIZED, MAX_LOD
    /// 4095 (at bit 12 on gfx11, bit 13 on gfx12), both XY filters 1.
    #[test]
    fn sampler_words_pinned() {
        let s = Sampler {
            clamp_x: 6,
            clamp_y: 6,
            clamp_z: 6,
            force_unnormalized: 1,
            max_lod: 4095,
            xy_mag_filter: 1,
            xy_min_filter: 1,
            ..Default::default()
        };
        let w0 = 6 | 6 << 3 | 6 << 6 | 1 << 15;
        let w2 = 1 << 20 | 1 << 22;
        assert_eq!(s.encode(Family::Gfx11).unwrap(), [w0, 4095 << 12, w2, 0]);
        assert_eq!(s.encode(Family::Gfx12).unwrap(), [w0, 4095 << 13, w2, 0]);
    }

    /// A V# of 4-byte records, NUM_RECORDS 100, 32_FLOAT (unified 22) in
    /// word3 bits 12-17 (resource_gfx11.h's sq_buf_rsrc_word3_t).
    #[test]
    fn buffer_words_pinned() {
        let b = BufferResource {
            base_address: 0x1_2345_6780,
            stride: 4,
            num_records: 100,
            dst_sel_x: 4,
            format: 22,
            ..Default::default()
        };
        let w = b.encode(Family::Gfx11).unwrap();
        assert_eq!(w, [0x2345_6780, 1 | 4 << 16, 100, 4 | 22 << 12]);
        assert_eq!(b.encode(Family::Gfx12).unwrap(), w);
        // gfx10 (resource_nv.h): RESOURCE_LEVEL at bit 24, FORMAT's seventh
        // bit (77 is 32_32_32_32_FLOAT there), the one-bit SWIZZLE_ENABLE at
        // bit 31.
        let g10 = BufferResource {
            format: 77,
            resource_level: 1,
            swizzle_enable: 1,
            ..b
        };
        assert_eq!(
            g10.encode(Family::Gfx10).unwrap(),
            [
                0x2345_6780,
                1 | 4 << 16 | 1 << 31,
                100,
                4 | 77 << 12 | 1 << 24
            ]
        );
        assert!(g10.encode(Family::Gfx11).is_err());
    }

    /// CDNA's V# (CDNA3 guide "Buffer Resource"): the private segment
    /// buffer the launch builds (swizzled, INDEX_STRIDE 3 = 64 lanes,
    /// ADD_TID_ENABLE, NUM_RECORDS all ones) and a typed one with
    /// DATA_FORMAT 4 (32) and NUM_FORMAT 7 (FLOAT) at bits 15 and 12.
    #[test]
    fn gfx9_buffer_words_pinned() {
        let scratch = BufferResource {
            base_address: 0xffff_0000_0000,
            swizzle_enable: 1,
            num_records: u32::MAX,
            index_stride: 3,
            add_tid_enable: 1,
            ..Default::default()
        };
        for family in [Family::Gfx90a, Family::Gfx94] {
            let w = scratch.encode(family).unwrap();
            assert_eq!(w, [0, 0xffff | 1 << 31, u32::MAX, 0x00e0_0000]);
            assert_eq!(BufferResource::decode(family, &w), scratch);
        }
        let typed = BufferResource {
            base_address: 0x1_2345_6780,
            stride: 4,
            num_records: 100,
            dst_sel_x: 4,
            format: 4 | 7 << 4,
            cache_swizzle: 1,
            ..Default::default()
        };
        let w = typed.encode(Family::Gfx90a).unwrap();
        assert_eq!(
            w,
            [
                0x2345_6780,
                1 | 4 << 16 | 1 << 30,
                100,
                4 | 7 << 12 | 4 << 15
            ]
        );
        // No OOB_SELECT on CDNA: a nonzero one does not fit.
        let oob = BufferResource {
            oob_select: 3,
            ..typed
        };
        assert!(oob.encode(Family::Gfx90a).is_err());
        assert_eq!(gcn_format(4 | 7 << 4), Some(("32", "FLOAT")));
        assert_eq!(gcn_format(10 | 4 << 4), Some(("8_8_8_8", "UINT")));
        assert_eq!(gcn_format(10 | 7 << 4), None);
        assert_eq!(gcn_format(6 << 4), None);
        assert!(format_invalid(Family::Gfx90a, 7 << 4));
        assert!(!format_invalid(Family::Gfx11, 7 << 4));
    }
}
