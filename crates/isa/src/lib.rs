//! Decoder and disassembler for AMD RDNA machine code.
//!
//! A code object's text is decoded once into [`Inst`] values, whose operands
//! are pre-resolved (inline constants and literals converted for the operand
//! type, implicit operands such as VCC made explicit). The executor runs that
//! form; [`disassemble`] prints it the way `llvm-objdump-19` does.

#![forbid(unsafe_code)]

mod class;
mod consts;
mod decode;
mod disasm;
mod inst;
pub mod jit;
pub mod matrix;
mod mimg;
pub mod ops;
pub mod resource;
mod sym;
pub mod target;

pub use class::{Class, Cond, Implicit, MemOp, Num, Rmw, Space};
pub use consts::is_inline_float_f32;
pub use decode::{decode, decode_all, LIT_SRC0};
pub use disasm::{
    disassemble, disassemble_wave64, disassemble_with, undecodable_text, DisasmOptions,
};
pub use inst::*;
pub use ops::{all_ops, op_by_name, op_by_name_in, ops_of, Encoding, OpInfo};
pub use target::{Target, DEFAULT_TARGET, TARGETS};

/// GPU instruction-set family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// RDNA3 and RDNA3.5 (gfx11xx processors; [`TARGETS`] lists those emulated).
    Gfx11,
    /// RDNA4 (gfx12xx processors).
    Gfx12,
    /// RDNA2 (gfx10.3: gfx1030 to gfx1036).
    Gfx10,
    /// CDNA2 (gfx90a: MI210, MI250X), GCN-encoded, wave64 only.
    Gfx90a,
    /// CDNA3 (gfx940, gfx941 and gfx942: MI300A, MI300X), gfx90a's words
    /// with its own opcode table (the MFMAs renamed and extended, no images).
    Gfx94,
}

impl Family {
    /// Every family, in table order.
    pub const ALL: [Family; 5] = [
        Family::Gfx11,
        Family::Gfx12,
        Family::Gfx10,
        Family::Gfx90a,
        Family::Gfx94,
    ];

    /// The family's index in per-family tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether softgpu's executor runs the family's code. A family being
    /// added is decoded and disassembled first, and its code is refused by
    /// name until its semantics land. Every family softgpu has is.
    pub const fn executed(self) -> bool {
        match self {
            Family::Gfx11 | Family::Gfx12 | Family::Gfx10 | Family::Gfx90a | Family::Gfx94 => true,
        }
    }

    /// Whether the family's words are GCN's (CDNA: gfx90a, gfx94), where
    /// VOP3 is a 10-bit opcode space holding VOPC, VOP2, VOP1 and VOP3P.
    pub const fn is_gcn(self) -> bool {
        matches!(self, Family::Gfx90a | Family::Gfx94)
    }

    /// The family's name as LLVM's processor names start (`gfx11`).
    pub const fn name(self) -> &'static str {
        match self {
            Family::Gfx11 => "gfx11",
            Family::Gfx12 => "gfx12",
            Family::Gfx10 => "gfx10",
            Family::Gfx90a => "gfx90a",
            Family::Gfx94 => "gfx94",
        }
    }

    /// The family of an `amdgcn` processor name such as `gfx1151`, if
    /// softgpu emulates the processor ([`TARGETS`]) or decodes its code
    /// ([`target::DECODED`]: gfx940 and gfx941, decoded as gfx942).
    pub fn of_target(target: &str) -> Option<Family> {
        let decoded = target::DECODED.iter().find(|(name, _)| *name == target);
        decoded
            .map(|&(_, family)| family)
            .or_else(|| target::target(target).map(|t| t.family))
    }
}

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("truncated instruction: {needed} bytes needed, {available} available")]
    Truncated { needed: usize, available: usize },
    #[error("unknown {format} opcode {opcode} (word {word:#010x})")]
    UnknownOpcode {
        format: &'static str,
        opcode: u32,
        word: u32,
    },
    #[error("invalid encoding (word {word:#010x}): {why}")]
    Invalid { word: u32, why: &'static str },
}
