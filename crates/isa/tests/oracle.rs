//! Per-opcode check against the LLVM disassembler: every sample word the
//! generator found (one or more per op and encoding) is disassembled by
//! `llvm-mc-19` now and by this crate, and the texts must match.

mod common;

use softgpu_isa::{decode, disassemble, Family};

#[test]
fn every_sample_matches_llvm_mc() {
    let samples = include_str!("../data/gfx11-samples.tsv");
    for cpu in ["gfx1100", "gfx1151"] {
        check(Family::Gfx11, samples, cpu, cpu);
    }
}

/// gfx12's samples, against both RDNA4 processors (the table was read off
/// both; gfx1201's words are checked on gfx1200 too, as the two share one
/// instruction set).
#[test]
fn every_gfx12_sample_matches_llvm_mc() {
    let samples = include_str!("../data/gfx12-samples.tsv");
    for cpu in ["gfx1200", "gfx1201"] {
        check(Family::Gfx12, samples, "gfx1200", cpu);
    }
}

fn check(family: Family, tsv: &str, sampled_on: &str, cpu: &str) {
    let samples: Vec<Vec<u8>> = tsv
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.split('\t').nth(1) == Some(sampled_on))
        .filter_map(|l| l.split('\t').next())
        .map(common::unhex)
        .collect();
    let bad = differences(family, &samples, cpu);
    assert!(
        bad.is_empty(),
        "{cpu}: {} of {} samples differ:\n{}",
        bad.len(),
        samples.len(),
        bad.join("\n")
    );
}

/// The words whose decoding here does not print what llvm-mc-19 prints for
/// `cpu` (or decodes to another size), each with both texts.
fn differences(family: Family, words: &[Vec<u8>], cpu: &str) -> Vec<String> {
    let want = common::llvm_mc_disassemble(words, cpu);
    let mut bad = Vec::new();
    for (bytes, want) in words.iter().zip(&want) {
        let got = match decode(family, bytes) {
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
    bad
}

/// gfx12's cache policies: every temporal hint and scope on a load, a
/// store and a returning atomic of each vector-memory encoding and on a
/// scalar load, against llvm-mc-19 (the samples above carry none).
#[test]
fn gfx12_cache_policies_match_llvm_mc() {
    let le = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let opcode = |name: &str| {
        let op = softgpu_isa::op_by_name_in(Family::Gfx12, name).unwrap();
        op.encoding(Family::Gfx12).unwrap().opcode as u32
    };
    let mut words = Vec::new();
    for th in 0..8u32 {
        for scope in 0..4u32 {
            let policy = th << 20 | scope << 18;
            // VGLOBAL (seg 2) and VFLAT (seg 0): vaddr v[2:3], data v4, vdst v10.
            for (seg, prefix) in [(2u32, "global"), (0, "flat")] {
                for name in ["load_b32", "store_b32", "atomic_add_u32"] {
                    let op = opcode(&format!("{prefix}_{name}"));
                    let w0 = 0xEC00_0000 | seg << 24 | op << 14 | 124;
                    words.push(le(&[w0, 4 << 23 | policy | 10, 16 << 8 | 2]));
                }
            }
            // VBUFFER: offen, vaddr v2, s[8:11], soffset s12.
            for name in [
                "buffer_load_b32",
                "buffer_store_b32",
                "buffer_atomic_add_u32",
            ] {
                let w0 = 0xC400_0000 | opcode(name) << 14 | 12;
                let w1 = 1 << 30 | 1 << 23 | policy | 8 << 9 | 10;
                words.push(le(&[w0, w1, 16 << 8 | 2]));
            }
            // SMEM: th in bits 23-24, scope 21-22.
            if th < 4 {
                let w0 =
                    0xF400_0000 | th << 23 | scope << 21 | opcode("s_load_b32") << 13 | 8 << 6 | 1;
                words.push(le(&[w0, 124 << 25 | 0x10]));
            }
        }
    }
    let bad = differences(Family::Gfx12, &words, "gfx1201");
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        words.len(),
        bad.join("\n")
    );
}

/// gfx12's LDS-direct words with every wait count (the samples carry
/// zeros): `wait_va_vdst` and gfx12's new `wait_vm_vsrc`.
#[test]
fn gfx12_lds_direct_waits_match_llvm_mc() {
    let mut words = Vec::new();
    for op in 0..2u32 {
        for va in 0..16u32 {
            for vm in 0..2u32 {
                let w = 0xCE00_0000 | vm << 23 | op << 20 | va << 16 | 2 << 10 | 1 << 8 | 5;
                words.push(w.to_le_bytes().to_vec());
            }
        }
    }
    let bad = differences(Family::Gfx12, &words, "gfx1201");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
