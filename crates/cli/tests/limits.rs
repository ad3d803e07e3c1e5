//! Hostile inputs through the built `softgpu` binary: files that are not
//! code objects (devices, FIFOs), and launches beyond the device's limits.
//! Each must stop quickly with an error naming the limit, never abort.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod common;
use common::{scratch, softgpu_command, text};
use softgpu_test_support::kernel::Kernel;

/// Runs the binary, killing it if it has not ended after 60 s (a read
/// without limit would otherwise hang the test run).
fn softgpu(args: &[&str]) -> Output {
    let mut child = softgpu_command()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cannot run softgpu");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("softgpu {args:?} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn fails_with(args: &[&str], wanted: &[&str]) {
    let out = softgpu(args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "softgpu {args:?}: {stderr}");
    for w in wanted {
        assert!(
            stderr.contains(w),
            "softgpu {args:?}: no {w:?} in:\n{stderr}"
        );
    }
}

#[test]
fn devices_and_fifos_are_refused_without_reading() {
    for command in ["disasm", "inspect"] {
        fails_with(
            &[command, "/dev/zero"],
            &["/dev/zero: not a regular file (a character device)"],
        );
    }
    fails_with(
        &[
            "run",
            "/dev/zero",
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "1",
        ],
        &["/dev/zero: not a regular file"],
    );
    let dir = scratch("fifo");
    let fifo = dir.join("fifo");
    let status = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo (coreutils)");
    assert!(status.success());
    let fifo = fifo.to_string_lossy();
    // Opening a FIFO for reading would block until a writer came.
    fails_with(&["disasm", &fifo], &["not a regular file (a FIFO)"]);
    fails_with(
        &["run", &fifo, "--kernel", "k", "--grid", "1", "--block", "1"],
        &["not a regular file (a FIFO)"],
    );
    // An input buffer file is read the same way.
    let k = kernel(&dir, 0);
    fails_with(
        &[
            "run",
            &k,
            "--target",
            "gfx1100",
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
            "--in",
            "/dev/zero",
        ],
        &["/dev/zero: not a regular file"],
    );
}

/// Assembles a wave32 kernel `k` that only ends, with the given private
/// segment in its descriptor and metadata; returns its path.
fn kernel(dir: &Path, private: u64) -> String {
    let code = Kernel {
        private,
        lds: 1024,
        private_segment: true,
        ..Kernel::default()
    }
    .assemble("gfx1100");
    let path = dir.join(format!("k{private}.hsaco"));
    std::fs::write(&path, code).unwrap();
    path.to_string_lossy().into_owned()
}

fn run(file: &str, grid: &str, block: &str, lds: &str) -> Output {
    softgpu(&[
        "run",
        file,
        "--target",
        "gfx1100",
        "--kernel",
        "k",
        "--grid",
        grid,
        "--block",
        block,
        "--dynamic-lds",
        lds,
    ])
}

#[test]
fn launch_limits_are_errors_naming_the_limit() {
    let dir = scratch("limits");
    // 1 GiB per work-item: 32 GiB per wave, which used to abort the process.
    let huge = kernel(&dir, 1 << 30);
    let out = run(&huge, "1024", "1024", "0");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("private segment of 1073741824 bytes per work-item")
            && stderr.contains("limit of 262136 bytes per work-item in wave32"),
        "{stderr}"
    );
    let k = kernel(&dir, 262_136);
    let cases = [
        ("1", "1025", "0", "allows at most 1024"),
        (
            "1",
            "32",
            "64513",
            "65537 bytes of LDS requested; the device has 65536",
        ),
        ("0", "32", "0", "must be non-zero"),
        ("2147483648", "2", "0", "an AQL grid dimension holds"),
        (
            "4294967295,4294967295,4294967295",
            "1",
            "0",
            "more than 2^64 workgroups",
        ),
    ];
    for (grid, block, lds, wanted) in cases {
        let out = run(&k, grid, block, lds);
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "grid {grid} block {block}: {stderr}"
        );
        assert!(
            stderr.contains(wanted),
            "grid {grid} block {block}: {stderr}"
        );
    }
    // The edges themselves run: the largest private segment, workgroup
    // and LDS.
    for (grid, block, lds) in [("4", "1024", "0"), ("1", "32,32", "64512")] {
        let out = run(&k, grid, block, lds);
        assert!(
            out.status.success(),
            "grid {grid} block {block}: {}",
            text(&out.stderr)
        );
    }
}
