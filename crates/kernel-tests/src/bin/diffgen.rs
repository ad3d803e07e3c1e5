//! Long differential runs of the built-in generator: each seed's random
//! OpenCL C kernel on softgpu against the host-C oracle, on every chosen
//! target and wave size. Prints one line per seed and, for a mismatch, the
//! statement, the lane, its inputs, got and want; exits 1 if any differ.
//!
//!     cargo run --release -p softgpu-kernel-tests --bin diffgen -- --seeds 100
//!     ... -- --first 5 --seeds 1 --stmt 17 --target gfx1151 --wave64 --dump /tmp/r

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use softgpu_exec::Device;
use softgpu_kernel_tests::diffgen::{Case, Config, Program};

#[derive(Parser)]
#[command(about = "Differential runs: random OpenCL C built-in kernels on softgpu vs host C")]
struct Cli {
    /// Number of seeds to run.
    #[arg(long, default_value_t = 12)]
    seeds: u64,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    first: u64,
    /// Target to run on (repeatable); default gfx1100 and gfx1151.
    #[arg(long)]
    target: Vec<String>,
    /// Wave64 only (default: wave32 and wave64).
    #[arg(long, conflicts_with = "wave32")]
    wave64: bool,
    /// Wave32 only.
    #[arg(long)]
    wave32: bool,
    /// Keep only these statements of each program (repeatable).
    #[arg(long)]
    stmt: Vec<usize>,
    /// Write each seed's kernel (`seed-N.cl`) and host oracle (`seed-N.c`) here.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Print at most this many mismatches per seed and configuration.
    #[arg(long, default_value_t = 5)]
    max_reports: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let configs: Vec<Config> = Config::all()
        .into_iter()
        .filter(|c| cli.target.is_empty() || cli.target.contains(&c.target))
        .filter(|c| if c.wave64 { !cli.wave32 } else { !cli.wave64 })
        .collect();
    if configs.is_empty() {
        eprintln!("no configuration left (targets: gfx1100, gfx1151)");
        return ExitCode::from(2);
    }
    let devices: Vec<Device> = configs
        .iter()
        .map(|c| {
            // The environment as it is: the tests' defaults (env_default)
            // are for the tests.
            let config = softgpu_env::device_config(&c.target).unwrap_or_else(|e| panic!("{e}"));
            Device::new(&config).unwrap_or_else(|e| panic!("device {}: {e}", c.target))
        })
        .collect();
    let mut failed = 0;
    for seed in cli.first..cli.first + cli.seeds {
        let mut p = Program::generate(seed);
        if !cli.stmt.is_empty() {
            p = p.only(&cli.stmt);
        }
        let case = Case::new(p);
        if let Some(d) = &cli.dump {
            std::fs::create_dir_all(d).expect("--dump folder");
            std::fs::write(d.join(format!("seed-{seed}.cl")), case.opencl()).expect("write kernel");
            std::fs::write(d.join(format!("seed-{seed}.c")), case.host()).expect("write host C");
        }
        let mut report = vec![];
        for (cfg, dev) in configs.iter().zip(&devices) {
            match case.run_gpu(dev, cfg) {
                Ok(got) => {
                    let m = case.compare(&got, cfg);
                    let n = m.len();
                    report.extend(m.into_iter().take(cli.max_reports).map(|m| m.to_string()));
                    if n > cli.max_reports {
                        report.push(format!(
                            "... {} more statements differ on {cfg}",
                            n - cli.max_reports
                        ));
                    }
                }
                Err(e) => report.push(format!("seed {seed} on {cfg}: {e}")),
            }
        }
        let n = case.program.stmts.len();
        if report.is_empty() {
            println!(
                "seed {seed}: pass ({n} statements, {} configurations)",
                configs.len()
            );
        } else {
            failed += 1;
            println!("seed {seed}: FAIL ({n} statements)");
            for r in report {
                println!("{r}\n");
            }
        }
    }
    println!("{failed} of {} seeds failed", cli.seeds);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
