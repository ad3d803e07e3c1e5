//! Instances configured in code: several side by side, each with its own
//! GPUs and settings, none reading the environment.

use softgpu::{
    Args, Checks, Config, Device, Error, FaultKind, Instance, JitMode, Kernel, Language, Profile,
    Stream,
};

const SOURCE: &str = r#"
__kernel void add_one(__global uint* x) { x[get_global_id(0)] += 1; }
__kernel void racy(__global uint* x) { x[get_global_id(0)] = x[0] + 1; }
__kernel void spin(__global uint* x, uint n) {
    uint acc = x[get_global_id(0)];
    for (uint i = 0; i < n; i++) acc = acc * 3u + 1u;
    x[get_global_id(0)] = acc;
}
"#;

fn gfx(name: &str) -> Profile {
    Profile::built_in(name).unwrap()
}

/// A stream on `instance`'s first GPU and the `add_one` kernel on it.
fn add_one_on(instance: &Instance) -> (Stream, Kernel) {
    let stream = instance.device(0).unwrap().stream().unwrap();
    let add_one = stream
        .compile(SOURCE, Language::OpenCl)
        .unwrap()
        .kernel("add_one")
        .unwrap();
    (stream, add_one)
}

#[test]
fn two_instances_run_different_gpus_side_by_side() {
    // Three GPU families in one instance: RDNA3, RDNA3.5, RDNA4 and RDNA2.
    let mut config = Config::new();
    let parts = vec![
        gfx("gfx1100"),
        gfx("gfx1151"),
        gfx("gfx1201"),
        gfx("gfx1030"),
    ];
    (config.devices(parts))
        .unwrap()
        .settings_mut()
        .threads(1)
        .unwrap();
    let mixed = Instance::new(&config).unwrap();
    let plain = Instance::new(&Config::default()).unwrap();
    assert_eq!(mixed.device_count(), 4);
    assert_eq!(plain.device_count(), 1);
    let (rdna3, strix, rdna4, rdna2) = (
        mixed.device(0).unwrap(),
        mixed.device(1).unwrap(),
        mixed.device(2).unwrap(),
        mixed.device(3).unwrap(),
    );
    assert_eq!(rdna3.target(), "gfx1100");
    assert_eq!(strix.target(), "gfx1151");
    assert_eq!(rdna4.target(), "gfx1201");
    assert_eq!(rdna2.target(), "gfx1030");
    assert_eq!(rdna3.properties().compute_units, 96, "the gfx1100 profile");
    assert_eq!(rdna4.properties().compute_units, 64, "the gfx1201 profile");
    assert!(matches!(
        mixed.device(4),
        Err(Error::NoDevice { index: 4, count: 4 })
    ));

    // Each GPU runs code built for its own processor.
    let mut results = Vec::new();
    for device in [&rdna3, &strix, &rdna4, &rdna2, &plain.device(0).unwrap()] {
        let stream = device.stream().unwrap();
        let module = stream.compile(SOURCE, Language::OpenCl).unwrap();
        let x = stream.allocate(4 * 64).unwrap();
        stream.upload(&x, &[41u32; 64]).unwrap();
        let add_one = module.kernel("add_one").unwrap();
        stream
            .dispatch_args(&add_one, 1, 64, &Args::new().view(&x))
            .unwrap();
        results.push(stream.read_vec::<u32>(&x).unwrap());
    }
    assert!(results.iter().all(|r| r == &vec![42u32; 64]));
}

#[test]
fn nothing_of_one_instance_is_used_by_another() {
    let (a, b) = (
        Instance::new(&Config::default()).unwrap(),
        Instance::new(&Config::default()).unwrap(),
    );
    let (sa, sb) = (
        a.device(0).unwrap().stream().unwrap(),
        b.device(0).unwrap().stream().unwrap(),
    );
    let kernel = sa
        .compile(SOURCE, Language::OpenCl)
        .unwrap()
        .kernel("add_one")
        .unwrap();
    let (xa, xb) = (sa.allocate(256).unwrap(), sb.allocate(256).unwrap());
    // Both are "GPU 0", of different instances.
    let e = sb
        .dispatch_args(&kernel, 1, 64, &Args::new().view(&xb))
        .unwrap_err();
    assert!(e.to_string().contains("another device"), "{e}");
    let e = sa
        .dispatch_args(&kernel, 1, 64, &Args::new().view(&xb))
        .unwrap_err();
    assert!(e.to_string().contains("another softgpu instance"), "{e}");
    // Copies go through the host, so they may cross instances.
    sb.upload(&xb, &[7u32; 64]).unwrap();
    sb.synchronize().unwrap();
    sa.copy(&xa, &xb).unwrap();
    assert_eq!(sa.read_vec::<u32>(&xa).unwrap(), vec![7u32; 64]);
}

#[test]
fn an_instance_s_settings_reach_its_dispatches() {
    let trace = std::env::temp_dir().join(format!("softgpu-instance-{}.jsonl", std::process::id()));
    let checks = Checks {
        race: true,
        ..Checks::default()
    };
    {
        let mut config = Config::new();
        config.trace(&trace).settings_mut().checks(checks);
        config.settings_mut().instruction_budget(100_000).unwrap();
        let instance = Instance::new(&config).unwrap();
        let device = instance.device(0).unwrap();
        assert_eq!(device.checks().unwrap(), checks);
        let stream = device.stream().unwrap();
        let module = stream.compile(SOURCE, Language::OpenCl).unwrap();
        let (spin, racy) = (
            module.kernel("spin").unwrap(),
            module.kernel("racy").unwrap(),
        );
        let x = stream.allocate_zeroed(4 * 64).unwrap();
        // racecheck is on: wave 1 reads x[0] that wave 0 wrote, unordered.
        stream
            .dispatch_args(&racy, 1, 64, &Args::new().view(&x))
            .unwrap();
        match stream.synchronize() {
            Err(Error::Fault(f)) => assert_eq!(f.kind(), FaultKind::Race, "{f}"),
            other => panic!("expected racecheck to report the race: {other:?}"),
        }
        // A short loop fits in the budget; a long one is a runaway.
        stream
            .dispatch_args(&spin, 1, 64, &Args::new().view(&x).value(10u32))
            .unwrap();
        stream.synchronize().unwrap();
        stream
            .dispatch_args(&spin, 1, 64, &Args::new().view(&x).value(10_000_000u32))
            .unwrap();
        match stream.synchronize() {
            Err(Error::Fault(f)) => assert_eq!(f.kind(), FaultKind::Budget, "{f}"),
            other => panic!("expected the budget to stop the kernel: {other:?}"),
        }
    } // The last handle gone, the instance stops and flushes its trace.
    let events = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(events.contains("\"dispatch\""), "{events}");
}

#[test]
fn device_open_is_one_default_gpu_whatever_the_environment() {
    let device = Device::open(0).unwrap();
    assert_eq!(device.target(), "gfx1151");
    assert_eq!(device.instance().device_count(), 1);
    assert!(matches!(
        Device::open(1),
        Err(Error::NoDevice { index: 1, count: 1 })
    ));
    assert!(matches!(
        Device::open(-1),
        Err(Error::NoDevice { index: -1, .. })
    ));
    // Handles opened separately share the default instance's GPU.
    let again = Device::open(0).unwrap();
    let stream = again.stream().unwrap();
    let module = device
        .stream()
        .unwrap()
        .compile(SOURCE, Language::OpenCl)
        .unwrap();
    let x = stream.allocate_zeroed(256).unwrap();
    stream
        .dispatch_args(
            &module.kernel("add_one").unwrap(),
            1,
            64,
            &Args::new().view(&x),
        )
        .unwrap();
    assert_eq!(stream.read_vec::<u32>(&x).unwrap(), vec![1u32; 64]);
}

#[test]
fn the_trace_ring_keeps_the_latest_events_in_memory() {
    let off = Instance::new(&Config::default()).unwrap();
    assert!(off.trace_snapshot().is_empty(), "no ring, no events");
    let instance = Instance::new(Config::new().trace_ring(4)).unwrap();
    let (stream, add_one) = add_one_on(&instance);
    let x = stream.allocate_zeroed(4 * 64).unwrap();
    for _ in 0..10 {
        stream
            .dispatch_args(&add_one, 1, 64, &Args::new().view(&x))
            .unwrap();
    }
    stream.synchronize().unwrap();
    let events = instance.trace_snapshot();
    assert_eq!(events.len(), 4, "the ring holds the last 4: {events:?}");
    let dispatches: Vec<_> = events.iter().filter(|e| e["kind"] == "dispatch").collect();
    assert!(!dispatches.is_empty(), "{events:?}");
    let last = dispatches.last().unwrap();
    assert_eq!(last["kernel"], "add_one");
    assert_eq!(last["status"], "ok");
    // Labelled with the device profile and the fidelity of its figures.
    assert_eq!(last["fidelity"], "isa-exact");
    assert_eq!(last["profile"], "softgpu/gfx1151/radeon-8060s");
    assert_eq!(
        last["wave_instructions"].as_u64().map(|n| n > 0),
        Some(true)
    );
    assert_eq!(stream.read_vec::<u32>(&x).unwrap(), vec![10u32; 64]);
}

/// Dispatch statistics: each dispatch's counts, occupancy and estimated
/// time on the real part, the latest N, readable without files.
#[test]
fn dispatch_statistics_estimate_the_time_on_the_part() {
    let off = Instance::new(&Config::default()).unwrap();
    let mut config = Config::new();
    (config.devices(vec![gfx("gfx1100")]).unwrap())
        .dispatch_statistics(2)
        .trace_ring(8);
    let instance = Instance::new(&config).unwrap();
    let (stream, add_one) = add_one_on(&instance);
    let x = stream.allocate_zeroed(4 * 256).unwrap();
    for groups in [1u32, 2, 4] {
        stream
            .dispatch_args(&add_one, groups, 64, &Args::new().view(&x))
            .unwrap();
    }
    stream.synchronize().unwrap();
    assert!(off.dispatch_statistics().is_empty(), "off unless asked for");
    let stats = instance.dispatch_statistics();
    assert_eq!(stats.len(), 2, "the last 2 of 3");
    let last = &stats[1];
    assert_eq!(last.kernel, "add_one");
    assert_eq!(last.grid, [256, 1, 1]);
    assert_eq!(last.counters.workgroups, 4);
    assert_eq!(last.profile, "softgpu/gfx1100/radeon-rx-7900-xtx");
    assert_eq!(last.fidelity, softgpu::Fidelity::TimingEstimated);
    assert!(last.occupancy.waves_per_simd > 0);
    let estimate = last
        .estimate
        .as_ref()
        .expect("gfx1100 has performance figures");
    // Four tiny workgroups on 96 compute units: the launch dominates.
    assert_eq!(estimate.bound, softgpu::Bound::Launch);
    assert!(estimate.seconds > estimate.launch_seconds);
    // Each lane loads and stores one u32.
    assert_eq!(estimate.work.global_bytes, 2 * 4 * 256);
    // The trace's dispatch events carry the same estimate.
    let events = instance.trace_snapshot();
    let traced = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "dispatch")
        .unwrap();
    assert_eq!(traced["fidelity"], "timing-estimated");
    assert_eq!(
        traced["estimate"]["seconds"].as_f64(),
        Some(estimate.seconds)
    );
}

/// The JIT modes an instance may ask for are the build's: with the `jit`
/// feature (a default) every mode; without it the interpreter alone runs,
/// `Off` is the default, and `On` or `Verify` is refused by name when it
/// is set instead of running without the JIT.
#[test]
fn a_jit_mode_the_build_lacks_is_refused_by_name() {
    let built = cfg!(feature = "jit");
    let make = |jit| -> Result<Instance, Box<dyn std::error::Error>> {
        let mut config = Config::default();
        config.settings_mut().threads(1)?.jit(jit)?;
        Ok(Instance::new(&config)?)
    };
    assert_eq!(JitMode::default() == JitMode::On, built);
    let (stream, add_one) = add_one_on(&make(JitMode::default()).unwrap());
    let x = stream.allocate_zeroed(4 * 64).unwrap();
    stream
        .dispatch_args(&add_one, 1, 64, &Args::new().view(&x))
        .unwrap();
    assert_eq!(stream.read_vec::<u32>(&x).unwrap(), vec![1; 64]);
    assert!(make(JitMode::Off).is_ok());
    for mode in [JitMode::On, JitMode::Verify] {
        match make(mode) {
            Ok(_) => assert!(built, "{mode:?} made without the JIT"),
            Err(e) => {
                assert!(!built, "{mode:?}: {e}");
                assert!(e.to_string().contains("`jit` cargo feature"), "{e}");
            }
        }
    }
}
