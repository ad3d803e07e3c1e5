//! Instruction semantics: data tables mapping each opcode, or each class of
//! opcodes that share semantics ([`softgpu_isa::Class`]), to a small generic
//! handler. A handler runs one instruction for a whole wave.

// Lane loops index several per-lane arrays at once, and the tables spell
// every entry as a closure so that all rows read alike.
#![allow(clippy::needless_range_loop, clippy::redundant_closure)]

use std::sync::OnceLock;

use softgpu_isa::{Class, Inst, Op, Space};

use crate::program::Program;
use crate::wave::Wave;
use softgpu_arena::{Lanes, MemError, Memory};

/// A table entry: the handler `f(w, env, i, args…)` with its trailing
/// arguments fixed, as an [`Exec`]. One binder for every family's table.
macro_rules! bind {
    ($f:path $(, $arg:expr)* $(,)?) => {
        (|w: &mut $crate::wave::Wave, env: &mut $crate::ops::Env, i: &softgpu_isa::Inst| {
            $f(w, env, i $(, $arg)*)
        }) as $crate::ops::Exec
    };
}

#[macro_use]
mod rmw;

pub mod cross_lane;
pub mod ds;
pub mod float;
pub mod fp8;
pub mod salu;
pub mod smem;
pub mod sopp;
pub mod valu;
pub mod vcmp;
pub mod vmem;
pub mod wmma;

/// What the wave does after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Next,
    /// Relative branch by simm16 dwords from the next instruction.
    Branch(i32),
    /// Jump to an absolute device address (s_setpc, s_swappc).
    Jump(u64),
    Barrier,
    /// Give other waves of the workgroup a turn (s_sleep, s_sethalt…).
    Yield,
    End,
}

/// Why an instruction stopped the dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trap {
    /// A memory access outside what the kernel may touch.
    Memory {
        space: &'static str,
        lane: Option<usize>,
        addr: u64,
        len: u64,
        /// What the access was, or that it reached reallocated memory.
        cause: MemCause,
    },
    /// An instruction the executor does not implement.
    Unsupported,
    /// Bytes that are not a valid instruction.
    Illegal(String),
    /// `s_trap` with its trap id.
    Trap(u32),
    /// A jump to an address that is not an instruction of the program.
    BadJump(u64),
    /// The wave ran more instructions than the dispatch allows.
    Budget(u64),
    /// initcheck: a read of `len` bytes at `addr` of which some were never
    /// written; `first` is the address of the first such byte.
    Uninitialized {
        space: &'static str,
        lane: Option<usize>,
        addr: u64,
        len: u64,
        first: u64,
    },
    /// Anything else, described.
    Other(String),
    /// A sanitizer's finding (initcheck, racecheck).
    Sanitizer(Box<crate::sanitize::Report>),
}

/// What a refused memory access was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemCause {
    Read,
    Write,
    /// The memory was freed and reallocated after the dispatch was queued.
    Stale,
}

pub type Result<T = Flow> = std::result::Result<T, Trap>;

/// The category of a fault: a [`Trap`]'s, or the machine's own (a
/// timeout, a barrier some wave never reaches).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A memory access outside what the kernel may touch.
    Memory,
    /// An instruction the executor does not implement, or invalid bytes.
    Instruction,
    /// `s_trap`.
    Trap,
    /// A jump to an address that is not an instruction.
    BadJump,
    /// The dispatch ran past its instruction budget.
    Budget,
    /// The dispatch ran past its wall-clock limit (`SOFTGPU_TIMEOUT`).
    Timeout,
    /// initcheck: a read of bytes never written.
    Uninitialized,
    /// racecheck: conflicting accesses not ordered by a barrier or atomic.
    Race,
    /// synccheck: a barrier not every live wave reaches.
    Sync,
    /// The dispatch could not start, or anything else.
    Other,
}

impl FaultKind {
    /// The kind's name in machine-readable reports.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Memory => "memory",
            FaultKind::Instruction => "instruction",
            FaultKind::Trap => "trap",
            FaultKind::BadJump => "bad-jump",
            FaultKind::Budget => "budget",
            FaultKind::Timeout => "timeout",
            FaultKind::Uninitialized => "uninitialized",
            FaultKind::Race => "race",
            FaultKind::Sync => "sync",
            FaultKind::Other => "other",
        }
    }
}

/// Global wave sync (`ds_gws_*`): the grid-wide barriers of a dispatch,
/// which the machine runs across its workgroups. A wave's handler only
/// arrives and waits.
pub trait GridSync: Sync {
    /// Arrives at barrier `resource`, which completes when `waves` waves
    /// have arrived; returns once it has.
    fn barrier(&self, resource: u32, waves: u32) -> std::result::Result<(), GwsError>;
}

/// GWS resources (barrier ids): `M0[21:16]` plus the instruction's offset.
pub const GWS_RESOURCES: usize = 64;

/// Why a wave left a grid barrier without it completing.
#[derive(Debug, PartialEq, Eq)]
pub enum GwsError {
    /// The dispatch was abandoned while the wave waited.
    Aborted,
    /// The resource id is out of range.
    BadResource(u32),
}

/// What a handler may touch besides its wave.
pub struct Env<'a> {
    /// Device memory as this dispatch may touch it.
    pub mem: Memory<'a>,
    pub lds: &'a mut [u8],
    pub program: &'a Program,
    /// Reused lane buffers, so handlers never clear stack arrays.
    pub tmp: &'a mut Scratch,
    /// The dispatch's global-wave-sync barriers.
    pub gws: &'a dyn GridSync,
    /// The workgroup barrier's signal and member counts.
    pub barrier: sopp::WorkgroupBarrier,
    /// The workgroup's memory sanitizers, when `SOFTGPU_CHECK` asks for
    /// init or race: memory handlers call it once per instruction.
    pub sanitizer: Option<crate::sanitize::Sanitizer<'a>>,
    /// Refused accesses run past under `Checks::contain`.
    pub contained: Contained,
}

/// The errors a wave ran past under [`crate::Checks::contain`], each with
/// the slot of the instruction that made it; the scheduler takes them
/// after each turn (so the hot loop never looks).
#[derive(Debug, Default)]
pub struct Contained {
    on: bool,
    pub found: Vec<(u32, Trap)>,
}

impl Contained {
    /// Errors are contained when `on`; else every one stops the dispatch.
    pub fn new(on: bool) -> Contained {
        Contained {
            on,
            found: Vec::new(),
        }
    }

    /// `r`'s value; or, when errors are contained and `r`'s can be,
    /// `fallback` once the error is recorded against the instruction `w`
    /// is at.
    pub fn or<T>(&mut self, w: &Wave, r: Result<T>, fallback: T) -> Result<T> {
        match r {
            Err(trap) if self.on && trap.containable() => {
                self.found.push((w.pc, trap));
                Ok(fallback)
            }
            r => r,
        }
    }

    /// [`Contained::or`] for a read into `out`: a refused one reads zeros.
    pub fn read<T: Copy + Default>(
        &mut self,
        w: &Wave,
        r: Result<()>,
        out: &mut [T],
    ) -> Result<()> {
        if r.is_err() {
            out.fill(T::default());
        }
        self.or(w, r, ())
    }
}

/// Per-worker lane buffers for operand fetch and results.
pub struct Scratch {
    pub src: [crate::wave::Lanes; 3],
    pub res: [crate::wave::Lanes; 2],
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            src: [[0; crate::wave::MAX_LANES]; 3],
            res: [[0; crate::wave::MAX_LANES]; 2],
        }
    }
}

/// A handler: runs one instruction for the whole wave.
pub type Exec = fn(&mut Wave, &mut Env, &Inst) -> Result;

impl Trap {
    /// Whether the wave can run past it: a refused access (which then
    /// touches nothing) or a sanitizer's finding about an access (which
    /// then happens), but not a trap, a bad instruction or a barrier
    /// that cannot complete.
    pub fn containable(&self) -> bool {
        matches!(
            self,
            Trap::Memory { .. } | Trap::Uninitialized { .. } | Trap::Sanitizer(_)
        )
    }

    /// The lane to blame, when one is.
    pub fn lane(&self) -> Option<usize> {
        match self {
            Trap::Memory { lane, .. } | Trap::Uninitialized { lane, .. } => *lane,
            Trap::Sanitizer(report) => report.lane(),
            _ => None,
        }
    }

    /// The bytes of the memory access it is about, if it is about one.
    pub fn access_bytes(&self) -> Option<u64> {
        match self {
            Trap::Memory { len, .. } | Trap::Uninitialized { len, .. } => Some(*len),
            Trap::Sanitizer(report) => Some(report.bytes()),
            _ => None,
        }
    }

    /// The trap's category.
    pub fn kind(&self) -> FaultKind {
        match self {
            Trap::Memory { .. } => FaultKind::Memory,
            Trap::Unsupported | Trap::Illegal(_) => FaultKind::Instruction,
            Trap::Trap(_) => FaultKind::Trap,
            Trap::BadJump(_) => FaultKind::BadJump,
            Trap::Budget(_) => FaultKind::Budget,
            Trap::Uninitialized { .. } => FaultKind::Uninitialized,
            Trap::Other(_) => FaultKind::Other,
            Trap::Sanitizer(report) => report.kind(),
        }
    }

    /// The fault of a refused access to device memory in `space` by
    /// `lane` (`write`: what the access was when the arena does not say).
    pub fn memory(space: &'static str, lane: Option<usize>, write: bool, e: MemError) -> Trap {
        let (addr, len, cause) = match e {
            MemError::Refused { addr, len, write } => (
                addr,
                len,
                if write {
                    MemCause::Write
                } else {
                    MemCause::Read
                },
            ),
            MemError::Stale { addr, len } => (addr, len, MemCause::Stale),
            MemError::OutOfRange { addr, len } => (
                addr,
                len,
                if write {
                    MemCause::Write
                } else {
                    MemCause::Read
                },
            ),
            other => return Trap::Other(other.to_string()),
        };
        Trap::Memory {
            space,
            lane,
            addr,
            len,
            cause,
        }
    }
}

/// The register number of a VGPR operand; any other operand is refused
/// with what it was (`what`: the operand's role, for the message).
pub fn vgpr(op: softgpu_isa::Operand, what: &str) -> Result<usize> {
    match op {
        softgpu_isa::Operand::Vgpr(r) => Ok(r as usize),
        other => Err(Trap::Other(format!("{what} must be a VGPR, not {other:?}"))),
    }
}

/// Handler for instructions with no semantics here.
pub fn unsupported(_: &mut Wave, _: &mut Env, _: &Inst) -> Result {
    Err(Trap::Unsupported)
}

/// Handler for instructions that only affect timing on hardware.
pub fn nop(_: &mut Wave, _: &mut Env, _: &Inst) -> Result {
    Ok(Flow::Next)
}

/// Every handler bound to one opcode, in precedence order (a later entry
/// for an op replaces an earlier).
fn own_handlers() -> impl Iterator<Item = (Op, Exec)> {
    [
        sopp::TABLE,
        smem::TABLE,
        vmem::TABLE,
        cross_lane::TABLE,
        wmma::TABLE,
        fp8::TABLE,
    ]
    .into_iter()
    .chain(valu::tables())
    .chain(salu::tables())
    .chain(ds::tables())
    .flatten()
    .copied()
}

/// gfx12 ops that are gfx11 ops renamed, with the same semantics: each
/// runs its gfx11 twin's handler (RDNA4 guide; LLVM gives both the same
/// instruction definitions under the new mnemonics).
const RENAMED: &[(Op, Op)] = &[
    (Op::S_ADD_CO_U32, Op::S_ADD_U32),
    (Op::S_SUB_CO_U32, Op::S_SUB_U32),
    (Op::S_ADD_CO_I32, Op::S_ADD_I32),
    (Op::S_SUB_CO_I32, Op::S_SUB_I32),
    (Op::S_ADD_CO_CI_U32, Op::S_ADDC_U32),
    (Op::S_SUB_CO_CI_U32, Op::S_SUBB_U32),
    (Op::S_ADDK_CO_I32, Op::S_ADDK_I32),
    (Op::V_MAD_CO_U64_U32, Op::V_MAD_U64_U32),
    (Op::V_MAD_CO_I64_I32, Op::V_MAD_I64_I32),
];

/// The gfx11 op `op` renames (itself when it renames none), for tiers that
/// key their own tables by gfx11's ops (the JIT's lowering).
pub fn renamed(op: Op) -> Op {
    RENAMED
        .iter()
        .find(|&&(new, _)| new == op)
        .map_or(op, |&(_, old)| old)
}

/// The handler an op's class shares with the rest of its family.
fn class_handler(class: Class) -> Option<Exec> {
    match class {
        Class::Own => None,
        // A VOPD op runs through `valu::vopd` when its VOP1/VOP2 twin has a
        // pure lane function (the program resolves both halves at load).
        Class::Dual(twin) => valu::lane_fn(twin).map(|_| valu::vopd as Exec),
        Class::Cmp { cond, num } => vcmp::handler(cond, num),
        Class::Rmw {
            space: Space::Lds,
            rmw,
            num,
            rtn,
        } => ds::rmw(rmw, num, rtn),
        Class::Rmw { rmw, num, .. } => vmem::rmw(rmw, num),
        Class::Mem { op, .. } => vmem::mem(op),
    }
}

/// One handler per op, indexed by [`Op`], built once: the op's own handler,
/// else its class's.
fn table() -> &'static [Option<Exec>] {
    static TABLE: OnceLock<Vec<Option<Exec>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let classes = softgpu_isa::all_ops().map(|op| class_handler(op.info().class));
        let mut table = by_op(classes.collect(), own_handlers());
        for &(new, old) in RENAMED {
            table[new.0 as usize] = table[old.0 as usize];
        }
        table
    })
}

/// `table` (indexed by [`Op`]) with `entries` written over it, later
/// entries over earlier.
fn by_op(
    mut table: Vec<Option<Exec>>,
    entries: impl IntoIterator<Item = (Op, Exec)>,
) -> Vec<Option<Exec>> {
    for (op, exec) in entries {
        table[op.0 as usize] = Some(exec);
    }
    table
}

/// The cheapest exact handler for this decoded instruction: a plain variant
/// when it has no modifiers and only 32-bit operands, a saturating one for
/// an integer op with clamp, else the general one.
pub fn handler_for(inst: &Inst) -> Option<Exec> {
    static PLAIN: OnceLock<Vec<Option<Exec>>> = OnceLock::new();
    static SATURATING: OnceLock<Vec<Option<Exec>>> = OnceLock::new();
    let only = |entries: &[(Op, Exec)]| {
        let none = vec![None; softgpu_isa::all_ops().count()];
        by_op(none, entries.iter().copied())
    };
    let special = if valu::is_plain(inst) {
        PLAIN.get_or_init(|| only(valu::plain_table()))[inst.op.0 as usize]
    } else if inst.mods.clamp {
        SATURATING.get_or_init(|| only(valu::saturating_table()))[inst.op.0 as usize]
    } else {
        None
    };
    special.or_else(|| handler(inst.op))
}

/// The handler for an opcode, if the executor implements it.
pub fn handler(op: Op) -> Option<Exec> {
    table().get(op.0 as usize).copied().flatten()
}

/// The wave-wide address pass the memory ops share: `addr(l)` of every
/// lane into `out` in one loop (so a handler reads its address VGPR's lanes
/// once), then the bounds of the lanes `exec` selects ([`Lanes::new`]).
#[inline(always)]
pub fn lane_addrs(
    lanes: usize,
    exec: u64,
    out: &mut [u64; crate::wave::MAX_LANES],
    addr: impl FnMut(usize) -> u64,
) -> Lanes<'_> {
    // A wave's width as a constant makes the pass one fixed-length loop
    // with no bounds checks, which vectorises.
    match lanes {
        32 => Lanes::from_fn::<32>(out, exec, addr),
        64 => Lanes::from_fn::<64>(out, exec, addr),
        _ => {
            let out = &mut out[..lanes];
            out.iter_mut()
                .zip((0..lanes).map(addr))
                .for_each(|(slot, a)| *slot = a);
            Lanes::new(out, exec)
        }
    }
}

#[cfg(test)]
mod tests {
    use softgpu_isa::{ops_of, Class, Family, Format};

    /// The ops the executor runs: gfx11's (gfx12's come with its decoder).
    fn all_ops() -> impl Iterator<Item = softgpu_isa::Op> {
        ops_of(Family::Gfx11)
    }

    /// Every op a class binds has its class's handler: a family member the
    /// class tables miss would silently be unsupported.
    #[test]
    fn shared_classes_are_complete() {
        let missing: Vec<_> = all_ops()
            .filter(|op| {
                matches!(
                    op.info().class,
                    Class::Cmp { .. } | Class::Rmw { .. } | Class::Mem { .. }
                )
            })
            .filter(|&op| super::handler(op).is_none())
            .map(|op| op.name())
            .collect();
        assert!(missing.is_empty(), "no handler for: {missing:?}");
    }

    /// Every VOPD op runs (through its twin's lane function).
    #[test]
    fn every_dual_op_has_a_handler() {
        for op in all_ops().filter(|op| op.info().format == Format::Vopd) {
            assert!(super::handler(op).is_some(), "{}", op.name());
        }
    }

    #[test]
    fn every_hint_has_a_handler() {
        for &op in super::sopp::HINTS {
            assert!(super::handler(op).is_some(), "{}", op.name());
        }
    }
}
