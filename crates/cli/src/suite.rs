//! `softgpu bench --suite`: thirteen typical GPU kernels (`bench/suite.cl`),
//! each compiled by clang-19 for softgpu's gfx1151 and run with 1 and 2
//! worker threads, and the same source run on pocl, the CPU OpenCL
//! implementation, through a small C harness (`bench/pocl_harness.c`) built
//! at bench time. Using pocl through a separate program keeps OpenCL out of
//! the build: softgpu builds and runs without it, and only `--suite` needs it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use softgpu_compiler::{Compiler, Language};
use softgpu_exec::{Arg, Buffer, Device, DispatchDesc, Launch, Program};

use crate::bench::{
    best_interleaved_timed, machine, print_json, timed_on_host, Timed, TARGET, TRIALS,
};
use crate::demo::{f32_bytes, si, Rng};

const SOURCE: &str = include_str!("../bench/suite.cl");
const HARNESS: &str = include_str!("../bench/pocl_harness.c");
const POCL_APT: &str = "apt-get install -y pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev";
/// pocl's worker threads, matched to softgpu's larger thread count.
const POCL_THREADS: &str = "2";

/// A kernel argument, given alike to both implementations.
enum Param {
    In(Vec<u8>),
    /// A zeroed output buffer of this many bytes, compared after one run.
    Out(u64),
    I32(i32),
    F32(f32),
    F64(f64),
}

impl Param {
    /// The argument in the harness's notation.
    fn harness_word(&self, dir: &Path, index: usize) -> Result<String, String> {
        let file = |what: &str| dir.join(format!("{what}{index}.bin"));
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        Ok(match self {
            Param::In(data) => {
                let path = file("in");
                std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
                format!("in:{}", path.display())
            }
            Param::Out(bytes) => format!("out:{bytes}:{}", file("out").display()),
            Param::I32(v) => format!("val:{}", hex(&v.to_le_bytes())),
            Param::F32(v) => format!("val:{}", hex(&v.to_le_bytes())),
            Param::F64(v) => format!("val:{}", hex(&v.to_le_bytes())),
        })
    }
}

/// How outputs must agree: bit for bit, or element-wise within a relative
/// tolerance (the summation order or fma contraction may differ).
#[derive(Clone, Copy)]
enum Check {
    Exact,
    F32(f64),
    F64(f64),
}

/// One benchmark: a kernel of `suite.cl`, its launch and its arguments.
struct Case {
    kernel: &'static str,
    what: String,
    /// Workgroups and work-items per workgroup.
    grid: [u32; 3],
    block: [u32; 3],
    /// Dispatches per run (the many-small-launches case has many).
    launches: u32,
    params: Vec<Param>,
    check: Check,
}

fn f32s(rng: &mut Rng, n: usize, lo: f32, hi: f32) -> Param {
    Param::In(f32_bytes(&rng.f32s(n, lo, hi)))
}

fn u32s(rng: &mut Rng, n: usize) -> Param {
    Param::In(
        (0..n)
            .flat_map(|_| (rng.next_u64() as u32).to_le_bytes())
            .collect(),
    )
}

/// One-dimensional launch of `items` work-items in groups of 256.
fn flat(kernel: &'static str, what: String, items: u32, params: Vec<Param>, check: Check) -> Case {
    Case {
        kernel,
        what,
        grid: [items / 256, 1, 1],
        block: [256, 1, 1],
        launches: 1,
        params,
        check,
    }
}

/// Two-dimensional launch over w x h work-items in 16x16 groups.
fn square(kernel: &'static str, what: String, w: u32, h: u32, params: Vec<Param>) -> Case {
    Case {
        kernel,
        what,
        grid: [w / 16, h / 16, 1],
        block: [16, 16, 1],
        launches: 1,
        params,
        check: Check::F32(1e-4),
    }
}

/// The suite. Sizes put each kernel at roughly 10-200 ms on softgpu.
fn cases() -> Vec<Case> {
    let mut r = Rng::new(12);
    let r = &mut r;
    let (gemm, w, h, cube) = (192u32, 1024u32, 512u32, 96u32);
    let (big, half) = (1u32 << 22, 1u32 << 21);
    let mut stencil3d = flat(
        "stencil3d",
        format!("7-point stencil, {cube}^3 f32"),
        cube.pow(3),
        vec![
            f32s(r, cube.pow(3) as usize, 0.0, 1.0),
            Param::Out(4 * cube.pow(3) as u64),
            Param::I32(cube as i32),
        ],
        Check::F32(1e-5),
    );
    (stencil3d.grid, stencil3d.block) = ([cube / 32, cube / 4, cube / 2], [32, 4, 2]);
    let mut tiny = flat(
        "tiny",
        "200 launches of one 256-item group, i32 x*3+1".into(),
        256,
        vec![u32s(r, 256), Param::Out(1024)],
        Check::Exact,
    );
    tiny.launches = 200;
    let n2 = (gemm * gemm) as usize;
    vec![
        square(
            "sgemm",
            format!("{gemm}x{gemm} f32 C=A*B, 16x16 LDS tiles"),
            gemm,
            gemm,
            vec![
                f32s(r, n2, -1.0, 1.0),
                f32s(r, n2, -1.0, 1.0),
                Param::Out(4 * n2 as u64),
                Param::I32(gemm as i32),
            ],
        ),
        square(
            "stencil2d",
            format!("5-point stencil, {w}x{h} f32"),
            w,
            h,
            vec![
                f32s(r, (w * h) as usize, 0.0, 1.0),
                Param::Out(4 * (w * h) as u64),
                Param::I32(w as i32),
                Param::I32(h as i32),
            ],
        ),
        stencil3d,
        square(
            "conv2d",
            format!("5x5 convolution, {h}x{h} f32"),
            h,
            h,
            vec![
                f32s(r, (h * h) as usize, 0.0, 1.0),
                f32s(r, 25, -0.2, 0.2),
                Param::Out(4 * (h * h) as u64),
                Param::I32(h as i32),
                Param::I32(h as i32),
            ],
        ),
        flat(
            "reduce",
            format!("sum of {big} f32: LDS tree + CAS atomic, 65536 items"),
            1 << 16,
            vec![
                f32s(r, big as usize, 0.0, 1.0),
                Param::Out(4),
                Param::I32(big as i32),
            ],
            Check::F32(1e-4),
        ),
        flat(
            "scan",
            "inclusive u32 scan of 256-item groups, 2^19 items".into(),
            1 << 19,
            vec![u32s(r, 1 << 19), Param::Out(4 << 19)],
            Check::Exact,
        ),
        flat(
            "histogram",
            format!("256-bin histogram of {big} u32, local + global atomics"),
            1 << 16,
            vec![
                u32s(r, big as usize),
                Param::Out(1024),
                Param::I32(big as i32),
            ],
            Check::Exact,
        ),
        flat(
            "saxpy",
            format!("z = a*x + y, {half} f32"),
            half,
            vec![
                Param::F32(1.5),
                f32s(r, half as usize, -1.0, 1.0),
                f32s(r, half as usize, -1.0, 1.0),
                Param::Out(4 * half as u64),
            ],
            Check::F32(1e-6),
        ),
        flat(
            "triad",
            format!("a = b + s*c (STREAM triad), {half} f32"),
            half,
            vec![
                Param::Out(4 * half as u64),
                f32s(r, half as usize, -1.0, 1.0),
                f32s(r, half as usize, -1.0, 1.0),
                Param::F32(3.0),
            ],
            Check::F32(1e-6),
        ),
        flat(
            "strided",
            format!("out[i] = 2 in[2i], {half} f32 read at stride 2"),
            half,
            vec![
                f32s(r, 2 * half as usize, -1.0, 1.0),
                Param::Out(4 * half as u64),
            ],
            Check::Exact,
        ),
        flat(
            "copy",
            "stream copy, 2^20 float4 (16 MiB)".into(),
            1 << 20,
            vec![f32s(r, 4 << 20, -1.0, 1.0), Param::Out(16 << 20)],
            Check::Exact,
        ),
        square(
            "transpose",
            format!("{w}x{w} f32 transpose through LDS"),
            w,
            w,
            vec![
                f32s(r, (w * w) as usize, -1.0, 1.0),
                Param::Out(4 * (w * w) as u64),
                Param::I32(w as i32),
            ],
        ),
        flat(
            "hash",
            "256 xorshift-multiply rounds on 2^16 u32".into(),
            1 << 16,
            vec![u32s(r, 1 << 16), Param::Out(4 << 16), Param::I32(256)],
            Check::Exact,
        ),
        flat(
            "f64_poly",
            "y = a*x + degree-8 poly(x), 2^19 f64".into(),
            1 << 19,
            vec![
                Param::F64(0.75),
                Param::In(
                    r.f32s(1 << 19, -1.0, 1.0)
                        .iter()
                        .flat_map(|&x| f64::from(x).to_le_bytes())
                        .collect(),
                ),
                Param::Out(8 << 19),
            ],
            Check::F64(1e-12),
        ),
        tiny,
    ]
}

/// A case set up on an emulated device, ready to run again and again.
struct Emulated<'a> {
    case: &'a Case,
    device: Device,
    program: Program,
    launch: Launch,
    args: Vec<Arg>,
    outs: Vec<Buffer>,
}

impl<'a> Emulated<'a> {
    fn new(case: &'a Case, threads: usize, code: &[u8]) -> Result<Emulated<'a>, String> {
        let e = |e: softgpu_exec::DispatchError| e.to_string();
        let mut config = softgpu_env::device_config(TARGET).map_err(|e| e.to_string())?;
        (config.arena_bytes(1 << 30).settings_mut())
            .threads(threads)
            .map_err(|e| e.to_string())?;
        let device = Device::new(&config).map_err(e)?;
        let program = device.load(code).map_err(e)?;
        let (mut args, mut outs) = (Vec::new(), Vec::new());
        for p in &case.params {
            args.push(match p {
                Param::In(data) => Arg::Buffer(device.alloc_from(data).map_err(e)?),
                Param::Out(bytes) => {
                    let b = device.alloc_zeroed(*bytes).map_err(e)?;
                    outs.push(b);
                    Arg::Buffer(b)
                }
                Param::I32(v) => Arg::I32(*v),
                Param::F32(v) => Arg::F32(*v),
                Param::F64(v) => Arg::F64(*v),
            });
        }
        let launch = Launch {
            grid: case.grid,
            block: case.block,
            dynamic_lds: 0,
        };
        Ok(Emulated {
            case,
            device,
            program,
            launch,
            args,
            outs,
        })
    }

    /// One run (all its launches); returns the lane instructions executed.
    fn run(&self) -> Result<u64, String> {
        let mut lanes = 0;
        for _ in 0..self.case.launches {
            let s = (self.program.kernel(self.case.kernel))
                .map_err(softgpu_exec::DispatchError::from)
                .and_then(|kernel| {
                    let desc =
                        DispatchDesc::launch(&self.program, kernel, &self.launch, &self.args);
                    self.device.dispatch(&desc)
                })
                .map_err(|e| format!("{}: {e}", self.case.kernel))?
                .counters;
            lanes += s.lane_instructions;
        }
        Ok(lanes)
    }

    fn outputs(&self) -> Result<Vec<Vec<u8>>, String> {
        self.outs
            .iter()
            .map(|b| self.device.read(b).map_err(|e| e.to_string()))
            .collect()
    }
}

/// The harness running one case on pocl, waiting for trial requests.
struct Pocl {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Pocl {
    /// Starts the harness on `case`; it runs the case once, writes its
    /// outputs, and returns them with the handle.
    fn start(harness: &Path, dir: &Path, case: &Case) -> Result<(Pocl, Vec<Vec<u8>>), String> {
        let source = dir.join("suite.cl");
        let sizes = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
        let global = [0, 1, 2].map(|k| case.grid[k] * case.block[k]);
        let mut cmd = Command::new(harness);
        cmd.arg(&source)
            .arg(case.kernel)
            .arg(sizes(global))
            .arg(sizes(case.block))
            .arg(case.launches.to_string());
        for (k, p) in case.params.iter().enumerate() {
            cmd.arg(p.harness_word(dir, k)?);
        }
        let mut child = cmd
            .env("POCL_MAX_PTHREAD_COUNT", POCL_THREADS)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", harness.display()))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut pocl = Pocl {
            child,
            stdin,
            stdout,
        };
        if pocl.line()? != "ready" {
            return Err(format!("{}: the pocl harness did not start", case.kernel));
        }
        let outs = case
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p, Param::Out(_)))
            .map(|(k, _)| {
                let path = dir.join(format!("out{k}.bin"));
                std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
            })
            .collect::<Result<_, _>>()?;
        Ok((pocl, outs))
    }

    /// The harness's next line of output; its exit status if there is none.
    fn line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        if line.is_empty() {
            let status = self.child.wait().map_err(|e| e.to_string())?;
            return Err(format!("the pocl harness failed ({status})"));
        }
        Ok(line.trim().to_string())
    }

    /// Seconds `reps` runs take on pocl.
    fn time(&mut self, reps: u64) -> Result<f64, String> {
        let stdin = self.stdin.as_mut().expect("stdin open until drop");
        writeln!(stdin, "{reps}").map_err(|e| e.to_string())?;
        let line = self.line()?;
        line.parse()
            .map_err(|_| format!("the pocl harness printed {line:?}"))
    }
}

impl Drop for Pocl {
    fn drop(&mut self) {
        // End of input ends the harness.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// Builds the harness in `dir`, failing with what to install if OpenCL is
/// missing.
fn build_harness(dir: &Path) -> Result<PathBuf, String> {
    let source = dir.join("pocl_harness.c");
    let exe = dir.join("pocl_harness");
    std::fs::write(&source, HARNESS).map_err(|e| format!("{}: {e}", source.display()))?;
    let out = Command::new("cc")
        .arg("-O2")
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .arg("-lOpenCL")
        .output()
        .map_err(|e| format!("cc (to build the pocl harness): {e}; install gcc"))?;
    if !out.status.success() {
        return Err(format!(
            "building the pocl harness failed: it needs the OpenCL headers (CL/cl.h) and \
             libOpenCL.so; install them and pocl with: {POCL_APT}\n{}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(exe)
}

/// The name of pocl's device, or what to install if there is none.
fn probe(harness: &Path) -> Result<String, String> {
    let out = Command::new(harness)
        .arg("--probe")
        .output()
        .map_err(|e| format!("{}: {e}", harness.display()))?;
    match out.status.code() {
        Some(0) => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        Some(3) => Err(format!(
            "pocl is not installed: the OpenCL loader found no pocl platform \
             (libpocl.so.2, registered by /etc/OpenCL/vendors/pocl.icd); install it with: {POCL_APT}"
        )),
        _ => Err(format!(
            "the pocl harness failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// The largest element difference between two outputs, relative to
/// max(1, |expected|) for floats; infinite if the lengths or any bits of an
/// exact output differ.
fn difference(check: Check, got: &[u8], want: &[u8]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    let rel = |g: f64, w: f64| {
        let d = (g - w).abs() / w.abs().max(1.0);
        if d.is_nan() {
            f64::INFINITY
        } else {
            d
        }
    };
    let (width, decode): (usize, fn(&[u8]) -> f64) = match check {
        Check::Exact if got == want => return 0.0,
        Check::Exact => return f64::INFINITY,
        Check::F32(_) => (4, |b| f64::from(f32::from_le_bytes(b.try_into().unwrap()))),
        Check::F64(_) => (8, |b| f64::from_le_bytes(b.try_into().unwrap())),
    };
    got.chunks_exact(width)
        .zip(want.chunks_exact(width))
        .map(|(g, w)| rel(decode(g), decode(w)))
        .fold(0.0, f64::max)
}

fn tolerance(check: Check) -> f64 {
    match check {
        Check::Exact => 0.0,
        Check::F32(t) | Check::F64(t) => t,
    }
}

/// One case's measurements.
struct Row {
    kernel: &'static str,
    what: String,
    /// Best seconds per run: softgpu with 1 and 2 threads, pocl.
    one: f64,
    two: f64,
    pocl: f64,
    lane_instructions: u64,
    /// Largest difference of softgpu's outputs from pocl's.
    difference: f64,
    ok: bool,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.two / self.pocl
    }
}

/// Sets up, checks and times one case.
fn measure(
    case: &Case,
    code: &[u8],
    harness: &Path,
    dir: &Path,
    seconds: f64,
) -> Result<Row, String> {
    let emulated = [1, 2]
        .map(|threads| Emulated::new(case, threads, code))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    // Outputs are compared after the first run: atomics accumulate over runs.
    let lane_instructions = emulated[1].run()?;
    emulated[0].run()?;
    let (mut pocl, want) = Pocl::start(harness, dir, case)?;
    let mut diff: f64 = 0.0;
    for e in &emulated {
        for (got, want) in e.outputs()?.iter().zip(&want) {
            diff = diff.max(difference(case.check, got, want));
        }
    }
    let mut runs: Vec<Timed> = emulated
        .iter()
        .map(|e| timed_on_host(move || e.run().map(drop)))
        .collect();
    runs.push(Box::new(|reps| pocl.time(reps)));
    let best = best_interleaved_timed(seconds, &mut runs)?;
    Ok(Row {
        kernel: case.kernel,
        what: case.what.clone(),
        one: best[0].0,
        two: best[1].0,
        pocl: best[2].0,
        lane_instructions,
        difference: diff,
        ok: diff <= tolerance(case.check),
    })
}

fn geomean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0), |(s, n), x| (s + x.ln(), n + 1));
    (sum / n as f64).exp()
}

/// Runs the suite, or only the cases named in `only` when it is not empty.
pub fn run(seconds: f64, json: bool, only: &[String]) -> Result<(), String> {
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("--seconds {seconds}: expected a positive number"));
    }
    let all = cases();
    if let Some(bad) = only
        .iter()
        .find(|k| !all.iter().any(|c| c.kernel == k.as_str()))
    {
        let names: Vec<_> = all.iter().map(|c| c.kernel).collect();
        return Err(format!(
            "--kernels: the suite has no kernel {bad:?} (it has {})",
            names.join(", ")
        ));
    }
    let picked = all
        .into_iter()
        .filter(|c| only.is_empty() || only.iter().any(|k| k == c.kernel))
        .collect::<Vec<_>>();
    let dir = std::env::temp_dir().join(format!("softgpu-bench-suite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = run_in(&dir, &picked, seconds, json);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(dir: &Path, cases: &[Case], seconds: f64, json: bool) -> Result<(), String> {
    let harness = build_harness(dir)?;
    let pocl_device = probe(&harness)?;
    std::fs::write(dir.join("suite.cl"), SOURCE).map_err(|e| e.to_string())?;
    let code = Compiler::new(TARGET)
        .and_then(|c| c.compile(SOURCE, Language::OpenCl))
        .map_err(|e| format!("compiling bench/suite.cl: {e}"))?;
    let m = machine();
    if !json {
        println!(
            "softgpu bench --suite: emulated {TARGET} vs pocl {pocl_device} (POCL_MAX_PTHREAD_COUNT={POCL_THREADS}); host {} ({} cores)",
            m.cpu,
            m.cores.map_or("?".to_string(), |c| c.to_string()),
        );
        println!(
            "each figure: best of {TRIALS} interleaved runs of >= {seconds} s; kernel time only\n"
        );
        println!(
            "{:<10} {:>11} {:>11} {:>11} {:>8} {:>12} {:>6}  result",
            "kernel", "softgpu 2t", "softgpu 1t", "pocl", "ratio", "lane-inst/s", "1->2"
        );
    }
    let mut rows = Vec::new();
    for case in cases {
        let r = measure(case, &code, &harness, dir, seconds)?;
        if !json {
            println!(
                "{:<10} {:>9.2}ms {:>9.2}ms {:>9.3}ms {:>7.1}x {:>12} {:>5.2}x  {}",
                r.kernel,
                r.two * 1e3,
                r.one * 1e3,
                r.pocl * 1e3,
                r.ratio(),
                si(r.lane_instructions as f64 / r.two),
                r.one / r.two,
                if r.ok {
                    "= pocl".to_string()
                } else {
                    format!("DIFFERS ({:.1e})", r.difference)
                }
            );
        }
        rows.push(r);
    }
    let mean = geomean(rows.iter().map(Row::ratio));
    if json {
        let results: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "kernel": r.kernel,
                    "workload": r.what,
                    "softgpu_seconds_2_threads": r.two,
                    "softgpu_seconds_1_thread": r.one,
                    "pocl_seconds": r.pocl,
                    "ratio_softgpu_to_pocl": r.ratio(),
                    "lane_instructions_per_run": r.lane_instructions,
                    "lane_instructions_per_second": r.lane_instructions as f64 / r.two,
                    "speedup_1_to_2_threads": r.one / r.two,
                    "max_difference_from_pocl": r.difference,
                    "result_matches_pocl": r.ok,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "target": TARGET,
            "machine": { "cpu": m.cpu, "cores": m.cores, "logical_cpus": m.logical },
            "pocl_device": pocl_device,
            "pocl_max_pthread_count": POCL_THREADS,
            "min_seconds_per_run": seconds,
            "trials": TRIALS,
            "results": results,
            "geomean_ratio": mean,
        });
        print_json(&doc)?;
    } else {
        println!("\ngeometric mean of ratios (softgpu 2 threads / pocl): {mean:.1}x\n");
        for r in &rows {
            println!("{}: {}", r.kernel, r.what);
        }
        println!("ratio: softgpu 2t / pocl time; lane-inst/s: softgpu 2t; result: outputs of both softgpu runs against pocl's");
    }
    if rows.iter().any(|r| !r.ok) {
        return Err("a softgpu result differs from pocl's".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_relative_for_floats_and_exact_for_integers() {
        let f = |v: &[f32]| f32_bytes(v);
        assert_eq!(difference(Check::Exact, &[1, 2], &[1, 2]), 0.0);
        assert!(difference(Check::Exact, &[1, 2], &[1, 3]).is_infinite());
        let d = difference(Check::F32(1e-4), &f(&[100.0, 0.5]), &f(&[100.01, 0.5]));
        assert!((d - 1e-4).abs() < 1e-6, "{d}");
        assert!(difference(Check::F32(1e-4), &f(&[f32::NAN]), &f(&[1.0])).is_infinite());
        assert!(difference(Check::F64(0.0), &[0; 8], &[0; 16]).is_infinite());
    }

    #[test]
    fn every_case_fits_its_launch() {
        for case in cases() {
            let items: u32 = (0..3).map(|k| case.grid[k] * case.block[k]).product();
            assert!(
                items > 0 && case.block.iter().product::<u32>() <= 1024,
                "{}",
                case.kernel
            );
            assert!(SOURCE.contains(&format!("kernel void {}(", case.kernel)));
        }
    }

    #[test]
    fn geomean_of_ratios() {
        assert!((geomean([2.0, 8.0].into_iter()) - 4.0).abs() < 1e-12);
    }
}
