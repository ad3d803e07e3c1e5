//! Generates the opcode table as Rust (`$OUT_DIR/ops.rs`) from each
//! family's `data/FAMILY-ops.tsv`, the llvm-mc-derived opcode data. The ops
//! are the union of the families': a mnemonic with one set of operand types
//! is one op, whatever family encodes it and at what opcode. Generated: one
//! `Op` constant per op (`Op::V_FMA_F32`), the static `OpInfo` array with
//! each op's semantic class and implicit operands (`src/class.rs`, derived
//! from its mnemonic here), each op's `Encoding` per family, and `match`
//! lookups by mnemonic and, per family, by encoding. Nothing is parsed at run time, and a handler is bound by a constant
//! or a class the compiler checks instead of by a string.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The JIT's lowering classes, the crate's own `src/jit.rs`: the words of
/// `data/jit-classes.tsv` are checked against its variants.
#[allow(dead_code)]
#[path = "src/jit.rs"]
mod jit;

/// The JIT's class table: each op the JIT compiles, by mnemonic.
const JIT_CLASSES: &str = "data/jit-classes.tsv";

const FORMATS: &[&str] = &[
    "Sop1",
    "Sop2",
    "Sopk",
    "Sopc",
    "Sopp",
    "Smem",
    "Vop1",
    "Vop2",
    "Vop3",
    "Vop3sd",
    "Vop3p",
    "Vopc",
    "Vopd",
    "Ds",
    "Flat",
    "Global",
    "Scratch",
    "Mubuf",
    "Mtbuf",
    "Mimg",
    "Exp",
    "Vinterp",
    "LdsDirect",
    "Mai",
];
const TYPES: &[&str] = &[
    "None", "B16", "F16", "BF16", "B32", "F32", "V2F16", "V2B16", "V2BF16", "B64", "F64", "B96",
    "B128", "B256", "B512", "B1024", "Mask",
];

/// The families whose tables are generated, in `Family` order, with the
/// TSV each comes from.
const FAMILIES: [(&str, &str); 5] = [
    ("Gfx11", "data/gfx11-ops.tsv"),
    ("Gfx12", "data/gfx12-ops.tsv"),
    ("Gfx10", "data/gfx10-ops.tsv"),
    ("Gfx90a", "data/gfx90a-ops.tsv"),
    ("Gfx94", "data/gfx94-ops.tsv"),
];

/// An op's encoding in one family.
#[derive(Clone, Copy)]
struct Enc<'a> {
    format: &'a str,
    opcode: u16,
    vop3: Option<u16>,
    vopd_y: Option<u16>,
}

/// One op of the union of the families' tables: a mnemonic with one set of
/// operand types (so one semantics), and its encoding in each family that
/// has it.
struct Row<'a> {
    name: &'a str,
    /// The name of its `Op` constant (`V_WMMA_F32_16X16X16_F16_GFX12` where
    /// gfx12 gives a mnemonic other operands than gfx11).
    constant: String,
    /// Its native format in the first family that has it: what kind of
    /// instruction it is (the executor and the classes read it).
    format: &'a str,
    dst: [&'a str; 2],
    src: [&'a str; 3],
    enc: [Option<Enc<'a>>; FAMILIES.len()],
}

/// One line of a family's TSV, checked: the name, encoding and types.
fn parse<'a>(
    file: &str,
    line_no: usize,
    line: &'a str,
) -> (&'a str, Enc<'a>, [&'a str; 2], [&'a str; 3]) {
    let bad = |why: &str| panic!("{file} line {line_no}: {why}: {line}");
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() != 11 {
        bad("expected 11 tab-separated fields");
    }
    let num = |s: &str| -> Option<u16> {
        (s != "-").then(|| s.parse().unwrap_or_else(|_| bad("bad number")))
    };
    let check = |s, set: &[&str]| {
        if !set.contains(&s) {
            bad("unknown format or type");
        }
    };
    check(f[1], FORMATS);
    f[6..].iter().for_each(|t| check(t, TYPES));
    let vopd_y = num(f[5]);
    let enc = Enc {
        format: f[1],
        // VOPD ops are keyed by their X opcode, or Y if they are Y-only.
        opcode: num(f[4])
            .or(vopd_y)
            .or(num(f[2]))
            .unwrap_or_else(|| bad("no opcode")),
        vop3: num(f[3]),
        vopd_y,
    };
    (f[0], enc, [f[6], f[7]], [f[8], f[9], f[10]])
}

/// The union of the families' tables: gfx11's ops in its order, then each
/// later family's ops joined to the same mnemonic with the same operand
/// types, or appended.
fn union<'a>(tables: &'a [String]) -> Vec<Row<'a>> {
    let mut rows: Vec<Row> = Vec::new();
    for (family, (tsv, (_, file))) in tables.iter().zip(FAMILIES).enumerate() {
        let lines = tsv
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.starts_with('#') && !l.is_empty());
        for (i, line) in lines {
            let (name, enc, dst, src) = parse(file, i + 1, line);
            let same = rows
                .iter()
                .position(|r| r.name == name && r.dst == dst && r.src == src);
            if let Some(r) = same.filter(|&r| rows[r].enc[family].is_none()) {
                rows[r].enc[family] = Some(enc);
                continue;
            }
            let taken = rows.iter().any(|r| r.name == name);
            let mut constant = name.to_ascii_uppercase();
            if taken {
                constant += &format!("_{}", FAMILIES[family].0.to_ascii_uppercase());
            }
            let mut row = Row {
                name,
                constant,
                format: enc.format,
                dst,
                src,
                enc: [None; FAMILIES.len()],
            };
            row.enc[family] = Some(enc);
            rows.push(row);
        }
    }
    rows
}

fn main() {
    let mut tables = Vec::new();
    for (_, file) in FAMILIES {
        println!("cargo:rerun-if-changed={file}");
        tables.push(std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {file}: {e}")));
    }
    let rows = union(&tables);
    println!("cargo:rerun-if-changed={JIT_CLASSES}");
    println!("cargo:rerun-if-changed=src/jit.rs");
    let jit_tsv =
        std::fs::read_to_string(JIT_CLASSES).unwrap_or_else(|e| panic!("read {JIT_CLASSES}: {e}"));
    let jit = jit_classes(&jit_tsv, &rows);
    let mut out =
        String::from("// Generated by build.rs from data/*-ops.tsv and data/jit-classes.tsv.\n\n");
    constants(&mut out, &rows);
    let mem_ops = mem_ops(&rows);
    mem_op_constants(&mut out, &mem_ops);
    infos(&mut out, &rows, &mem_ops, &jit);
    encodings(&mut out, &rows);
    lookups(&mut out, &rows);
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("ops.rs");
    std::fs::write(dest, out).expect("write ops.rs");
}

fn constants(out: &mut String, rows: &[Row]) {
    out.push_str("#[allow(missing_docs)]\nimpl Op {\n");
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(
            out,
            "    /// `{}`\n    pub const {}: Op = Op({i});",
            r.name, r.constant
        );
    }
    out.push_str("}\n\n");
}

fn infos(
    out: &mut String,
    rows: &[Row],
    mem_ops: &BTreeMap<&str, usize>,
    jit: &BTreeMap<&str, String>,
) {
    // The first op of each name, which a VOPD half's twin is.
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        index.entry(r.name).or_insert(i);
    }
    let _ = writeln!(out, "pub(crate) static INFOS: [OpInfo; {}] = [", rows.len());
    for (i, r) in rows.iter().enumerate() {
        // A mnemonic's JIT class is its first op's: one of the same name
        // with other operands (a later family's) has its own semantics.
        let jit = match jit.get(r.name) {
            Some(class) if index[r.name] == i => format!("Some({class})"),
            _ => "None".to_string(),
        };
        let _ = writeln!(
            out,
            "    OpInfo {{ name: {:?}, format: Format::{}, dst: [Ty::{}, Ty::{}], src: [Ty::{}, Ty::{}, Ty::{}], class: {}, implicit: Implicit({}), jit: {jit} }},",
            r.name, r.format, r.dst[0], r.dst[1], r.src[0], r.src[1], r.src[2],
            class(r, &index, mem_ops), implicit(r.name)
        );
    }
    out.push_str("];\n\n");
}

/// Each op's encoding in each family, `None` where the family lacks it.
fn encodings(out: &mut String, rows: &[Row]) {
    let opt = |v: Option<u16>| v.map_or("None".to_string(), |v| format!("Some({v})"));
    let _ = writeln!(
        out,
        "pub(crate) static ENCODINGS: [[Option<Encoding>; {}]; {}] = [",
        FAMILIES.len(),
        rows.len()
    );
    for r in rows {
        let each: Vec<String> = r
            .enc
            .iter()
            .map(|e| match e {
                Some(e) => format!(
                    "Some(Encoding {{ format: Format::{}, opcode: {}, vop3: {}, vopd_y: {} }})",
                    e.format,
                    e.opcode,
                    opt(e.vop3),
                    opt(e.vopd_y)
                ),
                None => "None".into(),
            })
            .collect();
        let _ = writeln!(out, "    [{}],", each.join(", "));
    }
    out.push_str("];\n\n");
}

// ---- JIT classes -----------------------------------------------------

/// `data/jit-classes.tsv` checked against the ops and `src/jit.rs`: each
/// mnemonic's class as a Rust expression.
fn jit_classes<'a>(tsv: &'a str, rows: &[Row]) -> BTreeMap<&'a str, String> {
    let mut classes = BTreeMap::new();
    let lines = tsv
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
    for (i, line) in lines {
        let bad = |why: &str| -> ! { panic!("{JIT_CLASSES} line {}: {why}: {line}", i + 1) };
        let Some((name, class)) = line.split_once('\t') else {
            bad("expected a mnemonic, a tab and a class")
        };
        if !rows.iter().any(|r| r.name == name) {
            bad("no family has this op");
        }
        let words: Vec<&str> = class.split_whitespace().collect();
        let class = jit_class(&words).unwrap_or_else(|why| bad(&why));
        if classes.insert(name, class).is_some() {
            bad("a second row for this op");
        }
    }
    classes
}

/// One class's words as a Rust expression, each checked.
fn jit_class(words: &[&str]) -> Result<String, String> {
    /// `word` as a variant of the enum `ty` whose variants are `names`.
    fn variant(ty: &str, names: &[&str], word: &str) -> Result<String, String> {
        match names.contains(&word) {
            true => Ok(format!("jit::{ty}::{word}")),
            false => Err(format!(
                "`{word}` is not a jit::{ty} ({})",
                names.join(", ")
            )),
        }
    }
    fn count(word: &str, allowed: &[u8]) -> Result<u8, String> {
        word.parse()
            .ok()
            .filter(|n| allowed.contains(n))
            .ok_or_else(|| format!("`{word}` is not one of {allowed:?}"))
    }
    let shape = |words: &[&str]| -> Result<String, String> {
        Ok(match words {
            ["one", n] => format!(
                "jit::LdsShape::One {{ dwords: {} }}",
                count(n, &[1, 2, 3, 4])?
            ),
            ["two", n, rest @ ..] if rest.is_empty() || rest == ["stride64"] => format!(
                "jit::LdsShape::Two {{ dwords: {}, stride64: {} }}",
                count(n, &[1, 2])?,
                !rest.is_empty()
            ),
            _ => return Err("an LDS shape is `one N` or `two N [stride64]`".into()),
        })
    };
    let scalar = |words: &[&str]| -> Result<String, String> {
        match words {
            ["Cmp", c] => Ok(format!(
                "jit::Scalar::Cmp({})",
                variant("IntCmp", jit::IntCmp::NAMES, c)?
            )),
            [s] if *s != "Cmp" => variant("Scalar", jit::Scalar::NAMES, s),
            _ => Err("a scalar op is `S` or `Cmp C`".into()),
        }
    };
    let class = match words {
        ["Hint"] => "Hint".to_string(),
        ["Lane", l] => format!("Lane({})", variant("Lane", jit::Lane::NAMES, l)?),
        ["FCmp", c] => format!("FCmp({})", variant("FloatCmp", jit::FloatCmp::NAMES, c)?),
        ["ICmp", c] => format!("ICmp({})", variant("IntCmp", jit::IntCmp::NAMES, c)?),
        ["Carry", k] => format!("Carry({})", variant("Carry", jit::Carry::NAMES, k)?),
        ["Shift64", k] => format!("Shift64({})", variant("Shift64", jit::Shift64::NAMES, k)?),
        ["F64", k] => format!("F64({})", variant("F64", jit::F64::NAMES, k)?),
        ["Mad64", s @ ("signed" | "unsigned")] => {
            format!("Mad64 {{ signed: {} }}", *s == "signed")
        }
        ["LdsLoad", rest @ ..] => format!("LdsLoad({})", shape(rest)?),
        ["LdsStore", rest @ ..] => format!("LdsStore({})", shape(rest)?),
        ["ScalarLoad", n] => format!(
            "ScalarLoad {{ dwords: {} }}",
            count(n, &[1, 2, 3, 4, 8, 16])?
        ),
        ["GlobalLoad", n, rest @ ..] if rest.is_empty() || rest == ["flat"] => format!(
            "GlobalLoad {{ dwords: {}, flat: {} }}",
            count(n, &[1, 2, 3, 4])?,
            !rest.is_empty()
        ),
        ["GlobalStore"] => "GlobalStore { flat: false }".to_string(),
        ["GlobalStore", "flat"] => "GlobalStore { flat: true }".to_string(),
        ["ScratchLoad", n, rest @ ..] if rest.is_empty() || rest == ["signed"] => format!(
            "ScratchLoad {{ bytes: {}, signed: {} }}",
            count(n, &[1, 2, 4, 8, 12, 16])?,
            !rest.is_empty()
        ),
        ["ScratchStore", n] => format!(
            "ScratchStore {{ bytes: {} }}",
            count(n, &[1, 2, 4, 8, 12, 16])?
        ),
        ["ReadLane"] => "ReadLane { first: false }".to_string(),
        ["ReadLane", "first"] => "ReadLane { first: true }".to_string(),
        ["GetPc"] => "GetPc".to_string(),
        ["Scalar", rest @ ..] => format!("Scalar({})", scalar(rest)?),
        ["Scalar64", rest @ ..] => format!("Scalar64({})", scalar(rest)?),
        ["Branch", c] => format!("Branch({})", variant("Cond", jit::Cond::NAMES, c)?),
        _ => return Err("not a class (see the list at the top of the file)".into()),
    };
    Ok(format!("jit::Class::{class}"))
}

// ---- semantic classes ------------------------------------------------

const CONDS: &[(&str, &str)] = &[
    ("f", "F"),
    ("lt", "Lt"),
    ("eq", "Eq"),
    ("le", "Le"),
    ("gt", "Gt"),
    ("lg", "Lg"),
    ("ge", "Ge"),
    ("o", "O"),
    ("u", "U"),
    ("nge", "Nge"),
    ("nlg", "Nlg"),
    ("ngt", "Ngt"),
    ("nle", "Nle"),
    ("neq", "Neq"),
    ("nlt", "Nlt"),
    ("t", "T"),
    // gfx10's float always-true (`v_cmp_tru_f32`), gfx11's `v_cmp_t_f32`.
    ("tru", "T"),
    ("ne", "Ne"),
    ("class", "Class"),
];
const NUMS: &[(&str, &str)] = &[
    ("i16", "I16"),
    ("u16", "U16"),
    ("f16", "F16"),
    ("b32", "B32"),
    ("i32", "I32"),
    ("u32", "U32"),
    ("f32", "F32"),
    ("b64", "B64"),
    ("i64", "I64"),
    ("u64", "U64"),
    ("f64", "F64"),
];
const RMWS: &[(&str, &str)] = &[
    ("add", "Add"),
    ("sub", "Sub"),
    ("inc", "Inc"),
    ("dec", "Dec"),
    ("min", "Min"),
    ("max", "Max"),
    ("and", "And"),
    ("or", "Or"),
    ("xor", "Xor"),
];
/// Vector-memory formats and the segment prefix of their mnemonics.
const SEGMENTS: &[(&str, &str, &str)] = &[
    ("Global", "global_", "Global"),
    ("Flat", "flat_", "Flat"),
    ("Scratch", "scratch_", "Scratch"),
    ("Mubuf", "buffer_", "Buffer"),
    ("Mtbuf", "tbuffer_", "Tbuffer"),
];

fn word<'a>(table: &[(&str, &'a str)], s: &str) -> Option<&'a str> {
    table.iter().find(|(k, _)| *k == s).map(|&(_, v)| v)
}

/// A vector-memory op's segment and the rest of its mnemonic.
fn segment<'a>(r: &Row<'a>) -> Option<(&'static str, &'a str)> {
    let &(_, prefix, space) = SEGMENTS.iter().find(|(f, _, _)| *f == r.format)?;
    Some((space, r.name.strip_prefix(prefix)?))
}

/// `RMW_NUM` or `RMW_rtn_NUM` as `(Rmw, Num, rtn)`.
fn rmw(rest: &str) -> Option<(&'static str, &'static str, bool)> {
    let (op, num) = rest.split_once('_')?;
    let (num, rtn) = match num.strip_prefix("rtn_") {
        Some(num) => (num, true),
        None => (num, false),
    };
    Some((word(RMWS, op)?, word(NUMS, num)?, rtn))
}

/// The class of a row as a Rust expression.
fn class(r: &Row, index: &BTreeMap<&str, usize>, mem_ops: &BTreeMap<&str, usize>) -> String {
    let name = r.name;
    if r.format == "Vopd" {
        let twin = name.replacen("v_dual_", "v_", 1);
        if let Some(i) = index.get(twin.as_str()) {
            return format!("Class::Dual(Op({i}))");
        }
    }
    let cmp = name
        .strip_prefix("v_cmpx_")
        .or_else(|| name.strip_prefix("v_cmp_"));
    if let Some((cond, num)) = cmp.and_then(|rest| rest.rsplit_once('_')) {
        if let (Some(cond), Some(num)) = (word(CONDS, cond), word(NUMS, num)) {
            return format!("Class::Cmp {{ cond: Cond::{cond}, num: Num::{num} }}");
        }
    }
    if r.format == "Ds" {
        if let Some((rmw, num, rtn)) = name.strip_prefix("ds_").and_then(rmw) {
            return format!(
                "Class::Rmw {{ space: Space::Lds, rmw: Rmw::{rmw}, num: Num::{num}, rtn: {rtn} }}"
            );
        }
    }
    if let Some((space, rest)) = segment(r) {
        if let Some((rmw, num, false)) = rest.strip_prefix("atomic_").and_then(rmw) {
            return format!(
                "Class::Rmw {{ space: Space::{space}, rmw: Rmw::{rmw}, num: Num::{num}, rtn: false }}"
            );
        }
        return format!(
            "Class::Mem {{ space: Space::{space}, op: MemOp({}) }}",
            mem_ops[rest]
        );
    }
    "Class::Own".to_string()
}

/// Every vector-memory operation without its segment prefix, numbered.
fn mem_ops<'a>(rows: &[Row<'a>]) -> BTreeMap<&'a str, usize> {
    let mut ops: BTreeMap<&str, usize> = rows
        .iter()
        .filter_map(|r| segment(r))
        .map(|(_, rest)| (rest, 0))
        .collect();
    for (i, n) in ops.values_mut().enumerate() {
        *n = i;
    }
    ops
}

fn mem_op_constants(out: &mut String, ops: &BTreeMap<&str, usize>) {
    out.push_str("#[allow(missing_docs)]\nimpl MemOp {\n");
    for (name, i) in ops {
        let _ = writeln!(
            out,
            "    /// `*_{name}`\n    pub const {}: MemOp = MemOp({i});",
            name.to_ascii_uppercase()
        );
    }
    out.push_str("}\n\n");
    let _ = writeln!(
        out,
        "pub(crate) static MEM_OP_NAMES: [&str; {}] = [",
        ops.len()
    );
    for name in ops.keys() {
        let _ = writeln!(out, "    {name:?},");
    }
    out.push_str("];\n\n");
    let _ = writeln!(
        out,
        "pub(crate) static MEM_OP_BYTES: [u8; {}] = [",
        ops.len()
    );
    for name in ops.keys() {
        let _ = writeln!(out, "    {},", access_bytes(name));
    }
    out.push_str("];\n\n");
}

/// Bytes one lane's access moves in memory, from the op's width suffix
/// (`b128`, `u8`) or its format components (`format_xyz`, halved for
/// `d16`); a gfx12 `*_block` (spills of up to 32 VGPRs) counts its largest,
/// 128; 0 for a cache control (`gl0_inv`, `global_wb`, gfx9's
/// `buffer_wbinvl1_vol`). gfx10 spells
/// widths as words (`gfx10_access_bytes`).
fn access_bytes(op: &str) -> u32 {
    if let Some((_, tail)) = op.rsplit_once("format_") {
        // gfx10 puts `d16_hi_` after `format_` (`load_format_d16_hi_x`).
        let xyzw = tail.rsplit('_').next().unwrap_or(tail);
        let size = if op.contains("d16") { 2 } else { 4 };
        return size * xyzw.len() as u32;
    }
    let width = op.rsplit('_').next().unwrap_or("");
    let bytes = match width {
        "block" => 128,
        // gfx9's: buffer_wbinvl1(_vol), buffer_wbl2, buffer_invl2.
        "inv" | "wb" | "wbinv" | "wbinvl1" | "vol" | "wbl2" | "invl2" => return 0,
        _ => width
            .trim_start_matches(['b', 'u', 'i', 'f'])
            .parse::<u32>()
            .map_or(0, |bits| bits / 8),
    };
    match bytes {
        0 => gfx10_access_bytes(op),
        _ => bytes,
    }
}

/// gfx10's widths: `dword`, `dwordx2`-`x4`, `(s|u)byte`, `(s|u)short`
/// anywhere in the name (`load_short_d16_hi`, `load_dword_addtid`), and
/// atomics of a dword, or two with `_x2`.
fn gfx10_access_bytes(op: &str) -> u32 {
    if op.starts_with("atomic_") {
        return if op.ends_with("_x2") { 8 } else { 4 };
    }
    op.split('_')
        .rev()
        .find_map(|w| match w {
            "byte" | "sbyte" | "ubyte" => Some(1),
            "short" | "sshort" | "ushort" => Some(2),
            "dword" => Some(4),
            "dwordx2" => Some(8),
            "dwordx3" => Some(12),
            "dwordx4" => Some(16),
            _ => None,
        })
        .unwrap_or(0)
}

/// The implicit-operand bits of a mnemonic (`Implicit` in `src/class.rs`).
fn implicit(name: &str) -> u16 {
    let bits = [
        name.contains("fmac")
            || name.contains("dot2acc")
            || name.contains("_mac_")
            // gfx10.3's v_dot2c_f32_f16 and v_dot4c_i32_i8.
            || name.starts_with("v_dot2c_")
            || name.starts_with("v_dot4c_"),
        name.starts_with("v_cmpx_"),
        // gfx12's v_s_exp_f32 and kin: transcendentals into an SGPR.
        matches!(name, "v_readlane_b32" | "v_readfirstlane_b32") || name.starts_with("v_s_"),
        // gfx9's v_madak/v_madmk take their K the same way.
        name.contains("fmaak") || name.contains("madak"),
        name.contains("fmamk") || name.contains("madmk"),
        matches!(name, "v_swap_b32" | "v_swaprel_b32"),
        name.starts_with("v_div_fmas"),
        name.contains("_atomic_"),
        name.ends_with("class_f16"),
        name.starts_with("s_sendmsg_rtn"),
    ];
    bits.iter()
        .enumerate()
        .fold(0, |acc, (k, &set)| acc | (u16::from(set) << k))
}

/// The `match` lookups: by name (the first op of a name), and per family by
/// encoding. Where two ops of a family share a key the later one wins, as
/// the table's order says.
fn lookups(out: &mut String, rows: &[Row]) {
    out.push_str("pub(crate) fn by_name(name: &str) -> Option<Op> {\n    Some(Op(match name {\n");
    let mut named = std::collections::BTreeSet::new();
    for (i, r) in rows.iter().enumerate() {
        if named.insert(r.name) {
            let _ = writeln!(out, "        {:?} => {i},", r.name);
        }
    }
    out.push_str("        _ => return None,\n    }))\n}\n\n");
    for (family, (variant, _)) in FAMILIES.iter().enumerate() {
        let fam = variant.to_ascii_lowercase();
        let mut by_enc = BTreeMap::new();
        let mut by_vop3 = BTreeMap::new();
        let mut by_y = BTreeMap::new();
        for (i, r) in rows.iter().enumerate() {
            let Some(e) = r.enc[family] else { continue };
            // Y-only VOPD ops (opcode >= 16) have no X encoding.
            if e.format != "Vopd" || e.opcode < 16 {
                by_enc.insert((e.format, e.opcode), i);
            }
            if let Some(v) = e.vop3 {
                by_vop3.insert(v, i);
            }
            if let Some(y) = e.vopd_y {
                by_y.insert(y, i);
            }
        }
        let _ = writeln!(
            out,
            "pub(crate) fn by_encoding_{fam}(format: Format, opcode: u16) -> Option<Op> {{\n    Some(Op(match (format, opcode) {{"
        );
        for ((format, opcode), i) in &by_enc {
            let _ = writeln!(out, "        (Format::{format}, {opcode}) => {i},");
        }
        out.push_str("        _ => return None,\n    }))\n}\n\n");
        for (name, map) in [("by_vop3", &by_vop3), ("by_vopd_y", &by_y)] {
            if map.is_empty() {
                // gfx10 has no VOPD.
                let _ = writeln!(
                    out,
                    "pub(crate) fn {name}_{fam}(_opcode: u16) -> Option<Op> {{\n    None\n}}\n"
                );
                continue;
            }
            let _ = writeln!(
                out,
                "pub(crate) fn {name}_{fam}(opcode: u16) -> Option<Op> {{\n    Some(Op(match opcode {{"
            );
            for (opcode, i) in map {
                let _ = writeln!(out, "        {opcode} => {i},");
            }
            out.push_str("        _ => return None,\n    }))\n}\n\n");
        }
    }
}
