#!/usr/bin/env python3
"""Writes gfx9_mfma.txt's matrix cases: every MFMA and SMFMAC of gfx90a and
gfx94 run on small-integer matrices, with D computed here exactly.

    python3 gen_mfma.py > gfx9_mfma.txt

The hand-written cases (AccVGPR moves, packed f32) live in
`gfx9_mfma.head` beside this script, which is printed first.

    python3 gen_mfma.py --check PATH/TO/matrix_calculator.py

instead holds every layout equation below to AMD's Matrix Instruction
Calculator (ROCm/amd_matrix_instruction_calculator, needs `tabulate`): for
each op and each modifier setting the cases use, its `--register-layout
--csv` tables of A, B, D and (SMFMAC) the compression index K must name the
same register, lane and bits as this script.

The layouts are stated here from the calculator's per-instruction
"Matrix element to register mapping" equations (`--detail-instruction`)
and its README's sections on CBSZ/ABID, BLGP and SMFMAC, independently of
the emulator's own walk (crates/interp/src/ops/mfma.rs). Inputs are small
integers, so every product and sum is exact in every element type (f32,
xf32, f16, bf16, FNUZ fp8/bf8, i8, f64) whatever order the hardware sums
in; D = A.B + C is computed with Python integers.
"""

import os
import struct
import subprocess
import sys

# (mnemonic, targets, M, N, K, blocks, A type, B type, accumulator, sparse)
# Shapes: the calculator's `--detail-instruction` "Matrix Dimensions".
G90 = "gfx90a"
G94 = "gfx942"
OPS = [
    # gfx90a (CDNA2)
    ("v_mfma_f32_32x32x1f32", G90, 32, 32, 1, 2, "f32", "f32", "f32"),
    ("v_mfma_f32_16x16x1f32", G90, 16, 16, 1, 4, "f32", "f32", "f32"),
    ("v_mfma_f32_4x4x1f32", G90, 4, 4, 1, 16, "f32", "f32", "f32"),
    ("v_mfma_f32_32x32x2f32", G90, 32, 32, 2, 1, "f32", "f32", "f32"),
    ("v_mfma_f32_16x16x4f32", G90, 16, 16, 4, 1, "f32", "f32", "f32"),
    ("v_mfma_f32_32x32x4f16", G90, 32, 32, 4, 2, "f16", "f16", "f32"),
    ("v_mfma_f32_16x16x4f16", G90, 16, 16, 4, 4, "f16", "f16", "f32"),
    ("v_mfma_f32_4x4x4f16", G90, 4, 4, 4, 16, "f16", "f16", "f32"),
    ("v_mfma_f32_32x32x8f16", G90, 32, 32, 8, 1, "f16", "f16", "f32"),
    ("v_mfma_f32_16x16x16f16", G90, 16, 16, 16, 1, "f16", "f16", "f32"),
    ("v_mfma_i32_32x32x4i8", G90, 32, 32, 4, 2, "i8", "i8", "i32"),
    ("v_mfma_i32_16x16x4i8", G90, 16, 16, 4, 4, "i8", "i8", "i32"),
    ("v_mfma_i32_4x4x4i8", G90, 4, 4, 4, 16, "i8", "i8", "i32"),
    ("v_mfma_i32_32x32x8i8", G90, 32, 32, 8, 1, "i8", "i8", "i32"),
    ("v_mfma_i32_16x16x16i8", G90, 16, 16, 16, 1, "i8", "i8", "i32"),
    ("v_mfma_f32_32x32x4bf16_1k", G90, 32, 32, 4, 2, "bf16", "bf16", "f32"),
    ("v_mfma_f32_16x16x4bf16_1k", G90, 16, 16, 4, 4, "bf16", "bf16", "f32"),
    ("v_mfma_f32_4x4x4bf16_1k", G90, 4, 4, 4, 16, "bf16", "bf16", "f32"),
    ("v_mfma_f32_32x32x8bf16_1k", G90, 32, 32, 8, 1, "bf16", "bf16", "f32"),
    ("v_mfma_f32_16x16x16bf16_1k", G90, 16, 16, 16, 1, "bf16", "bf16", "f32"),
    ("v_mfma_f32_32x32x2bf16", G90, 32, 32, 2, 2, "bf16", "bf16", "f32"),
    ("v_mfma_f32_16x16x2bf16", G90, 16, 16, 2, 4, "bf16", "bf16", "f32"),
    ("v_mfma_f32_4x4x2bf16", G90, 4, 4, 2, 16, "bf16", "bf16", "f32"),
    ("v_mfma_f32_32x32x4bf16", G90, 32, 32, 4, 1, "bf16", "bf16", "f32"),
    ("v_mfma_f32_16x16x8bf16", G90, 16, 16, 8, 1, "bf16", "bf16", "f32"),
    ("v_mfma_f64_16x16x4f64", G90, 16, 16, 4, 1, "f64", "f64", "f64"),
    ("v_mfma_f64_4x4x4f64", G90, 4, 4, 4, 4, "f64", "f64", "f64"),
    # gfx94 (CDNA3)
    ("v_mfma_f32_16x16x8_xf32", G94, 16, 16, 8, 1, "xf32", "xf32", "f32"),
    ("v_mfma_f32_32x32x4_xf32", G94, 32, 32, 4, 1, "xf32", "xf32", "f32"),
    ("v_mfma_f32_32x32x1_2b_f32", G94, 32, 32, 1, 2, "f32", "f32", "f32"),
    ("v_mfma_f32_16x16x1_4b_f32", G94, 16, 16, 1, 4, "f32", "f32", "f32"),
    ("v_mfma_f32_4x4x1_16b_f32", G94, 4, 4, 1, 16, "f32", "f32", "f32"),
    ("v_mfma_f32_32x32x2_f32", G94, 32, 32, 2, 1, "f32", "f32", "f32"),
    ("v_mfma_f32_16x16x4_f32", G94, 16, 16, 4, 1, "f32", "f32", "f32"),
    ("v_mfma_f32_32x32x4_2b_f16", G94, 32, 32, 4, 2, "f16", "f16", "f32"),
    ("v_mfma_f32_16x16x4_4b_f16", G94, 16, 16, 4, 4, "f16", "f16", "f32"),
    ("v_mfma_f32_4x4x4_16b_f16", G94, 4, 4, 4, 16, "f16", "f16", "f32"),
    ("v_mfma_f32_32x32x8_f16", G94, 32, 32, 8, 1, "f16", "f16", "f32"),
    ("v_mfma_f32_16x16x16_f16", G94, 16, 16, 16, 1, "f16", "f16", "f32"),
    ("v_mfma_i32_32x32x4_2b_i8", G94, 32, 32, 4, 2, "i8", "i8", "i32"),
    ("v_mfma_i32_16x16x4_4b_i8", G94, 16, 16, 4, 4, "i8", "i8", "i32"),
    ("v_mfma_i32_4x4x4_16b_i8", G94, 4, 4, 4, 16, "i8", "i8", "i32"),
    ("v_mfma_i32_32x32x16_i8", G94, 32, 32, 16, 1, "i8", "i8", "i32"),
    ("v_mfma_i32_16x16x32_i8", G94, 16, 16, 32, 1, "i8", "i8", "i32"),
    ("v_mfma_f32_32x32x4_2b_bf16", G94, 32, 32, 4, 2, "bf16", "bf16", "f32"),
    ("v_mfma_f32_16x16x4_4b_bf16", G94, 16, 16, 4, 4, "bf16", "bf16", "f32"),
    ("v_mfma_f32_4x4x4_16b_bf16", G94, 4, 4, 4, 16, "bf16", "bf16", "f32"),
    ("v_mfma_f32_32x32x8_bf16", G94, 32, 32, 8, 1, "bf16", "bf16", "f32"),
    ("v_mfma_f32_16x16x16_bf16", G94, 16, 16, 16, 1, "bf16", "bf16", "f32"),
    ("v_mfma_f64_16x16x4_f64", G94, 16, 16, 4, 1, "f64", "f64", "f64"),
    ("v_mfma_f64_4x4x4_4b_f64", G94, 4, 4, 4, 4, "f64", "f64", "f64"),
]
for m, n, k in ((16, 16, 32), (32, 32, 16)):
    for a in ("bf8", "fp8"):
        for b in ("bf8", "fp8"):
            OPS.append((f"v_mfma_f32_{m}x{n}x{k}_{a}_{b}", G94, m, n, k, 1, a, b, "f32"))
SPARSE = [
    ("v_smfmac_f32_16x16x32_f16", 16, 32, "f16", "f16", "f32"),
    ("v_smfmac_f32_32x32x16_f16", 32, 16, "f16", "f16", "f32"),
    ("v_smfmac_f32_16x16x32_bf16", 16, 32, "bf16", "bf16", "f32"),
    ("v_smfmac_f32_32x32x16_bf16", 32, 16, "bf16", "bf16", "f32"),
    ("v_smfmac_i32_16x16x64_i8", 16, 64, "i8", "i8", "i32"),
    ("v_smfmac_i32_32x32x32_i8", 32, 32, "i8", "i8", "i32"),
]
for m, k in ((16, 64), (32, 32)):
    for a in ("bf8", "fp8"):
        for b in ("bf8", "fp8"):
            SPARSE.append((f"v_smfmac_f32_{m}x{m}x{k}_{a}_{b}", m, k, a, b, "f32"))

BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8, "f64": 64}


# ---------------------------------------------------------------- layouts
# Each returns (first VGPR of the operand, lane, low bit, width).


def in_loc(outer, kk, blocks, bits, i, k, b):
    """A[i][k] (outer = M) or B[k][i] (outer = N) of block b, dense.

    Calculator equations, e.g. v_mfma_f32_32x32x8_f16 A[i][k]: GPR
    floor((k % 4) / 2), bits 16 * (k % 2), lane i + 32 * floor(k / 4);
    v_mfma_f32_16x16x4_4b_f16: lane i + 16 * block, GPR floor(k / 2);
    v_mfma_f64_4x4x4_4b_f64: lane i + 4 * block + 16 * k. In general the
    wave's 64 lanes hold `outer * blocks` rows side by side (block b at
    lanes outer*b on), repeated for `64 / (outer * blocks)` slices of K;
    each slice's `per` consecutive K values pack the lane's bits upward.
    """
    slices = 64 // (outer * blocks)
    per = kk // slices
    bit = (k % per) * bits
    lane = i + outer * b + outer * blocks * (k // per)
    return bit // 32, lane, bit % 32, bits


def out_loc(m, n, blocks, acc, i, j, b):
    """D[i][j] (and C) of block b: the calculator's equations per shape."""
    if acc == "f64":
        if m == 16:  # v_mfma_f64_16x16x4f64: GPR pair floor(i / 4), lane 16 * (i % 4) + j
            return 2 * (i // 4), 16 * (i % 4) + j, 0, 64
        # v_mfma_f64_4x4x4(_4b)_f64: one pair, lane 16 * i + 4 * block + j
        return 0, 16 * i + 4 * b + j, 0, 64
    if m == 32:  # GPR 16 * block + 8 * floor(i / 8) / 2 + i % 4, lane 32 * floor(i / 4) % 2 + j
        return 16 * b + 4 * (i // 8) + i % 4, 32 * ((i // 4) % 2) + j, 0, 32
    if m == 16:  # GPR 4 * block + i % 4, lane 16 * floor(i / 4) + j
        return 4 * b + i % 4, 16 * (i // 4) + j, 0, 32
    # 4x4, 16 blocks: GPR i, lane 4 * block + j
    return i, 4 * b + j, 0, 32


def sparse_a_loc(m, kk, bits, i, g, n):
    """SMFMAC's stored A: value n (0, 1) of row i's group of four K values g.

    Calculator (v_smfmac_f32_16x16x32_f16): A[i][k] GPR floor(k / 4) % 2,
    lane 16 * floor(k / 8) + i; one GPR holds both stored values of a
    group. In general A is a dense M x K/2 input: a lane holds `per`
    stored values (per / 2 groups) of one row; value n of group g is the
    lane's stored value 2 * (g % (per / 2)) + n.
    """
    slices = 64 // m
    per = (kk // 2) // slices
    groups = per // 2
    bit = (2 * (g % groups) + n) * bits
    return bit // 32, i + m * (g // groups), bit % 32, bits


def index_loc(m, kk, bits, i, g, abid):
    """SMFMAC's compression index of row i's group g: 4 bits in src2.

    Calculator: K[i][k] bits [4 * (floor(k / 4) % 2) + 3 : ...] of v0 at A's
    lane for f16 (two groups a lane); ABID (with CBSZ 0) picks which set of
    fields: abid 1 moves f16's fields to bits 8-15, i8's to bits 16-31
    (the lane's fields for one set take 4 * groups bits).
    """
    slices = 64 // m
    per = (kk // 2) // slices
    groups = per // 2
    return 0, i + m * (g // groups), 4 * (g % groups) + 4 * groups * abid, 4


def a_block(b, cbsz, abid):
    """README, CBSZ/ABID: blocks come in groups of 2^cbsz; every block of a
    group reads A from block abid of its group."""
    return (b >> cbsz << cbsz) + abid


BLGP_GROUPS = {
    # README, BLGP: which 16-lane group of B each lane group reads.
    0: (0, 1, 2, 3),  # normal
    1: (0, 1, 0, 1),  # lanes 0-31 broadcast to 32-63
    2: (2, 3, 2, 3),  # lanes 32-63 broadcast to 0-31
    3: (1, 2, 3, 0),  # rotated down by 16 lanes
    4: (0, 0, 0, 0),  # one group broadcast to all
    5: (1, 1, 1, 1),
    6: (2, 2, 2, 2),
    7: (3, 3, 3, 3),
}


def b_source_lane(lane, blgp):
    return 16 * BLGP_GROUPS[blgp][lane // 16] + lane % 16


# ---------------------------------------------------------------- values


def a_val(b, i, k):
    return (3 * i + 5 * k + 7 * b) % 7 - 3


def b_val(b, k, j):
    return (2 * k + 3 * j + 5 * b + 1) % 5 - 2


def c_val(b, i, j):
    return (i - 2 * j + 3 * b) % 9 - 4


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def encode(ty, x):
    """The bits of integer x (|x| <= 4) in an input type."""
    if ty in ("f32", "xf32"):
        return f32_bits(x)
    if ty == "f16":
        return struct.unpack("<H", struct.pack("<e", x))[0]
    if ty == "bf16":
        return f32_bits(x) >> 16
    if ty == "i8":
        return x & 0xFF
    if ty == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    # FNUZ fp8 (E4M3, bias 8) and bf8 (E5M2, bias 16): CDNA3 ISA guide's
    # 8-bit float formats; no negative zero (0x80 is NaN).
    if x == 0:
        return 0
    mant_bits, bias = (3, 8) if ty == "fp8" else (2, 16)
    mag = abs(x)
    e = mag.bit_length() - 1
    frac = (mag - (1 << e)) << mant_bits >> e
    assert (1 << e) + (frac << e >> mant_bits) == mag, (ty, x)
    return (0x80 if x < 0 else 0) | (e + bias) << mant_bits | frac


class Regs:
    """Register contents of one operand: reg -> 64 lanes of bits."""

    def __init__(self, count):
        self.r = [[0] * 64 for _ in range(count)]

    def put(self, loc, bits):
        reg, lane, lo, width = loc
        if width == 64:
            self.r[reg][lane] = bits & 0xFFFFFFFF
            self.r[reg + 1][lane] = bits >> 32
        else:
            mask = (1 << width) - 1
            self.r[reg][lane] = self.r[reg][lane] & ~(mask << lo) | (bits & mask) << lo


def f32_text(bits):
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    return str(int(x)) if x == int(x) else repr(x)


def lists(name, first, regs, kind):
    """`vN=[...]` assignments, one per register (pairs for f64)."""
    out = []
    if kind == "f64":
        for r in range(0, len(regs.r), 2):
            vals = [
                struct.unpack("<d", struct.pack("<Q", regs.r[r][l] | regs.r[r + 1][l] << 32))[0]
                for l in range(64)
            ]
            out.append(f"{name}[{first + r}:{first + r + 1}]=d:[{','.join(str(int(v)) for v in vals)}]")
        return out
    for r, lanes in enumerate(regs.r):
        if kind == "f32":
            body = "f:[" + ",".join(f32_text(v) for v in lanes) + "]"
        elif kind == "i32":
            body = "[" + ",".join(str(v - (1 << 32) if v >> 31 else v) for v in lanes) + "]"
        else:
            body = "[" + ",".join(hex(v) for v in lanes) + "]"
        out.append(f"{name}{first + r}={body}")
    return out


def case_lines(inputs, expects, reason):
    lines = ["    \\"]
    lines += [f"      {x} \\" for x in inputs]
    lines.append("      => \\")
    lines += [f"      {x} \\" for x in expects[:-1]]
    lines.append(f"      {expects[-1]}  # {reason}")
    return lines


def dense_case(op, cfg):
    name, target, m, n, kk, blocks, ta, tb, acc = op
    cbsz, abid, blgp, neg = cfg.get("cbsz", 0), cfg.get("abid", 0), cfg.get("blgp", 0), cfg.get("neg", 0)
    abits, bbits = BITS[ta], BITS[tb]
    a_regs = max(1, m * kk * blocks * abits // 64 // 32)
    b_regs = max(1, n * kk * blocks * bbits // 64 // 32)
    out_bits = 64 if acc == "f64" else 32
    d_regs = m * n * blocks * out_bits // 64 // 32
    A, B, C = Regs(a_regs), Regs(b_regs), Regs(d_regs)
    for b in range(blocks):
        for i in range(m):
            for k in range(kk):
                A.put(in_loc(m, kk, blocks, abits, i, k, b), encode(ta, a_val(b, i, k)))
        for j in range(n):
            for k in range(kk):
                B.put(in_loc(n, kk, blocks, bbits, j, k, b), encode(tb, b_val(b, k, j)))
        for i in range(m):
            for j in range(n):
                c = c_val(b, i, j)
                C.put(out_loc(m, n, blocks, acc, i, j, b), c & 0xFFFFFFFF if acc == "i32" else encode(acc, c))
    # What each block's products read, through the modifiers.
    D = Regs(d_regs)
    sa, sb, sc = (-1 if neg & 1 else 1), (-1 if neg & 2 else 1), (-1 if neg & 4 else 1)
    for b in range(blocks):
        ab = a_block(b, cbsz, abid)
        for i in range(m):
            for j in range(n):
                total = sc * c_val(b, i, j)
                for k in range(kk):
                    # B[k][j] of block b is read from the lane blgp names.
                    _, lane, _, _ = in_loc(n, kk, blocks, bbits, j, k, b)
                    src = b_source_lane(lane, blgp)
                    jb, kb, bb = locate_b(n, kk, blocks, bbits, src, k, j, b)
                    total += sa * a_val(ab, i, k) * sb * b_val(bb, kb, jb)
                loc = out_loc(m, n, blocks, acc, i, j, b)
                if acc == "f32":
                    D.put(loc, f32_bits(total))
                elif acc == "f64":
                    D.put(loc, encode("f64", total))
                else:
                    D.put(loc, total & 0xFFFFFFFF)
    return A, B, C, D, a_regs, b_regs, d_regs


def locate_b(n, kk, blocks, bits, lane, k, j, b):
    """Which B element (column, k, block) sits at `lane` in the slot that
    element (k, j, b) would occupy: the inverse of in_loc over lanes."""
    slices = 64 // (n * blocks)
    per = kk // slices
    jj = lane % n
    bb = (lane // n) % blocks
    kslice = lane // (n * blocks)
    return jj, kslice * per + k % per, bb


def fmt_mods(cfg):
    parts = []
    for key in ("cbsz", "abid", "blgp"):
        if cfg.get(key):
            parts.append(f"{key}:{cfg[key]}")
    if cfg.get("neg"):
        v = cfg["neg"]
        parts.append(f"neg:[{v & 1},{v >> 1 & 1},{v >> 2 & 1}]")
    return (" " + " ".join(parts)) if parts else ""


def reg_range(kind, first, count):
    return f"{kind}{first}" if count == 1 else f"{kind}[{first}:{first + count - 1}]"


def emit_dense(op, cfg, out):
    name, target, m, n, kk, blocks, ta, tb, acc = op
    A, B, C, D, ar, br, dr = dense_case(op, cfg)
    a_at, b_at = 0, ar
    c_kind, c_at = cfg.get("c", ("a", 0))
    d_kind, d_at = cfg.get("d", ("a", 0))
    asm = (
        f"{name} {reg_range(d_kind, d_at, dr)}, {reg_range('v', a_at, ar)}, "
        f"{reg_range('v', b_at, br)}, {reg_range(c_kind, c_at, dr)}{fmt_mods(cfg)}"
    )
    kind = acc
    ins = lists("v", a_at, A, "hex" if acc != "f64" else "f64") + lists("v", b_at, B, "hex" if acc != "f64" else "f64")
    ins += lists(c_kind, c_at, C, kind)
    exp = lists(d_kind, d_at, D, kind)
    out.append(f"# {cfg['why']}")
    out.append(f"@targets {target}")
    out.append(asm)
    out += case_lines(ins, exp, "D = A.B + C" if not cfg.get("note") else cfg["note"])
    out.append("")


def sparse_pairs(i, g, salt):
    """The two positions (ascending, distinct) a group's stored values take:
    one of the six pairs, varying over rows and groups."""
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    return pairs[(i + 5 * g + salt) % 6]


def emit_sparse(op, abid, out):
    name, m, kk, ta, tb, acc = op
    n = m
    abits, bbits = BITS[ta], BITS[tb]
    a_regs = m * (kk // 2) * abits // 64 // 32
    b_regs = n * kk * bbits // 64 // 32
    d_regs = m * n // 64
    A, B, I, C = Regs(a_regs), Regs(b_regs), Regs(1), Regs(d_regs)
    dense = [[0] * kk for _ in range(m)]
    for i in range(m):
        for g in range(kk // 4):
            pos = sparse_pairs(i, g, 0)
            for nn in range(2):
                k = 4 * g + pos[nn]
                v = a_val(0, i, k) or 1  # stored values are non-zero
                dense[i][k] = v
                A.put(sparse_a_loc(m, kk, abits, i, g, nn), encode(ta, v))
            code = pos[0] | pos[1] << 2
            I.put(index_loc(m, kk, abits, i, g, abid), code)
            # The other set's fields hold other (valid) positions: reading
            # the wrong set changes D.
            other = sparse_pairs(i, g, 3)
            I.put(index_loc(m, kk, abits, i, g, 1 - abid), other[0] | other[1] << 2)
    for j in range(n):
        for k in range(kk):
            B.put(in_loc(n, kk, 1, bbits, j, k, 0), encode(tb, b_val(0, k, j)))
    D = Regs(d_regs)
    for i in range(m):
        for j in range(n):
            loc = out_loc(m, n, 1, acc, i, j, 0)
            C.put(loc, f32_bits(c_val(0, i, j)) if acc == "f32" else c_val(0, i, j) & 0xFFFFFFFF)
            total = c_val(0, i, j) + sum(dense[i][k] * b_val(0, k, j) for k in range(kk))
            D.put(loc, f32_bits(total) if acc == "f32" else total & 0xFFFFFFFF)
    a_at, b_at, i_at = 0, a_regs, a_regs + b_regs
    mods = f" abid:{abid}" if abid else ""
    out.append(
        "# SMFMAC: A 4:2 sparse (two stored values per group of four K, their"
        " positions in src2's 4-bit fields), B dense, D += A.B in place"
        + (f"; abid:{abid} reads the second set of index fields" if abid else "")
        + "."
    )
    out.append(f"@targets {G94}")
    out.append(
        f"{name} {reg_range('a', 0, d_regs)}, {reg_range('v', a_at, a_regs)}, "
        f"{reg_range('v', b_at, b_regs)}, v{i_at}{mods}"
    )
    ins = lists("v", a_at, A, "hex") + lists("v", b_at, B, "hex") + lists("v", i_at, I, "hex")
    ins += lists("a", 0, C, acc)
    out += case_lines(ins, lists("a", 0, D, acc), "D = A.B + D")
    out.append("")


def configs(op):
    """The cases each op gets."""
    name, target, m, n, kk, blocks = op[:6]
    cfgs = [{"why": f"{name}: D = A.B + C, C and D the same AccVGPRs."}]
    if name == "v_mfma_f32_16x16x16f16":
        cfgs.append({"why": "gfx90a: C and D in VGPRs, C apart from D (C stays).", "c": ("v", 20), "d": ("v", 4)})
    if name == "v_mfma_f32_16x16x4_f32":
        cfgs.append({"why": "C in AccVGPRs apart from D (C stays).", "c": ("a", 8), "d": ("a", 0)})
    if name == "v_mfma_f32_32x32x8_f16":
        cfgs.append({"why": "gfx94: C and D the same VGPRs.", "c": ("v", 8), "d": ("v", 8)})
    if name in ("v_mfma_f32_16x16x4f16", "v_mfma_i32_16x16x4_4b_i8"):
        cfgs.append({"why": "cbsz:2 abid:1 (every block reads block 1's A), blgp:3 (B rotated down 16 lanes).", "cbsz": 2, "abid": 1, "blgp": 3})
    if name in ("v_mfma_f32_4x4x4_16b_f16", "v_mfma_f32_4x4x1f32"):
        cfgs.append({"why": "cbsz:3 abid:5 (blocks in eights read the group's block 5), blgp:6 (lanes 32-47 to all).", "cbsz": 3, "abid": 5, "blgp": 6})
    if name in ("v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_32x32x4bf16_1k"):
        cfgs.append({"why": "cbsz:1 abid:1 (both blocks read block 1's A), blgp:1 (lanes 0-31 to 32-63).", "cbsz": 1, "abid": 1, "blgp": 1})
    if name in ("v_mfma_f32_16x16x1_4b_f32",):
        cfgs.append({"why": "blgp:2 (lanes 32-63 to 0-31), blgp:4 next block.", "blgp": 2})
        cfgs.append({"why": "blgp:4 (lanes 0-15 to all), blgp:5 (16-31), blgp:7 (48-63).", "blgp": 4})
        cfgs.append({"why": "blgp:5: lanes 16-31 to all.", "blgp": 5})
        cfgs.append({"why": "blgp:7: lanes 48-63 to all.", "blgp": 7})
    if name in ("v_mfma_f64_16x16x4_f64", "v_mfma_f64_4x4x4_4b_f64"):
        cfgs.append({"why": "gfx94 f64: the blgp field is neg:[A,B,C] (README, BLGP on FP64).", "neg": 5})
    if name == "v_mfma_f64_4x4x4_4b_f64":
        cfgs.append({"why": "gfx94 f64: neg B only.", "neg": 2})
    return cfgs


HEAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gfx9_mfma.head")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return check(sys.argv[2])
    out = []
    with open(HEAD) as f:
        out.append(f.read().rstrip("\n"))
    out.append("")
    out.append("# ---- Generated by gen_mfma.py from here on: do not edit by hand. ----")
    out.append("")
    for op in OPS:
        for cfg in configs(op):
            emit_dense(op, cfg, out)
    for op in SPARSE:
        emit_sparse(op, 0, out)
        if op[0] in ("v_smfmac_f32_16x16x32_f16", "v_smfmac_i32_16x16x64_i8", "v_smfmac_f32_32x32x32_fp8_bf8"):
            emit_sparse(op, 1, out)
    print("\n".join(out).rstrip("\n"))


# ---------------------------------------------------------------- --check


def calc_table(calc, arch, name, matrix, extra=()):
    """The calculator's layout of one matrix: (block, row, col) -> text."""
    cmd = [sys.executable, calc, "-a", arch, "-i", name, "-R", f"-{matrix}", "--csv", *extra]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    table, blocks = {}, [0]
    for line in text.splitlines():
        if line.startswith("Block"):
            blocks = [int(x) for x in line.split(None, 1)[1].split(",")]
        elif line and line[0].isdigit():
            row, *cols = line.split(",")
            for c, cell in enumerate(cols):
                for b in blocks:
                    table[(b, int(row), c)] = cell
    return table


def cell(loc):
    reg, lane, lo, width = loc
    if width == 64:
        return f"v[{reg + 1}:{reg}]{{{lane}}}"
    if width == 32:
        return f"v{reg}{{{lane}}}"
    return f"v{reg}{{{lane}}}.[{lo + width - 1}:{lo}]"


def check(calc):
    bad = 0

    checked = 0

    def expect(what, got, want):
        nonlocal bad, checked
        checked += 1
        if got != want:
            bad += 1
            if bad < 20:
                print(f"{what}: calculator {got}, script {want}")

    for op in OPS:
        name, target, m, n, kk, blocks, ta, tb, acc = op
        arch = "cdna2" if target == G90 else "cdna3"
        for cfg in configs(op):
            if cfg.get("neg"):
                continue
            cbsz, abid, blgp = cfg.get("cbsz", 0), cfg.get("abid", 0), cfg.get("blgp", 0)
            ta_ = calc_table(calc, arch, name, "A", ["--cbsz", str(cbsz), "--abid", str(abid)])
            for (b, i, k), text in ta_.items():
                expect(f"{name} A{b}[{i}][{k}]", text, cell(in_loc(m, kk, blocks, BITS[ta], i, k, a_block(b, cbsz, abid))))
            tb_ = calc_table(calc, arch, name, "B", ["--blgp", str(blgp)])
            for (b, k, j), text in tb_.items():
                reg, lane, lo, w = in_loc(n, kk, blocks, BITS[tb], j, k, b)
                # The calculator names where the products find B[k][j]:
                # the lane blgp maps it to reads it from there.
                want = cell((reg, b_source_lane(lane, blgp), lo, w))
                expect(f"{name} B{b}[{k}][{j}]", text, want)
            td = calc_table(calc, arch, name, "D")
            for (b, i, j), text in td.items():
                expect(f"{name} D{b}[{i}][{j}]", text, cell(out_loc(m, n, blocks, acc, i, j, b)))
    for name, m, kk, ta, tb, acc in SPARSE:
        for abid in (0, 1):
            mods = ["--abid", str(abid)]
            t = calc_table(calc, "cdna3", name, "A", mods)
            for (b, i, k), text in t.items():
                lo_reg, lane, lo, w = sparse_a_loc(m, kk, BITS[ta], i, k // 4, 0)
                _, _, hi, _ = sparse_a_loc(m, kk, BITS[ta], i, k // 4, 1)
                # The calculator names the bits both stored values of the
                # group take.
                width = hi + BITS[ta] - lo
                expect(f"{name} A[{i}][{k}]", text, cell((lo_reg, lane, lo, width)))
            t = calc_table(calc, "cdna3", name, "k", mods)
            for (b, i, k), text in t.items():
                expect(f"{name} K{abid}[{i}][{k}]", text, cell(index_loc(m, kk, BITS[ta], i, k // 4, abid)))
            t = calc_table(calc, "cdna3", name, "B")
            for (b, k, j), text in t.items():
                expect(f"{name} B[{k}][{j}]", text, cell(in_loc(m, kk, 1, BITS[tb], j, k, 0)))
            t = calc_table(calc, "cdna3", name, "D")
            for (b, i, j), text in t.items():
                expect(f"{name} D[{i}][{j}]", text, cell(out_loc(m, m, 1, acc, i, j, 0)))
    print(f"{checked} element locations compared, {bad} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
