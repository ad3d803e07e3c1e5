//! The JIT tier: blocks of a decoded [`Program`] compiled to host code.
//!
//! The interpreter (`ops`) is the reference and runs everything; the JIT
//! compiles runs of ALU instructions, LDS loads, trailing LDS stores,
//! scalar and global loads, scratch loads and stores at a uniform address
//! (`scratch`), and a closing global dword store (`lower`
//! lists them, `plan` cuts the runs,
//! `emit` builds Cranelift IR) to one host function per block
//! that updates the wave's registers in place, a whole chunk of lanes per
//! host SIMD instruction. Host features (SSE4.1, AVX, FMA, …) are detected
//! when the JIT starts, never fixed at build time. The run loop
//! (the machine's `run_wave`) calls a block instead of interpreting when one
//! starts at the wave's PC, fits in the wave's turn and the block's MODE
//! assumptions hold; the block retires exactly its slots, so PCs, budgets
//! and profiles are those of the interpreter. A block never faults: an LDS
//! load out of range reads zero and a store is discarded, as the ISA says,
//! device memory is read only after the interpreter's own checks
//! allowed every access (`access`), and private memory only inside each
//! lane's segment, checked first (`scratch`); otherwise the block leaves before
//! changing anything and the interpreter runs its slots (for a closing
//! store, the block leaves having run all but the store), so faults are
//! always raised by the interpreter, precisely.

mod access;
pub use access::Ranges;
mod emit;
mod lower;
mod plan;
mod scratch;

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::types::I32;
use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, UserFuncName};
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

use softgpu_arena::Memory;
use softgpu_interp::ops::{Env, Flow, Trap};
use softgpu_interp::program::Program;
use softgpu_interp::wave::{PrivateMemory, Wave, NUM_SGPRS};

impl Jit {
    /// The compiled blocks for waves of 64 lanes or 32 entering `program`
    /// at slot `entry`, compiled by the first caller and kept with the
    /// program (`None`: the host has no JIT back end).
    pub fn of(program: &Program, entry: u32, wave64: bool) -> Option<&Jit> {
        program.compiled(entry, wave64, |program, roots| {
            Jit::compile(program, roots, wave64)
        })
    }
}

/// A program's compiled blocks as one dispatch uses them.
#[derive(Clone, Copy)]
pub struct Tier<'a> {
    jit: &'a Jit,
    verify: bool,
}

impl<'a> Tier<'a> {
    /// Every compiled block of `program` for waves entering at slot
    /// `entry` (compiled now by the first caller, [`Jit::of`]); with
    /// `verify`, each block runs through [`verify`] (the executor's
    /// verify mode). `None`: the host has no JIT back end.
    pub fn of(program: &'a Program, entry: u32, wave64: bool, verify: bool) -> Option<Tier<'a>> {
        Some(Tier {
            jit: Jit::of(program, entry, wave64)?,
            verify,
        })
    }

    /// After a workgroup ran `retired` wave instructions in the
    /// interpreter: the unit's blocks, once it has run long enough to be
    /// compiled ([`softgpu_interp::program::TIER_UP_INSTRUCTIONS`]; see
    /// `Program::tier_up`). A unit is compiled only then, so a dispatch
    /// never waits for code it would barely run.
    pub fn tier_up(
        program: &'a Program,
        entry: u32,
        wave64: bool,
        retired: u64,
    ) -> Option<Tier<'a>> {
        Some(Tier {
            jit: program.tier_up(entry, wave64, retired, |program, roots| {
                Jit::compile(program, roots, wave64)
            })?,
            verify: false,
        })
    }

    /// The block starting at slot `pc`, and whether to verify it.
    #[inline(always)]
    pub fn block_at(self, pc: u32) -> Option<(&'a Block, bool)> {
        Some((self.jit.block_at(pc)?, self.verify))
    }

    /// Number of compiled blocks.
    pub fn block_count(self) -> usize {
        self.jit.block_count()
    }
}

/// The MODE a float block was compiled for: both FP_ROUND fields round to
/// nearest even, both FP_DENORM fields keep denormals on input and output
/// (the compute default). A block depends on the fields of its ops
/// (`softgpu_isa::jit::Class::mode_fields`); under any other value of those the
/// interpreter runs the block's instructions.
const MODE_DEFAULT: u32 = 0xf0;

/// A compiled block: `(vgpr, sgpr, scc, lds, lds_len, memory, private)
/// -> next slot index`, or [`BAIL`]; `memory` is an [`access::Context`].
type BlockFn = unsafe extern "C" fn(
    *mut u32,
    *mut u32,
    *mut u8,
    *mut u8,
    usize,
    *const access::Context,
    *mut PrivateMemory,
) -> u32;

/// What a block returns when a device memory access of it is not one the
/// interpreter's wave-wide checks allow (`access`): it changed nothing,
/// and the interpreter runs its slots.
const BAIL: u32 = u32::MAX;

/// What a block whose last slot is a global store returns when the
/// interpreter's wave-wide checks would not take the store: every slot
/// but the store has run, and the interpreter runs the store.
const STORE_LEFT: u32 = u32::MAX - 1;

/// One compiled block.
pub struct Block {
    entry: BlockFn,
    meta: BlockMeta,
}

/// What the run loop needs to know of a block besides its code.
#[derive(Clone)]
struct BlockMeta {
    /// Slots the block retires (hints included).
    len: u32,
    /// The MODE bits the block's results depend on.
    mode_fields: u32,
    /// The VGPRs the block reads or writes.
    vgprs: Vec<u16>,
    /// When the block loads from or stores to LDS, the least LDS it runs
    /// with: its widest access (`ds_load_b128`, `MIN_LDS`), which an
    /// out-of-range lane makes at address 0, or the reach of its dword
    /// loads' windows (`Plan::lds_reach`), which a chunk whose windows
    /// would pass LDS's end reads from address 0.
    lds: Option<usize>,
    /// Whether the block stores to LDS.
    writes_lds: bool,
    /// Whether the block reads or writes device memory.
    touches_memory: bool,
    /// Whether the block's last slot is a global store.
    closing_store: bool,
    /// Whether verify mode compares the wave's private memory around the
    /// block: it touches scratch, or closes with a flat store (which the
    /// interpreter may send into private memory).
    changes_private: bool,
    /// Whether the block reads or writes the wave's private memory.
    scratch: bool,
    /// Rows of the register file of the program's family (256, CDNA's
    /// 512): every VGPR operand of the program lies below it
    /// (`program::operands_valid`), so a wave with at least these rows
    /// holds every row the block touches.
    file_rows: usize,
}

impl BlockMeta {
    fn of(plan: &plan::Plan, file_rows: usize) -> BlockMeta {
        let lds = (plan.reads_lds || plan.writes_lds)
            .then(|| MIN_LDS.max(plan.lds_reach.try_into().unwrap_or(usize::MAX)));
        BlockMeta {
            len: plan.len(),
            mode_fields: plan.mode_fields,
            vgprs: plan.vgprs(),
            lds,
            writes_lds: plan.writes_lds,
            touches_memory: plan.touches_memory,
            closing_store: matches!(plan.steps.last(), Some(plan::Step::GlobalStore(..))),
            changes_private: plan.touches_scratch
                || matches!(plan.steps.last(), Some(plan::Step::GlobalStore(_, true))),
            scratch: plan.touches_scratch,
            file_rows,
        }
    }
}

impl Block {
    /// Slots the block retires (hints included).
    #[inline(always)]
    pub fn slots(&self) -> u32 {
        self.meta.len
    }

    /// Whether the block may run under MODE `bits`.
    #[inline(always)]
    pub fn runs_under(&self, bits: u32) -> bool {
        let fields = self.meta.mode_fields;
        bits & fields == MODE_DEFAULT & fields
    }

    /// Whether the block may run in `env`: one that loads from or stores
    /// to LDS needs as much LDS as it reaches (`BlockMeta::lds`) and no
    /// sanitizer, which sees every LDS access only in the interpreter; so
    /// does one that touches device or private memory.
    #[inline(always)]
    pub fn runs_in(&self, env: &Env) -> bool {
        let meta = &self.meta;
        let lds_ok = meta.lds.is_none_or(|least| env.lds.len() >= least);
        // The sanitizers see memory accesses only in the interpreter; with
        // the stale-dispatch check on, no wave-wide window is allowed.
        let memory_ok = !meta.touches_memory || env.mem.stale_epoch().is_none();
        let sees_memory = meta.lds.is_some() || meta.touches_memory || meta.scratch;
        lds_ok && memory_ok && (!sees_memory || env.sanitizer.is_none())
    }

    /// Runs the block on `wave` with the workgroup's `lds` and the
    /// dispatch's device memory (and this thread's `ranges` of it, made by
    /// [`Ranges::of_thread`]); returns the slot index to continue at and
    /// the slots retired (all of them, or all but a closing global store
    /// the interpreter must run), or `None`, having changed nothing, when
    /// a memory access of it is for the interpreter.
    #[inline(always)]
    pub fn run(
        &self,
        wave: &mut Wave,
        lds: &mut [u8],
        mem: &Memory,
        ranges: &Ranges,
    ) -> Option<(u32, u32)> {
        let start = wave.pc;
        debug_assert!(self.meta.lds.is_none_or(|least| lds.len() >= least));
        // A wave built for another family's file (never, in the executor)
        // is left to the interpreter rather than run past its rows.
        if wave.vgpr.len() < self.meta.file_rows {
            return None;
        }
        let vgpr = wave.vgpr.as_mut_ptr().cast::<u32>();
        let sgpr = wave.sgpr.as_mut_ptr();
        let scc = (&mut wave.scc as *mut bool).cast::<u8>();
        let cx = access::Context::new(mem, ranges);
        let private = &mut wave.scratch as *mut PrivateMemory;
        // SAFETY: the block was compiled from this program for this wave
        // size. Its code reads and writes only: VGPR rows below its
        // family's `BlockMeta::file_rows` (each operand's rows were
        // range-checked at decode, `program::operands_valid`), which the
        // wave has (checked above), lanes below 64, scalar registers
        // below `NUM_SGPRS` (`lower::readable_sgpr`), and SCC, into which
        // it stores 0 or 1, valid bools. All three pointers come from the
        // `&mut Wave` held for the call, so nothing else aliases them. Its
        // LDS accesses lie inside `lds`, which the `&mut` borrow makes its
        // own for the call: a load not wholly below `lds.len()` reads at
        // address 0 instead (a block that loads runs only where `runs_in`
        // saw at least its `BlockMeta::lds` bytes, at least the widest
        // access), a window load reads at most the block's reach past an
        // address it checked against the end, or past address 0 (that
        // reach is within `BlockMeta::lds`), and a store lane not
        // wholly inside writes to a slot of the block's own stack frame. It
        // reads device memory only where a helper of `access`, given
        // `mem`, allowed it, or where this thread's allowed ranges
        // (`ranges`, made on this thread from `mem`) held a range the
        // shadow allowed at the change count still current, as
        // `Memory::window` accepts them (`Emitter::quick_allows`), each
        // asked before the block changes anything (device addresses are
        // host addresses inside the arena's mapping, which `mem` borrows
        // for the call, so what was allowed stays mapped until the block
        // returns), and leaves through `BAIL` otherwise. It writes device
        // memory only in a closing store, where `access::rows_ok` or the
        // ranges allowed the whole range for writes (or
        // `access::store_lanes` stores), and leaves through
        // `STORE_LEFT` otherwise. It reads and writes the wave's private
        // memory (a field of the `&mut Wave`, disjoint from the registers)
        // only through the page table `scratch::pages` gave it, which
        // covers the block's wave size, at lane `l`'s offset
        // `l * lane_bytes + a` for an address `a` it checked to leave the
        // access inside the lane's `lane_bytes` and each dword of it inside
        // one granule dividing `lane_bytes` and the page size (so inside
        // one page); a page not materialised (a null entry) is read as
        // `scratch::ZERO_PAGE`, never written: before a store
        // `scratch::materialise` gave every lane EXEC has on its page, and
        // a lane EXEC leaves off writes to a slot of the block's own stack
        // frame instead. No page is freed or moved during the block.
        let next =
            unsafe { (self.entry)(vgpr, sgpr, scc, lds.as_mut_ptr(), lds.len(), &cx, private) };
        let len = self.meta.len;
        match next {
            BAIL => None,
            STORE_LEFT => Some((start + len - 1, len - 1)),
            next => Some((next, len)),
        }
    }
}

/// The compiled blocks of one program for one wave size.
pub struct Jit {
    /// By slot index: the index in `blocks` of the block starting there,
    /// or `NO_BLOCK`. The run loop looks a slot up here after every
    /// interpreted instruction, so the table is kept dense (4 bytes a
    /// slot) to stay in cache beside a kernel's streaming data.
    starts: Vec<u32>,
    blocks: Vec<Block>,
    _code: Code,
}

const NO_BLOCK: u32 = u32::MAX;

/// The least LDS a block that loads from it runs with: its widest access
/// (`ds_load_b128`), which an out-of-range lane makes at address 0.
const MIN_LDS: usize = 16;

impl Jit {
    #[inline(always)]
    pub fn block_at(&self, pc: u32) -> Option<&Block> {
        let k = *self.starts.get(pc as usize)?;
        self.blocks.get(k as usize)
    }

    /// Number of compiled blocks.
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Compiles the blocks of `program` that a wave entering at any of
    /// `roots` can reach (every block when `roots` is empty) for waves of
    /// 64 lanes or 32. `None` when the host has no Cranelift back end.
    pub fn compile(program: &Program, roots: &[u32], wave64: bool) -> Option<Jit> {
        let mut module = new_module()?;
        let n = program.slots().len();
        let mut plans: Vec<(u32, plan::Plan)> = blocks(program, &reachable(program, roots), wave64)
            .into_iter()
            .collect();
        // Blocks compile independently, so the host's threads share them
        // (the dispatch waiting for them would use those threads), the
        // largest first so that none is left to the end alone.
        plans.sort_by_key(|(_, plan)| std::cmp::Reverse(plan.len()));
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let next = std::sync::atomic::AtomicUsize::new(0);
        let isa = module.isa();
        let rows = softgpu_interp::wave::vgprs_of(program.family);
        // This thread compiles too; helpers only where there are more.
        let compiled: Vec<Compiled> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads.min(plans.len()))
                .map(|_| scope.spawn(|| compile_blocks(isa, &plans, &next, wave64, rows)))
                .collect();
            // A compile that panics loses its thread's blocks to the
            // interpreter, on this thread as on a helper.
            let here = || compile_blocks(isa, &plans, &next, wave64, rows);
            let mut all =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(here)).unwrap_or_default();
            for helper in helpers {
                all.extend(helper.join().unwrap_or_default());
            }
            all
        });
        let mut defined = Vec::new();
        for block in compiled {
            let name = format!("block{}", block.start);
            let sig = block_signature(module.isa());
            let Ok(id) = module.declare_function(&name, Linkage::Local, &sig) else {
                continue;
            };
            if module
                .define_function_bytes(id, block.align, &block.code, &[])
                .is_ok()
            {
                defined.push((block.start, id, block.meta));
            }
        }
        module.finalize_definitions().ok()?;
        let mut starts = vec![NO_BLOCK; n];
        let mut blocks = Vec::with_capacity(defined.len());
        for (start, id, meta) in defined {
            let code = module.get_finalized_function(id);
            // SAFETY: `code` is the finalized entry of a function defined
            // above with exactly `BlockFn`'s signature (seven pointer-sized
            // values in, an i32 out) in the host's default
            // calling convention, which is `extern "C"`.
            let entry = unsafe { std::mem::transmute::<*const u8, BlockFn>(code) };
            starts[start as usize] = blocks.len() as u32;
            blocks.push(Block { entry, meta });
        }
        Some(Jit {
            starts,
            blocks,
            _code: Code(Some(module)),
        })
    }
}

/// One block's machine code, position-independent (a block calls its
/// helpers through addresses it holds as constants, so its code has no
/// relocations).
struct Compiled {
    start: u32,
    code: Vec<u8>,
    align: u64,
    meta: BlockMeta,
}

/// The signature of every block: `BlockFn`'s.
fn block_signature(isa: &dyn TargetIsa) -> Signature {
    let ptr = isa.pointer_type();
    let mut sig = Signature::new(isa.default_call_conv());
    sig.params.extend([AbiParam::new(ptr); 7]);
    sig.returns.push(AbiParam::new(I32));
    sig
}

/// Compiles planned blocks of `plans` for `isa`, taking the next one
/// (`next`) until none is left; a block that this host's back end cannot
/// build (or that would need relocating) is left out, and the interpreter
/// runs its slots.
fn compile_blocks(
    isa: &dyn TargetIsa,
    plans: &[(u32, plan::Plan)],
    next: &std::sync::atomic::AtomicUsize,
    wave64: bool,
    file_rows: usize,
) -> Vec<Compiled> {
    let mut ctx = Context::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut out = Vec::new();
    while let Some((start, plan)) =
        plans.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    {
        ctx.clear();
        ctx.func.signature = block_signature(isa);
        ctx.func.name = UserFuncName::user(0, *start);
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            b.seal_block(entry);
            let p = b.block_params(entry);
            let params = [p[0], p[1], p[2], p[3], p[4], p[5], p[6]];
            let next = emit::Emitter::new(&mut b, params, wave64).block(plan);
            b.ins().return_(&[next]);
            b.finalize(isa.frontend_config());
        }
        let Ok(done) = ctx.compile(isa, &mut ControlPlane::default()) else {
            continue;
        };
        if !done.buffer.relocs().is_empty() {
            continue;
        }
        out.push(Compiled {
            start: *start,
            code: done.code_buffer().to_vec(),
            align: (done.buffer.alignment as u64)
                .max(isa.function_alignment().minimum as u64)
                .max(isa.symbol_alignment()),
            meta: BlockMeta::of(plan, file_rows),
        });
    }
    out
}

/// The most private memory a wave may have for verify mode to compare it
/// around every block (-O0 code's 16 KiB dynamic stack a lane, 64 lanes).
const VERIFY_PRIVATE_BYTES: usize = 2 << 20;

/// The registers (and private memory) a block can change.
#[derive(PartialEq)]
struct Snapshot {
    vgprs: Vec<[u32; softgpu_interp::wave::MAX_LANES]>,
    sgpr: [u32; NUM_SGPRS],
    scc: bool,
    /// The wave's private memory, flat, when it is at most
    /// `VERIFY_PRIVATE_BYTES` (else empty, and not compared).
    scratch: Vec<u8>,
}

impl Snapshot {
    fn of(wave: &Wave, rows: &[u16], with_private: bool) -> Snapshot {
        // Copying private memory around every block would cost a dispatch
        // with a large private segment minutes; only blocks that may
        // change it need it (`BlockMeta::changes_private`).
        let private = match with_private {
            true => wave.scratch.lane_bytes().saturating_mul(wave.lanes),
            false => usize::MAX,
        };
        Snapshot {
            vgprs: rows.iter().map(|&r| wave.vgpr[r as usize]).collect(),
            sgpr: wave.sgpr,
            scc: wave.scc,
            scratch: if private <= VERIFY_PRIVATE_BYTES {
                wave.scratch.to_vec()
            } else {
                Vec::new()
            },
        }
    }

    fn restore(&self, wave: &mut Wave, rows: &[u16]) {
        for (&r, row) in rows.iter().zip(&self.vgprs) {
            wave.vgpr[r as usize] = *row;
        }
        wave.sgpr = self.sgpr;
        wave.scc = self.scc;
        // Written back only when a tier changed it (writing materialises
        // pages; a block that stored had them all).
        if !self.scratch.is_empty() && wave.scratch.to_vec() != self.scratch {
            let _ = wave.scratch.fill_from(&self.scratch);
        }
    }

    /// The first difference from `other`, described.
    fn diff(&self, other: &Snapshot, rows: &[u16], lanes: usize) -> Option<String> {
        for ((&r, a), b) in rows.iter().zip(&self.vgprs).zip(&other.vgprs) {
            if let Some(l) = (0..lanes).find(|&l| a[l] != b[l]) {
                return Some(format!(
                    "v{r} lane {l}: JIT {:#x}, interpreter {:#x}",
                    a[l], b[l]
                ));
            }
        }
        if let Some(s) = (0..NUM_SGPRS).find(|&s| self.sgpr[s] != other.sgpr[s]) {
            let (a, b) = (self.sgpr[s], other.sgpr[s]);
            return Some(format!(
                "scalar register {s}: JIT {a:#x}, interpreter {b:#x}"
            ));
        }
        if self.scc != other.scc {
            return Some(format!("SCC: JIT {}, interpreter {}", self.scc, other.scc));
        }
        let at = self
            .scratch
            .iter()
            .zip(&other.scratch)
            .position(|(a, b)| a != b)?;
        Some(format!(
            "private memory byte {at:#x}: JIT {:#x}, interpreter {:#x}",
            self.scratch[at], other.scratch[at]
        ))
    }
}

/// Runs `block` in both tiers from the wave's state (the executor's
/// `JitMode::Verify`); returns what [`Block::run`] does (the slot to
/// continue at and the slots retired), or `None` when the block left for
/// the interpreter at a memory access (having changed nothing, which is
/// checked too). A block closing with a global store is run interpreter
/// first (`verify_store_once`), and the dwords it stores are compared too.
pub fn verify(
    block: &Block,
    program: &Program,
    wave: &mut Wave,
    env: &mut Env,
) -> Result<Option<(u32, u32)>, Trap> {
    let start = wave.pc;
    let rows = &block.meta.vgprs;
    let before = Snapshot::of(wave, rows, block.meta.changes_private);
    // A block that stores to LDS runs both tiers from the same LDS too.
    let lds_before = block.meta.writes_lds.then(|| env.lds.to_vec());
    // Device memory another wave, thread or the host writes may change
    // between the two runs (a printf buffer's cursor, a hostcall's
    // signal), so a block that reads it is compared again from the same
    // state before a difference counts: a JIT error repeats, a race does
    // not keep landing between the two runs.
    let attempts = if block.meta.touches_memory { 8 } else { 1 };
    let mut attempt = 1;
    loop {
        match verify_once(block, program, wave, env, &before, lds_before.as_deref())? {
            Ok(next) => return Ok(next),
            Err(d) if attempt == attempts => {
                return Err(Trap::TiersDisagree(format!(
                "the JIT and the interpreter disagree on the block of {} slots at {:#x} ({}): {d}",
                block.meta.len,
                program.slots()[start as usize].offset,
                program.text_of(start),
            )))
            }
            Err(_) => {
                attempt += 1;
                before.restore(wave, rows);
                wave.pc = start;
                if let Some(lds) = &lds_before {
                    env.lds.copy_from_slice(lds);
                }
            }
        }
    }
}

/// One run of `block` in both tiers from `before` (the wave's state, and
/// LDS when the block stores to it): the slot to continue at, or how
/// they differ.
fn verify_once(
    block: &Block,
    program: &Program,
    wave: &mut Wave,
    env: &mut Env,
    before: &Snapshot,
    lds_before: Option<&[u8]>,
) -> Result<Result<Option<(u32, u32)>, String>, Trap> {
    if block.meta.closing_store {
        return verify_store_once(block, program, wave, env, before, lds_before);
    }
    let rows = &block.meta.vgprs;
    let Some((jit_next, retired)) =
        block.run(wave, env.lds, &env.mem, &Ranges::of_thread(&env.mem))
    else {
        return Ok(left_unchanged(wave, env, before, rows, lds_before));
    };
    let jitted = Snapshot::of(wave, rows, block.meta.changes_private);
    before.restore(wave, rows);
    let lds_jitted = swap_lds(env, lds_before);
    interpret(program, wave, env, retired)?;
    let interpreted = Snapshot::of(wave, rows, block.meta.changes_private);
    let diff = jitted
        .diff(&interpreted, rows, wave.lanes)
        .or_else(|| lds_diff(lds_jitted.as_deref()?, env.lds))
        .or_else(|| {
            (jit_next != wave.pc)
                .then(|| format!("next slot: JIT {jit_next}, interpreter {}", wave.pc))
        });
    Ok(match diff {
        None => Ok(Some((wave.pc, retired))),
        Some(d) => Err(d),
    })
}

/// What verify reports for a block that left early: `None` (continue in
/// the interpreter) when it changed no register and no LDS, else how it
/// did.
fn left_unchanged(
    wave: &Wave,
    env: &Env,
    before: &Snapshot,
    rows: &[u16],
    lds_before: Option<&[u8]>,
) -> Result<Option<(u32, u32)>, String> {
    // Private memory is compared where the snapshot before holds it.
    let changed = Snapshot::of(wave, rows, !before.scratch.is_empty())
        .diff(before, rows, wave.lanes)
        .or_else(|| {
            let lds = lds_before?;
            (lds[..] != env.lds[..]).then(|| "LDS".to_string())
        });
    match changed {
        None => Ok(None),
        Some(d) => Err(format!("the block left early but changed {d}")),
    }
}

/// The LDS one tier left, with the LDS from before (`before`, when the
/// block touches LDS) put back for the other tier.
fn swap_lds(env: &mut Env, before: Option<&[u8]>) -> Option<Vec<u8>> {
    before.map(|old| {
        let new = env.lds.to_vec();
        env.lds.copy_from_slice(old);
        new
    })
}

/// The first LDS byte where the JIT's and the interpreter's LDS differ.
fn lds_diff(jitted: &[u8], interpreted: &[u8]) -> Option<String> {
    let at = jitted.iter().zip(interpreted).position(|(a, b)| a != b)?;
    Some(format!(
        "LDS byte {at:#x}: JIT {:#x}, interpreter {:#x}",
        jitted[at], interpreted[at]
    ))
}

/// Runs `slots` slots of the wave in the interpreter.
fn interpret(program: &Program, wave: &mut Wave, env: &mut Env, slots: u32) -> Result<(), Trap> {
    for _ in 0..slots {
        let slot = program.slot_at(wave.pc);
        wave.pc = match (slot.exec)(wave, env, &slot.inst)? {
            Flow::Next => wave.pc + 1,
            Flow::Branch(simm) => program
                .branch_target(wave.pc, simm)
                .ok_or_else(|| Trap::TiersDisagree("a JIT block's branch has no target".into()))?,
            other => {
                return Err(Trap::TiersDisagree(format!(
                    "slot {} of a JIT block ended it in the interpreter ({other:?})",
                    wave.pc
                )))
            }
        };
    }
    Ok(())
}

/// [`verify_once`] for a block that closes with a global store, which may
/// overwrite what the block loaded, so the tiers run in the other order:
/// the interpreter first, noting the dwords its store overwrote and what
/// it stored, which are put back before the JIT runs from the same state;
/// then the registers, LDS, next slot and those dwords are compared. A
/// block that left the store to the interpreter must have stored nothing.
fn verify_store_once(
    block: &Block,
    program: &Program,
    wave: &mut Wave,
    env: &mut Env,
    before: &Snapshot,
    lds_before: Option<&[u8]>,
) -> Result<Result<Option<(u32, u32)>, String>, Trap> {
    let (rows, start, len) = (&block.meta.vgprs, wave.pc, block.meta.len);
    interpret(program, wave, env, len - 1)?;
    // What a block that leaves the store to the interpreter must leave
    // (a flat store into private memory changes it).
    let before_store = Snapshot::of(wave, rows, block.meta.changes_private);
    let store = &program.slot_at(wave.pc).inst;
    let addrs = softgpu_interp::ops::vmem::global_addresses(wave, store);
    let read = |env: &Env, a: u64| env.mem.load_u32(a).ok();
    let old: Vec<Option<u32>> = addrs.iter().map(|&a| read(env, a)).collect();
    interpret(program, wave, env, 1)?;
    let (interpreted, interpreted_next) = (
        Snapshot::of(wave, rows, block.meta.changes_private),
        wave.pc,
    );
    let stored: Vec<Option<u32>> = addrs.iter().map(|&a| read(env, a)).collect();
    let lds_interpreted = swap_lds(env, lds_before);
    // Puts back what the store overwrote (an unreadable dword the store
    // would have faulted on).
    let put_back = |env: &Env| {
        for (&a, old) in addrs.iter().zip(&old) {
            if let Some(v) = old {
                let _ = env.mem.write(a, &v.to_le_bytes());
            }
        }
    };
    put_back(env);
    before.restore(wave, rows);
    wave.pc = start;
    let Some((jit_next, retired)) =
        block.run(wave, env.lds, &env.mem, &Ranges::of_thread(&env.mem))
    else {
        return Ok(left_unchanged(wave, env, before, rows, lds_before));
    };
    let (expect_next, expect, state) = if retired == len {
        (interpreted_next, &stored, &interpreted)
    } else {
        (start + len - 1, &old, &before_store)
    };
    let memory = addrs
        .iter()
        .zip(expect)
        .find(|&(&a, &v)| read(env, a) != v)
        .map(|(&a, &v)| {
            format!(
                "device memory at {a:#x}: JIT {:?}, interpreter {v:?}",
                read(env, a)
            )
        });
    let diff = Snapshot::of(wave, rows, block.meta.changes_private)
        .diff(state, rows, wave.lanes)
        .or(memory)
        .or_else(|| lds_diff(env.lds, lds_interpreted.as_deref()?))
        .or_else(|| {
            (jit_next != expect_next)
                .then(|| format!("next slot: JIT {jit_next}, interpreter {expect_next}"))
        });
    Ok(match diff {
        None => Ok(Some((jit_next, retired))),
        Some(d) => {
            // A second attempt starts from the memory the first did.
            put_back(env);
            Err(d)
        }
    })
}

/// Which slots a wave entering at any of `roots` can reach (all of them
/// when `roots` is empty), over-approximated: every instruction falls
/// through to the next but an end of program and the jumps that go
/// elsewhere (`s_branch`, `s_setpc_b64`, `s_rfe_b64`), and every relative
/// branch or call reaches its target too. A slot reached only through a
/// computed jump (`s_setpc_b64` to an address the kernel forms) is missed;
/// the interpreter runs it, correctly, only slower.
fn reachable(program: &Program, roots: &[u32]) -> Vec<bool> {
    use softgpu_isa::Op;
    let slots = program.slots();
    if roots.is_empty() {
        return vec![true; slots.len()];
    }
    let mut seen = vec![false; slots.len()];
    let mut work: Vec<u32> = roots.to_vec();
    while let Some(i) = work.pop() {
        let Some(seen_i) = seen.get_mut(i as usize) else {
            continue;
        };
        if std::mem::replace(seen_i, true) {
            continue;
        }
        let op = slots[i as usize].inst.op;
        let relative = matches!(
            op,
            Op::S_BRANCH
                | Op::S_CBRANCH_SCC0
                | Op::S_CBRANCH_SCC1
                | Op::S_CBRANCH_VCCZ
                | Op::S_CBRANCH_VCCNZ
                | Op::S_CBRANCH_EXECZ
                | Op::S_CBRANCH_EXECNZ
                | Op::S_CBRANCH_CDBGSYS
                | Op::S_CBRANCH_CDBGUSER
                | Op::S_CBRANCH_CDBGSYS_OR_USER
                | Op::S_CBRANCH_CDBGSYS_AND_USER
                | Op::S_CALL_B64
        );
        if relative {
            let simm = slots[i as usize].inst.imm as i16 as i32;
            work.extend(program.branch_target(i, simm));
        }
        let ends = matches!(
            op,
            Op::S_ENDPGM | Op::S_BRANCH | Op::S_SETPC_B64 | Op::S_RFE_B64
        );
        if !ends {
            work.push(i + 1);
        }
    }
    seen
}

/// The blocks worth compiling among the `reach`able slots, by start slot:
/// a sweep from the entry that starts a block where a wave continues after
/// each slot that cannot end or sit inside one, plus one at every branch
/// target. A wave continues past the scheduling hints folded into the slot
/// it ran (`hints_after`), so a block there starts after them: one
/// starting at the hints would never be entered; but a wave starts at an
/// entry point (a kernel's or a function's, whose first slot may be a
/// hint folded into the end of the code before it), so the sweep stops
/// there, and every unit compiles the same block for the same code.
fn blocks<'p>(
    program: &'p Program,
    reach: &[bool],
    wave64: bool,
) -> std::collections::BTreeMap<u32, plan::Plan<'p>> {
    let slots = program.slots();
    let n = slots.len() as u32;
    let entries = program.entry_points();
    let mut blocks = std::collections::BTreeMap::new();
    let mut i = 0;
    while i < n {
        if !reach[i as usize] {
            i += 1;
            continue;
        }
        match plan::plan(program, i, wave64) {
            Some(p) => {
                i = p.fallthrough;
                blocks.insert(i - p.len(), p);
            }
            None => {
                let past = i + 1 + slots[i as usize].hints_after;
                let entry = entries.iter().find(|&&e| e > i && e < past);
                i = entry.copied().unwrap_or(past);
            }
        }
    }
    for (i, slot) in program.slots().iter().enumerate() {
        let branch = matches!(slot.inst.op.info().jit, Some(lower::Class::Branch(_)));
        if !branch || !reach[i] {
            continue;
        }
        if let Some(t) = program.branch_target(i as u32, slot.inst.imm as i16 as i32) {
            if let std::collections::btree_map::Entry::Vacant(e) = blocks.entry(t) {
                if let Some(p) = plan::plan(program, t, wave64) {
                    e.insert(p);
                }
            }
        }
    }
    blocks
}

fn new_module() -> Option<JITModule> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").ok()?;
    flags.set("use_colocated_libcalls", "false").ok()?;
    flags.set("is_pic", "false").ok()?;
    // The verifier checks the emitter's IR; it costs compile time, so it
    // runs where debug assertions do.
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    flags.set("enable_verifier", verify).ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    Some(JITModule::new(JITBuilder::with_isa(
        isa,
        default_libcall_names(),
    )))
}

/// The module owning the blocks' code, freed with the [`Jit`].
struct Code(Option<JITModule>);

// SAFETY: after `finalize_definitions` the module is never used again but
// to free it in `drop`, which takes `&mut self`; its code pages are
// read-and-execute and shared by the `Block`s only through plain function
// pointers. Nothing in it is thread-affine.
unsafe impl Send for Code {}
// SAFETY: as above: a shared `&Code` gives no access to the module.
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(module) = self.0.take() {
            // SAFETY: the `Block`s pointing into this code live in the same
            // `Jit`, which is being dropped, so none can run after this.
            unsafe { module.free_memory() };
        }
    }
}
