//! DS: LDS loads, stores, atomics and the LDS-routed lane permutes.
//!
//! A workgroup's waves run on one host thread, so LDS atomics are ordinary
//! read-modify-writes, done lane by lane in lane order.

use softgpu_isa::{Inst, Num, Op, Operand, Rmw};

use super::{lane_addrs, Env, Exec, Flow, Result, Trap};
use crate::float::{f, flush32};
use crate::trap::Use;
use crate::wave::{Mode, Wave, MAX_LANES};
use softgpu_arena::Lanes;

/// Reads `N` bytes of LDS at `addr`. Out of range (any byte at or past
/// the LDS size) reads zero: "Reads return the value zero. For multi-DWORD
/// reads, if any part of the LDS-address is out of range, the entire
/// instruction returns zero" (RDNA3 ISA §3.3.4.1; MEMVIOL is reported only
/// when LDS_CONFIG enables it, which ROCm does not).
#[inline(always)]
pub fn lds_read<const N: usize>(lds: &[u8], addr: u64) -> [u8; N] {
    match lds_range(lds, addr, N) {
        Some(r) => lds[r].try_into().unwrap(),
        None => [0; N],
    }
}

/// Writes `data` to LDS at `addr`; an out-of-range write is discarded
/// (§3.3.4.1 "Writes out-of-range are discarded").
#[inline(always)]
pub fn lds_write(lds: &mut [u8], addr: u64, data: &[u8]) {
    if let Some(r) = lds_range(lds, addr, data.len()) {
        lds[r].copy_from_slice(data);
    }
}

/// The byte range `[addr, addr + len)` when all of it lies in LDS.
#[inline(always)]
pub fn lds_range(lds: &[u8], addr: u64, len: usize) -> Option<std::ops::Range<usize>> {
    let end = addr.checked_add(len as u64)?;
    (end <= lds.len() as u64).then_some(addr as usize..end as usize)
}

fn base(w: &Wave, i: &Inst, l: usize) -> u64 {
    w.lane32(i.src[0], l) as u64
}

/// An LDS address: the address VGPR plus an offset, in 32 bits. The sum
/// wraps, as the hardware's does: LLVM folds a constant offset into a DS
/// instruction whatever the sign of the base it computed (every generation
/// since CI, `isDSOffsetLegal`), so code such as `lds[(N - i) + k]`
/// arrives as a "negative" base `k - i` with `offset:N`.
#[inline(always)]
fn at(base: u64, offset: u64) -> u64 {
    (base as u32).wrapping_add(offset as u32) as u64
}

fn offset16(i: &Inst) -> u64 {
    i.imm as u32 as u64 & 0xffff
}

/// The wave-wide address pass: every lane's address (the address operand
/// plus `offset`) into `out`, reading the address VGPR's lanes once, as
/// the EXEC lanes with their bounds. A fast path takes the wave when the
/// highest address plus the access's reach lies in LDS ([`fits`]), so no
/// lane needs the out-of-range rules.
fn ds_addrs<'a>(w: &Wave, i: &Inst, offset: u64, out: &'a mut Addrs) -> Lanes<'a> {
    let exec = w.exec();
    match i.src[0] {
        Operand::Vgpr(r) => {
            let row = &w.vgpr[r as usize];
            lane_addrs(w.lanes, exec, out, |l| at(row[l] as u64, offset))
        }
        _ => lane_addrs(w.lanes, exec, out, |l| at(base(w, i, l), offset)),
    }
}

/// Whether every selected lane's access, reaching `reach` bytes past its
/// address, lies in LDS (true when no lane is selected).
fn fits(lds: &[u8], lanes: &Lanes, reach: u64) -> bool {
    let hi = lanes.bounds().map_or(0, |(_, hi)| hi);
    hi + reach <= lds.len() as u64
}

type Addrs = [u64; MAX_LANES];

/// The VGPR holding dword `k` of the range at `op`, when `op` is a VGPR.
fn vgpr(op: Operand, k: usize) -> Option<usize> {
    match op {
        Operand::Vgpr(r) => Some(r as usize + k),
        _ => None,
    }
}

/// Dword `k` of a `bytes`-byte load at `addr`, sign- or zero-extended to a
/// dword when narrower.
#[inline(always)]
fn loaded(lds: &[u8], addr: u64, bytes: usize, signed: bool, k: usize) -> u32 {
    match bytes {
        1 => {
            let [b] = lds_read::<1>(lds, addr);
            if signed {
                b as i8 as i32 as u32
            } else {
                b as u32
            }
        }
        2 => {
            let v = u16::from_le_bytes(lds_read::<2>(lds, addr));
            if signed {
                v as i16 as i32 as u32
            } else {
                v as u32
            }
        }
        _ => u32::from_le_bytes(lds_read::<4>(lds, addr + 4 * k as u64)),
    }
}

/// Loads `bytes` (sign- or zero-extended to dwords) into `dst`. A
/// multi-dword load partly out of range returns zero for all of it
/// (§3.3.4.1).
fn load(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, signed: bool) -> Result {
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds_lanes(w, Use::Read, bytes as u64, |w, l| {
            at(base(w, i, l), offset16(i))
        })?;
    }
    let mut addrs = [0; MAX_LANES];
    let lanes = ds_addrs(w, i, offset16(i), &mut addrs);
    if vgpr(i.dst[0], 0).is_some() && fits(env.lds, &lanes, bytes as u64) {
        for k in 0..bytes.div_ceil(4) {
            let row = w.row(vgpr(i.dst[0], k).unwrap());
            let row = &mut w.vgpr[row];
            lanes.for_each(|l, addr| row[l] = loaded(env.lds, addr, bytes, signed, k));
        }
        return Ok(Flow::Next);
    }
    lanes.for_each(|l, addr| {
        let in_range = lds_range(env.lds, addr, bytes).is_some();
        for k in 0..bytes.div_ceil(4) {
            let v = if bytes <= 2 || in_range {
                loaded(env.lds, addr, bytes, signed, k)
            } else {
                0
            };
            w.set_lane(i.dst[0], l, k, v);
        }
    });
    Ok(Flow::Next)
}

/// 16-bit loads into one half of the destination (`_d16` / `_d16_hi`).
/// These are single-dword accesses, so out of range only the lane's own
/// half reads zero and no lane needs a slow path.
fn load_d16(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, signed: bool, hi: bool) -> Result {
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds_lanes(w, Use::Read, bytes as u64, |w, l| {
            at(base(w, i, l), offset16(i))
        })?;
    }
    let mut addrs = [0; MAX_LANES];
    let lanes = ds_addrs(w, i, offset16(i), &mut addrs);
    let Some(d) = vgpr(i.dst[0], 0) else {
        return Ok(Flow::Next);
    };
    let row = &mut w.vgpr[d];
    lanes.for_each(|l, addr| {
        // `loaded` sign-extends to 32 bits; the half keeps the low 16.
        let v = loaded(env.lds, addr, bytes, signed, 0) & 0xffff;
        row[l] = if hi {
            (row[l] & 0xffff) | v << 16
        } else {
            (row[l] & 0xffff_0000) | v
        };
    });
    Ok(Flow::Next)
}

/// Stores `bytes` from data0 (starting at bit `shift` for `_d16_hi`), lane
/// by lane in lane order (so of lanes storing to the same bytes, the last
/// wins); an out-of-range lane's write is discarded.
fn store(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, shift: u32) -> Result {
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds_lanes(w, Use::Write, bytes as u64, |w, l| {
            at(base(w, i, l), offset16(i))
        })?;
    }
    let mut addrs = [0; MAX_LANES];
    let lanes = ds_addrs(w, i, offset16(i), &mut addrs);
    // Whole dwords from VGPR rows, every lane in range: no per-lane checks,
    // still in lane order.
    if shift == 0 && bytes >= 4 && fits(env.lds, &lanes, bytes as u64) {
        if let Some(s) = vgpr(i.src[1], 0) {
            let row = |k: usize| &w.vgpr[w.row(s + k)];
            match bytes {
                4 => store_rows(env.lds, &lanes, [row(0)]),
                8 => store_rows(env.lds, &lanes, [row(0), row(1)]),
                12 => store_rows(env.lds, &lanes, [row(0), row(1), row(2)]),
                _ => store_rows(env.lds, &lanes, [row(0), row(1), row(2), row(3)]),
            }
            return Ok(Flow::Next);
        }
    }
    // Otherwise the bounds check is `lds_write`'s, lane by lane.
    lanes.for_each(|l, addr| {
        let mut buf = [0u8; 16];
        for k in 0..bytes.div_ceil(4) {
            let v = w.get_lane(i.src[1], l, k) >> shift;
            buf[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        lds_write(env.lds, addr, &buf[..bytes]);
    });
    Ok(Flow::Next)
}

/// Stores dword `k` of each lane's data from `rows[k]`, lane by lane in
/// lane order (of two lanes whose bytes overlap, the later wins); every
/// lane's `4 * N` bytes lie in LDS ([`fits`]).
#[inline(always)]
fn store_rows<const N: usize>(lds: &mut [u8], lanes: &Lanes, rows: [&[u32; MAX_LANES]; N]) {
    lanes.for_each(|l, a| {
        let mut data = [[0u8; 4]; N];
        for (d, row) in data.iter_mut().zip(&rows) {
            *d = row[l].to_le_bytes();
        }
        let a = a as usize;
        lds[a..a + 4 * N].copy_from_slice(data.as_flattened());
    });
}

/// `ds_load_2addr*`: two loads at offset0 and offset1 scaled by the size.
fn load2(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, stride64: bool) -> Result {
    let scale = (4 * dwords as u64) * if stride64 { 64 } else { 1 };
    let (o0, o1) = ((i.imm as u64) & 0xff, (i.imm as u64 >> 8) & 0xff);
    if let Some(s) = env.sanitizer.as_mut() {
        for off in [o0, o1] {
            s.lds_lanes(w, Use::Read, 4 * dwords as u64, |w, l| {
                at(base(w, i, l), off * scale)
            })?;
        }
    }
    let mut addrs = [0; MAX_LANES];
    let reach = o0.max(o1) * scale + 4 * dwords as u64;
    let lanes = ds_addrs(w, i, 0, &mut addrs);
    if vgpr(i.dst[0], 0).is_some() && fits(env.lds, &lanes, reach) {
        for (slot, off) in [o0, o1].into_iter().enumerate() {
            for k in 0..dwords {
                let row = w.row(vgpr(i.dst[0], slot * dwords + k).unwrap());
                let row = &mut w.vgpr[row];
                let at = off * scale + 4 * k as u64;
                lanes.for_each(|l, a| {
                    row[l] = u32::from_le_bytes(lds_read::<4>(env.lds, a + at));
                });
            }
        }
        return Ok(Flow::Next);
    }
    lanes.for_each(|l, b| {
        for (slot, off) in [o0, o1].into_iter().enumerate() {
            let addr = at(b, off * scale);
            let in_range = lds_range(env.lds, addr, 4 * dwords).is_some();
            for k in 0..dwords {
                let v = if in_range {
                    u32::from_le_bytes(lds_read::<4>(env.lds, addr + 4 * k as u64))
                } else {
                    0
                };
                w.set_lane(i.dst[0], l, slot * dwords + k, v);
            }
        }
    });
    Ok(Flow::Next)
}

/// `ds_store_2addr*`: two stores, lane by lane in lane order, each
/// discarded when out of range.
fn store2(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, stride64: bool) -> Result {
    let scale = (4 * dwords as u64) * if stride64 { 64 } else { 1 };
    let (o0, o1) = ((i.imm as u64) & 0xff, (i.imm as u64 >> 8) & 0xff);
    if let Some(s) = env.sanitizer.as_mut() {
        for off in [o0, o1] {
            s.lds_lanes(w, Use::Write, 4 * dwords as u64, |w, l| {
                at(base(w, i, l), off * scale)
            })?;
        }
    }
    let mut addrs = [0; MAX_LANES];
    // The bounds check is `lds_write`'s; the pass reads the addresses once.
    let lanes = ds_addrs(w, i, 0, &mut addrs);
    lanes.for_each(|l, a| {
        for (data, off) in [(i.src[1], o0), (i.src[2], o1)] {
            let mut buf = [0u8; 8];
            for k in 0..dwords {
                buf[4 * k..4 * k + 4].copy_from_slice(&w.get_lane(data, l, k).to_le_bytes());
            }
            lds_write(env.lds, at(a, off * scale), &buf[..4 * dwords]);
        }
    });
    Ok(Flow::Next)
}

/// 32-bit atomic: new = f(old, data0, data1, MODE); returns old into dst if
/// `ret`. Out of range, the read gives zero and the write is discarded.
#[inline(always)]
fn atomic32(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    ret: bool,
    op: impl Fn(u32, u32, u32, Mode) -> u32,
) -> Result {
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds_lanes(w, Use::Atomic, 4, |w, l| at(base(w, i, l), offset16(i)))?;
    }
    let exec = w.exec();
    let mode = w.mode;
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = at(base(w, i, l), offset16(i));
        let old = u32::from_le_bytes(lds_read::<4>(env.lds, addr));
        let new = op(old, w.lane32(i.src[1], l), w.lane32(i.src[2], l), mode);
        lds_write(env.lds, addr, &new.to_le_bytes());
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
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds_lanes(w, Use::Atomic, 8, |w, l| at(base(w, i, l), offset16(i)))?;
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = at(base(w, i, l), offset16(i));
        let old = u64::from_le_bytes(lds_read::<8>(env.lds, addr));
        let new = op(old, w.lane64(i.src[1], l), w.lane64(i.src[2], l));
        lds_write(env.lds, addr, &new.to_le_bytes());
        if ret {
            w.set_lane(i.dst[0], l, 0, old as u32);
            w.set_lane(i.dst[0], l, 1, (old >> 32) as u32);
        }
    }
    Ok(Flow::Next)
}

/// `ds_add_f32`: "Float 32 bit adder uses both input and output denorm
/// flush controls from MODE" (§13.2); rounding is always to nearest even
/// (§13.1).
fn add_f32(o: u32, d: u32, mode: Mode) -> u32 {
    let input = |x: u32| {
        if mode.bits >> 4 & 1 == 0 {
            flush32(x)
        } else {
            x
        }
    };
    let sum = (f(input(o)) + f(input(d))).to_bits();
    if mode.bits >> 5 & 1 == 0 {
        flush32(sum)
    } else {
        sum
    }
}

/// `ds_swizzle_b32`: lane permutation within groups of 32 by the
/// instruction's offset: bitmask mode (offset[15] = 0: and, or, xor masks
/// of the 5-bit lane id), quad-permute mode (offset[15:13] = 0b100 or
/// 0b101: a lane from each group of 4), FFT mode (offset >= 0xe000: the
/// bit-reversed lane id, shifted right by the number of mask bits, with the
/// mask's bits of the own id kept), as the RDNA3 guide's pseudocode gives.
/// The rotate mode (0xc000..=0xdfff, LLVM's `swizzle(ROTATE, dir, n)`) is
/// not defined in the RDNA3 guide, so it is refused by name.
fn swizzle(w: &mut Wave, _: &mut Env, i: &Inst) -> Result {
    let pattern = offset16(i) as usize;
    if (0xc000..0xe000).contains(&pattern) {
        return Err(Trap::UnsupportedForm {
            op: i.op,
            why: format!("rotate mode (offset {pattern:#x}) is not supported"),
        });
    }
    let exec = w.exec();
    // The data register sits in the address field of the encoding.
    let data = if i.src[1] != Operand::None {
        i.src[1]
    } else {
        i.src[0]
    };
    let Operand::Vgpr(r) = data else {
        return Err(Trap::NotAVgpr {
            role: "ds_swizzle's data",
            operand: data,
        });
    };
    let src = w.vgpr[r as usize];
    let mut res = [0u32; MAX_LANES];
    for (l, out) in res[..w.lanes].iter_mut().enumerate() {
        let s = if pattern >= 0xe000 {
            let mask = pattern & 0x1f;
            let reversed = ((l & 0x1f) as u32).reverse_bits() as usize >> 27;
            (reversed >> mask.count_ones()) | (l & mask) | (l & 0x20)
        } else if pattern & 0x8000 != 0 {
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
/// The lane index is taken mod 32 "regardless of wave size" (the RDNA
/// guides' pseudocode): in wave64 each half permutes within itself, as
/// gfx10/gfx11 hardware does (LLVM and HIP build wave-wide shuffles on
/// these targets from two bpermutes and `v_permlane64`). GCN's crossbar
/// spans the whole wave (`flags::GCN_CROSS_LANE`: the index mod 64, CDNA3
/// guide's DS_BPERMUTE_B32), which HIP's `__shfl` relies on there.
fn permute(w: &mut Wave, i: &Inst, pull: bool) -> Result {
    let exec = w.exec();
    let n = w.lanes;
    let span = if i.flags & softgpu_isa::flags::GCN_CROSS_LANE != 0 {
        64
    } else {
        32
    };
    let mut res = [0u32; MAX_LANES];
    for l in 0..n {
        if exec >> l & 1 == 0 {
            continue;
        }
        let index = (at(base(w, i, l), offset16(i)) / 4) as usize % span;
        // RDNA's wave64 keeps each half to itself.
        let half = if span == 32 { l & 32 } else { 0 };
        let target = half | index;
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
    if let Some(s) = env.sanitizer.as_mut() {
        for off in [o0, o1] {
            for k in 0..dwords as u64 {
                s.lds_lanes(w, Use::Atomic, 4, |w, l| {
                    at(base(w, i, l), off * scale + 4 * k)
                })?;
            }
        }
    }
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let b = base(w, i, l);
        for (slot, (data, off)) in [(i.src[1], o0), (i.src[2], o1)].into_iter().enumerate() {
            for k in 0..dwords {
                let addr = at(b, off * scale + 4 * k as u64);
                let old = u32::from_le_bytes(lds_read::<4>(env.lds, addr));
                lds_write(env.lds, addr, &w.get_lane(data, l, k).to_le_bytes());
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
    let addr = m0_lo(w) + offset16(i);
    if let Some(s) = env.sanitizer.as_mut() {
        s.lds(w, None, Use::Atomic, addr, 4)?;
    }
    let old = u32::from_le_bytes(lds_read::<4>(env.lds, addr));
    let n = exec.count_ones();
    let new = if consume {
        old.wrapping_sub(n)
    } else {
        old.wrapping_add(n)
    };
    lds_write(env.lds, addr, &new.to_le_bytes());
    let mut res = [0u32; MAX_LANES];
    res[..w.lanes].fill(old);
    w.write_v32(i.dst[0], &res, exec);
    Ok(Flow::Next)
}

/// `ds_gws_barrier`: the wave arrives at GWS barrier M0[21:16] + offset,
/// which completes once data0 + 1 waves (data0 of the first active lane,
/// LLVM's `bar_val`: the waves that wait, minus one) have arrived.
fn gws_barrier(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let exec = w.exec();
    if exec == 0 {
        return Ok(Flow::Next);
    }
    let lane = exec.trailing_zeros() as usize;
    let waves = w.get_lane(i.src[0], lane, 0).wrapping_add(1);
    let m0 = w.sgpr[softgpu_isa::sreg::M0 as usize];
    let resource = ((m0 >> 16) & 0x3f) + offset16(i) as u32;
    env.gws
        .barrier(resource, waves)
        .map_err(Trap::GridBarrier)?;
    if let Some(s) = env.sanitizer.as_mut() {
        s.grid_barrier();
    }
    Ok(Flow::Next)
}

/// M0[15:0], the LDS byte offset of the M0-addressed DS ops.
fn m0_lo(w: &Wave) -> u64 {
    (w.sgpr[softgpu_isa::sreg::M0 as usize] & 0xffff) as u64
}

/// `ds_load_addtid_b32` / `ds_store_addtid_b32`: no address VGPR; lane L
/// accesses {OFFSET1, OFFSET0} + M0[15:0] + L*4 (§16.15). The store's data
/// is DATA0, which the decoder reports as the second source (there is no
/// ADDR).
fn addtid(w: &mut Wave, env: &mut Env, i: &Inst, store: bool) -> Result {
    let exec = w.exec();
    let base = m0_lo(w) + offset16(i);
    if let Some(s) = env.sanitizer.as_mut() {
        let u = if store { Use::Write } else { Use::Read };
        s.lds_lanes(w, u, 4, |_, l| base + 4 * l as u64)?;
    }
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = base + 4 * l as u64;
        if store {
            lds_write(env.lds, addr, &w.lane32(i.src[1], l).to_le_bytes());
        } else {
            let v = u32::from_le_bytes(lds_read::<4>(env.lds, addr));
            w.set_lane(i.dst[0], l, 0, v);
        }
    }
    Ok(Flow::Next)
}

/// `ds_condxchg32_rtn_b64` (§16.15): at ADDR0 = (addr + offset) & 0xfff8 and
/// ADDR1 = ADDR0 + 4 both old dwords are returned, and dword k is replaced
/// by DATA's dword k with bit 31 cleared only when that bit was set.
fn condxchg32(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let exec = w.exec();
    if let Some(s) = env.sanitizer.as_mut() {
        for k in 0..2 {
            s.lds_lanes(w, Use::Atomic, 4, |w, l| {
                ((at(base(w, i, l), offset16(i))) & 0xfff8) + 4 * k
            })?;
        }
    }
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr0 = (at(base(w, i, l), offset16(i))) & 0xfff8;
        for k in 0..2 {
            let addr = addr0 + 4 * k as u64;
            let old = u32::from_le_bytes(lds_read::<4>(env.lds, addr));
            let data = w.get_lane(i.src[1], l, k);
            if data >> 31 != 0 {
                lds_write(env.lds, addr, &(data & 0x7fff_ffff).to_le_bytes());
            }
            w.set_lane(i.dst[0], l, k, old);
        }
    }
    Ok(Flow::Next)
}

macro_rules! at32 {
    ($ret:expr, $f:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| {
            let f: fn(u32, u32, u32) -> u32 = $f;
            atomic32(w, env, i, $ret, |o, d, e, _| f(o, d, e))
        }) as Exec
    };
}

/// Both forms of an atomic: without and with return of the old value.
macro_rules! atomics32 {
    ($($name:ident, $rtn:ident => $f:expr;)*) => {
        const ATOMICS32: &[(Op, Exec)] = &[$((Op::$name, at32!(false, $f)), (Op::$rtn, at32!(true, $f)),)*];
    };
}
/// The shared operations as DS handlers, keyed by their class: without
/// and with return (`ds_OP_TYPE`, `ds_OP_rtn_TYPE`).
type RmwEntry = (Rmw, Num, bool, Exec);

macro_rules! ds_shared32 {
    ($($op:ident, $ty:ident => $f:expr;)*) => {
        const SHARED32: &[RmwEntry] = &[$(
            (Rmw::$op, Num::$ty, false, at32!(false, $f)),
            (Rmw::$op, Num::$ty, true, at32!(true, $f)),
        )*];
    };
}
macro_rules! ds_shared64 {
    ($($op:ident, $ty:ident => $f:expr;)*) => {
        const SHARED64: &[RmwEntry] = &[$(
            (Rmw::$op, Num::$ty, false, bind!(atomic64, false, $f)),
            (Rmw::$op, Num::$ty, true, bind!(atomic64, true, $f)),
        )*];
    };
}
shared_rmw32!(ds_shared32);
shared_rmw64!(ds_shared64);

macro_rules! atomics64 {
    ($($name:ident, $rtn:ident => $f:expr;)*) => {
        const ATOMICS64: &[(Op, Exec)] = &[$((Op::$name, bind!(atomic64, false, $f)), (Op::$rtn, bind!(atomic64, true, $f)),)*];
    };
}

atomics32! {
    DS_RSUB_U32, DS_RSUB_RTN_U32 => |o, d, _| d.wrapping_sub(o);
    DS_MSKOR_B32, DS_MSKOR_RTN_B32 => |o, d, e| (o & !d) | e;
    DS_CMPSTORE_B32, DS_CMPSTORE_RTN_B32 => |o, d, e| if o == e { d } else { o };
    DS_CMPSTORE_F32, DS_CMPSTORE_RTN_F32 => |o, d, e| if f(o) == f(e) { d } else { o };
    DS_COND_SUB_U32, DS_COND_SUB_RTN_U32 => super::rmw::cond_sub;
    DS_SUB_CLAMP_U32, DS_SUB_CLAMP_RTN_U32 => super::rmw::sub_clamp;
    DS_MIN_NUM_F32, DS_MIN_NUM_RTN_F32 => super::rmw::min_num32;
    DS_MAX_NUM_F32, DS_MAX_NUM_RTN_F32 => super::rmw::max_num32;
    DS_PK_ADD_F16, DS_PK_ADD_RTN_F16 => super::rmw::pk_add_f16;
    DS_PK_ADD_BF16, DS_PK_ADD_RTN_BF16 => super::rmw::pk_add_bf16;
    // gfx10's compare-store takes the compare value in DATA0 and the new
    // one in DATA1 (RDNA2 guide, DS_CMPST_B32: cmp is DATA, src DATA2),
    // the reverse of gfx11's `ds_cmpstore` (clang-19 passes cmpxchg's
    // expected value as DATA0 for gfx1030 and as DATA1 for gfx1100).
    DS_CMPST_B32, DS_CMPST_RTN_B32 => |o, d, e| if o == d { e } else { o };
    DS_CMPST_F32, DS_CMPST_RTN_F32 => |o, d, e| if f(o) == f(d) { e } else { o };
}

atomics64! {
    DS_RSUB_U64, DS_RSUB_RTN_U64 => |o, d, _| d.wrapping_sub(o);
    DS_MSKOR_B64, DS_MSKOR_RTN_B64 => |o, d, e| (o & !d) | e;
    DS_CMPSTORE_B64, DS_CMPSTORE_RTN_B64 => |o, d, e| if o == e { d } else { o };
    DS_CMPSTORE_F64, DS_CMPSTORE_RTN_F64 => |o, d, e| if f64::from_bits(o) == f64::from_bits(e) { d } else { o };
    DS_MIN_NUM_F64, DS_MIN_NUM_RTN_F64 => super::rmw::min_num64;
    DS_MAX_NUM_F64, DS_MAX_NUM_RTN_F64 => super::rmw::max_num64;
    // gfx10's, DATA0 the compare value (see the 32-bit ones).
    DS_CMPST_B64, DS_CMPST_RTN_B64 => |o, d, e| if o == d { e } else { o };
    DS_CMPST_F64, DS_CMPST_RTN_F64 => |o, d, e| if f64::from_bits(o) == f64::from_bits(d) { e } else { o };
}

const BASIC: &[(Op, Exec)] = &[
    (Op::DS_LOAD_B32, bind!(load, 4, false)),
    (Op::DS_LOAD_B64, bind!(load, 8, false)),
    (Op::DS_LOAD_B96, bind!(load, 12, false)),
    (Op::DS_LOAD_B128, bind!(load, 16, false)),
    (Op::DS_LOAD_U8, bind!(load, 1, false)),
    (Op::DS_LOAD_I8, bind!(load, 1, true)),
    (Op::DS_LOAD_U16, bind!(load, 2, false)),
    (Op::DS_LOAD_I16, bind!(load, 2, true)),
    (Op::DS_LOAD_U8_D16, bind!(load_d16, 1, false, false)),
    (Op::DS_LOAD_U8_D16_HI, bind!(load_d16, 1, false, true)),
    (Op::DS_LOAD_I8_D16, bind!(load_d16, 1, true, false)),
    (Op::DS_LOAD_I8_D16_HI, bind!(load_d16, 1, true, true)),
    (Op::DS_LOAD_U16_D16, bind!(load_d16, 2, false, false)),
    (Op::DS_LOAD_U16_D16_HI, bind!(load_d16, 2, false, true)),
    (Op::DS_STORE_B8, bind!(store, 1, 0)),
    (Op::DS_STORE_B16, bind!(store, 2, 0)),
    (Op::DS_STORE_B8_D16_HI, bind!(store, 1, 16)),
    (Op::DS_STORE_B16_D16_HI, bind!(store, 2, 16)),
    (Op::DS_STORE_B32, bind!(store, 4, 0)),
    (Op::DS_STORE_B64, bind!(store, 8, 0)),
    (Op::DS_STORE_B96, bind!(store, 12, 0)),
    (Op::DS_STORE_B128, bind!(store, 16, 0)),
    (
        Op::DS_LOAD_2ADDR_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 1, false)) as Exec,
    ),
    (
        Op::DS_LOAD_2ADDR_STRIDE64_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 1, true)) as Exec,
    ),
    (
        Op::DS_LOAD_2ADDR_B64,
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 2, false)) as Exec,
    ),
    (
        Op::DS_LOAD_2ADDR_STRIDE64_B64,
        (|w: &mut Wave, env: &mut Env, i: &Inst| load2(w, env, i, 2, true)) as Exec,
    ),
    (
        Op::DS_STORE_2ADDR_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 1, false)) as Exec,
    ),
    (
        Op::DS_STORE_2ADDR_STRIDE64_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 1, true)) as Exec,
    ),
    (
        Op::DS_STORE_2ADDR_B64,
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 2, false)) as Exec,
    ),
    (
        Op::DS_STORE_2ADDR_STRIDE64_B64,
        (|w: &mut Wave, env: &mut Env, i: &Inst| store2(w, env, i, 2, true)) as Exec,
    ),
    (Op::DS_STOREXCHG_RTN_B32, at32!(true, |_, d, _| d)),
    (Op::DS_STOREXCHG_RTN_B64, bind!(atomic64, true, |_, d, _| d)),
    (
        Op::DS_STOREXCHG_2ADDR_RTN_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 1, false)) as Exec,
    ),
    (
        Op::DS_STOREXCHG_2ADDR_STRIDE64_RTN_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 1, true)) as Exec,
    ),
    (
        Op::DS_STOREXCHG_2ADDR_RTN_B64,
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 2, false)) as Exec,
    ),
    (
        Op::DS_STOREXCHG_2ADDR_STRIDE64_RTN_B64,
        (|w: &mut Wave, env: &mut Env, i: &Inst| xchg2(w, env, i, 2, true)) as Exec,
    ),
    // Wrapping counter: subtract data0 while the old value is at least
    // data0, else add data1.
    (
        Op::DS_WRAP_RTN_B32,
        at32!(true, |o, d, e| if o >= d {
            o - d
        } else {
            o.wrapping_add(e)
        }),
    ),
    (
        Op::DS_APPEND,
        (|w: &mut Wave, env: &mut Env, i: &Inst| append(w, env, i, false)) as Exec,
    ),
    (
        Op::DS_CONSUME,
        (|w: &mut Wave, env: &mut Env, i: &Inst| append(w, env, i, true)) as Exec,
    ),
    (
        Op::DS_LOAD_ADDTID_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| addtid(w, env, i, false)) as Exec,
    ),
    (
        Op::DS_STORE_ADDTID_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| addtid(w, env, i, true)) as Exec,
    ),
    (Op::DS_CONDXCHG32_RTN_B64, condxchg32 as Exec),
    // CDNA's `ds_nop`: no LDS access, no register written.
    (Op::DS_NOP, super::nop as Exec),
    (Op::DS_GWS_BARRIER, gws_barrier as Exec),
    (Op::DS_SWIZZLE_B32, swizzle as Exec),
    (
        Op::DS_BPERMUTE_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| permute(w, i, true)) as Exec,
    ),
    (
        Op::DS_PERMUTE_B32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| permute(w, i, false)) as Exec,
    ),
];

/// DS float atomics whose arithmetic MODE controls; registered after the
/// shared table, so these replace its MODE-blind `add_f32`.
const MODE_DEPENDENT: &[(Op, Exec)] = &[
    (
        Op::DS_ADD_F32,
        bind!(atomic32, false, |o, d, _, m| add_f32(o, d, m)),
    ),
    (
        Op::DS_ADD_RTN_F32,
        bind!(atomic32, true, |o, d, _, m| add_f32(o, d, m)),
    ),
];

/// Every DS table keyed by opcode; later tables take precedence.
pub fn tables() -> [&'static [(Op, Exec)]; 4] {
    [BASIC, ATOMICS32, ATOMICS64, MODE_DEPENDENT]
}

/// The handler of a shared read-modify-write (`Class::Rmw` in LDS).
pub fn rmw(op: Rmw, num: Num, rtn: bool) -> Option<Exec> {
    SHARED32
        .iter()
        .chain(SHARED64)
        .find(|&&(o, n, r, _)| (o, n, r) == (op, num, rtn))
        .map(|&(.., exec)| exec)
}
