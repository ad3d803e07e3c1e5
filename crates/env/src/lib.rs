//! The one place softgpu reads its environment.
//!
//! The libraries (`softgpu-exec`, `softgpu-runtime`, `softgpu`) never read
//! environment variables: a Rust program configures them in code with a
//! [`Config`]. The C libraries (`libhsa-runtime64.so.1`,
//! `libamdhip64.so.5`), the `softgpu` CLI and the test harnesses have no
//! such code to write, so they call [`config`] (or [`device_config`] for a
//! bare executor device), which turns the variables of [`VARIABLES`] into
//! one. A malformed value is an error naming the variable, never ignored.

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use softgpu_exec::JitMode;
use softgpu_exec::{Checks, ConfigError, DeviceConfig, Schedule, Settings};
use softgpu_runtime::config::Report;
use softgpu_runtime::config::MAX_GPU_AGENTS;
use softgpu_runtime::error::invalid;
use softgpu_runtime::profile::{Profile, DEFAULT_PROFILE};
use softgpu_runtime::{Config, Result};

/// One environment variable: its name, what it sets and its default.
#[derive(Clone, Copy, Debug)]
pub struct Variable {
    pub name: &'static str,
    pub sets: &'static str,
    pub default: &'static str,
}

/// Every variable softgpu reads, in the order the docs table lists them.
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "SOFTGPU_DEVICES",
        sets: "the GPUs: a count of SOFTGPU_PROFILE devices (1-16), or a comma-separated list of profile names or JSON paths, one per GPU (`gfx1100,gfx1151`)",
        default: "1",
    },
    Variable {
        name: "SOFTGPU_PROFILE",
        sets: "the profile of every GPU when SOFTGPU_DEVICES is a count: a built-in name (gfx1151, gfx1100) or a JSON path",
        default: DEFAULT_PROFILE,
    },
    Variable {
        name: "SOFTGPU_THREADS",
        sets: "worker threads per GPU (1 runs workgroups in index order)",
        default: "every host core",
    },
    Variable {
        name: "SOFTGPU_BUDGET",
        sets: "wave instructions one dispatch may run before it stops as a runaway",
        default: "2^44",
    },
    Variable {
        name: "SOFTGPU_TIMEOUT",
        sets: "wall-clock seconds one dispatch may run",
        default: "600",
    },
    Variable {
        name: "SOFTGPU_SCHEDULE",
        sets: "a seed: workgroups and waves run in an order drawn from it",
        default: "in order",
    },
    Variable {
        name: "SOFTGPU_SCRATCH_LIMIT",
        sets: "bytes of scratch one dispatch may materialise",
        default: "half the host's memory",
    },
    Variable {
        name: "SOFTGPU_JIT",
        sets: "the JIT tier: 0 off, 1 on, verify (both tiers, compared)",
        default: "1",
    },
    Variable {
        name: "SOFTGPU_CHECK",
        sets: "sanitizers: a comma list of init, race, sync, all (the three), contain (run each launch past every error it can contain, reporting each), leak (report allocations never freed), none",
        default: "none",
    },
    Variable {
        name: "SOFTGPU_REPORT",
        sets: "a file: every error of every launch (and the leaks) is printed on stderr as found and appended there as a JSON line (`softgpu check` sets it)",
        default: "errors only through the API",
    },
    Variable {
        name: "SOFTGPU_PRINT_LIMIT",
        sets: "errors the check report prints at most (the rest are counted); setting it, SOFTGPU_REPORT or leak turns the report on",
        default: "no limit",
    },
    Variable {
        name: "SOFTGPU_TRACE",
        sets: "a file for the JSON-lines event trace",
        default: "no trace",
    },
    Variable {
        name: "SOFTGPU_TRACE_RING",
        sets: "how many of the latest trace events the runtime keeps in memory",
        default: "0 (none)",
    },
    Variable {
        name: "SOFTGPU_DISPATCH_STATS",
        sets: "how many of the latest dispatches' statistics the runtime keeps, each with its estimated time on the real part (trace dispatch events carry it too)",
        default: "0 (none)",
    },
    Variable {
        name: "SOFTGPU_CAPTURE",
        sets: "a folder for per-dispatch captures",
        default: "no captures",
    },
    Variable {
        name: "SOFTGPU_BACKTRACE",
        sets: "1: allocations record the host call stack for fault reports",
        default: "off",
    },
    Variable {
        name: "SOFTGPU_QUARANTINE",
        sets: "freed bytes held back from reuse (0 = off)",
        default: "1 GiB",
    },
    Variable {
        name: "HSA_CU_MASK",
        sets: "CU masks new queues start with, in ROCr's syntax (`0:0-3; 1:0xff`)",
        default: "every unit",
    },
    Variable {
        name: "HSA_CU_MASK_SKIP_INIT",
        sets: "1: new queues ignore HSA_CU_MASK",
        default: "off",
    },
    Variable {
        name: "SOFTGPU_VERBOSE",
        sets: "set: the C libraries print each failing call's error on stderr",
        default: "off",
    },
    Variable {
        name: "HIPCC_VERBOSE",
        sets: "as ROCm's hipcc: an odd number makes `softgpu hipcc` print the clang++-19 command it runs (`hipcc-cmd: ...`) on stderr",
        default: "0",
    },
];

/// Variables softgpu's test harnesses read (not the libraries): known, so
/// not warned about.
const TEST_VARIABLES: &[&str] = &[
    "SOFTGPU_FUZZ_SECONDS",
    "SOFTGPU_KERNEL_CACHE",
    "SOFTGPU_PRINTF_TEST_CHILD",
];

/// The configuration a C library (HSA, HIP) starts its runtime with: as
/// [`config`], but since a C API can only return a status, a malformed
/// value's error is also printed on stderr (once per process), and each
/// unknown `SOFTGPU_*` variable is warned about (see [`warn_unknown`]).
pub fn library_config() -> Result<Config> {
    warn_unknown();
    config().inspect_err(|e| {
        static PRINTED: std::sync::Once = std::sync::Once::new();
        PRINTED.call_once(|| eprintln!("softgpu: {e}"));
    })
}

/// Warns on stderr, once per process, about each `SOFTGPU_*` variable
/// set in the environment that softgpu does not read (a misspelling
/// would otherwise be ignored in silence), naming the nearest known one.
pub fn warn_unknown() {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        // The names of every variable set: the one read that lists them
        // rather than looks one up.
        let names = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
        for warning in unknown_variables(names) {
            eprintln!("softgpu: warning: {warning}");
        }
    });
}

/// A warning for each of `names` that looks like softgpu's but is not
/// one it reads.
fn unknown_variables(names: impl Iterator<Item = String>) -> Vec<String> {
    let known = VARIABLES
        .iter()
        .map(|v| v.name)
        .chain(TEST_VARIABLES.iter().copied());
    let known: Vec<&str> = known.collect();
    names
        .filter(|n| n.starts_with("SOFTGPU_") && !known.contains(&n.as_str()))
        .map(|name| {
            let nearest = known
                .iter()
                .filter(|k| k.starts_with("SOFTGPU_"))
                .min_by_key(|k| strsim::levenshtein(&name, k))
                .expect("the table has SOFTGPU_ variables");
            format!(
                "{name} is not a softgpu variable, so it does nothing (did you mean {nearest}?)"
            )
        })
        .collect()
}

/// The process environment as a lookup: the one place softgpu reads a
/// variable. Every reader below takes a lookup of this shape, so tests and
/// harnesses can pass their own.
pub fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The runtime configuration the environment describes.
pub fn config() -> Result<Config> {
    config_from(process_env)
}

/// A lookup that treats an empty variable as unset, as text.
fn texts(get: impl Fn(&str) -> Option<OsString>) -> impl Fn(&str) -> Option<String> {
    move |name: &str| {
        get(name)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string_lossy().into_owned())
    }
}

/// The configuration the variables `get` returns describe (the
/// environment's, for [`config`]; any map, for tests).
pub fn config_from(get: impl Fn(&str) -> Option<OsString>) -> Result<Config> {
    let cu_mask = get("HSA_CU_MASK").map(|v| v.to_string_lossy().into_owned());
    let text = texts(get);
    let mut config = Config::new();
    config
        .devices(devices(text("SOFTGPU_DEVICES"), text("SOFTGPU_PROFILE"))?)?
        .settings(settings(&text)?)
        .cu_mask_skip_init(text("HSA_CU_MASK_SKIP_INIT").as_deref() == Some("1"))
        .backtraces(text("SOFTGPU_BACKTRACE").as_deref() == Some("1"));
    if let Some(path) = text("SOFTGPU_TRACE") {
        config.trace(path);
    }
    if let Some(v) = text("SOFTGPU_TRACE_RING") {
        config.trace_ring(parse("SOFTGPU_TRACE_RING", &v, "a number of events")?);
    }
    if let Some(v) = text("SOFTGPU_DISPATCH_STATS") {
        config.dispatch_statistics(parse(
            "SOFTGPU_DISPATCH_STATS",
            &v,
            "a number of dispatches",
        )?);
    }
    if let Some(folder) = text("SOFTGPU_CAPTURE") {
        config.capture(folder);
    }
    if let Some(masks) = cu_mask {
        config.cu_mask(masks);
    }
    if let Some(report) = report(&text)? {
        config.report(report);
    }
    if let Some(v) = text("SOFTGPU_QUARANTINE") {
        config.quarantine_bytes(parse("SOFTGPU_QUARANTINE", &v, "a number of bytes")?);
    }
    Ok(config)
}

/// A bare executor device's settings for `target` from the environment
/// (the CLI's `run`, `bench` and test harnesses that drive the executor
/// without the runtime).
pub fn device_config(target: &str) -> Result<DeviceConfig> {
    device_config_from(target, process_env)
}

/// The settings the variables `get` returns describe, for `target` (the
/// environment's, for [`device_config`]; the tests' view of it, with
/// their defaults, for the test harnesses).
pub fn device_config_from(
    target: &str,
    get: impl Fn(&str) -> Option<OsString>,
) -> Result<DeviceConfig> {
    let mut config = DeviceConfig::new(target)?;
    config.settings(settings(&texts(get))?);
    Ok(config)
}

/// The executor's settings the variables `get` returns describe.
pub fn settings_from(get: impl Fn(&str) -> Option<OsString>) -> Result<Settings> {
    settings(&texts(get))
}

/// A library search path with `first` before the caller's
/// `LD_LIBRARY_PATH` (for a child process that must load softgpu's
/// libraries).
pub fn library_path_after(first: &std::path::Path) -> OsString {
    library_path_after_from(first, process_env)
}

/// [`library_path_after`] with `LD_LIBRARY_PATH` as `get` returns it.
pub fn library_path_after_from(
    first: &std::path::Path,
    get: impl Fn(&str) -> Option<OsString>,
) -> OsString {
    let mut path = OsString::from(first);
    if let Some(rest) = get("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(rest);
    }
    path
}

/// Whether `SOFTGPU_VERBOSE` is set.
pub fn verbose() -> bool {
    verbose_from(process_env)
}

/// Whether `SOFTGPU_VERBOSE` is set among the variables `get` returns.
pub fn verbose_from(get: impl Fn(&str) -> Option<OsString>) -> bool {
    get("SOFTGPU_VERBOSE").is_some()
}

/// Whether `HIPCC_VERBOSE` asks `softgpu hipcc` to print its command.
pub fn hipcc_verbose() -> bool {
    hipcc_verbose_from(process_env)
}

/// [`hipcc_verbose`] with the variables `get` returns: bit 0 of the number
/// (ROCm's hipcc reads the variable as a bit mask; bit 0 is the command).
pub fn hipcc_verbose_from(get: impl Fn(&str) -> Option<OsString>) -> bool {
    get("HIPCC_VERBOSE")
        .and_then(|v| v.to_str()?.trim().parse::<u64>().ok())
        .is_some_and(|v| v & 1 == 1)
}

/// The executor's settings from the variables `text` returns. Each value
/// is parsed here and checked by its setter; an error names the variable.
fn settings(text: &dyn Fn(&str) -> Option<String>) -> Result<Settings> {
    // A setter's refusal, named by the variable that gave the value.
    let named = |name: &str, v: &str| {
        let name = name.to_string();
        let v = v.to_string();
        move |e: ConfigError| invalid(format!("{name}={v}: {}", e.reason()))
    };
    let mut s = Settings::new();
    if let Some(v) = text("SOFTGPU_THREADS") {
        let n: usize = parse("SOFTGPU_THREADS", &v, "a positive number of threads")?;
        s.threads(n).map_err(named("SOFTGPU_THREADS", &v))?;
    }
    if let Some(v) = text("SOFTGPU_BUDGET") {
        let n: u64 = parse("SOFTGPU_BUDGET", &v, "a number of instructions")?;
        s.instruction_budget(n)
            .map_err(named("SOFTGPU_BUDGET", &v))?;
    }
    if let Some(v) = text("SOFTGPU_TIMEOUT") {
        let secs: f64 = parse("SOFTGPU_TIMEOUT", &v, "a positive number of seconds")?;
        if !(secs.is_finite() && secs > 0.0) {
            return Err(invalid(format!(
                "SOFTGPU_TIMEOUT={v:?} is not a positive number of seconds"
            )));
        }
        s.timeout(Duration::from_secs_f64(secs))
            .map_err(named("SOFTGPU_TIMEOUT", &v))?;
    }
    if let Some(v) = text("SOFTGPU_SCHEDULE") {
        s.schedule(Schedule::Seeded(parse(
            "SOFTGPU_SCHEDULE",
            &v,
            "a seed (an integer)",
        )?));
    }
    if let Some(v) = text("SOFTGPU_SCRATCH_LIMIT") {
        s.scratch_limit(parse("SOFTGPU_SCRATCH_LIMIT", &v, "a number of bytes")?);
    }
    if let Some(v) = text("SOFTGPU_JIT") {
        s.jit(JitMode::parse(&v).map_err(|e| invalid(format!("SOFTGPU_JIT: {e}")))?)
            .map_err(named("SOFTGPU_JIT", &v))?;
    }
    if let Some(v) = text("SOFTGPU_CHECK") {
        let (checks, _) = leak_check(&v);
        s.checks(Checks::parse(&checks).map_err(|e| invalid(format!("SOFTGPU_CHECK: {e}")))?);
    }
    Ok(s)
}

/// `SOFTGPU_CHECK` without its `leak` words, which the runtime's report
/// does rather than the executor, and whether there was one.
fn leak_check(spec: &str) -> (String, bool) {
    let is_leak = |w: &&str| matches!(w.trim(), "leak" | "leakcheck");
    let words: Vec<&str> = spec.split(',').collect();
    let rest: Vec<&str> = words.iter().copied().filter(|w| !is_leak(w)).collect();
    (rest.join(","), rest.len() != words.len())
}

/// The check report `SOFTGPU_REPORT`, `SOFTGPU_PRINT_LIMIT` and
/// `SOFTGPU_CHECK`'s `leak` ask for.
fn report(text: &dyn Fn(&str) -> Option<String>) -> Result<Option<Report>> {
    let leaks = text("SOFTGPU_CHECK").is_some_and(|v| leak_check(&v).1);
    let file = text("SOFTGPU_REPORT").map(PathBuf::from);
    let print_limit = match text("SOFTGPU_PRINT_LIMIT") {
        Some(v) => Some(parse("SOFTGPU_PRINT_LIMIT", &v, "a number of errors")?),
        None => None,
    };
    let on = file.is_some() || print_limit.is_some() || leaks;
    Ok(on.then_some(Report {
        file,
        print_limit,
        leaks,
    }))
}

/// The GPUs `SOFTGPU_DEVICES` and `SOFTGPU_PROFILE` describe.
fn devices(devices: Option<String>, profile: Option<String>) -> Result<Vec<Profile>> {
    let one = match profile {
        Some(spec) => Profile::named_or_path(&spec)
            .map_err(|e| invalid(format!("SOFTGPU_PROFILE={spec}: {e}")))?,
        None => Profile::built_in(DEFAULT_PROFILE)?,
    };
    let Some(spec) = devices else {
        return Ok(vec![one]);
    };
    if let Ok(n) = spec.trim().parse::<usize>() {
        if !(1..=MAX_GPU_AGENTS).contains(&n) {
            return Err(invalid(format!(
                "SOFTGPU_DEVICES={spec}: expected a number of GPU agents from 1 to {MAX_GPU_AGENTS}"
            )));
        }
        return Ok(vec![one; n]);
    }
    let list: Vec<Profile> = spec
        .split(',')
        .map(|name| {
            Profile::named_or_path(name.trim())
                .map_err(|e| invalid(format!("SOFTGPU_DEVICES={spec}: {e}")))
        })
        .collect::<Result<_>>()?;
    if list.len() > MAX_GPU_AGENTS {
        return Err(invalid(format!(
            "SOFTGPU_DEVICES={spec}: at most {MAX_GPU_AGENTS} GPU agents"
        )));
    }
    Ok(list)
}

fn parse<T: std::str::FromStr>(name: &str, value: &str, what: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| invalid(format!("{name}={value:?} is not {what}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(vars: &[(&str, &str)]) -> Result<Config> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        config_from(|name| map.get(name).cloned())
    }

    #[test]
    fn hipcc_verbose_is_bit_zero() {
        let one =
            |v: &'static str| hipcc_verbose_from(move |n| (n == "HIPCC_VERBOSE").then(|| v.into()));
        assert!(one("1") && one("7") && one(" 3"));
        assert!(!one("0") && !one("2") && !one("yes"));
        assert!(!hipcc_verbose_from(|_| None));
    }

    #[test]
    fn unset_variables_give_the_defaults() {
        let c = from(&[]).unwrap();
        assert_eq!(c.get_devices().len(), 1);
        assert_eq!(c.get_devices()[0].name, "gfx1151");
        assert_eq!(c.get_settings(), &Settings::default());
        // On, or Off where the executor is built without its JIT tier.
        assert_eq!(c.get_settings().get_jit(), JitMode::default());
        assert!(c.get_trace().is_none() && c.get_capture().is_none());
        assert!(c.get_cu_mask().is_none() && c.get_report().is_none());
    }

    #[test]
    fn a_device_configuration_reads_the_variables_given() {
        let get = |name: &str| (name == "SOFTGPU_JIT").then(|| OsString::from("verify"));
        let c = device_config_from("gfx1100", get).unwrap();
        let jit = c.get_settings().get_jit();
        assert_eq!((c.get_target(), jit), ("gfx1100", JitMode::Verify));
        let c = device_config_from("gfx1151", |_| None).unwrap();
        assert_eq!(c.get_settings(), DeviceConfig::default().get_settings());
        assert!(device_config_from("gfx9000", |_| None).is_err());
    }

    #[test]
    fn every_variable_reaches_its_setting() {
        let c = from(&[
            ("SOFTGPU_DEVICES", "gfx1100, gfx1151"),
            ("SOFTGPU_THREADS", "3"),
            ("SOFTGPU_BUDGET", "1000"),
            ("SOFTGPU_TIMEOUT", "1.5"),
            ("SOFTGPU_SCHEDULE", "7"),
            ("SOFTGPU_SCRATCH_LIMIT", "4096"),
            ("SOFTGPU_JIT", "verify"),
            ("SOFTGPU_CHECK", "race,sync"),
            ("SOFTGPU_TRACE", "/tmp/t.jsonl"),
            ("SOFTGPU_TRACE_RING", "64"),
            ("SOFTGPU_DISPATCH_STATS", "16"),
            ("SOFTGPU_CAPTURE", "/tmp/cap"),
            ("SOFTGPU_BACKTRACE", "1"),
            ("SOFTGPU_QUARANTINE", "0"),
            ("HSA_CU_MASK", "0:0-3"),
            ("HSA_CU_MASK_SKIP_INIT", "1"),
        ])
        .unwrap();
        let names: Vec<&str> = c.get_devices().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["gfx1100", "gfx1151"]);
        let s = c.get_settings();
        assert_eq!(s.get_threads(), Some(3));
        assert_eq!(s.get_instruction_budget(), 1000);
        assert_eq!(s.get_timeout(), Duration::from_millis(1500));
        assert_eq!(s.get_schedule(), Schedule::Seeded(7));
        assert_eq!(s.get_scratch_limit(), 4096);
        assert_eq!(s.get_jit(), JitMode::Verify);
        let checks = s.get_checks();
        assert!(checks.race && checks.sync && !checks.init);
        assert_eq!(c.get_trace(), Some(std::path::Path::new("/tmp/t.jsonl")));
        assert_eq!(c.get_capture(), Some(std::path::Path::new("/tmp/cap")));
        assert_eq!(c.get_trace_ring(), 64);
        assert_eq!(c.get_dispatch_statistics(), 16);
        assert!(c.get_arena().backtraces);
        assert_eq!(c.get_arena().quarantine_bytes, 0);
        assert_eq!(c.get_cu_mask(), Some("0:0-3"));
        assert!(c.get_cu_mask_skip_init());
        let counted = from(&[("SOFTGPU_DEVICES", "3"), ("SOFTGPU_PROFILE", "gfx1100")]).unwrap();
        assert_eq!(counted.get_devices().len(), 3);
        assert!(counted.get_devices().iter().all(|p| p.name == "gfx1100"));
    }

    #[test]
    fn a_malformed_value_is_an_error_naming_its_variable() {
        for (name, value) in [
            ("SOFTGPU_DEVICES", "0"),
            ("SOFTGPU_DEVICES", "17"),
            ("SOFTGPU_DEVICES", "gfx1100,gfx9000"),
            ("SOFTGPU_PROFILE", "/nonexistent.json"),
            ("SOFTGPU_THREADS", "0"),
            ("SOFTGPU_THREADS", "many"),
            ("SOFTGPU_BUDGET", "-1"),
            ("SOFTGPU_TIMEOUT", "0"),
            ("SOFTGPU_TIMEOUT", "inf"),
            ("SOFTGPU_SCHEDULE", "x"),
            ("SOFTGPU_SCRATCH_LIMIT", "1k"),
            ("SOFTGPU_JIT", "maybe"),
            ("SOFTGPU_CHECK", "everything"),
            ("SOFTGPU_QUARANTINE", "lots"),
            ("SOFTGPU_TRACE_RING", "-3"),
            ("SOFTGPU_DISPATCH_STATS", "many"),
        ] {
            let e = from(&[(name, value)]).expect_err(name).to_string();
            assert!(e.contains(name), "{name}={value}: {e}");
        }
    }

    #[test]
    fn the_other_readers_take_a_lookup_too() {
        let get = |name: &str| match name {
            "SOFTGPU_VERBOSE" => Some(OsString::from("1")),
            "LD_LIBRARY_PATH" => Some(OsString::from("/usr/lib")),
            "SOFTGPU_BUDGET" => Some(OsString::from("0")),
            _ => None,
        };
        assert!(verbose_from(get) && !verbose_from(|_| None));
        let path = library_path_after_from(std::path::Path::new("/opt/softgpu"), get);
        assert_eq!(path, "/opt/softgpu:/usr/lib");
        let e = settings_from(get).unwrap_err().to_string();
        assert!(
            e.contains("SOFTGPU_BUDGET=0") && e.contains("positive"),
            "{e}"
        );
    }

    #[test]
    fn the_table_lists_every_variable_read() {
        // The library's code, not its tests; the harnesses' own variables
        // are known too.
        let source = include_str!("lib.rs").split("#[cfg(test)]").next().unwrap();
        let table: Vec<&str> = (VARIABLES.iter().map(|v| v.name))
            .chain(super::TEST_VARIABLES.iter().copied())
            .collect();
        for read in source.split('"').filter(|s| {
            (s.starts_with("SOFTGPU_") || s.starts_with("HSA_CU"))
                && !["SOFTGPU_", "HSA_CU"].contains(s)
                && s.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        }) {
            assert!(table.contains(&read), "{read} is read but not in VARIABLES");
        }
    }
}

#[cfg(test)]
mod unknown {
    #[test]
    fn a_misspelled_variable_is_warned_about_with_the_nearest_name() {
        let set = [
            "SOFTGPU_CHEK",
            "SOFTGPU_TRACE",
            "PATH",
            "SOFTGPU_FUZZ_SECONDS",
        ];
        let warnings = super::unknown_variables(set.iter().map(|s| s.to_string()));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("SOFTGPU_CHEK is not a softgpu variable")
                && warnings[0].contains("did you mean SOFTGPU_CHECK?"),
            "{}",
            warnings[0]
        );
    }
}

#[cfg(test)]
mod docs {
    /// The README's table is the users' list of variables: each one read
    /// must be in it.
    #[test]
    fn the_readme_table_lists_every_variable() {
        let readme = include_str!("../../../README.md");
        for v in super::VARIABLES {
            let row = format!("| `{}` |", v.name);
            assert!(readme.contains(&row), "README's table lacks {}", v.name);
        }
    }
}
