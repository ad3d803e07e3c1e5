//! Image instructions: gfx11's MIMG and gfx12's VIMAGE/VSAMPLE words
//! (decoded alike, see `softgpu_isa::Inst`), run on linear images.
//!
//! A lane's addresses name a texel of the image its T# (`desc.rs`)
//! describes; loads and stores convert between the resource's format and
//! VGPRs as typed buffer accesses do (the unified format table is shared,
//! so the conversions are `vmem`'s), and samples address, filter and clamp
//! as the sampler's S# says (`sample.rs`). Every texel is read and written
//! through the arena's checked accessors like a global access: a texel
//! outside every allocation is a fault with a report.
//!
//! Not run (each an error naming it): tiled images (SW_MODE != 0), a16
//! addresses, cube maps and MSAA resources, `_pck` loads and stores, and
//! anisotropic filtering (the aniso filters filter as bilinear ones).

mod atomic;
mod desc;
mod sample;

use softgpu_isa::{flags, image, Family, Inst, Op, Operand};

use super::vmem::{self, DataFormat, NumFormat};
use super::{Env, Exec, Flow, Result, Trap};
use crate::trap::Use;
use crate::wave::Wave;

pub use atomic::TABLE as ATOMICS;
pub use desc::{Border, Clamp, ImageType, Resource, ResourceError, Sampler};
use sample::Lod;

/// The instruction's dimension field (DIM): 1D, 2D, 3D, cube, 1D array,
/// 2D array, 2D MSAA, 2D MSAA array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dim {
    /// Coordinates that address within a slice (x, y, z).
    axes: usize,
    /// Whether one more coordinate is the array slice.
    array: bool,
}

fn dim(i: &Inst) -> std::result::Result<Dim, Trap> {
    let (axes, array) = match (i.aux & image::DIM) >> image::DIM_SHIFT {
        0 => (1, false),
        1 => (2, false),
        2 => (3, false),
        4 => (1, true),
        5 => (2, true),
        d => return Err(unsupported(i, format!("dim {d} (cube and MSAA images)"))),
    };
    Ok(Dim { axes, array })
}

impl Dim {
    fn coords(self) -> usize {
        self.axes + self.array as usize
    }
}

fn unsupported(i: &Inst, why: impl Into<String>) -> Trap {
    Trap::UnsupportedForm {
        op: i.op,
        why: why.into(),
    }
}

/// The VGPR holding address dword `k` of lane values: consecutive from
/// vaddr0, or with NSA the k-th address field, the last field starting a
/// consecutive run of the addresses that remain (partial NSA). gfx12's
/// VSAMPLE has four address fields, VIMAGE and gfx11's NSA five.
fn addr_reg(i: &Inst, k: usize, sampler: bool) -> std::result::Result<Operand, Trap> {
    let base = super::vgpr(i.src[0], "vaddr")?;
    let reg = if i.aux & image::NSA == 0 {
        base + k
    } else {
        let fields = if i.family == Family::Gfx12 && sampler {
            4
        } else {
            5
        };
        let field = |f: usize| match f {
            0 => base,
            f => (i.imm as u32 >> (8 * (f - 1)) & 0xff) as usize,
        };
        let last = fields - 1;
        if k < last {
            field(k)
        } else {
            field(last) + (k - last)
        }
    };
    if reg >= crate::wave::NUM_VGPRS {
        return Err(unsupported(i, "an address past v255"));
    }
    Ok(Operand::Vgpr(reg as u16))
}

/// The resource of `i` (its SRSRC) decoded for the instruction's family.
fn resource(w: &Wave, i: &Inst) -> std::result::Result<Resource, Trap> {
    let words = w.read_sn::<8>(i.src[1]);
    if i.aux & image::R128 != 0 {
        return Err(unsupported(i, "r128 (a 4-dword resource)"));
    }
    desc::resource(i.family, words).map_err(|e| unsupported(i, e.to_string()))
}

fn format(i: &Inst, r: &Resource) -> std::result::Result<DataFormat, Trap> {
    vmem::data_format(r.format).ok_or_else(|| unsupported(i, format!("image format {}", r.format)))
}

/// Whether a format's components are integers (no float conversion, no
/// filtering, integer 1 for DST_SEL_1 and border colours).
fn is_int(df: &DataFormat) -> bool {
    matches!(df.num, NumFormat::Uint | NumFormat::Sint)
}

/// Refuses the instruction forms no handler here runs.
fn check_form(i: &Inst) -> std::result::Result<(), Trap> {
    if i.aux & image::A16 != 0 {
        return Err(unsupported(i, "a16 (16-bit addresses)"));
    }
    Ok(())
}

/// The linear layout of a resource's memory, after addrlib's linear
/// surfaces (ROCr allocates images with it): rows of `pitch` texels,
/// each level of the mip chain `pitch_l` × `height_l`, the smallest level
/// first, and the whole chain repeated per slice (a 3D image's depth
/// slices too). A 1D/2D image without mips takes its pitch from the
/// descriptor; otherwise rows are padded to 256 bytes.
struct Layout {
    bpp: u64,
    slice_bytes: u64,
}

/// Where level `level` (absolute, 0 = the resource's largest) lives.
#[derive(Clone, Copy, Debug)]
struct Level {
    width: u32,
    height: u32,
    depth: u32,
    pitch: u64,
    offset: u64,
}

impl Layout {
    fn new(r: &Resource, df: &DataFormat) -> Layout {
        let bpp = df.bytes().max(1);
        let mut slice_bytes = 0;
        for l in 0..=r.max_mip {
            let lv = level_shape(r, bpp, l);
            slice_bytes += lv.pitch * lv.height as u64 * bpp;
        }
        Layout { bpp, slice_bytes }
    }

    fn level(&self, r: &Resource, l: u32) -> Level {
        let mut lv = level_shape(r, self.bpp, l);
        lv.offset = (l + 1..=r.max_mip)
            .map(|k| {
                let s = level_shape(r, self.bpp, k);
                s.pitch * s.height as u64 * self.bpp
            })
            .sum();
        lv
    }

    /// The address of texel (x, y) of slice `slice` of level `lv`.
    fn texel(&self, r: &Resource, lv: &Level, x: u32, y: u32, slice: u32) -> u64 {
        let within = lv.offset + (y as u64 * lv.pitch + x as u64) * self.bpp;
        r.base
            .wrapping_add(slice as u64 * self.slice_bytes)
            .wrapping_add(within)
    }
}

/// Level `l`'s size and pitch (offset 0).
fn level_shape(r: &Resource, bpp: u64, l: u32) -> Level {
    let shrink = |n: u32| (n >> l.min(31)).max(1);
    let align = (256 / bpp).max(1);
    let width = shrink(r.width);
    let pitch = match r.pitch {
        Some(p) if r.max_mip == 0 => p as u64,
        _ => (width as u64).div_ceil(align) * align,
    };
    let height = match r.ty {
        ImageType::D1 | ImageType::D1Array => 1,
        _ => shrink(r.height),
    };
    let depth = match r.ty {
        ImageType::D3 => shrink(r.depth),
        _ => 1,
    };
    Level {
        width,
        height,
        depth,
        pitch,
        offset: 0,
    }
}

/// How many slices an array resource shows: BASE_ARRAY to its last slice
/// (the DEPTH field).
fn layers(r: &Resource) -> u32 {
    if r.ty.is_array() {
        (r.depth + 1).saturating_sub(r.base_array)
    } else {
        1
    }
}

/// One lane's texel position: level-relative coordinates, and for an
/// array the slice within the view.
#[derive(Clone, Copy, Debug, Default)]
struct Texel {
    x: u32,
    y: u32,
    z: u32,
    layer: u32,
}

/// An image as one instruction reads or writes it.
struct Image {
    r: Resource,
    df: DataFormat,
    layout: Layout,
}

impl Image {
    fn new(w: &Wave, i: &Inst) -> std::result::Result<Image, Trap> {
        let r = resource(w, i)?;
        let df = format(i, &r)?;
        let layout = Layout::new(&r, &df);
        Ok(Image { r, df, layout })
    }

    /// The address of `t` in absolute level `level`, or `None` when it is
    /// outside the image (such loads read 0, stores are dropped).
    fn locate(&self, t: Texel, level: u32) -> Option<u64> {
        if level > self.r.last_level || level > self.r.max_mip {
            return None;
        }
        let lv = self.layout.level(&self.r, level);
        let inside =
            t.x < lv.width && t.y < lv.height && t.z < lv.depth && t.layer < layers(&self.r);
        let slice = match self.r.ty {
            ImageType::D3 => t.z,
            _ => self.r.base_array + t.layer,
        };
        inside.then(|| self.layout.texel(&self.r, &lv, t.x, t.y, slice))
    }

    /// Lane `l`'s texel at `addr`: its components as raw bits.
    fn read(&self, w: &Wave, env: &mut Env, l: usize, addr: u64) -> Result<[u32; 4]> {
        let n = self.df.bytes() as usize;
        if let Some(s) = env.sanitizer.as_mut() {
            s.global(w, Some(l), Use::Read, addr, n as u64)?;
        }
        let mut bytes = [0u8; 16];
        vmem::global_read(w, env, l, addr, &mut bytes[..n])?;
        let element = u128::from_le_bytes(bytes);
        let mut comps = [0u32; 4];
        let mut at = 0;
        for (c, &b) in self.df.bits[..self.df.comps].iter().enumerate() {
            comps[c] = (element >> at) as u32 & vmem::mask(b);
            at += b as u32;
        }
        Ok(comps)
    }

    /// The texel's components as 32-bit VGPR values (floats as bits).
    fn convert(&self, raw: [u32; 4]) -> [u32; 4] {
        let mut out = [0; 4];
        for c in 0..self.df.comps {
            out[c] = vmem::component_to_32(&self.df, self.df.bits[c], raw[c]);
        }
        out
    }

    /// What DST_SEL makes of the texel's components `v`.
    fn swizzle(&self, v: [u32; 4]) -> [u32; 4] {
        let one = if is_int(&self.df) { 1 } else { 1f32.to_bits() };
        self.r.dst_sel.map(|s| match s {
            1 => one,
            4..=7 if ((s - 4) as usize) < self.df.comps => v[(s - 4) as usize],
            _ => 0,
        })
    }
}

/// The data components `dmask` selects (dmask 0 acts as X, as LLVM
/// allocates one register for it).
fn selected(i: &Inst) -> impl Iterator<Item = usize> {
    let dmask = selected_mask(i);
    (0..4).filter(move |c| dmask >> c & 1 != 0)
}

/// The instruction's dmask (0 reads as component x alone).
fn selected_mask(i: &Inst) -> u32 {
    match i.aux & image::DMASK {
        0 => 1,
        m => m,
    }
}

/// Writes the dmask-selected components of `v` to lane `l`'s VDATA (all
/// four for gather4, whose dmask picks the channel instead): one per
/// VGPR, or with d16 two per VGPR (as f16 for float formats, the low 16
/// bits for integers); then, with tfe or lwe, a zero status dword.
fn put(w: &mut Wave, i: &Inst, l: usize, v: [u32; 4], half: impl Fn(u32) -> u16, four: bool) {
    let d16 = i.aux & image::D16 != 0;
    let mut n = 0;
    let dmask = selected_mask(i);
    for c in (0..4).filter(|c| four || dmask >> c & 1 != 0) {
        if d16 {
            let old = w.get_lane(i.dst[0], l, n / 2);
            let shift = 16 * (n % 2);
            let new = old & !(0xffff << shift) | (half(v[c]) as u32) << shift;
            w.set_lane(i.dst[0], l, n / 2, new);
        } else {
            w.set_lane(i.dst[0], l, n, v[c]);
        }
        n += 1;
    }
    if i.flags & flags::TFE != 0 || i.aux & image::LWE != 0 {
        let dwords = if d16 { n.div_ceil(2) } else { n };
        w.set_lane(i.dst[0], l, dwords, 0);
    }
}

/// A 32-bit result as a d16 half: f16 (nearest even) unless integer.
fn to_half(int: bool) -> impl Fn(u32) -> u16 {
    move |v| {
        if int {
            v as u16
        } else {
            half::f16::from_f32(f32::from_bits(v)).to_bits()
        }
    }
}

/// Lane `l`'s integer texel position from its address dwords (loads,
/// stores), and its mip level (absolute) for the `_mip` forms.
fn int_position(w: &Wave, i: &Inst, d: Dim, l: usize, mip: bool) -> Result<(Texel, u32)> {
    let mut c = [0u32; 5];
    for (k, slot) in c.iter_mut().enumerate().take(d.coords() + mip as usize) {
        *slot = w.get_lane(addr_reg(i, k, false)?, l, 0);
    }
    let mut t = Texel {
        x: c[0],
        ..Texel::default()
    };
    if d.axes > 1 {
        t.y = c[1];
    }
    if d.axes > 2 {
        t.z = c[2];
    }
    if d.array {
        t.layer = c[d.axes];
    }
    let level = if mip { c[d.coords()] } else { 0 };
    Ok((t, level))
}

/// The lanes EXEC enables, read once (the iterator does not borrow the
/// wave, so a loop over it may write lanes: no list is made).
fn active(w: &Wave) -> impl Iterator<Item = usize> {
    let exec = w.exec();
    (0..w.lanes).filter(move |l| exec >> l & 1 != 0)
}

/// `image_load` / `image_load_mip`: the texel at integer coordinates,
/// converted and swizzled; outside the image every component reads 0
/// (DST_SEL_1 still reads 1).
fn load(w: &mut Wave, env: &mut Env, i: &Inst, mip: bool) -> Result {
    check_form(i)?;
    let d = dim(i)?;
    let img = Image::new(w, i)?;
    for l in active(w) {
        let (t, level) = int_position(w, i, d, l, mip)?;
        let raw = match img.locate(t, img.r.base_level.saturating_add(level)) {
            Some(addr) => img.convert(img.read(w, env, l, addr)?),
            None => [0; 4],
        };
        put(w, i, l, img.swizzle(raw), |v| load_half(&img.df, v), false);
    }
    Ok(Flow::Next)
}

/// A loaded 32-bit component as a d16 half: a 32-bit float truncates
/// ("Conversion of float32 to float16 uses truncation", RDNA3 §9.3.1),
/// others round to nearest even; integers keep their low 16 bits.
fn load_half(df: &DataFormat, v: u32) -> u16 {
    match df.num {
        NumFormat::Uint | NumFormat::Sint => v as u16,
        NumFormat::Float if df.bits[0] == 32 => vmem::f32_to_h_trunc(f32::from_bits(v)),
        _ => half::f16::from_f32(f32::from_bits(v)).to_bits(),
    }
}

/// `image_store` / `image_store_mip`: the dmask-selected VDATA components
/// (the others 0) converted to the format and written where DST_SEL
/// reads them back from; a texel outside the image is not written.
fn store(w: &mut Wave, env: &mut Env, i: &Inst, mip: bool) -> Result {
    check_form(i)?;
    let d = dim(i)?;
    let img = Image::new(w, i)?;
    let n = img.df.bytes() as usize;
    for l in active(w) {
        let (t, level) = int_position(w, i, d, l, mip)?;
        let Some(addr) = img.locate(t, img.r.base_level.saturating_add(level)) else {
            continue;
        };
        let data = store_data(w, i, l, &img.df);
        let mut element = 0u128;
        let mut at = 0;
        for (k, &b) in img.df.bits[..img.df.comps].iter().enumerate() {
            let from = img.r.dst_sel.iter().position(|&s| s as usize == 4 + k);
            let raw = from.map_or(0, |j| vmem::component_from_32(&img.df, b, data[j]));
            element |= (raw as u128) << at;
            at += b as u32;
        }
        if let Some(s) = env.sanitizer.as_mut() {
            s.global(w, Some(l), Use::Write, addr, n as u64)?;
        }
        vmem::global_write(w, env, l, addr, &element.to_le_bytes()[..n])?;
    }
    Ok(Flow::Next)
}

/// Lane `l`'s store data as four 32-bit components (d16 halves widened:
/// f16 to f32 for float formats, sign- or zero-extended integers).
fn store_data(w: &Wave, i: &Inst, l: usize, df: &DataFormat) -> [u32; 4] {
    let d16 = i.aux & image::D16 != 0;
    let mut out = [0u32; 4];
    for (n, c) in selected(i).enumerate() {
        out[c] = if d16 {
            let h = (w.get_lane(i.src[3], l, n / 2) >> (16 * (n % 2))) as u16;
            match df.num {
                NumFormat::Uint => h as u32,
                NumFormat::Sint => h as i16 as i32 as u32,
                _ => half::f16::from_bits(h).to_f32().to_bits(),
            }
        } else {
            w.get_lane(i.src[3], l, n)
        };
    }
    out
}

/// `image_get_resinfo`: for the mip level in the address (relative to
/// BASE_LEVEL), X the width, Y the height (a 1D array: its layers), Z the
/// depth (an array: its layers), W the levels in view; integers.
fn resinfo(w: &mut Wave, _env: &mut Env, i: &Inst) -> Result {
    check_form(i)?;
    let img = Image::new(w, i)?;
    let r = &img.r;
    let levels = (r.last_level + 1).saturating_sub(r.base_level);
    for l in active(w) {
        let mip = w.get_lane(addr_reg(i, 0, false)?, l, 0);
        let v = if mip < levels {
            let lv = img.layout.level(r, r.base_level + mip);
            match r.ty {
                ImageType::D1 => [lv.width, 1, 1, levels],
                ImageType::D1Array => [lv.width, layers(r), 1, levels],
                t if t.is_array() => [lv.width, lv.height, layers(r), levels],
                _ => [lv.width, lv.height, lv.depth, levels],
            }
        } else {
            [0, 0, 0, levels]
        };
        put(w, i, l, v, |v| v as u16, false);
    }
    Ok(Flow::Next)
}

/// What a sample op's name adds to its address list, in the order the
/// addresses come: `_o` an offsets dword, `_b` a bias, `_c` the depth
/// reference, `_d` the derivatives (`_g16`: as f16 pairs), then the
/// coordinates, then `_l`'s LOD or `_cl`'s LOD clamp (RDNA3 ISA §10.3
/// "Image Opcodes with a Sampler" address order; LLVM's image intrinsics
/// take their operands in the same order).
#[derive(Clone, Copy, Debug)]
struct SampleOp {
    offset: bool,
    bias: bool,
    compare: bool,
    lod: Lod,
    g16: bool,
    clamp: bool,
    /// `gather4`: the four bilinear taps' component instead of a filtered
    /// texel.
    gather: bool,
}

/// The form a sample op's name spells, from its suffix tokens (`c_d_o`,
/// `b_cl`, …). Evaluated at compile time for the table: an unknown token
/// fails the build.
const fn form(gather: bool, suffix: &str) -> SampleOp {
    let b = suffix.as_bytes();
    let mut op = SampleOp {
        offset: false,
        bias: false,
        compare: false,
        lod: Lod::Implicit,
        g16: false,
        clamp: false,
        gather,
    };
    let mut at = 0;
    while at < b.len() {
        let mut end = at;
        while end < b.len() && b[end] != b'_' {
            end += 1;
        }
        let second = if end - at > 1 { b[at + 1] } else { 0 };
        match (end - at, b[at], second) {
            (1, b'c', _) => op.compare = true,
            (1, b'b', _) => op.bias = true,
            (1, b'd', _) => op.lod = Lod::Derivatives,
            (1, b'l', _) => op.lod = Lod::Explicit,
            (1, b'o', _) => op.offset = true,
            (2, b'l', b'z') => op.lod = Lod::Zero,
            (2, b'c', b'l') => op.clamp = true,
            (3, b'g', b'1') => op.g16 = true,
            _ => panic!("an unknown image sample suffix"),
        }
        at = end + 1;
    }
    op
}

/// `image_sample*` and `image_gather4*`: lane by lane, the coordinates
/// (floats) sampled as the S# says.
fn sample(w: &mut Wave, env: &mut Env, i: &Inst, op: SampleOp) -> Result {
    check_form(i)?;
    let d = dim(i)?;
    let img = Image::new(w, i)?;
    let s = desc::sampler(i.family, w.read_sn::<4>(i.src[2]));
    // The instruction's unorm bit forces texel coordinates as the
    // sampler's FORCE_UNNORMALIZED does.
    let unnormalized = s.unnormalized || i.aux & image::UNORM != 0;
    if s.border == Border::Table {
        return Err(unsupported(
            i,
            "border colour from the table (BORDER_COLOR_PTR)",
        ));
    }
    let int = is_int(&img.df);
    if op.compare && int {
        return Err(unsupported(i, "a depth compare on an integer format"));
    }
    let compare_func = s.depth_compare;
    let quads = implicit_coords(w, i, d, op)?;
    for l in active(w) {
        let a = sample_args(w, i, d, l, op)?;
        let mut ctx = sample::Ctx {
            img: &img,
            s: &s,
            dim: d,
            unnormalized,
            compare: op.compare.then_some((compare_func, a.zref)),
            w,
            env,
            lane: l,
        };
        let lod = ctx.lod(&a, op.lod, quads.as_ref().map(|q| q.derivatives(l, d)));
        let a = SampleArgs { lod, ..a };
        let v = if op.gather {
            let comp = selected(i).next().unwrap_or(0);
            ctx.gather(&a, comp)?
        } else {
            let texel = ctx.sample(&a)?;
            img.swizzle(texel)
        };
        put(w, i, l, v, to_half(int), op.gather);
    }
    Ok(Flow::Next)
}

/// Every lane's coordinates, for LOD from the quad's derivatives (the
/// implicit-LOD forms), whether EXEC has the lane or not.
struct QuadCoords {
    coords: [[f32; 3]; crate::wave::MAX_LANES],
}

impl QuadCoords {
    /// Lane `l`'s derivatives: coarse, the same for the whole quad, from
    /// its top-left lane (lane 0 of the quad) to the top-right (lane 1:
    /// d/dx) and bottom-left (lane 2: d/dy), the 2x2 arrangement pixel
    /// quads have (uncertain for compute waves, whose lanes have no
    /// pixel positions: the guide does not say).
    fn derivatives(&self, l: usize, d: Dim) -> [[f32; 3]; 2] {
        let q = l & !3;
        let at = |lane: usize| self.coords.get(lane).copied().unwrap_or_default();
        let (tl, tr, bl) = (at(q), at(q + 1), at(q + 2));
        let mut out = [[0f32; 3]; 2];
        for axis in 0..d.axes {
            out[0][axis] = tr[axis] - tl[axis];
            out[1][axis] = bl[axis] - tl[axis];
        }
        out
    }
}

/// The coordinates of every lane when the op takes its LOD from the
/// quad, else `None`.
fn implicit_coords(w: &Wave, i: &Inst, d: Dim, op: SampleOp) -> Result<Option<QuadCoords>> {
    if op.lod != Lod::Implicit {
        return Ok(None);
    }
    let first = coords_at(op);
    let mut coords = [[0f32; 3]; crate::wave::MAX_LANES];
    for axis in 0..d.axes {
        let reg = addr_reg(i, first + axis, true)?;
        for (l, c) in coords.iter_mut().enumerate().take(w.lanes) {
            c[axis] = f32::from_bits(w.get_lane(reg, l, 0));
        }
    }
    Ok(Some(QuadCoords { coords }))
}

/// How many address dwords come before the coordinates (derivatives
/// excepted, which depend on the dim).
fn coords_at(op: SampleOp) -> usize {
    op.offset as usize + op.bias as usize + op.compare as usize
}

/// One lane's sample arguments.
#[derive(Clone, Copy, Debug, Default)]
struct SampleArgs {
    coords: [f32; 4],
    offsets: [i32; 3],
    /// `_l`'s LOD; after [`sample::Ctx::lod`], the LOD used, bias added.
    lod: f32,
    bias: f32,
    /// `_c`'s reference value.
    zref: f32,
    /// `_d`'s d/dx (h) and d/dy (v) of each axis.
    derivs: [[f32; 3]; 2],
    /// `_cl`'s LOD clamp (the least LOD used), else -inf.
    min_lod: f32,
}

/// Reads lane `l`'s sample addresses in the order [`SampleOp`] gives.
fn sample_args(w: &Wave, i: &Inst, d: Dim, l: usize, op: SampleOp) -> Result<SampleArgs> {
    let get = |k: usize| -> Result<u32> { Ok(w.get_lane(addr_reg(i, k, true)?, l, 0)) };
    let mut a = SampleArgs {
        min_lod: f32::NEG_INFINITY,
        ..SampleArgs::default()
    };
    let mut k = 0;
    if op.offset {
        // Offsets in texels: six-bit signed fields at bits 0, 8 and 16.
        let o = get(0)?;
        a.offsets = [0, 8, 16].map(|b| ((o >> b) as i32) << 26 >> 26);
        k += 1;
    }
    if op.bias {
        a.bias = f32::from_bits(get(k)?);
        k += 1;
    }
    if op.compare {
        a.zref = f32::from_bits(get(k)?);
        k += 1;
    }
    if op.lod == Lod::Derivatives {
        k += read_derivatives(&get, k, d, op.g16, &mut a.derivs)?;
    }
    for c in 0..d.coords() {
        a.coords[c] = f32::from_bits(get(k + c)?);
    }
    if op.lod == Lod::Explicit {
        a.lod = f32::from_bits(get(k + d.coords())?);
    } else if op.clamp {
        a.min_lod = f32::from_bits(get(k + d.coords())?);
    }
    Ok(a)
}

/// Reads the derivatives at address dword `k`: d/dx of each axis, then
/// d/dy; each an f32 dword, or with G16 f16s packed two to a dword (each
/// group starting a dword: 1D one, 2D one, 3D two). Returns the dwords
/// read.
fn read_derivatives(
    get: &impl Fn(usize) -> Result<u32>,
    k: usize,
    d: Dim,
    g16: bool,
    out: &mut [[f32; 3]; 2],
) -> Result<usize> {
    let per_group = if g16 { d.axes.div_ceil(2) } else { d.axes };
    for (g, group) in out.iter_mut().enumerate() {
        let first = k + g * per_group;
        for (axis, v) in group.iter_mut().enumerate().take(d.axes) {
            *v = if g16 {
                let word = get(first + axis / 2)?;
                half::f16::from_bits((word >> (16 * (axis % 2))) as u16).to_f32()
            } else {
                f32::from_bits(get(first + axis)?)
            };
        }
    }
    Ok(2 * per_group)
}

/// `image_get_lod`: the LOD an implicit-LOD sample at the coordinates
/// would use: X the LOD clamped by the sampler and the levels in view, Y
/// the LOD computed from the quad's derivatives, unclamped (the order of
/// Vulkan's textureQueryLod and LLVM's getlod; the guide gives no more).
fn get_lod(w: &mut Wave, _env: &mut Env, i: &Inst) -> Result {
    check_form(i)?;
    let d = dim(i)?;
    let img = Image::new(w, i)?;
    let s = desc::sampler(i.family, w.read_sn::<4>(i.src[2]));
    let unnormalized = s.unnormalized || i.aux & image::UNORM != 0;
    let op = form(false, "");
    let Some(quads) = implicit_coords(w, i, d, op)? else {
        return Ok(Flow::Next);
    };
    for l in active(w) {
        let raw = sample::lod_of(&img, unnormalized, d, quads.derivatives(l, d));
        let clamped = sample::clamped_lod(&img.r, &s, raw, f32::NEG_INFINITY);
        put(
            w,
            i,
            l,
            [clamped, raw, 0.0, 0.0].map(f32::to_bits),
            to_half(false),
            false,
        );
    }
    Ok(Flow::Next)
}

/// A sample or gather op's handler: [`sample`] with the form its name's
/// suffix spells, evaluated when the table is built.
macro_rules! sample_row {
    ($gather:literal, $suffix:literal) => {
        bind!(sample, {
            const FORM: SampleOp = form($gather, $suffix);
            FORM
        })
    };
}

/// The image ops' handlers: the sample and gather forms are rows of their
/// name's suffix (`form`).
pub const TABLE: &[(Op, Exec)] = &[
    (Op::IMAGE_LOAD, bind!(load, false)),
    (Op::IMAGE_LOAD_MIP, bind!(load, true)),
    (Op::IMAGE_STORE, bind!(store, false)),
    (Op::IMAGE_STORE_MIP, bind!(store, true)),
    (Op::IMAGE_GET_RESINFO, bind!(resinfo)),
    (Op::IMAGE_GET_LOD, bind!(get_lod)),
    (Op::IMAGE_SAMPLE, sample_row!(false, "")),
    (Op::IMAGE_SAMPLE_D, sample_row!(false, "d")),
    (Op::IMAGE_SAMPLE_L, sample_row!(false, "l")),
    (Op::IMAGE_SAMPLE_B, sample_row!(false, "b")),
    (Op::IMAGE_SAMPLE_LZ, sample_row!(false, "lz")),
    (Op::IMAGE_SAMPLE_C, sample_row!(false, "c")),
    (Op::IMAGE_SAMPLE_C_D, sample_row!(false, "c_d")),
    (Op::IMAGE_SAMPLE_C_L, sample_row!(false, "c_l")),
    (Op::IMAGE_SAMPLE_C_B, sample_row!(false, "c_b")),
    (Op::IMAGE_SAMPLE_C_LZ, sample_row!(false, "c_lz")),
    (Op::IMAGE_SAMPLE_O, sample_row!(false, "o")),
    (Op::IMAGE_SAMPLE_D_O, sample_row!(false, "d_o")),
    (Op::IMAGE_SAMPLE_L_O, sample_row!(false, "l_o")),
    (Op::IMAGE_SAMPLE_B_O, sample_row!(false, "b_o")),
    (Op::IMAGE_SAMPLE_LZ_O, sample_row!(false, "lz_o")),
    (Op::IMAGE_SAMPLE_C_O, sample_row!(false, "c_o")),
    (Op::IMAGE_SAMPLE_C_D_O, sample_row!(false, "c_d_o")),
    (Op::IMAGE_SAMPLE_C_L_O, sample_row!(false, "c_l_o")),
    (Op::IMAGE_SAMPLE_C_B_O, sample_row!(false, "c_b_o")),
    (Op::IMAGE_SAMPLE_C_LZ_O, sample_row!(false, "c_lz_o")),
    (Op::IMAGE_SAMPLE_D_G16, sample_row!(false, "d_g16")),
    (Op::IMAGE_SAMPLE_C_D_G16, sample_row!(false, "c_d_g16")),
    (Op::IMAGE_SAMPLE_D_O_G16, sample_row!(false, "d_o_g16")),
    (Op::IMAGE_SAMPLE_C_D_O_G16, sample_row!(false, "c_d_o_g16")),
    (Op::IMAGE_SAMPLE_CL, sample_row!(false, "cl")),
    (Op::IMAGE_SAMPLE_D_CL, sample_row!(false, "d_cl")),
    (Op::IMAGE_SAMPLE_B_CL, sample_row!(false, "b_cl")),
    (Op::IMAGE_SAMPLE_C_CL, sample_row!(false, "c_cl")),
    (Op::IMAGE_SAMPLE_C_D_CL, sample_row!(false, "c_d_cl")),
    (Op::IMAGE_SAMPLE_C_B_CL, sample_row!(false, "c_b_cl")),
    (Op::IMAGE_SAMPLE_CL_O, sample_row!(false, "cl_o")),
    (Op::IMAGE_SAMPLE_D_CL_O, sample_row!(false, "d_cl_o")),
    (Op::IMAGE_SAMPLE_B_CL_O, sample_row!(false, "b_cl_o")),
    (Op::IMAGE_SAMPLE_C_CL_O, sample_row!(false, "c_cl_o")),
    (Op::IMAGE_SAMPLE_C_D_CL_O, sample_row!(false, "c_d_cl_o")),
    (Op::IMAGE_SAMPLE_C_B_CL_O, sample_row!(false, "c_b_cl_o")),
    (
        Op::IMAGE_SAMPLE_C_D_CL_G16,
        sample_row!(false, "c_d_cl_g16"),
    ),
    (
        Op::IMAGE_SAMPLE_D_CL_O_G16,
        sample_row!(false, "d_cl_o_g16"),
    ),
    (
        Op::IMAGE_SAMPLE_C_D_CL_O_G16,
        sample_row!(false, "c_d_cl_o_g16"),
    ),
    (Op::IMAGE_SAMPLE_D_CL_G16, sample_row!(false, "d_cl_g16")),
    (Op::IMAGE_GATHER4, sample_row!(true, "")),
    (Op::IMAGE_GATHER4_L, sample_row!(true, "l")),
    (Op::IMAGE_GATHER4_B, sample_row!(true, "b")),
    (Op::IMAGE_GATHER4_LZ, sample_row!(true, "lz")),
    (Op::IMAGE_GATHER4_C, sample_row!(true, "c")),
    (Op::IMAGE_GATHER4_C_LZ, sample_row!(true, "c_lz")),
    (Op::IMAGE_GATHER4_O, sample_row!(true, "o")),
    (Op::IMAGE_GATHER4_LZ_O, sample_row!(true, "lz_o")),
    (Op::IMAGE_GATHER4_C_LZ_O, sample_row!(true, "c_lz_o")),
    (Op::IMAGE_GATHER4_CL, sample_row!(true, "cl")),
    (Op::IMAGE_GATHER4_B_CL, sample_row!(true, "b_cl")),
    (Op::IMAGE_GATHER4_C_CL, sample_row!(true, "c_cl")),
    (Op::IMAGE_GATHER4_C_L, sample_row!(true, "c_l")),
    (Op::IMAGE_GATHER4_C_B, sample_row!(true, "c_b")),
    (Op::IMAGE_GATHER4_C_B_CL, sample_row!(true, "c_b_cl")),
];
