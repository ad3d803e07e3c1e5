//! Read-modify-write operations that LDS (`ds_*`) and memory (`*_atomic_*`)
//! atomics share. Each list is handed to a callback macro that builds that
//! family's handlers and mnemonics, so every formula is written once.
//!
//! Entries are `Op, TYPE => |old, data, _| new`.

/// gfx12's conditional subtract: subtracts only when no borrow results.
pub fn cond_sub(old: u32, data: u32, _: u32) -> u32 {
    if old >= data {
        old - data
    } else {
        old
    }
}

/// gfx12's `sub_clamp` (gfx11's `csub`): subtract, clamped at 0.
pub fn sub_clamp(old: u32, data: u32, _: u32) -> u32 {
    old.saturating_sub(data)
}

/// gfx12's `min_num`/`max_num` atomics: IEEE 754-2019 minimumNumber /
/// maximumNumber, as the VALU ops (`float::mm32`).
pub fn min_num32(old: u32, data: u32, _: u32) -> u32 {
    crate::float::mm32(crate::float::NanRule::Number, false, old, data)
}

pub fn max_num32(old: u32, data: u32, _: u32) -> u32 {
    crate::float::mm32(crate::float::NanRule::Number, true, old, data)
}

pub fn min_num64(old: u64, data: u64, _: u64) -> u64 {
    crate::float::mm64(crate::float::NanRule::Number, false, old, data)
}

pub fn max_num64(old: u64, data: u64, _: u64) -> u64 {
    crate::float::mm64(crate::float::NanRule::Number, true, old, data)
}

/// gfx12's packed f16 add atomic: both halves, round to nearest even,
/// denormals kept (atomics do not read MODE).
pub fn pk_add_f16(old: u32, data: u32, _: u32) -> u32 {
    let add = |s: u32| crate::float::add16(old >> s, data >> s, crate::float::Round::Nearest);
    add(0) | add(16) << 16
}

/// gfx12's packed bf16 add atomic, as `pk_add_f16`.
pub fn pk_add_bf16(old: u32, data: u32, _: u32) -> u32 {
    let add = |s: u32| crate::float::add_bf16(old >> s, data >> s);
    add(0) | add(16) << 16
}

/// The 32-bit operations common to DS and vector-memory atomics.
macro_rules! shared_rmw32 {
    ($callback:ident) => {
        $callback! {
            Add, U32 => |o: u32, d: u32, _: u32| o.wrapping_add(d);
            Sub, U32 => |o: u32, d: u32, _: u32| o.wrapping_sub(d);
            Inc, U32 => |o: u32, d: u32, _: u32| if o >= d { 0 } else { o + 1 };
            Dec, U32 => |o: u32, d: u32, _: u32| if o == 0 || o > d { d } else { o - 1 };
            Min, I32 => |o: u32, d: u32, _: u32| (o as i32).min(d as i32) as u32;
            Max, I32 => |o: u32, d: u32, _: u32| (o as i32).max(d as i32) as u32;
            Min, U32 => |o: u32, d: u32, _: u32| o.min(d);
            Max, U32 => |o: u32, d: u32, _: u32| o.max(d);
            And, B32 => |o: u32, d: u32, _: u32| o & d;
            Or, B32 => |o: u32, d: u32, _: u32| o | d;
            Xor, B32 => |o: u32, d: u32, _: u32| o ^ d;
            Add, F32 => |o: u32, d: u32, _: u32| (f32::from_bits(o) + f32::from_bits(d)).to_bits();
            Min, F32 => |o: u32, d: u32, _: u32| {
                $crate::float::min32(f32::from_bits(o), f32::from_bits(d)).to_bits()
            };
            Max, F32 => |o: u32, d: u32, _: u32| {
                $crate::float::max32(f32::from_bits(o), f32::from_bits(d)).to_bits()
            };
        }
    };
}

/// The 64-bit operations common to DS and vector-memory atomics.
macro_rules! shared_rmw64 {
    ($callback:ident) => {
        $callback! {
            Add, U64 => |o: u64, d: u64, _: u64| o.wrapping_add(d);
            Sub, U64 => |o: u64, d: u64, _: u64| o.wrapping_sub(d);
            Inc, U64 => |o: u64, d: u64, _: u64| if o >= d { 0 } else { o + 1 };
            Dec, U64 => |o: u64, d: u64, _: u64| if o == 0 || o > d { d } else { o - 1 };
            Min, I64 => |o: u64, d: u64, _: u64| (o as i64).min(d as i64) as u64;
            Max, I64 => |o: u64, d: u64, _: u64| (o as i64).max(d as i64) as u64;
            Min, U64 => |o: u64, d: u64, _: u64| o.min(d);
            Max, U64 => |o: u64, d: u64, _: u64| o.max(d);
            And, B64 => |o: u64, d: u64, _: u64| o & d;
            Or, B64 => |o: u64, d: u64, _: u64| o | d;
            Xor, B64 => |o: u64, d: u64, _: u64| o ^ d;
            // CDNA's f64 add (DS, flat, global, buffer): IEEE, round to
            // nearest even, denormals kept (LLVM selects it only where
            // the f64 denormal mode is IEEE's).
            Add, F64 => |o: u64, d: u64, _: u64| (f64::from_bits(o) + f64::from_bits(d)).to_bits();
            Min, F64 => |o: u64, d: u64, _: u64| {
                $crate::float::min64(f64::from_bits(o), f64::from_bits(d)).to_bits()
            };
            Max, F64 => |o: u64, d: u64, _: u64| {
                $crate::float::max64(f64::from_bits(o), f64::from_bits(d)).to_bits()
            };
        }
    };
}
