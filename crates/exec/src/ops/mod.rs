//! Instruction semantics: data tables mapping each mnemonic to a small
//! generic handler. A handler runs one instruction for a whole wave.

// Lane loops index several per-lane arrays at once, and the tables spell
// every entry as a closure so that all rows read alike.
#![allow(clippy::needless_range_loop, clippy::redundant_closure)]

use std::collections::HashMap;
use std::sync::OnceLock;

use softgpu_isa::{Inst, Op};

use crate::arena::{MemError, Memory};
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

fn table() -> &'static HashMap<&'static str, Exec> {
    static TABLE: OnceLock<HashMap<&'static str, Exec>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map = HashMap::new();
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
            for &(name, exec) in part {
                map.insert(name, exec);
            }
        }
        for (name, exec) in vcmp::entries() {
            map.insert(name, exec);
        }
        for (name, exec) in vmem::entries() {
            map.insert(Box::leak(name.into_boxed_str()), exec);
        }
        // A VOPD op runs through `valu::vopd` when its VOP1/VOP2 twin has a
        // pure lane function (the program resolves both halves at load).
        for op in softgpu_isa::all_ops() {
            let name = op.name();
            if op.info().format == softgpu_isa::Format::Vopd
                && valu::lane_fn(&name.replacen("v_dual_", "v_", 1)).is_some()
            {
                map.insert(name, valu::vopd as Exec);
            }
        }
        map
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
    table().get(op.name()).copied()
}

/// Every mnemonic the executor implements (for docs and coverage tests).
pub fn implemented() -> impl Iterator<Item = &'static str> {
    table().keys().copied()
}
