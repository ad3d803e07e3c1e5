//! Kernel faults: wild pointer, instruction budget, s_trap. The device must
//! stay usable after a fault.

mod common;
use common::*;
use softgpu_exec::{Arg, DispatchError};

fn check_good(gpu: &Gpu, prog: &softgpu_exec::Program) {
    let out = gpu.zeros(64 * 4);
    gpu.run(prog, "good", [1, 1, 1], [64, 1, 1], &[buf(&out)]);
    let want: Vec<i32> = (0..64).map(|i| i * 2).collect();
    assert_slice_eq("good kernel after a fault", &gpu.read::<i32>(&out), &want);
}

fn expect_fault(r: Result<softgpu_exec::DispatchCounters, DispatchError>, what: &str) -> String {
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
    let gpu = Gpu::with(target, |s| s.instruction_budget(200_000));
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

/// Under `Checks::contain` a launch runs past every refused access: the
/// in-range work-items finish, each out-of-range read and write is one
/// error (28 threads past a 100-int buffer, a read and a write each), and
/// the first refused access is the launch's fault.
fn contained(target: &str) {
    let contain = softgpu_exec::Checks {
        contain: true,
        ..Default::default()
    };
    let gpu = Gpu::with(target, |s| Ok(s.checks(contain)));
    let prog = gpu.program("faults.cl", &[]);
    let input: Vec<i32> = (0..100).collect();
    let (src, out) = (gpu.buf(&input), gpu.zeros(100 * 4));
    let r = gpu.try_run(
        &prog,
        "overrun",
        [2, 1, 1],
        [64, 1, 1],
        0,
        &[buf(&out), buf(&src)],
    );
    let Err(DispatchError::Fault(fault)) = r else {
        panic!("overrun under contain: expected a fault, got {r:?}");
    };
    let want: Vec<i32> = (1..101).collect();
    assert_slice_eq("in-range results", &gpu.read::<i32>(&out), &want);
    assert_eq!(fault.error_count(), 56, "{fault}");
    let mut threads: Vec<u32> = std::iter::once(&*fault)
        .chain(&fault.others.recorded)
        .map(|f| {
            assert_eq!(f.kind, softgpu_exec::FaultKind::Memory, "{f}");
            let site = f.site.as_ref().expect("a site");
            64 * site.workgroup[0] + site.thread.expect("a thread")[0]
        })
        .collect();
    threads.sort_unstable();
    let twice: Vec<u32> = (100..128).flat_map(|t| [t, t]).collect();
    assert_eq!(threads, twice);
    let text = fault.to_string();
    assert!(text.contains("error 56 of 56 in this launch"), "{text}");
    check_good(&gpu, &prog);

    // A racecheck finding lets the access happen: the launch succeeds and
    // carries the race, once however many lanes make it.
    gpu.dev.set_checks(softgpu_exec::Checks {
        race: true,
        contain: true,
        ..Default::default()
    });
    let x = gpu.zeros(4);
    let kernel = prog.kernel("racy").unwrap();
    let launch = softgpu_exec::Launch {
        grid: [4, 1, 1],
        block: [64, 1, 1],
        dynamic_lds: 0,
    };
    let outcome = gpu
        .dev
        .dispatch(&softgpu_exec::DispatchDesc::launch(
            &prog,
            kernel,
            &launch,
            &[buf(&x)],
        ))
        .expect("a race under contain does not fail the launch");
    let races = &outcome.findings;
    assert_eq!(races.count(), 1, "{races:?}");
    assert_eq!(races.recorded[0].kind, softgpu_exec::FaultKind::Race);
}
per_target!(contained_errors_are_all_reported, contained);
