//! Sampling: mip level selection, coordinate scaling, addressing modes,
//! point and bilinear filtering, border colours and gather4's taps.
//!
//! Filtering follows the usual hardware recipe (OpenCL's and D3D's
//! sampling rules, which AMD's texture units implement): a normalised
//! coordinate is scaled by the level's size; point sampling takes the
//! texel `floor(u)`; bilinear takes `floor(u - 0.5)` and the next texel,
//! weighted by the fraction. The fraction is fixed point with 8 bits
//! (1/256 steps), truncated: uncertain, as AMD does not publish the
//! filter's precision; 8 fractional bits is the common reading (CUDA
//! documents 8 for its texture units). The taps are blended x first,
//! then y, then z, each as `a * (1 - f) + b * f` in f32.

use super::desc::{Border, Clamp, Resource, Sampler};
use super::{is_int, Dim, Env, Image, Result, SampleArgs, Texel};
use crate::wave::Wave;

/// Where a sample's level of detail comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lod {
    /// From derivatives across the quad (plain `image_sample`).
    Implicit,
    /// The `_l` forms: an address dword.
    Explicit,
    /// The `_lz` forms: 0.
    Zero,
    /// The `_d` forms: from the derivatives in the addresses.
    Derivatives,
}

/// Whether `zref FUNC texel` holds (SQ_TEX_DEPTH_COMPARE_*: 0 never, 1
/// less, 2 equal, 3 less or equal, 4 greater, 5 not equal, 6 greater or
/// equal, 7 always; the reference on the left, as Vulkan's and D3D's
/// compare samplers put it).
fn passes(func: u32, zref: f32, texel: f32) -> bool {
    match func {
        0 => false,
        1 => zref < texel,
        2 => zref == texel,
        3 => zref <= texel,
        4 => zref > texel,
        5 => zref != texel,
        6 => zref >= texel,
        _ => true,
    }
}

/// The LOD of derivatives `derivs` (d/dx and d/dy of each axis, in
/// coordinate units), the plain formula: each scaled by the base level's
/// size (1 for unnormalized coordinates), LOD = log2(max(|d/dx|, |d/dy|))
/// (isotropic; the hardware's approximation of the lengths and its
/// precision are not documented: uncertain).
pub(super) fn lod_of(img: &Image, unnormalized: bool, dim: Dim, derivs: [[f32; 3]; 2]) -> f32 {
    let lv = img.layout.level(&img.r, img.r.base_level);
    let sizes = [lv.width, lv.height, lv.depth];
    let length = |d: [f32; 3]| {
        (0..dim.axes)
            .map(|axis| {
                let scale = if unnormalized {
                    1.0
                } else {
                    sizes[axis] as f32
                };
                (d[axis] * scale).powi(2)
            })
            .sum::<f32>()
            .sqrt()
    };
    length(derivs[0]).max(length(derivs[1])).log2()
}

/// `lod` clamped to the sampler's [MIN_LOD, MAX_LOD], with `_cl`'s clamp
/// `min_lod` raising the lower bound (MAX_LOD wins if they cross: the
/// guide does not order them), and to the levels in view. A NaN LOD is 0.
pub(super) fn clamped_lod(r: &Resource, s: &Sampler, lod: f32, min_lod: f32) -> f32 {
    let lod = if lod.is_nan() { 0.0 } else { lod };
    let in_view = r.last_level.saturating_sub(r.base_level) as f32;
    lod.max(s.min_lod.max(min_lod))
        .min(s.max_lod)
        .min(in_view)
        .max(0.0)
}

/// One lane's sample of one image.
pub(super) struct Ctx<'a, 'c, 'e> {
    pub img: &'a Image,
    pub s: &'a Sampler,
    pub dim: Dim,
    pub unnormalized: bool,
    /// `_c`: the depth compare function and reference value.
    pub compare: Option<(u32, f32)>,
    pub w: &'a Wave,
    pub env: &'c mut Env<'e>,
    pub lane: usize,
}

/// One axis's taps: (texel index, weight).
type Taps = [(i64, f32); 2];

/// Fixed-point steps of a filter weight.
const WEIGHT_STEPS: f32 = 256.0;

impl Ctx<'_, '_, '_> {
    /// The LOD of lane's sample before clamping, bias added: the `_l`
    /// address, 0, or from the `_d` derivatives or the quad's (`quad`).
    pub fn lod(&self, a: &SampleArgs, kind: Lod, quad: Option<[[f32; 3]; 2]>) -> f32 {
        let from = |d| lod_of(self.img, self.unnormalized, self.dim, d);
        let lod = match kind {
            Lod::Explicit => a.lod,
            Lod::Zero => 0.0,
            Lod::Derivatives => from(a.derivs),
            Lod::Implicit => quad.map_or(0.0, from),
        };
        lod + a.bias
    }

    /// The filtered texel (32-bit components, before DST_SEL).
    pub fn sample(&mut self, a: &SampleArgs) -> Result<[u32; 4]> {
        let (lod, level, blend) = self.levels(a.lod, a.min_lod);
        let linear = if lod > 0.0 {
            self.s.min_linear
        } else {
            self.s.mag_linear
        };
        let first = self.filtered(a, level, linear)?;
        match blend {
            Some((next, f)) if !is_int(&self.img.df) => {
                let second = self.filtered(a, next, linear)?;
                Ok(std::array::from_fn(|c| lerp(first[c], second[c], f)))
            }
            _ => Ok(first),
        }
    }

    /// Gather4: component `comp` (after DST_SEL) of the four bilinear
    /// taps at the level, in the order x (i0, j1), y (i1, j1), z (i1,
    /// j0), w (i0, j0).
    pub fn gather(&mut self, a: &SampleArgs, comp: usize) -> Result<[u32; 4]> {
        let (_, level, _) = self.levels(a.lod, a.min_lod);
        let (taps, layer) = self.taps(a, level, true);
        let order = [(0, 1), (1, 1), (1, 0), (0, 0)];
        let mut out = [0; 4];
        for (k, &(i, j)) in order.iter().enumerate() {
            let texel = self.fetch([taps[0][i].0, taps[1][j].0, 0], layer, level)?;
            out[k] = self.img.swizzle(texel)[comp];
        }
        Ok(out)
    }

    /// The clamped LOD, the level it selects and, for linear mip
    /// filtering, the next level with its weight.
    fn levels(&self, lod: f32, min_lod: f32) -> (f32, u32, Option<(u32, f32)>) {
        let (r, s) = (&self.img.r, self.s);
        let lod = if lod.is_nan() { 0.0 } else { lod };
        let lod = lod.max(s.min_lod.max(min_lod)).min(s.max_lod);
        let last = r.last_level.max(r.base_level);
        let at = |step: f32| (r.base_level + step.max(0.0) as u32).min(last);
        match s.mip_filter {
            0 => (lod, r.base_level, None),
            1 => (lod, at((lod + 0.5).floor()), None),
            _ => {
                let whole = lod.max(0.0).floor();
                let f = quantize(lod.max(0.0) - whole);
                let level = at(whole);
                (lod, level, (level < last).then_some((level + 1, f)))
            }
        }
    }

    /// The point or bilinear filtered texel of level `level`.
    fn filtered(&mut self, a: &SampleArgs, level: u32, linear: bool) -> Result<[u32; 4]> {
        let linear = linear && !is_int(&self.img.df);
        let (taps, layer) = self.taps(a, level, linear);
        if !linear {
            return self.fetch([taps[0][0].0, taps[1][0].0, taps[2][0].0], layer, level);
        }
        // Blend the 2 x 2 x 2 taps (the axes past the dim's are one tap of
        // weight 1, blended with weight 0) x first, then y, then z.
        let mut corner = [[0u32; 4]; 8];
        for (n, slot) in corner.iter_mut().enumerate() {
            let pick = |axis: usize| taps[axis][n >> axis & 1];
            if (0..3).any(|axis| n >> axis & 1 == 1 && pick(axis).1 == 0.0) {
                continue;
            }
            *slot = self.fetch([pick(0).0, pick(1).0, pick(2).0], layer, level)?;
        }
        let mut width = 8;
        for axis in 0..3 {
            let f = taps[axis][1].1;
            width /= 2;
            for n in 0..width {
                let (lo, hi) = (corner[2 * n], corner[2 * n + 1]);
                corner[n] = std::array::from_fn(|c| lerp(lo[c], hi[c], f));
            }
        }
        Ok(corner[0])
    }

    /// Each axis's taps at `level` and the array layer.
    fn taps(&self, a: &SampleArgs, level: u32, linear: bool) -> ([Taps; 3], u32) {
        let lv = self.img.layout.level(&self.img.r, level);
        let sizes = [lv.width, lv.height, lv.depth];
        let mut taps = [[(0i64, 1.0f32), (0, 0.0)]; 3];
        for axis in 0..self.dim.axes {
            let scale = if self.unnormalized {
                1.0
            } else {
                sizes[axis] as f32
            };
            let u = a.coords[axis] * scale + a.offsets[axis] as f32;
            taps[axis] = if linear {
                // Fixed point with 8 fractional bits, truncated.
                let fx = ((u - 0.5) * WEIGHT_STEPS).floor() as i64;
                let f = (fx & 0xff) as f32 / WEIGHT_STEPS;
                [(fx >> 8, 1.0 - f), ((fx >> 8).saturating_add(1), f)]
            } else {
                [(u.floor() as i64, 1.0), (0, 0.0)]
            };
        }
        (taps, self.layer(a))
    }

    /// The array layer a sample reads: the slice coordinate rounded to
    /// nearest even and clamped to the layers in view.
    fn layer(&self, a: &SampleArgs) -> u32 {
        if !self.dim.array {
            return 0;
        }
        let last = super::layers(&self.img.r).saturating_sub(1) as f32;
        let c = a.coords[self.dim.axes];
        let c = if c.is_nan() { 0.0 } else { c };
        c.round_ties_even().clamp(0.0, last) as u32
    }

    /// The texel at indices `at` as [`Ctx::texel`] reads it, its X
    /// component replaced by the depth compare's 1.0 or 0.0 for `_c` (so
    /// filtering blends the results, percentage-closer filtering; what
    /// the other components hold then is not documented: they stay).
    fn fetch(&mut self, at: [i64; 3], layer: u32, level: u32) -> Result<[u32; 4]> {
        let mut t = self.texel(at, layer, level)?;
        if let Some((func, zref)) = self.compare {
            let pass = passes(func, zref, f32::from_bits(t[0]));
            t[0] = if pass { 1f32 } else { 0f32 }.to_bits();
        }
        Ok(t)
    }

    /// The texel at indices `at` (before addressing) as 32-bit values, or
    /// the border colour when an axis addresses outside the image.
    fn texel(&mut self, at: [i64; 3], layer: u32, level: u32) -> Result<[u32; 4]> {
        let lv = self.img.layout.level(&self.img.r, level);
        let sizes = [lv.width, lv.height, lv.depth];
        let mut t = [0u32; 3];
        for axis in 0..3 {
            let used = axis < self.dim.axes;
            t[axis] = match used {
                true => match address(self.s.clamp[axis], at[axis], sizes[axis]) {
                    Some(v) => v,
                    None => return Ok(self.border()),
                },
                false => 0,
            };
        }
        let texel = Texel {
            x: t[0],
            y: t[1],
            z: t[2],
            layer,
        };
        match self.img.locate(texel, level) {
            Some(addr) => {
                let raw = self.img.read(self.w, self.env, self.lane, addr)?;
                Ok(self.img.convert(raw))
            }
            None => Ok([0; 4]),
        }
    }

    /// The sampler's border colour as texel components (before DST_SEL;
    /// uncertain: whether the hardware swizzles it is not documented).
    fn border(&self) -> [u32; 4] {
        let one = if is_int(&self.img.df) {
            1
        } else {
            1f32.to_bits()
        };
        match self.s.border {
            Border::OpaqueBlack => [0, 0, 0, one],
            Border::OpaqueWhite => [one; 4],
            Border::TransparentBlack | Border::Table => [0; 4],
        }
    }
}

/// `f` truncated to the filter's fixed-point steps.
fn quantize(f: f32) -> f32 {
    (f * WEIGHT_STEPS).floor() / WEIGHT_STEPS
}

/// `a * (1 - f) + b * f` on f32 bits (`a` itself at weight 0, so a
/// weightless tap never matters, even a NaN).
fn lerp(a: u32, b: u32, f: f32) -> u32 {
    if f == 0.0 {
        return a;
    }
    let (a, b) = (f32::from_bits(a), f32::from_bits(b));
    (a * (1.0 - f) + b * f).to_bits()
}

/// Texel index `i` of an axis of `n` texels under addressing mode `c`, or
/// `None` for the border.
pub(super) fn address(c: Clamp, i: i64, n: u32) -> Option<u32> {
    let n = n.max(1) as i64;
    let v = match c {
        Clamp::Wrap => i.rem_euclid(n),
        Clamp::Mirror => {
            let m = i.rem_euclid(2 * n);
            if m >= n {
                2 * n - 1 - m
            } else {
                m
            }
        }
        Clamp::ClampLastTexel => i.clamp(0, n - 1),
        Clamp::MirrorOnceLastTexel => mirror_once(i).min(n - 1),
        Clamp::ClampBorder => (0..n).contains(&i).then_some(i)?,
        Clamp::MirrorOnceBorder => Some(mirror_once(i)).filter(|&m| m < n)?,
    };
    Some(v as u32)
}

/// `i` mirrored once about 0 (-1 → 0, -2 → 1).
fn mirror_once(i: i64) -> i64 {
    if i < 0 {
        -(i + 1)
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Addressing modes on a 4-texel axis (OpenCL 1.2 §8.2 defines the
    /// same results for repeat, mirrored repeat, clamp to edge and
    /// clamp to border).
    #[test]
    fn addressing_modes() {
        let at = |c, i| address(c, i, 4);
        assert_eq!(
            [-1, 4, 9].map(|i| at(Clamp::Wrap, i)),
            [Some(3), Some(0), Some(1)]
        );
        // Mirror: 0 1 2 3 | 3 2 1 0 | 0 1 …; below 0: -1 → 0, -5 → 3.
        assert_eq!(
            [4, 7, 8, -1, -5].map(|i| at(Clamp::Mirror, i)),
            [3, 0, 0, 0, 3].map(Some)
        );
        assert_eq!(
            [-3, 9].map(|i| at(Clamp::ClampLastTexel, i)),
            [Some(0), Some(3)]
        );
        assert_eq!(
            [-2, 5].map(|i| at(Clamp::MirrorOnceLastTexel, i)),
            [Some(1), Some(3)]
        );
        assert_eq!(
            [-1, 4, 2].map(|i| at(Clamp::ClampBorder, i)),
            [None, None, Some(2)]
        );
        assert_eq!(
            [-4, -5].map(|i| at(Clamp::MirrorOnceBorder, i)),
            [Some(3), None]
        );
        assert_eq!(
            address(Clamp::Wrap, i64::MAX, 3),
            Some((i64::MAX % 3) as u32)
        );
    }

    #[test]
    fn weights_are_in_256ths() {
        assert_eq!(quantize(0.999), 255.0 / 256.0);
        assert_eq!(quantize(0.25), 0.25);
        assert_eq!(
            f32::from_bits(lerp(0f32.to_bits(), 1f32.to_bits(), 0.25)),
            0.25
        );
    }
}
