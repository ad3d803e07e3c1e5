//! CDNA's (gfx90a, gfx94) vector-memory text, as llvm-objdump-19 prints
//! it: gfx9's scalar names (flat_scratch, xnack_mask), the cache bits as
//! each family spells them, MTBUF's split dfmt/nfmt, gfx90a's `lds` forms.
//! DS and MIMG go through the shared printers (`mimg.rs` knows gfx9).

use super::{encoding, join, operand};
use crate::{flags, Family, Format, Inst, Ty};

/// The text of a gfx90a/gfx94 FLAT/GLOBAL/SCRATCH, MUBUF or MTBUF
/// instruction; `None` for other families and formats.
pub(super) fn text(inst: &Inst) -> Option<String> {
    if !inst.family.is_gcn() {
        return None;
    }
    let operands = match encoding(inst).format {
        Format::Flat | Format::Global | Format::Scratch => flat(inst),
        Format::Mubuf | Format::Mtbuf => buffer(inst),
        _ => return None,
    };
    let name = inst.op.name();
    Some(if operands.is_empty() {
        name.to_string()
    } else {
        format!("{name} {operands}")
    })
}

/// The cache bits: gfx90a's ` glc slc scc`, gfx940's ` sc0 nt sc1`.
pub(crate) fn cache_text(inst: &Inst) -> String {
    let names = match inst.family {
        Family::Gfx94 => [" sc0", " nt", " sc1"],
        _ => [" glc", " slc", " scc"],
    };
    [flags::GLC, flags::SLC, flags::SC1]
        .iter()
        .zip(names)
        .filter(|(f, _)| inst.flags & **f != 0)
        .map(|(_, n)| n)
        .collect()
}

/// The tail every vector-memory word ends with: offset, cache bits, lds.
fn tail(inst: &Inst) -> String {
    let mut s = String::new();
    if inst.imm != 0 {
        s.push_str(&format!(" offset:{}", inst.imm));
    }
    // `lds` is part of buffer_store_lds_dword's syntax, so LLVM prints it
    // before the cache bits; a load's lds form prints it after them.
    let lds = if inst.flags & flags::LDS != 0 {
        " lds"
    } else {
        ""
    };
    if inst.op.name() == "buffer_store_lds_dword" {
        return s + lds + &cache_text(inst);
    }
    s + &cache_text(inst) + lds
}

/// `vdst, vaddr|off, vdata, saddr|off` (the shared FLAT operands; the
/// decoder leaves out what the word has not: gfx90a's lds forms and
/// gfx940's `*_load_lds_*` write no VGPR, the FLAT segment has no saddr).
fn flat(inst: &Inst) -> String {
    join(super::flat_operands(inst, inst.op.info().dst[0])) + &tail(inst)
}

/// `vdata, vaddr|off, srsrc, soffset [format:[…]] [idxen] [offen] …`.
fn buffer(inst: &Inst) -> String {
    let info = inst.op.info();
    if info.src[2] == Ty::None {
        // buffer_wbl2, buffer_inv, buffer_wbinvl1…: gfx940's sc0/sc1.
        return cache_text(inst).trim_start().to_string();
    }
    // With lds the data goes to or from LDS: no VGPR to print.
    let (data, data_ty) = super::buffer_data(inst);
    let data_text = if inst.flags & flags::LDS != 0 {
        String::new()
    } else {
        operand(data, data_ty)
    };
    let vaddr = super::buffer_vaddr(inst);
    let mut s = join(vec![
        data_text,
        vaddr,
        operand(inst.src[2], Ty::B128),
        operand(inst.src[3], Ty::B32),
    ]);
    if encoding(inst).format == Format::Mtbuf {
        s.push_str(&buf_format(inst.aux));
    }
    for (bit, name) in [(flags::IDXEN, " idxen"), (flags::OFFEN, " offen")] {
        if inst.flags & bit != 0 {
            s.push_str(name);
        }
    }
    s + &tail(inst)
}

/// MTBUF's ` format:[BUF_DATA_FORMAT_…,BUF_NUM_FORMAT_…]` from `aux` (dfmt
/// | nfmt << 4); each part left out at its default (dfmt 1, nfmt 0).
fn buf_format(aux: u32) -> String {
    use crate::resource::{GCN_DATA_FORMATS, GCN_NUM_FORMATS};
    let (dfmt, nfmt) = ((aux & 15) as usize, (aux >> 4 & 7) as usize);
    // The tables leave INVALID, the reserved values and 15 unnamed; LLVM
    // prints them as these.
    let data = match GCN_DATA_FORMATS.get(dfmt) {
        Some(&"") => "INVALID".to_string(),
        Some(name) => name.to_string(),
        None => format!("RESERVED_{dfmt}"),
    };
    let num = match GCN_NUM_FORMATS[nfmt] {
        "" => format!("RESERVED_{nfmt}"),
        name => name.to_string(),
    };
    let mut parts = Vec::new();
    if dfmt != 1 {
        parts.push(format!("BUF_DATA_FORMAT_{data}"));
    }
    if nfmt != 0 {
        parts.push(format!("BUF_NUM_FORMAT_{num}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" format:[{}]", parts.join(","))
    }
}
