//! Parameter interpolation: the LDSDIR loads (`lds_param_load`,
//! `lds_direct_load`; gfx12's `ds_param_load`, `ds_direct_load`) and the
//! VINTERP ops (`v_interp_p10_*`, `v_interp_p2_*`), after RDNA3 ISA §12.2
//! "Pixel Parameter Interpolation", §12.4 "LDS Direct Load" and §16.13
//! "VINTERP Instructions" (RDNA4 likewise).
//!
//! A parameter load packs a quad's three parameters of one attribute
//! channel (P0, P10 = P1 - P0, P20 = P2 - P0) into lanes 0, 1 and 2 of the
//! quad (lane 3 gets 0); the VINTERP ops then read them across the quad
//! with fixed DPP8 lane selects, so each lane computes P0 + I·P10 + J·P20
//! with its own barycentrics I and J.
//!
//! The loads' `wait_vdst` / `wait_va_vdst` / `wait_vm_vsrc` fields and the
//! VINTERP `wait_exp` field order hardware pipelines: softgpu completes
//! every instruction before the next, so they are decoded and ignored.

use softgpu_isa::{sreg, Inst, Op};

use super::ds::lds_read;
use super::valu::{clamp01, clamp01_16};
use super::{Env, Exec, Flow, Result, Trap};
use crate::float::{f, f32_to_f16, flush16, flush32, fma32, h, Round};
use crate::trap::Use;
use crate::wave::{Lanes, Wave, MAX_LANES, NUM_VGPRS};

/// The destination VGPR of `i`, refused past the register file.
fn dst_vgpr(i: &Inst) -> Result<usize> {
    let r = super::vgpr(i.dst[0], "vdst")?;
    if r >= NUM_VGPRS {
        return Err(Trap::RegisterRange {
            op: i.op,
            file: 'v',
            index: r,
        });
    }
    Ok(r)
}

/// The wave's M0.
fn m0(w: &Wave) -> u32 {
    w.sgpr[sreg::M0 as usize]
}

/// The quads (groups of four lanes) that have an EXEC lane: LDSDIR
/// loads write all four lanes of such a quad ("LDS_PARAM_LOAD and
/// LDS_DIRECT_LOAD use EXEC per quad", §12.2.1).
fn live_quads(w: &Wave) -> impl Iterator<Item = usize> {
    let exec = w.exec();
    (0..w.lanes / 4).filter(move |q| exec >> (4 * q) & 0xf != 0)
}

/// Reads one LDS dword of a parameter load for lane `lane`, through the
/// sanitizer like a DS read; out of the workgroup's LDS it reads 0, as DS
/// loads do (§3.3.4.1).
fn lds_dword(w: &Wave, env: &mut Env, lane: usize, addr: u64) -> Result<u32> {
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds(w, Some(lane), Use::Read, addr, 4)?;
    }
    Ok(u32::from_le_bytes(lds_read::<4>(env.lds, addr)))
}

/// Where a wave's parameters start and how its quads map to primitives,
/// from M0 = { 0, new_prim_mask[15:1], lds_param_offset[15:0] }.
struct Prims {
    /// The byte offset of the parameters in LDS. Its bits [6:0] "must be
    /// set to zero"; what the hardware does with them is not documented:
    /// softgpu drops them, as a field counting 128-byte units would
    /// (uncertain).
    offset: u64,
    /// new_prim_mask with the implied 1 of quad 0 in bit 0, limited to the
    /// wave's quads.
    starts: u32,
}

impl Prims {
    fn new(w: &Wave) -> Prims {
        let m0 = m0(w);
        let quads = w.lanes / 4;
        let mask = (m0 >> 15 & 0xfffe | 1) & ((1u32 << quads) - 1);
        Prims {
            offset: (m0 & 0xff80) as u64,
            starts: mask,
        }
    }

    /// The primitives in the wave (NumPrimInVec).
    fn count(&self) -> u64 {
        self.starts.count_ones() as u64
    }

    /// Quad `q`'s primitive: how many primitives begin at or before it,
    /// less one.
    fn of_quad(&self, q: usize) -> u64 {
        let upto = (2u64 << q) - 1;
        (self.starts as u64 & upto).count_ones() as u64 - 1
    }
}

/// `lds_param_load vdst, attrN.c`: for each live quad, P0, P10 and P20 of
/// channel c of attribute N of the quad's primitive into lanes 0, 1, 2
/// and 0 into lane 3. A primitive's parameters are 12 dwords (P0.xyzw,
/// P10.xyzw, P20.xyzw) and an attribute's are those of every primitive
/// of the wave in turn: LDS_ADDR = param_offset + (attr · NumPrimInVec ·
/// 12 + prim · 12 + param · 4 + chan) dwords (§12.2.1).
fn param_load(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let dst = dst_vgpr(i)?;
    let (attr, chan) = ((i.aux >> 2) as u64, (i.aux & 3) as u64);
    let prims = Prims::new(w);
    for q in live_quads(w) {
        let prim = prims.of_quad(q);
        let dwords = (attr * prims.count() + prim) * 12 + chan;
        let base = prims.offset + 4 * dwords;
        let mut quad = [0u32; 4];
        for (param, slot) in quad.iter_mut().take(3).enumerate() {
            *slot = lds_dword(w, env, 4 * q + param, base + 16 * param as u64)?;
        }
        w.vgpr[dst][4 * q..4 * q + 4].copy_from_slice(&quad);
    }
    Ok(Flow::Next)
}

/// `lds_direct_load vdst`: the value at LDS byte address M0[15:0], of the
/// type M0[18:16] names (0 u8, 1 u16, 2 dword, 4 i8, 5 i16; narrow types
/// extended to 32 bits), into every lane of each live quad (§12.4). The
/// guide asks for a dword-aligned address; softgpu reads at the byte
/// address as given, as DS loads do. A reserved type (3, 6, 7) is refused
/// by name.
fn direct_load(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let dst = dst_vgpr(i)?;
    let m0 = m0(w);
    let addr = (m0 & 0xffff) as u64;
    let (bytes, signed) = match m0 >> 16 & 7 {
        0 => (1, false),
        1 => (2, false),
        2 => (4, false),
        4 => (1, true),
        5 => (2, true),
        t => {
            return Err(Trap::UnsupportedForm {
                op: i.op,
                why: format!("LDS direct load data type {t} (M0[18:16]; 3, 6 and 7 are reserved)"),
            })
        }
    };
    let Some(first) = live_quads(w).next() else {
        return Ok(Flow::Next);
    };
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds(w, Some(4 * first), Use::Read, addr, bytes)?;
    }
    let value = match (bytes, signed) {
        (1, false) => lds_read::<1>(env.lds, addr)[0] as u32,
        (1, true) => lds_read::<1>(env.lds, addr)[0] as i8 as i32 as u32,
        (2, false) => u16::from_le_bytes(lds_read::<2>(env.lds, addr)) as u32,
        (2, true) => i16::from_le_bytes(lds_read::<2>(env.lds, addr)) as i32 as u32,
        _ => u32::from_le_bytes(lds_read::<4>(env.lds, addr)),
    };
    for q in live_quads(w) {
        w.vgpr[dst][4 * q..4 * q + 4].fill(value);
    }
    Ok(Flow::Next)
}

/// Which pass a VINTERP op is: P10 reads S0 from lane 1 and S2 from lane
/// 0 of the quad (P10 and P0); P2 reads S0 from lane 2 (P20) and S2 from
/// the lane itself (the P10 pass's result).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    P10,
    P2,
}

/// What a VINTERP op's parameters and result are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Width {
    /// `_f32`: f32 parameters, f32 result.
    F32,
    /// `_f16_f32`: f16 parameters (OPSEL picks the half), f32
    /// barycentrics; P10 gives an f32, P2 an f16 (OPSEL[3] picks the half
    /// of the destination it writes).
    F16 { rtz: bool },
}

/// One VINTERP op.
#[derive(Clone, Copy)]
struct Interp {
    pass: Pass,
    width: Width,
}

/// A VINTERP source's lanes as f32 values: f16 halves (OPSEL bit `k`
/// picks the high half) widened when `half`, denormals flushed as MODE
/// says for the source's type, NEG bit `k` applied ("for 16-bit
/// interpolation this applies to both low and high halves": the half
/// read is negated either way).
fn source(w: &Wave, i: &Inst, k: usize, half: bool) -> [f32; MAX_LANES] {
    let mut buf: Lanes = [0; MAX_LANES];
    let raw = w.vsrc(i.src[k], &mut buf);
    let hi = i.mods.opsel >> k & 1 != 0;
    let (flush16_in, flush32_in) = (w.mode.flush_in_f16_f64(), w.mode.flush_in_f32());
    let neg = i.mods.neg >> k & 1 != 0;
    let mut out = [0f32; MAX_LANES];
    for (l, v) in out.iter_mut().enumerate().take(w.lanes) {
        let x = if half {
            let bits = if hi { raw[l] >> 16 } else { raw[l] & 0xffff };
            h(if flush16_in { flush16(bits) } else { bits })
        } else {
            f(if flush32_in { flush32(raw[l]) } else { raw[l] })
        };
        *v = if neg { -x } else { x };
    }
    out
}

/// `v_interp_p10_*` / `v_interp_p2_*` (§16.13): per EXEC lane l of quad
/// base b,
/// - P10: D = fma(S0[b + 1], S1[l], S2[b])
/// - P2:  D = fma(S0[b + 2], S1[l], S2[l])
///
/// "Performs a V_FMA_F32 operation using fixed DPP8 settings": one f32
/// rounding by MODE (toward zero for the `_rtz` ops). The source lanes
/// are read whether or not EXEC has them (the parameter load filled the
/// whole quad; the guide does not say what a disabled source lane reads).
/// The `_f16_f32` P2 result is then converted to f16 ("16'F(32'F(S0) *
/// S1 + S2)": a second rounding, by MODE's f16 round mode, as
/// `v_fma_mixlo_f16` does), written to the half OPSEL[3] names. CLAMP
/// clamps the result to [0, 1].
fn interp(w: &mut Wave, _: &mut Env, i: &Inst, op: Interp) -> Result {
    let dst = dst_vgpr(i)?;
    let half = matches!(op.width, Width::F16 { .. });
    let (s0, s1, s2) = (
        source(w, i, 0, half),
        source(w, i, 1, false),
        source(w, i, 2, half && op.pass == Pass::P10),
    );
    let fp = w.mode.fp();
    let rtz = matches!(op.width, Width::F16 { rtz: true });
    let (r32, r16) = if rtz {
        (Round::Zero, Round::Zero)
    } else {
        (fp.r32, fp.r16)
    };
    let dx10 = w.mode.dx10_clamp();
    let (flush32_out, flush16_out) = (w.mode.flush_out_f32(), w.mode.flush_out_f16_f64());
    let exec = w.exec();
    for l in (0..w.lanes).filter(|l| exec >> l & 1 != 0) {
        let quad = l & !3;
        let x = match op.pass {
            Pass::P10 => fma32(s0[quad + 1], s1[l], s2[quad], r32),
            Pass::P2 => fma32(s0[quad + 2], s1[l], s2[l], r32),
        };
        let d = &mut w.vgpr[dst][l];
        if half && op.pass == Pass::P2 {
            let v = f32_to_f16(x, r16);
            let v = if i.mods.clamp { clamp01_16(v, dx10) } else { v };
            let v = if flush16_out { flush16(v) } else { v };
            *d = if i.mods.opsel & 8 != 0 {
                *d & 0xffff | v << 16
            } else {
                *d & 0xffff_0000 | v
            };
        } else {
            let v = if i.mods.clamp { clamp01(x, dx10) } else { x }.to_bits();
            *d = if flush32_out { flush32(v) } else { v };
        }
    }
    Ok(Flow::Next)
}

const fn form(pass: Pass, width: Width) -> Interp {
    Interp { pass, width }
}

/// The interpolation ops' handlers (gfx12's `ds_param_load` and
/// `ds_direct_load` are renames, `super::RENAMED`).
pub const TABLE: &[(Op, Exec)] = &[
    (Op::LDS_PARAM_LOAD, bind!(param_load)),
    (Op::LDS_DIRECT_LOAD, bind!(direct_load)),
    (
        Op::V_INTERP_P10_F32,
        bind!(interp, form(Pass::P10, Width::F32)),
    ),
    (
        Op::V_INTERP_P2_F32,
        bind!(interp, form(Pass::P2, Width::F32)),
    ),
    (
        Op::V_INTERP_P10_F16_F32,
        bind!(interp, form(Pass::P10, Width::F16 { rtz: false })),
    ),
    (
        Op::V_INTERP_P2_F16_F32,
        bind!(interp, form(Pass::P2, Width::F16 { rtz: false })),
    ),
    (
        Op::V_INTERP_P10_RTZ_F16_F32,
        bind!(interp, form(Pass::P10, Width::F16 { rtz: true })),
    ),
    (
        Op::V_INTERP_P2_RTZ_F16_F32,
        bind!(interp, form(Pass::P2, Width::F16 { rtz: true })),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(lanes: usize, m0: u32) -> Wave {
        let mut w = Wave::new();
        w.lanes = lanes;
        w.sgpr[sreg::M0 as usize] = m0;
        w
    }

    /// new_prim_mask 0b0110 (quads 1 and 2 begin primitives; quad 0
    /// always does): quads 0..3 are primitives 0, 1, 2, 2, and the rest of
    /// a wave32's eight quads stay in primitive 2.
    #[test]
    fn quads_map_to_primitives() {
        let p = Prims::new(&wave(32, 0b0110 << 15 | 0x80));
        assert_eq!(p.offset, 0x80);
        assert_eq!(p.count(), 3);
        let prims: Vec<u64> = (0..8).map(|q| p.of_quad(q)).collect();
        assert_eq!(prims, [0, 1, 2, 2, 2, 2, 2, 2]);
    }

    /// A wave32 ignores mask bits of quads it does not have; the offset's
    /// low seven bits are dropped.
    #[test]
    fn mask_bits_past_the_wave_are_ignored() {
        let p = Prims::new(&wave(32, 0x7fff_0000 | 0x7f));
        assert_eq!((p.count(), p.offset), (8, 0));
        let p = Prims::new(&wave(64, 0x7fff_0000));
        assert_eq!(p.count(), 16);
        assert_eq!(p.of_quad(15), 15);
    }
}
