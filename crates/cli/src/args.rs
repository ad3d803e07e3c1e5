//! `softgpu run`: kernel arguments from the command line, the dispatch, and
//! writing results back; the launch part is shared with `softgpu hotspots`.

use softgpu_codeobj::{read_file, MAX_FILE_SIZE};
use softgpu_isa::DEFAULT_TARGET;
use std::path::{Path, PathBuf};

use std::time::Duration;

use softgpu_exec::{
    Arg, Buffer, Checks, Device, DispatchCounters, DispatchDesc, DispatchError, DispatchOutcome,
    Launch, Program, Schedule,
};

use crate::services::Provided;
use crate::CliError;

/// One command-line kernel argument.
enum CliArg {
    In(PathBuf),
    Out(PathBuf, u64),
    InOut(PathBuf),
    Value(Arg),
}

fn parse_args(words: &[String]) -> Result<Vec<CliArg>, String> {
    let mut out = Vec::new();
    let mut it = words.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |what: &str| format!("{flag} {value}: not a valid {what}");
        out.push(match flag.as_str() {
            "--in" => CliArg::In(value.into()),
            "--inout" => CliArg::InOut(value.into()),
            "--out" => {
                let (path, bytes) = value
                    .rsplit_once(':')
                    .ok_or_else(|| format!("--out {value}: expected PATH:BYTES"))?;
                CliArg::Out(path.into(), bytes.parse().map_err(|_| num("byte count"))?)
            }
            "--i32" => CliArg::Value(Arg::I32(value.parse().map_err(|_| num("i32"))?)),
            "--u32" => CliArg::Value(Arg::U32(
                parse_u64(value)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| num("u32"))?,
            )),
            "--i64" => CliArg::Value(Arg::I64(value.parse().map_err(|_| num("i64"))?)),
            "--u64" => CliArg::Value(Arg::U64(parse_u64(value).ok_or_else(|| num("u64"))?)),
            "--f32" => CliArg::Value(Arg::F32(value.parse().map_err(|_| num("f32"))?)),
            "--f64" => CliArg::Value(Arg::F64(value.parse().map_err(|_| num("f64"))?)),
            other => return Err(unknown_option(other)),
        });
    }
    Ok(out)
}

/// The options `run` and `hotspots` take, and the kernel-argument kinds:
/// what a misspelled option is compared with.
const OPTIONS: &[&str] = &[
    "--kernel",
    "--grid",
    "--block",
    "--dynamic-lds",
    "--target",
    "--check",
    "--timeout",
    "--stats",
    "--schedule-seeds",
    "--top",
    "--json",
    "--in",
    "--out",
    "--inout",
    "--i32",
    "--u32",
    "--i64",
    "--u64",
    "--f32",
    "--f64",
];

/// The error for a word that is not an option `run` or `hotspots` knows,
/// naming the nearest one.
fn unknown_option(word: &str) -> String {
    // Misspellings keep the start (`--float` means `--f32`, not the
    // equally distant `--block`): the longest shared start after `--`
    // first, then the fewest edits.
    let shared = |o: &str| {
        let (a, b) = (word.trim_start_matches('-'), o.trim_start_matches('-'));
        a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
    };
    let nearest = (OPTIONS.iter())
        .min_by_key(|o| (std::cmp::Reverse(shared(o)), strsim::levenshtein(word, o)))
        .expect("options exist");
    let kinds = "kernel arguments are --in PATH, --out PATH:BYTES, --inout PATH, --i32/--u32/--i64/--u64/--f32/--f64 V";
    format!("unknown option {word} (did you mean {nearest}?); {kinds}")
}

/// A dispatch's failure as the CLI's error: a kernel fault, arguments the
/// kernel does not take (usage), or anything else.
pub fn dispatch_error(e: DispatchError) -> CliError {
    match e {
        DispatchError::Fault(_) => CliError::Fault(e.to_string()),
        DispatchError::BadArguments { .. } | DispatchError::NoSuchKernel(_) => {
            CliError::Usage(e.to_string())
        }
        _ => CliError::Dispatch(e),
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parses `X[,Y[,Z]]`.
pub fn dims(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{what} {s}: expected X[,Y[,Z]]"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p
            .trim()
            .parse()
            .map_err(|_| format!("--{what} {s}: {p} is not a positive number"))?;
    }
    Ok(d)
}

/// Removes every `flag` from `words`, saying whether there was one: clap
/// stops parsing the command's own options at the first kernel argument,
/// so a switch written after the arguments arrives among them.
pub fn take_switch(words: &mut Vec<String>, flag: &str) -> bool {
    let before = words.len();
    words.retain(|w| w != flag);
    words.len() != before
}

/// Removes `flag VALUE` from `words` and returns VALUE (see [`take_switch`]).
pub fn take_value(words: &mut Vec<String>, flag: &str) -> Result<Option<String>, String> {
    let Some(at) = words.iter().position(|w| w == flag) else {
        return Ok(None);
    };
    if at + 1 == words.len() {
        return Err(format!("{flag} needs a value"));
    }
    let value = words.remove(at + 1);
    words.remove(at);
    Ok(Some(value))
}

/// The launch options `run` and `hotspots` share, as clap parses them.
#[derive(clap::Args)]
pub struct LaunchArgs {
    /// A code object, a clang offload bundle, or OpenCL C (.cl) / HIP
    /// (.hip) source.
    file: PathBuf,
    /// The kernel to run (its name in the code object).
    #[arg(long)]
    kernel: Option<String>,
    /// Workgroups per dimension: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    grid: String,
    /// Work-items per workgroup: X[,Y[,Z]].
    #[arg(long, default_value = "64")]
    block: String,
    /// Bytes of dynamic LDS.
    #[arg(long, default_value_t = 0)]
    dynamic_lds: u32,
    /// Target processor of the emulated device (default: a code object's
    /// own; for a bundle, its gfx1151 entry or else its first one softgpu
    /// runs; gfx1151 for source).
    #[arg(long)]
    target: Option<String>,
    /// Sanitizers to run the kernel under: a comma-separated list of init,
    /// race, sync, all or none (default: SOFTGPU_CHECK).
    #[arg(long, value_name = "LIST")]
    check: Option<String>,
    /// Wall-clock limit of the dispatch in seconds (default:
    /// SOFTGPU_TIMEOUT, else 600).
    #[arg(long, value_name = "SECS")]
    timeout: Option<String>,
    /// Kernel arguments, in declaration order.
    #[arg(trailing_var_arg = true, num_args = 0..)]
    args: Vec<String>,
}

impl LaunchArgs {
    pub fn spec(&self) -> Result<LaunchSpec<'_>, CliError> {
        // An option clap did not know went to the kernel arguments, and
        // with it what followed (`--kernal K` leaves --kernel unset): name
        // it as the unknown option it is.
        let kernel = match &self.kernel {
            Some(k) => k,
            None => {
                let unknown = (self.args.iter())
                    .find(|w| w.starts_with("--") && !OPTIONS.contains(&w.as_str()));
                return Err(CliError::Usage(match unknown {
                    Some(word) => unknown_option(word),
                    None => "--kernel NAME is required".into(),
                }));
            }
        };
        let mut device = DeviceOptions::default();
        if let Some(list) = &self.check {
            device.checks = Some(checks(list)?);
        }
        if let Some(secs) = &self.timeout {
            device.timeout = Some(timeout(secs)?);
        }
        Ok(LaunchSpec {
            file: &self.file,
            kernel,
            grid: &self.grid,
            block: &self.block,
            dynamic_lds: self.dynamic_lds,
            target: self.target.as_deref(),
            words: &self.args,
            device,
        })
    }
}

/// What the command line sets of the device's debugging options; None
/// leaves it to the environment (`SOFTGPU_CHECK`, `SOFTGPU_TIMEOUT`, …).
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceOptions {
    pub checks: Option<Checks>,
    pub timeout: Option<Duration>,
    pub threads: Option<usize>,
    pub schedule: Option<Schedule>,
}

impl DeviceOptions {
    /// Takes `--check LIST` and `--timeout SECS` written after the kernel
    /// arguments out of `words` (see [`take_switch`]).
    pub fn take_from(&mut self, words: &mut Vec<String>) -> Result<(), String> {
        if let Some(list) = take_value(words, "--check")? {
            self.checks = Some(checks(&list)?);
        }
        if let Some(secs) = take_value(words, "--timeout")? {
            self.timeout = Some(timeout(&secs)?);
        }
        Ok(())
    }
}

fn checks(list: &str) -> Result<Checks, String> {
    Checks::parse(list).map_err(|e| format!("--check {list}: {e}"))
}

fn timeout(secs: &str) -> Result<Duration, String> {
    secs.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("--timeout {secs}: not a positive number of seconds"))
}

/// A kernel launch as `run` and `hotspots` take it from the command line.
#[derive(Clone, Copy)]
pub struct LaunchSpec<'a> {
    pub file: &'a Path,
    pub kernel: &'a str,
    /// `X[,Y[,Z]]` workgroups.
    pub grid: &'a str,
    /// `X[,Y[,Z]]` work-items per workgroup.
    pub block: &'a str,
    pub dynamic_lds: u32,
    /// `--target`: None follows the code object ([`device_target`]).
    pub target: Option<&'a str>,
    /// Kernel-argument words (`--in PATH`, `--i32 V`, …), the command's own
    /// trailing options already taken out.
    pub words: &'a [String],
    pub device: DeviceOptions,
}

/// A loaded program with its kernel arguments in device memory, ready to
/// dispatch.
pub struct Prepared {
    pub device: Device,
    pub program: Program,
    pub launch: Launch,
    pub args: Vec<Arg>,
    /// Buffers written back to files after the dispatch (`--out`, `--inout`).
    pub outputs: Vec<(PathBuf, Buffer)>,
}

/// Parses the launch, loads (or compiles) the file and places the kernel
/// arguments.
pub fn prepare(spec: &LaunchSpec) -> Result<Prepared, CliError> {
    let (grid, block) = (dims(spec.grid, "grid"), dims(spec.block, "block"));
    let (grid, block) = (
        grid.map_err(CliError::Usage)?,
        block.map_err(CliError::Usage)?,
    );
    let cli_args = parse_args(spec.words).map_err(CliError::Usage)?;
    let bytes = code_object(spec.file, spec.target.unwrap_or(DEFAULT_TARGET))?;
    let target = device_target(spec.file, &bytes, spec.target)?;
    // The environment's settings, then the command line's.
    let mut config = softgpu_env::device_config(&target).map_err(|e| e.to_string())?;
    let d = &spec.device;
    let settings = config.settings_mut();
    if let Some(checks) = d.checks {
        settings.checks(checks);
    }
    if let Some(timeout) = d.timeout {
        settings.timeout(timeout).map_err(|e| e.to_string())?;
    }
    if let Some(threads) = d.threads {
        settings.threads(threads).map_err(|e| e.to_string())?;
    }
    if let Some(schedule) = d.schedule {
        settings.schedule(schedule);
    }
    let device = Device::new(&config).map_err(|e| e.to_string())?;
    let program = device
        .load(&bytes)
        .map_err(|e| format!("{}: {e}", spec.file.display()))?;
    let mut args = Vec::new();
    let mut outputs: Vec<(PathBuf, Buffer)> = Vec::new();
    for a in cli_args {
        let read = |p: &Path| read_file(p, MAX_FILE_SIZE).map_err(|e| e.to_string());
        args.push(match a {
            CliArg::In(p) => Arg::Buffer(device.alloc_from(&read(&p)?).map_err(|e| e.to_string())?),
            CliArg::InOut(p) => {
                let b = device.alloc_from(&read(&p)?).map_err(|e| e.to_string())?;
                outputs.push((p, b));
                Arg::Buffer(b)
            }
            CliArg::Out(p, n) => {
                let b = device.alloc_zeroed(n).map_err(|e| e.to_string())?;
                outputs.push((p, b));
                Arg::Buffer(b)
            }
            CliArg::Value(v) => v,
        });
    }
    let launch = Launch {
        grid,
        block,
        dynamic_lds: spec.dynamic_lds,
    };
    Ok(Prepared {
        device,
        program,
        launch,
        args,
        outputs,
    })
}

/// The processor to emulate for the code object `bytes` from `file`:
/// `given` (`--target`), else the object's own; for an offload bundle, its
/// default target's entry, else the first entry for a processor softgpu
/// runs.
pub fn device_target(file: &Path, bytes: &[u8], given: Option<&str>) -> Result<String, String> {
    if let Some(target) = given {
        return Ok(target.to_string());
    }
    let runs = |p: &str| softgpu_isa::Family::of_target(p).is_some_and(|f| f.executed());
    softgpu_codeobj::target_of(bytes, DEFAULT_TARGET, runs)
        .map_err(|e| format!("{}: {e}", file.display()))
}

/// The code object in `file`, compiled for `target` first if it is source.
fn code_object(file: &Path, target: &str) -> Result<Vec<u8>, String> {
    if !crate::compile::is_source(file) {
        return read_file(file, MAX_FILE_SIZE).map_err(|e| e.to_string());
    }
    // OpenCL keeps argument names in the metadata only when asked, and
    // errors about arguments should name them.
    let options = match file.extension().and_then(|e| e.to_str()) {
        Some("cl") => vec!["-cl-kernel-arg-info".to_string()],
        _ => Vec::new(),
    };
    crate::compile::compile_source(
        file,
        &crate::compile::Options {
            target,
            defines: &[],
            include_dirs: &[],
            options: &options,
        },
    )
}

impl Prepared {
    /// Runs `kernel` over the prepared launch and arguments, counting every
    /// instruction's executions if `hotspots`.
    pub fn dispatch(&self, kernel: &str, hotspots: bool) -> Result<DispatchOutcome, CliError> {
        let kernel = self
            .program
            .kernel(kernel)
            .map_err(|e| dispatch_error(e.into()))?;
        // Device printf: the buffers the kernel's hidden arguments name.
        let provided = Provided::for_kernel(&self.device, &self.program, kernel)?;
        let desc = DispatchDesc {
            hotspots,
            services: provided.services,
            ..DispatchDesc::launch(&self.program, kernel, &self.launch, &self.args)
        };
        let outcome = self.device.dispatch(&desc);
        provided.finish();
        outcome.map_err(dispatch_error)
    }

    /// The occupancy `kernel` has on the real part at this launch's
    /// workgroup size and dynamic LDS: (work-items per workgroup, it).
    pub fn occupancy(
        &self,
        kernel: &str,
    ) -> Result<(u32, softgpu_runtime::occupancy::Occupancy), String> {
        let k = self.program.kernel(kernel).map_err(|e| e.to_string())?;
        let size = self.launch.block.iter().product::<u32>();
        let target = self.device.target();
        let o = crate::inspect::kernel_occupancy(target, k, size, self.launch.dynamic_lds)?;
        Ok((size, o))
    }

    /// The estimated time on the real part of the dispatch of `kernel`
    /// that ran as `outcome` says (it must have counted its hotspots).
    pub fn estimate(
        &self,
        kernel: &str,
        outcome: &DispatchOutcome,
    ) -> Result<Option<softgpu_runtime::estimate::Estimate>, String> {
        let k = self.program.kernel(kernel).map_err(|e| e.to_string())?;
        let counts = outcome
            .hotspots
            .as_ref()
            .ok_or("the dispatch did not count its hotspots, so it cannot be estimated")?;
        let profile = crate::inspect::part_profile(self.device.target())?;
        Ok(softgpu_runtime::estimate::of_dispatch(
            &profile,
            &self.program,
            k,
            self.launch.block,
            self.launch.dynamic_lds,
            &outcome.counters,
            counts,
        ))
    }

    /// Writes the `--out` and `--inout` buffers to their files.
    pub fn write_outputs(&self) -> Result<(), String> {
        for (path, buffer) in &self.outputs {
            let data = self.device.read(buffer).map_err(|e| e.to_string())?;
            std::fs::write(path, data).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }
}

/// The statistics `run --stats` prints (a JSON object), which
/// `hotspots --json` extends.
pub fn stats_json(
    kernel: &str,
    profile: &softgpu_runtime::profile::Profile,
    s: &DispatchCounters,
    host_threads: usize,
    occupancy: serde_json::Value,
    estimate: Option<&softgpu_runtime::estimate::Estimate>,
) -> serde_json::Value {
    // The figures are labelled with the part's built-in profile. Counts are
    // ISA-exact; `seconds` is host time, not the part's; the estimate, when
    // there is one, is the part's time.
    serde_json::json!({
        "kernel": kernel,
        "target": profile.name,
        "profile": profile.profile_id,
        "profile_revision": profile.revision,
        "fidelity": profile.fidelity_of(estimate.is_some()).name(),
        "workgroups": s.workgroups,
        "threads": s.threads,
        "waves": s.waves,
        "wave_instructions": s.wave_instructions,
        "lane_instructions": s.lane_instructions,
        "jit_exits": s.jit_exits,
        "seconds": s.seconds,
        "host_threads": host_threads,
        "occupancy": occupancy,
        "estimate": estimate,
    })
}

/// `softgpu run`: one dispatch, its outputs written back, and with
/// `--stats` its statistics as one JSON line; with `--schedule-seeds N`
/// the dispatch is tried under seeded schedules too (see `crate::seeds`).
/// These options, `--check` and `--timeout` may also follow the kernel
/// arguments.
pub fn run(launch: &LaunchSpec, stats: bool, seeds: Option<u64>) -> Result<(), CliError> {
    let mut words = launch.words.to_vec();
    let stats = take_switch(&mut words, "--stats") || stats;
    let seeds = match take_value(&mut words, "--schedule-seeds").map_err(CliError::Usage)? {
        Some(n) => Some(crate::seeds::count(&n).map_err(CliError::Usage)?),
        None => seeds,
    };
    let mut device = launch.device;
    device.take_from(&mut words).map_err(CliError::Usage)?;
    let spec = LaunchSpec {
        words: &words,
        device,
        ..*launch
    };
    if let Some(n) = seeds {
        return crate::seeds::run(&spec, n);
    }
    let prepared = prepare(&spec)?;
    // Statistics include the time estimate, which needs the counts of
    // every instruction.
    let outcome = prepared.dispatch(spec.kernel, stats)?;
    prepared.write_outputs()?;
    if stats {
        let target = prepared.device.target();
        let (size, o) = prepared.occupancy(spec.kernel)?;
        let occupancy = crate::inspect::occupancy_json(size, &o);
        let estimate = prepared.estimate(spec.kernel, &outcome)?;
        let json = stats_json(
            spec.kernel,
            &crate::inspect::part_profile(target)?,
            &outcome.counters,
            prepared.device.threads(),
            occupancy,
            estimate.as_ref(),
        );
        println!("{json}");
    }
    Ok(())
}
