//! How to build a runtime: its GPUs, the executor's settings, where traces
//! and captures go. A program sets these in code; the runtime never reads
//! the environment (`softgpu-env` builds a [`Config`] from the `SOFTGPU_*`
//! and `HSA_*` variables for the C libraries and tools).
//!
//! As wasmtime's `Config`: the fields are private and each setter checks
//! its value, returning `Result<&mut Self, ConfigError>` (or `&mut Self`
//! when no value is wrong), so a `Config` that exists is valid. The
//! executor's settings are one [`Settings`], shared by every GPU.

use std::path::PathBuf;

use softgpu_exec::arena::ArenaOptions;
use softgpu_exec::{ConfigError, DeviceConfig, Settings};

use crate::profile::{Profile, DEFAULT_PROFILE};

/// The most GPU agents one runtime may have.
pub const MAX_GPU_AGENTS: usize = 16;

/// Everything a runtime is built from. [`Config::default`] is one
/// gfx1151 with every default; each setter changes one thing.
///
/// ```
/// # use softgpu_runtime::{Config, profile::Profile};
/// let mut config = Config::new();
/// config
///     .devices(vec![Profile::built_in("gfx1100")?, Profile::built_in("gfx1151")?])?
///     .trace_ring(64)
///     .settings_mut()
///     .threads(2)?
///     .instruction_budget(1 << 30)?;
/// assert_eq!(config.get_devices().len(), 2);
/// assert_eq!(config.get_settings().get_threads(), Some(2));
/// # Ok::<(), softgpu_runtime::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    /// The GPU agents in order (1 to [`MAX_GPU_AGENTS`]).
    pub(crate) devices: Vec<Profile>,
    /// How every GPU runs dispatches.
    pub(crate) settings: Settings,
    pub(crate) arena: ArenaOptions,
    pub(crate) trace: Option<PathBuf>,
    pub(crate) trace_ring: usize,
    pub(crate) dispatch_statistics: usize,
    pub(crate) capture: Option<PathBuf>,
    pub(crate) cu_mask: Option<String>,
    pub(crate) cu_mask_skip_init: bool,
    pub(crate) report: Option<Report>,
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
            settings: Settings::default(),
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
    /// One gfx1151 with every default.
    pub fn new() -> Config {
        Config::default()
    }

    /// The GPU agents in order, each with its profile: 1 to
    /// [`MAX_GPU_AGENTS`]. Device memory is the sum of their memories;
    /// system and kernarg memory follow the first.
    pub fn devices(&mut self, devices: Vec<Profile>) -> Result<&mut Self, ConfigError> {
        if devices.is_empty() || devices.len() > MAX_GPU_AGENTS {
            return Err(ConfigError::new(
                "devices",
                format_args!("{} GPUs", devices.len()),
                format!("a runtime has 1 to {MAX_GPU_AGENTS} GPUs"),
            ));
        }
        self.devices = devices;
        Ok(self)
    }

    /// How every GPU runs dispatches (threads, instruction budget, timeout,
    /// sanitizers, schedule, scratch limit, JIT), all at once. The
    /// sanitizers are those every dispatch starts with; a device can
    /// change them later.
    pub fn settings(&mut self, settings: Settings) -> &mut Self {
        self.settings = settings;
        self
    }

    /// The executor's settings, to change one by one.
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// Writes the JSON-lines event trace to `path`.
    pub fn trace(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.trace = Some(path.into());
        self
    }

    /// Keeps the last `events` trace events in memory (0: none), for
    /// [`crate::trace::Tracer::snapshot`].
    pub fn trace_ring(&mut self, events: usize) -> &mut Self {
        self.trace_ring = events;
        self
    }

    /// Keeps the statistics of the last `dispatches` dispatches (0: none),
    /// each with its occupancy and estimated time on the real part; every
    /// dispatch then counts its instructions (`crate::statistics`).
    pub fn dispatch_statistics(&mut self, dispatches: usize) -> &mut Self {
        self.dispatch_statistics = dispatches;
        self
    }

    /// Writes dispatch captures under `folder`.
    pub fn capture(&mut self, folder: impl Into<PathBuf>) -> &mut Self {
        self.capture = Some(folder.into());
        self
    }

    /// CU masks every new queue of a GPU starts with, in ROCr's
    /// `HSA_CU_MASK` syntax (a malformed part is reported on stderr and
    /// skipped when the runtime starts, as ROCr does).
    pub fn cu_mask(&mut self, masks: impl Into<String>) -> &mut Self {
        self.cu_mask = Some(masks.into());
        self
    }

    /// Whether new queues start with every unit on, whatever
    /// [`Config::cu_mask`] says.
    pub fn cu_mask_skip_init(&mut self, skip: bool) -> &mut Self {
        self.cu_mask_skip_init = skip;
        self
    }

    /// The check report (`softgpu check`): every error of every launch
    /// and, with `leaks`, the leaks at exit, printed and written as JSON
    /// lines (`crate::report`). Without one, errors reach the program only
    /// through the API's return values.
    pub fn report(&mut self, report: Report) -> &mut Self {
        self.report = Some(report);
        self
    }

    /// How the arena keeps its records: quarantine, backtraces, windows.
    pub fn arena(&mut self, options: ArenaOptions) -> &mut Self {
        self.arena = options;
        self
    }

    /// Records the host call stack of each allocation, for fault reports.
    pub fn backtraces(&mut self, on: bool) -> &mut Self {
        self.arena.backtraces = on;
        self
    }

    /// Freed bytes held back from reuse (0: none).
    pub fn quarantine_bytes(&mut self, bytes: u64) -> &mut Self {
        self.arena.quarantine_bytes = bytes;
        self
    }

    /// The GPU agents' profiles, in order.
    pub fn get_devices(&self) -> &[Profile] {
        &self.devices
    }

    /// The executor's settings.
    pub fn get_settings(&self) -> &Settings {
        &self.settings
    }

    /// The arena's options (quarantine, backtraces).
    pub fn get_arena(&self) -> ArenaOptions {
        self.arena
    }

    /// The event trace's file, if any.
    pub fn get_trace(&self) -> Option<&std::path::Path> {
        self.trace.as_deref()
    }

    /// Trace events kept in memory.
    pub fn get_trace_ring(&self) -> usize {
        self.trace_ring
    }

    /// Dispatches whose statistics are kept.
    pub fn get_dispatch_statistics(&self) -> usize {
        self.dispatch_statistics
    }

    /// The captures' folder, if any.
    pub fn get_capture(&self) -> Option<&std::path::Path> {
        self.capture.as_deref()
    }

    /// The CU masks new queues start with, if any.
    pub fn get_cu_mask(&self) -> Option<&str> {
        self.cu_mask.as_deref()
    }

    /// Whether new queues ignore the CU masks.
    pub fn get_cu_mask_skip_init(&self) -> bool {
        self.cu_mask_skip_init
    }

    /// The check report, if one is on.
    pub fn get_report(&self) -> Option<&Report> {
        self.report.as_ref()
    }

    /// The executor's configuration of GPU `profile`: its processor and
    /// compute units, and the shared settings.
    pub(crate) fn device_config(&self, profile: &Profile) -> Result<DeviceConfig, ConfigError> {
        let mut config = DeviceConfig::new(&profile.name)?;
        config.topology(profile.topology()).settings(self.settings);
        Ok(config)
    }
}
