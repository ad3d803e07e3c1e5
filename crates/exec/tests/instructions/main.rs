//! Instruction-level tests: every implemented opcode, run on one wave with
//! inputs and expected results written in `cases/*.txt` (the language is
//! described in `syntax.rs`, the expectations' reasons are beside them).
//!
//! llvm-mc-19 assembles each block (these tests fail, never skip, when the
//! Debian package llvm-19 is missing); the executor decodes and runs the
//! bytes through its ordinary handlers on [`softgpu_exec::harness::Bench`];
//! every register, lane, LDS, scratch and test-buffer byte is compared with
//! what the case expects, and whatever it does not name must be unchanged.
//! `coverage.rs` counts the cases per opcode and fails when an implemented
//! opcode has none. `jit_classes.rs` holds every
//! class of the JIT's op table to the interpreter, op by op.
//! `boundary.rs` drives the bench directly, for what the
//! case language cannot state: the edges of the wave-wide memory fast
//! paths, memory after a fault, a second allocation.

mod asm;
mod boundary;
mod coverage;
mod jit;
mod jit_classes;
mod state;
mod syntax;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use softgpu_exec::harness::Bench;
use softgpu_isa::{decode, Family, Format};

use asm::Variant;
use state::State;
use syntax::{Block, Case};

/// Instructions a snippet may run (a loop in a case is a bug in the case).
const BUDGET: u64 = 10_000;

/// The JIT mode the run asks for: `SOFTGPU_JIT` as the tests see it
/// (`verify` unless set, so both tiers are held to the same results).
pub fn jit_mode() -> softgpu_exec::JitMode {
    match softgpu_test_support::env::var("SOFTGPU_JIT") {
        Some(v) => softgpu_exec::JitMode::parse(&v.to_string_lossy())
            .unwrap_or_else(|e| panic!("SOFTGPU_JIT: {e}")),
        None => softgpu_exec::JitMode::On,
    }
}

fn cases_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/instructions/cases"
    ))
}

/// A block's machine code for one variant.
pub struct Code {
    pub bytes: Vec<u8>,
    /// Where each of its instructions starts.
    pub starts: Vec<usize>,
}

pub struct AssembledBlock {
    pub block: Block,
    pub variants: Vec<(Variant, Result<Code, String>)>,
}

/// Every case file, parsed and assembled once per test process.
pub struct Suite {
    /// File stem → its blocks, or why the file does not parse.
    pub files: BTreeMap<String, Result<Vec<AssembledBlock>, String>>,
    /// The default-target blocks' gfx10 variants tried ([`gfx10_variants`]),
    /// and how many of them run: the rest are not gfx10 code.
    pub gfx10_tried: usize,
    pub gfx10_run: usize,
}

/// The gfx10 part default-target blocks are also run on, where their
/// code is gfx10 code too.
const GFX10_TRY: &str = "gfx1030";

pub fn suite() -> &'static Suite {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    SUITE.get_or_init(load_suite)
}

fn load_suite() -> Suite {
    let mut parsed: BTreeMap<String, Result<Vec<Block>, String>> = BTreeMap::new();
    let entries = std::fs::read_dir(cases_dir()).expect("tests/instructions/cases");
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "txt") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let name = format!("cases/{stem}.txt");
            parsed.insert(stem, syntax::parse_file(&name, &text));
        }
    }
    // Every line of every block, grouped by how it is assembled.
    let mut lines: BTreeMap<Variant, Vec<String>> = BTreeMap::new();
    // (file, block, variant, its lines, whether it is a gfx10 try)
    let mut placed: Vec<(String, usize, Variant, std::ops::Range<usize>, bool)> = Vec::new();
    for (stem, blocks) in &parsed {
        let Ok(blocks) = blocks else { continue };
        for (b, block) in blocks.iter().enumerate() {
            let all = variants(&block.directives).into_iter().map(|v| (v, false));
            for (variant, tried) in all.chain(gfx10_variants(block)) {
                let list = lines.entry(variant.clone()).or_default();
                let start = list.len();
                list.extend(block.asm.iter().map(|l| asm::substitute(l, variant.wave64)));
                placed.push((stem.clone(), b, variant, start..list.len(), tried));
            }
        }
    }
    let assembled: BTreeMap<Variant, Vec<Result<Vec<u8>, String>>> = lines
        .iter()
        .map(|(v, l)| (v.clone(), asm::assemble(v, l)))
        .collect();
    let mut files: BTreeMap<String, Result<Vec<AssembledBlock>, String>> = parsed
        .into_iter()
        .map(|(stem, blocks)| {
            let blocks = blocks.map(|bs| {
                bs.into_iter()
                    .map(|block| AssembledBlock {
                        block,
                        variants: Vec::new(),
                    })
                    .collect()
            });
            (stem, blocks)
        })
        .collect();
    let (mut gfx10_tried, mut gfx10_run) = (0, 0);
    for (stem, b, variant, range, tried) in placed {
        let encoded = &assembled[&variant][range];
        let code = join(encoded);
        if tried {
            gfx10_tried += 1;
            if !runs_on_gfx10(&variant, &code) {
                continue;
            }
            gfx10_run += 1;
        }
        if let Some(Ok(blocks)) = files.get_mut(&stem) {
            blocks[b].variants.push((variant, code));
        }
    }
    Suite {
        files,
        gfx10_tried,
        gfx10_run,
    }
}

/// The gfx10 variants a default-target block is tried in, each marked as
/// a try. A block of gfx11 machine code written out (`[0x..] text`: true16
/// operands) is gfx11's alone: its bytes mean other instructions on gfx10.
fn gfx10_variants(block: &Block) -> Vec<(Variant, bool)> {
    let raw = block.asm.iter().any(|l| l.trim_start().starts_with('['));
    if raw || !block.directives.default_targets {
        return Vec::new();
    }
    let mut d = block.directives.clone();
    d.targets = vec![GFX10_TRY.to_string()];
    variants(&d).into_iter().map(|v| (v, true)).collect()
}

/// Whether a tried gfx10 variant runs: llvm-mc-19 assembled it for
/// gfx1030 (else its instructions are not gfx10's, or not in that form),
/// and no instruction of it reads a format its cases give in gfx11's
/// numbering: an image (gfx11 T#s) or a format load or store (gfx11's
/// unified buffer formats, in the V# or MTBUF's `format:`; gfx10 numbers
/// formats its own way, and `gfx10_buffer.txt` has gfx10's own cases).
fn runs_on_gfx10(variant: &Variant, code: &Result<Code, String>) -> bool {
    let Ok(code) = code else { return false };
    let family = Family::of_target(&variant.target).expect("a known target");
    !code.starts.iter().any(|&at| {
        decode(family, &code.bytes[at..])
            .is_ok_and(|i| i.op.info().format == Format::Mimg || i.op.name().contains("_format_"))
    })
}

/// How many default-target block variants also ran on gfx1030 (printed
/// with `--nocapture`): the shared ops' cases hold for gfx10 too.
#[test]
fn gfx10_tries_are_counted() {
    let s = suite();
    println!(
        "{GFX10_TRY}: {} of {} default-target block variants ran (the rest are not gfx10 code)",
        s.gfx10_run, s.gfx10_tried
    );
    assert!(s.gfx10_run > 0, "no block ran on {GFX10_TRY}");
}

/// The variants a block runs in: its targets × its wave sizes. CDNA runs
/// wave64 only, so a CDNA target's block runs in wave64 whatever it says.
fn variants(d: &syntax::Directives) -> Vec<Variant> {
    d.targets
        .iter()
        .flat_map(|t| {
            let gcn = softgpu_isa::target::wave64_only(t);
            let waves = [(d.wave32 && !gcn, false), (d.wave64 || gcn, true)];
            waves
                .into_iter()
                .filter(|w| w.0)
                .map(move |(_, wave64)| Variant {
                    target: t.clone(),
                    wave64,
                    mattr: d.mattr.clone(),
                })
        })
        .collect()
}

fn join(encoded: &[Result<Vec<u8>, String>]) -> Result<Code, String> {
    let mut bytes = Vec::new();
    let mut starts = Vec::new();
    for e in encoded {
        starts.push(bytes.len());
        bytes.extend(e.as_ref().map_err(|m| format!("llvm-mc-19: {m}"))?);
    }
    Ok(Code { bytes, starts })
}

/// The op names a block exercises: every instruction it runs (both halves
/// of a VOPD), since the cases check all their effects.
pub fn ops_under_test(variant: &Variant, code: &Code) -> Vec<&'static str> {
    let family = Family::of_target(&variant.target).expect("a known target");
    code.starts
        .iter()
        .filter_map(|&at| decode(family, &code.bytes[at..]).ok())
        .flat_map(|inst| std::iter::once(inst.op.name()).chain(inst.vopd_y.map(|y| y.op.name())))
        .collect()
}

/// Runs every case of one file and fails listing each mismatch.
fn run_file(stem: &str) {
    let blocks = match suite().files.get(stem) {
        Some(Ok(blocks)) => blocks,
        Some(Err(e)) => panic!("{e}"),
        None => panic!("no file cases/{stem}.txt"),
    };
    let mut benches: BTreeMap<String, Bench> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut ran = 0;
    for ab in blocks {
        for (variant, code) in &ab.variants {
            let code = match code {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{} [{variant}]: {e}", ab.block.pos));
                    continue;
                }
            };
            let bench = benches
                .entry(variant.target.clone())
                .or_insert_with(|| Bench::new(&variant.target, jit_mode()).expect("bench"));
            for case in &ab.block.cases {
                ran += 1;
                if let Err(why) = run_case(bench, variant, code, case) {
                    failures.push(format!(
                        "{}:{} [{variant}] {}\n    {}",
                        ab.block.pos.file,
                        case.line,
                        ab.block.asm.join(" ; "),
                        why.replace('\n', "\n    ")
                    ));
                }
            }
        }
    }
    let shown = failures.len().min(60);
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed in cases/{stem}.txt:\n{}{}",
        failures.len(),
        failures[..shown].join("\n"),
        if shown < failures.len() { "\n…" } else { "" }
    );
}

fn run_case(bench: &mut Bench, variant: &Variant, code: &Code, case: &Case) -> Result<(), String> {
    let lanes = if variant.wave64 { 64 } else { 32 };
    let addrs = state::Addrs {
        buffer: bench.buffer(),
        code: bench.code_address(),
    };
    let mut before = State::noise(
        lanes,
        state::default_mode(&variant.target),
        bench.wave.vgpr.len(),
    );
    for a in &case.inputs {
        before.write(&a.loc, &a.value, u64::MAX, addrs, None)?;
    }
    before.load_into(bench)?;
    let result = bench.run(&code.bytes, BUDGET);
    match (&case.fault, result) {
        (Some(text), Err(e)) => {
            let msg = e.to_string();
            return if msg.to_lowercase().contains(&text.to_lowercase()) {
                Ok(())
            } else {
                Err(format!("faulted, but not with `{text}`: {msg}"))
            };
        }
        (Some(text), Ok(_)) => return Err(format!("ran to the end; expected a fault `{text}`")),
        (None, Err(e)) => return Err(e.to_string()),
        (None, Ok(_)) => {}
    }
    let after = State::from_bench(bench)?;
    let mut want = before.clone();
    let exec = before.exec();
    for e in &case.expects {
        want.write(&e.loc, &e.value, exec, addrs, Some(&after))?;
    }
    let diffs = after.diff(&want);
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("\n"))
    }
}

macro_rules! case_files {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_file(stringify!($name));
            }
        )*
        /// The case files this binary has a test for.
        const FILES: &[&str] = &[$(stringify!($name)),*];
    };
}

case_files!(
    harness,
    sop1,
    sop2,
    sopk,
    sopc,
    sopp,
    smem,
    vop_int,
    vop_int16,
    vop_int64,
    vop3p_int,
    vopd,
    vop_f32,
    vop_f16,
    vop_f64,
    vop_cvt,
    vop3p_float,
    vop_mode,
    vop_div,
    vopc_int,
    vopc_float,
    vopc_class,
    vopcx,
    gfx9_valu,
    gfx9_mfma,
    gfx9_dpp,
    gfx9_sdwa,
    gfx9_fp8,
    gfx9_salu,
    gfx9_vmem,
    gfx9_buffer,
    gfx9_smem,
    gfx9_ds,
    ds,
    ds_atomic,
    flat,
    global,
    global_atomic,
    scratch,
    mubuf,
    mtbuf,
    image,
    image_atomic,
    image_sample,
    vinterp,
    dpp16,
    dpp8,
    cross_lane,
    wmma,
    gfx12_salu,
    gfx12_minmax,
    gfx12_valu,
    gfx12_smem,
    gfx12_ds,
    gfx12_vmem,
    gfx12_sopp,
    gfx12_fp8,
    gfx12_wmma,
    gfx10_salu,
    gfx10_valu,
    gfx10_sdwa,
    gfx10_smem,
    gfx10_ds,
    gfx10_vmem,
    gfx10_buffer,
);

#[test]
fn every_case_file_has_a_test() {
    let on_disk: Vec<&String> = suite().files.keys().collect();
    let missing: Vec<_> = on_disk
        .iter()
        .filter(|f| !FILES.contains(&f.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "add these files to case_files! in tests/instructions/main.rs: {missing:?}"
    );
}
