//! Every class of the JIT's op table against the interpreter, op by op.
//!
//! The JIT compiles an op by its class, `OpInfo::jit` (from
//! `crates/isa/data/jit-classes.tsv`). This test reads the table, not a
//! list of its own: for every op with a class, in every family that
//! encodes it, it writes
//! instructions of the op from its class and operand types (VGPR, SGPR
//! and constant sources, the e32 and e64 forms, both VOPD halves), runs
//! each alone as a program from several random states in
//! `JitMode::Verify` (each compiled block runs in both tiers, any
//! difference fails the run) and requires that the JIT compiled it and
//! that it ran inside the block at least once. An op of the table that no
//! instruction exercises fails the test by name, as does a class none of
//! whose ops is exercised (the scheduling hints need one op, not each), so
//! a row added to the table is tested the moment it is added, or the test
//! says what it cannot write.

use std::collections::{BTreeMap, BTreeSet};

use softgpu_isa::jit::{Class, LdsShape, Scalar};
use softgpu_isa::{all_ops, Family, Op, Ty};

use crate::asm;
use softgpu_exec::harness::{Bench, SCRATCH_LANE_BYTES};
use softgpu_exec::JitMode;

use crate::jit::{value, Rng};

/// Random states each instruction runs from.
const STATES: usize = 3;

/// One program exercising an op: its lines, and how many blocks the JIT
/// compiles from it when the op is in one (beyond those of an empty
/// program).
struct Case {
    op: Op,
    family: Family,
    lines: Vec<String>,
    blocks: usize,
}

/// The VOPD `v_dual_*` form of the op as the X half and as the Y half,
/// with a `v_dual_mov_b32` in the other (X writes an even VGPR, Y an odd
/// one, their first sources in different banks; a shift's amount an
/// SGPR).
fn dual(name: &str, uniform: &[usize]) -> Vec<String> {
    let srcs = |a: &str, b: &str| match name {
        _ if uniform.contains(&0) => format!("s2, {b}"),
        "v_dual_mov_b32" => a.to_string(),
        "v_dual_fmaak_f32" => format!("{a}, {b}, 0x3fc00000"),
        "v_dual_fmamk_f32" => format!("{a}, 0x3fc00000, {b}"),
        _ => format!("{a}, {b}"),
    };
    vec![
        format!("{name} v0, {} :: v_dual_mov_b32 v1, v7", srcs("v4", "v1")),
        format!("v_dual_mov_b32 v0, v4 :: {name} v1, {}", srcs("v5", "v6")),
    ]
}

/// Instructions of a lane op: its sources VGPRs, then the first an SGPR,
/// then an inline constant (an SGPR where the class needs it uniform),
/// and for f32 sources the e64 form with modifiers.
fn lane(name: &str, op: Op, uniform: &[usize]) -> Vec<String> {
    if name.starts_with("v_dual_") {
        return dual(name, uniform);
    }
    let info = op.info();
    let firsts = ["v1", "s1", "0.5", "-4", "0x12345"];
    let mut out = Vec::new();
    for first in firsts {
        let src = |k: usize| -> String {
            if uniform.contains(&k) {
                return ["s2", "s3", "s4"][k].into();
            }
            match k {
                0 => first.into(),
                _ => format!("v{}", k + 1),
            }
        };
        out.push(match name {
            "v_fmac_f32" => format!("{name} v0, {}, v2", src(0)),
            "v_fmaak_f32" => format!("{name} v0, {}, v2, 0x3fc00000", src(0)),
            "v_fmamk_f32" => format!("{name} v0, {}, 0xc0200000, v2", src(0)),
            "v_cndmask_b32" => format!("{name} v0, {}, v2, vcc_lo", src(0)),
            _ => {
                let n = info.src.iter().filter(|&&t| t != Ty::None).count();
                let srcs: Vec<String> = (0..n).map(src).collect();
                format!("{name} v0, {}", srcs.join(", "))
            }
        });
    }
    if name == "v_cndmask_b32" {
        out.push(format!("{name}_e64 v0, v1, s2, s10"));
    } else if info.src.contains(&Ty::F32) && !name.contains("fmaak") && !name.contains("fmamk") {
        let n = info.src.iter().filter(|&&t| t != Ty::None).count();
        let mods = ["-v1", "|v2|", "-|v3|"];
        let e64 = if name == "v_fmac_f32" || info.format == softgpu_isa::Format::Vop3 {
            name.to_string()
        } else {
            format!("{name}_e64")
        };
        let n = if name == "v_fmac_f32" { 2 } else { n };
        out.push(format!("{e64} v0, {}", mods[..n].join(", ")));
    }
    out
}

/// A register range of `n` dwords from `first` (`v0`, `v[0:1]`).
fn regs(kind: char, first: usize, n: usize) -> String {
    match n {
        1 => format!("{kind}{first}"),
        _ => format!("{kind}[{first}:{}]", first + n - 1),
    }
}

/// The programs exercising `op` of class `class`.
fn cases(op: Op, class: Class, family: Family) -> Vec<Case> {
    let name = op.name();
    let one = |lines: Vec<String>| -> Vec<Case> {
        lines
            .into_iter()
            .map(|l| Case {
                op,
                family,
                lines: vec![l],
                blocks: 1,
            })
            .collect()
    };
    match class {
        // Between two moves: one block with the hint in it.
        Class::Hint => ["0", "null, 0", "0x1"]
            .iter()
            .map(|arg| Case {
                op,
                family,
                lines: vec![
                    "v_mov_b32 v0, v1".into(),
                    format!("{name} {arg}"),
                    "v_mov_b32 v2, v3".into(),
                ],
                blocks: 1,
            })
            .collect(),
        Class::Lane(l) => one(lane(name, op, l.uniform_srcs())),
        Class::FCmp(_) | Class::ICmp(_) => one(vec![
            format!("{name} vcc_lo, v1, v2"),
            format!("{name} vcc_lo, s1, v2"),
            format!("{name} vcc_lo, 0.5, v2"),
            format!("{name}_e64 s10, v1, s2"),
            format!("{name}_e64 null, v1, v2"),
        ]),
        // With a carry in (a third source: gfx11's `_co_ci_`, gfx9's
        // `v_addc_co_u32` …); the masks one SGPR or a pair by wave size.
        Class::Carry(_) if op.info().src[2] != Ty::None => one(vec![
            format!("{name} v0, {{vcc}}, v1, v2, {{vcc}}"),
            format!("{name} v0, {{vcc}}, s1, v2, {{vcc}}"),
            format!("{name}_e64 v0, {{s10}}, v1, s2, {{s12}}"),
        ]),
        Class::Carry(_) => one(vec![
            format!("{name} v0, {{s10}}, v1, v2"),
            format!("{name} v0, {{vcc}}, s1, v2"),
            format!("{name} v0, null, 7, v2"),
        ]),
        Class::Shift64(_) => one(["0", "3", "33", "63"]
            .iter()
            .map(|a| format!("{name} v[0:1], {a}, v[2:3]"))
            .collect()),
        Class::F64(_) => {
            let info = op.info();
            let pick = |variant: usize| -> Vec<String> {
                let wide = [["v[2:3]", "v[4:5]", "v[6:7]"], ["s[2:3]", "v[4:5]", "1.0"]];
                let narrow = [["v8", "v8", "v8"], ["s4", "s4", "s4"]];
                (0..3)
                    .filter_map(|k| match info.src[k] {
                        Ty::F64 => Some(wide[variant][k].to_string()),
                        Ty::B32 => Some(narrow[variant][k].to_string()),
                        _ => None,
                    })
                    .collect()
            };
            one(vec![
                format!("{name} v[0:1], {}", pick(0).join(", ")),
                format!("{name} v[0:1], {}", pick(1).join(", ")),
            ])
        }
        Class::Mad64 { .. } => one(vec![
            format!("{name} v[0:1], s10, v2, v3, v[4:5]"),
            format!("{name} v[0:1], null, s2, v3, s[4:5]"),
        ]),
        Class::LdsLoad(shape) => {
            let d = shape.dwords();
            one(match shape {
                LdsShape::One { .. } => vec![
                    format!("{name} {}, v6", regs('v', 0, d)),
                    format!("{name} {}, v6 offset:20", regs('v', 0, d)),
                ],
                LdsShape::Two { .. } => vec![
                    format!("{name} {}, v6 offset0:1 offset1:3", regs('v', 0, 2 * d)),
                    format!("{name} {}, v6 offset1:255", regs('v', 0, 2 * d)),
                ],
            })
        }
        Class::LdsStore(shape) => {
            let d = shape.dwords();
            one(match shape {
                LdsShape::One { .. } => vec![
                    format!("{name} v6, {}", regs('v', 0, d)),
                    format!("{name} v6, {} offset:36", regs('v', 0, d)),
                ],
                LdsShape::Two { .. } => vec![format!(
                    "{name} v6, {}, {} offset0:2 offset1:5",
                    regs('v', 0, d),
                    regs('v', 2, d)
                )],
            })
        }
        Class::ScalarLoad { dwords } => one(vec![
            format!("{name} {}, s[8:9], 0x40", regs('s', 16, dwords as usize)),
            format!("{name} {}, s[8:9], s5", regs('s', 16, dwords as usize)),
        ]),
        Class::GlobalLoad { dwords, flat } => {
            let dst = regs('v', 0, dwords as usize);
            one(if flat {
                vec![format!("{name} {dst}, v[10:11] offset:16")]
            } else {
                vec![
                    format!("{name} {dst}, v[10:11], off offset:16"),
                    format!("{name} {dst}, v12, s[8:9] offset:8"),
                ]
            })
        }
        Class::GlobalStore { flat } => one(if flat {
            vec![format!("{name} v[10:11], v1 offset:16")]
        } else {
            vec![
                format!("{name} v[10:11], v1, off offset:16"),
                format!("{name} v12, v1, s[8:9] offset:8"),
            ]
        }),
        // Uniform addresses inside every lane's segment of the bench's
        // private memory (`SCRATCH_LANE_BYTES`, 1024), s5 below 256; a
        // store then a load of it, so the load reads what the block
        // stored.
        Class::ScratchLoad { bytes, .. } => {
            let dst = regs('v', 0, (bytes as usize).div_ceil(4));
            one(vec![
                format!("{name} {dst}, off, s5 offset:16"),
                format!("{name} {dst}, off, off offset:1000"),
            ])
        }
        Class::ScratchStore { bytes } => {
            let data = regs('v', 1, (bytes as usize).div_ceil(4));
            // The family's name of the dword load (gfx10's `dword`).
            let load = ["scratch_load_b32", "scratch_load_dword"]
                .into_iter()
                .find(|n| softgpu_isa::op_by_name_in(family, n).is_some())
                .unwrap_or("scratch_load_b32");
            vec![Case {
                op,
                family,
                lines: vec![
                    format!("{name} off, {data}, s5 offset:32"),
                    format!("{load} v0, off, s5 offset:32"),
                    format!("{name} off, {data}, off offset:1000"),
                ],
                blocks: 1,
            }]
        }
        Class::ReadLane { first: true } => {
            one(vec![format!("{name} s4, v1"), format!("{name} s4, s7")])
        }
        Class::ReadLane { first: false } => one(vec![
            format!("{name} s4, v1, s5"),
            format!("{name} s4, v1, 37"),
        ]),
        Class::GetPc => one(vec![format!("{name} s[4:5]")]),
        Class::Scalar(s) => one(match s {
            Scalar::Movk => vec![format!("{name} s4, 0x1234"), format!("{name} s4, -2")],
            Scalar::Mov => vec![format!("{name} s4, s1"), format!("{name} s4, -7")],
            Scalar::Cmp(_) => vec![
                format!("{name} s1, s2"),
                format!("{name} s1, 5"),
                format!("{name} -1, s2"),
            ],
            _ => vec![
                format!("{name} s4, s1, s2"),
                format!("{name} s4, 17, s2"),
                format!("{name} s4, s1, 0x12345"),
            ],
        }),
        Class::Scalar64(s) => one(match s {
            Scalar::Mov => vec![
                format!("{name} s[4:5], s[0:1]"),
                format!("{name} s[4:5], -3"),
            ],
            _ if s.is_shift() => vec![
                format!("{name} s[4:5], s[0:1], s2"),
                format!("{name} s[4:5], s[0:1], 40"),
            ],
            _ => vec![
                format!("{name} s[4:5], s[0:1], s[2:3]"),
                format!("{name} s[4:5], -1, s[2:3]"),
            ],
        }),
        // The branch, the instruction it may skip, and its target: a
        // block of the branch alone, one of the fall-through and one of
        // the target.
        Class::Branch(_) => vec![Case {
            op,
            family,
            lines: vec![
                format!("{name} 1"),
                "v_add_nc_u32 v0, v1, v2".into(),
                "v_mov_b32 v3, v4".into(),
            ],
            blocks: 3,
        }],
    }
}

/// Sets the wave to a random state: random VGPRs and SGPRs (f32
/// specials and integer edges among them), v6 an LDS address a lane (a
/// row, one address for all, or scattered, some past LDS's end), v[10:11]
/// (a row or scattered) and v12 with s[8:9] addresses in the test buffer,
/// EXEC mostly full.
fn randomize(bench: &mut Bench, rng: &mut Rng, wave64: bool) {
    let buffer = bench.buffer();
    let w = &mut bench.wave;
    w.lanes = if wave64 { 64 } else { 32 };
    for row in w.vgpr.iter_mut().take(16) {
        row.iter_mut().for_each(|v| *v = value(rng));
    }
    let layout = rng.below(3);
    let base = 4 * rng.below(0x4000) as u32;
    for (l, v) in w.vgpr[6].iter_mut().enumerate() {
        *v = match layout {
            0 => base + 4 * l as u32,
            1 => base,
            _ => rng.next() as u32 % 0x1_0040,
        };
    }
    // A row of consecutive dwords, or each lane's dword somewhere else.
    let row = rng.below(2) == 0;
    for l in 0..w.vgpr[10].len() {
        let from = if row { 0 } else { 64 * rng.below(16) as u64 };
        let at = buffer + from + 4 * l as u64;
        w.vgpr[10][l] = at as u32;
        w.vgpr[11][l] = (at >> 32) as u32;
        w.vgpr[12][l] = 4 * l as u32 + 128;
    }
    for s in w.sgpr.iter_mut().take(16) {
        *s = value(rng);
    }
    w.sgpr[5] = 4 * rng.below(64) as u32;
    w.sgpr[8] = buffer as u32;
    w.sgpr[9] = (buffer >> 32) as u32;
    w.sgpr[106] = rng.next() as u32;
    w.sgpr[107] = if wave64 { rng.next() as u32 } else { 0 };
    let exec = match rng.below(4) {
        0 => rng.next(),
        _ => u64::MAX,
    };
    w.sgpr[126] = exec as u32;
    // A wave32's EXEC_HI is 0.
    w.sgpr[127] = if wave64 { (exec >> 32) as u32 } else { 0 };
    w.scc = rng.below(2) == 0;
    w.mode.bits = 0x3f0;
    for byte in bench.lds.iter_mut() {
        *byte = rng.next() as u8;
    }
    // Private memory too, so that loads see signs and stores old bytes.
    let lanes = softgpu_exec::harness::MAX_LANES;
    let private: Vec<u8> = (0..SCRATCH_LANE_BYTES * lanes)
        .map(|_| rng.next() as u8)
        .collect();
    bench
        .wave
        .scratch
        .fill_from(&private)
        .expect("private memory");
}

/// Runs each case of `family` from random states; returns the ops that
/// compiled and ran inside their block at least once, and adds what
/// failed to `failures`.
fn run_family(family: Family, cases: &[&Case], failures: &mut Vec<String>) -> BTreeSet<Op> {
    let target = match family {
        Family::Gfx11 => "gfx1100",
        Family::Gfx12 => "gfx1200",
        Family::Gfx10 => "gfx1030",
        Family::Gfx90a => "gfx90a",
        Family::Gfx94 => "gfx942",
    };
    // CDNA runs wave64 only.
    let wave64 = family.is_gcn();
    let variant = asm::Variant {
        target: target.into(),
        wave64,
        mattr: None,
    };
    let lines: Vec<String> = cases
        .iter()
        .flat_map(|c| c.lines.iter().map(|l| asm::substitute(l, wave64)))
        .collect();
    let mut encoded = asm::assemble(&variant, &lines).into_iter();
    let mut bench = Bench::new(target, crate::jit_mode()).expect("bench");
    bench.jit = JitMode::Verify;
    let data: Vec<u8> = (0..4096u32)
        .flat_map(|k| k.wrapping_mul(0x9e37_79b9).to_le_bytes())
        .collect();
    // The blocks of a program of no instructions (the bench's own), which
    // each case's count adds to.
    bench.run(&[], 10).expect("empty program");
    let base = bench.jit_blocks;
    let mut rng = Rng(0x5eed_c1a5 + family.index() as u64);
    let mut exercised = BTreeSet::new();
    for case in cases {
        let parts: Vec<_> = encoded.by_ref().take(case.lines.len()).collect();
        let Ok(parts) = parts.into_iter().collect::<Result<Vec<_>, _>>() else {
            // A form llvm-mc refuses for this op (the op's other forms
            // must serve).
            continue;
        };
        let code = parts.concat();
        let what = format!("{target}: {}", case.lines.join(" ; "));
        let mut ran_in_block = false;
        for _ in 0..STATES {
            bench.write_buffer(&data).expect("buffer");
            randomize(&mut bench, &mut rng, wave64);
            if let Err(e) = bench.run(&code, 100) {
                failures.push(format!("{what}: {e}"));
            }
            if bench.jit_blocks != base + case.blocks {
                failures.push(format!(
                    "{what}: {} JIT blocks, not {}",
                    bench.jit_blocks - base,
                    case.blocks
                ));
                break;
            }
            ran_in_block |= bench.jit_exits == 0;
        }
        if ran_in_block {
            exercised.insert(case.op);
        }
    }
    exercised
}

#[test]
fn every_jit_class_matches_interpreter() {
    // The table's classes, each with its ops.
    let mut classes: BTreeMap<Class, Vec<Op>> = BTreeMap::new();
    for op in all_ops() {
        if let Some(class) = op.info().jit {
            classes.entry(class).or_default().push(op);
        }
    }
    // Each op in each family that encodes it.
    let cases: Vec<Case> = classes
        .iter()
        .flat_map(|(&class, ops)| ops.iter().map(move |&op| (class, op)))
        .flat_map(|(class, op)| {
            // Executed families only: a family being added (CDNA) is
            // decoded before it runs.
            let families = Family::ALL.into_iter().filter(|f| f.executed());
            let families = families.filter(move |&f| op.encoding(f).is_some());
            families.flat_map(move |f| cases(op, class, f))
        })
        .collect();
    let mut failures = Vec::new();
    let mut exercised = BTreeSet::new();
    for family in Family::ALL.into_iter().filter(|f| f.executed()) {
        let of: Vec<&Case> = cases.iter().filter(|c| c.family == family).collect();
        exercised.extend(run_family(family, &of, &mut failures));
    }
    for (class, ops) in &classes {
        let missed: Vec<&str> = ops
            .iter()
            .filter(|op| !exercised.contains(op))
            .map(|op| op.name())
            .collect();
        let none = missed.len() == ops.len();
        if none || (*class != Class::Hint && !missed.is_empty()) {
            failures.push(format!("{class:?}: nothing exercises {missed:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
