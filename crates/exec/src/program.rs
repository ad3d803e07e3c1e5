//! A code object placed in device memory and decoded once.
//!
//! The `.text` section is decoded linearly into slots; each slot carries its
//! pre-resolved instruction and the handler that runs it, so the hot loop is
//! a table walk. Branch and jump targets are resolved through an index from
//! code offset to slot.

use softgpu_codeobj::{CodeObject, Kernel, SymbolKind};
use softgpu_isa::{Class, Family, Inst, Op, Operand};

use std::sync::OnceLock;

use crate::device::DispatchError;
use crate::jit::Jit;
use crate::ops::{self, valu::LaneFn, Env, Exec, Result as OpResult, Trap};
use crate::wave::Wave;

/// One decoded instruction and how to run it.
pub struct Slot {
    /// Image offset of the instruction.
    pub offset: u64,
    pub inst: Inst,
    pub exec: Exec,
    /// Why the bytes here are not a runnable instruction, if they are not.
    pub illegal: Option<String>,
    /// VOPD: the lane functions of the X and Y halves.
    pub vopd: Option<(LaneFn, LaneFn)>,
    /// How many scheduling-only instructions ([`ops::sopp::HINTS`]) follow
    /// this one: the run loop steps over them after this instruction
    /// continues to the next, counting them as retired without running
    /// them.
    pub hints_after: u32,
}

/// A loaded, decoded code object.
pub struct Program {
    /// The code object as read: kernels, symbols, image layout.
    pub code_object: CodeObject,
    /// Device address of image offset 0.
    pub image_base: u64,
    /// The processor family the code was decoded for.
    pub family: Family,
    /// A copy of the placed image (for showing instruction bytes).
    pub image: Vec<u8>,
    slots: Vec<Slot>,
    /// Whether the code uses global wave sync (`ds_gws_*`): its
    /// workgroups must then all run at once (`crate::gws`).
    pub uses_gws: bool,
    /// (offset - text start) / 4 → slot index, or u32::MAX.
    index: Vec<u32>,
    text_start: u64,
    /// The JIT's blocks of each kernel (see [`Program::jit`]).
    units: Vec<Unit>,
    /// The JIT's blocks of the whole text, for a dispatch from any other
    /// entry.
    whole: Unit,
}

/// The code one compilation covers: the slots a wave entering at `roots`
/// can reach (see `crate::jit`), and its blocks for wave32 and wave64,
/// compiled on first use.
struct Unit {
    /// The entry slot, then the program's callable functions; empty for
    /// the whole text.
    roots: Vec<u32>,
    jit: [OnceLock<Option<Jit>>; 2],
}

impl Unit {
    fn new(roots: Vec<u32>) -> Unit {
        Unit {
            roots,
            jit: Default::default(),
        }
    }
}

/// The global-wave-sync ops: a program with any of them needs the
/// dispatch's GWS state.
const GWS_OPS: [Op; 6] = [
    Op::DS_GWS_INIT,
    Op::DS_GWS_BARRIER,
    Op::DS_GWS_SEMA_V,
    Op::DS_GWS_SEMA_BR,
    Op::DS_GWS_SEMA_P,
    Op::DS_GWS_SEMA_RELEASE_ALL,
];

fn placeholder() -> Inst {
    Inst::new(Op(0), Family::Gfx11)
}

fn illegal(_: &mut Wave, _: &mut Env, _: &Inst) -> OpResult {
    Err(Trap::Illegal(String::new()))
}

fn ran_off_end(_: &mut Wave, _: &mut Env, _: &Inst) -> OpResult {
    Err(Trap::Other("execution ran past the end of the code".into()))
}

/// Registers an instruction names must exist: each operand's whole range
/// (first register plus the width its type gives) is checked once here, so a
/// 64-bit operand at v255 is an illegal instruction rather than a wrap.
fn operands_valid(inst: &Inst) -> bool {
    let info = inst.op.info();
    let ok = |op: &Operand, ty: softgpu_isa::Ty| {
        let n = ty.dwords().max(1) as usize;
        match *op {
            Operand::Sgpr(r) => r as usize + n <= crate::wave::NUM_SGPRS,
            Operand::Vgpr(r) | Operand::VgprHi(r) => r as usize + n <= crate::wave::NUM_VGPRS,
            _ => true,
        }
    };
    let types = info
        .dst
        .iter()
        .chain(&info.src)
        .copied()
        .chain(std::iter::repeat(softgpu_isa::Ty::None));
    inst.dst
        .iter()
        .chain(&inst.src)
        .zip(types)
        .all(|(op, ty)| ok(op, ty))
        && inst.vopd_y.as_deref().is_none_or(operands_valid)
}

/// Counts, for every slot, the run of hints right after it (from the end,
/// so each count is one more than the next slot's when that one is a hint).
fn fold_hints(slots: &mut [Slot]) {
    let mut run = 0;
    for slot in slots.iter_mut().rev() {
        slot.hints_after = run;
        let hint = slot.illegal.is_none() && ops::sopp::HINTS.contains(&slot.inst.op);
        run = if hint { run + 1 } else { 0 };
    }
}

impl Program {
    /// Decodes the code object's text, already placed at `image_base`.
    pub(crate) fn new(
        code_object: CodeObject,
        image_base: u64,
        image: Vec<u8>,
        family: Family,
    ) -> Program {
        let text = code_object.text.clone();
        let code = image
            .get(text.start as usize..text.end as usize)
            .unwrap_or(&[]);
        let mut slots = Vec::new();
        let mut index = vec![u32::MAX; code.len().div_ceil(4) + 1];
        for (offset, decoded) in softgpu_isa::decode_all(family, code) {
            index[offset as usize / 4] = slots.len() as u32;
            slots.push(Self::slot(text.start + offset as u64, decoded));
        }
        let end = text.start + code.len() as u64;
        index[code.len().div_ceil(4)] = slots.len() as u32;
        slots.push(Slot {
            offset: end,
            inst: placeholder(),
            exec: ran_off_end,
            illegal: None,
            vopd: None,
            hints_after: 0,
        });
        fold_hints(&mut slots);
        let uses_gws = slots.iter().any(|s| GWS_OPS.contains(&s.inst.op));
        let mut program = Program {
            code_object,
            image_base,
            family,
            image,
            slots,
            uses_gws,
            index,
            text_start: text.start,
            units: Vec::new(),
            whole: Unit::new(Vec::new()),
        };
        program.units = program.kernel_units();
        program
    }

    /// One compile unit per kernel entry. A kernel's code reaches the
    /// program's other functions only through calls, whose targets a
    /// register may hold, so each unit also starts from every function
    /// symbol that is not a kernel's entry.
    fn kernel_units(&self) -> Vec<Unit> {
        let kernels = &self.code_object.kernels;
        let is_entry = |offset: u64| kernels.iter().any(|k| k.entry_offset == offset);
        let callees: Vec<u32> = (self.code_object.symbols.iter())
            .filter(|s| s.kind == SymbolKind::Function && s.defined && !is_entry(s.value))
            .filter_map(|s| self.index_of_offset(s.value))
            .collect();
        let mut entries: Vec<u32> = (kernels.iter())
            .filter_map(|k| self.index_of_offset(k.entry_offset))
            .collect();
        entries.sort_unstable();
        entries.dedup();
        entries
            .into_iter()
            .map(|entry| Unit::new([entry].into_iter().chain(callees.iter().copied()).collect()))
            .collect()
    }

    fn slot(offset: u64, decoded: Result<Inst, softgpu_isa::DecodeError>) -> Slot {
        let inst = match decoded {
            Ok(inst) if operands_valid(&inst) => inst,
            // Kept (never run) for its size and its disassembly.
            Ok(inst) => {
                return Slot {
                    offset,
                    inst,
                    exec: illegal,
                    illegal: Some("register operand out of range".into()),
                    vopd: None,
                    hints_after: 0,
                }
            }
            Err(e) => {
                return Slot {
                    offset,
                    inst: placeholder(),
                    exec: illegal,
                    illegal: Some(e.to_string()),
                    vopd: None,
                    hints_after: 0,
                }
            }
        };
        let (exec, vopd) = match &inst.vopd_y {
            Some(y) => {
                let lane = |op: Op| match op.info().class {
                    Class::Dual(twin) => ops::valu::lane_fn(twin),
                    _ => None,
                };
                match (lane(inst.op), lane(y.op)) {
                    (Some(fx), Some(fy)) => {
                        let plain = ops::valu::is_plain(&inst) && ops::valu::is_plain(y);
                        let exec: Exec = if plain {
                            ops::valu::vopd_plain
                        } else {
                            ops::valu::vopd
                        };
                        (exec, Some((fx, fy)))
                    }
                    _ => (ops::unsupported as Exec, None),
                }
            }
            None => (ops::handler_for(&inst).unwrap_or(ops::unsupported), None),
        };
        Slot {
            offset,
            inst,
            exec,
            illegal: None,
            vopd,
            hints_after: 0,
        }
    }

    /// The kernel named `name`, to dispatch ([`crate::DispatchDesc::kernel`]):
    /// by its name or its symbol, else by its demangled name (`scale(float
    /// const*, float*, float)`) or the function name alone (`scale`, a
    /// HIP `__global__` kernel's source name) when that names one kernel.
    pub fn kernel(&self, name: &str) -> Result<&Kernel, DispatchError> {
        let kernels = &self.code_object.kernels;
        let exact = kernels.iter().find(|k| k.name == name || k.symbol == name);
        let source_named = || {
            let mut found = kernels.iter().filter(|k| {
                let demangled = softgpu_codeobj::demangle(&k.name);
                demangled == name || demangled.split('(').next() == Some(name)
            });
            // An overloaded or templated name names several: no guess.
            found.next().filter(|_| found.next().is_none())
        };
        exact.or_else(source_named).ok_or_else(|| {
            // A library's code object has thousands: name a few.
            const LISTED: usize = 16;
            let mut available: Vec<String> = (kernels.iter().take(LISTED))
                .map(|k| softgpu_codeobj::with_demangled(&k.name))
                .collect();
            if kernels.len() > LISTED {
                available.push(format!("… and {} more", kernels.len() - LISTED));
            }
            DispatchError::NoSuchKernel {
                name: name.to_string(),
                available: available.join(", "),
            }
        })
    }

    // Hidden: the kernel-tests check which blocks a kernel's JIT unit
    // compiled; the blocks are the executor's own.
    /// The JIT's compiled blocks for waves of 64 lanes or 32 entering at
    /// slot `entry`, compiled by the first caller (`None`: the host has no
    /// JIT back end). A kernel's entry gets the blocks of the code its
    /// waves can reach, so a dispatch compiles only its kernel's code, not
    /// every kernel's of the code object; any other entry gets the whole
    /// text's.
    #[doc(hidden)]
    pub fn jit(&self, entry: u32, wave64: bool) -> Option<&Jit> {
        let unit = (self.units.iter())
            .find(|u| u.roots.first() == Some(&entry))
            .unwrap_or(&self.whole);
        unit.jit[wave64 as usize]
            .get_or_init(|| Jit::compile(self, &unit.roots, wave64))
            .as_ref()
    }

    /// Every slot a wave may start at: each kernel's entry and each
    /// function symbol's, in order.
    pub(crate) fn entry_points(&self) -> Vec<u32> {
        let mut all: Vec<u32> = (self.units.iter())
            .flat_map(|u| u.roots.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    // Hidden: `softgpu disasm` lists the slots and kernel-tests count
    // them; a slot is the executor's own decoded form.
    /// Every slot (for disassembly and tests).
    #[doc(hidden)]
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    // Hidden: the HSA layer checks that a kernel's entry slot decoded.
    /// The slot at `index`.
    #[inline(always)]
    #[doc(hidden)]
    pub fn slot_at(&self, index: u32) -> &Slot {
        &self.slots[index as usize]
    }

    /// Slot index of the instruction at image offset `offset`.
    pub fn index_of_offset(&self, offset: u64) -> Option<u32> {
        let rel = offset.checked_sub(self.text_start)?;
        if rel % 4 != 0 {
            return None;
        }
        self.index
            .get((rel / 4) as usize)
            .copied()
            .filter(|&i| i != u32::MAX)
    }

    /// Slot index of the instruction at device address `addr`.
    pub(crate) fn index_of_address(&self, addr: u64) -> Option<u32> {
        self.index_of_offset(addr.checked_sub(self.image_base)?)
    }

    /// Device address just after instruction `index` (what `s_getpc` reads).
    pub(crate) fn address_after(&self, index: u32) -> u64 {
        let s = &self.slots[index as usize];
        self.image_base + s.offset + s.inst.size as u64
    }

    /// Target of a relative branch by `simm16` dwords from instruction `index`.
    pub(crate) fn branch_target(&self, index: u32, simm16: i32) -> Option<u32> {
        let s = &self.slots[index as usize];
        let next = s.offset as i64 + s.inst.size as i64;
        self.index_of_offset(u64::try_from(next + 4 * simm16 as i64).ok()?)
    }

    /// The VOPD lane functions of instruction `index`.
    pub(crate) fn vopd_fns(&self, index: u32) -> Option<(LaneFn, LaneFn)> {
        self.slots[index as usize].vopd
    }

    /// The instruction bytes of slot `index`, as hex words.
    pub fn bytes_of(&self, index: u32) -> String {
        let s = &self.slots[index as usize];
        let start = s.offset as usize;
        let bytes = self
            .image
            .get(start..start + s.inst.size as usize)
            .unwrap_or(&[]);
        bytes
            .chunks(4)
            .map(|c| format!("{:08X}", u32::from_le_bytes(c.try_into().unwrap_or([0; 4]))))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The disassembly of slot `index` (wave32 register names).
    pub(crate) fn text_of(&self, index: u32) -> String {
        self.text_for(index, false)
    }

    /// The disassembly of slot `index`, naming lane masks as wave64 code
    /// does. Bytes that do not decode print as llvm-objdump prints them
    /// (`.long 0x…`, `v_illegal`); why they are illegal stays in
    /// `Slot::illegal` for fault reports.
    pub fn text_for(&self, index: u32, wave64: bool) -> String {
        let s = &self.slots[index as usize];
        let opts = softgpu_isa::DisasmOptions { wave64 };
        if s.illegal.is_none() {
            return softgpu_isa::disassemble_with(&s.inst, &opts);
        }
        let end = self.code_object.text.end as usize;
        let code = self.image.get(s.offset as usize..end).unwrap_or(&[]);
        match softgpu_isa::decode(self.family, code) {
            Ok(inst) => softgpu_isa::disassemble_with(&inst, &opts),
            Err(_) => softgpu_isa::undecodable_text(code),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::{Bench, BenchError};
    use crate::ops::Trap;

    // gfx11 SOPP encodings, as llvm-mc-19 -show-encoding prints them.
    const S_NOP: u32 = 0xbf80_0000;
    const S_WAITCNT_0: u32 = 0xbf89_0000;
    const S_DELAY_ALU: u32 = 0xbf87_0000;
    const S_SLEEP_1: u32 = 0xbf83_0001;

    fn code(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn folded_hints_still_count_as_retired() {
        let mut bench = Bench::new("gfx1100", crate::jit::JitMode::Verify).unwrap();
        // Three hints, a sleep (not a hint: it yields), two more, then the
        // bench's own s_endpgm: seven instructions.
        let words = [S_NOP, S_WAITCNT_0, S_DELAY_ALU, S_SLEEP_1, S_NOP, S_NOP];
        assert_eq!(bench.run(&code(&words), 1000).unwrap(), 7);
    }

    #[test]
    fn a_budget_ends_inside_a_run_of_hints_at_its_exact_instruction() {
        let mut bench = Bench::new("gfx1100", crate::jit::JitMode::Verify).unwrap();
        let words = [S_NOP; 6];
        match bench.run(&code(&words), 4) {
            Err(BenchError::Trap {
                index: 4,
                trap: Trap::Budget(4),
                ..
            }) => {}
            other => panic!("expected a budget trap at instruction 4, got {other:?}"),
        }
    }
}
