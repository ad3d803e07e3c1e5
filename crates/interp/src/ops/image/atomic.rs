//! Image atomics (`image_atomic_*`, RDNA3 ISA §10.5 "Image Atomics";
//! gfx12's renamed `_uint`/`_int` forms and its float atomics): a
//! read-modify-write of the texel at integer coordinates, through the
//! arena's checked atomic accessors as buffer and global atomics are.
//!
//! The operations are the ones every memory atomic shares (`rmw.rs`'s
//! lists, which DS and vector-memory atomics are built from), looked up by
//! their (operation, type) class, so no formula is written twice.
//!
//! The data width is the dmask's: one dword (cmpswap: two, data then
//! compare) for a 32-bit format, two (cmpswap: four) for a 64-bit one.
//! With GLC (gfx12: the TH return hint) the texel's value before the
//! operation is returned. A texel outside the image is not written and
//! returns 0, as image loads of it read 0 (the guide says nothing of
//! atomics there: uncertain).

use softgpu_isa::{flags, image, Inst, Num, Op, Rmw};

use super::super::{vmem, Env, Exec, Flow, Result, Trap};
use super::{active, dim, int_position, selected_mask, unsupported, Image};
use crate::trap::Use;
use crate::wave::Wave;

type Kernel32 = fn(u32, u32, u32) -> u32;
type Kernel64 = fn(u64, u64, u64) -> u64;

macro_rules! image_shared32 {
    ($($op:ident, $ty:ident => $f:expr;)*) => {
        /// The shared 32-bit operations by class.
        const SHARED32: &[(Rmw, Num, Kernel32)] = &[$((Rmw::$op, Num::$ty, $f),)*];
    };
}
macro_rules! image_shared64 {
    ($($op:ident, $ty:ident => $f:expr;)*) => {
        /// The shared 64-bit operations by class.
        const SHARED64: &[(Rmw, Num, Kernel64)] = &[$((Rmw::$op, Num::$ty, $f),)*];
    };
}
shared_rmw32!(image_shared32);
shared_rmw64!(image_shared64);

/// What an image atomic does to the texel.
#[derive(Clone, Copy)]
enum Kind {
    /// A shared operation, by its 32-bit class (the 64-bit form is the
    /// same operation on the 64-bit type).
    Shared(Rmw, Num),
    Swap,
    /// Data in the first half of VDATA, the compare value in the second.
    CmpSwap,
    /// An operation with a 32-bit form only (gfx12's float atomics).
    Only32(Kernel32),
}

/// The 64-bit type of a 32-bit one.
fn wide(num: Num) -> Option<Num> {
    Some(match num {
        Num::U32 => Num::U64,
        Num::I32 => Num::I64,
        Num::B32 => Num::B64,
        _ => return None,
    })
}

fn find<T: Copy>(table: &[(Rmw, Num, T)], op: Rmw, num: Num) -> Option<T> {
    table
        .iter()
        .find(|&&(o, n, _)| (o, n) == (op, num))
        .map(|&(.., k)| k)
}

/// Both widths' kernels of `kind` (either may be missing).
fn kernels(kind: Kind) -> (Option<Kernel32>, Option<Kernel64>) {
    match kind {
        Kind::Shared(op, num) => (
            find(SHARED32, op, num),
            wide(num).and_then(|n| find(SHARED64, op, n)),
        ),
        Kind::Swap => (Some(|_, d, _| d), Some(|_, d, _| d)),
        Kind::CmpSwap => (
            Some(|o, d, c| if o == c { d } else { o }),
            Some(|o, d, c| if o == c { d } else { o }),
        ),
        Kind::Only32(k) => (Some(k), None),
    }
}

/// The kernel of the width an instruction's dmask asks for.
#[derive(Clone, Copy)]
enum Width {
    Dword(Kernel32),
    Qword(Kernel64),
}

/// Whether the instruction's dmask asks for 64-bit data: two data dwords
/// (four for cmpswap) instead of one (two). Any other dmask is refused.
fn is_64(i: &Inst, cmp: bool) -> std::result::Result<bool, Trap> {
    let dwords = selected_mask(i).count_ones();
    match (cmp, dwords) {
        (false, 1) | (true, 2) => Ok(false),
        (false, 2) | (true, 4) => Ok(true),
        _ => Err(unsupported(
            i,
            format!("dmask {:#x} on an atomic", i.aux & image::DMASK),
        )),
    }
}

/// One lane's operands: data and compare (0 unless cmpswap), each one
/// dword or two.
fn operands(w: &Wave, i: &Inst, l: usize, cmp: bool, wide: bool) -> (u64, u64) {
    let n = 1 + wide as usize;
    let read = |first: usize| {
        (0..n).fold(0u64, |v, k| {
            v | (w.get_lane(i.src[3], l, first + k) as u64) << (32 * k)
        })
    };
    (read(0), if cmp { read(n) } else { 0 })
}

/// `image_atomic_*` on the texel each EXEC lane's coordinates name.
fn atomic(w: &mut Wave, env: &mut Env, i: &Inst, kind: Kind) -> Result {
    super::check_form(i)?;
    if i.flags & flags::TFE != 0 || i.aux & image::LWE != 0 {
        return Err(unsupported(i, "tfe or lwe on an atomic"));
    }
    let cmp = matches!(kind, Kind::CmpSwap);
    let wide = is_64(i, cmp)?;
    let d = dim(i)?;
    let img = Image::new(w, i)?;
    let bytes = img.df.bytes();
    if bytes != 4 << wide as u64 {
        let why = format!(
            "a {}-bit atomic on image format {} ({bytes} bytes a texel)",
            32 << wide as u32,
            img.r.format
        );
        return Err(unsupported(i, why));
    }
    // The width's kernel, checked before any lane: a form with no kernel
    // is refused even when every lane's texel is outside the image.
    let kernel = match (wide, kernels(kind)) {
        (false, (Some(k), _)) => Width::Dword(k),
        (true, (_, Some(k))) => Width::Qword(k),
        _ => return Err(unsupported(i, "a 64-bit form of this atomic")),
    };
    let ret = i.flags & flags::GLC != 0;
    for l in active(w) {
        let (t, _) = int_position(w, i, d, l, false)?;
        let (data, compare) = operands(w, i, l, cmp, wide);
        let old = match img.locate(t, img.r.base_level) {
            None => 0,
            Some(addr) => {
                if let Some(s) = env.sanitizer.as_mut() {
                    s.global(w, Some(l), Use::Atomic, addr, bytes)?;
                }
                match kernel {
                    Width::Dword(k) => {
                        let f = |o| k(o, data as u32, compare as u32);
                        vmem::global_rmw32(w, env, l, addr, f)? as u64
                    }
                    Width::Qword(k) => {
                        vmem::global_rmw64(w, env, l, addr, |o| k(o, data, compare))?
                    }
                }
            }
        };
        if ret {
            w.set_lane(i.dst[0], l, 0, old as u32);
            if wide {
                w.set_lane(i.dst[0], l, 1, (old >> 32) as u32);
            }
        }
    }
    Ok(Flow::Next)
}

/// The image atomics' handlers (gfx12's `_uint`/`_int` renames of the
/// gfx11 ops are `ops::RENAMED` rows).
pub const TABLE: &[(Op, Exec)] = &[
    (Op::IMAGE_ATOMIC_SWAP, bind!(atomic, Kind::Swap)),
    (Op::IMAGE_ATOMIC_CMPSWAP, bind!(atomic, Kind::CmpSwap)),
    (
        Op::IMAGE_ATOMIC_ADD,
        bind!(atomic, Kind::Shared(Rmw::Add, Num::U32)),
    ),
    (
        Op::IMAGE_ATOMIC_SUB,
        bind!(atomic, Kind::Shared(Rmw::Sub, Num::U32)),
    ),
    (
        Op::IMAGE_ATOMIC_SMIN,
        bind!(atomic, Kind::Shared(Rmw::Min, Num::I32)),
    ),
    (
        Op::IMAGE_ATOMIC_UMIN,
        bind!(atomic, Kind::Shared(Rmw::Min, Num::U32)),
    ),
    (
        Op::IMAGE_ATOMIC_SMAX,
        bind!(atomic, Kind::Shared(Rmw::Max, Num::I32)),
    ),
    (
        Op::IMAGE_ATOMIC_UMAX,
        bind!(atomic, Kind::Shared(Rmw::Max, Num::U32)),
    ),
    (
        Op::IMAGE_ATOMIC_AND,
        bind!(atomic, Kind::Shared(Rmw::And, Num::B32)),
    ),
    (
        Op::IMAGE_ATOMIC_OR,
        bind!(atomic, Kind::Shared(Rmw::Or, Num::B32)),
    ),
    (
        Op::IMAGE_ATOMIC_XOR,
        bind!(atomic, Kind::Shared(Rmw::Xor, Num::B32)),
    ),
    (
        Op::IMAGE_ATOMIC_INC,
        bind!(atomic, Kind::Shared(Rmw::Inc, Num::U32)),
    ),
    (
        Op::IMAGE_ATOMIC_DEC,
        bind!(atomic, Kind::Shared(Rmw::Dec, Num::U32)),
    ),
    // gfx12's float atomics: the add of global atomics (denormal inputs
    // flushed, as `global_atomic_add_f32`'s), and min/max as gfx12's
    // `*_num` memory atomics (IEEE 754-2019 minimumNumber/maximumNumber:
    // the RDNA4 guide names no other rule for the image forms).
    (
        Op::IMAGE_ATOMIC_ADD_FLT,
        bind!(atomic, Kind::Only32(vmem::add_f32_flush_in)),
    ),
    (
        Op::IMAGE_ATOMIC_MIN_FLT,
        bind!(atomic, Kind::Only32(super::super::rmw::min_num32)),
    ),
    (
        Op::IMAGE_ATOMIC_MAX_FLT,
        bind!(atomic, Kind::Only32(super::super::rmw::max_num32)),
    ),
    (
        Op::IMAGE_ATOMIC_PK_ADD_F16,
        bind!(atomic, Kind::Only32(super::super::rmw::pk_add_f16)),
    ),
    (
        Op::IMAGE_ATOMIC_PK_ADD_BF16,
        bind!(atomic, Kind::Only32(super::super::rmw::pk_add_bf16)),
    ),
];
