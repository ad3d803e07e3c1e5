//! SOPP: program control — branches, barriers, waits, traps, mode changes.

use softgpu_isa::{Inst, Op};

use super::{nop, Env, Exec, Flow, Result, Trap};
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

pub const TABLE: &[(&str, Exec)] = &[
    ("s_endpgm", endpgm as Exec),
    ("s_endpgm_saved", endpgm as Exec),
    (
        "s_branch",
        (|_: &mut Wave, _: &mut Env, i: &Inst| Ok(Flow::Branch(i.imm as i16 as i32))) as Exec,
    ),
    ("s_cbranch_scc0", cbranch!(|w| !w.scc)),
    ("s_cbranch_scc1", cbranch!(|w| w.scc)),
    ("s_cbranch_vccz", cbranch!(|w| w.vcc() == 0)),
    ("s_cbranch_vccnz", cbranch!(|w| w.vcc() != 0)),
    ("s_cbranch_execz", cbranch!(|w| w.exec() == 0)),
    ("s_cbranch_execnz", cbranch!(|w| w.exec() != 0)),
    (
        "s_barrier",
        (|_: &mut Wave, _: &mut Env, _: &Inst| Ok(Flow::Barrier)) as Exec,
    ),
    (
        "s_sleep",
        (|_: &mut Wave, _: &mut Env, _: &Inst| Ok(Flow::Yield)) as Exec,
    ),
    (
        "s_sethalt",
        (|_: &mut Wave, _: &mut Env, _: &Inst| Ok(Flow::Yield)) as Exec,
    ),
    ("s_trap", trap as Exec),
    ("s_denorm_mode", denorm_mode as Exec),
    ("s_round_mode", round_mode as Exec),
    // Timing, caches and hints: no architectural effect in an in-order
    // interpreter whose memory is always coherent. Those in [`HINTS`] are
    // also folded away at decode; these entries run only when a branch
    // lands on one.
    ("s_nop", nop as Exec),
    ("s_waitcnt", nop as Exec),
    ("s_waitcnt_depctr", nop as Exec),
    ("s_delay_alu", nop as Exec),
    ("s_clause", nop as Exec),
    ("s_setprio", nop as Exec),
    ("s_sendmsg", nop as Exec),
    ("s_wait_idle", nop as Exec),
    ("s_wait_event", nop as Exec),
    ("s_singleuse_vdst", nop as Exec),
    // No debugger is ever attached, so the debug-condition branches never
    // branch.
    ("s_cbranch_cdbgsys", nop as Exec),
    ("s_cbranch_cdbguser", nop as Exec),
    ("s_cbranch_cdbgsys_or_user", nop as Exec),
    ("s_cbranch_cdbgsys_and_user", nop as Exec),
    ("s_sendmsghalt", nop as Exec),
    ("s_icache_inv", nop as Exec),
    ("s_wakeup", nop as Exec),
    ("s_set_inst_prefetch_distance", nop as Exec),
    ("s_inst_prefetch", nop as Exec),
    ("s_ttracedata", nop as Exec),
    ("s_ttracedata_imm", nop as Exec),
    ("s_setkill", nop as Exec),
    ("s_incperflevel", nop as Exec),
    ("s_decperflevel", nop as Exec),
    (
        "s_code_end",
        (|_: &mut Wave, _: &mut Env, _: &Inst| {
            Err(Trap::Other(
                "executed s_code_end padding (ran past the end of the kernel)".into(),
            ))
        }) as Exec,
    ),
];

/// Instructions that only schedule: they wait for counters that are always
/// zero here (memory is coherent and every access completes before the next
/// instruction), delay or group issue, or tune instruction prefetch. The
/// decoder folds each run of them into the instruction before it
/// ([`crate::program::Slot::hints_after`]), so they cost nothing at run
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
    Op::S_DELAY_ALU,
    Op::S_CLAUSE,
    Op::S_SET_INST_PREFETCH_DISTANCE,
    Op::S_SINGLEUSE_VDST,
    Op::S_SETPRIO,
];
