//! Differential test of the OpenCL C built-ins (`src/diffgen`): random
//! kernels compiled with clang-19 and run on softgpu against the host-C
//! oracle, bit for bit, on gfx1151, gfx1201 and gfx1030 in wave32 and wave64, and
//! on gfx90a and gfx942 in wave64. gfx1151 stands for gfx11: RDNA3.5 runs
//! gfx1100's instruction set plus scalar float ops, and the suite's time
//! goes to covering families rather than parts of one.
//!
//! The fixed seeds `0..SLICES` cover the generator's whole focus list: every
//! integer built-in over every integer type, min/max/clamp/select/bitselect
//! and the wrapped operators over every type, every `convert_T{_sat}{_rtX}`
//! between every pair of scalar types, `as_T`, `vload_half` and
//! `vstore_half{_rtX}`, each at a random vector width inside divergent
//! `if`/`switch`/loops. A failure names the seed, the statement (its OpenCL
//! text), the lane, its inputs, got and want, and the `diffgen` command that
//! reruns just that statement.

use std::sync::OnceLock;

use softgpu_exec::Device;
use softgpu_kernel_tests::diffgen::{Case, Config, Mismatch, Program, SLICES};
use softgpu_kernel_tests::scratch_dir;

/// The programs with their inputs and oracle results, built once per test
/// process (the host results do not depend on the target).
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        // Two threads: the machine's cores, `cc` runs once per seed.
        let seeds: Vec<u64> = (0..SLICES).collect();
        let mut out: Vec<(u64, Case)> = std::thread::scope(|s| {
            let hs: Vec<_> = seeds
                .chunks(seeds.len().div_ceil(2))
                .map(|c| {
                    s.spawn(move || {
                        c.iter()
                            .map(|&seed| (seed, Case::new(Program::generate(seed))))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        out.sort_by_key(|(s, _)| *s);
        out.into_iter().map(|(_, c)| c).collect()
    })
}

fn check(target: &str, wave64: bool) {
    let cfg = Config {
        target: target.into(),
        wave64,
    };
    let dev = Device::new(&softgpu_kernel_tests::env_device(target))
        .unwrap_or_else(|e| panic!("Device::new({target}): {e}"));
    let mut bad: Vec<Mismatch> = vec![];
    let mut errors = vec![];
    for case in cases() {
        match case.run_gpu(&dev, &cfg) {
            Ok(got) => bad.extend(case.compare(&got, &cfg)),
            Err(e) => errors.push(format!("seed {}: {e}", case.program.seed)),
        }
    }
    if bad.is_empty() && errors.is_empty() {
        return;
    }
    // The first few in full, then one line each.
    const FULL: usize = 6;
    let mut msg = format!(
        "{} statements differ from the host oracle on {cfg} ({} seeds):\n\n",
        bad.len(),
        SLICES
    );
    for e in &errors {
        msg.push_str(&format!("{e}\n"));
    }
    for m in bad.iter().take(FULL) {
        msg.push_str(&format!("{m}\n\n"));
    }
    for m in bad.iter().skip(FULL) {
        msg.push_str(&format!(
            "seed {} statement {}: {} lanes ({}), got {} want {}\n",
            m.seed, m.stmt, m.lanes, m.focus, m.got, m.want
        ));
    }
    panic!("{msg}");
}

#[test]
fn gfx1151_wave32() {
    check("gfx1151", false)
}

#[test]
fn gfx1151_wave64() {
    check("gfx1151", true)
}

#[test]
fn gfx1201_wave32() {
    check("gfx1201", false)
}

#[test]
fn gfx1201_wave64() {
    check("gfx1201", true)
}

#[test]
fn gfx1030_wave32() {
    check("gfx1030", false)
}

#[test]
fn gfx1030_wave64() {
    check("gfx1030", true)
}

#[test]
fn gfx90a_wave64() {
    check("gfx90a", true)
}

#[test]
fn gfx942_wave64() {
    check("gfx942", true)
}

/// The oracle itself, on values worked out by hand from the OpenCL C spec
/// (so an oracle bug cannot hide behind agreeing with softgpu).
#[test]
fn oracle_known_values() {
    let checks = [
        ("add_sat_i8(100, 100)", "127"),
        ("sub_sat_u8(3, 5)", "0"),
        ("hadd_i32(-1, -2)", "-2"),
        ("rhadd_u64(UINT64_MAX, UINT64_MAX)", "18446744073709551615"),
        ("mul_hi_i64(INT64_MIN, INT64_MIN)", "4611686018427387904"),
        ("mad_sat_u64(UINT64_MAX, 2, 1)", "18446744073709551615"),
        ("mad_hi_u8(200, 200, 100)", "0"), // 156 + 100 wraps
        ("clz_u64(0)", "64"),
        ("ctz_i16(0)", "16"),
        ("popcount_i8(-1)", "8"),
        ("rotate_u8(0x81, 9)", "3"),
        ("rotate_i32(1, -1)", "-2147483648"),
        ("abs_i8(-128)", "128"),
        ("abs_diff_i32(INT32_MIN, INT32_MAX)", "4294967295"),
        ("upsample_i16(-1, 0x80)", "-128"),
        ("op_div_i64(INT64_MIN, -1)", "-9223372036854775808"),
        ("op_rem_i32(7, 0)", "0"),
        ("op_shl_i8(1, 9)", "2"),
        ("cvt_i8_f32(NAN, 1, RTZ)", "-128"),
        ("cvt_u16_f32(NAN, 1, RTE)", "0"),
        ("cvt_i32_f16(0x7e00, 1, RTZ)", "-65504"), // ROCm: half range first
        ("cvt_i8_f16(0xfe01, 1, RTP)", "-128"),
        ("cvt_i32_f64(-2.5, 1, RTE)", "-2"),
        ("cvt_i32_f64(-2.5, 1, RTN)", "-3"),
        ("cvt_u8_f32(255.5f, 1, RTP)", "255"),
        ("cvt_i64_f32(1e30f, 1, RTZ)", "9223372036854775807"),
        ("cvt_u8_i32(300, 0, RTZ)", "44"),
        ("cvt_i8_u64(200, 1, RTZ)", "127"),
        ("cvt_f16_f32(65520.0f, 0, RTE)", "31744"), // 0x7c00: rounds to inf
        ("cvt_f16_f32(65520.0f, 0, RTZ)", "31743"), // 0x7bff
        ("cvt_f16_f64(-0x1p-25, 0, RTE)", "32768"), // -0: tie to even
        ("cvt_f16_f64(0x1p-25, 0, RTP)", "1"),
        ("cvt_f16_i32(2049, 0, RTE)", "26624"), // 2048 = 0x6800
        ("cvt_f16_i32(2051, 0, RTE)", "26626"), // 2052
        ("as_u32_f32(cvt_f32_u64(UINT64_MAX, 0, RTZ))", "1602224127"), // 0x5f7fffff
        ("as_u32_f32(cvt_f32_u64(UINT64_MAX, 0, RTE))", "1602224128"), // 2^64
        (
            "as_u32_f32(cvt_f32_f64(0x1.000001p0, 0, RTE))",
            "1065353216",
        ), // tie → even (1.0)
        (
            "as_u32_f32(cvt_f32_f64(-0x1.0000011p0, 0, RTZ))",
            "3212836864",
        ), // -1.0
        ("as_u32_f32(cvt_f32_f64(1e-50, 0, RTP))", "1"), // smallest subnormal
        ("as_u32_f32(cvt_f32_f64(-1e300, 0, RTP))", "4286578687"), // -FLT_MAX
        ("as_u32_f32(min_f32(-0.0f, 0.0f))", "2147483648"),
        ("as_u32_f32(max_f32(NAN, 2.0f))", "1073741824"),
        ("op_add_f16(0x3c00, 0x1400)", "15361"), // 1 + 2^-10 = 0x3c01
        ("bitselect_i8(0x0f, 0x70, 0x3c)", "51"),
    ];
    let mut src = String::from(softgpu_kernel_tests::diffgen::emit::HOST_PRELUDE);
    src.push_str("int main(void) {\n  int bad = 0;\n");
    for (e, want) in &checks {
        src.push_str(&format!(
            "  {{ long long v = (long long)({e}); char s[32]; snprintf(s, sizeof s, \"%lld\", v);\n    \
             if ((strcmp(s, \"{want}\") && !(v < 0 && (unsigned long long)v == strtoull(\"{want}\", 0, 10)))) {{ printf(\"%s = %s, want {want}\\n\", \"{e}\", s); bad = 1; }} }}\n"
        ));
    }
    src.push_str("  return bad;\n}\n");
    let dir = scratch_dir().join("diffgen-oracle");
    std::fs::create_dir_all(&dir).unwrap();
    let (c, exe) = (dir.join("oracle.c"), dir.join("oracle"));
    std::fs::write(&c, src).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = std::process::Command::new(&cc)
        .args(["-O1", "-std=gnu11", "-ffp-contract=off", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `{cc}` ({e}): install the Debian package gcc (or set CC)")
        });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    assert!(
        run.status.success(),
        "host oracle disagrees with the spec:\n{}",
        String::from_utf8_lossy(&run.stdout)
    );
}
