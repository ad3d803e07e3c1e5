//! Cranelift IR for one planned block.
//!
//! The scalar phase is straight-line code, and so is each chunk but for
//! one cold path (see [`Pass`]), so register state is plain SSA values
//! kept in maps: a register is loaded on first use and stored once at the
//! chunk's end. The chunks are emitted one after another, or for a large
//! block as one loop over them (`Emitter::chunk_loop`). Every op a
//! block holds is lane-local (no op moves data between lanes) and EXEC is
//! fixed for the block, so the emitter may run the
//! vector ops chunk by chunk — all of the block's vector ops over lanes
//! 0..3, then 4..7, … — keeping a chunk's registers in host SIMD
//! registers, and apply EXEC once per written register when the chunk is
//! stored, instead of once per instruction. Scalar ops run first, in
//! order; the values a vector op reads from SGPRs are the ones its
//! program point sees. The planner (`super::plan`) ends a block before any
//! op this order would get wrong: a scalar read of a mask a vector
//! compare of the block wrote.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, F64X2, I32, I32X4, I64, I64X2, I8, I8X16};
use cranelift_codegen::ir::{
    AbiParam, BlockArg, ConstantData, Endianness, InstBuilder, MachMemFlags, Signature, StackSlot,
    StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_frontend::FunctionBuilder;
use softgpu_isa::{sreg, Inst, Operand};

use super::access;
use super::lower::{
    mask_dst, Carry, Class, Cond, FloatCmp, IntCmp, Lane, LdsOffsets, LdsShape, Scalar, Shift64,
    F64,
};
use super::plan::{Plan, Step};
use softgpu_interp::float::{ldexp64, Round};
use softgpu_interp::wave::MAX_LANES;

/// The most vector ops times chunks a block emits unrolled, chunk after
/// chunk; a larger one is emitted as a loop over its chunks. Unrolled, a
/// small block runs up to 10-15% faster (constant offsets and shifts, no
/// loop-carried values); a large one compiles several times slower for
/// no gain (SGEMM's 35-op inner block took 46 ms to compile unrolled; the
/// kernel's 15 blocks, all as loops, take 13 ms).
const UNROLL_OPS: usize = 128;

/// Bytes of one VGPR (`[u32; MAX_LANES]`) and of one SIMD chunk of it.
const VGPR_BYTES: i32 = (MAX_LANES * 4) as i32;
pub(super) const CHUNK_LANES: usize = 4;

/// A vector op's source as the chunk loop sees it.
#[derive(Clone, Copy)]
enum Src {
    Zero,
    Vgpr(u16),
    /// A uniform value: the scalar and its splat.
    Uniform(Value, Value),
    /// A lane mask read as a scalar (I32 in wave32, I64 in wave64).
    MaskScalar(Value),
    /// A lane mask a vector compare earlier in the block wrote to this SGPR.
    MaskVector(u8),
    /// A uniform 64-bit value (an SGPR pair or a constant): its low and
    /// high words, splat.
    Pair([Value; 2]),
}

/// One vector op ready for the chunk loop.
struct VOp<'p> {
    inst: &'p Inst,
    class: Class,
    src: [Src; 3],
    /// Index of this compare's mask accumulator.
    acc: Option<usize>,
    /// Where a global load's dwords are, read in the scalar phase.
    staged: Option<Staged>,
    /// A scratch access's private address (I64), the same for every lane,
    /// checked in the scalar phase (`Emitter::scratch_address`).
    scratch: Option<Value>,
}

/// Where a global load's dwords are for the chunk loop: a table of the
/// address of each chunk's first row (less `offset`), the bytes from one
/// row to the next, and the bytes to add to a table entry (the load's
/// offset where loads from one address VGPR share a table).
#[derive(Clone, Copy)]
struct Staged {
    table: Value,
    stride: Value,
    offset: Value,
}

/// The layout of a global load's lanes, shared by the loads of a block
/// from one address VGPR (`Emitter::row_layouts`): the table of each
/// chunk's first address (without the load's own offset), whether the
/// lanes are rows (an I8), and the lowest and highest table entry.
#[derive(Clone, Copy)]
struct RowLayout {
    table: Value,
    rows: Value,
    lowest: Value,
    highest: Value,
}

/// Where the chunk loop is: the chunk the loop's body works on this time
/// round, as values of the loop.
#[derive(Clone, Copy)]
struct At {
    /// The register file from the chunk's first lane: VGPR `r`'s four
    /// lanes are the 16 bytes at `r * VGPR_BYTES` from here.
    rows: Value,
    /// The chunk's first lane (I64): a lane mask's bits for the chunk are
    /// its bits from here.
    lane: Value,
    /// The chunk's index (I64).
    index: Value,
}

/// What one vector op gives over a chunk.
struct Out {
    /// The values of `dst[0]` and, for a 64-bit result, the next VGPR.
    vgpr: Vec<Value>,
    /// All-ones or zero lanes, for the op's mask destination.
    mask: Option<Value>,
}

/// A group of vector ops that read their sources before any writes: one
/// op, or the two halves of a VOPD.
type Group<'p> = Vec<VOp<'p>>;

/// What one pass over a chunk gives: the final value of every VGPR its ops
/// write, and each compare's mask bits for the chunk's lanes (by the
/// compare's accumulator, shifted into place, other lanes zero).
#[derive(Default)]
struct ChunkOut {
    written: BTreeMap<u16, Value>,
    mask_parts: BTreeMap<usize, Value>,
}

impl ChunkOut {
    /// Everything the pass hands on, in a fixed order (for block params).
    fn values(&self) -> Vec<Value> {
        let masks = self.mask_parts.values();
        self.written.values().chain(masks).copied().collect()
    }

    /// The same keys with `values`, in [`ChunkOut::values`]' order.
    fn set_values(&mut self, values: &[Value]) {
        let slots = self
            .written
            .values_mut()
            .chain(self.mask_parts.values_mut());
        for (slot, &v) in slots.zip(values) {
            *slot = v;
        }
    }
}

/// How a chunk's ops are emitted. A few ops have a rule that SIMD does not
/// give directly: the interpreter's NaN operand choice for FMA and f64
/// ops, `v_ldexp_f64` outside normal numbers. Branching per op around
/// them cost 40% of an FMA-heavy block, so a chunk is emitted twice: the
/// fast pass computes the plain SIMD result and collects the lanes where
/// it might be wrong (a NaN result, an ldexp outside the fast case); if an
/// active lane is among them, a cold copy of the chunk recomputes all of
/// it exactly from the same registers (nothing is stored before the
/// chunk's end) and rejoins before the stores.
enum Pass {
    Fast {
        /// Lanes (all-ones or zero 32-bit lanes) whose fast result is in
        /// doubt, active or not.
        doubt: Option<Value>,
        /// Results whose NaN lanes are yet to be put in doubt (each as its
        /// vectors: one F32X4, or two F64X2 halves), at most one of each
        /// shape: one unordered compare takes two results of a shape (a
        /// lane is in doubt when either is a NaN), so they are tested in
        /// pairs, and a result left over at the chunk's end alone.
        unpaired: Vec<Vec<Value>>,
        /// Whether an LDS window load was clamped (an I8 flag; the whole
        /// chunk is in doubt then), gathered as a scalar and splat once
        /// at the chunk's end.
        clamped: Option<Value>,
    },
    Exact,
}

pub struct Emitter<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    /// Whether the chunks are emitted one after another rather than as a
    /// loop (`chunk_loop`).
    unroll: bool,
    vgpr: Value,
    sgpr: Value,
    scc_ptr: Value,
    wave64: bool,
    flags: MachMemFlags,
    sgprs: HashMap<u8, Value>,
    sgpr_dirty: BTreeSet<u8>,
    scc: Option<Value>,
    scc_dirty: bool,
    exec: Option<Value>,
    pass: Pass,
    /// Pairs of 32-bit word vectors already interleaved into 64-bit lanes
    /// (`pairs_to_x2`), keyed by the two word vectors: an f64 op's result
    /// feeds the next f64 op without a round trip through the word layout.
    /// SSA values never change, so an entry stays true.
    x2: HashMap<(Value, Value), [Value; 2]>,
    /// The workgroup's LDS: its address and length in bytes.
    lds: Value,
    lds_len: Value,
    /// Per LDS access shape (offset, bytes): the splat bound an address
    /// must be below for the access to lie wholly inside LDS, computed
    /// once in the entry block so that it dominates every chunk.
    lds_bounds: HashMap<(u64, u64), Value>,
    /// The layout of each LDS address vector of the current pass.
    lds_layouts: HashMap<Value, LdsLayout>,
    /// `lds_len - 16`: the last address a 16-byte window may start at
    /// (the run loop gives a block with LDS loads at least 16 bytes).
    /// By address VGPR of dword loads: the highest lane 0 address whose
    /// windows stay inside LDS (its length less their reach).
    lds_limits: HashMap<u16, Value>,
    /// The window of each LDS address vector of the current pass.
    lds_windows: HashMap<Value, LdsWindow>,
    /// 16 bytes of the block's stack frame that a store lane out of range
    /// or off writes instead of LDS, so a store needs no branch per lane.
    lds_discard: Option<Value>,
    /// The scalar loads that share one range check (`scalar_spans`).
    scalar_spans: ScalarSpans,
    /// By address VGPR, whether it is a pair, and the SGPR base's words
    /// as the block holds them (none: no base): the layout its loads at
    /// dword offsets share (`global_rows`).
    row_layouts: HashMap<(u16, bool, Option<[Value; 2]>), RowLayout>,
    /// The dispatch's `&Memory`, which the `access` helpers take.
    mem: Value,
    /// The block's `access::Context`, for the checks it answers itself
    /// (`quick_allows`).
    cx: Value,
    /// The exit taken when a helper refuses an access: it returns
    /// [`super::BAIL`], the block having changed nothing.
    bail: Option<cranelift_codegen::ir::Block>,
    /// The wave's `PrivateMemory`, which `scratch::pages` takes.
    private: Value,
    /// Its page table and bytes a lane (I64s), asked once a block at its
    /// first scratch access (`Emitter::scratch_table`).
    scratch_table: Option<ScratchTable>,
    /// 16 bytes of the block's stack frame that a scratch store lane EXEC
    /// leaves off writes instead, so a store needs no branch per lane.
    scratch_discard: Option<Value>,
}

/// A chunk's four LDS addresses as offsets into one 16-byte window at lane
/// 0's address (`Emitter::lds_window`).
#[derive(Clone, Copy)]
struct LdsWindow {
    /// Where lane 0's address is in host memory (LDS's start instead when
    /// a window from it would pass LDS's end).
    first: Value,
    /// The byte indices (I8X16) that gather each lane's dword from the
    /// window.
    index: Value,
}

/// How a chunk's four LDS addresses lie (`Emitter::lds_layout`): two
/// booleans and lane 0's host address.
#[derive(Clone, Copy)]
struct LdsLayout {
    row: Value,
    broadcast: Value,
    first: Value,
}

/// One LDS access of a chunk (`Emitter::lds_access`): its 32-bit
/// addresses, which wrap as `ops::ds` says; which lanes it leaves wholly
/// inside LDS at them; and which do so without wrapping (the row and
/// broadcast paths address LDS from the chunk's addresses plus the offset,
/// so they need every lane in place).
#[derive(Clone, Copy)]
struct LdsAccess {
    at: Value,
    inside: Value,
    in_place: Value,
}

impl<'a, 'b> Emitter<'a, 'b> {
    /// `params`: the block function's `(vgpr, sgpr, scc, lds, lds_len,
    /// memory, private)`.
    pub fn new(b: &'a mut FunctionBuilder<'b>, params: [Value; 7], wave64: bool) -> Self {
        let (cx, context) = (params[5], MachMemFlags::trusted().with_readonly());
        let mem = b.ins().load(I64, context, cx, access::Context::MEM);
        Emitter {
            cx,
            private: params[6],
            scratch_table: None,
            scratch_discard: None,
            unroll: true,
            b,
            mem,
            bail: None,
            vgpr: params[0],
            sgpr: params[1],
            scc_ptr: params[2],
            lds: params[3],
            lds_len: params[4],
            lds_bounds: HashMap::new(),
            lds_layouts: HashMap::new(),
            lds_limits: HashMap::new(),
            lds_windows: HashMap::new(),
            lds_discard: None,
            scalar_spans: ScalarSpans::new(),
            row_layouts: HashMap::new(),
            wave64,
            // The register file is ours for the call; `[u32; 64]` rows are
            // only 4-byte aligned, so no alignment is claimed.
            flags: MachMemFlags::new().with_notrap(),
            sgprs: HashMap::new(),
            sgpr_dirty: BTreeSet::new(),
            scc: None,
            scc_dirty: false,
            exec: None,
            pass: Pass::Exact,
            x2: HashMap::new(),
        }
    }

    /// Emits the whole block and returns the value of the next slot index.
    pub fn block(mut self, plan: &Plan) -> Value {
        self.scalar_spans = scalar_spans(plan);
        let (groups, accs) = self.scalar_phase(plan);
        let stores: Vec<(&Inst, LdsShape)> = plan
            .steps
            .iter()
            .filter_map(|s| match *s {
                Step::LdsStore(inst, shape) => Some((inst, shape)),
                _ => None,
            })
            .collect();
        self.lds_bounds(&groups, &stores);
        let ops: usize = groups.iter().map(Vec::len).sum::<usize>()
            + stores.len()
            + groups.iter().flatten().map(scratch_weight).sum::<usize>();
        let chunks = if self.wave64 { 16 } else { 8 };
        self.unroll = ops * chunks <= UNROLL_OPS;
        // Read before the loops, so that the cached value dominates every
        // use.
        let exec = self.exec_mask();
        let ty = self.mask_type();
        let none = self.b.ins().iconst(ty, 0);
        let masks = self.chunk_loop(&vec![none; accs.len()], |e, at, masks| {
            let mut masks = masks.to_vec();
            e.chunk(&groups, at, &mut masks);
            masks
        });
        for &(inst, shape) in &stores {
            self.chunk_loop(&[], |e, at, _| {
                e.lds_store(inst, shape, at);
                Vec::new()
            });
        }
        self.store_scalars();
        if let Some(bail) = self.bail {
            self.b.seal_block(bail);
        }
        let mut vcc = None;
        for (&dst, &k) in &final_mask_writers(&groups) {
            let mask = self.b.ins().band(masks[k], exec);
            self.store_mask(dst, mask);
            if dst == sreg::VCC_LO {
                vcc = Some(mask);
            }
        }
        if let Some(&Step::GlobalStore(inst, flat)) = plan.steps.last() {
            self.global_store(inst, flat);
        }
        self.next(plan, vcc)
    }

    /// Runs the scalar ops in order, resolving each vector op's scalar
    /// sources at its program point.
    fn scalar_phase<'p>(&mut self, plan: &Plan<'p>) -> (Vec<Group<'p>>, Vec<usize>) {
        let mut groups = Vec::new();
        let mut accs = Vec::new();
        let mut vector_masks = BTreeSet::new();
        for step in &plan.steps {
            match *step {
                Step::Hint | Step::Branch(..) | Step::LdsStore(..) | Step::GlobalStore(..) => {}
                Step::Scalar(inst, op) => self.scalar(inst, op, false),
                Step::Scalar64(inst, op) => self.scalar(inst, op, true),
                Step::ReadLane(inst, first) => self.read_lane(inst, first),
                Step::GetPc(inst, addr) => {
                    if let Operand::Sgpr(r) = inst.dst[0] {
                        for (k, half) in [addr as u32, (addr >> 32) as u32].into_iter().enumerate()
                        {
                            let v = self.b.ins().iconst(I32, half as i64);
                            self.write_sgpr(r + k as u8, v);
                        }
                    }
                }
                Step::ScalarLoad(inst, dwords) => self.scalar_load(inst, dwords),
                Step::Vector(ref halves) => {
                    let mut group = Vec::new();
                    for &(inst, class) in halves {
                        let src = std::array::from_fn(|k| self.vsrc(inst, k, &vector_masks));
                        let acc = mask_dst(class, inst).is_some().then(|| {
                            accs.push(0);
                            accs.len() - 1
                        });
                        let staged = match class {
                            Class::GlobalLoad { dwords, flat } => {
                                Some(self.global_rows(inst, dwords, flat))
                            }
                            _ => None,
                        };
                        let scratch = match class {
                            Class::ScratchLoad { bytes, .. } | Class::ScratchStore { bytes } => {
                                let store = matches!(class, Class::ScratchStore { .. });
                                Some(self.scratch_address(inst, bytes, store))
                            }
                            _ => None,
                        };
                        group.push(VOp {
                            inst,
                            class,
                            src,
                            acc,
                            staged,
                            scratch,
                        });
                    }
                    for op in &group {
                        if let Some(Operand::Sgpr(r)) = mask_dst(op.class, op.inst) {
                            vector_masks.insert(r);
                        }
                    }
                    groups.push(group);
                }
            }
        }
        (groups, accs)
    }

    fn vsrc(&mut self, inst: &Inst, k: usize, vector_masks: &BTreeSet<u8>) -> Src {
        let ty = inst.op.info().src[k];
        match inst.src[k] {
            Operand::None => Src::Zero,
            Operand::Vgpr(r) => Src::Vgpr(r),
            op if ty.dwords() == 2 => {
                let halves = match op {
                    Operand::Const(c) => [c as u32, (c >> 32) as u32].map(|h| self.splat_const(h)),
                    Operand::Sgpr(r) => [r, r + 1].map(|h| {
                        let v = self.read_sgpr(h);
                        self.b.ins().splat(I32X4, v)
                    }),
                    _ => unreachable!("the planner passes 64-bit sources in pairs or constants"),
                };
                Src::Pair(halves)
            }
            Operand::Sgpr(r) if ty == softgpu_isa::Ty::Mask => {
                if vector_masks.contains(&r) {
                    Src::MaskVector(r)
                } else {
                    Src::MaskScalar(self.read_mask(r))
                }
            }
            op => {
                let v = self.scalar_src(op);
                let splat = self.b.ins().splat(I32X4, v);
                Src::Uniform(v, splat)
            }
        }
    }

    // ---- scalar state ---------------------------------------------------

    fn read_sgpr(&mut self, r: u8) -> Value {
        if let Some(&v) = self.sgprs.get(&r) {
            return v;
        }
        let v = self.b.ins().load(I32, self.flags, self.sgpr, 4 * r as i32);
        self.sgprs.insert(r, v);
        v
    }

    /// `s_load_b*` (as `ops::smem` computes it: base + offset + SOFFSET,
    /// the low two bits cleared), read straight from device memory once
    /// `access::scalar_ok` allowed all its dwords; otherwise the block
    /// leaves (`leave_unless`) and the interpreter runs the load, which
    /// faults or reads as the rules say. Loads at constant offsets from a
    /// base the block has not written yet are checked together, at the
    /// first: the span from the lowest to the highest byte any reads
    /// (typically the kernel arguments, four or five loads a wave).
    fn scalar_load(&mut self, inst: &Inst, dwords: u8) {
        let Operand::Sgpr(base) = inst.src[0] else {
            unreachable!("form_ok: the base is an SGPR pair")
        };
        let base_addr = self.sgpr_pair(base);
        let addr = self.b.ins().iadd_imm_s(base_addr, inst.imm as i64);
        let soffset = self.scalar_src(inst.src[1]);
        let soffset = self.b.ins().uextend(I64, soffset);
        let addr = self.b.ins().iadd(addr, soffset);
        let addr = self.b.ins().band_imm_u(addr, !3);
        let check = match self.scalar_spans.get(&(inst as *const Inst)) {
            Some(None) => None,
            Some(&Some((lo, hi))) => {
                let start = self.b.ins().iadd_imm_s(base_addr, lo);
                let start = self.b.ins().band_imm_u(start, !3);
                let end = self.b.ins().iadd_imm_s(base_addr, hi);
                Some((start, self.b.ins().isub(end, start)))
            }
            None => Some((addr, self.b.ins().iconst(I64, 4 * dwords as i64))),
        };
        if let Some((start, bytes)) = check {
            let end = self.b.ins().iadd(start, bytes);
            let quick = self.quick_allows(start, end, false);
            let ok = self.unless_quick(quick, |e| {
                let helper = access::scalar_ok as access::ScalarOk as usize;
                e.call(helper, &[I64, I64, I64], &[e.mem, start, bytes])
            });
            self.leave_unless(ok);
        }
        let Operand::Sgpr(dst) = inst.dst[0] else {
            unreachable!("form_ok: the result is SGPRs")
        };
        for k in 0..dwords {
            let v = self.b.ins().load(I32, self.flags, addr, 4 * k as i32);
            self.write_sgpr(dst.wrapping_add(k), v);
        }
    }

    /// The 64-bit value of SGPRs `r`, `r + 1`.
    fn sgpr_pair(&mut self, r: u8) -> Value {
        let lo = self.read_sgpr(r);
        let hi = self.read_sgpr(r.wrapping_add(1));
        let lo = self.b.ins().uextend(I64, lo);
        let hi = self.b.ins().uextend(I64, hi);
        let hi = self.b.ins().ishl_imm_u(hi, 32);
        self.b.ins().bor(lo, hi)
    }

    /// A global or flat load's dwords for the whole wave, read now (in the
    /// scalar phase, before anything is stored): a table of, for each
    /// chunk, the address of its lanes' first dword, and the stride from a
    /// chunk's row of dword k to that of dword k + 1; the chunk loop reads
    /// the rows at the load's program point. In the usual case (every lane
    /// on, each chunk's lanes at consecutive dwords) the rows are device
    /// memory itself, found here with one range check (`access::rows_ok`):
    /// dword k of four consecutive lanes is four consecutive dwords, k
    /// dwords on from dword 0's (a stencil's `x - 1, x, x + 1`); only the
    /// active lanes need be, when some are off (a stencil's edge waves).
    /// Loads from one address VGPR at dword offsets (a stencil's
    /// neighbours) share the layout check and its table, each adding its
    /// offset (`row_layouts`). Otherwise `access::load_rows` checks the
    /// lanes and gathers them into a stack slot, rows a VGPR apart. The
    /// block leaves when the interpreter's wave-wide path would not take
    /// the load. The address VGPRs still hold their values from the
    /// block's start (the planner's rule), so they are read from the
    /// register file.
    fn global_rows(&mut self, inst: &Inst, dwords: u8, flat: bool) -> Staged {
        let Operand::Vgpr(v) = inst.src[0] else {
            unreachable!("form_ok: the address is a VGPR")
        };
        let lanes = if self.wave64 { 64 } else { 32 };
        let (low, high, base, exec) = self.lane_addresses(inst, v);
        let imm = inst.imm as i64;
        // A dword offset keeps every lane's alignment, so the layout from
        // the base alone answers for the load too.
        let shared = imm % 4 == 0;
        let (layout_add, offset) = if shared {
            (base, imm)
        } else {
            (self.b.ins().iadd_imm_s(base, imm), 0)
        };
        let base_words = match inst.src[2] {
            Operand::Sgpr(r) => Some([self.read_sgpr(r), self.read_sgpr(r.wrapping_add(1))]),
            _ => None,
        };
        let key = (v, high.is_some(), base_words);
        let layout = match self.row_layouts.get(&key) {
            Some(&layout) if shared => layout,
            _ => {
                let table = self.stack_slot(8 * (lanes / CHUNK_LANES) as u32);
                let table = self.b.ins().stack_addr(I64, table, 0);
                let (rows, lowest, highest) =
                    self.row_layout([low, layout_add, exec, table], high, false);
                let layout = RowLayout {
                    table,
                    rows,
                    lowest,
                    highest,
                };
                if shared {
                    self.row_layouts.insert(key, layout);
                }
                layout
            }
        };
        let (check, general, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        for ty in [I32, I64, I64, I64] {
            self.b.append_block_param(done, ty);
        }
        self.b.ins().brif(layout.rows, check, &[], general, &[]);
        self.b.switch_to_block(check);
        self.b.seal_block(check);
        let how = if flat { access::FLAT } else { 0 } | (dwords as u32) << access::DWORDS_SHIFT;
        let lowest = self.b.ins().iadd_imm_s(layout.lowest, offset);
        let highest = self.b.ins().iadd_imm_s(layout.highest, offset);
        let ok = self.rows_ok(lowest, highest, how);
        let in_place = self.b.ins().iconst(I64, 4);
        let at = self.b.ins().iconst(I64, offset);
        let args = [ok, layout.table, in_place, at].map(BlockArg::Value);
        self.b.ins().brif(ok, done, &args, general, &[]);
        self.b.switch_to_block(general);
        self.b.seal_block(general);
        let add = self.b.ins().iadd_imm_s(base, imm);
        let high = high.unwrap_or_else(|| self.b.ins().iconst(I64, 0));
        let shape = (lanes as i64) | (dwords as i64) << 8 | (flat as i64) << 16;
        let shape = self.b.ins().iconst(I32, shape);
        let table = self.stack_slot(8 * (lanes / CHUNK_LANES) as u32);
        let table_at = self.b.ins().stack_addr(I64, table, 0);
        let rows = self.stack_slot(dwords as u32 * VGPR_BYTES as u32);
        let rows_at = self.b.ins().stack_addr(I64, rows, 0);
        let helper = access::load_rows as access::LoadRows as usize;
        let args = [self.mem, low, high, add, exec, shape, table_at, rows_at];
        let ok = self.call(helper, &[I64, I64, I64, I64, I64, I32, I64, I64], &args);
        let gathered = self.b.ins().iconst(I64, VGPR_BYTES as i64);
        let none = self.b.ins().iconst(I64, 0);
        let args = [ok, table_at, gathered, none].map(BlockArg::Value);
        self.b.ins().jump(done, &args);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        let &[ok, table, stride, offset] = self.b.block_params(done) else {
            unreachable!("four parameters")
        };
        self.leave_unless(ok);
        Staged {
            table,
            stride,
            offset,
        }
    }

    /// A global or flat access's lane addresses as the `access` helpers
    /// take them, from address VGPR `v`: its row (the low words), the
    /// next row when the address is a 64-bit pair (the high words), the
    /// base added to each besides the instruction's offset (the SGPR base
    /// when there is one: the VGPR is then a 32-bit offset; else 0), and
    /// EXEC as an I64.
    fn lane_addresses(&mut self, inst: &Inst, v: u16) -> (Value, Option<Value>, Value, Value) {
        let add = match inst.src[2] {
            Operand::Sgpr(s) => self.sgpr_pair(s),
            _ => self.b.ins().iconst(I64, 0),
        };
        let low = self
            .b
            .ins()
            .iadd_imm_s(self.vgpr, (v as i32 * VGPR_BYTES) as i64);
        let high = match inst.src[2] {
            Operand::None => {
                let at = ((v as i32 + 1) * VGPR_BYTES) as i64;
                Some(self.b.ins().iadd_imm_s(self.vgpr, at))
            }
            _ => None,
        };
        let exec = self.exec_mask();
        let exec = if self.wave64 {
            exec
        } else {
            self.b.ins().uextend(I64, exec)
        };
        (low, high, add, exec)
    }

    /// The block's closing global or flat dword store, from the registers
    /// as the rest of the block left them. When every lane is on and each
    /// chunk's lanes address consecutive dwords, one range check
    /// (`access::rows_ok`, for writes) and each chunk is stored as one
    /// vector, in chunk order, so that of lanes storing to the same dword
    /// the last wins, as lane by lane; otherwise `access::store_lanes`
    /// stores as the interpreter's wave-wide path does. When neither may,
    /// the block returns [`super::STORE_LEFT`]: everything but the store
    /// has run, and the interpreter runs the store, faulting or storing
    /// lane by lane as the rules say.
    fn global_store(&mut self, inst: &Inst, flat: bool) {
        let (Operand::Vgpr(v), Operand::Vgpr(data)) = (inst.src[0], inst.src[1]) else {
            unreachable!("form_ok: the address and data are VGPRs")
        };
        let lanes = if self.wave64 { 64 } else { 32 };
        let (low, high, base, exec) = self.lane_addresses(inst, v);
        let add = self.b.ins().iadd_imm_s(base, inst.imm as i64);
        let row = self
            .b
            .ins()
            .iadd_imm_s(self.vgpr, (data as i32 * VGPR_BYTES) as i64);
        let table = self.stack_slot(8 * (lanes / CHUNK_LANES) as u32);
        let table_at = self.b.ins().stack_addr(I64, table, 0);
        let (whole, lanewise, left, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let how = access::WRITE | if flat { access::FLAT } else { 0 };
        let ok = self.rows_in_place([low, add, exec, table_at], high, how, lanewise);
        self.b.ins().brif(ok, whole, &[], lanewise, &[]);
        self.b.switch_to_block(whole);
        self.b.seal_block(whole);
        for chunk in 0..lanes / CHUNK_LANES {
            let words = self.b.ins().load(I32X4, self.flags, row, base_of(chunk));
            let to = self
                .b
                .ins()
                .load(I64, self.flags, table_at, 8 * chunk as i32);
            self.b.ins().store(self.flags, words, to, 0);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(lanewise);
        self.b.seal_block(lanewise);
        let high = high.unwrap_or_else(|| self.b.ins().iconst(I64, 0));
        let shape = self.b.ins().iconst(I32, lanes as i64 | (flat as i64) << 16);
        let helper = access::store_lanes as access::StoreLanes as usize;
        let args = [self.mem, low, high, add, exec, shape, row];
        let ok = self.call(helper, &[I64, I64, I64, I64, I64, I32, I64], &args);
        self.b.ins().brif(ok, done, &[], left, &[]);
        self.b.switch_to_block(left);
        self.b.seal_block(left);
        let code = self.b.ins().iconst(I32, super::STORE_LEFT as i64);
        self.b.ins().return_(&[code]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// Whether a whole-wave access of the dwords a lane `how` says (lane
    /// addresses as `lane_addresses` gives them: `low`, `add`, `exec`, and
    /// `high`) is rows the block may access in place: each chunk's lanes
    /// consecutive (`consecutive_rows` when every lane is on; for a load
    /// with some off, `active_rows`, which looks at the active lanes only;
    /// a store needs every lane on), each writing its chunk's first address
    /// to the table at `table`, and the range from the lowest chunk to the
    /// highest allowed by `access::rows_ok` (`how`: its flags). Branches
    /// to `otherwise` where the lanes are not rows; returns, in the block
    /// that asked `rows_ok`, its I32 answer.
    fn rows_in_place(
        &mut self,
        [low, add, exec, table]: [Value; 4],
        high: Option<Value>,
        how: u32,
        otherwise: cranelift_codegen::ir::Block,
    ) -> Value {
        let write = how & access::WRITE != 0;
        let (quick, lowest, highest) = self.row_layout([low, add, exec, table], high, write);
        let check = self.b.create_block();
        self.b.ins().brif(quick, check, &[], otherwise, &[]);
        self.b.switch_to_block(check);
        self.b.seal_block(check);
        self.rows_ok(lowest, highest, how)
    }

    /// `access::rows_ok`'s answer (an I32) for rows whose chunks' first
    /// addresses run from `lowest` to `highest`.
    fn rows_ok(&mut self, lowest: Value, highest: Value, how: u32) -> Value {
        // The range `rows_ok` checks, answered here when it is not too
        // wide for one window (a wrapped end makes it so) and, for a flat
        // access, the arena is clear of the apertures.
        let reach = access::rows_reach(how >> access::DWORDS_SHIFT);
        let end = self.b.ins().iadd_imm_s(highest, reach as i64);
        let span = self.b.ins().isub(end, lowest);
        let short = self.b.ins().icmp_imm_s(
            IntCC::UnsignedLessThanOrEqual,
            span,
            access::ROWS_SPAN as i64,
        );
        let mut quick = self.quick_allows(lowest, end, how & access::WRITE != 0);
        quick = self.b.ins().band(quick, short);
        if how & access::FLAT != 0 {
            let context = MachMemFlags::trusted().with_readonly();
            let flat = self
                .b
                .ins()
                .load(I64, context, self.cx, access::Context::FLAT);
            let flat = self.b.ins().icmp_imm_u(IntCC::NotEqual, flat, 0);
            quick = self.b.ins().band(quick, flat);
        }
        self.unless_quick(quick, |e| {
            let how = e.b.ins().iconst(I32, how as i64);
            let helper = access::rows_ok as access::RowsOk as usize;
            let args = [e.mem, lowest, highest, how];
            e.call(helper, &[I64, I64, I64, I32], &args)
        })
    }

    /// 1 (an I32) where `quick` (an I8) holds, without a call; otherwise
    /// `slow`'s answer, asked in a cold block.
    fn unless_quick(&mut self, quick: Value, slow: impl FnOnce(&mut Self) -> Value) -> Value {
        let (ask, done) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(ask);
        self.b.append_block_param(done, I32);
        let one = self.b.ins().iconst(I32, 1);
        self.b
            .ins()
            .brif(quick, done, &[BlockArg::Value(one)], ask, &[]);
        self.b.switch_to_block(ask);
        self.b.seal_block(ask);
        let answer = slow(self);
        self.b.ins().jump(done, &[BlockArg::Value(answer)]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        self.b.block_params(done)[0]
    }

    /// Whether (an I8) this thread's allowed ranges allow a kernel read
    /// (or `write`) of device addresses `[start, end)` now, answered as
    /// `Memory::window` first asks them, from the block's
    /// `access::Context` (`softgpu_arena::Quick` says how). 0 only sends
    /// the question to a helper, which asks the shadow.
    fn quick_allows(&mut self, start: Value, end: Value, write: bool) -> Value {
        use softgpu_arena::Quick as Q;
        let context = MachMemFlags::trusted().with_readonly();
        // The entries, count and serial change while blocks run: no
        // `readonly` on their loads.
        let live = MachMemFlags::trusted();
        let field = |e: &mut Self, ty, at: i32| {
            e.b.ins()
                .load(ty, context, e.cx, access::Context::QUICK + at)
        };
        let base = field(self, I64, Q::BASE);
        let offset = self.b.ins().isub(start, base);
        let end = self.b.ins().isub(end, base);
        let slot = self.b.ins().ushr_imm_s(offset, Q::SLOT_SHIFT);
        let slot = self.b.ins().band_imm_s(slot, Q::SLOT_MASK);
        let slot = self.b.ins().imul_imm_s(slot, Q::ENTRY_BYTES);
        let entries = field(self, I64, Q::ENTRIES);
        let entry = self.b.ins().iadd(entries, slot);
        let word = |e: &mut Self, at: i32| e.b.ins().load(I64, live, entry, at);
        let mut checks = Vec::new();
        let (arena, ours) = (word(self, Q::ENTRY_ARENA), field(self, I64, Q::ARENA));
        checks.push(self.b.ins().icmp(IntCC::Equal, arena, ours));
        let changes_at = field(self, I64, Q::CHANGES);
        let changes = self.b.ins().load(I64, live, changes_at, 0);
        let seen = word(self, Q::ENTRY_CHANGES);
        checks.push(self.b.ins().icmp(IntCC::Equal, seen, changes));
        let from = word(self, Q::ENTRY_START);
        checks.push(
            self.b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, offset, from),
        );
        let to = word(self, Q::ENTRY_END);
        checks.push(self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, to));
        // Not empty, and not wrapped past the end of the address space.
        checks.push(self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, offset));
        if write {
            let writable = self.b.ins().uload8(I32, live, entry, Q::ENTRY_WRITE);
            checks.push(self.b.ins().icmp_imm_u(IntCC::NotEqual, writable, 0));
        }
        let recycled_at = field(self, I64, Q::RECYCLED);
        let recycled = self.b.ins().load(I32, live, recycled_at, 0);
        let epoch = field(self, I32, Q::EPOCH);
        checks.push(
            self.b
                .ins()
                .icmp(IntCC::UnsignedLessThanOrEqual, recycled, epoch),
        );
        let first = checks[0];
        checks[1..]
            .iter()
            .fold(first, |all, &c| self.b.ins().band(all, c))
    }

    /// Whether a whole-wave access's lanes are rows (an I8; see
    /// `rows_in_place`), each chunk's first address written to `table`,
    /// and the lowest and highest of those. A store (`write`) writes whole
    /// chunks: every lane must be on.
    fn row_layout(
        &mut self,
        [low, add, exec, table]: [Value; 4],
        high: Option<Value>,
        write: bool,
    ) -> (Value, Value, Value) {
        let lanes = if self.wave64 { 64 } else { 32 };
        let full = u64::MAX >> (64 - lanes);
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, exec, full as i64);
        if write {
            let (rows, lowest, highest) = self.consecutive_rows(low, high, add, table);
            return (self.b.ins().band(rows, full), lowest, highest);
        }
        let (whole, some, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        for ty in [I8, I64, I64] {
            self.b.append_block_param(join, ty);
        }
        self.b.ins().brif(full, whole, &[], some, &[]);
        self.b.switch_to_block(whole);
        self.b.seal_block(whole);
        let found = self.consecutive_rows(low, high, add, table);
        self.jump_with(join, found);
        self.b.switch_to_block(some);
        self.b.seal_block(some);
        let found = self.active_rows(low, high, add, exec, table);
        self.jump_with(join, found);
        self.joined(join)
    }

    /// Jumps to `join` with a layout's flag, lowest and highest address.
    fn jump_with(&mut self, join: cranelift_codegen::ir::Block, found: (Value, Value, Value)) {
        let args = [found.0, found.1, found.2].map(BlockArg::Value);
        self.b.ins().jump(join, &args);
    }

    /// Continues in `join`, whose three parameters (a layout's flag,
    /// lowest and highest address, `jump_with`'s) it returns.
    fn joined(&mut self, join: cranelift_codegen::ir::Block) -> (Value, Value, Value) {
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        let &[flag, lowest, highest] = self.b.block_params(join) else {
            unreachable!("three parameters")
        };
        (flag, lowest, highest)
    }

    /// [`Emitter::chunk_rows`] when only some lanes are on (`exec`,
    /// not all): whether each chunk's active lanes address consecutive,
    /// 4-aligned dwords, lane `j` of the chunk at `start + 4 j` with the
    /// chunk's `start` from its active lanes. Inactive lanes' words are
    /// ignored (a branch's address VGPRs hold stale values there), so a
    /// stencil's edge waves are rows too. A chunk with no lane active gets
    /// the `start` of the first active lane's chunk (its rows are read,
    /// not used) and counts for neither the lowest nor the highest.
    fn active_rows(
        &mut self,
        low: Value,
        high: Option<Value>,
        add: Value,
        exec: Value,
        table: Value,
    ) -> (Value, Value, Value) {
        let lanes = if self.wave64 { 64 } else { 32 };
        // The first active lane's chunk (the last chunk when none is
        // active: the check fails then).
        let some = self.b.ins().bor_imm_u(exec, 1i64 << (lanes - 1));
        let first = self.b.ins().ctz(some);
        let chunk_at = self.b.ins().band_imm_u(first, !(CHUNK_LANES as i64 - 1));
        let chunk_at = self.b.ins().ishl_imm_u(chunk_at, 2);
        let anchor = self.chunk_start(low, high, add, exec, chunk_at);
        let steps = self.vconst([0, 4, 8, 12]);
        let lane_bits = self.vconst([1, 2, 4, 8]);
        let ones = self.splat_const(u32::MAX);
        let (bad, lowest, highest) = self.layout_loop(table, |e, at| {
            // The chunk's active lanes, as all-ones words.
            let shift = e.b.ins().ishl_imm_u(at.index, 2);
            let on = e.b.ins().ushr(exec, shift);
            let any = e.b.ins().band_imm_u(on, (1 << CHUNK_LANES) - 1);
            let any = e.b.ins().icmp_imm_s(IntCC::NotEqual, any, 0);
            let on = e.b.ins().ireduce(I32, on);
            let on = e.b.ins().splat(I32X4, on);
            let on = e.b.ins().band(on, lane_bits);
            let zero = e.splat_const(0);
            let active = e.b.ins().icmp(IntCC::NotEqual, on, zero);
            // Each lane's word less 4 a lane: the same in every active
            // lane when they are consecutive; the least of them (all ones
            // when none is active) is lane 0's then.
            let offset = e.b.ins().imul_imm_s(at.index, base_of(1) as i64);
            let words_at = e.b.ins().iadd(low, offset);
            let words = e.b.ins().load(I32X4, e.flags, words_at, 0);
            let back = e.b.ins().isub(words, steps);
            let back = e.b.ins().bitselect(active, back, ones);
            let first = e.least(back);
            let expect = e.b.ins().iadd(first, steps);
            // Lanes out of step, and (all ones) lanes whose low word
            // wrapped past lane 0's.
            let diff = e.b.ins().bxor(words, expect);
            let wrapped = e.b.ins().icmp(IntCC::UnsignedLessThan, expect, first);
            let mut diff = e.b.ins().bor(diff, wrapped);
            let word = e.b.ins().extractlane(first, 0);
            let mut start = e.b.ins().uextend(I64, word);
            if let Some(high) = high {
                let upper_at = e.b.ins().iadd(high, offset);
                let upper = e.b.ins().load(I32X4, e.flags, upper_at, 0);
                let masked = e.b.ins().bitselect(active, upper, ones);
                let top = e.least(masked);
                let upper_diff = e.b.ins().bxor(upper, top);
                diff = e.b.ins().bor(diff, upper_diff);
                let top = e.b.ins().extractlane(top, 0);
                let top = e.b.ins().uextend(I64, top);
                let top = e.b.ins().ishl_imm_u(top, 32);
                start = e.b.ins().bor(start, top);
            }
            let start = e.b.ins().iadd(start, add);
            let start = e.b.ins().select(any, start, anchor);
            (e.b.ins().band(diff, active), start)
        });
        let none = self.b.ins().icmp_imm_s(IntCC::Equal, exec, 0);
        let bad = self.b.ins().bor(bad, none);
        let good = self.b.ins().icmp_imm_s(IntCC::Equal, bad, 0);
        (good, lowest, highest)
    }

    /// The loop of the layout checks: `chunk` gives each chunk's lanes out
    /// of step (non-zero words) and its first address, which is written
    /// to `table`. Returns whether any lane was out of step or any address
    /// misaligned (an I8), and the lowest and highest first address.
    fn layout_loop(
        &mut self,
        table: Value,
        mut chunk: impl FnMut(&mut Self, At) -> (Value, Value),
    ) -> (Value, Value, Value) {
        let init = [
            self.splat_const(0),
            self.b.ins().iconst(I64, 0),
            self.b.ins().iconst(I64, -1),
            self.b.ins().iconst(I64, 0),
        ];
        let out = self.chunk_loop_as(false, &init, |e, at, carried| {
            let &[odd, bits, lowest, highest] = carried else {
                unreachable!("four values carried")
            };
            let (diff, start) = chunk(e, at);
            let entry = e.b.ins().ishl_imm_u(at.index, 3);
            let entry = e.b.ins().iadd(table, entry);
            e.b.ins().store(e.flags, start, entry, 0);
            vec![
                e.b.ins().bor(odd, diff),
                e.b.ins().bor(bits, start),
                e.b.ins().umin(lowest, start),
                e.b.ins().umax(highest, start),
            ]
        });
        let odd = self.b.ins().vany_true(out[0]);
        let misaligned = self.b.ins().band_imm_u(out[1], 3);
        let misaligned = self.b.ins().icmp_imm_s(IntCC::NotEqual, misaligned, 0);
        (self.b.ins().bor(odd, misaligned), out[2], out[3])
    }

    /// The address lane 0 of the chunk at byte `offset` of a VGPR row
    /// would have if its lanes were consecutive dwords from its first
    /// active lane (lane 0 when none is): that lane's address less 4 a
    /// lane.
    fn chunk_start(
        &mut self,
        low: Value,
        high: Option<Value>,
        add: Value,
        exec: Value,
        offset: Value,
    ) -> Value {
        let shift = self.b.ins().ushr_imm_u(offset, 2);
        let on = self.b.ins().ushr(exec, shift);
        let on = self.b.ins().bor_imm_u(on, 1 << CHUNK_LANES);
        let first = self.b.ins().ctz(on);
        let first = self.b.ins().band_imm_u(first, CHUNK_LANES as i64 - 1);
        let back = self.b.ins().ishl_imm_u(first, 2);
        let at = self.b.ins().iadd(offset, back);
        let word_at = self.b.ins().iadd(low, at);
        let word = self.b.ins().load(I32, self.flags, word_at, 0);
        let back32 = self.b.ins().ireduce(I32, back);
        let word = self.b.ins().isub(word, back32);
        let mut start = self.b.ins().uextend(I64, word);
        if let Some(high) = high {
            let top_at = self.b.ins().iadd(high, at);
            let top = self.b.ins().load(I32, self.flags, top_at, 0);
            let wide = self.b.ins().uextend(I64, top);
            let wide = self.b.ins().ishl_imm_u(wide, 32);
            start = self.b.ins().bor(start, wide);
        }
        self.b.ins().iadd(start, add)
    }

    /// The least of `v`'s four words (unsigned), in every lane: two
    /// shuffles (words swapped in pairs, then halves) and two minimums.
    fn least(&mut self, v: Value) -> Value {
        let le = MachMemFlags::new().with_endianness(Endianness::Little);
        let mut v = v;
        for order in [[1u32, 0, 3, 2], [2, 3, 0, 1]] {
            // Byte indices of each word's bytes, little-endian.
            let index = self.vconst(order.map(|w| (4 * w) * 0x0101_0101 + 0x0302_0100));
            let index = self.b.ins().bitcast(I8X16, le, index);
            let bytes = self.b.ins().bitcast(I8X16, le, v);
            let swapped = self.shuffle_bytes(bytes, index);
            let swapped = self.b.ins().bitcast(I32X4, le, swapped);
            v = self.b.ins().umin(v, swapped);
        }
        v
    }

    /// Whether each chunk's lanes address consecutive, 4-aligned dwords
    /// (an I8 flag), having written each chunk's first address (lane `l`'s
    /// is its `low` word, `high`'s word above it, plus `add`) to `table`;
    /// and the lowest and highest of those. The whole wave addressing one
    /// run of dwords (a 1-D kernel's rows) is asked first, in three SIMD
    /// ops a chunk (`one_run`); otherwise each chunk is looked at alone
    /// (`chunk_rows`: a 2-D workgroup's wave spans several runs).
    fn consecutive_rows(
        &mut self,
        low: Value,
        high: Option<Value>,
        add: Value,
        table: Value,
    ) -> (Value, Value, Value) {
        let (probe, fill, apart, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        for ty in [I8, I64, I64] {
            self.b.append_block_param(join, ty);
        }
        // The last lane one run's length from lane 0, or no run: a 2-D
        // workgroup's wave is turned to the chunk loop by two loads.
        let lanes = if self.wave64 { 64 } else { 32 };
        let last = 4 * (lanes - 1);
        let (first_word, last_word) = (
            self.b.ins().load(I32, self.flags, low, 0),
            self.b.ins().load(I32, self.flags, low, last),
        );
        let reach = self.b.ins().isub(last_word, first_word);
        let one_apart = self.b.ins().icmp_imm_s(IntCC::Equal, reach, last as i64);
        self.b.ins().brif(one_apart, probe, &[], apart, &[]);
        self.b.switch_to_block(probe);
        self.b.seal_block(probe);
        let (run, start) = self.one_run(first_word, low, high, add);
        self.b.ins().brif(run, fill, &[], apart, &[]);
        self.b.switch_to_block(fill);
        self.b.seal_block(fill);
        let chunks = if self.wave64 { 64 } else { 32 } / CHUNK_LANES;
        for chunk in 0..chunks {
            let first = self.b.ins().iadd_imm_s(start, base_of(chunk) as i64);
            self.b
                .ins()
                .store(self.flags, first, table, 8 * chunk as i32);
        }
        let last = self.b.ins().iadd_imm_s(start, base_of(chunks - 1) as i64);
        self.jump_with(join, (run, start, last));
        self.b.switch_to_block(apart);
        self.b.seal_block(apart);
        let found = self.chunk_rows(low, high, add, table);
        self.jump_with(join, found);
        self.joined(join)
    }

    /// Whether every lane's address is lane 0's plus 4 a lane, 4-aligned
    /// (an I8 flag), and lane 0's address; `word` is lane 0's low word,
    /// which the probe in front already loaded. The low words must step by 4
    /// from lane 0's without wrapping (one compare of lane 0's word) and
    /// the high words all equal lane 0's: then the full addresses, `add`
    /// included, step by 4 too. Unrolled: a load, an add and an or a
    /// chunk for the low words, two more for the high.
    fn one_run(
        &mut self,
        word: Value,
        low: Value,
        high: Option<Value>,
        add: Value,
    ) -> (Value, Value) {
        let lanes = if self.wave64 { 64 } else { 32 };
        let last_step = 4 * (lanes as u32 - 1);
        let unwrapped = self.b.ins().icmp_imm_u(
            IntCC::UnsignedLessThanOrEqual,
            word,
            (u32::MAX - last_step) as i64,
        );
        let first = self.b.ins().splat(I32X4, word);
        let top = match high {
            Some(high) => {
                let top = self.b.ins().load(I32, self.flags, high, 0);
                Some((top, self.b.ins().splat(I32X4, top)))
            }
            None => None,
        };
        let mut diff = self.splat_const(0);
        for chunk in 0..lanes / CHUNK_LANES {
            let step = base_of(chunk) as u32;
            let steps = self.vconst([step, step + 4, step + 8, step + 12]);
            let expect = self.b.ins().iadd(first, steps);
            let words = self.b.ins().load(I32X4, self.flags, low, base_of(chunk));
            let apart = self.b.ins().bxor(words, expect);
            diff = self.b.ins().bor(diff, apart);
            if let (Some(high), Some((_, tops))) = (high, top) {
                let upper = self.b.ins().load(I32X4, self.flags, high, base_of(chunk));
                let apart = self.b.ins().bxor(upper, tops);
                diff = self.b.ins().bor(diff, apart);
            }
        }
        let mut start = self.b.ins().uextend(I64, word);
        if let Some((top, _)) = top {
            let top = self.b.ins().uextend(I64, top);
            let top = self.b.ins().ishl_imm_u(top, 32);
            start = self.b.ins().bor(start, top);
        }
        let start = self.b.ins().iadd(start, add);
        let odd = self.b.ins().vany_true(diff);
        let misaligned = self.b.ins().band_imm_u(start, 3);
        let aligned = self.b.ins().icmp_imm_s(IntCC::Equal, misaligned, 0);
        let run = self.b.ins().band(unwrapped, aligned);
        let even = self.b.ins().bnot(odd);
        let even = self.b.ins().band_imm_u(even, 1);
        (self.b.ins().band(run, even), start)
    }

    /// [`Emitter::consecutive_rows`] chunk by chunk: a chunk's lanes are
    /// consecutive when their low words step by 4 without wrapping and
    /// their high words agree: then their full addresses, `add` included,
    /// step by 4 too. A few SIMD ops a chunk, where a helper would take a
    /// loop over the lanes; always a loop, as it runs once a block.
    fn chunk_rows(
        &mut self,
        low: Value,
        high: Option<Value>,
        add: Value,
        table: Value,
    ) -> (Value, Value, Value) {
        let steps = self.vconst([0, 4, 8, 12]);
        let (bad, lowest, highest) = self.layout_loop(table, |e, at| {
            let offset = e.b.ins().imul_imm_s(at.index, base_of(1) as i64);
            let words_at = e.b.ins().iadd(low, offset);
            let words = e.b.ins().load(I32X4, e.flags, words_at, 0);
            let first = e.b.ins().extractlane(words, 0);
            let splat = e.b.ins().splat(I32X4, first);
            let expect = e.b.ins().iadd(splat, steps);
            // Lanes out of step, and (all ones) lanes whose low word
            // wrapped past lane 0's.
            let diff = e.b.ins().bxor(words, expect);
            let wrapped = e.b.ins().icmp(IntCC::UnsignedLessThan, expect, splat);
            let mut diff = e.b.ins().bor(diff, wrapped);
            let mut start = e.b.ins().uextend(I64, first);
            if let Some(high) = high {
                let upper_at = e.b.ins().iadd(high, offset);
                let upper = e.b.ins().load(I32X4, e.flags, upper_at, 0);
                let top = e.b.ins().extractlane(upper, 0);
                let splat = e.b.ins().splat(I32X4, top);
                let upper_diff = e.b.ins().bxor(upper, splat);
                diff = e.b.ins().bor(diff, upper_diff);
                let top = e.b.ins().uextend(I64, top);
                let top = e.b.ins().ishl_imm_u(top, 32);
                start = e.b.ins().bor(start, top);
            }
            let start = e.b.ins().iadd(start, add);
            (diff, start)
        });
        let good = self.b.ins().icmp_imm_s(IntCC::Equal, bad, 0);
        (good, lowest, highest)
    }

    /// A global load's dwords for the chunk at `at`, from where
    /// `global_rows` found them.
    fn staged(&mut self, op: &VOp, dwords: u8, at: At) -> Out {
        let Staged {
            table,
            stride,
            offset,
        } = op
            .staged
            .expect("the scalar phase gathered every global load");
        let entry = self.b.ins().ishl_imm_u(at.index, 3);
        let entry = self.b.ins().iadd(table, entry);
        let row = self.b.ins().load(I64, self.flags, entry, 0);
        let mut row = self.b.ins().iadd(row, offset);
        let mut vgpr = Vec::with_capacity(dwords as usize);
        for k in 0..dwords {
            if k > 0 {
                row = self.b.ins().iadd(row, stride);
            }
            vgpr.push(self.b.ins().load(I32X4, self.flags, row, 0));
        }
        Out { vgpr, mask: None }
    }

    /// A slot of `bytes` in the block's stack frame, 16-byte aligned
    /// (alignment shift 4), so the helpers may view it as `u64`s or rows.
    fn stack_slot(&mut self, bytes: u32) -> StackSlot {
        let data = StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4);
        self.b.create_sized_stack_slot(data)
    }

    /// Calls the host function at `f` (the host's C calling convention)
    /// with `args` of types `params`; its I32 result.
    fn call(&mut self, f: usize, params: &[Type], args: &[Value]) -> Value {
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns.push(AbiParam::new(I32));
        let sig = self.b.import_signature(sig);
        let callee = self.b.ins().iconst(I64, f as i64);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call)[0]
    }

    /// Continues when `ok` (an I32) is non-zero; otherwise the block
    /// returns [`super::BAIL`]. Only the scalar phase calls it: nothing is
    /// stored before that phase ends, so leaving changes nothing.
    fn leave_unless(&mut self, ok: Value) {
        let go = self.b.create_block();
        let (bail, first) = match self.bail {
            Some(bail) => (bail, false),
            None => (self.b.create_block(), true),
        };
        self.b.ins().brif(ok, go, &[], bail, &[]);
        if first {
            // The exit is filled once, here, where the block before it is
            // complete; it is sealed when the whole block is.
            self.b.switch_to_block(bail);
            let code = self.b.ins().iconst(I32, super::BAIL as i64);
            self.b.ins().return_(&[code]);
            self.bail = Some(bail);
        }
        self.b.switch_to_block(go);
        self.b.seal_block(go);
    }

    fn write_sgpr(&mut self, r: u8, v: Value) {
        if r == sreg::NULL {
            return;
        }
        self.sgprs.insert(r, v);
        self.sgpr_dirty.insert(r);
    }

    fn scalar_src(&mut self, op: Operand) -> Value {
        match op {
            Operand::Sgpr(r) => self.read_sgpr(r),
            Operand::Const(c) => self.b.ins().iconst(I32, c as u32 as i64),
            _ => self.b.ins().iconst(I32, 0),
        }
    }

    /// A lane mask: one SGPR in wave32, the pair in wave64.
    fn read_mask(&mut self, r: u8) -> Value {
        if !self.wave64 {
            return self.read_sgpr(r);
        }
        if (r as usize) + 1 < softgpu_interp::wave::NUM_SGPRS {
            return self.sgpr_pair(r);
        }
        let lo = self.read_sgpr(r);
        self.b.ins().uextend(I64, lo)
    }

    fn store_mask(&mut self, r: u8, mask: Value) {
        if r == sreg::NULL {
            return;
        }
        if !self.wave64 {
            self.store_sgpr(r, mask);
        } else if (r as usize) + 1 < softgpu_interp::wave::NUM_SGPRS {
            let lo = self.b.ins().ireduce(I32, mask);
            let hi = self.b.ins().ushr_imm_u(mask, 32);
            let hi = self.b.ins().ireduce(I32, hi);
            self.store_sgpr(r, lo);
            self.store_sgpr(r + 1, hi);
        }
    }

    fn store_sgpr(&mut self, r: u8, v: Value) {
        self.b.ins().store(self.flags, v, self.sgpr, 4 * r as i32);
    }

    fn exec_mask(&mut self) -> Value {
        if let Some(e) = self.exec {
            return e;
        }
        let e = self.read_mask(sreg::EXEC_LO);
        self.exec = Some(e);
        e
    }

    fn read_scc(&mut self) -> Value {
        if let Some(s) = self.scc {
            return s;
        }
        let s = self.b.ins().uload8(I32, self.flags, self.scc_ptr, 0);
        let s = self.b.ins().icmp_imm_u(IntCC::NotEqual, s, 0);
        self.scc = Some(s);
        s
    }

    fn write_scc(&mut self, s: Value) {
        self.scc = Some(s);
        self.scc_dirty = true;
    }

    fn store_scalars(&mut self) {
        for r in std::mem::take(&mut self.sgpr_dirty) {
            let v = self.sgprs[&r];
            self.store_sgpr(r, v);
        }
        if self.scc_dirty {
            let s = self.scc.expect("a dirty SCC has a value");
            self.b.ins().store(self.flags, s, self.scc_ptr, 0);
        }
    }

    /// One SALU op, with the interpreter's formulas (`ops::salu`).
    /// A scalar op on 32-bit operands, or with `wide` on SGPR pairs and
    /// 64-bit constants (`Class::Scalar64`; a shift's amount stays 32-bit).
    /// Cranelift's ops take either width, so one match serves both.
    fn scalar(&mut self, inst: &Inst, op: Scalar, wide: bool) {
        use Scalar as S;
        let a = self.scalar_operand(inst.src[0], wide);
        let b = self.scalar_operand(inst.src[1], wide && !op.is_shift());
        let ins = self.b.ins();
        let (r, scc) = match op {
            S::Mov => (Some(a), None),
            S::Movk => (
                Some(ins.iconst(I32, inst.imm as i16 as i32 as u32 as i64)),
                None,
            ),
            S::AddU => {
                let r = ins.iadd(a, b);
                (
                    Some(r),
                    Some(self.b.ins().icmp(IntCC::UnsignedLessThan, r, a)),
                )
            }
            S::SubU => {
                let r = ins.isub(a, b);
                (
                    Some(r),
                    Some(self.b.ins().icmp(IntCC::UnsignedLessThan, a, b)),
                )
            }
            S::AddI | S::SubI => {
                let add = op == S::AddI;
                let r = if add { ins.iadd(a, b) } else { ins.isub(a, b) };
                // Signed overflow: for a + b, both operands' signs differ
                // from the result's; for a - b, a's and !b's do.
                let x = self.b.ins().bxor(a, r);
                let y = if add {
                    self.b.ins().bxor(b, r)
                } else {
                    self.b.ins().bxor(a, b)
                };
                let o = self.b.ins().band(x, y);
                (
                    Some(r),
                    Some(self.b.ins().icmp_imm_s(IntCC::SignedLessThan, o, 0)),
                )
            }
            S::And | S::Or | S::Xor | S::AndNot1 | S::OrNot1 | S::Shl | S::Shr | S::Sar => {
                let r = match op {
                    S::And => ins.band(a, b),
                    S::Or => ins.bor(a, b),
                    S::Xor => ins.bxor(a, b),
                    S::AndNot1 => ins.band_not(a, b),
                    S::OrNot1 => ins.bor_not(a, b),
                    // Cranelift takes shift amounts modulo the width, as
                    // the ISA's `b & 31` (`b & 63` for 64 bits).
                    S::Shl => ins.ishl(a, b),
                    S::Shr => ins.ushr(a, b),
                    _ => ins.sshr(a, b),
                };
                (
                    Some(r),
                    Some(self.b.ins().icmp_imm_u(IntCC::NotEqual, r, 0)),
                )
            }
            S::Mul => (Some(ins.imul(a, b)), None),
            S::Cselect => {
                let scc = self.read_scc();
                (Some(self.b.ins().select(scc, a, b)), None)
            }
            S::Cmp(cc) => (None, Some(ins.icmp(int_cc(cc), a, b))),
        };
        match (r, inst.dst[0]) {
            (Some(r), Operand::Sgpr(d)) if wide => {
                let lo = self.b.ins().ireduce(I32, r);
                let hi = self.b.ins().ushr_imm_u(r, 32);
                let hi = self.b.ins().ireduce(I32, hi);
                self.write_sgpr(d, lo);
                self.write_sgpr(d.wrapping_add(1), hi);
            }
            (Some(r), Operand::Sgpr(d)) => self.write_sgpr(d, r),
            _ => {}
        }
        if let Some(s) = scc {
            self.write_scc(s);
        }
    }

    /// A scalar source: 32-bit, or with `wide` an SGPR pair or a 64-bit
    /// constant.
    fn scalar_operand(&mut self, op: Operand, wide: bool) -> Value {
        match (op, wide) {
            (_, false) => self.scalar_src(op),
            (Operand::Sgpr(r), true) => self.sgpr_pair(r),
            (Operand::Const(c), true) => self.b.ins().iconst(I64, c as i64),
            _ => self.b.ins().iconst(I64, 0),
        }
    }

    // ---- LDS loads -------------------------------------------------------

    /// The bound of every LDS access shape the block's loads use: an
    /// address (a lane's u32) is in range when `addr + offset + bytes <=
    /// len`, that is `addr < len + 1 - offset - bytes`, which is at most
    /// 2^32 as LDS is smaller than 4 GiB; no address is when that is
    /// negative (bound 0).
    fn lds_bounds(&mut self, groups: &[Group], stores: &[(&Inst, LdsShape)]) {
        let loads = groups.iter().flatten().filter_map(|op| match op.class {
            Class::LdsLoad(k) => Some((op.inst, k)),
            _ => None,
        });
        let mut reach = BTreeMap::new();
        for (inst, k) in loads.clone() {
            if let (Operand::Vgpr(r), Some(bytes)) = (inst.src[0], k.window_reach(inst)) {
                let most = reach.entry(r).or_insert(0);
                *most = bytes.max(*most);
            }
        }
        for (r, bytes) in reach {
            // The run loop gives the block at least `bytes` of LDS.
            let limit = self.b.ins().iadd_imm_s(self.lds_len, -(bytes as i64));
            self.lds_limits.insert(r, limit);
        }
        if !stores.is_empty() {
            let data = StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4);
            let slot = self.b.create_sized_stack_slot(data);
            self.lds_discard = Some(self.b.ins().stack_addr(I64, slot, 0));
        }
        let accesses = loads.chain(stores.iter().copied()).flat_map(|(inst, k)| {
            // With offset 0 too: the bound of a wrapped address (`lds_access`).
            (k.accesses(inst).into_iter()).flat_map(|(offset, bytes)| [(offset, bytes), (0, bytes)])
        });
        for (offset, bytes) in accesses.collect::<Vec<_>>() {
            if self.lds_bounds.contains_key(&(offset, bytes)) {
                continue;
            }
            let end = (offset + bytes) as i64;
            let t = self.b.ins().iadd_imm_s(self.lds_len, 1 - end);
            let zero = self.b.ins().iconst(I64, 0);
            let t = self.b.ins().smax(t, zero);
            let most = self.b.ins().iconst(I64, u32::MAX as i64);
            let t = self.b.ins().umin(t, most);
            let t = self.b.ins().ireduce(I32, t);
            let bound = self.b.ins().splat(I32X4, t);
            self.lds_bounds.insert((offset, bytes), bound);
        }
    }

    /// An LDS load over one chunk, from the chunk's address lanes `addr`.
    /// Two layouts that LDS tiles give almost always load without a lane
    /// loop when the whole chunk is in range: four consecutive dwords (a
    /// row, `tile[k][lx]`: one vector load) and one address in every lane
    /// (a broadcast, `tile[ly][k]`: one load per dword, splat). Otherwise
    /// lane by lane, where a lane out of range reads at address 0 instead
    /// (the run loop gives a block LDS of at least 16 bytes) and its value
    /// is then cleared, so no load leaves LDS.
    fn lds_load(&mut self, inst: &Inst, k: LdsShape, addr: Value) -> Out {
        let dwords = k.dwords();
        if dwords == 1 && matches!(self.pass, Pass::Fast { .. }) {
            return self.lds_load_window(inst, k, addr);
        }
        let layout = self.lds_layout(addr);
        let mut vgpr = Vec::new();
        for (offset, bytes) in k.accesses(inst) {
            let access = self.lds_access(addr, offset, bytes);
            // The row and broadcast loads address LDS from `addr` itself.
            let all_in = self.b.ins().vall_true(access.in_place);
            let (broadcast, lanes, merge) = (
                self.b.create_block(),
                self.b.create_block(),
                self.b.create_block(),
            );
            for _ in 0..dwords {
                self.b.append_block_param(merge, I32X4);
            }
            // A row is one dword per lane (wider loads interleave lanes).
            if dwords == 1 {
                let (row, not_row) = (self.b.create_block(), self.b.create_block());
                let is_row = self.b.ins().band(all_in, layout.row);
                self.b.ins().brif(is_row, row, &[], not_row, &[]);
                self.b.switch_to_block(row);
                self.b.seal_block(row);
                let v = self
                    .b
                    .ins()
                    .load(I32X4, self.flags, layout.first, offset as i32);
                self.b.ins().jump(merge, &[BlockArg::Value(v)]);
                self.b.switch_to_block(not_row);
                self.b.seal_block(not_row);
            }
            let is_broadcast = self.b.ins().band(all_in, layout.broadcast);
            self.b.ins().brif(is_broadcast, broadcast, &[], lanes, &[]);

            self.b.switch_to_block(broadcast);
            self.b.seal_block(broadcast);
            let splats: Vec<BlockArg> = (0..dwords)
                .map(|d| {
                    let at = (offset + 4 * d as u64) as i32;
                    let x = self.b.ins().load(I32, self.flags, layout.first, at);
                    BlockArg::Value(self.b.ins().splat(I32X4, x))
                })
                .collect();
            self.b.ins().jump(merge, &splats);

            self.b.switch_to_block(lanes);
            self.b.seal_block(lanes);
            let each = self.lds_lanes(access.at, access.inside, dwords);
            let each: Vec<BlockArg> = each.into_iter().map(BlockArg::Value).collect();
            self.b.ins().jump(merge, &each);

            self.b.switch_to_block(merge);
            self.b.seal_block(merge);
            vgpr.extend_from_slice(self.b.block_params(merge));
        }
        Out { vgpr, mask: None }
    }

    /// Chunk `chunk` of an LDS store, after every vector op of the block
    /// has stored its registers: lane by lane in lane order, each lane's
    /// accesses in order (as `ops::ds`), an access not wholly inside LDS
    /// or of a lane EXEC leaves off writing to the discard slot instead.
    /// A row of four dwords with every lane on and in range is one vector
    /// store when no two of the op's accesses can overlap.
    fn lds_store(&mut self, inst: &Inst, shape: LdsShape, at: At) {
        let row_at = |e: &mut Self, r: u16| {
            let offset = r as i32 * VGPR_BYTES;
            e.b.ins().load(I32X4, e.flags, at.rows, offset)
        };
        let Operand::Vgpr(a) = inst.src[0] else {
            unreachable!("form_ok: the address is a VGPR")
        };
        let addr = row_at(self, a);
        let exec = self.exec_mask();
        let live = self.mask_lanes(exec, at);
        let accesses = shape.accesses(inst);
        let dwords = shape.dwords() as u16;
        let mut wrapped = Vec::new();
        let mut ok = Vec::new();
        let mut ok_in_place = Vec::new();
        let mut data = Vec::new();
        for (k, &(offset, bytes)) in accesses.iter().enumerate() {
            let access = self.lds_access(addr, offset, bytes);
            wrapped.push(access.at);
            ok.push(self.b.ins().band(access.inside, live));
            ok_in_place.push(self.b.ins().band(access.in_place, live));
            let Operand::Vgpr(d) = inst.src[1 + k] else {
                unreachable!("form_ok: the data are VGPRs")
            };
            data.push((0..dwords).map(|j| row_at(self, d + j)).collect::<Vec<_>>());
        }
        let apart = match accesses[..] {
            [_] => true,
            [(o0, _), (o1, _)] => o0.abs_diff(o1) >= 16,
            _ => false,
        };
        if dwords != 1 || !apart {
            return self.lds_store_lanes(&wrapped, &ok, &data);
        }
        let layout = self.lds_layout(addr);
        let mut whole = layout.row;
        // The row store addresses LDS from `addr` itself: no lane may wrap.
        for &o in &ok_in_place {
            let all = self.b.ins().vall_true(o);
            whole = self.b.ins().band(whole, all);
        }
        let (row, lanes, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(whole, row, &[], lanes, &[]);
        self.b.switch_to_block(row);
        self.b.seal_block(row);
        for (&(offset, _), d) in accesses.iter().zip(&data) {
            self.b
                .ins()
                .store(self.flags, d[0], layout.first, offset as i32);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(lanes);
        self.b.seal_block(lanes);
        self.lds_store_lanes(&wrapped, &ok, &data);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// The general LDS store of one chunk: per lane, per access (at its
    /// wrapped addresses `wrapped`), its dwords to LDS or, where `ok` is
    /// off, to the discard slot.
    fn lds_store_lanes(&mut self, wrapped: &[Value], ok: &[Value], data: &[Vec<Value>]) {
        let discard = self.lds_discard.expect("lds_bounds saw this store");
        for j in 0..CHUNK_LANES as u8 {
            for ((&a, &ok), d) in wrapped.iter().zip(ok).zip(data) {
                let lane_ok = self.b.ins().extractlane(ok, j);
                let a = self.b.ins().extractlane(a, j);
                let a = self.b.ins().uextend(I64, a);
                let p = self.b.ins().iadd(self.lds, a);
                let p = self.b.ins().select(lane_ok, p, discard);
                for (k, &dword) in d.iter().enumerate() {
                    let v = self.b.ins().extractlane(dword, j);
                    self.b.ins().store(self.flags, v, p, 4 * k as i32);
                }
            }
        }
    }

    /// A dword LDS load in the fast pass, without a branch: each access
    /// loads the 16 bytes at lane 0's address and gathers every lane's
    /// dword from them with one byte shuffle, which covers a row, a
    /// broadcast and any other four addresses within 12 bytes of lane 0's.
    /// A lane whose dword is not in the window puts the lane in doubt, and
    /// the exact pass loads it instead; so does a chunk whose windows would
    /// pass LDS's end (`lds_window`).
    fn lds_load_window(&mut self, inst: &Inst, k: LdsShape, addr: Value) -> Out {
        let Operand::Vgpr(r) = inst.src[0] else {
            unreachable!("form_ok: the address is a VGPR")
        };
        let w = self.lds_window(addr, r);
        let vgpr = k
            .accesses(inst)
            .into_iter()
            .map(|(offset, _)| {
                let bytes = self.b.ins().load(I8X16, self.flags, w.first, offset as i32);
                let dwords = self.shuffle_bytes(bytes, w.index);
                self.i(dwords)
            })
            .collect();
        Out { vgpr, mask: None }
    }

    /// The bytes of `x` that `index` (I8X16) picks, where each index
    /// byte is below 16; a lane with a byte above is in doubt, whatever it
    /// gets.
    fn shuffle_bytes(&mut self, x: Value, index: Value) -> Value {
        if cfg!(target_arch = "x86_64") {
            // One instruction where Cranelift's `swizzle` takes two: it
            // first saturates the index so that a byte above 15 gives zero,
            // which no lane not in doubt needs.
            self.b.ins().x86_pshufb(x, index)
        } else {
            self.b.ins().swizzle(x, index)
        }
    }

    /// The window of a chunk's LDS addresses from VGPR `r`, once per
    /// address vector: where lane 0's address is and each lane's offset
    /// from it as byte indices; the lanes whose dword lies outside the 16
    /// bytes from it are put in doubt, and so is the whole chunk when a
    /// window from lane 0 would pass LDS's end, the windows then read from
    /// LDS's start instead (the run loop gives the block the windows'
    /// reach there, `BlockMeta::lds`), so no load ever leaves LDS.
    fn lds_window(&mut self, addr: Value, r: u16) -> LdsWindow {
        if let Some(&w) = self.lds_windows.get(&addr) {
            return w;
        }
        let (a0, _, rel) = self.lane0_offsets(addr);
        let most = self.splat_const(12);
        let outside = self.b.ins().icmp(IntCC::UnsignedGreaterThan, rel, most);
        // Bytes rel, rel+1, rel+2, rel+3 of the window, little-endian.
        let spread = self.splat_const(0x0101_0101);
        let index = self.b.ins().imul(rel, spread);
        let bytes = self.splat_const(0x0302_0100);
        let index = self.b.ins().iadd(index, bytes);
        let le = MachMemFlags::new().with_endianness(Endianness::Little);
        let index = self.b.ins().bitcast(I8X16, le, index);
        self.add_doubt(&[outside]);
        let a0 = self.b.ins().uextend(I64, a0);
        let limit = self.lds_limits[&r];
        let past = self.b.ins().icmp(IntCC::UnsignedGreaterThan, a0, limit);
        self.add_clamped(past);
        let zero = self.b.ins().iconst(I64, 0);
        let a0 = self.b.ins().select(past, zero, a0);
        let first = self.b.ins().iadd(self.lds, a0);
        let w = LdsWindow { first, index };
        self.lds_windows.insert(addr, w);
        w
    }

    /// Lane 0's address in a chunk's LDS address vector, its splat, and
    /// each lane's offset from it (wrapping).
    fn lane0_offsets(&mut self, addr: Value) -> (Value, Value, Value) {
        let a0 = self.b.ins().extractlane(addr, 0);
        let splat = self.b.ins().splat(I32X4, a0);
        let rel = self.b.ins().isub(addr, splat);
        (a0, splat, rel)
    }

    /// Puts the whole chunk in doubt if the I8 `flag` is set.
    fn add_clamped(&mut self, flag: Value) {
        if let Pass::Fast { clamped, .. } = &mut self.pass {
            let prev = clamped.take();
            *clamped = Some(match prev {
                Some(c) => self.b.ins().bor(c, flag),
                None => flag,
            });
        }
    }

    /// The layout of a chunk's LDS addresses, once per address vector:
    /// whether they are a row (`a, a+4, a+8, a+12`) or a broadcast (all
    /// `a`), and lane 0's address in LDS. Used only where every lane is in
    /// range, so `first` is then a valid address.
    fn lds_layout(&mut self, addr: Value) -> LdsLayout {
        if let Some(&layout) = self.lds_layouts.get(&addr) {
            return layout;
        }
        let (a0, splat, rel) = self.lane0_offsets(addr);
        let steps = self.vconst([0, 4, 8, 12]);
        let row = self.b.ins().icmp(IntCC::Equal, rel, steps);
        let row = self.b.ins().vall_true(row);
        let same = self.b.ins().icmp(IntCC::Equal, addr, splat);
        let broadcast = self.b.ins().vall_true(same);
        let a0 = self.b.ins().uextend(I64, a0);
        let first = self.b.ins().iadd(self.lds, a0);
        let layout = LdsLayout {
            row,
            broadcast,
            first,
        };
        self.lds_layouts.insert(addr, layout);
        layout
    }

    /// An access of `bytes` at `offset` from the chunk's addresses `addr`
    /// (see [`LdsAccess`]).
    fn lds_access(&mut self, addr: Value, offset: u64, bytes: u64) -> LdsAccess {
        let off = self.splat_const(offset as u32);
        let at = self.b.ins().iadd(addr, off);
        let lt = IntCC::UnsignedLessThan;
        let inside = self.b.ins().icmp(lt, at, self.lds_bounds[&(0, bytes)]);
        let in_place = (self.b.ins()).icmp(lt, addr, self.lds_bounds[&(offset, bytes)]);
        LdsAccess {
            at,
            inside,
            in_place,
        }
    }

    /// The general LDS load: lane by lane at the wrapped addresses `at`,
    /// out-of-range lanes reading at address 0 and then cleared.
    fn lds_lanes(&mut self, at: Value, inside: Value, dwords: usize) -> Vec<Value> {
        let at = self.b.ins().band(at, inside);
        let lanes: Vec<Value> = (0..CHUNK_LANES as u8)
            .map(|j| {
                let a = self.b.ins().extractlane(at, j);
                let a = self.b.ins().uextend(I64, a);
                self.b.ins().iadd(self.lds, a)
            })
            .collect();
        (0..dwords)
            .map(|dword| {
                let mut v = self.splat_const(0);
                for (j, &p) in lanes.iter().enumerate() {
                    let x = self.b.ins().load(I32, self.flags, p, 4 * dword as i32);
                    v = self.b.ins().insertlane(v, x, j as u8);
                }
                self.b.ins().band(v, inside)
            })
            .collect()
    }

    // ---- the chunk loop -------------------------------------------------

    fn vconst(&mut self, lanes: [u32; 4]) -> Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|l| l.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(I32X4, c)
    }

    fn splat_const(&mut self, v: u32) -> Value {
        self.vconst([v; 4])
    }

    /// A lane mask's type: I64 in wave64, I32 in wave32.
    fn mask_type(&self) -> Type {
        if self.wave64 {
            I64
        } else {
            I32
        }
    }

    /// Emits `body` once, as a loop that runs it over every chunk of the
    /// wave in order (compiling the ops once rather than once a chunk keeps
    /// a block's code, and its compile time, small). `init` are the
    /// values the loop carries in, which `body` is given each time round
    /// and returns updated; their values after the last chunk are
    /// returned.
    fn chunk_loop(
        &mut self,
        init: &[Value],
        body: impl FnMut(&mut Self, At, &[Value]) -> Vec<Value>,
    ) -> Vec<Value> {
        self.chunk_loop_as(self.unroll, init, body)
    }

    /// [`Emitter::chunk_loop`], unrolled or not as `unroll` says rather
    /// than as the block's size does.
    fn chunk_loop_as(
        &mut self,
        unroll: bool,
        init: &[Value],
        mut body: impl FnMut(&mut Self, At, &[Value]) -> Vec<Value>,
    ) -> Vec<Value> {
        let chunks = if self.wave64 { 64 } else { 32 } / CHUNK_LANES;
        if unroll {
            let mut carried = init.to_vec();
            for chunk in 0..chunks {
                let at = At {
                    rows: self.b.ins().iadd_imm_s(self.vgpr, base_of(chunk) as i64),
                    lane: self.b.ins().iconst(I64, (chunk * CHUNK_LANES) as i64),
                    index: self.b.ins().iconst(I64, chunk as i64),
                };
                carried = body(self, at, &carried);
            }
            return carried;
        }
        let (head, exit) = (self.b.create_block(), self.b.create_block());
        self.b.append_block_param(head, I64);
        for &v in init {
            let ty = self.b.func.dfg.value_type(v);
            self.b.append_block_param(head, ty);
            self.b.append_block_param(exit, ty);
        }
        let first = self.b.ins().iconst(I64, 0);
        let args: Vec<BlockArg> = std::iter::once(first)
            .chain(init.iter().copied())
            .map(BlockArg::Value)
            .collect();
        self.b.ins().jump(head, &args);
        self.b.switch_to_block(head);
        let params = self.b.block_params(head).to_vec();
        let index = params[0];
        let offset = self.b.ins().imul_imm_s(index, base_of(1) as i64);
        let at = At {
            rows: self.b.ins().iadd(self.vgpr, offset),
            lane: self.b.ins().imul_imm_s(index, CHUNK_LANES as i64),
            index,
        };
        let carried = body(self, at, &params[1..]);
        let next = self.b.ins().iadd_imm_s(index, 1);
        let more = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, next, chunks as i64);
        let again: Vec<BlockArg> = std::iter::once(next)
            .chain(carried.iter().copied())
            .map(BlockArg::Value)
            .collect();
        let out: Vec<BlockArg> = carried.iter().copied().map(BlockArg::Value).collect();
        self.b.ins().brif(more, head, &again, exit, &out);
        self.b.seal_block(head);
        self.b.switch_to_block(exit);
        self.b.seal_block(exit);
        self.b.block_params(exit).to_vec()
    }

    /// The lanes of `mask` in the chunk at `at`, as all-ones / zero lanes.
    fn mask_lanes(&mut self, mask: Value, at: At) -> Value {
        let shifted = self.b.ins().ushr(mask, at.lane);
        let low = if self.wave64 {
            self.b.ins().ireduce(I32, shifted)
        } else {
            shifted
        };
        let v = self.b.ins().splat(I32X4, low);
        let bits = self.vconst([1, 2, 4, 8]);
        let sel = self.b.ins().band(v, bits);
        let zero = self.splat_const(0);
        self.b.ins().icmp(IntCC::NotEqual, sel, zero)
    }

    fn f(&mut self, v: Value) -> Value {
        let le = MachMemFlags::new().with_endianness(Endianness::Little);
        self.b.ins().bitcast(F32X4, le, v)
    }

    fn i(&mut self, v: Value) -> Value {
        let le = MachMemFlags::new().with_endianness(Endianness::Little);
        self.b.ins().bitcast(I32X4, le, v)
    }

    /// Every vector op of the block over lanes `4 * chunk ..` (a fast
    /// pass and, if it is in doubt, an exact one), then the chunk's
    /// written registers stored under EXEC.
    fn chunk(&mut self, groups: &[Group], at: At, masks: &mut [Value]) {
        let exec = self.exec_mask();
        let live = self.mask_lanes(exec, at);
        self.pass = Pass::Fast {
            doubt: None,
            unpaired: Vec::new(),
            clamped: None,
        };
        let mut out = self.chunk_ops(groups, at);
        if let Pass::Fast {
            unpaired, clamped, ..
        } = &mut self.pass
        {
            let clamped = clamped.take();
            for left in std::mem::take(unpaired) {
                self.doubt_nans(&left, &left);
            }
            if let Some(flag) = clamped {
                let all = self.b.ins().bmask(I32, flag);
                let all = self.b.ins().splat(I32X4, all);
                self.add_doubt(&[all]);
            }
        }
        let doubt = match std::mem::replace(&mut self.pass, Pass::Exact) {
            Pass::Fast { doubt, .. } => doubt,
            Pass::Exact => unreachable!("the fast pass stays fast"),
        };
        if let Some(doubt) = doubt {
            let active = self.b.ins().band(doubt, live);
            self.exact_if_any(active, groups, at, &mut out);
        }
        for (&k, &part) in &out.mask_parts {
            masks[k] = self.b.ins().bor(masks[k], part);
        }
        self.store_chunk(&out, at, live);
    }

    /// The chunk's written registers stored under EXEC (`live`): merged
    /// with the old lanes, with no branch on whether all four are on. A
    /// branch would cost about what the merge does, and Cranelift would
    /// then compute the chunk's values once in each arm (it places a
    /// value at its first use, here the stores), and the uniform values
    /// the chunks share again in every chunk.
    fn store_chunk(&mut self, out: &ChunkOut, at: At, live: Value) {
        for (&r, &v) in &out.written {
            let offset = r as i32 * VGPR_BYTES;
            let old = self.b.ins().load(I32X4, self.flags, at.rows, offset);
            let new = self.b.ins().bitselect(live, v, old);
            self.b.ins().store(self.flags, new, at.rows, offset);
        }
    }

    /// The chunk's cold path: when any lane of `active` is set, the chunk's
    /// ops again in the exact pass, from the same registers; `out` becomes
    /// whichever pass ran.
    fn exact_if_any(&mut self, active: Value, groups: &[Group], at: At, out: &mut ChunkOut) {
        let any = self.b.ins().vany_true(active);
        let fast = out.values();
        let exact = self.b.create_block();
        let merge = self.b.create_block();
        for &v in &fast {
            let ty = self.b.func.dfg.value_type(v);
            self.b.append_block_param(merge, ty);
        }
        let args = |values: Vec<Value>| -> Vec<BlockArg> {
            values.into_iter().map(BlockArg::Value).collect()
        };
        self.b.ins().brif(any, exact, &[], merge, &args(fast));
        self.b.switch_to_block(exact);
        self.b.seal_block(exact);
        let exact_out = self.chunk_ops(groups, at);
        debug_assert!(exact_out.written.keys().eq(out.written.keys()));
        debug_assert!(exact_out.mask_parts.keys().eq(out.mask_parts.keys()));
        self.b.ins().jump(merge, &args(exact_out.values()));
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        let joined = self.b.block_params(merge).to_vec();
        out.set_values(&joined);
    }

    /// One pass over the chunk's vector ops in the current [`Pass`].
    fn chunk_ops(&mut self, groups: &[Group], at: At) -> ChunkOut {
        self.x2.clear();
        self.lds_layouts.clear();
        self.lds_windows.clear();
        let mut regs: HashMap<u16, Value> = HashMap::new();
        let mut out = ChunkOut::default();
        let mut cmp_lanes: HashMap<u8, Value> = HashMap::new();
        for group in groups {
            let mut results = Vec::with_capacity(group.len());
            for op in group {
                let mut src =
                    |e: &mut Self, k: usize| e.chunk_src(op, k, &mut regs, at, &cmp_lanes);
                let res = match op.class {
                    Class::Shift64(k) => self.shift64(op, k, &mut regs, at),
                    Class::F64(F64::Ldexp) => {
                        let e = src(self, 1);
                        self.ldexp64(op, e, &mut regs, at)
                    }
                    Class::F64(k) => self.f64_op(op, k, &mut regs, at),
                    Class::LdsLoad(k) => {
                        let addr = src(self, 0);
                        self.lds_load(op.inst, k, addr)
                    }
                    Class::GlobalLoad { dwords, .. } => self.staged(op, dwords, at),
                    Class::ScratchLoad { bytes, signed } => {
                        self.scratch_load(op, bytes, signed, at)
                    }
                    Class::ScratchStore { bytes } => self.scratch_store(op, bytes, &mut regs, at),
                    Class::Mad64 { signed } => {
                        let (a, b) = (src(self, 0), src(self, 1));
                        let c = self.pair_src(op, 2, &mut regs, at);
                        self.mad64(signed, a, b, c)
                    }
                    _ => {
                        let (a, b, c) = (src(self, 0), src(self, 1), src(self, 2));
                        self.vector_op(op, [a, b, c])
                    }
                };
                results.push(res);
            }
            for (op, res) in group.iter().zip(results) {
                if let (Some(k), Some(lanes)) = (op.acc, res.mask) {
                    let bits = self.b.ins().vhigh_bits(I32, lanes);
                    let wide = if self.wave64 {
                        self.b.ins().uextend(I64, bits)
                    } else {
                        bits
                    };
                    let part = self.b.ins().ishl(wide, at.lane);
                    // Each compare has an accumulator of its own.
                    out.mask_parts.insert(k, part);
                    if let Some(Operand::Sgpr(r)) = mask_dst(op.class, op.inst) {
                        cmp_lanes.insert(r, lanes);
                    }
                }
                if let Operand::Vgpr(r) = op.inst.dst[0] {
                    for (k, &v) in res.vgpr.iter().enumerate() {
                        regs.insert(r + k as u16, v);
                        out.written.insert(r + k as u16, v);
                    }
                }
            }
        }
        out
    }

    /// Source `k` of a 32-bit vector op in this chunk, abs/neg applied.
    fn chunk_src(
        &mut self,
        op: &VOp,
        k: usize,
        regs: &mut HashMap<u16, Value>,
        at: At,
        cmp_lanes: &HashMap<u8, Value>,
    ) -> Value {
        let v = match op.src[k] {
            Src::Zero => self.splat_const(0),
            Src::Vgpr(r) => self.chunk_vgpr(regs, r, at),
            Src::Uniform(_, splat) => splat,
            Src::MaskScalar(m) => self.mask_lanes(m, at),
            Src::MaskVector(r) => cmp_lanes[&r],
            Src::Pair(_) => unreachable!("64-bit sources are read by pair_src"),
        };
        self.float_mods(op.inst, k, v)
    }

    /// VOP3 abs/neg of an f32 source, as the interpreter's fetch applies
    /// them (clear, then flip, the sign bit).
    fn float_mods(&mut self, inst: &Inst, k: usize, v: Value) -> Value {
        let bit = 1u8 << k;
        let mut v = v;
        if inst.mods.abs & bit != 0 {
            let m = self.splat_const(0x7fff_ffff);
            v = self.b.ins().band(v, m);
        }
        if inst.mods.neg & bit != 0 {
            let m = self.splat_const(0x8000_0000);
            v = self.b.ins().bxor(v, m);
        }
        v
    }

    /// An f32 compare of vectors, lane by lane. A block with a vector
    /// `one` or `ueq` compare did not compile on x86 (the class test found
    /// `v_cmp_lg_f32` and `v_cmp_nlg_f32` never ran in a block), so `lg`
    /// is `lt | gt`, false for a NaN as `one` is, and `nlg` its negation.
    fn fcmp(&mut self, c: FloatCmp, x: Value, y: Value) -> Value {
        match c {
            FloatCmp::Lg | FloatCmp::Nlg => {
                let lt = self.b.ins().fcmp(FloatCC::LessThan, x, y);
                let gt = self.b.ins().fcmp(FloatCC::GreaterThan, x, y);
                let lg = self.b.ins().bor(lt, gt);
                match c {
                    FloatCmp::Lg => lg,
                    _ => self.b.ins().bnot(lg),
                }
            }
            _ => self.b.ins().fcmp(float_cc(c), x, y),
        }
    }

    /// One vector op over one chunk: its VGPR result and its lane mask
    /// (all-ones or zero lanes), whichever it has.
    fn vector_op(&mut self, op: &VOp, src: [Value; 3]) -> Out {
        let [a, b, c] = src;
        match op.class {
            Class::Lane(l) => Out {
                vgpr: vec![self.lane_op(op, l, src)],
                mask: None,
            },
            Class::FCmp(cc) => {
                let (x, y) = (self.f(a), self.f(b));
                Out {
                    vgpr: Vec::new(),
                    mask: Some(self.fcmp(cc, x, y)),
                }
            }
            Class::ICmp(cc) => Out {
                vgpr: Vec::new(),
                mask: Some(self.b.ins().icmp(int_cc(cc), a, b)),
            },
            Class::Carry(k) => {
                let (r, carry) = self.carry_op(k, a, b, c);
                Out {
                    vgpr: vec![r],
                    mask: Some(carry),
                }
            }
            _ => unreachable!("the planner passes only vector ops here"),
        }
    }

    /// A VGPR's lanes in this chunk: the block's value if it has one, else
    /// loaded (once).
    fn chunk_vgpr(&mut self, regs: &mut HashMap<u16, Value>, r: u16, at: At) -> Value {
        if let Some(&v) = regs.get(&r) {
            return v;
        }
        let v = self
            .b
            .ins()
            .load(I32X4, self.flags, at.rows, r as i32 * VGPR_BYTES);
        regs.insert(r, v);
        v
    }

    /// A 64-bit shift of the pair `src[1]` by the constant `src[0] & 63`
    /// (`ops::valu`'s `v_lshlrev_b64` family), on the 32-bit halves.
    fn shift64(&mut self, op: &VOp, k: Shift64, regs: &mut HashMap<u16, Value>, at: At) -> Out {
        let (Operand::Const(amount), Operand::Vgpr(r)) = (op.inst.src[0], op.inst.src[1]) else {
            unreachable!("the planner passes a constant amount and a VGPR pair")
        };
        let s = (amount & 63) as i64;
        let lo = self.chunk_vgpr(regs, r, at);
        let hi = self.chunk_vgpr(regs, r + 1, at);
        let zero = self.splat_const(0);
        let ins = self.b.ins();
        let (lo, hi) = match (k, s) {
            (_, 0) => (lo, hi),
            (Shift64::Shl, 1..=31) => {
                let carried = ins.ushr_imm_u(lo, 32 - s);
                let high = self.b.ins().ishl_imm_u(hi, s);
                let high = self.b.ins().bor(high, carried);
                (self.b.ins().ishl_imm_u(lo, s), high)
            }
            (Shift64::Shl, _) => (zero, ins.ishl_imm_u(lo, s - 32)),
            (Shift64::Shr | Shift64::Sar, 1..=31) => {
                let carried = ins.ishl_imm_u(hi, 32 - s);
                let low = self.b.ins().ushr_imm_u(lo, s);
                let low = self.b.ins().bor(low, carried);
                let high = if k == Shift64::Sar {
                    self.b.ins().sshr_imm_u(hi, s)
                } else {
                    self.b.ins().ushr_imm_u(hi, s)
                };
                (low, high)
            }
            (Shift64::Shr, _) => (ins.ushr_imm_u(hi, s - 32), zero),
            (Shift64::Sar, _) => {
                let low = ins.sshr_imm_u(hi, s - 32);
                (low, self.b.ins().sshr_imm_u(hi, 31))
            }
        };
        Out {
            vgpr: vec![lo, hi],
            mask: None,
        }
    }

    /// A 64-bit source's halves in this chunk (low words, high words),
    /// with an f64's abs/neg applied to the sign bit, as
    /// `ops::valu::fetch64` does.
    fn pair_src(
        &mut self,
        op: &VOp,
        k: usize,
        regs: &mut HashMap<u16, Value>,
        at: At,
    ) -> [Value; 2] {
        let [lo, hi] = match op.src[k] {
            Src::Vgpr(r) => [
                self.chunk_vgpr(regs, r, at),
                self.chunk_vgpr(regs, r + 1, at),
            ],
            Src::Pair(halves) => halves,
            _ => unreachable!("the planner passes 64-bit sources in pairs or constants"),
        };
        [lo, self.float_mods(op.inst, k, hi)]
    }

    /// Lanes `4 * chunk ..` of a pair as two 64-bit-lane vectors of type
    /// `ty` (F64X2 or I64X2; lanes 0-1, 2-3): the low and high words
    /// interleaved.
    fn pairs_to_x2(&mut self, [lo, hi]: [Value; 2], ty: Type) -> [Value; 2] {
        let le = MachMemFlags::new().with_endianness(Endianness::Little);
        if let Some(&x2) = self.x2.get(&(lo, hi)) {
            // A bitcast between 128-bit types costs nothing.
            return x2.map(|v| {
                if self.b.func.dfg.value_type(v) == ty {
                    v
                } else {
                    self.b.ins().bitcast(ty, le, v)
                }
            });
        }
        let lo8 = self.b.ins().bitcast(I8X16, le, lo);
        let hi8 = self.b.ins().bitcast(I8X16, le, hi);
        let x2 = [[0, 1], [2, 3]].map(|lanes| {
            let bytes: Vec<u8> = lanes
                .iter()
                .flat_map(|&l| {
                    (0..4)
                        .map(move |b| 4 * l + b)
                        .chain((0..4).map(move |b| 16 + 4 * l + b))
                })
                .collect();
            let mask = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
            let v = self.b.ins().shuffle(lo8, hi8, mask);
            self.b.ins().bitcast(ty, le, v)
        });
        self.x2.insert((lo, hi), x2);
        x2
    }

    /// `x2_to_pairs` that remembers the way back (see [`Emitter::x2`]).
    fn x2_to_pairs_cached(&mut self, x2: [Value; 2]) -> [Value; 2] {
        let words = self.x2_to_pairs(x2);
        self.x2.insert((words[0], words[1]), x2);
        words
    }

    /// The inverse of `pairs_to_x2`: two vectors of 64-bit lanes (as any
    /// 128-bit type) back to low and high words.
    fn x2_to_pairs(&mut self, [a, b]: [Value; 2]) -> [Value; 2] {
        let le = MachMemFlags::new().with_endianness(Endianness::Little);
        let a8 = self.b.ins().bitcast(I8X16, le, a);
        let b8 = self.b.ins().bitcast(I8X16, le, b);
        [0u8, 4].map(|word| {
            let bytes: Vec<u8> = [0u8, 8, 16, 24]
                .iter()
                .flat_map(|&at| (0..4).map(move |b| at + word + b))
                .collect();
            let mask = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
            let v = self.b.ins().shuffle(a8, b8, mask);
            self.b.ins().bitcast(I32X4, le, v)
        })
    }

    /// An f64 add, mul or fma over one chunk, with the interpreter's NaN
    /// rule (`ops::float::{add64, mul64, fma64}`: the first NaN operand,
    /// quieted).
    fn f64_op(&mut self, op: &VOp, k: F64, regs: &mut HashMap<u16, Value>, at: At) -> Out {
        let n = if k == F64::Fma { 3 } else { 2 };
        let srcs: Vec<[Value; 2]> = (0..n)
            .map(|s| {
                let halves = self.pair_src(op, s, regs, at);
                self.pairs_to_x2(halves, F64X2)
            })
            .collect();
        let halves = [0, 1].map(|half| {
            let x: Vec<Value> = srcs.iter().map(|s| s[half]).collect();
            let r = match k {
                F64::Add => self.b.ins().fadd(x[0], x[1]),
                F64::Mul => self.b.ins().fmul(x[0], x[1]),
                F64::Fma => self.b.ins().fma(x[0], x[1], x[2]),
                F64::Ldexp => unreachable!("ldexp64 builds v_ldexp_f64"),
            };
            (r, x)
        });
        let [lo, hi] = self.nan_rule(halves);
        Out {
            vgpr: self.x2_to_pairs_cached([lo, hi]).to_vec(),
            mask: None,
        }
    }

    /// `v_ldexp_f64` over one chunk under the default MODE, as
    /// `ops::float::ldexp64` computes it. The fast pass: where x is normal
    /// and both e and the result's exponent are in the normal range,
    /// x · 2^e is x's bits with e added to the exponent field (exact, as
    /// the interpreter's product is); any other lane (a zero, a denormal,
    /// an infinity, a NaN, a result that over- or underflows) is put in
    /// doubt. The exact pass calls the interpreter's own function for
    /// every lane (`ldexp_lane`).
    fn ldexp64(&mut self, op: &VOp, e: Value, regs: &mut HashMap<u16, Value>, at: At) -> Out {
        let halves = self.pair_src(op, 0, regs, at);
        let x = self.pairs_to_x2(halves, I64X2);
        let e = [self.b.ins().swiden_low(e), self.b.ins().swiden_high(e)];
        let out = match self.pass {
            Pass::Fast { .. } => {
                let halves = [0, 1].map(|h| self.ldexp_fast(x[h], e[h]));
                self.add_doubt(&halves.map(|(_, miss)| miss));
                halves.map(|(fast, _)| fast)
            }
            Pass::Exact => self.ldexp_calls(x, e),
        };
        Out {
            vgpr: self.x2_to_pairs_cached(out).to_vec(),
            mask: None,
        }
    }

    /// The fast case of `v_ldexp_f64` over two lanes (64-bit lanes `x`,
    /// `e`): x's bits with e added to the exponent field, and the lanes
    /// outside the case (all-ones 64-bit lanes), whose result is wrong.
    fn ldexp_fast(&mut self, x: Value, e: Value) -> (Value, Value) {
        let field = self.b.ins().ushr_imm_u(x, 52);
        let exp_mask = self.splat64(0x7ff);
        let exp = self.b.ins().band(field, exp_mask);
        let scaled = self.b.ins().iadd(exp, e);
        let ok = [(exp, 1, 2046), (e, -1022, 1023), (scaled, 1, 2046)]
            .map(|(v, lo, hi)| self.in_range64(v, lo, hi));
        let both = self.b.ins().band(ok[0], ok[1]);
        let ok = self.b.ins().band(both, ok[2]);
        let miss = self.b.ins().bnot(ok);
        let step = self.b.ins().ishl_imm_u(e, 52);
        (self.b.ins().iadd(x, step), miss)
    }

    /// `ldexp_lane` for each of a chunk's lanes (`x` and `e` as two
    /// 64-bit-lane vectors each).
    fn ldexp_calls(&mut self, x: [Value; 2], e: [Value; 2]) -> [Value; 2] {
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.extend([AbiParam::new(I64), AbiParam::new(I32)]);
        sig.returns.push(AbiParam::new(I64));
        let sig = self.b.import_signature(sig);
        let ptr = self.b.func.dfg.value_type(self.vgpr);
        let callee = self
            .b
            .ins()
            .iconst(ptr, ldexp_lane as *const () as usize as i64);
        let mut exact = x;
        for h in 0..2 {
            for l in 0..2 {
                let xl = self.b.ins().extractlane(x[h], l);
                let el = self.b.ins().extractlane(e[h], l);
                let el = self.b.ins().ireduce(I32, el);
                let call = self.b.ins().call_indirect(sig, callee, &[xl, el]);
                let r = self.b.inst_results(call)[0];
                exact[h] = self.b.ins().insertlane(exact[h], r, l);
            }
        }
        exact
    }

    /// Puts in doubt the lanes where `a` or `b` (results of one shape,
    /// vector for vector) is a NaN.
    fn doubt_nans(&mut self, a: &[Value], b: &[Value]) {
        let nans: Vec<Value> = a
            .iter()
            .zip(b)
            .map(|(&a, &b)| self.b.ins().fcmp(FloatCC::Unordered, a, b))
            .collect();
        self.add_doubt(&nans);
    }

    /// Puts the chunk's lanes that `lanes` selects in doubt: all-ones or
    /// zero lanes, as one I32X4 or as two I64X2 halves (lanes 0-1, 2-3).
    fn add_doubt(&mut self, lanes: &[Value]) {
        let lanes = match *lanes {
            [four] => four,
            [lo, hi] => self.x2_to_pairs([lo, hi])[0],
            _ => unreachable!("a chunk is one I32X4 or two I64X2 halves"),
        };
        debug_assert_eq!(self.b.func.dfg.value_type(lanes), I32X4);
        if let Pass::Fast { doubt, .. } = &mut self.pass {
            let prev = doubt.take();
            *doubt = Some(match prev {
                Some(d) => self.b.ins().bor(d, lanes),
                None => lanes,
            });
        }
    }

    fn splat64(&mut self, v: i64) -> Value {
        let c = self.b.ins().iconst(I64, v);
        self.b.ins().splat(I64X2, c)
    }

    /// All-ones lanes where `lo <= v <= hi` (signed 64-bit lanes).
    fn in_range64(&mut self, v: Value, lo: i64, hi: i64) -> Value {
        let (lo, hi) = (self.splat64(lo), self.splat64(hi));
        let above = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, v, lo);
        let below = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, v, hi);
        self.b.ins().band(above, below)
    }

    /// `ops::valu::mad64` over one chunk: `a * b + c` with the 32-bit
    /// `a`, `b` widened (signed or not) and multiplied exactly in 64 bits,
    /// and bit 64 of the exact sum as the lane mask.
    fn mad64(&mut self, signed: bool, a: Value, b: Value, c: [Value; 2]) -> Out {
        let c = self.pairs_to_x2(c, I64X2);
        let mut sums = [Value::from_u32(0); 2];
        let mut carries = [Value::from_u32(0); 2];
        for half in 0..2 {
            let [wa, wb] = [a, b].map(|x| match (signed, half) {
                (false, 0) => self.b.ins().uwiden_low(x),
                (false, _) => self.b.ins().uwiden_high(x),
                (true, 0) => self.b.ins().swiden_low(x),
                (true, _) => self.b.ins().swiden_high(x),
            });
            let p = self.b.ins().imul(wa, wb);
            let s = self.b.ins().iadd(p, c[half]);
            carries[half] = if signed {
                // |a * b| <= 2^62, so the exact sum fits 65 bits; bit 64 is
                // its sign: both addends negative, or their signs differ
                // and the wrapped sum is negative.
                let both = self.b.ins().band(p, c[half]);
                let differ = self.b.ins().bxor(p, c[half]);
                let wrapped = self.b.ins().band(differ, s);
                let sign = self.b.ins().bor(both, wrapped);
                self.b.ins().sshr_imm_u(sign, 63)
            } else {
                // a * b < 2^64, so the sum carries when it wrapped below c.
                self.b.ins().icmp(IntCC::UnsignedLessThan, s, c[half])
            };
            sums[half] = s;
        }
        let [mask, _] = self.x2_to_pairs(carries);
        Out {
            vgpr: self.x2_to_pairs(sums).to_vec(),
            mask: Some(mask),
        }
    }

    /// `ops::valu::carry`'s exact sums, lane by lane: the wrapped result
    /// and whether the exact one left [0, 2^32). `cin` lanes are all-ones
    /// (carry in) or zero, so adding one is subtracting `cin`.
    fn carry_op(&mut self, k: Carry, a: Value, b: Value, cin: Value) -> (Value, Value) {
        use Carry as C;
        let (x, y) = match k {
            C::SubRev | C::SubRevCi => (b, a),
            _ => (a, b),
        };
        let ins = self.b.ins();
        match k {
            C::Add => {
                let r = ins.iadd(x, y);
                (r, self.b.ins().icmp(IntCC::UnsignedLessThan, r, x))
            }
            C::Sub | C::SubRev => {
                let r = ins.isub(x, y);
                (r, self.b.ins().icmp(IntCC::UnsignedLessThan, x, y))
            }
            C::AddCi => {
                // x + y + 1 carries when x + y does, or when it is all-ones.
                let t = ins.iadd(x, y);
                let r = self.b.ins().isub(t, cin);
                let c1 = self.b.ins().icmp(IntCC::UnsignedLessThan, t, x);
                let ones = self.splat_const(u32::MAX);
                let full = self.b.ins().icmp(IntCC::Equal, t, ones);
                let c2 = self.b.ins().band(full, cin);
                (r, self.b.ins().bor(c1, c2))
            }
            C::SubCi | C::SubRevCi => {
                // x - y - 1 borrows when x < y, or when x == y.
                let t = ins.isub(x, y);
                let r = self.b.ins().iadd(t, cin);
                let b1 = self.b.ins().icmp(IntCC::UnsignedLessThan, x, y);
                let same = self.b.ins().icmp(IntCC::Equal, x, y);
                let b2 = self.b.ins().band(same, cin);
                (r, self.b.ins().bor(b1, b2))
            }
        }
    }

    /// One lane op over one chunk, with the interpreter's formula
    /// (`ops::valu`'s lane table).
    fn lane_op(&mut self, op: &VOp, lane: Lane, [a, b, c]: [Value; 3]) -> Value {
        use Lane as L;
        // The sources the planner required uniform, as scalars: a shift's
        // amount, then a bit field's width.
        let mut uniform = lane.uniform_srcs().iter().map(|&k| match op.src[k] {
            Src::Uniform(s, _) => s,
            _ => unreachable!("the planner requires these sources uniform"),
        });
        let amount = uniform.next();
        let width = uniform.next();
        let ins = self.b.ins();
        match lane {
            L::Mov => a,
            L::Not => ins.bnot(a),
            L::FAdd | L::FSub | L::FSubRev | L::FMul | L::Fma => {
                // The operands in the interpreter's order: `v_sub_f32` is
                // `a + -b` there. Negation flips the sign bit as an integer
                // so that Cranelift cannot fold `x + -y` into `x - y`,
                // which differs in a NaN's sign.
                let sign = self.splat_const(0x8000_0000);
                let operands = match lane {
                    L::FSub => vec![a, self.b.ins().bxor(b, sign)],
                    L::FSubRev => vec![b, self.b.ins().bxor(a, sign)],
                    L::Fma => vec![a, b, c],
                    _ => vec![a, b],
                };
                let x: Vec<Value> = operands.iter().map(|&v| self.f(v)).collect();
                match lane {
                    // x86's two-operand ops take the first NaN operand,
                    // quieted, as the interpreter does, and the x64 back
                    // end keeps their operand order (the verify-mode tests
                    // would see a swap).
                    L::FMul => {
                        let r = self.b.ins().fmul(x[0], x[1]);
                        self.i(r)
                    }
                    L::Fma => {
                        let r = self.b.ins().fma(x[0], x[1], x[2]);
                        let [bits] = self.nan_rule([(r, x)]);
                        bits
                    }
                    _ => {
                        let r = self.b.ins().fadd(x[0], x[1]);
                        self.i(r)
                    }
                }
            }
            L::CvtF32I32 => {
                let r = ins.fcvt_from_sint(F32X4, a);
                self.i(r)
            }
            L::CvtF32U32 => {
                let r = ins.fcvt_from_uint(F32X4, a);
                self.i(r)
            }
            L::IAdd => ins.iadd(a, b),
            L::ISub => ins.isub(a, b),
            L::ISubRev => ins.isub(b, a),
            L::And => ins.band(a, b),
            L::Or => ins.bor(a, b),
            L::Xor => ins.bxor(a, b),
            L::MulLo => ins.imul(a, b),
            L::MulU24 | L::MadU24 => {
                let m = self.splat_const(0xff_ffff);
                let x = self.b.ins().band(a, m);
                let y = self.b.ins().band(b, m);
                let p = self.b.ins().imul(x, y);
                if lane == L::MadU24 {
                    self.b.ins().iadd(p, c)
                } else {
                    p
                }
            }
            L::MaxI => ins.smax(a, b),
            L::MinI => ins.smin(a, b),
            L::MaxU => ins.umax(a, b),
            L::MinU => ins.umin(a, b),
            L::ShlRev => ins.ishl(b, amount.unwrap()),
            L::ShrRev => ins.ushr(b, amount.unwrap()),
            L::SarRev => ins.sshr(b, amount.unwrap()),
            L::ShlAdd => {
                let s = ins.ishl(a, amount.unwrap());
                self.b.ins().iadd(s, c)
            }
            L::ShlOr => {
                let s = ins.ishl(a, amount.unwrap());
                self.b.ins().bor(s, c)
            }
            L::AndOr => {
                let s = ins.band(a, b);
                self.b.ins().bor(s, c)
            }
            L::Or3 => {
                let s = ins.bor(a, b);
                self.b.ins().bor(s, c)
            }
            L::Xor3 => {
                let s = ins.bxor(a, b);
                self.b.ins().bxor(s, c)
            }
            L::Add3 => {
                let s = ins.iadd(a, b);
                self.b.ins().iadd(s, c)
            }
            L::Xad => {
                let s = ins.bxor(a, b);
                self.b.ins().iadd(s, c)
            }
            // The mask lanes are all-ones or zero.
            L::Cndmask => ins.bitselect(c, b, a),
            L::BfeU => {
                // (1 << (width & 31)) - 1 in 64 bits: zero for width 0.
                let width = self.b.ins().band_imm_u(width.unwrap(), 31);
                let width = self.b.ins().uextend(I64, width);
                let one = self.b.ins().iconst(I64, 1);
                let field = self.b.ins().ishl(one, width);
                let field = self.b.ins().iadd_imm_s(field, -1);
                let field = self.b.ins().ireduce(I32, field);
                let field = self.b.ins().splat(I32X4, field);
                // Vector shifts take the amount modulo 32, as `b & 31`.
                let shifted = self.b.ins().ushr(a, amount.unwrap());
                self.b.ins().band(shifted, field)
            }
        }
    }

    /// The interpreter's NaN rule for a chunk's float results, each given
    /// with its float operands: one F32X4 part, or two F64X2 halves. A NaN
    /// operand gives the first NaN operand, quieted
    /// (`ops::float::{fma32, add64, mul64, fma64}`); otherwise a NaN result
    /// is the host's default NaN, as in the interpreter. Cranelift picks
    /// among x86's three FMA forms, which take NaN operands in different
    /// orders, by register allocation, so the fast pass keeps the host's
    /// results and puts their NaN lanes in doubt; the exact pass applies
    /// the rule. Returns the results' bits as integer lanes.
    fn nan_rule<const N: usize>(&mut self, parts: [(Value, Vec<Value>); N]) -> [Value; N] {
        let le = MachMemFlags::new().with_endianness(Endianness::Little);
        let fast = matches!(self.pass, Pass::Fast { .. });
        if let Pass::Fast { unpaired, .. } = &mut self.pass {
            // Held until a second result of its shape shares its compares.
            let result: Vec<Value> = parts.iter().map(|(r, _)| *r).collect();
            let dfg = &self.b.func.dfg;
            let shape = |r: &[Value]| r.iter().map(|&v| dfg.value_type(v)).collect::<Vec<_>>();
            match unpaired.iter().position(|p| shape(p) == shape(&result)) {
                Some(at) => {
                    let partner = unpaired.swap_remove(at);
                    self.doubt_nans(&partner, &result);
                }
                None => unpaired.push(result),
            }
        }
        parts.map(|(r, operands)| {
            let (bits_ty, lane, quiet) = if self.b.func.dfg.value_type(r) == F64X2 {
                (I64X2, I64, 0x0008_0000_0000_0000)
            } else {
                (I32X4, I32, 0x0040_0000)
            };
            let r_bits = self.b.ins().bitcast(bits_ty, le, r);
            if fast {
                return r_bits;
            }
            let quiet = self.b.ins().iconst(lane, quiet);
            let quiet = self.b.ins().splat(bits_ty, quiet);
            let mut fixed = r_bits;
            for &v in operands.iter().rev() {
                let is_nan = self.b.ins().fcmp(FloatCC::Unordered, v, v);
                let bits = self.b.ins().bitcast(bits_ty, le, v);
                let q = self.b.ins().bor(bits, quiet);
                fixed = self.b.ins().bitselect(is_nan, q, fixed);
            }
            fixed
        })
    }

    // ---- the block's exit -----------------------------------------------

    /// The slot index the wave continues at.
    fn next(&mut self, plan: &Plan, vcc_from_compare: Option<Value>) -> Value {
        let fall = self.b.ins().iconst(I32, plan.fallthrough as i64);
        let Some((cond, taken)) = plan.branch else {
            return fall;
        };
        let taken = self.b.ins().iconst(I32, taken as i64);
        let taken_if = |e: &mut Self, mask: Value, zero: bool| {
            let cc = if zero { IntCC::Equal } else { IntCC::NotEqual };
            e.b.ins().icmp_imm_u(cc, mask, 0)
        };
        let c = match cond {
            Cond::Always => return taken,
            Cond::Scc0 => {
                let s = self.read_scc();
                self.b.ins().icmp_imm_u(IntCC::Equal, s, 0)
            }
            Cond::Scc1 => self.read_scc(),
            Cond::Vccz | Cond::Vccnz => {
                let vcc = match vcc_from_compare {
                    Some(v) => v,
                    None => self.read_mask(sreg::VCC_LO),
                };
                taken_if(self, vcc, cond == Cond::Vccz)
            }
            Cond::Execz | Cond::Execnz => {
                let exec = self.exec_mask();
                taken_if(self, exec, cond == Cond::Execz)
            }
        };
        debug_assert_eq!(self.b.func.dfg.value_type(c), I8);
        self.b.ins().select(c, taken, fall)
    }
}

// ---- cross-lane reads --------------------------------------------------

impl Emitter<'_, '_> {
    /// `v_readlane_b32` / `v_readfirstlane_b32` (`first`) as
    /// `ops::cross_lane` runs them, in the scalar phase: the lane
    /// `src[1] % lanes`, or the lowest EXEC has on (0 when none), of
    /// `src[0]` (a scalar source is its own value) into `dst[0]`. The
    /// planner admits it only while the VGPR holds what the block started
    /// with, which is what the register file still holds here.
    fn read_lane(&mut self, inst: &Inst, first: bool) {
        let value = match inst.src[0] {
            Operand::Vgpr(r) => {
                let lane = if first {
                    let exec = self.exec_mask();
                    let low = self.b.ins().ctz(exec);
                    let none = self.b.ins().icmp_imm_s(IntCC::Equal, exec, 0);
                    let ty = self.mask_type();
                    let zero = self.b.ins().iconst(ty, 0);
                    let lane = self.b.ins().select(none, zero, low);
                    match self.wave64 {
                        true => lane,
                        false => self.b.ins().uextend(I64, lane),
                    }
                } else {
                    let sel = self.scalar_src(inst.src[1]);
                    let last = self.lanes() - 1;
                    let lane = self.b.ins().band_imm_u(sel, last);
                    self.b.ins().uextend(I64, lane)
                };
                let at = self.b.ins().ishl_imm_u(lane, 2);
                let at = self.b.ins().iadd(self.vgpr, at);
                self.b
                    .ins()
                    .load(I32, self.flags, at, r as i32 * VGPR_BYTES)
            }
            op => self.scalar_src(op),
        };
        if let Operand::Sgpr(d) = inst.dst[0] {
            self.write_sgpr(d, value);
        }
    }
}

// ---- private memory ---------------------------------------------------

/// The wave's private page table, its bytes a lane and the granule an
/// access's dwords must each stay inside (I64s, `scratch::pages`).
#[derive(Clone, Copy)]
struct ScratchTable {
    table: Value,
    lane_bytes: Value,
    granule: Value,
}

/// How many more ops than one a scratch access counts as towards
/// `UNROLL_OPS`: it is a page lookup and a load or store a lane and dword,
/// so unrolled, a block of them took seconds to compile.
fn scratch_weight(op: &VOp) -> usize {
    match op.class {
        Class::ScratchLoad { bytes, .. } | Class::ScratchStore { bytes } => {
            8 * (bytes as usize).div_ceil(4)
        }
        _ => 0,
    }
}

impl Emitter<'_, '_> {
    /// The wave's [`ScratchTable`], asked of `scratch::pages` at the
    /// block's first scratch access, in the scalar phase: when it refuses,
    /// the block leaves having changed nothing.
    fn scratch_table(&mut self) -> ScratchTable {
        if let Some(t) = self.scratch_table {
            return t;
        }
        let slot = self.stack_slot(24);
        let out = self.b.ins().stack_addr(I64, slot, 0);
        let n = self.lanes();
        let lanes = self.b.ins().iconst(I64, n);
        let f: super::scratch::Pages = super::scratch::pages;
        let ok = self.call(f as usize, &[I64, I64, I64], &[self.private, lanes, out]);
        self.leave_unless(ok);
        let [table, lane_bytes, granule] =
            [0, 8, 16].map(|at| self.b.ins().load(I64, self.flags, out, at));
        let t = ScratchTable {
            table,
            lane_bytes,
            granule,
        };
        self.scratch_table = Some(t);
        t
    }

    fn lanes(&self) -> i64 {
        if self.wave64 {
            64
        } else {
            32
        }
    }

    /// A scratch access's private address at its program point, as
    /// `ops::vmem` forms it (offset plus SGPR, modulo 2^32), in the
    /// scalar phase. The block leaves unless the `bytes` there lie inside
    /// a lane's segment (where the interpreter faults otherwise) and each
    /// of their dwords (or the whole of a smaller access) inside one
    /// granule, so inside one page for every lane; and, before a store,
    /// unless `scratch::materialise` gave every active lane's page a
    /// zeroed one.
    fn scratch_address(&mut self, inst: &Inst, bytes: u8, store: bool) -> Value {
        let t = self.scratch_table();
        let mut addr = self.b.ins().iconst(I64, inst.imm as i64);
        if inst.src[2] != Operand::None {
            let s = self.scalar_src(inst.src[2]);
            let s = self.b.ins().uextend(I64, s);
            addr = self.b.ins().iadd(addr, s);
        }
        let addr = self.b.ins().band_imm_u(addr, 0xffff_ffff);
        let end = self.b.ins().iadd_imm_s(addr, bytes as i64);
        let inside = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, end, t.lane_bytes);
        let mask = self.b.ins().iadd_imm_s(t.granule, -1);
        let within = self.b.ins().band(addr, mask);
        let unit_end = self.b.ins().iadd_imm_s(within, bytes.min(4) as i64);
        let one_granule = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, unit_end, t.granule);
        let ok = self.b.ins().band(inside, one_granule);
        self.leave_unless(ok);
        if store {
            let exec = self.exec_mask();
            let exec = if self.wave64 {
                exec
            } else {
                self.b.ins().uextend(I64, exec)
            };
            let len = self.b.ins().iconst(I64, bytes as i64);
            let n = self.lanes();
            let lanes = self.b.ins().iconst(I64, n);
            let f: super::scratch::Materialise = super::scratch::materialise;
            let args = [self.private, addr, len, exec, lanes];
            let ok = self.call(f as usize, &[I64; 5], &args);
            self.leave_unless(ok);
        }
        addr
    }

    /// Where each lane of the chunk at `at` has its bytes at the private
    /// address `addr`: offset `l * lane_bytes + addr` of the wave's flat
    /// private memory, through the page table; a page not materialised
    /// reads as `scratch::ZERO_PAGE`.
    fn scratch_lanes(&mut self, addr: Value, at: At) -> [Value; CHUNK_LANES] {
        let t = self
            .scratch_table
            .expect("the scalar phase asked for the page table");
        let zero = self
            .b
            .ins()
            .iconst(I64, super::scratch::ZERO_PAGE.as_ptr() as i64);
        std::array::from_fn(|j| {
            let l = self.b.ins().iadd_imm_s(at.lane, j as i64);
            let flat = self.b.ins().imul(l, t.lane_bytes);
            let flat = self.b.ins().iadd(flat, addr);
            let page = self.b.ins().ushr_imm_u(flat, 12);
            let entry = self.b.ins().ishl_imm_u(page, 3);
            let entry = self.b.ins().iadd(t.table, entry);
            let base = self.b.ins().load(I64, self.flags, entry, 0);
            let absent = self.b.ins().icmp_imm_s(IntCC::Equal, base, 0);
            let base = self.b.ins().select(absent, zero, base);
            let within = self.b.ins().band_imm_u(flat, 0xfff);
            self.b.ins().iadd(base, within)
        })
    }

    /// `scratch_load_*` over the chunk at `at`: each lane's bytes, a
    /// sub-dword value zero- or sign-extended as `ops::vmem::extend` does.
    /// Lanes EXEC leaves off load too (inside their own segment), and the
    /// chunk's store drops them. Each dword is looked up on its own, as
    /// only a dword is sure to stay inside a page.
    fn scratch_load(&mut self, op: &VOp, bytes: u8, signed: bool, at: At) -> Out {
        let addr = op.scratch.expect("the scalar phase checked the address");
        let rows = (bytes as usize).div_ceil(4);
        let vgpr = (0..rows)
            .map(|k| {
                let addr = self.b.ins().iadd_imm_s(addr, 4 * k as i64);
                let lanes = self.scratch_lanes(addr, at);
                let mut v = self.splat_const(0);
                for (j, &p) in lanes.iter().enumerate() {
                    let x = match (bytes, signed) {
                        (1, false) => self.b.ins().uload8(I32, self.flags, p, 0),
                        (1, true) => self.b.ins().sload8(I32, self.flags, p, 0),
                        (2, false) => self.b.ins().uload16(I32, self.flags, p, 0),
                        (2, true) => self.b.ins().sload16(I32, self.flags, p, 0),
                        _ => self.b.ins().load(I32, self.flags, p, 0),
                    };
                    v = self.b.ins().insertlane(v, x, j as u8);
                }
                v
            })
            .collect();
        Out { vgpr, mask: None }
    }

    /// `scratch_store_b*` over the chunk at `at`, from the data VGPRs'
    /// values at its program point: each lane EXEC has on writes its
    /// bytes to its own segment (whose pages the scalar phase
    /// materialised), the others to the discard slot.
    fn scratch_store(
        &mut self,
        op: &VOp,
        bytes: u8,
        regs: &mut HashMap<u16, Value>,
        at: At,
    ) -> Out {
        let addr = op.scratch.expect("the scalar phase checked the address");
        let Operand::Vgpr(data) = op.inst.src[1] else {
            unreachable!("the planner passes a data VGPR")
        };
        let discard = match self.scratch_discard {
            Some(d) => d,
            None => {
                let slot = self.stack_slot(16);
                let d = self.b.ins().stack_addr(I64, slot, 0);
                self.scratch_discard = Some(d);
                d
            }
        };
        let exec = self.exec_mask();
        let on: [Value; CHUNK_LANES] = std::array::from_fn(|j| {
            let lane = self.b.ins().iadd_imm_s(at.lane, j as i64);
            let lane = if self.wave64 {
                lane
            } else {
                self.b.ins().ireduce(I32, lane)
            };
            let bit = self.b.ins().ushr(exec, lane);
            self.b.ins().band_imm_u(bit, 1)
        });
        for k in 0..(bytes as usize).div_ceil(4) {
            let v = self.chunk_vgpr(regs, data + k as u16, at);
            let addr = self.b.ins().iadd_imm_s(addr, 4 * k as i64);
            let lanes = self.scratch_lanes(addr, at);
            for (j, &p) in lanes.iter().enumerate() {
                let p = self.b.ins().select(on[j], p, discard);
                let x = self.b.ins().extractlane(v, j as u8);
                match bytes {
                    1 => self.b.ins().istore8(self.flags, x, p, 0),
                    2 => self.b.ins().istore16(self.flags, x, p, 0),
                    _ => self.b.ins().store(self.flags, x, p, 0),
                };
            }
        }
        Out {
            vgpr: Vec::new(),
            mask: None,
        }
    }
}

/// One lane of `v_ldexp_f64` under the default MODE, for the exact pass of
/// [`Emitter::ldexp64`]: the interpreter's function, so both tiers agree.
/// It must never panic: a panic cannot unwind through JIT code, so it
/// would abort the process (`ldexp64` is plain arithmetic on any input).
extern "C" fn ldexp_lane(x: u64, e: i32) -> u64 {
    ldexp64(f64::from_bits(x), e, Round::Nearest).to_bits()
}

/// The byte offset of chunk `chunk` within a VGPR row.
fn base_of(chunk: usize) -> i32 {
    (chunk * CHUNK_LANES * 4) as i32
}

/// For each SGPR a vector compare of the block writes, the accumulator of
/// the last compare that writes it (its value is the one that stays).
fn final_mask_writers(groups: &[Group]) -> BTreeMap<u8, usize> {
    let mut last = BTreeMap::new();
    for op in groups.iter().flatten() {
        if let (Some(k), Some(Operand::Sgpr(r))) = (op.acc, mask_dst(op.class, op.inst)) {
            last.insert(r, k);
        }
    }
    last
}

/// The scalar loads that share their base's range check (`scalar_spans`):
/// for the first of each base, the span from the base to check there;
/// for the others, `None` (that check covers them).
type ScalarSpans = HashMap<*const Inst, Option<(i64, i64)>>;

/// What a scalar load adds to its base, when that is a constant (the
/// offset plus a constant or absent SOFFSET).
fn scalar_offset(inst: &Inst) -> Option<i64> {
    let soffset = match inst.src[1] {
        Operand::None | Operand::Sgpr(sreg::NULL) => 0,
        Operand::Const(c) => c as u32 as i64,
        _ => return None,
    };
    Some(inst.imm as i64 + soffset)
}

/// The block's scalar loads that share a range check: those from an SGPR
/// base pair, at a constant offset, before any op of `plan` writes the
/// pair. For each such load, its base; for each base, the bytes from it
/// that those loads read, lowest to highest (one range holding all).
fn scalar_spans(plan: &Plan) -> ScalarSpans {
    let mut by_base: HashMap<u8, (i64, i64)> = HashMap::new();
    let mut shared = Vec::new();
    let mut written = BTreeSet::new();
    let mark = |written: &mut BTreeSet<u8>, inst: &Inst, count: u8| {
        for op in &inst.dst {
            if let Operand::Sgpr(r) = *op {
                written.extend((0..count).map(|k| r.wrapping_add(k)));
            }
        }
    };
    for step in &plan.steps {
        match step {
            Step::Scalar(inst, _) | Step::Scalar64(inst, _) => mark(&mut written, inst, 2),
            Step::ReadLane(inst, _) | Step::GetPc(inst, _) => mark(&mut written, inst, 2),
            Step::Vector(halves) => {
                for (inst, _) in halves {
                    mark(&mut written, inst, 2);
                }
            }
            Step::ScalarLoad(inst, dwords) => {
                if let (Operand::Sgpr(base), Some(offset)) = (inst.src[0], scalar_offset(inst)) {
                    if !written.contains(&base) && !written.contains(&base.wrapping_add(1)) {
                        let end = offset + 4 * *dwords as i64;
                        let span = by_base.entry(base).or_insert((offset, end));
                        *span = (span.0.min(offset), span.1.max(end));
                        shared.push((*inst as *const Inst, base));
                    }
                }
                mark(&mut written, inst, *dwords);
            }
            Step::Hint | Step::LdsStore(..) | Step::Branch(..) | Step::GlobalStore(..) => {}
        }
    }
    shared
        .into_iter()
        .map(|(inst, base)| (inst, by_base.remove(&base)))
        .collect()
}

/// The Cranelift condition of an f32 compare named as the ISA names it:
/// `lg` is ordered-unequal, `neq` "not equal" (true for NaN), the `n*`
/// forms the negations, true for NaN.
fn float_cc(c: FloatCmp) -> FloatCC {
    match c {
        FloatCmp::Lt => FloatCC::LessThan,
        FloatCmp::Eq => FloatCC::Equal,
        FloatCmp::Le => FloatCC::LessThanOrEqual,
        FloatCmp::Gt => FloatCC::GreaterThan,
        FloatCmp::Lg => FloatCC::OrderedNotEqual,
        FloatCmp::Ge => FloatCC::GreaterThanOrEqual,
        FloatCmp::O => FloatCC::Ordered,
        FloatCmp::U => FloatCC::Unordered,
        FloatCmp::Nge => FloatCC::UnorderedOrLessThan,
        FloatCmp::Nlg => FloatCC::UnorderedOrEqual,
        FloatCmp::Ngt => FloatCC::UnorderedOrLessThanOrEqual,
        FloatCmp::Nle => FloatCC::UnorderedOrGreaterThan,
        FloatCmp::Neq => FloatCC::NotEqual,
        FloatCmp::Nlt => FloatCC::UnorderedOrGreaterThanOrEqual,
    }
}

/// The Cranelift condition of an integer compare.
fn int_cc(c: IntCmp) -> IntCC {
    match c {
        IntCmp::Eq => IntCC::Equal,
        IntCmp::Ne => IntCC::NotEqual,
        IntCmp::SLt => IntCC::SignedLessThan,
        IntCmp::SLe => IntCC::SignedLessThanOrEqual,
        IntCmp::SGt => IntCC::SignedGreaterThan,
        IntCmp::SGe => IntCC::SignedGreaterThanOrEqual,
        IntCmp::ULt => IntCC::UnsignedLessThan,
        IntCmp::ULe => IntCC::UnsignedLessThanOrEqual,
        IntCmp::UGt => IntCC::UnsignedGreaterThan,
        IntCmp::UGe => IntCC::UnsignedGreaterThanOrEqual,
    }
}
