//! `softgpu`: run, disassemble and inspect AMD GPU code objects on the CPU.

// Doc comments here are clap's help text, where `X[,Y[,Z]]` is notation,
// not a rustdoc link.
#![allow(rustdoc::broken_intra_doc_links)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod bench;
mod check;
mod compile;
mod demo;
mod hipcc;
mod hipconfig;
mod hotspots;
mod info;
mod inspect;
mod seeds;
mod services;
mod suite;
mod timeline;

#[derive(Parser)]
#[command(
    name = "softgpu",
    version,
    about = "A software AMD RDNA GPU: runs real gfx11 machine code on the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one kernel of a code object (or offload bundle), or of an OpenCL
    /// C (.cl) or HIP (.hip) source compiled for --target first.
    ///
    /// Kernel arguments follow in declaration order: --in PATH (buffer from
    /// a file), --out PATH:BYTES (zeroed buffer written to PATH after the
    /// run), --inout PATH, or a value: --i32 V --u32 V --i64 V --u64 V
    /// --f32 V --f64 V.
    #[command(allow_hyphen_values = true)]
    Run {
        #[command(flatten)]
        launch: args::LaunchArgs,
        /// Print run statistics as one JSON object (the last stdout line).
        #[arg(long)]
        stats: bool,
        /// Also run the dispatch under seeded schedules 0..N (one host
        /// thread) and report the first seed whose output differs from the
        /// in-order run's, or that faults, with the command line that
        /// reproduces it; exits non-zero if one does.
        #[arg(long, value_name = "N")]
        schedule_seeds: Option<String>,
    },
    /// Run one kernel as `run` does (same FILE forms, options and kernel
    /// arguments) while counting every instruction's executions, and show
    /// the totals and the hottest instructions with their active lanes.
    // `profile`, this command's old name, stays a hidden alias for scripts.
    #[command(allow_hyphen_values = true, alias = "profile")]
    Hotspots {
        #[command(flatten)]
        launch: args::LaunchArgs,
        /// How many of the hottest instructions to list.
        #[arg(long, default_value_t = hotspots::DEFAULT_TOP)]
        top: usize,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show the emulated devices (SOFTGPU_DEVICES, default 1) and their
    /// profile (SOFTGPU_PROFILE, default gfx1151), and the built-in profiles.
    Info {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compile OpenCL C (.cl) or HIP (.hip) device source into a code object
    /// with clang-19, lld-19 and the ROCm device libraries.
    Compile {
        file: PathBuf,
        /// Where to write the code object (default: FILE with extension .hsaco).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Target processor.
        #[arg(long, default_value = softgpu_isa::DEFAULT_TARGET)]
        target: String,
        /// Define a macro: NAME=VALUE, or NAME (defined as 1).
        #[arg(short = 'D', value_name = "NAME[=VALUE]")]
        define: Vec<String>,
        /// Add a directory to the include search path.
        #[arg(short = 'I', value_name = "DIR")]
        include: Vec<PathBuf>,
        /// Pass an option to clang (after softgpu's own, so it can override
        /// them), e.g. --option=-O1.
        #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
        option: Vec<String>,
    },
    /// Build a HIP program (host and device code) with clang++-19 and
    /// Debian's HIP headers, linked against softgpu's HIP runtime library
    /// so it runs on softgpu with no environment set; takes what ROCm's
    /// hipcc takes (`softgpu hipcc -O2 a.hip b.o -o prog`, `-c`, `--genco`,
    /// `-fgpu-rdc`, `--offload-arch=gfx90a,gfx1100`, `--version`,
    /// HIPCC_VERBOSE=1). Adds hipcc's defaults (-O3 when no -O is given,
    /// and its two -mllvm inlining options unless -O0), `-x hip` for
    /// .hip/.cu/.cpp sources, --offload-arch for the default device
    /// (SOFTGPU_PROFILE, default gfx1151) unless the given list names one
    /// softgpu runs, the HIP and device-library paths, and at link time
    /// `-L DIR -lamdhip64 -Wl,-rpath,DIR` with DIR the folder of the
    /// softgpu executable (where `cargo build --release -p softgpu-hip`
    /// puts libamdhip64.so; -lhiprtc links there too). `--print-devlibs`
    /// prints the device-library folder for plain clang++-19. Also run when
    /// the softgpu executable is called `hipcc`.
    #[command(disable_help_flag = true)]
    Hipcc {
        /// clang++ options and input files, passed on in order.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Answer as ROCm's hipconfig (`--platform`, `--version`, `--rocmpath`,
    /// `--cpp_config`, `--full`, ...) for Makefiles that ask it; also run
    /// when the softgpu executable is called `hipconfig`.
    #[command(disable_help_flag = true)]
    Hipconfig {
        /// hipconfig options.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Disassemble the code of a code object as llvm-objdump does.
    Disasm {
        file: PathBuf,
        /// The processor whose entry of an offload bundle to show
        /// (default: the gfx1151 entry, else the first softgpu runs; an ELF
        /// shows its own).
        #[arg(long)]
        target: Option<String>,
    },
    /// Show a code object's target, kernels, arguments and resources.
    Inspect {
        file: PathBuf,
        /// As for disasm.
        #[arg(long)]
        target: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Tour the safe Rust API on the built-in example kernels (embedded code
    /// objects, no compiler needed): streams, events, a graph, two streams
    /// and a fault report, every result checked against a CPU computation.
    /// The device follows SOFTGPU_PROFILE (default gfx1151).
    Demo {
        /// Worker threads (sets SOFTGPU_THREADS; default: all host cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Measure executor throughput on an ALU-bound and a memory-bound kernel
    /// with 1 and 2 threads, against the same code compiled for the host;
    /// with --suite, the ratio of softgpu to pocl on a suite of kernels.
    Bench {
        /// Minimum seconds per measurement, each the best of 7 (default 0.5;
        /// 0.2 with --suite).
        #[arg(long)]
        seconds: Option<f64>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Run the kernel suite of crates/cli/bench/suite.cl on softgpu and
        /// on pocl (needs clang-19 and pocl-opencl-icd).
        #[arg(long)]
        suite: bool,
        /// With --suite: only these kernels (comma-separated names), e.g.
        /// to profile one.
        #[arg(long, value_delimiter = ',', requires = "suite")]
        kernels: Vec<String>,
    },
    /// Convert a SOFTGPU_TRACE JSON-lines trace into a Chrome/Perfetto
    /// timeline (open it in ui.perfetto.dev or chrome://tracing).
    Trace {
        /// The JSON-lines trace.
        input: PathBuf,
        /// Where to write the timeline (default: INPUT with .json appended).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Re-run one dispatch captured with SOFTGPU_CAPTURE=DIR (give DIR/N)
    /// alone, and check it gives the captured results.
    Replay { capture: PathBuf },
    /// Run a HIP or HSA program (built by `softgpu hipcc` or against
    /// Debian's libamdhip64) on softgpu's libraries with memory, race,
    /// initialization, barrier and leak checks, as compute-sanitizer
    /// runs a CUDA program: every error of every launch is printed as it
    /// is found (with source lines when the program was built with -g),
    /// then `ERROR SUMMARY: N errors`.
    ///
    /// Exit code: the program's own, or --error-exitcode's when there
    /// were errors; 2 when the command line is wrong.
    Check {
        /// The checks (comma-separated or repeated): memcheck (default;
        /// always on), racecheck, initcheck, synccheck, leakcheck, all.
        #[arg(long, value_enum, value_delimiter = ',')]
        tool: Vec<check::Tool>,
        /// Exit with this code when any error was found.
        #[arg(long, value_name = "N")]
        error_exitcode: Option<u8>,
        /// Print at most N errors (the rest are counted in the summary).
        #[arg(long, value_name = "N")]
        print_limit: Option<u64>,
        /// Write every error and leak to FILE as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Run the program once per schedule seed 0..N (one worker thread
        /// each), so a race that needs a particular interleaving shows.
        #[arg(long, value_name = "N")]
        schedule_seeds: Option<String>,
        /// The program and its arguments (after `--`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 1.., required = true)]
        program: Vec<String>,
    },
}

/// Why a command failed, which its exit code tells.
#[derive(Debug)]
pub enum CliError {
    /// A command line softgpu cannot use (exit code 2, as clap's own).
    Usage(String),
    /// A kernel faulted (exit code 3): the report.
    Fault(String),
    /// The executor could not run a dispatch (exit code 1).
    Dispatch(softgpu_exec::DispatchError),
    /// A file or folder the command needs could not be read or written
    /// (exit code 1): what it was, and the system's error.
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A command's own failure message, from its layers below (a file, a
    /// compile, the device), already said in full (exit code 1).
    Failed(String),
}

impl From<String> for CliError {
    fn from(message: String) -> CliError {
        CliError::Failed(message)
    }
}

impl CliError {
    fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            CliError::Usage(_) => 2,
            CliError::Fault(_) => 3,
            CliError::Dispatch(_) | CliError::Io { .. } | CliError::Failed(_) => 1,
        })
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Fault(m) | CliError::Failed(m) => f.write_str(m),
            CliError::Dispatch(e) => write!(f, "{e}"),
            CliError::Io { what, source } => write!(f, "{what}: {source}"),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Dispatch(e) => Some(e),
            CliError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    // Like other command-line tools, end quietly when the reader of our
    // output goes away (`softgpu disasm X | head`) instead of panicking on
    // the failed write: Rust ignores SIGPIPE by default.
    // SAFETY: setting a signal's disposition to the default before any
    // other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if let Some(code) = run_as_rocm_tool() {
        return code;
    }
    let cli = Cli::parse();
    softgpu_env::warn_unknown();
    match execute(cli.command) {
        Ok(code) => code,
        Err(e) => fail(e),
    }
}

/// Run under the name of a ROCm tool (`hipcc`, `hipconfig`: a link to the
/// `softgpu` executable, so a Makefile's `hipcc` is softgpu's), that
/// command with every argument; otherwise `None`.
fn run_as_rocm_tool() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let name = PathBuf::from(args.next()?);
    let rest: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    match name.file_name()?.to_str()? {
        "hipcc" => Some(hipcc::run(&rest)),
        "hipconfig" => Some(hipconfig::run(&rest)),
        _ => None,
    }
}

/// Runs one command; its exit code, or why it failed.
fn execute(command: Command) -> Result<ExitCode, CliError> {
    // Most commands succeed with 0 and fail with an ordinary error.
    let done = |r: Result<(), String>| r.map(|()| ExitCode::SUCCESS).map_err(CliError::from);
    let seeds =
        |n: Option<String>| (n.as_deref().map(seeds::count).transpose()).map_err(CliError::Usage);
    match command {
        Command::Hipcc { args } => Ok(hipcc::run(&args)),
        Command::Hipconfig { args } => Ok(hipconfig::run(&args)),
        Command::Check {
            tool,
            error_exitcode,
            print_limit,
            json,
            schedule_seeds,
            program,
        } => check::run(&check::Options {
            tools: &tool,
            error_exitcode,
            print_limit,
            json: json.as_deref(),
            schedule_seeds: seeds(schedule_seeds)?,
            program: &program,
        }),
        Command::Run {
            launch,
            stats,
            schedule_seeds,
        } => {
            args::run(&launch.spec()?, stats, seeds(schedule_seeds)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Hotspots { launch, top, json } => {
            hotspots::run(&launch.spec()?, top, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Info { json } => done(info::run(json)),
        Command::Compile {
            file,
            output,
            target,
            define,
            include,
            option,
        } => done(compile::run(
            &file,
            output.as_deref(),
            &compile::Options {
                target: &target,
                defines: &define,
                include_dirs: &include,
                options: &option,
            },
        )),
        Command::Disasm { file, target } => done(inspect::disasm(&file, target.as_deref())),
        Command::Inspect { file, target, json } => {
            done(inspect::inspect(&file, target.as_deref(), json))
        }
        Command::Demo { threads } => done(demo::run(threads)),
        Command::Bench {
            seconds,
            json,
            suite: true,
            kernels,
        } => done(suite::run(seconds.unwrap_or(0.2), json, &kernels)),
        Command::Bench { seconds, json, .. } => done(bench::run(seconds.unwrap_or(0.5), json)),
        Command::Trace { input, output } => done(timeline::convert(&input, output.as_deref())),
        Command::Replay { capture } => done(timeline::replay(&capture)),
    }
}

/// Reports `e` and gives its exit code.
fn fail(e: CliError) -> ExitCode {
    eprintln!("softgpu: {e}");
    e.exit_code()
}
