//! Compile OpenCL kernels with clang-19 for gfx1100, gfx1151, gfx1201 and
//! gfx1030 (and in wave64 for gfx1100, gfx1201 and gfx1030; gfx1030 is
//! decoded, not executed), disassemble them with
//! llvm-objdump-19, and check that every instruction of .text decodes to the
//! same text and size.

mod common;

use std::path::Path;

use common::run;
use softgpu_isa::{decode, disassemble, disassemble_wave64, Family};
use softgpu_test_support::tool;

/// (text, bytes) of every instruction line objdump prints.
fn objdump_lines(hsaco: &str, cpu: &str, wave64: bool) -> Vec<(String, Vec<u8>)> {
    let mcpu = format!("--mcpu={cpu}");
    let mut args = vec!["-d", &mcpu];
    if wave64 {
        args.push("--mattr=+wavefrontsize64");
    }
    args.push(hsaco);
    let out = run("llvm-objdump-19", &args);
    out.lines()
        .filter_map(|l| {
            let (text, comment) = l.split_once("//")?;
            let (_, words) = comment.split_once(": ")?;
            let bytes = words
                .split_whitespace()
                .take_while(|w| w.len() == 8) // branch lines end with "<label+off>"
                .filter_map(|w| u32::from_str_radix(w, 16).ok())
                .flat_map(u32::to_le_bytes)
                .collect();
            Some((text.trim().to_string(), bytes))
        })
        .collect()
}

fn check_kernels(cpu: &str, file: &str, wave64: bool, min_lines: usize) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels")
        .join(file);
    let dir = softgpu_test_support::fresh_dir("isa-k");
    let (obj, so) = (dir.join("k.o"), dir.join("k.hsaco"));
    let mut flags = vec!["-O3", "-c"];
    if wave64 {
        flags.push("-mwavefrontsize64");
    }
    tool::clang_cl(&src, cpu, &flags, &obj);
    tool::link(&[&obj], &so);
    let so = so.to_str().unwrap();
    let lines = objdump_lines(so, cpu, wave64);
    assert!(
        lines.len() > min_lines,
        "too few instructions from objdump: {}",
        lines.len()
    );
    let mut bad = Vec::new();
    for (want, bytes) in &lines {
        let family = Family::of_target(cpu).expect("a processor softgpu decodes");
        let got = match decode(family, bytes) {
            Ok(i) if i.size as usize != bytes.len() => {
                format!("<size {} != {}>", i.size, bytes.len())
            }
            Ok(i) if wave64 => disassemble_wave64(&i),
            Ok(i) => disassemble(&i),
            Err(e) => format!("<{e}>"),
        };
        if &got != want {
            bad.push(format!(
                "{}\n  objdump: {want}\n  ours:    {got}",
                common::hex(bytes)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{cpu}: {} lines", lines.len());
    assert!(
        bad.is_empty(),
        "{cpu}: {} of {} lines differ:\n{}",
        bad.len(),
        lines.len(),
        bad.join("\n")
    );
}

#[test]
fn kernels_gfx1100() {
    check_kernels("gfx1100", "mix.cl", false, 200);
}

#[test]
fn kernels_gfx1151() {
    check_kernels("gfx1151", "mix.cl", false, 200);
}

#[test]
fn kernels_gfx1100_wave64() {
    check_kernels("gfx1100", "wave64.cl", true, 100);
}

#[test]
fn kernels_gfx1201() {
    check_kernels("gfx1201", "mix.cl", false, 200);
}

#[test]
fn kernels_gfx1201_wave64() {
    check_kernels("gfx1201", "wave64.cl", true, 100);
}

#[test]
fn kernels_gfx1030() {
    check_kernels("gfx1030", "mix.cl", false, 200);
}

#[test]
fn kernels_gfx1030_wave64() {
    check_kernels("gfx1030", "wave64.cl", true, 100);
}

/// CDNA (wave64 only): its scalar and ALU lines, so far.
#[test]
fn kernels_gfx90a() {
    check_kernels("gfx90a", "mix.cl", true, 200);
}

#[test]
fn kernels_gfx942() {
    check_kernels("gfx942", "mix.cl", true, 200);
}

/// CDNA's matrix cores as clang-19 compiles its MFMA/SMFMAC builtins.
#[test]
fn mfma_kernels_gfx90a_and_gfx942() {
    for cpu in ["gfx90a", "gfx942"] {
        check_kernels(cpu, "mfma.cl", true, 60);
    }
}
