//! `softgpu run` with the memory sanitizers turned on by `SOFTGPU_CHECK`:
//! a kernel whose workgroups all store to one element is reported by
//! racecheck, and runs (exit 0) with the checks off. Compiled at test time
//! from OpenCL C (clang-19, lld-19, rocm-device-libs), with a fresh cache.

use std::path::Path;
use std::process::Output;

mod common;
use common::{scratch, softgpu_command, text};

const RACY: &str = "\
kernel void all_write_first(global uint *out) {
  if (get_local_id(0) == 0) out[0] = get_group_id(0) + 1;
}
";

fn softgpu_in(dir: &Path, check: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = softgpu_command();
    cmd.args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("SOFTGPU_DEVICES")
        .env_remove("SOFTGPU_PROFILE")
        .env_remove("SOFTGPU_CHECK");
    if let Some(c) = check {
        cmd.env("SOFTGPU_CHECK", c);
    }
    cmd.output().expect("cannot run softgpu")
}

#[test]
fn softgpu_check_race_reports_workgroups_storing_to_one_element() {
    let dir = scratch("check-race");
    let src = dir.join("racy.cl");
    std::fs::write(&src, RACY).unwrap();
    let out_arg = format!("{}:4", dir.join("out.bin").display());
    let args = [
        "run",
        src.to_str().unwrap(),
        "--kernel",
        "all_write_first",
        "--grid",
        "4",
        "--block",
        "64",
        "--out",
        &out_arg,
    ];
    let plain = softgpu_in(&dir, None, &args);
    assert!(
        plain.status.success(),
        "without checks the racy kernel runs:\n{}",
        text(&plain.stderr)
    );

    let checked = softgpu_in(&dir, Some("race"), &args);
    let stderr = text(&checked.stderr);
    assert!(
        !checked.status.success(),
        "racecheck found nothing:\n{stderr}"
    );
    assert!(
        stderr.contains("racecheck: write-after-write hazard on global memory"),
        "{stderr}"
    );
    assert!(stderr.contains("all_write_first"), "{stderr}");
    assert!(stderr.matches("global_store").count() >= 2, "{stderr}");

    // A bad SOFTGPU_CHECK is an error naming the variable, not ignored.
    let bad = softgpu_in(&dir, Some("races"), &args);
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("SOFTGPU_CHECK"),
        "{}",
        text(&bad.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
