//! The decoded, pre-resolved form of one instruction.
//!
//! This is the contract between the decoder and the executor: every field the
//! executor needs is resolved here once, so the hot loop never looks at bits.

/// Identity of an opcode: an index into [`crate::ops`]' table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Op(pub u16);

/// Encoding family of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vop3,
    Vop3sd,
    Vop3p,
    Vopc,
    Vopd,
    Vinterp,
    LdsDirect,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    Mtbuf,
    Mimg,
    Exp,
    /// CDNA's VOP3P-MAI words: the matrix ops (`v_mfma_*`, `v_smfmac_*`)
    /// and the AccVGPR moves `v_accvgpr_read_b32`/`v_accvgpr_write_b32`.
    Mai,
}

/// Data type of one operand slot, as the opcode defines it. It fixes the
/// register count of the operand and how an inline constant is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    None,
    B16,
    F16,
    BF16,
    B32,
    F32,
    /// Two f16 packed in 32 bits (VOP3P).
    V2F16,
    /// Two 16-bit integers packed in 32 bits (VOP3P).
    V2B16,
    /// Two bf16 packed in 32 bits (the bf16 dot products).
    V2BF16,
    B64,
    F64,
    B96,
    B128,
    B256,
    B512,
    /// 32 registers: gfx12's `*_block` spills.
    B1024,
    /// A lane mask: one SGPR in wave32, an SGPR pair in wave64.
    Mask,
}

impl Ty {
    /// Number of 32-bit registers the operand occupies (a mask counts 1; the
    /// executor widens it for wave64).
    pub const fn dwords(self) -> u8 {
        match self {
            Ty::None => 0,
            Ty::B16
            | Ty::F16
            | Ty::BF16
            | Ty::B32
            | Ty::F32
            | Ty::V2F16
            | Ty::V2B16
            | Ty::V2BF16
            | Ty::Mask => 1,
            Ty::B64 | Ty::F64 => 2,
            Ty::B96 => 3,
            Ty::B128 => 4,
            Ty::B256 => 8,
            Ty::B512 => 16,
            Ty::B1024 => 32,
        }
    }
}

/// Scalar register-file index of the named special registers (the 7-bit
/// operand code space of gfx11).
pub mod sreg {
    pub const VCC_LO: u8 = 106;
    pub const VCC_HI: u8 = 107;
    pub const TTMP0: u8 = 108;
    pub const M0: u8 = 125;
    pub const NULL: u8 = 124;
    pub const EXEC_LO: u8 = 126;
    pub const EXEC_HI: u8 = 127;
}

/// Where CDNA's AccVGPRs start in [`Operand::Vgpr`]'s numbering: aN is
/// `Vgpr(AGPR_BASE + N)`, so every operand that may name either file (a
/// load's data, an MFMA's sources and accumulators) is one operand kind.
pub const AGPR_BASE: u16 = 256;

/// Special source operands that are neither registers nor constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    Scc,
    Vccz,
    Execz,
    SharedBase,
    SharedLimit,
    PrivateBase,
    PrivateLimit,
    PopsExitingWaveId,
    LdsDirect,
}

/// One pre-resolved operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Operand {
    #[default]
    None,
    /// Scalar register (first of its range), index in the gfx11 scalar
    /// operand space: s0..s105, then vcc_lo/vcc_hi, ttmp0..15, null, m0,
    /// exec_lo/exec_hi (see [`sreg`]).
    Sgpr(u8),
    /// Vector register (first of its range), v0..v255; CDNA's AccVGPRs
    /// a0..a255 follow at 256..511 ([`AGPR_BASE`]).
    Vgpr(u16),
    /// High 16 bits of a vector register (true16 `vN.h`).
    VgprHi(u16),
    /// Inline constant or literal, already converted for the operand's
    /// type: a 64-bit float operand holds the full f64 bits, an f16 operand
    /// holds its f16 bits in the low half.
    Const(u64),
    Special(Special),
}

/// Source and output modifiers (VOP3, VOP3P, SDWA-less gfx11 forms). Each
/// per-source field holds one bit per source operand (bit 0 = src0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Mods {
    pub abs: u8,
    pub neg: u8,
    /// VOP3P: negate the high half.
    pub neg_hi: u8,
    /// VOP3: bit 3 selects the destination's high half; VOP3P: low-half select.
    pub opsel: u8,
    /// VOP3P: high-half select (defaults to all ones).
    pub opsel_hi: u8,
    pub clamp: bool,
    /// Output modifier: 0 none, 1 ×2, 2 ×4, 3 ÷2.
    pub omod: u8,
}

/// Cross-lane selection applied to src0 (DPP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LaneSel {
    #[default]
    None,
    /// DPP16: `ctrl` is the raw 9-bit dpp_ctrl field.
    Dpp16 {
        ctrl: u16,
        row_mask: u8,
        bank_mask: u8,
        bound_ctrl: bool,
        fetch_inactive: bool,
    },
    /// DPP8: lane i of each group of 8 reads lane `sel[i]`.
    Dpp8 { sel: [u8; 8], fetch_inactive: bool },
}

/// gfx10's SDWA form of a VOP1/VOP2/VOPC op (src0 code 0xF9): which part
/// of each source and of the destination the op works on. Its neg/abs go
/// to [`Mods`] (one bit per source, as DPP16's), clamp and omod too; a
/// VOPC's scalar destination to `dst[0]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sdwa {
    /// Per source (src0, src1): 0-3 byte 0-3, 4-5 word 0-1, 6 the dword.
    pub src_sel: [u8; 2],
    /// Sign-extend the selected part of a source (bit 0 = src0); else zero.
    pub sext: u8,
    /// The part of the destination written, as `src_sel`.
    pub dst_sel: u8,
    /// The rest of the destination: 0 zeroed, 1 sign-extended, 2 kept.
    pub dst_unused: u8,
}

impl Sdwa {
    /// The select of the whole dword.
    pub const DWORD: u8 = 6;
}

/// Memory-instruction flag bits, in [`Inst::flags`].
pub mod flags {
    pub const GLC: u16 = 1 << 0;
    pub const SLC: u16 = 1 << 1;
    pub const DLC: u16 = 1 << 2;
    pub const OFFEN: u16 = 1 << 3;
    pub const IDXEN: u16 = 1 << 4;
    pub const GDS: u16 = 1 << 5;
    pub const TFE: u16 = 1 << 6;
    pub const LDS: u16 = 1 << 7;
    /// Scratch: the VGPR address is present (SVE).
    pub const SVE: u16 = 1 << 8;
    /// VOP3 form of an instruction that also has a short (e32) form: the
    /// disassembler needs it to print `_e64`.
    pub const E64: u16 = 1 << 9;
    /// gfx940's `sc1` cache bit; gfx90a's `scc` (the same bit). gfx940's
    /// `sc0` is [`GLC`]'s bit and `nt` [`SLC`]'s. (Bits 10-12 are the
    /// decoder's literal flags.)
    pub const SC1: u16 = 1 << 13;
    /// A 16-bit VALU result clears bits 31:16 of its VGPR instead of
    /// keeping them: most of GFX9's 16-bit ops (LLVM's
    /// `GCNSubtarget::zeroesHigh16BitsOfDest`, which clang's code relies
    /// on); gfx10+ keep them. Set by the gfx9 decoder, so a handler shared
    /// across families needs no family test.
    pub const ZERO_HI16: u16 = 1 << 14;
    /// Lanes are selected by GCN's cross-lane rules: a DPP16 control has
    /// GCN's meanings (gfx9: the wave shifts and rotates 0x130-0x13c and
    /// row_bcast 0x142/0x143, reserved since gfx10), and `ds_permute_b32`
    /// / `ds_bpermute_b32` reach every lane of a wave64 (gfx10+ permute
    /// within each half). Set by the gfx9 decoders.
    pub const GCN_CROSS_LANE: u16 = 1 << 15;
}

/// CDNA's VOP3P-MAI fields, in [`Inst::imm`]: the broadcast and lane-group
/// controls of an MFMA (SMFMAC reads cbsz/abid as its index select).
pub mod mai {
    /// `cbsz`, bits 0-2.
    pub const CBSZ: i32 = 7;
    /// `abid`, bits 3-6.
    pub const ABID_SHIFT: u32 = 3;
    /// `blgp`, bits 7-9.
    pub const BLGP_SHIFT: u32 = 7;
}

/// gfx12's cache-policy fields, in [`Inst::cache`].
pub mod cache {
    /// Temporal hint (`th:`), bits 0-2.
    pub const TH: u8 = 7;
    /// Scope (`scope:`), bits 3-4.
    pub const SCOPE_SHIFT: u8 = 3;
}

/// Image-instruction fields, in [`Inst::aux`].
pub mod image {
    pub const DMASK: u32 = 0xf;
    pub const DIM: u32 = 7 << DIM_SHIFT;
    pub const DIM_SHIFT: u32 = 4;
    /// Non-sequential addresses: `Inst::imm` holds vaddr1..vaddr4, a byte each.
    pub const NSA: u32 = 1 << 7;
    pub const UNORM: u32 = 1 << 8;
    pub const R128: u32 = 1 << 9;
    pub const A16: u32 = 1 << 10;
    pub const D16: u32 = 1 << 11;
    pub const LWE: u32 = 1 << 12;
    /// gfx90a's `da` (an array resource; its MIMG word has no dim field).
    pub const DA: u32 = 1 << 13;
}

/// One decoded instruction.
///
/// Operand placement by format:
/// - SOP*/VOP*: `dst[0]` the destination, `dst[1]` VOP3SD's scalar carry-out;
///   `src[0..3]` the sources in order.
/// - SOPP/SOPK: `imm` is simm16 (sign-extended); SOPK's SGPR is `dst[0]`
///   (or `src[0]` for `s_setreg_b32`/compare forms).
/// - SMEM: `dst[0]` sdata, `src[0]` sbase, `src[1]` soffset (or None),
///   `imm` the immediate offset.
/// - DS: `dst[0]` vdst, `src[0]` addr, `src[1]` data0, `src[2]` data1,
///   `imm` = offset0 | offset1 << 8.
/// - FLAT/GLOBAL/SCRATCH: `dst[0]` vdst, `src[0]` vaddr (None when off),
///   `src[1]` vdata, `src[2]` saddr (None when off), `imm` the offset
///   (unsigned for FLAT, signed for GLOBAL/SCRATCH, as LLVM decodes it).
/// - MUBUF/MTBUF: `dst[0]` vdata for loads, `src[0]` vaddr, `src[1]` vdata
///   for stores, `src[2]` srsrc, `src[3]` soffset, `imm` the offset
///   (MTBUF: format in `aux`).
/// - gfx10 and gfx9 SDWA: as VOP1/VOP2/VOPC, the selects in `sdwa`.
/// - VOP3P-MAI (gfx9): `dst[0]` D, `src[0..3]` A, B, C (AccVGPRs as
///   `Vgpr(AGPR_BASE + n)`; an SMFMAC's C is its index VGPR), `imm` the
///   [`mai`] fields.
/// - gfx9 SMEM: as SMEM; a store's or atomic's data in `src[2]` (an
///   atomic's `dst[0]` the same registers with glc).
/// - VOPD: this instruction is the X half; `vopd_y` the Y half.
/// - MIMG: `dst[0]` vdata when written, `src[3]` vdata when read (stores,
///   atomics), `src[0]` vaddr0, `src[1]` srsrc, `src[2]` ssamp (samplers),
///   `imm` the NSA addresses (gfx10: more in `nsa_ext`, the count of
///   extra dwords from `size`), `aux` the [`image`] fields; glc/slc/dlc/tfe
///   in `flags`. The data and address widths depend on dmask, dim and a16.
///   gfx12's VIMAGE/VSAMPLE alike, always NSA (`imm` vaddr1-4), th/scope
///   in `cache`.
/// - EXP: `src[0..4]` the enabled sources, `aux` the target (bits 0-5),
///   `imm` the enable mask | done << 4 | row_en << 5 (gfx10: | compr << 6
///   | vm << 7).
/// - VINTERP: `dst[0]`, `src[0..3]`, neg/op_sel/clamp in `mods`, `imm`
///   wait_exp.
/// - LDSDIR: `dst[0]`, `aux` attr << 2 | channel, `imm` wait_vdst.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    /// The family whose encoding it was decoded from (the disassembler
    /// prints that family's form).
    pub family: crate::Family,
    /// gfx12 memory instructions' cache policy: `th` in bits 0-2, `scope`
    /// in bits 3-4 ([`cache`]); 0 elsewhere.
    pub cache: u8,
    /// Encoded length in bytes, literal included.
    pub size: u8,
    pub dst: [Operand; 2],
    pub src: [Operand; 4],
    pub mods: Mods,
    pub imm: i32,
    /// Extra per-format field: in ALU formats the raw 32-bit literal, when
    /// the instruction has one (the disassembler prints it by its value);
    /// MTBUF's format, MIMG's dmask, ….
    pub aux: u32,
    pub flags: u16,
    pub lane_sel: LaneSel,
    /// gfx10's SDWA selects, when the op is in that form.
    pub sdwa: Option<Sdwa>,
    /// gfx10 MIMG NSA words of two or three extra dwords: vaddr5-vaddr12,
    /// a byte each (vaddr1-4 are in `imm`); zero elsewhere.
    pub nsa_ext: [u8; 8],
    pub vopd_y: Option<Box<Inst>>,
}

impl Inst {
    /// An instruction of `op` with no operands, modifiers or fields set: a
    /// 4-byte word of `family`.
    pub fn new(op: Op, family: crate::Family) -> Inst {
        Inst {
            op,
            family,
            cache: 0,
            size: 4,
            dst: [Operand::None; 2],
            src: [Operand::None; 4],
            mods: Mods::default(),
            imm: 0,
            aux: 0,
            flags: 0,
            lane_sel: LaneSel::None,
            sdwa: None,
            nsa_ext: [0; 8],
            vopd_y: None,
        }
    }
}
