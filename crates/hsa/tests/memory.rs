//! Memory through `libhsa-runtime64.so.1`: the C program
//! `tests/c/memory.c` runs each scenario against our library.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

/// The kernel that writes into locked host memory (OpenCL C).
const KERNELS: &str = r#"
kernel void store(global uint* out, uint base) {
    size_t i = get_global_id(0);
    out[i] = base + (uint)i;
}
"#;

fn program() -> &'static (PathBuf, String) {
    static BUILT: OnceLock<(PathBuf, String)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let exe = common::build_c("memory");
        let kernels = common::kernel_file("memory-kernels", KERNELS, "gfx1151");
        (exe, kernels.display().to_string())
    })
}

/// Runs one scenario; returns its stderr.
fn scenario(name: &str) -> String {
    let (exe, kernels) = program();
    common::scenario(exe, &[name, kernels], &[])
}

#[test]
fn pools_and_regions_report_sane_attributes() {
    scenario("pools");
}

#[test]
fn allocation_free_double_free_and_exhaustion() {
    scenario("alloc");
}

#[test]
fn synchronous_copies() {
    scenario("copy");
}

#[test]
fn asynchronous_copies_wait_for_dependencies() {
    scenario("async");
}

#[test]
fn three_dimensional_pitched_copy() {
    scenario("rect");
}

#[test]
fn fill() {
    scenario("fill");
}

#[test]
fn locked_host_memory_is_written_by_a_kernel() {
    let stderr = scenario("lock");
    assert!(stderr.contains("kernel store faulted"), "stderr:\n{stderr}");
}

#[test]
fn pointer_info() {
    scenario("pointerinfo");
}

#[test]
fn deallocation_callbacks() {
    scenario("dealloc");
}

#[test]
fn access_coherency_and_migration() {
    scenario("access");
}
