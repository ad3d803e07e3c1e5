//! `softgpu check`: runs a HIP or HSA program on softgpu's libraries with
//! the chosen checks, as `compute-sanitizer ./prog` does for CUDA.
//!
//! The program runs as a child process with softgpu's `libamdhip64.so.5`
//! and `libhsa-runtime64.so.1` first on its library path (so one built
//! against Debian's libraries runs on softgpu's) and the check settings in
//! its environment: `SOFTGPU_CHECK` (the tools, plus `contain` so each
//! launch runs past every error it can contain) and `SOFTGPU_REPORT`, a
//! file the runtime appends one JSON record to per error and per leak
//! while it prints each on stderr (`softgpu_runtime::report`). When the
//! program ends, this counts the records and prints the summary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};

use serde_json::{json, Value};

use crate::CliError;

/// The mark every line of the report starts with (the runtime's).
const MARK: &str = softgpu_runtime::report::MARK;

/// A check tool, as compute-sanitizer names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Tool {
    /// Accesses outside every live allocation (always on: softgpu confines
    /// every access).
    Memcheck,
    /// Conflicting accesses of different waves that no barrier or atomic
    /// orders, in LDS and global memory.
    Racecheck,
    /// Reads of device memory, LDS or scratch never written.
    Initcheck,
    /// Barriers some live waves of a workgroup never reach.
    Synccheck,
    /// Allocations still live at exit or at `hipDeviceReset`.
    Leakcheck,
    /// Every tool.
    All,
}

impl Tool {
    /// The `SOFTGPU_CHECK` words the tool turns on.
    fn words(self) -> &'static [&'static str] {
        match self {
            Tool::Memcheck => &[],
            Tool::Racecheck => &["race"],
            Tool::Initcheck => &["init"],
            Tool::Synccheck => &["sync"],
            Tool::Leakcheck => &["leak"],
            Tool::All => &["init", "race", "sync", "leak"],
        }
    }
}

/// What `softgpu check` was asked to do.
pub struct Options<'a> {
    pub tools: &'a [Tool],
    pub error_exitcode: Option<u8>,
    pub print_limit: Option<u64>,
    pub json: Option<&'a Path>,
    /// Run the program once per seed under seeded schedules 0..N (one
    /// worker thread), so a race that needs a particular interleaving shows.
    pub schedule_seeds: Option<u64>,
    pub program: &'a [String],
}

/// Runs the program under the checks; the exit code is the program's own,
/// or `--error-exitcode`'s when errors were found.
pub fn run(options: &Options) -> Result<ExitCode, CliError> {
    let Some((program, args)) = options.program.split_first() else {
        return Err(CliError::Usage(
            "softgpu check needs a program to run: softgpu check [OPTIONS] -- PROGRAM [ARGS...]"
                .into(),
        ));
    };
    let tools = if options.tools.is_empty() {
        &[Tool::Memcheck][..]
    } else {
        options.tools
    };
    let work = Workspace::new()?;
    let mut words: Vec<&str> = tools.iter().flat_map(|t| t.words()).copied().collect();
    words.sort_unstable();
    words.dedup();
    words.push("contain");
    let names: Vec<String> = tools
        .iter()
        .map(|t| format!("{t:?}").to_lowercase())
        .collect();
    eprintln!("{MARK}softgpu check: {}", names.join(", "));
    let runs: Vec<Option<u64>> = match options.schedule_seeds {
        Some(n) => (0..n).map(Some).collect(),
        None => vec![None],
    };
    let mut status = None;
    for seed in runs {
        let mut command = Command::new(program);
        command
            .args(args)
            .env("LD_LIBRARY_PATH", work.library_path())
            .env("SOFTGPU_CHECK", words.join(","))
            .env("SOFTGPU_REPORT", &work.report)
            // Reports name where each allocation was made.
            .env("SOFTGPU_BACKTRACE", "1");
        if let Some(limit) = options.print_limit {
            command.env("SOFTGPU_PRINT_LIMIT", limit.to_string());
        }
        if let Some(seed) = seed {
            eprintln!("{MARK}schedule seed {seed}");
            command
                .env("SOFTGPU_SCHEDULE", seed.to_string())
                .env("SOFTGPU_THREADS", "1");
        }
        let ran = command
            .status()
            .map_err(|e| CliError::Usage(format!("cannot run {program}: {e}")))?;
        status = Some(ran);
    }
    let records = read_records(&work.report)?;
    let summary = Summary::of(&records);
    if summary.started == 0 {
        eprintln!(
            "{MARK}warning: {program} never started softgpu's HIP or HSA runtime, so nothing was checked (is it a HIP or HSA program, linked dynamically?)"
        );
    }
    if words.contains(&"leak") {
        eprintln!(
            "{MARK}LEAK SUMMARY: {} bytes leaked in {} allocations",
            summary.leaked_bytes, summary.leaks
        );
    }
    eprintln!("{MARK}ERROR SUMMARY: {} errors", summary.errors);
    if let Some(path) = options.json {
        let document = json!({
            "program": options.program,
            "tools": names,
            "errors": records.iter().filter(|r| r["record"] == "error").collect::<Vec<_>>(),
            "leaks": records.iter().filter(|r| r["record"] == "leak").collect::<Vec<_>>(),
            "summary": {
                "errors": summary.errors,
                "leaks": summary.leaks,
                "leaked_bytes": summary.leaked_bytes,
            },
        });
        let text = serde_json::to_string_pretty(&document).expect("JSON values serialize");
        fs::write(path, text + "\n").map_err(|source| CliError::Io {
            what: format!("--json {}", path.display()),
            source,
        })?;
    }
    Ok(match (options.error_exitcode, summary.errors) {
        (Some(code), n) if n > 0 => ExitCode::from(code),
        _ => exit_code(status.expect("the program ran at least once")),
    })
}

/// The program's exit code as a shell reports it (128 + a signal's number).
fn exit_code(status: ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code as u8),
        (None, Some(signal)) => ExitCode::from(128u8.wrapping_add(signal as u8)),
        (None, None) => ExitCode::FAILURE,
    }
}

/// What the report records add up to.
#[derive(Default)]
struct Summary {
    errors: u64,
    leaks: u64,
    leaked_bytes: u64,
    /// Runtimes that started with the report on.
    started: u64,
}

impl Summary {
    fn of(records: &[Value]) -> Summary {
        let mut s = Summary::default();
        for r in records {
            match r["record"].as_str() {
                Some("error") => s.errors += 1,
                Some("unrecorded") => s.errors += r["count"].as_u64().unwrap_or(0),
                Some("leak") => {
                    s.errors += 1;
                    s.leaks += 1;
                    s.leaked_bytes += r["size"].as_u64().unwrap_or(0);
                }
                Some("start") => s.started += 1,
                _ => {}
            }
        }
        s
    }
}

fn read_records(path: &Path) -> Result<Vec<Value>, CliError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(CliError::Io {
                what: "the check report".into(),
                source,
            })
        }
    };
    // A line a killed process left half written is skipped.
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// A private folder for one check: the library links and the report.
struct Workspace {
    dir: PathBuf,
    report: PathBuf,
}

impl Workspace {
    /// Makes the folder, with `libamdhip64.so.5` and
    /// `libhsa-runtime64.so.1` linking to softgpu's libraries beside this
    /// executable (where cargo builds them).
    fn new() -> Result<Workspace, CliError> {
        let exe = std::env::current_exe().map_err(|source| CliError::Io {
            what: "cannot find the softgpu executable".into(),
            source,
        })?;
        let libs = exe.parent().unwrap_or(Path::new("."));
        let dir = std::env::temp_dir().join(format!("softgpu-check-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|source| CliError::Io {
            what: dir.display().to_string(),
            source,
        })?;
        let work = Workspace {
            report: dir.join("report.jsonl"),
            dir,
        };
        for (built, soname, package) in [
            ("libamdhip64.so", "libamdhip64.so.5", "softgpu-hip"),
            (
                "libhsa_runtime64.so",
                "libhsa-runtime64.so.1",
                "softgpu-hsa",
            ),
        ] {
            let lib = libs.join(built);
            if !lib.exists() {
                return Err(CliError::Failed(format!(
                    "{} is missing: build softgpu's libraries beside the softgpu executable (cargo build --release -p {package})",
                    lib.display()
                )));
            }
            std::os::unix::fs::symlink(&lib, work.dir.join(soname)).map_err(|source| {
                CliError::Io {
                    what: work.dir.display().to_string(),
                    source,
                }
            })?;
        }
        Ok(work)
    }

    /// The folder first, then the caller's library path.
    fn library_path(&self) -> std::ffi::OsString {
        softgpu_env::library_path_after(&self.dir)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}
