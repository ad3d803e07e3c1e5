//! ROCm 6 attributes and exports through `libhsa-runtime64.so.1`: the C
//! program `tests/c/rocm6_info.c` runs each scenario (it checks statuses and
//! consistency itself) and the values it prints are checked against the
//! device profiles here.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

fn program() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| common::build_c("rocm6_info"))
}

/// Runs one scenario with extra environment; returns its stdout.
fn run(name: &str, env: &[(&str, &str)]) -> String {
    let out = common::run(program(), &[name], env);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains(&format!("OK {name}")),
        "scenario {name} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The value after `key: ` on the first line that has it.
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}: ");
    out.lines()
        .find_map(|l| l.trim_start().strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {key:?} line in:\n{out}"))
}

/// The part of the output about agent `n`.
fn agent(out: &str, n: usize) -> &str {
    let start = out
        .find(&format!("agent {n}: "))
        .unwrap_or_else(|| panic!("no agent {n} in:\n{out}"));
    let rest = &out[start + 1..];
    let end = rest.find("\nagent ").map_or(out.len(), |e| start + 1 + e);
    &out[start..end]
}

#[test]
fn new_exports_need_hsa_init() {
    run("uninit", &[]);
}

#[test]
fn rocm6_system_attributes() {
    let out = run("system", &[]);
    assert_eq!(field(&out, "mwaitx"), "0");
    assert_eq!(field(&out, "dmabuf"), "0");
    assert_eq!(field(&out, "vmem"), "1");
    assert_eq!(field(&out, "xnack"), "0");
    assert_eq!(field(&out, "ext version"), "1.6");
}

#[test]
fn rocm6_agent_attributes_of_the_gfx1151_apu() {
    let out = run("agents", &[]);
    let cpu = agent(&out, 0);
    assert!(cpu.starts_with("agent 0: CPU"), "{out}");
    assert_eq!(field(cpu, "timestamp frequency"), "1000000000");
    for (key, want) in [
        ("family", "0"),
        ("ucode", "0"),
        ("sdma ucode", "0"),
        ("sdma engines", "0"),
        ("xgmi engines", "0"),
        ("iommu", "0"),
        ("xcc", "0"),
        ("driver uid", "0"),
        ("apu", "0"),
    ] {
        assert_eq!(field(cpu, key), want, "CPU {key}");
    }
    let gpu = agent(&out, 1);
    assert!(gpu.starts_with("agent 1: GPU"), "{out}");
    // 16 GiB device pool, nothing allocated.
    assert_eq!(field(gpu, "memory avail"), "17179869184");
    assert_eq!(field(gpu, "timestamp frequency"), "100000000");
    for (key, want) in [
        ("family", "150"),
        ("ucode", "0"),
        ("sdma ucode", "0"),
        ("sdma engines", "2"),
        ("xgmi engines", "0"),
        ("iommu", "0"),
        ("xcc", "1"),
        ("apu", "1"),
    ] {
        assert_eq!(field(gpu, key), want, "GPU {key}");
    }
}

#[test]
fn rocm6_agent_attributes_of_the_discrete_gfx1100() {
    let out = run("agents", &[("SOFTGPU_PROFILE", "gfx1100")]);
    let gpu = agent(&out, 1);
    assert_eq!(field(gpu, "family"), "145");
    assert_eq!(field(gpu, "apu"), "0", "a discrete GPU is no APU");
    assert_eq!(field(gpu, "memory avail"), "25769803776");
}

#[test]
fn two_gpus_have_distinct_driver_uids() {
    // The C program checks the ids are distinct and non-zero.
    let out = run("agents", &[("SOFTGPU_DEVICES", "2")]);
    assert_ne!(
        field(agent(&out, 1), "driver uid"),
        field(agent(&out, 2), "driver uid")
    );
}

#[test]
fn pool_location_and_recommended_granule() {
    let out = run("pools", &[]);
    assert!(
        out.contains("agent 0 pool 0: segment 0 granule 4096 rec 4096 location 0"),
        "{out}"
    );
    assert!(out.contains("location 1"), "{out}");
}

#[test]
fn memory_avail_follows_allocations_and_flags_are_checked() {
    run("alloc", &[]);
}

#[test]
fn copies_on_an_engine_and_engine_status() {
    let out = run("copy_engine", &[]);
    assert_eq!(field(&out, "engines gpu<-cpu"), "0x3");
    let two = run("copy_engine", &[("SOFTGPU_DEVICES", "2")]);
    assert_eq!(field(&two, "gpu to gpu engines"), "0x3");
}

#[test]
fn new_exports_succeed_or_refuse_with_exact_statuses() {
    let out = common::run(program(), &["exports"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("OK exports"),
        "exports failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // Each refusal says why, once.
    for said in [
        "not supported: hsa_agent_set_info(attribute 0x0): agent attributes are read-only",
        "not supported: hsa_amd_enable_logging(HSA_AMD_LOG_FLAG_BLIT_KERNEL_PKTS)",
        "not supported: hsa_amd_portable_export_dmabuf: dma-buf export is not supported",
        "not supported: hsa_amd_spm_acquire: the streaming performance monitor is not supported",
    ] {
        assert_eq!(stderr.matches(said).count(), 1, "{said:?} in:\n{stderr}");
    }
}
