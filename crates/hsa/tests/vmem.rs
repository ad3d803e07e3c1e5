//! ROCm 6's virtual memory API through `libhsa-runtime64.so.1`: the C
//! program `tests/c/vmem.c` runs each scenario against our library.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

/// The kernel that writes through mapped addresses (OpenCL C).
const KERNELS: &str = r#"
kernel void store(global uint* out, uint base) {
    size_t i = get_global_id(0);
    out[i] = base + (uint)i;
}
"#;

fn program() -> &'static (PathBuf, String) {
    static BUILT: OnceLock<(PathBuf, String)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let exe = common::build_c("vmem");
        let kernels = common::kernel_file("vmem-kernels", KERNELS, "gfx1151");
        (exe, kernels.display().to_string())
    })
}

/// Runs one scenario; returns its stderr.
fn scenario(name: &str) -> String {
    let (exe, kernels) = program();
    common::scenario(exe, &[name, kernels], &[])
}

#[test]
fn a_kernel_writes_through_a_mapped_range() {
    scenario("kernel");
}

#[test]
fn one_handle_mapped_twice_shows_the_same_bytes() {
    scenario("alias");
}

#[test]
fn kernels_are_refused_until_access_is_granted() {
    let stderr = scenario("refused");
    assert!(stderr.contains("kernel store faulted"), "stderr:\n{stderr}");
    assert!(
        stderr.contains("hsa_amd_vmem_map"),
        "the fault names the mapped range:\n{stderr}"
    );
}

#[test]
fn export_and_import_share_the_memory() {
    scenario("share");
}

#[test]
fn retain_and_release_count_references() {
    scenario("refcount");
}

#[test]
fn bad_requests_get_rocrs_statuses() {
    scenario("errors");
}

#[test]
fn every_call_before_init_is_refused() {
    scenario("uninit");
}

#[test]
fn ipc_memory_is_shared_with_a_second_process() {
    let stderr = scenario("ipc");
    assert!(!stderr.contains("panic"), "{stderr}");
}

#[test]
fn ipc_signals_are_shared_with_a_second_process() {
    let stderr = scenario("ipc_signal");
    assert!(!stderr.contains("panic"), "{stderr}");
}
