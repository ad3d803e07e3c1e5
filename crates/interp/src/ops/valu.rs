//! Vector ALU: VOP1, VOP2, VOP3, VOP3SD, VOP3P and VOPD.
//!
//! Most instructions are a pure per-lane function listed in a table; a few
//! generic drivers fetch the sources for the whole wave (applying DPP,
//! half-selects, abs/neg and denormal flushing by the operand types the
//! decoder reports), run the function over every lane, apply clamp/omod and
//! write the lanes EXEC enables.

use softgpu_isa::{Class, Inst, LaneSel, Op, Operand, Sdwa, Ty};

use super::{cross_lane, Env, Exec, Flow, Result, Scratch};
use crate::float::NanRule::{Number, Propagate};
use crate::float::*;
use crate::wave::{Lanes, Wave, MAX_LANES};

/// A per-lane function of up to three 32-bit sources, applied to `n` lanes
/// under the MODE state float ops read.
pub type LaneFn = fn(&Lanes, &Lanes, &Lanes, &mut Lanes, usize, Fp);

static ZERO: Lanes = [0; MAX_LANES];

/// The destination range of an integer op. Such an op's lane function
/// gives its exact result; without clamp the op writes the low bits, with
/// VOP3's clamp bit it saturates to the range ("for integer operations,
/// clamp means the result is clamped to the largest and smallest
/// representable value").
#[derive(Clone, Copy)]
pub enum Range {
    U16,
    I16,
    U32,
    I32,
}

impl Range {
    #[inline(always)]
    pub fn wrap(self, v: i64) -> u32 {
        match self {
            Range::U16 | Range::I16 => v as u32 & 0xffff,
            Range::U32 | Range::I32 => v as u32,
        }
    }

    #[inline(always)]
    pub fn saturate(self, v: i64) -> u32 {
        let (lo, hi) = match self {
            Range::U16 => (0, 0xffff),
            Range::I16 => (i16::MIN as i64, i16::MAX as i64),
            Range::U32 => (0, u32::MAX as i64),
            Range::I32 => (i32::MIN as i64, i32::MAX as i64),
        };
        self.wrap(v.clamp(lo, hi))
    }
}

/// Fetches 32-bit source `k` for every lane, with its modifiers applied.
#[inline(always)]
pub fn fetch<'a>(w: &'a Wave, i: &Inst, k: usize, ty: Ty, buf: &'a mut Lanes) -> &'a Lanes {
    let op = i.src[k];
    if op == Operand::None {
        return &ZERO;
    }
    let n = w.lanes;
    if ty == Ty::Mask {
        let mask = w.read_mask(op);
        for (l, v) in buf[..n].iter_mut().enumerate() {
            *v = (mask >> l) as u32 & 1;
        }
        return buf;
    }
    let bit = 1u8 << k;
    // gfx10 SDWA selects a part of src0/src1 (src2 is whole).
    let select = i
        .sdwa
        .filter(|_| k < 2)
        .map(|s| (s.src_sel[k], s.sext & bit != 0));
    let half = matches!(ty, Ty::F16 | Ty::B16 | Ty::BF16) && i.mods.opsel & bit != 0;
    let float_mods = (i.mods.abs | i.mods.neg) & bit != 0;
    let flush = match ty {
        Ty::F32 => w.mode.flush_in_f32(),
        Ty::F16 | Ty::V2F16 => w.mode.flush_in_f16_f64(),
        _ => false,
    };
    let has_dpp = k == 0 && i.lane_sel != LaneSel::None;
    if !(half || float_mods || flush || has_dpp || select.is_some()) {
        return w.vsrc(op, buf);
    }
    if has_dpp {
        cross_lane::dpp_fetch(w, op, i.lane_sel, cross_lane::gcn_dpp(i), buf);
    } else {
        w.load_src(op, buf);
    }
    if let Some((sel, sext)) = select {
        // Selected and extended first: abs/neg and flushing act on the
        // selected value, as the op's own operand.
        buf[..n]
            .iter_mut()
            .for_each(|v| *v = sdwa_select(*v, sel, sext));
    }
    if half {
        buf[..n].iter_mut().for_each(|v| *v >>= 16);
    }
    if float_mods {
        // A 16-bit operand's sign is bit 15, typed or not (v_cndmask_b16
        // takes f16 abs/neg on its B16 sources; a class test reads its f16
        // source raw, as B16).
        let sign = match ty {
            Ty::F16 | Ty::BF16 | Ty::B16 => 0x8000,
            _ => 0x8000_0000,
        };
        let abs = i.mods.abs & bit != 0;
        let neg = i.mods.neg & bit != 0;
        for v in &mut buf[..n] {
            if abs {
                *v &= !sign;
            }
            if neg {
                *v ^= sign;
            }
        }
    }
    if flush {
        match ty {
            Ty::F32 => buf[..n].iter_mut().for_each(|v| *v = flush32(*v)),
            Ty::F16 => buf[..n].iter_mut().for_each(|v| *v = flush16(*v)),
            _ => buf[..n].iter_mut().for_each(|v| *v = flush16x2(*v)),
        }
    }
    buf
}

/// Lanes that an instruction writes: EXEC, narrowed by DPP masks.
#[inline(always)]
pub fn write_mask(w: &Wave, i: &Inst) -> u64 {
    let exec = w.exec();
    if i.lane_sel == LaneSel::None {
        exec
    } else {
        exec & cross_lane::dpp_write_mask(w, i.src[0], i.lane_sel, cross_lane::gcn_dpp(i))
    }
}

/// The output modifier's factors: none, ×2, ×4, ÷2.
const OMOD: [f32; 4] = [1.0, 2.0, 4.0, 0.5];

/// Whether the output modifier applies: hardware ignores it in IEEE mode
/// and when the result type keeps output denormals (RDNA3 ISA, VOP3
/// output modifiers; the rule as AMD described it in LLVM review D30209).
#[inline(always)]
fn omod_applies(w: &Wave, i: &Inst, flush_out: bool) -> bool {
    i.mods.omod != 0 && !w.mode.ieee() && flush_out
}

/// What omod scales: a denormal result flushed, and −0 made +0 first.
#[inline(always)]
fn before_omod(x: f64, min_normal: f64) -> f64 {
    if x.abs() < min_normal {
        0.0
    } else {
        x
    }
}

/// Applies omod and clamp to float results, by destination type, then
/// flushes output denormals as MODE asks.
#[inline(always)]
fn output_mods(w: &Wave, i: &Inst, ty: Ty, res: &mut Lanes) {
    let n = w.lanes;
    let dx10 = w.mode.dx10_clamp();
    match ty {
        Ty::F32 => {
            let flush = w.mode.flush_out_f32();
            if omod_applies(w, i, flush) {
                let scale = OMOD[i.mods.omod as usize & 3] as f64;
                res[..n].iter_mut().for_each(|v| {
                    *v = ((before_omod(f(*v) as f64, f32::MIN_POSITIVE as f64) * scale) as f32)
                        .to_bits()
                });
            }
            if i.mods.clamp {
                res[..n]
                    .iter_mut()
                    .for_each(|v| *v = clamp01(f(*v), dx10).to_bits());
            }
            if flush {
                res[..n].iter_mut().for_each(|v| *v = flush32(*v));
            }
        }
        Ty::F16 => {
            if omod_applies(w, i, w.mode.flush_out_f16_f64()) {
                let scale = OMOD[i.mods.omod as usize & 3] as f64;
                res[..n]
                    .iter_mut()
                    .for_each(|v| *v = d_to_h(before_omod(h(*v) as f64, 6.103_515_625e-5) * scale));
            }
            if i.mods.clamp {
                res[..n].iter_mut().for_each(|v| *v = clamp01_16(*v, dx10));
            }
            if w.mode.flush_out_f16_f64() {
                res[..n].iter_mut().for_each(|v| *v = flush16(*v));
            }
        }
        Ty::V2F16 => {
            if i.mods.clamp {
                res[..n]
                    .iter_mut()
                    .for_each(|v| *v = clamp01_16(*v, dx10) | clamp01_16(*v >> 16, dx10) << 16);
            }
            if w.mode.flush_out_f16_f64() {
                res[..n].iter_mut().for_each(|v| *v = flush16x2(*v));
            }
        }
        _ => {}
    }
}

/// Clamp of the f16 in the low half of `v` (bits).
#[inline(always)]
pub(super) fn clamp01_16(v: u32, dx10: bool) -> u32 {
    if F16.is_nan(v as u64 & 0xffff) {
        return if dx10 { 0 } else { v & 0xffff | 0x200 };
    }
    to_h(clamp01(h(v), dx10))
}

/// VOP3 clamp of a float result to [0, 1]; a NaN becomes 0 under DX10
/// clamp and stays a (quiet) NaN otherwise.
pub(super) fn clamp01(x: f32, dx10: bool) -> f32 {
    clamp01_64(x as f64, dx10) as f32
}

fn clamp01_64(x: f64, dx10: bool) -> f64 {
    match (x.is_nan(), dx10) {
        (true, true) => 0.0,
        (true, false) => f64::from_bits(x.to_bits() | 1 << 51),
        _ => x.clamp(0.0, 1.0),
    }
}

/// The bit offset and width of an SDWA select (0-3 a byte, 4-5 a word),
/// or None for the whole dword (6; 7 is reserved and taken as 6).
#[inline(always)]
fn sdwa_field(sel: u8) -> Option<(u32, u32)> {
    match sel {
        0..=3 => Some((8 * sel as u32, 8)),
        4 | 5 => Some((16 * (sel as u32 - 4), 16)),
        _ => None,
    }
}

/// An SDWA source select (RDNA2 guide, "Sub-Dword Addressing": SRC_SEL,
/// SEXT): the selected byte or word moved to bit 0, zero- or
/// sign-extended to 32 bits.
#[inline(always)]
pub fn sdwa_select(v: u32, sel: u8, sext: bool) -> u32 {
    let Some((shift, width)) = sdwa_field(sel) else {
        return v;
    };
    let x = v >> shift;
    let pad = 32 - width;
    if sext {
        ((x << pad) as i32 >> pad) as u32
    } else {
        x << pad >> pad
    }
}

/// An SDWA destination (RDNA2 guide, DST_SEL, DST_UNUSED): the result's low
/// bits placed in the selected byte or word of `old`; the other bits are
/// zero (UNUSED_PAD, 0), zero below and the field's sign above
/// (UNUSED_SEXT, 1), or `old`'s (UNUSED_PRESERVE, 2; 3 is reserved and
/// taken as 2).
#[inline(always)]
pub fn sdwa_place(res: u32, old: u32, sel: u8, unused: u8) -> u32 {
    let Some((shift, width)) = sdwa_field(sel) else {
        return res;
    };
    let field_mask = (u32::MAX >> (32 - width)) << shift;
    let field = (res << shift) & field_mask;
    match unused {
        0 => field,
        1 => {
            let above = (u64::MAX << (shift + width)) as u32;
            let negative = res >> (width - 1) & 1 != 0;
            field | if negative { above } else { 0 }
        }
        _ => (old & !field_mask) | field,
    }
}

/// Writes an SDWA instruction's lanes: each result placed by DST_SEL into
/// the destination's old value. A 16-bit op's result is its low half,
/// zero-extended (as DST_SEL DWORD writes it).
#[inline(never)]
fn sdwa_store(w: &mut Wave, dst: Operand, s: Sdwa, ty: Ty, res: &Lanes, mask: u64) {
    let narrow = matches!(ty, Ty::F16 | Ty::B16 | Ty::BF16);
    let mut old = [0u32; MAX_LANES];
    let old = *w.vsrc(dst, &mut old);
    let mut out = [0u32; MAX_LANES];
    for l in 0..w.lanes {
        let r = if narrow { res[l] & 0xffff } else { res[l] };
        out[l] = sdwa_place(r, old[l], s.dst_sel, s.dst_unused);
    }
    w.write_v32(dst, &out, mask);
}

/// Whether `op`'s handler reads and writes through [`fetch`] and
/// `store`, and so runs its SDWA form: the pure lane ops, the 32-bit
/// compares, the carry adds (a rename by its twin) and gfx94's 8-bit
/// float reads, whose byte select SDWA is.
pub fn runs_sdwa(op: Op) -> bool {
    let op = super::renamed(op);
    let cmp32 = matches!(op.info().class, Class::Cmp { .. }) && op.info().src[0].dwords() == 1;
    let carry = matches!(
        op,
        Op::V_ADD_CO_U32
            | Op::V_SUB_CO_U32
            | Op::V_SUBREV_CO_U32
            | Op::V_ADD_CO_CI_U32
            | Op::V_SUB_CO_CI_U32
            | Op::V_SUBREV_CO_CI_U32
    );
    let fp8 = matches!(
        op,
        Op::V_CVT_F32_FP8 | Op::V_CVT_F32_BF8 | Op::V_CVT_PK_F32_FP8 | Op::V_CVT_PK_F32_BF8
    );
    lane_fn(op).is_some() || cmp32 || carry || fp8
}

/// The handler of an SDWA form no SDWA-aware handler runs.
pub fn sdwa_unsupported(_: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    Err(super::Trap::UnsupportedForm {
        op: i.op,
        why: "its SDWA form is not run (this op's handler reads no sub-dword selects)".into(),
    })
}

/// Writes a 32- or 16-bit result to the destination VGPR.
#[inline(always)]
pub(super) fn store(w: &mut Wave, i: &Inst, ty: Ty, res: &Lanes, mask: u64) {
    if let Some(s) = i.sdwa {
        return sdwa_store(w, i.dst[0], s, ty, res, mask);
    }
    let dst = i.dst[0];
    if matches!(ty, Ty::F16 | Ty::B16 | Ty::BF16) {
        let (reg, hi) = match dst {
            Operand::Vgpr(r) => (r, i.mods.opsel & 8 != 0),
            Operand::VgprHi(r) => (r, true),
            _ => return,
        };
        // GFX9's zeroing ops (the decoder's ZERO_HI16) clear the other half.
        let keep = if i.flags & softgpu_isa::flags::ZERO_HI16 != 0 {
            0
        } else {
            0xffff_0000
        };
        let d = &mut w.vgpr[reg as usize];
        for l in 0..w.lanes {
            if mask >> l & 1 != 0 {
                d[l] = if hi {
                    (d[l] & 0xffff) | res[l] << 16
                } else {
                    (d[l] & keep) | (res[l] & 0xffff)
                };
            }
        }
    } else {
        w.write_v32(dst, res, mask);
    }
}

/// Computes a 32-bit-lane instruction into `tmp.res[slot]` without writing
/// it: `run` applies the lane function to the fetched sources.
#[inline(always)]
fn compute(
    w: &Wave,
    i: &Inst,
    tmp: &mut Scratch,
    slot: usize,
    src: [Ty; 3],
    run: impl Fn(&Lanes, &Lanes, &Lanes, &mut Lanes, usize),
) -> Ty {
    let info = i.op.info();
    let [b0, b1, b2] = &mut tmp.src;
    let a = fetch(w, i, 0, src[0], b0);
    let b = fetch(w, i, 1, src[1], b1);
    let c = fetch(w, i, 2, src[2], b2);
    let res = &mut tmp.res[slot];
    run(a, b, c, res, w.lanes);
    output_mods(w, i, info.dst[0], res);
    info.dst[0]
}

/// Applies a lane function over `n` lanes (inlined into each handler so the
/// loop vectorises).
#[inline(always)]
fn each(f: impl Fn(u32, u32, u32) -> u32) -> impl Fn(&Lanes, &Lanes, &Lanes, &mut Lanes, usize) {
    move |a, b, c, r, n| {
        if n == 32 {
            each_n::<32>(&f, a, b, c, r)
        } else {
            each_n::<64>(&f, a, b, c, r)
        }
    }
}

/// The lane loop with a constant trip count, so it has no bounds checks and
/// vectorises.
#[inline(always)]
fn each_n<const N: usize>(
    f: &impl Fn(u32, u32, u32) -> u32,
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    r: &mut Lanes,
) {
    for l in 0..N {
        r[l] = f(a[l], b[l], c[l]);
    }
}

/// Runs a per-lane 32-bit instruction over the wave.
#[inline(always)]
pub fn vop(w: &mut Wave, env: &mut Env, i: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result {
    vop_with(w, env, i, i.op.info().src, f)
}

/// `vop` with the sources fetched as `src` says (see `src_tys!`).
#[inline(always)]
fn vop_with(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    src: [Ty; 3],
    f: impl Fn(u32, u32, u32) -> u32,
) -> Result {
    let ty = compute(w, i, env.tmp, 0, src, each(f));
    let mask = write_mask(w, i);
    store(w, i, ty, &env.tmp.res[0], mask);
    Ok(Flow::Next)
}

/// Runs a per-lane 32-bit instruction that the program bound as plain: no
/// modifiers, no DPP, only 32-bit operands, under the default MODE (see
/// `plain_mode`). It skips the per-operand type checks and denormal
/// handling of `vop`.
#[inline(always)]
pub fn vop_plain(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    f: impl Fn(u32, u32, u32) -> u32,
) -> Result {
    let [b0, b1, b2] = &mut env.tmp.src;
    let plain = |op: Operand, buf| {
        if op == Operand::None {
            &ZERO
        } else {
            w.vsrc(op, buf)
        }
    };
    let (a, b, c) = (
        plain(i.src[0], b0),
        plain(i.src[1], b1),
        plain(i.src[2], b2),
    );
    let res = &mut env.tmp.res[0];
    each(f)(a, b, c, res, w.lanes);
    let exec = w.exec();
    w.write_v32(i.dst[0], res, exec);
    Ok(Flow::Next)
}

/// Whether a plain handler may run: f32 denormals kept and the default
/// rounding and IEEE state (the compute default, so nearly always). Under
/// any other MODE the op's general handler runs instead, so each plain
/// handler is one instance of its lane function, not one per MODE state.
#[inline(always)]
fn plain_mode(mode: crate::wave::Mode) -> bool {
    !mode.flush_f32() && mode.fp() == Fp::DEFAULT
}

/// The general handler of `i`'s op, for a plain one under a MODE it does
/// not serve: looked up rather than inlined, so the general path is
/// compiled once per op.
#[cold]
#[inline(never)]
fn general(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    match super::handler(i.op) {
        Some(exec) => exec(w, env, i),
        None => Err(super::Trap::Unsupported),
    }
}

/// Whether `i` can run on a plain handler: 32-bit operands only, no source
/// or output modifiers, no DPP.
pub fn is_plain(i: &Inst) -> bool {
    let info = i.op.info();
    let wide = |t: Ty| matches!(t, Ty::None | Ty::B32 | Ty::F32);
    i.mods == Default::default()
        && i.lane_sel == LaneSel::None
        && i.sdwa.is_none()
        && info.src.iter().chain(&info.dst[..1]).all(|&t| wide(t))
        && !i
            .src
            .iter()
            .chain(&i.dst)
            .any(|o| matches!(o, Operand::VgprHi(_)))
}

/// Fetches a source of any width as 64-bit lanes.
#[inline(always)]
pub fn fetch64(w: &Wave, i: &Inst, k: usize, ty: Ty, out: &mut [u64; MAX_LANES]) {
    let op = i.src[k];
    let n = w.lanes;
    if op == Operand::None {
        return;
    }
    if ty.dwords() == 2 {
        match op {
            Operand::Vgpr(r) => {
                let (lo, hi) = (
                    &w.vgpr[r as usize],
                    &w.vgpr[(r as usize + 1) % w.vgpr.len()],
                );
                for l in 0..n {
                    out[l] = lo[l] as u64 | (hi[l] as u64) << 32;
                }
            }
            other => out[..n].fill(w.read_s64(other)),
        }
        let bit = 1u8 << k;
        if ty == Ty::F64 && (i.mods.abs | i.mods.neg) & bit != 0 {
            let sign = 1u64 << 63;
            for v in &mut out[..n] {
                if i.mods.abs & bit != 0 {
                    *v &= !sign;
                }
                if i.mods.neg & bit != 0 {
                    *v ^= sign;
                }
            }
        }
        if ty == Ty::F64 && w.mode.flush_in_f16_f64() {
            out[..n].iter_mut().for_each(|v| *v = flush64(*v));
        }
    } else {
        let mut buf = [0u32; MAX_LANES];
        let src = fetch(w, i, k, ty, &mut buf);
        for l in 0..n {
            out[l] = src[l] as u64;
        }
    }
}

/// Runs a per-lane instruction whose operands may be 64-bit.
#[inline(always)]
pub fn vop64(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64, u64) -> u64) -> Result {
    let info = i.op.info();
    let n = w.lanes;
    let (mut a, mut b, mut c) = ([0u64; MAX_LANES], [0u64; MAX_LANES], [0u64; MAX_LANES]);
    fetch64(w, i, 0, info.src[0], &mut a);
    fetch64(w, i, 1, info.src[1], &mut b);
    fetch64(w, i, 2, info.src[2], &mut c);
    let mask = write_mask(w, i);
    let dst_ty = info.dst[0];
    if dst_ty.dwords() == 2 {
        let Operand::Vgpr(r) = i.dst[0] else {
            return Ok(Flow::Next);
        };
        let r = r as usize;
        for l in 0..n {
            if mask >> l & 1 != 0 {
                let mut v = f(a[l], b[l], c[l]);
                if dst_ty == Ty::F64 {
                    v = output_mods64(w, i, v);
                }
                w.vgpr[r][l] = v as u32;
                w.vgpr[(r + 1) % w.vgpr.len()][l] = (v >> 32) as u32;
            }
        }
    } else {
        let mut res = [0u32; MAX_LANES];
        for l in 0..n {
            res[l] = f(a[l], b[l], c[l]) as u32;
        }
        output_mods(w, i, dst_ty, &mut res);
        store(w, i, dst_ty, &res, mask);
    }
    Ok(Flow::Next)
}

fn output_mods64(w: &Wave, i: &Inst, v: u64) -> u64 {
    let mut x = d(v);
    let flush = w.mode.flush_out_f16_f64();
    if omod_applies(w, i, flush) {
        x = before_omod(x, f64::MIN_POSITIVE) * OMOD[i.mods.omod as usize & 3] as f64;
    }
    if i.mods.clamp {
        x = clamp01_64(x, w.mode.dx10_clamp());
    }
    if flush {
        flush64(x.to_bits())
    } else {
        x.to_bits()
    }
}

/// VOP3SD and carry forms: a 32-bit result plus a per-lane carry/borrow
/// written to a lane mask (`dst[1]`). `src[2]` is the carry-in mask, if
/// any. `f` gives the exact result: outside [0, 2^32) it carries or
/// borrows, and with clamp it saturates instead of wrapping.
#[inline(always)]
fn carry(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32, bool) -> i64) -> Result {
    let n = w.lanes;
    let (mut b0, mut b1) = ([0u32; MAX_LANES], [0u32; MAX_LANES]);
    let a = fetch(w, i, 0, Ty::B32, &mut b0);
    let b = fetch(w, i, 1, Ty::B32, &mut b1);
    let cin = if i.src[2] == Operand::None {
        0
    } else {
        w.read_mask(i.src[2])
    };
    let exec = write_mask(w, i);
    let mut res = [0u32; MAX_LANES];
    let mut cout = 0u64;
    for l in 0..n {
        let exact = f(a[l], b[l], cin >> l & 1 != 0);
        res[l] = if i.mods.clamp {
            Range::U32.saturate(exact)
        } else {
            Range::U32.wrap(exact)
        };
        cout |= (!(0..=u32::MAX as i64).contains(&exact) as u64) << l;
    }
    store(w, i, Ty::B32, &res, exec);
    // Lanes the instruction does not write get 0 in the mask, as compares
    // give them: clang reads such a mask back as a uniform carry.
    w.write_mask(i.dst[1], cout & exec);
    Ok(Flow::Next)
}

/// `v_mad_u64_u32` / `v_mad_i64_i32`: `{D1, D0} = 65-bit S0 * S1 + S2`
/// (VOP3SD pseudocode), so D1 is bit 64 of the exact result: the carry
/// out for the unsigned form, the sign for the signed one (the exact value
/// always fits in 65 bits). Clamp saturates D0 to the 64-bit range.
fn mad64(w: &mut Wave, i: &Inst, signed: bool) -> Result {
    let n = w.lanes;
    let (mut b0, mut b1) = ([0u32; MAX_LANES], [0u32; MAX_LANES]);
    let a = *fetch(w, i, 0, Ty::B32, &mut b0);
    let b = *fetch(w, i, 1, Ty::B32, &mut b1);
    let mut c = [0u64; MAX_LANES];
    fetch64(w, i, 2, Ty::B64, &mut c);
    let exec = w.exec();
    let Operand::Vgpr(r) = i.dst[0] else {
        return Ok(Flow::Next);
    };
    let r = r as usize;
    let (lo, hi) = if signed {
        (i64::MIN as i128, i64::MAX as i128)
    } else {
        (0, u64::MAX as i128)
    };
    let mut cout = 0u64;
    for l in 0..n {
        let exact = if signed {
            a[l] as i32 as i128 * b[l] as i32 as i128 + c[l] as i64 as i128
        } else {
            a[l] as i128 * b[l] as i128 + c[l] as i128
        };
        let v = if i.mods.clamp {
            exact.clamp(lo, hi)
        } else {
            exact
        } as u64;
        if exec >> l & 1 != 0 {
            w.vgpr[r][l] = v as u32;
            w.vgpr[(r + 1) % w.vgpr.len()][l] = (v >> 32) as u32;
        }
        cout |= (((exact >> 64) & 1) as u64) << l;
    }
    w.write_mask(i.dst[1], cout & exec);
    Ok(Flow::Next)
}

fn div_scale_f32(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let n = w.lanes;
    let (mut b0, mut b1, mut b2) = ([0u32; MAX_LANES], [0u32; MAX_LANES], [0u32; MAX_LANES]);
    let s0 = *fetch(w, i, 0, Ty::F32, &mut b0);
    let s1 = *fetch(w, i, 1, Ty::F32, &mut b1);
    let s2 = *fetch(w, i, 2, Ty::F32, &mut b2);
    let exec = w.exec();
    let denorm_out = !w.mode.flush_out_f32();
    let mut res = [0u32; MAX_LANES];
    let mut vcc = 0u64;
    for l in 0..n {
        let (v, c) = div_scale32(f(s0[l]), f(s1[l]), f(s2[l]), denorm_out);
        res[l] = v.to_bits();
        vcc |= (c as u64) << l;
    }
    w.write_v32(i.dst[0], &res, exec);
    w.write_mask(i.dst[1], vcc & exec);
    Ok(Flow::Next)
}

fn div_scale_f64(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let n = w.lanes;
    let (mut s0, mut s1, mut s2) = ([0u64; MAX_LANES], [0u64; MAX_LANES], [0u64; MAX_LANES]);
    fetch64(w, i, 0, Ty::F64, &mut s0);
    fetch64(w, i, 1, Ty::F64, &mut s1);
    fetch64(w, i, 2, Ty::F64, &mut s2);
    let exec = w.exec();
    let denorm_out = !w.mode.flush_out_f16_f64();
    let Operand::Vgpr(r) = i.dst[0] else {
        return Ok(Flow::Next);
    };
    let r = r as usize;
    let mut vcc = 0u64;
    for l in 0..n {
        let (v, c) = div_scale64(d(s0[l]), d(s1[l]), d(s2[l]), denorm_out);
        if exec >> l & 1 != 0 {
            w.vgpr[r][l] = v.to_bits() as u32;
            w.vgpr[r + 1][l] = (v.to_bits() >> 32) as u32;
        }
        vcc |= (c as u64) << l;
    }
    w.write_mask(i.dst[1], vcc & exec);
    Ok(Flow::Next)
}

/// `v_div_fmas`: reads VCC per lane.
fn div_fmas_f32(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let vcc = w.vcc();
    let n = w.lanes;
    let (mut b0, mut b1, mut b2) = ([0u32; MAX_LANES], [0u32; MAX_LANES], [0u32; MAX_LANES]);
    let a = *fetch(w, i, 0, Ty::F32, &mut b0);
    let b = *fetch(w, i, 1, Ty::F32, &mut b1);
    let c = *fetch(w, i, 2, Ty::F32, &mut b2);
    let mut res = [0u32; MAX_LANES];
    let rm = w.mode.fp().r32;
    for l in 0..n {
        res[l] = div_fmas32(f(a[l]), f(b[l]), f(c[l]), vcc >> l & 1 != 0, rm).to_bits();
    }
    output_mods(w, i, Ty::F32, &mut res);
    let exec = w.exec();
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

fn div_fmas_f64(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let vcc = w.vcc();
    let n = w.lanes;
    let (mut a, mut b, mut c) = ([0u64; MAX_LANES], [0u64; MAX_LANES], [0u64; MAX_LANES]);
    fetch64(w, i, 0, Ty::F64, &mut a);
    fetch64(w, i, 1, Ty::F64, &mut b);
    fetch64(w, i, 2, Ty::F64, &mut c);
    let exec = w.exec();
    let Operand::Vgpr(r) = i.dst[0] else {
        return Ok(Flow::Next);
    };
    let r = r as usize;
    let rm = w.mode.fp().r16;
    for l in 0..n {
        if exec >> l & 1 != 0 {
            let v = div_fmas64(d(a[l]), d(b[l]), d(c[l]), vcc >> l & 1 != 0, rm).to_bits();
            let v = output_mods64(w, i, v);
            w.vgpr[r][l] = v as u32;
            w.vgpr[r + 1][l] = (v >> 32) as u32;
        }
    }
    Ok(Flow::Next)
}

/// `v_mbcnt_lo/hi`: the count of src0's bits below the lane, plus src1.
/// The lane's thread mask is `(1 << lane) - 1`; `lo` counts against its
/// low 32 bits, `hi` against its high 32. src0 is read per lane: a VGPR
/// mask is each lane's own.
fn mbcnt(w: &mut Wave, i: &Inst, hi: bool) -> Result {
    let (mut b0, mut b1) = ([0u32; MAX_LANES], [0u32; MAX_LANES]);
    let mask = fetch(w, i, 0, Ty::B32, &mut b0);
    let add = fetch(w, i, 1, Ty::B32, &mut b1);
    let mut res = [0u32; MAX_LANES];
    for (l, r) in res[..w.lanes].iter_mut().enumerate() {
        let below = ((1u64 << l) - 1) >> if hi { 32 } else { 0 };
        *r = add[l].wrapping_add((mask[l] & below as u32).count_ones());
    }
    let exec = write_mask(w, i);
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

/// VOP3P: packed 16-bit operations with per-half source selects. Float
/// ops flush f16 denormals in and out as MODE says and clamp each half.
#[inline(always)]
fn packed(w: &mut Wave, i: &Inst, float: bool, f: impl Fn(u32, u32, u32) -> u32) -> Result {
    let n = w.lanes;
    let mut halves = [[0u32; MAX_LANES]; 6];
    let flush_in = float && w.mode.flush_in_f16_f64();
    for k in 0..3 {
        if i.src[k] == Operand::None {
            continue;
        }
        let bit = 1u8 << k;
        let mut buf = [0u32; MAX_LANES];
        let src = w.vsrc(i.src[k], &mut buf);
        let (lo_sel, hi_sel) = (i.mods.opsel & bit != 0, i.mods.opsel_hi & bit != 0);
        let (neg_lo, neg_hi) = (i.mods.neg & bit != 0, i.mods.neg_hi & bit != 0);
        let (lo, rest) = halves.split_at_mut(2 * k + 1);
        let lo = &mut lo[2 * k];
        let hi = &mut rest[0];
        for l in 0..n {
            let v = src[l];
            lo[l] = if lo_sel { v >> 16 } else { v & 0xffff }
                ^ if float && neg_lo { 0x8000 } else { 0 };
            hi[l] = if hi_sel { v >> 16 } else { v & 0xffff }
                ^ if float && neg_hi { 0x8000 } else { 0 };
        }
        if flush_in {
            lo[..n].iter_mut().for_each(|v| *v = flush16(*v));
            hi[..n].iter_mut().for_each(|v| *v = flush16(*v));
        }
    }
    let dx10 = w.mode.dx10_clamp();
    let flush_out = float && w.mode.flush_out_f16_f64();
    let out = |v: u32| {
        let v = if float && i.mods.clamp {
            clamp01_16(v, dx10)
        } else {
            v & 0xffff
        };
        if flush_out {
            flush16(v)
        } else {
            v
        }
    };
    let mut res = [0u32; MAX_LANES];
    for l in 0..n {
        let lo = f(halves[0][l], halves[2][l], halves[4][l]);
        let hi = f(halves[1][l], halves[3][l], halves[5][l]);
        res[l] = out(lo) | out(hi) << 16;
    }
    let exec = w.exec();
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

/// `v_dot2_f32_f16` and friends: two packed products accumulated into f32.
#[inline(always)]
fn dot2(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result {
    let n = w.lanes;
    let (mut b0, mut b1, mut b2) = ([0u32; MAX_LANES], [0u32; MAX_LANES], [0u32; MAX_LANES]);
    let a = *w.vsrc(i.src[0], &mut b0);
    let b = *w.vsrc(i.src[1], &mut b1);
    let c = *w.vsrc(i.src[2], &mut b2);
    let mut res = [0u32; MAX_LANES];
    for l in 0..n {
        res[l] = f(apply_neg_pk(a[l], i, 0), apply_neg_pk(b[l], i, 1), c[l]);
    }
    if i.mods.clamp {
        let dx10 = w.mode.dx10_clamp();
        res[..n]
            .iter_mut()
            .for_each(|v| *v = clamp01(f32::from_bits(*v), dx10).to_bits());
    }
    let exec = w.exec();
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

fn apply_neg_pk(v: u32, i: &Inst, k: usize) -> u32 {
    let bit = 1u8 << k;
    let lo = if i.mods.neg & bit != 0 { 0x8000 } else { 0 };
    let hi = if i.mods.neg_hi & bit != 0 {
        0x8000_0000
    } else {
        0
    };
    v ^ lo ^ hi
}

fn bf16(bits: u32) -> f32 {
    f32::from_bits(bits << 16)
}

fn bfe_u(v: u32, off: u32, width: u32) -> u32 {
    let (off, width) = (off & 31, width & 31);
    if width == 0 {
        0
    } else {
        (v >> off) & ((1u64 << width) - 1) as u32
    }
}

fn bfe_i(v: u32, off: u32, width: u32) -> u32 {
    let (off, width) = (off & 31, width & 31);
    if width == 0 {
        return 0;
    }
    let x = (v >> off) << (32 - width).min(31);
    if width + off >= 32 || width == 32 {
        ((v as i32) >> off) as u32
    } else {
        ((x as i32) >> (32 - width)) as u32
    }
}

fn perm(s0: u32, s1: u32, sel: u32) -> u32 {
    let bytes = (s0 as u64) << 32 | s1 as u64;
    (0..4).fold(0u32, |acc, k| {
        let s = (sel >> (8 * k)) & 0xff;
        let byte = match s {
            0..=7 => (bytes >> (8 * s)) & 0xff,
            8..=11 => {
                let b = (bytes >> (8 * (2 * (s - 8) + 1))) & 0x80;
                if b != 0 {
                    0xff
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xff,
        } as u32;
        acc | byte << (8 * k)
    })
}

/// The sum of the byte-wise absolute differences of `a` and `b`; `masked`
/// (the `msad` forms) skips bytes where the reference `b` is zero.
fn sad_bytes(a: u32, b: u32, masked: bool) -> i64 {
    (0..4)
        .map(|k| ((a >> (8 * k)) & 0xff, (b >> (8 * k)) & 0xff))
        .filter(|&(_, y)| !(masked && y == 0))
        .map(|(x, y)| (x as i64 - y as i64).abs())
        .sum()
}

fn cvt_pk_u8(v: f32, byte: u32, acc: u32) -> u32 {
    let b = (byte & 3) * 8;
    let x = f_to_u32(v.round_ties_even() as f64).min(255);
    (acc & !(0xff << b)) | x << b
}

/// The exact product of the sign-extended low 24 bits of `a` and `b`.
fn mul_i24(a: u32, b: u32) -> i64 {
    ((a << 8) as i32 >> 8) as i64 * ((b << 8) as i32 >> 8) as i64
}

fn fa(x: u32) -> f32 {
    f(x)
}

/// The lane function of a table entry: as written, or, for an integer op
/// given with its destination range, the exact result's low bits.
macro_rules! lane {
    ($f:expr) => {
        $f
    };
    ($f:expr, $range:ident) => {
        move |a: u32, b: u32, c: u32| Range::$range.wrap(($f)(a, b, c))
    };
}

/// Binds a float lane function's MODE state: with `($m)` in a table
/// entry, `$m` is the wave's [`Fp`], and the handler is compiled twice, once
/// for the default state as a constant (so the common case keeps the plain
/// host arithmetic inlined), once for any other.
macro_rules! with_fp {
    ($fp:expr; $body:expr) => {
        $body
    };
    ($fp:expr, $m:ident; $body:expr) => {{
        let fp: Fp = $fp;
        // (The result is bound so temporaries borrowing `$m` drop first.)
        if fp == Fp::DEFAULT {
            let $m = Fp::DEFAULT;
            let r = $body;
            r
        } else {
            let $m = fp;
            let r = $body;
            r
        }
    }};
}

/// The source types a handler fetches with: the op table's, or the ones a
/// table entry gives in braces. The op table (decoder data) types a few
/// integer sources as floats: `v_cvt_f32_ubyte0..3` and `v_cvt_off_f32_i4`
/// read an integer S0, `v_ldexp_f16` an i16 S1; fetched as floats they
/// would lose their small values to denormal flushing.
macro_rules! src_tys {
    ($i:ident) => {
        $i.op.info().src
    };
    ($i:ident, $($ty:ident),*) => {
        [$(Ty::$ty),*]
    };
}

macro_rules! ops32 {
    ($($name:ident $([$range:ident])? $(($m:ident))? $({$($ty:ident),*})? => $f:expr,)*) => {
        /// Pure per-lane 32-bit instructions: opcode and lane function.
        pub const LANE_OPS: &[(Op, LaneFn)] = &[$((Op::$name, (|a: &Lanes, b: &Lanes, c: &Lanes, r: &mut Lanes, n: usize, _fp: Fp| with_fp!(_fp $(, $m)?; each(lane!($f $(, $range)?))(a, b, c, r, n))) as LaneFn),)*];
        const TABLE32: &[(Op, Exec)] = &[$((Op::$name, (|w: &mut Wave, env: &mut Env, i: &Inst| with_fp!(w.mode.fp() $(, $m)?; vop_with(w, env, i, src_tys!(i $(, $($ty),*)?), lane!($f $(, $range)?)))) as Exec),)*];
        /// The same instructions' handlers for the plain case (see `vop_plain`).
        const TABLE32_PLAIN: &[(Op, Exec)] = &[$((Op::$name, (|w: &mut Wave, env: &mut Env, i: &Inst| {
            if !plain_mode(w.mode) {
                return general(w, env, i);
            }
            $(let $m = Fp::DEFAULT;)?
            vop_plain(w, env, i, lane!($f $(, $range)?))
        }) as Exec),)*];
        /// Handlers of the integer ops whose clamp bit saturates the exact
        /// result to the destination range (bound when clamp is set).
        const TABLE32_SATURATING: &[(Op, Exec)] = &[$($((Op::$name, (|w: &mut Wave, env: &mut Env, i: &Inst| vop(w, env, i, move |a: u32, b: u32, c: u32| Range::$range.saturate(($f)(a, b, c)))) as Exec),)?)*];
    };
}

macro_rules! ops64 {
    ($($name:ident $(($m:ident))? => $f:expr,)*) => {
        const TABLE64: &[(Op, Exec)] = &[$((Op::$name, (|w: &mut Wave, _: &mut Env, i: &Inst| with_fp!(w.mode.fp() $(, $m)?; vop64(w, i, $f))) as Exec),)*];
    };
}

macro_rules! pk {
    ($($name:ident, $float:expr $(, [$range:ident])? $(, ($m:ident))? => $f:expr,)*) => {
        const TABLE_PK: &[(Op, Exec)] = &[$((Op::$name, pk_handler!($float, $f $(, [$range])? $(, ($m))?)),)*];
    };
}

/// A packed op's handler: float ops with their MODE state, bitwise ops as
/// written; integer ops given with their half's range wrap, or saturate
/// under clamp.
macro_rules! pk_handler {
    ($float:expr, $f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| packed(w, i, $float, $f)) as Exec
    };
    ($float:expr, $f:expr, ($m:ident)) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| with_fp!(w.mode.fp(), $m; packed(w, i, $float, $f))) as Exec
    };
    ($float:expr, $f:expr, [$range:ident]) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            if i.mods.clamp {
                packed(w, i, $float, move |a, b, c| {
                    Range::$range.saturate(($f)(a, b, c))
                })
            } else {
                packed(w, i, $float, move |a, b, c| {
                    Range::$range.wrap(($f)(a, b, c))
                })
            }
        }) as Exec
    };
}

ops32! {
    V_MOV_B32 => |a, _, _| a,
    V_MOV_B16 => |a, _, _| a & 0xffff,
    V_NOT_B32 => |a, _, _| !a,
    V_NOT_B16 => |a, _, _| !a & 0xffff,
    V_BFREV_B32 => |a, _, _| a.reverse_bits(),
    V_CLZ_I32_U32 => |a, _, _| if a == 0 { u32::MAX } else { a.leading_zeros() },
    V_CTZ_I32_B32 => |a, _, _| if a == 0 { u32::MAX } else { a.trailing_zeros() },
    V_CLS_I32 => |a, _, _| { let v = a as i32; if v == 0 || v == -1 { u32::MAX } else { (if v < 0 { !v } else { v }).leading_zeros() } },
    V_CVT_F32_I32 (m) => |a, _, _| i32_to_f32(a as i32, m.r32).to_bits(),
    V_CVT_F32_U32 (m) => |a, _, _| u32_to_f32(a, m.r32).to_bits(),
    V_CVT_U32_F32 => |a, _, _| f_to_u32(fa(a) as f64),
    V_CVT_I32_F32 => |a, _, _| f_to_i32(fa(a) as f64),
    V_CVT_F16_F32 (m) => |a, _, _| f32_to_f16(fa(a), m.r16),
    V_CVT_F32_F16 => |a, _, _| h(a).to_bits(),
    V_CVT_NEAREST_I32_F32 => |a, _, _| f_to_i32((fa(a) + 0.5).floor() as f64),
    V_CVT_FLOOR_I32_F32 => |a, _, _| f_to_i32(fa(a).floor() as f64),
    V_CVT_OFF_F32_I4 {B32, None, None} => |a, _, _| ((((a & 0xf) as i32) << 28 >> 28) as f32 / 16.0).to_bits(),
    V_CVT_F32_UBYTE0 {B32, None, None} => |a, _, _| ((a & 0xff) as f32).to_bits(),
    V_CVT_F32_UBYTE1 {B32, None, None} => |a, _, _| (((a >> 8) & 0xff) as f32).to_bits(),
    V_CVT_F32_UBYTE2 {B32, None, None} => |a, _, _| (((a >> 16) & 0xff) as f32).to_bits(),
    V_CVT_F32_UBYTE3 {B32, None, None} => |a, _, _| ((a >> 24) as f32).to_bits(),
    V_CVT_F16_U16 (m) => |a, _, _| int_to_f16(false, a & 0xffff, m.r16),
    V_CVT_F16_I16 (m) => |a, _, _| int_to_f16((a as i16) < 0, (a as i16).unsigned_abs() as u32, m.r16),
    V_CVT_U16_F16 => |a, _, _| { let x = h(a); if x.is_nan() { 0 } else { x as u16 as u32 } },
    V_CVT_I16_F16 => |a, _, _| { let x = h(a); if x.is_nan() { 0 } else { x as i16 as u16 as u32 } },
    V_CVT_I32_I16 => |a, _, _| a as i16 as i32 as u32,
    V_CVT_U32_U16 => |a, _, _| a & 0xffff,
    V_FRACT_F32 => |a, _, _| fract32(fa(a)).to_bits(),
    V_TRUNC_F32 => |a, _, _| fa(a).trunc().to_bits(),
    V_CEIL_F32 => |a, _, _| fa(a).ceil().to_bits(),
    V_RNDNE_F32 => |a, _, _| rne32(fa(a)).to_bits(),
    V_FLOOR_F32 => |a, _, _| fa(a).floor().to_bits(),
    V_EXP_F32 => |a, _, _| fa(a).exp2().to_bits(),
    V_LOG_F32 => |a, _, _| fa(a).log2().to_bits(),
    V_RCP_F32 => |a, _, _| (1.0 / fa(a)).to_bits(),
    V_RCP_IFLAG_F32 => |a, _, _| (1.0 / fa(a)).to_bits(),
    V_RSQ_F32 => |a, _, _| ((1.0 / (fa(a) as f64).sqrt()) as f32).to_bits(),
    V_SQRT_F32 => |a, _, _| fa(a).sqrt().to_bits(),
    V_SIN_F32 => |a, _, _| (sin_rev(fa(a) as f64) as f32).to_bits(),
    V_COS_F32 => |a, _, _| (cos_rev(fa(a) as f64) as f32).to_bits(),
    V_FREXP_EXP_I32_F32 => |a, _, _| frexp_exp32(fa(a)) as u32,
    V_FREXP_MANT_F32 => |a, _, _| frexp_mant32(fa(a)).to_bits(),
    V_RCP_F16 => |a, _, _| to_h(1.0 / h(a)),
    V_SQRT_F16 => |a, _, _| to_h(h(a).sqrt()),
    V_RSQ_F16 => |a, _, _| to_h(1.0 / h(a).sqrt()),
    V_LOG_F16 => |a, _, _| to_h(h(a).log2()),
    V_EXP_F16 => |a, _, _| to_h(h(a).exp2()),
    V_SIN_F16 => |a, _, _| d_to_h(sin_rev(h(a) as f64)),
    V_COS_F16 => |a, _, _| d_to_h(cos_rev(h(a) as f64)),
    V_FLOOR_F16 => |a, _, _| to_h(h(a).floor()),
    V_CEIL_F16 => |a, _, _| to_h(h(a).ceil()),
    V_TRUNC_F16 => |a, _, _| to_h(h(a).trunc()),
    V_RNDNE_F16 => |a, _, _| to_h(h(a).round_ties_even()),
    V_FRACT_F16 => |a, _, _| to_h(fract16(h(a))),
    V_FREXP_MANT_F16 => |a, _, _| to_h(frexp_mant32(h(a))),
    V_FREXP_EXP_I16_F16 => |a, _, _| frexp_exp32(h(a)) as u32 & 0xffff,
    V_CVT_NORM_I16_F16 => |a, _, _| ((h(a).clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16) as u16 as u32,
    V_CVT_NORM_U16_F16 => |a, _, _| (h(a).clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16 as u32,
    V_SAT_PK_U8_I16 => |a, _, _| ((a as i16).clamp(0, 255) as u32) | (((a >> 16) as i16).clamp(0, 255) as u32) << 8,
    // VOP2
    V_CNDMASK_B32 => |a, b, c| if c != 0 { b } else { a },
    V_CNDMASK_B16 => |a, b, c| if c != 0 { b } else { a },
    V_ADD_F32 (m) => |a, b, _| add32(fa(a), fa(b), m.r32).to_bits(),
    V_SUB_F32 (m) => |a, b, _| add32(fa(a), -fa(b), m.r32).to_bits(),
    V_SUBREV_F32 (m) => |a, b, _| add32(fa(b), -fa(a), m.r32).to_bits(),
    V_MUL_F32 (m) => |a, b, _| mul32(fa(a), fa(b), m.r32).to_bits(),
    V_MUL_DX9_ZERO_F32 (m) => |a, b, _| if fa(a) == 0.0 || fa(b) == 0.0 { 0 } else { mul32(fa(a), fa(b), m.r32).to_bits() },
    V_FMAC_DX9_ZERO_F32 (m) => |a, b, c| if fa(a) == 0.0 || fa(b) == 0.0 { c } else { fma32(fa(a), fa(b), fa(c), m.r32).to_bits() },
    V_MUL_I32_I24 [I32] => |a, b, _| mul_i24(a, b),
    V_MUL_HI_I32_I24 => |a, b, _| (mul_i24(a, b) >> 32) as u32,
    V_MUL_U32_U24 [U32] => |a, b, _| (a & 0xff_ffff) as i64 * (b & 0xff_ffff) as i64,
    V_MUL_HI_U32_U24 => |a, b, _| (((a & 0xff_ffff) as u64 * (b & 0xff_ffff) as u64) >> 32) as u32,
    V_MIN_F32 (m) => |a, b, _| vmin32(a, b, m.ieee),
    V_MAX_F32 (m) => |a, b, _| vmax32(a, b, m.ieee),
    V_MIN_I32 => |a, b, _| (a as i32).min(b as i32) as u32,
    V_MAX_I32 => |a, b, _| (a as i32).max(b as i32) as u32,
    V_MIN_U32 => |a, b, _| a.min(b),
    V_MAX_U32 => |a, b, _| a.max(b),
    V_LSHRREV_B32 => |a, b, _| b >> (a & 31),
    V_ASHRREV_I32 => |a, b, _| ((b as i32) >> (a & 31)) as u32,
    V_LSHLREV_B32 => |a, b, _| b << (a & 31),
    V_AND_B32 => |a, b, _| a & b,
    V_OR_B32 => |a, b, _| a | b,
    V_XOR_B32 => |a, b, _| a ^ b,
    V_XNOR_B32 => |a, b, _| !(a ^ b),
    V_ADD_NC_U32 [U32] => |a, b, _| a as i64 + b as i64,
    V_SUB_NC_U32 [U32] => |a, b, _| a as i64 - b as i64,
    V_SUBREV_NC_U32 [U32] => |a, b, _| b as i64 - a as i64,
    V_ADD_NC_I32 [I32] => |a, b, _| a as i32 as i64 + b as i32 as i64,
    V_SUB_NC_I32 [I32] => |a, b, _| a as i32 as i64 - b as i32 as i64,
    V_FMAC_F32 (m) => |a, b, c| fma32(fa(a), fa(b), fa(c), m.r32).to_bits(),
    V_FMAMK_F32 (m) => |a, b, c| fma32(fa(a), fa(b), fa(c), m.r32).to_bits(),
    V_FMAAK_F32 (m) => |a, b, c| fma32(fa(a), fa(b), fa(c), m.r32).to_bits(),
    V_CVT_PK_RTZ_F16_F32 => |a, b, _| rtz_h(fa(a)) | rtz_h(fa(b)) << 16,
    V_LDEXP_F32 (m) => |a, b, _| ldexp32(fa(a), b as i32, m.r32).to_bits(),
    V_ADD_F16 (m) => |a, b, _| add16(a, b, m.r16),
    V_SUB_F16 (m) => |a, b, _| add16(a, neg16(b), m.r16),
    V_SUBREV_F16 (m) => |a, b, _| add16(b, neg16(a), m.r16),
    V_MUL_F16 (m) => |a, b, _| mul16(a, b, m.r16),
    V_FMAC_F16 (m) => |a, b, c| fma16(a, b, c, m.r16),
    V_FMAMK_F16 (m) => |a, b, c| fma16(a, b, c, m.r16),
    V_FMAAK_F16 (m) => |a, b, c| fma16(a, b, c, m.r16),
    V_FMA_F16 (m) => |a, b, c| fma16(a, b, c, m.r16),
    V_MAX_F16 (m) => |a, b, _| vmax16(a, b, m.ieee),
    V_MIN_F16 (m) => |a, b, _| vmin16(a, b, m.ieee),
    V_LDEXP_F16 (m) {F16, B16, None} => |a, b, _| ldexp16(a, b as i16 as i32, m.r16),
    V_ADD_NC_U16 [U16] => |a, b, _| (a & 0xffff) as i64 + (b & 0xffff) as i64,
    V_SUB_NC_U16 [U16] => |a, b, _| (a & 0xffff) as i64 - (b & 0xffff) as i64,
    V_ADD_NC_I16 [I16] => |a, b, _| a as i16 as i64 + b as i16 as i64,
    V_SUB_NC_I16 [I16] => |a, b, _| a as i16 as i64 - b as i16 as i64,
    V_MUL_LO_U16 => |a, b, _| a.wrapping_mul(b) & 0xffff,
    V_LSHLREV_B16 => |a, b, _| (b << (a & 15)) & 0xffff,
    V_LSHRREV_B16 => |a, b, _| (b & 0xffff) >> (a & 15),
    V_ASHRREV_I16 => |a, b, _| ((b as i16) >> (a & 15)) as u16 as u32,
    V_MAX_U16 => |a, b, _| (a & 0xffff).max(b & 0xffff),
    V_MIN_U16 => |a, b, _| (a & 0xffff).min(b & 0xffff),
    V_MAX_I16 => |a, b, _| (a as i16).max(b as i16) as u16 as u32,
    V_MIN_I16 => |a, b, _| (a as i16).min(b as i16) as u16 as u32,
    V_MAD_U16 [U16] => |a, b, c| (a & 0xffff) as i64 * (b & 0xffff) as i64 + (c & 0xffff) as i64,
    V_MAD_I16 [I16] => |a, b, c| a as i16 as i64 * b as i16 as i64 + c as i16 as i64,
    V_MAD_U32_U16 [U32] => |a, b, c| (a & 0xffff) as i64 * (b & 0xffff) as i64 + c as i64,
    V_MAD_I32_I16 [I32] => |a, b, c| a as i16 as i64 * b as i16 as i64 + c as i32 as i64,
    V_PACK_B32_F16 => |a, b, _| (a & 0xffff) | (b & 0xffff) << 16,
    V_CVT_PK_I16_I32 => |a, b, _| ((a as i32).clamp(-32768, 32767) as u16 as u32) | ((b as i32).clamp(-32768, 32767) as u16 as u32) << 16,
    V_CVT_PK_U16_U32 => |a, b, _| a.min(0xffff) | b.min(0xffff) << 16,
    V_CVT_PK_NORM_I16_F32 => |a, b, _| norm_i16(fa(a)) | norm_i16(fa(b)) << 16,
    V_CVT_PK_NORM_U16_F32 => |a, b, _| norm_u16(fa(a)) | norm_u16(fa(b)) << 16,
    V_CVT_PK_NORM_I16_F16 => |a, b, _| norm_i16(h(a)) | norm_i16(h(b)) << 16,
    V_CVT_PK_NORM_U16_F16 => |a, b, _| norm_u16(h(a)) | norm_u16(h(b)) << 16,
    // VOP3-only
    V_FMA_F32 (m) => |a, b, c| fma32(fa(a), fa(b), fa(c), m.r32).to_bits(),
    V_MULLIT_F32 (m) => |a, b, c| mullit(fa(a), fa(b), fa(c), m.r32).to_bits(),
    V_FMA_DX9_ZERO_F32 (m) => |a, b, c| if fa(a) == 0.0 || fa(b) == 0.0 { c } else { fma32(fa(a), fa(b), fa(c), m.r32).to_bits() },
    // 24×24-bit products overflow 32 bits: the low half is the result.
    V_MAD_U32_U24 [U32] => |a, b, c| (a & 0xff_ffff) as i64 * (b & 0xff_ffff) as i64 + c as i64,
    V_MAD_I32_I24 [I32] => |a, b, c| mul_i24(a, b) + c as i32 as i64,
    V_BFE_U32 => |a, b, c| bfe_u(a, b, c),
    V_BFE_I32 => |a, b, c| bfe_i(a, b, c),
    V_BFI_B32 => |a, b, c| (a & b) | (!a & c),
    V_BFM_B32 => |a, b, _| (((1u64 << (a & 31)) - 1) as u32) << (b & 31),
    V_ALIGNBIT_B32 => |a, b, c| (((a as u64) << 32 | b as u64) >> (c & 31)) as u32,
    V_ALIGNBYTE_B32 => |a, b, c| (((a as u64) << 32 | b as u64) >> (8 * (c & 3))) as u32,
    V_MIN3_F32 (m) => |a, b, c| vmin32(vmin32(a, b, m.ieee), c, m.ieee),
    V_MAX3_F32 (m) => |a, b, c| vmax32(vmax32(a, b, m.ieee), c, m.ieee),
    V_MED3_F32 (m) => |a, b, c| med3_f32(a, b, c, m.ieee),
    V_MIN3_I32 => |a, b, c| (a as i32).min(b as i32).min(c as i32) as u32,
    V_MAX3_I32 => |a, b, c| (a as i32).max(b as i32).max(c as i32) as u32,
    V_MED3_I32 => |a, b, c| { let (a, b, c) = (a as i32, b as i32, c as i32); a.min(b).max(a.max(b).min(c)) as u32 },
    V_MIN3_U32 => |a, b, c| a.min(b).min(c),
    V_MAX3_U32 => |a, b, c| a.max(b).max(c),
    V_MED3_U32 => |a, b, c| a.min(b).max(a.max(b).min(c)),
    V_MIN3_F16 (m) => |a, b, c| vmin16(vmin16(a, b, m.ieee), c, m.ieee),
    V_MAX3_F16 (m) => |a, b, c| vmax16(vmax16(a, b, m.ieee), c, m.ieee),
    V_MED3_F16 (m) => |a, b, c| med3_f16(a, b, c, m.ieee),
    V_MIN3_I16 => |a, b, c| (a as i16).min(b as i16).min(c as i16) as u16 as u32,
    V_MAX3_I16 => |a, b, c| (a as i16).max(b as i16).max(c as i16) as u16 as u32,
    V_MED3_I16 => |a, b, c| { let (a, b, c) = (a as i16, b as i16, c as i16); a.min(b).max(a.max(b).min(c)) as u16 as u32 },
    V_MIN3_U16 => |a, b, c| (a & 0xffff).min(b & 0xffff).min(c & 0xffff),
    V_MAX3_U16 => |a, b, c| (a & 0xffff).max(b & 0xffff).max(c & 0xffff),
    V_MED3_U16 => |a, b, c| { let (a, b, c) = (a & 0xffff, b & 0xffff, c & 0xffff); a.min(b).max(a.max(b).min(c)) },
    V_MAXMIN_F32 (m) => |a, b, c| vmin32(vmax32(a, b, m.ieee), c, m.ieee),
    // gfx12's min/max families: `*_num` (a number beats NaN) and
    // `*imum*` (NaN wins), whatever MODE says (gfx12 has no IEEE mode).
    V_MAX_NUM_F32 => |a, b, _| mm32(Number, true, a, b),
    V_MIN_NUM_F32 => |a, b, _| mm32(Number, false, a, b),
    V_MAXIMUM_F32 => |a, b, _| mm32(Propagate, true, a, b),
    V_MINIMUM_F32 => |a, b, _| mm32(Propagate, false, a, b),
    V_MAX_NUM_F16 => |a, b, _| mm16(Number, true, a, b),
    V_MIN_NUM_F16 => |a, b, _| mm16(Number, false, a, b),
    V_MAXIMUM_F16 => |a, b, _| mm16(Propagate, true, a, b),
    V_MINIMUM_F16 => |a, b, _| mm16(Propagate, false, a, b),
    V_MAX3_NUM_F32 => |a, b, c| mm32(Number, true, mm32(Number, true, a, b), c),
    V_MIN3_NUM_F32 => |a, b, c| mm32(Number, false, mm32(Number, false, a, b), c),
    V_MAX3_NUM_F16 => |a, b, c| mm16(Number, true, mm16(Number, true, a, b), c),
    V_MIN3_NUM_F16 => |a, b, c| mm16(Number, false, mm16(Number, false, a, b), c),
    V_MAXIMUM3_F32 => |a, b, c| mm32(Propagate, true, mm32(Propagate, true, a, b), c),
    V_MINIMUM3_F32 => |a, b, c| mm32(Propagate, false, mm32(Propagate, false, a, b), c),
    V_MAXIMUM3_F16 => |a, b, c| mm16(Propagate, true, mm16(Propagate, true, a, b), c),
    V_MINIMUM3_F16 => |a, b, c| mm16(Propagate, false, mm16(Propagate, false, a, b), c),
    V_MINMAX_NUM_F32 => |a, b, c| mm32(Number, true, mm32(Number, false, a, b), c),
    V_MAXMIN_NUM_F32 => |a, b, c| mm32(Number, false, mm32(Number, true, a, b), c),
    V_MINMAX_NUM_F16 => |a, b, c| mm16(Number, true, mm16(Number, false, a, b), c),
    V_MAXMIN_NUM_F16 => |a, b, c| mm16(Number, false, mm16(Number, true, a, b), c),
    V_MINIMUMMAXIMUM_F32 => |a, b, c| mm32(Propagate, true, mm32(Propagate, false, a, b), c),
    V_MAXIMUMMINIMUM_F32 => |a, b, c| mm32(Propagate, false, mm32(Propagate, true, a, b), c),
    V_MINIMUMMAXIMUM_F16 => |a, b, c| mm16(Propagate, true, mm16(Propagate, false, a, b), c),
    V_MAXIMUMMINIMUM_F16 => |a, b, c| mm16(Propagate, false, mm16(Propagate, true, a, b), c),
    V_MED3_NUM_F32 => |a, b, c| med3_num(mm32, a, b, c, |x| fa(x).is_nan()),
    V_MED3_NUM_F16 => |a, b, c| med3_num(mm16, a, b, c, |x| h(x).is_nan()),
    V_MINMAX_F32 (m) => |a, b, c| vmax32(vmin32(a, b, m.ieee), c, m.ieee),
    V_MAXMIN_F16 (m) => |a, b, c| vmin16(vmax16(a, b, m.ieee), c, m.ieee),
    V_MINMAX_F16 (m) => |a, b, c| vmax16(vmin16(a, b, m.ieee), c, m.ieee),
    V_MAXMIN_U32 => |a, b, c| a.max(b).min(c),
    V_MINMAX_U32 => |a, b, c| a.min(b).max(c),
    V_MAXMIN_I32 => |a, b, c| (a as i32).max(b as i32).min(c as i32) as u32,
    V_MINMAX_I32 => |a, b, c| (a as i32).min(b as i32).max(c as i32) as u32,
    V_SAD_U8 [U32] => |a, b, c| sad_bytes(a, b, false) + c as i64,
    V_SAD_HI_U8 [U32] => |a, b, c| (sad_bytes(a, b, false) << 16) + c as i64,
    V_SAD_U16 [U32] => |a, b, c| ((a & 0xffff) as i64 - (b & 0xffff) as i64).abs() + ((a >> 16) as i64 - (b >> 16) as i64).abs() + c as i64,
    V_SAD_U32 [U32] => |a, b, c| (a as i64 - b as i64).abs() + c as i64,
    V_MSAD_U8 [U32] => |a, b, c| sad_bytes(a, b, true) + c as i64,
    V_CVT_PK_U8_F32 => |a, b, c| cvt_pk_u8(fa(a), b, c),
    V_DIV_FIXUP_F32 => |a, b, c| div_fixup32(fa(a), fa(b), fa(c)).to_bits(),
    V_DIV_FIXUP_F16 => |a, b, c| div_fixup16(a, b, c),
    V_LSHL_ADD_U32 => |a, b, c| (a << (b & 31)).wrapping_add(c),
    V_ADD_LSHL_U32 => |a, b, c| a.wrapping_add(b) << (c & 31),
    V_ADD3_U32 => |a, b, c| a.wrapping_add(b).wrapping_add(c),
    V_LSHL_OR_B32 => |a, b, c| (a << (b & 31)) | c,
    V_AND_OR_B32 => |a, b, c| (a & b) | c,
    V_OR3_B32 => |a, b, c| a | b | c,
    V_XOR3_B32 => |a, b, c| a ^ b ^ c,
    V_XAD_U32 => |a, b, c| (a ^ b).wrapping_add(c),
    V_PERM_B32 => |a, b, c| perm(a, b, c),
    V_MUL_LO_U32 => |a, b, _| a.wrapping_mul(b),
    V_MUL_HI_U32 => |a, b, _| ((a as u64 * b as u64) >> 32) as u32,
    V_MUL_HI_I32 => |a, b, _| ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
    V_BCNT_U32_B32 => |a, b, _| a.count_ones().wrapping_add(b),
    V_CUBEID_F32 => |a, b, c| cube(fa(a), fa(b), fa(c)).0.to_bits(),
    V_CUBESC_F32 => |a, b, c| cube(fa(a), fa(b), fa(c)).1.to_bits(),
    V_CUBETC_F32 => |a, b, c| cube(fa(a), fa(b), fa(c)).2.to_bits(),
    V_CUBEMA_F32 => |a, b, c| cube(fa(a), fa(b), fa(c)).3.to_bits(),
    V_DOT2ACC_F32_F16 => |a, b, c| dot2_f16(a, b, c),
    V_AND_B16 => |a, b, _| a & b & 0xffff,
    V_OR_B16 => |a, b, _| (a | b) & 0xffff,
    V_XOR_B16 => |a, b, _| (a ^ b) & 0xffff,
    V_LERP_U8 => |a, b, c| lerp_u8(a, b, c),
    V_CVT_PK_I16_F32 => |a, b, _| sat_i16(fa(a)) | sat_i16(fa(b)) << 16,
    V_CVT_PK_U16_F32 => |a, b, _| sat_u16(fa(a)) | sat_u16(fa(b)) << 16,
    // GFX9 (CDNA): `v_subrev_u16` (S1 - S0), wrapping to 16 bits or
    // saturating under clamp as the other u16 adds.
    V_SUBREV_U16 [U16] => |a, b, _| (b & 0xffff) as i64 - (a & 0xffff) as i64,
    // GFX9's unfused multiply-adds (`v_mad_f32`, `v_mac_f32`, whose
    // destination is the addend, `v_madmk_f32`, `v_madak_f32`): the
    // product rounded to f32, then added and rounded again. They do not
    // support denormals whatever MODE says (LLVM forms them only when f32
    // denormals are flushed: "v_mad_f32/v_mac_f32 do not support
    // denormals"), so inputs, the product and the result are flushed here.
    V_MAD_F32 (m) => |a, b, c| mad32(a, b, c, m.r32, false),
    V_MAC_F32 (m) => |a, b, c| mad32(a, b, c, m.r32, false),
    V_MADMK_F32 (m) => |a, b, c| mad32(a, b, c, m.r32, false),
    V_MADAK_F32 (m) => |a, b, c| mad32(a, b, c, m.r32, false),
    // `v_mad_legacy_f32`: as v_mad_f32 with DX9's rule, 0 times anything
    // (inf, NaN) is +0, so the result is +0 + S2.
    V_MAD_LEGACY_F32 (m) => |a, b, c| mad32(a, b, c, m.r32, true),
    // The f16 forms likewise (LLVM's fmad f16 is legal only with f16
    // denormals flushed); `v_mad_legacy_f16` is GFX8's v_mad_f16, the
    // same arithmetic (only its high-half rule differs: ZERO_HI16).
    V_MAD_F16 (m) => |a, b, c| mad16(a, b, c, m.r16),
    V_MAC_F16 (m) => |a, b, c| mad16(a, b, c, m.r16),
    V_MADMK_F16 (m) => |a, b, c| mad16(a, b, c, m.r16),
    V_MADAK_F16 (m) => |a, b, c| mad16(a, b, c, m.r16),
    V_MAD_LEGACY_F16 (m) => |a, b, c| mad16(a, b, c, m.r16),
    // VOP2 packed FMA: the destination is the accumulator (src2).
    V_PK_FMAC_F16 (m) => |a, b, c| fma16(a, b, c, m.r16) | fma16(a >> 16, b >> 16, c >> 16, m.r16) << 16,
    // Two f16 products summed with the f16 accumulator, rounded once.
    V_DOT2_F16_F16 => |a, b, c| d_to_h(h(a) as f64 * h(b) as f64 + h(a >> 16) as f64 * h(b >> 16) as f64 + h(c) as f64),
}

/// An unfused f32 multiply-add with denormals flushed throughout (see
/// `V_MAD_F32`); `dx9` makes a zero factor give a +0 product.
fn mad32(a: u32, b: u32, c: u32, rm: Round, dx9: bool) -> u32 {
    let (a, b, c) = (fa(flush32(a)), fa(flush32(b)), fa(flush32(c)));
    let p = if dx9 && (a == 0.0 || b == 0.0) {
        0.0
    } else {
        fa(flush32(mul32(a, b, rm).to_bits()))
    };
    flush32(add32(p, c, rm).to_bits())
}

/// The f16 unfused multiply-add, denormals flushed throughout.
fn mad16(a: u32, b: u32, c: u32, rm: Round) -> u32 {
    let p = flush16(mul16(flush16(a), flush16(b), rm));
    flush16(add16(p, flush16(c), rm))
}

pub fn rtz_h(x: f32) -> u32 {
    let r = to_h(x);
    // Round toward zero: step back if round-to-nearest went away from zero.
    if h(r).abs() > x.abs() && !x.is_infinite() && !x.is_nan() {
        r - 1
    } else {
        r
    }
}

/// Per byte: the rounded average, the rounding bit taken from `c`'s byte.
fn lerp_u8(a: u32, b: u32, c: u32) -> u32 {
    (0..4).fold(0, |acc, k| {
        let byte = |v: u32| (v >> (8 * k)) & 0xff;
        acc | ((byte(a) + byte(b) + (byte(c) & 1)) >> 1) << (8 * k)
    })
}

/// f32 → i16 / u16, truncating and saturating, NaN → 0.
fn sat_i16(x: f32) -> u32 {
    (f_to_i32(x as f64) as i32).clamp(-32768, 32767) as u16 as u32
}

fn sat_u16(x: f32) -> u32 {
    f_to_u32(x as f64).min(0xffff)
}

/// `v_qsad_pk_u16_u8` / `v_mqsad_pk_u16_u8`: four (masked) byte SADs of
/// `b` against the 32-bit windows of `a` starting at bytes 0..3, each added
/// to a 16-bit accumulator of `c` (wrapping, or saturating with clamp).
fn qsad(a: u64, b: u64, c: u64, masked: bool, clamp: bool) -> u64 {
    (0..4).fold(0u64, |acc, k| {
        let win = (a >> (8 * k)) as u32;
        let sum = ((c >> (16 * k)) & 0xffff) as i64 + sad_bytes(win, b as u32, masked);
        let v = if clamp {
            Range::U16.saturate(sum)
        } else {
            Range::U16.wrap(sum)
        };
        acc | (v as u64) << (16 * k)
    })
}

fn norm_i16(x: f32) -> u32 {
    if x.is_nan() {
        0
    } else {
        (x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16 as u32
    }
}

fn norm_u16(x: f32) -> u32 {
    if x.is_nan() {
        0
    } else {
        (x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16 as u32
    }
}

/// Cube-map face selection: (face id, s coordinate, t coordinate, 2·major axis).
fn cube(x: f32, y: f32, z: f32) -> (f32, f32, f32, f32) {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    if az >= ax && az >= ay {
        (
            if z < 0.0 { 5.0 } else { 4.0 },
            if z < 0.0 { -x } else { x },
            -y,
            2.0 * z,
        )
    } else if ay >= ax {
        (
            if y < 0.0 { 3.0 } else { 2.0 },
            x,
            if y < 0.0 { -z } else { z },
            2.0 * y,
        )
    } else {
        (
            if x < 0.0 { 1.0 } else { 0.0 },
            if x < 0.0 { z } else { -z },
            -y,
            2.0 * x,
        )
    }
}

fn dd(x: u64) -> f64 {
    d(x)
}

ops64! {
    V_ADD_F64 (m) => |a, b, _| add64(dd(a), dd(b), m.r16).to_bits(),
    V_MUL_F64 (m) => |a, b, _| mul64(dd(a), dd(b), m.r16).to_bits(),
    V_FMA_F64 (m) => |a, b, c| fma64(dd(a), dd(b), dd(c), m.r16).to_bits(),
    // CDNA: the destination is the addend (src2).
    V_FMAC_F64 (m) => |a, b, c| fma64(dd(a), dd(b), dd(c), m.r16).to_bits(),
    // gfx940: a 64-bit move, and (S0 << S1[2:0]) + S2 (LLVM selects it
    // for shifts of 0-4).
    V_MOV_B64 => |a, _, _| a,
    V_LSHL_ADD_U64 => |a, b, c| (a << (b & 7)).wrapping_add(c),
    V_MIN_F64 (m) => |a, b, _| vmin64(a, b, m.ieee),
    V_MAX_F64 (m) => |a, b, _| vmax64(a, b, m.ieee),
    V_MAX_NUM_F64 => |a, b, _| mm64(Number, true, a, b),
    V_MIN_NUM_F64 => |a, b, _| mm64(Number, false, a, b),
    V_MAXIMUM_F64 => |a, b, _| mm64(Propagate, true, a, b),
    V_MINIMUM_F64 => |a, b, _| mm64(Propagate, false, a, b),
    V_LDEXP_F64 (m) => |a, b, _| ldexp64(dd(a), b as u32 as i32, m.r16).to_bits(),
    V_DIV_FIXUP_F64 => |a, b, c| div_fixup64(dd(a), dd(b), dd(c)).to_bits(),
    V_RCP_F64 => |a, _, _| (1.0 / dd(a)).to_bits(),
    V_RSQ_F64 => |a, _, _| (1.0 / dd(a).sqrt()).to_bits(),
    V_SQRT_F64 => |a, _, _| dd(a).sqrt().to_bits(),
    V_TRUNC_F64 => |a, _, _| dd(a).trunc().to_bits(),
    V_CEIL_F64 => |a, _, _| dd(a).ceil().to_bits(),
    V_FLOOR_F64 => |a, _, _| dd(a).floor().to_bits(),
    V_RNDNE_F64 => |a, _, _| dd(a).round_ties_even().to_bits(),
    V_FRACT_F64 => |a, _, _| fract64(dd(a)).to_bits(),
    V_FREXP_MANT_F64 => |a, _, _| frexp64(dd(a)).0.to_bits(),
    V_FREXP_EXP_I32_F64 => |a, _, _| frexp64(dd(a)).1 as u32 as u64,
    V_CVT_F64_I32 => |a, _, _| (a as u32 as i32 as f64).to_bits(),
    V_CVT_F64_U32 => |a, _, _| (a as u32 as f64).to_bits(),
    V_CVT_I32_F64 => |a, _, _| f_to_i32(dd(a)) as u64,
    V_CVT_U32_F64 => |a, _, _| f_to_u32(dd(a)) as u64,
    V_CVT_F32_F64 (m) => |a, _, _| f64_to_f32(dd(a), m.r32).to_bits() as u64,
    V_CVT_F64_F32 => |a, _, _| (f(a as u32) as f64).to_bits(),
    V_LSHLREV_B64 => |a, b, _| b << (a & 63),
    V_LSHRREV_B64 => |a, b, _| b >> (a & 63),
    V_ASHRREV_I64 => |a, b, _| ((b as i64) >> (a & 63)) as u64,
    V_TRIG_PREOP_F64 => |a, b, _| trig_preop(dd(a), b as u32).to_bits(),
}

/// `v_trig_preop_f64`: 53 bits of 2/π starting at a bit offset chosen by
/// the exponent of `x` and `segment`, scaled for Payne–Hanek reduction
/// (RDNA3 pseudocode): the ISA's 2/π has 1201 fraction bits, zeros beyond;
/// results of inputs with exponent ≥ 1968 are scaled up by 2^128.
fn trig_preop(x: f64, segment: u32) -> f64 {
    // 2/π = 0.A2F9836E…, its first 1201 bits, most significant first (the
    // last word holds the final 49; computed by Machin's formula and
    // checked against fdlibm's ipio2 table).
    const TWO_OVER_PI: [u64; 19] = [
        0xA2F9836E4E441529,
        0xFC2757D1F534DDC0,
        0xDB6295993C439041,
        0xFE5163ABDEBBC561,
        0xB7246E3A424DD2E0,
        0x06492EEA09D1921C,
        0xFE1DEB1CB129A73E,
        0xE88235F52EBB4484,
        0xE99C7026B45F7E41,
        0x3991D639835339F4,
        0x9C845F8BBDF9283B,
        0x1FF897FFDE05980F,
        0xEF2F118B5A0A6D1F,
        0x6D367ECF27CB09B7,
        0x4F463F669E5FEA2D,
        0x7527BAC7EBE5F17B,
        0x3D0739F78A5292EA,
        0x6BFB5FB11F8D5D08,
        0x56033046FC7B0000,
    ];
    let exp = ((x.to_bits() >> 52) & 0x7ff) as i32;
    let shift = (segment & 0x1f) as i32 * 53 + (exp - 1077).max(0);
    let bit = |k: i32| -> u64 {
        let (word, off) = ((k / 64) as usize, 63 - k % 64);
        TWO_OVER_PI.get(word).map_or(0, |w| (w >> off) & 1)
    };
    let mant = (0..53).fold(0u64, |m, k| m << 1 | bit(shift + k));
    let scale = if exp >= 1968 { 128 } else { 0 };
    ldexp64(mant as f64, -53 - shift + scale, Round::Nearest)
}

pk! {
    V_PK_ADD_F16, true, (m) => |a, b, _| add16(a, b, m.r16),
    V_PK_MUL_F16, true, (m) => |a, b, _| mul16(a, b, m.r16),
    V_PK_FMA_F16, true, (m) => |a, b, c| fma16(a, b, c, m.r16),
    V_PK_MIN_F16, true, (m) => |a, b, _| vmin16(a, b, m.ieee),
    V_PK_MAX_F16, true, (m) => |a, b, _| vmax16(a, b, m.ieee),
    V_PK_MAX_NUM_F16, true => |a, b, _| mm16(Number, true, a, b),
    V_PK_MIN_NUM_F16, true => |a, b, _| mm16(Number, false, a, b),
    V_PK_MAXIMUM_F16, true => |a, b, _| mm16(Propagate, true, a, b),
    V_PK_MINIMUM_F16, true => |a, b, _| mm16(Propagate, false, a, b),
    V_PK_ADD_U16, false, [U16] => |a, b, _| a as i64 + b as i64,
    V_PK_ADD_I16, false, [I16] => |a, b, _| a as i16 as i64 + b as i16 as i64,
    V_PK_SUB_U16, false, [U16] => |a, b, _| a as i64 - b as i64,
    V_PK_SUB_I16, false, [I16] => |a, b, _| a as i16 as i64 - b as i16 as i64,
    // uncertain: clamp on a product (the ISA defines integer clamp as
    // saturating the result; taken here to hold for the multiplies too).
    V_PK_MUL_LO_U16, false, [U16] => |a, b, _| a as i64 * b as i64,
    V_PK_MAD_U16, false, [U16] => |a, b, c| a as i64 * b as i64 + c as i64,
    V_PK_MAD_I16, false, [I16] => |a, b, c| a as i16 as i64 * b as i16 as i64 + c as i16 as i64,
    V_PK_LSHLREV_B16, false => |a, b, _| b << (a & 15),
    V_PK_LSHRREV_B16, false => |a, b, _| (b & 0xffff) >> (a & 15),
    V_PK_ASHRREV_I16, false => |a, b, _| ((b as i16) >> (a & 15)) as u16 as u32,
    V_PK_MAX_U16, false => |a, b, _| (a & 0xffff).max(b & 0xffff),
    V_PK_MIN_U16, false => |a, b, _| (a & 0xffff).min(b & 0xffff),
    V_PK_MAX_I16, false => |a, b, _| (a as i16).max(b as i16) as u16 as u32,
    V_PK_MIN_I16, false => |a, b, _| (a as i16).min(b as i16) as u16 as u32,
}

fn dot2_f16(a: u32, b: u32, c: u32) -> u32 {
    let p = h(a) as f64 * h(b) as f64 + h(a >> 16) as f64 * h(b >> 16) as f64;
    ((p + f(c) as f64) as f32).to_bits()
}

fn dot2_bf16(a: u32, b: u32, c: u32) -> u32 {
    let p = bf16(a & 0xffff) as f64 * bf16(b & 0xffff) as f64
        + bf16(a >> 16) as f64 * bf16(b >> 16) as f64;
    ((p + f(c) as f64) as f32).to_bits()
}

/// Integer dot products: `k` lanes of `bits`-wide elements. The `iu`
/// forms take each source's signedness from its neg_lo bit (that is what
/// the bit means for them); the others are unsigned.
#[derive(Clone, Copy)]
enum Sign {
    Unsigned,
    /// Per source, from neg_lo.
    FromNeg,
    /// Both sources signed (gfx10's `v_dot*_i32_i*`).
    Signed,
}

fn dot_int(w: &mut Wave, i: &Inst, bits: u32, sign: Sign) -> Result {
    let n = w.lanes;
    let (mut b0, mut b1, mut b2) = ([0u32; MAX_LANES], [0u32; MAX_LANES], [0u32; MAX_LANES]);
    // gfx10's VOP2 `v_dot4c_i32_i8` has DPP forms: src0 crosses lanes.
    let a = if i.lane_sel == LaneSel::None {
        *w.vsrc(i.src[0], &mut b0)
    } else {
        cross_lane::dpp_fetch(w, i.src[0], i.lane_sel, cross_lane::gcn_dpp(i), &mut b0);
        b0
    };
    let b = *w.vsrc(i.src[1], &mut b1);
    // An op whose table has no src2 (v_dot8c_i32_i4) accumulates into its
    // destination (D = D + the dot product).
    let acc = match i.op.info().src[2] {
        Ty::None => i.dst[0],
        _ => i.src[2],
    };
    let c = *w.vsrc(acc, &mut b2);
    let (sa, sb) = match sign {
        Sign::Unsigned => (false, false),
        Sign::FromNeg => (i.mods.neg & 1 != 0, i.mods.neg & 2 != 0),
        Sign::Signed => (true, true),
    };
    // The accumulator and result are signed unless both sources are unsigned.
    let signed_acc = !matches!(sign, Sign::Unsigned);
    let elem = |v: u32, k: u32, s: bool| -> i64 {
        let x = (v >> (bits * k)) & ((1u64 << bits) - 1) as u32;
        if s {
            ((x << (32 - bits)) as i32 >> (32 - bits)) as i64
        } else {
            x as i64
        }
    };
    let mut res = [0u32; MAX_LANES];
    for l in 0..n {
        let acc = if signed_acc {
            c[l] as i32 as i64
        } else {
            c[l] as i64
        };
        let sum = (0..32 / bits).fold(acc, |s, k| s + elem(a[l], k, sa) * elem(b[l], k, sb));
        res[l] = match (i.mods.clamp, signed_acc) {
            (true, true) => sum.clamp(i32::MIN as i64, i32::MAX as i64) as u32,
            (true, false) => sum.clamp(0, u32::MAX as i64) as u32,
            (false, _) => sum as u32,
        };
    }
    let exec = write_mask(w, i);
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

/// `v_dot2_bf16_bf16`: bf16 result into one half of the destination
/// (op_sel bit 3), the accumulator half chosen by op_sel bit 2.
fn dot2_bf16_bf16(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let n = w.lanes;
    let (mut b0, mut b1, mut b2) = ([0u32; MAX_LANES], [0u32; MAX_LANES], [0u32; MAX_LANES]);
    let a = *w.vsrc(i.src[0], &mut b0);
    let b = *w.vsrc(i.src[1], &mut b1);
    let c = *w.vsrc(i.src[2], &mut b2);
    let res = &mut env.tmp.res[0];
    for l in 0..n {
        let (x, y) = (apply_neg_pk(a[l], i, 0), apply_neg_pk(b[l], i, 1));
        let acc = if i.mods.opsel & 4 != 0 {
            c[l] >> 16
        } else {
            c[l] & 0xffff
        };
        let p = bf16(x & 0xffff) as f64 * bf16(y & 0xffff) as f64
            + bf16(x >> 16) as f64 * bf16(y >> 16) as f64;
        res[l] = to_bf16((p + bf16(acc) as f64) as f32);
    }
    let mask = w.exec();
    let res = env.tmp.res[0];
    store(w, i, Ty::B16, &res, mask);
    Ok(Flow::Next)
}

/// f32 → bf16, round to nearest even (NaN stays NaN).
pub fn to_bf16(x: f32) -> u32 {
    let bits = x.to_bits();
    if x.is_nan() {
        return (bits >> 16) | 0x40;
    }
    (bits + 0x7fff + ((bits >> 16) & 1)) >> 16
}

/// `v_mqsad_u32_u8`: four 32-bit masked SADs of src1 against the byte
/// windows of the 64-bit src0, accumulated onto the four dwords of src2
/// (saturating with clamp).
fn mqsad_u32(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let a = w.lane64(i.src[0], l);
        let b = w.lane32(i.src[1], l);
        let acc: [u32; 4] = std::array::from_fn(|k| w.get_lane(i.src[2], l, k));
        for (k, acc) in acc.into_iter().enumerate() {
            let sum = acc as i64 + sad_bytes((a >> (8 * k)) as u32, b, true);
            let v = if i.mods.clamp {
                Range::U32.saturate(sum)
            } else {
                Range::U32.wrap(sum)
            };
            w.set_lane(i.dst[0], l, k, v);
        }
    }
    Ok(Flow::Next)
}

pub const TABLE: &[(Op, Exec)] = &[
    (
        Op::V_ADD_CO_U32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| carry(w, i, |a, b, _| a as i64 + b as i64)) as Exec,
    ),
    (
        Op::V_SUB_CO_U32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| carry(w, i, |a, b, _| a as i64 - b as i64)) as Exec,
    ),
    (
        Op::V_SUBREV_CO_U32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| carry(w, i, |a, b, _| b as i64 - a as i64)) as Exec,
    ),
    (
        Op::V_ADD_CO_CI_U32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            carry(w, i, |a, b, c| a as i64 + b as i64 + c as i64)
        }) as Exec,
    ),
    (
        Op::V_SUB_CO_CI_U32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            carry(w, i, |a, b, c| a as i64 - b as i64 - c as i64)
        }) as Exec,
    ),
    (
        Op::V_SUBREV_CO_CI_U32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            carry(w, i, |a, b, c| b as i64 - a as i64 - c as i64)
        }) as Exec,
    ),
    (
        Op::V_MAD_U64_U32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| mad64(w, i, false)) as Exec,
    ),
    (
        Op::V_MAD_I64_I32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| mad64(w, i, true)) as Exec,
    ),
    (Op::V_DIV_SCALE_F32, div_scale_f32 as Exec),
    (Op::V_DIV_SCALE_F64, div_scale_f64 as Exec),
    (Op::V_DIV_FMAS_F32, div_fmas_f32 as Exec),
    (Op::V_DIV_FMAS_F64, div_fmas_f64 as Exec),
    (
        Op::V_MBCNT_LO_U32_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| mbcnt(w, i, false)) as Exec,
    ),
    (
        Op::V_MBCNT_HI_U32_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| mbcnt(w, i, true)) as Exec,
    ),
    (Op::V_NOP, super::nop as Exec),
    (Op::V_PIPEFLUSH, super::nop as Exec),
    // gfx10's "clear the wave's exception state": softgpu raises no float
    // exceptions (no trap is ever enabled for them), so there is none.
    (Op::V_CLREXCP, super::nop as Exec),
    (
        Op::V_DOT2_F32_F16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot2(w, i, dot2_f16)) as Exec,
    ),
    (
        Op::V_DOT2_F32_BF16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot2(w, i, dot2_bf16)) as Exec,
    ),
    (
        Op::V_DOT4_U32_U8,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 8, Sign::Unsigned)) as Exec,
    ),
    (
        Op::V_DOT4_I32_IU8,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 8, Sign::FromNeg)) as Exec,
    ),
    (
        Op::V_DOT8_U32_U4,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 4, Sign::Unsigned)) as Exec,
    ),
    (
        Op::V_DOT8_I32_IU4,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 4, Sign::FromNeg)) as Exec,
    ),
    // gfx10's signed dots and the 16-bit pairs (RDNA2 guide, VOP3P
    // V_DOT2_I32_I16 … V_DOT8_I32_I4: D = the sum of the element products
    // + S2, clamp saturating the 32-bit result), and `v_dot4c_i32_i8`, the
    // VOP2 form accumulating into D (the decoder gives D as src2).
    (
        Op::V_DOT2_I32_I16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 16, Sign::Signed)) as Exec,
    ),
    (
        Op::V_DOT2_U32_U16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 16, Sign::Unsigned)) as Exec,
    ),
    (
        Op::V_DOT4_I32_I8,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 8, Sign::Signed)) as Exec,
    ),
    (
        Op::V_DOT4C_I32_I8,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 8, Sign::Signed)) as Exec,
    ),
    // GFX9's accumulating dot products: the destination is the
    // accumulator (v_dot2c_i32_i16 decodes it as src2; v_dot8c_i32_i4's
    // op table has no src2, so `dot_int` reads the destination).
    (
        Op::V_DOT2C_I32_I16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 16, Sign::Signed)) as Exec,
    ),
    (
        Op::V_DOT8C_I32_I4,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 4, Sign::Signed)) as Exec,
    ),
    (
        Op::V_DOT8_I32_I4,
        (|w: &mut Wave, _: &mut Env, i: &Inst| dot_int(w, i, 4, Sign::Signed)) as Exec,
    ),
    (Op::V_DOT2_BF16_BF16, dot2_bf16_bf16 as Exec),
    (Op::V_MQSAD_U32_U8, mqsad_u32 as Exec),
    (
        Op::V_QSAD_PK_U16_U8,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let clamp = i.mods.clamp;
            vop64(w, i, move |a, b, c| qsad(a, b, c, false, clamp))
        }) as Exec,
    ),
    (
        Op::V_MQSAD_PK_U16_U8,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let clamp = i.mods.clamp;
            vop64(w, i, move |a, b, c| qsad(a, b, c, true, clamp))
        }) as Exec,
    ),
    (
        Op::V_FMA_MIX_F32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| fma_mix(w, i, MixOut::F32)) as Exec,
    ),
    (
        Op::V_FMA_MIXLO_F16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| fma_mix(w, i, MixOut::Lo)) as Exec,
    ),
    (
        Op::V_FMA_MIXHI_F16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| fma_mix(w, i, MixOut::Hi)) as Exec,
    ),
];

#[derive(Clone, Copy, PartialEq)]
enum MixOut {
    F32,
    Lo,
    Hi,
}

/// `v_fma_mix*`: each source is f32, or f16 (low or high half) when its
/// opsel_hi bit is set, flushed as its own type's denormal mode says; the
/// fma is an f32 fma (one rounding), and mixlo/mixhi convert that f32 to
/// f16 (a second rounding, as the guide's code and LLVM's selection of
/// these ops for fptrunc(fma) say). These ops have no high halves to
/// negate, so the encoding's neg_hi bits mean abs.
fn fma_mix(w: &mut Wave, i: &Inst, out: MixOut) -> Result {
    let n = w.lanes;
    let mut vals = [[0f32; MAX_LANES]; 3];
    let (flush32_in, flush16_in) = (w.mode.flush_in_f32(), w.mode.flush_in_f16_f64());
    for (k, vals) in vals.iter_mut().enumerate() {
        let bit = 1u8 << k;
        let mut buf = [0u32; MAX_LANES];
        let src = w.vsrc(i.src[k], &mut buf);
        for l in 0..n {
            let mut x = if i.mods.opsel_hi & bit != 0 {
                let half = if i.mods.opsel & bit != 0 {
                    src[l] >> 16
                } else {
                    src[l]
                };
                h(if flush16_in { flush16(half) } else { half })
            } else {
                f(if flush32_in { flush32(src[l]) } else { src[l] })
            };
            if i.mods.neg_hi & bit != 0 {
                x = x.abs();
            }
            if i.mods.neg & bit != 0 {
                x = -x;
            }
            vals[l] = x;
        }
    }
    let exec = w.exec();
    let dx10 = w.mode.dx10_clamp();
    let fp = w.mode.fp();
    let (flush32_out, flush16_out) = (w.mode.flush_out_f32(), w.mode.flush_out_f16_f64());
    let Operand::Vgpr(r) = i.dst[0] else {
        return Ok(Flow::Next);
    };
    for l in 0..n {
        if exec >> l & 1 == 0 {
            continue;
        }
        let x = fma32(vals[0][l], vals[1][l], vals[2][l], fp.r32);
        let d = &mut w.vgpr[r as usize][l];
        let half = || {
            let v = f32_to_f16(x, fp.r16);
            let v = if i.mods.clamp { clamp01_16(v, dx10) } else { v };
            if flush16_out {
                flush16(v)
            } else {
                v
            }
        };
        *d = match out {
            MixOut::F32 => {
                let v = if i.mods.clamp { clamp01(x, dx10) } else { x }.to_bits();
                if flush32_out {
                    flush32(v)
                } else {
                    v
                }
            }
            MixOut::Lo => (*d & 0xffff_0000) | half(),
            MixOut::Hi => (*d & 0xffff) | half() << 16,
        };
    }
    Ok(Flow::Next)
}

/// gfx12's `v_s_*` transcendentals: the VOP3 op of their VALU twin on one
/// scalar source, written to an SGPR (RDNA4 guide, "VOP3 with an SGPR
/// destination"). The twin's lane function runs with the same modifiers,
/// rounding and denormal handling; every lane computes the same value, and
/// lane 0's is written (an f16 result zero-extended).
fn to_sgpr(w: &mut Wave, env: &mut Env, i: &Inst, f: LaneFn) -> Result {
    let fp = w.mode.fp();
    compute(w, i, env.tmp, 0, i.op.info().src, |a, b, c, r, n| {
        f(a, b, c, r, n, fp)
    });
    w.write_s32(i.dst[0], env.tmp.res[0][0]);
    Ok(Flow::Next)
}

/// Where `op` is in [`LANE_OPS`], found at compile time (an op without a
/// lane function does not compile).
const fn lane_index(op: Op) -> usize {
    let mut k = 0;
    while k < LANE_OPS.len() {
        if LANE_OPS[k].0 .0 == op.0 {
            return k;
        }
        k += 1;
    }
    panic!("the op has no lane function")
}

/// The lane function of a VALU op, resolved when the table is built.
macro_rules! lane_fn_of {
    ($op:ident) => {
        LANE_OPS[{
            const K: usize = lane_index(Op::$op);
            K
        }]
        .1
    };
}

const TABLE_TO_SGPR: &[(Op, Exec)] = &[
    (Op::V_S_EXP_F32, bind!(to_sgpr, lane_fn_of!(V_EXP_F32))),
    (Op::V_S_LOG_F32, bind!(to_sgpr, lane_fn_of!(V_LOG_F32))),
    (Op::V_S_RCP_F32, bind!(to_sgpr, lane_fn_of!(V_RCP_F32))),
    (Op::V_S_RSQ_F32, bind!(to_sgpr, lane_fn_of!(V_RSQ_F32))),
    (Op::V_S_SQRT_F32, bind!(to_sgpr, lane_fn_of!(V_SQRT_F32))),
    (Op::V_S_EXP_F16, bind!(to_sgpr, lane_fn_of!(V_EXP_F16))),
    (Op::V_S_LOG_F16, bind!(to_sgpr, lane_fn_of!(V_LOG_F16))),
    (Op::V_S_RCP_F16, bind!(to_sgpr, lane_fn_of!(V_RCP_F16))),
    (Op::V_S_RSQ_F16, bind!(to_sgpr, lane_fn_of!(V_RSQ_F16))),
    (Op::V_S_SQRT_F16, bind!(to_sgpr, lane_fn_of!(V_SQRT_F16))),
];

/// Every vector-ALU table.
pub fn tables() -> [&'static [(Op, Exec)]; 5] {
    [TABLE, TABLE32, TABLE64, TABLE_PK, TABLE_TO_SGPR]
}

/// Handlers for plain instances of the pure 32-bit instructions.
pub fn plain_table() -> &'static [(Op, Exec)] {
    TABLE32_PLAIN
}

/// Handlers for integer instructions whose clamp bit is set: they saturate.
pub fn saturating_table() -> &'static [(Op, Exec)] {
    TABLE32_SATURATING
}

/// The lane function of a pure 32-bit instruction (a VOPD half's twin).
pub fn lane_fn(op: Op) -> Option<LaneFn> {
    super::look_up(LANE_OPS, op)
}

/// VOPD whose halves are both plain (32-bit operands, which is nearly every
/// VOPD): the general `vopd` without per-operand type checks.
pub fn vopd_plain(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let Some(y) = i.vopd_y.as_deref() else {
        return Err(super::Trap::UnsupportedForm {
            op: i.op,
            why: "a VOPD instruction without its Y half".into(),
        });
    };
    if w.mode.flush_f32() {
        return vopd(w, env, i);
    }
    let (fx, fy) = env.code.vopd_fns(w.pc).ok_or(super::Trap::Unsupported)?;
    let n = w.lanes;
    let fp = w.mode.fp();
    for (half, f, slot) in [(i, fx, 0), (y, fy, 1)] {
        let [b0, b1, b2] = &mut env.tmp.src;
        let plain = |op: Operand, buf| {
            if op == Operand::None {
                &ZERO
            } else {
                w.vsrc(op, buf)
            }
        };
        let (a, b, c) = (
            plain(half.src[0], b0),
            plain(half.src[1], b1),
            plain(half.src[2], b2),
        );
        f(a, b, c, &mut env.tmp.res[slot], n, fp);
    }
    let exec = w.exec();
    let [rx, ry] = &env.tmp.res;
    w.write_v32(i.dst[0], rx, exec);
    w.write_v32(y.dst[0], ry, exec);
    Ok(Flow::Next)
}

/// VOPD: both halves read their sources before either writes.
pub fn vopd(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let Some(y) = i.vopd_y.as_deref() else {
        return Err(super::Trap::UnsupportedForm {
            op: i.op,
            why: "a VOPD instruction without its Y half".into(),
        });
    };
    let (fx, fy) = env.code.vopd_fns(w.pc).ok_or(super::Trap::Unsupported)?;
    let fp = w.mode.fp();
    let run =
        |f: LaneFn| move |a: &Lanes, b: &Lanes, c: &Lanes, r: &mut Lanes, n| f(a, b, c, r, n, fp);
    let tx = compute(w, i, env.tmp, 0, i.op.info().src, run(fx));
    let ty = compute(w, y, env.tmp, 1, y.op.info().src, run(fy));
    let exec = w.exec();
    let [rx, ry] = &env.tmp.res;
    store(w, i, tx, rx, exec);
    store(w, y, ty, ry, exec);
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::{sdwa_place, sdwa_select};

    /// Every select, zero- and sign-extended, against the field read by
    /// shifts and casts (RDNA2 guide, SDWA SRC_SEL and SEXT).
    #[test]
    fn sdwa_selects() {
        let v = 0x8f7e_c1d2u32;
        for sel in 0..4u8 {
            let byte = v >> (8 * sel) & 0xff;
            assert_eq!(sdwa_select(v, sel, false), byte);
            assert_eq!(sdwa_select(v, sel, true), byte as u8 as i8 as i32 as u32);
        }
        for (sel, word) in [(4u8, 0xc1d2u32), (5, 0x8f7e)] {
            assert_eq!(sdwa_select(v, sel, false), word);
            assert_eq!(sdwa_select(v, sel, true), word as u16 as i16 as i32 as u32);
        }
        // DWORD (6) and the reserved 7 read the whole register.
        assert_eq!(sdwa_select(v, 6, true), v);
        assert_eq!(sdwa_select(v, 7, false), v);
    }

    /// DST_SEL with each DST_UNUSED: the field, then zeros, the field's
    /// sign above (zeros below), or the old bits.
    #[test]
    fn sdwa_destinations() {
        let old = 0x1122_3344u32;
        assert_eq!(sdwa_place(0xabcd_ef80, old, 1, 0), 0x0000_8000);
        assert_eq!(sdwa_place(0xabcd_ef80, old, 1, 1), 0xffff_8000);
        assert_eq!(sdwa_place(0xabcd_ef7f, old, 1, 1), 0x0000_7f00);
        assert_eq!(sdwa_place(0xabcd_ef80, old, 1, 2), 0x1122_8044);
        assert_eq!(sdwa_place(0xabcd_ef80, old, 3, 1), 0x8000_0000);
        assert_eq!(sdwa_place(0x0000_8001, old, 4, 1), 0xffff_8001);
        assert_eq!(sdwa_place(0x0000_8001, old, 5, 1), 0x8001_0000);
        assert_eq!(sdwa_place(0x0000_8001, old, 5, 2), 0x8001_3344);
        assert_eq!(sdwa_place(0xabcd_ef80, old, 6, 0), 0xabcd_ef80);
    }
}
