//! The opcode table is the union of the families' tables
//! (`data/gfx11-ops.tsv`, `data/gfx12-ops.tsv`, both read off llvm-mc-19):
//! every row of each family's file is found again by that family's
//! lookups with its encoding and operand types, a mnemonic both families
//! give the same operands is one op, and one whose operands change is two.
//! (`oracle.rs` and `kernels.rs` hold gfx12's decoding to llvm-mc-19 and
//! llvm-objdump-19.)

use softgpu_isa::ops::{op_by_encoding, op_by_vop3, op_by_vopd_y};
use softgpu_isa::{op_by_name_in, ops_of, Family, Format, Op};

/// (name, format, opcode, vop3, vopd_x, vopd_y, types) of a family's rows.
type Row = (
    String,
    String,
    u16,
    Option<u16>,
    Option<u16>,
    Option<u16>,
    Vec<String>,
);

fn rows(family: Family) -> Vec<Row> {
    let path = format!(
        "{}/data/{}-ops.tsv",
        env!("CARGO_MANIFEST_DIR"),
        family.name()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let num = |s: &str| (s != "-").then(|| s.parse::<u16>().unwrap());
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                num(f[3]),
                num(f[4]),
                num(f[5]),
                f[6..].iter().map(|t| t.to_string()).collect(),
            )
        })
        .collect()
}

fn types(op: Op) -> Vec<String> {
    let i = op.info();
    i.dst
        .iter()
        .chain(&i.src)
        .map(|t| format!("{t:?}"))
        .collect()
}

#[test]
fn every_row_of_each_family_is_found_by_its_encoding() {
    for family in Family::ALL {
        let rows = rows(family);
        assert_eq!(ops_of(family).count(), rows.len(), "{family:?}");
        for (name, format, opcode, vop3, vopd_x, vopd_y, tys) in rows {
            let op = op_by_name_in(family, &name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(types(op), tys, "{family:?} {name}");
            let enc = op.encoding(family).unwrap();
            assert_eq!(format!("{:?}", enc.format), format, "{name}");
            let by_enc = match (enc.format, vopd_x, vopd_y) {
                (Format::Vopd, Some(x), _) => op_by_encoding(family, Format::Vopd, x),
                (Format::Vopd, None, Some(y)) => op_by_vopd_y(family, y),
                _ => op_by_encoding(family, enc.format, opcode),
            };
            assert_eq!(by_enc, Some(op), "{family:?} {name} by its encoding");
            if let Some(v) = vop3 {
                assert_eq!(op_by_vop3(family, v), Some(op), "{family:?} {name} VOP3");
            }
        }
    }
}

#[test]
fn families_share_ops_by_mnemonic_and_operands() {
    let g11 = |n: &str| op_by_name_in(Family::Gfx11, n).unwrap();
    let g12 = |n: &str| op_by_name_in(Family::Gfx12, n).unwrap();
    // The same op, even where gfx12 moves its encoding (VOP3 to VOP2).
    assert_eq!(g11("v_add_f32"), g12("v_add_f32"));
    let add_f64 = g11("v_add_f64");
    assert_eq!(add_f64, g12("v_add_f64"));
    assert_eq!(
        add_f64.encoding(Family::Gfx11).unwrap().format,
        Format::Vop3
    );
    assert_eq!(
        add_f64.encoding(Family::Gfx12).unwrap().format,
        Format::Vop2
    );
    // gfx12's own ops are its alone.
    for name in [
        "v_max_num_f32",
        "v_maximum_f32",
        "s_wait_loadcnt",
        "v_permlane16_var_b32",
    ] {
        assert!(g12(name).encoding(Family::Gfx11).is_none(), "{name}");
        assert!(op_by_name_in(Family::Gfx11, name).is_none(), "{name}");
    }
    // A mnemonic whose operands change is two ops: gfx12's WMMA takes its A
    // and B matrices in 4 VGPRs, gfx11's in 8.
    let w11 = g11("v_wmma_f32_16x16x16_f16");
    let w12 = g12("v_wmma_f32_16x16x16_f16");
    assert_ne!(w11, w12);
    assert_eq!(w12, Op::V_WMMA_F32_16X16X16_F16_GFX12);
    assert_eq!(format!("{:?}", w12.info().src[0]), "B128");
    assert_eq!(format!("{:?}", w11.info().src[0]), "B256");
}

/// gfx12 words decode with gfx12's tables, not gfx11's; the family is
/// known by its processors but not yet executed.
#[test]
fn gfx12_words_decode_by_gfx12_tables() {
    // s_endpgm is the same word in both families.
    let endpgm = 0xBFB0_0000u32.to_le_bytes();
    assert_eq!(
        softgpu_isa::decode(Family::Gfx12, &endpgm).unwrap().op,
        Op::S_ENDPGM
    );
    // s_wait_loadcnt 0 is gfx12's; on gfx11 that word is another op.
    let wait = 0xBFC0_0000u32.to_le_bytes();
    let i = softgpu_isa::decode(Family::Gfx12, &wait).unwrap();
    assert_eq!(i.op, Op::S_WAIT_LOADCNT);
    assert_eq!(softgpu_isa::disassemble(&i), "s_wait_loadcnt 0x0");
    assert_ne!(
        softgpu_isa::decode(Family::Gfx11, &wait).map(|i| i.op).ok(),
        Some(Op::S_WAIT_LOADCNT)
    );
    assert_eq!(Family::of_target("gfx1201"), Some(Family::Gfx12));
    assert!(Family::Gfx12.executed() && Family::Gfx11.executed());
}
