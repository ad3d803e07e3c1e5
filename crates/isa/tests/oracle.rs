//! Per-opcode check against the LLVM disassembler: every sample word the
//! generator found (one or more per op and encoding) is disassembled by
//! `llvm-mc-19` now and by this crate, and the texts must match.

mod common;

use softgpu_isa::{decode, disassemble, disassemble_wave64, Family, Inst};

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
    // CDNA is wave64 only.
    let print: fn(&Inst) -> String = match family {
        Family::Gfx90a | Family::Gfx94 => disassemble_wave64,
        _ => disassemble,
    };
    let mut bad = Vec::new();
    for (bytes, want) in words.iter().zip(&want) {
        let got = match decode(family, bytes) {
            Ok(i) if i.size as usize != bytes.len() => {
                format!("<size {} != {}>", i.size, bytes.len())
            }
            Ok(i) => print(&i),
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

/// gfx10.3's samples (read off gfx1030) against llvm-mc-19 for gfx1030.
#[test]
fn every_gfx10_sample_matches_llvm_mc() {
    let samples = include_str!("../data/gfx10-samples.tsv");
    check(Family::Gfx10, samples, "gfx1030", "gfx1030");
}

/// gfx10's operand forms the samples do not carry, against llvm-mc-19 for
/// gfx1030: DPP16/DPP8 and SDWA on VOP1/VOP2/VOPC (selects, sext, neg/abs,
/// clamp/omod, scalar sources, a VOPC's scalar destination), VGPRs above
/// v127 in 16-bit slots (no true16), every hwreg id and waitcnt field.
#[test]
fn gfx10_operand_forms_match_llvm_mc() {
    let le = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let mut words: Vec<Vec<u8>> = [
        "c8931564",         // v_add_f16_e32 v10, v200, v201
        "fa02147e021b00ff", // v_mov_b32_dpp quad_perm
        "fa081406020119ff", // v_add_f32_dpp row_shl:1 bound_ctrl, neg
        "e908140602c6882a", // dpp8
        "ea08140602c6882a", // dpp8 fi:1
        "f902147e02060500",
        "f902147e02060600",
        "f902147e02160600",
        "f902147e02260600",
        "f902147e02000400",
        "f902147e02060d00",
        "f908140602060506",
        "f908140602261526",
        "f908140602460516",
        "f908140602060586",
        "f908047c02000506",
        "f908047c028a0506",
        "f908047c028a1596",
        "f908140602068506",
        "f908140680068506",
        "f9081406c1068506",
        "f90814067d068506",
        "f908146402060506", // v_add_f16_sdwa
        // m0/null codes, s_sendmsg, depctr, VINTRP, VOP3 literal/sdst/
        // op_sel, more SDWA/DPP, SOPP without operands.
        "7c038abe",
        "7d038abe",
        "0203fcbe",
        "010090bf",
        "220090bf",
        "030090bf",
        "090090bf",
        "0a0090bf",
        "0b0090bf",
        "0f0090bf",
        "800090bf",
        "040090bf",
        "9fffa3bf",
        "040828c8",
        "040929c8",
        "020b2ac8",
        "0a0003d5ff040200db0f4940",
        "0a0002d402090200",
        "7e0012d402090200",
        "0a0c0fd702090200",
        "0a480fcc02090218",
        "0a5832d502090200",
        "34127cb0",
        "010200f4000000f8",
        "0a0060d702f90000",
        "7c02147e",
        "7d02147e",
        "f908140202060506",
        "f908145002060506",
        "fa081456021b00ff",
        "f908247c02000506",
        "f90a147e02060d00",
        "00009fbf",
        "000096bf",
        "00008abf",
        "00008bbf",
        "030091bf",
        "030092bf",
        "0100a1bf",
        "0500a5bf",
    ]
    .iter()
    .map(|h| common::unhex(h))
    .collect();
    for id in 0..64u32 {
        // s_getreg_b32 s10, hwreg(id, 0, 32)
        words.push(le(&[0xB900_0000 | 10 << 16 | 31 << 11 | id]));
    }
    for imm in [0u32, 0x3F7F, 0xC07F, 0x0F70, 0x000F, 0x0070, 0xFFFF, 0x1234] {
        words.push(le(&[0xBF8C_0000 | imm])); // s_waitcnt
    }
    // DPP16: every dpp_ctrl on v_mov_b32 (LLVM notes the invalid ones).
    for ctrl in 0..0x200u32 {
        words.push(le(&[0x7E14_02FA, 0xFF00_0002 | ctrl << 8]));
    }
    // VOP3 interpolation: every attribute field value (attr, channel,
    // high), with modifiers on one.
    for a in 0..512u32 {
        if a < 256 {
            // (the f32 ones have no `high`: see the refusals below)
            words.push(le(&[0xD600_000A, 0x0002_0800 | a])); // v_interp_p1_f32_e64
        }
        words.push(le(&[0xD743_000A, 0x041A_0800 | a])); // v_interp_p1lv_f16
    }
    words.push(le(&[0xD600_820A, 0x5802_0802])); // abs, neg, omod, clamp
                                                 // s_sendmsg: every id, operation and stream, and other bits set.
    for imm in (0..1024u32).chain([1024, 1025, 0x8001, 0xFFFF, 0x483]) {
        words.push(le(&[0xBF90_0000 | imm]));
    }
    let bad = differences(Family::Gfx10, &words, "gfx1030");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// gfx10's memory words with their fields set one at a time (the samples
/// carry few): SMEM glc/dlc, soffset and negative offsets; FLAT/GLOBAL/
/// SCRATCH glc/slc/dlc, signed offsets, saddr, a returning atomic; MUBUF
/// offen/idxen/glc/dlc/lds/slc/tfe and soffset codes; MTBUF formats and
/// the high opcode bit; MIMG's flags, a16/d16 and an NSA word.
#[test]
fn gfx10_memory_fields_match_llvm_mc() {
    let le = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let mut words = Vec::new();
    // SMEM: s_load_dword s8, s[2:3] / s_buffer_load_dword s8, s[0:3].
    for op in [0u32, 8] {
        let w0 = 0xF400_0000 | op << 18 | 8 << 6 | 1;
        for (f0, f1) in [
            (0, 125 << 25 | 0x10),
            (1 << 16, 125 << 25 | 0x10),
            (1 << 14, 125 << 25 | 0x10),
            (1 << 16 | 1 << 14, 125 << 25),
            (0, 4 << 25),
            (0, 124 << 25 | 0x10),
            (0, 125 << 25 | 0x1F_FFF0),
            (0, 125 << 25 | 0x0F_FFFF),
        ] {
            words.push(le(&[w0 | f0, f1]));
        }
    }
    // FLAT (seg 0), SCRATCH (1), GLOBAL (2): a load, a store, an atomic.
    for seg in 0..3u32 {
        for op in [12u32, 28, 50] {
            if seg == 1 && op == 50 {
                continue;
            }
            for (f0, saddr) in [
                (0x10, 125u32),
                (1 << 16 | 0x10, 125),
                (1 << 17 | 1 << 12, 125),
                (0xFF0, 125),
                (0x7FF, 4),
                (0x800, 4),
                (0x10, 126),
                (0x10, 127),
                (0x10, 106),
                (0x10, 108),
            ] {
                // FLAT has no saddr; global none in exec_hi (see
                // gfx10_refuses_what_llvm_mc_refuses).
                if (seg == 0 && saddr != 125) || (seg == 2 && saddr == 127) {
                    continue;
                }
                let w0 = 0xDC00_0000 | op << 18 | seg << 14 | f0;
                words.push(le(&[w0, 10 << 24 | saddr << 16 | 4 << 8 | 2]));
            }
        }
    }
    // MUBUF buffer_load_dword / buffer_store_dword / buffer_atomic_add,
    // and a d16 format load (opcode bit 7); vaddr v2, s[8:11].
    for op in [12u32, 28, 50, 128] {
        for (f0, f1) in [
            (0, 12 << 24),
            (1 << 12, 12 << 24),
            (1 << 13, 12 << 24),
            (3 << 12 | 1 << 14, 0x80 << 24),
            (1 << 15 | 1 << 16, 125 << 24),
            (1 << 12, 1 << 22 | 124 << 24),
            (1 << 12 | 0xFFF, 1 << 23 | 12 << 24),
        ] {
            // lds only on loads to VGPR-less LDS; tfe not on atomics.
            if (f0 & 1 << 16 != 0 && op != 12) || (f1 & 1 << 23 != 0 && op == 50) {
                continue;
            }
            let w0 = 0xE000_0000 | (op >> 7) << 25 | (op & 0x7F) << 18 | f0;
            words.push(le(&[w0, f1 | 2 << 16 | 10 << 8 | 2]));
        }
    }
    // MTBUF: tbuffer_load_format_x and _d16_ ops (opcode bit 3) by format.
    for op in [0u32, 4, 8, 15] {
        for fmt in [0u32, 1, 22, 63, 77] {
            let w0 = 0xE800_0000 | fmt << 19 | (op & 7) << 16 | 1 << 12 | 16;
            words.push(le(&[
                w0,
                12 << 24 | (op >> 3) << 21 | 2 << 16 | 10 << 8 | 2,
            ]));
        }
    }
    // MIMG: image_load, image_sample, image_atomic_add (2D, dmask 0xf or 1).
    for op in [0u32, 32, 17] {
        let dmask = if op == 17 { 1 } else { 0xF };
        let w0 = 0xF000_0000 | op << 18 | dmask << 8 | 1 << 3;
        let ssamp = if op == 32 { 4 } else { 0 };
        let w1 = ssamp << 21 | 2 << 16 | 4;
        for (f0, f1) in [
            (0, 0),
            (1 << 12, 0),
            (1 << 13, 0),
            (1 << 7, 0),
            (1 << 25, 0),
            (1 << 15, 0),
            (1 << 16, 0),
            (1 << 17, 0),
            (0, 1 << 30),
            (0, 1 << 31),
        ] {
            // No d16 atomics.
            if op == 17 && f1 == 1 << 31 {
                continue;
            }
            words.push(le(&[w0 | f0, w1 | f1]));
        }
        // NSA: one extra dword of addresses (v8, v10, …), 2D and 3D.
        words.push(le(&[w0 | 1 << 1, w1, 0x0E0C_0A08]));
        words.push(le(&[w0 | 1 << 1 | 1 << 4, w1, 0x0E0C_0A08]));
    }
    let bad = differences(Family::Gfx10, &words, "gfx1030");
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        words.len(),
        bad.join("\n")
    );
}

/// Words llvm-mc-19 refuses for gfx1030 are errors here too: DPP on VOP3
/// and VOPC (gfx11's, not gfx10's), a global address in m0 or exec_hi,
/// `high` on an f32 interpolation, abs/neg on an interpolation attribute.
/// (llvm-mc then reads on from the next dword, so its text is checked
/// not to name the refused op.)
#[test]
fn gfx10_refuses_what_llvm_mc_refuses() {
    let le = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let mut words = Vec::new();
    for s0 in [0xE9u32, 0xEA, 0xFA] {
        words.push((le(&[0xD503_000A, 0x0002_0800 | s0, 2]), "v_add_f32"));
        words.push((le(&[0x7C04_0800 | s0, 0xFF00_0002]), "v_cmp_eq_f32"));
        words.push((le(&[0x7C24_0800 | s0, 0xFF00_0002]), "v_cmpx_eq_f32"));
    }
    // global_load_dword with saddr m0 or exec_hi.
    for saddr in [124u32, 127] {
        let w = le(&[0xDC30_8010, 10 << 24 | saddr << 16 | 4 << 8 | 2]);
        words.push((w, "global_load_dword"));
    }
    // v_interp_p1_f32_e64 with `high`.
    words.push((le(&[0xD600_000A, 0x0002_0900]), "v_interp_p1_f32"));
    // abs or neg on the attribute.
    words.push((le(&[0xD600_010A, 0x0002_0802]), "v_interp_p1_f32"));
    words.push((le(&[0xD600_000A, 0x2002_0802]), "v_interp_p1_f32"));
    let bytes: Vec<Vec<u8>> = words.iter().map(|(w, _)| w.clone()).collect();
    let llvm = common::llvm_mc_disassemble(&bytes, "gfx1030");
    for ((w, name), text) in words.iter().zip(&llvm) {
        assert!(
            !text.contains(name),
            "llvm-mc accepts {}: {text}",
            common::hex(w)
        );
        let r = decode(Family::Gfx10, w);
        assert!(r.is_err(), "{}: {r:?}", common::hex(w));
    }
}

// ---- CDNA (gfx90a, gfx94) -----------------------------------------------------

/// Every CDNA sample, scalar, ALU and memory words alike, against
/// llvm-mc-19: gfx90a's on gfx90a, gfx94's (read off gfx942) on gfx940,
/// gfx941 and gfx942.
#[test]
fn every_gfx9_sample_matches_llvm_mc() {
    check(
        Family::Gfx90a,
        include_str!("../data/gfx90a-samples.tsv"),
        "gfx90a",
        "gfx90a",
    );
    for cpu in ["gfx940", "gfx941", "gfx942"] {
        check(
            Family::Gfx94,
            include_str!("../data/gfx94-samples.tsv"),
            "gfx942",
            cpu,
        );
    }
}

/// CDNA's operand forms the samples do not carry, on gfx90a and gfx942:
/// SDWA (selects, sext, neg/abs, clamp/omod, scalar sources, a VOPC's
/// sdst), every DPP control (wave shifts, row_bcast, gfx90a's
/// row_newbcast) and DPP on 64-bit ops, VOP3 abs/neg/clamp/omod/op_sel/
/// sdst, VOP3P op_sel/neg, MAI's cbsz/abid/blgp and AccVGPR bits, SMEM's
/// offsets/soffset/glc, gfx9's register codes, hwreg, waitcnt, sendmsg.
#[test]
fn gfx9_operand_forms_match_llvm_mc() {
    let words = gfx9_field_words();
    for (family, cpu) in [(Family::Gfx90a, "gfx90a"), (Family::Gfx94, "gfx942")] {
        let bad = agree_both_ways(family, &words, cpu);
        assert!(
            bad.is_empty(),
            "{cpu}: {} of {} differ:\n{}",
            bad.len(),
            words.len(),
            bad.join("\n")
        );
    }
}

/// Each word decoded here against llvm-mc-19, both ways: where llvm-mc
/// reads exactly one instruction, ours has that length and text; where it
/// refuses, so do we (a text llvm-mc flags `Invalid` or "not supported"
/// aside: it prints one, then refuses). The words that disagree.
fn agree_both_ways(family: Family, words: &[Vec<u8>], cpu: &str) -> Vec<String> {
    let want = common::llvm_mc_each(words, cpu, "");
    let mut bad = Vec::new();
    for (bytes, want) in words.iter().zip(&want) {
        let ours = decode(family, bytes)
            .ok()
            .filter(|i| i.size as usize == bytes.len())
            .map(|i| disassemble_wave64(&i));
        let flagged = |t: &String| t.contains("Invalid") || t.contains("not supported");
        let agree = match (want, &ours) {
            (Some(w), Some(o)) => w == o,
            (None, Some(o)) => flagged(o),
            (Some(_), None) => false,
            (None, None) => true,
        };
        if !agree {
            bad.push(format!(
                "{cpu} {}\n  llvm: {want:?}\n  ours: {ours:?}",
                common::hex(bytes)
            ));
        }
    }
    bad
}

fn le(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// CDNA's memory fields one at a time, against llvm-mc-19 for gfx90a and
/// gfx942: offsets (FLAT's unsigned 13 bits, GLOBAL/SCRATCH's negative
/// ones), saddr forms (off, SGPRs, flat_scratch, m0, null), scratch's
/// address modes (gfx90a: VGPR or SGPR; gfx940: SVE), acc, the cache bits
/// (glc/slc/scc vs sc0/nt/sc1), lds, idxen/offen, gds (GWS ops only; the
/// bit is ignored elsewhere), MTBUF formats, MIMG's flags; and words
/// llvm-mc-19 refuses (m0 as a global address, lds with acc or on ops
/// without it, a FLAT-segment saddr, a soffset literal, set DS fields the
/// op does not use).
#[test]
fn gfx9_memory_fields_match_llvm_mc() {
    let mut words = Vec::new();
    // FLAT (seg 0), SCRATCH (1), GLOBAL (2): global_load_dword-style op 0x14,
    // store 0x1C, atomic add 0x42.
    for seg in 0..3u32 {
        for op in [0x14, 0x1C, 0x42, 0x10] {
            for lo in [0, 0x1FFF, 0x1000, 0xFFF, 1 << 13] {
                for cache in [0, 1 << 16, 1 << 17, 1 << 25, 7 << 16 & 0x3 << 16 | 1 << 25] {
                    for saddr in [0x7F, 0, 4, 0x66, 0x68, 0x6A, 0x6C, 0x7C, 0x7D, 0x7E] {
                        for hi in [0, 1 << 23] {
                            let w0 = 0xDC00_0000 | op << 18 | seg << 14 | cache | lo;
                            words.push(le(&[w0, 10 << 24 | hi | saddr << 16 | 4 << 8 | 2]));
                        }
                    }
                }
            }
        }
    }
    // MUBUF: load dword (0x14), ubyte (0x10), store (0x1C), atomic add
    // (0x42), cmpswap_x2 (0x61); every flag bit alone.
    for op in [0x14, 0x10, 0x1C, 0x42, 0x61, 0x00] {
        for lo in [
            0,
            1 << 12,
            1 << 13,
            3 << 12,
            1 << 14,
            1 << 15,
            1 << 16,
            1 << 17,
            0xFFF,
        ] {
            for hi in [0, 1 << 23, 1 << 21, 1 << 22] {
                for soff in [12, 0x7C, 0x7D, 0x80, 0xC1, 0xF7, 0xFF, 0xEB, 0xFD] {
                    let w0 = 0xE000_0000 | op << 18 | lo;
                    words.push(le(&[w0, soff << 24 | hi | 2 << 16 | 10 << 8 | 2]));
                }
            }
        }
    }
    // MTBUF: every dfmt and nfmt, the flags.
    for fmt in 0..128u32 {
        words.push(le(&[
            0xE800_0000 | fmt << 19 | 1 << 12 | 16,
            12 << 24 | 2 << 16 | 10 << 8 | 2,
        ]));
    }
    for op in 0..16u32 {
        for (lo, hi) in [
            (1 << 14, 0),
            (0, 1 << 21),
            (0, 1 << 22),
            (0, 1 << 23),
            (3 << 12, 0),
        ] {
            let w0 = 0xE800_0000 | 0x27 << 19 | op << 15 | lo;
            words.push(le(&[w0, 12 << 24 | hi | 2 << 16 | 10 << 8 | 2]));
        }
    }
    // DS: ds_write_b32 (13), ds_read_b32 (54), ds_write2_b32 (14),
    // ds_add_rtn_u32 (32), the GWS ops (0x98-0x9D), ds_swizzle (0x3D);
    // gds and acc, used and unused fields.
    for op in [13, 54, 14, 32, 0x98, 0x99, 0x9A, 0x9D, 0x3D, 0xB6, 0x1D] {
        for hi in [0, 1 << 16, 1 << 25, 1 << 25 | 1 << 16] {
            for w1 in [
                0,
                2,
                4 << 8 | 2,
                6 << 16 | 4 << 8 | 2,
                10 << 24 | 2,
                10 << 24 | 4 << 8 | 2,
            ] {
                for off in [0, 0x0301, 0x801F] {
                    words.push(le(&[0xD800_0000 | hi | op << 17 | off, w1]));
                }
            }
        }
    }
    let mut bad = agree_both_ways(Family::Gfx94, &words, "gfx942");
    // MIMG (gfx90a only): load, store, atomics, sample; each flag bit.
    for op in [0, 8, 14, 16, 17, 18, 32] {
        for b in 0..26u32 {
            for w1 in [2 << 16 | 4, 4 << 21 | 2 << 16 | 4, 1 << 31 | 2 << 16 | 4] {
                words.push(le(&[0xF000_0000 | op << 18 | 0x3 << 8 | 1 << b, w1]));
            }
        }
    }
    bad.extend(agree_both_ways(Family::Gfx90a, &words, "gfx90a"));
    assert!(
        bad.is_empty(),
        "{} of {} words differ:\n{}",
        bad.len(),
        2 * words.len(),
        bad.join("\n")
    );
}

/// Random CDNA memory words (each encoding's fixed top bits, the rest
/// from a fixed-seed xorshift), checked both ways against llvm-mc-19: the
/// refusals the field tests above do not think of.
#[test]
fn random_gfx9_memory_words_agree_with_llvm_mc() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u32
    };
    let mut bad = Vec::new();
    for (family, cpu, tops) in [
        (
            Family::Gfx90a,
            "gfx90a",
            &[0x36u32, 0x37, 0x38, 0x3A, 0x3C][..],
        ),
        (Family::Gfx94, "gfx942", &[0x36, 0x37, 0x38, 0x3A][..]),
    ] {
        let mut words = Vec::new();
        for &top in tops {
            for _ in 0..10000 {
                let w0 = top << 26 | next() >> 6;
                words.push(le(&[w0, next()]));
            }
        }
        bad.extend(agree_both_ways(family, &words, cpu));
    }
    assert!(bad.is_empty(), "{} differ:\n{}", bad.len(), bad.join("\n"));
}

fn gfx9_field_words() -> Vec<Vec<u8>> {
    let le = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let mut w: Vec<Vec<u8>> = Vec::new();
    // SDWA: v_mov_b32 (VOP1), v_add_f32 and v_add_u32 (VOP2), v_cmp_eq_f32
    // and v_cmpx_eq_f32 (VOPC).
    let (mov, add, addu) = (
        0x7E14_02F9u32,
        0x0214_08F9u32,
        52 << 25 | 10 << 17 | 4 << 9 | 0xF9,
    );
    for sel in 0..7u32 {
        for unused in 0..3u32 {
            w.push(le(&[mov, 2 | sel << 8 | unused << 11 | (6 - sel) << 16]));
        }
        w.push(le(&[add, 2 | 6 << 8 | sel << 16 | (6 - sel) << 24]));
    }
    for d in [
        1 << 13,
        1 << 14,
        2 << 14,
        3 << 14,
        1 << 19 | 1 << 27,
        1 << 20 | 1 << 29,
        1 << 21 | 1 << 28,
        1 << 23,
        1 << 31,
    ] {
        for w0 in [mov, add, addu] {
            w.push(le(&[w0, d | 2 | 6 << 8 | 6 << 16 | 6 << 24]));
        }
    }
    for src0 in [4u32, 106, 124, 0x80, 0xC1, 0xF0] {
        w.push(le(&[add, 1 << 23 | src0 | 6 << 8 | 6 << 16 | 6 << 24]));
    }
    for op in [66u32, 82] {
        let w0 = 0x7C00_0000 | op << 17 | 4 << 9 | 0xF9;
        for sd in [
            0u32,
            1 << 15 | 10 << 8,
            1 << 15 | 106 << 8,
            1 << 15 | 126 << 8,
        ] {
            w.push(le(&[w0, sd | 2 | 1 << 16 | 5 << 24 | 1 << 20]));
        }
    }
    // DPP: every control on v_mov_b32; masks, bound_ctrl and modifiers on
    // v_add_f32; 64-bit ops (v_cvt_f32_f64, v_fmac_f64).
    for ctrl in 0..0x200u32 {
        w.push(le(&[0x7E14_02FA, 0xFF00_0002 | ctrl << 8]));
    }
    for d in [
        0x1u32 << 19,
        1 << 20,
        1 << 21,
        1 << 22,
        1 << 23,
        0xF << 20,
        0,
    ] {
        for masks in [0xFF00_0000u32, 0x1200_0000, 0x0F00_0000] {
            w.push(le(&[0x0214_08FA, masks | d | 0x1B << 8 | 2]));
        }
    }
    for ctrl in [0x1Bu32, 0x101, 0x130, 0x142, 0x150] {
        w.push(le(&[0x7E14_00FA | 15 << 9, 0xFF00_0002 | ctrl << 8]));
        w.push(le(&[
            4 << 25 | 10 << 17 | 4 << 9 | 0xFA,
            0xFF00_0002 | ctrl << 8,
        ]));
    }
    // VOP3: v_add_f32_e64 modifiers, v_fma_f16 op_sel, v_add_u16 op_sel,
    // v_mad_u64_u32's sdst, v_cmp(x)_eq_f32_e64's sdst, v_add_f64's
    // constants, every source code on v_add_f32_e64.
    let v3 = |op: u32, hi: u32, lo: u32| le(&[0xD000_0000 | op << 16 | hi | 10, lo]);
    let srcs = 258 | 260 << 9 | 262 << 18;
    for abs in 0..8u32 {
        w.push(v3(257, abs << 8, 258 | 260 << 9 | abs << 29));
    }
    for (hi, lo) in [(1 << 15, 0), (0, 1 << 27), (0, 2 << 27), (1 << 15, 3 << 27)] {
        w.push(v3(257, hi, 258 | 260 << 9 | lo));
    }
    for opsel in 0..16u32 {
        w.push(v3(518, opsel << 11, srcs));
        w.push(v3(294, opsel << 11, 258 | 260 << 9));
    }
    for sd in [0u32, 10, 106, 124, 126] {
        w.push(v3(488, sd << 8, 258 | 260 << 9 | 262 << 18));
        w.push(le(&[0xD000_0000 | 66 << 16 | sd, 258 | 260 << 9]));
        w.push(le(&[0xD000_0000 | 82 << 16 | sd, 258 | 260 << 9]));
    }
    for code in (0..256u32).filter(|&c| c != 255 && c != 250 && c != 249) {
        w.push(v3(257, 0, code | 260 << 9));
        w.push(v3(640, 0, code | 260 << 9));
    }
    // VOP3P: v_pk_add_f16 and v_pk_fma_f32 op_sel/op_sel_hi/neg/clamp;
    // v_pk_mov_b32; v_fma_mix_f32.
    for m in 0..8u32 {
        for (op, lo) in [
            (15u32, 258 | 260 << 9),
            (48, srcs),
            (51, 258 | 260 << 9),
            (32, srcs),
        ] {
            let w0 = 0xD380_0000 | op << 16 | m << 11 | (m ^ 5) << 8 | (m & 1) << 14 | 10;
            w.push(le(&[w0, lo | (m & 3) << 27 | (7 - m) << 29]));
        }
        w.push(le(&[0xD380_8000 | 15 << 16 | 10, 258 | 260 << 9 | 3 << 27]));
    }
    // MAI: v_mfma_f32_32x32x1(_2b)f32 (64) with every cbsz, abid, blgp and
    // the AccVGPR bits; the f64 MFMA (110 on gfx90a, gfx940's too).
    for k in 0..16u32 {
        let w0 = 0xD380_0000 | 64 << 16 | (k & 7) << 8 | k << 11 | (k & 1) << 15 | 10;
        w.push(le(&[w0, srcs | (k & 3) << 27 | (k & 7) << 29]));
        let w0 = 0xD380_0000 | 110 << 16 | (k & 7) << 8 | k << 11 | (k & 1) << 15 | 10;
        w.push(le(&[w0, srcs | (k & 3) << 27 | (k & 7) << 29]));
    }
    // SMEM: s_load_dword (imm, negative, SGPR offset, soe), glc, nv;
    // s_store_dword and s_atomic_add with glc.
    for (op, d) in [(0u32, 8u32), (16, 8), (130, 8), (8, 8)] {
        let w0 = 0xC000_0000 | op << 18 | d << 6 | 1;
        for (f0, f1) in [
            (1 << 17, 0x10),
            (1 << 17, 0x1F_FFF0),
            (1 << 17, 0x0F_FFFF),
            (1 << 17 | 1 << 16, 0x10),
            (1 << 17 | 1 << 15, 0x10),
            (0, 4),
            (0, 124),
            (0, 0x80),
            (1 << 17 | 1 << 14, 4 << 25 | 0x10),
        ] {
            w.push(le(&[w0 | f0, f1]));
        }
    }
    // Scalar register codes: s_mov_b32/s_mov_b64 from and to each.
    for code in (0..256u32).filter(|&c| c != 255) {
        w.push(le(&[0xBE8A_0000 | code]));
        if code < 128 && code % 2 == 0 {
            w.push(le(&[0xBE80_0100 | code << 16 | code]));
        }
    }
    for id in 0..64u32 {
        w.push(le(&[0xB88A_0000 | 31 << 11 | id])); // s_getreg_b32 s10
        w.push(le(&[0xB88A_0000 | 3 << 11 | 4 << 6 | id]));
    }
    for imm in [
        0u32, 0x3F7F, 0xC07F, 0x0F70, 0x000F, 0x0070, 0xFFFF, 0x1234, 0xF07F,
    ] {
        w.push(le(&[0xBF8C_0000 | imm])); // s_waitcnt
    }
    for imm in (0..1024u32).chain([1024, 1025, 0x8001, 0xFFFF, 0x483]) {
        w.push(le(&[0xBF90_0000 | imm])); // s_sendmsg
        w.push(le(&[0xBF91_0000 | imm])); // s_sendmsghalt
    }
    w
}

/// Random CDNA scalar and ALU words (SOP*, SMEM, VOP1/VOP2/VOPC with SDWA
/// and DPP, VOP3, VOP3P/MAI; random fields and following dwords), each cut
/// at 4, 8 and 12 bytes: where llvm-mc-19 reads exactly one instruction,
/// it decodes here to that length and text; where it refuses, so do we
/// (llvm's `Invalid`-flagged texts aside).
#[test]
fn gfx9_random_alu_words_match_llvm_mc() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as u32
    };
    // (mask of the random bits, fixed bits) of a first dword per encoding.
    const SHAPES: [(u32, u32); 11] = [
        (0x00FF_FFFF, 0xBE80_0000), // SOP1 (and SOPC/SOPP around it)
        (0x007F_FFFF, 0xBF00_0000), // SOPC/SOPP
        (0x3FFF_FFFF, 0x8000_0000), // SOP2/SOPK
        (0x7FFF_FFFF, 0),           // VOP1/VOP2/VOPC
        (0x7FFF_FE00, 0xF9),        // SDWA
        (0x7FFF_FE00, 0xFA),        // DPP
        (0x03FF_FFFF, 0xD000_0000), // VOP3
        (0x007F_FFFF, 0xD380_0000), // VOP3P/MAI
        (0x03FF_FFFF, 0xC000_0000), // SMEM
        (0x0003_FFFF, 0xD000_0000), // VOPC e64
        (0x01FF_FE00, 0x7C00_00F9), // VOPC SDWA
    ];
    let mut bufs = Vec::new();
    for k in 0..30000 {
        let (mask, fixed) = SHAPES[k % SHAPES.len()];
        let w0 = next() & mask | fixed;
        // Second dwords with few bits set now and then, so more decode.
        let mut w1 = if k % 3 == 0 { next() & next() } else { next() };
        if w0 >> 31 == 0 && w0 & 0x1FF == 0xF9 {
            // An SDWA select of 7 crashes llvm-mc-19 (refused here).
            w1 &= !(1 << 10 | 1 << 18 | 1 << 26);
        }
        let words = [w0, w1, next()];
        bufs.push(
            words
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect::<Vec<u8>>(),
        );
    }
    for (family, cpu) in [(Family::Gfx90a, "gfx90a"), (Family::Gfx94, "gfx942")] {
        let cands: Vec<Vec<u8>> = bufs
            .iter()
            .flat_map(|b| [4, 8, 12].map(|n| b[..n].to_vec()))
            .collect();
        let bad = agree_both_ways(family, &cands, cpu);
        assert!(
            bad.is_empty(),
            "{cpu}: {} of {} differ:\n{}",
            bad.len(),
            cands.len(),
            bad.join("\n")
        );
    }
}
