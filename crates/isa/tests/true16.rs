//! True16 operands of the 32-bit VALU encodings: in VOP1/VOP2/VOPC and their
//! DPP16/DPP8 forms, a VGPR numbered 128 or more in a 16-bit operand slot
//! names the high half of v(N-128).
//!
//! Two checks: words assembled by llvm-mc-19 from true16 syntax
//! (`-mattr=+real-true16`, which LLVM 19 accepts for the ops it has
//! converted) decode to the expected `Operand::VgprHi`; and over every
//! VOP1/VOP2/VOPC opcode with high registers in each slot, wherever llvm's
//! true16 printer names halves (`vN.h`), our operands are the same halves.

mod common;

use softgpu_isa::{decode, disassemble, op_by_name, Family, Inst, Operand, Ty};

const T16: &str = "+real-true16";

fn decoded(bytes: &[u8]) -> Inst {
    let i = decode(Family::Gfx11, bytes).unwrap();
    assert_eq!(i.size as usize, bytes.len(), "size of {}", disassemble(&i));
    i
}

use Operand::{Vgpr as V, VgprHi as H};

/// (true16 assembly, expected dst[0], expected src[0], expected src[1]).
const ASSEMBLED: &[(&str, Operand, Operand, Operand)] = &[
    ("v_add_f16_e32 v2.l, v0.h, v1.l", V(2), H(0), V(1)),
    ("v_add_f16_e32 v2.h, v0.l, v1.h", H(2), V(0), H(1)),
    (
        "v_mul_f16_e32 v127.h, v127.h, v127.h",
        H(127),
        H(127),
        H(127),
    ),
    ("v_mov_b16_e32 v1.l, v0.h", V(1), H(0), Operand::None),
    ("v_mov_b16_e32 v1.h, v0.l", H(1), V(0), Operand::None),
    ("v_ceil_f16_e32 v10.l, v2.h", V(10), H(2), Operand::None),
    (
        "v_add_f16_dpp v2.h, v0.h, v1.l quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        H(2),
        H(0),
        V(1),
    ),
    (
        "v_mov_b16_dpp v1.h, v2.h dpp8:[7,6,5,4,3,2,1,0]",
        H(1),
        H(2),
        Operand::None,
    ),
    (
        "v_max_f16_dpp v5.l, v6.h, v7.h dpp8:[0,0,0,0,0,0,0,0]",
        V(5),
        H(6),
        H(7),
    ),
];

#[test]
fn assembled_true16_halves_decode_as_high_halves() {
    let lines: Vec<&str> = ASSEMBLED.iter().map(|a| a.0).collect();
    let words = common::assemble(&lines, "gfx1100", T16);
    for ((text, d, s0, s1), bytes) in ASSEMBLED.iter().zip(&words) {
        let i = decoded(bytes);
        assert_eq!(
            (i.dst[0], i.src[0], i.src[1]),
            (*d, *s0, *s1),
            "{text} ({})",
            common::hex(bytes)
        );
    }
}

/// Ops LLVM 19 still treats as fake16 (it has no true16 syntax for them):
/// the words are built by hand from the encoding.
#[test]
fn fake16_ops_read_high_halves_too() {
    let vop1 = |op: u32, d: u32, s0: u32| 0x7E00_0000 | d << 17 | op << 9 | s0;
    let vopc = |op: u32, s0: u32, s1: u32| 0x7C00_0000 | op << 17 | s1 << 9 | s0;
    let opc = |name: &str| {
        let op = op_by_name(name).unwrap();
        op.encoding(Family::Gfx11).unwrap().opcode as u32
    };
    let cases = [
        // A 16-bit source, a 32-bit destination: only the source is a half.
        (
            vop1(opc("v_cvt_f32_f16"), 130, 256 + 130),
            V(130),
            H(2),
            Operand::None,
        ),
        // A 32-bit source, a 16-bit destination.
        (
            vop1(opc("v_cvt_f16_f32"), 138, 256 + 130),
            H(10),
            V(130),
            Operand::None,
        ),
        (
            vopc(opc("v_cmp_lt_f16"), 256 + 130, 132),
            Operand::Sgpr(106),
            H(2),
            H(4),
        ),
        // The class mask is a 16-bit operand as well.
        (
            vopc(opc("v_cmp_class_f16"), 256 + 1, 132),
            Operand::Sgpr(106),
            V(1),
            H(4),
        ),
        // Scalar sources are unaffected.
        (
            vopc(opc("v_cmp_eq_u16"), 2, 133),
            Operand::Sgpr(106),
            Operand::Sgpr(2),
            H(5),
        ),
    ];
    for (w, d, s0, s1) in cases {
        let i = decoded(&w.to_le_bytes());
        assert_eq!((i.dst[0], i.src[0], i.src[1]), (d, s0, s1), "{w:#010x}");
    }
}

/// The VGPR operands of a text in order: `v7`, `v7.l`, `v7.h`.
fn vgpr_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    for (at, _) in text.match_indices('v') {
        let starts = at == 0 || !b[at - 1].is_ascii_alphanumeric() && b[at - 1] != b'_';
        let rest = &text[at + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if !starts || digits == 0 {
            continue;
        }
        let half = [".l", ".h"]
            .into_iter()
            .find(|h| rest[digits..].starts_with(h))
            .unwrap_or("");
        out.push(format!("v{}{half}", &rest[..digits]));
    }
    out
}

/// Our operands of a VOP1/VOP2/VOPC instruction in true16 names: a 16-bit
/// slot's VGPR is `vN.l` or `vN.h`, a 32-bit one `vN`.
fn our_tokens(i: &Inst) -> Vec<String> {
    let info = i.op.info();
    let half = |t: Ty| matches!(t, Ty::B16 | Ty::F16 | Ty::BF16);
    let slots = [
        (i.dst[0], half(info.dst[0])),
        (i.src[0], half(info.src[0])),
        (
            i.src[1],
            half(info.src[1]) || info.name.ends_with("class_f16"),
        ),
    ];
    slots
        .iter()
        .filter_map(|&(op, h)| match op {
            H(n) => Some(format!("v{n}.h")),
            V(n) if h => Some(format!("v{n}.l")),
            V(n) => Some(format!("v{n}")),
            _ => None,
        })
        .collect()
}

/// Every VOP1/VOP2/VOPC opcode with a high register in each slot, in the
/// e32, DPP16 and DPP8 forms.
fn candidates() -> Vec<Vec<u8>> {
    let le = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let dpp16 = |s0: u32| s0 | 0x0e4 << 8 | 0xff << 24;
    let dpp8 = |s0: u32| s0 | 0o76543210 << 8;
    let mut out = Vec::new();
    for op in 0..256u32 {
        let slots = [
            (10, 2, 4),
            (138, 2, 4),
            (10, 130, 4),
            (10, 2, 132),
            (138, 130, 132),
        ];
        for (d, s0, s1) in slots {
            let words = [
                0x7E00_0000 | d << 17 | op << 9,
                if op < 0x3f {
                    op << 25 | d << 17 | s1 << 9
                } else {
                    0xffff_ffff
                },
                0x7C00_0000 | op << 17 | s1 << 9,
            ];
            for w in words.into_iter().filter(|&w| w != 0xffff_ffff) {
                out.push(le(&[w | (256 + s0)]));
                out.push(le(&[w | 250, dpp16(s0)]));
                out.push(le(&[w | 233, dpp8(s0)]));
            }
        }
    }
    out
}

#[test]
fn every_true16_half_llvm_names_is_a_high_half_here() {
    let cands = candidates();
    let texts = common::llvm_mc_each(&cands, "gfx1100", T16);
    let mut ops = std::collections::BTreeSet::new();
    let mut bad = Vec::new();
    for (bytes, want) in cands.iter().zip(&texts) {
        let Some(want) = want
            .as_deref()
            .filter(|t| t.contains(".h") || t.contains(".l"))
        else {
            continue;
        };
        let got = match decode(Family::Gfx11, bytes) {
            Ok(i) => {
                ops.insert(i.op.name());
                our_tokens(&i)
            }
            Err(e) => vec![format!("<{e}>")],
        };
        if got != vgpr_tokens(want) {
            bad.push(format!(
                "{}\n  llvm: {want}\n  ours: {got:?}",
                common::hex(bytes)
            ));
        }
    }
    // LLVM 19 names halves for v_mov_b16 and 13 f16 arithmetic ops.
    assert!(
        ops.len() >= 14,
        "llvm printed true16 names for only {ops:?}"
    );
    assert!(bad.is_empty(), "{} differ:\n{}", bad.len(), bad.join("\n"));
}
