//! SOPP: program control — branches, barriers, waits, traps, mode changes.

use softgpu_isa::{sreg, Inst, Op, Operand};

use super::{nop, Env, Exec, Flow, Result, Trap};
use crate::trap::RanOff;
use crate::wave::Wave;

fn branch_if(cond: fn(&Wave) -> bool) -> impl Fn(&mut Wave, &Inst) -> Result {
    move |w, i| {
        Ok(if cond(w) {
            Flow::Branch(i.imm as i16 as i32)
        } else {
            Flow::Next
        })
    }
}

macro_rules! cbranch {
    ($cond:expr) => {
        (|w: &mut Wave, _: &mut Env, i: &Inst| branch_if($cond)(w, i)) as Exec
    };
}

fn endpgm(w: &mut Wave, _: &mut Env, _: &Inst) -> Result {
    w.ended = true;
    Ok(Flow::End)
}

fn trap(_: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    Err(Trap::Trap(i.imm as u32 & 0xff))
}

/// `s_denorm_mode`: the immediate's low four bits replace MODE's denormal bits.
fn denorm_mode(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    w.mode.bits = (w.mode.bits & !0xf0) | ((i.imm as u32 & 0xf) << 4);
    Ok(Flow::Next)
}

/// `s_round_mode`: the immediate's low four bits replace MODE's round bits.
fn round_mode(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    w.mode.bits = (w.mode.bits & !0xf) | (i.imm as u32 & 0xf);
    Ok(Flow::Next)
}

/// The workgroup barrier as one workgroup's waves share it: what gfx12's
/// `s_barrier_signal_isfirst` and `s_get_barrier_state` read.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkgroupBarrier {
    /// Waves that signalled since the barrier last completed.
    pub signals: u32,
    /// Waves the barrier waits for: the workgroup's waves still running.
    pub members: u32,
}

/// Which barrier an `s_barrier_*` operand names, as gfx12 reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Barrier {
    /// -1: the workgroup barrier.
    Workgroup,
    /// 0, and the trap handler's -2 outside a trap handler: no effect
    /// (RDNA4 ISA, S_BARRIER_SIGNAL: "Barrier #0 is a NOP"; "#-2 is
    /// privileged (for traps only)").
    Nop,
    /// Any other id: a named barrier, which RDNA4 does not have.
    Named(i32),
}

/// The barrier an `s_barrier_*` operand names: M0 names one by its low
/// five bits, which cannot reach the negative ids.
fn barrier(w: &Wave, op: Operand) -> Barrier {
    match op {
        Operand::Sgpr(sreg::M0) => barrier_of((w.read_s32(op) & 0x1f) as i32),
        op => barrier_of(w.read_s32(op) as i32),
    }
}

fn barrier_of(id: i32) -> Barrier {
    match id {
        -1 => Barrier::Workgroup,
        0 | -2 => Barrier::Nop,
        id => Barrier::Named(id),
    }
}

/// gfx12's split barrier, first half: the wave counts itself in.
fn barrier_signal(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    match barrier(w, i.src[0]) {
        Barrier::Workgroup => env.barrier.signals += 1,
        Barrier::Nop => {}
        Barrier::Named(id) => return named_barrier(i.op, id),
    }
    Ok(Flow::Next)
}

/// `s_barrier_signal_isfirst`: the signal, and SCC set when no other wave
/// has signalled this barrier yet (0 for a barrier with no effect).
fn barrier_signal_isfirst(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let first = env.barrier.signals == 0 && barrier(w, i.src[0]) == Barrier::Workgroup;
    barrier_signal(w, env, i)?;
    w.scc = first;
    Ok(Flow::Next)
}

fn barrier_wait(_: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    match barrier_of(i.imm as i16 as i32) {
        Barrier::Workgroup => Ok(Flow::Barrier),
        Barrier::Nop => Ok(Flow::Next),
        Barrier::Named(id) => named_barrier(i.op, id),
    }
}

/// `s_get_barrier_state`: the barrier's signal count in bits 16..22, its
/// member count in bits 4..10 and its valid bit in bit 0 (RDNA4 ISA,
/// S_GET_BARRIER_STATE). A barrier with no effect reads as all zero.
fn get_barrier_state(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let state = match barrier(w, i.src[0]) {
        Barrier::Workgroup => {
            let b = env.barrier;
            (b.signals & 0x7f) << 16 | (b.members & 0x7f) << 4 | 1
        }
        Barrier::Nop => 0,
        Barrier::Named(id) => return named_barrier(i.op, id),
    };
    w.write_s32(i.dst[0], state);
    Ok(Flow::Next)
}

/// Named barriers are gfx1250's: RDNA4 has only the workgroup barrier (-1)
/// and the trap handler's (-2), and LLVM dropped `s_barrier_init`, `join`
/// and `leave` from gfx12 (llvm-project #129548).
fn named_barrier(op: Op, id: i32) -> Result {
    Err(Trap::UnsupportedForm {
        op,
        why: format!(
            "named barrier {id}: RDNA4 has only the workgroup barrier (-1); named barriers are \
             gfx1250's"
        ),
    })
}

pub const TABLE: &[(Op, Exec)] = &[
    (Op::S_ENDPGM, endpgm as Exec),
    (Op::S_ENDPGM_SAVED, endpgm as Exec),
    (
        Op::S_BRANCH,
        (|_: &mut Wave, _: &mut Env, i: &Inst| Ok(Flow::Branch(i.imm as i16 as i32))) as Exec,
    ),
    (Op::S_CBRANCH_SCC0, cbranch!(|w| !w.scc)),
    (Op::S_CBRANCH_SCC1, cbranch!(|w| w.scc)),
    (Op::S_CBRANCH_VCCZ, cbranch!(|w| w.vcc() == 0)),
    (Op::S_CBRANCH_VCCNZ, cbranch!(|w| w.vcc() != 0)),
    (Op::S_CBRANCH_EXECZ, cbranch!(|w| w.exec() == 0)),
    (Op::S_CBRANCH_EXECNZ, cbranch!(|w| w.exec() != 0)),
    (
        Op::S_BARRIER,
        (|_: &mut Wave, _: &mut Env, _: &Inst| Ok(Flow::Barrier)) as Exec,
    ),
    (
        Op::S_SLEEP,
        (|_: &mut Wave, _: &mut Env, _: &Inst| Ok(Flow::Yield)) as Exec,
    ),
    (
        Op::S_SLEEP_VAR,
        (|_: &mut Wave, _: &mut Env, _: &Inst| Ok(Flow::Yield)) as Exec,
    ),
    // gfx12 splits `s_barrier` in two: a wave signals its arrival, then
    // waits for the others. The signal is not a rendezvous, so a wave that
    // does work between the two lets no one pass early: the whole barrier
    // is taken at the wait, and the count of signals is kept for
    // `s_barrier_signal_isfirst` and `s_get_barrier_state`. RDNA4 has no
    // named barriers (`s_barrier_init`/`join`/`leave`, `s_wakeup_barrier`
    // stay unhandled: see tests/instructions/coverage.rs).
    (Op::S_BARRIER_SIGNAL, barrier_signal as Exec),
    (Op::S_BARRIER_SIGNAL_ISFIRST, barrier_signal_isfirst as Exec),
    (Op::S_BARRIER_WAIT, barrier_wait as Exec),
    (Op::S_GET_BARRIER_STATE, get_barrier_state as Exec),
    (
        Op::S_SETHALT,
        (|_: &mut Wave, _: &mut Env, _: &Inst| Ok(Flow::Yield)) as Exec,
    ),
    (Op::S_TRAP, trap as Exec),
    (Op::S_DENORM_MODE, denorm_mode as Exec),
    (Op::S_ROUND_MODE, round_mode as Exec),
    // Timing, caches and hints: no architectural effect in an in-order
    // interpreter whose memory is always coherent. Those in [`HINTS`] are
    // also folded away at decode; these entries run only when a branch
    // lands on one.
    (Op::S_NOP, nop as Exec),
    (Op::S_WAITCNT, nop as Exec),
    (Op::S_WAITCNT_DEPCTR, nop as Exec),
    (Op::S_WAIT_ALU, nop as Exec),
    (Op::S_WAIT_LOADCNT, nop as Exec),
    (Op::S_WAIT_STORECNT, nop as Exec),
    (Op::S_WAIT_SAMPLECNT, nop as Exec),
    (Op::S_WAIT_BVHCNT, nop as Exec),
    (Op::S_WAIT_EXPCNT, nop as Exec),
    (Op::S_WAIT_DSCNT, nop as Exec),
    (Op::S_WAIT_KMCNT, nop as Exec),
    (Op::S_WAIT_LOADCNT_DSCNT, nop as Exec),
    (Op::S_WAIT_STORECNT_DSCNT, nop as Exec),
    (Op::S_DELAY_ALU, nop as Exec),
    (Op::S_CLAUSE, nop as Exec),
    (Op::S_SETPRIO, nop as Exec),
    (Op::S_SENDMSG, nop as Exec),
    (Op::S_WAIT_IDLE, nop as Exec),
    (Op::S_WAIT_EVENT, nop as Exec),
    (Op::S_SINGLEUSE_VDST, nop as Exec),
    // No debugger is ever attached, so the debug-condition branches never
    // branch.
    (Op::S_CBRANCH_CDBGSYS, nop as Exec),
    (Op::S_CBRANCH_CDBGUSER, nop as Exec),
    (Op::S_CBRANCH_CDBGSYS_OR_USER, nop as Exec),
    (Op::S_CBRANCH_CDBGSYS_AND_USER, nop as Exec),
    (Op::S_SENDMSGHALT, nop as Exec),
    (Op::S_ICACHE_INV, nop as Exec),
    (Op::S_WAKEUP, nop as Exec),
    (Op::S_SET_INST_PREFETCH_DISTANCE, nop as Exec),
    (Op::S_TTRACEDATA, nop as Exec),
    (Op::S_TTRACEDATA_IMM, nop as Exec),
    (Op::S_SETKILL, nop as Exec),
    (Op::S_INCPERFLEVEL, nop as Exec),
    (Op::S_DECPERFLEVEL, nop as Exec),
    (
        Op::S_CODE_END,
        (|_: &mut Wave, _: &mut Env, _: &Inst| Err(Trap::RanOff(RanOff::CodeEnd))) as Exec,
    ),
];

/// Instructions that only schedule: they wait for counters that are always
/// zero here (memory is coherent and every access completes before the next
/// instruction), delay or group issue, or tune instruction prefetch. The
/// decoder folds each run of them into the instruction before it
/// ([`crate::ops::Slot::hints_after`]), so they cost nothing at run
/// time while still counting as retired. `s_sleep` is not one: a spinning
/// wave sleeps to let the others of its workgroup run.
pub const HINTS: &[Op] = &[
    Op::S_NOP,
    Op::S_WAITCNT,
    Op::S_WAITCNT_DEPCTR,
    Op::S_WAITCNT_VSCNT,
    Op::S_WAITCNT_VMCNT,
    Op::S_WAITCNT_EXPCNT,
    Op::S_WAITCNT_LGKMCNT,
    // gfx12's split counters and its `s_waitcnt_depctr`.
    Op::S_WAIT_ALU,
    Op::S_WAIT_LOADCNT,
    Op::S_WAIT_STORECNT,
    Op::S_WAIT_SAMPLECNT,
    Op::S_WAIT_BVHCNT,
    Op::S_WAIT_EXPCNT,
    Op::S_WAIT_DSCNT,
    Op::S_WAIT_KMCNT,
    Op::S_WAIT_LOADCNT_DSCNT,
    Op::S_WAIT_STORECNT_DSCNT,
    Op::S_DELAY_ALU,
    Op::S_CLAUSE,
    Op::S_SET_INST_PREFETCH_DISTANCE,
    // gfx10's name for it (an `ops::RENAMED` row).
    Op::S_INST_PREFETCH,
    Op::S_SINGLEUSE_VDST,
    Op::S_SETPRIO,
];

/// GFX9's VGPR index mode (GFX9 ISA guide, S_SET_GPR_IDX_ON and "VGPR
/// indexing"): `s_set_gpr_idx_on S0, MODE` sets M0[7:0] = S0[7:0] and
/// M0[15:12] = MODE, and until `s_set_gpr_idx_off` every VALU operand
/// MODE enables (bit 0 src0, 1 src1, 2 src2, 3 the destination) names
/// VGPR N + M0[7:0]. LLVM uses it for dynamic indexing of a vector in
/// VGPRs (on, one `v_mov_b32`, off, straight-line). The region is run by
/// the `on` handler itself: each VALU instruction up to the `off` is
/// resolved once with its operands offset and run by its own handler, so
/// no handler or lane loop pays for the mode, and neither tier ever sees
/// an indexed instruction (the wave continues after the `off`). Its
/// instructions do not count as retired.
mod gpr_idx {
    use softgpu_isa::{sreg, Format, Inst, Op, Operand, AGPR_BASE};

    use super::{Env, Flow, Result, Trap};
    use crate::wave::Wave;

    /// The most instructions an index-mode region may hold.
    const MAX_REGION: u32 = 64;

    fn unsupported(why: &str) -> Trap {
        Trap::UnsupportedForm {
            op: Op::S_SET_GPR_IDX_ON,
            why: why.into(),
        }
    }

    fn set_m0(w: &mut Wave, keep: u32, bits: u32) {
        let m0 = &mut w.sgpr[sreg::M0 as usize];
        *m0 = (*m0 & keep) | bits;
    }

    /// `s_set_gpr_idx_idx`: M0[7:0] = S0[7:0].
    pub fn idx(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
        let v = w.read_s32(i.src[0]) & 0xff;
        set_m0(w, !0xff, v);
        Ok(Flow::Next)
    }

    /// `s_set_gpr_idx_mode`: M0[15:12] = SIMM16[3:0].
    pub fn mode(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
        set_m0(w, !0xf000, (i.imm as u32 & 15) << 12);
        Ok(Flow::Next)
    }

    /// `s_set_gpr_idx_on`: sets M0's fields, then runs the region.
    pub fn on(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
        let Operand::Const(enables) = i.src[1] else {
            return Err(unsupported("its mode is not a constant"));
        };
        let v = w.read_s32(i.src[0]) & 0xff;
        set_m0(w, !0xf0ff, v | (enables as u32 & 15) << 12);
        region(w, env)
    }

    fn is_valu(i: &Inst) -> bool {
        use Format::*;
        matches!(
            i.op.info().format,
            Vop1 | Vop2 | Vop3 | Vop3sd | Vop3p | Vopc
        )
    }

    /// `v` offset by `idx` when `on`: VGPRs only (not AccVGPRs), and the
    /// result must stay a VGPR.
    fn offset(v: &mut Operand, on: bool, idx: u16) -> Result<()> {
        if let (true, Operand::Vgpr(r)) = (on, *v) {
            if r < AGPR_BASE {
                if r + idx >= AGPR_BASE {
                    return Err(unsupported("an index past v255"));
                }
                *v = Operand::Vgpr(r + idx);
            }
        }
        Ok(())
    }

    /// The instruction as index mode makes it, under M0.
    fn indexed(i: &Inst, m0: u32) -> Result<Inst> {
        let mut out = i.clone();
        let (idx, enables) = ((m0 & 0xff) as u16, m0 >> 12 & 15);
        for k in 0..3 {
            offset(&mut out.src[k], enables >> k & 1 != 0, idx)?;
        }
        offset(&mut out.dst[0], enables & 8 != 0, idx)?;
        Ok(out)
    }

    /// Runs the slots after the wave's `on` up to its `off`, then branches
    /// past the `off`.
    fn region(w: &mut Wave, env: &mut Env) -> Result {
        let code = env.code;
        let start = w.pc;
        let mut pc = start + 1;
        loop {
            if pc - start > MAX_REGION {
                return Err(unsupported("no s_set_gpr_idx_off in reach"));
            }
            let Some(slot) = code.slots.get(pc as usize) else {
                return Err(unsupported("no s_set_gpr_idx_off before the end"));
            };
            if slot.inst.op == Op::S_SET_GPR_IDX_OFF {
                break;
            }
            let flow = if is_valu(&slot.inst) {
                let inst = indexed(&slot.inst, w.sgpr[sreg::M0 as usize])?;
                // Named, not the region's `on`: the op has no handler.
                let exec = crate::ops::handler_for(&inst).ok_or_else(|| Trap::UnsupportedForm {
                    op: inst.op,
                    why: "no semantics, met in a VGPR index-mode region".into(),
                })?;
                exec(w, env, &inst)?
            } else {
                (slot.exec)(w, env, &slot.inst)?
            };
            if flow != Flow::Next {
                return Err(unsupported("a branch, wait or end inside the region"));
            }
            pc += 1;
        }
        let (from, off) = (code.slot_at(start), code.slot_at(pc));
        let next = from.offset + from.inst.size as u64;
        let past = off.offset + off.inst.size as u64;
        Ok(Flow::Branch(((past - next) / 4) as i32))
    }
}

/// GFX9's VGPR index-mode ops (see the `gpr_idx` module). `s_set_gpr_idx_off` met
/// outside a region (the `on` handler steps over its own) has nothing to
/// turn off.
pub const GPR_IDX: &[(Op, Exec)] = &[
    (Op::S_SET_GPR_IDX_ON, gpr_idx::on as Exec),
    (Op::S_SET_GPR_IDX_OFF, nop as Exec),
    (Op::S_SET_GPR_IDX_MODE, gpr_idx::mode as Exec),
    (Op::S_SET_GPR_IDX_IDX, gpr_idx::idx as Exec),
];
