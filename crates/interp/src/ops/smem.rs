//! SMEM: scalar loads through the constant cache, and cache controls.

use softgpu_isa::{flags, Inst, Op};

use super::{nop, Env, Exec, Flow, MemCause, Result, Trap};
use crate::trap::{Space, Use};
use crate::wave::Wave;

/// `s_load_bN`: `dwords` dwords at base + offset + soffset, the SGPR pair
/// being a 64-bit address. `s_buffer_load_bN`: the same within a buffer
/// resource (V#): base = V#[47:0], and the 32-bit offset + soffset is
/// range-checked per dword against the resource's size (NUM_RECORDS bytes,
/// or NUM_RECORDS * STRIDE when STRIDE is set): a dword not wholly inside
/// reads 0 and touches no memory, as vector buffer loads do. Either way the
/// two low address bits are ignored (scalar loads are dword-aligned).
fn load(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, buffer: bool) -> Result {
    let soffset = soffset(w, i);
    let mut values = [0u32; 16];
    let fetch = |a: u64| {
        env.mem
            .load_u32(a)
            .map_err(|e| Trap::memory(Space::Scalar, None, false, e))
    };
    if buffer {
        let (base, size) = resource(w, i);
        let offset = (i.imm as u32).wrapping_add(soffset) as u64 & !3;
        for (k, v) in values[..dwords].iter_mut().enumerate() {
            let at = offset + 4 * k as u64;
            if at + 4 <= size {
                if let Some(s) = env.sanitizer.as_mut() {
                    s.global(w, None, Use::Read, base.wrapping_add(at), 4)?;
                }
                *v = env.contained.or(w, fetch(base.wrapping_add(at)), 0)?;
            }
        }
    } else {
        let addr = w
            .read_s64(i.src[0])
            .wrapping_add(i.imm as i64 as u64)
            .wrapping_add(soffset as u64)
            & !3;
        if let Some(s) = env.sanitizer.as_mut() {
            s.global(w, None, Use::Read, addr, 4 * dwords as u64)?;
        }
        // The usual case, every dword readable: one range check.
        let end = addr.wrapping_add(4 * dwords as u64);
        if let Some(win) = env.mem.window(addr, end, false) {
            for (k, v) in values[..dwords].iter_mut().enumerate() {
                *v = win.load_u32(addr + 4 * k as u64);
            }
            w.write_sn(i.dst[0], &values[..dwords]);
            return Ok(Flow::Next);
        }
        // The first dword must be readable. LLVM widens scalar loads it
        // knows to be dereferenceable up to their alignment (a 36-byte
        // kernarg segment read with s_load_b128 at 0x18), and hardware reads
        // whatever lies behind; here the dwords of such a load past the end
        // of its allocation read zero. A load that starts outside faults.
        values[0] = env.contained.or(w, fetch(addr), 0)?;
        for (k, v) in values[1..dwords].iter_mut().enumerate() {
            *v = match fetch(addr.wrapping_add(4 * (k as u64 + 1))) {
                Ok(v) => v,
                Err(Trap::Memory {
                    cause: MemCause::Read,
                    ..
                }) => 0,
                // A stale owner: the launch's error, contained like the
                // first dword's.
                stale => env.contained.or(w, stale, 0)?,
            };
        }
    }
    w.write_sn(i.dst[0], &values[..dwords]);
    Ok(Flow::Next)
}

/// The SGPR offset added to the address, if the instruction has one.
fn soffset(w: &Wave, i: &Inst) -> u32 {
    match i.src[1] {
        softgpu_isa::Operand::None => 0,
        op => w.read_s32(op),
    }
}

/// A buffer resource's base address and size in bytes (NUM_RECORDS, times
/// STRIDE when set).
fn resource(w: &Wave, i: &Inst) -> (u64, u64) {
    let [d0, d1, d2, _] = w.read_sn::<4>(i.src[0]);
    let base = d0 as u64 | ((d1 & 0xffff) as u64) << 32;
    let stride = ((d1 >> 16) & 0x3fff) as u64;
    (base, d2 as u64 * stride.max(1))
}

/// gfx12's `s_load_u8/i8/u16/i16` and their `s_buffer_load` forms: one
/// byte or halfword at its exact byte address (no dword alignment),
/// zero- or sign-extended into the SGPR (RDNA4 guide, scalar memory
/// loads). A buffer load outside its resource reads 0, as the dword loads.
fn load_narrow(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    bytes: usize,
    signed: bool,
    buffer: bool,
) -> Result {
    let soffset = soffset(w, i);
    let addr = if buffer {
        let (base, size) = resource(w, i);
        let at = (i.imm as u32).wrapping_add(soffset) as u64;
        if at + bytes as u64 > size {
            w.write_s32(i.dst[0], 0);
            return Ok(Flow::Next);
        }
        base.wrapping_add(at)
    } else {
        w.read_s64(i.src[0])
            .wrapping_add(i.imm as i64 as u64)
            .wrapping_add(soffset as u64)
    };
    if let Some(s) = env.sanitizer.as_mut() {
        s.global(w, None, Use::Read, addr, bytes as u64)?;
    }
    let mut b = [0u8; 4];
    let r = (env.mem.read(addr, &mut b[..bytes]))
        .map_err(|e| Trap::memory(Space::Scalar, None, false, e));
    env.contained.read(w, r, &mut b)?;
    let v = u32::from_le_bytes(b);
    let shift = 32 - 8 * bytes as u32;
    let v = if signed {
        ((v << shift) as i32 >> shift) as u32
    } else {
        v
    };
    w.write_s32(i.dst[0], v);
    Ok(Flow::Next)
}

/// gfx10's `s_memtime`: the 64-bit shader clock (RDNA2 guide, SMEM
/// instructions: the current 64-bit timestamp). The stand-in is the
/// wave's retired-instruction count, monotonic as the clock is, and the
/// same count `s_getreg` reads as SHADER_CYCLES.
fn memtime(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    w.write_s64(i.dst[0], w.retired);
    Ok(Flow::Next)
}

/// gfx10's `s_memrealtime`: the 64-bit constant-rate REALTIME counter
/// (the guide's RTC), the 100 MHz clock `s_sendmsg_rtn`
/// reads on gfx11 (`salu::realtime_ticks`).
fn memrealtime(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    w.write_s64(i.dst[0], super::salu::realtime_ticks());
    Ok(Flow::Next)
}

/// Where a gfx9 SMEM store or atomic writes: the byte address of its first
/// dword, and how many bytes from there are in range. sbase + offset +
/// soffset (dword-aligned) for `s_store_*` and `s_atomic_*`, unlimited;
/// for the `s_buffer_` forms the V#'s base + offset, limited by its size
/// as `s_buffer_load` is.
fn target(w: &Wave, i: &Inst, buffer: bool) -> (u64, u64) {
    let soffset = soffset(w, i);
    if buffer {
        let (base, size) = resource(w, i);
        let at = (i.imm as u32).wrapping_add(soffset) as u64 & !3;
        (base.wrapping_add(at), size.saturating_sub(at))
    } else {
        let addr = w
            .read_s64(i.src[0])
            .wrapping_add(i.imm as i64 as u64)
            .wrapping_add(soffset as u64);
        (addr & !3, u64::MAX)
    }
}

/// CDNA's `s_store_dword*` and `s_buffer_store_dword*` (CDNA3 guide,
/// scalar memory writes): `dwords` dwords of the data SGPRs (`src[2]`) at
/// the address; a buffer store's dwords past the V#'s range are dropped.
fn store(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, buffer: bool) -> Result {
    let values = w.read_sn::<4>(i.src[2]);
    let (first, room) = target(w, i, buffer);
    for (k, v) in values[..dwords].iter().enumerate() {
        if 4 * (k as u64 + 1) > room {
            break;
        }
        let addr = first.wrapping_add(4 * k as u64);
        if let Some(s) = env.sanitizer.as_mut() {
            s.global(w, None, Use::Write, addr, 4)?;
        }
        let r = (env.mem.write(addr, &v.to_le_bytes()))
            .map_err(|e| Trap::memory(Space::Scalar, None, true, e));
        env.contained.or(w, r, ())?;
    }
    Ok(Flow::Next)
}

/// CDNA's scalar atomics (`s_atomic_*`, `s_buffer_atomic_*`, CDNA3 guide
/// SMEM atomics): new = f(old, data, compare) at the address, the data in
/// `src[2]` (a compare-swap's: the new value, then the compare value, as
/// the vector atomics take them); with GLC the pre-op value is returned
/// in `dst[0]` (the data registers). A buffer atomic outside the V#'s
/// range changes nothing and returns 0.
fn atomic(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    (wide, buffer): (bool, bool),
    f: fn(u64, u64, u64) -> u64,
) -> Result {
    let bytes = if wide { 8 } else { 4 };
    let (addr, room) = target(w, i, buffer);
    let inside = bytes <= room;
    let data = w.read_sn::<4>(i.src[2]);
    let (value, compare) = match wide {
        true => (
            data[0] as u64 | (data[1] as u64) << 32,
            data[2] as u64 | (data[3] as u64) << 32,
        ),
        false => (data[0] as u64, data[1] as u64),
    };
    let old = if inside {
        if let Some(s) = env.sanitizer.as_mut() {
            s.global(w, None, Use::Atomic, addr, bytes)?;
        }
        let fault = |e| Trap::memory(Space::Scalar, None, true, e);
        let r = match wide {
            true => env
                .mem
                .rmw_u64(addr, |o| f(o, value, compare))
                .map_err(fault),
            false => (env
                .mem
                .rmw_u32(addr, |o| f(o as u64, value, compare) as u32))
            .map(u64::from)
            .map_err(fault),
        };
        env.contained.or(w, r, 0)?
    } else {
        0
    };
    if i.flags & flags::GLC != 0 {
        match wide {
            true => w.write_s64(i.dst[0], old),
            false => w.write_s32(i.dst[0], old as u32),
        }
    }
    Ok(Flow::Next)
}

macro_rules! sstore {
    ($n:expr, $buffer:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| store(w, env, i, $n, $buffer)) as Exec
    };
}

/// The scalar atomics, each under its `s_atomic_` and `s_buffer_atomic_`
/// names (the flag pair: 64-bit, buffer), 32-bit then `_x2` (64-bit): the
/// vector atomics' operations
/// (`rmw.rs`), here on u64 (a 32-bit one sees and keeps the low half).
macro_rules! satomics {
    ($($op32:ident, $buf32:ident, $op64:ident, $buf64:ident => $f32:expr, $f64:expr;)*) => {
        pub const ATOMICS: &[(Op, Exec)] = &[$(
            (Op::$op32, (|w: &mut Wave, env: &mut Env, i: &Inst| atomic(w, env, i, (false, false), $f32)) as Exec),
            (Op::$buf32, (|w: &mut Wave, env: &mut Env, i: &Inst| atomic(w, env, i, (false, true), $f32)) as Exec),
            (Op::$op64, (|w: &mut Wave, env: &mut Env, i: &Inst| atomic(w, env, i, (true, false), $f64)) as Exec),
            (Op::$buf64, (|w: &mut Wave, env: &mut Env, i: &Inst| atomic(w, env, i, (true, true), $f64)) as Exec),
        )*];
    };
}

satomics! {
    S_ATOMIC_SWAP, S_BUFFER_ATOMIC_SWAP, S_ATOMIC_SWAP_X2, S_BUFFER_ATOMIC_SWAP_X2
        => |_, d, _| d, |_, d, _| d;
    S_ATOMIC_CMPSWAP, S_BUFFER_ATOMIC_CMPSWAP, S_ATOMIC_CMPSWAP_X2, S_BUFFER_ATOMIC_CMPSWAP_X2
        => |o, d, c| if o == c { d } else { o }, |o, d, c| if o == c { d } else { o };
    S_ATOMIC_ADD, S_BUFFER_ATOMIC_ADD, S_ATOMIC_ADD_X2, S_BUFFER_ATOMIC_ADD_X2
        => |o, d, _| (o as u32).wrapping_add(d as u32) as u64, |o, d, _| o.wrapping_add(d);
    S_ATOMIC_SUB, S_BUFFER_ATOMIC_SUB, S_ATOMIC_SUB_X2, S_BUFFER_ATOMIC_SUB_X2
        => |o, d, _| (o as u32).wrapping_sub(d as u32) as u64, |o, d, _| o.wrapping_sub(d);
    S_ATOMIC_SMIN, S_BUFFER_ATOMIC_SMIN, S_ATOMIC_SMIN_X2, S_BUFFER_ATOMIC_SMIN_X2
        => |o, d, _| (o as i32).min(d as i32) as u32 as u64, |o, d, _| (o as i64).min(d as i64) as u64;
    S_ATOMIC_UMIN, S_BUFFER_ATOMIC_UMIN, S_ATOMIC_UMIN_X2, S_BUFFER_ATOMIC_UMIN_X2
        => |o, d, _| o.min(d), |o, d, _| o.min(d);
    S_ATOMIC_SMAX, S_BUFFER_ATOMIC_SMAX, S_ATOMIC_SMAX_X2, S_BUFFER_ATOMIC_SMAX_X2
        => |o, d, _| (o as i32).max(d as i32) as u32 as u64, |o, d, _| (o as i64).max(d as i64) as u64;
    S_ATOMIC_UMAX, S_BUFFER_ATOMIC_UMAX, S_ATOMIC_UMAX_X2, S_BUFFER_ATOMIC_UMAX_X2
        => |o, d, _| o.max(d), |o, d, _| o.max(d);
    S_ATOMIC_AND, S_BUFFER_ATOMIC_AND, S_ATOMIC_AND_X2, S_BUFFER_ATOMIC_AND_X2
        => |o, d, _| o & d, |o, d, _| o & d;
    S_ATOMIC_OR, S_BUFFER_ATOMIC_OR, S_ATOMIC_OR_X2, S_BUFFER_ATOMIC_OR_X2
        => |o, d, _| o | d, |o, d, _| o | d;
    S_ATOMIC_XOR, S_BUFFER_ATOMIC_XOR, S_ATOMIC_XOR_X2, S_BUFFER_ATOMIC_XOR_X2
        => |o, d, _| o ^ d, |o, d, _| o ^ d;
    // inc: 0 once old reaches data, else old + 1; dec: data when old is 0
    // or above data, else old - 1 (unsigned, as the vector atomics).
    S_ATOMIC_INC, S_BUFFER_ATOMIC_INC, S_ATOMIC_INC_X2, S_BUFFER_ATOMIC_INC_X2
        => |o, d, _| if o >= d { 0 } else { o + 1 }, |o, d, _| if o >= d { 0 } else { o + 1 };
    S_ATOMIC_DEC, S_BUFFER_ATOMIC_DEC, S_ATOMIC_DEC_X2, S_BUFFER_ATOMIC_DEC_X2
        => |o, d, _| if o == 0 || o > d { d } else { o - 1 }, |o, d, _| if o == 0 || o > d { d } else { o - 1 };
}

macro_rules! narrow {
    ($bytes:expr, $signed:expr, $buffer:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| load_narrow(w, env, i, $bytes, $signed, $buffer))
            as Exec
    };
}

macro_rules! sload {
    ($n:expr, $buffer:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| load(w, env, i, $n, $buffer)) as Exec
    };
}

pub const TABLE: &[(Op, Exec)] = &[
    (Op::S_LOAD_B32, sload!(1, false)),
    (Op::S_LOAD_B64, sload!(2, false)),
    (Op::S_LOAD_B128, sload!(4, false)),
    (Op::S_LOAD_B256, sload!(8, false)),
    (Op::S_LOAD_B512, sload!(16, false)),
    (Op::S_BUFFER_LOAD_B32, sload!(1, true)),
    (Op::S_BUFFER_LOAD_B64, sload!(2, true)),
    (Op::S_BUFFER_LOAD_B128, sload!(4, true)),
    (Op::S_BUFFER_LOAD_B256, sload!(8, true)),
    (Op::S_BUFFER_LOAD_B512, sload!(16, true)),
    // gfx12's widths.
    (Op::S_LOAD_B96, sload!(3, false)),
    (Op::S_BUFFER_LOAD_B96, sload!(3, true)),
    (Op::S_LOAD_U8, narrow!(1, false, false)),
    (Op::S_LOAD_I8, narrow!(1, true, false)),
    (Op::S_LOAD_U16, narrow!(2, false, false)),
    (Op::S_LOAD_I16, narrow!(2, true, false)),
    (Op::S_BUFFER_LOAD_U8, narrow!(1, false, true)),
    (Op::S_BUFFER_LOAD_I8, narrow!(1, true, true)),
    (Op::S_BUFFER_LOAD_U16, narrow!(2, false, true)),
    (Op::S_BUFFER_LOAD_I16, narrow!(2, true, true)),
    // gfx12's prefetches: hints to caches this executor does not have.
    (Op::S_PREFETCH_INST, nop as Exec),
    (Op::S_PREFETCH_INST_PC_REL, nop as Exec),
    (Op::S_PREFETCH_DATA, nop as Exec),
    (Op::S_PREFETCH_DATA_PC_REL, nop as Exec),
    (Op::S_BUFFER_PREFETCH_DATA, nop as Exec),
    (Op::S_GL1_INV, nop as Exec),
    (Op::S_DCACHE_INV, nop as Exec),
    // Address-translation probes only warm caches on hardware.
    (Op::S_ATC_PROBE, nop as Exec),
    (Op::S_ATC_PROBE_BUFFER, nop as Exec),
    // CDNA's scalar-cache write-back and invalidation: memory here is
    // coherent and scalar stores reach it at once, so order only. Discard
    // (drop lines without writing them back) likewise keeps the stores:
    // hardware would leave such data undefined, and softgpu gives the
    // written values.
    (Op::S_DCACHE_WB, nop as Exec),
    (Op::S_DCACHE_WB_VOL, nop as Exec),
    (Op::S_DCACHE_INV_VOL, nop as Exec),
    (Op::S_DCACHE_DISCARD, nop as Exec),
    (Op::S_DCACHE_DISCARD_X2, nop as Exec),
    (Op::S_STORE_DWORD, sstore!(1, false)),
    (Op::S_STORE_DWORDX2, sstore!(2, false)),
    (Op::S_STORE_DWORDX4, sstore!(4, false)),
    (Op::S_BUFFER_STORE_DWORD, sstore!(1, true)),
    (Op::S_BUFFER_STORE_DWORDX2, sstore!(2, true)),
    (Op::S_BUFFER_STORE_DWORDX4, sstore!(4, true)),
    // gfx10's counters.
    (Op::S_MEMTIME, memtime as Exec),
    (Op::S_MEMREALTIME, memrealtime as Exec),
];
