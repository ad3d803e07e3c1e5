//! Which gfx11 opcodes the executor implements.
//!
//! Every op of a compute-relevant format must either have a handler or be
//! listed in [`UNHANDLED`] with the reason; adding a handler or an op to the
//! table makes this test fail until the list is updated. The per-format
//! counts are kept in `tests/coverage.md` (for docs/SUPPORT.md); run with
//! `UPDATE_COVERAGE=1` to regenerate it.

use std::collections::BTreeSet;
use std::fmt::Write;

use softgpu_exec::ops;
use softgpu_isa::{all_ops, Format, Op};

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
    // Trap-handler and subvector-looping control flow: only trap handlers
    // and wave64 graphics shaders use them.
    (
        "s_rfe_b64",
        "return from a trap handler; kernels have no trap handler here",
    ),
    (
        "s_subvector_loop_begin",
        "wave64 subvector looping (graphics)",
    ),
    (
        "s_subvector_loop_end",
        "wave64 subvector looping (graphics)",
    ),
    (
        "v_mullit_f32",
        "legacy lighting multiply; special cases not verifiable without hardware",
    ),
    (
        "ds_condxchg32_rtn_b64",
        "conditional exchange for ray tracing; semantics undocumented",
    ),
    (
        "ds_bvh_stack_rtn_b32",
        "ray-tracing BVH stack; needs the BVH state",
    ),
    (
        "ds_store_addtid_b32",
        "LDS store addressed by M0 and the lane id; not modelled yet",
    ),
    // Typed buffer access: the format comes from the resource (MUBUF) or the
    // instruction (MTBUF) and needs the full gfx11 format conversion table.
    ("buffer_load_format_x", "typed buffer format conversion"),
    ("buffer_load_format_xy", "typed buffer format conversion"),
    ("buffer_load_format_xyz", "typed buffer format conversion"),
    ("buffer_load_format_xyzw", "typed buffer format conversion"),
    ("buffer_store_format_x", "typed buffer format conversion"),
    ("buffer_store_format_xy", "typed buffer format conversion"),
    ("buffer_store_format_xyz", "typed buffer format conversion"),
    ("buffer_store_format_xyzw", "typed buffer format conversion"),
    ("buffer_load_d16_format_x", "typed buffer format conversion"),
    (
        "buffer_load_d16_format_xy",
        "typed buffer format conversion",
    ),
    (
        "buffer_load_d16_format_xyz",
        "typed buffer format conversion",
    ),
    (
        "buffer_load_d16_format_xyzw",
        "typed buffer format conversion",
    ),
    (
        "buffer_store_d16_format_x",
        "typed buffer format conversion",
    ),
    (
        "buffer_store_d16_format_xy",
        "typed buffer format conversion",
    ),
    (
        "buffer_store_d16_format_xyz",
        "typed buffer format conversion",
    ),
    (
        "buffer_store_d16_format_xyzw",
        "typed buffer format conversion",
    ),
    (
        "buffer_load_d16_hi_format_x",
        "typed buffer format conversion",
    ),
    (
        "buffer_store_d16_hi_format_x",
        "typed buffer format conversion",
    ),
    ("buffer_load_lds_format_x", "typed buffer format conversion"),
    ("tbuffer_load_format_x", "typed buffer format conversion"),
    ("tbuffer_load_format_xy", "typed buffer format conversion"),
    ("tbuffer_load_format_xyz", "typed buffer format conversion"),
    ("tbuffer_load_format_xyzw", "typed buffer format conversion"),
    ("tbuffer_store_format_x", "typed buffer format conversion"),
    ("tbuffer_store_format_xy", "typed buffer format conversion"),
    ("tbuffer_store_format_xyz", "typed buffer format conversion"),
    (
        "tbuffer_store_format_xyzw",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_load_d16_format_x",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_load_d16_format_xy",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_load_d16_format_xyz",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_load_d16_format_xyzw",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_store_d16_format_x",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_store_d16_format_xy",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_store_d16_format_xyz",
        "typed buffer format conversion",
    ),
    (
        "tbuffer_store_d16_format_xyzw",
        "typed buffer format conversion",
    ),
    // Buffer loads straight into LDS (M0-addressed): not yet modelled.
    (
        "buffer_load_lds_u8",
        "buffer-to-LDS load (M0 LDS addressing)",
    ),
    (
        "buffer_load_lds_i8",
        "buffer-to-LDS load (M0 LDS addressing)",
    ),
    (
        "buffer_load_lds_u16",
        "buffer-to-LDS load (M0 LDS addressing)",
    ),
    (
        "buffer_load_lds_i16",
        "buffer-to-LDS load (M0 LDS addressing)",
    ),
    (
        "buffer_load_lds_b32",
        "buffer-to-LDS load (M0 LDS addressing)",
    ),
];

fn compute_ops() -> impl Iterator<Item = Op> {
    all_ops().filter(|op| !GRAPHICS_FORMATS.contains(&op.info().format))
}

#[test]
fn unhandled_ops_are_exactly_the_listed_ones() {
    let missing: BTreeSet<&str> = compute_ops()
        .filter(|&op| ops::handler(op).is_none())
        .map(|op| op.name())
        .collect();
    let listed: BTreeSet<&str> = UNHANDLED.iter().map(|&(name, _)| name).collect();
    let newly_missing: Vec<_> = missing.difference(&listed).collect();
    let now_handled: Vec<_> = listed.difference(&missing).collect();
    assert!(
        newly_missing.is_empty() && now_handled.is_empty(),
        "update UNHANDLED in tests/coverage.rs:\n  ops without a handler, not listed: {newly_missing:?}\n  listed ops that now have a handler (or are not compute ops): {now_handled:?}"
    );
}

/// Handlers under mnemonics of other AMD generations (gfx10, gfx90a, gfx12)
/// that the gfx11 table lacks: harmless, kept for those tables.
const OTHER_GENERATIONS: &[&str] = &[
    "buffer_atomic_add_f64",
    "buffer_atomic_max_f64",
    "buffer_atomic_min_f64",
    "buffer_atomic_pk_add_bf16",
    "buffer_atomic_pk_add_f16",
    "ds_nop",
    "flat_atomic_add_f64",
    "flat_atomic_csub_u32",
    "flat_atomic_max_f64",
    "flat_atomic_min_f64",
    "flat_atomic_pk_add_bf16",
    "flat_atomic_pk_add_f16",
    "global_atomic_add_f64",
    "global_atomic_max_f64",
    "global_atomic_min_f64",
    "global_atomic_pk_add_bf16",
    "global_atomic_pk_add_f16",
    "s_inst_prefetch",
    "v_cmp_f_i16",
    "v_cmp_f_u16",
    "v_cmp_t_i16",
    "v_cmp_t_u16",
    "v_cmpx_f_i16",
    "v_cmpx_f_u16",
    "v_cmpx_t_i16",
    "v_cmpx_t_u16",
    "v_dot2_i32_i16",
    "v_dot2_u32_u16",
    "v_dot2c_f32_f16",
];

/// A handler registered under a name that is no gfx11 mnemonic can never
/// run: it is a typo or an old name (as `ds_wrxchg_rtn_b32` was for
/// gfx11's `ds_storexchg_rtn_b32`).
#[test]
fn every_handler_names_a_real_op() {
    let dead: BTreeSet<&str> = ops::implemented()
        .filter(|name| softgpu_isa::op_by_name(name).is_none() && !OTHER_GENERATIONS.contains(name))
        .collect();
    assert!(
        dead.is_empty(),
        "handlers for names not in the gfx11 opcode table: {dead:?}"
    );
}

fn format_name(f: Format) -> String {
    format!("{f:?}").to_uppercase()
}

fn coverage_markdown() -> String {
    let mut rows: Vec<(Format, usize, usize)> = Vec::new();
    for op in compute_ops() {
        let f = op.info().format;
        let i = rows.iter().position(|r| r.0 == f).unwrap_or_else(|| {
            rows.push((f, 0, 0));
            rows.len() - 1
        });
        rows[i].2 += 1;
        rows[i].1 += ops::handler(op).is_some() as usize;
    }
    let (done, total) = rows.iter().fold((0, 0), |(d, t), r| (d + r.1, t + r.2));
    let mut md = String::new();
    md.push_str("<!-- Generated by crates/exec/tests/coverage.rs; UPDATE_COVERAGE=1 cargo test -p softgpu-exec --test coverage -->\n");
    md.push_str("| format | implemented | total |\n| --- | ---: | ---: |\n");
    for (f, d, t) in &rows {
        writeln!(md, "| {} | {d} | {t} |", format_name(*f)).unwrap();
    }
    writeln!(md, "| **all compute formats** | **{done}** | **{total}** |").unwrap();
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
    md
}

#[test]
fn coverage_markdown_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/coverage.md");
    let md = coverage_markdown();
    print!("{md}");
    if std::env::var_os("UPDATE_COVERAGE").is_some() {
        std::fs::write(&path, &md).unwrap();
        return;
    }
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        old == md,
        "tests/coverage.md is stale: rerun with UPDATE_COVERAGE=1"
    );
}
