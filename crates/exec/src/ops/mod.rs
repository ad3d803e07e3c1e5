//! Instruction semantics: data tables mapping each mnemonic to a small
//! generic handler. A handler runs one instruction for a whole wave.

// Lane loops index several per-lane arrays at once, and the tables spell
// every entry as a closure so that all rows read alike.
#![allow(clippy::needless_range_loop, clippy::redundant_closure)]

use std::collections::HashMap;
use std::sync::OnceLock;

use softgpu_isa::{Inst, Op};

use crate::arena::{Lanes, MemError, Memory};
use crate::program::Program;
use crate::wave::Wave;

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

/// What a handler may touch besides its wave.
pub struct Env<'a> {
    /// Device memory as this dispatch may touch it.
    pub mem: Memory<'a>,
    pub lds: &'a mut [u8],
    pub program: &'a Program,
    /// Reused lane buffers, so handlers never clear stack arrays.
    pub tmp: &'a mut Scratch,
    /// The dispatch's global-wave-sync barriers.
    pub gws: &'a crate::gws::Gws<'a>,
    /// The workgroup's memory sanitizers, when `SOFTGPU_CHECK` asks for
    /// init or race: memory handlers call it once per instruction.
    pub sanitizer: Option<crate::sanitize::Sanitizer<'a>>,
    /// The program's JIT blocks for this wave size, if the JIT is on.
    pub jit: Option<crate::jit::Tier<'a>>,
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

/// Handler for instructions with no semantics here.
pub fn unsupported(_: &mut Wave, _: &mut Env, _: &Inst) -> Result {
    Err(Trap::Unsupported)
}

/// Handler for instructions that only affect timing on hardware.
pub fn nop(_: &mut Wave, _: &mut Env, _: &Inst) -> Result {
    Ok(Flow::Next)
}

/// Every handler the executor has, under the mnemonic it was written for.
/// Names that are no opcode of the table are a bug the tests catch
/// (`tests::every_handler_names_an_opcode`).
fn named_handlers() -> Vec<(&'static str, Exec)> {
    let mut all = Vec::new();
    for part in [
        sopp::TABLE,
        smem::TABLE,
        vmem::TABLE,
        cross_lane::TABLE,
        wmma::TABLE,
    ]
    .into_iter()
    .chain(valu::tables())
    .chain(salu::tables())
    .chain(ds::tables())
    {
        all.extend_from_slice(part);
    }
    all.extend(vcmp::entries());
    for (name, exec) in vmem::entries() {
        all.push((&*Box::leak(name.into_boxed_str()), exec));
    }
    // A VOPD op runs through `valu::vopd` when its VOP1/VOP2 twin has a
    // pure lane function (the program resolves both halves at load).
    for op in softgpu_isa::all_ops() {
        let name = op.name();
        if op.info().format == softgpu_isa::Format::Vopd
            && valu::lane_fn(&name.replacen("v_dual_", "v_", 1)).is_some()
        {
            all.push((name, valu::vopd as Exec));
        }
    }
    all
}

/// The handler of each op, indexed by [`Op`]: names are resolved once, here,
/// and decode binds by opcode. A later entry for a name replaces an earlier.
fn table() -> &'static [Option<Exec>] {
    static TABLE: OnceLock<Vec<Option<Exec>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = vec![None; softgpu_isa::all_ops().count()];
        for (name, exec) in named_handlers() {
            if let Some(op) = softgpu_isa::op_by_name(name) {
                table[op.0 as usize] = Some(exec);
            }
        }
        table
    })
}

/// The cheapest exact handler for this decoded instruction: a plain variant
/// when it has no modifiers and only 32-bit operands, a saturating one for
/// an integer op with clamp, else the general one.
pub fn handler_for(inst: &Inst) -> Option<Exec> {
    static PLAIN: OnceLock<HashMap<&'static str, Exec>> = OnceLock::new();
    static SATURATING: OnceLock<HashMap<&'static str, Exec>> = OnceLock::new();
    let plain = PLAIN.get_or_init(|| valu::plain_table().iter().copied().collect());
    let saturating = SATURATING.get_or_init(|| valu::saturating_table().iter().copied().collect());
    let name = inst.op.name();
    let special = if valu::is_plain(inst) {
        plain.get(name)
    } else if inst.mods.clamp {
        saturating.get(name)
    } else {
        None
    };
    special.copied().or_else(|| handler(inst.op))
}

/// The handler for an opcode, if the executor implements it.
pub fn handler(op: Op) -> Option<Exec> {
    table().get(op.0 as usize).copied().flatten()
}

/// Every mnemonic the executor implements (for docs and coverage tests).
pub fn implemented() -> impl Iterator<Item = &'static str> {
    softgpu_isa::all_ops()
        .filter(|&op| handler(op).is_some())
        .map(|op| op.name())
}

/// The lanes of a wave of `lanes` that `exec` selects, in lane order.
#[inline(always)]
pub fn active(lanes: usize, exec: u64) -> impl Iterator<Item = usize> {
    (0..lanes).filter(move |l| exec >> l & 1 != 0)
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
    /// Handlers the generic tables produce for mnemonics gfx11 lacks (they
    /// exist in gfx10 or gfx12, or are a family member only some types
    /// have); they stay unbound until a family that has them gets its
    /// table. Any other name that is no opcode is a typo.
    const OTHER_FAMILIES: &[&str] = &[
        "s_inst_prefetch",
        "v_dot2_i32_i16",
        "v_dot2_u32_u16",
        "v_dot2c_f32_f16",
        "ds_nop",
        "v_cmp_f_i16",
        "v_cmpx_f_i16",
        "v_cmp_t_i16",
        "v_cmpx_t_i16",
        "v_cmp_f_u16",
        "v_cmpx_f_u16",
        "v_cmp_t_u16",
        "v_cmpx_t_u16",
        "flat_atomic_csub_u32",
    ];

    #[test]
    fn every_handler_names_an_opcode() {
        let unknown: Vec<_> = super::named_handlers()
            .into_iter()
            .map(|(name, _)| name)
            .filter(|name| softgpu_isa::op_by_name(name).is_none())
            .filter(|name| !OTHER_FAMILIES.contains(name))
            // The memory tables are generated for every type of every
            // atomic; f64 and packed-16-bit float atomics are gfx90a/gfx12.
            .filter(|name| {
                !(name.contains("atomic") && (name.ends_with("_f64") || name.contains("_pk_add_")))
            })
            .collect();
        assert!(unknown.is_empty(), "handlers for no opcode: {unknown:?}");
    }

    #[test]
    fn every_hint_has_a_handler() {
        for &op in super::sopp::HINTS {
            assert!(super::handler(op).is_some(), "{}", op.name());
        }
    }
}
