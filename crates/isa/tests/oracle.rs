//! Per-opcode check against the LLVM disassembler: every sample word the
//! generator found (one or more per op and encoding) is disassembled by
//! `llvm-mc-19` now and by this crate, and the texts must match.

mod common;

use softgpu_isa::{decode, disassemble, Family};

#[test]
fn every_sample_matches_llvm_mc() {
    for cpu in ["gfx1100", "gfx1151"] {
        check(cpu);
    }
}

fn check(cpu: &str) {
    let samples: Vec<Vec<u8>> = include_str!("../data/gfx11-samples.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.split('\t').nth(1) == Some(cpu))
        .filter_map(|l| l.split('\t').next())
        .map(common::unhex)
        .collect();
    let want = common::llvm_mc_disassemble(&samples, cpu);
    let mut bad = Vec::new();
    for (bytes, want) in samples.iter().zip(&want) {
        let got = match decode(Family::Gfx11, bytes) {
            Ok(i) if i.size as usize != bytes.len() => {
                format!("<size {} != {}>", i.size, bytes.len())
            }
            Ok(i) => disassemble(&i),
            Err(e) => format!("<{e}>"),
        };
        if &got != want {
            bad.push(format!(
                "{}\n  llvm: {want}\n  ours: {got}",
                common::hex(bytes)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} samples differ:\n{}",
        bad.len(),
        samples.len(),
        bad.join("\n")
    );
}
