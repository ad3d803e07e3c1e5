//! Which slots form a JIT block.
//!
//! A block is a run of consecutive slots the JIT lowers, ending before the
//! first it does not or after a branch. Because the emitter runs a block's
//! scalar ops before its vector ops (`super::emit`), the run also ends
//! before any op that would read, as a scalar, a lane mask a vector compare
//! of the block wrote, or would overwrite such a mask from the scalar side.
//! LDS stores run after all of the block's other vector ops, so once a
//! block holds one, it ends before the next vector op that is not one. A
//! global load's dwords are gathered in the scalar phase, so it ends
//! before a global load whose address VGPRs a vector op of the block
//! wrote (the load then starts the next block).

use std::collections::BTreeSet;

use softgpu_isa::{sreg, Format, Inst, Operand, Ty};

use super::lower::{form_ok, mask_dst, may_doubt, Class, Cond, LdsOffsets, LdsShape, Scalar};
use softgpu_interp::program::Program;

/// Most slots one block holds (bounds compile time and code size).
const MAX_SLOTS: u32 = 400;
/// Fewest real (non-hint) instructions worth a block.
const MIN_OPS: usize = 1;

pub enum Step<'p> {
    Hint,
    Scalar(&'p Inst, Scalar),
    Scalar64(&'p Inst, Scalar),
    /// `v_readlane_b32` / `v_readfirstlane_b32` (whether first), in the
    /// scalar phase.
    ReadLane(&'p Inst, bool),
    /// `s_getpc_b64` and the address it writes.
    GetPc(&'p Inst, u64),
    /// One vector op, or a VOPD's two halves (both read before either writes).
    Vector(Vec<(&'p Inst, Class)>),
    /// A scalar load from memory the block may read directly.
    ScalarLoad(&'p Inst, u8),
    /// An LDS store, run over the whole wave after every `Vector` step.
    LdsStore(&'p Inst, LdsShape),
    /// A global or flat dword store (whether flat): always the block's
    /// last slot, run after everything else.
    GlobalStore(&'p Inst, bool),
    Branch(Cond, u32),
}

/// A block ready to emit.
pub struct Plan<'p> {
    pub steps: Vec<Step<'p>>,
    /// Slot index after the block's last slot.
    pub fallthrough: u32,
    /// The closing branch: its condition and target slot.
    pub branch: Option<(Cond, u32)>,
    /// The MODE bits results depend on (`Class::mode_fields`).
    pub mode_fields: u32,
    /// Whether the block loads from LDS.
    pub reads_lds: bool,
    /// Whether the block stores to LDS.
    pub writes_lds: bool,
    /// The LDS bytes its dword loads' windows reach from an address
    /// (`LdsShape::window_reach`): the block runs only with at least that
    /// much LDS, so a window from address 0 stays inside.
    pub lds_reach: u64,
    /// Whether the block reads or writes device memory (scalar or global
    /// loads, a global store).
    pub touches_memory: bool,
    /// Whether the block reads or writes the wave's private memory.
    pub touches_scratch: bool,
}

impl Plan<'_> {
    pub fn len(&self) -> u32 {
        self.steps.len() as u32
    }

    /// Every VGPR the block names, once each (both of a 64-bit pair).
    pub fn vgprs(&self) -> Vec<u16> {
        let mut rows = BTreeSet::new();
        for step in &self.steps {
            if let Step::Vector(halves) = step {
                for (inst, _) in halves {
                    let info = inst.op.info();
                    let operands = inst
                        .dst
                        .iter()
                        .zip(info.dst)
                        .chain(inst.src.iter().zip(info.src));
                    for (op, ty) in operands {
                        if let Operand::Vgpr(r) = *op {
                            rows.extend((0..ty.dwords().max(1) as u16).map(|k| r + k));
                        }
                    }
                }
            }
        }
        rows.into_iter().collect()
    }
}

/// Scalar registers vector compares of the block have written so far.
struct Masks {
    wave64: bool,
    /// Every SGPR some compare's mask covers.
    covered: BTreeSet<u8>,
    /// The first SGPR of each compare's mask.
    dsts: BTreeSet<u8>,
}

impl Masks {
    fn range(&self, r: u8) -> std::ops::RangeInclusive<u8> {
        r..=if self.wave64 { r.saturating_add(1) } else { r }
    }

    /// A 32-bit scalar read or write of `r` is safe in scalar-first order.
    fn scalar_ok(&self, r: u8) -> bool {
        !self.covered.contains(&r)
    }

    /// A mask operand at `r` reads either untouched SGPRs or exactly one
    /// compare's mask.
    fn mask_ok(&self, r: u8) -> bool {
        self.dsts.contains(&r) || self.range(r).all(|s| !self.covered.contains(&s))
    }

    fn write(&mut self, r: u8) -> bool {
        if !self.mask_ok(r) {
            return false;
        }
        self.dsts.insert(r);
        let range = self.range(r);
        self.covered.extend(range);
        true
    }
}

/// The block starting at slot `start`, if one is worth compiling.
pub fn plan(program: &Program, start: u32, wave64: bool) -> Option<Plan<'_>> {
    let slots = program.slots();
    let mut masks = Masks {
        wave64,
        covered: BTreeSet::new(),
        dsts: BTreeSet::new(),
    };
    let mut steps = Vec::new();
    let mut branch = None;
    let mut mode_fields = 0;
    let mut reads_lds = false;
    let mut writes_lds = false;
    let mut lds_reach = 0;
    let mut touches_memory = false;
    let (mut touches_scratch, mut writes_scratch, mut doubts) = (false, false, false);
    // VGPRs the block's vector ops have written so far.
    let mut written = BTreeSet::new();
    let mut index = start;
    while (index as usize) < slots.len() && index - start < MAX_SLOTS {
        let slot = &slots[index as usize];
        if slot.illegal.is_some() {
            break;
        }
        let Some(step) = step(program, index, &slot.inst, &mut masks, &written) else {
            break;
        };
        match step {
            Step::LdsStore(..) => writes_lds = true,
            Step::ScalarLoad(..) | Step::GlobalStore(..) => touches_memory = true,
            Step::Vector(_) if writes_lds => break,
            _ => {}
        }
        if let Step::Vector(halves) = &step {
            // A block that stores to private memory runs each chunk once
            // (`lower::may_doubt`).
            let stores = halves
                .iter()
                .any(|(_, c)| matches!(c, Class::ScratchStore { .. }));
            let doubt = halves.iter().any(|&(_, c)| may_doubt(c));
            if (stores && doubts) || (doubt && writes_scratch) {
                break;
            }
            writes_scratch |= stores;
            doubts |= doubt;
            touches_scratch |= halves
                .iter()
                .any(|(_, c)| matches!(c, Class::ScratchLoad { .. } | Class::ScratchStore { .. }));
            mode_fields |= halves.iter().fold(0, |m, (_, c)| m | c.mode_fields());
            for &(inst, class) in halves {
                if let Class::LdsLoad(shape) = class {
                    reads_lds = true;
                    lds_reach = lds_reach.max(shape.window_reach(inst).unwrap_or(0));
                }
            }
            touches_memory |= halves
                .iter()
                .any(|(_, c)| matches!(c, Class::GlobalLoad { .. }));
            written.extend(halves.iter().flat_map(|(inst, _)| dst_rows(inst)));
        }
        index += 1;
        if let Step::Branch(cond, target) = step {
            branch = Some((cond, target));
            steps.push(step);
            break;
        }
        let last = matches!(step, Step::GlobalStore(..));
        steps.push(step);
        if last {
            break;
        }
    }
    let ops = steps.iter().filter(|s| !matches!(s, Step::Hint)).count();
    (ops >= MIN_OPS).then_some(Plan {
        steps,
        fallthrough: index,
        branch,
        mode_fields,
        reads_lds,
        writes_lds,
        lds_reach,
        touches_memory,
        touches_scratch,
    })
}

/// The step for one instruction, if the block may hold it here.
fn step<'p>(
    program: &Program,
    index: u32,
    inst: &'p Inst,
    masks: &mut Masks,
    written: &BTreeSet<u16>,
) -> Option<Step<'p>> {
    let class = inst.op.info().jit?;
    if !form_ok(inst, class) {
        return None;
    }
    match class {
        Class::Hint => Some(Step::Hint),
        Class::Scalar(op) => {
            let reads = inst.src[..2].iter().filter_map(|s| sgpr(*s));
            let writes = sgpr(inst.dst[0]);
            let ok = reads.chain(writes).all(|r| masks.scalar_ok(r));
            ok.then_some(Step::Scalar(inst, op))
        }
        Class::Scalar64(op) => {
            let b = if op.is_shift() { 1 } else { 2 };
            let mut regs = sgprs(inst.src[0], 2)
                .chain(sgprs(inst.src[1], b))
                .chain(sgprs(inst.dst[0], 2));
            regs.all(|r| masks.scalar_ok(r))
                .then_some(Step::Scalar64(inst, op))
        }
        Class::LdsStore(shape) => Some(Step::LdsStore(inst, shape)),
        Class::ReadLane { first } => {
            // Read in the scalar phase: the VGPR must hold what it held
            // when the block started.
            let unwritten = match inst.src[0] {
                Operand::Vgpr(r) => !written.contains(&r),
                _ => true,
            };
            let regs = inst.src[..2].iter().filter_map(|s| sgpr(*s));
            let ok = regs.chain(sgpr(inst.dst[0])).all(|r| masks.scalar_ok(r));
            (unwritten && ok && exec_unmasked(masks)).then_some(Step::ReadLane(inst, first))
        }
        Class::GetPc => sgprs(inst.dst[0], 2)
            .all(|r| masks.scalar_ok(r))
            .then(|| Step::GetPc(inst, program.address_after(index))),
        Class::GlobalStore { flat } => sgprs(inst.src[2], 2)
            .all(|r| masks.scalar_ok(r))
            .then_some(Step::GlobalStore(inst, flat)),
        Class::ScalarLoad { dwords } => {
            let mut regs = sgprs(inst.src[0], 2)
                .chain(sgprs(inst.src[1], 1))
                .chain(sgprs(inst.dst[0], dwords));
            regs.all(|r| masks.scalar_ok(r))
                .then_some(Step::ScalarLoad(inst, dwords))
        }
        Class::Branch(cond) => {
            let target = program.branch_target(index, inst.imm as i16 as i32)?;
            let vcc_ok = match cond {
                Cond::Vccz | Cond::Vccnz => masks.mask_ok(sreg::VCC_LO),
                _ => true,
            };
            vcc_ok.then_some(Step::Branch(cond, target))
        }
        Class::Lane(_)
        | Class::FCmp(_)
        | Class::ICmp(_)
        | Class::Carry(_)
        | Class::Shift64(_)
        | Class::F64(_)
        | Class::Mad64 { .. }
        | Class::LdsLoad(_)
        | Class::ScratchLoad { .. }
        | Class::ScratchStore { .. }
        | Class::GlobalLoad { .. } => {
            // A global load's addresses are gathered before the block's
            // vector ops run: they must be the ones it started with.
            if let (Class::GlobalLoad { .. }, Operand::Vgpr(r)) = (class, inst.src[0]) {
                let wide = inst.src[2] == Operand::None;
                if written.contains(&r) || (wide && written.contains(&(r + 1))) {
                    return None;
                }
            }
            let mut halves = vec![(inst, class)];
            if inst.op.info().format == Format::Vopd {
                let y = inst.vopd_y.as_deref()?;
                let y_class = y.op.info().jit?;
                if !matches!(y_class, Class::Lane(_)) || !form_ok(y, y_class) {
                    return None;
                }
                halves.push((y, y_class));
            }
            // All halves read before any writes: check reads first.
            for &(half, class) in &halves {
                if !vector_reads_ok(half, class, masks) {
                    return None;
                }
            }
            for &(half, class) in &halves {
                if let Some(r) = mask_dst(class, half).and_then(sgpr) {
                    if !masks.write(r) {
                        return None;
                    }
                }
            }
            Some(Step::Vector(halves))
        }
    }
}

/// Whether EXEC is as the block found it: no vector compare of the block
/// wrote a mask over it (the planner takes EXEC as fixed anyway).
fn exec_unmasked(masks: &Masks) -> bool {
    masks.scalar_ok(sreg::EXEC_LO) && masks.scalar_ok(sreg::EXEC_HI)
}

fn vector_reads_ok(inst: &Inst, class: Class, masks: &Masks) -> bool {
    let info = inst.op.info();
    if let Class::Lane(lane) = class {
        let lane_varying = |&k: &usize| matches!(inst.src[k], Operand::Vgpr(_));
        if lane.uniform_srcs().iter().any(lane_varying) {
            return false;
        }
    }
    (0..3).all(|k| match (sgpr(inst.src[k]), info.src[k]) {
        (Some(r), Ty::Mask) => masks.mask_ok(r),
        // Both halves of a 64-bit source.
        (Some(r), ty) => (0..ty.dwords().max(1)).all(|k| masks.scalar_ok(r.wrapping_add(k))),
        (None, _) => true,
    })
}

/// The VGPRs a vector op writes.
fn dst_rows(inst: &Inst) -> impl Iterator<Item = u16> + '_ {
    let info = inst.op.info();
    inst.dst
        .iter()
        .zip(info.dst)
        .flat_map(|(op, ty)| match *op {
            Operand::Vgpr(r) => r..r + ty.dwords().max(1) as u16,
            _ => 0..0,
        })
}

/// The `n` SGPRs from `op`'s, when it is an SGPR (none otherwise).
fn sgprs(op: Operand, n: u8) -> impl Iterator<Item = u8> {
    sgpr(op)
        .into_iter()
        .flat_map(move |r| (0..n).map(move |k| r.wrapping_add(k)))
}

fn sgpr(op: Operand) -> Option<u8> {
    match op {
        Operand::Sgpr(r) => Some(r),
        _ => None,
    }
}
