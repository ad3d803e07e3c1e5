//! Instruction semantics: data tables mapping each opcode, or each class of
//! opcodes that share semantics ([`softgpu_isa::Class`]), to a small generic
//! handler. A handler runs one instruction for a whole wave.

// Lane loops index several per-lane arrays at once, and the tables spell
// every entry as a closure so that all rows read alike.
#![allow(clippy::needless_range_loop, clippy::redundant_closure)]

use std::sync::OnceLock;

use softgpu_isa::{Class, Inst, Op, Space};

use crate::wave::Wave;

pub use crate::trap::{Contained, FaultKind, MemCause, Trap};
use softgpu_arena::{Lanes, Memory};

/// A table entry: the handler `f(w, env, i, args…)` with its trailing
/// arguments fixed, as an [`Exec`]. One binder for every family's table.
macro_rules! bind {
    ($f:path $(, $arg:expr)* $(,)?) => {
        (|w: &mut $crate::wave::Wave, env: &mut $crate::ops::Env, i: &softgpu_isa::Inst| {
            $f(w, env, i $(, $arg)*)
        }) as $crate::ops::Exec
    };
}

#[macro_use]
mod rmw;

pub mod cross_lane;
pub mod ds;
pub mod fp8;
pub mod image;
pub mod interp;
pub mod mfma;
pub mod salu;
pub mod smem;
pub mod sopp;
pub mod valu;
pub mod vcmp;
pub mod vmem;
pub mod wmma;

/// What the wave does after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Next,
    /// Relative branch by simm16 dwords from the next instruction.
    Branch(i32),
    /// Jump to an absolute device address (s_setpc, s_swappc).
    Jump(u64),
    Barrier,
    /// Give other waves of the workgroup a turn (s_sleep, s_sethalt…).
    Yield,
    End,
}

pub type Result<T = Flow> = std::result::Result<T, Trap>;

/// Global wave sync (`ds_gws_*`): the grid-wide barriers of a dispatch,
/// which the machine runs across its workgroups. A wave's handler only
/// arrives and waits.
pub trait GridSync: Sync {
    /// Arrives at barrier `resource`, which completes when `waves` waves
    /// have arrived; returns once it has.
    fn barrier(&self, resource: u32, waves: u32) -> std::result::Result<(), crate::trap::GwsError>;
}

/// GWS resources (barrier ids): `M0[21:16]` plus the instruction's offset.
pub const GWS_RESOURCES: usize = 64;

/// One decoded instruction and how to run it.
pub struct Slot {
    /// Image offset of the instruction.
    pub offset: u64,
    pub inst: Inst,
    pub exec: Exec,
    /// Why the bytes here are not a runnable instruction, if they are not.
    pub illegal: Option<String>,
    /// VOPD: the lane functions of the X and Y halves.
    pub vopd: Option<(valu::LaneFn, valu::LaneFn)>,
    /// How many scheduling-only instructions ([`sopp::HINTS`]) follow
    /// this one: the run loop steps over them after this instruction
    /// continues to the next, counting them as retired without running
    /// them.
    pub hints_after: u32,
}

impl Slot {
    /// Whether the slot is an instruction softgpu can run: one that
    /// decoded to valid operands and has semantics (else running it is a
    /// clear error naming it).
    pub fn runs(&self) -> bool {
        self.illegal.is_none()
            && match &self.inst.vopd_y {
                Some(_) => self.vopd.is_some(),
                None => handler_for(&self.inst).is_some(),
            }
    }
}

/// The decoded code a wave runs, as its handlers see it: the slots, and
/// where the image sits in device memory. A program lends it to the waves
/// it runs (`crate::program::Program::code`).
#[derive(Clone, Copy)]
pub struct Code<'a> {
    pub slots: &'a [Slot],
    /// Device address of image offset 0.
    pub image_base: u64,
}

impl<'a> Code<'a> {
    /// The slot at index `index`.
    #[inline(always)]
    pub fn slot_at(&self, index: u32) -> &'a Slot {
        &self.slots[index as usize]
    }

    /// Device address of the instruction after slot `index` (what
    /// `s_getpc` and `s_swappc` read).
    pub fn address_after(&self, index: u32) -> u64 {
        let s = self.slot_at(index);
        self.image_base + s.offset + s.inst.size as u64
    }

    /// VOPD: the lane functions of slot `index`'s X and Y halves.
    pub fn vopd_fns(&self, index: u32) -> Option<(valu::LaneFn, valu::LaneFn)> {
        self.slot_at(index).vopd
    }
}

/// What a handler may touch besides its wave.
pub struct Env<'a> {
    /// Device memory as this dispatch may touch it.
    pub mem: Memory<'a>,
    pub lds: &'a mut [u8],
    /// The code the wave runs.
    pub code: Code<'a>,
    /// Reused lane buffers, so handlers never clear stack arrays.
    pub tmp: &'a mut Scratch,
    /// The dispatch's global-wave-sync barriers.
    pub gws: &'a dyn GridSync,
    /// The workgroup barrier's signal and member counts.
    pub barrier: sopp::WorkgroupBarrier,
    /// The workgroup's memory sanitizers, when `SOFTGPU_CHECK` asks for
    /// init or race: memory handlers call it once per instruction.
    pub sanitizer: Option<crate::sanitize::Sanitizer<'a>>,
    /// Refused accesses run past under `Checks::contain`.
    pub contained: Contained,
}

/// Per-worker lane buffers for operand fetch and results.
pub struct Scratch {
    pub src: [crate::wave::Lanes; 3],
    pub res: [crate::wave::Lanes; 2],
    /// CDNA's matrix instructions' working space.
    pub matrix: mfma::Buffers,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            src: [[0; crate::wave::MAX_LANES]; 3],
            res: [[0; crate::wave::MAX_LANES]; 2],
            matrix: mfma::Buffers::default(),
        }
    }
}

/// A handler: runs one instruction for the whole wave.
pub type Exec = fn(&mut Wave, &mut Env, &Inst) -> Result;

/// The register number of a VGPR operand; any other operand is refused
/// with what it was (`what`: the operand's role, for the message).
pub fn vgpr(op: softgpu_isa::Operand, what: &'static str) -> Result<usize> {
    match op {
        softgpu_isa::Operand::Vgpr(r) => Ok(r as usize),
        operand => Err(Trap::NotAVgpr {
            role: what,
            operand,
        }),
    }
}

/// Handler for instructions with no semantics here.
pub fn unsupported(_: &mut Wave, _: &mut Env, _: &Inst) -> Result {
    Err(Trap::Unsupported)
}

/// Handler for instructions that only affect timing on hardware.
pub fn nop(_: &mut Wave, _: &mut Env, _: &Inst) -> Result {
    Ok(Flow::Next)
}

/// Every handler bound to one opcode, in precedence order (a later entry
/// for an op replaces an earlier).
fn own_handlers() -> impl Iterator<Item = (Op, Exec)> {
    [
        sopp::TABLE,
        sopp::GPR_IDX,
        smem::TABLE,
        smem::ATOMICS,
        vmem::TABLE,
        cross_lane::TABLE,
        wmma::TABLE,
        mfma::MFMA,
        mfma::TABLE,
        fp8::TABLE,
        image::TABLE,
        image::ATOMICS,
        interp::TABLE,
    ]
    .into_iter()
    .chain(valu::tables())
    .chain(salu::tables())
    .chain(ds::tables())
    .flatten()
    .copied()
}

/// Ops of other families that are gfx11 ops renamed, with the same
/// semantics: each runs its gfx11 twin's handler. gfx12's (RDNA4 guide;
/// LLVM gives both the same instruction definitions under the new
/// mnemonics), and gfx10's (RDNA2 guide: the same pseudocode under the
/// older mnemonic), among them the old memory mnemonics RDNA3 renamed
/// (`global_load_dword` became `global_load_b32`; LLVM selects both from
/// the same patterns). Only operand types equal to the twin's make a
/// rename.
const RENAMED: &[(Op, Op)] = &[
    (Op::S_ADD_CO_U32, Op::S_ADD_U32),
    (Op::S_SUB_CO_U32, Op::S_SUB_U32),
    (Op::S_ADD_CO_I32, Op::S_ADD_I32),
    (Op::S_SUB_CO_I32, Op::S_SUB_I32),
    (Op::S_ADD_CO_CI_U32, Op::S_ADDC_U32),
    (Op::S_SUB_CO_CI_U32, Op::S_SUBB_U32),
    (Op::S_ADDK_CO_I32, Op::S_ADDK_I32),
    (Op::V_MAD_CO_U64_U32, Op::V_MAD_U64_U32),
    (Op::V_MAD_CO_I64_I32, Op::V_MAD_I64_I32),
    (Op::DS_PARAM_LOAD, Op::LDS_PARAM_LOAD),
    (Op::DS_DIRECT_LOAD, Op::LDS_DIRECT_LOAD),
    (Op::IMAGE_ATOMIC_ADD_UINT, Op::IMAGE_ATOMIC_ADD),
    (Op::IMAGE_ATOMIC_SUB_UINT, Op::IMAGE_ATOMIC_SUB),
    (Op::IMAGE_ATOMIC_MIN_INT, Op::IMAGE_ATOMIC_SMIN),
    (Op::IMAGE_ATOMIC_MIN_UINT, Op::IMAGE_ATOMIC_UMIN),
    (Op::IMAGE_ATOMIC_MAX_INT, Op::IMAGE_ATOMIC_SMAX),
    (Op::IMAGE_ATOMIC_MAX_UINT, Op::IMAGE_ATOMIC_UMAX),
    (Op::IMAGE_ATOMIC_INC_UINT, Op::IMAGE_ATOMIC_INC),
    (Op::IMAGE_ATOMIC_DEC_UINT, Op::IMAGE_ATOMIC_DEC),
    // gfx10 (RDNA2) memory renames: the `dword`/`byte`/`short` widths
    // become `b32`/`u8`/`u16`..., `ds_read`/`ds_write` `ds_load`/`ds_store`
    // (`2`/`2st64` `_2addr`/`_2addr_stride64`, `wrxchg` `storexchg`), the
    // atomics gain their types (`smin` `min_i32`, `_x2` `_u64`/`_b64`,
    // `fcmpswap`/`fmin`/`fmax` `cmpswap_f32`/`min_f32`/`max_f32`, `csub`
    // `csub_u32`) and `format_d16` becomes `d16_format`. Not here:
    // `ds_cmpst_*`, whose DATA0 is the compare value where gfx11's
    // `ds_cmpstore_*` takes it in DATA1 (`ds::cmpst`), and the f64 float
    // atomics gfx11 lacks (`vmem.rs`).
    (Op::DS_WRITE_B32, Op::DS_STORE_B32),
    (Op::DS_WRITE2_B32, Op::DS_STORE_2ADDR_B32),
    (Op::DS_WRITE2ST64_B32, Op::DS_STORE_2ADDR_STRIDE64_B32),
    (Op::DS_WRITE_B8, Op::DS_STORE_B8),
    (Op::DS_WRITE_B16, Op::DS_STORE_B16),
    (Op::DS_WRXCHG_RTN_B32, Op::DS_STOREXCHG_RTN_B32),
    (Op::DS_WRXCHG2_RTN_B32, Op::DS_STOREXCHG_2ADDR_RTN_B32),
    (
        Op::DS_WRXCHG2ST64_RTN_B32,
        Op::DS_STOREXCHG_2ADDR_STRIDE64_RTN_B32,
    ),
    (Op::DS_READ_B32, Op::DS_LOAD_B32),
    (Op::DS_READ2_B32, Op::DS_LOAD_2ADDR_B32),
    (Op::DS_READ2ST64_B32, Op::DS_LOAD_2ADDR_STRIDE64_B32),
    (Op::DS_READ_I8, Op::DS_LOAD_I8),
    (Op::DS_READ_U8, Op::DS_LOAD_U8),
    (Op::DS_READ_I16, Op::DS_LOAD_I16),
    (Op::DS_READ_U16, Op::DS_LOAD_U16),
    (Op::DS_WRITE_B64, Op::DS_STORE_B64),
    (Op::DS_WRITE2_B64, Op::DS_STORE_2ADDR_B64),
    (Op::DS_WRITE2ST64_B64, Op::DS_STORE_2ADDR_STRIDE64_B64),
    (Op::DS_WRXCHG_RTN_B64, Op::DS_STOREXCHG_RTN_B64),
    (Op::DS_WRXCHG2_RTN_B64, Op::DS_STOREXCHG_2ADDR_RTN_B64),
    (
        Op::DS_WRXCHG2ST64_RTN_B64,
        Op::DS_STOREXCHG_2ADDR_STRIDE64_RTN_B64,
    ),
    (Op::DS_READ_B64, Op::DS_LOAD_B64),
    (Op::DS_READ2_B64, Op::DS_LOAD_2ADDR_B64),
    (Op::DS_READ2ST64_B64, Op::DS_LOAD_2ADDR_STRIDE64_B64),
    (Op::DS_WRITE_B8_D16_HI, Op::DS_STORE_B8_D16_HI),
    (Op::DS_WRITE_B16_D16_HI, Op::DS_STORE_B16_D16_HI),
    (Op::DS_READ_U8_D16, Op::DS_LOAD_U8_D16),
    (Op::DS_READ_U8_D16_HI, Op::DS_LOAD_U8_D16_HI),
    (Op::DS_READ_I8_D16, Op::DS_LOAD_I8_D16),
    (Op::DS_READ_I8_D16_HI, Op::DS_LOAD_I8_D16_HI),
    (Op::DS_READ_U16_D16, Op::DS_LOAD_U16_D16),
    (Op::DS_READ_U16_D16_HI, Op::DS_LOAD_U16_D16_HI),
    (Op::DS_WRITE_ADDTID_B32, Op::DS_STORE_ADDTID_B32),
    (Op::DS_READ_ADDTID_B32, Op::DS_LOAD_ADDTID_B32),
    (Op::DS_WRITE_B96, Op::DS_STORE_B96),
    (Op::DS_WRITE_B128, Op::DS_STORE_B128),
    (Op::DS_READ_B96, Op::DS_LOAD_B96),
    (Op::DS_READ_B128, Op::DS_LOAD_B128),
    (Op::S_LOAD_DWORD, Op::S_LOAD_B32),
    (Op::S_LOAD_DWORDX2, Op::S_LOAD_B64),
    (Op::S_LOAD_DWORDX4, Op::S_LOAD_B128),
    (Op::S_LOAD_DWORDX8, Op::S_LOAD_B256),
    (Op::S_LOAD_DWORDX16, Op::S_LOAD_B512),
    (Op::S_BUFFER_LOAD_DWORD, Op::S_BUFFER_LOAD_B32),
    (Op::S_BUFFER_LOAD_DWORDX2, Op::S_BUFFER_LOAD_B64),
    (Op::S_BUFFER_LOAD_DWORDX4, Op::S_BUFFER_LOAD_B128),
    (Op::S_BUFFER_LOAD_DWORDX8, Op::S_BUFFER_LOAD_B256),
    (Op::S_BUFFER_LOAD_DWORDX16, Op::S_BUFFER_LOAD_B512),
    (Op::FLAT_LOAD_UBYTE, Op::FLAT_LOAD_U8),
    (Op::FLAT_LOAD_SBYTE, Op::FLAT_LOAD_I8),
    (Op::FLAT_LOAD_USHORT, Op::FLAT_LOAD_U16),
    (Op::FLAT_LOAD_SSHORT, Op::FLAT_LOAD_I16),
    (Op::FLAT_LOAD_DWORD, Op::FLAT_LOAD_B32),
    (Op::FLAT_LOAD_DWORDX2, Op::FLAT_LOAD_B64),
    (Op::FLAT_LOAD_DWORDX4, Op::FLAT_LOAD_B128),
    (Op::FLAT_LOAD_DWORDX3, Op::FLAT_LOAD_B96),
    (Op::FLAT_STORE_BYTE, Op::FLAT_STORE_B8),
    (Op::FLAT_STORE_BYTE_D16_HI, Op::FLAT_STORE_D16_HI_B8),
    (Op::FLAT_STORE_SHORT, Op::FLAT_STORE_B16),
    (Op::FLAT_STORE_SHORT_D16_HI, Op::FLAT_STORE_D16_HI_B16),
    (Op::FLAT_STORE_DWORD, Op::FLAT_STORE_B32),
    (Op::FLAT_STORE_DWORDX2, Op::FLAT_STORE_B64),
    (Op::FLAT_STORE_DWORDX4, Op::FLAT_STORE_B128),
    (Op::FLAT_STORE_DWORDX3, Op::FLAT_STORE_B96),
    (Op::FLAT_LOAD_UBYTE_D16, Op::FLAT_LOAD_D16_U8),
    (Op::FLAT_LOAD_UBYTE_D16_HI, Op::FLAT_LOAD_D16_HI_U8),
    (Op::FLAT_LOAD_SBYTE_D16, Op::FLAT_LOAD_D16_I8),
    (Op::FLAT_LOAD_SBYTE_D16_HI, Op::FLAT_LOAD_D16_HI_I8),
    (Op::FLAT_LOAD_SHORT_D16, Op::FLAT_LOAD_D16_B16),
    (Op::FLAT_LOAD_SHORT_D16_HI, Op::FLAT_LOAD_D16_HI_B16),
    (Op::FLAT_ATOMIC_SWAP, Op::FLAT_ATOMIC_SWAP_B32),
    (Op::FLAT_ATOMIC_CMPSWAP, Op::FLAT_ATOMIC_CMPSWAP_B32),
    (Op::FLAT_ATOMIC_ADD, Op::FLAT_ATOMIC_ADD_U32),
    (Op::FLAT_ATOMIC_SUB, Op::FLAT_ATOMIC_SUB_U32),
    (Op::FLAT_ATOMIC_SMIN, Op::FLAT_ATOMIC_MIN_I32),
    (Op::FLAT_ATOMIC_UMIN, Op::FLAT_ATOMIC_MIN_U32),
    (Op::FLAT_ATOMIC_SMAX, Op::FLAT_ATOMIC_MAX_I32),
    (Op::FLAT_ATOMIC_UMAX, Op::FLAT_ATOMIC_MAX_U32),
    (Op::FLAT_ATOMIC_AND, Op::FLAT_ATOMIC_AND_B32),
    (Op::FLAT_ATOMIC_OR, Op::FLAT_ATOMIC_OR_B32),
    (Op::FLAT_ATOMIC_XOR, Op::FLAT_ATOMIC_XOR_B32),
    (Op::FLAT_ATOMIC_INC, Op::FLAT_ATOMIC_INC_U32),
    (Op::FLAT_ATOMIC_DEC, Op::FLAT_ATOMIC_DEC_U32),
    (Op::FLAT_ATOMIC_FCMPSWAP, Op::FLAT_ATOMIC_CMPSWAP_F32),
    (Op::FLAT_ATOMIC_FMIN, Op::FLAT_ATOMIC_MIN_F32),
    (Op::FLAT_ATOMIC_FMAX, Op::FLAT_ATOMIC_MAX_F32),
    (Op::FLAT_ATOMIC_SWAP_X2, Op::FLAT_ATOMIC_SWAP_B64),
    (Op::FLAT_ATOMIC_CMPSWAP_X2, Op::FLAT_ATOMIC_CMPSWAP_B64),
    (Op::FLAT_ATOMIC_ADD_X2, Op::FLAT_ATOMIC_ADD_U64),
    (Op::FLAT_ATOMIC_SUB_X2, Op::FLAT_ATOMIC_SUB_U64),
    (Op::FLAT_ATOMIC_SMIN_X2, Op::FLAT_ATOMIC_MIN_I64),
    (Op::FLAT_ATOMIC_UMIN_X2, Op::FLAT_ATOMIC_MIN_U64),
    (Op::FLAT_ATOMIC_SMAX_X2, Op::FLAT_ATOMIC_MAX_I64),
    (Op::FLAT_ATOMIC_UMAX_X2, Op::FLAT_ATOMIC_MAX_U64),
    (Op::FLAT_ATOMIC_AND_X2, Op::FLAT_ATOMIC_AND_B64),
    (Op::FLAT_ATOMIC_OR_X2, Op::FLAT_ATOMIC_OR_B64),
    (Op::FLAT_ATOMIC_XOR_X2, Op::FLAT_ATOMIC_XOR_B64),
    (Op::FLAT_ATOMIC_INC_X2, Op::FLAT_ATOMIC_INC_U64),
    (Op::FLAT_ATOMIC_DEC_X2, Op::FLAT_ATOMIC_DEC_U64),
    (Op::SCRATCH_LOAD_UBYTE, Op::SCRATCH_LOAD_U8),
    (Op::SCRATCH_LOAD_SBYTE, Op::SCRATCH_LOAD_I8),
    (Op::SCRATCH_LOAD_USHORT, Op::SCRATCH_LOAD_U16),
    (Op::SCRATCH_LOAD_SSHORT, Op::SCRATCH_LOAD_I16),
    (Op::SCRATCH_LOAD_DWORD, Op::SCRATCH_LOAD_B32),
    (Op::SCRATCH_LOAD_DWORDX2, Op::SCRATCH_LOAD_B64),
    (Op::SCRATCH_LOAD_DWORDX4, Op::SCRATCH_LOAD_B128),
    (Op::SCRATCH_LOAD_DWORDX3, Op::SCRATCH_LOAD_B96),
    (Op::SCRATCH_STORE_BYTE, Op::SCRATCH_STORE_B8),
    (Op::SCRATCH_STORE_BYTE_D16_HI, Op::SCRATCH_STORE_D16_HI_B8),
    (Op::SCRATCH_STORE_SHORT, Op::SCRATCH_STORE_B16),
    (Op::SCRATCH_STORE_SHORT_D16_HI, Op::SCRATCH_STORE_D16_HI_B16),
    (Op::SCRATCH_STORE_DWORD, Op::SCRATCH_STORE_B32),
    (Op::SCRATCH_STORE_DWORDX2, Op::SCRATCH_STORE_B64),
    (Op::SCRATCH_STORE_DWORDX4, Op::SCRATCH_STORE_B128),
    (Op::SCRATCH_STORE_DWORDX3, Op::SCRATCH_STORE_B96),
    (Op::SCRATCH_LOAD_UBYTE_D16, Op::SCRATCH_LOAD_D16_U8),
    (Op::SCRATCH_LOAD_UBYTE_D16_HI, Op::SCRATCH_LOAD_D16_HI_U8),
    (Op::SCRATCH_LOAD_SBYTE_D16, Op::SCRATCH_LOAD_D16_I8),
    (Op::SCRATCH_LOAD_SBYTE_D16_HI, Op::SCRATCH_LOAD_D16_HI_I8),
    (Op::SCRATCH_LOAD_SHORT_D16, Op::SCRATCH_LOAD_D16_B16),
    (Op::SCRATCH_LOAD_SHORT_D16_HI, Op::SCRATCH_LOAD_D16_HI_B16),
    (Op::GLOBAL_LOAD_UBYTE, Op::GLOBAL_LOAD_U8),
    (Op::GLOBAL_LOAD_SBYTE, Op::GLOBAL_LOAD_I8),
    (Op::GLOBAL_LOAD_USHORT, Op::GLOBAL_LOAD_U16),
    (Op::GLOBAL_LOAD_SSHORT, Op::GLOBAL_LOAD_I16),
    (Op::GLOBAL_LOAD_DWORD, Op::GLOBAL_LOAD_B32),
    (Op::GLOBAL_LOAD_DWORDX2, Op::GLOBAL_LOAD_B64),
    (Op::GLOBAL_LOAD_DWORDX4, Op::GLOBAL_LOAD_B128),
    (Op::GLOBAL_LOAD_DWORDX3, Op::GLOBAL_LOAD_B96),
    (Op::GLOBAL_LOAD_DWORD_ADDTID, Op::GLOBAL_LOAD_ADDTID_B32),
    (Op::GLOBAL_STORE_DWORD_ADDTID, Op::GLOBAL_STORE_ADDTID_B32),
    (Op::GLOBAL_STORE_BYTE, Op::GLOBAL_STORE_B8),
    (Op::GLOBAL_STORE_BYTE_D16_HI, Op::GLOBAL_STORE_D16_HI_B8),
    (Op::GLOBAL_STORE_SHORT, Op::GLOBAL_STORE_B16),
    (Op::GLOBAL_STORE_SHORT_D16_HI, Op::GLOBAL_STORE_D16_HI_B16),
    (Op::GLOBAL_STORE_DWORD, Op::GLOBAL_STORE_B32),
    (Op::GLOBAL_STORE_DWORDX2, Op::GLOBAL_STORE_B64),
    (Op::GLOBAL_STORE_DWORDX4, Op::GLOBAL_STORE_B128),
    (Op::GLOBAL_STORE_DWORDX3, Op::GLOBAL_STORE_B96),
    (Op::GLOBAL_LOAD_UBYTE_D16, Op::GLOBAL_LOAD_D16_U8),
    (Op::GLOBAL_LOAD_UBYTE_D16_HI, Op::GLOBAL_LOAD_D16_HI_U8),
    (Op::GLOBAL_LOAD_SBYTE_D16, Op::GLOBAL_LOAD_D16_I8),
    (Op::GLOBAL_LOAD_SBYTE_D16_HI, Op::GLOBAL_LOAD_D16_HI_I8),
    (Op::GLOBAL_LOAD_SHORT_D16, Op::GLOBAL_LOAD_D16_B16),
    (Op::GLOBAL_LOAD_SHORT_D16_HI, Op::GLOBAL_LOAD_D16_HI_B16),
    (Op::GLOBAL_ATOMIC_SWAP, Op::GLOBAL_ATOMIC_SWAP_B32),
    (Op::GLOBAL_ATOMIC_CMPSWAP, Op::GLOBAL_ATOMIC_CMPSWAP_B32),
    (Op::GLOBAL_ATOMIC_ADD, Op::GLOBAL_ATOMIC_ADD_U32),
    (Op::GLOBAL_ATOMIC_SUB, Op::GLOBAL_ATOMIC_SUB_U32),
    (Op::GLOBAL_ATOMIC_CSUB, Op::GLOBAL_ATOMIC_CSUB_U32),
    (Op::GLOBAL_ATOMIC_SMIN, Op::GLOBAL_ATOMIC_MIN_I32),
    (Op::GLOBAL_ATOMIC_UMIN, Op::GLOBAL_ATOMIC_MIN_U32),
    (Op::GLOBAL_ATOMIC_SMAX, Op::GLOBAL_ATOMIC_MAX_I32),
    (Op::GLOBAL_ATOMIC_UMAX, Op::GLOBAL_ATOMIC_MAX_U32),
    (Op::GLOBAL_ATOMIC_AND, Op::GLOBAL_ATOMIC_AND_B32),
    (Op::GLOBAL_ATOMIC_OR, Op::GLOBAL_ATOMIC_OR_B32),
    (Op::GLOBAL_ATOMIC_XOR, Op::GLOBAL_ATOMIC_XOR_B32),
    (Op::GLOBAL_ATOMIC_INC, Op::GLOBAL_ATOMIC_INC_U32),
    (Op::GLOBAL_ATOMIC_DEC, Op::GLOBAL_ATOMIC_DEC_U32),
    (Op::GLOBAL_ATOMIC_FCMPSWAP, Op::GLOBAL_ATOMIC_CMPSWAP_F32),
    (Op::GLOBAL_ATOMIC_FMIN, Op::GLOBAL_ATOMIC_MIN_F32),
    (Op::GLOBAL_ATOMIC_FMAX, Op::GLOBAL_ATOMIC_MAX_F32),
    (Op::GLOBAL_ATOMIC_SWAP_X2, Op::GLOBAL_ATOMIC_SWAP_B64),
    (Op::GLOBAL_ATOMIC_CMPSWAP_X2, Op::GLOBAL_ATOMIC_CMPSWAP_B64),
    (Op::GLOBAL_ATOMIC_ADD_X2, Op::GLOBAL_ATOMIC_ADD_U64),
    (Op::GLOBAL_ATOMIC_SUB_X2, Op::GLOBAL_ATOMIC_SUB_U64),
    (Op::GLOBAL_ATOMIC_SMIN_X2, Op::GLOBAL_ATOMIC_MIN_I64),
    (Op::GLOBAL_ATOMIC_UMIN_X2, Op::GLOBAL_ATOMIC_MIN_U64),
    (Op::GLOBAL_ATOMIC_SMAX_X2, Op::GLOBAL_ATOMIC_MAX_I64),
    (Op::GLOBAL_ATOMIC_UMAX_X2, Op::GLOBAL_ATOMIC_MAX_U64),
    (Op::GLOBAL_ATOMIC_AND_X2, Op::GLOBAL_ATOMIC_AND_B64),
    (Op::GLOBAL_ATOMIC_OR_X2, Op::GLOBAL_ATOMIC_OR_B64),
    (Op::GLOBAL_ATOMIC_XOR_X2, Op::GLOBAL_ATOMIC_XOR_B64),
    (Op::GLOBAL_ATOMIC_INC_X2, Op::GLOBAL_ATOMIC_INC_U64),
    (Op::GLOBAL_ATOMIC_DEC_X2, Op::GLOBAL_ATOMIC_DEC_U64),
    (Op::BUFFER_LOAD_UBYTE, Op::BUFFER_LOAD_U8),
    (Op::BUFFER_LOAD_SBYTE, Op::BUFFER_LOAD_I8),
    (Op::BUFFER_LOAD_USHORT, Op::BUFFER_LOAD_U16),
    (Op::BUFFER_LOAD_SSHORT, Op::BUFFER_LOAD_I16),
    (Op::BUFFER_LOAD_DWORD, Op::BUFFER_LOAD_B32),
    (Op::BUFFER_LOAD_DWORDX2, Op::BUFFER_LOAD_B64),
    (Op::BUFFER_LOAD_DWORDX4, Op::BUFFER_LOAD_B128),
    (Op::BUFFER_LOAD_DWORDX3, Op::BUFFER_LOAD_B96),
    (Op::BUFFER_STORE_BYTE, Op::BUFFER_STORE_B8),
    (Op::BUFFER_STORE_BYTE_D16_HI, Op::BUFFER_STORE_D16_HI_B8),
    (Op::BUFFER_STORE_SHORT, Op::BUFFER_STORE_B16),
    (Op::BUFFER_STORE_SHORT_D16_HI, Op::BUFFER_STORE_D16_HI_B16),
    (Op::BUFFER_STORE_DWORD, Op::BUFFER_STORE_B32),
    (Op::BUFFER_STORE_DWORDX2, Op::BUFFER_STORE_B64),
    (Op::BUFFER_STORE_DWORDX4, Op::BUFFER_STORE_B128),
    (Op::BUFFER_STORE_DWORDX3, Op::BUFFER_STORE_B96),
    (Op::BUFFER_LOAD_UBYTE_D16, Op::BUFFER_LOAD_D16_U8),
    (Op::BUFFER_LOAD_UBYTE_D16_HI, Op::BUFFER_LOAD_D16_HI_U8),
    (Op::BUFFER_LOAD_SBYTE_D16, Op::BUFFER_LOAD_D16_I8),
    (Op::BUFFER_LOAD_SBYTE_D16_HI, Op::BUFFER_LOAD_D16_HI_I8),
    (Op::BUFFER_LOAD_SHORT_D16, Op::BUFFER_LOAD_D16_B16),
    (Op::BUFFER_LOAD_SHORT_D16_HI, Op::BUFFER_LOAD_D16_HI_B16),
    (
        Op::BUFFER_LOAD_FORMAT_D16_HI_X,
        Op::BUFFER_LOAD_D16_HI_FORMAT_X,
    ),
    (
        Op::BUFFER_STORE_FORMAT_D16_HI_X,
        Op::BUFFER_STORE_D16_HI_FORMAT_X,
    ),
    (Op::BUFFER_ATOMIC_SWAP, Op::BUFFER_ATOMIC_SWAP_B32),
    (Op::BUFFER_ATOMIC_CMPSWAP, Op::BUFFER_ATOMIC_CMPSWAP_B32),
    (Op::BUFFER_ATOMIC_ADD, Op::BUFFER_ATOMIC_ADD_U32),
    (Op::BUFFER_ATOMIC_SUB, Op::BUFFER_ATOMIC_SUB_U32),
    (Op::BUFFER_ATOMIC_CSUB, Op::BUFFER_ATOMIC_CSUB_U32),
    (Op::BUFFER_ATOMIC_SMIN, Op::BUFFER_ATOMIC_MIN_I32),
    (Op::BUFFER_ATOMIC_UMIN, Op::BUFFER_ATOMIC_MIN_U32),
    (Op::BUFFER_ATOMIC_SMAX, Op::BUFFER_ATOMIC_MAX_I32),
    (Op::BUFFER_ATOMIC_UMAX, Op::BUFFER_ATOMIC_MAX_U32),
    (Op::BUFFER_ATOMIC_AND, Op::BUFFER_ATOMIC_AND_B32),
    (Op::BUFFER_ATOMIC_OR, Op::BUFFER_ATOMIC_OR_B32),
    (Op::BUFFER_ATOMIC_XOR, Op::BUFFER_ATOMIC_XOR_B32),
    (Op::BUFFER_ATOMIC_INC, Op::BUFFER_ATOMIC_INC_U32),
    (Op::BUFFER_ATOMIC_DEC, Op::BUFFER_ATOMIC_DEC_U32),
    (Op::BUFFER_ATOMIC_FCMPSWAP, Op::BUFFER_ATOMIC_CMPSWAP_F32),
    (Op::BUFFER_ATOMIC_FMIN, Op::BUFFER_ATOMIC_MIN_F32),
    (Op::BUFFER_ATOMIC_FMAX, Op::BUFFER_ATOMIC_MAX_F32),
    (Op::BUFFER_ATOMIC_SWAP_X2, Op::BUFFER_ATOMIC_SWAP_B64),
    (Op::BUFFER_ATOMIC_CMPSWAP_X2, Op::BUFFER_ATOMIC_CMPSWAP_B64),
    (Op::BUFFER_ATOMIC_ADD_X2, Op::BUFFER_ATOMIC_ADD_U64),
    (Op::BUFFER_ATOMIC_SUB_X2, Op::BUFFER_ATOMIC_SUB_U64),
    (Op::BUFFER_ATOMIC_SMIN_X2, Op::BUFFER_ATOMIC_MIN_I64),
    (Op::BUFFER_ATOMIC_UMIN_X2, Op::BUFFER_ATOMIC_MIN_U64),
    (Op::BUFFER_ATOMIC_SMAX_X2, Op::BUFFER_ATOMIC_MAX_I64),
    (Op::BUFFER_ATOMIC_UMAX_X2, Op::BUFFER_ATOMIC_MAX_U64),
    (Op::BUFFER_ATOMIC_AND_X2, Op::BUFFER_ATOMIC_AND_B64),
    (Op::BUFFER_ATOMIC_OR_X2, Op::BUFFER_ATOMIC_OR_B64),
    (Op::BUFFER_ATOMIC_XOR_X2, Op::BUFFER_ATOMIC_XOR_B64),
    (Op::BUFFER_ATOMIC_INC_X2, Op::BUFFER_ATOMIC_INC_U64),
    (Op::BUFFER_ATOMIC_DEC_X2, Op::BUFFER_ATOMIC_DEC_U64),
    (Op::BUFFER_LOAD_FORMAT_D16_X, Op::BUFFER_LOAD_D16_FORMAT_X),
    (Op::BUFFER_LOAD_FORMAT_D16_XY, Op::BUFFER_LOAD_D16_FORMAT_XY),
    (
        Op::BUFFER_LOAD_FORMAT_D16_XYZ,
        Op::BUFFER_LOAD_D16_FORMAT_XYZ,
    ),
    (
        Op::BUFFER_LOAD_FORMAT_D16_XYZW,
        Op::BUFFER_LOAD_D16_FORMAT_XYZW,
    ),
    (Op::BUFFER_STORE_FORMAT_D16_X, Op::BUFFER_STORE_D16_FORMAT_X),
    (
        Op::BUFFER_STORE_FORMAT_D16_XY,
        Op::BUFFER_STORE_D16_FORMAT_XY,
    ),
    (
        Op::BUFFER_STORE_FORMAT_D16_XYZ,
        Op::BUFFER_STORE_D16_FORMAT_XYZ,
    ),
    (
        Op::BUFFER_STORE_FORMAT_D16_XYZW,
        Op::BUFFER_STORE_D16_FORMAT_XYZW,
    ),
    (Op::TBUFFER_LOAD_FORMAT_D16_X, Op::TBUFFER_LOAD_D16_FORMAT_X),
    (
        Op::TBUFFER_LOAD_FORMAT_D16_XY,
        Op::TBUFFER_LOAD_D16_FORMAT_XY,
    ),
    (
        Op::TBUFFER_LOAD_FORMAT_D16_XYZ,
        Op::TBUFFER_LOAD_D16_FORMAT_XYZ,
    ),
    (
        Op::TBUFFER_LOAD_FORMAT_D16_XYZW,
        Op::TBUFFER_LOAD_D16_FORMAT_XYZW,
    ),
    (
        Op::TBUFFER_STORE_FORMAT_D16_X,
        Op::TBUFFER_STORE_D16_FORMAT_X,
    ),
    (
        Op::TBUFFER_STORE_FORMAT_D16_XY,
        Op::TBUFFER_STORE_D16_FORMAT_XY,
    ),
    (
        Op::TBUFFER_STORE_FORMAT_D16_XYZ,
        Op::TBUFFER_STORE_D16_FORMAT_XYZ,
    ),
    (
        Op::TBUFFER_STORE_FORMAT_D16_XYZW,
        Op::TBUFFER_STORE_D16_FORMAT_XYZW,
    ),
    // gfx10 (RDNA2) scalar and vector ALU renames
    (Op::S_ANDN2_B32, Op::S_AND_NOT1_B32),
    (Op::S_ANDN2_B64, Op::S_AND_NOT1_B64),
    (Op::S_ORN2_B32, Op::S_OR_NOT1_B32),
    (Op::S_ORN2_B64, Op::S_OR_NOT1_B64),
    // The first one from the LSB (ff1), the leading zeros (flbit_*_b*) and
    // the leading sign bits (flbit_i32*), each -1 when there is none.
    (Op::S_FF1_I32_B32, Op::S_CTZ_I32_B32),
    (Op::S_FF1_I32_B64, Op::S_CTZ_I32_B64),
    (Op::S_FLBIT_I32_B32, Op::S_CLZ_I32_U32),
    (Op::S_FLBIT_I32_B64, Op::S_CLZ_I32_U64),
    (Op::S_FLBIT_I32, Op::S_CLS_I32),
    (Op::S_FLBIT_I32_I64, Op::S_CLS_I32_I64),
    // nN: operand N+1 inverted (n1 = S0, n2 = EXEC); gfx11 counts from 0.
    (Op::S_ANDN2_SAVEEXEC_B32, Op::S_AND_NOT1_SAVEEXEC_B32),
    (Op::S_ANDN2_SAVEEXEC_B64, Op::S_AND_NOT1_SAVEEXEC_B64),
    (Op::S_ORN2_SAVEEXEC_B32, Op::S_OR_NOT1_SAVEEXEC_B32),
    (Op::S_ORN2_SAVEEXEC_B64, Op::S_OR_NOT1_SAVEEXEC_B64),
    (Op::S_ANDN1_SAVEEXEC_B32, Op::S_AND_NOT0_SAVEEXEC_B32),
    (Op::S_ANDN1_SAVEEXEC_B64, Op::S_AND_NOT0_SAVEEXEC_B64),
    (Op::S_ORN1_SAVEEXEC_B32, Op::S_OR_NOT0_SAVEEXEC_B32),
    (Op::S_ORN1_SAVEEXEC_B64, Op::S_OR_NOT0_SAVEEXEC_B64),
    (Op::S_ANDN1_WREXEC_B32, Op::S_AND_NOT0_WREXEC_B32),
    (Op::S_ANDN1_WREXEC_B64, Op::S_AND_NOT0_WREXEC_B64),
    (Op::S_ANDN2_WREXEC_B32, Op::S_AND_NOT1_WREXEC_B32),
    (Op::S_ANDN2_WREXEC_B64, Op::S_AND_NOT1_WREXEC_B64),
    (Op::S_INST_PREFETCH, Op::S_SET_INST_PREFETCH_DISTANCE),
    (Op::V_FFBH_U32, Op::V_CLZ_I32_U32),
    (Op::V_FFBL_B32, Op::V_CTZ_I32_B32),
    (Op::V_FFBH_I32, Op::V_CLS_I32),
    // rpi: floor(S0 + 0.5); flr: floor(S0); both saturating, NaN 0.
    (Op::V_CVT_RPI_I32_F32, Op::V_CVT_NEAREST_I32_F32),
    (Op::V_CVT_FLR_I32_F32, Op::V_CVT_FLOOR_I32_F32),
    // "legacy" is DX9's rule: 0 times anything (inf, NaN) is 0.
    (Op::V_MUL_LEGACY_F32, Op::V_MUL_DX9_ZERO_F32),
    (Op::V_FMAC_LEGACY_F32, Op::V_FMAC_DX9_ZERO_F32),
    (Op::V_FMA_LEGACY_F32, Op::V_FMA_DX9_ZERO_F32),
    (Op::V_CVT_PKRTZ_F16_F32, Op::V_CVT_PK_RTZ_F16_F32),
    (Op::V_CVT_PKNORM_I16_F16, Op::V_CVT_PK_NORM_I16_F16),
    (Op::V_CVT_PKNORM_U16_F16, Op::V_CVT_PK_NORM_U16_F16),
    (Op::V_CVT_PKNORM_I16_F32, Op::V_CVT_PK_NORM_I16_F32),
    (Op::V_CVT_PKNORM_U16_F32, Op::V_CVT_PK_NORM_U16_F32),
    // D = S0.lo * S1.lo + S0.hi * S1.hi + D, the destination the accumulator.
    (Op::V_DOT2C_F32_F16, Op::V_DOT2ACC_F32_F16),
    // gfx9 (CDNA) ALU renames (GFX9 ISA guide's pseudocode under the
    // older mnemonics; LLVM's same patterns): the no-carry adds
    // (`v_add_u32` is v_add_nc_u32; VOP3 clamp saturates in both), the
    // carry-in adds (`addc`/`subb`/`subbrev` read VCC or an SGPR pair and
    // write the carry likewise), the VOP3 signed adds and GFX8's 16-bit
    // ops GFX9 keeps as `_legacy` (the same arithmetic; only their
    // zeroing of the high half differs, which the decoder's ZERO_HI16
    // carries).
    (Op::V_ADD_U32, Op::V_ADD_NC_U32),
    (Op::V_SUB_U32, Op::V_SUB_NC_U32),
    (Op::V_SUBREV_U32, Op::V_SUBREV_NC_U32),
    (Op::V_ADDC_CO_U32, Op::V_ADD_CO_CI_U32),
    (Op::V_SUBB_CO_U32, Op::V_SUB_CO_CI_U32),
    (Op::V_SUBBREV_CO_U32, Op::V_SUBREV_CO_CI_U32),
    (Op::V_ADD_U16, Op::V_ADD_NC_U16),
    (Op::V_SUB_U16, Op::V_SUB_NC_U16),
    (Op::V_ADD_I32, Op::V_ADD_NC_I32),
    (Op::V_SUB_I32, Op::V_SUB_NC_I32),
    (Op::V_ADD_I16, Op::V_ADD_NC_I16),
    (Op::V_SUB_I16, Op::V_SUB_NC_I16),
    (Op::V_MAD_LEGACY_U16, Op::V_MAD_U16),
    (Op::V_MAD_LEGACY_I16, Op::V_MAD_I16),
    (Op::V_FMA_LEGACY_F16, Op::V_FMA_F16),
    (Op::V_DIV_FIXUP_LEGACY_F16, Op::V_DIV_FIXUP_F16),
];

/// The value `table` pairs with `key`, if it lists it: the one lookup of
/// the handler modules' small keyed tables.
pub(crate) fn look_up<K: PartialEq + Copy, V: Copy>(table: &[(K, V)], key: K) -> Option<V> {
    table.iter().find(|&&(k, _)| k == key).map(|&(_, v)| v)
}

/// The gfx11 op `op` renames (itself when it renames none), for tiers that
/// key their own tables by gfx11's ops (the JIT's lowering).
pub fn renamed(op: Op) -> Op {
    look_up(RENAMED, op).unwrap_or(op)
}

/// The handler an op's class shares with the rest of its family.
fn class_handler(class: Class) -> Option<Exec> {
    match class {
        Class::Own => None,
        // A VOPD op runs through `valu::vopd` when its VOP1/VOP2 twin has a
        // pure lane function (the program resolves both halves at load).
        Class::Dual(twin) => valu::lane_fn(twin).map(|_| valu::vopd as Exec),
        Class::Cmp { cond, num } => vcmp::handler(cond, num),
        Class::Rmw {
            space: Space::Lds,
            rmw,
            num,
            rtn,
        } => ds::rmw(rmw, num, rtn),
        Class::Rmw { rmw, num, .. } => vmem::rmw(rmw, num),
        Class::Mem { op, .. } => vmem::mem(op),
    }
}

/// One handler per op, indexed by [`Op`], built once: the op's own handler,
/// else its class's.
fn table() -> &'static [Option<Exec>] {
    static TABLE: OnceLock<Vec<Option<Exec>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let classes = softgpu_isa::all_ops().map(|op| class_handler(op.info().class));
        let mut table = by_op(classes.collect(), own_handlers());
        for &(new, old) in RENAMED {
            table[new.0 as usize] = table[old.0 as usize];
        }
        table
    })
}

/// `table` (indexed by [`Op`]) with `entries` written over it, later
/// entries over earlier.
fn by_op(
    mut table: Vec<Option<Exec>>,
    entries: impl IntoIterator<Item = (Op, Exec)>,
) -> Vec<Option<Exec>> {
    for (op, exec) in entries {
        table[op.0 as usize] = Some(exec);
    }
    table
}

/// The cheapest exact handler for this decoded instruction: a plain variant
/// when it has no modifiers and only 32-bit operands, a saturating one for
/// an integer op with clamp, else the general one.
pub fn handler_for(inst: &Inst) -> Option<Exec> {
    if inst.sdwa.is_some() && !valu::runs_sdwa(inst.op) {
        return handler(inst.op).map(|_| valu::sdwa_unsupported as Exec);
    }
    // gfx90a's loads with the `lds` bit load into LDS, not VGPRs: they run
    // as the op that does.
    if inst.flags & softgpu_isa::flags::LDS != 0 {
        if let Some(twin) = vmem::lds_twin(inst.op) {
            return handler(twin);
        }
    }
    static PLAIN: OnceLock<Vec<Option<Exec>>> = OnceLock::new();
    static SATURATING: OnceLock<Vec<Option<Exec>>> = OnceLock::new();
    let only = |entries: &[(Op, Exec)]| {
        let none = vec![None; softgpu_isa::all_ops().count()];
        by_op(none, entries.iter().copied())
    };
    // A rename runs its twin's plain and saturating variants too (gfx9's
    // `v_add_u32 … clamp` saturates as v_add_nc_u32 does).
    let key = renamed(inst.op).0 as usize;
    let special = if valu::is_plain(inst) {
        PLAIN.get_or_init(|| only(valu::plain_table()))[key]
    } else if inst.mods.clamp {
        SATURATING.get_or_init(|| only(valu::saturating_table()))[key]
    } else {
        None
    };
    special.or_else(|| handler(inst.op))
}

/// The handler for an opcode, if the executor implements it.
pub fn handler(op: Op) -> Option<Exec> {
    table().get(op.0 as usize).copied().flatten()
}

/// The wave-wide address pass the memory ops share: `addr(l)` of every
/// lane into `out` in one loop (so a handler reads its address VGPR's lanes
/// once), then the bounds of the lanes `exec` selects ([`Lanes::new`]).
#[inline(always)]
pub fn lane_addrs(
    lanes: usize,
    exec: u64,
    out: &mut [u64; crate::wave::MAX_LANES],
    addr: impl FnMut(usize) -> u64,
) -> Lanes<'_> {
    // A wave's width as a constant makes the pass one fixed-length loop
    // with no bounds checks, which vectorises.
    match lanes {
        32 => Lanes::from_fn::<32>(out, exec, addr),
        64 => Lanes::from_fn::<64>(out, exec, addr),
        _ => {
            let out = &mut out[..lanes];
            out.iter_mut()
                .zip((0..lanes).map(addr))
                .for_each(|(slot, a)| *slot = a);
            Lanes::new(out, exec)
        }
    }
}

#[cfg(test)]
mod tests {
    use softgpu_isa::{ops_of, Class, Family, Format};

    /// The ops the executor runs: gfx11's (gfx12's come with its decoder).
    fn all_ops() -> impl Iterator<Item = softgpu_isa::Op> {
        ops_of(Family::Gfx11)
    }

    /// Every op a class binds has its class's handler: a family member the
    /// class tables miss would silently be unsupported.
    #[test]
    fn shared_classes_are_complete() {
        let missing: Vec<_> = all_ops()
            .filter(|op| {
                matches!(
                    op.info().class,
                    Class::Cmp { .. } | Class::Rmw { .. } | Class::Mem { .. }
                )
            })
            .filter(|&op| super::handler(op).is_none())
            .map(|op| op.name())
            .collect();
        assert!(missing.is_empty(), "no handler for: {missing:?}");
    }

    /// Every VOPD op runs (through its twin's lane function).
    #[test]
    fn every_dual_op_has_a_handler() {
        for op in all_ops().filter(|op| op.info().format == Format::Vopd) {
            assert!(super::handler(op).is_some(), "{}", op.name());
        }
    }

    #[test]
    fn every_hint_has_a_handler() {
        for &op in super::sopp::HINTS {
            assert!(super::handler(op).is_some(), "{}", op.name());
        }
    }
}
