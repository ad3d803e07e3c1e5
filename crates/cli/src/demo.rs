//! `softgpu demo`: runs the example kernels of `examples/` — code objects
//! compiled by clang-19 and embedded in the binary, so no compiler is needed —
//! checks every result against a CPU computation, and shows a fault report.

use std::time::Instant;

use softgpu_exec::{Arg, Device, DeviceConfig, DispatchStats, Launch, Program};

/// Targets the embedded code objects were compiled for.
pub const TARGETS: [&str; 2] = ["gfx1151", "gfx1100"];

/// Kernel files of `examples/kernels/`, whose code objects are embedded.
pub const EXAMPLES: [&str; 8] = [
    "vector_add",
    "saxpy",
    "reduce",
    "sgemm",
    "wave_reduce",
    "histogram",
    "alu_bench",
    "mem_bench",
];

/// Embedded bytes with the 8-byte alignment an ELF reader expects of its
/// input (`include_bytes!` alone guarantees none).
#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

/// The committed code object `examples/bin/NAME-TARGET.hsaco`, embedded.
pub fn code_object(name: &str, target: &str) -> Result<&'static [u8], String> {
    macro_rules! embed {
        ($($name:literal),*) => {$(
            if name == $name && target == "gfx1151" {
                static BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!("../../../examples/bin/", $name, "-gfx1151.hsaco")));
                return Ok(&BYTES.0);
            }
            if name == $name && target == "gfx1100" {
                static BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!("../../../examples/bin/", $name, "-gfx1100.hsaco")));
                return Ok(&BYTES.0);
            }
        )*};
    }
    embed!(
        "vector_add",
        "saxpy",
        "reduce",
        "sgemm",
        "wave_reduce",
        "histogram",
        "alu_bench",
        "mem_bench"
    );
    Err(format!(
        "no embedded code object {name} for {target} (embedded: {} for {})",
        EXAMPLES.join(", "),
        TARGETS.join(", ")
    ))
}

/// A small deterministic PRNG (SplitMix64) for test inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
    pub fn f32s(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32(lo, hi)).collect()
    }
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn bytes_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn bytes_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn bytes_u32(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Largest absolute difference between two equally long result vectors
/// (infinite when they differ in length or a value is NaN on one side only).
pub fn max_error<T: Copy + Into<f64>>(got: &[T], want: &[T]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            let (g, w): (f64, f64) = (g.into(), w.into());
            if g.is_nan() || w.is_nan() {
                if g.is_nan() && w.is_nan() {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                (g - w).abs()
            }
        })
        .fold(0.0, f64::max)
}

/// The ALU benchmark's work-item body (`examples/kernels/alu_bench.cl`), on the
/// host: the same operations in the same order, so the results are bit exact.
#[inline(always)]
pub fn alu_item(gid: i32, iters: i32, a: f32, b: f32, c: f32) -> f32 {
    let mut acc = [0f32; 8];
    for (k, x) in acc.iter_mut().enumerate() {
        *x = (gid + k as i32) as f32 * 0.001;
    }
    for _ in 0..iters {
        for x in acc.iter_mut() {
            let t = x.mul_add(a, b);
            let t = t * c;
            *x = t + b;
        }
    }
    acc.iter().fold(0.0f32, |s, &x| s + x)
}

/// The outcome of one example.
struct Outcome {
    kernel: &'static str,
    launch: Launch,
    /// Largest deviation from the CPU result (0 = bit exact).
    max_error: f64,
    /// Allowed deviation.
    tolerance: f64,
    stats: DispatchStats,
    note: String,
}

/// Runs `kernel` and returns its counters, with the error message naming it.
fn dispatch(
    device: &Device,
    program: &Program,
    kernel: &str,
    launch: &Launch,
    args: &[Arg],
) -> Result<DispatchStats, String> {
    device
        .dispatch(program, kernel, launch, args)
        .map_err(|e| format!("{kernel}: {e}"))
}

fn buffer(device: &Device, bytes: &[u8]) -> Result<softgpu_exec::Buffer, String> {
    device.alloc_from(bytes).map_err(|e| e.to_string())
}

fn zeroed(device: &Device, len: usize) -> Result<softgpu_exec::Buffer, String> {
    device.alloc_zeroed(len as u64).map_err(|e| e.to_string())
}

fn read(device: &Device, b: &softgpu_exec::Buffer) -> Result<Vec<u8>, String> {
    device.read(b).map_err(|e| e.to_string())
}

fn load(device: &Device, name: &str) -> Result<Program, String> {
    device
        .load(code_object(name, device.target())?)
        .map_err(|e| format!("{name}: {e}"))
}

fn launch_1d(items: u32, block: u32) -> Launch {
    Launch {
        grid: [items.div_ceil(block), 1, 1],
        block: [block, 1, 1],
        dynamic_lds: 0,
    }
}

fn vector_add(device: &Device, rng: &mut Rng) -> Result<Outcome, String> {
    let n = 1_000_003usize;
    let (a, b) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
    let program = load(device, "vector_add")?;
    let (da, db, dc) = (
        buffer(device, &f32_bytes(&a))?,
        buffer(device, &f32_bytes(&b))?,
        zeroed(device, 4 * n)?,
    );
    let launch = launch_1d(n as u32, 256);
    let stats = dispatch(
        device,
        &program,
        "vector_add",
        &launch,
        &[
            Arg::Buffer(da),
            Arg::Buffer(db),
            Arg::Buffer(dc),
            Arg::I32(n as i32),
        ],
    )?;
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let got = bytes_f32(&read(device, &dc)?);
    Ok(Outcome {
        kernel: "vector_add",
        launch,
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        stats,
        note: format!("n={n}"),
    })
}

fn saxpy(device: &Device, rng: &mut Rng) -> Result<Outcome, String> {
    let n = 1 << 20;
    let alpha = 2.5f32;
    let (x, y) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
    let program = load(device, "saxpy")?;
    let (dx, dy) = (
        buffer(device, &f32_bytes(&x))?,
        buffer(device, &f32_bytes(&y))?,
    );
    let launch = launch_1d(n as u32, 256);
    let stats = dispatch(
        device,
        &program,
        "saxpy",
        &launch,
        &[
            Arg::F32(alpha),
            Arg::Buffer(dx),
            Arg::Buffer(dy),
            Arg::I32(n as i32),
        ],
    )?;
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| alpha * x + y).collect();
    let got = bytes_f32(&read(device, &dy)?);
    Ok(Outcome {
        kernel: "saxpy",
        launch,
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        stats,
        note: format!("n={n} alpha={alpha}"),
    })
}

fn reduce(device: &Device, rng: &mut Rng) -> Result<Outcome, String> {
    const BLOCK: usize = 256;
    let n = (1 << 20) + 123;
    let input = rng.f32s(n, 0.0, 1.0);
    let groups = n.div_ceil(2 * BLOCK);
    let program = load(device, "reduce")?;
    let (din, dout) = (
        buffer(device, &f32_bytes(&input))?,
        zeroed(device, 4 * groups)?,
    );
    let launch = Launch {
        grid: [groups as u32, 1, 1],
        block: [BLOCK as u32, 1, 1],
        dynamic_lds: 0,
    };
    let stats = dispatch(
        device,
        &program,
        "reduce_sum",
        &launch,
        &[Arg::Buffer(din), Arg::Buffer(dout), Arg::I32(n as i32)],
    )?;
    // The same tree, level by level, so the partial sums are bit exact.
    let at = |i: usize| input.get(i).copied().unwrap_or(0.0);
    let want: Vec<f32> = (0..groups)
        .map(|g| {
            let mut s: Vec<f32> = (0..BLOCK)
                .map(|l| at(g * 2 * BLOCK + l) + at(g * 2 * BLOCK + l + BLOCK))
                .collect();
            let mut stride = BLOCK / 2;
            while stride > 0 {
                for l in 0..stride {
                    s[l] += s[l + stride];
                }
                stride /= 2;
            }
            s[0]
        })
        .collect();
    let got = bytes_f32(&read(device, &dout)?);
    let total: f64 = got.iter().map(|&x| x as f64).sum();
    Ok(Outcome {
        kernel: "reduce_sum",
        launch,
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        stats,
        note: format!("n={n} sum={total:.1}"),
    })
}

fn sgemm(device: &Device, rng: &mut Rng) -> Result<Outcome, String> {
    let (m, n, k) = (200usize, 176usize, 120usize);
    let a = rng.f32s(m * k, -1.0, 1.0);
    let b = rng.f32s(k * n, -1.0, 1.0);
    let program = load(device, "sgemm")?;
    let (da, db, dc) = (
        buffer(device, &f32_bytes(&a))?,
        buffer(device, &f32_bytes(&b))?,
        zeroed(device, 4 * m * n)?,
    );
    let launch = Launch {
        grid: [n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1],
        block: [16, 16, 1],
        dynamic_lds: 0,
    };
    let args = [
        Arg::Buffer(da),
        Arg::Buffer(db),
        Arg::Buffer(dc),
        Arg::I32(m as i32),
        Arg::I32(n as i32),
        Arg::I32(k as i32),
    ];
    let stats = dispatch(device, &program, "sgemm", &launch, &args)?;
    // Sequential k with fused multiply-adds, as the kernel does.
    let mut want = vec![0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            want[r * n + c] = (0..k).fold(0.0f32, |acc, i| a[r * k + i].mul_add(b[i * n + c], acc));
        }
    }
    let got = bytes_f32(&read(device, &dc)?);
    Ok(Outcome {
        kernel: "sgemm",
        launch,
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        stats,
        note: format!("{m}x{n}x{k}, 16x16 LDS tiles"),
    })
}

fn wave_reduce(device: &Device, rng: &mut Rng) -> Result<Outcome, String> {
    let n = 32 * 4096;
    let input: Vec<i32> = (0..n)
        .map(|_| (rng.next_u64() % 2001) as i32 - 1000)
        .collect();
    let program = load(device, "wave_reduce")?;
    let (din, dsum, dmax) = (
        buffer(device, &i32_bytes(&input))?,
        zeroed(device, 4 * n)?,
        zeroed(device, 4 * n)?,
    );
    let launch = launch_1d(n as u32, 128);
    let stats = dispatch(
        device,
        &program,
        "wave_reduce",
        &launch,
        &[Arg::Buffer(din), Arg::Buffer(dsum), Arg::Buffer(dmax)],
    )?;
    // Every lane of a wave (32 consecutive work-items) holds the wave's result.
    let want_sum: Vec<i32> = input
        .chunks(32)
        .flat_map(|w| [w.iter().sum::<i32>(); 32])
        .collect();
    let want_max: Vec<i32> = input
        .chunks(32)
        .flat_map(|w| [*w.iter().max().unwrap(); 32])
        .collect();
    let (got_sum, got_max) = (
        bytes_i32(&read(device, &dsum)?),
        bytes_i32(&read(device, &dmax)?),
    );
    let err = max_error(&got_sum, &want_sum).max(max_error(&got_max, &want_max));
    Ok(Outcome {
        kernel: "wave_reduce",
        launch,
        max_error: err,
        tolerance: 0.0,
        stats,
        note: "wave32 DPP/permlanex16 sum + sub_group_reduce_max".into(),
    })
}

fn histogram(device: &Device, rng: &mut Rng) -> Result<Outcome, String> {
    let n: usize = 1 << 20;
    // A skewed distribution: many hits on few bins (atomic contention).
    let data: Vec<u8> = (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if r.is_multiple_of(4) {
                (r >> 8) as u8
            } else {
                ((r >> 8) % 16) as u8
            }
        })
        .collect();
    let program = load(device, "histogram")?;
    let (din, dhist) = (buffer(device, &data)?, zeroed(device, 4 * 256)?);
    let launch = Launch {
        grid: [64, 1, 1],
        block: [256, 1, 1],
        dynamic_lds: 0,
    };
    let stats = dispatch(
        device,
        &program,
        "histogram",
        &launch,
        &[Arg::Buffer(din), Arg::Buffer(dhist), Arg::I32(n as i32)],
    )?;
    let mut want = vec![0u32; 256];
    for &d in &data {
        want[d as usize] += 1;
    }
    let got = bytes_u32(&read(device, &dhist)?);
    Ok(Outcome {
        kernel: "histogram",
        launch,
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        stats,
        note: format!("HIP, {n} bytes, LDS + global atomics"),
    })
}

fn alu_bench(device: &Device, _rng: &mut Rng) -> Result<Outcome, String> {
    let (items, iters) = (16384usize, 64);
    let (a, b, c) = (0.999f32, 0.001f32, 0.998f32);
    let program = load(device, "alu_bench")?;
    let dout = zeroed(device, 4 * items)?;
    let launch = launch_1d(items as u32, 256);
    let stats = dispatch(
        device,
        &program,
        "alu_bench",
        &launch,
        &[
            Arg::Buffer(dout),
            Arg::I32(iters),
            Arg::F32(a),
            Arg::F32(b),
            Arg::F32(c),
        ],
    )?;
    let want: Vec<f32> = (0..items)
        .map(|g| alu_item(g as i32, iters, a, b, c))
        .collect();
    let got = bytes_f32(&read(device, &dout)?);
    Ok(Outcome {
        kernel: "alu_bench",
        launch,
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        stats,
        note: format!("{iters} rounds x 8 fma/mul/add chains"),
    })
}

fn mem_bench(device: &Device, rng: &mut Rng) -> Result<Outcome, String> {
    let n = 1 << 18;
    let s = 1.5f32;
    let input = rng.f32s(4 * n, -100.0, 100.0);
    let program = load(device, "mem_bench")?;
    let (din, dout) = (buffer(device, &f32_bytes(&input))?, zeroed(device, 16 * n)?);
    let launch = launch_1d(n as u32, 256);
    let stats = dispatch(
        device,
        &program,
        "mem_bench",
        &launch,
        &[
            Arg::Buffer(din),
            Arg::Buffer(dout),
            Arg::F32(s),
            Arg::I32(n as i32),
        ],
    )?;
    let want: Vec<f32> = input.iter().map(|x| x * s).collect();
    let got = bytes_f32(&read(device, &dout)?);
    Ok(Outcome {
        kernel: "mem_bench",
        launch,
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        stats,
        note: format!("{n} float4, {} MiB moved", (32 * n) >> 20),
    })
}

type Example = fn(&Device, &mut Rng) -> Result<Outcome, String>;

/// Human-readable count: 1234567 → "1.23M".
pub fn si(x: f64) -> String {
    let (v, unit) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        a if a >= 1e3 => (x / 1e3, "k"),
        _ => (x, ""),
    };
    format!("{v:.2}{unit}")
}

fn dims(d: [u32; 3]) -> String {
    match d {
        [x, 1, 1] => format!("{x}"),
        [x, y, 1] => format!("{x}x{y}"),
        [x, y, z] => format!("{x}x{y}x{z}"),
    }
}

/// Runs every example; fails when a check fails.
pub fn run(target: &str, threads: Option<usize>) -> Result<(), String> {
    let device = Device::new(DeviceConfig {
        target: target.into(),
        threads,
        ..Default::default()
    })
    .map_err(|e| e.to_string())?;
    code_object("vector_add", target)?;
    let examples: [Example; 8] = [
        vector_add,
        saxpy,
        reduce,
        sgemm,
        wave_reduce,
        histogram,
        alu_bench,
        mem_bench,
    ];
    println!(
        "softgpu demo: {} example kernels on an emulated {target}, {} host thread(s)",
        examples.len(),
        device.threads()
    );
    println!(
        "(code objects compiled by clang-19 from examples/kernels/ and embedded in this binary)\n"
    );
    println!(
        "{:<12} {:>9} {:>7}  {:<4} {:>9} {:>10} {:>11} {:>9} {:>13}  notes",
        "kernel",
        "grid",
        "block",
        "check",
        "max err",
        "wave-inst",
        "lane-inst",
        "time",
        "lane-inst/s"
    );
    let mut rng = Rng::new(0x50f7_69b0);
    let (mut passed, mut failed) = (0, 0);
    let mut total = DispatchStats::default();
    let start = Instant::now();
    for example in examples {
        match example(&device, &mut rng) {
            Ok(o) => {
                let ok = o.max_error <= o.tolerance;
                if ok {
                    passed += 1;
                } else {
                    failed += 1;
                }
                let s = &o.stats;
                total.wave_instructions += s.wave_instructions;
                total.lane_instructions += s.lane_instructions;
                total.seconds += s.seconds;
                println!(
                    "{:<12} {:>9} {:>7}  {:<5} {:>9} {:>10} {:>11} {:>7.1}ms {:>13}  {}",
                    o.kernel,
                    dims(o.launch.grid),
                    dims(o.launch.block),
                    if ok { "OK" } else { "FAIL" },
                    format!("{:.3e}", o.max_error).replace("0.000e0", "0"),
                    si(s.wave_instructions as f64),
                    si(s.lane_instructions as f64),
                    s.seconds * 1e3,
                    si(s.lane_instructions as f64 / s.seconds.max(1e-9)),
                    o.note
                );
            }
            Err(e) => {
                failed += 1;
                println!("FAIL  {e}");
            }
        }
    }
    println!(
        "\n{passed} of {} checks passed; {} wave / {} lane instructions in {:.3} s of dispatch ({} lane-inst/s), {:.2} s in all",
        passed + failed,
        si(total.wave_instructions as f64),
        si(total.lane_instructions as f64),
        total.seconds,
        si(total.lane_instructions as f64 / total.seconds.max(1e-9)),
        start.elapsed().as_secs_f64()
    );
    fault_demo(&device)?;
    if failed > 0 {
        return Err(format!("{failed} example(s) failed"));
    }
    Ok(())
}

/// Dispatches the vector add with a bogus input pointer, prints the
/// executor's fault report, and shows that the device still works.
fn fault_demo(device: &Device) -> Result<(), String> {
    println!("\nfault report demo: vector_add with a = 0xdead0000 (not device memory):");
    let program = load(device, "vector_add")?;
    let n = 1000usize;
    let (db, dc) = (
        buffer(device, &f32_bytes(&vec![1.0; n]))?,
        zeroed(device, 4 * n)?,
    );
    let launch = launch_1d(n as u32, 256);
    match device.dispatch(
        &program,
        "vector_add",
        &launch,
        &[
            Arg::Pointer(0xdead_0000),
            Arg::Buffer(db),
            Arg::Buffer(dc),
            Arg::I32(n as i32),
        ],
    ) {
        Ok(_) => return Err("the bad access was not reported as a fault".into()),
        Err(e) => {
            for line in e.to_string().lines() {
                println!("  | {line}");
            }
        }
    }
    let da = buffer(device, &f32_bytes(&vec![2.0; n]))?;
    dispatch(
        device,
        &program,
        "vector_add",
        &launch,
        &[
            Arg::Buffer(da),
            Arg::Buffer(db),
            Arg::Buffer(dc),
            Arg::I32(n as i32),
        ],
    )?;
    let ok = bytes_f32(&read(device, &dc)?).iter().all(|&x| x == 3.0);
    println!(
        "the process goes on: the same device then runs vector_add correctly again: {}",
        if ok { "OK" } else { "FAIL" }
    );
    if ok {
        Ok(())
    } else {
        Err("vector_add after the fault gave wrong results".into())
    }
}
