//! ELF parsing.

use crate::{
    bundle, descriptor::KernelDescriptor, mach, meta, CodeObject, Error, FeatureSetting, Image,
    Kernel, RelocKind, Relocation, Segment, Symbol, SymbolKind, KERNEL_DESCRIPTOR_SIZE,
    MAX_IMAGE_SIZE,
};
use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader, ProgramHeader, Rela, SectionHeader, Sym, SymbolTable};
use object::{LittleEndian as LE, SectionIndex};
use std::collections::HashMap;

type Header = FileHeader64<LE>;

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
    let hdr = Header::parse(data).map_err(|e| Error::elf("ELF header", e))?;
    let endian = LE;
    let machine = hdr.e_machine(endian);
    if machine != elf::EM_AMDGPU {
        return Err(Error::WrongMachine(machine));
    }
    let ident = hdr.e_ident();
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
    let e_flags = hdr.e_flags(endian);
    let mach_num = e_flags & 0xff;
    let target = mach::mach_name(mach_num)
        .ok_or(Error::UnknownMach {
            e_flags,
            mach: mach_num,
        })?
        .to_string();

    // Segments.
    let phdrs = hdr
        .program_headers(endian, data)
        .map_err(|e| Error::elf("program headers", e))?;
    let mut segments = Vec::new();
    let mut size = 0u64;
    for (i, ph) in phdrs.iter().enumerate() {
        if ph.p_type(endian) != elf::PT_LOAD {
            continue;
        }
        let vaddr = ph.p_vaddr(endian);
        let memsz = ph.p_memsz(endian);
        let filesz = ph.p_filesz(endian);
        if filesz > memsz {
            return Err(Error::Image(format!(
                "PT_LOAD #{i}: p_filesz {filesz:#x} exceeds p_memsz {memsz:#x}"
            )));
        }
        let end = vaddr
            .checked_add(memsz)
            .filter(|&e| e <= MAX_IMAGE_SIZE)
            .ok_or_else(|| {
                Error::Image(format!(
                    "PT_LOAD #{i}: p_vaddr {vaddr:#x} + p_memsz {memsz:#x} exceeds the {} MiB image limit",
                    MAX_IMAGE_SIZE >> 20
                ))
            })?;
        let bytes = ph.data(endian, data).map_err(|()| {
            Error::elf(
                format!("PT_LOAD #{i}"),
                format!(
                    "file range {:#x}+{filesz:#x} lies outside the {}-byte file",
                    ph.p_offset(endian),
                    data.len()
                ),
            )
        })?;
        let flags = ph.p_flags(endian);
        size = size.max(end);
        segments.push(Segment {
            offset: vaddr,
            data: bytes.to_vec(),
            mem_size: memsz,
            executable: flags & elf::PF_X != 0,
            writable: flags & elf::PF_W != 0,
        });
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

    let sections = hdr
        .sections(endian, data)
        .map_err(|e| Error::elf("section headers", e))?;

    // Metadata note: from SHT_NOTE sections, else PT_NOTE segments.
    let mut desc: Option<&[u8]> = None;
    for (i, sh) in sections.iter().enumerate() {
        if let Some(mut notes) = sh
            .notes(endian, data)
            .map_err(|e| Error::elf(format!("note section #{i}"), e))?
        {
            while let Some(n) = notes
                .next()
                .map_err(|e| Error::elf(format!("note section #{i}"), e))?
            {
                if n.name() == b"AMDGPU" && n.n_type(endian) == NT_AMDGPU_METADATA {
                    desc.get_or_insert(n.desc());
                }
            }
        }
    }
    if desc.is_none() {
        for (i, ph) in phdrs.iter().enumerate() {
            if let Some(mut notes) = ph
                .notes(endian, data)
                .map_err(|e| Error::elf(format!("PT_NOTE #{i}"), e))?
            {
                while let Some(n) = notes
                    .next()
                    .map_err(|e| Error::elf(format!("PT_NOTE #{i}"), e))?
                {
                    if n.name() == b"AMDGPU" && n.n_type(endian) == NT_AMDGPU_METADATA {
                        desc.get_or_insert(n.desc());
                    }
                }
            }
        }
    }
    let md = meta::parse(desc.ok_or(Error::MissingMetadata)?)?;

    let target_id = match md.target {
        Some(t) => {
            let p = target_id_processor(&t).ok_or_else(|| {
                Error::Metadata(format!(
                    "amdhsa.target `{t}` is not of the form amdgcn-amd-amdhsa--PROCESSOR[:FEATURES]"
                ))
            })?;
            if p != target {
                return Err(Error::Metadata(format!(
                    "amdhsa.target `{t}` contradicts e_flags processor {target}"
                )));
            }
            t
        }
        None => format!("amdgcn-amd-amdhsa--{target}"),
    };

    // Symbols.
    let symtab = sections
        .symbols(endian, data, elf::SHT_SYMTAB)
        .map_err(|e| Error::elf(".symtab", e))?;
    let dynsym = sections
        .symbols(endian, data, elf::SHT_DYNSYM)
        .map_err(|e| Error::elf(".dynsym", e))?;
    let main_syms = if symtab.is_empty() { &dynsym } else { &symtab };
    let mut symbols = Vec::new();
    collect_symbols(main_syms, &mut symbols)?;
    let mut lookup: HashMap<&str, u64> = HashMap::new();
    let mut dyn_symbols = Vec::new();
    collect_symbols(&dynsym, &mut dyn_symbols)?;
    for s in dyn_symbols.iter().chain(symbols.iter()) {
        if s.defined {
            lookup.insert(s.name.as_str(), s.value);
        }
    }

    // Relocations from allocated SHT_RELA sections (.rela.dyn).
    let mut relocations = Vec::new();
    for (i, sh) in sections.iter().enumerate() {
        if sh.sh_flags(endian) & u64::from(elf::SHF_ALLOC) == 0 {
            continue;
        }
        let Some((relas, link)) = sh
            .rela(endian, data)
            .map_err(|e| Error::elf(format!("relocation section #{i}"), e))?
        else {
            continue;
        };
        let table: Option<SymbolTable<'_, Header, &[u8]>> = if link == SectionIndex(0) {
            None
        } else {
            Some(
                sections
                    .symbol_table_by_index(endian, data, link)
                    .map_err(|e| Error::elf(format!("symbols of relocation section #{i}"), e))?,
            )
        };
        for (j, r) in relas.iter().enumerate() {
            let sym_index = r.r_sym(endian, false);
            let (symbol_value, symbol_name) = if sym_index == 0 {
                (None, String::new())
            } else {
                let t = table.as_ref().ok_or_else(|| {
                    Error::elf(
                        format!("relocation section #{i} entry {j}"),
                        "references a symbol but the section has no symbol table",
                    )
                })?;
                let sym = t
                    .symbol(object::SymbolIndex(sym_index as usize))
                    .map_err(|e| Error::elf(format!("relocation section #{i} entry {j}"), e))?;
                let name = t
                    .symbol_name(endian, sym)
                    .map_err(|e| Error::elf(format!("relocation section #{i} entry {j}"), e))?;
                let name = String::from_utf8_lossy(name).into_owned();
                if sym.is_undefined(endian) {
                    (None, name)
                } else {
                    (Some(sym.st_value(endian)), name)
                }
            };
            relocations.push(Relocation {
                offset: r.r_offset(endian),
                kind: RelocKind::from_raw(r.r_type(endian, false)),
                symbol_value,
                symbol_name,
                addend: r.r_addend(endian),
            });
        }
    }

    let image = Image {
        size,
        segments,
        relocations,
    };

    // .text range.
    let exec = image
        .segments
        .iter()
        .find(|s| s.executable)
        .ok_or_else(|| Error::Image("no executable PT_LOAD segment".into()))?;
    let mut text = exec.offset..exec.offset + exec.data.len() as u64;
    if let Some((_, sh)) = sections.section_by_name(endian, b".text") {
        let start = sh.sh_addr(endian);
        if let Some(end) = start.checked_add(sh.sh_size(endian)) {
            if image
                .segments
                .iter()
                .any(|s| s.executable && s.offset <= start && end <= s.offset + s.mem_size)
            {
                text = start..end;
            }
        }
    }

    // Kernels.
    let gfx12 = target.starts_with("gfx12");
    let gfx10_plus = target.starts_with("gfx1");
    let mut kernels = Vec::new();
    for m in md.kernels {
        let kd_off = *lookup.get(m.symbol.as_str()).ok_or_else(|| {
            Error::kernel(
                &m.name,
                format!(
                    "descriptor symbol `{}` not found in the symbol tables",
                    m.symbol
                ),
            )
        })?;
        let bytes = image.read(kd_off, KERNEL_DESCRIPTOR_SIZE).ok_or_else(|| {
            Error::kernel(
                &m.name,
                format!(
                    "kernel descriptor `{}` at {kd_off:#x}..+64 does not lie inside one segment of the {:#x}-byte image",
                    m.symbol, image.size
                ),
            )
        })?;
        let descriptor = KernelDescriptor::parse(&bytes, gfx12)?;
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
        if gfx10_plus && descriptor.wave32 != (m.wavefront_size == 32) {
            return Err(Error::kernel(
                &m.name,
                format!(
                    "metadata .wavefront_size {} contradicts descriptor ENABLE_WAVEFRONT_SIZE32={}",
                    m.wavefront_size, descriptor.wave32
                ),
            ));
        }
        kernels.push(Kernel {
            name: m.name.clone(),
            symbol: m.symbol.clone(),
            descriptor_offset: kd_off,
            entry_offset,
            descriptor,
            meta: m,
        });
    }

    Ok(CodeObject {
        target,
        target_id,
        version,
        e_flags,
        xnack: feature(e_flags, 8),
        sramecc: feature(e_flags, 10),
        metadata_version: md.version,
        image,
        kernels,
        symbols,
        text,
        printf: md.printf,
    })
}

fn collect_symbols<'d>(
    table: &SymbolTable<'d, Header, &'d [u8]>,
    out: &mut Vec<Symbol>,
) -> Result<(), Error> {
    let endian = LE;
    for sym in table.iter() {
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
