//! End-to-end tests of `softgpu hotspots` on an OpenCL C kernel compiled at
//! test time (clang-19, lld-19, rocm-device-libs), with its own empty
//! compile cache.

use std::path::Path;
use std::process::Output;

mod common;
use common::{read_f32, scratch, softgpu_command, text};

/// A loop of a known trip count that every lane runs, then a branch only
/// the first 8 lanes of each 32-lane wave take.
const KERNEL: &str = "\
#define ITERATIONS 37
kernel void loop_branch(global float *out, global uint *bits) {
  size_t i = get_global_id(0);
  float acc = (float)i;
#pragma unroll 1
  for (int k = 0; k < ITERATIONS; k++)
    acc = acc * 0.5f + (float)k;
  out[i] = acc;
  if ((get_local_id(0) & 31) < 8)
    bits[i] = popcount((uint)i * 2654435761u);
}
";
const ITERATIONS: u64 = 37;
const GROUPS: usize = 3;
const BLOCK: usize = 64;
/// Waves of the launch: the kernel is wave32.
const WAVES: u64 = (GROUPS * BLOCK / 32) as u64;

/// Runs `softgpu` with a fresh compile cache in `dir`.
fn softgpu_in(dir: &Path, args: &[&str]) -> Output {
    softgpu_command()
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("cannot run softgpu")
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The kernel source in `dir`, and the `--out` arguments of its two buffers.
fn setup(dir: &Path) -> (String, [String; 2]) {
    let src = dir.join("loop_branch.cl");
    std::fs::write(&src, KERNEL).unwrap();
    let bytes = 4 * GROUPS * BLOCK;
    let outs = ["out.bin", "bits.bin"].map(|f| format!("{}:{bytes}", dir.join(f).display()));
    (src.to_string_lossy().into_owned(), outs)
}

/// `softgpu CMD SRC --kernel KERNEL` over the test's launch, then `tail`.
fn launch(dir: &Path, cmd: &str, src: &str, kernel: &str, tail: &[&str]) -> Output {
    let (grid, block) = (GROUPS.to_string(), BLOCK.to_string());
    let mut args = vec![
        cmd, src, "--kernel", kernel, "--grid", &grid, "--block", &block,
    ];
    args.extend(tail);
    softgpu_in(dir, &args)
}

fn parse(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}):\n{stdout}"))
}

fn num(v: &serde_json::Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no integer {key} in {v}"))
}

/// The outputs the kernel must have written, computed here.
fn check_outputs(dir: &Path) {
    let out = read_f32(&dir.join("out.bin"));
    let bits = std::fs::read(dir.join("bits.bin")).unwrap();
    assert_eq!(out.len(), GROUPS * BLOCK);
    for (i, &got) in out.iter().enumerate() {
        let want = (0..ITERATIONS).fold(i as f32, |acc, k| acc * 0.5 + k as f32);
        assert_eq!(got, want, "out[{i}]");
        let word = u32::from_le_bytes(bits[4 * i..4 * i + 4].try_into().unwrap());
        let taken = i % 32 < 8;
        let want = if taken {
            (i as u32).wrapping_mul(2654435761).count_ones()
        } else {
            0
        };
        assert_eq!(word, want, "bits[{i}]");
    }
}

#[test]
fn hotspots_json_counts_loop_and_divergent_branch() {
    let dir = scratch("hotspots-json");
    let (src, [out, bits]) = setup(&dir);
    // Options after the kernel arguments are taken as `run` takes --stats.
    let tail = ["--out", &out, "--out", &bits, "--json", "--top", "1000"];
    let stdout = ok(
        &launch(&dir, "hotspots", &src, "loop_branch", &tail),
        "softgpu hotspots --json",
    );
    let json = parse(&stdout);
    check_outputs(&dir);

    let (waves, lanes) = (
        num(&json, "wave_instructions"),
        num(&json, "lane_instructions"),
    );
    assert_eq!(num(&json, "waves"), WAVES, "{json}");
    assert_eq!(num(&json, "wave_size"), 32, "{json}");
    let hottest = json["hottest"].as_array().expect("no hottest array");
    assert_eq!(hottest.len() as u64, num(&json, "executed_instructions"));
    let sum = |key: &str| hottest.iter().map(|h| num(h, key)).sum::<u64>();
    assert_eq!(sum("waves"), waves, "per-instruction waves do not sum up");
    assert_eq!(sum("lanes"), lanes, "per-instruction lanes do not sum up");
    let avg = json["avg_active_lanes"].as_f64().unwrap();
    assert!((avg - lanes as f64 / waves as f64).abs() < 1e-9, "{json}");

    // The loop body is the hottest code: each wave runs it ITERATIONS times.
    assert_eq!(num(&hottest[0], "waves"), ITERATIONS * WAVES, "{json}");
    let counts: Vec<u64> = hottest.iter().map(|h| num(h, "waves")).collect();
    assert!(
        counts.windows(2).all(|w| w[0] >= w[1]),
        "not sorted: {counts:?}"
    );

    // Inside the branch only 8 lanes of each wave are active.
    let popcount = hottest
        .iter()
        .find(|h| h["text"].as_str().unwrap().starts_with("v_bcnt_u32_b32"))
        .unwrap_or_else(|| panic!("no v_bcnt_u32_b32 in {json}"));
    assert_eq!(num(popcount, "waves"), WAVES, "{popcount}");
    assert_eq!(popcount["avg_lanes"].as_f64(), Some(8.0), "{popcount}");
    assert_eq!(num(popcount, "lanes"), 8 * WAVES, "{popcount}");

    // The same launch under `run --stats` counts the same.
    let tail = ["--out", &out, "--out", &bits, "--stats"];
    let run = parse(
        ok(
            &launch(&dir, "run", &src, "loop_branch", &tail),
            "softgpu run --stats",
        )
        .lines()
        .last()
        .unwrap_or_default(),
    );
    for key in [
        "wave_instructions",
        "lane_instructions",
        "waves",
        "workgroups",
        "threads",
    ] {
        assert_eq!(json[key], run[key], "{key}: hotspots {json}\nrun {run}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Also runs the command by its old name, `profile`, which scripts may use.
#[test]
fn hotspots_text_lists_the_hottest_disassembly() {
    let dir = scratch("hotspots-text");
    let (src, [out, bits]) = setup(&dir);
    let hot = parse(&ok(
        &launch(
            &dir,
            "hotspots",
            &src,
            "loop_branch",
            &["--json", "--top", "1", "--out", &out, "--out", &bits],
        ),
        "softgpu hotspots --json --top 1",
    ));
    let hot = &hot["hottest"][0];
    let stdout = ok(
        &launch(
            &dir,
            "profile",
            &src,
            "loop_branch",
            &["--top", "3", "--out", &out, "--out", &bits],
        ),
        "softgpu profile (the old name of hotspots)",
    );
    let line = format!("{:012X}  {:>12}", num(hot, "offset"), ITERATIONS * WAVES);
    let row = stdout
        .lines()
        .find(|l| l.starts_with(&line))
        .unwrap_or_else(|| panic!("no row starting {line:?}:\n{stdout}"));
    assert!(row.ends_with(hot["text"].as_str().unwrap()), "{row}");
    for want in [
        "kernel loop_branch (gfx1151, wave32)",
        "grid 3,1,1 x block 64,1,1",
        &format!("waves              {WAVES}"),
        "hottest 3 of ",
        "% of 32)",
    ] {
        assert!(stdout.contains(want), "no {want:?} in:\n{stdout}");
    }
    check_outputs(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hotspots_of_a_missing_kernel_is_a_clean_error() {
    let dir = scratch("hotspots-nokernel");
    let (src, [out, bits]) = setup(&dir);
    let tail = ["--out", &out, "--out", &bits, "--json"];
    let result = launch(&dir, "hotspots", &src, "no_such_kernel", &tail);
    let stderr = text(&result.stderr);
    assert!(!result.status.success(), "a missing kernel was counted");
    assert!(
        stderr.contains("no kernel named no_such_kernel") && stderr.contains("loop_branch"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(result.stdout.is_empty(), "{}", text(&result.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}
