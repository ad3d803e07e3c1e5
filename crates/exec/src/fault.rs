//! Fault reports: what stopped a dispatch, said so a developer can act.

use std::fmt;

use crate::dispatch::Plan;
use crate::ops::Trap;
use crate::wave::Wave;

/// Why and where a dispatch stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub kernel: String,
    /// What went wrong, as a category runtimes can map to their own codes.
    pub kind: FaultKind,
    /// What went wrong, in a sentence.
    pub reason: String,
    /// Where it went wrong, when an instruction did it.
    pub site: Option<Site>,
}

/// The category of a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// The instruction a fault happened at.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub workgroup: [u32; 3],
    pub wave: u32,
    /// The lane whose access faulted, when one lane is to blame.
    pub lane: Option<usize>,
    /// Lanes active when the instruction ran.
    pub exec: u64,
    /// Device address of the instruction, and its offset in the code object.
    pub pc: u64,
    pub offset: u64,
    pub instruction: String,
    pub bytes: String,
    /// The memory address involved, if any.
    pub address: Option<u64>,
}

impl Fault {
    /// A fault before any instruction ran.
    pub fn setup(kernel: &str, reason: String) -> Fault {
        Fault {
            kernel: kernel.to_string(),
            kind: FaultKind::Other,
            reason,
            site: None,
        }
    }

    pub(crate) fn from_trap(plan: &Plan, group: [u32; 3], wave: &Wave, trap: Trap) -> Fault {
        let program = plan.program;
        let slot = program.slot_at(wave.pc);
        let instruction = program.text_for(wave.pc, wave.lanes == 64);
        let bytes = program.bytes_of(wave.pc);
        let name = instruction
            .split_whitespace()
            .next()
            .unwrap_or("?")
            .to_string();
        let kind = match &trap {
            Trap::Memory { .. } => FaultKind::Memory,
            Trap::Unsupported | Trap::Illegal(_) => FaultKind::Instruction,
            Trap::Trap(_) => FaultKind::Trap,
            Trap::BadJump(_) => FaultKind::BadJump,
            Trap::Budget(_) => FaultKind::Budget,
            Trap::Uninitialized { .. } => FaultKind::Uninitialized,
            Trap::Other(_) => FaultKind::Other,
        };
        let (reason, lane, address) = match trap {
            Trap::Memory { space, lane, addr, len } => {
                (format!("{space} memory access of {len} bytes at {addr:#x} is outside what the kernel may touch"), lane, Some(addr))
            }
            Trap::Unsupported => (
                format!("unsupported instruction {name} ({bytes}) at {:#x} in {}", program.image_base + slot.offset, plan.kernel.name),
                None,
                None,
            ),
            Trap::Illegal(_) => (
                format!("illegal instruction ({bytes}): {}", slot.illegal.clone().unwrap_or_default()),
                None,
                None,
            ),
            Trap::Trap(id) => (format!("s_trap {id} (the kernel trapped, e.g. __builtin_trap or an assert)"), None, None),
            Trap::BadJump(addr) => (format!("jump to {addr:#x}, which is not an instruction of this code object"), None, Some(addr)),
            Trap::Budget(n) => (format!("wave exceeded its instruction budget of {n} (runaway kernel? raise it with SOFTGPU_BUDGET)"), None, None),
            Trap::Uninitialized { space, lane, addr, len, first } => {
                let whose = lane.map(|l| format!("lane {l} ")).unwrap_or_default();
                (format!("initcheck: {whose}read {len} bytes of {space} at offset {addr:#x}, but the byte at {first:#x} was never written since the wave started"), lane, Some(addr))
            }
            Trap::Other(why) => (why, None, None),
        };
        Fault {
            kernel: plan.kernel.name.clone(),
            kind,
            reason,
            site: Some(Site {
                workgroup: group,
                wave: wave.id,
                lane,
                exec: wave.exec(),
                pc: program.image_base + slot.offset,
                offset: slot.offset,
                instruction,
                bytes,
                address,
            }),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel {} faulted: {}", self.kernel, self.reason)?;
        if let Some(s) = &self.site {
            let [x, y, z] = s.workgroup;
            write!(
                f,
                "\n  at pc {:#x} (code offset {:#x}): {}  [{}]",
                s.pc, s.offset, s.instruction, s.bytes
            )?;
            write!(f, "\n  workgroup ({x}, {y}, {z}), wave {}", s.wave)?;
            match s.lane {
                Some(l) => write!(f, ", lane {l}")?,
                None => write!(f, ", active lanes {:#x}", s.exec)?,
            }
            if let Some(a) = s.address {
                write!(f, "\n  address {a:#x}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Fault {}
