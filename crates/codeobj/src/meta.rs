//! `NT_AMDGPU_METADATA` (msgpack) decoding.

use crate::Error;
use rmpv::Value;

/// Maximum msgpack nesting accepted in the metadata note.
const MAX_DEPTH: usize = 32;

/// The metadata of one kernel (an entry of `amdhsa.kernels`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelMeta {
    /// `.name`: source name of the kernel.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol, `NAME.kd`.
    pub symbol: String,
    /// `.args`: the explicit and hidden kernel arguments.
    pub args: Vec<KernelArg>,
    /// `.kernarg_segment_size`.
    pub kernarg_segment_size: u32,
    /// `.kernarg_segment_align`.
    pub kernarg_segment_align: u32,
    /// `.group_segment_fixed_size`.
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`.
    pub private_segment_fixed_size: u32,
    /// `.wavefront_size` (32 or 64).
    pub wavefront_size: u32,
    /// `.uses_dynamic_stack` (false when absent; code object v4 metadata has no such
    /// key, so read [`KernelDescriptor::uses_dynamic_stack`](crate::KernelDescriptor) there).
    pub uses_dynamic_stack: bool,
    /// `.sgpr_count`.
    pub sgpr_count: u32,
    /// `.vgpr_count`.
    pub vgpr_count: u32,
    /// `.agpr_count` (0 when absent).
    pub agpr_count: u32,
    /// `.sgpr_spill_count` (0 when absent).
    pub sgpr_spill_count: u32,
    /// `.vgpr_spill_count` (0 when absent).
    pub vgpr_spill_count: u32,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: u32,
    /// `.reqd_workgroup_size`.
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.workgroup_size_hint`.
    pub workgroup_size_hint: Option<[u32; 3]>,
    /// `.language`, e.g. `"OpenCL C"` or `"HIP"`.
    pub language: Option<String>,
    /// `.language_version`.
    pub language_version: Option<[u32; 2]>,
    /// `.uniform_work_group_size` (v5).
    pub uniform_work_group_size: Option<bool>,
    /// `.workgroup_processor_mode`.
    pub workgroup_processor_mode: Option<bool>,
    /// `.kind` (`"normal"`, `"init"`, `"fini"`).
    pub kind: Option<String>,
    /// Whether a metadata note describes the kernel. A kernel found by its
    /// `.kd` symbol alone, as ROCm's loader finds kernels, is described by
    /// its descriptor ([`KernelMeta::from_descriptor`]): its arguments are
    /// unknown, so it takes its kernarg segment as one by-value argument.
    pub described: bool,
}

/// One kernel argument (an entry of `.args`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    /// `.name`.
    pub name: Option<String>,
    /// `.type_name`.
    pub type_name: Option<String>,
    /// `.offset` in the kernarg segment.
    pub offset: u32,
    /// `.size` in bytes.
    pub size: u32,
    /// Alignment in the kernarg segment. The metadata does not record it, so it is
    /// derived: 8 for pointers and hidden pointer kinds, else the smallest power of
    /// two ≥ size (capped at 16), reduced until it divides `offset`.
    pub align: u32,
    /// `.value_kind`.
    pub value_kind: ValueKind,
    /// `.address_space`.
    pub address_space: Option<AddressSpace>,
    /// `.pointee_align` (dynamic shared pointers).
    pub pointee_align: Option<u32>,
    /// `.access` (`read_only`, `write_only`, `read_write`).
    pub access: Option<String>,
    /// `.actual_access`.
    pub actual_access: Option<String>,
    /// `.is_const`.
    pub is_const: bool,
    /// `.is_restrict`.
    pub is_restrict: bool,
    /// `.is_volatile`.
    pub is_volatile: bool,
    /// `.is_pipe`.
    pub is_pipe: bool,
}

impl KernelMeta {
    /// What a kernel without metadata is known by: the descriptor named
    /// `symbol` (`NAME.kd`) gives its segment sizes and wave size; its one
    /// argument spans the descriptor's `KERNARG_SIZE` bytes (none when 0).
    pub fn from_descriptor(symbol: &str, descriptor: &crate::KernelDescriptor) -> KernelMeta {
        let size = descriptor.kernarg_size;
        let segment = KernelArg {
            name: Some("kernarg_segment".into()),
            type_name: None,
            offset: 0,
            size,
            align: 8,
            value_kind: ValueKind::ByValue,
            address_space: None,
            pointee_align: None,
            access: None,
            actual_access: None,
            is_const: false,
            is_restrict: false,
            is_volatile: false,
            is_pipe: false,
        };
        KernelMeta {
            name: symbol.strip_suffix(".kd").unwrap_or(symbol).to_string(),
            symbol: symbol.to_string(),
            args: if size > 0 { vec![segment] } else { Vec::new() },
            kernarg_segment_size: size,
            kernarg_segment_align: 8,
            group_segment_fixed_size: descriptor.group_segment_fixed_size,
            private_segment_fixed_size: descriptor.private_segment_fixed_size,
            wavefront_size: descriptor.wavefront_size(),
            uses_dynamic_stack: descriptor.uses_dynamic_stack,
            sgpr_count: 0,
            vgpr_count: 0,
            agpr_count: 0,
            sgpr_spill_count: 0,
            vgpr_spill_count: 0,
            max_flat_workgroup_size: 1024,
            reqd_workgroup_size: None,
            workgroup_size_hint: None,
            language: None,
            language_version: None,
            uniform_work_group_size: None,
            workgroup_processor_mode: None,
            kind: None,
            described: false,
        }
    }

    /// Whether the kernel takes an argument of `kind` (a hidden service
    /// pointer, say).
    pub fn has_arg(&self, kind: &ValueKind) -> bool {
        self.args.iter().any(|a| a.value_kind == *kind)
    }
}

/// What a by-value argument's declared C type holds, as far as its name
/// says: what a kernel-argument check compares a given value's type with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numeric {
    /// `float`, `double`, `half`, …
    Float,
    /// `int`, `unsigned long`, `size_t`, `char`, `bool`, …
    Integer,
}

impl Numeric {
    /// The class of the C type `type_name` (qualifiers ignored); `None`
    /// for pointers, vectors, structs and names it does not know.
    pub fn of_type(type_name: &str) -> Option<Numeric> {
        let words: Vec<&str> = type_name
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "__private" | "restrict"))
            .collect();
        match words.join(" ").as_str() {
            "float" | "double" | "half" | "_Float16" | "__fp16" | "__bf16" => Some(Numeric::Float),
            "char" | "signed char" | "unsigned char" | "uchar" | "short" | "unsigned short"
            | "ushort" | "int" | "signed int" | "unsigned int" | "uint" | "unsigned" | "long"
            | "unsigned long" | "ulong" | "long long" | "unsigned long long" | "size_t"
            | "ptrdiff_t" | "intptr_t" | "uintptr_t" | "bool" | "_Bool" | "int8_t" | "uint8_t"
            | "int16_t" | "uint16_t" | "int32_t" | "uint32_t" | "int64_t" | "uint64_t" => {
                Some(Numeric::Integer)
            }
            _ => None,
        }
    }

    /// "a float" / "an integer", for messages.
    pub fn described(self) -> &'static str {
        match self {
            Numeric::Float => "a floating-point value",
            Numeric::Integer => "an integer",
        }
    }
}

impl KernelArg {
    /// The class of the argument's declared type, when the metadata names
    /// one it knows (`.type_name`: OpenCL with `-cl-kernel-arg-info`).
    pub fn numeric(&self) -> Option<Numeric> {
        self.type_name.as_deref().and_then(Numeric::of_type)
    }

    /// The byte range of the argument in the kernarg segment.
    pub fn range(&self) -> std::ops::Range<u32> {
        self.offset..self.offset.saturating_add(self.size)
    }
}

/// Address spaces of pointer arguments (`.address_space`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// `global`.
    Global,
    /// `constant`.
    Constant,
    /// `local` (LDS).
    Local,
    /// `private` (scratch).
    Private,
    /// `generic` (flat).
    Generic,
    /// `region` (GDS).
    Region,
}

impl AddressSpace {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "global" => Self::Global,
            "constant" => Self::Constant,
            "local" => Self::Local,
            "private" => Self::Private,
            "generic" => Self::Generic,
            "region" => Self::Region,
            _ => return None,
        })
    }
}

/// Kernel argument kinds (`.value_kind`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ValueKind {
    ByValue,
    GlobalBuffer,
    DynamicSharedPointer,
    Sampler,
    Image,
    Pipe,
    Queue,
    HiddenGlobalOffsetX,
    HiddenGlobalOffsetY,
    HiddenGlobalOffsetZ,
    HiddenNone,
    HiddenPrintfBuffer,
    HiddenHostcallBuffer,
    HiddenDefaultQueue,
    HiddenCompletionAction,
    HiddenMultigridSyncArg,
    HiddenBlockCountX,
    HiddenBlockCountY,
    HiddenBlockCountZ,
    HiddenGroupSizeX,
    HiddenGroupSizeY,
    HiddenGroupSizeZ,
    HiddenRemainderX,
    HiddenRemainderY,
    HiddenRemainderZ,
    HiddenGridDims,
    HiddenHeapV1,
    HiddenDynamicLdsSize,
    HiddenPrivateBase,
    HiddenSharedBase,
    HiddenQueuePtr,
    /// A value kind this crate does not know, verbatim.
    Other(String),
}

const KINDS: &[(&str, ValueKind)] = &[
    ("by_value", ValueKind::ByValue),
    ("global_buffer", ValueKind::GlobalBuffer),
    ("dynamic_shared_pointer", ValueKind::DynamicSharedPointer),
    ("sampler", ValueKind::Sampler),
    ("image", ValueKind::Image),
    ("pipe", ValueKind::Pipe),
    ("queue", ValueKind::Queue),
    ("hidden_global_offset_x", ValueKind::HiddenGlobalOffsetX),
    ("hidden_global_offset_y", ValueKind::HiddenGlobalOffsetY),
    ("hidden_global_offset_z", ValueKind::HiddenGlobalOffsetZ),
    ("hidden_none", ValueKind::HiddenNone),
    ("hidden_printf_buffer", ValueKind::HiddenPrintfBuffer),
    ("hidden_hostcall_buffer", ValueKind::HiddenHostcallBuffer),
    ("hidden_default_queue", ValueKind::HiddenDefaultQueue),
    (
        "hidden_completion_action",
        ValueKind::HiddenCompletionAction,
    ),
    (
        "hidden_multigrid_sync_arg",
        ValueKind::HiddenMultigridSyncArg,
    ),
    ("hidden_block_count_x", ValueKind::HiddenBlockCountX),
    ("hidden_block_count_y", ValueKind::HiddenBlockCountY),
    ("hidden_block_count_z", ValueKind::HiddenBlockCountZ),
    ("hidden_group_size_x", ValueKind::HiddenGroupSizeX),
    ("hidden_group_size_y", ValueKind::HiddenGroupSizeY),
    ("hidden_group_size_z", ValueKind::HiddenGroupSizeZ),
    ("hidden_remainder_x", ValueKind::HiddenRemainderX),
    ("hidden_remainder_y", ValueKind::HiddenRemainderY),
    ("hidden_remainder_z", ValueKind::HiddenRemainderZ),
    ("hidden_grid_dims", ValueKind::HiddenGridDims),
    ("hidden_heap_v1", ValueKind::HiddenHeapV1),
    ("hidden_dynamic_lds_size", ValueKind::HiddenDynamicLdsSize),
    ("hidden_private_base", ValueKind::HiddenPrivateBase),
    ("hidden_shared_base", ValueKind::HiddenSharedBase),
    ("hidden_queue_ptr", ValueKind::HiddenQueuePtr),
];

impl ValueKind {
    /// Parse a metadata `.value_kind` string; unknown strings become [`ValueKind::Other`].
    pub fn parse(s: &str) -> Self {
        KINDS
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, k)| k.clone())
            .unwrap_or_else(|| ValueKind::Other(s.to_string()))
    }

    /// The metadata spelling, e.g. `"hidden_block_count_x"`.
    pub fn as_str(&self) -> &str {
        match self {
            ValueKind::Other(s) => s,
            k => KINDS
                .iter()
                .find(|(_, v)| v == k)
                .map(|(n, _)| *n)
                .unwrap_or(""),
        }
    }

    /// Whether the runtime (not the user) fills this argument (`hidden_*`).
    pub fn is_hidden(&self) -> bool {
        self.as_str().starts_with("hidden_")
    }
}

/// The decoded metadata note.
#[derive(Debug, Default)]
pub(crate) struct Metadata {
    pub version: Option<[u32; 2]>,
    pub target: Option<String>,
    pub printf: Vec<String>,
    pub kernels: Vec<KernelMeta>,
}

/// One metadata from the notes of a code object, in order: their kernels
/// and printf formats together (a kernel whose descriptor symbol an
/// earlier note named is that note's), the version and target of the
/// first that has them. Notes naming different targets are an error.
pub(crate) fn merge(
    notes: impl Iterator<Item = Result<Metadata, Error>>,
) -> Result<Metadata, Error> {
    let mut merged = Metadata::default();
    let mut symbols = std::collections::HashSet::new();
    for note in notes {
        let note = note?;
        match (&merged.target, note.target) {
            (Some(a), Some(b)) if *a != b => {
                return Err(err(
                    "amdhsa.target",
                    format!("one note says {a}, another {b}"),
                ));
            }
            (None, b) => merged.target = b,
            _ => {}
        }
        merged.version = merged.version.or(note.version);
        merged.printf.extend(note.printf);
        (merged.kernels).extend(
            note.kernels
                .into_iter()
                .filter(|k| symbols.insert(k.symbol.clone())),
        );
    }
    Ok(merged)
}

fn err(path: &str, what: impl std::fmt::Display) -> Error {
    Error::Metadata(format!("{path}: {what}"))
}

fn get<'a>(map: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    map.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn as_map<'a>(v: &'a Value, path: &str) -> Result<&'a [(Value, Value)], Error> {
    v.as_map()
        .map(|m| m.as_slice())
        .ok_or_else(|| err(path, "expected a map"))
}

fn as_array<'a>(v: &'a Value, path: &str) -> Result<&'a [Value], Error> {
    v.as_array()
        .map(|m| m.as_slice())
        .ok_or_else(|| err(path, "expected an array"))
}

fn opt_str(map: &[(Value, Value)], key: &str, path: &str) -> Result<Option<String>, Error> {
    match get(map, key) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .map(|s| Some(s.to_string()))
            .ok_or_else(|| err(&format!("{path}.{key}"), "expected a UTF-8 string")),
    }
}

fn req_str(map: &[(Value, Value)], key: &str, path: &str) -> Result<String, Error> {
    opt_str(map, key, path)?.ok_or_else(|| err(path, format!("missing required key {key}")))
}

fn to_u32(v: &Value, path: &str) -> Result<u32, Error> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| err(path, "expected an unsigned 32-bit integer"))
}

fn opt_u32(map: &[(Value, Value)], key: &str, path: &str) -> Result<Option<u32>, Error> {
    get(map, key)
        .map(|v| to_u32(v, &format!("{path}.{key}")))
        .transpose()
}

fn req_u32(map: &[(Value, Value)], key: &str, path: &str) -> Result<u32, Error> {
    opt_u32(map, key, path)?.ok_or_else(|| err(path, format!("missing required key {key}")))
}

fn opt_bool(map: &[(Value, Value)], key: &str, path: &str) -> Result<Option<bool>, Error> {
    match get(map, key) {
        None => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| err(&format!("{path}.{key}"), "expected a boolean")),
    }
}

fn opt_u32s<const N: usize>(
    map: &[(Value, Value)],
    key: &str,
    path: &str,
) -> Result<Option<[u32; N]>, Error> {
    let Some(v) = get(map, key) else {
        return Ok(None);
    };
    let p = format!("{path}.{key}");
    let a = as_array(v, &p)?;
    if a.len() != N {
        return Err(err(&p, format!("expected {N} integers, found {}", a.len())));
    }
    let mut out = [0u32; N];
    for (o, v) in out.iter_mut().zip(a) {
        *o = to_u32(v, &p)?;
    }
    Ok(Some(out))
}

fn derive_align(kind: &ValueKind, size: u32, offset: u32) -> u32 {
    let mut a = match kind {
        ValueKind::ByValue | ValueKind::HiddenNone | ValueKind::Other(_) => size
            .max(1)
            .checked_next_power_of_two()
            .unwrap_or(16)
            .min(16),
        k if k.is_hidden() => size.max(1).checked_next_power_of_two().unwrap_or(8).min(8),
        _ => 8,
    };
    while a > 1 && !offset.is_multiple_of(a) {
        a /= 2;
    }
    a
}

fn parse_arg(v: &Value, path: &str) -> Result<KernelArg, Error> {
    let m = as_map(v, path)?;
    let value_kind = ValueKind::parse(&req_str(m, ".value_kind", path)?);
    let offset = req_u32(m, ".offset", path)?;
    let size = req_u32(m, ".size", path)?;
    let address_space = match opt_str(m, ".address_space", path)? {
        None => None,
        Some(s) => Some(AddressSpace::parse(&s).ok_or_else(|| {
            err(
                &format!("{path}.address_space"),
                format!("unknown address space `{s}`"),
            )
        })?),
    };
    Ok(KernelArg {
        name: opt_str(m, ".name", path)?,
        type_name: opt_str(m, ".type_name", path)?,
        offset,
        size,
        align: derive_align(&value_kind, size, offset),
        value_kind,
        address_space,
        pointee_align: opt_u32(m, ".pointee_align", path)?,
        access: opt_str(m, ".access", path)?,
        actual_access: opt_str(m, ".actual_access", path)?,
        is_const: opt_bool(m, ".is_const", path)?.unwrap_or(false),
        is_restrict: opt_bool(m, ".is_restrict", path)?.unwrap_or(false),
        is_volatile: opt_bool(m, ".is_volatile", path)?.unwrap_or(false),
        is_pipe: opt_bool(m, ".is_pipe", path)?.unwrap_or(false),
    })
}

fn parse_kernel(v: &Value, path: &str) -> Result<KernelMeta, Error> {
    let m = as_map(v, path)?;
    let name = req_str(m, ".name", path)?;
    let path = &format!("{path} ({name})");
    let mut args = Vec::new();
    if let Some(a) = get(m, ".args") {
        for (i, arg) in as_array(a, &format!("{path}.args"))?.iter().enumerate() {
            args.push(parse_arg(arg, &format!("{path}.args[{i}]"))?);
        }
    }
    let kernarg_segment_size = req_u32(m, ".kernarg_segment_size", path)?;
    for (i, a) in args.iter().enumerate() {
        let end = u64::from(a.offset) + u64::from(a.size);
        if end > u64::from(kernarg_segment_size) {
            return Err(err(
                &format!("{path}.args[{i}]"),
                format!(
                    "argument bytes {}..{end} exceed .kernarg_segment_size {kernarg_segment_size}",
                    a.offset
                ),
            ));
        }
    }
    let kernarg_segment_align = opt_u32(m, ".kernarg_segment_align", path)?.unwrap_or(8);
    if !kernarg_segment_align.is_power_of_two() {
        return Err(err(
            path,
            format!(".kernarg_segment_align {kernarg_segment_align} is not a power of two"),
        ));
    }
    let wavefront_size = req_u32(m, ".wavefront_size", path)?;
    if wavefront_size != 32 && wavefront_size != 64 {
        return Err(err(
            path,
            format!(".wavefront_size {wavefront_size} is neither 32 nor 64"),
        ));
    }
    Ok(KernelMeta {
        symbol: req_str(m, ".symbol", path)?,
        args,
        kernarg_segment_size,
        kernarg_segment_align,
        group_segment_fixed_size: req_u32(m, ".group_segment_fixed_size", path)?,
        private_segment_fixed_size: req_u32(m, ".private_segment_fixed_size", path)?,
        wavefront_size,
        uses_dynamic_stack: opt_bool(m, ".uses_dynamic_stack", path)?.unwrap_or(false),
        sgpr_count: opt_u32(m, ".sgpr_count", path)?.unwrap_or(0),
        vgpr_count: opt_u32(m, ".vgpr_count", path)?.unwrap_or(0),
        agpr_count: opt_u32(m, ".agpr_count", path)?.unwrap_or(0),
        sgpr_spill_count: opt_u32(m, ".sgpr_spill_count", path)?.unwrap_or(0),
        vgpr_spill_count: opt_u32(m, ".vgpr_spill_count", path)?.unwrap_or(0),
        max_flat_workgroup_size: opt_u32(m, ".max_flat_workgroup_size", path)?.unwrap_or(1024),
        reqd_workgroup_size: opt_u32s(m, ".reqd_workgroup_size", path)?,
        workgroup_size_hint: opt_u32s(m, ".workgroup_size_hint", path)?,
        language: opt_str(m, ".language", path)?,
        language_version: opt_u32s(m, ".language_version", path)?,
        uniform_work_group_size: match get(m, ".uniform_work_group_size") {
            // LLVM writes this as an integer 1; accept a boolean too.
            Some(Value::Boolean(b)) => Some(*b),
            Some(v) => Some(to_u32(v, &format!("{path}.uniform_work_group_size"))? != 0),
            None => None,
        },
        workgroup_processor_mode: match get(m, ".workgroup_processor_mode") {
            Some(Value::Boolean(b)) => Some(*b),
            Some(v) => Some(to_u32(v, &format!("{path}.workgroup_processor_mode"))? != 0),
            None => None,
        },
        kind: opt_str(m, ".kind", path)?,
        name,
        described: true,
    })
}

/// Decode the msgpack description of an `NT_AMDGPU_METADATA` note.
pub(crate) fn parse(desc: &[u8]) -> Result<Metadata, Error> {
    let mut rd = desc;
    let root = rmpv::decode::read_value_with_max_depth(&mut rd, MAX_DEPTH)
        .map_err(|e| Error::Metadata(format!("invalid msgpack: {e}")))?;
    let m = as_map(&root, "metadata root")?;
    let mut md = Metadata {
        version: opt_u32s(m, "amdhsa.version", "metadata")?,
        target: opt_str(m, "amdhsa.target", "metadata")?,
        ..Default::default()
    };
    if let Some(p) = get(m, "amdhsa.printf") {
        for (i, s) in as_array(p, "amdhsa.printf")?.iter().enumerate() {
            md.printf.push(
                s.as_str()
                    .ok_or_else(|| err(&format!("amdhsa.printf[{i}]"), "expected a string"))?
                    .to_string(),
            );
        }
    }
    let kernels =
        get(m, "amdhsa.kernels").ok_or_else(|| err("metadata", "missing amdhsa.kernels"))?;
    for (i, k) in as_array(kernels, "amdhsa.kernels")?.iter().enumerate() {
        md.kernels
            .push(parse_kernel(k, &format!("amdhsa.kernels[{i}]"))?);
    }
    Ok(md)
}

#[cfg(test)]
mod numeric {
    use super::Numeric;

    #[test]
    fn declared_types_are_floats_integers_or_unknown() {
        for t in ["float", "const double", "half"] {
            assert_eq!(Numeric::of_type(t), Some(Numeric::Float), "{t}");
        }
        for t in [
            "int",
            "unsigned int",
            "uint",
            "size_t",
            "const long",
            "char",
            "bool",
        ] {
            assert_eq!(Numeric::of_type(t), Some(Numeric::Integer), "{t}");
        }
        for t in ["float*", "float4", "struct S", "int*", ""] {
            assert_eq!(Numeric::of_type(t), None, "{t}");
        }
    }
}
