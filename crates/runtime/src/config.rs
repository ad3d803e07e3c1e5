//! How to build a runtime: its GPUs, the executor's settings, where traces
//! and captures go. A program sets these in code; the runtime never reads
//! the environment (`softgpu-env` builds a [`Config`] from the `SOFTGPU_*`
//! and `HSA_*` variables for the C libraries and tools).

use std::path::PathBuf;
use std::time::Duration;

use softgpu_exec::arena::ArenaOptions;
use softgpu_exec::JitMode;
use softgpu_exec::{Checks, Schedule, DEFAULT_DISPATCH_BUDGET, DEFAULT_TIMEOUT};

use crate::error::{invalid, Result};
use crate::profile::{Profile, DEFAULT_PROFILE};

/// The most GPU agents one runtime may have.
pub const MAX_GPU_AGENTS: usize = 16;

/// Everything a runtime is built from. [`Config::default`] is one
/// gfx1151 with every default; the builder methods change one thing each.
///
/// ```
/// # use softgpu_runtime::{Config, profile::Profile};
/// let config = Config::default()
///     .devices(vec![Profile::built_in("gfx1100")?, Profile::built_in("gfx1151")?])
///     .threads(2)
///     .instruction_budget(1 << 30);
/// assert_eq!(config.devices.len(), 2);
/// # Ok::<(), softgpu_runtime::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    /// The GPU agents in order, each with its profile (1 to
    /// [`MAX_GPU_AGENTS`]). Device memory is the sum of their memories;
    /// system and kernarg memory follow the first.
    pub devices: Vec<Profile>,
    /// Worker threads of each GPU; `None` uses every host core.
    pub threads: Option<usize>,
    /// Wave instructions one dispatch may run before it is stopped as a
    /// runaway.
    pub instruction_budget: u64,
    /// Wall-clock limit of one dispatch.
    pub timeout: Duration,
    /// Opt-in sanitizers for every dispatch (a device can change them
    /// later).
    pub checks: Checks,
    /// Wave and workgroup order.
    pub schedule: Schedule,
    /// Bytes of scratch one dispatch may materialise.
    pub scratch_limit: u64,
    /// Whether compiled blocks run (and whether both tiers are compared);
    /// by default on, or off in a build without the JIT tier.
    pub jit: JitMode,
    /// Freed bytes held back from reuse and whether allocations record the
    /// host call stack.
    pub arena: ArenaOptions,
    /// Where the JSON-lines event trace goes, if anywhere.
    pub trace: Option<PathBuf>,
    /// How many of the latest trace events to keep in memory (0: none),
    /// for [`crate::trace::Tracer::snapshot`].
    pub trace_ring: usize,
    /// How many of the latest dispatches' statistics to keep in memory
    /// (0: none), with their occupancy and estimated time on the real
    /// part; every dispatch then counts its instructions
    /// (`crate::statistics`).
    pub dispatch_statistics: usize,
    /// The folder dispatch captures go to, if any.
    pub capture: Option<PathBuf>,
    /// CU masks every new queue of a GPU starts with, in ROCr's
    /// `HSA_CU_MASK` syntax.
    pub cu_mask: Option<String>,
    /// New queues start with every unit on, whatever `cu_mask` says.
    pub cu_mask_skip_init: bool,
    /// The check report (`softgpu check`): every error of every launch
    /// and the leaks at exit, printed and written as JSON lines
    /// (`crate::report`). `None`: errors reach the program only through
    /// the API's return values.
    pub report: Option<Report>,
}

/// What a checked run reports, and where.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The JSON-lines file each error and leak is appended to.
    pub file: Option<PathBuf>,
    /// Errors printed on stderr at most (`None`: every one).
    pub print_limit: Option<u64>,
    /// leakcheck: the program's allocations still live when the runtime
    /// ends (the last `hsa_shut_down`, `hipDeviceReset`, process exit).
    pub leaks: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            devices: vec![Profile::built_in(DEFAULT_PROFILE).expect("the default profile parses")],
            threads: None,
            instruction_budget: DEFAULT_DISPATCH_BUDGET,
            timeout: DEFAULT_TIMEOUT,
            checks: Checks::default(),
            schedule: Schedule::InOrder,
            scratch_limit: softgpu_exec::default_scratch_limit(),
            jit: JitMode::default(),
            arena: ArenaOptions::default(),
            trace: None,
            trace_ring: 0,
            dispatch_statistics: 0,
            capture: None,
            cu_mask: None,
            cu_mask_skip_init: false,
            report: None,
        }
    }
}

impl Config {
    /// The GPUs, each with its profile.
    pub fn devices(mut self, devices: Vec<Profile>) -> Config {
        self.devices = devices;
        self
    }

    /// Worker threads per GPU.
    pub fn threads(mut self, threads: usize) -> Config {
        self.threads = Some(threads);
        self
    }

    /// Wave instructions a dispatch may run.
    pub fn instruction_budget(mut self, instructions: u64) -> Config {
        self.instruction_budget = instructions;
        self
    }

    /// Wall-clock limit of a dispatch.
    pub fn timeout(mut self, timeout: Duration) -> Config {
        self.timeout = timeout;
        self
    }

    /// Sanitizers on for every dispatch.
    pub fn checks(mut self, checks: Checks) -> Config {
        self.checks = checks;
        self
    }

    /// Wave and workgroup order.
    pub fn schedule(mut self, schedule: Schedule) -> Config {
        self.schedule = schedule;
        self
    }

    /// The JIT tier's mode.
    pub fn jit(mut self, jit: JitMode) -> Config {
        self.jit = jit;
        self
    }

    /// Writes the event trace to `path`.
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Config {
        self.trace = Some(path.into());
        self
    }

    /// Keeps the last `events` trace events in memory.
    pub fn trace_ring(mut self, events: usize) -> Config {
        self.trace_ring = events;
        self
    }

    /// Keeps the statistics of the last `dispatches` dispatches, each with
    /// its occupancy and estimated time on the real part.
    pub fn dispatch_statistics(mut self, dispatches: usize) -> Config {
        self.dispatch_statistics = dispatches;
        self
    }

    /// Writes dispatch captures under `folder`.
    pub fn capture(mut self, folder: impl Into<PathBuf>) -> Config {
        self.capture = Some(folder.into());
        self
    }

    /// Reports every error and, with `leaks`, the leaks (see
    /// [`Config::report`]).
    pub fn report(mut self, report: Report) -> Config {
        self.report = Some(report);
        self
    }

    /// Records the host call stack of each allocation, for fault reports.
    pub fn backtraces(mut self, on: bool) -> Config {
        self.arena.backtraces = on;
        self
    }

    /// Checks the settings together; the error names the one at fault.
    pub fn validate(&self) -> Result<()> {
        if self.devices.is_empty() || self.devices.len() > MAX_GPU_AGENTS {
            return Err(invalid(format!(
                "a runtime has 1 to {MAX_GPU_AGENTS} GPUs, not {}",
                self.devices.len()
            )));
        }
        if self.instruction_budget == 0 {
            return Err(invalid("the instruction budget must be positive"));
        }
        if self.timeout.is_zero() {
            return Err(invalid("the dispatch timeout must be positive"));
        }
        if self.threads == Some(0) {
            return Err(invalid("a GPU needs at least one worker thread"));
        }
        Ok(())
    }

    /// The executor's settings for GPU `profile`.
    pub(crate) fn device_config(&self, profile: &Profile) -> softgpu_exec::DeviceConfig {
        softgpu_exec::DeviceConfig {
            target: profile.name.clone(),
            threads: self.threads,
            instruction_budget: self.instruction_budget,
            checks: self.checks,
            timeout: self.timeout,
            schedule: self.schedule,
            scratch_limit: self.scratch_limit,
            jit: self.jit,
            topology: profile.topology(),
            ..Default::default()
        }
    }
}
