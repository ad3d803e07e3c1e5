//! The built-in catalogue: which OpenCL C built-ins (and wrapped operators)
//! the generator calls, over which types, with which arguments. Each entry
//! is data; the host-C implementation of `NAME` over element type `T` is the
//! function `NAME_T` of `host_prelude.c` (e.g. `add_sat_i16`), and the
//! OpenCL side calls the overloaded built-in (or the `op_*` helper of
//! `ocl_prelude.cl`) by name.

use super::types::Scalar::{self, *};

/// Which element types an entry returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Res {
    /// Every integer type.
    Ints,
    /// Unsigned integers (`abs`, `abs_diff` return `ugentype`).
    Unsigned,
    /// Integers of 2, 4 or 8 bytes (`upsample` results).
    Wide,
    /// `int` and `uint` (`mul24`, `mad24`).
    Int32,
    /// half, float, double.
    Floats,
    /// float, double (no half division: clang lowers it through an
    /// approximate f32 reciprocal, which no exact oracle can follow).
    FloatDouble,
    /// Every type.
    All,
}

impl Res {
    pub fn admits(self, t: Scalar) -> bool {
        match self {
            Res::Ints => t.is_int(),
            Res::Unsigned => t.is_int() && !t.is_signed_int(),
            Res::Wide => t.is_int() && t.bytes() >= 2,
            Res::Int32 => matches!(t, Int | UInt),
            Res::Floats => t.is_float(),
            Res::FloatDouble => matches!(t, Float | Double),
            Res::All => true,
        }
    }
}

/// How the second type of a call (its "source" type) follows from the
/// result type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// No second type.
    None,
    /// Same size, either signedness (`abs(char)` and `abs(uchar)` → `uchar`).
    EitherSign,
    /// Half the size, same signedness (`upsample(char hi, uchar lo)` → `short`).
    HalfSize,
    /// An integer of the element's size, either signedness (`select`'s mask).
    Mask,
}

/// One argument of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// The result type.
    Res,
    /// The result's element type, one component (`min(float4, float)`).
    ResScalar,
    /// The source type.
    Src,
    /// The unsigned twin of the source type (`upsample`'s `lo`).
    SrcUnsigned,
    /// A constant of the result type, non-zero and not −1 (division by
    /// constants, which clang turns into multiply-high sequences).
    Divisor,
    /// An input in the 24-bit range `mul24`/`mad24` define results for.
    Int24,
}

/// A catalogue entry.
#[derive(Debug)]
pub struct Builtin {
    /// OpenCL name (overloaded), also the host function prefix.
    pub name: &'static str,
    pub res: Res,
    pub src: Src,
    pub args: &'static [Arg],
    /// `clamp`: the second and third arguments are built as `min(p, q)` and
    /// `max(p, q)`, since the result is undefined when lo > hi.
    pub ordered: bool,
    /// The host function is named after the source type (`abs_i8`), not the
    /// result type.
    pub host_by_src: bool,
    /// Float results carry a determined NaN payload (pure bit moves), so the
    /// value may be reinterpreted as integers.
    pub bit_exact: bool,
    /// Float arguments must carry determined NaN payloads: the result mixes
    /// their bits (`bitselect`), so a NaN's payload can reach a non-NaN.
    pub exact_args: bool,
}

const fn b(name: &'static str, res: Res, args: &'static [Arg]) -> Builtin {
    Builtin {
        name,
        res,
        src: Src::None,
        args,
        ordered: false,
        host_by_src: false,
        bit_exact: false,
        exact_args: false,
    }
}

use Arg::*;
const R1: &[Arg] = &[Res];
const R2: &[Arg] = &[Res, Res];
const R3: &[Arg] = &[Res, Res, Res];

/// Every entry. Order matters only for coverage slicing (see `gen::focus_list`).
pub static CATALOGUE: &[Builtin] = &[
    // Integer built-ins (OpenCL C 2.0 §6.13.3).
    b("add_sat", Res::Ints, R2),
    b("sub_sat", Res::Ints, R2),
    b("hadd", Res::Ints, R2),
    b("rhadd", Res::Ints, R2),
    b("mul_hi", Res::Ints, R2),
    b("mad_hi", Res::Ints, R3),
    b("mad_sat", Res::Ints, R3),
    b("rotate", Res::Ints, R2),
    b("clz", Res::Ints, R1),
    b("ctz", Res::Ints, R1),
    b("popcount", Res::Ints, R1),
    Builtin {
        src: Src::EitherSign,
        host_by_src: true,
        ..b("abs", Res::Unsigned, &[Src])
    },
    Builtin {
        src: Src::EitherSign,
        host_by_src: true,
        ..b("abs_diff", Res::Unsigned, &[Src, Src])
    },
    Builtin {
        src: Src::HalfSize,
        ..b("upsample", Res::Wide, &[Src, SrcUnsigned])
    },
    b("mul24", Res::Int32, &[Int24, Int24]),
    b("mad24", Res::Int32, &[Int24, Int24, Res]),
    // min / max / clamp: integer and float (float: IEEE minNum/maxNum as
    // the hardware's v_min/v_max give it, −0 < +0).
    b("min", Res::All, R2),
    b("max", Res::All, R2),
    b("min", Res::All, &[Res, ResScalar]),
    b("max", Res::All, &[Res, ResScalar]),
    Builtin {
        ordered: true,
        ..b("clamp", Res::All, R3)
    },
    Builtin {
        ordered: true,
        ..b("clamp", Res::All, &[Res, ResScalar, ResScalar])
    },
    // select / bitselect (§6.13.6).
    Builtin {
        src: Src::Mask,
        bit_exact: true,
        ..b("select", Res::All, &[Res, Res, Src])
    },
    Builtin {
        bit_exact: true,
        exact_args: true,
        ..b("bitselect", Res::All, R3)
    },
    // Operators, through `op_*` helpers that wrap instead of overflowing,
    // guard division (x/0, MIN/−1 → divisor 1) and mask shift counts.
    b("op_add", Res::All, R2),
    b("op_sub", Res::All, R2),
    b("op_mul", Res::All, R2),
    b("op_div", Res::Ints, R2),
    b("op_div", Res::Ints, &[Res, Divisor]),
    b("op_div", Res::FloatDouble, R2),
    b("op_rem", Res::Ints, R2),
    b("op_rem", Res::Ints, &[Res, Divisor]),
    b("op_shl", Res::Ints, R2),
    b("op_shr", Res::Ints, R2),
    b("op_and", Res::Ints, R2),
    b("op_or", Res::Ints, R2),
    b("op_xor", Res::Ints, R2),
];

/// Finds the two-argument entry named `name` (for clamp's `min`/`max`).
pub fn entry(name: &str, args: &[Arg]) -> &'static Builtin {
    CATALOGUE
        .iter()
        .find(|b| b.name == name && b.args == args)
        .unwrap_or_else(|| panic!("no catalogue entry {name}{args:?}"))
}

/// Rounding modifier of a conversion or half store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Round {
    /// No suffix: round toward zero to integers, to nearest even otherwise.
    Default,
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

impl Round {
    pub const ALL: [Round; 5] = [
        Round::Default,
        Round::Rte,
        Round::Rtz,
        Round::Rtp,
        Round::Rtn,
    ];

    /// The OpenCL suffix (`""`, `"_rte"`, ...).
    pub fn suffix(self) -> &'static str {
        match self {
            Round::Default => "",
            Round::Rte => "_rte",
            Round::Rtz => "_rtz",
            Round::Rtp => "_rtp",
            Round::Rtn => "_rtn",
        }
    }

    /// The mode that applies when converting to `to` (resolving `Default`).
    pub fn resolve(self, to: Scalar) -> Round {
        match self {
            Round::Default if to.is_int() => Round::Rtz,
            Round::Default => Round::Rte,
            r => r,
        }
    }

    /// The host prelude's constant (`RTE`, ...) after [`Round::resolve`].
    pub fn host(self, to: Scalar) -> &'static str {
        match self.resolve(to) {
            Round::Rte => "RTE",
            Round::Rtz => "RTZ",
            Round::Rtp => "RTP",
            Round::Rtn => "RTN",
            Round::Default => unreachable!(),
        }
    }

    /// Rounds `x` to an integer in this mode (after [`Round::resolve`]).
    pub fn to_integer(self, x: f64, to: Scalar) -> f64 {
        match self.resolve(to) {
            Round::Rte => x.round_ties_even(),
            Round::Rtz => x.trunc(),
            Round::Rtp => x.ceil(),
            Round::Rtn => x.floor(),
            Round::Default => unreachable!(),
        }
    }
}

/// Conversions the generator never emits: ROCm's device library (which
/// clang links) computes them against the spec, so real hardware would
/// disagree with any exact oracle too. Found by this generator; the IR is in
/// the device library's `opencl.bc`.
pub fn library_deviates(from: Scalar, to: Scalar, round: Round) -> bool {
    to == Half
        && match (from, round) {
            // `convert_half_rtn(short)` calls `__cvt_f16_rtz_f32`: −2049
            // gives −2048, not −2050.
            (Short, Round::Rtn) => true,
            // `convert_half_rt{z,p,n}(int|long)` clamp to [−32768, 32767]
            // first: 40000 gives 32752 (rtz), not 40000.
            (Int | Long, Round::Rtz | Round::Rtp | Round::Rtn) => true,
            _ => false,
        }
}
