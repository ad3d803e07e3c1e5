//! AQL dispatch through `libhsa-runtime64.so.1`: the C program
//! `tests/c/dispatch.c` runs each scenario against our library with a
//! clang-compiled gfx1151 code object.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

/// The kernels the scenarios dispatch (OpenCL C).
const KERNELS: &str = r#"
kernel void vadd(global const float* a, global const float* b, global float* c, uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}

kernel void inc(global uint* p) {
    p[get_global_id(0)] += 1;
}

kernel void fill2d(global uint* out, uint pitch) {
    size_t x = get_global_id(0), y = get_global_id(1);
    out[y * pitch + x] = (uint)(y * 1000 + x + 1);
}

kernel void copy(global const uint* src, global uint* dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i];
}

kernel void wild(global uint* p) {
    p[get_global_id(0)] = 1;
}

// Compiled for workgroups of at most 32 work-items.
kernel void __attribute__((reqd_work_group_size(32, 1, 1))) count(global uint* n) {
    atomic_inc(n);
}

// The compute unit a work-item runs on: HW_REG_HW_ID1 (23) bits 9-18
// (the CU within its WGP, the WGP, array and engine), as rocrtst's
// cu_mask_kernels.cl reads it.
kernel void hw_id(global uint* out) {
    out[get_global_id(0)] = __builtin_amdgcn_s_getreg((9 << 11) | (9 << 6) | 23);
}

kernel void trap(global uint* p) {
    if (p[0] == 0) __builtin_trap();
    p[get_global_id(0)] = 1;
}

kernel void spin(global volatile uint* flag) {
    while (flag[0] == 0) {}
    flag[get_global_id(0)] = 2;
}
"#;

/// The C program and the code object, built once for all tests.
fn program() -> &'static (PathBuf, String) {
    static BUILT: OnceLock<(PathBuf, String)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let exe = common::build_c("dispatch");
        let kernels = common::kernel_file("dispatch-kernels", KERNELS, "gfx1151");
        (exe, kernels.display().to_string())
    })
}

/// Runs one scenario; returns its stderr.
fn scenario(name: &str, env: &[(&str, &str)]) -> String {
    let (exe, kernels) = program();
    common::scenario(exe, &[name, kernels], env)
}

/// The HSA runtime above the executor is the same for every GPU family:
/// the scenarios that check results also pass on the RDNA4 agents, gfx1200
/// and gfx1201, the RDNA2 agent gfx1030 and the CDNA agents gfx90a and
/// gfx942 (wave64), running code built for each.
#[test]
fn scenarios_run_on_the_rdna4_rdna2_and_cdna_agents() {
    let (exe, _) = program();
    for part in ["gfx1200", "gfx1201", "gfx1030", "gfx90a", "gfx942"] {
        let kernels = common::kernel_file("dispatch-kernels", KERNELS, part);
        let kernels = kernels.display().to_string();
        let env = [("SOFTGPU_PROFILE", part)];
        for name in ["vadd", "ring", "grid2d", "barriers"] {
            common::scenario(exe, &[name, &kernels], &env);
        }
        let stderr = common::scenario(exe, &["fault", &kernels], &env);
        assert!(
            stderr.contains("kernel wild faulted"),
            "{part}: stderr:\n{stderr}"
        );
    }
}

#[test]
fn vector_add_through_an_aql_queue() {
    scenario("vadd", &[]);
}

#[test]
fn two_hundred_dispatches_wrap_a_64_slot_ring() {
    scenario("ring", &[]);
}

#[test]
fn two_dimensional_grid_with_partial_workgroups() {
    scenario("grid2d", &[]);
}

#[test]
fn barrier_and_and_barrier_or_wait_for_late_dependencies() {
    scenario("barriers", &[]);
}

/// As rocrtst's trap test: the first dispatch of a kernel that traps
/// reaches the error callback with HSA_STATUS_ERROR_EXCEPTION promptly
/// (rocrtst waits 16.8 ms). The scenario prints the latency; the bound here
/// is only "not at a timeout", since a test must not time the machine
/// (docs/PERFORMANCE.md records the figure).
#[test]
fn the_first_dispatch_that_traps_reaches_the_error_callback_promptly() {
    let (exe, kernels) = program();
    let out = common::run(exe, &["trap_latency", kernels], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ms: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("trap reached the callback after "))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no latency line:\n{stdout}"));
    eprintln!("trap latency: {ms} ms");
    assert!(ms < 1000.0, "{ms} ms");
}

/// Host memory locked, then unmapped by the client: a kernel touching it
/// is refused with a report saying so, and the process lives on.
#[test]
fn a_kernel_touching_locked_memory_the_client_unmapped_is_refused() {
    let stderr = scenario("unmapped_lock", &[]);
    assert!(
        stderr.contains("which the program unmapped after registering it"),
        "stderr:\n{stderr}"
    );
}

/// rocrtst's short kernel argument buffers: a kernarg segment that starts
/// in an allocation and runs past it is run (on a zero-padded copy) with a
/// warning naming both sizes, not refused with a dead queue.
#[test]
fn a_kernarg_buffer_shorter_than_the_segment_runs_with_a_warning() {
    let stderr = scenario("short_kernarg", &[]);
    assert!(
        stderr.contains("kernel inc: its kernarg segment is")
            && stderr.contains("holds only 8 of them"),
        "stderr:\n{stderr}"
    );
}

#[test]
fn malformed_packets_reach_the_error_callback() {
    let stderr = scenario("badpacket", &[]);
    assert!(stderr.contains("packet type 7"), "stderr:\n{stderr}");
    assert!(stderr.contains("0 dimensions"), "stderr:\n{stderr}");
}

#[test]
fn kernel_fault_reaches_the_error_callback_and_the_process_continues() {
    let stderr = scenario("fault", &[]);
    assert!(
        stderr.contains("kernel wild faulted"),
        "the fault report should name the kernel; stderr:\n{stderr}"
    );
    assert!(stderr.contains("address 0x1000"), "stderr:\n{stderr}");
}

#[test]
fn a_hung_kernel_times_out_with_the_waves_it_left_running() {
    let stderr = scenario("hang", &[("SOFTGPU_TIMEOUT", "2")]);
    for want in [
        "kernel spin faulted",
        "wall-clock limit of 2 s",
        "waves in flight",
        "workgroup (0, 0, 0) wave 0: pc 0x",
    ] {
        assert!(stderr.contains(want), "stderr lacks {want:?}:\n{stderr}");
    }
}

#[test]
fn dispatch_profiling_times() {
    scenario("profiling", &[]);
}

#[test]
fn forged_queue_pointers_are_invalid_queues() {
    let stderr = scenario("forged", &[]);
    assert!(
        stderr.contains("hsa_queue_add_write_index_relaxed") && stderr.contains("invalid queue"),
        "index functions report bad queues on stderr; stderr:\n{stderr}"
    );
}

#[test]
fn dispatch_on_the_second_gpu_agent() {
    scenario("second", &[("SOFTGPU_DEVICES", "2")]);
}

#[test]
fn queue_creation_rules_indices_and_amd_controls() {
    scenario("queueapi", &[]);
}

/// Confinement through the C library: each scenario's fault reaches the
/// queue's error callback as a memory aperture violation, and the report
/// on stderr names the allocation the access missed.
fn confined(name: &str, env: &[(&str, &str)], expect: &[&str]) {
    let stderr = scenario(name, env);
    for e in expect {
        assert!(
            stderr.contains(e),
            "{name}: the report should say {e:?}; stderr:\n{stderr}"
        );
    }
}

#[test]
fn a_write_just_past_a_buffer_is_refused_and_its_neighbour_untouched() {
    confined(
        "overflow",
        &[],
        &[
            "0 bytes past the end of a 252-byte allocation",
            "hsa_amd_memory_pool_allocate",
            // The test kernels are built without -cl-kernel-arg-info, so
            // the argument has no name in the metadata.
            "kernel argument `#0`",
            "wave 1, lane 31",
        ],
    );
}

#[test]
fn a_dispatch_through_a_freed_buffer_is_refused() {
    confined(
        "use_after_free",
        &[],
        &["freed by hsa_amd_memory_pool_free"],
    );
}

#[test]
fn a_stale_dispatch_does_not_write_the_memory_new_owner() {
    confined(
        "stale",
        &[("SOFTGPU_QUARANTINE", "0")],
        &[
            "stale dispatch",
            "freed and reallocated after this dispatch was queued",
        ],
    );
}

#[test]
fn kernels_cannot_write_another_queue() {
    confined(
        "queue_write",
        &[],
        &["an hsa_queue_t", "which kernels may only read"],
    );
}

#[test]
fn a_workgroup_beyond_the_kernels_compiled_maximum_runs_as_on_a_gpu() {
    let stderr = scenario("beyondmax", &[]);
    assert!(
        stderr.contains("kernel count dispatched with workgroup [64, 1, 1]")
            && stderr.contains("required workgroup size [32, 1, 1]"),
        "the overshoot is named once on stderr; stderr:\n{stderr}"
    );
}

#[test]
fn packets_without_the_barrier_bit_run_beside_each_other() {
    scenario("concurrent", &[("SOFTGPU_TIMEOUT", "20")]);
}

#[test]
fn cu_masks_place_workgroups_on_the_units_left_on() {
    scenario("cumask", &[]);
    // HSA_CU_MASK limits every queue of the first GPU to units 0-7
    // (ROCr's syntax); HSA_CU_MASK_SKIP_INIT leaves new queues whole.
    scenario("cumask_env8", &[("HSA_CU_MASK", "0: 0-3, 4-7")]);
    scenario("cumask_env8", &[("HSA_CU_MASK", "0:0xff; 1:0x3")]);
    let skip = [("HSA_CU_MASK", "0:0-7"), ("HSA_CU_MASK_SKIP_INIT", "1")];
    scenario("cumask_env8_skip", &skip);
}
