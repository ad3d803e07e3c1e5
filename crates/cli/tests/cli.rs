//! End-to-end tests of the `softgpu` binary on the committed example code
//! objects of `examples/bin/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn softgpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(args)
        .output()
        .expect("cannot run softgpu")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn example(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bin")
        .join(name);
    assert!(
        p.exists(),
        "{} is missing (regenerate with examples/build.sh)",
        p.display()
    );
    p.to_string_lossy().into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("softgpu-cli-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn f32_file(path: &Path, values: &[f32]) -> String {
    std::fs::write(
        path,
        values
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn demo_passes() {
    let out = softgpu(&["demo", "--threads", "2"]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "softgpu demo failed:\n{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("8 of 8 checks passed"), "{stdout}");
    assert!(stdout.contains("faulted"), "no fault report in:\n{stdout}");
}

#[test]
fn demo_gfx1100_passes() {
    let out = softgpu(&["demo", "--target", "gfx1100", "--threads", "1"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn run_vector_add_writes_output_and_stats() {
    let dir = scratch("run");
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let (pa, pb) = (
        f32_file(&dir.join("a.bin"), &a),
        f32_file(&dir.join("b.bin"), &b),
    );
    let pc = dir.join("c.bin");
    let out_arg = format!("{}:{}", pc.display(), 4 * n);
    let file = example("vector_add-gfx1151.hsaco");
    let out = softgpu(&[
        "run",
        &file,
        "--kernel",
        "vector_add",
        "--grid",
        "4",
        "--block",
        "256",
        "--in",
        &pa,
        "--in",
        &pb,
        "--out",
        &out_arg,
        "--i32",
        "1000",
        "--stats",
    ]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "softgpu run failed:\n{stdout}\n{}",
        text(&out.stderr)
    );
    let c: Vec<f32> = std::fs::read(&pc)
        .unwrap()
        .chunks_exact(4)
        .map(|x| f32::from_le_bytes(x.try_into().unwrap()))
        .collect();
    assert_eq!(c.len(), n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }
    let last = stdout.lines().last().expect("no output");
    let json: serde_json::Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("last line is not JSON ({e}): {last}"));
    for key in [
        "wave_instructions",
        "lane_instructions",
        "seconds",
        "workgroups",
        "threads",
    ] {
        assert!(
            json.get(key).is_some_and(|v| v.is_number()),
            "JSON lacks numeric {key}: {last}"
        );
    }
    assert_eq!(json["workgroups"], 4);
    assert_eq!(json["threads"], 1024);
    // Lanes past n are masked off, so fewer lane instructions than 32 per wave instruction.
    let (waves, lanes) = (
        json["wave_instructions"].as_u64().unwrap(),
        json["lane_instructions"].as_u64().unwrap(),
    );
    assert!(waves > 0 && lanes > waves && lanes < 32 * waves, "{last}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn run_vector_add_with(dir: &Path, tail: &[&str]) -> Output {
    let pa = f32_file(&dir.join("a.bin"), &[1.0; 64]);
    let file = example("vector_add-gfx1151.hsaco");
    let mut args = vec![
        "run",
        &file,
        "--kernel",
        "vector_add",
        "--grid",
        "1",
        "--block",
        "64",
    ];
    let a_args = ["--in", pa.as_str()];
    args.extend(a_args);
    args.extend(tail);
    softgpu(&args)
}

#[test]
fn run_rejects_wrong_argument_count() {
    let dir = scratch("count");
    let out_arg = format!("{}:256", dir.join("c.bin").display());
    // a, b, c given; n missing.
    let b = f32_file(&dir.join("b.bin"), &[1.0; 64]);
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "a missing argument was accepted");
    assert!(
        stderr.contains("expects 4 arguments") && stderr.contains("got 3"),
        "{stderr}"
    );
    assert!(
        stderr.contains("int n"),
        "the message does not name the missing argument: {stderr}"
    );
    // One too many.
    let out = run_vector_add_with(
        &dir,
        &["--in", &b, "--out", &out_arg, "--i32", "64", "--i32", "1"],
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("got 5"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_rejects_wrong_argument_kind() {
    let dir = scratch("kind");
    let out_arg = format!("{}:256", dir.join("c.bin").display());
    let b = f32_file(&dir.join("b.bin"), &[1.0; 64]);
    // A value where the pointer b is expected.
    let out = run_vector_add_with(&dir, &["--i32", "7", "--out", &out_arg, "--i32", "64"]);
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "a value for a pointer argument was accepted"
    );
    assert!(
        stderr.contains("argument 1") && stderr.contains(" b)") && stderr.contains("pointer"),
        "{stderr}"
    );
    // A buffer where the int n is expected.
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg, "--in", &b]);
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "a buffer for an int argument was accepted"
    );
    assert!(
        stderr.contains("argument 3") && stderr.contains("int n"),
        "{stderr}"
    );
    // An unknown kind.
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg, "--float", "1"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--float"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inspect_lists_kernel_and_arguments() {
    let file = example("vector_add-gfx1151.hsaco");
    let out = softgpu(&["inspect", &file]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("gfx1151") && stdout.contains("kernel vector_add"),
        "{stdout}"
    );
    for arg in [" a ", " b ", " c ", " n "] {
        assert!(
            stdout.contains(arg),
            "inspect does not show argument{arg}:\n{stdout}"
        );
    }
    let out = softgpu(&["inspect", "--json", &file]);
    assert!(out.status.success());
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("inspect --json is not JSON");
    assert_eq!(json["kernels"][0]["name"], "vector_add");
    assert_eq!(json["kernels"][0]["wavefront_size"], 32);
}

/// The instruction texts of a disassembly listing (`\tTEXT // OFFSET: BYTES`).
fn instructions(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| l.starts_with('\t'))
        .filter_map(|l| {
            l.split_once("//")
                .map(|(t, _)| t.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn disasm_matches_llvm_objdump() {
    let file = example("vector_add-gfx1151.hsaco");
    let ours = softgpu(&["disasm", &file]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let llvm = match Command::new("llvm-objdump-19").args(["-d", "--mcpu=gfx1151", &file]).output() {
        Ok(o) => o,
        Err(e) => panic!("cannot run llvm-objdump-19 ({e}): this test needs the Debian package llvm-19 (apt-get install -y llvm-19)"),
    };
    assert!(llvm.status.success(), "{}", text(&llvm.stderr));
    let (ours, theirs) = (
        instructions(&text(&ours.stdout)),
        instructions(&text(&llvm.stdout)),
    );
    assert!(
        theirs.len() > 10,
        "llvm-objdump listed only {} instructions",
        theirs.len()
    );
    for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "instruction {k} differs");
    }
    assert_eq!(ours.len(), theirs.len(), "instruction counts differ");
}
