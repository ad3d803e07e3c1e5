//! Which forms of its ops the JIT compiles.
//!
//! What the JIT lowers, and how, is data: each op's class is
//! `OpInfo::jit` in the op table (`softgpu_isa::jit`, from
//! `crates/isa/data/jit-classes.tsv`), and the emitter builds IR by
//! matching on it. What stays here depends on an instruction's operands,
//! not its op: whether an instruction is in a form the emitter builds
//! ([`form_ok`]), the registers a block may read and write, and where an
//! LDS op's accesses fall. Any instruction not in such a form ends a JIT
//! block and runs in the interpreter, so every op has one reference
//! definition and the equivalence tests compare the two for those that
//! have a second.

use softgpu_isa::{sreg, Inst, LaneSel, Operand, Ty};

pub use softgpu_isa::jit::{
    Carry, Class, Cond, FloatCmp, IntCmp, Lane, LdsShape, Scalar, Shift64, F64,
};

use softgpu_interp::wave::NUM_VGPRS;

/// Where an LDS op's accesses fall, from its instruction's offsets.
pub trait LdsOffsets {
    /// For a dword load, which the fast pass reads as a 16-byte window
    /// from lane 0's address plus each offset (`Emitter::lds_load_window`):
    /// the LDS bytes from that address the windows reach.
    fn window_reach(self, inst: &Inst) -> Option<u64>;

    /// Each access as (byte offset from the address VGPR, bytes), in the
    /// order their dwords fill the destination.
    fn accesses(self, inst: &Inst) -> Vec<(u64, u64)>;
}

impl LdsOffsets for LdsShape {
    fn window_reach(self, inst: &Inst) -> Option<u64> {
        let windows = self
            .accesses(inst)
            .into_iter()
            .map(|(offset, _)| offset + 16);
        (self.dwords() == 1).then(|| windows.max().unwrap_or(16))
    }

    fn accesses(self, inst: &Inst) -> Vec<(u64, u64)> {
        let bytes = 4 * self.dwords() as u64;
        let imm = inst.imm as u32 as u64;
        match self {
            LdsShape::One { .. } => vec![(imm & 0xffff, bytes)],
            LdsShape::Two { stride64, .. } => {
                let scale = bytes * if stride64 { 64 } else { 1 };
                vec![
                    ((imm & 0xff) * scale, bytes),
                    ((imm >> 8 & 0xff) * scale, bytes),
                ]
            }
        }
    }
}

/// The operand a vector op writes a lane mask to: a compare's `dst[0]`, a
/// carry op's `dst[1]`.
pub fn mask_dst(class: Class, inst: &Inst) -> Option<Operand> {
    match class {
        Class::FCmp(_) | Class::ICmp(_) => Some(inst.dst[0]),
        Class::Carry(_) | Class::Mad64 { .. } => Some(inst.dst[1]),
        _ => None,
    }
}

/// A scalar register the JIT may read: an SGPR, VCC, a trap temporary
/// (gfx12's workgroup IDs arrive in ttmp7 and ttmp9), M0 or EXEC (null and
/// the specials stay with the interpreter).
pub fn readable_sgpr(r: u8) -> bool {
    r <= sreg::VCC_HI
        || (sreg::TTMP0..sreg::TTMP0 + 16).contains(&r)
        || r == sreg::M0
        || r == sreg::EXEC_LO
        || r == sreg::EXEC_HI
}

/// A scalar register the JIT may write: as [`readable_sgpr`] but never
/// EXEC, which a block takes as fixed.
pub fn writable_sgpr(r: u8) -> bool {
    r <= sreg::VCC_HI || r == sreg::M0
}

/// Whether a 32-bit source of a 64-bit op is one the emitter reads: a VGPR
/// or a scalar source.
fn narrow_src_ok(s: Operand) -> bool {
    matches!(s, Operand::Vgpr(_)) || scalar_src_ok(s)
}

/// Whether `inst` of class `class` is in the form the emitter builds: no
/// DPP or SDWA (gfx10's sub-dword selects), no clamp or output modifier,
/// no half selects, abs/neg only on f32 sources, every operand a plain
/// register or constant.
pub fn form_ok(inst: &Inst, class: Class) -> bool {
    let info = inst.op.info();
    let m = inst.mods;
    if inst.lane_sel != LaneSel::None || inst.sdwa.is_some() {
        return false;
    }
    if m.clamp || m.omod != 0 || m.opsel != 0 || m.neg_hi != 0 {
        return false;
    }
    for k in 0..3 {
        let bit = 1u8 << k;
        if (m.abs | m.neg) & bit != 0 && !matches!(info.src[k], Ty::F32 | Ty::F64) {
            return false;
        }
    }
    match class {
        Class::Hint | Class::Branch(_) => true,
        Class::ReadLane { first } => {
            // A VGPR (or scalar) source, an SGPR lane selector, an SGPR
            // destination.
            let src_ok = matches!(inst.src[0], Operand::Vgpr(_)) || scalar_src_ok(inst.src[0]);
            let lane_ok = match first {
                true => inst.src[1] == Operand::None,
                false => scalar_src_ok(inst.src[1]),
            };
            let dst_ok = matches!(inst.dst[0], Operand::Sgpr(r) if writable_sgpr(r));
            src_ok && lane_ok && dst_ok && inst.src[2] == Operand::None
        }
        Class::GetPc => {
            matches!(inst.dst[0], Operand::Sgpr(r) if writable_sgpr(r) && writable_sgpr(r.wrapping_add(1)))
        }
        Class::Scalar64(op) => {
            let pair_ok = |s| !matches!(s, Operand::Vgpr(_)) && pair_src_ok(s);
            let b_ok = match op {
                Scalar::Mov => inst.src[1] == Operand::None,
                _ if op.is_shift() => scalar_src_ok(inst.src[1]),
                _ => pair_ok(inst.src[1]),
            };
            let dst_ok = match inst.dst[0] {
                Operand::Sgpr(r) => writable_sgpr(r) && writable_sgpr(r.wrapping_add(1)),
                _ => false,
            };
            pair_ok(inst.src[0]) && b_ok && dst_ok && inst.src[2] == Operand::None
        }
        Class::Scalar(_) => {
            let src_ok = inst.src[..2].iter().all(|&s| scalar_src_ok(s));
            let dst_ok = match inst.dst[0] {
                Operand::None => true,
                Operand::Sgpr(r) => writable_sgpr(r) || r == sreg::NULL,
                _ => false,
            };
            src_ok && dst_ok && inst.src[2] == Operand::None
        }
        Class::F64(k) => {
            let srcs = inst.src[..3].iter().zip(info.src);
            let src_ok = srcs.clone().all(|(&s, ty)| match ty {
                Ty::None => true,
                Ty::F64 => pair_src_ok(s),
                Ty::B32 if k == F64::Ldexp => narrow_src_ok(s),
                _ => false,
            });
            src_ok
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && inst.dst[1] == Operand::None
                && inst.src[3] == Operand::None
        }
        Class::Mad64 { .. } => {
            let mask_ok = match inst.dst[1] {
                Operand::Sgpr(r) => writable_sgpr(r) || r == sreg::NULL,
                _ => false,
            };
            narrow_src_ok(inst.src[0])
                && narrow_src_ok(inst.src[1])
                && pair_src_ok(inst.src[2])
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && mask_ok
                && inst.src[3] == Operand::None
        }
        Class::LdsLoad(_) => {
            // The address a VGPR, no GDS; the data sources are unused.
            matches!(inst.src[0], Operand::Vgpr(_))
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && inst.flags & softgpu_isa::flags::GDS == 0
                && inst.src[1..] == [Operand::None; 3]
                && inst.dst[1] == Operand::None
        }
        Class::ScalarLoad { dwords } => {
            // The base an SGPR pair, the result SGPRs all writable.
            let base_ok = matches!(inst.src[0], Operand::Sgpr(r) if pair_src_ok(Operand::Sgpr(r)));
            let dst_ok = match inst.dst[0] {
                Operand::Sgpr(r) => (0..dwords).all(|k| writable_sgpr(r.wrapping_add(k))),
                _ => false,
            };
            base_ok
                && dst_ok
                && scalar_src_ok(inst.src[1])
                && inst.src[2..] == [Operand::None; 2]
                && inst.dst[1] == Operand::None
        }
        Class::GlobalStore { flat } => {
            // The address as for loads; the data one VGPR.
            global_address_ok(inst, flat)
                && matches!(inst.src[1], Operand::Vgpr(_))
                && inst.src[3] == Operand::None
                && inst.dst == [Operand::None; 2]
        }
        Class::GlobalLoad { dwords, flat } => {
            // A 64-bit address VGPR pair, or (global only) a 32-bit one
            // and an SGPR pair; the destination rows not wrapping.
            let dst_ok = matches!(inst.dst[0], Operand::Vgpr(d) if d as usize + dwords as usize <= NUM_VGPRS);
            global_address_ok(inst, flat)
                && dst_ok
                && inst.src[1] == Operand::None
                && inst.src[3] == Operand::None
                && inst.dst[1] == Operand::None
        }
        Class::ScratchLoad { bytes, .. } => {
            // A uniform address; the destination rows not wrapping.
            let rows = (bytes as usize).div_ceil(4);
            scratch_address_ok(inst)
                && matches!(inst.dst[0], Operand::Vgpr(d) if d as usize + rows <= NUM_VGPRS)
                && inst.src[1] == Operand::None
                && inst.dst[1] == Operand::None
        }
        Class::ScratchStore { bytes } => {
            // A uniform address; the data rows not wrapping.
            let rows = (bytes as usize).div_ceil(4);
            scratch_address_ok(inst)
                && matches!(inst.src[1], Operand::Vgpr(s) if s as usize + rows <= NUM_VGPRS)
                && inst.dst == [Operand::None; 2]
        }
        Class::LdsStore(shape) => {
            // Address and data VGPRs (data1 only for two accesses), no
            // GDS, no result.
            let data1 = match shape {
                LdsShape::One { .. } => inst.src[2] == Operand::None,
                LdsShape::Two { .. } => matches!(inst.src[2], Operand::Vgpr(_)),
            };
            matches!(inst.src[0], Operand::Vgpr(_))
                && matches!(inst.src[1], Operand::Vgpr(_))
                && data1
                && inst.src[3] == Operand::None
                && inst.flags & softgpu_isa::flags::GDS == 0
                && inst.dst == [Operand::None; 2]
        }
        Class::Shift64(_) => {
            // The amount a constant, the value and the result VGPR pairs.
            matches!(inst.src[0], Operand::Const(_))
                && matches!(inst.src[1], Operand::Vgpr(_))
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && inst.src[2] == Operand::None
                && inst.dst[1] == Operand::None
        }
        Class::Lane(_) | Class::FCmp(_) | Class::ICmp(_) | Class::Carry(_) => {
            let srcs = inst.src[..3].iter().zip(info.src);
            let src_ok = srcs.clone().all(|(&s, ty)| match ty {
                Ty::None => true,
                Ty::B32 | Ty::F32 => matches!(s, Operand::Vgpr(_)) || scalar_src_ok(s),
                Ty::Mask => matches!(s, Operand::Sgpr(r) if readable_sgpr(r)),
                _ => false,
            });
            let dst_ok = match (class, inst.dst[0]) {
                (Class::Lane(_), Operand::Vgpr(_)) => matches!(info.dst[0], Ty::B32 | Ty::F32),
                (Class::FCmp(_) | Class::ICmp(_), Operand::Sgpr(r)) => {
                    writable_sgpr(r) || r == sreg::NULL
                }
                (Class::FCmp(_) | Class::ICmp(_), Operand::None) => true,
                (Class::Carry(_), Operand::Vgpr(_)) => true,
                _ => false,
            };
            let dst1_ok = match (class, inst.dst[1]) {
                (Class::Carry(_), Operand::Sgpr(r)) => writable_sgpr(r) || r == sreg::NULL,
                (_, d) => d == Operand::None,
            };
            src_ok && dst_ok && dst1_ok && inst.src[3] == Operand::None
        }
    }
}

/// A 64-bit source the emitter reads: a VGPR pair, a constant, or an SGPR
/// pair both of whose halves it may read.
fn pair_src_ok(s: Operand) -> bool {
    match s {
        Operand::Vgpr(_) | Operand::Const(_) => true,
        Operand::Sgpr(r) => readable_sgpr(r) && readable_sgpr(r.wrapping_add(1)),
        _ => false,
    }
}

fn scalar_src_ok(s: Operand) -> bool {
    match s {
        Operand::None | Operand::Const(_) => true,
        Operand::Sgpr(r) => readable_sgpr(r),
        _ => false,
    }
}

/// A scratch access's address: no VGPR (`off`), so the offset plus an
/// optional SGPR, the same for every lane.
fn scratch_address_ok(inst: &Inst) -> bool {
    inst.src[0] == Operand::None && scalar_src_ok(inst.src[2]) && inst.src[3] == Operand::None
}

/// Whether a block op of `class` may put a chunk in doubt, so that the
/// chunk runs a second time in the exact pass (`emit::Pass`): f64 and FMA
/// results (the NaN rule), LDS loads (a window's clamp). A block that
/// stores to private memory holds none of them, so its chunks run once
/// and a load never sees a store of a pass that is then redone.
pub fn may_doubt(class: Class) -> bool {
    matches!(
        class,
        Class::F64(_) | Class::Lane(Lane::Fma) | Class::LdsLoad(_)
    )
}

/// A global or flat access's address: a 64-bit VGPR pair, or (global
/// only) a 32-bit VGPR and an SGPR pair.
fn global_address_ok(inst: &Inst, flat: bool) -> bool {
    match (inst.src[0], inst.src[2]) {
        (Operand::Vgpr(r), Operand::None) => (r as usize) + 1 < NUM_VGPRS,
        (Operand::Vgpr(_), base @ Operand::Sgpr(_)) => !flat && pair_src_ok(base),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use softgpu_interp::ops::{renamed, sopp::HINTS};

    /// A gfx12 rename compiles as its gfx11 twin, as the interpreter runs
    /// it by its twin's handler: the class table gives both one class.
    #[test]
    fn renames_have_their_twins_class() {
        for op in softgpu_isa::all_ops() {
            let twin = renamed(op);
            assert_eq!(op.info().jit, twin.info().jit, "{op:?} renames {twin:?}");
        }
    }

    /// A gfx10 SDWA form is never compiled as its plain op, whose lowering
    /// would drop the selects.
    #[test]
    fn sdwa_forms_stay_with_the_interpreter() {
        let op = softgpu_isa::op_by_name("v_add_nc_u32").expect("op");
        let class = op.info().jit.expect("v_add_nc_u32 compiles");
        let mut inst = Inst::new(op, softgpu_isa::Family::Gfx10);
        inst.dst[0] = Operand::Vgpr(0);
        inst.src[0] = Operand::Vgpr(1);
        inst.src[1] = Operand::Vgpr(2);
        assert!(form_ok(&inst, class));
        inst.sdwa = Some(softgpu_isa::Sdwa::default());
        assert!(!form_ok(&inst, class));
    }

    /// The ops of class `Hint` are the interpreter's scheduling hints.
    #[test]
    fn hints_are_the_interpreters() {
        for op in softgpu_isa::all_ops() {
            let hint = op.info().jit == Some(Class::Hint);
            assert_eq!(hint, HINTS.contains(&op), "{op:?}");
        }
    }
}
