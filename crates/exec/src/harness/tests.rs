//! Tests that run code on the bench: how the dispatch loop retires folded
//! hints, and the RDNA4 matrix instructions against a host matmul.

// Matrices are indexed by row and column, as the ISA guide's tables are.
#![allow(clippy::needless_range_loop)]

use std::process::Command;

use softgpu_interp::float::{f, h, to_h};
use softgpu_interp::ops::fp8::{decode, F8};
use softgpu_interp::ops::Trap;
use softgpu_interp::wave::Wave;

use super::{Bench, BenchError};
use crate::JitMode;

// gfx11 SOPP encodings, as llvm-mc-19 -show-encoding prints them.
const S_NOP: u32 = 0xbf80_0000;
const S_WAITCNT_0: u32 = 0xbf89_0000;
const S_DELAY_ALU: u32 = 0xbf87_0000;
const S_SLEEP_1: u32 = 0xbf83_0001;

fn code(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn folded_hints_still_count_as_retired() {
    let mut bench = Bench::new("gfx1100", JitMode::Verify).unwrap();
    // Three hints, a sleep (not a hint: it yields), two more, then the
    // bench's own s_endpgm: seven instructions.
    let words = [S_NOP, S_WAITCNT_0, S_DELAY_ALU, S_SLEEP_1, S_NOP, S_NOP];
    assert_eq!(bench.run(&code(&words), 1000).unwrap(), 7);
}

#[test]
fn a_budget_ends_inside_a_run_of_hints_at_its_exact_instruction() {
    let mut bench = Bench::new("gfx1100", JitMode::Verify).unwrap();
    let words = [S_NOP; 6];
    match bench.run(&code(&words), 4) {
        Err(BenchError::Trap {
            index: 4,
            trap: Trap::Budget(4),
            ..
        }) => {}
        other => panic!("expected a budget trap at instruction 4, got {other:?}"),
    }
}

fn assemble(text: &str) -> Vec<u8> {
    let out = Command::new("llvm-mc-19")
        .args(["-triple=amdgcn", "-mcpu=gfx1201", "-show-encoding"])
        .arg("-mattr=+wavefrontsize32")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .expect("llvm-mc-19");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut bytes = Vec::new();
    for line in text.lines().filter(|l| l.contains("encoding:")) {
        let list = line
            .split("encoding: [")
            .nth(1)
            .unwrap()
            .split(']')
            .next()
            .unwrap();
        bytes.extend(
            list.split(',')
                .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap()),
        );
    }
    assert!(!bytes.is_empty(), "llvm-mc-19 made nothing of {text}");
    bytes
}

/// A small deterministic generator.
fn rng(seed: &mut u64) -> u32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 33) as u32
}

/// Runs `inst` on a wave32 whose A is v[0..], B v[16..], C/D v[32..]
/// (index v[48]), after `fill` set them; returns the wave.
fn run(inst: &str, fill: impl FnOnce(&mut Wave)) -> Bench {
    let mut bench = Bench::new("gfx1201", JitMode::Off).unwrap();
    bench.wave.lanes = 32;
    fill(&mut bench.wave);
    let code = assemble(inst);
    bench.run(&code, 10).unwrap();
    bench
}

/// Puts the 16-bit value of element (i, k) of a 16×16 matrix at the
/// RDNA4 wave32 position the ISA guide's table gives, written from
/// the register's side: VGPR r, lane l, half hh holds row l % 16 and
/// K = 8·(r / 2) + 4·(l / 16) + 2·(r % 2) + hh.
fn load16(w: &mut Wave, base: usize, val: impl Fn(usize, usize) -> u32) {
    for r in 0..4 {
        for l in 0..32 {
            let i = l % 16;
            let k0 = 8 * (r / 2) + 4 * (l / 16) + 2 * (r % 2);
            w.vgpr[base + r][l] = val(i, k0) | val(i, k0 + 1) << 16;
        }
    }
}

/// D's f32 (i, j) in wave32: VGPR i % 8, lane 16·(i / 8) + j.
fn d32(w: &Wave, base: usize, i: usize, j: usize) -> u32 {
    w.vgpr[base + i % 8][16 * (i / 8) + j]
}

#[test]
fn gfx12_f16_wmma_matches_a_matmul() {
    let mut seed = 1;
    let mut a = [[0u32; 16]; 16];
    let mut b = [[0u32; 16]; 16];
    let mut c = [[0f32; 16]; 16];
    for i in 0..16 {
        for k in 0..16 {
            // Small integers and halves: exact in f16 and in the sums.
            a[i][k] = to_h((rng(&mut seed) % 9) as f32 / 2.0 - 2.0);
            b[k][i] = to_h((rng(&mut seed) % 7) as f32 - 3.0);
            c[i][k] = (rng(&mut seed) % 100) as f32;
        }
    }
    let bench = run(
        "v_wmma_f32_16x16x16_f16 v[32:39], v[0:3], v[16:19], v[32:39] neg_lo:[1,0,0] neg_hi:[1,0,0]",
        |w| {
            load16(w, 0, |i, k| a[i][k]);
            load16(w, 16, |j, k| b[k][j]);
            for i in 0..16 {
                for j in 0..16 {
                    w.vgpr[32 + i % 8][16 * (i / 8) + j] = c[i][j].to_bits();
                }
            }
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let dot: f32 = (0..16).map(|k| -h(a[i][k]) * h(b[k][j])).sum();
            assert_eq!(f(d32(&bench.wave, 32, i, j)), dot + c[i][j], "{i} {j}");
        }
    }
}

#[test]
fn gfx12_f16_accumulator_is_packed() {
    let bench = run(
        "v_wmma_f16_16x16x16_f16 v[32:35], v[0:3], v[16:19], v[32:35]",
        |w| {
            load16(w, 0, |i, k| to_h((i + k) as f32));
            load16(w, 16, |j, k| to_h(if k == j { 1.0 } else { 0.0 }));
            for r in 32..36 {
                w.vgpr[r][..32].fill(to_h(0.5) * 0x1_0001);
            }
        },
    );
    // A · I + 0.5: D[i][j] in VGPR i/2 % 4, half i % 2, lane 16·(i/8) + j.
    for i in 0..16 {
        for j in 0..16 {
            let v = bench.wave.vgpr[32 + (i / 2) % 4][16 * (i / 8) + j] >> (16 * (i % 2));
            assert_eq!(h(v & 0xffff), (i + j) as f32 + 0.5, "{i} {j}");
        }
    }
}

#[test]
fn gfx12_fp8_wmma_matches_a_matmul() {
    let mut seed = 7;
    let mut a = [[0u8; 16]; 16];
    let mut b = [[0u8; 16]; 16];
    for i in 0..16 {
        for k in 0..16 {
            // Finite codes only (no NaN, no bf8 infinity).
            a[i][k] = (rng(&mut seed) % 0x70) as u8 | (rng(&mut seed) as u8 & 0x80);
            b[k][i] = (rng(&mut seed) % 0x70) as u8 | (rng(&mut seed) as u8 & 0x80);
        }
    }
    // 8-bit A/B, wave32: VGPR r of lane l holds row l % 16, K =
    // 8·(l / 16) + 4·r + byte.
    let load8 = |w: &mut Wave, base: usize, val: &dyn Fn(usize, usize) -> u8| {
        for r in 0..2 {
            for l in 0..32 {
                w.vgpr[base + r][l] = (0..4)
                    .map(|byte| (val(l % 16, 8 * (l / 16) + 4 * r + byte) as u32) << (8 * byte))
                    .sum();
            }
        }
    };
    let bench = run(
        "v_wmma_f32_16x16x16_fp8_bf8 v[32:39], v[0:1], v[16:17], 1.0",
        |w| {
            load8(w, 0, &|i, k| a[i][k]);
            load8(w, 16, &|j, k| b[k][j]);
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let dot: f64 = (0..16)
                .map(|k| decode(F8::Fp8, a[i][k]) as f64 * decode(F8::Bf8, b[k][j]) as f64)
                .sum();
            assert_eq!(f(d32(&bench.wave, 32, i, j)), (dot + 1.0) as f32, "{i} {j}");
        }
    }
}

#[test]
fn gfx12_iu4_k32_wmma_matches_a_matmul() {
    let mut seed = 3;
    let mut a = [[0i64; 32]; 16];
    let mut b = [[0i64; 16]; 32];
    for i in 0..16 {
        for k in 0..32 {
            a[i][k] = (rng(&mut seed) % 16) as i64 - 8; // signed (NEG[0])
            b[k][i] = (rng(&mut seed) % 16) as i64; // unsigned
        }
    }
    // 4-bit, K = 32, wave32: VGPR r of lane l holds row l % 16,
    // K = 16·(l / 16) + 8·r + nibble.
    let load4 = |w: &mut Wave, base: usize, val: &dyn Fn(usize, usize) -> i64| {
        for r in 0..2 {
            for l in 0..32 {
                w.vgpr[base + r][l] = (0..8)
                    .map(|n| ((val(l % 16, 16 * (l / 16) + 8 * r + n) as u32) & 0xf) << (4 * n))
                    .sum();
            }
        }
    };
    let bench = run(
        "v_wmma_i32_16x16x32_iu4 v[32:39], v[0:1], v[16:17], v[32:39] neg_lo:[1,0,0]",
        |w| {
            load4(w, 0, &|i, k| a[i][k]);
            load4(w, 16, &|j, k| b[k][j]);
            for r in 32..40 {
                w.vgpr[r][..32].fill(5);
            }
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let dot: i64 = (0..32).map(|k| a[i][k] * b[k][j]).sum();
            assert_eq!(d32(&bench.wave, 32, i, j) as i32 as i64, dot + 5, "{i} {j}");
        }
    }
}

#[test]
fn gfx12_sparse_f16_swmmac_matches_a_matmul() {
    let mut seed = 11;
    // A is 16×32 with two nonzeros in each group of four.
    let mut a = [[0f32; 32]; 16];
    let mut stored = [[(0usize, 0f32); 16]; 16]; // (position, value) per stored slot
    for i in 0..16 {
        for g in 0..8 {
            let p0 = (rng(&mut seed) % 3) as usize;
            let p1 = p0 + 1 + (rng(&mut seed) % (3 - p0 as u32)) as usize;
            for (n, p) in [p0, p1].into_iter().enumerate() {
                let v = (rng(&mut seed) % 9) as f32 - 4.0;
                a[i][4 * g + p] = v;
                stored[i][2 * g + n] = (p, v);
            }
        }
    }
    let mut b = [[0f32; 16]; 32];
    for row in b.iter_mut() {
        for v in row.iter_mut() {
            *v = (rng(&mut seed) % 5) as f32 - 2.0;
        }
    }
    let bench = run(
        "v_swmmac_f32_16x16x32_f16 v[32:39], v[0:3], v[16:23], v48 index_key:1",
        |w| {
            // Sparse A, wave32: group g of row i in VGPR 2·(g / 4) + g % 2,
            // lane 16·((g / 2) % 2) + i; its index nibble at bit
            // 8·(g / 4) + 4·(g % 2) of set 1 (bits 16–31) of v48.
            for i in 0..16 {
                for g in 0..8 {
                    let (reg, lane) = (2 * (g / 4) + g % 2, 16 * ((g / 2) % 2) + i);
                    let (p0, v0) = stored[i][2 * g];
                    let (p1, v1) = stored[i][2 * g + 1];
                    w.vgpr[reg][lane] = to_h(v0) | to_h(v1) << 16;
                    let at = 16 + 8 * (g / 4) + 4 * (g % 2);
                    w.vgpr[48][lane] |= ((p0 | p1 << 2) as u32) << at;
                }
            }
            // Dense B (32×16), wave32: VGPR r of lane l holds column
            // l % 16, K = 16·(r / 4) + 8·(l / 16) + 2·(r % 4) + half.
            for r in 0..8 {
                for l in 0..32 {
                    let k = 16 * (r / 4) + 8 * (l / 16) + 2 * (r % 4);
                    w.vgpr[16 + r][l] = to_h(b[k][l % 16]) | to_h(b[k + 1][l % 16]) << 16;
                }
            }
            for r in 32..40 {
                w.vgpr[r][..32].fill(1.5f32.to_bits());
            }
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let dot: f32 = (0..32).map(|k| a[i][k] * b[k][j]).sum();
            assert_eq!(f(d32(&bench.wave, 32, i, j)), dot + 1.5, "{i} {j}");
        }
    }
}
