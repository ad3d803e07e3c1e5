//! How long a large code object takes to load, and what a kernel's first
//! use costs after it: the executor's lazy load (decode a kernel at its
//! first dispatch) side by side with decoding the whole text at load (what
//! softgpu did before, and what `softgpu disasm` still does), in one run.
//!
//! Run with `cargo bench -p softgpu --bench load -- FILE [TARGET]`, e.g.
//! rocBLAS's `TensileLibrary_gfx1100.co` (223 MB, 4844 kernels) with
//! target gfx1100; without FILE it loads a committed example object. With
//! `--jit [EVERY]` it then compiles every kernel's JIT unit (or every
//! EVERY-th) and prints the slowest compiles. Figures are in
//! docs/PERFORMANCE.md.

use std::time::Instant;

use softgpu_exec::{Device, DeviceConfig};

fn seconds(since: Instant) -> f64 {
    since.elapsed().as_secs_f64()
}

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let jit_every = args.iter().position(|a| a == "--jit").map(|i| {
        args.remove(i);
        match args.get(i).and_then(|n| n.parse::<usize>().ok()) {
            Some(n) => {
                args.remove(i);
                n.max(1)
            }
            None => 1,
        }
    });
    let file = args.first().cloned().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/bin/vector_add-gfx1151.hsaco"
        )
        .to_string()
    });
    let target = args.get(1).cloned().unwrap_or_else(|| "gfx1151".into());
    let t = Instant::now();
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let read = seconds(t);
    let mut config = DeviceConfig::new(&target).expect("target");
    config.arena_bytes(4 << 30);
    let device = Device::new(&config).expect("device");
    println!("{file}: {} bytes, target {target}", bytes.len());
    println!("read the file                     {:8.3} s", read);

    let t = Instant::now();
    let code_object = softgpu_codeobj::load_for_target(&bytes, &target).expect("code object");
    println!(
        "parse (codeobj::load)             {:8.3} s  ({} kernels, {} symbols, {} bytes of text)",
        seconds(t),
        code_object.kernels.len(),
        code_object.symbols.len(),
        code_object.text.end - code_object.text.start
    );
    drop(code_object);

    let t = Instant::now();
    let program = device.load(&bytes).expect("load");
    println!("load, lazy (Device::load)         {:8.3} s", seconds(t));
    // Kernels spread over the file: its first, middle and last.
    let kernels = &program.code_object.kernels;
    for k in [0, kernels.len() / 2, kernels.len().saturating_sub(1)] {
        let kernel = &kernels[k];
        let t = Instant::now();
        let found = program.kernel(&kernel.name).expect("kernel by name");
        let lookup = seconds(t);
        let t = Instant::now();
        let ran = program.for_kernel(found);
        println!(
            "kernel #{k}: look up {:.6} s, decode at first use {:.3} s ({} slots)",
            lookup,
            seconds(t),
            ran.slots().len()
        );
    }
    let t = Instant::now();
    let miss = program.kernel("no_such_kernel").expect_err("a miss");
    println!(
        "a missed lookup                   {:8.6} s  ({} bytes of message)",
        seconds(t),
        miss.to_string().len()
    );

    let t = Instant::now();
    let eager = device.load(&bytes).expect("load");
    let whole = eager.whole_text();
    println!(
        "load and decode every instruction {:8.3} s  ({} slots)",
        seconds(t),
        whole.slots().len()
    );
    not_run(whole);
    if let Some(every) = jit_every {
        compile_every(&program, every);
    }
}

/// Lists the instructions of the text softgpu cannot run (undecodable
/// bytes, operands out of range, ops without semantics), by kind.
fn not_run(program: &softgpu_exec::Program) {
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    // The last slot of each decoded range marks its end.
    let slots = program.slots();
    for (i, slot) in slots.iter().enumerate().take(slots.len().saturating_sub(1)) {
        if !slot.runs() {
            let kind = match &slot.illegal {
                Some(why) => format!("illegal: {why}"),
                None => program
                    .text_for(i as u32, false)
                    .split(' ')
                    .next()
                    .unwrap_or("")
                    .into(),
            };
            *kinds.entry(kind).or_default() += 1;
        }
    }
    println!(
        "instructions softgpu cannot run: {}",
        kinds.values().sum::<usize>()
    );
    for (kind, n) in &kinds {
        println!("  {n:8}  {kind}");
    }
}

/// Decodes and compiles the JIT unit of every `every`-th kernel, one at a
/// time (each compile uses every host thread), and prints the slowest.
fn compile_every(program: &softgpu_exec::Program, every: usize) {
    let mut times: Vec<(f64, usize, String)> = Vec::new();
    let all = Instant::now();
    for kernel in program.code_object.kernels.iter().step_by(every) {
        let t = Instant::now();
        let own = program.for_kernel(kernel);
        let entry = own.index_of_offset(kernel.entry_offset).expect("entry");
        let compiled = softgpu_exec::Jit::of(own, entry, !kernel.descriptor.wave32).is_some();
        assert!(compiled, "this host has no JIT back end");
        times.push((seconds(t), own.slots().len(), kernel.name.clone()));
    }
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    let n = times.len();
    println!(
        "JIT: {n} kernels compiled in {:.1} s; median {:.3} s, 90th percentile {:.3} s, slowest:",
        seconds(all),
        times[n / 2].0,
        times[n / 10].0
    );
    for (s, slots, name) in times.iter().take(5) {
        println!("  {s:7.3} s  {slots:6} slots  {name}");
    }
}
