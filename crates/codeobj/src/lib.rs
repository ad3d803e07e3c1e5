//! AMDGPU code objects as emitted by clang/LLVM for the `amdgcn-amd-amdhsa` target.
//!
//! This crate reads a linked ELF code object (code object version 4 or 5), or a
//! clang offload bundle containing one, and produces a [`CodeObject`]: the loadable
//! image with its dynamic relocations, the kernels (kernel descriptor plus the
//! `NT_AMDGPU_METADATA` kernel metadata), the symbols and the printf format strings.
//!
//! Every input is treated as hostile: malformed, truncated or contradictory files
//! produce an [`Error`], never a panic, an out-of-bounds read or a huge allocation.
//!
//! ```no_run
//! let bytes = std::fs::read("k.hsaco").unwrap();
//! let co = softgpu_codeobj::load_for_target(&bytes, "gfx1151").unwrap();
//! let image = co.image.place(0x1000_0000).unwrap();
//! for k in &co.kernels {
//!     println!("{} entry at image offset {:#x}", k.name, k.entry_offset);
//! }
//! # let _ = image;
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod bundle;
mod descriptor;
mod elf;
mod error;
mod file;
mod image;
mod mach;
mod meta;
mod source;

pub use bundle::{
    bundle_entries, decompress, is_compressed_offload_bundle, is_offload_bundle, unbundle,
    BundleEntry,
};
pub use descriptor::{KernelDescriptor, Rsrc3};
pub use error::Error;
pub use file::{read_file, FileError, MAX_FILE_SIZE};
pub use mach::{mach_from_name, mach_name};
pub use meta::{AddressSpace, KernelArg, KernelMeta, Numeric, ValueKind};
pub use source::{demangle, nearest_names, with_demangled, DebugInfo, SourceFrame, SourceLines};

/// The largest image (span of all `PT_LOAD` segments) this crate accepts: 1 GiB.
pub const MAX_IMAGE_SIZE: u64 = 1 << 30;

/// Size in bytes of an AMDHSA kernel descriptor.
pub const KERNEL_DESCRIPTOR_SIZE: u64 = 64;

/// Parse an ELF code object (not an offload bundle; see [`load_for_target`]).
///
/// The object must be ELF64 little endian, `e_machine` `EM_AMDGPU` (224), OS ABI
/// `ELFOSABI_AMDGPU_HSA` (64) and code object version 4 or 5.
pub fn load(bytes: &[u8]) -> Result<CodeObject, Error> {
    // The ELF parser reads headers in place and needs 8-byte alignment;
    // bytes from `include_bytes!` or the middle of a bundle may not have it.
    if bytes.as_ptr().align_offset(8) != 0 {
        // A copy in a buffer with room to start at an 8-aligned address
        // (`align_offset` of a byte pointer is always below 8 at run time).
        let mut buffer = vec![0u8; bytes.len() + 7];
        let start = buffer.as_ptr().align_offset(8);
        let aligned = &mut buffer[start..start + bytes.len()];
        aligned.copy_from_slice(bytes);
        return elf::load(aligned);
    }
    elf::load(bytes)
}

/// Parse an ELF code object or a clang offload bundle, for the processor `target`
/// (for example `"gfx1151"`; with target features such as `"gfx90a:xnack-"` a bundle
/// entry for the other mode is never taken: [`unbundle`]).
///
/// Fails with [`Error::TargetMismatch`] if the ELF was built for another processor.
pub fn load_for_target(bytes: &[u8], target: &str) -> Result<CodeObject, Error> {
    if is_compressed_offload_bundle(bytes) {
        let (bundle, _) = bundle::decompress(bytes)?;
        return load_for_target(&bundle, target);
    }
    let elf_bytes = if is_offload_bundle(bytes) {
        unbundle(bytes, target)?
    } else {
        bytes
    };
    let co = load(elf_bytes)?;
    let wanted = bundle::processor_of(target);
    if co.target != wanted {
        return Err(Error::TargetMismatch {
            expected: wanted.to_string(),
            found: co.target.clone(),
        });
    }
    Ok(co)
}

/// The processor a code object is for, to choose a device by: an ELF's own
/// (`EF_AMDGPU_MACH`); for an offload bundle, `preferred` when an entry is
/// for it, else the first entry's processor that `runs` accepts.
pub fn target_of(
    bytes: &[u8],
    preferred: &str,
    runs: impl Fn(&str) -> bool,
) -> Result<String, Error> {
    if is_compressed_offload_bundle(bytes) {
        let (bundle, _) = bundle::decompress(bytes)?;
        return target_of(&bundle, preferred, runs);
    }
    if !is_offload_bundle(bytes) {
        return Ok(load(bytes)?.target);
    }
    let entries = bundle_entries(bytes)?;
    let processors: Vec<&str> = entries
        .iter()
        .filter_map(|e| e.amdgcn_target_id())
        .map(bundle::processor_of)
        .collect();
    let chosen = processors
        .iter()
        .find(|&&p| p == preferred)
        .or_else(|| processors.iter().find(|&&p| runs(p)));
    chosen
        .map(|p| p.to_string())
        .ok_or_else(|| Error::NoBundleEntry {
            target: format!("{preferred} or another supported processor"),
            available: entries.iter().map(|e| e.id.clone()).collect(),
        })
}

/// Whether the `xnack` or `sramecc` feature is set in the ELF header (code object v4+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    /// The target does not support the feature.
    Unsupported,
    /// Code works with the feature on or off.
    Any,
    /// Code requires the feature off.
    Off,
    /// Code requires the feature on.
    On,
}

/// A parsed AMDGPU code object.
#[derive(Debug, Clone)]
pub struct CodeObject {
    /// Processor name from `e_flags` (`EF_AMDGPU_MACH`), e.g. `"gfx1151"`.
    pub target: String,
    /// Target ID from the metadata key `amdhsa.target`, e.g. `"amdgcn-amd-amdhsa--gfx1151"`.
    pub target_id: String,
    /// Code object version: 4 or 5.
    pub version: u32,
    /// The raw ELF `e_flags`.
    pub e_flags: u32,
    /// The `xnack` setting from `e_flags`.
    pub xnack: FeatureSetting,
    /// The `sramecc` setting from `e_flags`.
    pub sramecc: FeatureSetting,
    /// Metadata `amdhsa.version` (e.g. `[1, 2]` for code object v5), if present.
    pub metadata_version: Option<[u32; 2]>,
    /// The loadable image.
    pub image: Image,
    /// The kernels, in metadata order.
    pub kernels: Vec<Kernel>,
    /// Named symbols (from `.symtab` if present, else `.dynsym`), but for
    /// local labels (`STT_NOTYPE` and `STB_LOCAL`).
    pub symbols: Vec<Symbol>,
    /// Image offsets covered by `.text` (or by the executable segment when there are
    /// no section headers), for disassembly.
    pub text: std::ops::Range<u64>,
    /// The `amdhsa.printf` format descriptors, if present (empty otherwise).
    pub printf: Vec<String>,
    /// The DWARF line tables and inlining records, when the code object
    /// was built with them (`-g`, `-gline-tables-only`).
    pub debug: Option<std::sync::Arc<DebugInfo>>,
}

impl CodeObject {
    /// The kernel with metadata name `name` (or descriptor symbol `name`).
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels
            .iter()
            .find(|k| k.name == name)
            .or_else(|| self.kernels.iter().find(|k| k.symbol == name))
    }

    /// The first symbol called `name`.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }
}

/// The loadable image of a code object: its `PT_LOAD` segments and dynamic relocations.
///
/// Image offsets are ELF virtual addresses: the byte at vaddr `v` is placed at device
/// address `base + v`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Bytes needed to hold the image: the largest `p_vaddr + p_memsz` of all `PT_LOAD`s.
    pub size: u64,
    /// The `PT_LOAD` segments, sorted by offset, not overlapping.
    pub segments: Vec<Segment>,
    /// Dynamic relocations to apply when the image is placed.
    pub relocations: Vec<Relocation>,
}

/// One `PT_LOAD` segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Image offset (ELF `p_vaddr`).
    pub offset: u64,
    /// The `p_filesz` bytes from the file; the rest up to `mem_size` is zero.
    pub data: Vec<u8>,
    /// `p_memsz`.
    pub mem_size: u64,
    /// `PF_X`.
    pub executable: bool,
    /// `PF_W`.
    pub writable: bool,
}

impl Segment {
    /// Image offsets covered by the segment in memory.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.offset..self.offset + self.mem_size
    }
}

/// A dynamic relocation (`.rela.dyn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocation {
    /// Image offset of the bytes to patch.
    pub offset: u64,
    /// The relocation type.
    pub kind: RelocKind,
    /// Image offset of the referenced symbol if it is defined; `None` if undefined
    /// or if the relocation references no symbol.
    pub symbol_value: Option<u64>,
    /// Name of the referenced symbol (empty when none).
    pub symbol_name: String,
    /// The explicit addend.
    pub addend: i64,
}

/// AMDGPU relocation types (`R_AMDGPU_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelocKind {
    /// `R_AMDGPU_RELATIVE64` (13): `base + addend`, 64 bits.
    Relative64,
    /// `R_AMDGPU_ABS64` (3): `S + A`, 64 bits.
    Abs64,
    /// `R_AMDGPU_ABS32_LO` (1): low 32 bits of `S + A`.
    Abs32Lo,
    /// `R_AMDGPU_ABS32_HI` (2): high 32 bits of `S + A`.
    Abs32Hi,
    /// `R_AMDGPU_ABS32` (6): `S + A`, 32 bits (must fit).
    Abs32,
    /// Any other type, by number. `place` also applies `R_AMDGPU_NONE` (0, ignored),
    /// `R_AMDGPU_REL32` (4), `R_AMDGPU_REL64` (5), `R_AMDGPU_REL32_LO` (10) and
    /// `R_AMDGPU_REL32_HI` (11); the rest are errors.
    Other(u32),
}

impl RelocKind {
    /// Kind of the ELF relocation type number `r_type`.
    pub fn from_raw(r_type: u32) -> Self {
        match r_type {
            13 => Self::Relative64,
            3 => Self::Abs64,
            1 => Self::Abs32Lo,
            2 => Self::Abs32Hi,
            6 => Self::Abs32,
            n => Self::Other(n),
        }
    }

    /// The ELF relocation type number.
    pub fn raw(self) -> u32 {
        match self {
            Self::Relative64 => 13,
            Self::Abs64 => 3,
            Self::Abs32Lo => 1,
            Self::Abs32Hi => 2,
            Self::Abs32 => 6,
            Self::Other(n) => n,
        }
    }

    /// The LLVM name of the relocation type, e.g. `"R_AMDGPU_ABS64"`.
    pub fn name(self) -> &'static str {
        match self.raw() {
            0 => "R_AMDGPU_NONE",
            1 => "R_AMDGPU_ABS32_LO",
            2 => "R_AMDGPU_ABS32_HI",
            3 => "R_AMDGPU_ABS64",
            4 => "R_AMDGPU_REL32",
            5 => "R_AMDGPU_REL64",
            6 => "R_AMDGPU_ABS32",
            7 => "R_AMDGPU_GOTPCREL",
            8 => "R_AMDGPU_GOTPCREL32_LO",
            9 => "R_AMDGPU_GOTPCREL32_HI",
            10 => "R_AMDGPU_REL32_LO",
            11 => "R_AMDGPU_REL32_HI",
            13 => "R_AMDGPU_RELATIVE64",
            14 => "R_AMDGPU_REL16",
            _ => "unknown",
        }
    }
}

/// What a symbol names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// `STT_FUNC`.
    Function,
    /// `STT_OBJECT`.
    Object,
    /// Anything else (`STT_NOTYPE`, `STT_SECTION`, …).
    Other,
}

/// A named symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Symbol name.
    pub name: String,
    /// Image offset (`st_value`).
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// Symbol type.
    pub kind: SymbolKind,
    /// Binding is not `STB_LOCAL`.
    pub global: bool,
    /// The symbol is defined (`st_shndx != SHN_UNDEF`).
    pub defined: bool,
}

/// A kernel: its descriptor and metadata.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// Kernel name (metadata `.name`).
    pub name: String,
    /// Kernel descriptor symbol (metadata `.symbol`, `NAME.kd`).
    pub symbol: String,
    /// Image offset of the 64-byte kernel descriptor.
    pub descriptor_offset: u64,
    /// Image offset of the first instruction
    /// (`descriptor_offset + kernel_code_entry_byte_offset`).
    pub entry_offset: u64,
    /// The decoded kernel descriptor.
    pub descriptor: KernelDescriptor,
    /// The kernel's metadata.
    pub meta: KernelMeta,
    /// What about the kernel the loader accepted but a developer should
    /// know (metadata contradicting the descriptor).
    pub warnings: Vec<String>,
}
