//! `softgpu demo`: a tour of the safe Rust API (the `softgpu` crate) on the
//! example kernels of `examples/` — code objects compiled by clang-19 and
//! embedded in the binary, so no compiler is needed. Every result is checked
//! against a CPU computation, and the demo fails if any is wrong.

use std::fmt::Debug;
use std::time::Instant;

use softgpu::{
    Args, Buffer, Config, Device, Dim3, Error, Instance, Kernel, KernelFault, Module, Scalar,
    Stream,
};

/// The demo's errors: the API's and its own messages.
type Result<T, E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

/// Embedded bytes with the 8-byte alignment an ELF reader expects of its
/// input (`include_bytes!` alone guarantees none).
#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

/// From one list of targets and one of examples: [`TARGETS`],
/// [`EXAMPLES`] and `embedded`, which holds every example's committed code
/// object `examples/bin/NAME-TARGET.hsaco` for every target
/// (`include_bytes!` needs each path as a literal).
macro_rules! embedded {
    ([$($target:literal),*], $names:tt) => {
        /// Targets the embedded code objects were compiled for.
        pub const TARGETS: &[&str] = &[$($target),*];

        /// Kernel files of `examples/kernels/` whose code objects are
        /// embedded (`empty`, only for the API benchmarks, is not).
        pub const EXAMPLES: &[&str] = &embedded!(@names $names);

        fn embedded(name: &str, target: &str) -> Option<&'static [u8]> {
            $(embedded!(@for name, target, $target, $names);)*
            None
        }
    };
    (@names [$($name:literal),*]) => {
        [$($name),*]
    };
    (@for $n:ident, $t:ident, $target:literal, [$($name:literal),*]) => {$(
        if $n == $name && $t == $target {
            static BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
                "../../../examples/bin/", $name, "-", $target, ".hsaco"
            )));
            return Some(&BYTES.0);
        }
    )*};
}

embedded!(
    ["gfx1151", "gfx1100", "gfx1201", "gfx1030", "gfx90a", "gfx942"],
    [
        "vector_add",
        "saxpy",
        "reduce",
        "sgemm",
        "wave_reduce",
        "histogram",
        "alu_bench",
        "mem_bench"
    ]
);

/// The committed code object `examples/bin/NAME-TARGET.hsaco`, embedded.
pub fn code_object(name: &str, target: &str) -> Result<&'static [u8], String> {
    embedded(name, target).ok_or_else(|| {
        format!(
            "no embedded code object {name} for {target} (embedded: {} for {})",
            EXAMPLES.join(", "),
            TARGETS.join(", ")
        )
    })
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

pub fn bytes_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
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

/// Runs the tour on device 0 of an instance configured from the
/// environment (`SOFTGPU_PROFILE`, ...) and `threads`; fails when a check
/// fails.
pub fn run(threads: Option<usize>) -> Result<(), String> {
    let mut config = softgpu_env::config().map_err(|e| e.to_string())?;
    if let Some(n) = threads {
        config
            .settings_mut()
            .threads(n)
            .map_err(|e| e.to_string())?;
    }
    tour(&config).map_err(|e| e.to_string())
}

fn tour(config: &Config) -> Result<()> {
    let started = Instant::now();
    let threads = config.get_settings().get_threads();
    let device = Instance::new(config)?.device(0)?;
    print_line("Instance::new", "", &describe(&device, threads));
    let stream = device.stream()?;
    let examples = Examples::load(&stream)?;
    let loaded = format!(
        "{} embedded code objects for {} (clang-19, examples/kernels/)",
        examples.0.len(),
        device.target()
    );
    print_line("load_bytes", "", &loaded);
    let columns = format!(
        "{:>9} x {:<6} {:>11}  notes",
        "grid", "block", "kernel time"
    );
    print_line("kernel", "", &columns);
    let mut rng = Rng::new(0x50f7_69b0);
    let mut tally = Tally::default();
    // The examples are built for each family's default wave: CDNA's 64
    // lanes, RDNA's 32.
    let wave = if softgpu_isa::target::wave64_only(device.target()) {
        64
    } else {
        32
    };
    for make in CASES {
        let case = make(&mut rng, wave);
        tally.record(case.kernel, run_case(&stream, &examples, &case));
    }
    tally.record("graph", graph_replays(&stream, &examples, &mut rng));
    tally.record("two streams", two_streams(&device, &examples, &mut rng));
    tally.record("fault", fault(&stream, &examples));
    let again = vector_add_of(&mut rng, 1000);
    tally.record("after fault", run_case(&stream, &examples, &again));
    tally.summary(started)
}

/// Width of the step column, and of the step and verdict columns together.
const STEP: usize = 12;
const INDENT: usize = STEP + 6;

fn print_line(step: &str, verdict: &str, detail: &str) {
    println!("{step:<STEP$} {verdict:<4} {detail}");
}

/// `text` as a further line of a step's detail, under its first line.
fn continuation(text: &str) -> String {
    format!("\n{:INDENT$}{text}", "")
}

/// The device's properties in one line.
fn describe(device: &Device, threads: Option<usize>) -> String {
    let p = device.properties();
    let waves: Vec<String> = p.wave_sizes.iter().map(u32::to_string).collect();
    let threads = threads.map_or_else(
        || "one worker thread per host core".to_string(),
        |n| format!("{n} worker threads (Settings::threads)"),
    );
    format!(
        "device 0 is {} ({}): {} CUs, wave{}, {} KiB LDS, {} GiB; {threads}",
        p.name,
        p.marketing_name,
        p.compute_units,
        waves.join("/"),
        p.lds_bytes >> 10,
        p.memory.device_bytes >> 30
    )
}

/// The embedded code objects, loaded once on the demo's device.
struct Examples(Vec<(&'static str, Module)>);

impl Examples {
    fn load(stream: &Stream) -> Result<Examples> {
        let target = stream.device().target();
        let modules = EXAMPLES
            .iter()
            .map(|&name| Ok((name, stream.load_bytes(code_object(name, target)?)?)))
            .collect::<Result<_>>()?;
        Ok(Examples(modules))
    }

    /// Kernel `kernel` of the code object built from `example`.
    fn kernel(&self, example: &str, kernel: &str) -> Result<Kernel> {
        let (_, module) = self
            .0
            .iter()
            .find(|(name, _)| *name == example)
            .ok_or_else(|| format!("no embedded example {example}"))?;
        Ok(module.kernel(kernel)?)
    }
}

/// An element type the demo moves between host and device.
trait Element: Scalar + PartialEq + Debug {}
impl<T: Scalar + PartialEq + Debug> Element for T {}

/// Host values of one buffer, kept typed so they upload and read back as
/// what they are.
trait Values {
    fn bytes(&self) -> usize;
    fn upload(&self, stream: &Stream) -> Result<Buffer>;
    /// Reads `buffer` and says how it differs from these values, if it does.
    fn compare(&self, stream: &Stream, buffer: &Buffer) -> Result<Option<String>>;
}

impl<T: Element> Values for Vec<T> {
    fn bytes(&self) -> usize {
        self.len() * T::SIZE
    }

    fn upload(&self, stream: &Stream) -> Result<Buffer> {
        upload_new(stream, self)
    }

    fn compare(&self, stream: &Stream, buffer: &Buffer) -> Result<Option<String>> {
        Ok(mismatch(&stream.read_vec::<T>(buffer)?, self))
    }
}

/// A new device buffer holding `values` (uploaded in stream order).
fn upload_new<T: Element>(stream: &Stream, values: &[T]) -> Result<Buffer> {
    let buffer = stream.allocate(values.len() * T::SIZE)?;
    stream.upload(&buffer, values)?;
    Ok(buffer)
}

/// How `got` differs from `want`, if it does. Exact equality: every
/// reference computation repeats the kernel's operations in its order.
fn mismatch<T: PartialEq + Debug>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} values, expected {}", got.len(), want.len()));
    }
    let mut differ = (0..got.len()).filter(|&i| got[i] != want[i]);
    let first = differ.next()?;
    Some(format!(
        "{} of {} values differ; [{first}] is {:?}, expected {:?}",
        1 + differ.count(),
        got.len(),
        got[first],
        want[first]
    ))
}

/// What a buffer argument holds before the dispatch.
enum Init {
    Upload(Box<dyn Values>),
    Zeroed(usize),
}

/// One kernel argument of an example.
enum Param {
    /// A device buffer, compared after the dispatch with `want` if given.
    Buffer {
        init: Init,
        want: Option<Box<dyn Values>>,
    },
    I32(i32),
    F32(f32),
}

/// A buffer the kernel reads.
fn input<T: Element>(values: Vec<T>) -> Param {
    Param::Buffer {
        init: Init::Upload(Box::new(values)),
        want: None,
    }
}

/// A zeroed buffer the kernel writes, which must come out as `want`.
fn output<T: Element>(want: Vec<T>) -> Param {
    Param::Buffer {
        init: Init::Zeroed(want.bytes()),
        want: Some(Box::new(want)),
    }
}

/// A buffer the kernel updates from `init` to `want`.
fn in_out<T: Element>(init: Vec<T>, want: Vec<T>) -> Param {
    Param::Buffer {
        init: Init::Upload(Box::new(init)),
        want: Some(Box::new(want)),
    }
}

/// One example kernel run: launch, arguments and expected outputs.
struct Case {
    /// The code object's name in `EXAMPLES`.
    example: &'static str,
    kernel: &'static str,
    grid: Dim3,
    block: Dim3,
    params: Vec<Param>,
    note: String,
}

/// Workgroups of `per_group` items that cover `items`.
fn groups(items: usize, per_group: usize) -> Dim3 {
    Dim3::from(items.div_ceil(per_group) as u32)
}

/// Uploads a case's inputs, dispatches it between two events (which time
/// it), and compares every output with the CPU's.
fn run_case(stream: &Stream, examples: &Examples, case: &Case) -> Result<Checked> {
    let kernel = examples.kernel(case.example, case.kernel)?;
    let mut args = Args::new();
    let mut outputs = Vec::new();
    for param in &case.params {
        args = match param {
            Param::I32(v) => args.value(*v),
            Param::F32(v) => args.value(*v),
            Param::Buffer { init, want } => {
                let buffer = match init {
                    Init::Upload(values) => values.upload(stream)?,
                    Init::Zeroed(bytes) => stream.allocate_zeroed(*bytes)?,
                };
                let args = args.view(&buffer);
                outputs.extend(want.as_ref().map(|want| (buffer, want)));
                args
            }
        };
    }
    let start = stream.record_event()?;
    stream.dispatch_args(&kernel, case.grid, case.block, &args)?;
    let end = stream.record_event()?;
    // Columns as in the header line `tour` prints.
    let detail = format!(
        "{:>9} x {:<6} {:>8.2} ms  {}",
        dims(case.grid),
        dims(case.block),
        end.elapsed_since(&start)?.as_secs_f64() * 1e3,
        case.note
    );
    for (buffer, want) in outputs {
        if let Some(why) = want.compare(stream, &buffer)? {
            return Ok(Checked::wrong(detail, why));
        }
    }
    Ok(Checked::right(detail))
}

fn dims(Dim3(d): Dim3) -> String {
    match d {
        [x, 1, 1] => format!("{x}"),
        [x, y, 1] => format!("{x}x{y}"),
        [x, y, z] => format!("{x}x{y}x{z}"),
    }
}

/// The example kernels, each checked on its own.
/// Each makes its case from the generator and the wave's width (which only
/// `wave_reduce` reads).
const CASES: [fn(&mut Rng, usize) -> Case; 8] = [
    |rng, _| vector_add(rng),
    |rng, _| saxpy(rng),
    |rng, _| reduce(rng),
    |rng, _| sgemm(rng),
    wave_reduce,
    |rng, _| histogram(rng),
    |rng, _| alu_bench(rng),
    |rng, _| mem_bench(rng),
];

fn vector_add(rng: &mut Rng) -> Case {
    vector_add_of(rng, 1_000_003)
}

fn vector_add_of(rng: &mut Rng, n: usize) -> Case {
    let (a, b) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
    let sum: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Case {
        example: "vector_add",
        kernel: "vector_add",
        grid: groups(n, 256),
        block: Dim3::from(256),
        params: vec![input(a), input(b), output(sum), Param::I32(n as i32)],
        note: format!("n={n}"),
    }
}

fn saxpy(rng: &mut Rng) -> Case {
    let (n, alpha) = (1 << 20, 2.5f32);
    let (x, y) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| alpha * x + y).collect();
    Case {
        example: "saxpy",
        kernel: "saxpy",
        grid: groups(n, 256),
        block: Dim3::from(256),
        params: vec![
            Param::F32(alpha),
            input(x),
            in_out(y, want),
            Param::I32(n as i32),
        ],
        note: format!("n={n}, alpha={alpha}, in place"),
    }
}

/// Work-items per workgroup of the reduce kernel (its reqd_work_group_size).
const REDUCE_BLOCK: usize = 256;

fn reduce(rng: &mut Rng) -> Case {
    let n = (1 << 20) + 123;
    let values = rng.f32s(n, 0.0, 1.0);
    let partials = reduce_partials(&values);
    let total: f64 = partials.iter().map(|&x| x as f64).sum();
    Case {
        example: "reduce",
        kernel: "reduce_sum",
        grid: groups(n, 2 * REDUCE_BLOCK),
        block: Dim3::from(REDUCE_BLOCK as u32),
        params: vec![input(values), output(partials), Param::I32(n as i32)],
        note: format!("n={n}, sum={total:.1}"),
    }
}

/// The reduce kernel's partial sums on the host: the same tree, level by
/// level, so the sums are bit exact.
fn reduce_partials(values: &[f32]) -> Vec<f32> {
    let at = |i: usize| values.get(i).copied().unwrap_or(0.0);
    let group_sum = |g: usize| {
        let base = g * 2 * REDUCE_BLOCK;
        let mut s: Vec<f32> = (0..REDUCE_BLOCK)
            .map(|l| at(base + l) + at(base + l + REDUCE_BLOCK))
            .collect();
        let mut stride = REDUCE_BLOCK / 2;
        while stride > 0 {
            for l in 0..stride {
                s[l] += s[l + stride];
            }
            stride /= 2;
        }
        s[0]
    };
    (0..values.len().div_ceil(2 * REDUCE_BLOCK))
        .map(group_sum)
        .collect()
}

fn sgemm(rng: &mut Rng) -> Case {
    let (m, n, k) = (200usize, 176usize, 120usize);
    let a = rng.f32s(m * k, -1.0, 1.0);
    let b = rng.f32s(k * n, -1.0, 1.0);
    // Sequential k with fused multiply-adds, as the kernel does.
    let c: Vec<f32> = (0..m * n)
        .map(|i| {
            (0..k).fold(0.0f32, |acc, j| {
                a[i / n * k + j].mul_add(b[j * n + i % n], acc)
            })
        })
        .collect();
    Case {
        example: "sgemm",
        kernel: "sgemm",
        grid: Dim3::from((n.div_ceil(16) as u32, m.div_ceil(16) as u32)),
        block: Dim3::from((16, 16)),
        params: vec![
            input(a),
            input(b),
            output(c),
            Param::I32(m as i32),
            Param::I32(n as i32),
            Param::I32(k as i32),
        ],
        note: format!("{m}x{n}x{k}, 16x16 tiles in LDS"),
    }
}

fn wave_reduce(rng: &mut Rng, wave: usize) -> Case {
    let n = 32 * 4096;
    let values: Vec<i32> = (0..n)
        .map(|_| (rng.next_u64() % 2001) as i32 - 1000)
        .collect();
    // Every lane of a wave (`wave` consecutive work-items) holds the wave's
    // result.
    let per_wave = |f: fn(&[i32]) -> i32| -> Vec<i32> {
        values
            .chunks(wave)
            .flat_map(|w| std::iter::repeat_n(f(w), wave))
            .collect()
    };
    let sums = per_wave(|w| w.iter().sum());
    let maxes = per_wave(|w| w.iter().copied().max().unwrap_or(i32::MIN));
    Case {
        example: "wave_reduce",
        kernel: "wave_reduce",
        grid: groups(n, 128),
        block: Dim3::from(128),
        params: vec![input(values), output(sums), output(maxes)],
        note: match wave {
            64 => "wave64 DPP row scan/broadcast sum + sub_group_reduce_max",
            _ => "wave32 DPP/permlanex16 sum + sub_group_reduce_max",
        }
        .into(),
    }
}

fn histogram(rng: &mut Rng) -> Case {
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
    let mut bins = vec![0u32; 256];
    for &d in &data {
        bins[d as usize] += 1;
    }
    Case {
        example: "histogram",
        kernel: "histogram",
        grid: Dim3::from(64),
        block: Dim3::from(256),
        params: vec![input(data), output(bins), Param::I32(n as i32)],
        note: format!("HIP, {n} bytes, LDS + global atomics"),
    }
}

fn alu_bench(_rng: &mut Rng) -> Case {
    let (items, iters) = (16384usize, 64);
    let (a, b, c) = (0.999f32, 0.001f32, 0.998f32);
    let want: Vec<f32> = (0..items)
        .map(|g| alu_item(g as i32, iters, a, b, c))
        .collect();
    Case {
        example: "alu_bench",
        kernel: "alu_bench",
        grid: groups(items, 256),
        block: Dim3::from(256),
        params: vec![
            output(want),
            Param::I32(iters),
            Param::F32(a),
            Param::F32(b),
            Param::F32(c),
        ],
        note: format!("{iters} rounds x 8 fma/mul/add chains"),
    }
}

fn mem_bench(rng: &mut Rng) -> Case {
    let (n, s) = (1 << 18, 1.5f32);
    let values = rng.f32s(4 * n, -100.0, 100.0);
    let want: Vec<f32> = values.iter().map(|x| x * s).collect();
    Case {
        example: "mem_bench",
        kernel: "mem_bench",
        grid: groups(n, 256),
        block: Dim3::from(256),
        params: vec![
            input(values),
            output(want),
            Param::F32(s),
            Param::I32(n as i32),
        ],
        note: format!("{n} float4, {} MiB moved", (32 * n) >> 20),
    }
}

/// A four-stage graph recorded once and replayed on fresh inputs: y = x
/// (copy), y = alpha*x + y (saxpy), c = y + x (vector_add), then the partial
/// sums of c (reduce_sum), each node after the one before.
fn graph_replays(stream: &Stream, examples: &Examples, rng: &mut Rng) -> Result<Checked> {
    const N: usize = 1 << 16;
    const REPLAYS: usize = 3;
    let (alpha, n) = (0.5f32, N as i32);
    let bytes = 4 * N;
    let (x, y, c) = (
        stream.allocate(bytes)?,
        stream.allocate(bytes)?,
        stream.allocate(bytes)?,
    );
    let partials = stream.allocate(4 * N.div_ceil(2 * REDUCE_BLOCK))?;
    let mut graph = stream.graph()?;
    let copied = graph.copy(&[], &y, &x)?;
    let saxpy = examples.kernel("saxpy", "saxpy")?;
    let saxpy_args = Args::new().value(alpha).view(&x).view(&y).value(n);
    let scaled = graph.dispatch_args(&[copied], &saxpy, groups(N, 256), 256, &saxpy_args)?;
    let add = examples.kernel("vector_add", "vector_add")?;
    let add_args = Args::new().view(&y).view(&x).view(&c).value(n);
    let summed = graph.dispatch_args(&[scaled], &add, groups(N, 256), 256, &add_args)?;
    let reduce = examples.kernel("reduce", "reduce_sum")?;
    let reduce_args = Args::new().view(&c).view(&partials).value(n);
    let block = REDUCE_BLOCK as u32;
    graph.dispatch_args(
        &[summed],
        &reduce,
        groups(N, 2 * REDUCE_BLOCK),
        block,
        &reduce_args,
    )?;
    let mut exec = graph.finish()?;
    let detail = format!(
        "{} nodes (copy → saxpy → vector_add → reduce_sum) recorded once, replayed {REPLAYS} times on new inputs",
        exec.len()
    );
    for replay in 1..=REPLAYS {
        let values = rng.f32s(N, -1.0, 1.0);
        stream.upload(&x, &values)?;
        stream.launch(&mut exec)?;
        let sums: Vec<f32> = values.iter().map(|&v| (alpha * v + v) + v).collect();
        let got: Vec<f32> = stream.read_vec(&partials)?;
        if let Some(why) = mismatch(&got, &reduce_partials(&sums)) {
            return Ok(Checked::wrong(detail, format!("replay {replay}: {why}")));
        }
    }
    Ok(Checked::right(detail))
}

/// Stream A computes c = a + b; stream B waits on the device (the host does
/// not wait) for A's event and then computes y = alpha*c + y.
fn two_streams(device: &Device, examples: &Examples, rng: &mut Rng) -> Result<Checked> {
    const N: usize = 1 << 16;
    let (alpha, n) = (2.0f32, N as i32);
    let (a, b, y) = (
        rng.f32s(N, -1.0, 1.0),
        rng.f32s(N, -1.0, 1.0),
        rng.f32s(N, -1.0, 1.0),
    );
    let (producer, consumer) = (device.stream()?, device.stream()?);
    let (da, db) = (upload_new(&producer, &a)?, upload_new(&producer, &b)?);
    let dc = producer.allocate(4 * N)?;
    let add = examples.kernel("vector_add", "vector_add")?;
    let add_args = Args::new().view(&da).view(&db).view(&dc).value(n);
    producer.dispatch_args(&add, groups(N, 256), 256, &add_args)?;
    let produced = producer.record_event()?;
    let dy = upload_new(&consumer, &y)?;
    consumer.wait_event(&produced)?;
    let saxpy = examples.kernel("saxpy", "saxpy")?;
    let saxpy_args = Args::new().value(alpha).view(&dc).view(&dy).value(n);
    consumer.dispatch_args(&saxpy, groups(N, 256), 256, &saxpy_args)?;
    let got: Vec<f32> = consumer.read_vec(&dy)?;
    let want: Vec<f32> = (0..N).map(|i| alpha * (a[i] + b[i]) + y[i]).collect();
    let detail = "B's saxpy waits for A's vector_add on the device (record_event, wait_event)";
    Ok(Checked::judged(detail.into(), mismatch(&got, &want)))
}

/// sgemm told that its 16x16 matrices have K = 2^30 columns: row 1 reads A
/// 4 GiB past its start, outside device memory. The stream reports the
/// fault at its next wait and stays usable.
fn fault(stream: &Stream, examples: &Examples) -> Result<Checked> {
    const SIDE: i32 = 16;
    let sgemm = examples.kernel("sgemm", "sgemm")?;
    let bytes = 4 * (SIDE * SIDE) as usize;
    let (a, b, c) = (
        stream.allocate_zeroed(bytes)?,
        stream.allocate_zeroed(bytes)?,
        stream.allocate(bytes)?,
    );
    let args = Args::new().view(&a).view(&b).view(&c);
    let args = args.value(SIDE).value(SIDE).value(1i32 << 30);
    stream.dispatch_args(&sgemm, 1, (16, 16), &args)?;
    let detail = "sgemm with K = 2^30 on 16x16 matrices reads 4 GiB past A".to_string();
    match stream.synchronize() {
        Err(Error::Fault(report)) => Ok(Checked::judged(
            format!(
                "{detail}; synchronize returned Error::Fault{}",
                describe_fault(&report)
            ),
            incomplete_report(&report),
        )),
        Err(other) => Err(other.into()),
        Ok(()) => Ok(Checked::wrong(detail, "no fault was reported".into())),
    }
}

/// The structured report, a line for what and a line for where.
fn describe_fault(fault: &KernelFault) -> String {
    let mut text = continuation(&format!("kernel {}: {}", fault.kernel(), fault.reason()));
    if let Some(site) = fault.site() {
        let lane = site.lane.map_or(String::new(), |l| format!(", lane {l}"));
        let address = site
            .address
            .map_or(String::new(), |a| format!(", address {a:#x}"));
        text += &continuation(&format!(
            "workgroup {:?}, wave {}{lane}, code offset {:#x}: {}{address}",
            site.workgroup, site.wave, site.offset, site.instruction
        ));
    }
    text
}

/// What the fault report lacks, if anything: it must name the kernel, the
/// instruction and the address.
fn incomplete_report(fault: &KernelFault) -> Option<String> {
    if fault.kernel() != "sgemm" {
        return Some(format!("the report names kernel {}", fault.kernel()));
    }
    match fault.site() {
        None => Some("the report names no instruction".into()),
        Some(site) if site.address.is_none() => Some("the report names no address".into()),
        Some(_) => None,
    }
}

/// What one step did, and why its result is wrong if it is.
struct Checked {
    detail: String,
    wrong: Option<String>,
}

impl Checked {
    fn right(detail: String) -> Checked {
        Checked::judged(detail, None)
    }

    fn wrong(detail: String, why: String) -> Checked {
        Checked::judged(detail, Some(why))
    }

    fn judged(detail: String, wrong: Option<String>) -> Checked {
        Checked { detail, wrong }
    }
}

/// The checks so far; each prints its own line.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    fn record(&mut self, step: &str, outcome: Result<Checked>) {
        let (ok, detail) = match outcome {
            Ok(Checked {
                detail,
                wrong: None,
            }) => (true, detail),
            Ok(Checked {
                detail,
                wrong: Some(why),
            }) => (false, detail + &continuation(&format!("wrong: {why}"))),
            Err(e) => (false, e.to_string()),
        };
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        print_line(step, if ok { "OK" } else { "FAIL" }, &detail);
    }

    fn summary(&self, started: Instant) -> Result<()> {
        println!(
            "{} of {} checks passed in {:.2} s",
            self.passed,
            self.passed + self.failed,
            started.elapsed().as_secs_f64()
        );
        match self.failed {
            0 => Ok(()),
            n => Err(format!("{n} check(s) failed").into()),
        }
    }
}
