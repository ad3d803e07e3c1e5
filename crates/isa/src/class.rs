//! What an opcode means, as data: its semantic [`Class`] (which shared
//! semantics it is an instance of) and its [`Implicit`] operands.
//!
//! `build.rs` derives both from each mnemonic once, at build time, so
//! neither the decoder nor the executor ever looks at a name: a handler is
//! bound by [`Op`] for an instruction with semantics of its own, or by its
//! class (a compare's condition and type, an atomic's operation) where a
//! family shares one definition. A new GPU family is a new table whose ops
//! fall into the same classes.

use crate::Op;

/// The shared semantics an opcode is an instance of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Semantics of its own: bound by its [`Op`].
    Own,
    /// A VOPD half (`v_dual_*`) with the lane semantics of this VOP1/VOP2
    /// op (`v_dual_add_f32` of `v_add_f32`).
    Dual(Op),
    /// `v_cmp_COND_NUM`, and `v_cmpx_COND_NUM` (which writes EXEC; see
    /// [`Implicit::WRITES_EXEC`]).
    Cmp { cond: Cond, num: Num },
    /// A read-modify-write that LDS and memory atomics share:
    /// `ds_RMW_NUM`, `ds_RMW_rtn_NUM` (`rtn`), `SEG_atomic_RMW_NUM` (which
    /// returns when GLC is set, so `rtn` is false).
    Rmw {
        space: Space,
        rmw: Rmw,
        num: Num,
        rtn: bool,
    },
    /// A vector-memory op, the same [`MemOp`] in every segment that has it
    /// (`global_load_b32`, `flat_load_b32`, `buffer_load_b32`).
    Mem { space: Space, op: MemOp },
}

/// A vector compare's condition (ISA §16.8 and `v_cmp_class`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Lg,
    Ge,
    O,
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Neq,
    Nlt,
    T,
    /// The integer not-equal (floats have `Lg` and `Neq`).
    Ne,
    /// `v_cmp_class_*`: S1 is a mask of float classes.
    Class,
}

/// The number type of a compare or a read-modify-write, as its mnemonic's
/// suffix names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Num {
    I16,
    U16,
    F16,
    B32,
    I32,
    U32,
    F32,
    B64,
    I64,
    U64,
    F64,
}

/// The read-modify-write operations LDS and memory atomics share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rmw {
    Add,
    Sub,
    Inc,
    Dec,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// Where a memory op's address points, as its mnemonic's prefix says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Lds,
    Global,
    Flat,
    Scratch,
    Buffer,
    /// Typed buffer access (MTBUF).
    Tbuffer,
}

/// A vector-memory operation without its segment prefix; the constants
/// (`MemOp::LOAD_B32`) are generated from the op table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemOp(pub u16);

/// Operands an encoding leaves implicit, or that a family of opcodes treats
/// specially: bits the decoder and disassembler test instead of names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Implicit(pub u16);

impl Implicit {
    /// The destination is also the third source (`v_fmac_f32`,
    /// `v_dot2acc_f32_f16`, `s_fmac_f32`).
    pub const ACCUMULATES: Implicit = Implicit(1);
    /// A compare that writes EXEC instead of VCC or an SGPR (`v_cmpx_*`).
    pub const WRITES_EXEC: Implicit = Implicit(1 << 1);
    /// A VALU op whose destination is an SGPR (`v_readlane_b32`, gfx12's
    /// `v_s_exp_f32`).
    pub const SCALAR_DST: Implicit = Implicit(1 << 2);
    /// A literal K follows as the addend: S0 * S1 + K (`*_fmaak_*`).
    pub const K_ADDEND: Implicit = Implicit(1 << 3);
    /// A literal K follows as the multiplier: S0 * K + S1 (`*_fmamk_*`).
    pub const K_FACTOR: Implicit = Implicit(1 << 4);
    /// Both operands are read and written (`v_swap_b32`, `v_swaprel_b32`).
    pub const SWAPS: Implicit = Implicit(1 << 5);
    /// Reads VCC though no operand names it (`v_div_fmas_*`).
    pub const READS_VCC: Implicit = Implicit(1 << 6);
    /// A memory atomic: it returns the old value only when GLC is set.
    pub const ATOMIC: Implicit = Implicit(1 << 7);
    /// S1 is a 16-bit register though the table types it B32
    /// (`v_cmp_class_f16`: LLVM gives the mask a 16-bit register class).
    pub const HALF_S1: Implicit = Implicit(1 << 8);
    /// `s_sendmsg_rtn_*`: the source field is a message id.
    pub const MSG_RTN: Implicit = Implicit(1 << 9);

    /// Whether every bit of `other` is set.
    pub const fn has(self, other: Implicit) -> bool {
        self.0 & other.0 == other.0
    }

    /// The union of two sets.
    pub const fn with(self, other: Implicit) -> Implicit {
        Implicit(self.0 | other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{all_ops, Format};

    fn lower(x: impl std::fmt::Debug) -> String {
        format!("{x:?}").to_ascii_lowercase()
    }

    /// Each class, spelled back as a mnemonic, is the op's own name: the
    /// build-time parse lost nothing and invented nothing.
    #[test]
    fn classes_spell_their_ops() {
        for op in all_ops() {
            let name = op.name();
            let spelled = match op.info().class {
                Class::Own => continue,
                Class::Dual(twin) => twin.name().replacen("v_", "v_dual_", 1),
                Class::Cmp { cond, num } => {
                    let x = if op.has(Implicit::WRITES_EXEC) {
                        "x"
                    } else {
                        ""
                    };
                    // gfx10 spells the float always-true compare `tru`.
                    let cond = match (cond, num) {
                        (Cond::T, Num::F16 | Num::F32 | Num::F64) if name.contains("_tru_") => {
                            "tru".to_string()
                        }
                        _ => lower(cond),
                    };
                    format!("v_cmp{x}_{cond}_{}", lower(num))
                }
                Class::Rmw {
                    space: Space::Lds,
                    rmw,
                    num,
                    rtn,
                } => {
                    let rtn = if rtn { "rtn_" } else { "" };
                    format!("ds_{}_{rtn}{}", lower(rmw), lower(num))
                }
                Class::Rmw {
                    space, rmw, num, ..
                } => format!("{}_atomic_{}_{}", lower(space), lower(rmw), lower(num)),
                Class::Mem { space, op } => format!("{}_{}", lower(space), op.name()),
            };
            assert_eq!(spelled, name);
        }
    }

    /// The families that share semantics are classified whole.
    #[test]
    fn shared_families_are_classified() {
        for op in all_ops() {
            let info = op.info();
            let class = info.class;
            match info.format {
                Format::Vopc => assert!(matches!(class, Class::Cmp { .. }), "{}", info.name),
                Format::Vopd => assert!(matches!(class, Class::Dual(_)), "{}", info.name),
                Format::Global | Format::Flat | Format::Scratch | Format::Mubuf | Format::Mtbuf => {
                    assert!(
                        matches!(class, Class::Mem { .. } | Class::Rmw { .. }),
                        "{}",
                        info.name
                    )
                }
                _ => {}
            }
        }
        let add = crate::op_by_name("global_atomic_add_u32").unwrap();
        assert!(add.has(Implicit::ATOMIC));
        assert!(crate::op_by_name("v_fmac_f32")
            .unwrap()
            .has(Implicit::ACCUMULATES));
    }

    /// Every vector-memory op knows the bytes a lane moves, read off its
    /// width suffix or format components.
    #[test]
    fn mem_ops_know_their_widths() {
        for (op, bytes) in [
            (MemOp::LOAD_B128, 16),
            (MemOp::LOAD_U8, 1),
            (MemOp::LOAD_D16_HI_B16, 2),
            (MemOp::STORE_B96, 12),
            (MemOp::LOAD_FORMAT_XYZ, 12),
            (MemOp::STORE_D16_FORMAT_XY, 4),
            (MemOp::ATOMIC_CMPSWAP_B64, 8),
            (MemOp::LOAD_LDS_U16, 2),
            (MemOp::GL0_INV, 0),
        ] {
            assert_eq!(op.bytes(), bytes, "{}", op.name());
        }
        for op in all_ops() {
            if let Class::Mem { op: m, .. } = op.info().class {
                let last = m.name().rsplit('_').next();
                let cache_control = matches!(
                    last,
                    Some("inv" | "wb" | "wbinv" | "wbinvl1" | "vol" | "wbl2" | "invl2")
                );
                assert_eq!(m.bytes() == 0, cache_control, "{}", op.name());
            }
        }
    }
}
