//! The opcode table is the union of the families' tables
//! (`data/gfx11-ops.tsv`, `data/gfx12-ops.tsv`, `data/gfx10-ops.tsv`, all
//! read off llvm-mc-19): every row of each family's file is found again by
//! that family's lookups with its encoding and operand types, a mnemonic
//! two families give the same operands is one op, and one whose operands
//! change is two. (`oracle.rs` and `kernels.rs` hold gfx12's decoding to
//! llvm-mc-19 and llvm-objdump-19, and `oracle.rs` gfx10's sample words to
//! llvm-mc-19.)

use softgpu_isa::ops::{op_by_encoding, op_by_vop3, op_by_vopd_y};
use softgpu_isa::{op_by_name_in, ops_of, Class, Cond, Family, Format, Implicit, MemOp, Num, Op};

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

/// gfx10's table joins the union: a mnemonic it gives gfx11's operands is
/// gfx11's op at gfx10's own opcodes, its own mnemonics are new ops (one
/// that gfx11 gives other operands gets the `_GFX10` suffix), and its code
/// is decoded but not executed, and no target names it.
#[test]
fn gfx10_table_joins_the_union() {
    let g10 = |n: &str| op_by_name_in(Family::Gfx10, n).unwrap();
    let g11 = |n: &str| op_by_name_in(Family::Gfx11, n).unwrap();
    for name in ["v_add_f32", "s_mov_b32", "v_lshlrev_b64", "v_add_co_ci_u32"] {
        assert_eq!(g10(name), g11(name), "{name}");
    }
    let mov = Op::S_MOV_B32;
    assert_eq!(mov.encoding(Family::Gfx10).unwrap().opcode, 3);
    assert_eq!(mov.encoding(Family::Gfx11).unwrap().opcode, 0);
    let shift = Op::V_LSHLREV_B64.encoding(Family::Gfx10).unwrap();
    assert_eq!((shift.format, shift.vop3), (Format::Vop3, Some(767)));
    // gfx10's own: not gfx11's or gfx12's.
    for name in [
        "v_dot2c_f32_f16",
        "v_fmac_legacy_f32",
        "s_inst_prefetch",
        "global_atomic_fcmpswap",
        "global_load_dword",
        "v_cmp_tru_f32",
    ] {
        let op = g10(name);
        assert!(op.encoding(Family::Gfx11).is_none(), "{name}");
        assert!(op.encoding(Family::Gfx12).is_none(), "{name}");
    }
    for name in ["v_dot2c_f32_f16", "v_dot4c_i32_i8", "v_fmac_legacy_f32"] {
        assert!(g10(name).has(Implicit::ACCUMULATES), "{name}");
    }
    // Float always-true is gfx11's `t` compare, spelled `tru`.
    assert_eq!(
        g10("v_cmp_tru_f32").info().class,
        Class::Cmp {
            cond: Cond::T,
            num: Num::F32
        }
    );
    // gfx10.3 has no float buffer adds, no VOPD and no WMMA.
    for name in ["buffer_atomic_add_f32", "v_dual_mov_b32"] {
        assert!(op_by_name_in(Family::Gfx10, name).is_none(), "{name}");
    }
    // gfx11's v_interp_p2_f32 is VINTERP; gfx10's is a VOP3 of other operands.
    assert_eq!(g10("v_interp_p2_f32"), Op::V_INTERP_P2_F32_GFX10);
    assert_ne!(Op::V_INTERP_P2_F32_GFX10, g11("v_interp_p2_f32"));
    // gfx10's width words give the bytes a lane moves.
    for (op, bytes) in [
        (MemOp::LOAD_DWORDX3, 12),
        (MemOp::LOAD_SHORT_D16_HI, 2),
        (MemOp::ATOMIC_ADD_X2, 8),
        (MemOp::LOAD_FORMAT_D16_HI_X, 2),
        (MemOp::STORE_BYTE, 1),
    ] {
        assert_eq!(op.bytes(), bytes, "{}", op.name());
    }
    // Decoded (decode/gfx10.rs, held to llvm-mc-19 in oracle.rs) and run.
    let endpgm = 0xBF81_0000u32.to_le_bytes();
    let inst = softgpu_isa::decode(Family::Gfx10, &endpgm).unwrap();
    assert_eq!((inst.op, inst.family), (Op::S_ENDPGM, Family::Gfx10));
    assert!(Family::Gfx10.executed());
    assert_eq!(Family::of_target("gfx1030"), Some(Family::Gfx10));
    assert_eq!(Family::ALL[Family::Gfx10.index()], Family::Gfx10);
}
