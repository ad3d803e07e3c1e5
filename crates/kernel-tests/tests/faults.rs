//! Kernel faults: wild pointer, instruction budget, s_trap. The device must
//! stay usable after a fault.

mod common;
use common::*;
use softgpu_exec::{Arg, DeviceConfig, DispatchError};

fn check_good(gpu: &Gpu, prog: &softgpu_exec::Program) {
    let out = gpu.zeros(64 * 4);
    gpu.run(prog, "good", [1, 1, 1], [64, 1, 1], &[buf(&out)]);
    let want: Vec<i32> = (0..64).map(|i| i * 2).collect();
    assert_slice_eq("good kernel after a fault", &gpu.read::<i32>(&out), &want);
}

fn expect_fault(r: Result<softgpu_exec::DispatchStats, DispatchError>, what: &str) -> String {
    match r {
        Err(e @ DispatchError::Fault(_)) => {
            let text = e.to_string();
            eprintln!("{what}: {text}");
            text
        }
        Err(e) => panic!("{what}: expected DispatchError::Fault, got another error: {e}"),
        Ok(_) => panic!("{what}: expected a fault, the dispatch succeeded"),
    }
}

fn wild_pointer(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("faults.cl", &[]);
    let out = gpu.zeros(64 * 4);
    // 2^44 bytes past the buffer: far outside any arena.
    let r = gpu.try_run(
        &prog,
        "wild_store",
        [1, 1, 1],
        [64, 1, 1],
        0,
        &[buf(&out), Arg::U64(1 << 42)],
    );
    let text = expect_fault(r, "wild_store");
    assert!(
        text.contains("wild_store"),
        "fault report does not name the kernel: {text}"
    );
    check_good(&gpu, &prog);
}
per_target!(wild_pointer_store, wild_pointer);

fn budget(target: &str) {
    let gpu = Gpu::with_config(DeviceConfig {
        target: target.into(),
        instruction_budget: 200_000,
        ..softgpu_kernel_tests::env_default()
    });
    let prog = gpu.program("faults.cl", &[]);
    let flag = gpu.zeros(4);
    let out = gpu.zeros(64 * 4);
    let r = gpu.try_run(
        &prog,
        "spin_forever",
        [1, 1, 1],
        [64, 1, 1],
        0,
        &[buf(&flag), buf(&out)],
    );
    let text = expect_fault(r, "spin_forever");
    assert!(
        text.contains("spin_forever"),
        "fault report does not name the kernel: {text}"
    );
    check_good(&gpu, &prog);
}
per_target!(instruction_budget_exhausted, budget);

fn trap(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("faults.cl", &[]);
    let out = gpu.zeros(64 * 4);
    let r = gpu.try_run(&prog, "trap", [1, 1, 1], [64, 1, 1], 0, &[buf(&out)]);
    let text = expect_fault(r, "trap");
    assert!(
        text.contains("s_trap"),
        "fault report does not name s_trap: {text}"
    );
    check_good(&gpu, &prog);
}
per_target!(builtin_trap, trap);
