//! Symbolic immediates as llvm-objdump-19 prints them for gfx11: s_waitcnt,
//! s_delay_alu, s_waitcnt_depctr, hwreg(...) and sendmsg(...).

/// `s_waitcnt`: vmcnt [15:10], lgkmcnt [9:4], expcnt [2:0]. Counters at
/// their maximum mean "no wait" and are omitted unless all are.
pub fn waitcnt(imm: u16) -> String {
    wait_text([
        ("vmcnt", imm >> 10 & 63, 63),
        ("expcnt", imm & 7, 7),
        ("lgkmcnt", imm >> 4 & 63, 63),
    ])
}

/// gfx10's `s_waitcnt`: vmcnt in bits 0-3 and 14-15, expcnt 4-6, lgkmcnt
/// 8-13.
pub fn waitcnt_gfx10(imm: u16) -> String {
    wait_text([
        ("vmcnt", imm & 15 | (imm >> 14 & 3) << 4, 63),
        ("expcnt", imm >> 4 & 7, 7),
        ("lgkmcnt", imm >> 8 & 63, 63),
    ])
}

/// The counters of an `s_waitcnt`, each `(name, value, maximum)`: those
/// below their maximum, or all when none is.
fn wait_text(counters: [(&str, u16, u16); 3]) -> String {
    let waits: Vec<_> = counters.iter().filter(|(_, v, max)| v != max).collect();
    let shown = if waits.is_empty() {
        counters.iter().collect()
    } else {
        waits
    };
    shown
        .iter()
        .map(|(n, v, _)| format!("{n}({v})"))
        .collect::<Vec<_>>()
        .join(" ")
}

const INSTID: [&str; 12] = [
    "NO_DEP",
    "VALU_DEP_1",
    "VALU_DEP_2",
    "VALU_DEP_3",
    "VALU_DEP_4",
    "TRANS32_DEP_1",
    "TRANS32_DEP_2",
    "TRANS32_DEP_3",
    "FMA_ACCUM_CYCLE_1",
    "SALU_CYCLE_1",
    "SALU_CYCLE_2",
    "SALU_CYCLE_3",
];
const INSTSKIP: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];

/// `s_delay_alu`: instid0 [3:0], instskip [6:4], instid1 [10:7]; zero
/// fields are omitted.
pub fn delay_alu(imm: u16) -> String {
    if imm == 0 {
        return "0".into();
    }
    let name = |table: &[&str], v: u16, what: &str| {
        table
            .get(v as usize)
            .map_or(format!("/* invalid {what} value */"), |s| s.to_string())
    };
    let mut parts = Vec::new();
    for (field, v, table, what) in [
        ("instid0", imm & 15, &INSTID[..], "instid"),
        ("instskip", imm >> 4 & 7, &INSTSKIP[..], "instskip"),
        ("instid1", imm >> 7 & 15, &INSTID[..], "instid"),
    ] {
        if v != 0 {
            parts.push(format!("{field}({})", name(table, v, what)));
        }
    }
    parts.join(" | ")
}

/// `s_waitcnt_depctr` fields as (name, shift, width), in print order.
const DEPCTR: [(&str, u16, u16); 7] = [
    ("depctr_hold_cnt", 7, 1),
    ("depctr_sa_sdst", 0, 1),
    ("depctr_va_vdst", 12, 4),
    ("depctr_va_sdst", 9, 3),
    ("depctr_va_ssrc", 8, 1),
    ("depctr_va_vcc", 1, 1),
    ("depctr_vm_vsrc", 2, 3),
];

/// Fields at their maximum are defaults and omitted unless all are; an
/// encoding with bits outside the fields prints as hex.
pub fn depctr(imm: u16) -> String {
    let mask: u16 = DEPCTR
        .iter()
        .map(|&(_, s, w)| ((1 << w) - 1) << s)
        .fold(0, |a, b| a | b);
    if imm & !mask != 0 {
        return format!("{imm:#x}");
    }
    let f: Vec<(&str, u16, u16)> = DEPCTR
        .iter()
        .map(|&(n, s, w)| (n, imm >> s & ((1 << w) - 1), (1 << w) - 1))
        .collect();
    let all_default = f.iter().all(|(_, v, max)| v == max);
    f.iter()
        .filter(|(_, v, max)| all_default || v != max)
        .map(|(n, v, _)| format!("{n}({v})"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// gfx12's hardware registers by id, as llvm-mc-19 names them for gfx1200.
fn hwreg_name_gfx12(id: u16) -> Option<&'static str> {
    Some(match id {
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        4 => "HW_REG_STATE_PRIV",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        10 => "HW_REG_PERF_SNAPSHOT_DATA",
        11 => "HW_REG_PERF_SNAPSHOT_PC_LO",
        12 => "HW_REG_PERF_SNAPSHOT_PC_HI",
        15 => "HW_REG_PERF_SNAPSHOT_DATA1",
        16 => "HW_REG_PERF_SNAPSHOT_DATA2",
        17 => "HW_REG_EXCP_FLAG_PRIV",
        18 => "HW_REG_EXCP_FLAG_USER",
        19 => "HW_REG_TRAP_CTRL",
        20 => "HW_REG_SCRATCH_BASE_LO",
        21 => "HW_REG_SCRATCH_BASE_HI",
        23 => "HW_REG_HW_ID1",
        24 => "HW_REG_HW_ID2",
        29 => "HW_REG_SHADER_CYCLES_LO",
        30 => "HW_REG_SHADER_CYCLES_HI",
        31 => "HW_REG_DVGPR_ALLOC_LO",
        32 => "HW_REG_DVGPR_ALLOC_HI",
        _ => return None,
    })
}

/// gfx10.3's hardware registers by id.
fn hwreg_name_gfx10(id: u16) -> Option<&'static str> {
    Some(match id {
        16 => "HW_REG_TBA_LO",
        17 => "HW_REG_TBA_HI",
        18 => "HW_REG_TMA_LO",
        19 => "HW_REG_TMA_HI",
        25 => "HW_REG_POPS_PACKER",
        27 => return None,
        _ => return hwreg_name(id),
    })
}

/// gfx11's hardware registers by id.
fn hwreg_name(id: u16) -> Option<&'static str> {
    Some(match id {
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        3 => "HW_REG_TRAPSTS",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        15 => "HW_REG_SH_MEM_BASES",
        18 => "HW_REG_PERF_SNAPSHOT_PC_LO",
        19 => "HW_REG_PERF_SNAPSHOT_PC_HI",
        20 => "HW_REG_FLAT_SCR_LO",
        21 => "HW_REG_FLAT_SCR_HI",
        23 => "HW_REG_HW_ID1",
        24 => "HW_REG_HW_ID2",
        27 => "HW_REG_PERF_SNAPSHOT_DATA",
        29 => "HW_REG_SHADER_CYCLES",
        _ => return None,
    })
}

/// gfx9's (CDNA's) hardware register names, as llvm-mc-19 names them for
/// gfx90a; gfx940 adds 20-24 (`gfx94`).
fn hwreg_name_gfx9(id: u16, gfx94: bool) -> Option<&'static str> {
    Some(match id {
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        3 => "HW_REG_TRAPSTS",
        4 => "HW_REG_HW_ID",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        15 => "HW_REG_SH_MEM_BASES",
        16 => "HW_REG_TBA_LO",
        17 => "HW_REG_TBA_HI",
        18 => "HW_REG_TMA_LO",
        19 => "HW_REG_TMA_HI",
        20 if gfx94 => "HW_REG_XCC_ID",
        21 if gfx94 => "HW_REG_SQ_PERF_SNAPSHOT_DATA",
        22 if gfx94 => "HW_REG_SQ_PERF_SNAPSHOT_DATA1",
        23 if gfx94 => "HW_REG_SQ_PERF_SNAPSHOT_PC_LO",
        24 if gfx94 => "HW_REG_SQ_PERF_SNAPSHOT_PC_HI",
        _ => return None,
    })
}

/// gfx9's `s_waitcnt`: vmcnt in bits 0-3 and 14-15, expcnt 4-6, lgkmcnt
/// 8-11.
pub fn waitcnt_gfx9(imm: u16) -> String {
    wait_text([
        ("vmcnt", imm & 15 | (imm >> 14 & 3) << 4, 63),
        ("expcnt", imm >> 4 & 7, 7),
        ("lgkmcnt", imm >> 8 & 15, 15),
    ])
}

/// gfx9's `gpr_idx(...)` mode mask (`s_set_gpr_idx_on`/`_mode`): which
/// operands VGPR indexing applies to.
pub fn gpr_idx(mask: u16) -> String {
    if mask > 15 {
        return format!("{mask:#x}");
    }
    let names: Vec<&str> = ["SRC0", "SRC1", "SRC2", "DST"]
        .iter()
        .enumerate()
        .filter(|&(k, _)| mask >> k & 1 != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("gpr_idx({})", names.join(","))
}

/// `hwreg(id, offset, size)`: id [5:0], offset [10:6], size-1 [15:11]; the
/// ids are `family`'s.
pub fn hwreg(imm: u16, family: crate::Family) -> String {
    let (id, off, size) = (imm & 63, imm >> 6 & 31, (imm >> 11) + 1);
    let name = match family {
        crate::Family::Gfx11 => hwreg_name(id),
        crate::Family::Gfx10 => hwreg_name_gfx10(id),
        crate::Family::Gfx90a => hwreg_name_gfx9(id, false),
        crate::Family::Gfx94 => hwreg_name_gfx9(id, true),
        crate::Family::Gfx12 => hwreg_name_gfx12(id),
    };
    let name = name.map_or(id.to_string(), str::to_string);
    if off == 0 && size == 32 {
        format!("hwreg({name})")
    } else {
        format!("hwreg({name}, {off}, {size})")
    }
}

fn msg_name(id: u16) -> Option<&'static str> {
    Some(match id {
        1 => "MSG_INTERRUPT",
        2 => "MSG_HS_TESSFACTOR",
        3 => "MSG_DEALLOC_VGPRS",
        5 => "MSG_STALL_WAVE_GEN",
        6 => "MSG_HALT_WAVES",
        9 => "MSG_GS_ALLOC_REQ",
        128 => "MSG_RTN_GET_DOORBELL",
        129 => "MSG_RTN_GET_DDID",
        130 => "MSG_RTN_GET_TMA",
        131 => "MSG_RTN_GET_REALTIME",
        132 => "MSG_RTN_SAVE_WAVE",
        133 => "MSG_RTN_GET_TBA",
        134 => "MSG_RTN_GET_TBA_TO_PC",
        _ => return None,
    })
}

/// `sendmsg(...)` for the message ids gfx11 knows; other values print raw.
pub fn sendmsg(imm: u16) -> String {
    match msg_name(imm) {
        Some(n) => format!("sendmsg({n})"),
        None if imm < 256 => format!("sendmsg({imm}, 0, 0)"),
        None => imm.to_string(),
    }
}

/// gfx10's `sendmsg(...)`: message id in bits 0-3, operation 4-6, GS
/// stream 8-9. A valid combination prints by name whatever the other bits
/// hold; otherwise the fields print as numbers, or, when other bits are
/// set, the whole value.
pub fn sendmsg_gfx10(imm: u16) -> String {
    sendmsg_gcn(imm, false)
}

/// gfx9's `sendmsg(...)`: gfx10's fields and names, without MSG_GET_DDID.
pub fn sendmsg_gfx9(imm: u16) -> String {
    sendmsg_gcn(imm, true)
}

fn sendmsg_gcn(imm: u16, gfx9: bool) -> String {
    let (id, op, stream) = (imm & 15, imm >> 4 & 7, imm >> 8 & 3);
    const GS_OPS: [&str; 4] = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
    let plain = match id {
        1 => Some("MSG_INTERRUPT"),
        4 => Some("MSG_SAVEWAVE"),
        5 => Some("MSG_STALL_WAVE_GEN"),
        6 => Some("MSG_HALT_WAVES"),
        7 => Some("MSG_ORDERED_PS_DONE"),
        8 => Some("MSG_EARLY_PRIM_DEALLOC"),
        9 => Some("MSG_GS_ALLOC_REQ"),
        10 => Some("MSG_GET_DOORBELL"),
        11 if !gfx9 => Some("MSG_GET_DDID"),
        _ => None,
    };
    let gs = if id == 2 { "MSG_GS" } else { "MSG_GS_DONE" };
    let named = match (id, op, stream) {
        (_, 0, 0) if plain.is_some() => plain.map(|n| n.to_string()),
        (3, 0, 0) => Some("MSG_GS_DONE, GS_OP_NOP".to_string()),
        (2 | 3, 1..=3, s) => Some(format!("{gs}, {}, {s}", GS_OPS[op as usize])),
        (15, 1, 0) => Some("MSG_SYSMSG, SYSMSG_OP_ECC_ERR_INTERRUPT".to_string()),
        (15, 2, 0) => Some("MSG_SYSMSG, SYSMSG_OP_REG_RD".to_string()),
        (15, 4, 0) => Some("MSG_SYSMSG, SYSMSG_OP_TTRACE_PC".to_string()),
        _ => None,
    };
    match named {
        Some(n) => format!("sendmsg({n})"),
        None if imm & !0x37F == 0 => format!("sendmsg({id}, {op}, {stream})"),
        None => imm.to_string(),
    }
}

/// A plain 16-bit immediate: small values in decimal, others in hex.
pub fn u16_imm(v: u16) -> String {
    if v <= 64 {
        v.to_string()
    } else {
        format!("{v:#x}")
    }
}

/// `s_version`'s operand.
pub fn version(v: u16) -> String {
    match v {
        0 => "UC_VERSION_GFX7".into(),
        4 => "UC_VERSION_GFX10".into(),
        6 => "UC_VERSION_GFX11".into(),
        _ => u16_imm(v),
    }
}

/// MTBUF `format:` text for gfx11's unified formats (1, the default, is
/// not printed).
pub fn buf_format(f: u32) -> String {
    const NAMES: [&str; 64] = [
        "INVALID",
        "8_UNORM",
        "8_SNORM",
        "8_USCALED",
        "8_SSCALED",
        "8_UINT",
        "8_SINT",
        "16_UNORM",
        "16_SNORM",
        "16_USCALED",
        "16_SSCALED",
        "16_UINT",
        "16_SINT",
        "16_FLOAT",
        "8_8_UNORM",
        "8_8_SNORM",
        "8_8_USCALED",
        "8_8_SSCALED",
        "8_8_UINT",
        "8_8_SINT",
        "32_UINT",
        "32_SINT",
        "32_FLOAT",
        "16_16_UNORM",
        "16_16_SNORM",
        "16_16_USCALED",
        "16_16_SSCALED",
        "16_16_UINT",
        "16_16_SINT",
        "16_16_FLOAT",
        "10_11_11_FLOAT",
        "11_11_10_FLOAT",
        "10_10_10_2_UNORM",
        "10_10_10_2_SNORM",
        "10_10_10_2_UINT",
        "10_10_10_2_SINT",
        "2_10_10_10_UNORM",
        "2_10_10_10_SNORM",
        "2_10_10_10_USCALED",
        "2_10_10_10_SSCALED",
        "2_10_10_10_UINT",
        "2_10_10_10_SINT",
        "8_8_8_8_UNORM",
        "8_8_8_8_SNORM",
        "8_8_8_8_USCALED",
        "8_8_8_8_SSCALED",
        "8_8_8_8_UINT",
        "8_8_8_8_SINT",
        "32_32_UINT",
        "32_32_SINT",
        "32_32_FLOAT",
        "16_16_16_16_UNORM",
        "16_16_16_16_SNORM",
        "16_16_16_16_USCALED",
        "16_16_16_16_SSCALED",
        "16_16_16_16_UINT",
        "16_16_16_16_SINT",
        "16_16_16_16_FLOAT",
        "32_32_32_UINT",
        "32_32_32_SINT",
        "32_32_32_FLOAT",
        "32_32_32_32_UINT",
        "32_32_32_32_SINT",
        "32_32_32_32_FLOAT",
    ];
    match NAMES.get(f as usize) {
        Some(n) => format!("[BUF_FMT_{n}]"),
        None => f.to_string(),
    }
}

/// MTBUF `format:` text for gfx10's unified formats: gfx11's up to 29,
/// then each packed layout with its own run of number kinds
/// (`resource::unified_format`).
pub fn buf_format_gfx10(f: u32) -> String {
    if f < 30 {
        return buf_format(f);
    }
    match crate::resource::unified_format(crate::Family::Gfx10, f) {
        Some((layout, kind)) => format!("[BUF_FMT_{layout}_{kind}]"),
        None => f.to_string(),
    }
}
