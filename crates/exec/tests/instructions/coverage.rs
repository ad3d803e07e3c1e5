//! Which opcodes (gfx10, gfx11 and gfx12) the executor implements, and how many
//! instruction-level cases each has.
//!
//! Every op of a compute-relevant format must either have a handler or be
//! listed in [`UNHANDLED`] with the reason, and every op with a handler
//! must have cases in `cases/`. The per-format and per-opcode counts are
//! kept in `coverage.md` (for docs/SUPPORT.md); run with `UPDATE_COVERAGE=1`
//! to regenerate it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use softgpu_exec::harness::handler;
use softgpu_isa::{ops_of, Family, Format, Op};

/// Formats that only graphics shaders use: images, exports, parameter
/// interpolation and LDS-direct attribute loads.
const GRAPHICS_FORMATS: &[Format] = &[
    Format::Mimg,
    Format::Exp,
    Format::Vinterp,
    Format::LdsDirect,
];

/// Compute-format ops with no handler, and why. They fault at run time with
/// "unsupported instruction NAME".
const UNHANDLED: &[(&str, &str)] = &[
    (
        "ds_bvh_stack_rtn_b32",
        "ray-tracing BVH stack: the RDNA3 guide's pseudocode leaves DECODE_ADDR/ENCODE_ADDR (stack index units, wrap at the stack size), the INVALID_NODE value and the pop's index order undefined",
    ),
    (
        "ds_gws_init",
        "GWS resource set-up: compute code (ockl's grid sync) uses only ds_gws_barrier, whose count each arrival gives",
    ),
    ("ds_gws_sema_v", "GWS semaphores: no compiler path emits them for compute code"),
    ("ds_gws_sema_br", "GWS semaphores: no compiler path emits them for compute code"),
    ("ds_gws_sema_p", "GWS semaphores: no compiler path emits them for compute code"),
    ("ds_gws_sema_release_all", "GWS semaphores: no compiler path emits them for compute code"),
    ("ds_ordered_count", "graphics ordered append (GDS ordered count for shader exports)"),
    ("ds_add_gs_reg_rtn", "geometry-shader streamout registers (graphics only)"),
    ("ds_sub_gs_reg_rtn", "geometry-shader streamout registers (graphics only)"),
    (
        "global_atomic_ordered_add_b64",
        "gfx12 ordered add: its ordering between waves (by wave launch order) is not modelled; clang-19 emits it only for its intrinsic",
    ),
    (
        "s_barrier_init",
        "named barriers: RDNA4 has only the workgroup barrier (-1) and the trap barrier (-2); the named-barrier ops are gfx1250's, and LLVM removed them from gfx12 (llvm-project #129548)",
    ),
    ("s_barrier_join", "named barriers: as s_barrier_init"),
    ("s_barrier_leave", "named barriers: as s_barrier_init"),
    ("s_wakeup_barrier", "named barriers: as s_barrier_init (LLVM keeps it for gfx1250 only)"),
    (
        "s_endpgm_ordered_ps_done",
        "gfx10 pixel shaders' end with the ordered export of POPS (primitive ordered pixel shading): graphics only",
    ),
    (
        "v_interp_p1_f32",
        "gfx10 attribute interpolation (VINTRP and its VOP3 forms): reads the vertex parameters the graphics pipeline lays out in LDS for a pixel shader's primitive (M0); no compute meaning",
    ),
    ("v_interp_p2_f32", "gfx10 attribute interpolation: as v_interp_p1_f32"),
    ("v_interp_mov_f32", "gfx10 attribute interpolation: as v_interp_p1_f32"),
    ("v_interp_p1ll_f16", "gfx10 attribute interpolation: as v_interp_p1_f32"),
    ("v_interp_p1lv_f16", "gfx10 attribute interpolation: as v_interp_p1_f32"),
    ("v_interp_p2_f16", "gfx10 attribute interpolation: as v_interp_p1_f32"),
    (
        "s_cbranch_g_fork",
        "GCN's stack-based control-flow fork/join (CDNA guide: a fork stack in SGPRs and EXEC masks): LLVM never emits it (it structures control flow with EXEC masks and branches)",
    ),
    ("s_cbranch_i_fork", "GCN's fork/join stack: as s_cbranch_g_fork"),
    ("s_cbranch_join", "GCN's fork/join stack: as s_cbranch_g_fork"),
    (
        "s_setvskip",
        "VSKIP (skip VALU/VMEM instructions while set) is a debugging/performance mode with no compiler path in compute code",
    ),
    (
        "s_rfe_restore_b64",
        "return from a trap handler restoring ttmp state: trap-handler code, which softgpu does not run",
    ),
    (
        "v_screen_partition_4se_b32",
        "graphics rasterizer screen partitioning across four shader engines: no compute meaning, and the guide gives only a lookup by tile position",
    ),
    (
        "v_exp_legacy_f32",
        "GCN's pre-Vega-accuracy exp2 whose special-case rules the CDNA guides do not spell out; LLVM never selects it",
    ),
    ("v_log_legacy_f32", "as v_exp_legacy_f32: GCN's legacy log2, never selected by LLVM"),
    (
        "v_cvt_pkaccum_u8_f32",
        "GCN's accumulating byte pack (a byte of the destination by S1): LLVM never selects it and its op table entry has no accumulator operand to fetch",
    ),
    (
        "s_scratch_load_dword",
        "CDNA scalar scratch access: a wave-uniform address in the wave's private segment, which softgpu keeps per lane (swizzled by 4-byte element); no compiler path emits it (LLVM has no pattern for it)",
    ),
    ("s_scratch_load_dwordx2", "CDNA scalar scratch access: as s_scratch_load_dword"),
    ("s_scratch_load_dwordx4", "CDNA scalar scratch access: as s_scratch_load_dword"),
    ("s_scratch_store_dword", "CDNA scalar scratch access: as s_scratch_load_dword"),
    ("s_scratch_store_dwordx2", "CDNA scalar scratch access: as s_scratch_load_dword"),
    ("s_scratch_store_dwordx4", "CDNA scalar scratch access: as s_scratch_load_dword"),
];

/// The compute ops of every family the executor runs, each once (gfx12
/// shares most of gfx11's).
fn compute_ops() -> impl Iterator<Item = Op> {
    let executed = Family::ALL.into_iter().filter(|f| f.executed());
    let mut ops: Vec<Op> = executed.flat_map(ops_of).collect();
    ops.sort_by_key(|op| op.0);
    ops.dedup();
    ops.into_iter()
        .filter(|op| !GRAPHICS_FORMATS.contains(&op.info().format))
}

#[test]
fn unhandled_ops_are_exactly_the_listed_ones() {
    let missing: BTreeSet<&str> = compute_ops()
        .filter(|&op| handler(op).is_none())
        .map(|op| op.name())
        .collect();
    let listed: BTreeSet<&str> = UNHANDLED.iter().map(|&(name, _)| name).collect();
    let newly_missing: Vec<_> = missing.difference(&listed).collect();
    let now_handled: Vec<_> = listed.difference(&missing).collect();
    assert!(
        newly_missing.is_empty() && now_handled.is_empty(),
        "update UNHANDLED in tests/instructions/coverage.rs:\n  ops without a handler, not listed: {newly_missing:?}\n  listed ops that now have a handler (or are not compute ops): {now_handled:?}"
    );
}

fn format_name(f: Format) -> String {
    format!("{f:?}").to_uppercase()
}

/// Cases per op name, counting each case line once (in its first
/// variant that assembled) for every op its block runs.
fn cases_per_op() -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for blocks in crate::suite().files.values().flatten() {
        for ab in blocks {
            let Some((variant, code)) = ab
                .variants
                .iter()
                .find_map(|(v, c)| Some((v, c.as_ref().ok()?)))
            else {
                continue;
            };
            for op in crate::ops_under_test(variant, code) {
                *counts.entry(op).or_default() += ab.block.cases.len();
            }
        }
    }
    counts
}

#[test]
fn every_implemented_op_has_cases() {
    let counts = cases_per_op();
    let without: Vec<&str> = compute_ops()
        .filter(|&op| handler(op).is_some() && !counts.contains_key(op.name()))
        .map(|op| op.name())
        .collect();
    assert!(
        without.is_empty(),
        "{} implemented ops have no instruction-level cases in tests/instructions/cases: {without:?}",
        without.len()
    );
}

/// The per-format table: implemented ops, those with cases, all ops and
/// case counts. It heads `coverage.md` and is copied into docs/SUPPORT.md.
fn format_table(counts: &BTreeMap<&'static str, usize>) -> String {
    // (format, implemented, implemented with cases, total, cases)
    let mut rows: Vec<(Format, usize, usize, usize, usize)> = Vec::new();
    for op in compute_ops() {
        let f = op.info().format;
        let i = rows.iter().position(|r| r.0 == f).unwrap_or_else(|| {
            rows.push((f, 0, 0, 0, 0));
            rows.len() - 1
        });
        let n = counts.get(op.name()).copied().unwrap_or(0);
        let handled = handler(op).is_some();
        rows[i].1 += handled as usize;
        rows[i].2 += (handled && n > 0) as usize;
        rows[i].3 += 1;
        rows[i].4 += n;
    }
    let sum =
        |k: fn(&(Format, usize, usize, usize, usize)) -> usize| rows.iter().map(k).sum::<usize>();
    let mut md = String::new();
    md.push_str("| format | implemented | with cases | total | cases |\n| --- | ---: | ---: | ---: | ---: |\n");
    for (f, d, c, t, n) in &rows {
        writeln!(md, "| {} | {d} | {c} | {t} | {n} |", format_name(*f)).unwrap();
    }
    writeln!(
        md,
        "| **all compute formats** | **{}** | **{}** | **{}** | **{}** |",
        sum(|r| r.1),
        sum(|r| r.2),
        sum(|r| r.3),
        sum(|r| r.4)
    )
    .unwrap();
    md
}

fn coverage_markdown(counts: &BTreeMap<&'static str, usize>) -> String {
    let mut md = String::new();
    md.push_str("<!-- Generated by crates/exec/tests/instructions/coverage.rs; UPDATE_COVERAGE=1 cargo test -p softgpu-exec --test instructions coverage -->\n");
    md.push_str(&format_table(counts));
    md.push_str("\nNot counted: graphics-only formats (");
    md.push_str(
        &GRAPHICS_FORMATS
            .iter()
            .map(|f| format_name(*f))
            .collect::<Vec<_>>()
            .join(", "),
    );
    md.push_str(").\n\nUnimplemented compute ops (they fault with \"unsupported instruction NAME\"):\n\n| op | why |\n| --- | --- |\n");
    for (name, why) in UNHANDLED {
        writeln!(md, "| `{name}` | {why} |").unwrap();
    }
    md.push_str("\nInstruction-level cases per opcode (`tests/instructions/cases/`):\n\n| op | format | cases |\n| --- | --- | ---: |\n");
    for op in compute_ops() {
        let n = counts.get(op.name()).copied().unwrap_or(0);
        let state = if handler(op).is_some() {
            ""
        } else {
            " (unimplemented)"
        };
        writeln!(
            md,
            "| `{}`{state} | {} | {n} |",
            op.name(),
            format_name(op.info().format)
        )
        .unwrap();
    }
    md
}

/// Where docs/SUPPORT.md keeps its copy of the format table.
const SUPPORT_BEGIN: &str = "<!-- coverage table: begin -->\n";
const SUPPORT_END: &str = "<!-- coverage table: end -->";

/// `text` with the part between the SUPPORT.md markers replaced by `table`,
/// or None when the markers are missing.
fn with_support_table(text: &str, table: &str) -> Option<String> {
    let begin = text.find(SUPPORT_BEGIN)? + SUPPORT_BEGIN.len();
    let end = begin + text[begin..].find(SUPPORT_END)?;
    Some(format!("{}{table}{}", &text[..begin], &text[end..]))
}

#[test]
fn coverage_markdown_is_up_to_date() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("tests/instructions/coverage.md");
    let support = root.join("../../docs/SUPPORT.md");
    let counts = cases_per_op();
    let md = coverage_markdown(&counts);
    let old_support = std::fs::read_to_string(&support).unwrap();
    let new_support = with_support_table(&old_support, &format_table(&counts))
        .expect("docs/SUPPORT.md lacks the coverage table markers");
    if std::env::var_os("UPDATE_COVERAGE").is_some() {
        std::fs::write(&path, &md).unwrap();
        std::fs::write(&support, &new_support).unwrap();
        return;
    }
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        old == md && old_support == new_support,
        "tests/instructions/coverage.md or docs/SUPPORT.md's coverage table is stale: rerun with UPDATE_COVERAGE=1"
    );
}
