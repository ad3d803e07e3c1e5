//! How the JIT tier compiles each op, as data: the lowering classes of
//! `OpInfo::jit`.
//!
//! `build.rs` reads each op's class from `data/jit-classes.tsv` (one row
//! per mnemonic the JIT compiles, shared by every family that has it) and
//! checks every word of it against the enums here, which it includes
//! itself (so this file names nothing else of the crate). The JIT crate
//! turns a class into Cranelift IR; the formulas are the interpreter's
//! own lane functions written in IR, operand for operand (`v_sub_f32` is
//! `a + -b` there, so it is `a + -b` here: the two differ in a NaN's
//! sign). An op without a class ends a JIT block and runs in the
//! interpreter.

/// A unit-variant enum with `NAMES`, each variant's name as the table
/// writes it (a variant with a payload too, whose words the build script
/// reads itself).
macro_rules! named {
    (
        $(#[$m:meta])*
        pub enum $name:ident { $($(#[$vm:meta])* $v:ident $(($p:ty))?,)* }
    ) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vm])* $v $(($p))?,)* }

        impl $name {
            /// Each variant's name, as `data/jit-classes.tsv` writes it.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($v),)*];
        }
    };
}

named! {
    /// A vector op of up to three 32-bit sources, lane by lane.
    pub enum Lane {
        Mov,
        Not,
        FAdd,
        /// `a + -b`
        FSub,
        /// `b + -a`
        FSubRev,
        FMul,
        /// `a * b + c`, one rounding.
        Fma,
        CvtF32I32,
        CvtF32U32,
        IAdd,
        ISub,
        ISubRev,
        And,
        Or,
        Xor,
        MulLo,
        /// `(a & 0xffffff) * (b & 0xffffff)`
        MulU24,
        /// `(a & 0xffffff) * (b & 0xffffff) + c`
        MadU24,
        MaxI,
        MinI,
        MaxU,
        MinU,
        /// `b << a`, `b >> a`, `b >>s a`: the amount (src0) must be uniform.
        ShlRev,
        ShrRev,
        SarRev,
        /// `(a << b) + c`, `(a << b) | c`: the amount (src1) must be uniform.
        ShlAdd,
        ShlOr,
        AndOr,
        Or3,
        Xor3,
        Add3,
        /// `(a ^ b) + c`
        Xad,
        /// `c ? b : a`, with `c` a lane mask.
        Cndmask,
        /// `v_bfe_u32`: `(a >> (b & 31)) & ((1 << (c & 31)) - 1)`, with `b`
        /// and `c` uniform (the workitem-id unpacking every 2-D or 3-D
        /// kernel starts with).
        BfeU,
    }
}

impl Lane {
    /// The sources the op needs uniform (host SIMD shifts take one amount
    /// for all lanes): a shift's amount, then a bit field's width.
    pub fn uniform_srcs(self) -> &'static [usize] {
        match self {
            Lane::ShlRev | Lane::ShrRev | Lane::SarRev => &[0],
            Lane::ShlAdd | Lane::ShlOr => &[1],
            Lane::BfeU => &[1, 2],
            _ => &[],
        }
    }

    /// Whether the op is f32 arithmetic, whose results depend on MODE's
    /// f32 rounding and denormal fields.
    pub fn is_f32(self) -> bool {
        matches!(
            self,
            Lane::FAdd
                | Lane::FSub
                | Lane::FSubRev
                | Lane::FMul
                | Lane::Fma
                | Lane::CvtF32I32
                | Lane::CvtF32U32
        )
    }
}

named! {
    /// An f32 compare by the ISA's condition names: `Lg` is
    /// ordered-unequal, `Neq` "not equal" (true for NaN), `Nge`, `Ngt`,
    /// `Nle`, `Nlt` and `Nlg` the negations (true for NaN).
    pub enum FloatCmp {
        Lt,
        Eq,
        Le,
        Gt,
        Lg,
        Ge,
        /// Both ordered (neither a NaN).
        O,
        /// Either a NaN.
        U,
        Nge,
        Nlg,
        Ngt,
        Nle,
        Neq,
        Nlt,
    }
}

named! {
    /// An integer compare: `S*` signed, `U*` unsigned.
    pub enum IntCmp {
        Eq,
        Ne,
        SLt,
        SLe,
        SGt,
        SGe,
        ULt,
        ULe,
        UGt,
        UGe,
    }
}

named! {
    /// A vector add or subtract with a carry (borrow) out to a lane mask in
    /// `dst[1]`; the `Ci` forms also take one in from the mask in `src[2]`.
    pub enum Carry {
        Add,
        Sub,
        SubRev,
        AddCi,
        SubCi,
        SubRevCi,
    }
}

named! {
    /// A 64-bit shift of a VGPR pair by a constant amount (src0, taken
    /// modulo 64), into a VGPR pair.
    pub enum Shift64 {
        /// `b << a` (`v_lshlrev_b64`: the amount is the first source)
        Shl,
        /// `b >> a`
        Shr,
        /// `b >>s a`
        Sar,
    }
}

named! {
    /// An f64 op on VGPR pairs, SGPR pairs or constants, into a VGPR pair.
    pub enum F64 {
        Add,
        Mul,
        /// `a * b + c`, one rounding.
        Fma,
        /// `a · 2^b`, b a 32-bit integer source.
        Ldexp,
    }
}

named! {
    /// A scalar op on 32-bit operands (or 64-bit ones, `Class::Scalar64`).
    pub enum Scalar {
        Mov,
        /// SOPK: the sign-extended 16-bit immediate.
        Movk,
        /// SCC = carry / borrow.
        AddU,
        SubU,
        /// SCC = signed overflow.
        AddI,
        SubI,
        /// SCC = result != 0.
        And,
        Or,
        Xor,
        AndNot1,
        OrNot1,
        Shl,
        Shr,
        Sar,
        /// SCC unchanged.
        Mul,
        /// `scc ? a : b`
        Cselect,
        /// SCC = the comparison.
        Cmp(IntCmp),
    }
}

impl Scalar {
    /// Whether the op is a shift, whose amount is a 32-bit source at
    /// either width.
    pub fn is_shift(self) -> bool {
        matches!(self, Scalar::Shl | Scalar::Shr | Scalar::Sar)
    }
}

named! {
    /// When a branch ending a block is taken.
    pub enum Cond {
        Always,
        Scc0,
        Scc1,
        Vccz,
        Vccnz,
        Execz,
        Execnz,
    }
}

/// The accesses of an LDS load or store, lane by lane from the lane's
/// address VGPR: `dwords` at one offset, or at two (`*_2addr*`, each
/// offset scaled by the access size, and by 64 more for `stride64`). A
/// load access not wholly inside LDS reads zero, a store access is
/// discarded (§3.3.4.1), as in the interpreter's `ops::ds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LdsShape {
    One { dwords: u8 },
    Two { dwords: u8, stride64: bool },
}

impl LdsShape {
    /// Dwords per access.
    pub fn dwords(self) -> usize {
        match self {
            LdsShape::One { dwords } | LdsShape::Two { dwords, .. } => dwords as usize,
        }
    }
}

/// How one op is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Scheduling only: nothing to run.
    Hint,
    Lane(Lane),
    /// A vector compare writing a lane mask.
    FCmp(FloatCmp),
    ICmp(IntCmp),
    Carry(Carry),
    Shift64(Shift64),
    F64(F64),
    /// `v_mad_{u,i}64_{u,i}32`: `a * b + c` exact, with 32-bit `a` and `b`
    /// (sign-extended when `signed`) and a 64-bit `c`, into a VGPR pair;
    /// bit 64 of the exact sum to a lane mask in `dst[1]`.
    Mad64 {
        signed: bool,
    },
    /// An LDS load into VGPRs.
    LdsLoad(LdsShape),
    /// An LDS store from VGPRs (data0 in `src[1]`, data1 in `src[2]`).
    /// Stores run after the block's other vector ops, so the planner puts
    /// them only at a block's end.
    LdsStore(LdsShape),
    /// `s_load_b32`…`s_load_b512`: `dwords` from device memory at an SGPR
    /// pair plus offsets, into SGPRs, in the block's scalar phase once the
    /// JIT's checks allowed them; otherwise the block leaves before
    /// changing anything.
    ScalarLoad {
        dwords: u8,
    },
    /// `global_load_b32`…`_b128`, `flat_load_b32`…`_b128`: whole dwords a
    /// lane from device memory into VGPRs. The block's scalar phase finds
    /// where each chunk's rows are for the whole wave (the interpreter's
    /// wave-wide decision) or leaves before changing anything; the chunk
    /// loop loads them from there at the op's program point. The planner
    /// admits one only while its address VGPRs still hold what they held
    /// when the block started.
    GlobalLoad {
        dwords: u8,
        flat: bool,
    },
    /// `global_store_b32`, `flat_store_b32`: one dword a lane to device
    /// memory. Only as a block's last slot, after everything else of it
    /// has run: the block stores the rows itself when the interpreter's
    /// wave-wide path would take the store, and otherwise leaves with the
    /// store not run for the interpreter to run it.
    GlobalStore {
        flat: bool,
    },
    /// `scratch_load_*` (`bytes` 1, 2, 4, 8, 12 or 16; the sub-dword forms
    /// zero- or sign-extended): one lane's own private memory into VGPRs,
    /// run chunk-major with the block's other vector ops, at an address
    /// with no VGPR (`off`: the instruction's offset plus an SGPR), the
    /// same for every lane. The block's scalar phase checks it is inside
    /// each lane's segment, or leaves before changing anything.
    ScratchLoad {
        bytes: u8,
        signed: bool,
    },
    /// `scratch_store_b8`…`_b128`: VGPRs into each active lane's own
    /// private memory at a uniform address, as `ScratchLoad`.
    ScratchStore {
        bytes: u8,
    },
    /// `v_readlane_b32` (a lane chosen by a scalar source, modulo the
    /// wave size) and, with `first`, `v_readfirstlane_b32` (the lowest
    /// lane EXEC has on, lane 0 when none): one lane of a VGPR into an
    /// SGPR, in the block's scalar phase, so only of a VGPR no vector op
    /// of the block wrote before it.
    ReadLane {
        first: bool,
    },
    /// `s_getpc_b64`: the address of the next instruction into an SGPR
    /// pair (a constant of the program).
    GetPc,
    Scalar(Scalar),
    /// The 64-bit forms of `Mov`, the logic ops, the shifts (by a 32-bit
    /// amount, modulo 64) and `Cselect`, on SGPR pairs and constants
    /// (pointer arithmetic, wave64 masks); SCC as the 32-bit forms set it.
    Scalar64(Scalar),
    Branch(Cond),
}

impl Class {
    /// The MODE bits the op's results depend on: FP_ROUND and FP_DENORM
    /// for f32 (bits 0-1, 4-5) or for f16/f64 (2-3, 6-7). A block runs
    /// only where they hold the default.
    pub fn mode_fields(self) -> u32 {
        match self {
            Class::F64(_) => 0xcc,
            Class::FCmp(_) => 0x33,
            Class::Lane(l) if l.is_f32() => 0x33,
            _ => 0,
        }
    }
}
