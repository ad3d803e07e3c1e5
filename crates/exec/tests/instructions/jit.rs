//! The JIT tier against the interpreter on random straight-line programs.
//!
//! Each program is a random mix of the ops the JIT lowers (f32 and integer
//! VALU, VOPD pairs, compares into VCC and SGPR masks, `v_cndmask`, carry
//! ops (`v_add_co_u32`, `v_add_co_ci_u32`, …), 64-bit shifts, f64
//! add/mul/fma/ldexp (SGPR-pair sources too), `v_mad_u64_u32`/`v_mad_i64_i32`,
//! LDS loads (`ds_load_b32/b64/b128`, `ds_load_2addr*`, in and out of range),
//! LDS stores (`ds_store_b32/b64/b128`, `ds_store_2addr*`),
//! SALU
//! with SCC, short forward branches) over a few registers, assembled by
//! llvm-mc-19 and run from a random state — f32 specials (signed zeros,
//! infinities, quiet and signalling NaNs with payloads, denormals) and
//! integer edges — with EXEC holes and under both the default MODE and one
//! that flushes denormals (where float blocks must fall back). The bench
//! runs in `JitMode::Verify`: every compiled block runs in both tiers and
//! any difference in a register, SCC or the next instruction fails the
//! run. The interpreter itself is held to the ISA by the case files.

use softgpu_exec::harness::{Bench, BenchError, Trap};
use softgpu_exec::JitMode;

use crate::asm::{self, Variant};

const PROGRAMS: usize = 120;
const OPS_PER_PROGRAM: usize = 24;

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Values that tell float and integer semantics apart.
const SPECIAL: &[u32] = &[
    0,
    0x8000_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0xffc1_2345,
    0x7fa0_0001,
    0xff80_0001,
    0x0000_0001,
    0x807f_ffff,
    0x7f7f_ffff,
    0x7fff_ffff,
    0xffff_ffff,
    31,
    32,
    33,
    0x00ff_ffff,
    0x0100_0000,
    0x4b80_0000,
];

pub(crate) fn value(rng: &mut Rng) -> u32 {
    match rng.below(3) {
        0 => SPECIAL[rng.below(SPECIAL.len())],
        1 => (rng.next() as u32) % 64,
        _ => rng.next() as u32,
    }
}

/// VGPR pairs for 64-bit operands, one of them odd-aligned.
const PAIRS: &[&str] = &["v[0:1]", "v[2:3]", "v[4:5]", "v[6:7]", "v[1:2]"];
const V: &[&str] = &["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"];
const S: &[&str] = &["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"];
const CONSTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.5",
    "-4.0",
    "1.0",
    "0x3e22f983",
    "31",
    "64",
];

fn src(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng.pick(S).into(),
        1 => rng.pick(CONSTS).into(),
        _ => rng.pick(V).into(),
    }
}

/// An f32 source of a VOP3 form, maybe with abs/neg.
fn fmod_src(rng: &mut Rng) -> String {
    let s = src(rng);
    match rng.below(5) {
        0 => format!("-{s}"),
        1 => format!("|{s}|"),
        2 => format!("-|{s}|"),
        _ => s,
    }
}

fn mask(rng: &mut Rng, wave64: bool) -> String {
    match (rng.below(3), wave64) {
        (0, false) => "vcc_lo".into(),
        (0, true) => "vcc".into(),
        (_, false) => rng.pick(&["s8", "s10"]).into(),
        (_, true) => rng.pick(&["s[8:9]", "s[10:11]"]).into(),
    }
}

fn vcc(wave64: bool) -> &'static str {
    if wave64 {
        "vcc"
    } else {
        "vcc_lo"
    }
}

/// One random instruction of the JIT's repertoire.
fn instruction(rng: &mut Rng, wave64: bool) -> String {
    let d = rng.pick(V);
    let b = rng.pick(V);
    let c = rng.pick(V);
    let sd = rng.pick(S);
    let (sa, sb) = (rng.pick(S), rng.pick(S));
    match rng.below(20) {
        0 => {
            let op = rng.pick(&["v_add_f32", "v_sub_f32", "v_subrev_f32", "v_mul_f32"]);
            format!("{op} {d}, {}, {b}", src(rng))
        }
        1 => {
            let op = rng.pick(&["v_add_f32_e64", "v_sub_f32_e64", "v_mul_f32_e64"]);
            format!("{op} {d}, {}, {}", fmod_src(rng), fmod_src(rng))
        }
        2 => match rng.below(4) {
            0 => format!(
                "v_fma_f32 {d}, {}, {}, {}",
                fmod_src(rng),
                fmod_src(rng),
                fmod_src(rng)
            ),
            1 => format!("v_fmac_f32 {d}, {}, {b}", src(rng)),
            2 => format!("v_fmaak_f32 {d}, {}, {b}, 0x3fc00000", rng.pick(V)),
            _ => format!("v_fmamk_f32 {d}, {}, 0xc0200000, {b}", rng.pick(V)),
        },
        3 => {
            let op = rng.pick(&[
                "v_add_nc_u32",
                "v_sub_nc_u32",
                "v_subrev_nc_u32",
                "v_and_b32",
                "v_or_b32",
                "v_xor_b32",
                "v_mul_u32_u24",
                "v_max_i32",
                "v_min_i32",
                "v_max_u32",
                "v_min_u32",
            ]);
            format!("{op} {d}, {}, {b}", src(rng))
        }
        4 => {
            let op = rng.pick(&["v_lshlrev_b32", "v_lshrrev_b32", "v_ashrrev_i32"]);
            let amount = rng.pick(&["s0", "s5", "3", "31", "0x21"]);
            format!("{op} {d}, {amount}, {b}")
        }
        5 => {
            let op = rng.pick(&[
                "v_add3_u32",
                "v_xad_u32",
                "v_and_or_b32",
                "v_or3_b32",
                "v_xor3_b32",
                "v_mad_u32_u24",
            ]);
            format!("{op} {d}, {}, {b}, {c}", src(rng))
        }
        6 => {
            let amount = rng.pick(&["s1", "2", "17", "40"]);
            if rng.below(3) == 0 {
                // A field of uniform offset and width (0 and past 31
                // included).
                let width = rng.pick(&["s5", "0", "10", "31", "33"]);
                return format!("v_bfe_u32 {d}, {}, {amount}, {width}", src(rng));
            }
            let op = rng.pick(&["v_lshl_add_u32", "v_lshl_or_b32"]);
            format!("{op} {d}, {}, {amount}, {c}", src(rng))
        }
        7 => {
            let op = rng.pick(&["v_mov_b32", "v_not_b32", "v_cvt_f32_i32", "v_cvt_f32_u32"]);
            format!("{op} {d}, {}", src(rng))
        }
        8 => {
            let cc = rng.pick(&[
                "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq",
                "nlt",
            ]);
            if rng.below(2) == 0 {
                format!("v_cmp_{cc}_f32 {}, {}, {b}", vcc(wave64), src(rng))
            } else {
                let m = mask(rng, wave64);
                format!("v_cmp_{cc}_f32_e64 {m}, {}, {}", fmod_src(rng), src(rng))
            }
        }
        9 => {
            let cc = rng.pick(&["lt", "eq", "le", "gt", "ne", "ge"]);
            let ty = rng.pick(&["i32", "u32"]);
            format!("v_cmp_{cc}_{ty} {}, {}, {b}", vcc(wave64), src(rng))
        }
        10 => {
            if rng.below(2) == 0 {
                format!("v_cndmask_b32 {d}, {}, {b}, {}", src(rng), vcc(wave64))
            } else {
                let m = mask(rng, wave64);
                format!("v_cndmask_b32_e64 {d}, {}, {}, {m}", src(rng), src(rng))
            }
        }
        11 if rng.below(3) == 0 => {
            // 64-bit scalar ops on pairs (s[8:9] and vcc may hold a
            // compare's wave64 mask) and 64-bit constants.
            let pair = |rng: &mut Rng| match rng.below(4) {
                0 => rng.pick(&["-1", "0x7f", "0", "-16"]),
                _ => rng.pick(&["s[0:1]", "s[2:3]", "s[4:5]", "s[6:7]", "s[8:9]", "vcc"]),
            };
            let d = rng.pick(&["s[0:1]", "s[2:3]", "s[6:7]", "s[8:9]"]);
            let op = rng.pick(&[
                "s_mov_b64",
                "s_and_b64",
                "s_or_b64",
                "s_xor_b64",
                "s_and_not1_b64",
                "s_or_not1_b64",
                "s_lshl_b64",
                "s_lshr_b64",
                "s_ashr_i64",
                "s_cselect_b64",
            ]);
            let a = pair(rng);
            match op {
                "s_mov_b64" => format!("{op} {d}, {a}"),
                "s_lshl_b64" | "s_lshr_b64" | "s_ashr_i64" => {
                    let amount = rng.pick(&["s5", "0", "31", "32", "63", "0x41"]);
                    format!("{op} {d}, {a}, {amount}")
                }
                _ => format!("{op} {d}, {a}, {}", pair(rng)),
            }
        }
        11 => {
            let op = rng.pick(&[
                "s_add_u32",
                "s_sub_u32",
                "s_add_i32",
                "s_sub_i32",
                "s_and_b32",
                "s_or_b32",
                "s_xor_b32",
                "s_and_not1_b32",
                "s_or_not1_b32",
                "s_lshl_b32",
                "s_lshr_b32",
                "s_ashr_i32",
                "s_mul_i32",
                "s_cselect_b32",
                "s_mov_b32",
            ]);
            let a = if rng.below(3) == 0 {
                rng.pick(CONSTS)
            } else {
                sa
            };
            format!("{op} {sd}, {a}, {sb}")
        }
        12 => {
            let cc = rng.pick(&["eq", "lg", "gt", "ge", "lt", "le"]);
            let ty = rng.pick(&["i32", "u32"]);
            format!("s_cmp_{cc}_{ty} {sa}, {sb}")
        }
        // The 64-bit address arithmetic clang emits: a carry out to a lane
        // mask, and a carry in from one (often the mask just written).
        13 => {
            let (cout, cin) = (mask(rng, wave64), mask(rng, wave64));
            match rng.below(3) {
                0 => {
                    let op = rng.pick(&["v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32"]);
                    format!("{op} {d}, {cout}, {}, {b}", src(rng))
                }
                1 => {
                    let op =
                        rng.pick(&["v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32"]);
                    let vcc = vcc(wave64);
                    format!("{op}_e32 {d}, {vcc}, {}, {b}, {vcc}", src(rng))
                }
                _ => {
                    let op =
                        rng.pick(&["v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32"]);
                    format!("{op}_e64 {d}, {cout}, {}, {}, {cin}", src(rng), src(rng))
                }
            }
        }
        14 => {
            let op = rng.pick(&["v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64"]);
            let amount = rng.pick(&["0", "1", "2", "3", "31", "32", "33", "63", "0x41"]);
            format!("{op} {}, {amount}, {}", rng.pick(PAIRS), rng.pick(PAIRS))
        }
        15 => {
            // An f64 source: a pair, an inline constant, a literal (its
            // high word), a pair under abs/neg, or an SGPR pair (often a
            // kernel argument), maybe negated.
            let f64_src = |rng: &mut Rng| match rng.below(8) {
                0 => rng
                    .pick(&["0.5", "-2.0", "1.0", "0", "0x3f900000"])
                    .to_string(),
                1 => format!("-{}", rng.pick(PAIRS)),
                2 => format!("|{}|", rng.pick(PAIRS)),
                3 => rng.pick(&["s[0:1]", "s[2:3]", "-s[4:5]"]).to_string(),
                _ => rng.pick(PAIRS).to_string(),
            };
            let (a, b, c) = (f64_src(rng), f64_src(rng), f64_src(rng));
            let d = rng.pick(PAIRS);
            match rng.below(4) {
                0 => format!("v_add_f64 {d}, {a}, {b}"),
                1 => format!("v_mul_f64 {d}, {a}, {b}"),
                2 => format!("v_fma_f64 {d}, {a}, {b}, {c}"),
                _ => {
                    // The exponent: small constants (the fast path, unless
                    // the value is a zero, denormal, infinity or NaN, or
                    // the result leaves the normal range), or a register,
                    // whose random contents mostly take the exact path.
                    let e = match rng.below(3) {
                        0 => rng.pick(V).to_string(),
                        1 => rng.pick(&["s6", "s7"]).to_string(),
                        _ => rng.pick(&["-7", "0", "1", "-1", "64", "-16"]).to_string(),
                    };
                    format!("v_ldexp_f64 {d}, {a}, {e}")
                }
            }
        }
        // The address arithmetic of 64-bit indexing: 32 x 32 + 64 bits
        // exact, bit 64 to a mask or to null; c from a pair or a constant.
        16 => {
            let op = rng.pick(&["v_mad_u64_u32", "v_mad_i64_i32"]);
            let cout = if rng.below(2) == 0 {
                "null".to_string()
            } else {
                mask(rng, wave64)
            };
            let c = match rng.below(4) {
                0 => rng.pick(&["s[0:1]", "s[6:7]", "-1", "7", "0x80000000"]),
                _ => rng.pick(PAIRS),
            };
            let d = rng.pick(PAIRS);
            format!("{op} {d}, {cout}, {}, {}, {c}", src(rng), src(rng))
        }
        // LDS loads from the random registers: mostly far out of range,
        // some small, some straddling the end of LDS with a large offset,
        // so the block's in-range test meets every case the interpreter's
        // does (the bench's LDS is 64 KiB of random bytes).
        17 => {
            let a = rng.pick(V);
            let off = rng.pick(&["0", "4", "60", "0xfff0", "0xfffc"]);
            match rng.below(5) {
                0 => format!("ds_load_b32 {d}, {a} offset:{off}"),
                1 => format!("ds_load_b64 {}, {a} offset:{off}", rng.pick(PAIRS)),
                2 => {
                    let q = rng.pick(&["v[0:3]", "v[4:7]", "v[2:5]"]);
                    format!("ds_load_b128 {q}, {a} offset:{off}")
                }
                3 => {
                    let op = rng.pick(&["ds_load_2addr_b64", "ds_load_2addr_stride64_b64"]);
                    let (o0, o1) = (rng.below(256), rng.below(256));
                    let q = rng.pick(&["v[0:3]", "v[4:7]"]);
                    format!("{op} {q}, {a} offset0:{o0} offset1:{o1}")
                }
                _ => {
                    let op = rng.pick(&["ds_load_2addr_b32", "ds_load_2addr_stride64_b32"]);
                    let (o0, o1) = (rng.below(256), rng.below(256));
                    format!("{op} {}, {a} offset0:{o0} offset1:{o1}", rng.pick(PAIRS))
                }
            }
        }
        // LDS stores, addressed as the loads are: a block holds them only
        // at its end, after its other vector ops; lanes out of range are
        // discarded, lanes that overlap keep lane order.
        18 => {
            let a = rng.pick(V);
            let off = rng.pick(&["0", "4", "60", "0xfff0", "0xfffc"]);
            match rng.below(5) {
                0 => format!("ds_store_b32 {a}, {b} offset:{off}"),
                1 => format!("ds_store_b64 {a}, {} offset:{off}", rng.pick(PAIRS)),
                2 => {
                    let q = rng.pick(&["v[0:3]", "v[4:7]", "v[2:5]"]);
                    format!("ds_store_b128 {a}, {q} offset:{off}")
                }
                3 => {
                    let op = rng.pick(&["ds_store_2addr_b64", "ds_store_2addr_stride64_b64"]);
                    let (o0, o1) = (rng.below(256), rng.below(256));
                    let (x, y) = (rng.pick(PAIRS), rng.pick(PAIRS));
                    format!("{op} {a}, {x}, {y} offset0:{o0} offset1:{o1}")
                }
                _ => {
                    let op = rng.pick(&["ds_store_2addr_b32", "ds_store_2addr_stride64_b32"]);
                    let (o0, o1) = (rng.below(256), [rng.below(256), 1, 4][rng.below(3)]);
                    format!("{op} {a}, {b}, {c} offset0:{o0} offset1:{o1}")
                }
            }
        }
        _ => {
            let x = rng.pick(&["v_dual_mul_f32", "v_dual_add_f32", "v_dual_sub_f32"]);
            let y = rng.pick(&["v_dual_add_nc_u32", "v_dual_and_b32", "v_dual_mov_b32"]);
            // VOPD's bank rules: X writes an even VGPR, Y an odd one; the
            // X sources come from v0-v3 banks apart from Y's.
            let (xd, yd) = (rng.pick(&["v0", "v2", "v4"]), rng.pick(&["v1", "v3", "v5"]));
            if y == "v_dual_mov_b32" {
                format!("{x} {xd}, v4, v1 :: {y} {yd}, v7")
            } else {
                format!("{x} {xd}, v4, v1 :: {y} {yd}, v5, v6")
            }
        }
    }
}

/// A program: random instructions, with now and then a branch over the
/// next one or two (its offset patched once sizes are known).
fn program(rng: &mut Rng, wave64: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for _ in 0..OPS_PER_PROGRAM {
        if rng.below(10) == 0 {
            let cond = rng.pick(&[
                "s_cbranch_scc0",
                "s_cbranch_scc1",
                "s_cbranch_vccz",
                "s_cbranch_vccnz",
                "s_cbranch_execz",
                "s_branch",
            ]);
            lines.push(format!("{cond} 0"));
        }
        lines.push(instruction(rng, wave64));
    }
    lines
}

/// Joins the assembled lines, dropping any llvm-mc rejects (a random VOPD
/// may break its bank rules), and points each branch past the next
/// instruction.
/// The gfx1100 variant the JIT tests assemble for.
fn gfx1100(wave64: bool) -> Variant {
    Variant {
        target: "gfx1100".into(),
        wave64,
        mattr: None,
    }
}

/// A gfx1100 bench that runs every block in both tiers and compares them.
fn verify_bench() -> Bench {
    let mut bench = Bench::new("gfx1100", crate::jit_mode()).expect("bench");
    bench.jit = JitMode::Verify;
    bench
}

/// Fills the first `words` dwords of the bench's buffer with `k * mul`;
/// returns the bytes written.
fn fill_buffer(bench: &Bench, words: u32, mul: u32) -> Vec<u8> {
    let data: Vec<u8> = (0..words)
        .flat_map(|k| k.wrapping_mul(mul).to_le_bytes())
        .collect();
    bench.write_buffer(&data).expect("buffer");
    data
}

fn link(encoded: Vec<Result<Vec<u8>, String>>) -> Vec<u8> {
    let insts: Vec<Vec<u8>> = encoded.into_iter().filter_map(Result::ok).collect();
    let mut bytes = Vec::new();
    for (k, inst) in insts.iter().enumerate() {
        let mut inst = inst.clone();
        let is_branch = inst.len() == 4 && inst[3] == 0xbf && (0xa0..=0xa9).contains(&inst[2]);
        if is_branch {
            let skip = insts.get(k + 1).map_or(0, |n| n.len() / 4) as u16;
            inst[..2].copy_from_slice(&skip.to_le_bytes());
        }
        bytes.extend(inst);
    }
    bytes
}

fn run_programs(wave64: bool, seed: u64) {
    let variant = gfx1100(wave64);
    let mut rng = Rng(seed);
    let programs: Vec<Vec<String>> = (0..PROGRAMS).map(|_| program(&mut rng, wave64)).collect();
    let all: Vec<String> = programs.iter().flatten().cloned().collect();
    let mut encoded = asm::assemble(&variant, &all).into_iter();
    let mut bench = verify_bench();
    let mut blocks = 0;
    let mut failures = Vec::new();
    for (p, lines) in programs.iter().enumerate() {
        let code = link(encoded.by_ref().take(lines.len()).collect());
        let w = &mut bench.wave;
        w.lanes = if wave64 { 64 } else { 32 };
        for row in w.vgpr.iter_mut().take(8) {
            row.iter_mut().for_each(|v| *v = value(&mut rng));
        }
        // Now and then v6 holds a row of LDS addresses and v7 one address
        // in every lane: the layouts a block loads without a lane loop,
        // at the start of LDS or reaching past its end.
        let lanes = w.lanes as u32;
        let starts = [
            4 * rng.below(64) as u32,
            0x1_0000 - 4 * lanes - 4 * rng.below(8) as u32,
        ];
        if rng.below(2) == 0 {
            let base = starts[rng.below(2)];
            w.vgpr[6]
                .iter_mut()
                .zip(0..)
                .for_each(|(v, l)| *v = base + 4 * l);
        }
        if rng.below(2) == 0 {
            let one = [starts[0], starts[1], 0xfff0, 0xfffc][rng.below(4)];
            w.vgpr[7].iter_mut().for_each(|v| *v = one);
        }
        for s in w.sgpr.iter_mut().take(16) {
            *s = value(&mut rng);
        }
        w.sgpr[106] = rng.next() as u32;
        w.sgpr[107] = rng.next() as u32;
        let exec = match rng.below(3) {
            0 => u64::MAX,
            1 => 0,
            _ => rng.next(),
        };
        w.sgpr[126] = exec as u32;
        w.sgpr[127] = (exec >> 32) as u32;
        w.scc = rng.below(2) == 0;
        for byte in bench.lds.iter_mut() {
            *byte = rng.next() as u8;
        }
        // Round to nearest, denormals kept (IEEE, DX10 clamp); one program
        // in five flushes f32 denormals, which float blocks do not assume.
        // Mostly the default MODE; sometimes f32, or f16/f64, denormals
        // flushed, where the blocks of those ops must fall back.
        w.mode.bits = match rng.below(6) {
            0 => 0x3c0,
            1 => 0x330,
            _ => 0x3f0,
        };
        if let Err(e) = bench.run(&code, 10_000) {
            failures.push(format!("program {p}:\n  {}\n  {e}", lines.join("\n  ")));
        }
        blocks += bench.jit_blocks;
    }
    assert!(
        failures.is_empty(),
        "{} of {PROGRAMS} programs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The test means nothing if the JIT compiled nothing.
    assert!(
        blocks >= PROGRAMS,
        "only {blocks} JIT blocks in {PROGRAMS} programs"
    );
}

#[test]
fn jit_matches_interpreter_wave32() {
    run_programs(false, 0x5eed_0032);
}

#[test]
fn jit_matches_interpreter_wave64() {
    run_programs(true, 0x5eed_0064);
}

/// The LDS layouts a block loads without a lane loop — a row of four
/// consecutive dwords per chunk, one address in every lane, any four
/// addresses within 12 bytes of the chunk's first (v8: a reversed row,
/// pairs, unaligned bytes) — in range, at the end of LDS and straddling
/// it, for every access width, with every lane on and with lane 0 off,
/// against the interpreter. The random programs reach them only now and
/// then.
#[test]
fn lds_rows_and_broadcasts_match_interpreter() {
    let variant = gfx1100(false);
    let loads = [
        "ds_load_b32 v0, v6",
        "ds_load_b32 v0, v6 offset:60",
        "ds_load_b32 v0, v7 offset:4",
        "ds_load_2addr_b32 v[0:1], v6 offset0:1 offset1:16",
        "ds_load_2addr_stride64_b32 v[0:1], v7 offset0:2 offset1:3",
        "ds_load_b64 v[0:1], v7 offset:8",
        "ds_load_b128 v[0:3], v7",
        "ds_load_2addr_b64 v[0:3], v7 offset0:1 offset1:7",
        "ds_load_b32 v0, v8 offset:3",
        "ds_load_2addr_b32 v[0:1], v8 offset0:0 offset1:255",
        // Stores: a row is one vector store; two accesses that may
        // overlap, a broadcast, and other layouts go lane by lane, in
        // lane order.
        "ds_store_b32 v6, v1 offset:4",
        "ds_store_2addr_b32 v6, v1, v2 offset0:0 offset1:4",
        "ds_store_2addr_b32 v6, v1, v2 offset0:0 offset1:1",
        "ds_store_b32 v7, v1",
        "ds_store_b64 v8, v[0:1] offset:2",
        "ds_store_2addr_stride64_b64 v6, v[0:1], v[2:3] offset0:1 offset1:0",
    ];
    // Lane l's address in v8 from the base, by pattern.
    // The last puts a lane 13 bytes from the chunk's first, whose dword
    // is not in the window.
    let near: [fn(u32) -> u32; 4] = [
        |l| 16 * (l / 4) + 4 * (3 - l % 4),
        |l| 16 * (l / 4) + 8 * (l % 2),
        |l| 16 * (l / 4) + (l * 5) % 13,
        |l| 16 * (l / 4) + [0, 13, 12, 8][l as usize % 4],
    ];
    let lines: Vec<String> = loads
        .iter()
        .map(|l| format!("{l}\nv_add_nc_u32 v4, v0, v1"))
        .collect();
    let all: Vec<String> = lines
        .iter()
        .flat_map(|l| l.lines().map(String::from))
        .collect();
    let mut encoded = asm::assemble(&variant, &all).into_iter();
    let mut bench = verify_bench();
    let mut rng = Rng(0x1d5);
    for byte in bench.lds.iter_mut() {
        *byte = rng.next() as u8;
    }
    let end = bench.lds.len() as u32;
    let mut failures = Vec::new();
    for load in loads {
        let code = link(encoded.by_ref().take(2).collect());
        // In range, ending exactly at the end, and one dword past it.
        let bases = [0, 64, end - 128, end - 124, end - 16, end - 12, end - 8];
        for (k, base) in bases.into_iter().enumerate() {
            let exec = [u32::MAX, !1][k % 2];
            let w = &mut bench.wave;
            w.lanes = 32;
            w.vgpr[6]
                .iter_mut()
                .zip(0..)
                .for_each(|(v, l)| *v = base + 4 * l);
            w.vgpr[7].iter_mut().for_each(|v| *v = base + 64);
            let pattern = near[k % near.len()];
            w.vgpr[8]
                .iter_mut()
                .zip(0..)
                .for_each(|(v, l)| *v = base.saturating_sub(4) + pattern(l));
            w.sgpr[126] = exec;
            w.mode.bits = 0x3f0;
            for (r, row) in w.vgpr.iter_mut().enumerate().take(4) {
                row.iter_mut()
                    .zip(0..)
                    .for_each(|(v, l)| *v = (r as u32) << 24 | l);
            }
            if let Err(e) = bench.run(&code, 100) {
                failures.push(format!("{load} at {base:#x}, EXEC {exec:#x}: {e}"));
            }
            if bench.jit_blocks == 0 {
                failures.push(format!("{load}: no JIT block"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `code` in verify mode and records in `failures` (naming `what`)
/// any departure from what is expected: a memory fault exactly when
/// `faults`, a compiled block, and the block running to its end exactly
/// when `runs` (else it must have left for the interpreter; leaving proves
/// the access is in the block, running that it ran there).
fn run_expecting(
    bench: &mut Bench,
    code: &[u8],
    what: &str,
    runs: bool,
    faults: bool,
    failures: &mut Vec<String>,
) {
    match bench.run(code, 100) {
        Err(BenchError::Trap {
            trap: Trap::Memory { .. },
            ..
        }) if faults => {}
        Err(e) => failures.push(format!("{what}: {e}")),
        Ok(_) if faults => failures.push(format!("{what}: no fault")),
        Ok(_) => {}
    }
    if bench.jit_blocks == 0 {
        failures.push(format!("{what}: no JIT block"));
    }
    let left = bench.jit_exits > 0;
    if left == runs {
        failures.push(format!("{what}: the block left early: {left}"));
    }
}

/// Scalar loads in blocks: where the interpreter's one-window check allows
/// every dword (here inside the 64 KiB test buffer) they run in the block
/// and must equal the interpreter's; one that reaches past the buffer, or
/// starts before it, must leave the block before it changes anything
/// (verify mode checks that) for the interpreter to run, which reads zero
/// past the end and faults on a load before the buffer, as it would
/// without the JIT.
#[test]
fn scalar_loads_run_in_blocks_only_where_allowed() {
    let variant = gfx1100(false);
    // (load, whether its block runs to the end, whether the load faults)
    let loads = [
        ("s_load_b32 s0, s[8:9], 0x0", true, false),
        ("s_load_b128 s[0:3], s[8:9], 0x24", true, false),
        ("s_load_b256 s[0:7], s[8:9], 0xfc0", true, false),
        ("s_load_b64 s[0:1], s[8:9], s10 offset:0x8", true, false),
        ("s_load_b32 s0, s[8:9], 0x1000", true, false),
        // s10 = 0xffc0: the last 64 bytes, then 4 bytes past them.
        ("s_load_b512 s[0:15], s[8:9], s10", true, false),
        ("s_load_b512 s[0:15], s[8:9], s10 offset:0x4", false, false),
        ("s_load_b32 s0, s[8:9], -4", false, true),
        ("s_load_b64 s[8:9], s[8:9], 0x10", true, false),
        ("s_load_b32 s0, s[8:9], 0x7", true, false),
    ];
    let lines: Vec<String> = loads
        .iter()
        .flat_map(|(l, _, _)| {
            [
                l.to_string(),
                "s_waitcnt lgkmcnt(0)".into(),
                "s_add_u32 s4, s0, s1".into(),
                "v_add_nc_u32 v0, s0, v1".into(),
            ]
        })
        .collect();
    let mut encoded = asm::assemble(&variant, &lines).into_iter();
    let mut bench = verify_bench();
    fill_buffer(&bench, 8192, 0x0101_0101);
    let buffer = bench.buffer();
    let mut failures = Vec::new();
    for (load, runs, faults) in loads {
        let code = link(encoded.by_ref().take(4).collect());
        let w = &mut bench.wave;
        w.lanes = 32;
        w.sgpr[8] = buffer as u32;
        w.sgpr[9] = (buffer >> 32) as u32;
        w.sgpr[10] = if load.contains("b512") { 0xffc0 } else { 0x20 };
        w.sgpr[126] = u32::MAX;
        w.mode.bits = 0x3f0;
        run_expecting(&mut bench, &code, load, runs, faults, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Several scalar loads in one block from a base no op of the block
/// writes are checked as one span, from the lowest byte any reads to the
/// highest: all inside the buffer, the block runs; one reaching past its
/// end or starting before it, the block leaves and the interpreter reads
/// zero past the end or faults before the start, each load as it would
/// alone. A load that overwrites the base splits the span: the loads
/// after it use the new base (the buffer's second half here) and are
/// checked on their own.
#[test]
fn scalar_loads_share_one_check_per_base() {
    let variant = gfx1100(false);
    // (loads, whether the block runs to its end, whether a load faults)
    let cases: [(&[&str], bool, bool); 5] = [
        (
            &[
                "s_load_b32 s0, s[8:9], 0x24",
                "s_load_b128 s[4:7], s[8:9], 0x40",
                "s_load_b64 s[2:3], s[8:9], 0x10",
                "s_load_b128 s[12:15], s[8:9], 0x0",
            ],
            true,
            false,
        ),
        (
            &[
                "s_load_b32 s0, s[8:9], 0x0",
                "s_load_b256 s[0:7], s[8:9], 0xffe0",
            ],
            true,
            false,
        ),
        (
            &[
                "s_load_b32 s0, s[8:9], 0x0",
                "s_load_b64 s[2:3], s[8:9], 0xfffc",
            ],
            false,
            false,
        ),
        (
            &["s_load_b32 s0, s[8:9], 0x8", "s_load_b32 s1, s[8:9], -4"],
            false,
            true,
        ),
        (
            &[
                "s_load_b32 s0, s[8:9], 0x7",
                "s_load_b64 s[8:9], s[8:9], 0x8000",
                "s_load_b32 s1, s[8:9], 0x4",
            ],
            true,
            false,
        ),
    ];
    let mut bench = verify_bench();
    let buffer = bench.buffer();
    // The new base the last case loads: an address inside the buffer.
    let mut rebased = fill_buffer(&bench, 16384, 0x0101_0101);
    rebased[0x8000..0x8008].copy_from_slice(&(buffer + 0x100).to_le_bytes());
    bench.write_buffer(&rebased).expect("buffer");
    let mut failures = Vec::new();
    for (loads, runs, faults) in cases {
        let mut lines: Vec<String> = loads.iter().map(|l| l.to_string()).collect();
        lines.push("s_waitcnt lgkmcnt(0)".into());
        lines.push("v_add_nc_u32 v0, s0, v1".into());
        let code = link(asm::assemble(&variant, &lines));
        let w = &mut bench.wave;
        w.lanes = 32;
        w.sgpr[8] = buffer as u32;
        w.sgpr[9] = (buffer >> 32) as u32;
        w.sgpr[126] = u32::MAX;
        w.mode.bits = 0x3f0;
        let what = loads.join("; ");
        run_expecting(&mut bench, &code, &what, runs, faults, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A global or flat dword store closing a block, with the JIT on against
/// off (verify mode cannot see device memory): both address forms, lane
/// layouts (a row, two rows 4 KiB apart, chunks in reverse order and
/// overlapping, one lane astray, a broadcast where the last lane must
/// win), EXEC all on, partly on and off, after an op that computes the
/// data. The buffer afterwards, the fault and the registers must be the
/// same. Where the interpreter's wave-wide path would not take the store
/// (an unaligned lane, a dword past the buffer, an address before it)
/// the block must leave with the store not run, for the interpreter.
#[test]
fn global_stores_run_in_blocks_where_allowed() {
    let variant = gfx1100(false);
    let stores = [
        "global_store_b32 v[2:3], v10, off",
        "global_store_b32 v[2:3], v10, off offset:-8",
        "global_store_b32 v4, v10, s[8:9] offset:4",
        "flat_store_b32 v[2:3], v10 offset:4",
    ];
    // Lane l's byte offset from the buffer, and whether the block stores
    // (else it leaves the store to the interpreter).
    type Layout = (&'static str, fn(u64) -> i64, bool);
    let layouts: [Layout; 10] = [
        ("row", |l| 64 + 4 * l as i64, true),
        (
            "two rows",
            |l| (l % 16 * 4 + l / 16 * 4096 + 128) as i64,
            true,
        ),
        (
            "chunks reversed",
            |l| ((7 - l / 4) * 16 + l % 4 * 4 + 512) as i64,
            true,
        ),
        // Chunk c starts 8 bytes after chunk c - 1: half of each chunk is
        // the next one's, whose lanes must win.
        (
            "chunks overlap",
            |l| (l / 4 * 8 + l % 4 * 4 + 256) as i64,
            true,
        ),
        (
            "one lane astray",
            |l| 64 + 4 * l as i64 + if l == 13 { 8 } else { 0 },
            true,
        ),
        ("broadcast", |_| 1024, true),
        ("unaligned", |l| 65 + 4 * l as i64, false),
        ("at the end", |l| (65536 - 128 + 4 * l) as i64, true),
        ("past the end", |l| (65536 - 128 + 4 * l) as i64 + 4, false),
        ("before", |l| -64 + 4 * l as i64, false),
    ];
    let mut bench = Bench::new("gfx1100", crate::jit_mode()).expect("bench");
    let buffer = bench.buffer();
    let mut failures = Vec::new();
    for store in stores {
        let lines = ["v_add_nc_u32 v10, v10, v1".to_string(), store.to_string()];
        let code = link(asm::assemble(&variant, &lines));
        let imm: i64 = store
            .split("offset:")
            .nth(1)
            .map_or(0, |o| o.parse().expect("offset"));
        for (name, at, stores_in_block) in layouts {
            if store.contains("s[8:9]") && name == "before" {
                continue;
            }
            for exec in [u32::MAX, 0x0f0f_0f0f, !1, 0] {
                let what = format!("{store}, {name}, EXEC {exec:#x}");
                let mut runs = Vec::new();
                for mode in [JitMode::On, JitMode::Off] {
                    fill_buffer(&bench, 16384, 0x9e37_79b9);
                    bench.jit = mode;
                    let w = &mut bench.wave;
                    w.lanes = 32;
                    for l in 0..32 {
                        let off = at(l as u64) - imm;
                        let addr = buffer.wrapping_add_signed(off);
                        w.vgpr[2][l] = addr as u32;
                        w.vgpr[3][l] = (addr >> 32) as u32;
                        w.vgpr[4][l] = off as u32;
                        w.vgpr[1][l] = l as u32 * 3;
                        w.vgpr[10][l] = 0x0100_0000 | l as u32;
                    }
                    w.sgpr[8] = buffer as u32;
                    w.sgpr[9] = (buffer >> 32) as u32;
                    w.sgpr[126] = exec;
                    w.mode.bits = 0x3f0;
                    let result = bench.run(&code, 100).map_err(|e| e.to_string());
                    let memory = bench.read_buffer().expect("buffer");
                    runs.push((result, memory, bench.wave.vgpr[10], bench.jit_exits));
                }
                let (jit, interpreted) = (&runs[0], &runs[1]);
                if jit.0 != interpreted.0 {
                    failures.push(format!(
                        "{what}: JIT {:?}, interpreter {:?}",
                        jit.0, interpreted.0
                    ));
                }
                if let Some(at) = (0..jit.1.len()).find(|&k| jit.1[k] != interpreted.1[k]) {
                    failures.push(format!("{what}: buffer byte {at:#x} differs"));
                }
                if jit.2 != interpreted.2 {
                    failures.push(format!("{what}: v10 differs"));
                }
                // Only lane 31 reaches past the end, lanes 0-15 before
                // the start.
                let reaches = match name {
                    "past the end" => exec >> 31 != 0,
                    "before" => exec & 0xffff != 0,
                    _ => exec != 0,
                };
                let left = jit.3 > 0;
                if reaches && left == stores_in_block {
                    failures.push(format!(
                        "{what}: the store was left to the interpreter: {left}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Global and flat loads in blocks, against the interpreter: every width,
/// both address forms (a 64-bit VGPR pair; a 32-bit VGPR on an SGPR
/// base), lane layouts (a row, reversed, a 4 KiB stride whose span is
/// checked lane by lane, a broadcast, lanes a dword apart whatever the
/// width, as a stencil's `x - 1, x, x + 1` in one b96 load, lane 0 astray
/// or before the buffer, where only the other lanes' being on lets the
/// block read rows in place), EXEC all on, partly on and off,
/// with an op before the load that reads its destination (it must see the
/// old value) and one after that reads the result. Where the
/// interpreter's wave-wide path would not take the load (an unaligned
/// lane, a dword past the buffer, an address before it) the block must
/// leave before changing anything, and the interpreter then loads or
/// faults as it does without the JIT.
#[test]
fn global_loads_run_in_blocks_where_allowed() {
    let variant = gfx1100(false);
    let loads = [
        ("global_load_b32 v10, v[2:3], off", 1),
        ("global_load_b32 v10, v[2:3], off offset:-8", 1),
        ("global_load_b64 v[10:11], v[2:3], off offset:8", 2),
        ("global_load_b96 v[10:12], v[2:3], off", 3),
        ("global_load_b128 v[10:13], v[2:3], off offset:16", 4),
        ("global_load_b32 v10, v4, s[8:9] offset:4", 1),
        ("global_load_b128 v[10:13], v4, s[8:9]", 4),
        ("flat_load_b32 v10, v[2:3] offset:4", 1),
        ("flat_load_b64 v[10:11], v[2:3]", 2),
    ];
    let lines: Vec<String> = loads
        .iter()
        .flat_map(|(l, _)| {
            [
                "v_mov_b32 v21, v10".to_string(),
                l.to_string(),
                "s_waitcnt vmcnt(0)".into(),
                "v_add_nc_u32 v20, v10, v1".into(),
            ]
        })
        .collect();
    let mut encoded = asm::assemble(&variant, &lines).into_iter();
    let mut bench = verify_bench();
    let data = fill_buffer(&bench, 16384, 0x9e37_79b9);
    let buffer = bench.buffer();
    // Lane l's byte offset from the buffer for a load of `bytes` a lane,
    // and whether the block runs to its end (else it leaves for the
    // interpreter), and whether the load faults.
    type Layout = (&'static str, fn(u64, u64) -> i64, bool, bool);
    let layouts: [Layout; 14] = [
        ("row", |l, b| 64 + (l * b) as i64, true, false),
        ("a dword apart", |l, _| 64 + 4 * l as i64, true, false),
        (
            "lane 0 astray",
            |l, b| 64 + (l * b) as i64 + if l == 0 { 8192 } else { 0 },
            true,
            false,
        ),
        ("lane 0 before", |l, _| 4 * l as i64 - 4, false, true),
        // Two rows of 16 lanes 4 KiB apart (a 16-wide workgroup's wave),
        // and 8 rows of 4 lanes in reverse order: each 4-lane chunk reads
        // consecutive dwords, which a b32 block loads as vectors.
        (
            "two rows",
            |l, b| (l % 16 * b + l / 16 * 4096 + 128) as i64,
            true,
            false,
        ),
        (
            "chunks reversed",
            |l, b| ((7 - l / 4) * 4 * b + l % 4 * b + 512) as i64,
            true,
            false,
        ),
        // One lane in the middle of a chunk out of its row.
        (
            "one lane astray",
            |l, b| 64 + (l * b) as i64 + if l == 13 { 8 } else { 0 },
            true,
            false,
        ),
        ("reversed", |l, b| 1024 - (l * b) as i64, true, false),
        (
            "4 KiB stride",
            |l, _| (l * 4096 % 61440 + 32) as i64,
            true,
            false,
        ),
        ("broadcast", |_, _| 256, true, false),
        ("unaligned", |l, b| 65 + (l * b) as i64, false, false),
        // The last lane's access ends at the buffer's end, then 4 past.
        (
            "at the end",
            |l, b| (65536 - 32 * b + l * b) as i64,
            true,
            false,
        ),
        (
            "past the end",
            |l, b| (65536 - 32 * b + l * b) as i64 + 4,
            false,
            true,
        ),
        ("before", |l, b| -64 + (l * b) as i64, false, true),
    ];
    let mut failures = Vec::new();
    for (load, dwords) in loads {
        let code = link(encoded.by_ref().take(4).collect());
        let bytes = 4 * dwords;
        // The offset each form adds (the SGPR base is the buffer).
        let imm: i64 = load
            .split("offset:")
            .nth(1)
            .map_or(0, |o| o.parse().expect("offset"));
        for (name, at, runs, faults) in layouts {
            for exec in [u32::MAX, 0x0f0f_0f0f, !1, 0] {
                let w = &mut bench.wave;
                w.lanes = 32;
                for l in 0..32 {
                    let off = at(l as u64, bytes) - imm;
                    let addr = buffer.wrapping_add_signed(off);
                    w.vgpr[2][l] = addr as u32;
                    w.vgpr[3][l] = (addr >> 32) as u32;
                    w.vgpr[4][l] = off as u32;
                    w.vgpr[1][l] = l as u32 * 3;
                    for k in 10..14 {
                        w.vgpr[k][l] = (k as u32) << 24 | l as u32;
                    }
                }
                w.sgpr[8] = buffer as u32;
                w.sgpr[9] = (buffer >> 32) as u32;
                w.sgpr[126] = exec;
                w.mode.bits = 0x3f0;
                // Only lane 31 reaches past the end, every lane but 31
                // before the start (lane 0 alone in "lane 0 before").
                let reaches = match name {
                    "past the end" => exec >> 31 != 0,
                    "lane 0 before" => exec & 1 != 0,
                    _ => exec & 0x7fff_ffff != 0,
                };
                let (runs, faults) = (runs || !reaches, faults && reaches);
                // The SGPR base's 32-bit offsets cannot reach before it.
                if load.contains("s[8:9]") && name.ends_with("before") {
                    continue;
                }
                let what = format!("{load}, {name}, EXEC {exec:#x}");
                run_expecting(&mut bench, &code, &what, runs, faults, &mut failures);
                if !faults && exec == u32::MAX && runs {
                    // Every lane's first dword, as the buffer holds it.
                    for l in 0..32 {
                        let at = at(l as u64, bytes) as usize;
                        let want = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                        let got = bench.wave.vgpr[10][l];
                        if got != want {
                            failures.push(format!("{what}: lane {l} {got:#x}, buffer {want:#x}"));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
