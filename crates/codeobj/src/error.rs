//! Errors.

/// Everything that can go wrong while reading a code object or placing its image.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input does not start with the ELF magic.
    #[error("not an ELF file (no \\x7fELF magic); expected an AMDGPU code object or a clang offload bundle")]
    NotElf,
    /// The ELF header is not a 64-bit little-endian one.
    #[error("unsupported ELF class/data encoding: AMDGPU code objects are ELF64 little endian")]
    NotElf64Le,
    /// `e_machine` is not `EM_AMDGPU`.
    #[error("e_machine is {0}, not EM_AMDGPU (224): not an AMDGPU code object")]
    WrongMachine(u16),
    /// `EI_OSABI` is not `ELFOSABI_AMDGPU_HSA`.
    #[error("EI_OSABI is {0}, not ELFOSABI_AMDGPU_HSA (64): only HSA code objects are supported (not PAL or Mesa)")]
    WrongOsAbi(u8),
    /// `EI_ABIVERSION` names a code object version other than 4 or 5.
    #[error("EI_ABIVERSION {abi_version} ({description}) is not supported: only code object v4 (ABI version 2) and v5 (ABI version 3) are; compile with -mcode-object-version=4 or 5")]
    UnsupportedVersion {
        /// The raw `EI_ABIVERSION`.
        abi_version: u8,
        /// What it means.
        description: &'static str,
    },
    /// `EF_AMDGPU_MACH` is not a known amdgcn processor.
    #[error("e_flags {e_flags:#x}: EF_AMDGPU_MACH {mach:#x} is not a known amdgcn processor")]
    UnknownMach {
        /// Raw `e_flags`.
        e_flags: u32,
        /// The `EF_AMDGPU_MACH` byte.
        mach: u32,
    },
    /// The ELF structure is malformed (truncated, out-of-bounds offsets, …).
    #[error("malformed ELF: {context}: {detail}")]
    Elf {
        /// What was being read.
        context: String,
        /// The problem.
        detail: String,
    },
    /// The segments or image are inconsistent or too large.
    #[error("bad image: {0}")]
    Image(String),
    /// There is no `NT_AMDGPU_METADATA` note, nor a kernel descriptor
    /// symbol (`NAME.kd`) to find kernels by.
    #[error("no NT_AMDGPU_METADATA note (type 32, owner \"AMDGPU\") and no kernel descriptor symbol (NAME.kd) found: not a code object v3+, or stripped")]
    MissingMetadata,
    /// The metadata is not valid msgpack or violates the schema.
    #[error("bad NT_AMDGPU_METADATA: {0}")]
    Metadata(String),
    /// A kernel descriptor is missing, misplaced or inconsistent.
    #[error("kernel `{kernel}`: {detail}")]
    Kernel {
        /// Kernel name.
        kernel: String,
        /// The problem.
        detail: String,
    },
    /// A relocation cannot be applied.
    #[error("relocation {kind} at image offset {offset:#x} against `{symbol}`: {detail}")]
    Relocation {
        /// Relocation type name.
        kind: String,
        /// Image offset of the relocation.
        offset: u64,
        /// The referenced symbol (may be empty).
        symbol: String,
        /// The problem.
        detail: String,
    },
    /// The code object was built for another processor.
    #[error("code object is for {found}, not {expected}")]
    TargetMismatch {
        /// The requested processor.
        expected: String,
        /// The processor in the ELF header.
        found: String,
    },
    /// The offload bundle is malformed.
    #[error("bad clang offload bundle: {0}")]
    Bundle(String),
    /// A compressed offload bundle (`CCOB` magic) softgpu cannot
    /// decompress (an unknown version or method, or a corrupt stream).
    #[error("compressed offload bundle (CCOB): {0}; rebuild without --offload-compress or decompress it with clang-offload-bundler")]
    CompressedBundle(String),
    /// No entry of the offload bundle is for the requested target.
    #[error("offload bundle has no amdgcn-amd-amdhsa entry for {target}; entries: [{}]", available.join(", "))]
    NoBundleEntry {
        /// The requested target.
        target: String,
        /// The bundle's entry IDs.
        available: Vec<String>,
    },
}

impl Error {
    pub(crate) fn elf(context: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        Error::Elf {
            context: context.into(),
            detail: detail.to_string(),
        }
    }

    pub(crate) fn kernel(kernel: &str, detail: impl Into<String>) -> Self {
        Error::Kernel {
            kernel: kernel.to_string(),
            detail: detail.into(),
        }
    }
}
