//! A code object placed in device memory and decoded once.
//!
//! The `.text` section is decoded linearly into slots; each slot carries its
//! pre-resolved instruction and the handler that runs it, so the hot loop is
//! a table walk. Branch and jump targets are resolved through an index from
//! code offset to slot.
//!
//! A library's code object can hold thousands of kernels in hundreds of
//! megabytes of text (rocBLAS's Tensile library for gfx1100: 4844 kernels,
//! 170 MB), of which a program runs a few. Text larger than
//! [`EAGER_TEXT_BYTES`] is therefore decoded a kernel at a time, at the
//! kernel's first dispatch ([`Program::for_kernel`]): the kernel's function
//! and every function that is not a kernel (which its calls may reach).

use softgpu_codeobj::{CodeObject, Kernel, SymbolKind};
use softgpu_isa::{Class, Family, Inst, Op, Operand};

use std::any::Any;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::ops::{self, valu::LaneFn, Code, Env, Exec, Result as OpResult, Slot, Trap};
use crate::trap::RanOff;
use crate::wave::Wave;

/// Text up to this many bytes is decoded whole when it is loaded; larger
/// text a kernel at a time (see the module's documentation). Decoding
/// runs at some 10 MB/s and each slot takes about 150 bytes, so a
/// megabyte of text costs a tenth of a second and 40 MB of memory.
pub const EAGER_TEXT_BYTES: u64 = 1 << 20;

/// What the tier above the interpreter compiled of a unit (see
/// [`Program::compiled`]).
type Compiled = Box<dyn Any + Send + Sync>;

/// The compiled code of a unit as the type its one caller stores (a debug
/// build asserts it is that type rather than reading `None`).
fn as_compiled<T: Any>(compiled: &Compiled) -> Option<&T> {
    let typed = compiled.downcast_ref();
    debug_assert!(
        typed.is_some(),
        "a program's compiled code read as another type"
    );
    typed
}

/// [`Program::kernel`] found no kernel of that name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no kernel named {name}; the code object has: {available}")]
pub struct NoSuchKernel {
    /// The name asked for.
    pub name: String,
    /// The nearest kernel names the code object has, comma-separated.
    pub available: String,
}

/// A loaded, decoded code object, or the decoded code of one of its
/// kernels ([`Program::for_kernel`]).
pub struct Program {
    /// The code object as read: kernels, symbols, image layout.
    pub code_object: Arc<CodeObject>,
    /// Device address of image offset 0.
    pub image_base: u64,
    /// The processor family the code was decoded for.
    pub family: Family,
    /// A copy of the placed image (for showing instruction bytes), shared
    /// by a code object's kernel programs.
    pub image: Arc<[u8]>,
    slots: Vec<Slot>,
    /// Whether the code uses global wave sync (`ds_gws_*`): its
    /// workgroups must then all run at once (`crate::gws`).
    pub uses_gws: bool,
    /// The ranges of text decoded, in order, with their slot indices.
    spans: Vec<Span>,
    /// The compile units of each kernel (see [`Program::compiled`]).
    units: Vec<Unit>,
    /// The compile unit of the whole text, for a dispatch from any other
    /// entry.
    whole: Unit,
    /// For text too large to decode at load: what is decoded on demand.
    lazy: Option<Box<Lazy>>,
}

/// A decoded range of text: the slot index of each instruction by offset.
struct Span {
    start: u64,
    /// (offset - start) / 4 → slot index, or u32::MAX; the last entry is
    /// the range's end slot.
    index: Vec<u32>,
}

/// The parts of a large code object's program, decoded when first asked
/// for.
struct Lazy {
    /// Where functions and kernels start in the text, sorted, then the
    /// text's end: a function without a size ends where the next begins
    /// (Tensile's kernels have size 0).
    starts: Vec<u64>,
    /// The size of each function symbol, by start.
    sizes: HashMap<u64, u64>,
    /// The ranges of the functions that are not kernels.
    callees: Vec<Range<u64>>,
    /// Each kernel's program, by entry offset.
    kernels: HashMap<u64, OnceLock<Box<Program>>>,
    /// The whole text's program (disassembly, inspection).
    whole: OnceLock<Box<Program>>,
}

/// The code one compilation covers: the slots a wave entering at `roots`
/// can reach, and what the tier above the interpreter (the JIT) compiled
/// of them for wave32 and wave64, on first use.
struct Unit {
    /// The entry slot, then the program's callable functions; empty for
    /// the whole text.
    roots: Vec<u32>,
    compiled: [OnceLock<Option<Compiled>>; 2],
    /// [`Program::split_misuse`] of the kernel entering here, with the
    /// descriptor fields it was found for (ACCUM_OFFSET, the granulated
    /// VGPR count).
    split: OnceLock<((u16, u8), Option<String>)>,
    /// Wave instructions the interpreter has run for the unit, per wave
    /// size, until it is compiled ([`Program::tier_up`]).
    interpreted: [AtomicU64; 2],
    /// Whether a worker has begun compiling the unit, per wave size.
    compiling: [AtomicBool; 2],
}

impl Unit {
    fn new(roots: Vec<u32>) -> Unit {
        Unit {
            roots,
            compiled: Default::default(),
            split: OnceLock::new(),
            interpreted: Default::default(),
            compiling: Default::default(),
        }
    }
}

/// Wave instructions a unit runs in the interpreter before a dispatch with
/// the JIT on compiles it (`JitMode::On`). Compiling costs about 60 µs per
/// instruction of the unit (a large Tensile GEMM kernel, 24 000 slots: 1.4
/// s), interpreting some 50 ns per wave instruction, so a kernel that runs
/// little (a library's setup and reduction kernels, launched once over a
/// few waves) is never compiled, and one that runs long is compiled after
/// some 50 ms of interpreting, by one worker while the others go on.
pub const TIER_UP_INSTRUCTIONS: u64 = 1 << 20;

/// A dispatch's worker adds what it interpreted to its unit's shared count
/// in steps of at least this many wave instructions (and what is left at
/// its end), so a dispatch of many small workgroups neither contends on
/// the count nor looks the unit up once per workgroup.
pub const TIER_UP_STEP: u64 = TIER_UP_INSTRUCTIONS / 16;

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
    Err(Trap::RanOff(RanOff::End))
}

fn ran_off_function(_: &mut Wave, _: &mut Env, _: &Inst) -> OpResult {
    Err(Trap::RanOff(RanOff::Function(EAGER_TEXT_BYTES)))
}

/// Whether `n` registers from `r` lie in one register file of `family`:
/// v0-v255, or (CDNA) a0-a255, numbered from `AGPR_BASE`; a tuple may not
/// run from one file into the other.
fn vgprs_exist(family: Family, r: usize, n: usize) -> bool {
    let base = softgpu_isa::AGPR_BASE as usize;
    match r.checked_sub(base) {
        Some(a) => family.is_gcn() && a + n <= base,
        None => r + n <= crate::wave::NUM_VGPRS,
    }
}

/// Each register operand of `inst` (destinations, then sources) with the
/// registers its type spans.
fn register_operands(inst: &Inst) -> impl Iterator<Item = (Operand, usize)> + '_ {
    let info = inst.op.info();
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
        .map(|(op, ty)| (*op, ty.dwords().max(1) as usize))
}

/// Registers an instruction names must exist: each operand's whole range
/// (first register plus the width its type gives) is checked once here, so a
/// 64-bit operand at v255 is an illegal instruction rather than a wrap.
fn operands_valid(inst: &Inst) -> bool {
    register_operands(inst).all(|(op, n)| match op {
        Operand::Sgpr(r) => r as usize + n <= crate::wave::NUM_SGPRS,
        Operand::Vgpr(r) | Operand::VgprHi(r) => vgprs_exist(inst.family, r as usize, n),
        _ => true,
    }) && inst.vopd_y.as_deref().is_none_or(operands_valid)
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
    /// Decodes the code object's text, already placed at `image_base`
    /// (text over [`EAGER_TEXT_BYTES`]: a kernel at a time, later).
    pub fn new(
        code_object: CodeObject,
        image_base: u64,
        image: Vec<u8>,
        family: Family,
    ) -> Program {
        let text = &code_object.text;
        let lazily = text.end - text.start > EAGER_TEXT_BYTES;
        Program::decoding(code_object, image_base, image, family, lazily)
    }

    /// [`Program::new`], decoding a kernel at a time when `lazily`.
    pub fn decoding(
        code_object: CodeObject,
        image_base: u64,
        image: Vec<u8>,
        family: Family,
        lazily: bool,
    ) -> Program {
        let code_object = Arc::new(code_object);
        let image: Arc<[u8]> = image.into();
        let text = code_object.text.clone();
        if !lazily {
            return Program::decoded(code_object, image_base, image, family, &[text], false);
        }
        let lazy = Lazy::new(&code_object);
        let mut program = Program::decoded(code_object, image_base, image, family, &[], true);
        program.lazy = Some(Box::new(lazy));
        program
    }

    /// The program with `ranges` of the text decoded; `parted` when the
    /// ranges are a kernel's part of a larger text (running off one's end
    /// is then reported as such).
    fn decoded(
        code_object: Arc<CodeObject>,
        image_base: u64,
        image: Arc<[u8]>,
        family: Family,
        ranges: &[Range<u64>],
        parted: bool,
    ) -> Program {
        let mut slots = Vec::new();
        let mut spans = Vec::new();
        for range in ranges {
            let code = (image.get(range.start as usize..range.end as usize)).unwrap_or(&[]);
            let mut index = vec![u32::MAX; code.len().div_ceil(4) + 1];
            for (offset, decoded) in softgpu_isa::decode_all(family, code) {
                index[offset as usize / 4] = slots.len() as u32;
                slots.push(Self::slot(range.start + offset as u64, decoded));
            }
            index[code.len().div_ceil(4)] = slots.len() as u32;
            slots.push(Slot {
                offset: range.start + code.len() as u64,
                inst: placeholder(),
                exec: if parted {
                    ran_off_function
                } else {
                    ran_off_end
                },
                illegal: None,
                vopd: None,
                hints_after: 0,
            });
            spans.push(Span {
                start: range.start,
                index,
            });
        }
        fold_hints(&mut slots);
        let uses_gws = slots.iter().any(|s| GWS_OPS.contains(&s.inst.op));
        let mut program = Program {
            code_object,
            image_base,
            family,
            image,
            slots,
            uses_gws,
            spans,
            units: Vec::new(),
            whole: Unit::new(Vec::new()),
            lazy: None,
        };
        program.units = program.kernel_units();
        program
    }

    /// The program that runs `kernel`: this one, unless the text was too
    /// large to decode at load; then the kernel's own, decoded by the
    /// first caller.
    pub fn for_kernel(&self, kernel: &Kernel) -> &Program {
        let Some(lazy) = &self.lazy else {
            return self;
        };
        let Some(cell) = lazy.kernels.get(&kernel.entry_offset) else {
            return self;
        };
        cell.get_or_init(|| {
            let ranges = lazy.kernel_ranges(kernel.entry_offset);
            Box::new(self.part(&ranges, true))
        })
    }

    /// On CDNA, the first instruction of `kernel`'s own function that
    /// names a register its descriptor's split of the unified VGPR file
    /// does not give it, as a sentence; `None` when there is none (or the
    /// function's extent is unknown: a kernel symbol without a size).
    ///
    /// A CDNA wave's file holds the ArchVGPRs v0 up to ACCUM_OFFSET, then
    /// the AccVGPRs from there to the end of the allocation
    /// (GRANULATED_WORKITEM_VGPR_COUNT, in granules of 8). softgpu keeps
    /// the two files apart (a0 is row 256), which is exact for code that
    /// keeps within the split, as LLVM's always does; code past it would
    /// read and write the other file's registers on hardware, so it is
    /// refused rather than run differently. Only the kernel's own function
    /// is read: its callees' registers are LLVM's to account, and a check
    /// here must never refuse code that runs right.
    pub fn split_misuse(&self, kernel: &Kernel) -> Option<String> {
        if !self.family.is_gcn() {
            return None;
        }
        // Found once per kernel: a dispatch of a large kernel must not read
        // its code again.
        let d = &kernel.descriptor;
        let key = (d.accum_offset, d.granulated_workitem_vgpr_count);
        let entry = self.index_of_offset(kernel.entry_offset)?;
        let unit = self.unit(entry);
        if unit.roots.first() != Some(&entry) {
            return self.find_split_misuse(kernel);
        }
        let (found_for, found) = unit
            .split
            .get_or_init(|| (key, self.find_split_misuse(kernel)));
        if *found_for == key {
            found.clone()
        } else {
            self.find_split_misuse(kernel)
        }
    }

    /// [`Program::split_misuse`]'s reading of the code.
    fn find_split_misuse(&self, kernel: &Kernel) -> Option<String> {
        let d = &kernel.descriptor;
        let arch = usize::from(d.accum_offset);
        let allocated = (usize::from(d.granulated_workitem_vgpr_count) + 1) * 8;
        let size = (self.code_object.symbols.iter())
            .find(|s| s.kind == SymbolKind::Function && s.defined && s.value == kernel.entry_offset)
            .map(|s| s.size)
            .filter(|&n| n > 0)?;
        let end = kernel.entry_offset.saturating_add(size);
        let first = self.index_of_offset(kernel.entry_offset)? as usize;
        let base = softgpu_isa::AGPR_BASE as usize;
        for (index, slot) in (first..).zip(&self.slots[first..]) {
            if slot.offset >= end {
                break;
            }
            if slot.illegal.is_some() {
                continue;
            }
            for (op, n) in register_operands(&slot.inst) {
                let (Operand::Vgpr(r) | Operand::VgprHi(r)) = op else {
                    continue;
                };
                let last = r as usize + n - 1;
                let why = match (r as usize).checked_sub(base) {
                    None if last >= arch => format!(
                        "v{last} is past its ArchVGPRs: the descriptor's ACCUM_OFFSET is {arch}, \
                         so v{arch} and up are its AccVGPRs on hardware"
                    ),
                    Some(a) if arch + a + n > allocated => format!(
                        "a{} is past its allocation: {allocated} VGPRs, the AccVGPRs from v{arch}",
                        a + n - 1
                    ),
                    _ => continue,
                };
                return Some(format!(
                    "`{}` at offset {:#x} names a register its descriptor does not give it: {why}",
                    self.text_of(index as u32),
                    slot.offset
                ));
            }
        }
        None
    }

    /// Whether `kernel`'s first instruction decodes to one that runs
    /// (without decoding the rest of a large text).
    pub fn entry_runs(&self, kernel: &Kernel) -> bool {
        let code = (self
            .image
            .get(kernel.entry_offset as usize..self.code_object.text.end as usize))
        .unwrap_or(&[]);
        let decoded = softgpu_isa::decode(self.family, code);
        Self::slot(kernel.entry_offset, decoded).illegal.is_none()
    }

    /// The program of the whole text (this one, unless the text was too
    /// large to decode at load): for listing every instruction.
    pub fn whole_text(&self) -> &Program {
        match &self.lazy {
            None => self,
            Some(lazy) => lazy.whole.get_or_init(|| {
                Box::new(self.part(std::slice::from_ref(&self.code_object.text), false))
            }),
        }
    }

    /// The program of `ranges` of this one's text (`parted`: a kernel's
    /// part of it, see [`Program::decoded`]).
    fn part(&self, ranges: &[Range<u64>], parted: bool) -> Program {
        Program::decoded(
            self.code_object.clone(),
            self.image_base,
            self.image.clone(),
            self.family,
            ranges,
            parted,
        )
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

    /// The kernel named `name`, to dispatch (the machine's `DispatchDesc`):
    /// by its name or its symbol, else by its demangled name (`scale(float
    /// const*, float*, float)`) or the function name alone (`scale`, a
    /// HIP `__global__` kernel's source name) when that names one kernel.
    pub fn kernel(&self, name: &str) -> Result<&Kernel, NoSuchKernel> {
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
        exact.or_else(source_named).ok_or_else(|| NoSuchKernel {
            name: name.to_string(),
            available: softgpu_codeobj::nearest_names(
                kernels.iter().map(|k| k.name.as_str()),
                name,
            ),
        })
    }

    /// What `compile` made of the code waves entering at slot `entry` can
    /// reach, for waves of 64 lanes or 32: made by the first caller and
    /// kept with the program, so every dispatch shares one compile
    /// (`None`: `compile` could not). A kernel's entry gets the code its
    /// waves can reach, so a dispatch compiles only its kernel's code, not
    /// every kernel's of the code object; any other entry gets the whole
    /// text's. The tier above the interpreter (the JIT crate) is the one
    /// caller and always stores one type (a debug build asserts a `T` of
    /// another type is never asked for).
    pub fn compiled<T: Any + Send + Sync>(
        &self,
        entry: u32,
        wave64: bool,
        compile: impl FnOnce(&Program, &[u32]) -> Option<T>,
    ) -> Option<&T> {
        let unit = self.unit(entry);
        unit.compiled[wave64 as usize]
            .get_or_init(|| compile(self, &unit.roots).map(|t| Box::new(t) as Compiled))
            .as_ref()
            .and_then(as_compiled)
    }

    /// Whether the unit waves entering at `entry` run in has been compiled
    /// (without compiling it).
    pub fn is_compiled(&self, entry: u32, wave64: bool) -> bool {
        self.unit(entry).compiled[wave64 as usize].get().is_some()
    }

    /// The compile unit waves entering at slot `entry` run in.
    fn unit(&self, entry: u32) -> &Unit {
        (self.units.iter())
            .find(|u| u.roots.first() == Some(&entry))
            .unwrap_or(&self.whole)
    }

    /// Tiering up: records that the interpreter ran `retired` more wave
    /// instructions of the unit entered at `entry`, and returns its
    /// compiled blocks once they exist. The first caller to take the unit
    /// past [`TIER_UP_INSTRUCTIONS`] compiles it, while every other caller
    /// goes on interpreting (it never waits for a compile).
    pub fn tier_up<T: Any + Send + Sync>(
        &self,
        entry: u32,
        wave64: bool,
        retired: u64,
        compile: impl FnOnce(&Program, &[u32]) -> Option<T>,
    ) -> Option<&T> {
        let unit = self.unit(entry);
        let w = wave64 as usize;
        if let Some(done) = unit.compiled[w].get() {
            return done.as_ref().and_then(as_compiled);
        }
        if self.count_interpreted(entry, wave64, retired) < TIER_UP_INSTRUCTIONS
            || unit.compiling[w].swap(true, Ordering::AcqRel)
        {
            return None;
        }
        self.compiled(entry, wave64, compile)
    }

    /// Adds `retired` wave instructions the interpreter ran to the count of
    /// the unit entered at `entry`; returns the new count.
    pub fn count_interpreted(&self, entry: u32, wave64: bool, retired: u64) -> u64 {
        let count = &self.unit(entry).interpreted[wave64 as usize];
        count
            .fetch_add(retired, Ordering::Relaxed)
            .saturating_add(retired)
    }

    /// Every slot a wave may start at: each kernel's entry and each
    /// function symbol's, in order.
    pub fn entry_points(&self) -> Vec<u32> {
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
        self.code().slot_at(index)
    }

    /// The decoded code as a wave's handlers see it.
    #[inline(always)]
    pub fn code(&self) -> Code<'_> {
        Code {
            slots: &self.slots,
            image_base: self.image_base,
        }
    }

    /// Slot index of the instruction at image offset `offset`.
    pub fn index_of_offset(&self, offset: u64) -> Option<u32> {
        self.spans.iter().find_map(|span| {
            let rel = offset.checked_sub(span.start)?;
            if rel % 4 != 0 {
                return None;
            }
            span.index
                .get((rel / 4) as usize)
                .copied()
                .filter(|&i| i != u32::MAX)
        })
    }

    /// Slot index of the instruction at device address `addr`.
    pub fn index_of_address(&self, addr: u64) -> Option<u32> {
        self.index_of_offset(addr.checked_sub(self.image_base)?)
    }

    /// Device address just after instruction `index` (what `s_getpc` reads).
    pub fn address_after(&self, index: u32) -> u64 {
        self.code().address_after(index)
    }

    /// Target of a relative branch by `simm16` dwords from instruction `index`.
    pub fn branch_target(&self, index: u32, simm16: i32) -> Option<u32> {
        let s = &self.slots[index as usize];
        let next = s.offset as i64 + s.inst.size as i64;
        self.index_of_offset(u64::try_from(next + 4 * simm16 as i64).ok()?)
    }

    /// The VOPD lane functions of instruction `index`.
    pub fn vopd_fns(&self, index: u32) -> Option<(LaneFn, LaneFn)> {
        self.code().vopd_fns(index)
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
    pub fn text_of(&self, index: u32) -> String {
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

impl Lazy {
    fn new(code_object: &CodeObject) -> Lazy {
        let text = code_object.text.clone();
        let functions: Vec<(u64, u64)> = (code_object.symbols.iter())
            .filter(|s| s.kind == SymbolKind::Function && s.defined && text.contains(&s.value))
            .map(|s| (s.value, s.size))
            .collect();
        let entries: Vec<u64> = (code_object.kernels.iter())
            .map(|k| k.entry_offset)
            .filter(|e| text.contains(e))
            .collect();
        let mut starts: Vec<u64> = (functions.iter().map(|f| f.0))
            .chain(entries.iter().copied())
            .chain([text.end])
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let mut lazy = Lazy {
            starts,
            sizes: functions.iter().copied().collect(),
            callees: Vec::new(),
            kernels: (entries.iter()).map(|&e| (e, OnceLock::new())).collect(),
            whole: OnceLock::new(),
        };
        let mut callees: Vec<Range<u64>> = (functions.iter())
            .filter(|f| !lazy.kernels.contains_key(&f.0))
            .map(|f| lazy.function_range(f.0))
            .collect();
        callees.sort_unstable_by_key(|r| r.start);
        lazy.callees = callees;
        lazy
    }

    /// The range of the function (or kernel) starting at `start`: as long
    /// as its symbol's size says, else up to the next start.
    fn function_range(&self, start: u64) -> Range<u64> {
        let text_end = self.starts.last().copied().unwrap_or(start);
        let next = (self
            .starts
            .get(self.starts.partition_point(|&s| s <= start)))
        .copied()
        .unwrap_or(text_end);
        let end = match self.sizes.get(&start) {
            Some(&size) if size > 0 => start.saturating_add(size).min(text_end),
            _ => next,
        };
        start..end.max(start)
    }

    /// What the kernel entering at `entry` may run: its function and every
    /// function that is not a kernel, sorted, overlapping ranges merged.
    fn kernel_ranges(&self, entry: u64) -> Vec<Range<u64>> {
        let mut all: Vec<Range<u64>> = std::iter::once(self.function_range(entry))
            .chain(self.callees.iter().cloned())
            .collect();
        all.sort_unstable_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(all.len());
        for r in all {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        merged
    }
}
