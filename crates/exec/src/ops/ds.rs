//! DS: LDS loads, stores, atomics and the LDS-routed lane permutes.
//!
//! A workgroup's waves run on one host thread, so LDS atomics are ordinary
//! read-modify-writes, done lane by lane in lane order.

use softgpu_isa::{Inst, Operand};

use super::float::f;
use super::{Env, Exec, Flow, Result, Trap};
use crate::wave::{Wave, MAX_LANES};

fn lds_fault(lane: usize, addr: u64, len: u64) -> Trap {
    Trap::Memory {
        space: "LDS",
        lane: Some(lane),
        addr,
        len,
    }
}

/// Reads `N` bytes of LDS at `addr` for `lane`.
#[inline(always)]
pub fn lds_read<const N: usize>(lds: &[u8], lane: usize, addr: u64) -> Result<[u8; N]> {
    let a = addr as usize;
    match lds.get(a..a.wrapping_add(N)) {
        Some(s) if addr < u32::MAX as u64 => Ok(s.try_into().unwrap()),
        _ => Err(lds_fault(lane, addr, N as u64)),
    }
}

#[inline(always)]
pub fn lds_write(lds: &mut [u8], lane: usize, addr: u64, data: &[u8]) -> Result<()> {
    let a = addr as usize;
    match lds.get_mut(a..a.wrapping_add(data.len())) {
        Some(s) if addr < u32::MAX as u64 => {
            s.copy_from_slice(data);
            Ok(())
        }
        _ => Err(lds_fault(lane, addr, data.len() as u64)),
    }
}

fn base(w: &Wave, i: &Inst, l: usize) -> u64 {
    w.lane32(i.src[0], l) as u64
}

fn offset16(i: &Inst) -> u64 {
    i.imm as u32 as u64 & 0xffff
}

/// Loads `bytes` (sign- or zero-extended to dwords) into `dst`.
fn load(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, signed: bool) -> Result {
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = base(w, i, l) + offset16(i);
        let dwords = bytes.div_ceil(4);
        for k in 0..dwords {
            let v = match bytes {
                1 => {
                    let [b] = lds_read::<1>(env.lds, l, addr)?;
                    if signed {
                        b as i8 as i32 as u32
                    } else {
                        b as u32
                    }
                }
                2 => {
                    let b = lds_read::<2>(env.lds, l, addr)?;
                    let v = u16::from_le_bytes(b);
                    if signed {
                        v as i16 as i32 as u32
                    } else {
                        v as u32
                    }
                }
                _ => u32::from_le_bytes(lds_read::<4>(env.lds, l, addr + 4 * k as u64)?),
            };
            w.set_lane(i.dst[0], l, k, v);
        }
    }
    Ok(Flow::Next)
}

/// 16-bit loads into one half of the destination (`_d16` / `_d16_hi`).
fn load_d16(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, signed: bool, hi: bool) -> Result {
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = base(w, i, l) + offset16(i);
        let v = if bytes == 1 {
            let [b] = lds_read::<1>(env.lds, l, addr)?;
            if signed {
                b as i8 as i16 as u16
            } else {
                b as u16
            }
        } else {
            u16::from_le_bytes(lds_read::<2>(env.lds, l, addr)?)
        } as u32;
        let old = w.get_lane(i.dst[0], l, 0);
        let new = if hi {
            (old & 0xffff) | v << 16
        } else {
            (old & 0xffff_0000) | v
        };
        w.set_lane(i.dst[0], l, 0, new);
    }
    Ok(Flow::Next)
}

/// Stores `bytes` from data0 (starting at bit `shift` for `_d16_hi`).
fn store(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, shift: u32) -> Result {
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = base(w, i, l) + offset16(i);
        if bytes < 4 {
            let v = (w.get_lane(i.src[1], l, 0) >> shift).to_le_bytes();
            lds_write(env.lds, l, addr, &v[..bytes])?;
        } else {
            for k in 0..bytes / 4 {
                let v = w.get_lane(i.src[1], l, k);
                lds_write(env.lds, l, addr + 4 * k as u64, &v.to_le_bytes())?;
            }
        }
    }
    Ok(Flow::Next)
}

/// `ds_load_2addr*`: two loads at offset0 and offset1 scaled by the size.
fn load2(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, stride64: bool) -> Result {
    let exec = w.exec();
    let scale = (4 * dwords as u64) * if stride64 { 64 } else { 1 };
    let (o0, o1) = ((i.imm as u64) & 0xff, (i.imm as u64 >> 8) & 0xff);
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let b = base(w, i, l);
        for (slot, off) in [o0, o1].into_iter().enumerate() {
            for k in 0..dwords {
                let v =
                    u32::from_le_bytes(lds_read::<4>(env.lds, l, b + off * scale + 4 * k as u64)?);
                w.set_lane(i.dst[0], l, slot * dwords + k, v);
            }
        }
    }
    Ok(Flow::Next)
}

fn store2(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, stride64: bool) -> Result {
    let exec = w.exec();
    let scale = (4 * dwords as u64) * if stride64 { 64 } else { 1 };
    let (o0, o1) = ((i.imm as u64) & 0xff, (i.imm as u64 >> 8) & 0xff);
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let b = base(w, i, l);
        for (data, off) in [(i.src[1], o0), (i.src[2], o1)] {
            for k in 0..dwords {
                let v = w.get_lane(data, l, k);
                lds_write(env.lds, l, b + off * scale + 4 * k as u64, &v.to_le_bytes())?;
            }
        }
    }
    Ok(Flow::Next)
}

/// 32-bit atomic: new = f(old, data0, data1); returns old into dst if `ret`.
#[inline(always)]
fn atomic32(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    ret: bool,
    op: impl Fn(u32, u32, u32) -> u32,
) -> Result {
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = base(w, i, l) + offset16(i);
        let old = u32::from_le_bytes(lds_read::<4>(env.lds, l, addr)?);
        let new = op(old, w.lane32(i.src[1], l), w.lane32(i.src[2], l));
        lds_write(env.lds, l, addr, &new.to_le_bytes())?;
        if ret {
            w.set_lane(i.dst[0], l, 0, old);
        }
    }
    Ok(Flow::Next)
}

#[inline(always)]
fn atomic64(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    ret: bool,
    op: impl Fn(u64, u64, u64) -> u64,
) -> Result {
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = base(w, i, l) + offset16(i);
        let old = u64::from_le_bytes(lds_read::<8>(env.lds, l, addr)?);
        let new = op(old, w.lane64(i.src[1], l), w.lane64(i.src[2], l));
        lds_write(env.lds, l, addr, &new.to_le_bytes())?;
        if ret {
            w.set_lane(i.dst[0], l, 0, old as u32);
            w.set_lane(i.dst[0], l, 1, (old >> 32) as u32);
        }
    }
    Ok(Flow::Next)
}

/// `ds_swizzle_b32`: lane permutation within groups of 32 (bitmask mode)
/// or of 4 (quad-permute mode), by the instruction's offset.
fn swizzle(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let pattern = offset16(i) as usize;
    if pattern >= 0xe000 {
        return Err(Trap::Other(format!(
            "ds_swizzle mode {pattern:#x} (rotate/FFT) is not supported"
        )));
    }
    let exec = w.exec();
    // The data register sits in the address field of the encoding.
    let data = if i.src[1] != Operand::None {
        i.src[1]
    } else {
        i.src[0]
    };
    let Operand::Vgpr(r) = data else {
        return Err(Trap::Other("ds_swizzle data is not a VGPR".into()));
    };
    let src = w.vgpr[r as usize];
    let mut res = [0u32; MAX_LANES];
    for (l, out) in res[..w.lanes].iter_mut().enumerate() {
        let s = if pattern & 0x8000 != 0 {
            (l & !3) | ((pattern >> (2 * (l & 3))) & 3)
        } else {
            let (and, or, xor) = (
                pattern & 0x1f,
                (pattern >> 5) & 0x1f,
                (pattern >> 10) & 0x1f,
            );
            (l & !31) | ((((l & 31) & and) | or) ^ xor)
        };
        *out = if exec >> s & 1 != 0 { src[s] } else { 0 };
    }
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

/// `ds_bpermute_b32` (pull) and `ds_permute_b32` (push): lane selection by
/// a byte address per lane, through the LDS crossbar without touching LDS.
fn permute(w: &mut Wave, i: &Inst, pull: bool) -> Result {
    let exec = w.exec();
    let n = w.lanes;
    let mut res = [0u32; MAX_LANES];
    for l in 0..n {
        if exec >> l & 1 == 0 {
            continue;
        }
        let target = ((base(w, i, l) + offset16(i)) / 4) as usize % n;
        if pull {
            res[l] = if exec >> target & 1 != 0 {
                w.lane32(i.src[1], target)
            } else {
                0
            };
        } else {
            res[target] = w.lane32(i.src[1], l);
        }
    }
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

/// `ds_storexchg_2addr*_rtn`: two exchanges at offset0 and offset1 (scaled
/// like `ds_store_2addr`), returning both old values.
fn xchg2(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, stride64: bool) -> Result {
    let exec = w.exec();
    let scale = (4 * dwords as u64) * if stride64 { 64 } else { 1 };
    let (o0, o1) = ((i.imm as u64) & 0xff, (i.imm as u64 >> 8) & 0xff);
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let b = base(w, i, l);
        for (slot, (data, off)) in [(i.src[1], o0), (i.src[2], o1)].into_iter().enumerate() {
            for k in 0..dwords {
                let addr = b + off * scale + 4 * k as u64;
                let old = u32::from_le_bytes(lds_read::<4>(env.lds, l, addr)?);
                lds_write(env.lds, l, addr, &w.get_lane(data, l, k).to_le_bytes())?;
                w.set_lane(i.dst[0], l, slot * dwords + k, old);
            }
        }
    }
    Ok(Flow::Next)
}

/// `ds_append` / `ds_consume`: one counter in LDS at M0[15:0] + offset moves
/// by the number of active lanes; every active lane gets the old value.
fn append(w: &mut Wave, env: &mut Env, i: &Inst, consume: bool) -> Result {
    let exec = w.exec();
    if exec == 0 {
        return Ok(Flow::Next);
    }
    let lane = exec.trailing_zeros() as usize;
    let addr = (w.sgpr[softgpu_isa::sreg::M0 as usize] & 0xffff) as u64 + offset16(i);
    let old = u32::from_le_bytes(lds_read::<4>(env.lds, lane, addr)?);
    let n = exec.count_ones();
    let new = if consume {
        old.wrapping_sub(n)
    } else {
        old.wrapping_add(n)
    };
    lds_write(env.lds, lane, addr, &new.to_le_bytes())?;
    let mut res = [0u32; MAX_LANES];
    res[..w.lanes].fill(old);
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

/// `ds_load_addtid_b32`: the address is M0 + offset + lane × 4, with no
/// address VGPR. (`ds_store_addtid_b32`, whose data the decoder reports in
/// `src[1]`, has no handler yet.)
fn addtid(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let exec = w.exec();
    let m0 = w.sgpr[softgpu_isa::sreg::M0 as usize] as u64;
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = m0 + offset16(i) + 4 * l as u64;
        let v = u32::from_le_bytes(lds_read::<4>(env.lds, l, addr)?);
        w.set_lane(i.dst[0], l, 0, v);
    }
    Ok(Flow::Next)
}

macro_rules! at32 {
    ($ret:expr, $f:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| atomic32(w, env, i, $ret, $f)) as Exec
    };
}
macro_rules! at64 {
    ($ret:expr, $f:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| atomic64(w, env, i, $ret, $f)) as Exec
    };
}
macro_rules! ld {
    ($bytes:expr, $signed:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| load(w, env, i, $bytes, $signed)) as Exec
    };
}
macro_rules! ld16 {
    ($bytes:expr, $signed:expr, $hi:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| load_d16(w, env, i, $bytes, $signed, $hi)) as Exec
    };
}
macro_rules! st {
    ($bytes:expr, $shift:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| store(w, env, i, $bytes, $shift)) as Exec
    };
}

/// Both forms of an atomic: without and with return of the old value.
macro_rules! atomics32 {
    ($($name:literal, $rtn:literal => $f:expr;)*) => {
        const ATOMICS32: &[(&str, Exec)] = &[$(($name, at32!(false, $f)), ($rtn, at32!(true, $f)),)*];
    };
}
/// The shared operations under their DS names: `ds_OP_TYPE` and
/// `ds_OP_rtn_TYPE`.
macro_rules! ds_shared32 {
    ($($op:literal, $ty:literal => $f:expr;)*) => {
        const SHARED32: &[(&str, Exec)] = &[$(
            (concat!("ds_", $op, "_", $ty), at32!(false, $f)),
            (concat!("ds_", $op, "_rtn_", $ty), at32!(true, $f)),
        )*];
    };
}
macro_rules! ds_shared64 {
    ($($op:literal, $ty:literal => $f:expr;)*) => {
        const SHARED64: &[(&str, Exec)] = &[$(
            (concat!("ds_", $op, "_", $ty), at64!(false, $f)),
            (concat!("ds_", $op, "_rtn_", $ty), at64!(true, $f)),
        )*];
    };
}
shared_rmw32!(ds_shared32);
shared_rmw64!(ds_shared64);

macro_rules! atomics64 {
    ($($name:literal, $rtn:literal => $f:expr;)*) => {
        const ATOMICS64: &[(&str, Exec)] = &[$(($name, at64!(false, $f)), ($rtn, at64!(true, $f)),)*];
    };
}

atomics32! {
    "ds_rsub_u32", "ds_rsub_rtn_u32" => |o, d, _| d.wrapping_sub(o);
    "ds_mskor_b32", "ds_mskor_rtn_b32" => |o, d, e| (o & !d) | e;
    "ds_cmpstore_b32", "ds_cmpstore_rtn_b32" => |o, d, e| if o == e { d } else { o };
    "ds_cmpstore_f32", "ds_cmpstore_rtn_f32" => |o, d, e| if f(o) == f(e) { d } else { o };
}

atomics64! {
    "ds_rsub_u64", "ds_rsub_rtn_u64" => |o, d, _| d.wrapping_sub(o);
    "ds_mskor_b64", "ds_mskor_rtn_b64" => |o, d, e| (o & !d) | e;
    "ds_cmpstore_b64", "ds_cmpstore_rtn_b64" => |o, d, e| if o == e { d } else { o };
    "ds_cmpstore_f64", "ds_cmpstore_rtn_f64" => |o, d, e| if f64::from_bits(o) == f64::from_bits(e) { d } else { o };
}

const BASIC: &[(&str, Exec)] = &[
    ("ds_nop", super::nop as Exec),
    ("ds_load_b32", ld!(4, false)),
    ("ds_load_b64", ld!(8, false)),
    ("ds_load_b96", ld!(12, false)),
    ("ds_load_b128", ld!(16, false)),
    ("ds_load_u8", ld!(1, false)),
    ("ds_load_i8", ld!(1, true)),
    ("ds_load_u16", ld!(2, false)),
    ("ds_load_i16", ld!(2, true)),
    ("ds_load_u8_d16", ld16!(1, false, false)),
    ("ds_load_u8_d16_hi", ld16!(1, false, true)),
    ("ds_load_i8_d16", ld16!(1, true, false)),
    ("ds_load_i8_d16_hi", ld16!(1, true, true)),
    ("ds_load_u16_d16", ld16!(2, false, false)),
    ("ds_load_u16_d16_hi", ld16!(2, false, true)),
    ("ds_store_b8", st!(1, 0)),
    ("ds_store_b16", st!(2, 0)),
    ("ds_store_b8_d16_hi", st!(1, 16)),
    ("ds_store_b16_d16_hi", st!(2, 16)),
    ("ds_store_b32", st!(4, 0)),
    ("ds_store_b64", st!(8, 0)),
    ("ds_store_b96", st!(12, 0)),
    ("ds_store_b128", st!(16, 0)),
    (
        "ds_load_2addr_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 1, false)) as Exec,
    ),
    (
        "ds_load_2addr_stride64_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 1, true)) as Exec,
    ),
    (
        "ds_load_2addr_b64",
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 2, false)) as Exec,
    ),
    (
        "ds_load_2addr_stride64_b64",
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 2, true)) as Exec,
    ),
    (
        "ds_store_2addr_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 1, false)) as Exec,
    ),
    (
        "ds_store_2addr_stride64_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 1, true)) as Exec,
    ),
    (
        "ds_store_2addr_b64",
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 2, false)) as Exec,
    ),
    (
        "ds_store_2addr_stride64_b64",
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 2, true)) as Exec,
    ),
    ("ds_storexchg_rtn_b32", at32!(true, |_, d, _| d)),
    ("ds_storexchg_rtn_b64", at64!(true, |_, d, _| d)),
    (
        "ds_storexchg_2addr_rtn_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 1, false)) as Exec,
    ),
    (
        "ds_storexchg_2addr_stride64_rtn_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 1, true)) as Exec,
    ),
    (
        "ds_storexchg_2addr_rtn_b64",
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 2, false)) as Exec,
    ),
    (
        "ds_storexchg_2addr_stride64_rtn_b64",
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 2, true)) as Exec,
    ),
    // Wrapping counter: subtract data0 while the old value is at least
    // data0, else add data1.
    (
        "ds_wrap_rtn_b32",
        at32!(true, |o, d, e| if o >= d {
            o - d
        } else {
            o.wrapping_add(e)
        }),
    ),
    (
        "ds_append",
        (|w: &mut Wave, env: &mut Env, i: &Inst| append(w, env, i, false)) as Exec,
    ),
    (
        "ds_consume",
        (|w: &mut Wave, env: &mut Env, i: &Inst| append(w, env, i, true)) as Exec,
    ),
    (
        "ds_load_addtid_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| addtid(w, env, i)) as Exec,
    ),
    ("ds_swizzle_b32", swizzle as Exec),
    (
        "ds_bpermute_b32",
        (|w: &mut Wave, _: &mut Env, i: &Inst| permute(w, i, true)) as Exec,
    ),
    (
        "ds_permute_b32",
        (|w: &mut Wave, _: &mut Env, i: &Inst| permute(w, i, false)) as Exec,
    ),
];

/// Every DS table.
pub fn tables() -> [&'static [(&'static str, Exec)]; 5] {
    [BASIC, ATOMICS32, ATOMICS64, SHARED32, SHARED64]
}
