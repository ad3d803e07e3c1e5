//! ELF parsing.
//!
//! [`load`] reads a code object in phases, each its own function, in the
//! order their checks have always run (so the first error reported for a
//! broken file does not depend on how the code is split): the header, the
//! loadable segments, the metadata note, the symbols, the relocations, the
//! `.text` range and last the kernels, which join the metadata to the
//! descriptors the symbols locate in the image.

use crate::{
    bundle, descriptor::KernelDescriptor, mach, meta, CodeObject, DebugInfo, Error, FeatureSetting,
    Image, Kernel, RelocKind, Relocation, Segment, Symbol, SymbolKind, KERNEL_DESCRIPTOR_SIZE,
    MAX_IMAGE_SIZE,
};
use object::elf::{self, FileHeader64, ProgramHeader64};
use object::read::elf::{
    FileHeader, NoteIterator, ProgramHeader, Rela, SectionHeader, SectionTable, Sym, SymbolTable,
};
use object::{LittleEndian as LE, SectionIndex};
use std::collections::HashMap;
use std::ops::Range;

type Header = FileHeader64<LE>;
type Sections<'d> = SectionTable<'d, Header, &'d [u8]>;
type Symbols<'d> = SymbolTable<'d, Header, &'d [u8]>;

/// `NT_AMDGPU_METADATA`.
const NT_AMDGPU_METADATA: u32 = 32;

fn feature(e_flags: u32, shift: u32) -> FeatureSetting {
    match (e_flags >> shift) & 3 {
        0 => FeatureSetting::Unsupported,
        1 => FeatureSetting::Any,
        2 => FeatureSetting::Off,
        _ => FeatureSetting::On,
    }
}

pub(crate) fn load(data: &[u8]) -> Result<CodeObject, Error> {
    let id = identify(data)?;
    let hdr = id.header;
    let phdrs = hdr
        .program_headers(LE, data)
        .map_err(|e| Error::elf("program headers", e))?;
    let (segments, size) = loadable_segments(phdrs, data)?;
    let sections = hdr
        .sections(LE, data)
        .map_err(|e| Error::elf("section headers", e))?;
    let notes = metadata_notes(&sections, phdrs, data)?;
    let notes_found = notes.len();
    let md = meta::merge(notes.into_iter().map(meta::parse))?;
    let target_id = target_id(md.target, &id.target)?;
    let (symbols, dyn_symbols) = read_symbols(&sections, data)?;
    let relocations = read_relocations(&sections, data)?;
    let image = Image {
        size,
        segments,
        relocations,
    };
    let text = text_range(&image, &sections)?;
    let debug = DebugInfo::from_sections(|name| {
        let (_, sh) = sections.section_by_name(LE, name.as_bytes())?;
        sh.data(LE, data).ok()
    });
    let addresses = defined_addresses(&dyn_symbols, &symbols);
    let mut kernels = join_kernels(md.kernels, &addresses, &image, &id.target)?;
    kernels.extend(undescribed_kernels(
        &kernels, &addresses, &image, &id.target,
    )?);
    if notes_found == 0 && kernels.is_empty() {
        return Err(Error::MissingMetadata);
    }
    Ok(CodeObject {
        target: id.target,
        target_id,
        version: id.version,
        e_flags: id.e_flags,
        xnack: feature(id.e_flags, 8),
        sramecc: feature(id.e_flags, 10),
        metadata_version: md.version,
        image,
        kernels,
        symbols,
        text,
        printf: md.printf,
        debug: debug.map(std::sync::Arc::new),
    })
}

/// What the ELF header says about the code object.
struct Identity<'d> {
    header: &'d Header,
    /// The code object version (4 or 5).
    version: u32,
    e_flags: u32,
    /// The processor `e_flags` names, e.g. `gfx1151`.
    target: String,
}

/// Checks that `data` is a 64-bit little-endian AMDGPU HSA code object of
/// a version and processor we read.
fn identify(data: &[u8]) -> Result<Identity<'_>, Error> {
    if data.len() < 4 || &data[..4] != b"\x7fELF" {
        return Err(Error::NotElf);
    }
    if data.len() < 16 {
        return Err(Error::elf(
            "ELF identification",
            format!("file is {} bytes, shorter than e_ident", data.len()),
        ));
    }
    if data[4] != elf::ELFCLASS64 || data[5] != elf::ELFDATA2LSB {
        return Err(Error::NotElf64Le);
    }
    let header = Header::parse(data).map_err(|e| Error::elf("ELF header", e))?;
    let machine = header.e_machine(LE);
    if machine != elf::EM_AMDGPU {
        return Err(Error::WrongMachine(machine));
    }
    let ident = header.e_ident();
    if ident.os_abi != 64 {
        return Err(Error::WrongOsAbi(ident.os_abi));
    }
    let version = match ident.abi_version {
        2 => 4,
        3 => 5,
        v => {
            return Err(Error::UnsupportedVersion {
                abi_version: v,
                description: match v {
                    0 => "code object v2",
                    1 => "code object v3",
                    4 => "code object v6",
                    _ => "unknown code object version",
                },
            })
        }
    };
    let e_flags = header.e_flags(LE);
    let mach_num = e_flags & 0xff;
    let target = mach::mach_name(mach_num)
        .ok_or(Error::UnknownMach {
            e_flags,
            mach: mach_num,
        })?
        .to_string();
    Ok(Identity {
        header,
        version,
        e_flags,
        target,
    })
}

/// The `PT_LOAD` segments, sorted by offset, and the bytes the image needs
/// (the highest segment end). Every segment must lie in the file and in
/// the image limit, and none may overlap another, since the loader copies
/// each to its offset in one block.
fn loadable_segments(
    phdrs: &[ProgramHeader64<LE>],
    data: &[u8],
) -> Result<(Vec<Segment>, u64), Error> {
    let mut segments = Vec::new();
    let mut size = 0u64;
    for (i, ph) in phdrs.iter().enumerate() {
        if ph.p_type(LE) != elf::PT_LOAD {
            continue;
        }
        let segment = loadable_segment(i, ph, data)?;
        size = size.max(segment.offset + segment.mem_size);
        segments.push(segment);
    }
    if segments.is_empty() {
        return Err(Error::Image("no PT_LOAD segment".into()));
    }
    segments.sort_by_key(|s| s.offset);
    for w in segments.windows(2) {
        if w[0].offset + w[0].mem_size > w[1].offset {
            return Err(Error::Image(format!(
                "PT_LOAD segments overlap: {:#x}..{:#x} and {:#x}..{:#x}",
                w[0].offset,
                w[0].offset + w[0].mem_size,
                w[1].offset,
                w[1].offset + w[1].mem_size
            )));
        }
    }
    Ok((segments, size))
}

/// `PT_LOAD` number `i`, checked; its end is within [`MAX_IMAGE_SIZE`].
fn loadable_segment(i: usize, ph: &ProgramHeader64<LE>, data: &[u8]) -> Result<Segment, Error> {
    let vaddr = ph.p_vaddr(LE);
    let memsz = ph.p_memsz(LE);
    let filesz = ph.p_filesz(LE);
    if filesz > memsz {
        return Err(Error::Image(format!(
            "PT_LOAD #{i}: p_filesz {filesz:#x} exceeds p_memsz {memsz:#x}"
        )));
    }
    if vaddr
        .checked_add(memsz)
        .is_none_or(|end| end > MAX_IMAGE_SIZE)
    {
        return Err(Error::Image(format!(
            "PT_LOAD #{i}: p_vaddr {vaddr:#x} + p_memsz {memsz:#x} exceeds the {} MiB image limit",
            MAX_IMAGE_SIZE >> 20
        )));
    }
    let bytes = ph.data(LE, data).map_err(|()| {
        Error::elf(
            format!("PT_LOAD #{i}"),
            format!(
                "file range {:#x}+{filesz:#x} lies outside the {}-byte file",
                ph.p_offset(LE),
                data.len()
            ),
        )
    })?;
    let flags = ph.p_flags(LE);
    Ok(Segment {
        offset: vaddr,
        data: bytes.to_vec(),
        mem_size: memsz,
        executable: flags & elf::PF_X != 0,
        writable: flags & elf::PF_W != 0,
    })
}

/// The descriptors of every `NT_AMDGPU_METADATA` note (perhaps none), in
/// file order:
/// from the `SHT_NOTE` sections, else (a stripped file may have no section
/// headers) from the `PT_NOTE` segments. A linked code object holds one
/// note per object linked into it (rocBLAS's Tensile library: one per
/// kernel), and ROCm's loader reads them all.
fn metadata_notes<'d>(
    sections: &Sections<'d>,
    phdrs: &'d [ProgramHeader64<LE>],
    data: &'d [u8],
) -> Result<Vec<&'d [u8]>, Error> {
    let mut found = Vec::new();
    for (i, sh) in sections.iter().enumerate() {
        let place = || format!("note section #{i}");
        let notes = sh.notes(LE, data).map_err(|e| Error::elf(place(), e))?;
        metadata_in(notes, place, &mut found)?;
    }
    if found.is_empty() {
        for (i, ph) in phdrs.iter().enumerate() {
            let place = || format!("PT_NOTE #{i}");
            let notes = ph.notes(LE, data).map_err(|e| Error::elf(place(), e))?;
            metadata_in(notes, place, &mut found)?;
        }
    }
    Ok(found)
}

/// Adds the descriptors of the AMDGPU metadata notes among `notes` (none
/// when the section or segment holds no notes) to `found`; every note is
/// walked, so a malformed one is an error wherever it lies. `place` names
/// the section or segment in errors.
fn metadata_in<'d>(
    notes: Option<NoteIterator<'d, Header>>,
    place: impl Fn() -> String,
    found: &mut Vec<&'d [u8]>,
) -> Result<(), Error> {
    let Some(mut notes) = notes else {
        return Ok(());
    };
    while let Some(n) = notes.next().map_err(|e| Error::elf(place(), e))? {
        if n.name() == b"AMDGPU" && n.n_type(LE) == NT_AMDGPU_METADATA {
            found.push(n.desc());
        }
    }
    Ok(())
}

/// The target ID: the metadata's `amdhsa.target`, which must name the
/// processor `e_flags` does, or else one made from that processor.
fn target_id(declared: Option<String>, processor: &str) -> Result<String, Error> {
    let Some(t) = declared else {
        return Ok(format!("amdgcn-amd-amdhsa--{processor}"));
    };
    let p = target_id_processor(&t).ok_or_else(|| {
        Error::Metadata(format!(
            "amdhsa.target `{t}` is not of the form amdgcn-amd-amdhsa--PROCESSOR[:FEATURES]"
        ))
    })?;
    if p != processor {
        return Err(Error::Metadata(format!(
            "amdhsa.target `{t}` contradicts e_flags processor {processor}"
        )));
    }
    Ok(t)
}

/// The symbols the code object reports (`.symtab`, or `.dynsym` when it is
/// stripped) and the dynamic symbols, which the kernels' descriptor symbols
/// are also looked up in.
fn read_symbols(sections: &Sections<'_>, data: &[u8]) -> Result<(Vec<Symbol>, Vec<Symbol>), Error> {
    let symtab = sections
        .symbols(LE, data, elf::SHT_SYMTAB)
        .map_err(|e| Error::elf(".symtab", e))?;
    let dynsym = sections
        .symbols(LE, data, elf::SHT_DYNSYM)
        .map_err(|e| Error::elf(".dynsym", e))?;
    let main_syms = if symtab.is_empty() { &dynsym } else { &symtab };
    let mut symbols = Vec::new();
    collect_symbols(main_syms, &mut symbols)?;
    let mut dyn_symbols = Vec::new();
    collect_symbols(&dynsym, &mut dyn_symbols)?;
    Ok((symbols, dyn_symbols))
}

/// The address of each defined symbol by name; where both tables define a
/// name, the reported symbols' value wins.
fn defined_addresses<'s>(dynamic: &'s [Symbol], reported: &'s [Symbol]) -> HashMap<&'s str, u64> {
    dynamic
        .iter()
        .chain(reported)
        .filter(|s| s.defined)
        .map(|s| (s.name.as_str(), s.value))
        .collect()
}

/// The relocations of the allocated `SHT_RELA` sections (`.rela.dyn`),
/// which the loader applies when it places the image; relocations of
/// sections that are not loaded concern only a linker.
fn read_relocations(sections: &Sections<'_>, data: &[u8]) -> Result<Vec<Relocation>, Error> {
    let mut relocations = Vec::new();
    for (i, sh) in sections.iter().enumerate() {
        if sh.sh_flags(LE) & u64::from(elf::SHF_ALLOC) == 0 {
            continue;
        }
        let Some((relas, link)) = sh
            .rela(LE, data)
            .map_err(|e| Error::elf(format!("relocation section #{i}"), e))?
        else {
            continue;
        };
        let table = if link == SectionIndex(0) {
            None
        } else {
            Some(
                sections
                    .symbol_table_by_index(LE, data, link)
                    .map_err(|e| Error::elf(format!("symbols of relocation section #{i}"), e))?,
            )
        };
        for (j, r) in relas.iter().enumerate() {
            let (symbol_value, symbol_name) = relocation_symbol(table.as_ref(), r, i, j)?;
            relocations.push(Relocation {
                offset: r.r_offset(LE),
                kind: RelocKind::from_raw(r.r_type(LE, false)),
                symbol_value,
                symbol_name,
                addend: r.r_addend(LE),
            });
        }
    }
    Ok(relocations)
}

/// The symbol relocation `j` of section `i` refers to: its value (`None`
/// when it has none or is undefined, to be resolved elsewhere) and name
/// (empty for none).
fn relocation_symbol(
    table: Option<&Symbols<'_>>,
    r: &elf::Rela64<LE>,
    i: usize,
    j: usize,
) -> Result<(Option<u64>, String), Error> {
    let sym_index = r.r_sym(LE, false);
    if sym_index == 0 {
        return Ok((None, String::new()));
    }
    let place = || format!("relocation section #{i} entry {j}");
    let t = table.ok_or_else(|| {
        Error::elf(
            place(),
            "references a symbol but the section has no symbol table",
        )
    })?;
    let sym = t
        .symbol(object::SymbolIndex(sym_index as usize))
        .map_err(|e| Error::elf(place(), e))?;
    let name = t.symbol_name(LE, sym).map_err(|e| Error::elf(place(), e))?;
    let name = String::from_utf8_lossy(name).into_owned();
    if sym.is_undefined(LE) {
        Ok((None, name))
    } else {
        Ok((Some(sym.st_value(LE)), name))
    }
}

/// The `.text` section's range when it lies inside an executable segment,
/// else the file bytes of the first executable segment (a stripped file
/// may lack section headers).
fn text_range(image: &Image, sections: &Sections<'_>) -> Result<Range<u64>, Error> {
    let exec = image
        .segments
        .iter()
        .find(|s| s.executable)
        .ok_or_else(|| Error::Image("no executable PT_LOAD segment".into()))?;
    let fallback = exec.offset..exec.offset + exec.data.len() as u64;
    let Some((_, sh)) = sections.section_by_name(LE, b".text") else {
        return Ok(fallback);
    };
    let start = sh.sh_addr(LE);
    let Some(end) = start.checked_add(sh.sh_size(LE)) else {
        return Ok(fallback);
    };
    let inside = image
        .segments
        .iter()
        .any(|s| s.executable && s.offset <= start && end <= s.offset + s.mem_size);
    Ok(if inside { start..end } else { fallback })
}

/// Each kernel of the metadata joined to its descriptor, which its
/// descriptor symbol locates in the image.
fn join_kernels(
    metadata: Vec<meta::KernelMeta>,
    addresses: &HashMap<&str, u64>,
    image: &Image,
    target: &str,
) -> Result<Vec<Kernel>, Error> {
    metadata
        .into_iter()
        .map(|m| join_kernel(m, addresses, image, target))
        .collect()
}

/// The kernels no metadata describes, found as ROCm's loader finds every
/// kernel: by a defined object symbol named `NAME.kd` whose 64 bytes are a
/// kernel descriptor (hand-written assembly and stripped or merged objects
/// may carry no note, or notes for some kernels only). They are sorted by
/// address, after the described ones.
fn undescribed_kernels(
    described: &[Kernel],
    addresses: &HashMap<&str, u64>,
    image: &Image,
    target: &str,
) -> Result<Vec<Kernel>, Error> {
    let known: std::collections::HashSet<&str> =
        described.iter().map(|k| k.symbol.as_str()).collect();
    let mut found: Vec<(&str, u64)> = (addresses.iter())
        .filter(|(name, _)| name.ends_with(".kd") && name.len() > 3 && !known.contains(*name))
        .map(|(name, &at)| (*name, at))
        .collect();
    found.sort_unstable_by_key(|&(name, at)| (at, name));
    found
        .into_iter()
        .map(|(symbol, kd_off)| {
            let descriptor = descriptor_at(symbol, symbol, kd_off, image, target)?;
            let m = meta::KernelMeta::from_descriptor(symbol, &descriptor);
            kernel_at(m, kd_off, descriptor, image, target)
        })
        .collect()
}

/// The kernel descriptor named `symbol` at image offset `kd_off`, which
/// must lie inside one segment (kernel `name`'s, for errors).
fn descriptor_at(
    name: &str,
    symbol: &str,
    kd_off: u64,
    image: &Image,
    target: &str,
) -> Result<KernelDescriptor, Error> {
    let bytes = image.read(kd_off, KERNEL_DESCRIPTOR_SIZE).ok_or_else(|| {
        Error::kernel(
            name,
            format!(
                "kernel descriptor `{symbol}` at {kd_off:#x}..+64 does not lie inside one segment of the {:#x}-byte image",
                image.size
            ),
        )
    })?;
    KernelDescriptor::parse(&bytes, crate::descriptor::Rsrc3::of_target(target))
}

/// One kernel the metadata describes: its descriptor symbol must be
/// defined and its descriptor lie in one segment ([`kernel_at`]).
fn join_kernel(
    m: meta::KernelMeta,
    addresses: &HashMap<&str, u64>,
    image: &Image,
    target: &str,
) -> Result<Kernel, Error> {
    let kd_off = *addresses.get(m.symbol.as_str()).ok_or_else(|| {
        Error::kernel(
            &m.name,
            format!(
                "descriptor symbol `{}` not found in the symbol tables",
                m.symbol
            ),
        )
    })?;
    let descriptor = descriptor_at(&m.name, &m.symbol, kd_off, image, target)?;
    kernel_at(m, kd_off, descriptor, image, target)
}

/// The kernel of `descriptor` (at image offset `kd_off`): its entry must
/// lie in an executable segment's file bytes (the executor decodes from
/// there), and on gfx10+ its wave size should agree with the metadata's,
/// since the two disagreeing means a broken toolchain rather than a choice
/// (a warning).
fn kernel_at(
    m: meta::KernelMeta,
    kd_off: u64,
    descriptor: KernelDescriptor,
    image: &Image,
    target: &str,
) -> Result<Kernel, Error> {
    let entry = i128::from(kd_off) + i128::from(descriptor.kernel_code_entry_byte_offset);
    let entry_offset = u64::try_from(entry)
        .ok()
        .filter(|&e| {
            image.segments.iter().any(|s| {
                s.executable
                    && s.offset <= e
                    && e.checked_add(4)
                        .is_some_and(|end| end <= s.offset + s.data.len() as u64)
            })
        })
        .ok_or_else(|| {
            Error::kernel(
                &m.name,
                format!(
                    "entry {entry:#x} (descriptor {kd_off:#x} + kernel_code_entry_byte_offset {}) is not inside an executable segment",
                    descriptor.kernel_code_entry_byte_offset
                ),
            )
        })?;
    let mut warnings = Vec::new();
    // The hardware runs what the descriptor says; LLVM's metadata only
    // describes it. A contradiction is a tool's mistake worth telling.
    if target.starts_with("gfx1") && descriptor.wave32 != (m.wavefront_size == 32) {
        warnings.push(format!(
            "metadata .wavefront_size {} contradicts descriptor ENABLE_WAVEFRONT_SIZE32={}; it runs in wave{}, as the descriptor says (and the hardware does)",
            m.wavefront_size,
            descriptor.wave32 as u8,
            descriptor.wavefront_size()
        ));
    }
    Ok(Kernel {
        name: m.name.clone(),
        symbol: m.symbol.clone(),
        descriptor_offset: kd_off,
        entry_offset,
        descriptor,
        meta: m,
        warnings,
    })
}

/// The named symbols of `table`, but for local labels (`STT_NOTYPE`,
/// `STB_LOCAL`: an assembler's branch targets, of which rocBLAS's Tensile
/// library has 700 000), which nothing loads or runs by.
fn collect_symbols<'d>(
    table: &SymbolTable<'d, Header, &'d [u8]>,
    out: &mut Vec<Symbol>,
) -> Result<(), Error> {
    let endian = LE;
    for sym in table.iter() {
        if sym.st_type() == elf::STT_NOTYPE && sym.st_bind() == elf::STB_LOCAL {
            continue;
        }
        let name = table
            .symbol_name(endian, sym)
            .map_err(|e| Error::elf("symbol name", e))?;
        if name.is_empty() {
            continue;
        }
        out.push(Symbol {
            name: String::from_utf8_lossy(name).into_owned(),
            value: sym.st_value(endian),
            size: sym.st_size(endian),
            kind: match sym.st_type() {
                elf::STT_FUNC => SymbolKind::Function,
                elf::STT_OBJECT => SymbolKind::Object,
                _ => SymbolKind::Other,
            },
            global: sym.st_bind() != elf::STB_LOCAL,
            defined: !sym.is_undefined(endian),
        });
    }
    Ok(())
}

/// The processor of a target ID `amdgcn-amd-amdhsa-[ENV]-PROCESSOR[:FEATURES]`.
pub(crate) fn target_id_processor(tid: &str) -> Option<&str> {
    let rest = tid.strip_prefix("amdgcn-amd-amdhsa-")?;
    let (_env, target) = rest.split_once('-')?;
    let p = bundle::processor_of(target);
    (!p.is_empty()).then_some(p)
}
