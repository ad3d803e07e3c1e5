//! Read-modify-write operations that LDS (`ds_*`) and memory (`*_atomic_*`)
//! atomics share. Each list is handed to a callback macro that builds that
//! family's handlers and mnemonics, so every formula is written once.
//!
//! Entries are `Op, TYPE => |old, data, _| new`.

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
                $crate::ops::float::min32(f32::from_bits(o), f32::from_bits(d)).to_bits()
            };
            Max, F32 => |o: u32, d: u32, _: u32| {
                $crate::ops::float::max32(f32::from_bits(o), f32::from_bits(d)).to_bits()
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
            Min, F64 => |o: u64, d: u64, _: u64| {
                $crate::ops::float::min64(f64::from_bits(o), f64::from_bits(d)).to_bits()
            };
            Max, F64 => |o: u64, d: u64, _: u64| {
                $crate::ops::float::max64(f64::from_bits(o), f64::from_bits(d)).to_bits()
            };
        }
    };
}
