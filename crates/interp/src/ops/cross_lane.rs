//! Cross-lane data movement: DPP16, DPP8, readlane/writelane,
//! readfirstlane and the permlane family.

use softgpu_isa::{Inst, LaneSel, Op, Operand};

use super::{Env, Exec, Flow, Result, Trap};
use crate::wave::{Lanes, Wave, MAX_LANES};

/// The lane a DPP16 control reads for lane `l`, or None when the source
/// lies outside the lane's row. Every value of the 9-bit field is defined,
/// not only those the ISA guide and LLVM name:
/// - shifts and rotates by 0 (0x100, 0x110, 0x120) read the lane itself;
/// - the controls reserved since GFX10 (GFX9's wave shifts 0x130–0x13f and
///   row broadcasts 0x142/0x143, and 0x144–0x14f, 0x170–0x1ff) read lane 0
///   of the lane's row. That is what gfx11 hardware was measured to do for
///   0x142 (row_bcast:15 lands in lanes 0, 16, 32 and 48 only from
///   themselves); the other reserved values are assumed to decode alike.
fn dpp16_source(ctrl: u16, l: usize) -> Option<usize> {
    let row = l & !15;
    let pos = l & 15;
    let n = (ctrl & 0xf) as usize;
    match ctrl {
        0x000..=0x0ff => Some((l & !3) | ((ctrl as usize >> (2 * (l & 3))) & 3)),
        0x100..=0x10f => (pos + n < 16).then_some(l + n),
        0x110..=0x11f => (pos >= n).then(|| l - n),
        0x120..=0x12f => Some(row + ((pos + 16 - n) & 15)),
        0x140 => Some(row + 15 - pos),
        0x141 => Some((l & !7) + 7 - (l & 7)),
        0x150..=0x15f => Some(row + n),
        0x160..=0x16f => Some(row + (pos ^ n)),
        _ => Some(row),
    }
}

/// GCN's own DPP16 controls (GFX9 ISA guide, DPP_CTRL), which gfx10
/// reserved: whole-wave shifts and rotates by one lane (`wave_shl:1`
/// reads the next lane, `wave_shr:1` the previous one, the rotates wrap
/// around the wave), `row_bcast:15` (every lane of rows 1-3 reads lane 15
/// of the row before) and `row_bcast:31` (rows 2 and 3 read lane 31).
/// Lanes these give no source (the ends of a shift, rows 0 and 1 of a
/// broadcast) are out of range, for bound_ctrl and the write mask. None
/// for the controls GCN shares with gfx10+.
fn gcn_source(ctrl: u16, l: usize, lanes: usize) -> Option<Option<usize>> {
    let src = match ctrl {
        0x130 => (l + 1 < lanes).then_some(l + 1),
        0x134 => Some((l + 1) % lanes),
        0x138 => l.checked_sub(1),
        0x13c => Some((l + lanes - 1) % lanes),
        0x142 => (l >= 16).then(|| (l & !15) - 1),
        0x143 => (l >= 32).then_some(31),
        _ => return None,
    };
    Some(src)
}

/// The lane a DPP16 control reads for lane `l` under the instruction's
/// family rules (`gcn`: the decoder's [`softgpu_isa::flags::GCN_CROSS_LANE`]).
fn dpp_source(ctrl: u16, l: usize, lanes: usize, gcn: bool) -> Option<usize> {
    match gcn.then(|| gcn_source(ctrl, l, lanes)).flatten() {
        Some(src) => src,
        None => dpp16_source(ctrl, l),
    }
}

/// Whether `i`'s DPP controls are GCN's.
pub fn gcn_dpp(i: &Inst) -> bool {
    i.flags & softgpu_isa::flags::GCN_CROSS_LANE != 0
}

/// Fills `buf` with src0 as DPP delivers it to each lane.
pub fn dpp_fetch(w: &Wave, op: Operand, sel: LaneSel, gcn: bool, buf: &mut Lanes) {
    let mut tmp = [0u32; MAX_LANES];
    let src = *w.vsrc(op, &mut tmp);
    let exec = w.exec();
    for l in 0..w.lanes {
        buf[l] = match source_lane(sel, gcn, l, w.lanes, exec) {
            Some(s) => src[s],
            None => 0,
        };
    }
}

/// The valid source lane of lane `l`, honouring fetch-inactive.
fn source_lane(sel: LaneSel, gcn: bool, l: usize, lanes: usize, exec: u64) -> Option<usize> {
    let (src, fi) = match sel {
        LaneSel::Dpp16 {
            ctrl,
            fetch_inactive,
            ..
        } => (dpp_source(ctrl, l, lanes, gcn), fetch_inactive),
        LaneSel::Dpp8 {
            sel,
            fetch_inactive,
        } => (Some((l & !7) | sel[l & 7] as usize), fetch_inactive),
        LaneSel::None => (Some(l), true),
    };
    src.filter(|&s| s < lanes && (fi || exec >> s & 1 != 0))
}

/// Lanes a DPP instruction may write: row and bank masks, and lanes whose
/// source is invalid unless bound_ctrl asks for zero instead.
pub fn dpp_write_mask(w: &Wave, _op: Operand, sel: LaneSel, gcn: bool) -> u64 {
    let LaneSel::Dpp16 {
        row_mask,
        bank_mask,
        bound_ctrl,
        ..
    } = sel
    else {
        return u64::MAX;
    };
    let exec = w.exec();
    let mut mask = 0u64;
    for l in 0..w.lanes {
        let row_ok = row_mask >> (l / 16) & 1 != 0;
        let bank_ok = bank_mask >> ((l >> 2) & 3) & 1 != 0;
        let src_ok = bound_ctrl || source_lane(sel, gcn, l, w.lanes, exec).is_some();
        if row_ok && bank_ok && src_ok {
            mask |= 1 << l;
        }
    }
    mask
}

fn vgpr_index(op: Operand) -> Result<usize> {
    super::vgpr(op, "a cross-lane operand")
}

fn readlane(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let r = vgpr_index(i.src[0])?;
    let lane = w.read_s32(i.src[1]) as usize % w.lanes;
    let v = w.vgpr[r][lane];
    w.write_s32(i.dst[0], v);
    Ok(Flow::Next)
}

fn readfirstlane(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let exec = w.exec();
    let lane = if exec == 0 {
        0
    } else {
        exec.trailing_zeros() as usize
    };
    let v = w.lane32(i.src[0], lane);
    w.write_s32(i.dst[0], v);
    Ok(Flow::Next)
}

fn writelane(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let v = w.read_s32(i.src[0]);
    let lane = w.read_s32(i.src[1]) as usize % w.lanes;
    let r = vgpr_index(i.dst[0])?;
    w.vgpr[r][lane] = v;
    Ok(Flow::Next)
}

/// `v_permlane16_b32` / `v_permlanex16_b32`: each lane picks a lane of its
/// own (or, for x16, the neighbouring) row by a 4-bit selector from the
/// 64-bit scalar pair src2:src1. opsel bit 0 is fetch-inactive, bit 1
/// bound_ctrl.
fn permlane(w: &mut Wave, i: &Inst, cross: bool) -> Result {
    let sel = w.read_s32(i.src[1]) as u64 | (w.read_s32(i.src[2]) as u64) << 32;
    permlane_by(w, i, cross, |l| (sel >> (4 * (l & 15))) as usize & 0xf)
}

/// gfx12's `v_permlane16_var_b32` / `v_permlanex16_var_b32`: as
/// `permlane`, but each lane's selector is the low 4 bits of its own
/// lane of the VGPR src1 (RDNA4 guide).
fn permlane_var(w: &mut Wave, i: &Inst, cross: bool) -> Result {
    let s = vgpr_index(i.src[1])?;
    let sel = w.vgpr[s];
    permlane_by(w, i, cross, |l| sel[l] as usize & 0xf)
}

/// The permlane driver: lane `l` reads lane `select(l)` of its own row of
/// 16 (of the other row with `cross`). opsel bit 0 is fetch-inactive, bit
/// 1 bound_ctrl.
fn permlane_by(w: &mut Wave, i: &Inst, cross: bool, select: impl Fn(usize) -> usize) -> Result {
    let r = vgpr_index(i.src[0])?;
    let fi = i.mods.opsel & 1 != 0;
    let bound_ctrl = i.mods.opsel & 2 != 0;
    let exec = w.exec();
    let src = w.vgpr[r];
    let d = vgpr_index(i.dst[0])?;
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let row = if cross { (l & !15) ^ 16 } else { l & !15 };
        let s = row + select(l);
        if s < w.lanes && (fi || exec >> s & 1 != 0) {
            w.vgpr[d][l] = src[s];
        } else if bound_ctrl {
            w.vgpr[d][l] = 0;
        }
    }
    Ok(Flow::Next)
}

/// `v_permlane64_b32`: swaps the two halves of a wave64.
fn permlane64(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let r = vgpr_index(i.src[0])?;
    let d = vgpr_index(i.dst[0])?;
    let src = w.vgpr[r];
    let exec = w.exec();
    if w.lanes == 64 {
        for l in 0..64 {
            if exec >> l & 1 != 0 {
                w.vgpr[d][l] = src[l ^ 32];
            }
        }
    }
    Ok(Flow::Next)
}

/// `v_swap_b32`: exchanges two VGPRs in the active lanes.
fn swap(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let a = vgpr_index(i.dst[0])?;
    let b = vgpr_index(i.src[0])?;
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 != 0 {
            let t = w.vgpr[a][l];
            w.vgpr[a][l] = w.vgpr[b][l];
            w.vgpr[b][l] = t;
        }
    }
    Ok(Flow::Next)
}

/// `v_movrels_b32` / `v_movreld_b32` / `v_movrelsd_b32`: M0-relative VGPR
/// moves. `v_movreld`'s source is not relative, so it may be any operand
/// (SGPR, constant, literal), as its pseudocode `VGPR[DST + M0] = S0` says.
fn movrel(w: &mut Wave, i: &Inst, rel_src: bool, rel_dst: bool) -> Result {
    let m0 = w.sgpr[softgpu_isa::sreg::M0 as usize] as usize;
    let d = vgpr_index(i.dst[0])? + if rel_dst { m0 } else { 0 };
    let mut src = [0u32; MAX_LANES];
    if rel_src {
        let s = vgpr_index(i.src[0])? + m0;
        if s >= w.vgpr.len() || d >= w.vgpr.len() {
            return Err(Trap::RegisterRange {
                op: i.op,
                file: 'v',
                index: s.max(d),
            });
        }
        src = w.vgpr[s];
    } else if d >= w.vgpr.len() {
        return Err(Trap::RegisterRange {
            op: i.op,
            file: 'v',
            index: d,
        });
    } else {
        w.load_src(i.src[0], &mut src);
    }
    let exec = w.exec();
    w.write_v32(Operand::Vgpr(d as u16), &src, exec);
    Ok(Flow::Next)
}

/// `v_movrelsd_2_b32` (move) and `v_swaprel_b32` (swap): the source index
/// offset by M0[9:0], the destination index by M0[25:16].
fn movrel2(w: &mut Wave, i: &Inst, swap: bool) -> Result {
    let m0 = w.sgpr[softgpu_isa::sreg::M0 as usize] as usize;
    let s = vgpr_index(i.src[0])? + (m0 & 0x3ff);
    let d = vgpr_index(i.dst[0])? + ((m0 >> 16) & 0x3ff);
    if s >= w.vgpr.len() || d >= w.vgpr.len() {
        return Err(Trap::RegisterRange {
            op: i.op,
            file: 'v',
            index: s.max(d),
        });
    }
    let exec = w.exec();
    let (src, old) = (w.vgpr[s], w.vgpr[d]);
    w.write_v32(Operand::Vgpr(d as u16), &src, exec);
    if swap {
        w.write_v32(Operand::Vgpr(s as u16), &old, exec);
    }
    Ok(Flow::Next)
}

pub const TABLE: &[(Op, Exec)] = &[
    (
        Op::V_MOVRELSD_2_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel2(w, i, false)) as Exec,
    ),
    (
        Op::V_SWAPREL_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel2(w, i, true)) as Exec,
    ),
    (Op::V_READLANE_B32, readlane as Exec),
    (Op::V_READFIRSTLANE_B32, readfirstlane as Exec),
    (Op::V_WRITELANE_B32, writelane as Exec),
    (
        Op::V_PERMLANE16_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| permlane(w, i, false)) as Exec,
    ),
    (
        Op::V_PERMLANEX16_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| permlane(w, i, true)) as Exec,
    ),
    (
        Op::V_PERMLANE16_VAR_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| permlane_var(w, i, false)) as Exec,
    ),
    (
        Op::V_PERMLANEX16_VAR_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| permlane_var(w, i, true)) as Exec,
    ),
    (Op::V_PERMLANE64_B32, permlane64 as Exec),
    (Op::V_SWAP_B32, swap as Exec),
    (
        Op::V_MOVRELS_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel(w, i, true, false)) as Exec,
    ),
    (
        Op::V_MOVRELD_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel(w, i, false, true)) as Exec,
    ),
    (
        Op::V_MOVRELSD_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| movrel(w, i, true, true)) as Exec,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpp16_controls() {
        assert_eq!(dpp16_source(0x1b, 0), Some(3), "quad_perm [3,2,1,0]");
        assert_eq!(dpp16_source(0x101, 14), Some(15), "row_shl:1");
        assert_eq!(dpp16_source(0x101, 15), None);
        assert_eq!(dpp16_source(0x111, 16), None, "row_shr:1 at a row start");
        assert_eq!(dpp16_source(0x111, 17), Some(16));
        assert_eq!(dpp16_source(0x121, 16), Some(31), "row_ror:1");
        assert_eq!(dpp16_source(0x140, 17), Some(30), "row_mirror");
        assert_eq!(dpp16_source(0x141, 9), Some(14), "row_half_mirror");
        assert_eq!(dpp16_source(0x153, 20), Some(19), "row_share:3");
        assert_eq!(dpp16_source(0x161, 20), Some(21), "row_xmask:1");
        // Reserved values (see dpp16_source): shifts by 0 read the lane
        // itself; the rest read lane 0 of the row, as 0x142 does on gfx11.
        assert_eq!(dpp16_source(0x100, 5), Some(5));
        assert_eq!(dpp16_source(0x110, 5), Some(5));
        assert_eq!(dpp16_source(0x142, 37), Some(32), "GFX9 row_bcast:15");
        assert_eq!(dpp16_source(0x143, 63), Some(48), "GFX9 row_bcast:31");
        assert_eq!(dpp16_source(0x130, 3), Some(0), "GFX9 wave_shl:1");
        assert_eq!(dpp16_source(0x1ff, 20), Some(16));
    }
}
