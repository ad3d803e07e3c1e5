//! Vector memory: FLAT, GLOBAL, SCRATCH and MUBUF loads, stores and atomics.
//!
//! Every lane's address is resolved to a location in one of the three
//! places a kernel may touch — the device arena, the workgroup's LDS, or the
//! lane's own scratch — and checked there. Generic FLAT addresses are routed
//! by aperture; buffer accesses outside the resource's range read zero and
//! drop writes, as the hardware does.

use softgpu_isa::{flags, Format, Inst, Operand};

use super::ds::lds_write;
use super::float::{d, f, h, to_h};
use super::{Env, Exec, Flow, Result, Trap};
use crate::wave::{Wave, APERTURE_SIZE, PRIVATE_APERTURE, SHARED_APERTURE};

/// Where one lane's access goes.
#[derive(Clone, Copy, Debug)]
enum Loc {
    Global(u64),
    Lds(u64),
    Scratch(u64),
    /// A buffer access outside its resource: reads 0, writes dropped.
    Dropped,
}

fn route_flat(addr: u64) -> Loc {
    if addr.wrapping_sub(SHARED_APERTURE) < APERTURE_SIZE {
        Loc::Lds(addr - SHARED_APERTURE)
    } else if addr.wrapping_sub(PRIVATE_APERTURE) < APERTURE_SIZE {
        Loc::Scratch(addr - PRIVATE_APERTURE)
    } else {
        Loc::Global(addr)
    }
}

/// A buffer resource descriptor (V#), as far as addressing needs it.
struct Resource {
    base: u64,
    stride: u64,
    records: u64,
}

fn resource(w: &Wave, op: Operand) -> Resource {
    let [d0, d1, d2, _] = w.read_sn::<4>(op);
    Resource {
        base: d0 as u64 | ((d1 & 0xffff) as u64) << 32,
        stride: ((d1 >> 16) & 0x3fff) as u64,
        records: d2 as u64,
    }
}

/// Resolves lane `l`'s address for an access of `bytes`.
fn locate(w: &Wave, i: &Inst, format: Format, l: usize, bytes: u64) -> Loc {
    let offset = i.imm as i64 as u64;
    match format {
        Format::Global => {
            let addr = match i.src[2] {
                Operand::None => w.lane64(i.src[0], l),
                saddr => w.read_s64(saddr).wrapping_add(w.lane32(i.src[0], l) as u64),
            };
            Loc::Global(addr.wrapping_add(offset))
        }
        Format::Flat => route_flat(w.lane64(i.src[0], l).wrapping_add(offset)),
        Format::Scratch => {
            let mut addr = offset;
            if i.src[2] != Operand::None {
                addr = addr.wrapping_add(w.read_s32(i.src[2]) as u64);
            }
            if i.src[0] != Operand::None {
                addr = addr.wrapping_add(w.lane32(i.src[0], l) as u64);
            }
            Loc::Scratch(addr & 0xffff_ffff)
        }
        _ => {
            let rsrc = resource(w, i.src[2]);
            let soffset = w.read_s32(i.src[3]) as u64;
            let (mut index, mut voffset) = (0u64, 0u64);
            let (idxen, offen) = (i.flags & flags::IDXEN != 0, i.flags & flags::OFFEN != 0);
            match (idxen, offen) {
                (true, true) => {
                    index = w.get_lane(i.src[0], l, 0) as u64;
                    voffset = w.get_lane(i.src[0], l, 1) as u64;
                }
                (true, false) => index = w.lane32(i.src[0], l) as u64,
                (false, true) => voffset = w.lane32(i.src[0], l) as u64,
                _ => {}
            }
            let off = voffset + (i.imm as u32 as u64 & 0xfff);
            // Raw buffers bound the byte offset; structured buffers
            // (non-zero stride) bound the record index.
            let in_range = if rsrc.stride == 0 {
                off + bytes <= rsrc.records
            } else {
                index < rsrc.records
            };
            if !in_range {
                return Loc::Dropped;
            }
            Loc::Global(
                rsrc.base
                    .wrapping_add(soffset)
                    .wrapping_add(index * rsrc.stride)
                    .wrapping_add(off),
            )
        }
    }
}

fn fault(space: &'static str, l: usize, addr: u64, len: u64) -> Trap {
    Trap::Memory {
        space,
        lane: Some(l),
        addr,
        len,
    }
}

fn scratch_range(w: &Wave, l: usize, addr: u64, len: usize) -> Result<std::ops::Range<usize>> {
    let per_lane = w.scratch_lane_bytes as u64;
    if addr
        .checked_add(len as u64)
        .is_none_or(|end| end > per_lane)
    {
        return Err(fault("scratch", l, addr, len as u64));
    }
    let start = l * w.scratch_lane_bytes + addr as usize;
    Ok(start..start + len)
}

fn read(w: &Wave, env: &Env, l: usize, loc: Loc, out: &mut [u8]) -> Result<()> {
    match loc {
        Loc::Global(a) => env
            .arena
            .read(a, out)
            .map_err(|_| fault("global", l, a, out.len() as u64)),
        Loc::Lds(a) => {
            let end = a
                .checked_add(out.len() as u64)
                .filter(|&e| e <= env.lds.len() as u64);
            match end {
                Some(_) => {
                    out.copy_from_slice(&env.lds[a as usize..a as usize + out.len()]);
                    Ok(())
                }
                None => Err(fault("LDS", l, a, out.len() as u64)),
            }
        }
        Loc::Scratch(a) => {
            let r = scratch_range(w, l, a, out.len())?;
            out.copy_from_slice(&w.scratch[r]);
            Ok(())
        }
        Loc::Dropped => {
            out.fill(0);
            Ok(())
        }
    }
}

fn write(w: &mut Wave, env: &mut Env, l: usize, loc: Loc, data: &[u8]) -> Result<()> {
    match loc {
        Loc::Global(a) => env
            .arena
            .write(a, data)
            .map_err(|_| fault("global", l, a, data.len() as u64)),
        Loc::Lds(a) => lds_write(env.lds, l, a, data),
        Loc::Scratch(a) => {
            let r = scratch_range(w, l, a, data.len())?;
            w.scratch[r].copy_from_slice(data);
            Ok(())
        }
        Loc::Dropped => Ok(()),
    }
}

/// How loaded bytes become register contents.
#[derive(Clone, Copy, PartialEq)]
enum Ext {
    Zero,
    Sign,
    /// 16-bit result into the low half, high half kept.
    D16Lo,
    D16Lo8Sign,
    /// 16-bit result into the high half, low half kept.
    D16Hi,
    D16Hi8Sign,
}

fn load(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, ext: Ext) -> Result {
    let format = i.op.info().format;
    let exec = w.exec();
    let mut buf = [0u8; 16];
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let loc = locate(w, i, format, l, bytes as u64);
        if let (Loc::Global(a), true) = (loc, bytes >= 4) {
            // Whole dwords from device memory: one range check, no bytes.
            let mut dwords = [0u32; 4];
            let d = &mut dwords[..bytes / 4];
            env.arena
                .load_dwords(a, d)
                .map_err(|_| fault("global", l, a, bytes as u64))?;
            for (k, v) in d.iter().enumerate() {
                w.set_lane(i.dst[0], l, k, *v);
            }
            continue;
        }
        read(w, env, l, loc, &mut buf[..bytes])?;
        if bytes >= 4 {
            for k in 0..bytes / 4 {
                let v = u32::from_le_bytes(buf[4 * k..4 * k + 4].try_into().unwrap());
                w.set_lane(i.dst[0], l, k, v);
            }
            continue;
        }
        let raw =
            u32::from_le_bytes(buf[..4].try_into().unwrap()) & ((1u64 << (8 * bytes)) - 1) as u32;
        let signed = if bytes == 1 {
            raw as u8 as i8 as i32 as u32
        } else {
            raw as u16 as i16 as i32 as u32
        };
        let old = w.get_lane(i.dst[0], l, 0);
        let v = match ext {
            Ext::Zero => raw,
            Ext::Sign => signed,
            Ext::D16Lo => (old & 0xffff_0000) | raw,
            Ext::D16Lo8Sign => (old & 0xffff_0000) | (signed & 0xffff),
            Ext::D16Hi => (old & 0xffff) | raw << 16,
            Ext::D16Hi8Sign => (old & 0xffff) | signed << 16,
        };
        w.set_lane(i.dst[0], l, 0, v);
    }
    Ok(Flow::Next)
}

fn store(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, shift: u32) -> Result {
    let format = i.op.info().format;
    let exec = w.exec();
    let mut buf = [0u8; 16];
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let loc = locate(w, i, format, l, bytes as u64);
        if let (Loc::Global(a), true) = (loc, bytes >= 4) {
            let mut dwords = [0u32; 4];
            let d = &mut dwords[..bytes / 4];
            for (k, v) in d.iter_mut().enumerate() {
                *v = w.get_lane(i.src[1], l, k);
            }
            env.arena
                .store_dwords(a, d)
                .map_err(|_| fault("global", l, a, bytes as u64))?;
            continue;
        }
        for k in 0..bytes.div_ceil(4) {
            let v = w.get_lane(i.src[1], l, k) >> shift;
            let n = (bytes - 4 * k).min(4);
            buf[4 * k..4 * k + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        write(w, env, l, loc, &buf[..bytes])?;
    }
    Ok(Flow::Next)
}

/// 32-bit atomic: new = f(old, data, compare). Returns old when GLC is set.
#[inline(always)]
fn atomic32(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    cmp: bool,
    op: impl Fn(u32, u32, u32) -> u32,
) -> Result {
    let format = i.op.info().format;
    let exec = w.exec();
    let ret = i.flags & flags::GLC != 0;
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let data = w.get_lane(i.src[1], l, 0);
        let compare = if cmp { w.get_lane(i.src[1], l, 1) } else { 0 };
        let old = match locate(w, i, format, l, 4) {
            Loc::Global(a) => env
                .arena
                .rmw_u32(a, |o| op(o, data, compare))
                .map_err(|_| fault("global", l, a, 4))?,
            loc => {
                let mut b = [0u8; 4];
                read(w, env, l, loc, &mut b)?;
                let old = u32::from_le_bytes(b);
                write(w, env, l, loc, &op(old, data, compare).to_le_bytes())?;
                old
            }
        };
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
    cmp: bool,
    op: impl Fn(u64, u64, u64) -> u64,
) -> Result {
    let format = i.op.info().format;
    let exec = w.exec();
    let ret = i.flags & flags::GLC != 0;
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let pair = |w: &Wave, k: usize| {
            w.get_lane(i.src[1], l, k) as u64 | (w.get_lane(i.src[1], l, k + 1) as u64) << 32
        };
        let data = pair(w, 0);
        let compare = if cmp { pair(w, 2) } else { 0 };
        let old = match locate(w, i, format, l, 8) {
            Loc::Global(a) => env
                .arena
                .rmw_u64(a, |o| op(o, data, compare))
                .map_err(|_| fault("global", l, a, 8))?,
            loc => {
                let mut b = [0u8; 8];
                read(w, env, l, loc, &mut b)?;
                let old = u64::from_le_bytes(b);
                write(w, env, l, loc, &op(old, data, compare).to_le_bytes())?;
                old
            }
        };
        if ret {
            w.set_lane(i.dst[0], l, 0, old as u32);
            w.set_lane(i.dst[0], l, 1, (old >> 32) as u32);
        }
    }
    Ok(Flow::Next)
}

macro_rules! ld {
    ($bytes:expr, $ext:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| load(w, env, i, $bytes, $ext)) as Exec
    };
}
macro_rules! st {
    ($bytes:expr, $shift:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| store(w, env, i, $bytes, $shift)) as Exec
    };
}
macro_rules! at32 {
    ($cmp:expr, $f:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| atomic32(w, env, i, $cmp, $f)) as Exec
    };
}
macro_rules! at64 {
    ($cmp:expr, $f:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| atomic64(w, env, i, $cmp, $f)) as Exec
    };
}

/// Operation suffixes shared by the flat, global and buffer families.
const OPS: &[(&str, Exec)] = &[
    ("load_b32", ld!(4, Ext::Zero)),
    ("load_b64", ld!(8, Ext::Zero)),
    ("load_b96", ld!(12, Ext::Zero)),
    ("load_b128", ld!(16, Ext::Zero)),
    ("load_u8", ld!(1, Ext::Zero)),
    ("load_i8", ld!(1, Ext::Sign)),
    ("load_u16", ld!(2, Ext::Zero)),
    ("load_i16", ld!(2, Ext::Sign)),
    ("load_d16_u8", ld!(1, Ext::D16Lo)),
    ("load_d16_i8", ld!(1, Ext::D16Lo8Sign)),
    ("load_d16_b16", ld!(2, Ext::D16Lo)),
    ("load_d16_hi_u8", ld!(1, Ext::D16Hi)),
    ("load_d16_hi_i8", ld!(1, Ext::D16Hi8Sign)),
    ("load_d16_hi_b16", ld!(2, Ext::D16Hi)),
    ("store_b8", st!(1, 0)),
    ("store_b16", st!(2, 0)),
    ("store_b32", st!(4, 0)),
    ("store_b64", st!(8, 0)),
    ("store_b96", st!(12, 0)),
    ("store_b128", st!(16, 0)),
    ("store_d16_hi_b8", st!(1, 16)),
    ("store_d16_hi_b16", st!(2, 16)),
    ("atomic_swap_b32", at32!(false, |_, d, _| d)),
    (
        "atomic_cmpswap_b32",
        at32!(true, |o, d, c| if o == c { d } else { o }),
    ),
    (
        "atomic_csub_u32",
        at32!(false, |o, d, _| o.saturating_sub(d)),
    ),
    (
        "atomic_cmpswap_f32",
        at32!(true, |o, d, c| if f(o) == f(c) { d } else { o }),
    ),
    (
        "atomic_pk_add_f16",
        at32!(false, |o, d, _| to_h(h(o) + h(d))
            | to_h(h(o >> 16) + h(d >> 16)) << 16),
    ),
    (
        "atomic_pk_add_bf16",
        at32!(false, |o, d, _| bf16_add(o, d)
            | bf16_add(o >> 16, d >> 16) << 16),
    ),
    ("atomic_swap_b64", at64!(false, |_, d, _| d)),
    (
        "atomic_cmpswap_b64",
        at64!(true, |o, d, c| if o == c { d } else { o }),
    ),
    (
        "atomic_add_f64",
        at64!(false, |o, dd, _| (d(o) + d(dd)).to_bits()),
    ),
];

fn bf16_add(a: u32, b: u32) -> u32 {
    let s = f32::from_bits((a & 0xffff) << 16) + f32::from_bits((b & 0xffff) << 16);
    let bits = s.to_bits();
    // Round to nearest even on the dropped 16 bits.
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) & 0xffff
}

/// The shared read-modify-write operations as `atomic_OP_TYPE`.
macro_rules! vmem_shared32 {
    ($($op:literal, $ty:literal => $f:expr;)*) => {
        const SHARED32: &[(&str, Exec)] = &[$((concat!("atomic_", $op, "_", $ty), at32!(false, $f)),)*];
    };
}
macro_rules! vmem_shared64 {
    ($($op:literal, $ty:literal => $f:expr;)*) => {
        const SHARED64: &[(&str, Exec)] = &[$((concat!("atomic_", $op, "_", $ty), at64!(false, $f)),)*];
    };
}
shared_rmw32!(vmem_shared32);
shared_rmw64!(vmem_shared64);

/// Every mnemonic of the vector-memory families: the shared operation
/// suffixes under each family prefix.
pub fn entries() -> impl Iterator<Item = (String, Exec)> {
    ["global_", "flat_", "scratch_", "buffer_"]
        .into_iter()
        .flat_map(|prefix| {
            OPS.iter()
                .chain(SHARED32)
                .chain(SHARED64)
                .filter(move |(op, _)| !(prefix == "scratch_" && op.starts_with("atomic")))
                .map(move |(op, exec)| (format!("{prefix}{op}"), *exec))
        })
}

/// `global_load/store_addtid_b32`: no address VGPR; lane `l` accesses
/// saddr + offset + 4·l.
fn addtid(w: &mut Wave, env: &mut Env, i: &Inst, store: bool) -> Result {
    let exec = w.exec();
    let base = w.read_s64(i.src[2]).wrapping_add(i.imm as i64 as u64);
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let loc = Loc::Global(base.wrapping_add(4 * l as u64));
        if store {
            let v = w.get_lane(i.src[1], l, 0);
            write(w, env, l, loc, &v.to_le_bytes())?;
        } else {
            let mut b = [0u8; 4];
            read(w, env, l, loc, &mut b)?;
            w.set_lane(i.dst[0], l, 0, u32::from_le_bytes(b));
        }
    }
    Ok(Flow::Next)
}

pub const TABLE: &[(&str, Exec)] = &[
    (
        "global_load_addtid_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| addtid(w, env, i, false)) as Exec,
    ),
    (
        "global_store_addtid_b32",
        (|w: &mut Wave, env: &mut Env, i: &Inst| addtid(w, env, i, true)) as Exec,
    ),
    ("buffer_gl0_inv", super::nop as Exec),
    ("buffer_gl1_inv", super::nop as Exec),
];
