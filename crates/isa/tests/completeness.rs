//! Opcode-space audit against the LLVM disassembler: for every encoding of
//! each family, walk every opcode value through a few operand templates,
//! disassemble all the words with one `llvm-mc-19` run, and require that
//! each word llvm accepts decodes here to the same op (mnemonic) and prints
//! the same text.

mod common;

use softgpu_isa::{decode, disassemble, disassemble_wave64, Family, Inst};

const K: u32 = 0x4049_0FDB; // a literal
const V: u32 = 256; // 9-bit source code of v0
const NULL: u32 = 124;
const INL: u32 = 0xF0; // inline constant 0.5
const LIT: u32 = 255;

fn le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Literal values: an ordinary one, then values whose printing depends on
/// the operand type (inline integers, f32/f16/bf16/f64 inline floats, high
/// bits set in 16-bit operands).
const LITS: &[u32] = &[
    K,
    0,
    0xffff_ffff,
    0x40,
    0xffff_fff0,
    0x3f00_0000,
    0x3800,
    0xbc00,
    0xffff,
    0x3e22_f983,
    0x3118,
    0x3ff0_0000,
    0x1_3800,
    0x1_3f80,
];

/// The words, or when one of the sources is 255 (a literal) the words
/// followed by each of [`LITS`].
fn with_lit(words: Vec<u32>, srcs: &[u32]) -> Vec<Vec<u8>> {
    if !srcs.contains(&LIT) {
        return vec![le(&words)];
    }
    LITS.iter()
        .map(|&k| {
            let mut w = words.clone();
            w.push(k);
            le(&w)
        })
        .collect()
}

/// (encoding name, candidate words of opcode `op`, opcode count).
type Enc = (&'static str, u32, fn(u32) -> Vec<Vec<u8>>);

fn sop1(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [10, 0] {
        for s0 in [2, 0x80, 0, LIT] {
            v.extend(with_lit(vec![0xBE80_0000 | d << 16 | op << 8 | s0], &[s0]));
        }
    }
    v
}

fn sop2(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [10, 0] {
        for s0 in [2, 0, LIT] {
            for s1 in [4, 0x81] {
                v.extend(with_lit(
                    vec![0x8000_0000 | op << 23 | d << 16 | s1 << 8 | s0],
                    &[s0],
                ));
            }
        }
    }
    v
}

fn sopk(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [10, 0] {
        for imm in [0x10, 0, 0x8123] {
            v.push(le(&[0xB000_0000 | op << 23 | d << 16 | imm]));
        }
        v.extend(with_lit(
            vec![0xB000_0000 | op << 23 | d << 16 | 0x1801],
            &[LIT],
        ));
    }
    v
}

fn sopc(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for s0 in [2, 0, LIT] {
        for s1 in [4, 0x81] {
            v.extend(with_lit(vec![0xBF00_0000 | op << 16 | s1 << 8 | s0], &[s0]));
        }
    }
    v
}

fn sopp(op: u32) -> Vec<Vec<u8>> {
    [0, 1, 0x10, 0x3f7]
        .iter()
        .map(|imm| le(&[0xBF80_0000 | op << 16 | imm]))
        .collect()
}

fn smem(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [8, 0] {
        for base in [1, 0, 2] {
            for soff in [NULL, 4] {
                for off in [0x10, 0, 0x1F_FFF0] {
                    v.push(le(&[
                        0xF400_0000 | op << 18 | d << 6 | base,
                        soff << 25 | off,
                    ]));
                }
            }
        }
    }
    v
}

/// DPP16 (row_shl:1) and DPP8 control words for src0 = v2.
const DPP16: u32 = 2 | 0x101 << 8 | 0xF << 24 | 0xF << 28;
const DPP8: u32 = 2 | 0o76543210 << 8;
/// The same with src0 = v130 (the high half of v2 in a 16-bit slot) and
/// DPP16's neg/abs modifiers on both sources.
const DPP16_HI: u32 = 130 | 0x101 << 8 | 0xF << 20 | 0xF << 24 | 0xF << 28;
const DPP8_HI: u32 = 130 | 0o76543210 << 8;

/// The DPP forms of a 32-bit-encoding word built by `w` from its src0 field.
fn dpp_forms(w: impl Fn(u32) -> u32) -> Vec<Vec<u8>> {
    vec![
        le(&[w(250), DPP16]),
        le(&[w(233), DPP8]),
        le(&[w(250), DPP16_HI]),
        le(&[w(233), DPP8_HI]),
    ]
}

fn vop1(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w = |d: u32, s0: u32| 0x7E00_0000 | d << 17 | op << 9 | s0;
    for d in [10, 0] {
        for s0 in [V + 2, 2, 0, INL, LIT] {
            v.extend(with_lit(vec![w(d, s0)], &[s0]));
        }
    }
    // 16-bit slots: v128 and above are high halves (true16).
    for (d, s0) in [(130, V + 130), (10, V + 130), (130, V + 2)] {
        v.push(le(&[w(d, s0)]));
    }
    v.extend(dpp_forms(|s0| w(10, s0)));
    v.extend(dpp_forms(|s0| w(130, s0)));
    v
}

fn vop2(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w = |d: u32, s0: u32, s1: u32| op << 25 | d << 17 | s1 << 9 | s0;
    for s0 in [V + 2, 2, INL, LIT] {
        for s1 in [4, 132] {
            v.extend(with_lit(vec![w(10, s0, s1)], &[s0]));
        }
    }
    v.extend(with_lit(vec![w(10, V + 2, 4)], &[LIT])); // fmaak/fmamk's K
    v.push(le(&[w(10, 2, 4), K]));
    for (d, s0, s1) in [(130, V + 130, 132), (10, V + 130, 4), (130, V + 2, 4)] {
        v.push(le(&[w(d, s0, s1)]));
    }
    v.extend(dpp_forms(|s0| w(10, s0, 4)));
    v.extend(dpp_forms(|s0| w(10, s0, 132)));
    v
}

fn vopc(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w = |s0: u32, s1: u32| 0x7C00_0000 | op << 17 | s1 << 9 | s0;
    for s0 in [V + 2, 2, INL, LIT] {
        v.extend(with_lit(vec![w(s0, 4)], &[s0]));
    }
    for (s0, s1) in [(V + 130, 132), (V + 130, 4), (V + 2, 132)] {
        v.push(le(&[w(s0, s1)]));
    }
    v.extend(dpp_forms(|s0| w(s0, 4)));
    v.extend(dpp_forms(|s0| w(s0, 132)));
    v
}

fn vop3(op: u32) -> Vec<Vec<u8>> {
    vop3_words(0xD400_0000, op)
}

/// A VOP3 word's forms under `prefix` (gfx11's 0xD4, gfx9's 0xD0).
fn vop3_words(prefix: u32, op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w = |lo: u32, d: u32, s: [u32; 3], hi: u32| {
        with_lit(
            vec![
                prefix | op << 16 | lo << 8 | d,
                hi << 27 | s[2] << 18 | s[1] << 9 | s[0],
            ],
            &s,
        )
    };
    let (v2, v4, v6) = (V + 2, V + 4, V + 6);
    for s in [
        [v2, v4, v6],
        [v2, v4, 0],
        [v2, 0, 0],
        [2, v4, v6],
        [v2, 4, v6],
        [v2, 4, 0],
        [2, 4, 0],
        [2, 0, 0],
        [INL, v4, v6],
        [LIT, v4, v6],
        [v2, v4, LIT],
        [v2, LIT, v6],
        [LIT, v4, 0],
        [v2, 106, 0],
    ] {
        v.extend(w(0, 10, s, 0));
    }
    v.extend(w(0, 0, [0, 0, 0], 0));
    v.extend(w(0, 106, [v2, v4, 0], 0)); // VOPC sdst vcc_lo
                                         // VOP3SD sdst = vcc_lo (abs/op_sel bits elsewhere)
    v.extend(w(106, 10, [v2, v4, v6], 0));
    v.extend(w(106, 10, [v2, v4, 0], 0));
    // modifiers: abs src0, neg src1, clamp, omod ×2
    v.extend(w(0x81, 10, [v2, v4, v6], 0b0101));
    v.extend(w(0x81, 10, [v2, v4, 0], 0b0101));
    // op_sel src0 + dst
    v.extend(w(0x48, 10, [v2, v4, v6], 0));
    v.extend(w(0x48, 10, [v2, v4, 0], 0));
    // DPP
    v.push(le(&[prefix | op << 16 | 10, v4 << 9 | 250, DPP16]));
    v.push(le(&[
        prefix | op << 16 | 10,
        v6 << 18 | v4 << 9 | 250,
        DPP16,
    ]));
    v.push(le(&[prefix | op << 16 | 10, v4 << 9 | 233, DPP8]));
    v
}

fn vop3p(op: u32) -> Vec<Vec<u8>> {
    vop3p_words(0xCC00_0000, op)
}

/// A VOP3P word's forms under `prefix` (gfx11's 0xCC, gfx9's 0xD38).
fn vop3p_words(prefix: u32, op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    // lo: neg_hi [10:8], op_sel [13:11], op_sel_hi2 [14], clamp [15];
    // hi: op_sel_hi [1:0], neg [4:2]
    let w = |lo: u32, s: [u32; 3], hi: u32| {
        with_lit(
            vec![
                prefix | op << 16 | lo << 8 | 10,
                hi << 27 | s[2] << 18 | s[1] << 9 | s[0],
            ],
            &s,
        )
    };
    let (v2, v4, v6) = (V + 2, V + 4, V + 6);
    for s in [
        [v2, v4, v6],
        [V + 8, V + 16, V],
        [2, v4, v6],
        [INL, v4, v6],
        [LIT, v4, v6],
        [v2, v4, LIT],
    ] {
        v.extend(w(0x40, s, 3));
        v.extend(w(0, s, 0));
    }
    for s in [[v2, v4, 0], [2, 4, 0], [INL, LIT, 0]] {
        v.extend(w(0x40, s, 3));
        v.extend(w(0, s, 3));
        v.extend(w(0, s, 0));
    }
    // op_sel src0, op_sel_hi off for src1, neg_lo src1, neg_hi src0, clamp
    v.extend(w(0x80 | 0x40 | 0x08 | 0x01, [v2, v4, v6], 0b01001));
    v.extend(w(0x80 | 0x08 | 0x01, [v2, v4, 0], 0b01001));
    v
}

fn vopd(op: u32) -> Vec<Vec<u8>> {
    // op = opx * 32 + opy
    let (opx, opy) = (op >> 5, op & 31);
    let mut v = Vec::new();
    for (x0, lit) in [
        (V + 2, false),
        (2, false),
        (INL, false),
        (V + 2, true),
        (LIT, true),
    ] {
        let w = vec![
            0xC800_0000 | opx << 22 | opy << 17 | 4 << 9 | x0,
            10 << 24 | 6 << 17 | 7 << 9 | (V + 13),
        ];
        match (lit, x0) {
            (true, LIT) => v.extend(with_lit(w, &[LIT])),
            (true, _) => v.push(le(&[w[0], w[1], K])), // fmaak/fmamk's K
            _ => v.push(le(&w)),
        }
    }
    v
}

fn ds(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w = |off: u32, gds: u32, d: u32, a: [u32; 3]| {
        le(&[
            0xD800_0000 | op << 18 | gds << 17 | off,
            d << 24 | a[2] << 16 | a[1] << 8 | a[0],
        ])
    };
    for d in [10, 0] {
        for a in [[2, 4, 6], [2, 4, 0], [2, 0, 0], [0, 0, 0]] {
            v.push(w(0x0301, 0, d, a));
        }
    }
    v.push(w(0, 0, 10, [2, 4, 6]));
    v.push(w(0, 0, 10, [2, 4, 0]));
    v.push(w(0x8010, 0, 10, [2, 4, 0]));
    v.push(w(0x0301, 1, 10, [2, 4, 0]));
    v
}

fn flat(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for seg in 0..3 {
        for d in [10, 0] {
            for data in [4, 0] {
                for saddr in [NULL, 2] {
                    for (glc, off, sve) in [(0, 0x10, 0), (1, 0x1FF0, 0), (0, 0, 1)] {
                        v.push(le(&[
                            0xDC00_0000 | op << 18 | seg << 16 | glc << 14 | off,
                            d << 24 | sve << 23 | saddr << 16 | data << 8 | 2,
                        ]));
                    }
                }
            }
        }
    }
    v
}

fn mubuf(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [10, 0] {
        for (vaddr, en) in [(2, 1), (0, 0), (2, 2), (2, 3)] {
            for (glc, off) in [(0, 16), (1, 0)] {
                v.push(le(&[
                    0xE000_0000 | op << 18 | glc << 14 | off,
                    12 << 24 | en << 22 | 2 << 16 | d << 8 | vaddr,
                ]));
            }
        }
    }
    v
}

fn mtbuf(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for fmt in [1, 22, 63, 0] {
        for (vaddr, en) in [(2, 1), (0, 0)] {
            v.push(le(&[
                0xE800_0000 | fmt << 19 | op << 15 | 16,
                12 << 24 | en << 22 | 2 << 16 | 10 << 8 | vaddr,
            ]));
        }
    }
    v
}

/// MIMG words: vdata v0, vaddr v4 (NSA: v4, v5, v6, v7, v8), srsrc
/// s[8:15], ssamp s[16:19] or none.
fn mimg_word(op: u32, lo: u32, w1: u32, nsa: Option<u32>) -> Vec<u8> {
    let mut w = vec![0xF000_0000 | op << 18 | lo | nsa.is_some() as u32, w1];
    w.extend(nsa);
    le(&w)
}

const NSA: u32 = 5 | 6 << 8 | 7 << 16 | 8 << 24;
const SAMP: u32 = 4 << 26;
const RSRC: u32 = 2 << 16;

fn mimg(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let base = RSRC | 4;
    // Every dim, with and without a16, sequential and NSA addresses.
    for dim in 0..8 {
        for a16 in [0, 1 << 16] {
            for nsa in [None, Some(NSA)] {
                for samp in [SAMP, 0] {
                    v.push(mimg_word(op, 0xf << 8 | dim << 2 | a16, base | samp, nsa));
                }
            }
        }
    }
    // Data widths: dmask, d16, tfe.
    for dmask in [0, 1, 3, 5, 7, 0xf] {
        for d16 in [0, 1 << 17] {
            for tfe in [0, 1 << 21] {
                for samp in [SAMP, 0] {
                    v.push(mimg_word(op, dmask << 8 | d16, base | tfe | samp, None));
                }
            }
        }
    }
    // The other flags: unorm, glc, slc, dlc, r128, lwe.
    for lo in [1 << 7 | 1 << 14, 1 << 12 | 1 << 13 | 1 << 15] {
        for samp in [SAMP, 0] {
            v.push(mimg_word(op, 0xf << 8 | 1 << 2 | lo, base | samp, None));
        }
    }
    v.push(mimg_word(op, 1 << 8, base | 1 << 22, None)); // lwe
                                                         // Ranges that would run past v255 (LLVM falls back to the first variant).
    for samp in [SAMP, 0] {
        v.push(mimg_word(
            op,
            0xf << 8 | 2 << 2,
            RSRC | 254 << 8 | 250 | samp,
            None,
        ));
        let hi_nsa = 5 | 6 << 8 | 7 << 16 | 252 << 24;
        v.push(mimg_word(
            op,
            0xf << 8 | 2 << 2,
            RSRC | 4 | samp,
            Some(hi_nsa),
        ));
    }
    // Ray queries: unorm and r128 set, 128-bit resource s[8:11].
    let bvh_nsa = 10 | 11 << 8 | 14 << 16 | 17 << 24;
    for a16 in [0, 1 << 16] {
        for nsa in [None, Some(bvh_nsa)] {
            v.push(mimg_word(
                op,
                0xf << 8 | 0x80 | 1 << 15 | a16,
                RSRC | 9,
                nsa,
            ));
        }
    }
    v
}

fn exp(_: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for target in 0..64 {
        for en in [0xf, 0x5, 0xa, 0] {
            for tail in [0, 1 << 11, 1 << 13] {
                v.push(le(&[0xF800_0000 | tail | target << 4 | en, 0x0302_0100]));
            }
        }
    }
    v.push(le(&[0xF800_000F, 0xFFFE_FDFC]));
    v
}

fn vinterp(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w = |lo: u32, d: u32, s: [u32; 3], neg: u32| {
        le(&[
            0xCD00_0000 | op << 16 | lo << 8 | d,
            neg << 29 | s[2] << 18 | s[1] << 9 | s[0],
        ])
    };
    let (v1, v2, v3) = (V + 1, V + 2, V + 3);
    for wait in 0..8 {
        v.push(w(wait, 0, [v1, v2, v3], 0));
    }
    for neg in 1..8 {
        v.push(w(0, 0, [v1, v2, v3], neg));
    }
    for opsel in [1, 2, 4, 8, 0xf] {
        v.push(w(opsel << 3, 0, [v1, v2, v3], 0));
    }
    v.push(w(0x80 | 2, 255, [V + 255, V + 254, V + 253], 5)); // clamp
    v.push(w(0, 0, [1, v2, v3], 0)); // an SGPR source
    v.push(w(0, 0, [v1, INL, v3], 0));
    v
}

fn lds_direct(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for attr in 0..64 {
        for chan in 0..4 {
            v.push(le(&[0xCE00_0000 | op << 20 | attr << 10 | chan << 8 | 1]));
        }
    }
    for wait in 0..16 {
        v.push(le(&[0xCE00_0000 | op << 20 | wait << 16 | 255]));
    }
    v
}

// ---- gfx12's own words ----------------------------------------------------

/// SMEM: op in bits 13-18, th 23-24, scope 21-22; a 24-bit signed offset.
fn smem12(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [8, 0] {
        for base in [1, 0, 2] {
            for soff in [NULL, 4] {
                for (off, policy) in [(0x10, 0), (0, 1 << 23 | 3 << 21), (0xFF_FFF0, 2 << 21)] {
                    v.push(le(&[
                        0xF400_0000 | policy | op << 13 | d << 6 | base,
                        soff << 25 | off,
                    ]));
                }
            }
        }
    }
    v
}

/// VFLAT/VSCRATCH/VGLOBAL: saddr, op and segment; vdst, sve, scope, th,
/// data; vaddr and a 24-bit signed offset.
fn vmem12(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for seg in 0..3 {
        for d in [10, 0] {
            for data in [4, 0] {
                for saddr in [NULL, 2] {
                    for (th, scope, off, sve) in
                        [(0, 0, 0x10, 0), (1, 2, 0xFF_F000, 0), (0, 0, 0, 1)]
                    {
                        v.push(le(&[
                            0xEC00_0000 | seg << 24 | op << 14 | saddr,
                            data << 23 | th << 20 | scope << 18 | sve << 17 | d,
                            off << 8 | 2,
                        ]));
                    }
                }
            }
        }
    }
    v
}

/// VBUFFER (typed from op 128): soffset, op, tfe; vdata, the resource at
/// s[8:11], th, scope, format, offen/idxen; vaddr and the offset.
fn vbuffer12(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [10, 0] {
        for (vaddr, en) in [(2, 1), (0, 0), (2, 2), (2, 3)] {
            for (th, scope, fmt, off) in [(0, 0, 1, 16), (1, 3, 22, 0), (0, 1, 63, 0x7F_FFFF)] {
                v.push(le(&[
                    0xC400_0000 | op << 14 | 12,
                    en << 30 | fmt << 23 | th << 20 | scope << 18 | 8 << 9 | d,
                    off << 8 | vaddr,
                ]));
            }
        }
    }
    v
}

/// gfx12's image words: VIMAGE (`sample` false) or VSAMPLE; `lo` the
/// first word's fields besides op, `w1` the second's besides vdata v0,
/// vaddr v4, v5, … in the first `na` address fields (LLVM rejects a
/// nonzero field past an op's widest address variant, so fewer are tried
/// too), srsrc s[8:15] and VSAMPLE's ssamp s[16:19] unless `w1` names them.
fn image12_word(sample: bool, op: u32, lo: u32, w1: u32, na: u32) -> Vec<u8> {
    let va = |k: u32| if k < na { 4 + k } else { 0 };
    let (w0, w1) = if sample {
        let samp = if w1 >> 23 == 0 { 16 << 23 } else { 0 };
        (0xE400_0000 | op << 14 | lo, samp | w1)
    } else {
        (0xD000_0000 | op << 14 | lo, va(4) << 24 | w1)
    };
    let rsrc = if w1 >> 9 & 0x1ff == 0 { 8 << 9 } else { 0 };
    le(&[
        w0,
        rsrc | w1,
        va(0) | va(1) << 8 | va(2) << 16 | va(3) << 24,
    ])
}

fn image12(sample: bool, op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let nas: &[u32] = if sample {
        &[4, 3, 2, 1]
    } else {
        &[5, 4, 3, 2, 1]
    };
    // Every dim, with and without a16, every address count.
    for dim in 0..8 {
        for a16 in [0, 1 << 6] {
            for &na in nas {
                v.push(image12_word(sample, op, 0xf << 22 | dim | a16, 0, na));
            }
        }
    }
    // Data widths: dmask, d16, tfe (VSAMPLE: bit 3 of the first word,
    // VIMAGE: bit 23 of the second).
    for dmask in [0, 1, 3, 5, 7, 0xf] {
        for d16 in [0, 1 << 5] {
            for tfe in [false, true] {
                let (lo, w1) = match (tfe, sample) {
                    (false, _) => (0, 0),
                    (true, true) => (1 << 3, 0),
                    (true, false) => (0, 1 << 23),
                };
                for &na in &[nas[0], 1] {
                    v.push(image12_word(sample, op, dmask << 22 | d16 | lo, w1, na));
                }
            }
        }
    }
    // The other fields: r128, unorm, lwe (VSAMPLE's), the cache policy, and
    // the resource and sampler registers.
    let w1s = [
        1 << 8,
        1 << 20,
        2 << 20 | 3 << 18,
        3 << 20 | 3 << 18,
        3 << 20 | 1 << 18,
        7 << 20 | 2 << 18,
        5 << 20 | 2 << 18,
        1 << 18,
        100 << 9,
        116 << 9,
    ];
    // VSAMPLE's sampler at s[100:103], ttmp[0:3] and null.
    let ssamps: &[u32] = if sample {
        &[100 << 23, 108 << 23, 124 << 23]
    } else {
        &[]
    };
    for &w1 in w1s.iter().chain(ssamps) {
        for &na in &[nas[0], 2, 1] {
            v.push(image12_word(
                sample,
                op,
                0xf << 22 | 1 | 1 << 4 | 1 << 13,
                w1,
                na,
            ));
        }
    }
    // Ranges that would run past v255.
    for &na in nas {
        let w0 = 0xf << 22 | 2;
        let mut w = image12_word(sample, op, w0, 254, na);
        w[8] = 250;
        v.push(w);
        let mut w = image12_word(sample, op, w0, 0, na);
        // The last address field: vaddr4 is the second word's top byte.
        w[if na == 5 { 7 } else { 8 + na as usize - 1 }] = 252;
        v.push(w);
    }
    // Ray queries: r128 set, 128-bit resource s[8:11], the vector fields
    // at v4, v5, v6, v9, v12.
    if !sample {
        for a16 in [0, 1 << 6] {
            for (va4, na) in [(12, 4), (0, 4), (12, 3)] {
                let w0 = 0xD000_0000 | op << 14 | 0xf << 22 | 1 << 4 | a16;
                let va = [4u32, 5, 6, 9];
                let w2 = (0..na).fold(0, |acc, k| acc | va[k] << (8 * k));
                v.push(le(&[w0, va4 << 24 | 8 << 9, w2]));
            }
        }
    }
    v
}

fn vimage12(op: u32) -> Vec<Vec<u8>> {
    image12(false, op)
}

fn vsample12(op: u32) -> Vec<Vec<u8>> {
    image12(true, op)
}

// ---- gfx10's own words ------------------------------------------------

/// gfx10's null register code (gfx11's m0).
const NULL10: u32 = 125;

fn smem10(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [8, 0] {
        for base in [1, 0, 2] {
            for soff in [NULL10, 4, 124] {
                for (flags, off) in [(0, 0x10), (1 << 16, 0), (1 << 14, 0x1F_FFF0)] {
                    v.push(le(&[
                        0xF400_0000 | op << 18 | flags | d << 6 | base,
                        soff << 25 | off,
                    ]));
                }
            }
        }
    }
    v
}

fn flat10(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for seg in 0..3 {
        for d in [10, 0] {
            for data in [4, 0] {
                for saddr in [NULL10, 2] {
                    for (flags, off) in [(0, 0x10), (1 << 16, 0xFF0), (1 << 17 | 1 << 12, 0)] {
                        v.push(le(&[
                            0xDC00_0000 | op << 18 | seg << 14 | flags | off,
                            d << 24 | saddr << 16 | data << 8 | 2,
                        ]));
                    }
                }
            }
        }
    }
    v
}

fn mubuf10(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [10, 0] {
        for (vaddr, en) in [(2, 1), (0, 0), (2, 2), (2, 3)] {
            for (flags, off, f1) in [(0, 16, 0), (1 << 14, 0, 1 << 22), (1 << 15, 0xFFF, 0)] {
                v.push(le(&[
                    0xE000_0000 | (op >> 7) << 25 | (op & 0x7F) << 18 | en << 12 | flags | off,
                    12 << 24 | f1 | 2 << 16 | d << 8 | vaddr,
                ]));
            }
        }
    }
    v
}

fn mtbuf10(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for fmt in [1, 22, 63, 77, 0] {
        for (vaddr, en) in [(2, 1), (0, 0)] {
            v.push(le(&[
                0xE800_0000 | fmt << 19 | (op & 7) << 16 | en << 12 | 16,
                12 << 24 | (op >> 3) << 21 | 2 << 16 | 10 << 8 | vaddr,
            ]));
        }
    }
    v
}

/// MIMG: vdata v0, vaddr v4 (NSA: one more dword, v8 up), srsrc s[8:15],
/// ssamp s[16:19] or none; every dim, some dmasks and flags.
fn mimg10(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w0 = 0xF000_0000 | (op & 0x7F) << 18 | op >> 7;
    for samp in [4 << 21, 0] {
        let w1 = samp | 2 << 16 | 4;
        for dim in 0..8 {
            v.push(le(&[w0 | 0xf << 8 | dim << 3, w1]));
            // One to three extra dwords: v8, v10, … v30.
            for n in 1..4u32 {
                let mut w = vec![w0 | 0xf << 8 | dim << 3 | n << 1, w1];
                w.extend((0..n).map(|k| 0x0E0C_0A08 + 0x0808_0808 * k));
                v.push(le(&w));
            }
        }
        for dmask in [1, 3, 7] {
            v.push(le(&[w0 | dmask << 8 | 1 << 3, w1]));
        }
        for flags in [1 << 12 | 1 << 13, 1 << 7 | 1 << 25, 1 << 15] {
            v.push(le(&[w0 | 0xf << 8 | 1 << 3 | flags, w1]));
        }
    }
    // Ray queries: unorm and r128, s[8:11]; sequential, a16, and NSA
    // (one to three extra dwords).
    let bvh = w0 | 0xf << 8 | 1 << 12 | 1 << 15;
    let w1 = 2 << 16 | 4;
    v.push(le(&[bvh, w1]));
    v.push(le(&[bvh, w1 | 1 << 30]));
    for n in 1..4u32 {
        let mut w = vec![bvh | n << 1, w1];
        w.extend((0..n).map(|k| 0x0302_0100 * 4 + 0x1010_1010 * (k + 1)));
        v.push(le(&w));
    }
    v
}

/// SDWA second dwords (src0 v2 unless said): selects; sext, neg/abs, clamp
/// and dst_unused preserve; an inline-constant src0 and an SGPR src1; omod
/// with sext on src1; a VOPC's scalar destination s10.
const SDWA: [u32; 5] = [
    2 | 5 << 8 | 1 << 16 | 4 << 24,
    2 | 6 << 8 | 2 << 11 | 1 << 13 | 6 << 16 | 3 << 19 | 6 << 24 | 1 << 27 | 1 << 29,
    0x80 | 6 << 8 | 1 << 23 | 6 << 16 | 6 << 24 | 1 << 31,
    2 | 6 << 8 | 1 << 14 | 6 << 16 | 1 << 20 | 6 << 24 | 1 << 27 | 1 << 28,
    2 | 10 << 8 | 1 << 15 | 6 << 16 | 6 << 24,
];

/// The SDWA forms (src0 0xF9) of a VOP1/VOP2/VOPC word; `mask` keeps the
/// fields the encoding has.
fn sdwa_forms(w0: u32, mask: u32) -> Vec<Vec<u8>> {
    SDWA.iter().map(|&d| le(&[w0 | 0xF9, d & mask])).collect()
}

/// VOP1 has no src1 fields.
fn vop1_sdwa(op: u32) -> Vec<Vec<u8>> {
    sdwa_forms(0x7E00_0000 | 10 << 17 | op << 9, 0x00FF_FFFF)
}

fn vop2_sdwa(op: u32) -> Vec<Vec<u8>> {
    sdwa_forms(op << 25 | 10 << 17 | 4 << 9, !0)
}

fn vopc_sdwa(op: u32) -> Vec<Vec<u8>> {
    sdwa_forms(0x7C00_0000 | op << 17 | 4 << 9, !0)
}

/// VINTRP: v_interp_* v10, v4 (or a parameter), attr2 on every channel.
fn vintrp(op: u32) -> Vec<Vec<u8>> {
    (0..4)
        .map(|chan| le(&[0xC800_0000 | 10 << 18 | op << 16 | 2 << 10 | chan << 8 | 4]))
        .collect()
}

// ---- CDNA's (gfx90a, gfx94) memory words ----------------------------------

/// DS: offset0 1, offset1 3 (or none); the register fields set or clear
/// (LLVM refuses a set field the op does not use), acc, gds.
fn ds9(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let regs = [
        (10, 2, 4, 6),
        (10, 2, 4, 0),
        (10, 2, 0, 0),
        (0, 2, 4, 6),
        (0, 2, 4, 0),
        (0, 2, 0, 0),
        (10, 0, 0, 0),
        (0, 0, 4, 0),
        (0, 0, 0, 0),
    ];
    for (d, addr, d0, d1) in regs {
        for hi in [0, 1 << 16, 1 << 25, 1 << 25 | 1 << 16] {
            for off in [0x0301, 0] {
                v.push(le(&[
                    0xD800_0000 | hi | op << 17 | off,
                    d << 24 | d1 << 16 | d0 << 8 | addr,
                ]));
            }
        }
    }
    v
}

/// FLAT/SCRATCH/GLOBAL (and the reserved segment 3): bit 13 (lds or
/// SVE), saddr off/0/s4/flat_scratch/m0/null, offsets (8191: -1 signed),
/// the cache bits, acc.
fn flat9(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w0 = |seg: u32, lo: u32| 0xDC00_0000 | op << 18 | seg << 14 | lo;
    for seg in 0..4 {
        for b13 in [0, 1 << 13] {
            for saddr in [0x7F, 0, 4, 0x66, 0x7C, 0x7D] {
                for (d, data) in [(10, 4), (0, 0)] {
                    for lo in [0x10, 1 << 16 | 0x1FFF, 1 << 17 | 1 << 25] {
                        v.push(le(&[
                            w0(seg, b13 | lo),
                            d << 24 | saddr << 16 | data << 8 | 2,
                        ]));
                    }
                }
                v.push(le(&[
                    w0(seg, b13 | 1 << 16),
                    10 << 24 | 1 << 23 | saddr << 16 | 4 << 8 | 2,
                ]));
            }
        }
    }
    v
}

/// MUBUF: vdata v10/a10 (or none), the address modes, the cache bits,
/// lds, offsets, and soffset as an SGPR, m0, null, an inline constant,
/// flat_scratch_lo, a literal; srsrc in ttmps.
fn mubuf9(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w0 = |lo: u32| 0xE000_0000 | op << 18 | lo;
    for d in [10, 0] {
        for (vaddr, en) in [(2, 1), (0, 0), (2, 2), (2, 3)] {
            for (lo, hi) in [
                (16, 0),
                (1 << 14 | 1 << 17, 1 << 23),
                (1 << 15 | 0xFFF, 0),
                (1 << 16 | 16, 0),
                (1 << 16, 1 << 23),
            ] {
                v.push(le(&[
                    w0(en << 12 | lo),
                    12 << 24 | hi | 2 << 16 | d << 8 | vaddr,
                ]));
            }
        }
    }
    for soff in [0x7C, 0x7D, 0x80, 0xF0, 0x66, 0x68, 0xFF, 0xEB] {
        v.push(le(&[w0(16), soff << 24 | 2 << 16 | 10 << 8]));
    }
    v.push(le(&[w0(16), 12 << 24 | 27 << 16 | 10 << 8]));
    v
}

/// MTBUF: formats (the default, dfmt/nfmt each alone, reserved ones),
/// address modes, glc, slc and scc/sc1 (second word), acc.
fn mtbuf9(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w0 = |fmt: u32, lo: u32| 0xE800_0000 | fmt << 19 | op << 15 | lo;
    for fmt in [1, 4 | 7 << 4, 0, 15 | 6 << 4, 1 | 5 << 4, 7 | 1 << 4] {
        for (vaddr, en) in [(2, 1), (0, 0), (2, 3)] {
            v.push(le(&[
                w0(fmt, en << 12 | 16),
                12 << 24 | 2 << 16 | 10 << 8 | vaddr,
            ]));
        }
    }
    for (lo, hi) in [(1 << 14, 0), (0, 1 << 22), (0, 1 << 21), (0xFFF, 1 << 23)] {
        v.push(le(&[
            w0(4, 1 << 12 | lo),
            12 << 24 | hi | 2 << 16 | 10 << 8 | 2,
        ]));
    }
    v
}

/// MIMG (gfx90a): dmask, d16 and acc widths, the flags, a sampler or
/// none, data past v255, bit 0 (refused).
fn mimg9(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let w0 = |lo: u32| 0xF000_0000 | op << 18 | lo;
    for samp in [4 << 21, 0] {
        let w1 = samp | 2 << 16 | 4;
        for dmask in [0, 1, 3, 7, 0xF] {
            for (acc, d16) in [(0, 0), (1 << 16, 0), (0, 1 << 31)] {
                v.push(le(&[w0(dmask << 8 | acc), w1 | d16]));
            }
        }
        for lo in [
            1 << 12 | 1 << 13,
            1 << 14 | 1 << 15,
            1 << 17 | 1 << 25 | 1 << 7,
            1,
            0x7E,
        ] {
            v.push(le(&[w0(0xF << 8 | lo), w1]));
        }
        v.push(le(&[w0(0xF << 8), samp | 27 << 16 | 254 << 8 | 255]));
    }
    v
}

/// The encodings both families lay out alike (their opcodes differ).
const SHARED: &[Enc] = &[
    ("SOP1", 256, sop1),
    ("SOP2", 0x60, sop2),
    ("SOPK", 0x1D, sopk),
    ("SOPC", 128, sopc),
    ("SOPP", 128, sopp),
    ("VOP1", 256, vop1),
    ("VOP2", 0x3E, vop2),
    ("VOPC", 256, vopc),
    ("VOP3", 1024, vop3),
    ("VOP3P", 128, vop3p),
    ("VOPD", 16 * 32, vopd),
    ("DS", 256, ds),
    ("EXP", 1, exp),
    ("VINTERP", 128, vinterp),
    ("LDSDIR", 4, lds_direct),
];

/// gfx11's own: SMEM, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF, MIMG.
const GFX11: &[Enc] = &[
    ("SMEM", 256, smem),
    ("FLAT", 128, flat),
    ("MUBUF", 256, mubuf),
    ("MTBUF", 16, mtbuf),
    ("MIMG", 256, mimg),
];

/// gfx12's own: SMEM, VFLAT/VSCRATCH/VGLOBAL, VBUFFER, VIMAGE, VSAMPLE.
const GFX12: &[Enc] = &[
    ("SMEM", 64, smem12),
    ("VMEM", 256, vmem12),
    ("VBUFFER", 256, vbuffer12),
    ("VIMAGE", 256, vimage12),
    ("VSAMPLE", 256, vsample12),
];

/// gfx10's: its own SMEM, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF, MIMG and
/// VINTRP words (gfx11's VOPD, VINTERP and LDSDIR are not gfx10's).
const GFX10: &[Enc] = &[
    ("SMEM", 256, smem10),
    ("FLAT", 128, flat10),
    ("MUBUF", 256, mubuf10),
    ("MTBUF", 16, mtbuf10),
    ("MIMG", 256, mimg10),
    ("VINTRP", 3, vintrp),
    ("VOP1-SDWA", 256, vop1_sdwa),
    ("VOP2-SDWA", 0x3E, vop2_sdwa),
    ("VOPC-SDWA", 256, vopc_sdwa),
];

// ---- gfx9's (CDNA's) own words --------------------------------------------

/// gfx9's VOP3 (0xD0): opcodes below 0x380 (VOPC, VOP2, VOP1 e64 and the
/// VOP3-only ops).
fn vop3_9(op: u32) -> Vec<Vec<u8>> {
    vop3_words(0xD000_0000, op)
}

/// gfx9's VOP3P (0xD38) and VOP3P-MAI: gfx11's VOP3P forms, and MAI's
/// fields: acc_cd (bit 15), cbsz, abid, blgp and the A/B AccVGPR bits.
fn vop3p9(op: u32) -> Vec<Vec<u8>> {
    let mut v = vop3p_words(0xD380_0000, op);
    let (v2, v4, v6) = (V + 2, V + 4, V + 6);
    for (lo, hi) in [
        (0x80u32, 0u32),
        (0x81 | 0x10, 0b10101),
        (0x07, 0b11111),
        (0x78, 0b01010),
    ] {
        let w0 = 0xD380_0000 | op << 16 | lo << 8 | 10;
        v.push(le(&[w0, hi << 27 | v6 << 18 | v4 << 9 | v2]));
    }
    v
}

/// gfx9's SMEM (0xC0): s_load_dword-like words with an immediate offset
/// (imm), an SGPR offset (no imm), both (soe), and glc.
fn smem9(op: u32) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for d in [8, 0] {
        for base in [1, 0, 2] {
            for (f0, w1) in [
                (1 << 17, 0x10),
                (1 << 17, 0),
                (1 << 17, 0x1F_FFF0),
                (0, 4),
                (1 << 17 | 1 << 14, 4 << 25 | 0x10),
                (1 << 17 | 1 << 16, 0x10),
            ] {
                v.push(le(&[0xC000_0000 | op << 18 | f0 | d << 6 | base, w1]));
            }
        }
    }
    v
}

/// gfx9's scalar and ALU encodings: gfx11's SOP*, VOP1/VOP2/VOPC layouts
/// (their DPP8 and literal forms are refused by both), the SDWA forms, and
/// GCN's VOP3, VOP3P/MAI and SMEM words.
const GFX9_ALU: &[Enc] = &[
    ("SOP1", 256, sop1),
    ("SOP2", 0x60, sop2),
    ("SOPK", 0x1D, sopk),
    ("SOPC", 128, sopc),
    ("SOPP", 128, sopp),
    ("VOP1", 256, vop1),
    ("VOP2", 0x3E, vop2),
    ("VOPC", 256, vopc),
    ("VOP1-SDWA", 256, vop1_sdwa),
    ("VOP2-SDWA", 0x3E, vop2_sdwa),
    ("VOPC-SDWA", 256, vopc_sdwa),
    ("VOP3", 0x380, vop3_9),
    ("VOP3P", 128, vop3p9),
    ("SMEM", 256, smem9),
];

/// CDNA's (gfx90a, gfx94) memory words; gfx94 has no MIMG (the walk
/// finds none). The ALU and SMEM words join them.
const GFX9_MEM: &[Enc] = &[
    ("DS", 256, ds9),
    ("FLAT", 128, flat9),
    ("MUBUF", 128, mubuf9),
    ("MTBUF", 16, mtbuf9),
    ("MIMG", 128, mimg9),
];

/// The LLVM mnemonic without the encoding suffix.
fn base_name(mn: &str) -> &str {
    ["_e64_dpp", "_e32", "_e64", "_dpp", "_sdwa"]
        .iter()
        .find_map(|s| mn.strip_suffix(s))
        .unwrap_or(mn)
}

fn names_of(text: &str) -> Vec<&str> {
    text.split(" :: ")
        .map(|h| base_name(h.split(' ').next().unwrap()))
        .collect()
}

fn our_names(i: &Inst) -> Vec<&'static str> {
    let mut v = vec![i.op.name()];
    if let Some(y) = &i.vopd_y {
        v.push(y.op.name());
    }
    v
}

struct Cand {
    enc: &'static str,
    op: u32,
    bytes: Vec<u8>,
}

fn encodings(family: Family) -> Vec<Enc> {
    let own = match family {
        Family::Gfx11 => GFX11,
        Family::Gfx12 => GFX12,
        Family::Gfx10 => GFX10,
        Family::Gfx90a | Family::Gfx94 => {
            return GFX9_ALU.iter().chain(GFX9_MEM).copied().collect();
        }
    };
    let gfx11_only = ["VOPD", "VINTERP", "LDSDIR"];
    SHARED
        .iter()
        .filter(|e| family != Family::Gfx10 || !gfx11_only.contains(&e.0))
        .chain(own)
        .copied()
        .collect()
}

fn candidates(family: Family) -> Vec<Cand> {
    let mut out = Vec::new();
    for (enc, count, f) in encodings(family) {
        for op in 0..count {
            for bytes in f(op) {
                out.push(Cand { enc, op, bytes });
            }
        }
    }
    out
}

type OpSet = std::collections::BTreeSet<(&'static str, u32)>;
type WordCount = std::collections::BTreeMap<&'static str, usize>;

/// Check one processor; returns the (encoding, opcode) pairs llvm accepted,
/// the number of words it accepted per encoding, and the failure lines.
fn audit(
    family: Family,
    cpu: &str,
    mattr: &str,
    print: fn(&Inst) -> String,
) -> (OpSet, WordCount, Vec<String>) {
    let cands = candidates(family);
    let bytes: Vec<Vec<u8>> = cands.iter().map(|c| c.bytes.clone()).collect();
    let texts = common::llvm_mc_each(&bytes, cpu, mattr);
    let mut bad = Vec::new();
    let mut ops = std::collections::BTreeSet::new();
    let mut words = std::collections::BTreeMap::new();
    let mut missing = std::collections::BTreeSet::new();
    for (c, want) in cands.iter().zip(&texts) {
        let Some(want) = want else { continue };
        ops.insert((c.enc, c.op));
        *words.entry(c.enc).or_insert(0) += 1;
        let got = match decode(family, &c.bytes) {
            Ok(i) if i.size as usize != c.bytes.len() => {
                format!("<size {} != {}>", i.size, c.bytes.len())
            }
            Ok(i) => {
                if our_names(&i) != names_of(want) {
                    missing.insert((c.enc, c.op));
                    bad.push(format!(
                        "{} op {}: llvm {:?}, ours {:?}",
                        c.enc,
                        c.op,
                        names_of(want),
                        our_names(&i)
                    ));
                    continue;
                }
                print(&i)
            }
            Err(e) => {
                if missing.insert((c.enc, c.op)) {
                    bad.push(format!("{} op {}: missing ({want}): {e}", c.enc, c.op));
                }
                continue;
            }
        };
        if &got != want {
            bad.push(format!(
                "{} {}\n  llvm: {want}\n  ours: {got}",
                c.enc,
                common::hex(&c.bytes)
            ));
        }
    }
    (ops, words, bad)
}

fn check(cpu: &str, mattr: &str, print: fn(&Inst) -> String) {
    let family = if cpu.starts_with("gfx12") {
        Family::Gfx12
    } else if cpu.starts_with("gfx10") {
        Family::Gfx10
    } else if cpu == "gfx90a" {
        Family::Gfx90a
    } else if cpu.starts_with("gfx94") {
        Family::Gfx94
    } else {
        Family::Gfx11
    };
    let (ops, words, bad) = audit(family, cpu, mattr, print);
    let n = ops.len();

    assert!(n > 1000, "{cpu}: llvm accepted only {n} opcodes");
    // Every encoding is exercised: llvm accepts some of its words (VOPD
    // exists only in wave32).
    let wave64 = mattr.contains("wavefrontsize64");
    for &(enc, ..) in encodings(family)
        .iter()
        .filter(|e| !(wave64 && e.0 == "VOPD"))
        .filter(|e| !(family == Family::Gfx94 && e.0 == "MIMG"))
    {
        let k = ops.iter().filter(|(e, _)| *e == enc).count();
        let w = words.get(enc).copied().unwrap_or(0);
        eprintln!("{cpu}{mattr}: {enc}: {k} opcodes, {w} words");
        assert!(k > 0, "{cpu}{mattr}: llvm accepted no {enc} word");
    }
    assert!(
        bad.is_empty(),
        "{cpu}{mattr}: {} failures over {n} opcodes:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_opcode_gfx1100() {
    check("gfx1100", "", disassemble);
}

#[test]
fn every_opcode_gfx1151() {
    check("gfx1151", "", disassemble);
}

/// Wave64: lane masks print as pairs (`vcc`, `s[10:11]`).
#[test]
fn every_opcode_gfx1100_wave64() {
    check("gfx1100", "+wavefrontsize64", disassemble_wave64);
}

#[test]
fn every_opcode_gfx1201() {
    check("gfx1201", "", disassemble);
}

#[test]
fn every_opcode_gfx1201_wave64() {
    check("gfx1201", "+wavefrontsize64", disassemble_wave64);
}

#[test]
fn every_opcode_gfx1030() {
    check("gfx1030", "", disassemble);
}

#[test]
fn every_opcode_gfx1030_wave64() {
    check("gfx1030", "+wavefrontsize64", disassemble_wave64);
}

/// CDNA (wave64 only): every scalar, ALU and memory opcode of gfx90a and gfx942.
#[test]
fn every_opcode_gfx90a() {
    check("gfx90a", "", disassemble_wave64);
}

#[test]
fn every_opcode_gfx942() {
    check("gfx942", "", disassemble_wave64);
}
