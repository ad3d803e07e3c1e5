//! Image (MIMG) instructions: how many data and address registers one
//! names, and its text as llvm-objdump-19 prints it.
//!
//! The register counts are not in the encoding: the data width follows
//! dmask, d16 and tfe; the address width follows the op (its coordinates,
//! extra arguments, gradients, lod/clamp/mip), the dimension and a16. The
//! rules are LLVM's (checked opcode by opcode against llvm-mc-19 in
//! `tests/completeness.rs`), including what LLVM prints when a combination
//! has no instruction variant: the variant its decoder found first.

use crate::inst::{flags, image, Inst, Operand};
use crate::Family;

/// How many address operands an instruction's word names: gfx11's NSA
/// form five; gfx12's VIMAGE five and VSAMPLE (the sampler ops) four. The
/// last covers all remaining addresses (partial NSA).
fn fields(s: &Shape, i: &Inst) -> u32 {
    if i.family == Family::Gfx12 && s.sampler {
        4
    } else if i.family == Family::Gfx10 {
        // gfx10: vaddr0 and four per extra dword (the word's length says
        // how many), none partial.
        1 + 4 * (i.size as u32).saturating_sub(8) / 4
    } else {
        5
    }
}

/// What an image op's name says about its operands.
#[derive(Clone, Copy, Debug, Default)]
struct Shape {
    sampler: bool,
    /// gather4 and msaa_load always return four components.
    four: bool,
    store: bool,
    atomic: bool,
    cmpswap: bool,
    /// Ray intersection: fixed operands; `bvh64` has a 64-bit node pointer.
    bvh: bool,
    bvh64: bool,
    coords: bool,
    /// Offset, bias and depth-compare arguments (a dword each).
    extra: u32,
    gradients: bool,
    g16: bool,
    /// A lod, clamp or mip level component.
    lod: bool,
}

fn shape(name: &str) -> Shape {
    let rest = name.strip_prefix("image_").unwrap_or(name);
    if rest.starts_with("bvh") {
        return Shape {
            bvh: true,
            bvh64: rest.starts_with("bvh64"),
            ..Shape::default()
        };
    }
    let mut s = Shape {
        coords: rest != "get_resinfo",
        lod: rest == "get_resinfo" || rest.contains("_mip"),
        store: rest.starts_with("store"),
        atomic: rest.starts_with("atomic"),
        cmpswap: rest.contains("cmpswap"),
        four: rest.starts_with("gather4") || rest == "msaa_load",
        sampler: ["sample", "gather4", "get_lod"]
            .iter()
            .any(|p| rest.starts_with(p)),
        ..Shape::default()
    };
    if s.sampler {
        // The suffixes after the base name: sample_c_d_cl_o_g16 …
        for part in rest.split('_').skip(1) {
            match part {
                "c" | "o" | "b" => s.extra += 1,
                "d" | "cd" => s.gradients = true,
                "g16" => s.g16 = true,
                "l" | "cl" => s.lod = true,
                _ => {}
            }
        }
    }
    s
}

/// (coordinates, gradients) of each dim encoding: 1D, 2D, 3D, cube,
/// 1D array, 2D array, 2D MSAA, 2D MSAA array.
const DIMS: [(u32, u32); 8] = [
    (1, 2),
    (2, 4),
    (3, 6),
    (3, 4),
    (2, 2),
    (3, 4),
    (3, 4),
    (4, 4),
];

const DIM_NAMES: [&str; 8] = [
    "1D",
    "2D",
    "3D",
    "CUBE",
    "1D_ARRAY",
    "2D_ARRAY",
    "2D_MSAA",
    "2D_MSAA_ARRAY",
];

/// Address dwords of an op for a dim and a16 (LLVM's rule: a16 packs the
/// coordinates and lod, only the _g16 ops pack gradients).
fn addr_dwords(s: &Shape, dim: usize, a16: bool) -> u32 {
    if s.bvh {
        return match (s.bvh64, a16) {
            (false, false) => 11,
            (false, true) => 8,
            (true, false) => 12,
            (true, true) => 9,
        };
    }
    let (coords, grads) = DIMS[dim];
    let comps = if s.coords { coords } else { 0 } + s.lod as u32;
    let mut n = s.extra + if a16 { comps.div_ceil(2) } else { comps };
    if s.gradients {
        n += if s.g16 {
            (grads / 2).next_multiple_of(2)
        } else {
            grads
        };
    }
    n
}

/// The address sizes LLVM defines instruction variants for: 1-4 dwords for
/// the ops without a sampler; for a sampler op 1-3 (with gradients 2-9, or
/// 2-7 for _g16), one more with lod/clamp, shifted by its extra arguments.
fn sizes(s: &Shape) -> std::ops::RangeInclusive<u32> {
    if !s.sampler {
        return 1..=4;
    }
    let (lo, hi) = match (s.gradients, s.g16) {
        (false, _) => (1, 3),
        (true, false) => (2, 9),
        (true, true) => (2, 7),
    };
    (lo + s.extra)..=(hi + s.lod as u32 + s.extra)
}

/// Whether a sequential address of `n` dwords has a variant. Register
/// classes cover 1-7 and 9-12 dwords exactly; LLVM also makes a 4-dword
/// variant when 3 is needed and an 8-dword one when any of 5-8 is.
fn seq_exists(s: &Shape, n: u32) -> bool {
    let r = sizes(s);
    let any = |lo: u32, hi: u32| (lo..=hi).any(|k| r.contains(&k));
    r.contains(&n) || (n == 4 && any(3, 4)) || (n == 8 && any(5, 8)) || (n == 16 && any(13, 16))
}

/// The variants LLVM's decoder finds first: the narrowest sequential
/// address and the widest NSA one (of at most five operands).
fn seq_default(s: &Shape) -> u32 {
    *sizes(s).start()
}

fn nsa_default(s: &Shape, fields: u32) -> u32 {
    (*sizes(s).end()).min(fields)
}

/// Whether LLVM's decoder finds a gfx12 VIMAGE word's one-address
/// variant: the variants' unused address fields are zero, so it does when
/// all fields past vaddr0 are. That variant is no address list, so an op
/// needing more addresses prints as found (VSAMPLE's are widened as usual).
fn single12(s: &Shape, i: &Inst) -> bool {
    !s.sampler && (1..fields(s, i)).all(|k| addr_byte(i, k) == 0)
}

/// Address field `k` (0: vaddr0) of an NSA word.
fn addr_byte(i: &Inst, k: u32) -> u32 {
    match k {
        0 => vgpr(i.src[0]),
        1..=4 => i.imm as u32 >> (8 * (k - 1)) & 0xff,
        _ => i.nsa_ext.get(k as usize - 5).copied().unwrap_or(0) as u32,
    }
}

/// Data dwords from dmask, d16 (packed halves) and tfe.
fn data_dwords(s: &Shape, i: &Inst) -> u32 {
    let dmask = i.aux & image::DMASK;
    let mut n = if s.four { 4 } else { dmask.count_ones().max(1) };
    if i.aux & image::D16 != 0 {
        n = n.div_ceil(2);
    }
    n + (i.flags & flags::TFE != 0) as u32
}

/// The registers LLVM prints: data and address width, if LLVM has an
/// instruction variant for them (else it shows the variant its decoder
/// found first, see [`text`]).
struct Regs {
    data: u32,
    addr: u32,
}

fn regs(s: &Shape, i: &Inst) -> Option<Regs> {
    let dim = ((i.aux & image::DIM) >> image::DIM_SHIFT) as usize;
    let nsa = i.aux & image::NSA != 0;
    let mut addr = addr_dwords(s, dim, i.aux & image::A16 != 0);
    if !nsa && addr > 12 {
        addr = 16;
    }
    // One address never uses gfx11's NSA form; gfx12 has no other.
    let least = if i.family == Family::Gfx12 { 1 } else { 2 };
    // gfx10's NSA word names each address (vaddr0 and the extra dword's
    // four): no partial NSA, so more addresses have no variant.
    if nsa && i.family == Family::Gfx10 && addr > fields(s, i) {
        return None;
    }
    let exists = if nsa {
        addr >= least && sizes(s).contains(&addr)
    } else {
        seq_exists(s, addr)
    };
    if !s.bvh && !exists {
        return None;
    }
    if i.family == Family::Gfx12 && !s.bvh && addr > 1 && single12(s, i) {
        return None;
    }
    let data = data_dwords(s, i);
    // Atomics have variants for these data widths only (LLVM gives the
    // 4-dword form of a plain atomic a 5-register class).
    let data = match (s.atomic, s.cmpswap, data) {
        // gather4: four components, two with d16, plus tfe's.
        _ if s.four && s.sampler && data == 3 => return None,
        (false, ..) => data,
        (true, false, 1 | 2) | (true, true, 2 | 4) => data,
        (true, false, 4) => 5,
        _ => return None,
    };
    // A range past v255 has no register class either.
    let vdata = vgpr(i.dst[0]).max(vgpr(i.src[3]));
    let last = fields(s, i) - 1;
    let last_addr = if nsa {
        addr_byte(i, last)
    } else {
        vgpr(i.src[0])
    };
    let addr_tail = if nsa { addr.saturating_sub(last) } else { addr };
    if vdata + data > 256 || last_addr + addr_tail > 256 {
        return None;
    }
    Some(Regs { data, addr })
}

fn vgpr(op: Operand) -> u32 {
    match op {
        Operand::Vgpr(r) => r as u32,
        _ => 0,
    }
}

fn vrange(first: u32, n: u32) -> String {
    if n <= 1 {
        format!("v{first}")
    } else {
        format!("v[{first}:{}]", first + n - 1)
    }
}

fn srange(first: u8, n: u32) -> String {
    format!("s[{first}:{}]", first as u32 + n - 1)
}

/// The NSA address list: one register per address, the fifth covering all
/// that remain (partial NSA); a ray query groups its vectors.
fn nsa_list(s: &Shape, i: &Inst, addr: u32) -> String {
    let bytes = (0..).map(|k| addr_byte(i, k));
    let widths: Vec<u32> = if i.family == Family::Gfx10 {
        vec![1; addr as usize] // one register per address, ray queries too
    } else if s.bvh {
        let node = 1 + s.bvh64 as u32;
        if i.aux & image::A16 != 0 {
            vec![node, 1, 3, 3]
        } else {
            vec![node, 1, 3, 3, 3]
        }
    } else if addr <= fields(s, i) {
        vec![1; addr as usize]
    } else {
        let last = fields(s, i) - 1;
        let mut w = vec![1; last as usize];
        w.push(addr - last);
        w
    };
    if widths.len() == 1 {
        return vrange(addr_byte(i, 0), widths[0]); // gfx12's single address
    }
    let list: Vec<String> = widths
        .iter()
        .zip(bytes)
        .map(|(&n, first)| vrange(first, n))
        .collect();
    format!("[{}]", list.join(", "))
}

/// The operand text of an image instruction named `name`.
pub(crate) fn text(name: &str, i: &Inst) -> String {
    if i.family == Family::Gfx90a {
        return text9(name, i);
    }
    let mut s = shape(name);
    // gfx10's msaa_load returns the dmask's components.
    if i.family == Family::Gfx10 && name == "image_msaa_load" {
        s.four = false;
    }
    let nsa = i.aux & image::NSA != 0;
    let vdata = vgpr(i.dst[0]).max(vgpr(i.src[3]));
    let (data, vaddr) = match regs(&s, i) {
        Some(r) if nsa => (r.data, nsa_list(&s, i, r.addr)),
        Some(r) => (r.data, vrange(vgpr(i.src[0]), r.addr)),
        None => {
            let data = if s.bvh || s.four {
                4
            } else {
                1 + s.cmpswap as u32
            };
            // The widest NSA variant, the narrowest sequential one; gfx12's
            // one-address variant when its decoder found that.
            let addr = if i.family == Family::Gfx12 && !s.bvh && single12(&s, i) {
                vrange(vgpr(i.src[0]), 1)
            } else if nsa {
                nsa_list(&s, i, nsa_default(&s, fields(&s, i)))
            } else {
                vrange(vgpr(i.src[0]), seq_default(&s))
            };
            (data, addr)
        }
    };
    let sregs = |n: u8, k: u32| {
        if i.family == Family::Gfx12 {
            crate::disasm::sgpr_name(n, k as u8)
        } else {
            srange(n, k)
        }
    };
    let rsrc = match i.src[1] {
        Operand::Sgpr(n) => sregs(n, if s.bvh { 4 } else { 8 }),
        _ => String::new(),
    };
    let mut parts = vec![vrange(vdata, data), vaddr, rsrc];
    if let Operand::Sgpr(n) = i.src[2] {
        parts.push(sregs(n, 4));
    }
    // LLVM's gfx10/gfx11 NSA sampler syntax has two spaces after the
    // mnemonic.
    let mut out = if s.sampler && nsa && i.family != Family::Gfx12 {
        " ".to_string()
    } else {
        String::new()
    };
    out.push_str(&parts.join(", "));
    out.push_str(&modifiers(&s, i));
    out
}

/// gfx90a's image text: LLVM's gfx9 decoder names one address register
/// and an 8-dword resource whatever the op; the data as [`regs`] widens
/// it (atomics' variants), else the variant found first (one register,
/// two for cmpswap). AccVGPR data prints as `a…`.
fn text9(name: &str, i: &Inst) -> String {
    let s = shape(name);
    let vdata = vgpr(i.dst[0]).max(vgpr(i.src[3]));
    let first = vdata % crate::AGPR_BASE as u32;
    let fallback = 1 + s.cmpswap as u32;
    let data = match (s.atomic, s.cmpswap, data_dwords(&s, i)) {
        (false, _, n) | (true, false, n @ (1 | 2)) | (true, true, n @ (2 | 4)) => n,
        (true, false, 4) => 5,
        _ => fallback,
    };
    let data = if first + data > 256 { fallback } else { data };
    let mut parts = vec![
        crate::disasm::vgpr_name(vdata as u16, data as u8),
        vrange(vgpr(i.src[0]), 1),
    ];
    for (op, n) in [(i.src[1], 8), (i.src[2], 4)] {
        if let Operand::Sgpr(r) = op {
            parts.push(crate::disasm::sgpr_name(r, n));
        }
    }
    let mut out = parts.join(", ");
    let on = |bit: u32| i.aux & bit != 0;
    if i.aux & image::DMASK != 0 {
        out.push_str(&format!(" dmask:{:#x}", i.aux & image::DMASK));
    }
    if on(image::UNORM) {
        out.push_str(" unorm");
    }
    out.push_str(&crate::disasm::gfx9_mem::cache_text(i));
    for (bit, name) in [
        (image::A16, " a16"),
        (image::LWE, " lwe"),
        (image::DA, " da"),
        (image::D16, " d16"),
    ] {
        if on(bit) {
            out.push_str(name);
        }
    }
    out
}

fn modifiers(s: &Shape, i: &Inst) -> String {
    let mut out = String::new();
    let on = |bit: u32| i.aux & bit != 0;
    if s.bvh {
        if on(image::A16) {
            out.push_str(" a16");
        }
        return out;
    }
    if i.aux & image::DMASK != 0 {
        out.push_str(&format!(" dmask:{:#x}", i.aux & image::DMASK));
    }
    let dim = ((i.aux & image::DIM) >> image::DIM_SHIFT) as usize;
    out.push_str(&format!(" dim:SQ_RSRC_IMG_{}", DIM_NAMES[dim]));
    if on(image::UNORM) {
        out.push_str(" unorm");
    }
    out.push_str(&crate::disasm::policy(i));
    for (bit, name) in [(image::R128, " r128"), (image::A16, " a16")] {
        if on(bit) {
            out.push_str(name);
        }
    }
    if i.flags & flags::TFE != 0 {
        out.push_str(" tfe");
    }
    for (bit, name) in [(image::LWE, " lwe"), (image::D16, " d16")] {
        if on(bit) {
            out.push_str(name);
        }
    }
    out
}

/// Places an image op's data register `vdata`: a destination when the op
/// writes it (loads, samples, returning atomics), a source (`src[3]`) when
/// it reads it (stores, atomics), or both.
pub(crate) fn place_data(i: &mut crate::Inst, vdata: crate::Operand) {
    let s = shape(i.op.name());
    if !s.store {
        i.dst[0] = vdata;
    }
    if s.store || s.atomic {
        i.src[3] = vdata;
    }
}

/// Whether an image op takes a sampler descriptor.
pub(crate) fn has_sampler(name: &str) -> bool {
    shape(name).sampler
}
