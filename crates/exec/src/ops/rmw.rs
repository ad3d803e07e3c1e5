//! Read-modify-write operations that LDS (`ds_*`) and memory (`*_atomic_*`)
//! atomics share. Each list is handed to a callback macro that builds that
//! family's handlers and mnemonics, so every formula is written once.
//!
//! Entries are `"op", "type" => |old, data, _| new`.

/// The 32-bit operations common to DS and vector-memory atomics.
macro_rules! shared_rmw32 {
    ($callback:ident) => {
        $callback! {
            "add", "u32" => |o: u32, d: u32, _: u32| o.wrapping_add(d);
            "sub", "u32" => |o: u32, d: u32, _: u32| o.wrapping_sub(d);
            "inc", "u32" => |o: u32, d: u32, _: u32| if o >= d { 0 } else { o + 1 };
            "dec", "u32" => |o: u32, d: u32, _: u32| if o == 0 || o > d { d } else { o - 1 };
            "min", "i32" => |o: u32, d: u32, _: u32| (o as i32).min(d as i32) as u32;
            "max", "i32" => |o: u32, d: u32, _: u32| (o as i32).max(d as i32) as u32;
            "min", "u32" => |o: u32, d: u32, _: u32| o.min(d);
            "max", "u32" => |o: u32, d: u32, _: u32| o.max(d);
            "and", "b32" => |o: u32, d: u32, _: u32| o & d;
            "or", "b32" => |o: u32, d: u32, _: u32| o | d;
            "xor", "b32" => |o: u32, d: u32, _: u32| o ^ d;
            "add", "f32" => |o: u32, d: u32, _: u32| (f32::from_bits(o) + f32::from_bits(d)).to_bits();
            "min", "f32" => |o: u32, d: u32, _: u32| {
                $crate::ops::float::min32(f32::from_bits(o), f32::from_bits(d)).to_bits()
            };
            "max", "f32" => |o: u32, d: u32, _: u32| {
                $crate::ops::float::max32(f32::from_bits(o), f32::from_bits(d)).to_bits()
            };
        }
    };
}

/// The 64-bit operations common to DS and vector-memory atomics.
macro_rules! shared_rmw64 {
    ($callback:ident) => {
        $callback! {
            "add", "u64" => |o: u64, d: u64, _: u64| o.wrapping_add(d);
            "sub", "u64" => |o: u64, d: u64, _: u64| o.wrapping_sub(d);
            "inc", "u64" => |o: u64, d: u64, _: u64| if o >= d { 0 } else { o + 1 };
            "dec", "u64" => |o: u64, d: u64, _: u64| if o == 0 || o > d { d } else { o - 1 };
            "min", "i64" => |o: u64, d: u64, _: u64| (o as i64).min(d as i64) as u64;
            "max", "i64" => |o: u64, d: u64, _: u64| (o as i64).max(d as i64) as u64;
            "min", "u64" => |o: u64, d: u64, _: u64| o.min(d);
            "max", "u64" => |o: u64, d: u64, _: u64| o.max(d);
            "and", "b64" => |o: u64, d: u64, _: u64| o & d;
            "or", "b64" => |o: u64, d: u64, _: u64| o | d;
            "xor", "b64" => |o: u64, d: u64, _: u64| o ^ d;
            "min", "f64" => |o: u64, d: u64, _: u64| {
                $crate::ops::float::min64(f64::from_bits(o), f64::from_bits(d)).to_bits()
            };
            "max", "f64" => |o: u64, d: u64, _: u64| {
                $crate::ops::float::max64(f64::from_bits(o), f64::from_bits(d)).to_bits()
            };
        }
    };
}
