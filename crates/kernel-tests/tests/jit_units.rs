//! What the JIT compiles for a dispatch: the code its kernel's waves can
//! reach (its own code and the program's callable functions), not every
//! kernel's of the code object.

mod common;
use common::*;
use softgpu_codeobj::SymbolKind;
use softgpu_exec::{Arg, JitMode, Program, TIER_UP_INSTRUCTIONS};

/// The entry slot of kernel `name`.
fn entry(prog: &Program, name: &str) -> u32 {
    let k = (prog.code_object.kernels.iter())
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("no kernel {name}"));
    prog.index_of_offset(k.entry_offset)
        .expect("the entry is an instruction")
}

/// Compiled blocks starting in slots `range`.
fn blocks_in(prog: &Program, entry: u32, range: std::ops::Range<u32>) -> Vec<u32> {
    let jit = softgpu_exec::Jit::of(prog, entry, false).expect("this host has a JIT back end");
    range.filter(|&s| jit.block_at(s).is_some()).collect()
}

/// Slot range of function symbol `name`'s code.
fn code_of(prog: &Program, name: &str) -> std::ops::Range<u32> {
    let sym = (prog.code_object.symbols.iter())
        .find(|s| s.name == name && s.kind == SymbolKind::Function)
        .unwrap_or_else(|| panic!("no function symbol {name}"));
    let start = prog.index_of_offset(sym.value).expect("an instruction");
    let end = prog
        .index_of_offset(sym.value + sym.size)
        .unwrap_or(prog.slots().len() as u32);
    start..end
}

#[test]
fn a_dispatch_compiles_its_own_kernel_only() {
    let gpu = Gpu::new("gfx1151");
    let prog = gpu.program("private_array.cl", &[]);
    let all = 0..prog.slots().len() as u32;
    let (small, large) = (entry(&prog, "private_small"), entry(&prog, "private_large"));
    // No kernel enters at u32::MAX: that is the whole text's unit.
    let whole = blocks_in(&prog, u32::MAX, all.clone());
    for (name, e) in [("private_small", small), ("private_large", large)] {
        let own = code_of(&prog, name);
        let got = blocks_in(&prog, e, all.clone());
        assert!(!got.is_empty(), "{name}: no blocks compiled");
        // Every block of the kernel's own code, none of the other's.
        assert_eq!(got, blocks_in(&prog, u32::MAX, own.clone()), "{name}");
        assert!(
            got.len() < whole.len(),
            "{name} compiled every kernel's blocks"
        );
    }
}

#[test]
fn a_kernel_unit_includes_the_functions_it_may_call() {
    let gpu = Gpu::new("gfx1151");
    let prog = gpu.program("calls.hip", &[]);
    let kernel = (prog.code_object.kernels.iter())
        .find(|k| k.name.contains("indirect_table"))
        .expect("the indirect_table kernel")
        .name
        .clone();
    let e = entry(&prog, &kernel);
    // The callees are reached only through a function pointer, so only
    // their symbols make them roots.
    let callee = (prog.code_object.symbols.iter())
        .find(|s| s.kind == SymbolKind::Function && s.name.contains("op_mul"))
        .expect("the op_mul function")
        .name
        .clone();
    let range = code_of(&prog, &callee);
    let want = blocks_in(&prog, u32::MAX, range.clone());
    assert!(!want.is_empty(), "{callee} has no block to compile");
    assert_eq!(
        blocks_in(&prog, e, range),
        want,
        "{callee} in {kernel}'s unit"
    );
}

/// With the JIT on, a dispatch never waits for a compile of code it barely
/// runs: a kernel is interpreted until it has run
/// `TIER_UP_INSTRUCTIONS` wave instructions, then one worker compiles it
/// between workgroups and the rest of the dispatch, and later dispatches,
/// run compiled. The results are the same either way.
#[test]
fn the_jit_compiles_a_kernel_once_it_has_run_long_enough() {
    let gpu = Gpu::with("gfx1151", |s| s.jit(JitMode::On));
    let prog = gpu.program("vector_add.cl", &[]);
    let entry = entry(&prog, "vector_add");
    let add = |n: usize| {
        let mut rng = Rng::new(n as u64);
        let a = rng.vec_f32(n, -1.0, 1.0);
        let b = rng.vec_f32(n, -1.0, 1.0);
        let (da, db, dc) = (gpu.buf(&a), gpu.buf(&b), gpu.zeros(n * 4));
        let args = [buf(&da), buf(&db), buf(&dc), Arg::I32(n as i32)];
        let stats = gpu.run1d(&prog, "vector_add", n, 256, &args);
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert_slice_eq("vector_add", &gpu.read::<f32>(&dc), &want);
        stats.wave_instructions
    };
    let small = add(1000);
    assert!(small < TIER_UP_INSTRUCTIONS);
    assert!(!prog.is_compiled(entry, false), "a small dispatch compiled");
    // Enough waves to pass the threshold partway through.
    let large = add(1 << 22);
    assert!(large > TIER_UP_INSTRUCTIONS, "{large} wave instructions");
    assert!(prog.is_compiled(entry, false), "never tiered up");
}

/// Compiled code answers its common memory checks itself, from the ranges
/// its thread was last allowed (`softgpu_arena::Quick`): a buffer freed
/// since is refused there as the interpreter refuses it, with its report.
#[test]
fn compiled_code_refuses_a_buffer_freed_since_its_thread_was_allowed_it() {
    // One worker: the thread that was allowed the buffer is the one asked.
    let gpu = Gpu::with("gfx1151", |s| s.jit(JitMode::On)?.threads(1));
    let prog = gpu.program("vector_add.cl", &[]);
    let run = |n: usize, c: Arg| {
        let (a, b) = (gpu.zeros(n * 4), gpu.zeros(n * 4));
        let args = [buf(&a), buf(&b), c, Arg::I32(n as i32)];
        gpu.try_run(
            &prog,
            "vector_add",
            [blocks(n, 256), 1, 1],
            [256, 1, 1],
            0,
            &args,
        )
    };
    let big = gpu.zeros(4 << 22);
    run(1 << 22, buf(&big)).expect("the dispatch that tiers up");
    assert!(
        prog.is_compiled(entry(&prog, "vector_add"), false),
        "never tiered up"
    );
    // Small enough that one allowed range covers all of it.
    let n = 1 << 14;
    let c = gpu.zeros(n * 4);
    run(n, buf(&c)).expect("the compiled dispatch");
    // Whole pages of it: a range is widened over whole allowed pages only.
    let stale = c.addr() + (8 << 10);
    gpu.dev.free(c).expect("free");
    let err = run(n / 4, Arg::Pointer(stale)).expect_err("a store through a freed buffer ran");
    let report = err.to_string();
    assert!(report.contains("freed by"), "{report}");
}
