//! `softgpu bench`: executor throughput on an ALU-bound and a memory-bound
//! kernel (the embedded `examples/bin/{alu,mem}_bench` code objects), with 1
//! and 2 worker threads, against the same kernel body compiled for the host.

use std::hint::black_box;
use std::time::Instant;

use softgpu_exec::{Arg, Buffer, Device, DispatchCounters, DispatchDesc, Launch, Program};

use crate::demo::{alu_item, bytes_f32, code_object, f32_bytes, si, Rng};

pub const TARGET: &str = "gfx1151";
const THREADS: [usize; 2] = [1, 2];
// Many short trials, best kept: this kind of shared VM runs the same work up
// to 2x slower from one second to the next.
pub const TRIALS: usize = 7;

/// ALU kernel: work-items and rounds per dispatch, and its constants.
const ALU_ITEMS: usize = 64 * 256;
const ALU_ITERS: i32 = 256;
const ALU_ABC: (f32, f32, f32) = (0.999, 0.001, 0.998);
/// Memory kernel: float4 elements per dispatch (16 MiB read, 16 MiB written).
const MEM_ITEMS: usize = 1 << 20;
const MEM_SCALE: f32 = 1.5;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Alu,
    Mem,
}

impl Kind {
    fn kernel(self) -> &'static str {
        match self {
            Kind::Alu => "alu_bench",
            Kind::Mem => "mem_bench",
        }
    }
    fn describe(self) -> String {
        match self {
            Kind::Alu => format!(
                "{ALU_ITEMS} work-items x {ALU_ITERS} rounds x 8 dependent fma/mul/add chains"
            ),
            Kind::Mem => format!(
                "out = in * s over {MEM_ITEMS} float4 ({} MiB read + written)",
                (32 * MEM_ITEMS) >> 20
            ),
        }
    }
    /// Bytes a dispatch streams through device memory (memory kernel only).
    fn bytes(self) -> Option<u64> {
        match self {
            Kind::Alu => None,
            Kind::Mem => Some(32 * MEM_ITEMS as u64),
        }
    }
}

/// One kernel set up on one device, ready to dispatch again and again.
struct Setup {
    device: Device,
    program: Program,
    launch: Launch,
    args: Vec<Arg>,
    out: Buffer,
}

impl Setup {
    fn new(kind: Kind, threads: usize, input: &[f32]) -> Result<Setup, String> {
        let mut config = softgpu_env::device_config(TARGET).map_err(|e| e.to_string())?;
        (config.arena_bytes(1 << 30).settings_mut())
            .threads(threads)
            .map_err(|e| e.to_string())?;
        let device = Device::new(&config).map_err(|e| e.to_string())?;
        let program = device
            .load(code_object(kind.kernel(), TARGET)?)
            .map_err(|e| e.to_string())?;
        let e = |e: softgpu_exec::DispatchError| e.to_string();
        let (launch, args, out) = match kind {
            Kind::Alu => {
                let out = device.alloc_zeroed(4 * ALU_ITEMS as u64).map_err(e)?;
                let (a, b, c) = ALU_ABC;
                let launch = Launch {
                    grid: [(ALU_ITEMS / 256) as u32, 1, 1],
                    block: [256, 1, 1],
                    dynamic_lds: 0,
                };
                (
                    launch,
                    vec![
                        Arg::Buffer(out),
                        Arg::I32(ALU_ITERS),
                        Arg::F32(a),
                        Arg::F32(b),
                        Arg::F32(c),
                    ],
                    out,
                )
            }
            Kind::Mem => {
                let inb = device.alloc_from(&f32_bytes(input)).map_err(e)?;
                let out = device.alloc_zeroed(16 * MEM_ITEMS as u64).map_err(e)?;
                let launch = Launch {
                    grid: [(MEM_ITEMS / 256) as u32, 1, 1],
                    block: [256, 1, 1],
                    dynamic_lds: 0,
                };
                (
                    launch,
                    vec![
                        Arg::Buffer(inb),
                        Arg::Buffer(out),
                        Arg::F32(MEM_SCALE),
                        Arg::I32(MEM_ITEMS as i32),
                    ],
                    out,
                )
            }
        };
        Ok(Setup {
            device,
            program,
            launch,
            args,
            out,
        })
    }

    fn dispatch(&self, kind: Kind) -> Result<DispatchCounters, String> {
        (self.program.kernel(kind.kernel()))
            .map_err(softgpu_exec::DispatchError::from)
            .and_then(|kernel| {
                let desc = DispatchDesc::launch(&self.program, kernel, &self.launch, &self.args);
                self.device.dispatch(&desc)
            })
            .map(|outcome| outcome.counters)
            .map_err(|e| e.to_string())
    }
}

/// Best-of-`TRIALS` seconds per call of `f`, each trial calling it often
/// enough to last at least `seconds` (calibrated from a first call).
fn best_seconds_per_call(
    seconds: f64,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<(f64, u64), String> {
    let t = Instant::now();
    f()?;
    let first = t.elapsed().as_secs_f64().max(1e-6);
    let reps = ((seconds / first).ceil() as u64).max(1);
    let mut best = f64::INFINITY;
    for _ in 0..TRIALS {
        let t = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        best = best.min(t.elapsed().as_secs_f64() / reps as f64);
    }
    Ok((best, reps))
}

/// One contender of an interleaved measurement: runs its work `reps` times
/// and returns the seconds that took.
pub type Timed<'a> = Box<dyn FnMut(u64) -> Result<f64, String> + 'a>;

/// A [`Timed`] run of `once` repeated, timed by the host clock.
pub fn timed_on_host<'a>(once: impl Fn() -> Result<(), String> + 'a) -> Timed<'a> {
    Box::new(move |reps| {
        let t = Instant::now();
        for _ in 0..reps {
            once()?;
        }
        Ok(t.elapsed().as_secs_f64())
    })
}

/// Prints a benchmark's `--json` document.
pub fn print_json(doc: &serde_json::Value) -> Result<(), String> {
    println!(
        "{}",
        serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// Best seconds per repetition of each contender, and its repetitions per
/// trial, over `TRIALS` rounds, each round timing every contender once (for
/// at least `seconds`, calibrated from a first run) in turn.
pub fn best_interleaved_timed(seconds: f64, runs: &mut [Timed]) -> Result<Vec<(f64, u64)>, String> {
    let mut out = Vec::new();
    for run in runs.iter_mut() {
        let first = run(1)?.max(1e-6);
        out.push((f64::INFINITY, ((seconds / first).ceil() as u64).max(1)));
    }
    for _ in 0..TRIALS {
        for (run, (best, reps)) in runs.iter_mut().zip(out.iter_mut()) {
            *best = best.min(run(*reps)? / *reps as f64);
        }
    }
    Ok(out)
}

/// Best seconds per dispatch of each setup (see [`best_interleaved_timed`]),
/// with the statistics of one dispatch.
fn best_interleaved(
    seconds: f64,
    setups: &[Setup],
    kind: Kind,
) -> Result<Vec<(f64, u64, DispatchCounters)>, String> {
    let stats = setups
        .iter()
        .map(|s| s.dispatch(kind))
        .collect::<Result<Vec<_>, _>>()?;
    let mut runs: Vec<Timed> = setups
        .iter()
        .map(|s| timed_on_host(move || s.dispatch(kind).map(drop)))
        .collect();
    let best = best_interleaved_timed(seconds, &mut runs)?;
    Ok(best
        .into_iter()
        .zip(stats)
        .map(|((t, reps), s)| (t, reps, s))
        .collect())
}

/// The ALU kernel's whole grid on the host, single-threaded.
#[inline(never)]
fn native_alu(out: &mut [f32], iters: i32, a: f32, b: f32, c: f32) {
    for (gid, o) in out.iter_mut().enumerate() {
        *o = alu_item(gid as i32, iters, a, b, c);
    }
}

/// The memory kernel's whole grid on the host, single-threaded.
#[inline(never)]
fn native_mem(input: &[[f32; 4]], out: &mut [[f32; 4]], s: f32) {
    for (o, i) in out.iter_mut().zip(input) {
        *o = [i[0] * s, i[1] * s, i[2] * s, i[3] * s];
    }
}

/// Host-compiled time per grid, and its result (to check the emulator by).
fn native(kind: Kind, seconds: f64, input: &[f32]) -> Result<(f64, u64, Vec<f32>), String> {
    match kind {
        Kind::Alu => {
            let mut out = vec![0f32; ALU_ITEMS];
            let (t, reps) = best_seconds_per_call(seconds, || {
                let (a, b, c) = black_box(ALU_ABC);
                native_alu(black_box(&mut out), black_box(ALU_ITERS), a, b, c);
                Ok(())
            })?;
            Ok((t, reps, out))
        }
        Kind::Mem => {
            let input: Vec<[f32; 4]> = input
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect();
            let mut out = vec![[0f32; 4]; MEM_ITEMS];
            let (t, reps) = best_seconds_per_call(seconds, || {
                native_mem(black_box(&input), black_box(&mut out), black_box(MEM_SCALE));
                Ok(())
            })?;
            Ok((t, reps, out.concat()))
        }
    }
}

/// One row of the table.
struct Row {
    kind: Kind,
    threads: usize,
    dispatches: u64,
    seconds: f64,
    stats: DispatchCounters,
    check: bool,
}

impl Row {
    fn wave_rate(&self) -> f64 {
        self.stats.wave_instructions as f64 / self.seconds
    }
    fn lane_rate(&self) -> f64 {
        self.stats.lane_instructions as f64 / self.seconds
    }
}

pub struct Machine {
    pub cpu: String,
    pub cores: Option<usize>,
    pub logical: usize,
}

pub fn machine() -> Machine {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpu = field("model name").unwrap_or_else(|| "unknown CPU".into());
    // Physical cores: distinct (physical id, core id) pairs.
    let mut pairs = std::collections::BTreeSet::new();
    let (mut phys, mut core) = (None, None);
    for l in info.lines().chain(std::iter::once("")) {
        match l.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("physical id", v)) => phys = Some(v.to_string()),
            Some(("core id", v)) => core = Some(v.to_string()),
            None if l.trim().is_empty() => {
                if let Some(c) = core.take() {
                    pairs.insert((phys.take(), c));
                }
            }
            _ => {}
        }
    }
    let logical = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    Machine {
        cpu,
        cores: (!pairs.is_empty()).then_some(pairs.len()),
        logical,
    }
}

pub fn run(seconds: f64, json: bool) -> Result<(), String> {
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("--seconds {seconds}: expected a positive number"));
    }
    let m = machine();
    if !json {
        println!(
            "softgpu bench: emulated {TARGET}; host {} ({} cores, {} logical CPUs available)",
            m.cpu,
            m.cores.map_or("?".to_string(), |c| c.to_string()),
            m.logical
        );
        println!("each figure: best of {TRIALS} runs of >= {seconds} s\n");
    }
    let mut rows = Vec::new();
    let mut natives = Vec::new();
    for kind in [Kind::Alu, Kind::Mem] {
        let input = match kind {
            Kind::Alu => Vec::new(),
            Kind::Mem => Rng::new(7).f32s(4 * MEM_ITEMS, -100.0, 100.0),
        };
        let (native_seconds, native_reps, want) = native(kind, seconds, &input)?;
        natives.push((kind, native_seconds, native_reps));
        // The thread counts' trials alternate, so a slow or fast spell of the
        // host affects every configuration alike rather than one of them.
        let setups = THREADS
            .iter()
            .map(|&threads| Setup::new(kind, threads, &input))
            .collect::<Result<Vec<_>, _>>()?;
        let timings = best_interleaved(seconds, &setups, kind)?;
        for ((setup, threads), (t, reps, stats)) in setups.iter().zip(THREADS).zip(timings) {
            let got = bytes_f32(&setup.device.read(&setup.out).map_err(|e| e.to_string())?);
            let check = got.len() == want.len()
                && got
                    .iter()
                    .zip(&want)
                    .all(|(g, w)| g.to_bits() == w.to_bits());
            rows.push(Row {
                kind,
                threads,
                dispatches: reps,
                seconds: t,
                stats,
                check,
            });
        }
    }
    let native_of = |kind: Kind| {
        natives
            .iter()
            .find(|n| n.0 == kind)
            .map(|n| n.1)
            .unwrap_or(f64::NAN)
    };
    let single = |kind: Kind| {
        rows.iter()
            .find(|r| r.kind == kind && r.threads == 1)
            .map(|r| r.seconds)
            .unwrap_or(f64::NAN)
    };

    if json {
        let results: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let native = native_of(r.kind);
                serde_json::json!({
                    "kernel": r.kind.kernel(),
                    "workload": r.kind.describe(),
                    "threads": r.threads,
                    "dispatches_per_run": r.dispatches,
                    "seconds_per_dispatch": r.seconds,
                    "wave_instructions_per_dispatch": r.stats.wave_instructions,
                    "lane_instructions_per_dispatch": r.stats.lane_instructions,
                    "wave_instructions_per_second": r.wave_rate(),
                    "lane_instructions_per_second": r.lane_rate(),
                    "wave_instructions_per_second_per_thread": r.wave_rate() / r.threads as f64,
                    "lane_instructions_per_second_per_thread": r.lane_rate() / r.threads as f64,
                    "bytes_per_second": r.kind.bytes().map(|b| b as f64 / r.seconds),
                    "speedup_vs_1_thread": single(r.kind) / r.seconds,
                    "native_seconds_per_dispatch": native,
                    "slowdown_vs_native": r.seconds / native,
                    "result_matches_native": r.check,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "target": TARGET,
            "machine": { "cpu": m.cpu, "cores": m.cores, "logical_cpus": m.logical },
            "min_seconds_per_run": seconds,
            "trials": TRIALS,
            "results": results,
        });
        print_json(&doc)?;
    } else {
        println!(
            "{:<10} {:>7} {:>11} {:>12} {:>12} {:>13} {:>13} {:>9} {:>8} {:>11} {:>10}  result",
            "kernel",
            "threads",
            "s/dispatch",
            "wave-inst/s",
            "lane-inst/s",
            "wave/s/thread",
            "lane/s/thread",
            "GB/s",
            "1->N",
            "native s",
            "vs native"
        );
        for r in &rows {
            let native = native_of(r.kind);
            println!(
                "{:<10} {:>7} {:>11.4} {:>12} {:>12} {:>13} {:>13} {:>9} {:>7.2}x {:>11.5} {:>9.1}x  {}",
                r.kind.kernel(),
                r.threads,
                r.seconds,
                si(r.wave_rate()),
                si(r.lane_rate()),
                si(r.wave_rate() / r.threads as f64),
                si(r.lane_rate() / r.threads as f64),
                r.kind
                    .bytes()
                    .map_or("-".to_string(), |b| format!("{:.2}", b as f64 / r.seconds / 1e9)),
                single(r.kind) / r.seconds,
                native,
                r.seconds / native,
                if r.check { "= native" } else { "DIFFERS" }
            );
        }
        println!();
        for kind in [Kind::Alu, Kind::Mem] {
            println!("{}: {}", kind.kernel(), kind.describe());
        }
        println!("native s: the same kernel body compiled for the host by rustc, single-threaded; vs native: emulated / native time");
    }
    if rows.iter().any(|r| !r.check) {
        return Err("an emulated result differs from the host computation".into());
    }
    Ok(())
}
