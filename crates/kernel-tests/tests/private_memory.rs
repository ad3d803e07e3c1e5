//! Private (scratch) memory: zeroed for every wave, materialised lazily and
//! bounded per dispatch, checked by initcheck; and the launch limits the
//! executor checks before a dispatch allocates anything.

mod common;
use common::*;
use softgpu_codeobj::Kernel;
use softgpu_exec::{
    Arg, Checks, DispatchDesc, DispatchError, FaultKind, Grid, Kernarg, Program, RawDispatch,
    MAX_WAVE_SCRATCH_BYTES,
};
use softgpu_test_support::kernel::Kernel as AsmKernel;

fn gpu(target: &str, checks: Checks, scratch_limit: Option<u64>) -> Gpu {
    Gpu::with(target, |s| {
        let limit = scratch_limit.unwrap_or(s.get_scratch_limit());
        Ok(s.threads(1)?.checks(checks).scratch_limit(limit))
    })
}

fn bad_launch<T>(r: Result<T, DispatchError>, what: &str) -> String {
    match r {
        Err(e @ DispatchError::BadLaunch { .. }) => e.to_string(),
        Err(e) => panic!("{what}: expected a bad-launch error, got: {e}"),
        Ok(_) => panic!("{what}: expected a bad-launch error, the dispatch ran"),
    }
}

/// softgpu zeroes private memory for every wave (hardware leaves whatever
/// an earlier wave wrote): neither a previous workgroup on the same worker
/// nor a previous dispatch shows through.
#[test]
fn uninitialised_private_memory_reads_zero() {
    for target in TARGETS {
        let gpu = gpu(target, Checks::default(), None);
        let prog = gpu.program("private.cl", &[]);
        let out = gpu.zeros(64 * 64 * 4);
        for _ in 0..2 {
            gpu.run(
                &prog,
                "peek_then_dirty",
                [64, 1, 1],
                [64, 1, 1],
                &[buf(&out), Arg::U32(17), Arg::U32(0xdead_beef)],
            );
            assert_slice_eq("private reads", &gpu.read::<u32>(&out), &[0u32; 64 * 64]);
        }
    }
}

#[test]
fn initcheck_reports_a_read_of_unwritten_private_memory() {
    let init = Checks {
        init: true,
        ..Default::default()
    };
    for target in TARGETS {
        let gpu = gpu(target, init, None);
        let prog = gpu.program("private.cl", &[]);
        let out = gpu.zeros(64 * 4);
        // No false report: every byte read was written first.
        gpu.run(
            &prog,
            "write_then_read",
            [1, 1, 1],
            [64, 1, 1],
            &[buf(&out), Arg::U32(9), Arg::U32(100)],
        );
        let want: Vec<u32> = (0..64).map(|i| 100 + i).collect();
        assert_slice_eq("written then read", &gpu.read::<u32>(&out), &want);
        let r = gpu.try_run(
            &prog,
            "peek_then_dirty",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[buf(&out), Arg::U32(17), Arg::U32(1)],
        );
        let Err(DispatchError::Fault(f)) = r else {
            panic!("{target}: expected an initcheck fault, got {r:?}")
        };
        assert_eq!(f.kind, FaultKind::Uninitialized, "{f}");
        let site = f.site.as_ref().expect("site");
        assert_eq!(site.lane, Some(0), "{f}");
        assert!(
            f.reason.contains("lane 0")
                && f.reason.contains("read 4 bytes of scratch")
                && f.reason.contains("never written"),
            "{f}"
        );
        // gfx10 and gfx90a reach scratch through the private segment
        // buffer (MUBUF).
        let family = softgpu_isa::Family::of_target(target);
        let mubuf = matches!(
            family,
            Some(softgpu_isa::Family::Gfx10 | softgpu_isa::Family::Gfx90a)
        );
        let load = if mubuf { "buffer_load" } else { "scratch_load" };
        assert!(site.instruction.starts_with(load), "{f}");
    }
}

/// A private array of 240,000 bytes per work-item of which each work-item
/// touches one word: with a budget of 1 MiB per dispatch (the whole array
/// of one wave would be 7.5 MiB) it runs; touching all of it faults with
/// the limit named, and the device stays usable.
#[test]
fn large_private_segment_costs_what_is_touched() {
    for target in TARGETS {
        let gpu = gpu(target, Checks::default(), Some(1 << 20));
        let prog = gpu.program("private.cl", &[]);
        let n = 32 * 64;
        let out = gpu.zeros(n * 4);
        gpu.run(
            &prog,
            "big_private",
            [64, 1, 1],
            [32, 1, 1],
            &[buf(&out), Arg::U32(12345), Arg::U32(0)],
        );
        let want: Vec<u32> = (0..n as u32).collect();
        assert_slice_eq("one word each", &gpu.read::<u32>(&out), &want);
        let r = gpu.try_run(
            &prog,
            "big_private",
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[buf(&out), Arg::U32(0), Arg::U32(1)],
        );
        let Err(DispatchError::Fault(f)) = r else {
            panic!("{target}: expected the scratch limit, got {r:?}")
        };
        assert!(
            f.reason.contains("private memory limit of 1048576 bytes")
                && f.reason.contains("SOFTGPU_SCRATCH_LIMIT"),
            "{f}"
        );
        assert_eq!(f.site.as_ref().map(|s| s.wave), Some(0), "{f}");
        gpu.run(
            &prog,
            "big_private",
            [2, 1, 1],
            [32, 1, 1],
            &[buf(&out), Arg::U32(7), Arg::U32(0)],
        );
    }
}

/// A minimal wave32 kernel `k` assembled with clang-19 / ld.lld-19, with
/// the given descriptor and metadata values.
fn assembled(private: u64, lds: u64, kernarg: u32) -> Vec<u8> {
    AsmKernel {
        private,
        lds,
        kernarg,
        kernarg_ptr: true,
        private_segment: true,
        ..AsmKernel::default()
    }
    .assemble("gfx1100")
}

/// A descriptor asking for 1 GiB per work-item (32 GiB per wave) is
/// refused at once, naming the limit; so is a dispatch asking for it.
#[test]
fn huge_private_segment_is_refused_before_allocating() {
    let gpu = gpu("gfx1100", Checks::default(), None);
    let huge = gpu.dev.load(&assembled(1 << 30, 0, 0)).unwrap();
    let clock = std::time::Instant::now();
    let text = bad_launch(
        gpu.try_run(&huge, "k", [1024, 1, 1], [1024, 1, 1], 0, &[]),
        "1 GiB descriptor",
    );
    assert!(
        text.contains("private segment of 1073741824 bytes per work-item")
            && text.contains("limit of 262136 bytes per work-item in wave32")
            && text.contains(&MAX_WAVE_SCRATCH_BYTES.to_string()),
        "{text}"
    );
    let small = gpu.dev.load(&assembled(16, 0, 0)).unwrap();
    let kernel = &small.code_object.kernels[0];
    let memory = gpu.zeros(4096);
    let raw = RawDispatch {
        grid: [32, 1, 1],
        block: [32, 1, 1],
        group_segment_bytes: 0,
        private_segment_bytes: u32::MAX,
        kernarg: memory.addr(),
        packet: memory.addr(),
        queue: memory.addr(),
        epoch: None,
        compute_units: None,
    };
    let text = bad_launch(gpu.dev.dispatch(&raw.desc(&small, kernel)), "packet");
    assert!(text.contains("dispatch 4294967295"), "{text}");
    assert!(
        clock.elapsed().as_secs() < 10,
        "refusing took {:?}",
        clock.elapsed()
    );
    // The largest legal private segment runs (touching nothing).
    let max = gpu.dev.load(&assembled(262_136, 0, 0)).unwrap();
    gpu.run(&max, "k", [64, 1, 1], [1024, 1, 1], &[]);
    let raw = RawDispatch {
        private_segment_bytes: 262_136,
        ..raw
    };
    gpu.dev.dispatch(&raw.desc(&small, kernel)).unwrap();
}

#[test]
fn launch_limits_name_the_limit_and_legal_edges_run() {
    let gpu = gpu("gfx1100", Checks::default(), None);
    let prog = gpu.dev.load(&assembled(0, 1024, 0)).unwrap();
    let run = |grid, block, lds| gpu.try_run(&prog, "k", grid, block, lds, &[]);
    // Exactly the maximum workgroup and exactly the LDS size run.
    run([2, 1, 1], [1024, 1, 1], 0).unwrap();
    run([1, 1, 1], [8, 8, 16], 0).unwrap();
    run([1, 1, 1], [32, 1, 1], 64 * 1024 - 1024).unwrap();
    let text = bad_launch(run([1, 1, 1], [1025, 1, 1], 0), "1025 work-items");
    assert!(text.contains("at most 1024"), "{text}");
    let text = bad_launch(run([1, 1, 1], [32, 1, 1], 64 * 1024 - 1023), "LDS");
    assert!(
        text.contains("65537 bytes of LDS") && text.contains("65536"),
        "{text}"
    );
    let text = bad_launch(run([1, 1, 1], [32, 1, 1], u32::MAX), "LDS overflow");
    assert!(text.contains("dynamic LDS"), "{text}");
    let text = bad_launch(run([0, 1, 1], [32, 1, 1], 0), "empty grid");
    assert!(text.contains("non-zero"), "{text}");
    let text = bad_launch(run([1 << 31, 1, 1], [4, 1, 1], 0), "grid x block");
    assert!(text.contains("4294967295 work-items"), "{text}");
    // A descriptor's static LDS beyond the device counts too.
    let big_lds = gpu.dev.load(&assembled(0, 65 * 1024, 0)).unwrap();
    let text = bad_launch(
        gpu.try_run(&big_lds, "k", [1, 1, 1], [32, 1, 1], 0, &[]),
        "static LDS",
    );
    assert!(text.contains("66560 bytes of LDS"), "{text}");
}

/// One wave32 workgroup of `kernel` with a ready-made kernarg segment.
fn one_wave_with_kernarg<'a>(
    prog: &'a Program,
    kernel: &'a Kernel,
    kernarg: &'a [u8],
) -> DispatchDesc<'a> {
    DispatchDesc {
        grid: Grid::WorkItems([32, 1, 1]),
        block: [32, 1, 1],
        kernarg: Kernarg::Bytes(kernarg),
        group_segment_bytes: Some(0),
        ..DispatchDesc::new(prog, kernel)
    }
}

#[test]
fn kernarg_segment_is_checked() {
    let gpu = gpu("gfx1100", Checks::default(), None);
    let prog = gpu.dev.load(&assembled(0, 0, 64)).unwrap();
    let kernel = &prog.code_object.kernels[0];
    let text = bad_launch(
        gpu.dev
            .dispatch(&one_wave_with_kernarg(&prog, kernel, &[0u8; 16])),
        "short kernarg",
    );
    assert!(
        text.contains("16 bytes of kernel arguments") && text.contains("64 bytes"),
        "{text}"
    );
    gpu.dev
        .dispatch(&one_wave_with_kernarg(&prog, kernel, &[0u8; 64]))
        .unwrap();
    let memory = gpu.zeros(4096);
    let raw = RawDispatch {
        grid: [32, 1, 1],
        block: [32, 1, 1],
        group_segment_bytes: 0,
        private_segment_bytes: 0,
        kernarg: 0,
        packet: memory.addr(),
        queue: memory.addr(),
        epoch: None,
        compute_units: None,
    };
    let text = bad_launch(gpu.dev.dispatch(&raw.desc(&prog, kernel)), "null kernarg");
    assert!(text.contains("kernarg address is null"), "{text}");
    let raw = RawDispatch {
        kernarg: 0x40,
        ..raw
    };
    let text = bad_launch(gpu.dev.dispatch(&raw.desc(&prog, kernel)), "wild kernarg");
    assert!(text.contains("not readable device memory"), "{text}");
    let raw = RawDispatch {
        kernarg: memory.addr(),
        ..raw
    };
    gpu.dev.dispatch(&raw.desc(&prog, kernel)).unwrap();
}
