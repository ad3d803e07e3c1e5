//! Vector memory: FLAT, GLOBAL, SCRATCH and MUBUF loads, stores and atomics.
//!
//! Every lane's address is resolved to a location in one of the three
//! places a kernel may touch — the device arena, the workgroup's LDS, or the
//! lane's own scratch — and checked there. Generic FLAT addresses are routed
//! by aperture; buffer accesses outside the resource's range read zero and
//! drop writes, as the hardware does.

use std::sync::OnceLock;

use softgpu_isa::resource::BufferResource;
use softgpu_isa::{flags, Family, Format, Inst, MemOp, Num, Op, Operand, Rmw};

use super::ds::{lds_range, lds_write};
use super::{lane_addrs, look_up, Env, Exec, Flow, Result, Trap};

use crate::float::{f, flush32};
use crate::trap::{Space, Use};
use crate::wave::{
    PrivateError, Wave, APERTURE_SIZE, MAX_LANES, PRIVATE_APERTURE, SCRATCH_BUFFER_BASE,
    SHARED_APERTURE,
};
use softgpu_arena::{Lanes, Memory, Window};

/// Where one lane's access goes.
#[derive(Clone, Copy, Debug)]
enum Loc {
    Global(u64),
    Lds(u64),
    Scratch(u64),
    /// A buffer access into the private segment buffer that lands in
    /// another lane's private memory (`owner`'s), at byte `offset` of the
    /// buffer: refused.
    OtherLane {
        owner: usize,
        offset: u64,
    },
    /// A buffer access outside its resource: reads 0, writes dropped.
    Dropped,
}

impl Loc {
    /// The location `by` bytes further on.
    fn offset(self, by: u64) -> Loc {
        match self {
            Loc::Global(a) => Loc::Global(a.wrapping_add(by)),
            Loc::Lds(a) => Loc::Lds(a.wrapping_add(by)),
            Loc::Scratch(a) => Loc::Scratch(a.wrapping_add(by)),
            Loc::OtherLane { owner, offset } => Loc::OtherLane {
                owner,
                offset: offset.wrapping_add(by),
            },
            Loc::Dropped => Loc::Dropped,
        }
    }
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

/// A buffer resource descriptor (V#), RDNA3 ISA §9.6 table 47, read in
/// the instruction's family's layout (`softgpu_isa::resource`).
#[derive(Clone, Copy)]
struct Resource {
    base: u64,
    stride: u64,
    /// Swizzle element size in bytes (swizzle_enable 1: 4, 3: 16), or 0
    /// when the buffer is linear.
    element: u64,
    records: u64,
    /// DST_SEL_X..W: 0 = 0, 1 = 1, 4..7 = component X..W.
    dst_sel: [u8; 4],
    /// FORMAT, in the family's numbering ([`data_format_in`]).
    format: u8,
    index_stride: u64,
    add_tid: bool,
    oob_select: u8,
}

/// `Resource::oob_select` for CDNA's V#, which has no OOB_SELECT: GCN's
/// range check, structured by the instruction's IDXEN ([`Buffer::in_range`]).
const OOB_GCN: u8 = 4;

/// Whether `family`'s V# has OOB_SELECT (a layout without it checks
/// ranges as GCN does), read off the descriptor table once rather than by
/// field name on every buffer instruction.
fn has_oob_select(family: Family) -> bool {
    static HAS: OnceLock<[bool; Family::ALL.len()]> = OnceLock::new();
    let has =
        HAS.get_or_init(|| Family::ALL.map(|f| BufferResource::field_bits(f, "oob_select") > 0));
    has[family.index()]
}

fn resource(w: &Wave, family: Family, op: Operand) -> Resource {
    let v = BufferResource::decode(family, &w.read_sn::<4>(op));
    Resource {
        base: v.base_address,
        stride: v.stride as u64,
        element: match v.swizzle_enable {
            1 => 4,
            3 => 16,
            _ => 0,
        },
        records: v.num_records as u64,
        dst_sel: [v.dst_sel_x, v.dst_sel_y, v.dst_sel_z, v.dst_sel_w].map(|s| s as u8),
        format: v.format as u8,
        index_stride: 8 << v.index_stride,
        add_tid: v.add_tid_enable != 0,
        oob_select: match has_oob_select(family) {
            false => OOB_GCN,
            true => v.oob_select as u8,
        },
    }
}

/// One buffer instruction's wave-uniform addressing state.
#[derive(Clone, Copy)]
struct Buffer {
    rsrc: Resource,
    soffset: u64,
    /// "Setting the resource constant to all zeros has the effect of forcing
    /// any loads to return zero, and stores to be ignored. This is keyed off
    /// the data-format being set to zero (INVALID), and for MUBUF the
    /// add_tid_en = false" (§9.6 "Unbound Resources"). For MTBUF the data
    /// format is the instruction's.
    unbound: bool,
    /// The instruction's IDXEN, which makes GCN's range check structured.
    idxen: bool,
}

fn buffer(w: &Wave, i: &Inst) -> Buffer {
    let rsrc = resource(w, i.family, i.src[2]);
    let invalid = |f: u32| softgpu_isa::resource::format_invalid(i.family, f);
    let unbound = match i.op.info().format {
        Format::Mtbuf => invalid(i.aux),
        _ => invalid(rsrc.format as u32) && !rsrc.add_tid,
    };
    Buffer {
        rsrc,
        soffset: w.read_s32(i.src[3]) as u64,
        unbound,
        idxen: i.flags & flags::IDXEN != 0,
    }
}

impl Buffer {
    /// Lane `l`'s (index, offset): "Index = (inst_idxen ? vgpr_index : 0) +
    /// (const_add_tid_enable ? thread_id : 0); Offset = (inst_offen ?
    /// vgpr_offset : 0) + inst_offset" (§9.4.2); with both enabled the index
    /// is in VADDR and the offset in VADDR+1 (§9.2 table 40).
    fn lane(&self, w: &Wave, i: &Inst, l: usize) -> (u64, u64) {
        let (idxen, offen) = (i.flags & flags::IDXEN != 0, i.flags & flags::OFFEN != 0);
        let vindex = if idxen { w.get_lane(i.src[0], l, 0) } else { 0 };
        let voffset = if offen {
            w.get_lane(i.src[0], l, idxen as usize)
        } else {
            0
        };
        let tid = if self.rsrc.add_tid { l as u64 } else { 0 };
        (
            vindex as u64 + tid,
            voffset as u64 + (i.imm as u32 as u64 & 0xfff),
        )
    }

    /// The address of byte `offset` of record `index`: linear
    /// (base + soffset + index * stride + offset, §9.4.1.1) or swizzled
    /// (§9.4.2).
    fn addr(&self, index: u64, offset: u64) -> u64 {
        let r = &self.rsrc;
        let within = match (offset.checked_div(r.element), offset.checked_rem(r.element)) {
            (Some(offset_msb), Some(offset_lsb)) => {
                let (index_msb, index_lsb) = (index / r.index_stride, index % r.index_stride);
                (index_msb * r.stride + offset_msb * r.element) * r.index_stride
                    + index_lsb * r.element
                    + offset_lsb
            }
            _ => index * r.stride + offset,
        };
        r.base.wrapping_add(self.soffset).wrapping_add(within)
    }

    /// Whether `payload` bytes at (index, offset) are in range under the
    /// resource's OOB_SELECT (§9.4.1 table 46).
    fn in_range(&self, index: u64, offset: u64, payload: u64) -> bool {
        let r = &self.rsrc;
        let structured = index < r.records && offset + payload <= r.stride;
        !self.unbound
            && match r.oob_select {
                0 => structured,
                1 => index < r.records,
                2 => r.records != 0,
                // GCN (CDNA3 guide, buffer range checking): with IDXEN the
                // index against NUM_RECORDS (and a swizzled offset against
                // the stride), else the offset in bytes; SOFFSET is outside
                // the check (LLVM's buffer intrinsics: "excluded from
                // bounds checking").
                OOB_GCN if self.idxen => {
                    index < r.records && (r.element == 0 || offset + payload <= r.stride)
                }
                OOB_GCN => offset + payload <= r.records,
                // "In this mode, num_records is reduced by sgpr_offset".
                _ if r.element != 0 && r.stride != 0 => structured,
                _ => self.soffset + offset + payload <= r.records,
            }
    }

    /// Where lane `l`'s `payload` bytes at `extra` past its offset go.
    fn locate(&self, w: &Wave, i: &Inst, l: usize, extra: u64, payload: u64) -> Loc {
        let (index, offset) = self.lane(w, i, l);
        let offset = offset + extra;
        if self.in_range(index, offset, payload) {
            place(w, l, self.addr(index, offset), payload)
        } else {
            Loc::Dropped
        }
    }
}

/// Where lane `l`'s in-range buffer access of `payload` bytes at device
/// address `addr` goes: device memory, or, in the private segment buffer
/// window `[SCRATCH_BUFFER_BASE, + APERTURE_SIZE)`, the lane's private
/// memory. The launch gives gfx10 waves that buffer as a V# swizzled as
/// the hardware lays scratch out (`exec::abi`, `PrivateBuffer::Swizzled`:
/// 4-byte elements, index stride the wave's width, the lane's id added to
/// the index, stride 0), so byte `a` of the window is byte `a % 4` of
/// element `a / 4`, which belongs to lane `(a / 4) % W` at its private
/// byte `(a / (4 W)) * 4 + a % 4`. LLVM's frame offsets reach it scaled
/// by the wave's width (the stack pointer in SOFFSET), so a lane's own
/// accesses land in its own elements; one that lands in another lane's,
/// or spans two elements, is refused rather than run.
fn place(w: &Wave, l: usize, addr: u64, payload: u64) -> Loc {
    let a = addr.wrapping_sub(SCRATCH_BUFFER_BASE);
    if a >= APERTURE_SIZE {
        return Loc::Global(addr);
    }
    let (element, lanes) = (a / 4, w.lanes as u64);
    let owner = (element % lanes) as usize;
    if owner != l {
        return Loc::OtherLane { owner, offset: a };
    }
    if a % 4 + payload > 4 {
        let owner = ((element + 1) % lanes) as usize;
        return Loc::OtherLane {
            owner,
            offset: a + (4 - a % 4),
        };
    }
    Loc::Scratch(element / lanes * 4 + a % 4)
}

/// The device address of each active lane's access of the global or flat
/// instruction `i`, in lane order (none for a flat lane in an aperture):
/// what `jit::verify` saves and compares around a block's closing store.
pub fn global_addresses(w: &Wave, i: &Inst) -> Vec<u64> {
    let (site, exec) = (Site::of(w, i, i.op.info().format), w.exec());
    (0..w.lanes)
        .filter(|&l| exec >> l & 1 != 0)
        .filter_map(|l| match site.locate(w, i, l, 4) {
            Loc::Global(a) => Some(a),
            _ => None,
        })
        .collect()
}

/// How an instruction's lanes address memory, read once per instruction:
/// the wave-uniform part of a buffer access (its V# decoded through the
/// family's layout, SOFFSET) is the same for every lane.
#[derive(Clone, Copy)]
enum Site {
    Global,
    Flat,
    Scratch,
    Buffer(Buffer),
}

impl Site {
    fn of(w: &Wave, i: &Inst, format: Format) -> Site {
        match format {
            Format::Global => Site::Global,
            Format::Flat => Site::Flat,
            Format::Scratch => Site::Scratch,
            _ => Site::Buffer(buffer(w, i)),
        }
    }

    /// Resolves lane `l`'s address for an access of `bytes`.
    fn locate(&self, w: &Wave, i: &Inst, l: usize, bytes: u64) -> Loc {
        let offset = i.imm as i64 as u64;
        match self {
            Site::Global => {
                let addr = match i.src[2] {
                    Operand::None => w.lane64(i.src[0], l),
                    saddr => w.read_s64(saddr).wrapping_add(w.lane32(i.src[0], l) as u64),
                };
                Loc::Global(addr.wrapping_add(offset))
            }
            Site::Flat => route_flat(w.lane64(i.src[0], l).wrapping_add(offset)),
            Site::Scratch => {
                let mut addr = offset;
                if i.src[2] != Operand::None {
                    addr = addr.wrapping_add(w.read_s32(i.src[2]) as u64);
                }
                if i.src[0] != Operand::None {
                    addr = addr.wrapping_add(w.lane32(i.src[0], l) as u64);
                }
                Loc::Scratch(addr & 0xffff_ffff)
            }
            // Atomics and single-piece accesses are range-checked all or
            // nothing (§9.4.1 notes 3, 4).
            Site::Buffer(b) => b.locate(w, i, l, 0, bytes),
        }
    }
}

/// The sanitizer hook: checks the `len`-byte access each active lane makes
/// at the location `loc` gives for it, in global memory or LDS (scratch is
/// the lane's own; a dropped buffer access touches nothing). Called once
/// per instruction, behind `env.sanitizer.is_some()`.
fn sanitize(
    w: &Wave,
    env: &mut Env,
    u: Use,
    len: u64,
    loc: impl Fn(&Wave, usize) -> Loc,
) -> Result<()> {
    let Some(s) = env.sanitizer.as_mut() else {
        return Ok(());
    };
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        match loc(w, l) {
            Loc::Global(a) => s.global(w, Some(l), u, a, len)?,
            Loc::Lds(a) => s.lds(w, Some(l), u, a, len)?,
            Loc::Scratch(_) | Loc::OtherLane { .. } | Loc::Dropped => {}
        }
    }
    Ok(())
}

fn fault(space: Space, l: usize, addr: u64, len: u64) -> Trap {
    Trap::Memory {
        space,
        lane: Some(l),
        addr,
        len,
        cause: super::MemCause::Read,
    }
}

/// The fault of lane `l`'s refused device-memory access.
fn global_fault(l: usize, write: bool) -> impl Fn(softgpu_arena::MemError) -> Trap {
    move |e| Trap::memory(Space::Global, Some(l), write, e)
}

/// The flat offset in the wave's private memory of lane `l`'s `len` bytes
/// at private address `addr`, or a fault outside the lane's segment.
fn scratch_offset(w: &Wave, l: usize, addr: u64, len: usize) -> Result<usize> {
    let per_lane = w.scratch.lane_bytes() as u64;
    if addr
        .checked_add(len as u64)
        .is_none_or(|end| end > per_lane)
    {
        return Err(fault(Space::Scratch, l, addr, len as u64));
    }
    Ok(l * w.scratch.lane_bytes() + addr as usize)
}

/// Instructions initcheck looks back through for a whole-wave spill.
const SPILL_LOOKBACK: u32 = 8;

/// Whether `w` is in a whole-wave spill sequence: LLVM saves EXEC and
/// turns every lane on (`s_or_saveexec_b32 s, -1`, `s_xor_saveexec…`) to
/// store or reload a VGPR whose lanes hold spilled SGPRs, and at -O0 it
/// reloads such a slot before any lane was written (the lanes not holding
/// a value are never read). Such a reload is not a read of uninitialized
/// memory by the program, so initcheck lets it pass. Found by looking
/// back through the instructions before `w.pc` for that saveexec, stopping
/// at any other write of EXEC; only on initcheck's failure path.
fn in_whole_wave_spill(w: &Wave, code: super::Code) -> bool {
    for back in 1..=SPILL_LOOKBACK {
        let Some(pc) = w.pc.checked_sub(back) else {
            return false;
        };
        let inst = &code.slot_at(pc).inst;
        match inst.op {
            Op::S_OR_SAVEEXEC_B32
            | Op::S_OR_SAVEEXEC_B64
            | Op::S_XOR_SAVEEXEC_B32
            | Op::S_XOR_SAVEEXEC_B64 => {
                return matches!(inst.src[0], Operand::Const(c) if c as u32 == u32::MAX);
            }
            _ if inst.dst[0] == Operand::Sgpr(softgpu_isa::sreg::EXEC_LO) => return false,
            _ => {}
        }
    }
    false
}

/// A private memory failure as the trap that reports it: lane `l`'s access
/// of `len` bytes at private address `addr`.
#[cold]
fn scratch_trap(w: &Wave, e: PrivateError, l: usize, addr: u64, len: usize) -> Trap {
    match e {
        PrivateError::Unwritten(at) => Trap::Uninitialized {
            space: Space::Scratch,
            lane: Some(l),
            addr,
            len: len as u64,
            first: (at - l * w.scratch.lane_bytes()) as u64,
        },
        PrivateError::OverBudget(limit) => Trap::PrivateLimit {
            lane: l,
            addr,
            len,
            limit,
        },
    }
}

/// Lane `l`'s read of `out.len()` bytes at `loc`; a refused one reads
/// zeros when the dispatch contains errors.
fn read(w: &Wave, env: &mut Env, l: usize, loc: Loc, out: &mut [u8]) -> Result<()> {
    let r = try_read(w, env, l, loc, out);
    env.contained.read(w, r, out)
}

/// Lane `l`'s write of `data` at `loc`; a refused one changes nothing
/// when the dispatch contains errors.
fn write(w: &mut Wave, env: &mut Env, l: usize, loc: Loc, data: &[u8]) -> Result<()> {
    let r = try_write(w, env, l, loc, data);
    env.contained.or(w, r, ())
}

/// Lane `l`'s read of device memory at `addr` (an image's texels), checked
/// and contained as every global access is.
pub(super) fn global_read(
    w: &Wave,
    env: &mut Env,
    l: usize,
    addr: u64,
    out: &mut [u8],
) -> Result<()> {
    read(w, env, l, Loc::Global(addr), out)
}

/// Lane `l`'s atomic read-modify-write of the dword at `addr` (an image
/// atomic's texel): `f` of the old value is stored, the old value
/// returned, as global atomics do it.
pub(super) fn global_rmw32(
    w: &Wave,
    env: &mut Env,
    l: usize,
    addr: u64,
    f: impl Fn(u32) -> u32,
) -> Result<u32> {
    let r = env.mem.rmw_u32(addr, f).map_err(global_fault(l, true));
    env.contained.or(w, r, 0)
}

/// [`global_rmw32`] of a 64-bit value.
pub(super) fn global_rmw64(
    w: &Wave,
    env: &mut Env,
    l: usize,
    addr: u64,
    f: impl Fn(u64) -> u64,
) -> Result<u64> {
    let r = env.mem.rmw_u64(addr, f).map_err(global_fault(l, true));
    env.contained.or(w, r, 0)
}

/// Lane `l`'s write of device memory at `addr` (an image's texels).
pub(super) fn global_write(
    w: &mut Wave,
    env: &mut Env,
    l: usize,
    addr: u64,
    data: &[u8],
) -> Result<()> {
    write(w, env, l, Loc::Global(addr), data)
}

fn try_read(w: &Wave, env: &Env, l: usize, loc: Loc, out: &mut [u8]) -> Result<()> {
    match loc {
        Loc::Global(a) => env.mem.read(a, out).map_err(global_fault(l, false)),
        // FLAT into LDS follows the LDS out-of-range rule: reads return
        // zero (§11.3 "stores outside this range do not write a value, and
        // reads return zero").
        Loc::Lds(a) => {
            match lds_range(env.lds, a, out.len()) {
                Some(r) => out.copy_from_slice(&env.lds[r]),
                None => out.fill(0),
            }
            Ok(())
        }
        Loc::Scratch(a) => {
            let at = scratch_offset(w, l, a, out.len())?;
            match w.scratch.read(at, out) {
                Err(PrivateError::Unwritten(_)) if in_whole_wave_spill(w, env.code) => {
                    (w.scratch.read_as(at, out, false))
                        .map_err(|e| scratch_trap(w, e, l, a, out.len()))
                }
                r => r.map_err(|e| scratch_trap(w, e, l, a, out.len())),
            }
        }
        Loc::OtherLane { owner, offset } => Err(other_lane(l, owner, offset)),
        Loc::Dropped => {
            out.fill(0);
            Ok(())
        }
    }
}

/// Lane `l`'s access at `offset` of the private segment buffer reaching
/// lane `owner`'s private memory.
#[cold]
fn other_lane(lane: usize, owner: usize, offset: u64) -> Trap {
    Trap::OtherLanesScratch {
        lane,
        owner,
        offset,
    }
}

fn try_write(w: &mut Wave, env: &mut Env, l: usize, loc: Loc, data: &[u8]) -> Result<()> {
    match loc {
        Loc::Global(a) => env.mem.write(a, data).map_err(global_fault(l, true)),
        Loc::Lds(a) => {
            lds_write(env.lds, a, data);
            Ok(())
        }
        Loc::Scratch(a) => {
            let at = scratch_offset(w, l, a, data.len())?;
            w.scratch
                .write(at, data)
                .map_err(|e| scratch_trap(w, e, l, a, data.len()))
        }
        Loc::OtherLane { owner, offset } => Err(other_lane(l, owner, offset)),
        Loc::Dropped => Ok(()),
    }
}

/// Wave-wide accesses spanning at most this many bytes are checked as one
/// range (a load per 4 KiB page of one allocation, a shadow word per 64
/// bytes elsewhere); wider ones, and ones whose range is not all allowed
/// (lanes in two allocations), lane by lane, but still in one pass over
/// the wave's addresses (`Memory::window_at`).
const WINDOW_SPAN: u64 = 16 << 10;

/// The wave-wide fast path's check: every active lane's device address
/// into `addrs` in one pass over the address VGPR, and the one window
/// holding all their `bytes`-byte accesses, when they are all plain global
/// ones (no LDS or scratch aperture, no dropped buffer access) inside a
/// short range whose every byte the arena allows (see [`Memory::window`]:
/// then every lane's own check would pass). `None` sends the op to the
/// per-lane path, which names the first faulting lane.
///
/// [`Memory::window`]: softgpu_arena::Memory::window
#[inline(always)]
fn window<'a, 'o>(
    w: &Wave,
    env: &Env<'a>,
    i: &Inst,
    format: Format,
    bytes: u64,
    write: bool,
    addrs: &'o mut [u64; MAX_LANES],
) -> Option<(Window<'a>, Lanes<'o>)> {
    let (exec, lanes) = (w.exec(), w.lanes);
    let offset = i.imm as i64 as u64;
    let Operand::Vgpr(r) = i.src[0] else {
        return None;
    };
    let lo = &w.vgpr[r as usize];
    let hi = &w.vgpr[w.row(r as usize + 1)];
    let lanes = match (format, i.src[2]) {
        (Format::Global, Operand::None) | (Format::Flat, _) => {
            lane_addrs(lanes, exec, addrs, |l| {
                (lo[l] as u64 | (hi[l] as u64) << 32).wrapping_add(offset)
            })
        }
        (Format::Global, saddr) => {
            let base = w.read_s64(saddr).wrapping_add(offset);
            lane_addrs(lanes, exec, addrs, |l| base.wrapping_add(lo[l] as u64))
        }
        (Format::Mubuf, _) => {
            let b = buffer(w, i);
            let mut dropped = false;
            let lanes = lane_addrs(lanes, exec, addrs, |l| match b.locate(w, i, l, 0, bytes) {
                Loc::Global(a) => a,
                _ => {
                    dropped |= exec >> l & 1 != 0;
                    0
                }
            });
            if dropped {
                return None;
            }
            lanes
        }
        _ => return None,
    };
    let win = lanes_window(&env.mem, &lanes, bytes, write, format == Format::Flat)?;
    Some((win, lanes))
}

/// The one window holding the `bytes`-byte accesses of every lane `lanes`
/// selects, when all are plain device memory the kernel may touch (for a
/// `flat` access, none in the LDS or scratch aperture): the check of the
/// wave-wide paths, here and in JIT blocks (`jit::access`).
#[inline(always)]
pub fn lanes_window<'a>(
    mem: &Memory<'a>,
    lanes: &Lanes,
    bytes: u64,
    write: bool,
    flat: bool,
) -> Option<Window<'a>> {
    let (min, max) = lanes.bounds()?;
    let end = max.checked_add(bytes)?;
    if flat && in_aperture(min, end) {
        return None;
    }
    span_window(mem, min, end, write, false)
        .or_else(|| mem.window_at(min, end, write, bytes, lanes.selected()))
}

/// Whether `[start, end)` of a flat access reaches into the LDS or scratch
/// aperture (a flat access is global unless it is in one).
#[inline(always)]
fn in_aperture(start: u64, end: u64) -> bool {
    let clear = |aperture: u64| end <= aperture || start >= aperture + APERTURE_SIZE;
    !(clear(SHARED_APERTURE) && clear(PRIVATE_APERTURE))
}

/// [`lanes_window`] for lanes whose accesses lie in `[start, end)` (the
/// lowest selected address and the highest one's end): the same answer
/// where `lanes_window` takes one window, `None` where it would check
/// lane by lane (a wider range, or one not all allowed).
#[inline(always)]
pub fn span_window<'a>(
    mem: &Memory<'a>,
    start: u64,
    end: u64,
    write: bool,
    flat: bool,
) -> Option<Window<'a>> {
    span_window_within(mem, start, end, write, flat, WINDOW_SPAN)
}

/// [`span_window`] for ranges up to `limit` bytes: whoever takes a wider
/// range than the interpreter does must only access, through it, bytes
/// the lanes access (every byte of it is allowed, so each lane's own
/// check would pass too).
#[inline(always)]
pub fn span_window_within<'a>(
    mem: &Memory<'a>,
    start: u64,
    end: u64,
    write: bool,
    flat: bool,
    limit: u64,
) -> Option<Window<'a>> {
    if flat && in_aperture(start, end) || end.checked_sub(start)? > limit {
        return None;
    }
    mem.window(start, end, write)
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

/// The register value of a sub-dword load of `bytes` whose bytes, from the
/// first, are `raw`'s, into a register that held `old`.
fn extend(raw: u32, bytes: usize, ext: Ext, old: u32) -> u32 {
    let raw = raw & ((1u64 << (8 * bytes)) - 1) as u32;
    let signed = if bytes == 1 {
        raw as u8 as i8 as i32 as u32
    } else {
        raw as u16 as i16 as i32 as u32
    };
    match ext {
        Ext::Zero => raw,
        Ext::Sign => signed,
        Ext::D16Lo => (old & 0xffff_0000) | raw,
        Ext::D16Lo8Sign => (old & 0xffff_0000) | (signed & 0xffff),
        Ext::D16Hi => (old & 0xffff) | raw << 16,
        Ext::D16Hi8Sign => (old & 0xffff) | signed << 16,
    }
}

/// The wave-wide load, when [`window`] holds every lane's access: no
/// per-lane checks, dwords straight into the destination's VGPR rows.
/// Returns false, having changed nothing, when the per-lane path must run.
fn load_window(w: &mut Wave, env: &Env, i: &Inst, bytes: usize, ext: Ext) -> bool {
    let Operand::Vgpr(d) = i.dst[0] else {
        return false;
    };
    let mut addrs = [0; MAX_LANES];
    let format = i.op.info().format;
    let Some((win, lanes)) = window(w, env, i, format, bytes as u64, false, &mut addrs) else {
        return false;
    };
    if bytes < 4 {
        let row = &mut w.vgpr[d as usize];
        lanes.for_each(|l, a| {
            let mut b = [0u8; 4];
            win.read(a, &mut b[..bytes]);
            row[l] = extend(u32::from_le_bytes(b), bytes, ext, row[l]);
        });
        return true;
    }
    // A destination that would wrap past the last VGPR takes the per-lane
    // path, which wraps as `Wave::set_lane` does.
    let rows = d as usize..d as usize + bytes / 4;
    match w.vgpr.get_mut(rows) {
        Some(rows) => win.gather_dwords(&lanes, rows),
        None => false,
    }
}

fn load(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, ext: Ext) -> Result {
    let format = i.op.info().format;
    if format == Format::Mubuf && bytes > 4 {
        return buffer_load_dwords(w, env, i, bytes / 4);
    }
    let site = Site::of(w, i, format);
    if env.sanitizer.is_some() {
        let len = bytes as u64;
        sanitize(w, env, Use::Read, len, |w, l| site.locate(w, i, l, len))?;
    }
    if load_window(w, env, i, bytes, ext) {
        return Ok(Flow::Next);
    }
    let exec = w.exec();
    let mut buf = [0u8; 16];
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let loc = site.locate(w, i, l, bytes as u64);
        if let (Loc::Global(a), true) = (loc, bytes >= 4) {
            // Whole dwords from device memory: one range check, no bytes.
            let mut dwords = [0u32; 4];
            let d = &mut dwords[..bytes / 4];
            let r = env.mem.load_dwords(a, d).map_err(global_fault(l, false));
            env.contained.read(w, r, d)?;
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
        let raw = u32::from_le_bytes(buf[..4].try_into().unwrap());
        let v = extend(raw, bytes, ext, w.get_lane(i.dst[0], l, 0));
        w.set_lane(i.dst[0], l, 0, v);
    }
    Ok(Flow::Next)
}

/// The wave-wide store, when [`window`] holds every lane's access: lane by
/// lane in lane order as the per-lane path stores (so of lanes storing to
/// the same bytes the last wins), without per-lane checks. Returns false,
/// having stored nothing, when the per-lane path must run.
fn store_window(w: &Wave, env: &Env, i: &Inst, bytes: usize, shift: u32) -> bool {
    let Operand::Vgpr(s) = i.src[1] else {
        return false;
    };
    let mut addrs = [0; MAX_LANES];
    let format = i.op.info().format;
    let Some((win, lanes)) = window(w, env, i, format, bytes as u64, true, &mut addrs) else {
        return false;
    };
    if bytes < 4 {
        let row = &w.vgpr[s as usize];
        lanes.for_each(|l, a| win.write(a, &(row[l] >> shift).to_le_bytes()[..bytes]));
        return true;
    }
    // As for loads, a source that would wrap takes the per-lane path.
    match w.vgpr.get(s as usize..s as usize + bytes / 4) {
        Some(rows) => win.scatter_dwords(&lanes, rows),
        None => false,
    }
}

fn store(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, shift: u32) -> Result {
    let format = i.op.info().format;
    if format == Format::Mubuf && bytes > 4 {
        return buffer_store_dwords(w, env, i, bytes / 4);
    }
    let site = Site::of(w, i, format);
    if env.sanitizer.is_some() {
        let len = bytes as u64;
        sanitize(w, env, Use::Write, len, |w, l| site.locate(w, i, l, len))?;
    }
    if store_window(w, env, i, bytes, shift) {
        return Ok(Flow::Next);
    }
    let exec = w.exec();
    let mut buf = [0u8; 16];
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let loc = site.locate(w, i, l, bytes as u64);
        if let (Loc::Global(a), true) = (loc, bytes >= 4) {
            let mut dwords = [0u32; 4];
            let d = &mut dwords[..bytes / 4];
            for (k, v) in d.iter_mut().enumerate() {
                *v = w.get_lane(i.src[1], l, k);
            }
            let r = env.mem.store_dwords(a, d).map_err(global_fault(l, true));
            env.contained.or(w, r, ())?;
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

/// MUBUF B64/B96/B128: "each DWORD is bounds checked separately ... For
/// MUBUF, only the components that are out of bounds return zero" (§9.4.1).
fn buffer_load_dwords(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize) -> Result {
    let b = buffer(w, i);
    if env.sanitizer.is_some() {
        for k in 0..dwords as u64 {
            sanitize(w, env, Use::Read, 4, |w, l| b.locate(w, i, l, 4 * k, 4))?;
        }
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        for k in 0..dwords {
            let mut v = [0u8; 4];
            read(w, env, l, b.locate(w, i, l, 4 * k as u64, 4), &mut v)?;
            w.set_lane(i.dst[0], l, k, u32::from_le_bytes(v));
        }
    }
    Ok(Flow::Next)
}

/// MUBUF multi-dword stores drop exactly the out-of-range dwords.
fn buffer_store_dwords(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize) -> Result {
    let b = buffer(w, i);
    if env.sanitizer.is_some() {
        for k in 0..dwords as u64 {
            sanitize(w, env, Use::Write, 4, |w, l| b.locate(w, i, l, 4 * k, 4))?;
        }
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        for k in 0..dwords {
            let v = w.get_lane(i.src[1], l, k).to_le_bytes();
            let loc = b.locate(w, i, l, 4 * k as u64, 4);
            write(w, env, l, loc, &v)?;
        }
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
    let site = Site::of(w, i, i.op.info().format);
    if env.sanitizer.is_some() {
        sanitize(w, env, Use::Atomic, 4, |w, l| site.locate(w, i, l, 4))?;
    }
    let exec = w.exec();
    let ret = i.flags & flags::GLC != 0;
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let data = w.get_lane(i.src[1], l, 0);
        let compare = if cmp { w.get_lane(i.src[1], l, 1) } else { 0 };
        let old = match site.locate(w, i, l, 4) {
            Loc::Global(a) => {
                let r =
                    (env.mem.rmw_u32(a, |o| op(o, data, compare))).map_err(global_fault(l, true));
                env.contained.or(w, r, 0)?
            }
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
    let site = Site::of(w, i, i.op.info().format);
    if env.sanitizer.is_some() {
        sanitize(w, env, Use::Atomic, 8, |w, l| site.locate(w, i, l, 8))?;
    }
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
        let old = match site.locate(w, i, l, 8) {
            Loc::Global(a) => {
                let r =
                    (env.mem.rmw_u64(a, |o| op(o, data, compare))).map_err(global_fault(l, true));
                env.contained.or(w, r, 0)?
            }
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

/// The operations of the flat, global, scratch and buffer families,
/// whichever segments have them.
const OPS: &[(MemOp, Exec)] = &[
    (MemOp::LOAD_B32, bind!(load, 4, Ext::Zero)),
    (MemOp::LOAD_B64, bind!(load, 8, Ext::Zero)),
    (MemOp::LOAD_B96, bind!(load, 12, Ext::Zero)),
    (MemOp::LOAD_B128, bind!(load, 16, Ext::Zero)),
    (MemOp::LOAD_U8, bind!(load, 1, Ext::Zero)),
    (MemOp::LOAD_I8, bind!(load, 1, Ext::Sign)),
    (MemOp::LOAD_U16, bind!(load, 2, Ext::Zero)),
    (MemOp::LOAD_I16, bind!(load, 2, Ext::Sign)),
    (MemOp::LOAD_D16_U8, bind!(load, 1, Ext::D16Lo)),
    (MemOp::LOAD_D16_I8, bind!(load, 1, Ext::D16Lo8Sign)),
    (MemOp::LOAD_D16_B16, bind!(load, 2, Ext::D16Lo)),
    (MemOp::LOAD_D16_HI_U8, bind!(load, 1, Ext::D16Hi)),
    (MemOp::LOAD_D16_HI_I8, bind!(load, 1, Ext::D16Hi8Sign)),
    (MemOp::LOAD_D16_HI_B16, bind!(load, 2, Ext::D16Hi)),
    (MemOp::STORE_B8, bind!(store, 1, 0)),
    (MemOp::STORE_B16, bind!(store, 2, 0)),
    (MemOp::STORE_B32, bind!(store, 4, 0)),
    (MemOp::STORE_B64, bind!(store, 8, 0)),
    (MemOp::STORE_B96, bind!(store, 12, 0)),
    (MemOp::STORE_B128, bind!(store, 16, 0)),
    (MemOp::STORE_D16_HI_B8, bind!(store, 1, 16)),
    (MemOp::STORE_D16_HI_B16, bind!(store, 2, 16)),
    (MemOp::ATOMIC_SWAP_B32, bind!(atomic32, false, |_, d, _| d)),
    (
        MemOp::ATOMIC_CMPSWAP_B32,
        bind!(atomic32, true, |o, d, c| if o == c { d } else { o }),
    ),
    (
        MemOp::ATOMIC_CSUB_U32,
        bind!(atomic32, false, super::rmw::sub_clamp),
    ),
    // gfx12's atomics.
    (
        MemOp::ATOMIC_SUB_CLAMP_U32,
        bind!(atomic32, false, super::rmw::sub_clamp),
    ),
    (
        MemOp::ATOMIC_COND_SUB_U32,
        bind!(atomic32, false, super::rmw::cond_sub),
    ),
    (
        MemOp::ATOMIC_MIN_NUM_F32,
        bind!(atomic32, false, super::rmw::min_num32),
    ),
    (
        MemOp::ATOMIC_MAX_NUM_F32,
        bind!(atomic32, false, super::rmw::max_num32),
    ),
    (
        MemOp::ATOMIC_PK_ADD_F16,
        bind!(atomic32, false, super::rmw::pk_add_f16),
    ),
    (
        MemOp::ATOMIC_PK_ADD_BF16,
        bind!(atomic32, false, super::rmw::pk_add_bf16),
    ),
    // gfx12's cache write-back and invalidation: memory here is coherent.
    (MemOp::INV, super::nop as Exec),
    // CDNA's L1/L2 write-back and invalidation (gfx94's `buffer_inv` is
    // the INV above): coherent memory, so ordering only, as s_waitcnt
    // already gives.
    (MemOp::WBINVL1, super::nop as Exec),
    (MemOp::WBINVL1_VOL, super::nop as Exec),
    (MemOp::WBL2, super::nop as Exec),
    (MemOp::INVL2, super::nop as Exec),
    (MemOp::STORE_LDS_DWORD, store_from_lds as Exec),
    // gfx94's global/scratch loads into LDS.
    (MemOp::LOAD_LDS_UBYTE, bind!(site_load_lds, 1, Ext::Zero)),
    (MemOp::LOAD_LDS_SBYTE, bind!(site_load_lds, 1, Ext::Sign)),
    (MemOp::LOAD_LDS_USHORT, bind!(site_load_lds, 2, Ext::Zero)),
    (MemOp::LOAD_LDS_SSHORT, bind!(site_load_lds, 2, Ext::Sign)),
    (MemOp::LOAD_LDS_DWORD, bind!(site_load_lds, 4, Ext::Zero)),
    (MemOp::WB, super::nop as Exec),
    (MemOp::WBINV, super::nop as Exec),
    (
        MemOp::ATOMIC_CMPSWAP_F32,
        bind!(atomic32, true, |o, d, c| if f(o) == f(c) { d } else { o }),
    ),
    (MemOp::ATOMIC_SWAP_B64, bind!(atomic64, false, |_, d, _| d)),
    // gfx10's f64 float atomics, which gfx11 dropped (RDNA2 guide,
    // *_ATOMIC_FCMPSWAP_X2 / FMIN_X2 / FMAX_X2): the compare-swap as the
    // f32 one, min and max by the rules of the f64 DS atomics.
    (
        MemOp::ATOMIC_FCMPSWAP_X2,
        bind!(
            atomic64,
            true,
            |o, d, c| if f64::from_bits(o) == f64::from_bits(c) {
                d
            } else {
                o
            }
        ),
    ),
    (
        MemOp::ATOMIC_FMIN_X2,
        bind!(atomic64, false, |o, d, _| {
            crate::float::min64(f64::from_bits(o), f64::from_bits(d)).to_bits()
        }),
    ),
    (
        MemOp::ATOMIC_FMAX_X2,
        bind!(atomic64, false, |o, d, _| {
            crate::float::max64(f64::from_bits(o), f64::from_bits(d)).to_bits()
        }),
    ),
    (
        MemOp::ATOMIC_CMPSWAP_B64,
        bind!(atomic64, true, |o, d, c| if o == c { d } else { o }),
    ),
];

/// The shared read-modify-write operations as memory atomics
/// (`SEG_atomic_OP_TYPE`), keyed by their class.
type RmwEntry = (Rmw, Num, Exec);

macro_rules! vmem_shared32 {
    ($($op:ident, $ty:ident => $f:expr;)*) => {
        const SHARED32: &[RmwEntry] = &[$((Rmw::$op, Num::$ty, bind!(atomic32, false, $f)),)*];
    };
}
macro_rules! vmem_shared64 {
    ($($op:ident, $ty:ident => $f:expr;)*) => {
        const SHARED64: &[RmwEntry] = &[$((Rmw::$op, Num::$ty, bind!(atomic64, false, $f)),)*];
    };
}
shared_rmw32!(vmem_shared32);
shared_rmw64!(vmem_shared64);

/// The handler of a vector-memory op (`Class::Mem`): one per operation,
/// whichever segment it addresses.
pub fn mem(op: MemOp) -> Option<Exec> {
    look_up(OPS, op).or_else(|| look_up(FORMAT_OPS, op))
}

/// The handler of a shared read-modify-write as a memory atomic
/// (`Class::Rmw` outside LDS); the memory-side float rules come first.
pub fn rmw(op: Rmw, num: Num) -> Option<Exec> {
    MEMORY_FLOAT
        .iter()
        .chain(SHARED32)
        .chain(SHARED64)
        .find(|&&(o, n, _)| (o, n) == (op, num))
        .map(|&(.., exec)| exec)
}

/// Float atomics whose memory-side rules differ from LDS's.
const MEMORY_FLOAT: &[RmwEntry] = &[(Rmw::Add, Num::F32, bind!(atomic32, false, add_f32_flush_in))];

/// `global_load/store_addtid_b32`: no address VGPR; lane `l` accesses
/// saddr + offset + 4·l.
fn addtid(w: &mut Wave, env: &mut Env, i: &Inst, store: bool) -> Result {
    let exec = w.exec();
    let base = w.read_s64(i.src[2]).wrapping_add(i.imm as i64 as u64);
    if env.sanitizer.is_some() {
        let u = if store { Use::Write } else { Use::Read };
        sanitize(w, env, u, 4, |_, l| {
            Loc::Global(base.wrapping_add(4 * l as u64))
        })?;
    }
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

/// `global/scratch_load_block` and `_store_block` (RDNA4 ISA §11.5): up
/// to 32 consecutive VGPRs to and from 32 consecutive dwords per lane. M0
/// bit n (LSB first) selects VGPR n; a skipped VGPR still skips its dword
/// ("not compacted in memory"), and M0 = 0 transfers nothing. A VGPR past
/// the register file is per dword: a load ignores it and a store reads
/// VGPR 0 in its place (§11.5.1).
fn block(w: &mut Wave, env: &mut Env, i: &Inst, store: bool) -> Result {
    let mask = w.sgpr[softgpu_isa::sreg::M0 as usize];
    let (reg, u) = if store {
        (i.src[1], Use::Write)
    } else {
        (i.dst[0], Use::Read)
    };
    let first = super::vgpr(reg, "a block transfer's data operand")?;
    let site = Site::of(w, i, i.op.info().format);
    let dwords = || (0..32u64).filter(move |n| mask >> n & 1 != 0);
    if env.sanitizer.is_some() {
        for n in dwords() {
            sanitize(w, env, u, 4, |w, l| site.locate(w, i, l, 4).offset(4 * n))?;
        }
    }
    let exec = w.exec();
    for l in (0..w.lanes).filter(|l| exec >> l & 1 != 0) {
        let base = site.locate(w, i, l, 128);
        for n in dwords() {
            let (loc, vgpr) = (base.offset(4 * n), first + n as usize);
            if store {
                let v = w.vgpr.get(vgpr).unwrap_or(&w.vgpr[0])[l];
                write(w, env, l, loc, &v.to_le_bytes())?;
            } else {
                let mut b = [0u8; 4];
                read(w, env, l, loc, &mut b)?;
                if let Some(row) = w.vgpr.get_mut(vgpr) {
                    row[l] = u32::from_le_bytes(b);
                }
            }
        }
    }
    Ok(Flow::Next)
}

/// `global_load_tr_b64` (8-bit elements) and `_tr_b128` (16-bit) (RDNA4
/// ISA §11.6.2): each of lanes 0..31 reads `bytes` contiguous bytes, eight
/// elements, and each group of eight lanes transposes its 8×8 block:
/// lane l's element j is element l%8 of what lane 8·(l/8)+j read. That
/// turns eight columns of a column-major 16×16 tile into rows of the WMMA
/// operand layout (lane 0 reads K=0, M=0..7, as the guide's example has
/// it). A wave64 reads the same 32 addresses (lanes 32..63's are ignored)
/// into half as many VGPRs: lane l takes the (l/32)-th half of lane l%32's
/// wave32 result, which is exactly the RDNA4 wave64 WMMA operand layout
/// of the same tile (see `wmma::dense_slot`).
///
/// uncertain: the guide gives the lane mapping only as diagrams; the
/// eight-lane transpose is the one measured on gfx1250's equivalent
/// `global_load_tr16_b128`, and it is the only one consistent with the
/// guide's example and the RDNA4 WMMA layouts for both element sizes.
fn load_transpose(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize) -> Result {
    let exec = w.exec();
    // "If EXEC==0, the instruction acts like an S_NOP; otherwise these
    // instructions require that EXEC be set to all ones, else the
    // operation is undefined."
    if exec == 0 {
        return Ok(Flow::Next);
    }
    if exec != w.full_mask() {
        return Err(Trap::UnsupportedForm {
            op: i.op,
            why: format!(
                "EXEC is {exec:#x}; a transposing load needs every lane on (RDNA4 ISA §11.6.2: \
                 undefined otherwise)"
            ),
        });
    }
    super::vgpr(i.dst[0], "a transposing load's destination")?;
    let site = Site::of(w, i, i.op.info().format);
    if env.sanitizer.is_some() {
        sanitize(w, env, Use::Read, bytes as u64, |w, l| match l < 32 {
            true => site.locate(w, i, l, bytes as u64),
            false => Loc::Dropped,
        })?;
    }
    let mut read_by = [[0u8; 16]; 32];
    for (l, row) in read_by.iter_mut().enumerate() {
        read(
            w,
            env,
            l,
            site.locate(w, i, l, bytes as u64),
            &mut row[..bytes],
        )?;
    }
    let elem = bytes / 8;
    let per_lane = bytes / 4 * 32 / w.lanes;
    for l in 0..w.lanes {
        let (src, half) = (l % 32, l / 32);
        let mut out = [0u8; 16];
        for (j, e) in out[..bytes].chunks_exact_mut(elem).enumerate() {
            let from = &read_by[src & !7 | j];
            e.copy_from_slice(&from[src % 8 * elem..][..elem]);
        }
        for k in 0..per_lane {
            let dword = &out[4 * (half * per_lane + k)..][..4];
            w.set_lane(
                i.dst[0],
                l,
                k,
                u32::from_le_bytes(dword.try_into().unwrap()),
            );
        }
    }
    Ok(Flow::Next)
}

// ---- typed (format) buffer access ------------------------------------

/// How a format's components are numbers (§10.7 table 52 suffixes).
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum NumFormat {
    Unorm,
    Snorm,
    Uscaled,
    Sscaled,
    Uint,
    Sint,
    Float,
}

/// A buffer data format: component widths from bit 0 up (AMD names list
/// them from the most significant end: 2_10_10_10 has X in bits [9:0]).
#[derive(Clone, Copy, Debug)]
pub(super) struct DataFormat {
    pub(super) bits: [u8; 4],
    pub(super) comps: usize,
    pub(super) num: NumFormat,
}

impl DataFormat {
    pub(super) fn bytes(&self) -> u64 {
        self.bits[..self.comps]
            .iter()
            .map(|&b| b as u64)
            .sum::<u64>()
            / 8
    }
}

/// The buffer formats 1..=63 of the gfx11 unified format table (§10.7
/// table 52; the MTBUF FORMAT field and V# FORMAT share it).
pub(super) fn data_format(f: u8) -> Option<DataFormat> {
    use NumFormat::*;
    const INTS: [NumFormat; 6] = [Unorm, Snorm, Uscaled, Sscaled, Uint, Sint];
    let df = |bits: &[u8], num| {
        let mut b = [0u8; 4];
        b[..bits.len()].copy_from_slice(bits);
        Some(DataFormat {
            bits: b,
            comps: bits.len(),
            num,
        })
    };
    let f = f as usize;
    match f {
        1..=6 => df(&[8], INTS[f - 1]),
        7..=12 => df(&[16], INTS[f - 7]),
        13 => df(&[16], Float),
        14..=19 => df(&[8, 8], INTS[f - 14]),
        20 => df(&[32], Uint),
        21 => df(&[32], Sint),
        22 => df(&[32], Float),
        23..=28 => df(&[16, 16], INTS[f - 23]),
        29 => df(&[16, 16], Float),
        30 => df(&[11, 11, 10], Float),
        31 => df(&[10, 11, 11], Float),
        // 10_10_10_2 has no scaled variants.
        32..=35 => df(&[2, 10, 10, 10], [Unorm, Snorm, Uint, Sint][f - 32]),
        36..=41 => df(&[10, 10, 10, 2], INTS[f - 36]),
        42..=47 => df(&[8, 8, 8, 8], INTS[f - 42]),
        48 => df(&[32, 32], Uint),
        49 => df(&[32, 32], Sint),
        50 => df(&[32, 32], Float),
        51..=56 => df(&[16; 4], INTS[f - 51]),
        57 => df(&[16; 4], Float),
        58 => df(&[32; 3], Uint),
        59 => df(&[32; 3], Sint),
        60 => df(&[32; 3], Float),
        61 => df(&[32; 4], Uint),
        62 => df(&[32; 4], Sint),
        63 => df(&[32; 4], Float),
        _ => None,
    }
}

/// Buffer format `f` in `family`'s numbering: gfx10 numbers the formats
/// from 30 on in its own order (`resource::unified_format`, whose
/// layout and kind names are read here: `10_11_11` lists its components
/// from the most significant, so X is the last 11 bits), gfx11 and gfx12
/// alike ([`data_format`]).
pub(super) fn data_format_in(family: Family, f: u8) -> Option<DataFormat> {
    use NumFormat::*;
    let (layout, kind) = match family {
        Family::Gfx10 if f >= 30 => softgpu_isa::resource::unified_format(family, f as u32)?,
        // GCN's split DATA_FORMAT | NUM_FORMAT << 4.
        Family::Gfx90a | Family::Gfx94 => softgpu_isa::resource::gcn_format(f as u32)?,
        _ => return data_format(f),
    };
    let num = match kind {
        "UNORM" => Unorm,
        "SNORM" => Snorm,
        "USCALED" => Uscaled,
        "SSCALED" => Sscaled,
        "UINT" => Uint,
        "SINT" => Sint,
        "FLOAT" => Float,
        _ => return None,
    };
    let mut df = DataFormat {
        bits: [0; 4],
        comps: 0,
        num,
    };
    for width in layout.rsplit('_') {
        *df.bits.get_mut(df.comps)? = width.parse().ok()?;
        df.comps += 1;
    }
    Some(df)
}

fn sext(raw: u32, bits: u8) -> i64 {
    ((raw as i64) << (64 - bits)) >> (64 - bits)
}

pub(super) fn mask(bits: u8) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    }
}

/// An unsigned 10- or 11-bit float (5-bit exponent, bias 15, `m` mantissa
/// bits, no sign) as f32.
fn small_float_to_f32(raw: u32, m: u32) -> f32 {
    let (e, man) = (raw >> m & 0x1f, raw & ((1 << m) - 1));
    match e {
        0x1f if man == 0 => f32::INFINITY,
        0x1f => f32::from_bits(0x7fc0_0000 | man << (23 - m)),
        0 => (man as f64 * (2f64).powi(-14 - m as i32)) as f32,
        _ => ((1.0 + man as f64 / (1u32 << m) as f64) * (2f64).powi(e as i32 - 15)) as f32,
    }
}

/// f32 to an unsigned 10/11-bit float, rounding to nearest even; negative
/// values become 0 and overflow infinity.
fn f32_to_small_float(x: u32, m: u32) -> u32 {
    let (sign, e, man) = (x >> 31, (x >> 23 & 0xff) as i32, x & 0x7f_ffff);
    if e == 0xff {
        return if man != 0 {
            0x1f << m | 1 << (m - 1) | man >> (23 - m)
        } else if sign == 0 {
            0x1f << m
        } else {
            0
        };
    }
    // f32 denormals lie far below the smallest 10/11-bit denormal.
    if sign == 1 || e == 0 {
        return 0;
    }
    let sig = (man | 0x80_0000) as u64;
    let exp = e - 127 + 15;
    let shift = 23 - m as i32 + if exp >= 1 { 0 } else { 1 - exp };
    if shift > 40 {
        return 0;
    }
    let q = rne_shift(sig, shift as u32);
    if exp < 1 {
        // A denormal; rounding up to 1 << m encodes the smallest normal.
        return q as u32;
    }
    let (q, exp) = if q >> (m + 1) != 0 {
        (q >> 1, exp + 1)
    } else {
        (q, exp)
    };
    if exp >= 31 {
        0x1f << m
    } else {
        (exp as u32) << m | (q as u32 & ((1 << m) - 1))
    }
}

/// `v >> shift`, rounded to nearest even.
fn rne_shift(v: u64, shift: u32) -> u64 {
    if shift == 0 {
        return v;
    }
    let q = v >> shift;
    let rem = v & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// f32 to f16 rounding toward zero: "Conversion of float32 to float16 uses
/// truncation" (§9.3.1, D16 loads).
pub(super) fn f32_to_h_trunc(x: f32) -> u16 {
    let h = half::f16::from_f32(x);
    if x.is_nan() || x.is_infinite() {
        return h.to_bits();
    }
    if h.to_f32().abs() > x.abs() {
        h.to_bits() - 1
    } else {
        h.to_bits()
    }
}

/// One memory component as the 32-bit VGPR value (§10.4.1: float for
/// normalized, scaled and float formats, integers for UINT/SINT).
pub(super) fn component_to_32(df: &DataFormat, bits: u8, raw: u32) -> u32 {
    let max = mask(bits) as f64;
    match df.num {
        NumFormat::Unorm => ((raw as f64 / max) as f32).to_bits(),
        NumFormat::Snorm => {
            let v = sext(raw, bits) as f64 / (max / 2.0).floor();
            (v.max(-1.0) as f32).to_bits()
        }
        NumFormat::Uscaled => (raw as f32).to_bits(),
        NumFormat::Sscaled => (sext(raw, bits) as f32).to_bits(),
        NumFormat::Uint => raw,
        NumFormat::Sint => sext(raw, bits) as u32,
        NumFormat::Float => match bits {
            16 => half::f16::from_bits(raw as u16).to_f32().to_bits(),
            32 => raw,
            m => small_float_to_f32(raw, m as u32 - 5).to_bits(),
        },
    }
}

/// One memory component as a 16-bit (D16) VGPR half: f16 for the float
/// kinds, rounded to nearest even except f32 sources, which truncate
/// (§9.3.1); integers keep their low 16 bits.
pub(super) fn component_to_16(df: &DataFormat, bits: u8, raw: u32) -> u16 {
    let max = mask(bits) as f64;
    let h = |x: f64| half::f16::from_f64(x).to_bits();
    match df.num {
        NumFormat::Unorm => h(raw as f64 / max),
        NumFormat::Snorm => h((sext(raw, bits) as f64 / (max / 2.0).floor()).max(-1.0)),
        NumFormat::Uscaled => h(raw as f64),
        NumFormat::Sscaled => h(sext(raw, bits) as f64),
        NumFormat::Uint | NumFormat::Sint => raw as u16,
        NumFormat::Float => match bits {
            16 => raw as u16,
            32 => f32_to_h_trunc(f32::from_bits(raw)),
            m => half::f16::from_f32(small_float_to_f32(raw, m as u32 - 5)).to_bits(),
        },
    }
}

/// A 32-bit VGPR value as one memory component: normalized values clamp
/// to their range and round to nearest even, integers saturate.
pub(super) fn component_from_32(df: &DataFormat, bits: u8, v: u32) -> u32 {
    let max = mask(bits) as f64;
    let x = f32::from_bits(v) as f64;
    let round = |x: f64, lo: f64, hi: f64| {
        if x.is_nan() {
            0.0
        } else {
            x.clamp(lo, hi).round_ties_even()
        }
    };
    let smax = (max / 2.0).floor();
    match df.num {
        NumFormat::Unorm => round(x * max, 0.0, max) as u32,
        NumFormat::Snorm => (round(x * smax, -smax, smax) as i64 as u32) & mask(bits),
        NumFormat::Uscaled => round(x, 0.0, max) as u32,
        NumFormat::Sscaled => (round(x, -smax - 1.0, smax) as i64 as u32) & mask(bits),
        NumFormat::Uint => v.min(mask(bits)),
        NumFormat::Sint => {
            ((v as i32 as i64).clamp(-(smax as i64) - 1, smax as i64) as u32) & mask(bits)
        }
        NumFormat::Float => match bits {
            16 => half::f16::from_f32(f32::from_bits(v)).to_bits() as u32,
            32 => v,
            m => f32_to_small_float(v, m as u32 - 5),
        },
    }
}

/// A 16-bit (D16) VGPR half as one memory component: f16 for the float
/// kinds, 16-bit integers (zero- or sign-extended) for UINT/SINT.
pub(super) fn component_from_16(df: &DataFormat, bits: u8, v: u16) -> u32 {
    let wide = match df.num {
        NumFormat::Uint => v as u32,
        NumFormat::Sint => v as i16 as i32 as u32,
        _ => half::f16::from_bits(v).to_f32().to_bits(),
    };
    component_from_32(df, bits, wide)
}

/// How a format op's data sits in VGPRs.
#[derive(Clone, Copy, PartialEq)]
enum Width {
    B32,
    /// Packed 16-bit halves from the low half of VDATA up.
    D16,
    /// One 16-bit value in VDATA[31:16].
    D16Hi,
}

/// The data format of a format op: the instruction's (MTBUF) or the
/// resource's (MUBUF) (§9.3 table 42).
fn format_of(i: &Inst, b: &Buffer) -> std::result::Result<Option<DataFormat>, Trap> {
    let f = if i.op.info().format == Format::Mtbuf {
        i.aux as u8
    } else {
        b.rsrc.format
    };
    if b.unbound {
        return Ok(None);
    }
    data_format_in(i.family, f)
        .map(Some)
        .ok_or_else(|| Trap::UnsupportedForm {
            op: i.op,
            why: format!("buffer data format {f} is not a buffer format"),
        })
}

/// Lane `l`'s element, or `None` when it is out of range (all or nothing
/// for format ops, §9.4.1 note 3).
fn format_read(
    w: &Wave,
    env: &mut Env,
    i: &Inst,
    b: &Buffer,
    df: &DataFormat,
    l: usize,
) -> Result<Option<[u32; 4]>> {
    let (index, offset) = b.lane(w, i, l);
    if !b.in_range(index, offset, df.bytes()) {
        return Ok(None);
    }
    let mut bytes = [0u8; 16];
    let n = df.bytes() as usize;
    let loc = place(w, l, b.addr(index, offset), df.bytes());
    read(w, env, l, loc, &mut bytes[..n])?;
    let element = u128::from_le_bytes(bytes);
    let mut comps = [0u32; 4];
    let mut at = 0;
    for (c, &bits) in df.bits[..df.comps].iter().enumerate() {
        comps[c] = (element >> at) as u32 & mask(bits);
        at += bits as u32;
    }
    Ok(Some(comps))
}

/// `*_load_*format_*`: `n` components converted from the data format, then
/// selected by DST_SEL (the resource's for MUBUF, identity for MTBUF,
/// §9.3 table 42). Components the format lacks read 0; out of range every
/// component reads 0, except those selecting the constant 1 (§9.4.1 note 1).
fn format_load(w: &mut Wave, env: &mut Env, i: &Inst, n: usize, width: Width) -> Result {
    let b = buffer(w, i);
    let df = format_of(i, &b)?;
    let sel = if i.op.info().format == Format::Mtbuf {
        [4, 5, 6, 7]
    } else {
        b.rsrc.dst_sel
    };
    if let (true, Some(df)) = (env.sanitizer.is_some(), &df) {
        sanitize(w, env, Use::Read, df.bytes(), |w, l| {
            b.locate(w, i, l, 0, df.bytes())
        })?;
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let comps = match &df {
            Some(df) => format_read(w, env, i, &b, df, l)?,
            None => None,
        };
        for (j, &s) in sel[..n].iter().enumerate() {
            let float = df.is_some_and(|d| !matches!(d.num, NumFormat::Uint | NumFormat::Sint));
            let value = |wide: bool| -> u32 {
                let one = match (float, wide) {
                    (true, true) => 0x3f80_0000,
                    (true, false) => 0x3c00,
                    (false, _) => 1,
                };
                match (s, &comps, &df) {
                    (1, _, _) => one,
                    (4..=7, Some(c), Some(d)) if (s as usize - 4) < d.comps => {
                        let k = s as usize - 4;
                        if wide {
                            component_to_32(d, d.bits[k], c[k])
                        } else {
                            component_to_16(d, d.bits[k], c[k]) as u32
                        }
                    }
                    _ => 0,
                }
            };
            match width {
                Width::B32 => w.set_lane(i.dst[0], l, j, value(true)),
                Width::D16 | Width::D16Hi => {
                    let hi = width == Width::D16Hi || j % 2 == 1;
                    let old = w.get_lane(i.dst[0], l, j / 2);
                    let new = if hi {
                        (old & 0xffff) | value(false) << 16
                    } else {
                        (old & 0xffff_0000) | value(false)
                    };
                    w.set_lane(i.dst[0], l, j / 2, new);
                }
            }
        }
    }
    Ok(Flow::Next)
}

/// `*_store_*format_*`: `n` VGPR components converted to the data format.
/// Components the format has but the instruction does not supply are
/// written as 0; extra supplied ones are ignored (§9.3.2).
fn format_store(w: &mut Wave, env: &mut Env, i: &Inst, n: usize, width: Width) -> Result {
    let b = buffer(w, i);
    let Some(df) = format_of(i, &b)? else {
        return Ok(Flow::Next);
    };
    if env.sanitizer.is_some() {
        sanitize(w, env, Use::Write, df.bytes(), |w, l| {
            b.locate(w, i, l, 0, df.bytes())
        })?;
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let (index, offset) = b.lane(w, i, l);
        if !b.in_range(index, offset, df.bytes()) {
            continue;
        }
        let mut element = 0u128;
        let mut at = 0;
        for (c, &bits) in df.bits[..df.comps].iter().enumerate() {
            let raw = if c >= n {
                0
            } else {
                match width {
                    Width::B32 => component_from_32(&df, bits, w.get_lane(i.src[1], l, c)),
                    Width::D16 => {
                        let v = w.get_lane(i.src[1], l, c / 2) >> (16 * (c % 2));
                        component_from_16(&df, bits, v as u16)
                    }
                    Width::D16Hi => {
                        component_from_16(&df, bits, (w.get_lane(i.src[1], l, 0) >> 16) as u16)
                    }
                }
            };
            element |= (raw as u128) << at;
            at += bits as u32;
        }
        let bytes = element.to_le_bytes();
        let loc = place(w, l, b.addr(index, offset), df.bytes());
        write(w, env, l, loc, &bytes[..df.bytes() as usize])?;
    }
    Ok(Flow::Next)
}

/// `buffer_load_lds_*`: the loaded dword goes to LDS instead of VGPRs, at
/// M0[15:0] + inst_offset + TID*4 ("LDS_offset = 16-bit unsigned byte
/// offset from M0[15:0]"; "TIDinWave is only added [to the memory address]
/// if the resource has ADD_TID_ENABLE set, whereas LDS adds it").
/// uncertain: the RDNA3 guide omits these opcodes; this follows the RDNA2
/// guide §8.1.9. Sub-dword loads write the dword they extend to.
fn load_lds(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, ext: Ext) -> Result {
    let b = buffer(w, i);
    let lds_base = lds_dma_base(w, i);
    dword_to_lds(w, env, bytes, ext, lds_base, |w, l, len| {
        b.locate(w, i, l, 0, len)
    })
}

/// A load into LDS: each lane EXEC has on reads `bytes` at `locate(w,
/// lane, bytes)`, extends them to a dword (`ext`) and writes it to LDS at
/// `lds_base` + 4·lane; the sanitizers see both accesses first.
fn dword_to_lds(
    w: &mut Wave,
    env: &mut Env,
    bytes: usize,
    ext: Ext,
    lds_base: u64,
    locate: impl Fn(&Wave, usize, u64) -> Loc,
) -> Result {
    if env.sanitizer.is_some() {
        let len = bytes as u64;
        sanitize(w, env, Use::Read, len, |w, l| locate(w, l, len))?;
        sanitize(w, env, Use::Write, 4, |_, l| {
            Loc::Lds(lds_base + 4 * l as u64)
        })?;
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mut v = [0u8; 4];
        read(w, env, l, locate(w, l, bytes as u64), &mut v[..bytes])?;
        let dword = lds_dword(u32::from_le_bytes(v), bytes, ext);
        lds_write(env.lds, lds_base + 4 * l as u64, &dword.to_le_bytes());
    }
    Ok(Flow::Next)
}

/// `buffer_load_lds_format_x`: the X component converted as by
/// `buffer_load_format_x`, written to LDS like the other LDS loads.
fn load_lds_format(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let b = buffer(w, i);
    let df = format_of(i, &b)?;
    let lds_base = lds_dma_base(w, i);
    let s = b.rsrc.dst_sel[0];
    if env.sanitizer.is_some() {
        if let Some(df) = &df {
            sanitize(w, env, Use::Read, df.bytes(), |w, l| {
                b.locate(w, i, l, 0, df.bytes())
            })?;
        }
        sanitize(w, env, Use::Write, 4, |_, l| {
            Loc::Lds(lds_base + 4 * l as u64)
        })?;
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let comps = match &df {
            Some(df) => format_read(w, env, i, &b, df, l)?,
            None => None,
        };
        let v = match (s, &comps, &df) {
            (1, _, Some(d)) if matches!(d.num, NumFormat::Uint | NumFormat::Sint) => 1,
            (1, _, _) => 0x3f80_0000,
            (4..=7, Some(c), Some(d)) if (s as usize - 4) < d.comps => {
                component_to_32(d, d.bits[s as usize - 4], c[s as usize - 4])
            }
            _ => 0,
        };
        lds_write(env.lds, lds_base + 4 * l as u64, &v.to_le_bytes());
    }
    Ok(Flow::Next)
}

/// The LDS address of lane 0 of a MUBUF load into LDS (or store from
/// it): M0[15:0] + inst_offset; lane `l`'s dword is 4·l past it.
fn lds_dma_base(w: &Wave, i: &Inst) -> u64 {
    (w.sgpr[softgpu_isa::sreg::M0 as usize] & 0xffff) as u64 + (i.imm as u32 as u64 & 0xfff)
}

/// A loaded byte, halfword or dword as the dword LDS receives.
fn lds_dword(raw: u32, bytes: usize, ext: Ext) -> u32 {
    match (ext, bytes) {
        (Ext::Sign, 1) => raw as u8 as i8 as i32 as u32,
        (Ext::Sign, 2) => raw as u16 as i16 as i32 as u32,
        _ => raw,
    }
}

/// gfx94's `global_load_lds_*` / `scratch_load_lds_*` (CDNA3 guide,
/// global and scratch loads to LDS; gfx90a's the plain loads with the
/// `lds` bit): each lane's byte, halfword or dword
/// at its global/scratch address goes, extended to a dword, to LDS at
/// M0 + inst_offset + 4·lane (LLVM's `global.load.lds`: the instruction
/// offset applies to both addresses). uncertain: the width of M0 read;
/// the whole register is added here and an address past LDS is dropped.
fn site_load_lds(w: &mut Wave, env: &mut Env, i: &Inst, bytes: usize, ext: Ext) -> Result {
    let site = Site::of(w, i, i.op.info().format);
    let m0 = w.sgpr[softgpu_isa::sreg::M0 as usize] as u64;
    let lds_base = (m0 as u32).wrapping_add(i.imm as u32) as u64;
    dword_to_lds(w, env, bytes, ext, lds_base, |w, l, len| {
        site.locate(w, i, l, len)
    })
}

/// CDNA's `buffer_store_lds_dword`: the reverse of a MUBUF load into LDS,
/// each lane's dword read from LDS at M0[15:0] + inst_offset + 4·lane and
/// stored at the lane's buffer address (no VGPR data, no vaddr).
fn store_from_lds(w: &mut Wave, env: &mut Env, i: &Inst) -> Result {
    let b = buffer(w, i);
    let lds_base = lds_dma_base(w, i);
    if env.sanitizer.is_some() {
        sanitize(w, env, Use::Write, 4, |w, l| b.locate(w, i, l, 0, 4))?;
        sanitize(w, env, Use::Read, 4, |_, l| {
            Loc::Lds(lds_base + 4 * l as u64)
        })?;
    }
    let exec = w.exec();
    for l in 0..w.lanes {
        if exec >> l & 1 == 0 {
            continue;
        }
        let v = super::ds::lds_read::<4>(env.lds, lds_base + 4 * l as u64);
        let loc = b.locate(w, i, l, 0, 4);
        write(w, env, l, loc, &v)?;
    }
    Ok(Flow::Next)
}

/// gfx90a's loads with the `lds` bit, whose data goes to LDS at M0 (CDNA2
/// guide, loads to LDS), each with the op that loads the same into LDS:
/// MUBUF's `buffer_load_lds_*`, GLOBAL's and SCRATCH's gfx940's
/// `*_load_lds_*`. The bit makes a load the other op; its handler serves.
const LDS_TWINS: &[(Op, Op)] = &[
    (Op::BUFFER_LOAD_DWORD, Op::BUFFER_LOAD_LDS_B32),
    (Op::BUFFER_LOAD_UBYTE, Op::BUFFER_LOAD_LDS_U8),
    (Op::BUFFER_LOAD_SBYTE, Op::BUFFER_LOAD_LDS_I8),
    (Op::BUFFER_LOAD_USHORT, Op::BUFFER_LOAD_LDS_U16),
    (Op::BUFFER_LOAD_SSHORT, Op::BUFFER_LOAD_LDS_I16),
    (Op::BUFFER_LOAD_FORMAT_X, Op::BUFFER_LOAD_LDS_FORMAT_X),
    (Op::GLOBAL_LOAD_DWORD, Op::GLOBAL_LOAD_LDS_DWORD),
    (Op::GLOBAL_LOAD_UBYTE, Op::GLOBAL_LOAD_LDS_UBYTE),
    (Op::GLOBAL_LOAD_SBYTE, Op::GLOBAL_LOAD_LDS_SBYTE),
    (Op::GLOBAL_LOAD_USHORT, Op::GLOBAL_LOAD_LDS_USHORT),
    (Op::GLOBAL_LOAD_SSHORT, Op::GLOBAL_LOAD_LDS_SSHORT),
    (Op::SCRATCH_LOAD_DWORD, Op::SCRATCH_LOAD_LDS_DWORD),
    (Op::SCRATCH_LOAD_UBYTE, Op::SCRATCH_LOAD_LDS_UBYTE),
    (Op::SCRATCH_LOAD_SBYTE, Op::SCRATCH_LOAD_LDS_SBYTE),
    (Op::SCRATCH_LOAD_USHORT, Op::SCRATCH_LOAD_LDS_USHORT),
    (Op::SCRATCH_LOAD_SSHORT, Op::SCRATCH_LOAD_LDS_SSHORT),
];

/// The op a load with the `lds` bit runs as (the table `LDS_TWINS`).
pub fn lds_twin(op: Op) -> Option<Op> {
    look_up(LDS_TWINS, op)
}

/// The typed ops under their MUBUF (`buffer_`) and MTBUF (`tbuffer_`) names.
const FORMAT_OPS: &[(MemOp, Exec)] = &[
    (MemOp::LOAD_FORMAT_X, bind!(format_load, 1, Width::B32)),
    (MemOp::LOAD_FORMAT_XY, bind!(format_load, 2, Width::B32)),
    (MemOp::LOAD_FORMAT_XYZ, bind!(format_load, 3, Width::B32)),
    (MemOp::LOAD_FORMAT_XYZW, bind!(format_load, 4, Width::B32)),
    (MemOp::STORE_FORMAT_X, bind!(format_store, 1, Width::B32)),
    (MemOp::STORE_FORMAT_XY, bind!(format_store, 2, Width::B32)),
    (MemOp::STORE_FORMAT_XYZ, bind!(format_store, 3, Width::B32)),
    (MemOp::STORE_FORMAT_XYZW, bind!(format_store, 4, Width::B32)),
    (MemOp::LOAD_D16_FORMAT_X, bind!(format_load, 1, Width::D16)),
    (MemOp::LOAD_D16_FORMAT_XY, bind!(format_load, 2, Width::D16)),
    (
        MemOp::LOAD_D16_FORMAT_XYZ,
        bind!(format_load, 3, Width::D16),
    ),
    (
        MemOp::LOAD_D16_FORMAT_XYZW,
        bind!(format_load, 4, Width::D16),
    ),
    (
        MemOp::STORE_D16_FORMAT_X,
        bind!(format_store, 1, Width::D16),
    ),
    (
        MemOp::STORE_D16_FORMAT_XY,
        bind!(format_store, 2, Width::D16),
    ),
    (
        MemOp::STORE_D16_FORMAT_XYZ,
        bind!(format_store, 3, Width::D16),
    ),
    (
        MemOp::STORE_D16_FORMAT_XYZW,
        bind!(format_store, 4, Width::D16),
    ),
];

/// Memory float atomic add "is hardwired to flush input denormals - it does
/// not use the MODE.fp_denorm bits" (§13.2), rounding to nearest even
/// (§13.1); it replaces the shared, non-flushing `add_f32`.
pub(super) fn add_f32_flush_in(o: u32, d: u32, _: u32) -> u32 {
    (f(flush32(o)) + f(flush32(d))).to_bits()
}

pub const TABLE: &[(Op, Exec)] = &[
    (Op::GLOBAL_LOAD_BLOCK, bind!(block, false)),
    (Op::SCRATCH_LOAD_BLOCK, bind!(block, false)),
    (Op::GLOBAL_STORE_BLOCK, bind!(block, true)),
    (Op::SCRATCH_STORE_BLOCK, bind!(block, true)),
    (Op::GLOBAL_LOAD_TR_B64, bind!(load_transpose, 8)),
    (Op::GLOBAL_LOAD_TR_B128, bind!(load_transpose, 16)),
    (
        Op::GLOBAL_LOAD_ADDTID_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| addtid(w, env, i, false)) as Exec,
    ),
    (
        Op::GLOBAL_STORE_ADDTID_B32,
        (|w: &mut Wave, env: &mut Env, i: &Inst| addtid(w, env, i, true)) as Exec,
    ),
    (Op::BUFFER_GL0_INV, super::nop as Exec),
    (Op::BUFFER_GL1_INV, super::nop as Exec),
    (
        Op::BUFFER_LOAD_D16_HI_FORMAT_X,
        bind!(format_load, 1, Width::D16Hi),
    ),
    (
        Op::BUFFER_STORE_D16_HI_FORMAT_X,
        bind!(format_store, 1, Width::D16Hi),
    ),
    (Op::BUFFER_LOAD_LDS_U8, bind!(load_lds, 1, Ext::Zero)),
    (Op::BUFFER_LOAD_LDS_I8, bind!(load_lds, 1, Ext::Sign)),
    (Op::BUFFER_LOAD_LDS_U16, bind!(load_lds, 2, Ext::Zero)),
    (Op::BUFFER_LOAD_LDS_I16, bind!(load_lds, 2, Ext::Sign)),
    (Op::BUFFER_LOAD_LDS_B32, bind!(load_lds, 4, Ext::Zero)),
    (Op::BUFFER_LOAD_LDS_FORMAT_X, load_lds_format as Exec),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// gfx10 numbers the formats from 30 on in its own order (each packed
    /// layout with its run of kinds); the ones gfx11 also has decode as
    /// gfx11's numbers do, those below 30 are numbered alike, and gfx10's
    /// extra kinds (10_11_11_UNORM) decode by their names.
    #[test]
    fn gfx10_formats_renumber_gfx11s() {
        let same =
            |a: DataFormat, b: DataFormat| (a.bits, a.comps, a.num) == (b.bits, b.comps, b.num);
        // 10_11_11_FLOAT, 11_11_10_FLOAT, 10_10_10_2_UNORM,
        // 2_10_10_10_SINT, 8_8_8_8_UNORM, 32_32_FLOAT, 16_16_16_16_FLOAT,
        // 32_32_32_UINT, 32_32_32_32_FLOAT.
        let pairs = [
            (36, 30),
            (43, 31),
            (44, 32),
            (55, 41),
            (56, 42),
            (64, 50),
            (71, 57),
            (72, 58),
            (77, 63),
        ];
        for (g10, g11) in pairs {
            let (a, b) = (data_format_in(Family::Gfx10, g10), data_format(g11));
            assert!(a.zip(b).is_some_and(|(a, b)| same(a, b)), "{g10} vs {g11}");
        }
        for f in 1..30 {
            let (a, b) = (data_format_in(Family::Gfx10, f), data_format(f));
            assert!(a.zip(b).is_some_and(|(a, b)| same(a, b)), "{f}");
        }
        let unorm = data_format_in(Family::Gfx10, 30).map(|d| (d.bits, d.comps, d.num));
        assert_eq!(unorm, Some(([11, 11, 10, 0], 3, NumFormat::Unorm)));
        assert!(data_format_in(Family::Gfx10, 0).is_none());
        assert!(data_format_in(Family::Gfx10, 78).is_none());
        assert!(data_format_in(Family::Gfx11, 64).is_none());
    }
}
