//! How to build a device: the execution [`Settings`] every device of a
//! runtime shares, and the [`DeviceConfig`] of one device (its processor,
//! memory and compute units, plus those settings).
//!
//! Both are built as wasmtime builds its `Config`: the fields are private,
//! each setter checks its value and returns `Result<&mut Self,
//! ConfigError>` (or `&mut Self` when no value is wrong), so a value that
//! exists is valid and no separate validation step is needed. The executor
//! never reads the environment: `softgpu-env` turns `SOFTGPU_*` variables
//! into these for the tools and C libraries.

use std::time::Duration;

use softgpu_interp::checks::{Checks, Schedule, DEFAULT_TIMEOUT};
use softgpu_interp::placement::Topology;
use softgpu_isa::Family;

use crate::error::ConfigError;
use crate::tier::JitMode;

/// Default wave instructions per dispatch before it counts as runaway:
/// 2^44 (1.8 × 10^13). At about 8 × 10^7 wave instructions per second per
/// host thread, even 256 threads need some 860 s to run that many, past the
/// default wall-clock limit ([`crate::DEFAULT_TIMEOUT`], 600 s), so by default the
/// watchdog ends a runaway kernel and the budget is a backstop that no
/// legitimate kernel reaches first. There is no separate per-wave budget:
/// one wave's instructions count towards the dispatch's like any other's.
pub const DEFAULT_DISPATCH_BUDGET: u64 = 1 << 44;

/// The default bound on the scratch one dispatch materialises: half of the
/// host's physical memory (4 GiB when it cannot be read).
pub fn default_scratch_limit() -> u64 {
    // SAFETY: sysconf only reads system configuration; any name is allowed.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && page > 0 {
        (pages as u64).saturating_mul(page as u64) / 2
    } else {
        4 << 30
    }
}

/// The one setting whose values depend on the build.
impl JitMode {
    /// Whether this build can run the mode: every mode but
    /// [`JitMode::Off`] needs the JIT tier ([`JitMode::BUILT`]).
    pub fn check(self) -> Result<JitMode, ConfigError> {
        if self == JitMode::Off || JitMode::BUILT {
            Ok(self)
        } else {
            Err(ConfigError::new(
                "jit",
                format_args!("{self:?}"),
                "this build leaves the JIT tier out (the `jit` cargo feature of softgpu, \
                 softgpu-runtime or softgpu-exec); use JitMode::Off",
            ))
        }
    }
}

/// How dispatches run: the settings every device of a runtime shares.
/// [`Settings::default`] has every default; each setter changes one.
///
/// ```
/// # use softgpu_exec::{Settings, Schedule};
/// let mut settings = Settings::new();
/// settings.threads(2)?.instruction_budget(1 << 30)?.schedule(Schedule::Seeded(7));
/// assert_eq!(settings.get_threads(), Some(2));
/// # Ok::<(), softgpu_exec::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    threads: Option<usize>,
    instruction_budget: u64,
    dynamic_stack_bytes: u32,
    checks: Checks,
    timeout: Duration,
    schedule: Schedule,
    scratch_limit: u64,
    jit: JitMode,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            threads: None,
            instruction_budget: DEFAULT_DISPATCH_BUDGET,
            dynamic_stack_bytes: 16 * 1024,
            checks: Checks::default(),
            timeout: DEFAULT_TIMEOUT,
            schedule: Schedule::InOrder,
            scratch_limit: default_scratch_limit(),
            jit: JitMode::default(),
        }
    }
}

impl Settings {
    /// Every setting at its default.
    pub fn new() -> Self {
        Settings::default()
    }

    /// Worker threads of each device (default: one per host core); at
    /// least one.
    pub fn threads(&mut self, threads: usize) -> Result<&mut Self, ConfigError> {
        if threads == 0 {
            return Err(ConfigError::new(
                "threads",
                threads,
                "a GPU needs at least one worker thread",
            ));
        }
        self.threads = Some(threads);
        Ok(self)
    }

    /// Wave instructions one dispatch may run, all its waves together,
    /// before it is stopped as a runaway (default
    /// [`DEFAULT_DISPATCH_BUDGET`]); positive.
    pub fn instruction_budget(&mut self, instructions: u64) -> Result<&mut Self, ConfigError> {
        if instructions == 0 {
            return Err(ConfigError::new(
                "instruction_budget",
                instructions,
                "the instruction budget must be positive",
            ));
        }
        self.instruction_budget = instructions;
        Ok(self)
    }

    /// Per-lane stack bytes added for kernels with a dynamic call stack
    /// (default 16 KiB).
    pub fn dynamic_stack_bytes(&mut self, bytes: u32) -> &mut Self {
        self.dynamic_stack_bytes = bytes;
        self
    }

    /// Opt-in sanitizers (default none).
    pub fn checks(&mut self, checks: Checks) -> &mut Self {
        self.checks = checks;
        self
    }

    /// Wall-clock limit of one dispatch (default [`DEFAULT_TIMEOUT`]);
    /// positive.
    pub fn timeout(&mut self, timeout: Duration) -> Result<&mut Self, ConfigError> {
        if timeout.is_zero() {
            return Err(ConfigError::new(
                "timeout",
                format_args!("{timeout:?}"),
                "the dispatch timeout must be positive",
            ));
        }
        self.timeout = timeout;
        Ok(self)
    }

    /// Wave and workgroup order (default in order).
    pub fn schedule(&mut self, schedule: Schedule) -> &mut Self {
        self.schedule = schedule;
        self
    }

    /// Bytes of private (scratch) memory one dispatch may materialise
    /// (default [`default_scratch_limit`]).
    pub fn scratch_limit(&mut self, bytes: u64) -> &mut Self {
        self.scratch_limit = bytes;
        self
    }

    /// Whether the JIT tier runs compiled blocks, and whether both tiers
    /// are compared (default on, or off in a build without the tier:
    /// [`JitMode::default`]); a mode the build cannot run is refused
    /// ([`JitMode::check`]).
    pub fn jit(&mut self, jit: JitMode) -> Result<&mut Self, ConfigError> {
        self.jit = jit.check()?;
        Ok(self)
    }

    /// Worker threads of each device; `None`: every host core.
    pub fn get_threads(&self) -> Option<usize> {
        self.threads
    }

    /// Wave instructions one dispatch may run.
    pub fn get_instruction_budget(&self) -> u64 {
        self.instruction_budget
    }

    /// Per-lane stack bytes added for a dynamic call stack.
    pub fn get_dynamic_stack_bytes(&self) -> u32 {
        self.dynamic_stack_bytes
    }

    /// The sanitizers dispatches start with.
    pub fn get_checks(&self) -> Checks {
        self.checks
    }

    /// Wall-clock limit of one dispatch.
    pub fn get_timeout(&self) -> Duration {
        self.timeout
    }

    /// Wave and workgroup order.
    pub fn get_schedule(&self) -> Schedule {
        self.schedule
    }

    /// Bytes of scratch one dispatch may materialise.
    pub fn get_scratch_limit(&self) -> u64 {
        self.scratch_limit
    }

    /// The JIT tier's mode.
    pub fn get_jit(&self) -> JitMode {
        self.jit
    }
}

/// How to build one device: the processor it emulates, its memory and
/// compute units, and the execution [`Settings`]. [`DeviceConfig::default`]
/// is a gfx1151 with 4 GiB and every default.
///
/// ```
/// # use softgpu_exec::{Device, DeviceConfig};
/// let mut config = DeviceConfig::new("gfx1100")?;
/// config.arena_bytes(64 << 20).settings_mut().threads(1)?;
/// let device = Device::new(&config).unwrap();
/// assert_eq!(device.target(), "gfx1100");
/// # Ok::<(), softgpu_exec::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceConfig {
    target: String,
    family: Family,
    arena_bytes: u64,
    topology: Topology,
    settings: Settings,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig::new(softgpu_isa::DEFAULT_TARGET).expect("the default target is in the table")
    }
}

impl DeviceConfig {
    /// A device emulating processor `target` (e.g. `gfx1151`) with 4 GiB
    /// of memory, the default topology and default settings; an error if
    /// the executor does not run `target`.
    pub fn new(target: &str) -> Result<Self, ConfigError> {
        let family = Family::of_target(target).ok_or_else(|| {
            ConfigError::new(
                "target",
                target,
                format!(
                    "not a processor softgpu emulates (supported: {})",
                    softgpu_isa::target::supported()
                ),
            )
        })?;
        Ok(DeviceConfig {
            target: target.into(),
            family,
            arena_bytes: 4 << 30,
            topology: Topology::default(),
            settings: Settings::default(),
        })
    }

    /// Bytes of device memory (ignored by [`crate::Device::with_arena`]).
    pub fn arena_bytes(&mut self, bytes: u64) -> &mut Self {
        self.arena_bytes = bytes;
        self
    }

    /// The compute units workgroups are placed on and the hardware IDs
    /// waves read (`softgpu_interp::placement`).
    pub fn topology(&mut self, topology: Topology) -> &mut Self {
        self.topology = topology;
        self
    }

    /// The execution settings, all at once.
    pub fn settings(&mut self, settings: Settings) -> &mut Self {
        self.settings = settings;
        self
    }

    /// The execution settings, to change one by one.
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// The processor the device emulates.
    pub fn get_target(&self) -> &str {
        &self.target
    }

    /// The family of [`DeviceConfig::get_target`].
    pub fn get_family(&self) -> Family {
        self.family
    }

    /// Bytes of device memory.
    pub fn get_arena_bytes(&self) -> u64 {
        self.arena_bytes
    }

    /// The compute units.
    pub fn get_topology(&self) -> Topology {
        self.topology
    }

    /// The execution settings.
    pub fn get_settings(&self) -> &Settings {
        &self.settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_a_setting_cannot_have_is_refused_naming_both() {
        let mut s = Settings::new();
        let e = s.threads(0).unwrap_err();
        assert_eq!((e.setting(), e.value()), ("threads", "0"));
        let e = s.instruction_budget(0).unwrap_err();
        assert_eq!(e.setting(), "instruction_budget");
        let e = s.timeout(Duration::ZERO).unwrap_err();
        assert_eq!(e.setting(), "timeout");
        assert_eq!(s, Settings::default(), "a refused value changes nothing");
        let e = DeviceConfig::new("gfx9000").unwrap_err();
        assert_eq!((e.setting(), e.value()), ("target", "gfx9000"));
        assert!(e
            .to_string()
            .starts_with("target = gfx9000: not a processor"));
    }

    #[test]
    fn setters_chain_and_getters_read_them_back() {
        let mut s = Settings::new();
        s.threads(3)
            .unwrap()
            .timeout(Duration::from_secs(2))
            .unwrap()
            .jit(JitMode::Off)
            .unwrap()
            .scratch_limit(4096);
        assert_eq!(s.get_threads(), Some(3));
        assert_eq!(s.get_timeout(), Duration::from_secs(2));
        assert_eq!((s.get_jit(), s.get_scratch_limit()), (JitMode::Off, 4096));
        let mut d = DeviceConfig::new("gfx1100").unwrap();
        d.arena_bytes(1 << 20).settings(s);
        assert_eq!(d.get_settings(), &s);
        assert_eq!(d.get_family(), Family::Gfx11);
    }
}
