#!/usr/bin/env python3
"""Generate crates/isa/data/FAMILY-ops.tsv and FAMILY-samples.tsv (gfx10:
RDNA2, gfx11: RDNA3/3.5, gfx12: RDNA4).

The LLVM disassembler is the oracle: for every encoding we build an
instruction word from a template (fixed, distinct register operands), walk
the opcode field through all its values, and ask `llvm-mc-19 --disassemble`
what each word is. The printed mnemonic names the op; the printed register
widths plus the type suffixes in the name give the operand types.

Usage: tools/gen-ops.py [gfx10|gfx11|gfx12]   (default gfx11; run from anywhere;
rewrites that family's data files)
"""
import os
import re
import subprocess
import sys
import tempfile

MC = os.environ.get("LLVM_MC", "llvm-mc-19")
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def le(*words):
    out = []
    for w in words:
        out += [(w >> (8 * i)) & 0xFF for i in range(4)]
    return out


MARKER = [0x34, 0x12, 0x64, 0xB0]  # s_movk_i32 s100, 0x1234: separates candidates
# (s100: gfx9 names s102-s105 flat_scratch and xnack_mask)
MARKER_TEXT = "s_movk_i32 s100, 0x1234"


def run_mc(lines, cpu="gfx1100"):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for b in lines:
            f.write(",".join("0x%02x" % x for x in list(b) + MARKER) + "\n")
        path = f.name
    try:
        p = subprocess.run([MC, "--disassemble", "-arch=amdgcn", "-mcpu=" + cpu, path],
                           capture_output=True, text=True, check=True)
    finally:
        os.unlink(path)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r":(\d+):1: warning", p.stderr)}
    texts = [l.strip() for l in p.stdout.splitlines() if l.strip() and l.strip() != ".text"]
    return texts, bad


def disasm(lines, cpu="gfx1100"):
    """Disassemble each byte list; return {bytes tuple: text} for those that
    are exactly one valid instruction. A marker instruction follows each
    candidate so the output can be split back into per-candidate segments."""
    texts, bad = run_mc(lines, cpu)
    segs, cur = [], []
    for t in texts:
        if t == MARKER_TEXT:
            segs.append(cur)
            cur = []
        else:
            cur.append(t)
    if len(segs) != len(lines):
        if len(lines) == 1:
            return {}
        res = {}
        for b in lines:  # an instruction swallowed a marker: go one by one
            res.update(disasm([b], cpu))
        return res
    return {tuple(b): s[0] for i, (b, s) in enumerate(zip(lines, segs))
            if i not in bad and len(s) == 1 and "invalid" not in s[0].lower()}


# --- encodings -------------------------------------------------------------
# LLVM's decoder rejects words whose unused operand fields are not zero, so
# each encoding lists candidate values per operand field, richest first; the
# generator tries the combinations in order of decreasing richness and keeps
# the first that disassembles. A `lit` field appends a 32-bit literal.
S2, S4, S6, S8 = 2, 4, 6, 8
V = lambda n: 256 + n  # 9-bit source code of a VGPR
K = 0x40490FDB  # literal used where an op needs one


def sop1(op, f):
    return le(0xBE800000 | (f["d"] << 16) | (op << 8) | f["s0"])


def sop2(op, f):
    return le(0x80000000 | (op << 23) | (f["d"] << 16) | (f["s1"] << 8) | f["s0"])


def sopk(op, f):
    return le(0xB0000000 | (op << 23) | (f["d"] << 16) | f["imm"])


def sopc(op, f):
    return le(0xBF000000 | (op << 16) | (f["s1"] << 8) | f["s0"])


def sopp(op, f):
    return le(0xBF800000 | (op << 16) | f["imm"])


def smem(op, f):
    return le(0xF4000000 | (op << 18) | (f["d"] << 6) | f["base"], (f["soff"] << 25) | 0x10)


def vop1(op, f):
    return le(0x7E000000 | (f["d"] << 17) | (op << 9) | f["s0"])


def vop2(op, f):
    return le((op << 25) | (f["d"] << 17) | (f["s1"] << 9) | f["s0"])


def vopc(op, f):
    return le(0x7C000000 | (op << 17) | (f["s1"] << 9) | f["s0"])


def vop3(op, f):
    return le(0xD4000000 | (op << 16) | f["d"], (f["s2"] << 18) | (f["s1"] << 9) | f["s0"])


def vop3p(op, f):
    # op_sel_hi on (bits 59, 60 and 14), as the assembler emits by default;
    # LLVM rejects a nonzero src2 field on 2-source ops, and op_sel_hi bits
    # that are set for absent sources on some, so both are varied.
    hi = f["hi"]
    return le(0xCC000000 | (op << 16) | ((hi >> 2) << 14) | f["d"],
              ((hi & 3) << 27) | (f["s2"] << 18) | (f["s1"] << 9) | f["s0"])


def vopd(which):
    def enc(op, f):
        opx, opy = (op, 8) if which == "x" else (8, op)  # paired with v_dual_mov_b32
        x1, y1 = (f["s1"], 0) if which == "x" else (0, f["s1"])
        return le(0xC8000000 | (opx << 22) | (opy << 17) | (x1 << 9) | V(2),
                  (10 << 24) | (6 << 17) | (y1 << 9) | V(13))
    return enc


def ds(op, f):
    # GDS/GWS ops exist only with the gds bit (17) set.
    return le(0xD8000000 | (op << 18) | (f["gds"] << 17) | (3 << 8) | 1,
              (f["d"] << 24) | (f["s2"] << 16) | (f["s1"] << 8) | f["s0"])


def flat(seg):
    def enc(op, f):
        return le(0xDC000000 | (op << 18) | (seg << 16) | f["glc"] << 14 | 0x10,
                  (f["d"] << 24) | (f["saddr"] << 16) | (f["s1"] << 8) | f["s0"])
    return enc


def mubuf(op, f):
    # srsrc s[8:11], soffset s12, offset 16; offen when vaddr is present
    offen = 1 << 22 if f["s0"] else 0
    return le(0xE0000000 | (op << 18) | f["glc"] << 14 | 16,
              (12 << 24) | offen | (2 << 16) | (f["d"] << 8) | f["s0"])


def mtbuf(op, f):
    offen = 1 << 22 if f["s0"] else 0
    return le(0xE8000000 | (1 << 19) | (op << 15) | 16,
              (12 << 24) | offen | (2 << 16) | (f["d"] << 8) | f["s0"])


def mimg(op, f):
    # vdata v0, vaddr v4 (dim 2D or 1D), srsrc s[8:15], ssamp s[16:19] or none;
    # the ray-tracing ops need unorm and r128 (`fixed`).
    return le(0xF0000000 | (op << 18) | f["fixed"] | (f["dmask"] << 8) | (f["dim"] << 2),
              (f["ssamp"] << 26) | (2 << 16) | 4)


def exp(op, f):
    # One op: exp mrt0 v0, v1, v2, v3 (the opcode field is the target).
    return le(0xF8000000 | 0xF, 0x03020100)


def vinterp(op, f):
    return le(0xCD000000 | (op << 16), ((256 + 3) << 18) | ((256 + 2) << 9) | (256 + 1))


def ldsdir(op, f):
    return le(0xCE000000 | (op << 20) | 1)


VSRC = [V(2), S2, 0]
ENCODINGS = [
    ("sop1", 256, sop1, {"d": [10, 0], "s0": [S2, 0x80, 0]}),
    ("sop2", 0x60, sop2, {"d": [10, 0], "s0": [S2, 0], "s1": [S4, 0], "lit": [0, 1]}),
    ("sopk", 0x1D, sopk, {"d": [10, 0], "imm": [0x10, 0, 0x1801], "lit": [0, 1]}),
    ("sopc", 128, sopc, {"s0": [S2, 0], "s1": [S4, 0]}),
    ("sopp", 128, sopp, {"imm": [0, 1]}),
    ("smem", 256, smem, {"d": [8, 0], "base": [1, 0], "soff": [124, 4]}),
    ("vop1", 256, vop1, {"d": [10, 0], "s0": VSRC}),
    ("vop2", 0x3E, vop2, {"d": [10], "s0": VSRC, "s1": [4], "lit": [0, 1]}),
    ("vopc", 256, vopc, {"s0": VSRC, "s1": [4]}),
    ("vop3", 1024, vop3, {"d": [10, 0], "s0": [V(2), S2, 0], "s1": [V(4), S4, 0],
                          "s2": [V(6), S6, 0]}),
    ("vop3p", 128, vop3p, {"d": [10], "s0": [V(2), V(8)], "s1": [V(4), V(16)],
                           "s2": [V(6), V(0), 0], "hi": [7, 3, 0]}),
    ("vopdx", 16, vopd("x"), {"s1": [4, 0], "lit": [0, 1]}),
    ("vopdy", 32, vopd("y"), {"s1": [7, 0], "lit": [0, 1]}),
    ("ds", 256, ds, {"d": [10, 0], "s0": [2, 0], "s1": [4, 0], "s2": [6, 0], "gds": [0, 1]}),
    ("flat", 128, flat(0), {"d": [10, 0], "s0": [2], "s1": [4, 0], "saddr": [124], "glc": [0, 1]}),
    ("scratch", 128, flat(1), {"d": [10, 0], "s0": [2], "s1": [4, 0], "saddr": [124], "glc": [0, 1]}),
    ("global", 128, flat(2), {"d": [10, 0], "s0": [2], "s1": [4, 0], "saddr": [124],
                              "glc": [0, 1]}),
    ("mubuf", 128, mubuf, {"d": [10, 0], "s0": [2, 0], "glc": [0, 1]}),
    ("mtbuf", 16, mtbuf, {"d": [10], "s0": [2, 0]}),
    ("mimg", 256, mimg, {"dmask": [0xF, 1, 3], "ssamp": [4, 0], "dim": [1, 0],
                         "fixed": [0, 0x8080]}),
    ("exp", 1, exp, {}),
    ("vinterp", 128, vinterp, {}),
    ("ldsdir", 4, ldsdir, {}),
]


# --- gfx12 (RDNA4) ----------------------------------------------------------
# The scalar, VALU, VOPD, DS, export and interpolation words keep gfx11's
# layouts (their opcodes move); SMEM moves its fields, and vector memory
# becomes 96-bit VFLAT/VSCRATCH/VGLOBAL and VBUFFER words: th (cache
# policy) in bits 20-22 of the second dword, scope in 18-19, the data VGPR
# in 23-30, and a 24-bit signed offset above the address VGPR in the third.


def smem12(op, f):
    return le(0xF4000000 | (op << 13) | (f["d"] << 6) | f["base"], (f["soff"] << 25) | 0x10)


def vmem12(seg):
    # seg: 0 VFLAT, 1 VSCRATCH (sve, bit 17, marks a vaddr), 2 VGLOBAL;
    # `glc` here is th bit 20 (TH_ATOMIC_RETURN on atomics).
    def enc(op, f):
        sve = (1 << 17) if seg == 1 and f["s0"] else 0
        return le(0xEC000000 | (seg << 24) | (op << 14) | f["saddr"],
                  (f["s1"] << 23) | (f["glc"] << 20) | sve | f["d"],
                  (16 << 8) | f["s0"])
    return enc


def vbuffer(base):
    # srsrc s[8:11] (bits 9-17), soffset s12, offset 16, format 1; offen when
    # vaddr is present. The typed ops (tbuffer_*) are opcodes 128 and up.
    def enc(op, f):
        offen = 1 << 30 if f["s0"] else 0
        return le(0xC4000000 | ((base + op) << 14) | 12,
                  offen | (1 << 23) | (f.get("glc", 0) << 20) | (8 << 9) | f["d"],
                  (16 << 8) | f["s0"])
    return enc


def vimage(op, f):
    # VIMAGE: dim (bits 0-2), r128/d16/a16 (4-6), op (14-21), dmask (22-25);
    # vdata (0-7), srsrc (9-17), scope, th, tfe (23) and vaddr4 (24-31);
    # vaddr0-3 a byte each. vdata v0, srsrc s[8:15], the first `na` of
    # vaddr0-4 v4..v8 (LLVM rejects a nonzero field past the op's widest
    # address variant); the ray queries need r128 (`fixed`).
    va = [4 + k if k < f["na"] else 0 for k in range(5)]
    return le(0xD0000000 | (f["dmask"] << 22) | (op << 14) | f["fixed"] | f["dim"],
              (va[4] << 24) | (8 << 9), va[0] | va[1] << 8 | va[2] << 16 | va[3] << 24)


def vsample(op, f):
    # VSAMPLE: VIMAGE's first word with tfe in bit 3 and unorm in 13; lwe in
    # bit 8 and ssamp (s[16:19]) in bits 23-31 of the second; four vaddrs.
    # Its opcodes are recorded 256 up, apart from VIMAGE's.
    va = [4 + k if k < f["na"] else 0 for k in range(4)]
    return le(0xE4000000 | (f["dmask"] << 22) | (op << 14) | f["dim"],
              (16 << 23) | (8 << 9), va[0] | va[1] << 8 | va[2] << 16 | va[3] << 24)


def gfx12_encodings():
    same = {"sop1", "sop2", "sopk", "sopc", "sopp", "vop1", "vop2", "vopc", "vop3", "vop3p",
            "vopdx", "vopdy", "ds", "exp", "vinterp", "ldsdir"}
    out = [e for e in ENCODINGS if e[0] in same]
    mem = {"d": [10, 0], "s0": [2], "s1": [4, 0], "saddr": [124], "glc": [0, 1]}
    out += [
        # The opcode is bits 13-18; the bits above are th and scope.
        ("smem", 64, smem12, {"d": [8, 0], "base": [1, 0], "soff": [124, 4]}),
        ("flat", 256, vmem12(0), mem),
        ("scratch", 256, vmem12(1), dict(mem, s0=[2, 0])),
        ("global", 256, vmem12(2), mem),
        ("mubuf", 128, vbuffer(0), {"d": [10, 0], "s0": [2, 0], "glc": [0, 1]}),
        ("mtbuf", 16, vbuffer(128), {"d": [10], "s0": [2, 0]}),
        ("vimage", 256, vimage, {"dmask": [0xF, 1, 3], "dim": [1, 0], "fixed": [0, 0x10],
                                 "na": [5, 4, 3, 2, 1]}),
        ("vsample", 256, vsample, {"dmask": [0xF, 1, 3], "dim": [1, 0], "na": [4, 3, 2, 1]}),
    ]
    return out


# --- gfx10 (RDNA2, gfx10.3) -------------------------------------------------
# The scalar ALU, VALU (VOP1/VOP2/VOPC/VOP3/VOP3P), DS and export words have
# gfx11's layouts (many opcodes differ). Register code 124 is m0 and 125 is
# null (the other way round from gfx11), so an absent soffset/saddr is 125.
# SMEM: sdata 6-12, glc 16, dlc 14, op 18-25; the second dword holds a
# 21-bit offset and soffset in 25-31. FLAT/SCRATCH/GLOBAL: a 12-bit offset,
# dlc 12, seg 14-15, glc 16, slc 17, op 18-24. MUBUF: offen 12, glc 14,
# op bits 0-6 in 18-24 and bit 7 in bit 25 of the first dword. MTBUF: op bits 0-2 in
# 16-18 and bit 3 in bit 21 of the second dword, format 19-25. MIMG: dim
# 3-5, dmask 8-11, unorm 12, r128 15, op bits 0-6 in 18-24 and bit 7 in
# bit 0; vaddr, vdata, srsrc/4 (16-20) and ssamp/4 (21-25) in the second.
# The 32-bit VINTRP word (0xC8...) is not walked (its VOP3 forms are).


def smem10(op, f):
    return le(0xF4000000 | (op << 18) | (f["d"] << 6) | f["base"], (f["soff"] << 25) | 0x10)


def flat10(seg):
    def enc(op, f):
        return le(0xDC000000 | (op << 18) | (f["glc"] << 16) | (seg << 14) | 0x10,
                  (f["d"] << 24) | (f["saddr"] << 16) | (f["s1"] << 8) | f["s0"])
    return enc


def mubuf10(op, f):
    # srsrc s[8:11], soffset s12, offset 16; offen when vaddr is present.
    # Opcode bit 7 (the d16 format ops) is bit 25.
    offen = 1 << 12 if f["s0"] else 0
    return le(0xE0000000 | ((op >> 7) << 25) | ((op & 0x7F) << 18) | (f["glc"] << 14) | offen | 16,
              (12 << 24) | (2 << 16) | (f["d"] << 8) | f["s0"])


def mtbuf10(op, f):
    offen = 1 << 12 if f["s0"] else 0
    return le(0xE8000000 | (1 << 19) | ((op & 7) << 16) | offen | 16,
              (12 << 24) | ((op >> 3) << 21) | (2 << 16) | (f["d"] << 8) | f["s0"])


def mimg10(op, f):
    # vdata v0, vaddr v4 (dim 2D or 1D), srsrc s[8:15], ssamp s[16:19] or
    # none; the ray-tracing ops need unorm and r128 (`fixed`).
    return le(0xF0000000 | ((op & 0x7F) << 18) | f["fixed"] | (f["dmask"] << 8) | (f["dim"] << 3)
              | (op >> 7), (f["ssamp"] << 21) | (2 << 16) | 4)


def gfx10_encodings():
    same = {"sop1", "sop2", "sopk", "sopc", "sopp", "vop1", "vop2", "vopc", "vop3", "vop3p",
            "ds", "exp"}
    out = [e for e in ENCODINGS if e[0] in same]
    mem = {"d": [10, 0], "s0": [2], "s1": [4, 0], "saddr": [125], "glc": [0, 1]}
    out += [
        ("smem", 256, smem10, {"d": [8, 0], "base": [1, 0], "soff": [125, 4]}),
        ("flat", 128, flat10(0), mem),
        ("scratch", 128, flat10(1), mem),
        ("global", 128, flat10(2), mem),
        ("mubuf", 256, mubuf10, {"d": [10, 0], "s0": [2, 0], "glc": [0, 1]}),
        ("mtbuf", 16, mtbuf10, {"d": [10], "s0": [2, 0]}),
        ("mimg", 256, mimg10, {"dmask": [0xF, 1, 3], "ssamp": [4, 0], "dim": [1, 0],
                               "fixed": [0, 0x9000]}),
    ]
    return out


# --- gfx9 (CDNA2 gfx90a, CDNA3 gfx940-gfx942) -------------------------------
# The SOP*, VOP1, VOP2 and VOPC words are gfx11's layouts (opcodes differ).
# The rest are GCN's: VOP3 is 0xD0 with a 10-bit opcode (VOPC e64 at 0-255,
# VOP2 at 256-319, VOP1 at 320-447, VOP3-only from 448); VOP3P is 0xD38
# with a 7-bit opcode, and its MAI form (MFMA, SMFMAC, AccVGPR moves) has
# acc_cd (bit 15: vdst and src2 are AccVGPRs), abid (11-14), cbsz (8-10),
# blgp (61-63) and the A/B AccVGPR bits (59, 60). SMEM: 0xC0, op 18-25,
# imm 17, glc 16, soe 14, sdata 6-12; a 21-bit offset and soffset (25-31)
# in the second dword. DS: op 17-24, gds 16, acc 25. FLAT/GLOBAL/SCRATCH:
# a 13-bit offset, lds 13, seg 14-15, glc/sc0 16, slc/nt 17, op 18-24,
# sc1 25; saddr 0x7F is off, acc bit 55. MUBUF: offen 12, idxen 13, glc 14,
# sc1 15, lds 16, slc 17, op 18-24; srsrc/4 in 48-52, acc 55, soffset
# 56-63. MTBUF: op 15-18, dfmt 19-22, nfmt 23-25. MIMG (gfx90a only):
# dmask 8-11, unorm 12, op 18-24. gfx9 has no null register: m0 is 124.


def smem9(op, f):
    # imm off too: llvm-mc knows the cache ops and s_memtime only so.
    return le(0xC0000000 | (op << 18) | (f["imm"] << 17) | (f["d"] << 6) | f["base"], 0x10)


def vop3_9(op, f):
    return le(0xD0000000 | (op << 16) | f["d"], (f["s2"] << 18) | (f["s1"] << 9) | f["s0"])


def vop3p9(op, f):
    hi = f["hi"]
    return le(0xD3800000 | (op << 16) | ((hi >> 2) << 14) | f["d"],
              ((hi & 3) << 27) | (f["s2"] << 18) | (f["s1"] << 9) | f["s0"])


def ds9(op, f):
    # offset0 1, offset1 3, or none (ds_nop takes no offsets)
    return le(0xD8000000 | (op << 17) | (f["gds"] << 16) | f["off"],
              (f["d"] << 24) | (f["s2"] << 16) | (f["s1"] << 8) | f["s0"])


def flat9(seg):
    def enc(op, f):
        return le(0xDC000000 | (op << 18) | (f["glc"] << 16) | (seg << 14) | 0x10,
                  (f["d"] << 24) | (f["saddr"] << 16) | (f["s1"] << 8) | f["s0"])
    return enc


def mubuf9(op, f):
    # lds (bit 16): buffer_store_lds_dword exists only in that form.
    offen = 1 << 12 if f["s0"] else 0
    return le(0xE0000000 | (op << 18) | (f["lds"] << 16) | (f["glc"] << 14) | offen | 16,
              (12 << 24) | (2 << 16) | (f["d"] << 8) | f["s0"])


def mtbuf9(op, f):
    # dfmt 32 (4), nfmt float (7)
    offen = 1 << 12 if f["s0"] else 0
    return le(0xE8000000 | (7 << 23) | (4 << 19) | (op << 15) | offen | 16,
              (12 << 24) | (2 << 16) | (f["d"] << 8) | f["s0"])


def mimg9(op, f):
    return le(0xF0000000 | (op << 18) | (f["dmask"] << 8) | f["fixed"],
              (f["ssamp"] << 21) | (2 << 16) | 4)


def gfx9_encodings():
    same = {"sop1", "sop2", "sopk", "sopc", "sopp", "vop1", "vop2", "vopc"}
    out = [e for e in ENCODINGS if e[0] in same]
    mem = {"d": [10, 0], "s0": [2], "s1": [4, 0], "saddr": [0x7F], "glc": [0, 1]}
    out += [
        ("smem", 256, smem9, {"d": [8, 0], "base": [1, 0], "imm": [1, 0]}),
        # VOP3 opcodes 0x380 and up are VOP3P's (walked below).
        ("vop3", 0x380, vop3_9, {"d": [10, 0], "s0": [V(2), S2, 0], "s1": [V(4), S4, 0],
                                "s2": [V(6), S6, 0]}),
        ("vop3p", 128, vop3p9, {"d": [10], "s0": [V(2), V(8)], "s1": [V(4), V(16), 0],
                                "s2": [V(6), V(0), 0], "hi": [7, 3, 0]}),
        ("ds", 256, ds9, {"d": [10, 0], "s0": [2, 0], "s1": [4, 0], "s2": [6, 0], "gds": [0, 1],
                          "off": [0x301, 0]}),
        ("flat", 128, flat9(0), dict(mem, saddr=[0])),
        ("scratch", 128, flat9(1), dict(mem, s0=[2, 0], saddr=[0x7F, 3])),
        ("global", 128, flat9(2), mem),
        ("mubuf", 128, mubuf9, {"d": [10, 0], "s0": [2, 0], "glc": [0, 1], "lds": [0, 1]}),
        ("mtbuf", 16, mtbuf9, {"d": [10], "s0": [2, 0]}),
        ("mimg", 128, mimg9, {"dmask": [0xF, 1, 3], "ssamp": [4, 0], "fixed": [0, 0x1000]}),
    ]
    return out


# Per family: the processors whose disassembler is asked (the first is the
# base; later ones only add ops it lacks), and the encodings to walk.
FAMILIES = {
    # gfx1150+ (RDNA3.5) adds ops (SALU float) to the gfx1100 set.
    "gfx11": (("gfx1100", "gfx1151"), lambda: ENCODINGS),
    "gfx12": (("gfx1200", "gfx1201"), gfx12_encodings),
    # gfx10.3 (RDNA2): gfx1030's set; the others only add ops it lacks.
    "gfx10": (("gfx1030", "gfx1031", "gfx1032", "gfx1034", "gfx1035", "gfx1036"),
              gfx10_encodings),
    # CDNA2 and CDNA3: their opcode tables differ (gfx940 renames the MFMAs,
    # moves the xf32/fp8 ones in, drops images), so each is a family;
    # gfx940 and gfx941 decode as gfx942 does.
    "gfx90a": (("gfx90a",), gfx9_encodings),
    "gfx94": (("gfx942",), gfx9_encodings),
}


def templates(fields):
    """All field assignments, richest (most nonzero, earliest choice) first."""
    import itertools
    names = list(fields)
    combos = []
    for idx in itertools.product(*[range(len(fields[n])) for n in names]):
        f = {n: fields[n][i] for n, i in zip(names, idx)}
        extra = ("lit", "glc", "fixed", "gds", "lds")  # tried last, not counted as richness
        zeros = sum(1 for n in names if f[n] == 0 and n not in extra)
        combos.append(((f.get("lit", 0), f.get("glc", 0), f.get("fixed", 0), f.get("gds", 0),
                        f.get("lds", 0), zeros, idx), f))
    combos.sort(key=lambda c: c[0])
    return [f for _, f in combos]


def build(enc, op, f):
    b = enc(op, f)
    return b + le(K) if f.get("lit") else b


TYPE_RE = re.compile(r"^(b|f|i|u|bf)(8|16|32|64|96|128)$")


def name_types(name):
    """The type suffix tokens of a mnemonic, in order, e.g. cvt_f32_f16."""
    return [t for t in name.split("_") if TYPE_RE.match(t)]


def reg_width(operand):
    """Number of 32-bit registers a printed operand spans, or None."""
    m = re.match(r"^-?\|?([sva]|ttmp)\[(\d+):(\d+)\]", operand)
    if m:
        return int(m.group(3)) - int(m.group(2)) + 1
    if re.match(r"^-?\|?([sva]\d+|ttmp\d+|vcc_lo|vcc_hi|m0|null|exec_lo|exec_hi)", operand):
        return 1
    if operand in ("vcc", "exec"):
        return 2
    return None


WIDTH_TY = {2: "B64", 3: "B96", 4: "B128", 8: "B256", 16: "B512", 32: "B1024"}


def ty_of(token, width, packed):
    """Operand type from a name type token and the printed register width."""
    if width is None:
        width = 1
    tbits = int(re.sub(r"\D", "", token)) if token else 32
    if tbits == 8:
        tbits = 32  # byte ops (v_sad_u8, s_sext_i32_i8) read whole dwords
    fl = token.startswith("f") if token else False
    bf = token.startswith("bf") if token else False
    if width == 1:
        if tbits <= 16:
            if packed:
                return "V2BF16" if bf else ("V2F16" if fl else "V2B16")
            return "BF16" if bf else ("F16" if fl else "B16")
        if tbits == 32 or not token:
            return "F32" if fl else "B32"
        return "B32"
    if width == 2 and tbits == 64:
        return "F64" if fl else "B64"
    return WIDTH_TY.get(width, "B32")


def split_operands(text):
    mn, _, rest = text.partition(" ")
    ops = [o for o in rest.split(", ")] if rest else []
    if ops:
        ops[-1] = ops[-1].split(" ")[0]
    return mn, ops


STRIP = re.compile(r"_(e32|e64|dpp|sdwa)$")
MASK_SRC2 = ("v_cndmask", "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32",
             "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32")
VOP3SD = {"v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32", "v_div_scale_f32",
          "v_div_scale_f64", "v_mad_u64_u32", "v_mad_i64_i32", "v_add_co_u32",
          "v_sub_co_u32", "v_subrev_co_u32",
          "v_mad_co_u64_u32", "v_mad_co_i64_i32",  # gfx12's names
          "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"}  # gfx9's


def vector_types(fmt, name, ops):
    """(dst list, src list) of type names for a vector instruction."""
    toks = name_types(name)
    # gfx10 spells some packed conversions `pkrtz`/`pknorm`.
    packed = fmt == "vop3p" or name.startswith("v_dot2") or any(
        p in name for p in ("_pk_", "_pkrtz_", "_pknorm_"))
    first, last = (toks[0], toks[-1]) if toks else ("", "")
    dst, src = ["None", "None"], ["None", "None", "None"]
    is_cmp = name.startswith("v_cmp")
    ops = list(ops)
    if is_cmp:
        # gfx9's v_cmpx writes its mask to the sdst (vcc) as well as EXEC.
        writes = GFX9 or not name.startswith("v_cmpx")
        dst[0] = "Mask" if writes else "None"
        if writes:
            ops = ops[1:]
    elif name in VOP3SD:
        dst[0] = ty_of(first, reg_width(ops[0]), packed)
        dst[1] = "Mask"
        ops = ops[2:]
    elif ops and not name.startswith(("v_nop", "v_swap")) and fmt != "vopc":
        dst[0] = ty_of(first, reg_width(ops[0]), packed)
        ops = ops[1:]
    if name.startswith("v_swap"):
        dst[0] = dst[1] = ty_of(first, 1, False)
    if name.startswith("v_cmp_class") or name.startswith("v_cmpx_class"):
        toks = [toks[0], "b32"]
    for i, o in enumerate(ops[:3]):
        tok = last if i == 0 or len(toks) < 2 else toks[-1]
        if name.startswith("v_cmp") and "class" in name and i == 1:
            tok = "b32"
        src[i] = ty_of(tok, reg_width(o), packed)
    if name.startswith(MASK_SRC2):
        src[2] = "Mask"
    if name.startswith("v_writelane"):
        dst[0] = "B32"
    if "fmac" in name or "dot2acc" in name or "_mac_" in name or name.startswith(
            ("v_dot2c_", "v_dot4c_")):
        src[2] = dst[0]  # accumulates into its destination
    # Operand types the mnemonic does not spell out (LLVM's VOP profiles).
    if name == "v_sat_pk_u8_i16":
        dst[0], src[0] = "B16", "B32"  # two i16 in, two u8 out (i16 <- i32)
    if name in ("v_ldexp_f32", "v_ldexp_f64", "v_trig_preop_f64"):
        src[1] = "B32"  # integer exponent / segment
    if name == "v_cvt_pk_u8_f32":
        src[1] = src[2] = "B32"  # byte index, accumulator
    if name == "v_sad_u16":
        dst[0] = src[0] = src[1] = src[2] = "B32"
    if name in ("v_mad_u32_u16", "v_mad_i32_i16"):
        src[2] = "B32"
    if name == "v_dot2_f16_f16":
        dst[0] = src[2] = "F16"
    if name == "v_dot2_bf16_bf16":
        dst[0] = src[2] = "BF16"  # one bf16 result and accumulator
    if name in ("v_dot2_f32_f16", "v_dot2_f32_bf16"):
        src[2] = "F32"  # the f32 accumulator
    if name in ("v_dot2_i32_i16", "v_dot2_u32_u16"):
        src[2] = "B32"  # gfx10's: the 32-bit accumulator
    if name.startswith(("v_cvt_pk_norm_", "v_cvt_pknorm_")) and name.endswith("_f16"):
        src[0] = src[1] = "F16"
    return dst, src


def scalar_types(fmt, name, ops):
    toks = name_types(name)
    first = toks[0] if toks else "b32"
    dst, src = ["None", "None"], ["None", "None", "None"]
    if fmt == "sopc" or (fmt == "sop1" and len(ops) == 1 and re.match(r"s\[?2\b", ops[0])):
        srcs = ops  # the one operand sits in the ssrc0 field (s_setpc_b64)
    elif fmt == "sopp":
        srcs = []
    else:
        if ops:
            dst[0] = ty_of(first, reg_width(ops[0]), False) if reg_width(ops[0]) else "None"
        srcs = ops[1:]
    for i, o in enumerate(srcs[:3]):
        w = reg_width(o)
        if w:
            src[i] = ty_of(toks[-1] if toks else "b32", w, False)
    if name in ("s_fmaak_f32", "s_fmamk_f32"):
        src = ["F32", "F32", "F32"]  # the literal K is src2 (fmaak) or src1 (fmamk)
    # SALU has no 16-bit registers: integer 16-bit operands are dwords.
    dst = ["B32" if t == "B16" else t for t in dst]
    src = ["B32" if t == "B16" else t for t in src]
    return dst, src


def mem_types(fmt, name, ops):
    dst, src = ["None", "None"], ["None", "None", "None"]
    is_store = "store" in name or (fmt in ("mubuf", "mtbuf", "ds") and not ops[0].startswith("v") ) \
        or name.startswith(("ds_write", "ds_swizzle")) and False
    widths = [reg_width(o) for o in ops]
    return dst, src, widths


GFX9 = False  # whether the family being walked is CDNA's (gfx9 words)
MAI = ("v_mfma_", "v_smfmac_", "v_accvgpr_read", "v_accvgpr_write")


def main():
    global GFX9
    family = sys.argv[1] if len(sys.argv) > 1 else "gfx11"
    GFX9 = family in ("gfx90a", "gfx94")
    cpus, encodings = FAMILIES[family]
    ops = {}      # name -> dict
    samples = []  # (bytes, text)
    for cpu in cpus:
        for fmt, count, enc, fields in encodings():
            tmpls = templates(fields)
            lines = [build(enc, op, f) for f in tmpls for op in range(count)]
            res = disasm(lines, cpu)
            for op in range(count):
                for f in tmpls:
                    b = tuple(build(enc, op, f))
                    if b in res:
                        if cpu == cpus[0] or new_op(ops, fmt, res[b]):
                            record(ops, samples, fmt, op, b, res[b], cpu)
                        break
    write(family, ops, samples)


def new_op(ops, fmt, text):
    """Whether a later processor's word names an op the base one lacks."""
    name = STRIP.sub("", split_operands(text)[0])
    return name not in ops and not fmt.startswith("vopd")


def record(ops, samples, fmt, op, b, text, cpu):
    mn, operands = split_operands(text)
    name = STRIP.sub("", mn)
    if fmt.startswith("vopd"):
        # "v_dual_X ... :: v_dual_Y ..."
        xtext, ytext = text.split(" :: ")
        name = split_operands(xtext if fmt == "vopdx" else ytext)[0]
        operands = split_operands(xtext if fmt == "vopdx" else ytext)[1]
        samples.append((b, text, cpu))
        key = name
        e = ops.setdefault(key, new_entry(name, "vopd", op))
        if fmt == "vopdy":
            e["vopd_y"] = op
        else:
            e["vopd_x"] = op
        if fmt == "vopdx" or e["dst"] == ["None", "None"]:
            e["dst"], e["src"] = vector_types("vopd", name.replace("v_dual_", "v_"), operands)
        return
    if fmt not in ("vop3", "global", "scratch", "flat") and name in ops:
        # An opcode value with other fields' bits set (gfx12's VINTERP
        # waits) decodes to an op already found at its own opcode.
        return
    samples.append((b, text, cpu))
    if fmt == "vop3" and name in ops:
        ops[name]["vop3"] = op
        return
    if fmt in ("global", "scratch", "flat") and name in ops:
        return
    f = fmt
    if fmt == "vop3" and name in VOP3SD:
        f = "vop3sd"
    if fmt in ("vimage", "vsample"):
        f = "mimg"
    if fmt == "vop3p" and name.startswith(MAI):
        f = "mai"  # VOP3P-MAI: matrix ops and AccVGPR moves
    e = new_entry(name, f, op)
    if fmt == "vsample":
        e["opcode"] = 256 + op
    if fmt in ("mimg", "vimage", "vsample", "exp", "vinterp", "ldsdir"):
        # Graphics formats: the decoder and disassembler know their operands
        # (their widths depend on dmask, dim and a16, not on the op alone).
        ops[name] = e
        return
    if fmt == "vop3":
        e["vop3"] = op
    if fmt == "sopk":
        # SOPK: the SGPR is a source for compares and s_setreg, else the dst.
        reg = "B64" if name == "s_call_b64" else "B32"
        if name.startswith(("s_cmpk", "s_setreg")):
            e["src"][0] = reg
        elif not name.startswith(("s_waitcnt_", "s_version", "s_subvector", "s_setkill")):
            e["dst"][0] = reg
    elif fmt.startswith(("sop", "smem")):
        e["dst"], e["src"] = scalar_types(fmt, name, operands)
        if fmt == "smem" and operands:
            e["dst"][0] = ty_of("b32", reg_width(operands[0]), False) if reg_width(operands[0]) else "None"
            e["src"] = ["B128" if "buffer" in name else "B64", "B32", "None"]
        if fmt == "smem" and "store" in name:
            # gfx9's scalar stores: sdata is the data (src2), nothing returns.
            e["src"][2], e["dst"][0] = e["dst"][0], "None"
        if fmt == "smem" and "atomic" in name:
            e["src"][2] = e["dst"][0]  # the data; returned with glc
        if name in ("s_memtime", "s_memrealtime"):
            e["src"] = ["None", "None", "None"]  # gfx10's counters: no base
        if fmt == "smem" and "prefetch" in name:
            # gfx12's prefetches: no sdata; that field holds the size.
            base = "None" if name.endswith("_pc_rel") else ("B128" if "buffer" in name else "B64")
            e["dst"], e["src"] = ["None", "None"], [base, "B32", "None"]
    elif f == "mai":
        e["dst"], e["src"] = mai_types(name, operands)
    elif fmt.startswith("v"):
        e["dst"], e["src"] = vector_types(fmt, name, operands)
    else:
        e["dst"], e["src"] = memory_types(fmt, name, operands)
    ops[name] = e


MAI_IN = re.compile(r"^v_s?mfmac?_[a-z0-9]+_\d+x\d+x\d+(?:_?([a-z]+\d+))?(?:_[a-z0-9]+)*$")


def mai_types(name, ops):
    """VOP3P-MAI: the accumulator D (dst) and C (src2), as wide as printed;
    A and B by the input type the name spells (`32x32x8f16`, gfx940's
    `32x32x8_f16`, `16x16x32_fp8_bf8`, `32x32x1_2b_f32`, `16x16x8_xf32`); an
    AccVGPR move one dword each way. SMFMAC's src2 is the sparsity index
    (its accumulator is vdst itself)."""
    w = [reg_width(o) or 1 for o in ops]
    if name.startswith("v_accvgpr"):
        return ["B32", "None"], ["B32", "None", "None"]
    shape = name.split("_")[3:]  # after v, mfma, the output type
    tok = "".join(shape)
    m = re.search(r"(xf32|bf16|f16|f32|f64|i8|fp8|bf8)", tok[tok.index("x") :] if "x" in tok else tok)
    kind = m.group(1) if m else "b32"
    def src_ty(width):
        if kind == "f64":
            return "F64"
        if width == 1:
            return {"f32": "F32", "f16": "V2F16", "bf16": "V2BF16"}.get(kind, "B32")
        return WIDTH_TY.get(width, "B32")
    acc = "F64" if kind == "f64" and w[0] == 2 else WIDTH_TY.get(w[0], "B32")
    if w[0] == 1:
        acc = "F32" if name.startswith("v_mfma_f32") else "B32"
    src2 = "B32" if name.startswith("v_smfmac") else acc
    return [acc, "None"], [src_ty(w[1]), src_ty(w[2]), src2]


def new_entry(name, fmt, op):
    return {"name": name, "format": fmt, "opcode": op, "vop3": None, "vopd_x": None,
            "vopd_y": None, "dst": ["None", "None"], "src": ["None", "None", "None"]}


def memory_types(fmt, name, operands):
    """DS/FLAT/MUBUF: dst = returned data, src[1]/src[2] = data operands."""
    dst, src = ["None", "None"], ["None", "None", "None"]
    w = [reg_width(o) for o in operands]
    wty = lambda n: "B32" if not n or n == 1 else WIDTH_TY.get(n, "B32")
    returns = not ("store" in name or name.startswith(("ds_write", "buffer_gl", "ds_nop",
                                                        "ds_add_u32", "ds_gws", "ds_barrier")))
    if fmt == "ds":
        # Layout printed: [vdst,] addr, [data0, [data1]]
        has_rtn = "_rtn" in name or "load" in name or "read" in name or name in (
            "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32", "ds_consume", "ds_append",
            "ds_ordered_count", "ds_bvh_stack_rtn_b32")
        i = 0
        if has_rtn and operands:
            dst[0] = wty(w[0])
            i = 1
        rest = w[i:]
        if rest:
            src[0] = "B32"
        for k, x in enumerate(rest[1:3]):
            src[1 + k] = wty(x)
        if name in ("ds_store_addtid_b32", "ds_write_addtid_b32"):
            src = ["None", "B32", "None"]  # data0 only: the address is M0 + lane id
        if name in ("ds_gws_sema_v", "ds_gws_sema_p", "ds_gws_sema_release_all"):
            src = ["None", "None", "None"]  # no VGPR: the resource is M0 + offset
        if name.endswith("_gs_reg_rtn"):
            src = ["None", "B32", "None"]  # data0 only: the register is the offset
        return dst, src
    # FLAT/GLOBAL/SCRATCH/MUBUF/MTBUF
    if not operands:
        return dst, src
    if "store" in name:
        src[1] = wty(w[1] if len(w) > 1 else 1)
        src[0] = wty(w[0])
    elif "atomic" in name:
        # atomics print vdst only with glc; our template has glc clear.
        src[0] = wty(w[0])
        src[1] = wty(w[1] if len(w) > 1 else 1)
        dst[0] = wty(w[1] if len(w) > 1 else 1)
        if "cmpswap" in name:
            dst[0] = wty((w[1] or 2) // 2)
    else:
        dst[0] = wty(w[0])
        src[0] = wty(w[1] if len(w) > 1 else 1)
    if fmt in ("mubuf", "mtbuf"):
        # vaddr is v2 here: one dword; vdata (printed first) is the wide one.
        data = wty(w[0])
        if dst[0] != "None":
            dst[0] = wty((w[0] or 2) // 2) if "cmpswap" in name else data
        if "store" in name or "atomic" in name:
            src[1] = data
        src[0] = "B32"
        src[2] = "B128"
    if fmt == "global" or fmt == "flat":
        src[0] = "B64"
        src[2] = "B64"
    if fmt == "scratch":
        src[0] = "B32"
        src[2] = "B32"
    # Operands some ops lack (llvm prints none for them).
    if "_addtid" in name:  # gfx11's global_load_addtid_b32, gfx10's ..._dword_addtid
        src[0] = "None"  # no address VGPR: the address is from the lane id
        if "store" in name:
            src[1] = "B32"
    if name.startswith("buffer_load_lds_"):
        dst[0] = "None"  # the data goes to LDS at M0
    if name == "buffer_store_lds_dword":
        src[0] = src[1] = "None"  # gfx9: no vaddr or vdata, the data is LDS's at M0
    return dst, src


FMT_NAME = {"sop1": "Sop1", "sop2": "Sop2", "sopk": "Sopk", "sopc": "Sopc", "sopp": "Sopp",
            "smem": "Smem", "vop1": "Vop1", "vop2": "Vop2", "vopc": "Vopc", "vop3": "Vop3",
            "vop3sd": "Vop3sd", "vop3p": "Vop3p", "vopd": "Vopd", "ds": "Ds", "flat": "Flat",
            "global": "Global", "scratch": "Scratch", "mubuf": "Mubuf", "mtbuf": "Mtbuf",
            "mimg": "Mimg", "exp": "Exp", "vinterp": "Vinterp", "ldsdir": "LdsDirect",
            "mai": "Mai"}


def write(family, ops, samples):
    n = lambda x: "-" if x is None else str(x)
    with open(os.path.join(DATA, family + "-ops.tsv"), "w") as f:
        f.write("# name\tformat\topcode\tvop3\tvopd_x\tvopd_y\tdst0\tdst1\tsrc0\tsrc1\tsrc2\n")
        f.write("# Generated by tools/gen-ops.py from llvm-mc-19 --disassemble. Do not edit.\n")
        for e in ops.values():
            f.write("\t".join([e["name"], FMT_NAME[e["format"]], str(e["opcode"]), n(e["vop3"]),
                               n(e["vopd_x"]), n(e["vopd_y"])] + e["dst"] + e["src"]) + "\n")
    with open(os.path.join(DATA, family + "-samples.tsv"), "w") as f:
        f.write("# bytes\tcpu\tllvm-mc-19 text (generated by tools/gen-ops.py)\n")
        for b, t, cpu in samples:
            f.write("%s\t%s\t%s\n" % ("".join("%02x" % x for x in b), cpu, t))
    print("%d ops, %d samples" % (len(ops), len(samples)), file=sys.stderr)


if __name__ == "__main__":
    main()
