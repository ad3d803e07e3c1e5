//! Runaway kernels (the wall-clock watchdog and the per-dispatch
//! instruction budget, with the report of the waves in flight), seeded
//! schedules, and synccheck, through the executor's Rust API.

mod common;
use common::*;
use softgpu_exec::{Arg, Checks, DispatchError, Fault, FaultKind, Schedule, Wait};
use std::time::Duration;

const FILE: &str = "runaway.cl";

/// The lanes of `target`'s waves as clang builds its kernels here (CDNA's
/// 64, RDNA's default 32): the kernels' workgroups are two waves.
fn lanes(target: &str) -> u32 {
    if softgpu_isa::target::wave64_only(target) {
        64
    } else {
        32
    }
}

fn fault_of(r: Result<softgpu_exec::DispatchCounters, DispatchError>, what: &str) -> Box<Fault> {
    match r {
        Err(DispatchError::Fault(f)) => {
            eprintln!("{what}: {f}");
            f
        }
        Err(e) => panic!("{what}: expected a fault, got another error: {e}"),
        Ok(_) => panic!("{what}: expected a fault, the dispatch succeeded"),
    }
}

/// An endless loop ends with a timeout whose report lists every wave in
/// flight with its PC and instruction, and which of them wait at the
/// barrier.
fn timeout_lists_waves(target: &str) {
    let gpu = Gpu::with(target, |s| s.timeout(Duration::from_secs(2))?.threads(2));
    let prog = gpu.program(FILE, &[]);
    let group = 2 * lanes(target);
    let (flag, out) = (gpu.zeros(4), gpu.zeros(4 * 128 * 4));
    let r = gpu.try_run(
        &prog,
        "spin_or_wait",
        [4, 1, 1],
        [group, 1, 1],
        0,
        &[buf(&flag), buf(&out)],
    );
    let f = fault_of(r, "spin_or_wait");
    assert_eq!(f.kind, FaultKind::Timeout);
    assert!(f.reason.contains("wall-clock limit of 2 s"), "{}", f.reason);
    assert!(!f.waves.is_empty(), "no waves listed: {f}");
    let spinning: Vec<_> = f.waves.iter().filter(|w| w.wave == 0).collect();
    let waiting: Vec<_> = f.waves.iter().filter(|w| w.wave == 1).collect();
    assert!(!spinning.is_empty() && !waiting.is_empty(), "{f}");
    for w in &spinning {
        assert_eq!(w.wait, Wait::No, "{f}");
        assert!(w.pc >= prog.image_base && !w.instruction.is_empty(), "{f}");
    }
    // A wave 1 has reached the barrier, or, in a workgroup a worker took
    // just before the deadline (a worker of the shared pool may come free
    // only then, when another dispatch ends), not run yet.
    let entry = prog
        .code_object
        .kernels
        .iter()
        .find(|k| k.name == "spin_or_wait")
        .expect("kernel")
        .entry_offset;
    assert!(waiting.iter().any(|w| w.wait == Wait::Barrier), "{f}");
    for w in &waiting {
        if w.wait == Wait::Barrier {
            assert!(w.instruction.starts_with("s_barrier"), "{f}");
        } else {
            assert_eq!(w.offset, entry, "{f}");
        }
    }
    let text = f.to_string();
    assert!(
        text.contains("waves in flight") && text.contains("[waiting at the barrier]"),
        "{text}"
    );
    assert!(text.contains(&format!("{:#x}", spinning[0].pc)), "{text}");
    // The device still works.
    let ok = gpu.zeros(4 * group as usize);
    gpu.run(
        &prog,
        "barrier_loop",
        [1, 1, 1],
        [group, 1, 1],
        &[buf(&ok), Arg::I32(0)],
    );
    assert_eq!(
        gpu.read::<i32>(&ok),
        (0..group as i32).collect::<Vec<i32>>()
    );
}
per_target!(timeout_reports_waves_in_flight, timeout_lists_waves);

/// Many waves spinning stop at the budget of the whole dispatch: together
/// they run no more than it (within a turn per worker), not the budget
/// each.
fn budget_of_dispatch(target: &str) {
    const BUDGET: u64 = 1 << 22;
    let gpu = Gpu::with(target, |s| {
        s.instruction_budget(BUDGET)?
            .threads(2)?
            .timeout(Duration::from_secs(300))
    });
    let prog = gpu.program(FILE, &[]);
    let (flag, turns) = (gpu.zeros(4), gpu.zeros(4));
    let r = gpu.try_run(
        &prog,
        "spin_counting",
        [64, 1, 1],
        [256, 1, 1],
        0,
        &[buf(&flag), buf(&turns)],
    );
    let f = fault_of(r, "spin_counting");
    assert_eq!(f.kind, FaultKind::Budget);
    assert!(f.reason.contains(&BUDGET.to_string()), "{}", f.reason);
    // A workgroup of 256 work-items per worker was in flight (one or two
    // workers: a helper thread may be busy with another test's dispatch).
    let waves = 256 / lanes(target) as usize;
    let listed = f.waves.len() + f.more_waves;
    assert!(
        listed == waves || listed == 2 * waves,
        "{listed} waves listed: {f}"
    );
    // Each loop turn of a wave is at least an atomic and a branch, and adds
    // one per lane: so lanes × instructions / 2 bounds the count. Slack:
    // what two workers may run past their last look at the counter.
    let counted = gpu.read::<u32>(&turns)[0] as u64;
    let most = lanes(target) as u64 / 2 * (BUDGET + 2 * 2 * 4096);
    assert!(
        counted > 0 && counted <= most,
        "{counted} loop turns counted, at most {most} fit the dispatch budget"
    );
}
per_target!(budget_counts_the_whole_dispatch, budget_of_dispatch);

fn lds_race_output(
    gpu: &Gpu,
    prog: &softgpu_exec::Program,
    group: u32,
    schedule: Schedule,
) -> Vec<i32> {
    gpu.dev.set_schedule(schedule);
    let out = gpu.zeros(4 * group as usize * 8);
    gpu.run(prog, "lds_race", [8, 1, 1], [group, 1, 1], &[buf(&out)]);
    gpu.read(&out)
}

/// A racy kernel gives different outputs under different seeds, and the
/// same output for the same seed every time.
fn seeds_expose_a_race(target: &str) {
    let gpu = Gpu::with(target, |s| s.threads(1));
    let prog = gpu.program(FILE, &[]);
    let group = 2 * lanes(target);
    let in_order = lds_race_output(&gpu, &prog, group, Schedule::InOrder);
    assert!(
        in_order.iter().all(|&v| v == 2),
        "in order, wave 1 writes last: {in_order:?}"
    );
    let seeded: Vec<Vec<i32>> = (0..8)
        .map(|s| lds_race_output(&gpu, &prog, group, Schedule::Seeded(s)))
        .collect();
    assert!(
        seeded.iter().any(|o| *o != in_order),
        "no seed of 8 changed the output"
    );
    for (seed, first) in seeded.iter().enumerate() {
        let again = lds_race_output(&gpu, &prog, group, Schedule::Seeded(seed as u64));
        assert_eq!(*first, again, "seed {seed} did not repeat");
    }
}
per_target!(
    seeded_schedules_expose_and_repeat_a_race,
    seeds_expose_a_race
);

fn sync_fault(target: &str, kernel: &str) -> Box<Fault> {
    let gpu = Gpu::new(target);
    let prog = gpu.program(FILE, &[]);
    let group = 2 * lanes(target);
    let out = gpu.zeros(4 * group as usize);
    // Without synccheck the kernel runs as before.
    gpu.run(&prog, kernel, [1, 1, 1], [group, 1, 1], &[buf(&out)]);
    gpu.dev.set_checks(Checks {
        sync: true,
        ..Default::default()
    });
    let f = fault_of(
        gpu.try_run(&prog, kernel, [1, 1, 1], [group, 1, 1], 0, &[buf(&out)]),
        kernel,
    );
    assert_eq!(f.kind, FaultKind::Sync);
    assert!(f.reason.starts_with("synccheck"), "{}", f.reason);
    assert!(f.site.is_some(), "{f}");
    f
}

fn sync_wave_ends_at_barrier(target: &str) {
    let f = sync_fault(target, "early_exit");
    let site = f.site.as_ref().unwrap();
    assert_eq!(site.wave, 1, "{f}");
    assert!(site.instruction.starts_with("s_endpgm"), "{f}");
    assert!(
        f.reason.contains("wave 1 ended")
            && f.reason.contains("wave 0")
            && f.reason.contains("s_barrier"),
        "{f}"
    );
}
per_target!(
    synccheck_wave_ending_while_others_wait,
    sync_wave_ends_at_barrier
);

fn sync_different_barriers(target: &str) {
    let f = sync_fault(target, "split_barrier");
    let site = f.site.as_ref().unwrap();
    assert!(site.instruction.starts_with("s_barrier"), "{f}");
    assert!(
        f.reason.contains("different barriers")
            && f.reason.contains("wave 0")
            && f.reason.contains("wave 1"),
        "{f}"
    );
    // Both barrier addresses are named, and they differ.
    let pcs: Vec<&str> = f
        .reason
        .split("pc ")
        .skip(1)
        .map(|s| s.split(' ').next().unwrap())
        .collect();
    assert_eq!(pcs.len(), 2, "{f}");
    assert_ne!(pcs[0], pcs[1], "{f}");
}
per_target!(
    synccheck_waves_at_different_barriers,
    sync_different_barriers
);

fn sync_divergent_barrier(target: &str) {
    let f = sync_fault(target, "divergent_barrier");
    let site = f.site.as_ref().unwrap();
    assert!(site.instruction.starts_with("s_barrier"), "{f}");
    // Every even lane of the wave.
    let even = 0x5555_5555_5555_5555u64 >> (64 - lanes(target));
    assert_eq!(site.exec, even, "{f}");
    assert!(
        f.reason.contains(&format!("EXEC {even:#x}")) && f.reason.contains("divergent"),
        "{f}"
    );
}
per_target!(synccheck_barrier_in_divergent_code, sync_divergent_barrier);

/// A correct kernel with barriers in a loop reports nothing under
/// synccheck, and gives the same (right) answer under every schedule.
fn sync_correct_kernel(target: &str) {
    let gpu = Gpu::with(target, |s| s.threads(1));
    gpu.dev.set_checks(Checks {
        sync: true,
        ..Default::default()
    });
    let prog = gpu.program(FILE, &[]);
    let (groups, n, rounds) = (3usize, 256usize, 5);
    let want: Vec<i32> = (0..groups)
        .flat_map(|g| {
            let mut v: Vec<i32> = (0..n as i32).map(|l| l + g as i32).collect();
            for r in 0..rounds {
                v = (0..n).map(|l| v[(l + 1) % n] + r).collect();
            }
            v
        })
        .collect();
    for schedule in [
        Schedule::InOrder,
        Schedule::Seeded(1),
        Schedule::Seeded(2),
        Schedule::Seeded(3),
    ] {
        gpu.dev.set_schedule(schedule);
        let out = gpu.zeros(4 * n * groups);
        gpu.run(
            &prog,
            "barrier_loop",
            [groups as u32, 1, 1],
            [n as u32, 1, 1],
            &[buf(&out), Arg::I32(rounds)],
        );
        assert_slice_eq(
            &format!("barrier_loop, {schedule:?}"),
            &gpu.read::<i32>(&out),
            &want,
        );
    }
}
per_target!(synccheck_passes_barriers_in_loops, sync_correct_kernel);
