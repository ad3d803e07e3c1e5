//! Why an instruction stopped a wave: [`Trap`], the sanitizers' findings
//! ([`Report`]), the category both fall in ([`FaultKind`]), and the errors
//! a wave runs past when they are contained ([`Contained`]). Plain data:
//! the machine turns them into fault reports.

use std::fmt;

use softgpu_arena::MemError;
use softgpu_isa::{Op, Operand};

use crate::wave::Wave;

type Result<T> = std::result::Result<T, Trap>;

/// Why an instruction stopped the dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trap {
    /// A memory access outside what the kernel may touch.
    Memory {
        space: Space,
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
        space: Space,
        lane: Option<usize>,
        addr: u64,
        len: u64,
        first: u64,
    },
    /// A sanitizer's finding (initcheck, racecheck).
    Sanitizer(Box<Report>),
    /// A register an instruction names through M0 (`s_movrel*`,
    /// `v_movrel*`, `v_swaprel`) lies past the register file.
    RegisterRange {
        /// The instruction.
        op: Op,
        /// `s` or `v`.
        file: char,
        /// The register index it reached.
        index: usize,
    },
    /// An operand that must be a VGPR is something else.
    NotAVgpr {
        /// The operand's role, for the sentence.
        role: &'static str,
        operand: Operand,
    },
    /// An operand of an M0-relative scalar move (`s_movrel*`) that must
    /// be an SGPR is something else.
    NotAnSgpr { op: Op, operand: Operand },
    /// A form of a supported instruction the executor does not run, or a
    /// use the ISA leaves undefined (the sentence says which).
    UnsupportedForm {
        op: Op,
        /// What about this use is not run.
        why: String,
    },
    /// The wave ran past the code it may run.
    RanOff(RanOff),
    /// A scratch write would pass the dispatch's private memory limit.
    PrivateLimit {
        lane: usize,
        addr: u64,
        len: usize,
        limit: u64,
    },
    /// A buffer access through the private segment buffer (gfx10's MUBUF
    /// scratch) that lands in another lane's private memory: byte
    /// `offset` of the buffer is lane `owner`'s.
    OtherLanesScratch {
        lane: usize,
        owner: usize,
        offset: u64,
    },
    /// A grid barrier (`ds_gws_barrier`) did not complete.
    GridBarrier(GwsError),
    /// Device memory refused an access for a reason that is not the
    /// kernel's (the arena's own error).
    Arena(MemError),
    /// JIT verification: the two tiers disagree, or a compiled block broke
    /// its contract (`JitMode::Verify`); the sentence says where.
    TiersDisagree(String),
}

/// Why a wave left a grid barrier without it completing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GwsError {
    /// The dispatch was abandoned while the wave waited.
    Aborted,
    /// The resource id is out of range.
    BadResource(u32),
}

/// What code a wave ran past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RanOff {
    /// The end of the code object's text.
    End,
    /// The end of the kernel's own function, in a large code object
    /// decoded a kernel at a time (the size given is that threshold).
    Function(u64),
    /// Into `s_code_end` padding after the kernel.
    CodeEnd,
}

/// Where a refused or unwritten access was: device memory reached by a
/// vector or scalar memory instruction, a wave's private memory, or the
/// workgroup's LDS (a sanitizer's finding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Lds,
    Global,
    Scalar,
    Scratch,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Space::Lds => "LDS",
            Space::Global => "global",
            Space::Scalar => "scalar",
            Space::Scratch => "scratch",
        })
    }
}

/// What a refused memory access was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemCause {
    Read,
    Write,
    /// The memory was freed and reallocated after the dispatch was queued.
    Stale,
}

impl MemCause {
    /// What the access was, in a sentence: a read, a write, or (to
    /// reallocated memory) an access.
    pub fn access(self) -> &'static str {
        match self {
            MemCause::Read => "read",
            MemCause::Write => "write",
            MemCause::Stale => "access",
        }
    }
}

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
            Trap::OtherLanesScratch { lane, .. } => Some(*lane),
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
            Trap::Sanitizer(report) => report.kind(),
            Trap::RegisterRange { .. }
            | Trap::NotAVgpr { .. }
            | Trap::NotAnSgpr { .. }
            | Trap::UnsupportedForm { .. }
            | Trap::RanOff(_)
            | Trap::PrivateLimit { .. }
            | Trap::GridBarrier(_)
            | Trap::Arena(_)
            | Trap::TiersDisagree(_) => FaultKind::Other,
            Trap::OtherLanesScratch { .. } => FaultKind::Memory,
        }
    }

    /// The fault of a refused access to device memory in `space` by
    /// `lane` (`write`: what the access was when the arena does not say).
    pub fn memory(space: Space, lane: Option<usize>, write: bool, e: MemError) -> Trap {
        let access = |write| {
            if write {
                MemCause::Write
            } else {
                MemCause::Read
            }
        };
        let (addr, len, cause) = match e {
            MemError::Refused { addr, len, write } => (addr, len, access(write)),
            MemError::Stale { addr, len } => (addr, len, MemCause::Stale),
            MemError::OutOfRange { addr, len } => (addr, len, access(write)),
            other => return Trap::Arena(other),
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

/// The trap in one sentence, without the dispatch's context (the
/// machine's fault report says more: the allocation an address hits, the
/// instruction's text).
impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let lane = |lane: &Option<usize>| lane.map(|l| format!(" by lane {l}")).unwrap_or_default();
        match self {
            Trap::Memory {
                space,
                lane: l,
                addr,
                len,
                cause,
            } => {
                let stale = if *cause == MemCause::Stale {
                    ", reallocated after the dispatch was queued"
                } else {
                    ""
                };
                write!(
                    f,
                    "{} of {len} bytes of {space} memory at {addr:#x}{}{stale}",
                    cause.access(),
                    lane(l)
                )
            }
            Trap::Unsupported => f.write_str("unsupported instruction"),
            Trap::Illegal(why) if why.is_empty() => f.write_str("illegal instruction"),
            Trap::Illegal(why) => write!(f, "illegal instruction: {why}"),
            Trap::Trap(id) => write!(f, "s_trap {id}"),
            Trap::BadJump(addr) => write!(f, "jump to {addr:#x}, which is not an instruction"),
            Trap::Budget(n) => write!(f, "the wave ran past its instruction budget of {n}"),
            Trap::Uninitialized {
                space,
                lane: l,
                addr,
                len,
                first,
            } => write!(
                f,
                "initcheck: read of {len} bytes of {space} at {addr:#x}{} reads the byte at {first:#x}, never written",
                lane(l)
            ),
            Trap::Sanitizer(report) => write!(f, "{} finding", report.kind().name()),
            Trap::RegisterRange { op, file, index } => write!(
                f,
                "{}: M0-relative register {file}{index} is out of range",
                op.name()
            ),
            Trap::NotAVgpr { role, operand } => {
                write!(f, "{role} must be a VGPR, not {operand:?}")
            }
            Trap::NotAnSgpr { op, operand } => {
                write!(f, "{} with a non-register operand ({operand:?})", op.name())
            }
            Trap::UnsupportedForm { op, why } => write!(f, "{}: {why}", op.name()),
            Trap::RanOff(RanOff::End) => f.write_str("execution ran past the end of the code"),
            Trap::RanOff(RanOff::Function(eager)) => write!(
                f,
                "execution ran past the end of the kernel's function (its symbol's range): the \
                 code object's text is over {eager} bytes, so softgpu decoded this kernel's \
                 function and the non-kernel functions only"
            ),
            Trap::RanOff(RanOff::CodeEnd) => {
                f.write_str("executed s_code_end padding (ran past the end of the kernel)")
            }
            Trap::PrivateLimit {
                lane,
                addr,
                len,
                limit,
            } => write!(
                f,
                "lane {lane} writing {len} bytes of scratch at offset {addr:#x} would pass the \
                 dispatch's private memory limit of {limit} bytes materialised (raise it with \
                 SOFTGPU_SCRATCH_LIMIT)"
            ),
            Trap::OtherLanesScratch {
                lane,
                owner,
                offset,
            } => write!(
                f,
                "lane {lane}'s access at byte {offset:#x} of the private segment buffer reaches \
                 lane {owner}'s private memory (the buffer interleaves the lanes' scratch dword \
                 by dword)"
            ),
            Trap::GridBarrier(GwsError::Aborted) => {
                f.write_str("the dispatch stopped while this wave waited at a grid barrier")
            }
            Trap::GridBarrier(GwsError::BadResource(r)) => {
                write!(f, "GWS resource {r} is out of range (0-63)")
            }
            Trap::Arena(e) => write!(f, "device memory: {e}"),
            Trap::TiersDisagree(why) => f.write_str(why),
        }
    }
}

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

/// The errors a wave ran past under [`crate::checks::Checks::contain`], each with
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

/// How an instruction uses the bytes it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    Read,
    Write,
    /// A read-modify-write done atomically: it reads (so initcheck wants
    /// the bytes written before) but never takes part in a race.
    Atomic,
}

/// Which two accesses conflict, named by the later one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hazard {
    ReadAfterWrite,
    WriteAfterWrite,
    WriteAfterRead,
}

impl Hazard {
    pub fn name(self) -> &'static str {
        match self {
            Hazard::ReadAfterWrite => "read-after-write",
            Hazard::WriteAfterWrite => "write-after-write",
            Hazard::WriteAfterRead => "write-after-read",
        }
    }

    /// The kind of the earlier access.
    pub fn earlier(self) -> &'static str {
        match self {
            Hazard::WriteAfterRead => "read",
            _ => "write",
        }
    }

    /// The kind of the later (faulting) access.
    pub fn later(self) -> &'static str {
        match self {
            Hazard::ReadAfterWrite => "read",
            _ => "write",
        }
    }
}

/// The earlier access of a race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Earlier {
    /// Linear workgroup index (x fastest).
    pub group: u32,
    pub wave: u32,
    /// Instruction slot of the program.
    pub slot: u32,
}

/// What a sanitizer found; carried out of the handler as
/// [`Trap::Sanitizer`] and turned into the machine's fault report, which
/// writes its sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Report {
    /// initcheck: a read of bytes never written.
    Uninitialized {
        space: Space,
        lane: Option<usize>,
        /// The access (LDS offset or address) and its size.
        addr: u64,
        len: u64,
        /// The first byte of it never written.
        first: u64,
    },
    /// racecheck: this access conflicts with `earlier`.
    Race {
        hazard: Hazard,
        space: Space,
        lane: Option<usize>,
        /// The access (LDS offset or address) and its size.
        addr: u64,
        len: u64,
        /// The first byte both accesses touch.
        first: u64,
        earlier: Earlier,
        /// One of the two is atomic (the other plain): a race all the
        /// same, since the plain access is not.
        atomic: bool,
    },
}

impl Report {
    pub fn kind(&self) -> FaultKind {
        match self {
            Report::Uninitialized { .. } => FaultKind::Uninitialized,
            Report::Race { .. } => FaultKind::Race,
        }
    }

    /// The lane to blame, when one is.
    pub fn lane(&self) -> Option<usize> {
        match *self {
            Report::Uninitialized { lane, .. } | Report::Race { lane, .. } => lane,
        }
    }

    /// The bytes of the access reported.
    pub fn bytes(&self) -> u64 {
        match *self {
            Report::Uninitialized { len, .. } | Report::Race { len, .. } => len,
        }
    }
}
