//! CDNA's memory words (gfx90a, gfx94): DS, FLAT/GLOBAL/SCRATCH, MUBUF,
//! MTBUF and MIMG in GCN's field positions. Each has an `acc` bit that
//! makes its data and returned data AccVGPRs (`Vgpr(AGPR_BASE + n)`);
//! addresses stay VGPRs. The cache bits land in `flags`: GLC (gfx940's
//! sc0), SLC (nt) and SC1 (gfx90a's scc). Scalar codes are turned into
//! gfx11's numbering as gfx10's are (code 124 is m0; LLVM names 125 null).
//! What llvm-mc-19 refuses is refused here.

use super::gfx10::swap_m0_null;
use super::{bit, bits, blank, returned_data, sext, sreg_operand, Reader, Result};
use crate::{flags, image, mimg, DecodeError, Family, Format, Inst, Op, Operand, Ty, AGPR_BASE};

fn invalid(word: u32, why: &'static str) -> DecodeError {
    DecodeError::Invalid { word, why }
}

/// Register `n` of a data operand: an AccVGPR when the word's acc bit is set.
fn data_reg(n: u32, acc: bool) -> Operand {
    Operand::Vgpr(n as u16 + if acc { AGPR_BASE } else { 0 })
}

/// The loads that may write LDS instead of VGPRs (the `lds` bit): gfx90a's
/// byte, short and dword loads (MUBUF also `buffer_load_format_x`).
fn lds_capable(name: &str) -> bool {
    let rest = name.split_once("_load_").map_or("", |(_, r)| r);
    matches!(rest, "ubyte" | "sbyte" | "ushort" | "sshort" | "dword")
        || name == "buffer_load_format_x"
        || name == "buffer_store_lds_dword"
}

impl Reader<'_> {
    /// A DS word: offset0 0-7, offset1 8-15, gds 16, op 17-24, acc 25;
    /// addr, data0, data1 and vdst in the second. LLVM refuses a register
    /// field the op does not use unless it is zero, and prints gds only on
    /// the GWS ops (which need it); elsewhere the bit is ignored.
    pub(super) fn ds9(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Ds, bits(w, 17, 8), w)?);
        let info = i.op.info();
        let acc = bit(w, 25);
        i.imm = bits(w, 0, 16) as i32;
        let gws = i.op.name().starts_with("ds_gws_");
        if gws && !bit(w, 16) {
            return Err(invalid(w, "CDNA GWS op without gds"));
        }
        if gws {
            i.flags |= flags::GDS;
        }
        // ds_permute/ds_bpermute (no LDS access) refuse the bit, and
        // select among all 64 lanes.
        if matches!(i.op, Op::DS_PERMUTE_B32 | Op::DS_BPERMUTE_B32) {
            if bit(w, 16) {
                return Err(invalid(w, "CDNA ds_(b)permute with gds"));
            }
            i.flags |= flags::GCN_CROSS_LANE;
        }
        let field = |lo| bits(w1, lo, 8);
        let slots = [
            (info.dst[0], 24),
            (info.src[0], 0),
            (info.src[1], 8),
            (info.src[2], 16),
        ];
        if slots
            .iter()
            .any(|&(ty, lo)| ty == Ty::None && field(lo) != 0)
        {
            return Err(invalid(w, "CDNA DS register field the op does not use"));
        }
        // acc names the data registers: refused on an op without any.
        let data =
            info.dst[0] != Ty::None || info.src[1] != Ty::None || gws && info.src[0] != Ty::None;
        if acc && !data {
            return Err(invalid(w, "CDNA DS acc on an op without data"));
        }
        if info.dst[0] != Ty::None {
            i.dst[0] = data_reg(field(24), acc);
        }
        // The GWS ops' one operand is data (an AccVGPR with acc) in the
        // address field.
        if info.src[0] != Ty::None {
            i.src[0] = data_reg(field(0), acc && gws);
        }
        for (k, lo) in [(1, 8), (2, 16)] {
            if info.src[k] != Ty::None {
                i.src[k] = data_reg(field(lo), acc);
            }
        }
        in_range(w, &i, 1)?;
        Ok(i)
    }

    /// A FLAT, GLOBAL or SCRATCH word: a 13-bit offset (unsigned for
    /// FLAT), bit 13 (gfx90a: lds; gfx940: scratch's SVE), seg 14-15, glc
    /// 16, slc 17, op 18-24, sc1 25; addr, data, saddr (0x7F: off), acc
    /// and vdst in the second.
    pub(super) fn flat9(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let fmt = super::flat_segment(bits(w, 14, 2), w)?;
        let mut i = blank(self.lookup(fmt, bits(w, 18, 7), w)?);
        let name = i.op.name();
        let gfx94 = self.family == Family::Gfx94;
        i.imm = if fmt == Format::Flat {
            bits(w, 0, 13) as i32
        } else {
            sext(bits(w, 0, 13), 13)
        };
        i.flags |= cache_bits(w, 16, 17, 25);
        let acc = bit(w1, 23);
        let saddr = bits(w1, 16, 7);
        let b13 = bit(w, 13);
        // gfx90a's lds form of a global/scratch load: no VGPR is written.
        let lds = !gfx94 && b13;
        if lds && (fmt == Format::Flat || !lds_capable(name) || acc) {
            return Err(invalid(w, "CDNA FLAT lds on an op without it"));
        }
        if gfx94 && b13 && fmt != Format::Scratch {
            return Err(invalid(w, "gfx940 FLAT bit 13 outside scratch"));
        }
        // The FLAT segment has no SGPR address: the field must be 0.
        if fmt == Format::Flat && saddr != 0 {
            return Err(invalid(w, "CDNA FLAT with saddr"));
        }
        if fmt == Format::Global && saddr == 124 {
            return Err(invalid(w, "CDNA global saddr m0"));
        }
        let has_saddr = fmt != Format::Flat && saddr != 0x7F;
        let has_vaddr = match fmt {
            // gfx940: SVE says; gfx90a: a scratch address is a VGPR or an SGPR.
            Format::Scratch if gfx94 => b13,
            Format::Scratch => !has_saddr,
            _ => true,
        };
        if fmt == Format::Scratch && has_vaddr {
            i.flags |= flags::SVE;
        }
        if lds {
            i.flags |= flags::LDS;
        }
        let info = i.op.info();
        // gfx940's `*_load_lds_*` ops: addresses only.
        let lds_op = name.contains("_load_lds_");
        if lds_op && acc {
            return Err(invalid(w, "gfx940 load_lds with acc"));
        }
        if has_vaddr && info.src[0] != Ty::None {
            i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
        }
        if info.src[1] != Ty::None && !lds_op {
            i.src[1] = data_reg(bits(w1, 8, 8), acc);
        }
        if has_saddr {
            i.src[2] = sreg_operand(if fmt == Format::Global {
                sgpr_pair(saddr).ok_or(invalid(w, "CDNA global saddr odd special pair"))?
            } else {
                saddr
            });
        }
        if !lds && !lds_op {
            returned_data(&mut i, data_reg(bits(w1, 24, 8), acc));
        }
        scc_float_atomic(self.family, w, &i)?;
        let vaddr_dwords = if fmt == Format::Scratch || has_saddr {
            1
        } else {
            2
        };
        in_range(w, &i, vaddr_dwords)?;
        swap_m0_null(&mut i);
        Ok(i)
    }

    /// A MUBUF word: offset 0-11, offen 12, idxen 13, glc 14, scc/sc1 15,
    /// lds 16, slc 17, op 18-24; vaddr, vdata, srsrc/4 (16-20), acc 23 and
    /// soffset 24-31 in the second.
    pub(super) fn mubuf9(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::Mubuf, bits(w, 18, 7), w)?);
        i.flags |= cache_bits(w, 14, 17, 15);
        if bit(w, 16) {
            let acc = bit(self.word(4)?, 23);
            if !lds_capable(i.op.name()) || acc {
                return Err(invalid(w, "CDNA MUBUF lds on an op without it"));
            }
            i.flags |= flags::LDS;
        } else if i.op.name() == "buffer_store_lds_dword" {
            // LDS to memory: the op exists only in the lds form.
            return Err(invalid(w, "CDNA buffer_store_lds_dword without lds"));
        }
        if i.op.info().src[0] == Ty::None && bits(w, 12, 2) != 0 {
            // buffer_store_lds_dword has no vaddr to offset or index by.
            return Err(invalid(w, "CDNA MUBUF offen/idxen on an op without vaddr"));
        }
        if i.op.info().src[2] == Ty::None {
            cache_op(self.family, w, self.word(4)?, &mut i)?;
        }
        self.buffer9(w, i)
    }

    /// An MTBUF word: op 15-18, dfmt 19-22 and nfmt 23-25 (`aux` dfmt |
    /// nfmt << 4); glc at 14 as MUBUF's, but scc/sc1 (21) and slc (22) in
    /// the second word.
    pub(super) fn mtbuf9(&mut self, w: u32) -> Result<Inst> {
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Mtbuf, bits(w, 15, 4), w)?);
        i.aux = bits(w, 19, 7);
        i.flags |= cache_bits(w, 14, 32, 32) | cache_bits(w1, 32, 22, 21);
        self.buffer9(w, i)
    }

    /// What MUBUF and MTBUF share: offset, offen, idxen and the registers.
    fn buffer9(&mut self, w: u32, mut i: Inst) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let info = i.op.info();
        let acc = bit(w1, 23);
        i.imm = bits(w, 0, 12) as i32;
        for (b, f) in [(12, flags::OFFEN), (13, flags::IDXEN)] {
            if bit(w, b) {
                i.flags |= f;
            }
        }
        if i.flags & (flags::OFFEN | flags::IDXEN) != 0 {
            i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
        }
        let vdata = data_reg(bits(w1, 8, 8), acc);
        if info.src[1] != Ty::None {
            i.src[1] = vdata;
        }
        // With lds the loaded data goes to LDS at M0, not to vdata.
        if i.flags & flags::LDS == 0 {
            returned_data(&mut i, vdata);
        }
        if info.src[2] != Ty::None {
            i.src[2] = resource(w, bits(w1, 16, 5))?;
            // soffset: any scalar source but a literal (none follows) and
            // src_lds_direct.
            let soff = bits(w1, 24, 8);
            if soff == 255 || soff == 254 {
                return Err(invalid(w, "CDNA buffer soffset literal or lds_direct"));
            }
            i.src[3] = self.operand(soff, Ty::B32, false)?;
        }
        scc_float_atomic(self.family, w, &i)?;
        let both = i.flags & flags::OFFEN != 0 && i.flags & flags::IDXEN != 0;
        in_range(w, &i, 1 + both as u8)?;
        swap_m0_null(&mut i);
        Ok(i)
    }

    /// A MIMG word (gfx90a; gfx94 has no images): scc 7, dmask 8-11,
    /// unorm 12, glc 13, da 14, a16 15, acc 16, lwe 17, op 18-24, slc 25;
    /// vaddr, vdata, srsrc/4 (16-20), ssamp/4 (21-25) and d16 (31) in the
    /// second. One address register is named (LLVM's gfx9 decoder does not
    /// widen it); the data width follows dmask and d16 ([`mimg`]).
    pub(super) fn mimg9(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Mimg, bits(w, 18, 7), w)?);
        let name = i.op.name();
        let sampler = mimg::has_sampler(name);
        if bit(w, 0) {
            return Err(invalid(w, "CDNA MIMG bit 0"));
        }
        if !sampler && bits(w1, 21, 5) != 0 {
            return Err(invalid(w, "CDNA MIMG ssamp on an op without a sampler"));
        }
        // The atomics, the packed loads/stores and get_resinfo have no d16.
        let no_d16 = name.starts_with("image_atomic")
            || name.contains("_pck")
            || name == "image_get_resinfo";
        if bit(w1, 31) && no_d16 {
            return Err(invalid(w, "CDNA MIMG d16 on an op without it"));
        }
        mimg::place_data(&mut i, data_reg(bits(w1, 8, 8), bit(w, 16)));
        i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
        // The resource's 8 SGPRs end by s103 or ttmp15; the sampler's 4
        // are a buffer resource's quads.
        i.src[1] = match bits(w1, 16, 5) {
            q @ (0..=24 | 27..=29) => sreg_operand(q * 4),
            _ => return Err(invalid(w, "CDNA MIMG resource past s103/ttmp15 or m0")),
        };
        if sampler {
            i.src[2] = resource(w, bits(w1, 21, 5))?;
        }
        let field = |on: bool, f: u32| if on { f } else { 0 };
        i.aux = bits(w, 8, 4)
            | field(bit(w, 12), image::UNORM)
            | field(bit(w, 14), image::DA)
            | field(bit(w, 15), image::A16)
            | field(bit(w, 17), image::LWE)
            | field(bit(w1, 31), image::D16);
        i.flags |= cache_bits(w, 13, 25, 7);
        swap_m0_null(&mut i);
        Ok(i)
    }
}

/// gfx90a refuses scc on its float atomics (`*_atomic_add_f32`,
/// `*_pk_add_f16`, the f64 ones).
fn scc_float_atomic(family: Family, w: u32, i: &Inst) -> Result<()> {
    let name = i.op.name();
    let float = ["_f16", "_f32", "_f64"].iter().any(|t| name.ends_with(t));
    if family == Family::Gfx90a && i.flags & flags::SC1 != 0 && name.contains("_atomic_") && float {
        return Err(invalid(w, "gfx90a float atomic with scc"));
    }
    Ok(())
}

/// A 64-bit SGPR address (global saddr): an SGPR or ttmp pair starts
/// even (LLVM drops the low bit); the odd codes among the special pairs
/// (flat_scratch, xnack_mask, vcc) are refused.
fn sgpr_pair(code: u32) -> Option<u32> {
    match code {
        102..=107 if code % 2 == 1 => None,
        0..=101 | 108..=123 => Some(code & !1),
        _ => Some(code),
    }
}

/// A 4-SGPR operand from its quad field `q` (a buffer resource, an
/// image sampler): s0-s103 or the ttmps; LLVM refuses the quads at s104
/// and m0.
fn resource(w: u32, q: u32) -> Result<Operand> {
    match q {
        26 | 31 => Err(invalid(w, "CDNA buffer resource at s104 or m0")),
        q => Ok(sreg_operand(q * 4)),
    }
}

/// LLVM refuses a register range that runs past v255 (a255): every
/// vector operand of `i` by its type, the address as `vaddr` dwords.
fn in_range(w: u32, i: &Inst, vaddr: u8) -> Result<()> {
    let info = i.op.info();
    let ops = [
        (i.dst[0], info.dst[0].dwords()),
        (i.src[0], vaddr),
        (i.src[1], info.src[1].dwords()),
        (i.src[2], info.src[2].dwords()),
    ];
    for (op, n) in ops {
        if let Operand::Vgpr(r) = op {
            if (r % AGPR_BASE) as u32 + n as u32 > 256 {
                return Err(invalid(w, "CDNA register range past 255"));
            }
        }
    }
    Ok(())
}

/// The cache-control MUBUF ops (`buffer_wbl2`, `buffer_inv(l2)`,
/// `buffer_wbinvl1(_vol)`): LLVM refuses acc, lds, offen and idxen on
/// them, ignores slc, and takes glc/sc1 only on `buffer_wbl2` (gfx940
/// prints them, as on `buffer_inv`; gfx90a drops them).
fn cache_op(family: Family, w: u32, w1: u32, i: &mut Inst) -> Result<()> {
    if bit(w1, 23) || bits(w, 12, 2) != 0 || i.flags & flags::LDS != 0 {
        return Err(invalid(w, "CDNA cache-control MUBUF with operand bits"));
    }
    let name = i.op.name();
    let keeps = name == "buffer_wbl2" || (family == Family::Gfx94 && name == "buffer_inv");
    let cache = i.flags & (flags::GLC | flags::SC1);
    if cache != 0 && !keeps {
        return Err(invalid(w, "CDNA cache-control MUBUF with glc/sc1"));
    }
    i.flags &= !(flags::GLC | flags::SLC | flags::SC1);
    if family == Family::Gfx94 {
        i.flags |= cache;
    }
    Ok(())
}

/// GLC, SLC and SC1 from bits `glc`, `slc` and `sc1` of `w` (32: absent).
fn cache_bits(w: u32, glc: u32, slc: u32, sc1: u32) -> u16 {
    let on = |b: u32, f: u16| if b < 32 && bit(w, b) { f } else { 0 };
    on(glc, flags::GLC) | on(slc, flags::SLC) | on(sc1, flags::SC1)
}
