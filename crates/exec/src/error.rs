//! What a device operation can fail with.

use std::fmt;

use softgpu_arena::MemError;
use softgpu_interp::program::NoSuchKernel;

use crate::fault::Fault;

/// Anything a device operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// The kernel faulted; the report says where and why.
    #[error("{0}")]
    Fault(Box<Fault>),
    /// The device's code can be loaded and disassembled but not run yet.
    #[error("{0} code is decoded and disassembled but not executed yet")]
    NotExecuted(String),
    /// The code object could not be read or has nothing for the target.
    #[error(transparent)]
    CodeObject(#[from] softgpu_codeobj::Error),
    /// A device memory operation was refused.
    #[error("device memory: {0}")]
    Memory(#[from] MemError),
    /// [`Program::kernel`](softgpu_interp::program::Program::kernel) found no kernel of that name.
    #[error(transparent)]
    NoSuchKernel(#[from] NoSuchKernel),
    /// The explicit arguments do not match the kernel's metadata.
    #[error("kernel {kernel}: {why}")]
    BadArguments {
        /// The kernel's name.
        kernel: String,
        /// What does not match.
        why: String,
    },
    /// The launch breaks one of the device's or the kernel's limits;
    /// nothing ran.
    #[error("kernel {kernel}: bad launch: {why}")]
    BadLaunch {
        /// The kernel's name.
        kernel: String,
        /// What the launch asked for and the limit it broke.
        why: String,
        /// The rule the launch broke (what a GPU's packet processor
        /// reports it as).
        rule: LaunchRule,
    },
    /// A configuration value is invalid.
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
}

/// Which launch rule a refused dispatch broke. A GPU's command processor
/// tells these apart (each is its own queue exception), so runtimes
/// report each with its own status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchRule {
    /// A grid or workgroup size is zero, or the grid is too large.
    Shape,
    /// More work-items in a workgroup than the kernel allows, or not the
    /// size it requires.
    WorkgroupSize,
    /// The dispatch's CU mask leaves no compute unit to run on.
    ComputeUnits,
    /// More LDS (group segment) than a workgroup can have.
    GroupSegment,
    /// More scratch (private segment) per work-item than the hardware has.
    PrivateSegment,
    /// The kernel argument segment is missing, short or not readable.
    Kernarg,
    /// The kernel's code breaks its own descriptor: it names registers
    /// the descriptor does not give it (CDNA's VGPR split).
    CodeObject,
}

/// A setting given a value it cannot have: which setting, the value, and
/// why not.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{setting} = {value}: {reason}")]
pub struct ConfigError {
    setting: &'static str,
    value: String,
    reason: String,
}

impl ConfigError {
    /// The error of `setting` given `value`, refused because of `reason`.
    pub fn new(setting: &'static str, value: impl fmt::Display, reason: impl Into<String>) -> Self {
        ConfigError {
            setting,
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    /// The setting's name, as its setter is named (`threads`, `timeout`).
    pub fn setting(&self) -> &'static str {
        self.setting
    }

    /// The value refused, as text.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Why the value was refused.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}
