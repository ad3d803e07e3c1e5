//! Scalar ALU: SOP1, SOP2, SOPC and SOPK.

use softgpu_isa::{Inst, Op, Operand};

use super::{Env, Exec, Flow, Result, Trap};
use crate::wave::{Wave, PRIVATE_APERTURE, SHARED_APERTURE};

/// A scalar result and the new SCC (None leaves SCC unchanged).
type Out<T> = (T, Option<bool>);

#[inline(always)]
fn op32(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32, bool) -> Out<u32>) -> Result {
    let (r, scc) = f(w.read_s32(i.src[0]), w.read_s32(i.src[1]), w.scc);
    w.write_s32(i.dst[0], r);
    if let Some(s) = scc {
        w.scc = s;
    }
    Ok(Flow::Next)
}

#[inline(always)]
fn op64(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64, bool) -> Out<u64>) -> Result {
    let (r, scc) = f(w.read_s64(i.src[0]), w.read_s64(i.src[1]), w.scc);
    w.write_s64(i.dst[0], r);
    if let Some(s) = scc {
        w.scc = s;
    }
    Ok(Flow::Next)
}

/// 64-bit sources, 32-bit result (bit counts of 64-bit values).
#[inline(always)]
fn op64_32(w: &mut Wave, i: &Inst, f: impl Fn(u64) -> Out<u32>) -> Result {
    let (r, scc) = f(w.read_s64(i.src[0]));
    w.write_s32(i.dst[0], r);
    if let Some(s) = scc {
        w.scc = s;
    }
    Ok(Flow::Next)
}

#[inline(always)]
fn cmp32(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> bool) -> Result {
    w.scc = f(w.read_s32(i.src[0]), w.read_s32(i.src[1]));
    Ok(Flow::Next)
}

#[inline(always)]
fn cmp64(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64) -> bool) -> Result {
    w.scc = f(w.read_s64(i.src[0]), w.read_s64(i.src[1]));
    Ok(Flow::Next)
}

/// `s_*_saveexec`: dst = EXEC; EXEC = f(src, EXEC); SCC = EXEC != 0.
#[inline(always)]
fn saveexec(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64) -> u64) -> Result {
    let exec = w.exec();
    let src = w.read_mask(i.src[0]);
    let new = f(src, exec) & w.full_mask();
    w.write_mask(i.dst[0], exec);
    w.set_exec(new);
    w.scc = new != 0;
    Ok(Flow::Next)
}

/// `s_*_wrexec`: EXEC = f(src, EXEC); dst = EXEC; SCC = EXEC != 0.
#[inline(always)]
fn wrexec(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64) -> u64) -> Result {
    let new = f(w.read_mask(i.src[0]), w.exec()) & w.full_mask();
    w.set_exec(new);
    w.write_mask(i.dst[0], new);
    w.scc = new != 0;
    Ok(Flow::Next)
}

fn nz32(r: u32) -> Out<u32> {
    (r, Some(r != 0))
}
fn nz64(r: u64) -> Out<u64> {
    (r, Some(r != 0))
}

fn bfe32(v: u32, spec: u32, signed: bool) -> u32 {
    let off = spec & 31;
    let width = (spec >> 16) & 0x7f;
    if width == 0 {
        return 0;
    }
    let width = width.min(32 - off);
    let field = (v >> off)
        & if width == 32 {
            u32::MAX
        } else {
            (1 << width) - 1
        };
    if signed && width < 32 {
        ((field << (32 - width)) as i32 >> (32 - width)) as u32
    } else {
        field
    }
}

fn bfe64(v: u64, spec: u32, signed: bool) -> u64 {
    let off = spec & 63;
    let width = (spec >> 16) & 0x7f;
    if width == 0 {
        return 0;
    }
    let width = width.min(64 - off);
    let field = (v >> off)
        & if width == 64 {
            u64::MAX
        } else {
            (1 << width) - 1
        };
    if signed && width < 64 {
        ((field << (64 - width)) as i64 >> (64 - width)) as u64
    } else {
        field
    }
}

/// Index of the first set bit from the LSB, or -1.
fn ctz(v: u64, bits: u32) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        v.trailing_zeros().min(bits)
    }
}

/// Index of the first set bit from the MSB, or -1.
fn clz32(v: u32) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        v.leading_zeros()
    }
}

fn clz64(v: u64) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        v.leading_zeros()
    }
}

/// Count of leading bits equal to the sign bit, minus one; -1 when all equal.
fn cls32(v: u32) -> u32 {
    let v = v as i32;
    if v == 0 || v == -1 {
        u32::MAX
    } else {
        (if v < 0 { !v } else { v }).leading_zeros()
    }
}

fn cls64(v: u64) -> u32 {
    let v = v as i64;
    if v == 0 || v == -1 {
        u32::MAX
    } else {
        (if v < 0 { !v } else { v }).leading_zeros()
    }
}

fn quadmask(v: u64, quads: u32) -> u64 {
    (0..quads)
        .filter(|q| (v >> (q * 4)) & 0xf != 0)
        .fold(0, |m, q| m | 1 << q)
}

fn wqm(v: u64) -> u64 {
    (0..16)
        .filter(|q| (v >> (q * 4)) & 0xf != 0)
        .fold(0, |m, q| m | 0xf << (q * 4))
}

/// SOPK: signed 16-bit immediate.
fn simm(i: &Inst) -> u32 {
    i.imm as i16 as i32 as u32
}

/// Hardware register field from a SOPK `hwreg(id, offset, size)` operand.
fn hwreg_field(imm: i32) -> (usize, u32, u32) {
    let imm = imm as u32;
    (
        (imm & 0x3f) as usize,
        (imm >> 6) & 0x1f,
        ((imm >> 11) & 0x1f) + 1,
    )
}

const HW_MODE: usize = 1;
const HW_STATUS: usize = 2;
const HW_SH_MEM_BASES: usize = 15;
const HW_ID1: usize = 23;
const HW_SHADER_CYCLES: usize = 29;

/// What `s_getreg` reads. Registers the emulator derives from wave state:
/// - STATUS: SCC (bit 0), EXECZ (bit 9), VCCZ (bit 10); other bits 0.
/// - SH_MEM_BASES: bits 63:48 of the private (15:0) and shared (31:16)
///   apertures, matching `src_private_base` / `src_shared_base`.
/// - HW_ID1: WAVE_ID (4:0) is the wave's index in its workgroup; SIMD,
///   WGP, SA and SE ids name the compute unit its workgroup was placed on
///   (`crate::placement`).
/// - SHADER_CYCLES: the wave's retired-instruction count (20 bits), a
///   monotonic stand-in for the cycle counter.
///
/// Every other id reads what `s_setreg` last wrote (0 initially).
fn hwreg_value(w: &Wave, id: usize) -> u32 {
    match id {
        HW_MODE => w.mode.bits,
        HW_STATUS => w.scc as u32 | ((w.exec() == 0) as u32) << 9 | ((w.vcc() == 0) as u32) << 10,
        HW_SH_MEM_BASES => (PRIVATE_APERTURE >> 48) as u32 | ((SHARED_APERTURE >> 48) as u32) << 16,
        HW_ID1 => w.hw_id | (w.id & 0x1f),
        HW_SHADER_CYCLES => (w.retired & 0xf_ffff) as u32,
        _ => w.hwreg[id],
    }
}

fn getreg(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let (id, off, size) = hwreg_field(i.imm);
    let value = hwreg_value(w, id);
    let mask = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    w.write_s32(i.dst[0], (value >> off) & mask);
    Ok(Flow::Next)
}

fn setreg_value(w: &mut Wave, imm: i32, data: u32) {
    let (id, off, size) = hwreg_field(imm);
    let mask = (if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    }) << off;
    let slot = if id == HW_MODE {
        &mut w.mode.bits
    } else {
        &mut w.hwreg[id]
    };
    *slot = (*slot & !mask) | ((data << off) & mask);
}

fn setreg(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let data = w.read_s32(first_source(i));
    setreg_value(w, i.imm, data);
    Ok(Flow::Next)
}

fn setreg_imm32(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let data = w.read_s32(i.src[0]);
    setreg_value(w, i.imm, data);
    Ok(Flow::Next)
}

/// SOPK instructions whose SGPR is read put it in src[0]; tolerate dst[0].
fn first_source(i: &Inst) -> Operand {
    if i.src[0] != Operand::None {
        i.src[0]
    } else {
        i.dst[0]
    }
}

fn cmpk(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> bool, signed: bool) -> Result {
    let k = if signed { simm(i) } else { i.imm as u16 as u32 };
    w.scc = f(w.read_s32(first_source(i)), k);
    Ok(Flow::Next)
}

fn getpc(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let next = env.code.address_after(w.pc);
    w.write_s64(i.dst[0], next);
    Ok(Flow::Next)
}

fn setpc(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    Ok(Flow::Jump(w.read_s64(i.src[0])))
}

fn swappc(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let target = w.read_s64(i.src[0]);
    w.write_s64(i.dst[0], env.code.address_after(w.pc));
    Ok(Flow::Jump(target))
}

/// `s_call_b64`: save the return address, branch by simm16.
fn call(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    w.write_s64(i.dst[0], env.code.address_after(w.pc));
    Ok(Flow::Branch(i.imm as i16 as i32))
}

/// `s_subvector_loop_begin sdst, label` and `s_subvector_loop_end sdst,
/// label` run the block between them once per 32-lane half of a wave64, low
/// half first, parking the other half's EXEC bits in `sdst`; each branches
/// like S_CBRANCH (begin's label is past the end, end's is the block's
/// first instruction). The ISA reference gives no pseudocode for them, so
/// these are this executor's rules, chosen so that a block which leaves
/// EXEC as it found it runs for exactly the halves that had lanes on:
///
/// - begin: EXEC_LO != 0: sdst = EXEC_HI, EXEC_HI = 0 (the low pass);
///   else EXEC_HI != 0: sdst = 0 (only the high pass); else branch past the
///   block.
/// - end: EXEC_LO != 0 and sdst != 0 (a low pass with lanes waiting above):
///   sdst = EXEC_LO, EXEC_LO = 0, EXEC_HI = the old sdst, and branch back;
///   otherwise EXEC_LO |= sdst (restoring the low half after the high pass)
///   and fall through.
///
/// A wave32 has no high half: begin only skips the block when EXEC is 0,
/// and end does nothing. SCC is not touched.
fn subvector_begin(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let reg = first_source(i);
    let exec = w.exec();
    if w.lanes != 64 {
        return Ok(if exec == 0 {
            Flow::Branch(i.imm as i16 as i32)
        } else {
            Flow::Next
        });
    }
    let (lo, hi) = (exec as u32, (exec >> 32) as u32);
    if lo != 0 {
        w.write_s32(reg, hi);
        w.set_exec(lo as u64);
    } else if hi != 0 {
        w.write_s32(reg, 0);
    } else {
        return Ok(Flow::Branch(i.imm as i16 as i32));
    }
    Ok(Flow::Next)
}

fn subvector_end(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    if w.lanes != 64 {
        return Ok(Flow::Next);
    }
    let reg = first_source(i);
    let parked = w.read_s32(reg);
    let exec = w.exec();
    let lo = exec as u32;
    if lo != 0 && parked != 0 {
        w.write_s32(reg, lo);
        w.set_exec((parked as u64) << 32);
        return Ok(Flow::Branch(i.imm as i16 as i32));
    }
    w.set_exec(exec | parked as u64);
    Ok(Flow::Next)
}

/// s_movrels / s_movreld: M0-relative register moves.
fn movrel(w: &mut Wave, i: &Inst, dwords: usize, relative_src: bool) -> Result {
    let m0 = w.sgpr[softgpu_isa::sreg::M0 as usize] as usize;
    let (src, dst) = (i.src[0], i.dst[0]);
    let (Operand::Sgpr(s), Operand::Sgpr(d)) = (src, dst) else {
        if let (Operand::Const(_), Operand::Sgpr(d)) = (src, dst) {
            let d = d as usize + m0;
            for k in 0..dwords {
                let v = if k == 0 {
                    w.read_s32(src)
                } else {
                    (w.read_s64(src) >> 32) as u32
                };
                *w.sgpr.get_mut(d + k).ok_or_else(|| bad_movrel(i, d + k))? = v;
            }
            return Ok(Flow::Next);
        }
        return Err(Trap::NotAnSgpr {
            op: i.op,
            operand: if matches!(src, Operand::Sgpr(_)) {
                dst
            } else {
                src
            },
        });
    };
    let (s, d) = if relative_src {
        (s as usize + m0, d as usize)
    } else {
        (s as usize, d as usize + m0)
    };
    for k in 0..dwords {
        let v = *w.sgpr.get(s + k).ok_or_else(|| bad_movrel(i, s + k))?;
        *w.sgpr.get_mut(d + k).ok_or_else(|| bad_movrel(i, d + k))? = v;
    }
    Ok(Flow::Next)
}

/// `s_movrelsd_2_b32`: source offset by M0[9:0], destination by M0[25:16].
fn movrelsd_2(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let m0 = w.sgpr[softgpu_isa::sreg::M0 as usize] as usize;
    let (Operand::Sgpr(s), Operand::Sgpr(d)) = (i.src[0], i.dst[0]) else {
        return Err(Trap::NotAnSgpr {
            op: i.op,
            operand: if matches!(i.src[0], Operand::Sgpr(_)) {
                i.dst[0]
            } else {
                i.src[0]
            },
        });
    };
    let (s, d) = (s as usize + (m0 & 0x3ff), d as usize + ((m0 >> 16) & 0x3ff));
    let v = *w.sgpr.get(s).ok_or_else(|| bad_movrel(i, s))?;
    *w.sgpr.get_mut(d).ok_or_else(|| bad_movrel(i, d))? = v;
    Ok(Flow::Next)
}

/// `s_sendmsg_rtn`: MSG_RTN_GET_REALTIME (131) returns a 100 MHz clock (the
/// host's monotonic time in 10 ns ticks, like the GPU's constant-rate
/// REALTIME counter); every other message (doorbell, DDID, TMA/TBA...)
/// returns 0, as there is no such hardware behind the emulator.
fn sendmsg_rtn(w: &mut Wave, _: &mut Env, i: &Inst, dwords: usize) -> Result {
    const MSG_RTN_GET_REALTIME: u32 = 131;
    let value = if w.read_s32(i.src[0]) == MSG_RTN_GET_REALTIME {
        realtime_ticks()
    } else {
        0
    };
    if dwords == 2 {
        w.write_s64(i.dst[0], value);
    } else {
        w.write_s32(i.dst[0], value as u32);
    }
    Ok(Flow::Next)
}

/// The REALTIME counter: the host's monotonic time in 10 ns ticks (a
/// 100 MHz clock), what `s_sendmsg_rtn` and gfx10's `s_memrealtime` read.
pub(super) fn realtime_ticks() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    (START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos()
        / 10) as u64
}

fn bad_movrel(i: &Inst, index: usize) -> Trap {
    Trap::RegisterRange {
        op: i.op,
        file: 's',
        index,
    }
}

macro_rules! s2 {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| op32(w, i, $f)) as Exec
    };
}
macro_rules! s2_64 {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| op64(w, i, $f)) as Exec
    };
}
macro_rules! s1_64_32 {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| op64_32(w, i, $f)) as Exec
    };
}
macro_rules! c32 {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp32(w, i, $f)) as Exec
    };
}
macro_rules! c64 {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp64(w, i, $f)) as Exec
    };
}
macro_rules! ck {
    ($signed:expr, $f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmpk(w, i, $f, $signed)) as Exec
    };
}
macro_rules! save {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| saveexec(w, i, $f)) as Exec
    };
}
macro_rules! wr {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| wrexec(w, i, $f)) as Exec
    };
}
macro_rules! kop {
    ($f:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let k = simm(i);
            let d = w.read_s32(i.dst[0]);
            let (r, scc) = $f(d, k);
            w.write_s32(i.dst[0], r);
            if let Some(s) = scc {
                w.scc = s;
            }
            Ok(Flow::Next)
        }) as Exec
    };
}

fn shl_add(a: u32, b: u32, n: u32) -> Out<u32> {
    let shifted = (a as u64) << n;
    let sum = shifted + b as u64;
    (sum as u32, Some(sum >> 32 != 0))
}

pub const TABLE: &[(Op, Exec)] = &[
    // SOP2, 32-bit
    (
        Op::S_ADD_U32,
        s2!(|a, b, _| {
            let (r, c) = a.overflowing_add(b);
            (r, Some(c))
        }),
    ),
    (
        Op::S_SUB_U32,
        s2!(|a, b, _| {
            let (r, c) = a.overflowing_sub(b);
            (r, Some(c))
        }),
    ),
    (
        Op::S_ADDC_U32,
        s2!(|a, b, c| {
            let s = a as u64 + b as u64 + c as u64;
            (s as u32, Some(s >> 32 != 0))
        }),
    ),
    (
        Op::S_SUBB_U32,
        s2!(|a, b, c| {
            let s = (a as u64).wrapping_sub(b as u64).wrapping_sub(c as u64);
            (s as u32, Some((b as u64 + c as u64) > a as u64))
        }),
    ),
    (
        Op::S_ADD_I32,
        s2!(|a, b, _| {
            let (r, o) = (a as i32).overflowing_add(b as i32);
            (r as u32, Some(o))
        }),
    ),
    (
        Op::S_SUB_I32,
        s2!(|a, b, _| {
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            (r as u32, Some(o))
        }),
    ),
    (
        Op::S_MIN_I32,
        s2!(|a, b, _| {
            let lt = (a as i32) < (b as i32);
            (if lt { a } else { b }, Some(lt))
        }),
    ),
    (
        Op::S_MIN_U32,
        s2!(|a, b, _| {
            let lt = a < b;
            (if lt { a } else { b }, Some(lt))
        }),
    ),
    (
        Op::S_MAX_I32,
        s2!(|a, b, _| {
            let gt = (a as i32) > (b as i32);
            (if gt { a } else { b }, Some(gt))
        }),
    ),
    (
        Op::S_MAX_U32,
        s2!(|a, b, _| {
            let gt = a > b;
            (if gt { a } else { b }, Some(gt))
        }),
    ),
    (
        Op::S_CSELECT_B32,
        s2!(|a, b, c| (if c { a } else { b }, None)),
    ),
    (Op::S_AND_B32, s2!(|a, b, _| nz32(a & b))),
    (Op::S_OR_B32, s2!(|a, b, _| nz32(a | b))),
    (Op::S_XOR_B32, s2!(|a, b, _| nz32(a ^ b))),
    (Op::S_NAND_B32, s2!(|a, b, _| nz32(!(a & b)))),
    (Op::S_NOR_B32, s2!(|a, b, _| nz32(!(a | b)))),
    (Op::S_XNOR_B32, s2!(|a, b, _| nz32(!(a ^ b)))),
    (Op::S_AND_NOT1_B32, s2!(|a, b, _| nz32(a & !b))),
    (Op::S_OR_NOT1_B32, s2!(|a, b, _| nz32(a | !b))),
    (Op::S_LSHL_B32, s2!(|a, b, _| nz32(a << (b & 31)))),
    (Op::S_LSHR_B32, s2!(|a, b, _| nz32(a >> (b & 31)))),
    (
        Op::S_ASHR_I32,
        s2!(|a, b, _| nz32(((a as i32) >> (b & 31)) as u32)),
    ),
    (
        Op::S_BFM_B32,
        s2!(|a, b, _| ((((1u64 << (a & 31)) - 1) as u32).wrapping_shl(b & 31), None)),
    ),
    (Op::S_MUL_I32, s2!(|a, b, _| (a.wrapping_mul(b), None))),
    (
        Op::S_MUL_HI_U32,
        s2!(|a, b, _| (((a as u64 * b as u64) >> 32) as u32, None)),
    ),
    (
        Op::S_MUL_HI_I32,
        s2!(|a, b, _| (((a as i32 as i64 * b as i32 as i64) >> 32) as u32, None)),
    ),
    (Op::S_BFE_U32, s2!(|a, b, _| nz32(bfe32(a, b, false)))),
    (Op::S_BFE_I32, s2!(|a, b, _| nz32(bfe32(a, b, true)))),
    (
        Op::S_ABSDIFF_I32,
        s2!(|a, b, _| nz32((a as i32).wrapping_sub(b as i32).unsigned_abs())),
    ),
    (Op::S_LSHL1_ADD_U32, s2!(|a, b, _| shl_add(a, b, 1))),
    (Op::S_LSHL2_ADD_U32, s2!(|a, b, _| shl_add(a, b, 2))),
    (Op::S_LSHL3_ADD_U32, s2!(|a, b, _| shl_add(a, b, 3))),
    (Op::S_LSHL4_ADD_U32, s2!(|a, b, _| shl_add(a, b, 4))),
    (
        Op::S_PACK_LL_B32_B16,
        s2!(|a, b, _| ((a & 0xffff) | b << 16, None)),
    ),
    (
        Op::S_PACK_LH_B32_B16,
        s2!(|a, b, _| ((a & 0xffff) | (b & 0xffff_0000), None)),
    ),
    (
        Op::S_PACK_HH_B32_B16,
        s2!(|a, b, _| (a >> 16 | (b & 0xffff_0000), None)),
    ),
    (
        Op::S_PACK_HL_B32_B16,
        s2!(|a, b, _| (a >> 16 | b << 16, None)),
    ),
    // SOP2, 64-bit
    (
        Op::S_CSELECT_B64,
        s2_64!(|a, b, c| (if c { a } else { b }, None)),
    ),
    (Op::S_AND_B64, s2_64!(|a, b, _| nz64(a & b))),
    (Op::S_OR_B64, s2_64!(|a, b, _| nz64(a | b))),
    (Op::S_XOR_B64, s2_64!(|a, b, _| nz64(a ^ b))),
    (Op::S_NAND_B64, s2_64!(|a, b, _| nz64(!(a & b)))),
    (Op::S_NOR_B64, s2_64!(|a, b, _| nz64(!(a | b)))),
    (Op::S_XNOR_B64, s2_64!(|a, b, _| nz64(!(a ^ b)))),
    (Op::S_AND_NOT1_B64, s2_64!(|a, b, _| nz64(a & !b))),
    (Op::S_OR_NOT1_B64, s2_64!(|a, b, _| nz64(a | !b))),
    (Op::S_LSHL_B64, s2_64!(|a, b, _| nz64(a << (b & 63)))),
    // gfx12: 64-bit arithmetic without SCC.
    (
        Op::S_ADD_NC_U64,
        s2_64!(|a: u64, b: u64, _| (a.wrapping_add(b), None)),
    ),
    (
        Op::S_SUB_NC_U64,
        s2_64!(|a: u64, b: u64, _| (a.wrapping_sub(b), None)),
    ),
    (
        Op::S_MUL_U64,
        s2_64!(|a: u64, b: u64, _| (a.wrapping_mul(b), None)),
    ),
    (Op::S_LSHR_B64, s2_64!(|a, b, _| nz64(a >> (b & 63)))),
    (
        Op::S_ASHR_I64,
        s2_64!(|a, b, _| nz64(((a as i64) >> (b & 63)) as u64)),
    ),
    (
        Op::S_BFM_B64,
        s2_64!(|a, b, _| (
            (((1u128 << (a & 63)) - 1) as u64).wrapping_shl((b & 63) as u32),
            None
        )),
    ),
    (
        Op::S_BFE_U64,
        s2_64!(|a, b, _| nz64(bfe64(a, b as u32, false))),
    ),
    (
        Op::S_BFE_I64,
        s2_64!(|a, b, _| nz64(bfe64(a, b as u32, true))),
    ),
    // SOP1
    (Op::S_MOV_B32, s2!(|a, _, _| (a, None))),
    (Op::S_MOV_B64, s2_64!(|a, _, _| (a, None))),
    (
        Op::S_CMOV_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            if w.scc {
                let v = w.read_s32(i.src[0]);
                w.write_s32(i.dst[0], v);
            }
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_CMOV_B64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            if w.scc {
                let v = w.read_s64(i.src[0]);
                w.write_s64(i.dst[0], v);
            }
            Ok(Flow::Next)
        }) as Exec,
    ),
    (Op::S_NOT_B32, s2!(|a, _, _| nz32(!a))),
    (Op::S_NOT_B64, s2_64!(|a, _, _| nz64(!a))),
    (Op::S_WQM_B32, s2!(|a, _, _| nz32(wqm(a as u64) as u32))),
    (Op::S_WQM_B64, s2_64!(|a, _, _| nz64(wqm(a)))),
    (Op::S_BREV_B32, s2!(|a, _, _| (a.reverse_bits(), None))),
    (Op::S_BREV_B64, s2_64!(|a, _, _| (a.reverse_bits(), None))),
    (Op::S_BCNT0_I32_B32, s2!(|a, _, _| nz32(a.count_zeros()))),
    (Op::S_BCNT1_I32_B32, s2!(|a, _, _| nz32(a.count_ones()))),
    (
        Op::S_BCNT0_I32_B64,
        s1_64_32!(|a: u64| nz32(a.count_zeros())),
    ),
    (
        Op::S_BCNT1_I32_B64,
        s1_64_32!(|a: u64| nz32(a.count_ones())),
    ),
    (Op::S_CTZ_I32_B32, s2!(|a, _, _| (ctz(a as u64, 32), None))),
    (Op::S_CTZ_I32_B64, s1_64_32!(|a: u64| (ctz(a, 64), None))),
    (Op::S_CLZ_I32_U32, s2!(|a, _, _| (clz32(a), None))),
    (Op::S_CLZ_I32_U64, s1_64_32!(|a: u64| (clz64(a), None))),
    (Op::S_CLS_I32, s2!(|a, _, _| (cls32(a), None))),
    (Op::S_CLS_I32_I64, s1_64_32!(|a: u64| (cls64(a), None))),
    // gfx10's find-first-zero (RDNA2 guide, SOP1 S_FF0_I32_B32/B64): the
    // index of the lowest 0 bit, -1 when every bit is 1; SCC unchanged.
    (
        Op::S_FF0_I32_B32,
        s2!(|a: u32, _, _| (ctz(!a as u64, 32), None)),
    ),
    (Op::S_FF0_I32_B64, s1_64_32!(|a: u64| (ctz(!a, 64), None))),
    (
        Op::S_SEXT_I32_I8,
        s2!(|a, _, _| (a as i8 as i32 as u32, None)),
    ),
    (
        Op::S_SEXT_I32_I16,
        s2!(|a, _, _| (a as i16 as i32 as u32, None)),
    ),
    (
        Op::S_BITSET0_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let b = w.read_s32(i.src[0]) & 31;
            let d = w.read_s32(i.dst[0]);
            w.write_s32(i.dst[0], d & !(1 << b));
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_BITSET1_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let b = w.read_s32(i.src[0]) & 31;
            let d = w.read_s32(i.dst[0]);
            w.write_s32(i.dst[0], d | (1 << b));
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_BITSET0_B64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let b = w.read_s32(i.src[0]) & 63;
            let d = w.read_s64(i.dst[0]);
            w.write_s64(i.dst[0], d & !(1 << b));
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_BITSET1_B64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let b = w.read_s32(i.src[0]) & 63;
            let d = w.read_s64(i.dst[0]);
            w.write_s64(i.dst[0], d | (1 << b));
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_ABS_I32,
        s2!(|a, _, _| nz32((a as i32).unsigned_abs())),
    ),
    (
        Op::S_QUADMASK_B32,
        s2!(|a, _, _| nz32(quadmask(a as u64, 8) as u32)),
    ),
    (Op::S_QUADMASK_B64, s2_64!(|a, _, _| nz64(quadmask(a, 16)))),
    (
        Op::S_BITREPLICATE_B64_B32,
        s2_64!(|a, _, _| (
            (0..32).fold(0u64, |m, k| m | (((a >> k) & 1) * (3 << (2 * k)))),
            None
        )),
    ),
    (Op::S_GETPC_B64, getpc as Exec),
    (Op::S_SETPC_B64, setpc as Exec),
    (Op::S_SWAPPC_B64, swappc as Exec),
    // Return from a trap handler: PC = S0 and STATUS.PRIV = 0. No trap
    // handler runs here and STATUS reads PRIV as 0, so only the jump shows.
    (Op::S_RFE_B64, setpc as Exec),
    (Op::S_CALL_B64, call as Exec),
    (Op::S_AND_SAVEEXEC_B32, save!(|s, e| s & e)),
    (Op::S_AND_SAVEEXEC_B64, save!(|s, e| s & e)),
    (Op::S_OR_SAVEEXEC_B32, save!(|s, e| s | e)),
    (Op::S_OR_SAVEEXEC_B64, save!(|s, e| s | e)),
    (Op::S_XOR_SAVEEXEC_B32, save!(|s, e| s ^ e)),
    (Op::S_XOR_SAVEEXEC_B64, save!(|s, e| s ^ e)),
    (Op::S_NAND_SAVEEXEC_B32, save!(|s, e| !(s & e))),
    (Op::S_NAND_SAVEEXEC_B64, save!(|s, e| !(s & e))),
    (Op::S_NOR_SAVEEXEC_B32, save!(|s, e| !(s | e))),
    (Op::S_NOR_SAVEEXEC_B64, save!(|s, e| !(s | e))),
    (Op::S_XNOR_SAVEEXEC_B32, save!(|s, e| !(s ^ e))),
    (Op::S_XNOR_SAVEEXEC_B64, save!(|s, e| !(s ^ e))),
    (Op::S_AND_NOT0_SAVEEXEC_B32, save!(|s, e| !s & e)),
    (Op::S_AND_NOT0_SAVEEXEC_B64, save!(|s, e| !s & e)),
    (Op::S_OR_NOT0_SAVEEXEC_B32, save!(|s, e| !s | e)),
    (Op::S_OR_NOT0_SAVEEXEC_B64, save!(|s, e| !s | e)),
    (Op::S_AND_NOT1_SAVEEXEC_B32, save!(|s, e| s & !e)),
    (Op::S_AND_NOT1_SAVEEXEC_B64, save!(|s, e| s & !e)),
    (Op::S_OR_NOT1_SAVEEXEC_B32, save!(|s, e| s | !e)),
    (Op::S_OR_NOT1_SAVEEXEC_B64, save!(|s, e| s | !e)),
    (Op::S_AND_NOT0_WREXEC_B32, wr!(|s, e| !s & e)),
    (Op::S_AND_NOT0_WREXEC_B64, wr!(|s, e| !s & e)),
    (Op::S_AND_NOT1_WREXEC_B32, wr!(|s, e| s & !e)),
    (Op::S_AND_NOT1_WREXEC_B64, wr!(|s, e| s & !e)),
    (Op::S_MOVRELSD_2_B32, movrelsd_2 as Exec),
    (
        Op::S_SENDMSG_RTN_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| sendmsg_rtn(w, env, i, 1)) as Exec,
    ),
    (
        Op::S_SENDMSG_RTN_B64,
        (|w: &mut Wave, env: &mut Env, i: &Inst| sendmsg_rtn(w, env, i, 2)) as Exec,
    ),
    (
        Op::S_MOVRELS_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel(w, i, 1, true)) as Exec,
    ),
    (
        Op::S_MOVRELS_B64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel(w, i, 2, true)) as Exec,
    ),
    (
        Op::S_MOVRELD_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel(w, i, 1, false)) as Exec,
    ),
    (
        Op::S_MOVRELD_B64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel(w, i, 2, false)) as Exec,
    ),
    // SOPC
    (Op::S_CMP_EQ_I32, c32!(|a, b| a == b)),
    (Op::S_CMP_LG_I32, c32!(|a, b| a != b)),
    (Op::S_CMP_GT_I32, c32!(|a, b| (a as i32) > (b as i32))),
    (Op::S_CMP_GE_I32, c32!(|a, b| (a as i32) >= (b as i32))),
    (Op::S_CMP_LT_I32, c32!(|a, b| (a as i32) < (b as i32))),
    (Op::S_CMP_LE_I32, c32!(|a, b| (a as i32) <= (b as i32))),
    (Op::S_CMP_EQ_U32, c32!(|a, b| a == b)),
    (Op::S_CMP_LG_U32, c32!(|a, b| a != b)),
    (Op::S_CMP_GT_U32, c32!(|a, b| a > b)),
    (Op::S_CMP_GE_U32, c32!(|a, b| a >= b)),
    (Op::S_CMP_LT_U32, c32!(|a, b| a < b)),
    (Op::S_CMP_LE_U32, c32!(|a, b| a <= b)),
    (Op::S_CMP_EQ_U64, c64!(|a, b| a == b)),
    (Op::S_CMP_LG_U64, c64!(|a, b| a != b)),
    (Op::S_BITCMP0_B32, c32!(|a, b| (a >> (b & 31)) & 1 == 0)),
    (Op::S_BITCMP1_B32, c32!(|a, b| (a >> (b & 31)) & 1 == 1)),
    (
        Op::S_BITCMP0_B64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let a = w.read_s64(i.src[0]);
            let b = w.read_s32(i.src[1]);
            w.scc = (a >> (b & 63)) & 1 == 0;
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_BITCMP1_B64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            let a = w.read_s64(i.src[0]);
            let b = w.read_s32(i.src[1]);
            w.scc = (a >> (b & 63)) & 1 == 1;
            Ok(Flow::Next)
        }) as Exec,
    ),
    // SOPK
    (
        Op::S_MOVK_I32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            w.write_s32(i.dst[0], simm(i));
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_CMOVK_I32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| {
            if w.scc {
                w.write_s32(i.dst[0], simm(i));
            }
            Ok(Flow::Next)
        }) as Exec,
    ),
    (
        Op::S_ADDK_I32,
        kop!(|d: u32, k: u32| {
            let (r, o) = (d as i32).overflowing_add(k as i32);
            (r as u32, Some(o))
        }),
    ),
    (
        Op::S_MULK_I32,
        kop!(|d: u32, k: u32| (d.wrapping_mul(k), None::<bool>)),
    ),
    (Op::S_CMPK_EQ_I32, ck!(true, |a, b| a == b)),
    (Op::S_CMPK_LG_I32, ck!(true, |a, b| a != b)),
    (Op::S_CMPK_GT_I32, ck!(true, |a, b| (a as i32) > (b as i32))),
    (
        Op::S_CMPK_GE_I32,
        ck!(true, |a, b| (a as i32) >= (b as i32)),
    ),
    (Op::S_CMPK_LT_I32, ck!(true, |a, b| (a as i32) < (b as i32))),
    (
        Op::S_CMPK_LE_I32,
        ck!(true, |a, b| (a as i32) <= (b as i32)),
    ),
    (Op::S_CMPK_EQ_U32, ck!(false, |a, b| a == b)),
    (Op::S_CMPK_LG_U32, ck!(false, |a, b| a != b)),
    (Op::S_CMPK_GT_U32, ck!(false, |a, b| a > b)),
    (Op::S_CMPK_GE_U32, ck!(false, |a, b| a >= b)),
    (Op::S_CMPK_LT_U32, ck!(false, |a, b| a < b)),
    (Op::S_CMPK_LE_U32, ck!(false, |a, b| a <= b)),
    (Op::S_GETREG_B32, getreg as Exec),
    (Op::S_SETREG_B32, setreg as Exec),
    (Op::S_SETREG_IMM32_B32, setreg_imm32 as Exec),
    (Op::S_SUBVECTOR_LOOP_BEGIN, subvector_begin as Exec),
    (Op::S_SUBVECTOR_LOOP_END, subvector_end as Exec),
    (Op::S_VERSION, super::nop as Exec),
    (Op::S_WAITCNT_VSCNT, super::nop as Exec),
    (Op::S_WAITCNT_VMCNT, super::nop as Exec),
    (Op::S_WAITCNT_EXPCNT, super::nop as Exec),
    (Op::S_WAITCNT_LGKMCNT, super::nop as Exec),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_field_extract() {
        assert_eq!(bfe32(0xabcd_1234, 8 | (8 << 16), false), 0x12);
        assert_eq!(bfe32(0x0000_8000, 8 | (8 << 16), true), 0xffff_ff80);
        assert_eq!(bfe32(5, 0, false), 0, "width 0 yields 0");
        assert_eq!(bfe64(u64::MAX, 60 | (16 << 16), false), 0xf);
    }

    #[test]
    fn bit_scans() {
        assert_eq!(ctz(0, 32), u32::MAX);
        assert_eq!(ctz(8, 32), 3);
        assert_eq!(clz32(1), 31);
        assert_eq!(cls32(0xffff_fff0), 28);
        assert_eq!(quadmask(0x0f00_00f1, 8), 0b0100_0011);
    }
}

/// SALU float ops of gfx1150+ (RDNA3.5): the scalar counterparts of VALU
/// float arithmetic, conversions and compares.
///
/// MODE's denormal controls apply to them as to every float op: FP_DENORM
/// bits [1:0] for f32 and [3:2] for f16 operands and results (a flushed
/// denormal becomes a zero of its sign). f16 values live in the low half of
/// the SGPR (the high half for `s_cvt_hi_f32_f16`), and an f16 result is
/// written with the high half zero.
mod float_ops {
    use super::super::valu::rtz_h;
    use super::*;
    use crate::float::NanRule::{Number, Propagate};
    use crate::float::{
        self, d_to_h, f, f_to_i32, f_to_u32, flush16, flush32, h, mm16, mm32, to_h,
    };

    /// How an operand or result is read for denormal flushing.
    #[derive(Clone, Copy, PartialEq)]
    enum K {
        /// An integer: never flushed.
        I,
        F32,
        /// An f16 in bits [15:0].
        F16,
        /// An f16 in bits [31:16] (read only).
        F16Hi,
    }

    /// Flushes a denormal operand (`input`) or result as MODE's f32 or
    /// f16 denormal control says for that direction.
    fn flush(w: &Wave, v: u32, k: K, input: bool) -> u32 {
        let (f32_on, f16_on) = if input {
            (w.mode.flush_in_f32(), w.mode.flush_in_f16_f64())
        } else {
            (w.mode.flush_out_f32(), w.mode.flush_out_f16_f64())
        };
        match k {
            K::F32 if f32_on => flush32(v),
            K::F16 if f16_on => flush16(v),
            K::F16Hi if f16_on => flush16(v >> 16) << 16,
            K::F16 => v & 0xffff,
            _ => v,
        }
    }

    /// `ins` types every source (the accumulator of the FMACs included),
    /// `out` the result.
    #[inline(always)]
    fn sf(w: &mut Wave, i: &Inst, ins: K, out: K, op: impl Fn(u32, u32, u32) -> u32) -> Result {
        let r = op(
            flush(w, w.read_s32(i.src[0]), ins, true),
            flush(w, w.read_s32(i.src[1]), ins, true),
            flush(w, w.read_s32(i.src[2]), ins, true),
        );
        let r = flush(w, r, out, false);
        w.write_s32(i.dst[0], r);
        Ok(Flow::Next)
    }

    /// Compares flush denormal operands too (a flushed denormal equals 0).
    #[inline(always)]
    fn sc(w: &mut Wave, i: &Inst, k: K, pred: impl Fn(u32, u32) -> bool) -> Result {
        let (a, b) = (
            flush(w, w.read_s32(i.src[0]), k, true),
            flush(w, w.read_s32(i.src[1]), k, true),
        );
        w.scc = pred(a, b);
        Ok(Flow::Next)
    }

    macro_rules! sf {
        ($ins:ident => $out:ident, $f:expr) => {
            (|w: &mut Wave, _: &mut Env, i: &Inst| sf(w, i, K::$ins, K::$out, $f)) as Exec
        };
    }
    macro_rules! cmps {
        ($($name:ident => $k:ident, $conv:ident, $p:expr;)*) => {
            pub const CMPS: &[(Op, Exec)] = &[$((Op::$name, (|w: &mut Wave, _: &mut Env, i: &Inst| sc(w, i, K::$k, |a, b| $p($conv(a), $conv(b)))) as Exec),)*];
        };
    }

    fn hh(x: u32) -> f32 {
        h(x & 0xffff)
    }

    cmps! {
        S_CMP_LT_F32 => F32, f, |a: f32, b: f32| a < b;
        S_CMP_EQ_F32 => F32, f, |a: f32, b: f32| a == b;
        S_CMP_LE_F32 => F32, f, |a: f32, b: f32| a <= b;
        S_CMP_GT_F32 => F32, f, |a: f32, b: f32| a > b;
        S_CMP_LG_F32 => F32, f, |a: f32, b: f32| a < b || a > b;
        S_CMP_GE_F32 => F32, f, |a: f32, b: f32| a >= b;
        S_CMP_O_F32 => F32, f, |a: f32, b: f32| !a.is_nan() && !b.is_nan();
        S_CMP_U_F32 => F32, f, |a: f32, b: f32| a.is_nan() || b.is_nan();
        S_CMP_NGE_F32 => F32, f, |a: f32, b: f32| !(a >= b);
        S_CMP_NLG_F32 => F32, f, |a: f32, b: f32| !(a < b || a > b);
        S_CMP_NGT_F32 => F32, f, |a: f32, b: f32| !(a > b);
        S_CMP_NLE_F32 => F32, f, |a: f32, b: f32| !(a <= b);
        S_CMP_NEQ_F32 => F32, f, |a: f32, b: f32| a != b;
        S_CMP_NLT_F32 => F32, f, |a: f32, b: f32| !(a < b);
        S_CMP_LT_F16 => F16, hh, |a: f32, b: f32| a < b;
        S_CMP_EQ_F16 => F16, hh, |a: f32, b: f32| a == b;
        S_CMP_LE_F16 => F16, hh, |a: f32, b: f32| a <= b;
        S_CMP_GT_F16 => F16, hh, |a: f32, b: f32| a > b;
        S_CMP_LG_F16 => F16, hh, |a: f32, b: f32| a < b || a > b;
        S_CMP_GE_F16 => F16, hh, |a: f32, b: f32| a >= b;
        S_CMP_O_F16 => F16, hh, |a: f32, b: f32| !a.is_nan() && !b.is_nan();
        S_CMP_U_F16 => F16, hh, |a: f32, b: f32| a.is_nan() || b.is_nan();
        S_CMP_NGE_F16 => F16, hh, |a: f32, b: f32| !(a >= b);
        S_CMP_NLG_F16 => F16, hh, |a: f32, b: f32| !(a < b || a > b);
        S_CMP_NGT_F16 => F16, hh, |a: f32, b: f32| !(a > b);
        S_CMP_NLE_F16 => F16, hh, |a: f32, b: f32| !(a <= b);
        S_CMP_NEQ_F16 => F16, hh, |a: f32, b: f32| a != b;
        S_CMP_NLT_F16 => F16, hh, |a: f32, b: f32| !(a < b);
    }

    fn hx(f2: impl Fn(f32, f32) -> f32, a: u32, b: u32) -> u32 {
        to_h(f2(hh(a), hh(b)))
    }

    /// S_MIN_F32/F16 and S_MAX_F32/F16 follow the same pseudocode as the
    /// VALU forms (IEEE mode: a signalling NaN, S0's first, comes back
    /// quieted and a quiet NaN is ignored; otherwise any NaN is ignored;
    /// -0 orders below +0): one definition, [`float::minmax`].
    fn minmax_op(w: &mut Wave, i: &Inst, k: K, max: bool) -> Result {
        let ieee = w.mode.ieee();
        sf(w, i, k, k, |a, b, _| match (k, max) {
            (K::F16, false) => float::vmin16(a, b, ieee),
            (K::F16, true) => float::vmax16(a, b, ieee),
            (_, false) => float::vmin32(a, b, ieee),
            (_, true) => float::vmax32(a, b, ieee),
        })
    }

    macro_rules! minmax {
        ($k:ident, $max:expr) => {
            (|w: &mut Wave, _: &mut Env, i: &Inst| minmax_op(w, i, K::$k, $max)) as Exec
        };
    }

    pub const OPS: &[(Op, Exec)] = &[
        (
            Op::S_CEIL_F32,
            sf!(F32 => F32, |a, _, _| f(a).ceil().to_bits()),
        ),
        (
            Op::S_FLOOR_F32,
            sf!(F32 => F32, |a, _, _| f(a).floor().to_bits()),
        ),
        (
            Op::S_TRUNC_F32,
            sf!(F32 => F32, |a, _, _| f(a).trunc().to_bits()),
        ),
        (
            Op::S_RNDNE_F32,
            sf!(F32 => F32, |a, _, _| f(a).round_ties_even().to_bits()),
        ),
        (
            Op::S_CVT_F32_I32,
            sf!(I => F32, |a, _, _| (a as i32 as f32).to_bits()),
        ),
        (
            Op::S_CVT_F32_U32,
            sf!(I => F32, |a, _, _| (a as f32).to_bits()),
        ),
        (
            Op::S_CVT_I32_F32,
            sf!(F32 => I, |a, _, _| f_to_i32(f(a) as f64)),
        ),
        (
            Op::S_CVT_U32_F32,
            sf!(F32 => I, |a, _, _| f_to_u32(f(a) as f64)),
        ),
        (Op::S_CVT_F16_F32, sf!(F32 => F16, |a, _, _| to_h(f(a)))),
        (
            Op::S_CVT_F32_F16,
            sf!(F16 => F32, |a, _, _| hh(a).to_bits()),
        ),
        (
            Op::S_CVT_HI_F32_F16,
            sf!(F16Hi => F32, |a, _, _| h(a >> 16).to_bits()),
        ),
        (
            Op::S_CEIL_F16,
            sf!(F16 => F16, |a, _, _| to_h(hh(a).ceil())),
        ),
        (
            Op::S_FLOOR_F16,
            sf!(F16 => F16, |a, _, _| to_h(hh(a).floor())),
        ),
        (
            Op::S_TRUNC_F16,
            sf!(F16 => F16, |a, _, _| to_h(hh(a).trunc())),
        ),
        (
            Op::S_RNDNE_F16,
            sf!(F16 => F16, |a, _, _| to_h(hh(a).round_ties_even())),
        ),
        (
            Op::S_ADD_F32,
            sf!(F32 => F32, |a, b, _| (f(a) + f(b)).to_bits()),
        ),
        (
            Op::S_SUB_F32,
            sf!(F32 => F32, |a, b, _| (f(a) - f(b)).to_bits()),
        ),
        (
            Op::S_MUL_F32,
            sf!(F32 => F32, |a, b, _| (f(a) * f(b)).to_bits()),
        ),
        (Op::S_MIN_F32, minmax!(F32, false)),
        (Op::S_MAX_F32, minmax!(F32, true)),
        (
            Op::S_FMAC_F32,
            sf!(F32 => F32, |a, b, c| f(a).mul_add(f(b), f(c)).to_bits()),
        ),
        (
            Op::S_FMAAK_F32,
            sf!(F32 => F32, |a, b, c| f(a).mul_add(f(b), f(c)).to_bits()),
        ),
        (
            Op::S_FMAMK_F32,
            sf!(F32 => F32, |a, b, c| f(a).mul_add(f(b), f(c)).to_bits()),
        ),
        (
            Op::S_CVT_PK_RTZ_F16_F32,
            sf!(F32 => I, |a, b, _| rtz_h(f(a)) | rtz_h(f(b)) << 16),
        ),
        // f16 sums and products are exact enough in f32 (24 >= 2*11 + 2
        // bits) that rounding them to f16 afterwards is a single rounding.
        (
            Op::S_ADD_F16,
            sf!(F16 => F16, |a, b, _| hx(|x, y| x + y, a, b)),
        ),
        (
            Op::S_SUB_F16,
            sf!(F16 => F16, |a, b, _| hx(|x, y| x - y, a, b)),
        ),
        (
            Op::S_MUL_F16,
            sf!(F16 => F16, |a, b, _| hx(|x, y| x * y, a, b)),
        ),
        (Op::S_MIN_F16, minmax!(F16, false)),
        (Op::S_MAX_F16, minmax!(F16, true)),
        // gfx12's min/max families, as the VALU forms (`float::mm32`).
        (
            Op::S_MAX_NUM_F32,
            sf!(F32 => F32, |a, b, _| mm32(Number, true, a, b)),
        ),
        (
            Op::S_MIN_NUM_F32,
            sf!(F32 => F32, |a, b, _| mm32(Number, false, a, b)),
        ),
        (
            Op::S_MAXIMUM_F32,
            sf!(F32 => F32, |a, b, _| mm32(Propagate, true, a, b)),
        ),
        (
            Op::S_MINIMUM_F32,
            sf!(F32 => F32, |a, b, _| mm32(Propagate, false, a, b)),
        ),
        (
            Op::S_MAX_NUM_F16,
            sf!(F16 => F16, |a, b, _| mm16(Number, true, a, b)),
        ),
        (
            Op::S_MIN_NUM_F16,
            sf!(F16 => F16, |a, b, _| mm16(Number, false, a, b)),
        ),
        (
            Op::S_MAXIMUM_F16,
            sf!(F16 => F16, |a, b, _| mm16(Propagate, true, a, b)),
        ),
        (
            Op::S_MINIMUM_F16,
            sf!(F16 => F16, |a, b, _| mm16(Propagate, false, a, b)),
        ),
        (
            Op::S_FMAC_F16,
            sf!(F16 => F16, |a, b, c| d_to_h(
                (hh(a) as f64).mul_add(hh(b) as f64, hh(c) as f64)
            )),
        ),
    ];
}

/// Every scalar-ALU table.
pub fn tables() -> [&'static [(Op, Exec)]; 3] {
    [TABLE, float_ops::OPS, float_ops::CMPS]
}
