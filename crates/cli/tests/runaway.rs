//! End-to-end tests of `softgpu run --timeout`, `--check` and
//! `--schedule-seeds` on `.cl` sources compiled at test time.

use std::path::Path;
use std::process::Output;

mod common;
use common::{scratch, softgpu_command, text};

/// Runs `softgpu` with a fresh compile cache in `dir`, without the
/// variables that would change the device or its debugging options.
fn softgpu_in(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = softgpu_command();
    cmd.args(args).env("XDG_CACHE_HOME", dir.join("cache"));
    for var in [
        "SOFTGPU_DEVICES",
        "SOFTGPU_PROFILE",
        "SOFTGPU_CHECK",
        "SOFTGPU_TIMEOUT",
        "SOFTGPU_SCHEDULE",
        "SOFTGPU_BUDGET",
        "SOFTGPU_THREADS",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("cannot run softgpu")
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed:\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn failed(out: &Output, what: &str) -> String {
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "{what} succeeded:\n{}",
        text(&out.stdout)
    );
    stderr
}

// Workgroups of 64 work-items: two wave32 waves.
const KERNELS: &str = "\
kernel void spin(global volatile int *flag, global int *out) {
  int n = 0;
  while (*flag == 0)
    n++;
  out[get_global_id(0)] = n;
}

kernel void lds_race(global int *out) {
  local int winner;
  int lid = get_local_id(0);
  if (lid == 0)
    winner = 1;
  if (lid == 32)
    winner = 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = winner;
}

kernel void no_race(global int *out) {
  local int tmp[64];
  int lid = get_local_id(0);
  tmp[lid] = lid;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tmp[63 - lid];
}

kernel void early_exit(global int *out) {
  local int tmp[32];
  int lid = get_local_id(0);
  if (lid >= 32)
    return;
  tmp[lid] = lid;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[lid] = tmp[31 - lid];
}
";

fn setup(tag: &str) -> (std::path::PathBuf, String) {
    let dir = scratch(tag);
    let src = dir.join("runaway.cl");
    std::fs::write(&src, KERNELS).unwrap();
    let src = src.to_string_lossy().into_owned();
    (dir, src)
}

#[test]
fn timeout_stops_a_hung_kernel_and_lists_its_waves() {
    let (dir, src) = setup("timeout");
    let flag = dir.join("flag.bin");
    std::fs::write(&flag, [0u8; 4]).unwrap();
    let out_arg = format!("{}:1024", dir.join("out.bin").display());
    let out = softgpu_in(
        &dir,
        &[],
        &[
            "run",
            &src,
            "--kernel",
            "spin",
            "--grid",
            "4",
            "--block",
            "64",
            "--timeout",
            "2",
            "--in",
            &flag.to_string_lossy(),
            "--out",
            &out_arg,
        ],
    );
    let stderr = failed(&out, "a hung kernel");
    for want in [
        "wall-clock limit of 2 s",
        "waves in flight",
        "workgroup (0, 0, 0) wave 0: pc 0x",
    ] {
        assert!(
            stderr.contains(want),
            "the report lacks {want:?}:\n{stderr}"
        );
    }
    // The option may follow the kernel arguments too; bad values are named.
    let out = softgpu_in(
        &dir,
        &[],
        &[
            "run",
            &src,
            "--kernel",
            "no_race",
            "--out",
            &out_arg,
            "--timeout",
            "-1",
        ],
    );
    assert!(failed(&out, "--timeout -1").contains("--timeout -1"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_sync_reports_a_wave_ending_at_a_barrier() {
    let (dir, src) = setup("check-sync");
    let out_arg = format!("{}:256", dir.join("out.bin").display());
    let args = ["run", &src, "--kernel", "early_exit", "--out", &out_arg];
    ok(&softgpu_in(&dir, &[], &args), "early_exit without checks");
    let out = softgpu_in(&dir, &[], &[&args[..], &["--check", "sync"]].concat());
    let stderr = failed(&out, "early_exit under --check sync");
    assert!(
        stderr.contains("synccheck: wave 1 ended") && stderr.contains("s_endpgm"),
        "{stderr}"
    );
    let out = softgpu_in(
        &dir,
        &[],
        &[
            "run",
            "--check",
            "bounds",
            &src,
            "--kernel",
            "early_exit",
            "--out",
            &out_arg,
        ],
    );
    assert!(failed(&out, "--check bounds").contains("unknown check \"bounds\""));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn schedule_seeds_find_a_race_and_the_line_reproduces_it() {
    let (dir, src) = setup("seeds");
    let out_path = dir.join("out.bin");
    let out_arg = format!("{}:1024", out_path.display());
    let args = [
        "run",
        &src,
        "--kernel",
        "lds_race",
        "--grid",
        "4",
        "--out",
        &out_arg,
        "--schedule-seeds",
        "16",
    ];
    let out = softgpu_in(&dir, &[], &args);
    let stderr = failed(&out, "a racy kernel under 16 seeds");
    assert!(stderr.contains("changes the output"), "{stderr}");
    let in_order = std::fs::read(&out_path).unwrap();
    assert!(
        in_order.chunks(4).all(|w| w == [2, 0, 0, 0]),
        "the --out file holds the in-order result"
    );
    // Run the reproduce line.
    let line = stderr
        .lines()
        .skip_while(|l| !l.starts_with("reproduce with:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no reproduce line:\n{stderr}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[0], "SOFTGPU_THREADS=1", "{line}");
    assert!(
        words[1].starts_with("SOFTGPU_SCHEDULE=") && words[2] == "softgpu",
        "{line}"
    );
    assert!(!line.contains("--schedule-seeds"), "{line}");
    let env: Vec<(&str, &str)> = words[..2]
        .iter()
        .map(|w| w.split_once('=').unwrap())
        .collect();
    for _ in 0..2 {
        ok(&softgpu_in(&dir, &env, &words[3..]), "the reproduce line");
        let seeded = std::fs::read(&out_path).unwrap();
        assert_ne!(
            seeded, in_order,
            "the reproduce line did not reproduce the difference"
        );
    }
    // A kernel without a race passes every seed.
    let out = softgpu_in(
        &dir,
        &[],
        &[
            "run",
            &src,
            "--kernel",
            "no_race",
            "--grid",
            "4",
            "--out",
            &out_arg,
            "--schedule-seeds",
            "16",
        ],
    );
    ok(&out, "a race-free kernel under 16 seeds");
    assert!(text(&out.stdout).contains("schedule seeds 0..16: every output equals"));
    let _ = std::fs::remove_dir_all(&dir);
}
