//! The analytical time estimate of `softgpu hotspots` held to published
//! figures of the real parts: a streaming copy must estimate near the
//! part's memory bandwidth, a dense FMA loop near its peak FP32 rate and,
//! on CDNA, a dense MFMA loop near its peak matrix rate.
//! The kernels are OpenCL C compiled at test time (clang-19); the
//! reference figures are the parts' published ones, not the model's.

use std::path::Path;
use std::process::Output;

mod common;
use common::{scratch, softgpu_command, text};

const KERNELS: &str = "\
kernel void copy(global const float4 *a, global float4 *b) {
  size_t i = get_global_id(0);
  b[i] = a[i];
}
/* 8 independent chains of fused multiply-adds, ITERATIONS times. */
kernel void fma_loop(global float *out, float x) {
  size_t i = get_global_id(0);
  float a = x + i, b = 1.0001f, c = 0.5f, d = 0.25f, e = x, f = 2.0f, g = 3.0f, h = 4.0f;
  for (int k = 0; k < 256; k++) {
    a = fma(a, b, c); d = fma(d, b, e); f = fma(f, b, c); g = fma(g, b, e);
    h = fma(h, b, c); c = fma(c, b, a); e = fma(e, b, d); x = fma(x, b, f);
  }
  out[i] = a + c + d + e + f + g + h + x;
}
";
const ITERATIONS: f64 = 256.0;
const CHAINS: f64 = 8.0;
/// Workgroups of 256 of the copy and FMA dispatches: ten or more per CU of
/// the largest part (96), so the busiest CU's share is within 3% of the
/// mean and the throughput bounds, not one wave's path, decide.
const GROUPS: usize = 1024;

/// CDNA's matrix cores: 64 dependent 32x32x8 f16 MFMAs per wave (clang-19
/// emits `v_mfma_f32_32x32x8f16` for gfx90a, `v_mfma_f32_32x32x8_f16` for
/// gfx942).
const MATRIX_KERNEL: &str = "\
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef float float16v __attribute__((ext_vector_type(16)));
typedef half half4v __attribute__((ext_vector_type(4)));
kernel void mfma_loop(global float *out, float x) {
  size_t i = get_global_id(0);
  half4v a = (half4v)((half)(x + (i & 7)), (half)1.0f, (half)0.5f, (half)0.25f);
  half4v b = (half4v)((half)0.125f, (half)x, (half)2.0f, (half)1.0f);
  float16v c = (float16v)(0.0f);
  for (int k = 0; k < 64; k++)
    c = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
  float s = 0.0f;
  for (int e = 0; e < 16; e++) s += c[e];
  out[i] = s;
}
";
const MFMAS: f64 = 64.0;

/// Published dense f16 matrix peaks: MI210 181 TFLOP/s (104 CUs at 1.7
/// GHz), MI300X 1307.4 TFLOP/s (304 CUs at 2.1 GHz), AMD's specifications.
const MATRIX_PARTS: [(&str, f64); 2] = [("gfx90a", 181e12), ("gfx942", 1307.4e12)];

/// Published figures of the parts: peak memory bandwidth in bytes/s and
/// peak FP32 (dual-issue) FLOP/s. RX 7900 XTX: 960 GB/s (384-bit GDDR6 at
/// 20 Gbps) and 61.4 TFLOP/s (96 CUs at 2.5 GHz), as the launch reviews
/// list them; Radeon 8060S: 256 GB/s (256-bit LPDDR5X-8000) and 29.7
/// TFLOP/s (40 CUs at 2.9 GHz); RX 9070 XT (RDNA4): 640 GB/s (256-bit
/// GDDR6 at 20 Gbps) and 48.7 TFLOP/s (64 CUs at 2.97 GHz), as AMD
/// announced it.
const PARTS: [(&str, f64, f64); 3] = [
    ("gfx1100", 960e9, 61.4e12),
    ("gfx1151", 256e9, 29.7e12),
    ("gfx1201", 640e9, 48.7e12),
];

fn softgpu_in(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    softgpu_command()
        .args(args)
        .envs(env.iter().copied())
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("cannot run softgpu")
}

/// `softgpu hotspots --json` of `kernel` on `target`, as JSON.
fn hotspots(dir: &Path, env: &[(&str, &str)], target: &str, kernel: &str) -> serde_json::Value {
    hotspots_of(dir, env, target, (KERNELS, kernel), GROUPS)
}

/// `softgpu hotspots --json` of `kernel` of `source` in `groups`
/// workgroups of 256 work-items on `target`, as JSON.
fn hotspots_of(
    dir: &Path,
    env: &[(&str, &str)],
    target: &str,
    (source, kernel): (&str, &str),
    groups: usize,
) -> serde_json::Value {
    let src = dir.join(format!("{kernel}.cl"));
    std::fs::write(&src, source).unwrap();
    let out = |name: &str, bytes: usize| format!("{}:{bytes}", dir.join(name).display());
    let grid = groups.to_string();
    let (grid, block) = (grid.as_str(), "256");
    let items = groups * 256;
    let args: Vec<String> = match kernel {
        "copy" => vec![out("a.bin", 16 * items), out("b.bin", 16 * items)]
            .into_iter()
            .flat_map(|o| ["--out".to_string(), o])
            .collect(),
        _ => vec![
            "--out".into(),
            out("c.bin", 4 * items),
            "--f32".into(),
            "1.5".into(),
        ],
    };
    let mut all = vec![
        "hotspots",
        src.to_str().unwrap(),
        "--target",
        target,
        "--kernel",
        kernel,
        "--grid",
        grid,
        "--block",
        block,
        "--json",
    ];
    all.extend(args.iter().map(String::as_str));
    let o = softgpu_in(dir, env, &all);
    assert!(
        o.status.success(),
        "softgpu hotspots failed:\n{}",
        text(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("hotspots --json prints one JSON object")
}

fn seconds(estimate: &serde_json::Value) -> f64 {
    estimate["seconds"].as_f64().expect("an estimated time")
}

#[test]
fn streaming_estimates_near_the_memory_bandwidth() {
    let dir = scratch("estimate-copy");
    for (target, bandwidth, _) in PARTS {
        let json = hotspots(&dir, &[], target, "copy");
        let e = &json["estimate"];
        assert_eq!(e["bound"], "memory-bandwidth", "{target}: {e}");
        assert_eq!(json["fidelity"], "timing-estimated");
        assert_eq!(e["fidelity"], "timing-estimated");
        // A float4 read and written per work-item, all over the bus.
        let bytes = 2.0 * 16.0 * (GROUPS * 256) as f64;
        let rate = bytes / (seconds(e) - e["launch_seconds"].as_f64().unwrap());
        assert!(
            (0.8..=1.05).contains(&(rate / bandwidth)),
            "{target}: {rate:.3e} B/s against the part's {bandwidth:.3e}"
        );
        // The counts behind it: 16 bytes loaded and stored by every lane.
        assert_eq!(e["work"]["global_bytes"], bytes as u64, "{target}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_dense_fma_loop_estimates_near_the_peak_flop_rate() {
    let dir = scratch("estimate-fma");
    for (target, _, peak) in PARTS {
        let json = hotspots(&dir, &[], target, "fma_loop");
        let e = &json["estimate"];
        assert_eq!(e["bound"], "compute", "{target}: {e}");
        let flops = 2.0 * CHAINS * ITERATIONS * (GROUPS * 256) as f64;
        let rate = flops / seconds(e);
        // Below the dual-issue peak (clang pairs only some FMAs as
        // v_dual_*), above half of it (every FMA at least single-issued).
        assert!(
            (0.5..=1.0).contains(&(rate / peak)),
            "{target}: {rate:.3e} FLOP/s against the part's peak {peak:.3e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every wave's MFMAs keep the matrix cores busy: enough waves for every
/// SIMD of the largest part (MI300X: 304 CUs of 4 SIMDs) four times.
#[test]
fn a_dense_mfma_loop_estimates_near_the_peak_matrix_rate() {
    let dir = scratch("estimate-mfma");
    let groups = 1216;
    for (target, peak) in MATRIX_PARTS {
        let json = hotspots_of(&dir, &[], target, (MATRIX_KERNEL, "mfma_loop"), groups);
        let e = &json["estimate"];
        assert_eq!(e["bound"], "matrix-core", "{target}: {e}");
        let flops = 2.0 * 32.0 * 32.0 * 8.0 * MFMAS * (groups * 4) as f64;
        let rate = flops / (seconds(e) - e["launch_seconds"].as_f64().unwrap());
        // At most the peak (plus the profile's rounding of it to whole
        // operations per CU per clock); at least 80% of it (the loop's
        // other instructions and the wave's own path).
        assert!(
            (0.8..=1.001).contains(&(rate / peak)),
            "{target}: {rate:.3e} FLOP/s against the part's peak {peak:.3e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The estimate comes from counts, not host time: host threads and
/// schedules do not change it.
#[test]
fn the_estimate_is_deterministic() {
    let dir = scratch("estimate-determinism");
    let one = hotspots(&dir, &[("SOFTGPU_THREADS", "1")], "gfx1151", "fma_loop");
    let two = hotspots(&dir, &[("SOFTGPU_THREADS", "2")], "gfx1151", "fma_loop");
    assert_eq!(one["estimate"], two["estimate"]);
    assert_ne!(one["estimate"], serde_json::Value::Null);
    let _ = std::fs::remove_dir_all(&dir);
}
