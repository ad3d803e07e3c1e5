//! Fault reports: what stopped a dispatch, said so a developer can act.

use std::fmt;

use crate::plan::Plan;
use softgpu_arena::Allocation;
use softgpu_interp::program::Program;
use softgpu_interp::trap::{FaultKind, MemCause, Report, Space, Trap};
use softgpu_interp::wave::Wave;

/// Why and where a dispatch stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// The kernel's name.
    pub kernel: String,
    /// What went wrong, as a category runtimes can map to their own codes.
    pub kind: FaultKind,
    /// What went wrong, in a sentence.
    pub reason: String,
    /// Where it went wrong, when an instruction did it.
    pub site: Option<Site>,
    /// For a memory fault: the allocation the access hit or missed.
    pub allocation: Option<Allocation>,
    /// The kernel argument pointing into that allocation, when the
    /// kernel's metadata names its arguments.
    pub argument: Option<String>,
    /// For a runaway dispatch (budget, timeout): the waves still in flight
    /// when it was stopped, the first 16 (`watch::REPORTED_WAVES`) in
    /// workgroup order.
    pub waves: Vec<WaveState>,
    /// In-flight waves left out of `waves`.
    pub more_waves: usize,
    /// The launch's other errors, when it ran past them
    /// ([`crate::Checks::contain`]).
    pub others: Errors,
}

/// The errors a launch ran past under [`crate::Checks::contain`], each
/// distinct one once (a lane's refused access or uninitialized read at
/// one instruction; a race at one instruction, whichever lanes and waves
/// make it), in the order found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Errors {
    /// The first [`Errors::RECORDED`] of them.
    pub recorded: Vec<Fault>,
    /// How many more there were.
    pub unrecorded: u64,
}

impl Errors {
    /// Errors a launch records in full; further ones are only counted.
    pub const RECORDED: usize = 1000;

    /// How many errors there were.
    pub fn count(&self) -> u64 {
        self.recorded.len() as u64 + self.unrecorded
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }
}

/// Where one wave of a stopped dispatch was.
#[derive(Clone, Debug, PartialEq)]
pub struct WaveState {
    /// Its workgroup's ID.
    pub workgroup: [u32; 3],
    /// Its index in its workgroup.
    pub wave: u32,
    /// Device address of the wave's next instruction (of the barrier, for
    /// a wave waiting at one).
    pub pc: u64,
    /// That instruction's offset in the code object.
    pub offset: u64,
    /// That instruction, disassembled.
    pub instruction: String,
    /// Whether the wave was waiting, and at what.
    pub wait: Wait,
}

/// Whether a wave was waiting, and at what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Running (or ready to run).
    No,
    /// Waiting at `s_barrier` for the rest of its workgroup.
    Barrier,
    /// Blocked at a grid-wide `ds_gws_barrier`.
    GridBarrier,
}

/// The instruction a fault happened at.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    /// The faulting wave's workgroup ID.
    pub workgroup: [u32; 3],
    /// The faulting wave's index in its workgroup.
    pub wave: u32,
    /// The lane whose access faulted, when one lane is to blame.
    pub lane: Option<usize>,
    /// That lane's work-item ID in its workgroup (HIP's `threadIdx`; the
    /// workgroup ID is `blockIdx`): work-items fill a workgroup's waves
    /// in order, x fastest.
    pub thread: Option<[u32; 3]>,
    /// Lanes active when the instruction ran.
    pub exec: u64,
    /// Device address of the instruction.
    pub pc: u64,
    /// The instruction's offset in the code object.
    pub offset: u64,
    /// The instruction, disassembled.
    pub instruction: String,
    /// The instruction's bytes, as hex dwords.
    pub bytes: String,
    /// The memory address involved, if any.
    pub address: Option<u64>,
    /// The bytes the access at `address` spans, for a memory access.
    pub size: Option<u64>,
    /// The instruction's source location from the code object's DWARF
    /// (innermost first, then the functions it was inlined into); empty
    /// without line tables.
    pub source: Vec<softgpu_codeobj::SourceFrame>,
}

impl Fault {
    /// A fault before any instruction ran.
    pub fn setup(kernel: &str, reason: String) -> Fault {
        Fault {
            kernel: kernel.to_string(),
            kind: FaultKind::Other,
            reason,
            site: None,
            allocation: None,
            argument: None,
            waves: Vec::new(),
            more_waves: 0,
            others: Errors::default(),
        }
    }

    /// How many errors the launch had: this one and its others.
    pub fn error_count(&self) -> u64 {
        1 + self.others.count()
    }

    /// A fault of `kind` at the instruction in slot `pc` of `wave`.
    pub(crate) fn at(
        plan: &Plan,
        group: [u32; 3],
        wave: &Wave,
        pc: u32,
        kind: FaultKind,
        reason: String,
    ) -> Fault {
        Fault {
            kind,
            site: Some(Site::of(plan, group, wave, pc, None, None, None)),
            ..Fault::setup(&plan.kernel.name, reason)
        }
    }

    /// The fault `trap` reports, raised by `wave` of workgroup `group` at
    /// the instruction in slot `pc`.
    pub(crate) fn from_trap(
        plan: &Plan,
        group: [u32; 3],
        wave: &Wave,
        pc: u32,
        trap: Trap,
    ) -> Fault {
        let program = plan.program;
        let slot = program.slot_at(pc);
        let instruction = program.text_for(pc, wave.lanes == 64);
        let bytes = program.bytes_of(pc);
        let name = instruction
            .split_whitespace()
            .next()
            .unwrap_or("?")
            .to_string();
        let kind = trap.kind();
        let mut allocation = None;
        let mut argument = None;
        let size = trap.access_bytes();
        let (reason, lane, address) = match trap {
            Trap::Memory {
                space,
                lane,
                addr,
                len,
                cause,
            } => {
                let what = cause.access();
                let reason = if matches!(space, Space::Global | Space::Scalar) {
                    let (text, hit) = plan.arena.explain(addr, len, cause == MemCause::Write);
                    argument = hit.as_ref().and_then(|a| argument_into(plan, a));
                    allocation = hit;
                    let stale = if cause == MemCause::Stale {
                        " (stale dispatch: that memory was freed and reallocated after this dispatch was queued; the kernel's pointer was to the old owner)"
                    } else {
                        ""
                    };
                    format!("{space} memory {what} refused: {text}{stale}")
                } else {
                    format!("{space} memory access of {len} bytes at {addr:#x} is outside what the kernel may touch")
                };
                (reason, lane, Some(addr))
            }
            Trap::Unsupported => (
                format!(
                    "unsupported instruction {name} ({bytes}) at {:#x} in {}",
                    program.image_base + slot.offset,
                    plan.kernel.name
                ),
                None,
                None,
            ),
            Trap::Illegal(_) => (
                format!(
                    "illegal instruction ({bytes}): {}",
                    slot.illegal.clone().unwrap_or_default()
                ),
                None,
                None,
            ),
            Trap::Trap(id) => (
                format!("s_trap {id} (the kernel trapped, e.g. __builtin_trap or an assert)"),
                None,
                None,
            ),
            Trap::BadJump(addr) => (
                format!("jump to {addr:#x}, which is not an instruction of this code object"),
                None,
                Some(addr),
            ),
            Trap::Budget(n) => (
                format!("the wave ran past its instruction budget of {n}"),
                None,
                None,
            ),
            Trap::Uninitialized {
                space,
                lane,
                addr,
                len,
                first,
            } => {
                let whose = lane.map(|l| format!("lane {l} ")).unwrap_or_default();
                (format!("initcheck: {whose}read {len} bytes of {space} at offset {addr:#x}, but the byte at {first:#x} was never written since the wave started"), lane, Some(addr))
            }
            Trap::RegisterRange { .. }
            | Trap::NotAVgpr { .. }
            | Trap::NotAnSgpr { .. }
            | Trap::UnsupportedForm { .. }
            | Trap::RanOff(_)
            | Trap::PrivateLimit { .. }
            | Trap::GridBarrier(_)
            | Trap::Arena(_)
            | Trap::TiersDisagree(_) => (trap.to_string(), None, None),
            Trap::OtherLanesScratch { lane, .. } => (trap.to_string(), Some(lane), None),
            Trap::Sanitizer(report) => {
                let (mut why, lane, address) =
                    describe(&report, plan.program, plan.groups, group, wave);
                // Global memory: name the allocation the bytes are in.
                if let Some(hit) = address.and_then(|a| plan.arena.explain(a, 1, false).1) {
                    let at = address.unwrap_or(hit.base) - hit.base;
                    why.push_str(&format!(
                        "; byte {at} of a {}-byte allocation made by {}",
                        hit.len, hit.allocated_by
                    ));
                    argument = argument_into(plan, &hit);
                    allocation = Some(hit);
                }
                (why, lane, address)
            }
        };
        Fault {
            kind,
            site: Some(Site::of(plan, group, wave, pc, lane, address, size)),
            allocation,
            argument,
            ..Fault::setup(&plan.kernel.name, reason)
        }
    }
}

impl Site {
    fn of(
        plan: &Plan,
        group: [u32; 3],
        wave: &Wave,
        pc: u32,
        lane: Option<usize>,
        address: Option<u64>,
        size: Option<u64>,
    ) -> Site {
        let program = plan.program;
        let offset = program.slot_at(pc).offset;
        let [bx, by, _] = plan.block;
        let thread = lane.map(|l| {
            let t = wave.id * wave.lanes as u32 + l as u32;
            [t % bx, t / bx % by, t / (bx * by)]
        });
        Site {
            workgroup: group,
            wave: wave.id,
            lane,
            thread,
            exec: wave.exec(),
            pc: program.image_base + offset,
            offset,
            instruction: program.text_for(pc, wave.lanes == 64),
            bytes: program.bytes_of(pc),
            address,
            size,
            source: (program.code_object.debug.as_ref())
                .map(|d| d.frames(offset))
                .unwrap_or_default(),
        }
    }
}

impl WaveState {
    /// Where `wave` of workgroup `group` is: its next instruction, or the
    /// barrier it waits at.
    pub(crate) fn of(plan: &Plan, group: [u32; 3], wave: &Wave) -> WaveState {
        let program = plan.program;
        // A wave waiting at s_barrier has already stepped past it.
        let pc = if wave.at_barrier {
            wave.pc.saturating_sub(1)
        } else {
            wave.pc
        };
        let slot = program.slot_at(pc);
        let wait = if wave.at_barrier {
            Wait::Barrier
        } else if slot.inst.op == softgpu_isa::Op::DS_GWS_BARRIER {
            Wait::GridBarrier
        } else {
            Wait::No
        };
        WaveState {
            workgroup: group,
            wave: wave.id,
            pc: program.image_base + slot.offset,
            offset: slot.offset,
            instruction: program.text_for(pc, wave.lanes == 64),
            wait,
        }
    }
}

/// The kernel's pointer argument whose value lies in `a` (from its first
/// byte to one past its last), read from the dispatch's kernarg segment:
/// its name when the metadata has one (OpenCL without
/// `-cl-kernel-arg-info` has none), else `#index`.
fn argument_into(plan: &Plan, a: &Allocation) -> Option<String> {
    plan.kernel
        .meta
        .args
        .iter()
        .enumerate()
        .find_map(|(index, arg)| {
            if arg.value_kind != softgpu_codeobj::ValueKind::GlobalBuffer {
                return None;
            }
            let mut bytes = [0u8; 8];
            plan.arena
                .read(plan.kernarg + arg.offset as u64, &mut bytes)
                .ok()?;
            let p = u64::from_le_bytes(bytes);
            (p >= a.base && p <= a.base + a.len)
                .then(|| arg.name.clone().unwrap_or_else(|| format!("#{index}")))
        })
}

/// One error's report, without the launch's others ([`Fault::alone`]).
pub struct Alone<'a>(&'a Fault);

impl Fault {
    /// The report of this error alone, without the launch's other errors
    /// (a check report prints each of them on its own).
    pub fn alone(&self) -> Alone<'_> {
        Alone(self)
    }
}

/// The report: this error, then the launch's others.
impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.alone())?;
        let total = self.error_count();
        for (k, other) in self.others.recorded.iter().enumerate() {
            write!(f, "\n\nerror {} of {total} in this launch: {other}", k + 2)?;
        }
        if self.others.unrecorded > 0 {
            write!(
                f,
                "\n\n… and {} more errors in this launch, not recorded",
                self.others.unrecorded
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Alone<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fault = self.0;
        let kernel = softgpu_codeobj::demangle(&fault.kernel);
        write!(f, "kernel {kernel} faulted: {}", fault.reason)?;
        if let Some(s) = &fault.site {
            let [x, y, z] = s.workgroup;
            write!(
                f,
                "\n  at pc {:#x} (code offset {:#x}): {}  [{}]",
                s.pc, s.offset, s.instruction, s.bytes
            )?;
            write!(f, "{}", softgpu_codeobj::SourceLines(&s.source))?;
            write!(f, "\n  workgroup ({x}, {y}, {z}), wave {}", s.wave)?;
            match s.lane {
                Some(l) => write!(f, ", lane {l}")?,
                None => write!(f, ", active lanes {:#x}", s.exec)?,
            }
            if let Some([tx, ty, tz]) = s.thread {
                write!(
                    f,
                    " (blockIdx ({x}, {y}, {z}), threadIdx ({tx}, {ty}, {tz}))"
                )?;
            }
            if let Some(a) = s.address {
                write!(f, "\n  address {a:#x}")?;
            }
        }
        if let Some(name) = &fault.argument {
            write!(f, "\n  the allocation is kernel argument `{name}`")?;
        }
        if let Some(a) = &fault.allocation {
            if let Some(trace) = &a.backtrace {
                write!(f, "\n  allocated at:\n{trace}")?;
            }
        }
        if !fault.waves.is_empty() {
            let total = fault.waves.len() + fault.more_waves;
            write!(f, "\n  waves in flight ({total}):")?;
            for w in &fault.waves {
                write!(f, "\n    {w}")?;
            }
            if fault.more_waves > 0 {
                write!(f, "\n    … and {} more", fault.more_waves)?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for WaveState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.workgroup;
        write!(
            f,
            "workgroup ({x}, {y}, {z}) wave {}: pc {:#x} (code offset {:#x}): {}",
            self.wave, self.pc, self.offset, self.instruction
        )?;
        match self.wait {
            Wait::No => Ok(()),
            Wait::Barrier => write!(f, "  [waiting at the barrier]"),
            Wait::GridBarrier => write!(f, "  [waiting at the grid barrier]"),
        }
    }
}

impl std::error::Error for Fault {}

/// A sanitizer report's sentence, the lane to blame and the address involved
/// (global memory only: an LDS offset is named in the sentence), for
/// the fault of wave `wave` in workgroup `group` of a dispatch of
/// `program` over `groups` workgroups.
fn describe(
    report: &Report,
    program: &Program,
    groups: [u32; 3],
    group: [u32; 3],
    wave: &Wave,
) -> (String, Option<usize>, Option<u64>) {
    match *report {
        Report::Uninitialized {
            space,
            lane,
            addr,
            len,
            first,
        } => {
            let at = place(space, addr);
            let since = match space {
                Space::Lds => "since the workgroup began",
                // A report is about LDS or device memory.
                Space::Global | Space::Scalar | Space::Scratch => "since it was allocated",
            };
            let why = format!(
                "initcheck: {len}-byte read of {at} by wave {}{} reads bytes never written {since} (first unwritten byte: {})",
                wave.id,
                lane_text(lane),
                place(space, first),
            );
            (why, lane, global_address(space, addr))
        }
        Report::Race {
            hazard,
            space,
            lane,
            addr,
            len,
            first,
            earlier,
            atomic,
        } => {
            let text = program.text_for(earlier.slot, wave.lanes == 64);
            let pc = program.image_base + program.slot_at(earlier.slot).offset;
            let (here, there) = match space {
                // LDS is the workgroup's own: both waves are in it.
                Space::Lds => (
                    format!("wave {}", wave.id),
                    format!("wave {}", earlier.wave),
                ),
                Space::Global | Space::Scalar | Space::Scratch => {
                    let theirs = softgpu_interp::placement::group_id(groups, earlier.group as u64);
                    (
                        who(groups, group, group, wave.id),
                        who(groups, group, theirs, earlier.wave),
                    )
                }
            };
            let atomicity = if atomic {
                "one of them is atomic but the other is not"
            } else {
                "neither is atomic"
            };
            let offset = program.slot_at(earlier.slot).offset;
            // The other access's source line, when the code has them.
            let line = (program.code_object.debug.as_ref())
                .and_then(|d| d.frames(offset).into_iter().next())
                .map(|frame| format!(" at {frame}"))
                .unwrap_or_default();
            let why = format!(
                "racecheck: {} hazard on {}: this {len}-byte {} by {here}{} conflicts with a {} by {there} at pc {pc:#x} (code offset {offset:#x}){line}: `{text}`; {atomicity}, and no barrier orders them",
                hazard.name(),
                place(space, first),
                hazard.later(),
                lane_text(lane),
                hazard.earlier(),
            );
            (why, lane, global_address(space, addr))
        }
    }
}

fn place(space: Space, addr: u64) -> String {
    match space {
        Space::Lds => format!("LDS offset {addr:#x}"),
        Space::Global | Space::Scalar | Space::Scratch => format!("{space} memory at {addr:#x}"),
    }
}

fn lane_text(lane: Option<usize>) -> String {
    lane.map(|l| format!(" (lane {l})")).unwrap_or_default()
}

fn global_address(space: Space, addr: u64) -> Option<u64> {
    (space != Space::Lds).then_some(addr)
}

/// "wave 3", or "workgroup (1, 0, 0) wave 3" when the dispatch has more
/// than one workgroup.
fn who(groups: [u32; 3], own: [u32; 3], group: [u32; 3], wave: u32) -> String {
    let single = groups.iter().all(|&g| g == 1);
    if single && own == group {
        format!("wave {wave}")
    } else {
        let [x, y, z] = group;
        format!("workgroup ({x}, {y}, {z}) wave {wave}")
    }
}
