//! CDNA's matrix cores: MFMA and SMFMAC (gfx90a, gfx94), the AccVGPR moves
//! and the packed-f32 VALU ops that came with them.
//!
//! # Layouts
//!
//! One driver runs every MFMA over a shape table (M, N, K, blocks, input
//! and accumulator types). Where each element lives is the rule of AMD's
//! Matrix Instruction Calculator (`ROCm/amd_matrix_instruction_calculator`,
//! class `InstCalcGfx9`, shared by its CDNA1/2/3 tables), restated here:
//!
//! - A (M×K per block, row i) and B (K×N, column j) share one rule with
//!   `outer` = M or N: a lane holds `per = K / (64 / (outer·blocks))`
//!   consecutive K values, packed from bit 0 of the operand's first VGPR
//!   upward (`k % per` is the element's index in the lane; 64-bit values
//!   take a VGPR pair); the lane is `outer·b + outer·blocks·(k / per) + i`.
//! - C and D (M×N per block): 32-bit results stack four rows in four
//!   consecutive VGPRs (a 64-bit result one row in one pair), N lanes a
//!   row; `64 / N` such row groups, and `ceil(64 / (M·N / rows))` blocks,
//!   share a VGPR's lanes before the next VGPRs are used (`out_slot`).
//! - cbsz/abid (calculator's `_get_cbsz_abid_transformed_block` and its
//!   README): block b's products read A's block
//!   `floor(b / 2^cbsz)·2^cbsz + abid`; cbsz > log2(blocks) or
//!   abid ≥ 2^cbsz is refused (`Trap::UnsupportedForm`: the README calls
//!   them illegal).
//! - blgp (`_get_blgp_transformed_lane`): B's value for lane l is read from
//!   another lane (`blgp_lane`); for gfx94's f64 forms the three blgp bits
//!   instead negate A, B and C (README, "BLGP … to negate FP64"); for
//!   gfx90a's f64 forms blgp is disallowed and refused if set.
//! - SMFMAC (gfx94): A holds two of each four K values of a row, laid out
//!   as a dense M×(K/2) input; the index VGPR (src2) has a 4-bit field per
//!   group of four in A's lane, bits 1:0 naming the first stored value's
//!   position in the group and 3:2 the second's; fields are packed from bit
//!   `4·(g % (per_A / 2))`, and with cbsz = 0 abid picks the set: the
//!   fields move up by `128·abid / bits` bits (calculator `_get_reg_name`
//!   with compression_index, and its README's SMFMAC section). B is dense
//!   (K×N) and the accumulator is D itself.
//!
//! # Numerics (uncertain: we had no CDNA3 ISA guide text to check)
//!
//! The hardware's internal order and precision of the summation is not
//! documented in what we read. Chosen, deterministic: every product is
//! formed exactly in f64 (all input types' products are exact there), the
//! K products of an element are summed in f64 in increasing k, C is added
//! in f64, and the sum is rounded once to f32, to nearest even; MODE's
//! rounding and denormal fields are not applied (MFMA denormals are kept).
//! The f64 forms fuse in increasing k: `acc = fma(a_k, b_k, acc)` from
//! acc = C. The integer forms are exact and wrap to 32 bits. xf32 inputs
//! are f32 words rounded (to nearest even) to 10 mantissa bits
//! (uncertain: truncation is possible). gfx94's fp8/bf8 are the FNUZ
//! formats (bias 8 and 16, no infinities, 0x80 the only NaN; `fp8.rs`
//! decodes both kinds).
//! EXEC is ignored (every lane of D is written, as wmma.rs does;
//! uncertain).

use softgpu_isa::matrix::{self, Accum, Elem, MatrixShape};
use softgpu_isa::{mai, Family, Inst, Op, Operand};

use super::fp8::{decode, F8};
use super::valu::clamp01;
use super::{Env, Exec, Flow, Result, Trap};
use crate::float::{add32, f, flush32, fma32, h, mul32};
use crate::wave::{Wave, MAX_LANES};

/// Where an element lives: VGPR offset from the operand's first, lane,
/// and bit offset in the VGPR (a 64-bit element: in the pair from `reg`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
struct Slot {
    reg: usize,
    lane: usize,
    shift: usize,
}

/// K values one lane holds of an input whose blocks of `outer` rows take
/// `outer·blocks` lanes.
fn per_lane(outer: usize, k_total: usize, blocks: usize) -> usize {
    k_total / (64 / (outer * blocks))
}

/// Element k of row (A) or column (B) `i` of block `b` of a dense input.
fn in_slot(
    outer: usize,
    k_total: usize,
    blocks: usize,
    bits: usize,
    i: usize,
    k: usize,
    b: usize,
) -> Slot {
    let per = per_lane(outer, k_total, blocks);
    let at = (k % per) * bits;
    Slot {
        reg: at / 32,
        lane: outer * b + outer * blocks * (k / per) + i,
        shift: at % 32,
    }
}

/// D[i][j] (and C[i][j]) of block `b`.
fn out_slot(s: MatrixShape, i: usize, j: usize, b: usize) -> Slot {
    let (m, n, bits) = (s.m, s.n, s.out_bits());
    // Rows a VGPR (pair) group holds: four 32-bit rows, or one 64-bit row.
    let rows = if bits == 64 { 1 } else { 4 };
    let groups_per_reg = 64 / n;
    let blocks_per_reg = 64_usize.div_ceil(m * n / rows);
    let regno = b * (m * n / 64) + i / (rows * groups_per_reg) * rows + i % rows;
    let lane = (b % blocks_per_reg) * n + (i / rows) % groups_per_reg * blocks_per_reg * n + j;
    Slot {
        reg: regno * bits / 32,
        lane,
        shift: 0,
    }
}

/// The lane B's value for `lane` is read from under `blgp`.
fn blgp_lane(lane: usize, blgp: u32) -> usize {
    match blgp {
        // Lanes 0-31 to both halves.
        1 => lane % 32,
        // Lanes 32-63 to both halves.
        2 => lane % 32 + 32,
        // Rotated down by 16: lane l reads lane l + 16.
        3 => (lane + 16) % 64,
        // One group of 16 (the (blgp - 4)th) to all four.
        4..=7 => 16 * (blgp as usize - 4) + lane % 16,
        _ => lane,
    }
}

/// A's block that block `b`'s products read under cbsz/abid.
fn broadcast_block(b: usize, cbsz: u32, abid: u32) -> usize {
    (b >> cbsz << cbsz) + abid as usize
}

/// The MAI fields of an instruction, and the negations in effect.
#[derive(Clone, Copy, Debug)]
struct Ctl {
    cbsz: u32,
    abid: u32,
    blgp: u32,
    /// Bit 0 negates A, bit 1 B, bit 2 C (gfx94 f64 blgp; or `mods.neg`).
    neg: u8,
}

fn controls(i: &Inst, s: MatrixShape) -> Result<Ctl> {
    let imm = i.imm as u32;
    let cbsz = imm & mai::CBSZ as u32;
    let abid = imm >> mai::ABID_SHIFT & 0xf;
    let blgp = imm >> mai::BLGP_SHIFT & 7;
    let refuse = |why: String| Err(Trap::UnsupportedForm { op: i.op, why });
    let mut ctl = Ctl {
        cbsz,
        abid,
        blgp,
        neg: i.mods.neg & 7,
    };
    if s.acc == Accum::F64 && blgp != 0 {
        if i.family != Family::Gfx94 {
            return refuse("BLGP is not allowed on gfx90a's f64 MFMA".into());
        }
        // gfx94's f64 forms read the field as neg:[A, B, C].
        ctl.neg |= blgp as u8;
        ctl.blgp = 0;
    }
    if s.sparse {
        let sets = 2 * 64 / s.a.bits();
        if cbsz == 0 && abid as usize >= sets {
            return refuse(format!("ABID {abid} names no index set ({sets} sets)"));
        }
    } else if (1usize << cbsz) > s.blocks || abid >= 1 << cbsz {
        return refuse(format!(
            "CBSZ {cbsz} / ABID {abid} do not fit {} block(s)",
            s.blocks
        ));
    }
    Ok(ctl)
}

/// One 32-bit word of an operand in one lane: a VGPR past the file faults
/// by name; an inline constant reads as its low dword (its high dword for
/// the second register of a 64-bit value).
fn word(w: &Wave, i: &Inst, op: Operand, reg: usize, lane: usize) -> Result<u32> {
    Ok(Src::of(w, i, op, reg + 1)?.word(reg, lane))
}

/// An MFMA operand resolved once per instruction: the VGPR rows the shape
/// reads (checked against the file here, so the element loops index them
/// directly), or an inline constant.
enum Src<'a> {
    Rows(&'a [[u32; MAX_LANES]]),
    Const(u64),
}

impl<'a> Src<'a> {
    /// Operand `op` of `i`, of `regs` registers.
    fn of(w: &'a Wave, i: &Inst, op: Operand, regs: usize) -> Result<Src<'a>> {
        match op {
            Operand::Vgpr(r) => {
                let first = r as usize;
                w.vgpr
                    .get(first..first + regs)
                    .map(Src::Rows)
                    .ok_or(Trap::RegisterRange {
                        op: i.op,
                        file: 'v',
                        index: first + regs - 1,
                    })
            }
            Operand::Const(c) => Ok(Src::Const(c)),
            operand => Err(Trap::NotAVgpr {
                role: "an MFMA operand",
                operand,
            }),
        }
    }

    /// One 32-bit word in one lane: an inline constant reads as its low
    /// dword (its high dword for the second register of a 64-bit value).
    #[inline(always)]
    fn word(&self, reg: usize, lane: usize) -> u32 {
        match self {
            Src::Rows(rows) => rows[reg][lane],
            Src::Const(c) if reg % 2 == 1 => (c >> 32) as u32,
            Src::Const(c) => *c as u32,
        }
    }

    /// The raw bits of an element of `bits` at `slot`.
    #[inline(always)]
    fn raw(&self, slot: Slot, bits: usize) -> u64 {
        let lo = self.word(slot.reg, slot.lane);
        match bits {
            64 => lo as u64 | (self.word(slot.reg + 1, slot.lane) as u64) << 32,
            32 => lo as u64,
            _ => (lo >> slot.shift) as u64 & ((1 << bits) - 1),
        }
    }
}

/// Registers an input of `outer` rows (or columns) and `k` stored values
/// in `blocks` blocks of `bits`-bit elements takes.
fn input_regs(outer: usize, k: usize, blocks: usize, bits: usize) -> usize {
    (per_lane(outer, k, blocks) * bits).div_ceil(32)
}

/// An f32 word rounded to xf32's 10 mantissa bits, to nearest even.
fn xf32(bits: u32) -> f32 {
    let x = f(bits);
    if !x.is_finite() {
        return x;
    }
    let keep = 13;
    let half = 1u32 << (keep - 1);
    let lsb = bits >> keep & 1;
    f((bits.wrapping_add(half - 1 + lsb)) & !((1 << keep) - 1))
}

/// An input element's value (integers exactly).
fn value(raw: u64, ty: Elem) -> f64 {
    match ty {
        Elem::F32 => f(raw as u32) as f64,
        Elem::Xf32 => xf32(raw as u32) as f64,
        Elem::F16 => h(raw as u32) as f64,
        Elem::Bf16 => f((raw as u32) << 16) as f64,
        Elem::I8 => raw as u8 as i8 as f64,
        Elem::Fp8 => decode(F8::Fp8Fnuz, raw as u8) as f64,
        Elem::Bf8 => decode(F8::Bf8Fnuz, raw as u8) as f64,
        Elem::F64 => f64::from_bits(raw),
    }
}

fn sign(neg: u8, bit: u8) -> f64 {
    if neg >> bit & 1 != 0 {
        -1.0
    } else {
        1.0
    }
}

/// An MFMA's working space, kept per worker (in
/// [`Scratch`](super::Scratch)): once the largest shape has run, an MFMA
/// allocates nothing.
#[derive(Default)]
pub struct Buffers {
    /// A's values (`gather_a`).
    a: Vec<f64>,
    /// B's values (`gather_b`).
    b: Vec<f64>,
    /// One row of D's sums, and where each of its elements lives.
    sums: Vec<f64>,
    slots: Vec<Slot>,
    /// D, written to the file once every element is computed (D may be C).
    out: Vec<[u32; MAX_LANES]>,
}

/// `buf` as `len` copies of `value`.
fn filled<T: Clone>(buf: &mut Vec<T>, len: usize, value: T) -> &mut [T] {
    buf.clear();
    buf.resize(len, value);
    buf
}

/// A, as `[block][row][k]` (block = the block whose products use it),
/// into `a`.
fn gather_a(w: &Wave, i: &Inst, s: MatrixShape, ctl: Ctl, a: &mut Vec<f64>) -> Result<()> {
    let a = filled(a, s.blocks * s.m * s.k, 0.0);
    let bits = s.a.bits();
    if s.sparse {
        let src = Src::of(w, i, i.src[0], input_regs(s.m, s.k / 2, 1, bits))?;
        return gather_sparse_a(w, i, s, ctl, &src, a);
    }
    let src = Src::of(w, i, i.src[0], input_regs(s.m, s.k, s.blocks, bits))?;
    let sign = sign(ctl.neg, 0);
    for b in 0..s.blocks {
        let from = broadcast_block(b, ctl.cbsz, ctl.abid);
        for r in 0..s.m {
            for k in 0..s.k {
                let slot = in_slot(s.m, s.k, s.blocks, bits, r, k, from);
                a[(b * s.m + r) * s.k + k] = sign * value(src.raw(slot, bits), s.a);
            }
        }
    }
    Ok(())
}

/// SMFMAC's A (one block): each group of four K values holds the two
/// stored ones at the positions its index field names (both may name one
/// position: their sum is used, uncertain).
fn gather_sparse_a(
    w: &Wave,
    i: &Inst,
    s: MatrixShape,
    ctl: Ctl,
    src: &Src,
    a: &mut [f64],
) -> Result<()> {
    let bits = s.a.bits();
    let stored = s.k / 2;
    let per = per_lane(s.m, stored, 1);
    let set = if ctl.cbsz == 0 {
        128 * ctl.abid as usize / bits
    } else {
        0
    };
    let index = super::vgpr(i.src[2], "an SMFMAC index")?;
    let index = Src::of(w, i, Operand::Vgpr(index as u16), 1)?;
    for r in 0..s.m {
        for g in 0..s.k / 4 {
            let first = in_slot(s.m, stored, 1, bits, r, 2 * g, 0);
            let at = 4 * (g % (per / 2)) + set;
            let idx = index.word(0, first.lane) >> at;
            for n in 0..2 {
                let slot = in_slot(s.m, stored, 1, bits, r, 2 * g + n, 0);
                let pos = 4 * g + (idx >> (2 * n) & 3) as usize;
                a[r * s.k + pos] += sign(ctl.neg, 0) * value(src.raw(slot, bits), s.a);
            }
        }
    }
    Ok(())
}

/// B, as `[block][k][column]` (a row of B beside the columns the dot
/// products advance together), its lanes swizzled by blgp, into `out`.
fn gather_b(w: &Wave, i: &Inst, s: MatrixShape, ctl: Ctl, out: &mut Vec<f64>) -> Result<()> {
    let bits = s.b.bits();
    let src = Src::of(w, i, i.src[1], input_regs(s.n, s.k, s.blocks, bits))?;
    let sign = sign(ctl.neg, 1);
    let out = filled(out, s.blocks * s.k * s.n, 0.0);
    for b in 0..s.blocks {
        for k in 0..s.k {
            for c in 0..s.n {
                let mut slot = in_slot(s.n, s.k, s.blocks, bits, c, k, b);
                slot.lane = blgp_lane(slot.lane, ctl.blgp);
                out[(b * s.k + k) * s.n + c] = sign * value(src.raw(slot, bits), s.b);
            }
        }
    }
    Ok(())
}

/// Row `row` of A times B (`[k][column]`, one block) into `acc`, a sum
/// per column: each column's products in increasing k, the columns side
/// by side (independent sums, so they pipeline and vectorise; each one's
/// order and rounding is the semantics'). The f64 forms fuse each product
/// into the sum from C (`acc` holds C on entry); the others sum the
/// products exactly from -0.0, the identity of IEEE addition.
fn row_times_b(s: MatrixShape, row: &[f64], b: &[f64], acc: &mut [f64]) {
    if s.acc != Accum::F64 {
        acc.fill(-0.0);
    }
    for (k, &x) in row.iter().enumerate() {
        let b_row = &b[k * s.n..][..s.n];
        if s.acc == Accum::F64 {
            for (sum, &y) in acc.iter_mut().zip(b_row) {
                *sum = x.mul_add(y, *sum);
            }
        } else {
            for (sum, &y) in acc.iter_mut().zip(b_row) {
                *sum += x * y;
            }
        }
    }
}

/// One result element from its sum (see [`row_times_b`]) and C's raw
/// bits.
fn result(s: MatrixShape, ctl: Ctl, clamp: bool, sum: f64, c: u64) -> u64 {
    match s.acc {
        Accum::F64 => sum.to_bits(),
        Accum::F32 => {
            let c = sign(ctl.neg, 2) * f(c as u32) as f64;
            // One rounding, to nearest even.
            ((sum + c) as f32).to_bits() as u64
        }
        Accum::I32 => {
            let v = sum as i64 + c as u32 as i32 as i64;
            let v = if clamp {
                v.clamp(i32::MIN as i64, i32::MAX as i64)
            } else {
                v
            };
            v as i32 as u32 as u64
        }
    }
}

fn mfma(w: &mut Wave, bufs: &mut Buffers, i: &Inst, s: MatrixShape) -> Result {
    if w.lanes != MAX_LANES {
        return Err(Trap::UnsupportedForm {
            op: i.op,
            why: "an MFMA runs in wave64 only".into(),
        });
    }
    let ctl = controls(i, s)?;
    let regs = s.out_regs();
    let d = dst(w, i, regs)?;
    let c_op = if s.sparse {
        Operand::Vgpr(d as u16)
    } else {
        i.src[2]
    };
    gather_a(w, i, s, ctl, &mut bufs.a)?;
    gather_b(w, i, s, ctl, &mut bufs.b)?;
    let c_src = Src::of(w, i, c_op, regs)?;
    let out = filled(&mut bufs.out, regs, [0; MAX_LANES]);
    let sums = filled(&mut bufs.sums, s.n, 0.0);
    let slots = filled(&mut bufs.slots, s.n, Slot::default());
    for blk in 0..s.blocks {
        let b = &bufs.b[blk * s.k * s.n..][..s.k * s.n];
        for r in 0..s.m {
            let row = &bufs.a[(blk * s.m + r) * s.k..][..s.k];
            for (c, slot) in slots.iter_mut().enumerate() {
                *slot = out_slot(s, r, c, blk);
            }
            if s.acc == Accum::F64 {
                for (sum, &slot) in sums.iter_mut().zip(&*slots) {
                    *sum = sign(ctl.neg, 2) * f64::from_bits(c_src.raw(slot, 64));
                }
            }
            row_times_b(s, row, b, sums);
            for (&sum, &slot) in sums.iter().zip(&*slots) {
                let cv = c_src.raw(slot, s.out_bits());
                let v = result(s, ctl, i.mods.clamp, sum, cv);
                out[slot.reg][slot.lane] = v as u32;
                if s.out_bits() == 64 {
                    out[slot.reg + 1][slot.lane] = (v >> 32) as u32;
                }
            }
        }
    }
    w.vgpr[d..d + regs].copy_from_slice(out);
    Ok(Flow::Next)
}

/// Every MFMA and SMFMAC of gfx90a and gfx94.
pub const MFMA: &[(Op, Exec)] = &{
    let mut table = [(Op::S_NOP, run as Exec); matrix::SHAPES.len()];
    let mut n = 0;
    while n < table.len() {
        table[n].0 = matrix::SHAPES[n].0;
        n += 1;
    }
    table
};

/// An MFMA or SMFMAC, by its shape in the matrix table.
fn run(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    match matrix::shape(i.op) {
        Some(s) => mfma(w, &mut env.tmp.matrix, i, s),
        None => Err(Trap::UnsupportedForm {
            op: i.op,
            why: "not a matrix instruction".into(),
        }),
    }
}

/// A 32-bit source in one lane: a VGPR (AccVGPRs included) or a scalar
/// operand.
fn src32(w: &Wave, i: &Inst, op: Operand, lane: usize) -> Result<u32> {
    match op {
        Operand::Vgpr(_) => word(w, i, op, 0, lane),
        other => Ok(w.read_s32(other)),
    }
}

/// The first VGPR of a destination of `regs` registers, checked against
/// the file.
fn dst(w: &Wave, i: &Inst, regs: usize) -> Result<usize> {
    let d = super::vgpr(i.dst[0], "a destination")?;
    if d + regs > w.vgpr.len() {
        return Err(Trap::RegisterRange {
            op: i.op,
            file: 'v',
            index: d + regs - 1,
        });
    }
    Ok(d)
}

/// `v_accvgpr_read_b32`, `v_accvgpr_write_b32`, `v_accvgpr_mov_b32`: with
/// AccVGPRs numbered after the VGPRs, all three are a 32-bit copy under
/// EXEC (a CDNA wave's file holds both).
fn acc_move(w: &mut Wave, i: &Inst) -> Result {
    let d = dst(w, i, 1)?;
    let exec = w.exec();
    let mut vals = [0u32; MAX_LANES];
    for (l, v) in vals.iter_mut().enumerate().take(w.lanes) {
        *v = src32(w, i, i.src[0], l)?;
    }
    for (l, v) in vals.iter().enumerate().take(w.lanes) {
        if exec >> l & 1 != 0 {
            w.vgpr[d][l] = *v;
        }
    }
    Ok(Flow::Next)
}

/// Dword `sel` of a 64-bit source of a packed-f32 op in one lane. An inline
/// constant gives its low dword to both halves (uncertain: what hardware
/// feeds the high half from a constant is not pinned down).
fn dword(w: &Wave, i: &Inst, k: usize, lane: usize, sel: bool) -> Result<u32> {
    let sel = sel as usize;
    match i.src[k] {
        op @ Operand::Vgpr(_) => word(w, i, op, sel, lane),
        Operand::Sgpr(r) => Ok(*w.sgpr.get(r as usize + sel).unwrap_or(&0)),
        other => Ok(w.read_s32(other)),
    }
}

/// The packed-f32 VOP3P ops (gfx90a, gfx94).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Pk {
    Fma,
    Mul,
    Add,
    Mov,
}

/// One half (0 low, 1 high) of a packed-f32 op in one lane. For each
/// source, OP_SEL (low half) or OP_SEL_HI (high half) picks the dword it
/// reads, NEG or NEG_HI negates it (LLVM's VOP3P definition of the ops).
/// `v_pk_mov_b32` instead takes its low dword from src0 and its high dword
/// from src1, OP_SEL[0] and OP_SEL[1] choosing which dword of each (LLVM's
/// 64-bit copies build it so; OP_SEL_HI unused).
fn pk_half(w: &Wave, i: &Inst, op: Pk, lane: usize, half: usize) -> Result<u32> {
    let m = &i.mods;
    if op == Pk::Mov {
        return dword(w, i, half, lane, m.opsel >> half & 1 != 0);
    }
    let mut x = [0f32; 3];
    let srcs = if op == Pk::Fma { 3 } else { 2 };
    for (k, x) in x.iter_mut().enumerate().take(srcs) {
        let (sel, neg) = if half == 0 {
            (m.opsel, m.neg)
        } else {
            (m.opsel_hi, m.neg_hi)
        };
        let mut bits = dword(w, i, k, lane, sel >> k & 1 != 0)?;
        if w.mode.flush_in_f32() {
            bits = flush32(bits);
        }
        *x = if neg >> k & 1 != 0 { -f(bits) } else { f(bits) };
    }
    let rm = w.mode.fp().r32;
    let v = match op {
        Pk::Fma => fma32(x[0], x[1], x[2], rm),
        Pk::Mul => mul32(x[0], x[1], rm),
        _ => add32(x[0], x[1], rm),
    };
    let v = if m.clamp {
        clamp01(v, w.mode.dx10_clamp())
    } else {
        v
    };
    let bits = v.to_bits();
    Ok(if w.mode.flush_out_f32() {
        flush32(bits)
    } else {
        bits
    })
}

fn pk_f32(w: &mut Wave, i: &Inst, op: Pk) -> Result {
    let d = dst(w, i, 2)?;
    let exec = w.exec();
    let mut out = [[0u32; 2]; MAX_LANES];
    for (l, o) in out.iter_mut().enumerate().take(w.lanes) {
        if exec >> l & 1 != 0 {
            *o = [pk_half(w, i, op, l, 0)?, pk_half(w, i, op, l, 1)?];
        }
    }
    for (l, o) in out.iter().enumerate().take(w.lanes) {
        if exec >> l & 1 != 0 {
            w.vgpr[d][l] = o[0];
            w.vgpr[d + 1][l] = o[1];
        }
    }
    Ok(Flow::Next)
}

/// The AccVGPR moves and the packed-f32 ops.
pub const TABLE: &[(Op, Exec)] = &[
    (Op::V_ACCVGPR_READ_B32, |w, _, i| acc_move(w, i)),
    (Op::V_ACCVGPR_WRITE_B32, |w, _, i| acc_move(w, i)),
    (Op::V_ACCVGPR_MOV_B32, |w, _, i| acc_move(w, i)),
    (Op::V_PK_FMA_F32, |w, _, i| pk_f32(w, i, Pk::Fma)),
    (Op::V_PK_MUL_F32, |w, _, i| pk_f32(w, i, Pk::Mul)),
    (Op::V_PK_ADD_F32, |w, _, i| pk_f32(w, i, Pk::Add)),
    (Op::V_PK_MOV_B32, |w, _, i| pk_f32(w, i, Pk::Mov)),
];

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::float::to_h;
    use crate::wave::NUM_VGPRS_CDNA;
    use softgpu_isa::matrix::SHAPES;

    // The test's own statement of the calculator's layout, in the form of
    // its per-instruction coordinate equations (`_coord_to_lane_eqn`,
    // `_coord_to_output_reg_eqn`), not the general walk `in_slot` and
    // `out_slot` implement.

    /// (reg, lane, bit) of element k of row/column i of block b of a dense
    /// input: K values run through the lane's bits from bit 0, and the
    /// lane is `outer·b + outer·blocks·floor(k / (outer·K·blocks / 64)) + i`.
    fn calc_in(
        outer: usize,
        kk: usize,
        blocks: usize,
        bits: usize,
        i: usize,
        k: usize,
        b: usize,
    ) -> (usize, usize, usize) {
        let div = outer * kk * blocks / 64;
        let lane = outer * b + outer * blocks * (k / div) + i;
        let bit = (k % div) * bits;
        (bit / 32, lane, bit % 32)
    }

    /// (reg, lane) of D[i][j] of block b.
    fn calc_out(s: MatrixShape, i: usize, j: usize, b: usize) -> (usize, usize) {
        let (m, n) = (s.m, s.n);
        if s.acc == Accum::F64 {
            let reg = if s.blocks == 1 { 2 * (i / 4) } else { 0 };
            let block_lanes = if m * n < 64 { n * b } else { 0 };
            return (reg, 16 * (i % 4) + block_lanes + j);
        }
        let reg = match (m, s.blocks) {
            (4, 16) => i,
            (16, 4) => 4 * b + i % 4,
            (16, 1) => i % 4,
            (32, 2) => 16 * b + 4 * (i / 8) + i % 4,
            (32, 1) => 4 * (i / 8) + i % 4,
            other => panic!("no equation for {other:?}"),
        };
        let rows = match (n * m / 4).cmp(&64) {
            std::cmp::Ordering::Greater => (n * (i / 4)) % 64,
            std::cmp::Ordering::Equal => n * (i / 4),
            std::cmp::Ordering::Less => 0,
        };
        let block_lanes = if m * n < 64 { n * b } else { 0 };
        (reg, rows + block_lanes + j)
    }

    /// The lane B's value comes from under blgp, as the README lists the
    /// encodings: which 16-lane group feeds each group.
    fn calc_blgp(lane: usize, blgp: u32) -> usize {
        const GROUPS: [[usize; 4]; 8] = [
            [0, 1, 2, 3],
            [0, 1, 0, 1],
            [2, 3, 2, 3],
            [1, 2, 3, 0],
            [0, 0, 0, 0],
            [1, 1, 1, 1],
            [2, 2, 2, 2],
            [3, 3, 3, 3],
        ];
        16 * GROUPS[blgp as usize][lane / 16] + lane % 16
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn small(&mut self, range: i64) -> f64 {
            (self.next() % (2 * range as u64 + 1)) as i64 as f64 - range as f64
        }
    }

    /// A random code of `ty` whose value every path reads exactly.
    fn code(rng: &mut Rng, ty: Elem) -> u64 {
        match ty {
            // n/256 with |n| ≤ 1000: ten significant bits, exact in xf32.
            Elem::F32 | Elem::Xf32 => ((rng.small(1000) / 256.0) as f32).to_bits() as u64,
            Elem::F16 => to_h((rng.small(100) / 16.0) as f32) as u64,
            Elem::Bf16 => (((rng.small(100) / 16.0) as f32).to_bits() >> 16) as u64,
            Elem::I8 => rng.next() & 0xff,
            Elem::Fp8 | Elem::Bf8 => match rng.next() & 0xff {
                0x80 => 0,
                c => c,
            },
            Elem::F64 => (rng.small(1 << 20) / 1024.0).to_bits(),
        }
    }

    fn put(
        w: &mut Wave,
        base: usize,
        (reg, lane, shift): (usize, usize, usize),
        bits: usize,
        v: u64,
    ) {
        if bits == 64 {
            w.vgpr[base + reg][lane] = v as u32;
            w.vgpr[base + reg + 1][lane] = (v >> 32) as u32;
        } else {
            let mask = (((1u64 << bits) - 1) << shift) as u32;
            let cell = &mut w.vgpr[base + reg][lane];
            *cell = (*cell & !mask) | ((v << shift) as u32 & mask);
        }
    }

    fn get(w: &Wave, base: usize, (reg, lane, shift): (usize, usize, usize), bits: usize) -> u64 {
        let lo = w.vgpr[base + reg][lane] as u64;
        match bits {
            64 => lo | (w.vgpr[base + reg + 1][lane] as u64) << 32,
            32 => lo,
            _ => lo >> shift & ((1 << bits) - 1),
        }
    }

    const A: usize = 0;
    const B: usize = 16;
    const IDX: usize = 40;
    const C: usize = 256;
    const D: usize = 300;

    fn cdna_wave() -> Wave {
        let mut w = Wave::with_vgprs(NUM_VGPRS_CDNA);
        w.lanes = 64;
        w.set_exec(u64::MAX);
        w
    }

    fn inst(op: Op, s: MatrixShape, imm: i32) -> Inst {
        let mut i = Inst::new(op, Family::Gfx94);
        i.dst[0] = Operand::Vgpr(D as u16);
        i.src[0] = Operand::Vgpr(A as u16);
        i.src[1] = Operand::Vgpr(B as u16);
        i.src[2] = Operand::Vgpr(if s.sparse { IDX } else { C } as u16);
        i.imm = imm;
        i
    }

    /// The dense A the op should see for block b: for SMFMAC, the stored
    /// pairs placed where their index fields say (the test fills them
    /// first; `calc_in` over K/2 gives their slots, the README's set
    /// offsets their fields).
    fn fill(w: &mut Wave, rng: &mut Rng, s: MatrixShape, abid: u32) -> Vec<f64> {
        let mut dense = vec![0.0; s.blocks * s.m * s.k];
        if s.sparse {
            let bits = s.a.bits();
            let set = abid as usize * if bits == 16 { 8 } else { 16 };
            for r in 0..s.m {
                for g in 0..s.k / 4 {
                    let first = rng.next() as usize % 3;
                    let second = first + 1 + rng.next() as usize % (3 - first);
                    let lane = s.m * (4 * g / (32 / bits * 4)) + r;
                    let at = 4 * (g % (32 / bits)) + set;
                    let cell = &mut w.vgpr[IDX][lane];
                    *cell = (*cell & !(0xf << at)) | ((first | second << 2) as u32) << at;
                    for (n, pos) in [first, second].into_iter().enumerate() {
                        let v = code(rng, s.a);
                        let slot = calc_in(s.m, s.k / 2, 1, bits, r, 2 * g + n, 0);
                        put(w, A, slot, bits, v);
                        dense[r * s.k + 4 * g + pos] = value(v, s.a);
                    }
                }
            }
            return dense;
        }
        for b in 0..s.blocks {
            for r in 0..s.m {
                for k in 0..s.k {
                    let v = code(rng, s.a);
                    put(
                        w,
                        A,
                        calc_in(s.m, s.k, s.blocks, s.a.bits(), r, k, b),
                        s.a.bits(),
                        v,
                    );
                    dense[(b * s.m + r) * s.k + k] = value(v, s.a);
                }
            }
        }
        dense
    }

    /// Runs `op` on random inputs and checks D against a host matmul.
    fn check(op: Op, s: MatrixShape, cbsz: u32, abid: u32, blgp: u32, seed: u64) {
        let mut w = cdna_wave();
        let mut rng = Rng(seed);
        let a = fill(&mut w, &mut rng, s, if cbsz == 0 { abid } else { 0 });
        for b in 0..s.blocks {
            for k in 0..s.k {
                for c in 0..s.n {
                    let slot = calc_in(s.n, s.k, s.blocks, s.b.bits(), c, k, b);
                    put(&mut w, B, slot, s.b.bits(), code(&mut rng, s.b));
                }
            }
        }
        let out_bits = s.out_bits();
        let c_base = if s.sparse { D } else { C };
        for r in 0..s.out_regs() {
            for l in 0..64 {
                w.vgpr[c_base + r][l] = match s.acc {
                    Accum::F32 => ((rng.small(1000) / 64.0) as f32).to_bits(),
                    _ => rng.next() as u32,
                };
                if s.acc == Accum::F64 && r % 2 == 1 {
                    let v = (rng.small(1 << 20) / 1024.0).to_bits();
                    w.vgpr[c_base + r - 1][l] = v as u32;
                    w.vgpr[c_base + r][l] = (v >> 32) as u32;
                }
            }
        }
        let before = w.vgpr.to_vec();
        let imm = (cbsz | abid << mai::ABID_SHIFT | blgp << mai::BLGP_SHIFT) as i32;
        mfma(&mut w, &mut Buffers::default(), &inst(op, s, imm), s).unwrap();
        // gfx94's f64 forms read blgp as negations.
        let (neg, blgp) = if s.acc == Accum::F64 {
            (blgp, 0)
        } else {
            (0, blgp)
        };
        let sg = |bit: u32| if neg >> bit & 1 != 0 { -1.0 } else { 1.0 };
        for blk in 0..s.blocks {
            let from = (blk >> cbsz << cbsz) + abid as usize;
            let from = if s.sparse { blk } else { from };
            for r in 0..s.m {
                for c in 0..s.n {
                    let (reg, lane) = calc_out(s, r, c, blk);
                    let cv = {
                        let v = before[c_base + reg][lane] as u64;
                        if out_bits == 64 {
                            v | (before[c_base + reg + 1][lane] as u64) << 32
                        } else {
                            v
                        }
                    };
                    let mut terms = Vec::new();
                    for k in 0..s.k {
                        let (breg, blane, bshift) =
                            calc_in(s.n, s.k, s.blocks, s.b.bits(), c, k, blk);
                        let bv = {
                            let mut probe = cdna_wave();
                            probe.vgpr.copy_from_slice(&before);
                            get(
                                &probe,
                                B,
                                (breg, calc_blgp(blane, blgp), bshift),
                                s.b.bits(),
                            )
                        };
                        terms.push(sg(0) * a[(from * s.m + r) * s.k + k] * sg(1) * value(bv, s.b));
                    }
                    let got = get(&w, D, (reg, lane, 0), out_bits);
                    match s.acc {
                        Accum::I32 => {
                            let want = (terms.iter().sum::<f64>() as i64 + cv as i32 as i64) as i32;
                            assert_eq!(got as i32, want, "{op:?} D[{r}][{c}] block {blk}");
                        }
                        Accum::F64 => {
                            let want = terms
                                .iter()
                                .fold(sg(2) * f64::from_bits(cv), |acc, t| t + acc);
                            assert_eq!(f64::from_bits(got), want, "{op:?} D[{r}][{c}] block {blk}");
                        }
                        Accum::F32 => {
                            let want = terms.iter().sum::<f64>() + f(cv as u32) as f64;
                            let scale: f64 = terms.iter().map(|t| t.abs()).sum::<f64>()
                                + f(cv as u32).abs() as f64;
                            let err = (f(got as u32) as f64 - want).abs();
                            assert!(
                                err <= scale * 1e-6 + 1e-30,
                                "{op:?} D[{r}][{c}] block {blk}: {} vs {want}",
                                f(got as u32)
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_shape_matches_a_host_matmul() {
        for (n, &(op, s)) in SHAPES.iter().enumerate() {
            check(op, s, 0, 0, 0, 0x9e37_79b9_7f4a_7c15 + n as u64);
        }
    }

    #[test]
    fn cbsz_abid_broadcast_a_blocks() {
        for &(op, s) in SHAPES.iter().filter(|(_, s)| s.blocks > 1 && !s.sparse) {
            let max = s.blocks.trailing_zeros();
            for cbsz in 1..=max {
                let abid = (1 << cbsz) - 1;
                check(op, s, cbsz, abid, 0, 7 + cbsz as u64);
            }
        }
    }

    #[test]
    fn blgp_swizzles_b_lanes() {
        for &(op, s) in SHAPES
            .iter()
            .filter(|(_, s)| !s.sparse && s.acc != Accum::F64)
        {
            for blgp in 1..8 {
                check(op, s, 0, 0, blgp, 11 + blgp as u64);
            }
        }
    }

    #[test]
    fn gfx94_f64_blgp_negates() {
        for &(op, s) in SHAPES.iter().filter(|(_, s)| s.acc == Accum::F64) {
            for blgp in 1..8 {
                check(op, s, 0, 0, blgp, 3 + blgp as u64);
            }
        }
    }

    #[test]
    fn smfmac_index_sets() {
        for &(op, s) in SHAPES.iter().filter(|(_, s)| s.sparse) {
            let sets = if s.a.bits() == 16 { 4 } else { 2 };
            for abid in 0..sets {
                check(op, s, 0, abid, 0, 21 + abid as u64);
            }
        }
    }

    /// Every element of A, B and D lands on its own bits, all within the
    /// operand's VGPRs (per the opcode tables' operand widths) and all of
    /// the 64 lanes used.
    #[test]
    fn layouts_are_bijections() {
        for &(op, s) in SHAPES {
            let stored_k = if s.sparse { s.k / 2 } else { s.k };
            for (outer, kk, bits) in [(s.m, stored_k, s.a.bits()), (s.n, s.k, s.b.bits())] {
                let blocks = s.blocks;
                let regs = (per_lane(outer, kk, blocks) * bits).div_ceil(32);
                let mut seen = HashSet::new();
                for b in 0..blocks {
                    for i in 0..outer {
                        for k in 0..kk {
                            let slot = in_slot(outer, kk, blocks, bits, i, k, b);
                            assert_eq!(
                                (slot.reg, slot.lane, slot.shift),
                                calc_in(outer, kk, blocks, bits, i, k, b)
                            );
                            assert!(slot.reg + bits.div_ceil(32) <= regs && slot.lane < 64);
                            for bit in 0..bits {
                                assert!(
                                    seen.insert((slot.reg, slot.lane, slot.shift + bit)),
                                    "{op:?}"
                                );
                            }
                        }
                    }
                }
                assert_eq!(seen.len(), regs * 32 * 64, "{op:?}");
            }
            let mut seen = HashSet::new();
            for b in 0..s.blocks {
                for i in 0..s.m {
                    for j in 0..s.n {
                        let slot = out_slot(s, i, j, b);
                        assert_eq!((slot.reg, slot.lane), calc_out(s, i, j, b), "{op:?}");
                        assert!(slot.reg < s.out_regs() && slot.lane < 64);
                        assert!(seen.insert((slot.reg, slot.lane)), "{op:?}");
                    }
                }
            }
            assert_eq!(seen.len() * s.out_bits() / 32, s.out_regs() * 64, "{op:?}");
        }
    }

    #[test]
    fn xf32_values() {
        // 1 + 2^-11 is a tie: to even (1.0); 1 + 3·2^-11 rounds up.
        assert_eq!(xf32((1.0f32 + 2f32.powi(-11)).to_bits()), 1.0);
        assert_eq!(
            xf32((1.0f32 + 3.0 * 2f32.powi(-11)).to_bits()),
            1.0 + 2f32.powi(-9)
        );
        assert_eq!(xf32((-1.5f32).to_bits()), -1.5);
    }

    #[test]
    fn registers_past_the_file_fault_by_name() {
        let (op, s) = SHAPES[0];
        // An RDNA-sized file has no AccVGPRs.
        let mut w = Wave::new();
        w.lanes = 64;
        let err = mfma(&mut w, &mut Buffers::default(), &inst(op, s, 0), s).unwrap_err();
        assert!(
            matches!(err, Trap::RegisterRange { file: 'v', .. }),
            "{err:?}"
        );
        // A CDNA file ends at a255: a 32-register D from a240 passes it.
        let mut w = cdna_wave();
        let mut i = inst(op, s, 0);
        i.dst[0] = Operand::Vgpr(496);
        let err = mfma(&mut w, &mut Buffers::default(), &i, s).unwrap_err();
        assert_eq!(
            err,
            Trap::RegisterRange {
                op,
                file: 'v',
                index: 527
            }
        );
        // cbsz larger than the block count allows is refused.
        let err = mfma(
            &mut cdna_wave(),
            &mut Buffers::default(),
            &inst(op, s, 2),
            s,
        )
        .unwrap_err();
        assert!(matches!(err, Trap::UnsupportedForm { .. }), "{err:?}");
    }

    #[test]
    fn accvgpr_moves_copy_under_exec() {
        let mut w = cdna_wave();
        w.set_exec(0x5555_5555_5555_5555);
        for l in 0..64 {
            w.vgpr[3][l] = l as u32 + 100;
        }
        let mut i = Inst::new(Op::V_ACCVGPR_WRITE_B32, Family::Gfx90a);
        i.dst[0] = Operand::Vgpr(256 + 7);
        i.src[0] = Operand::Vgpr(3);
        acc_move(&mut w, &i).unwrap();
        assert_eq!(w.vgpr[263][2], 102);
        assert_eq!(w.vgpr[263][3], 0);
        let mut i = Inst::new(Op::V_ACCVGPR_READ_B32, Family::Gfx90a);
        i.dst[0] = Operand::Vgpr(9);
        i.src[0] = Operand::Vgpr(263);
        acc_move(&mut w, &i).unwrap();
        assert_eq!(w.vgpr[9][4], 104);
        let mut i = Inst::new(Op::V_ACCVGPR_WRITE_B32, Family::Gfx90a);
        i.dst[0] = Operand::Vgpr(511);
        i.src[0] = Operand::Const(42);
        acc_move(&mut w, &i).unwrap();
        assert_eq!(w.vgpr[511][0], 42);
    }

    #[test]
    fn packed_f32_op_sel_and_neg() {
        let mut w = cdna_wave();
        for l in 0..64 {
            w.vgpr[0][l] = 2.0f32.to_bits();
            w.vgpr[1][l] = 3.0f32.to_bits();
            w.vgpr[2][l] = 5.0f32.to_bits();
            w.vgpr[3][l] = 7.0f32.to_bits();
            w.vgpr[4][l] = 0.5f32.to_bits();
            w.vgpr[5][l] = 0.25f32.to_bits();
        }
        let mut i = Inst::new(Op::V_PK_FMA_F32, Family::Gfx90a);
        i.dst[0] = Operand::Vgpr(10);
        i.src = [
            Operand::Vgpr(0),
            Operand::Vgpr(2),
            Operand::Vgpr(4),
            Operand::None,
        ];
        // Low half: src0.hi (3) · src1.lo (5) + src2.lo (0.5) = 15.5.
        // High half: -src0.lo (-2) · src1.hi (7) + src2.hi (0.25) = -13.75.
        i.mods.opsel = 0b001;
        i.mods.opsel_hi = 0b110;
        i.mods.neg_hi = 0b001;
        pk_f32(&mut w, &i, Pk::Fma).unwrap();
        assert_eq!((f(w.vgpr[10][0]), f(w.vgpr[11][0])), (15.5, -13.75));
        let mut i = Inst::new(Op::V_PK_MOV_B32, Family::Gfx90a);
        i.dst[0] = Operand::Vgpr(12);
        i.src = [
            Operand::Vgpr(0),
            Operand::Vgpr(2),
            Operand::None,
            Operand::None,
        ];
        i.mods.opsel = 0b10;
        pk_f32(&mut w, &i, Pk::Mov).unwrap();
        assert_eq!((f(w.vgpr[12][5]), f(w.vgpr[13][5])), (2.0, 7.0));
        let mut i = Inst::new(Op::V_PK_ADD_F32, Family::Gfx90a);
        i.dst[0] = Operand::Vgpr(14);
        i.src = [
            Operand::Vgpr(0),
            Operand::Vgpr(2),
            Operand::None,
            Operand::None,
        ];
        i.mods.opsel_hi = 0b11;
        i.mods.neg = 0b10;
        pk_f32(&mut w, &i, Pk::Add).unwrap();
        assert_eq!((f(w.vgpr[14][0]), f(w.vgpr[15][0])), (-3.0, 10.0));
    }
}
