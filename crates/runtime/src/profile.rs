//! Device profiles: what a GPU agent reports and how big its resources are.
//!
//! A profile is a JSON document. One for each part softgpu emulates is
//! built in (one per row of `softgpu_isa::TARGETS`, named after the
//! processor), and [`OTHER_PARTS`] adds more parts of a processor under
//! their own names (`mi250x`, `mi300a`); `SOFTGPU_PROFILE` names a
//! built-in profile or a path to a JSON file.
//!
//! Schema 2 says where every value comes from: each field is
//! `{"value": V, "source": KIND, "ref": TEXT}`, KIND one of `amd-spec`
//! (an AMD document, named in `ref`), `llvm` (LLVM's AMDGPU target
//! definitions), `kfd-topology` (as the amdgpu driver reports it on the
//! part), `measured` (on hardware; `ref` says where) or `softgpu-default`
//! (softgpu's own value; `ref` says why). Beside the fields a schema 2
//! document has a `profile_id`, a `revision`, the `max_fidelity` softgpu
//! reaches for the part, whether `conformance_allowed` claims may be made,
//! and `quirks`. Schema 1 (the fields' values alone) is still read, with
//! no provenance.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Error, Result};

/// The profile chosen when `SOFTGPU_PROFILE` is unset.
pub const DEFAULT_PROFILE: &str = softgpu_isa::DEFAULT_TARGET;
/// The largest profile document read from a file (the built-in ones are
/// under 20 KiB).
pub const MAX_PROFILE_SIZE: u64 = 1 << 20;

/// `(name, JSON)` of every built-in profile: one per row of the target
/// table (`softgpu_isa::for_each_target!`), each from `profiles/<name>.json`.
macro_rules! built_in {
    ($($name:ident $family:ident;)*) => {
        const BUILT_IN: &[(&str, &str)] = &[
            $((stringify!($name), include_str!(concat!("../profiles/", stringify!($name), ".json"))),)*
        ];
    };
}
softgpu_isa::for_each_target!(built_in);

/// `(name, processor, JSON)` of the built-in profiles beside each
/// processor's default (`profiles/<processor>.json`, one per target row):
/// other parts of the same processor, each from `profiles/<name>.json`. A
/// name is served once its processor is a row of the target table; until
/// then it is refused, saying so. The processors named here whose rows do
/// not exist yet also have their default profile written
/// (`profiles/gfx90a.json`, `profiles/gfx942.json`), which the target
/// table includes once it lists them.
pub const OTHER_PARTS: &[(&str, &str, &str)] = &[
    // One graphics compute die of an Instinct MI250X (the KFD shows each
    // as its own gfx90a agent); gfx90a's default is the MI210.
    ("mi250x", "gfx90a", include_str!("../profiles/mi250x.json")),
    // The Instinct MI300A APU; gfx942's default is the MI300X.
    ("mi300a", "gfx942", include_str!("../profiles/mi300a.json")),
];

/// Whether `processor` is a row of the target table.
fn is_target(processor: &str) -> bool {
    softgpu_isa::TARGETS.iter().any(|t| t.name == processor)
}

/// How close to the real part softgpu's results are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fidelity {
    /// The interfaces are right (APIs, ABI, launch rules); results and
    /// timing are not claimed.
    Abi = 0,
    /// Every instruction's result is the hardware's, bit for bit; timing is
    /// not modelled.
    #[default]
    IsaExact = 1,
    /// ISA-exact, plus an analytical estimate of time on the part.
    TimingEstimated = 2,
}

impl Fidelity {
    /// The level's number in C (`softgpu_fidelity_t` of
    /// `include/softgpu_ext.h`).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The level's name as documents and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Abi => "abi",
            Fidelity::IsaExact => "isa-exact",
            Fidelity::TimingEstimated => "timing-estimated",
        }
    }
}

/// Where a profile field's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// An AMD document (its name in the reference).
    AmdSpec,
    /// LLVM's AMDGPU target definitions.
    Llvm,
    /// The amdgpu driver's KFD topology on the part.
    KfdTopology,
    /// Measured on hardware (the reference says where).
    Measured,
    /// softgpu's own value (the reference says why).
    SoftgpuDefault,
}

impl Source {
    /// The kind's name as documents spell it.
    pub fn name(self) -> &'static str {
        match self {
            Source::AmdSpec => "amd-spec",
            Source::Llvm => "llvm",
            Source::KfdTopology => "kfd-topology",
            Source::Measured => "measured",
            Source::SoftgpuDefault => "softgpu-default",
        }
    }
}

/// A field's source and the reference that backs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The kind of source.
    pub source: Source,
    /// The document, definition or place; for a default, why.
    #[serde(rename = "ref")]
    pub reference: String,
}

/// One GPU's description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Format version of the document (1 or 2).
    pub schema: u32,
    /// The profile's identity (schema 2; empty for schema 1).
    #[serde(default)]
    pub profile_id: String,
    /// The profile's revision (schema 2).
    #[serde(default)]
    pub revision: u32,
    /// The highest fidelity softgpu reaches for this part.
    #[serde(default)]
    pub max_fidelity: Fidelity,
    /// Whether results on this profile may be claimed as conformance
    /// results for the part.
    #[serde(default)]
    pub conformance_allowed: bool,
    /// Named behaviours of the part the executor honours where the ISA
    /// guide is silent or the hardware differs from it
    /// (`softgpu_exec::quirks`, which says what each does); a name the
    /// executor does not honour for the part's family is refused.
    #[serde(default)]
    pub quirks: Vec<String>,
    /// Where each field's value comes from, by field name (schema 2).
    #[serde(default)]
    pub provenance: BTreeMap<String, Provenance>,
    /// Processor name, e.g. `gfx1151`; also the code-object target.
    pub name: String,
    pub marketing_name: String,
    pub vendor: String,
    pub chip_id: u32,
    /// The amdgpu driver's ASIC family (`AMDGPU_FAMILY_*` in
    /// `amdgpu_drm.h`: 145 for GC 11.0.x such as gfx1100, 150 for GC
    /// 11.5.x such as gfx1151), which HSA reports as
    /// `HSA_AMD_AGENT_INFO_ASIC_FAMILY_ID`. Optional in a document (0 =
    /// not stated).
    #[serde(default)]
    pub asic_family_id: u32,
    /// Whether the GPU shares system memory (an APU such as gfx1151).
    pub is_apu: bool,
    pub compute_units: u32,
    /// Accelerator complex dies (XCDs) the agent's compute units are
    /// spread over: 8 on an Instinct MI300X, 6 on an MI300A, 1 on a
    /// single-die part. Optional in a document (1 when left out).
    #[serde(default = "one")]
    pub xcds: u32,
    pub simds_per_cu: u32,
    pub shader_engines: u32,
    pub shader_arrays_per_engine: u32,
    pub wave_sizes: Vec<u32>,
    pub max_waves_per_cu: u32,
    pub max_workgroup_size: u32,
    pub max_workgroup_dims: [u32; 3],
    pub max_grid_dims: [u32; 3],
    pub lds_bytes: u32,
    /// Waves one SIMD holds at most.
    #[serde(default = "gfx11::max_waves_per_simd")]
    pub max_waves_per_simd: u32,
    /// VGPRs per lane one SIMD's register file holds in wave32 (half as
    /// many in wave64).
    #[serde(default = "gfx11::vgprs_per_simd_wave32")]
    pub vgprs_per_simd_wave32: u32,
    /// The block VGPRs are allocated in, in wave32 (half in wave64).
    #[serde(default = "gfx11::vgpr_alloc_granule_wave32")]
    pub vgpr_alloc_granule_wave32: u32,
    /// LDS of one workgroup processor (`cus_per_wgp` compute units),
    /// shared by the workgroups resident on it. On a part without
    /// workgroup processors (CDNA: `cus_per_wgp` 1) the LDS of one
    /// compute unit.
    #[serde(default = "gfx11::lds_bytes_per_wgp")]
    pub lds_bytes_per_wgp: u32,
    /// Compute units of one workgroup processor: 2 on RDNA (a WGP pairs
    /// two CUs; CU mode gives a workgroup one CU and half the LDS), 1 on
    /// CDNA, whose compute units stand alone. Optional in a document (2
    /// when left out).
    #[serde(default = "gfx11::cus_per_wgp")]
    pub cus_per_wgp: u32,
    pub cache_line_bytes: u32,
    pub l1_cache_bytes: u32,
    pub l2_cache_bytes: u32,
    pub l3_cache_bytes: u32,
    /// The memory bus the profile reports (HIP asks for it); softgpu's
    /// device memory is host memory, so these only describe the part.
    pub memory_bus_width_bits: u32,
    pub memory_clock_mhz: u32,
    pub clock_mhz: u32,
    pub memory: MemorySizes,
    pub queues: QueueLimits,
    /// The part's throughputs and latencies the time estimate uses
    /// (`crate::estimate`); `None` in a document without them.
    #[serde(default)]
    pub analytical_performance: Option<Performance>,
}

/// Throughputs and latencies of the part, per compute unit at
/// `clock_mhz` unless a name says otherwise: what the analytical time
/// estimate (`crate::estimate`) divides executed counts by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Performance {
    /// Lanes one SIMD's vector ALU completes per clock: a wave32 VALU
    /// instruction issues in one clock.
    pub valu_lanes_per_clock: u32,
    /// Operations one dual-issued `v_dual_*` (VOPD) instruction performs
    /// in its single issue.
    pub vopd_ops_per_issue: u32,
    /// Clocks a wave64 VALU instruction keeps its SIMD busy.
    pub wave64_valu_clocks: u32,
    /// Clocks a wave32 transcendental instruction (`v_exp`, `v_log`,
    /// `v_rcp`, `v_rsq`, `v_sqrt`, `v_sin`, `v_cos`) keeps its SIMD busy.
    pub trans_clocks: u32,
    /// Clocks a wave32 double-precision instruction keeps its SIMD busy.
    pub f64_clocks: u32,
    /// Clocks a wave32 `v_wmma_*` (16x16x16) keeps its SIMD busy.
    pub wmma_clocks: u32,
    /// Scalar instructions each SIMD issues per clock.
    pub salu_per_clock: u32,
    /// Bytes LDS delivers to one compute unit per clock.
    pub lds_bytes_per_clock: u32,
    /// Bytes the vector memory path (L0 cache) delivers to one compute
    /// unit per clock.
    pub vmem_bytes_per_clock: u32,
    /// Peak bandwidth of the part's memory, bytes per second.
    pub memory_bytes_per_second: u64,
    /// Latency of a vector memory load that misses the caches, ns.
    pub memory_latency_ns: u32,
    /// Latency of an LDS or scalar-memory access, clocks.
    pub lds_latency_clocks: u32,
    /// Clocks a workgroup barrier costs once every wave has arrived.
    pub barrier_clocks: u32,
    /// Time from one dispatch's start to a following dispatch's start
    /// when the kernels do nothing, ns.
    pub launch_overhead_ns: u32,
    /// Dense matrix-core operations (a multiply and an add count two) one
    /// compute unit completes per clock, by input type: the MFMA rates of
    /// a CDNA part (its peak matrix throughput over compute units times
    /// clock). Optional in a document; empty (left out) on parts whose
    /// matrix instructions are costed by `wmma_clocks`, as RDNA's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub matrix_ops_per_clock: BTreeMap<MatrixType, u32>,
}

/// The input type of a matrix-core instruction, as [`Performance`]'s
/// `matrix_ops_per_clock` keys it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatrixType {
    /// Double precision (`v_mfma_f64_*`).
    F64,
    /// Single precision (`v_mfma_f32_*_f32`).
    F32,
    /// gfx940's reduced-precision f32 (`v_mfma_f32_*_xf32`; AMD's
    /// documents call the rate TF32).
    Xf32,
    /// Half precision inputs (`v_mfma_*_f16`).
    F16,
    /// bfloat16 inputs (`v_mfma_*_bf16*`).
    Bf16,
    /// 8-bit integer inputs (`v_mfma_i32_*_i8`).
    I8,
    /// 8-bit float inputs, either encoding (gfx940's `v_mfma_f32_*_fp8_*`
    /// and `*_bf8_*`).
    Fp8,
}

impl MatrixType {
    /// Every type, in the order documents list them.
    pub const ALL: [MatrixType; 7] = [
        MatrixType::F64,
        MatrixType::F32,
        MatrixType::Xf32,
        MatrixType::F16,
        MatrixType::Bf16,
        MatrixType::I8,
        MatrixType::Fp8,
    ];

    /// The type's name as documents spell it.
    pub fn name(self) -> &'static str {
        match self {
            MatrixType::F64 => "f64",
            MatrixType::F32 => "f32",
            MatrixType::Xf32 => "xf32",
            MatrixType::F16 => "f16",
            MatrixType::Bf16 => "bf16",
            MatrixType::I8 => "i8",
            MatrixType::Fp8 => "fp8",
        }
    }
}

impl Performance {
    /// The section's fields, each with its provenance in schema 2.
    pub const FIELDS: &'static [&'static str] = &[
        "valu_lanes_per_clock",
        "vopd_ops_per_issue",
        "wave64_valu_clocks",
        "trans_clocks",
        "f64_clocks",
        "wmma_clocks",
        "salu_per_clock",
        "lds_bytes_per_clock",
        "vmem_bytes_per_clock",
        "memory_bytes_per_second",
        "memory_latency_ns",
        "lds_latency_clocks",
        "barrier_clocks",
        "launch_overhead_ns",
    ];

    /// The section's fields a document may leave out (each with its
    /// provenance when given).
    pub const OPTIONAL_FIELDS: &'static [&'static str] = &["matrix_ops_per_clock"];

    /// Dense matrix-core operations one compute unit completes per clock
    /// on inputs of `ty`; `None` when the part has no matrix core for the
    /// type (or the profile states no matrix rates).
    pub fn matrix_ops_per_clock(&self, ty: MatrixType) -> Option<u32> {
        self.matrix_ops_per_clock.get(&ty).copied()
    }

    /// SIMD clocks one wave's matrix instruction keeps its SIMD busy, for
    /// an instruction of `ops` operations (`2 * M * N * K` for a dense
    /// `MxNxK` MFMA) on inputs of `ty`, when the part's compute unit
    /// spreads that rate over `simds_per_cu` matrix cores; `None` without
    /// a rate for `ty`.
    pub fn matrix_clocks(&self, ty: MatrixType, ops: u64, simds_per_cu: u32) -> Option<u64> {
        let per_cu = u64::from(self.matrix_ops_per_clock(ty)?);
        let per_simd = (per_cu / u64::from(simds_per_cu.max(1))).max(1);
        Some(ops.div_ceil(per_simd))
    }
}

/// Values of the occupancy facts for a schema 1 document, which predates
/// them: gfx11's, with the 1x VGPR file.
mod gfx11 {
    pub fn max_waves_per_simd() -> u32 {
        16
    }
    pub fn vgprs_per_simd_wave32() -> u32 {
        1024
    }
    pub fn vgpr_alloc_granule_wave32() -> u32 {
        16
    }
    pub fn lds_bytes_per_wgp() -> u32 {
        128 * 1024
    }
    pub fn cus_per_wgp() -> u32 {
        2
    }
}

fn one() -> u32 {
    1
}

/// Sizes of the memory pools.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySizes {
    /// The coarse-grained device pool of each GPU agent.
    pub device_bytes: u64,
    /// The fine-grained system pool of the CPU agent.
    pub system_bytes: u64,
    /// The kernarg pool of the CPU agent.
    pub kernarg_bytes: u64,
}

/// AQL queue limits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueLimits {
    /// Smallest and largest ring, in packets (powers of two).
    pub min_size: u32,
    pub max_size: u32,
    /// Queues one agent may have at once.
    pub max_queues: u32,
}

/// The section of a schema 2 document whose fields describe performance.
const PERFORMANCE: &str = "analytical_performance";

/// The document-level keys of schema 2 (beside `fields` and
/// `analytical_performance`).
const V2_META: [&str; 6] = [
    "schema",
    "profile_id",
    "revision",
    "max_fidelity",
    "conformance_allowed",
    "quirks",
];

/// A schema 2 document as a [`Profile`]: each field's value, and its
/// provenance kept by name.
/// A profile's JSON error, at `place` (a field) when the error does not
/// say.
fn json(place: Option<String>) -> impl FnOnce(serde_json::Error) -> Error {
    move |e| Error::Profile {
        place,
        source: e.into(),
    }
}

fn from_v2(doc: serde_json::Value) -> Result<Profile> {
    let serde_json::Value::Object(doc) = doc else {
        return Err(invalid("device profile: not a JSON object"));
    };
    let mut flat = serde_json::Map::new();
    let mut provenance = BTreeMap::new();
    for (key, value) in doc {
        if V2_META.contains(&key.as_str()) {
            flat.insert(key, value);
            continue;
        }
        match key.as_str() {
            "fields" => flat.extend(section(value, "", &mut provenance)?),
            PERFORMANCE => {
                let fields = section(value, "analytical_performance.", &mut provenance)?;
                flat.insert(key, fields.into());
            }
            _ => {
                return Err(invalid(format!(
                    "device profile: unknown key {key} (schema 2 has {}, fields and {PERFORMANCE})",
                    V2_META.join(", ")
                )))
            }
        }
    }
    let mut profile: Profile = serde_json::from_value(flat.into()).map_err(json(None))?;
    profile.provenance = provenance;
    Ok(profile)
}

/// One section of `{value, source, ref}` fields as its values alone; the
/// provenance goes into `provenance` under `prefix` + the field's name.
fn section(
    value: serde_json::Value,
    prefix: &str,
    provenance: &mut BTreeMap<String, Provenance>,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let serde_json::Value::Object(fields) = value else {
        return Err(invalid(format!(
            "device profile: {} is not an object",
            prefix.strip_suffix('.').unwrap_or("fields")
        )));
    };
    let mut flat = serde_json::Map::new();
    for (name, entry) in fields {
        let name = format!("{prefix}{name}");
        let serde_json::Value::Object(mut entry) = entry else {
            return Err(invalid(format!(
                "device profile: field {name} is not {{value, source, ref}}"
            )));
        };
        let value = entry
            .remove("value")
            .ok_or_else(|| invalid(format!("device profile: field {name} has no value")))?;
        let source: Provenance =
            serde_json::from_value(entry.into()).map_err(json(Some(format!("field {name}"))))?;
        provenance.insert(name.clone(), source);
        flat.insert(name[prefix.len()..].to_string(), value);
    }
    Ok(flat)
}

impl Profile {
    /// The fields that describe the part (every one needs a provenance
    /// in schema 2).
    pub const FIELDS: &'static [&'static str] = &[
        "name",
        "marketing_name",
        "vendor",
        "chip_id",
        "asic_family_id",
        "is_apu",
        "compute_units",
        "simds_per_cu",
        "shader_engines",
        "shader_arrays_per_engine",
        "wave_sizes",
        "max_waves_per_cu",
        "max_workgroup_size",
        "max_workgroup_dims",
        "max_grid_dims",
        "lds_bytes",
        "max_waves_per_simd",
        "vgprs_per_simd_wave32",
        "vgpr_alloc_granule_wave32",
        "lds_bytes_per_wgp",
        "cache_line_bytes",
        "l1_cache_bytes",
        "l2_cache_bytes",
        "l3_cache_bytes",
        "memory_bus_width_bits",
        "memory_clock_mhz",
        "clock_mhz",
        "memory",
        "queues",
    ];

    /// The fields a document may leave out, their defaults then holding
    /// (each with its provenance when given).
    pub const OPTIONAL_FIELDS: &'static [&'static str] = &["xcds", "cus_per_wgp"];

    /// The names of the built-in profiles: each target's, then those of
    /// [`OTHER_PARTS`] whose processor is a target.
    pub fn built_in_names() -> impl Iterator<Item = &'static str> {
        let others = OTHER_PARTS
            .iter()
            .filter(|(_, processor, _)| is_target(processor))
            .map(|(n, _, _)| *n);
        BUILT_IN.iter().map(|(n, _)| *n).chain(others)
    }

    /// Whether `name` names a built-in profile, served or not yet (a name
    /// of [`OTHER_PARTS`] or its processor).
    fn is_built_in_name(name: &str) -> bool {
        BUILT_IN.iter().any(|(n, _)| *n == name)
            || OTHER_PARTS.iter().any(|(n, p, _)| *n == name || *p == name)
    }

    /// A built-in profile by name: a processor's default, or another part
    /// of [`OTHER_PARTS`] once its processor is emulated.
    pub fn built_in(name: &str) -> Result<Profile> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
            return Profile::from_json(text);
        }
        let other = OTHER_PARTS.iter().find(|(n, _, _)| *n == name);
        if let Some(&(_, _, text)) = other.filter(|(_, p, _)| is_target(p)) {
            return Profile::from_json(text);
        }
        let processor = match other {
            Some((_, processor, _)) => Some(*processor),
            None => OTHER_PARTS
                .iter()
                .find(|(_, p, _)| *p == name)
                .map(|(_, p, _)| *p),
        };
        let served = Self::built_in_names().collect::<Vec<_>>().join(", ");
        Err(invalid(match processor {
            Some(processor) => format!(
                "built-in profile {name} describes a {processor}, a processor softgpu does not emulate yet (built in: {served})"
            ),
            None => format!("no built-in profile {name} (built in: {served})"),
        }))
    }

    /// Parses and checks a profile document (schema 1 or 2) for a part
    /// softgpu emulates; an error names the field at fault.
    pub fn from_json(text: &str) -> Result<Profile> {
        let p = Profile::parse(text)?;
        p.check_emulated()?;
        Ok(p)
    }

    /// Parses a profile document and checks it as a description of its
    /// part, whether or not softgpu emulates the processor.
    fn parse(text: &str) -> Result<Profile> {
        let doc: serde_json::Value = serde_json::from_str(text).map_err(json(None))?;
        let p: Profile = match doc.get("schema").and_then(|s| s.as_u64()) {
            Some(2) => from_v2(doc)?,
            _ => serde_json::from_value(doc).map_err(json(None))?,
        };
        p.validate()?;
        Ok(p)
    }

    /// The provenance of `field`, if the document stated one.
    pub fn source_of(&self, field: &str) -> Option<&Provenance> {
        self.provenance.get(field)
    }

    /// A built-in name or a path to a JSON file of at most
    /// [`MAX_PROFILE_SIZE`] bytes.
    pub fn named_or_path(spec: &str) -> Result<Profile> {
        if Profile::is_built_in_name(spec) {
            return Profile::built_in(spec);
        }
        // Bounded, and only a regular file: `/dev/zero` or a FIFO named as
        // a profile is an error, not endless memory or a hang.
        let bytes =
            softgpu_codeobj::read_file(spec, MAX_PROFILE_SIZE).map_err(|e| Error::Profile {
                place: None,
                source: e.into(),
            })?;
        let text = String::from_utf8(bytes).map_err(|e| Error::Profile {
            place: Some(spec.to_string()),
            source: e.into(),
        })?;
        Profile::from_json(&text)
    }

    /// The compute-unit layout workgroups are placed on.
    pub fn topology(&self) -> softgpu_exec::Topology {
        softgpu_exec::Topology {
            compute_units: self.compute_units,
            shader_engines: self.shader_engines,
            arrays_per_engine: self.shader_arrays_per_engine,
        }
    }

    /// The part's peak FP32 rate in FLOP/s: every SIMD lane doing a fused
    /// multiply-add each clock, dual-issued; `None` without performance
    /// figures.
    pub fn peak_fp32_flops(&self) -> Option<f64> {
        let perf = self.analytical_performance.as_ref()?;
        // In f64: a document's figures may be any u32.
        let lanes = f64::from(self.compute_units)
            * f64::from(self.simds_per_cu)
            * f64::from(perf.valu_lanes_per_clock);
        Some(lanes * 2.0 * f64::from(perf.vopd_ops_per_issue) * f64::from(self.clock_mhz) * 1e6)
    }

    /// The part's peak dense matrix-core rate on inputs of `ty`, in
    /// operations per second (a multiply and an add count two); `None`
    /// when the profile states no matrix rate for `ty`.
    pub fn peak_matrix_ops(&self, ty: MatrixType) -> Option<f64> {
        let per_cu = self
            .analytical_performance
            .as_ref()?
            .matrix_ops_per_clock(ty)?;
        Some(f64::from(self.compute_units) * f64::from(per_cu) * f64::from(self.clock_mhz) * 1e6)
    }

    /// The fidelity of an output of this profile's device: `estimated` if
    /// it carries a time estimate, else at most ISA-exact.
    pub fn fidelity_of(&self, estimated: bool) -> Fidelity {
        if estimated {
            self.max_fidelity
        } else {
            self.max_fidelity.min(Fidelity::IsaExact)
        }
    }

    /// The full ISA name HSA reports, e.g. `amdgcn-amd-amdhsa--gfx1151`.
    pub fn isa_name(&self) -> String {
        format!("amdgcn-amd-amdhsa--{}", self.name)
    }

    /// Every field name a schema 2 document must give a provenance,
    /// the performance section's as `analytical_performance.NAME`.
    pub fn provenanced_fields() -> impl Iterator<Item = String> {
        let performance = Performance::FIELDS
            .iter()
            .map(|f| format!("{PERFORMANCE}.{f}"));
        Profile::FIELDS
            .iter()
            .map(|f| f.to_string())
            .chain(performance)
    }

    /// Checks the document as a description of its part: provenance,
    /// and values that fit together. Whether softgpu runs the processor is
    /// [`Profile::check_emulated`]'s question.
    fn validate(&self) -> Result<()> {
        let bad = |why: &str| Err(invalid(format!("device profile {}: {why}", self.name)));
        if self.schema != 1 && self.schema != 2 {
            return bad("unknown schema version (expected 1 or 2)");
        }
        if self.schema == 2 {
            if self.analytical_performance.is_none() {
                return bad("it has no analytical_performance section");
            }
            for field in Profile::provenanced_fields() {
                if !self.provenance.contains_key(&field) {
                    return bad(&format!("field {field} has no provenance"));
                }
            }
            // Every provenance given, the optional fields' included.
            if let Some((field, _)) = self
                .provenance
                .iter()
                .find(|(_, p)| p.reference.trim().is_empty())
            {
                return bad(&format!("field {field}: its provenance has an empty ref"));
            }
        }
        if self.simds_per_cu == 0 {
            return bad("simds_per_cu must be non-zero");
        }
        if self.max_waves_per_simd == 0
            || self.max_waves_per_simd.checked_mul(self.simds_per_cu) != Some(self.max_waves_per_cu)
        {
            return bad(
                "max_waves_per_cu must be max_waves_per_simd (non-zero) times simds_per_cu",
            );
        }
        if self.vgpr_alloc_granule_wave32 < 2
            || !self.vgpr_alloc_granule_wave32.is_multiple_of(2)
            || self.vgprs_per_simd_wave32 < self.vgpr_alloc_granule_wave32
        {
            return bad(
                "vgpr_alloc_granule_wave32 must be even, at least 2, and fit vgprs_per_simd_wave32",
            );
        }
        if ![1, 2].contains(&self.cus_per_wgp) {
            return bad("cus_per_wgp must be 1 (no workgroup processors) or 2");
        }
        if self.lds_bytes_per_wgp / self.cus_per_wgp < self.lds_bytes {
            return bad(
                "one compute unit's share of lds_bytes_per_wgp must hold a workgroup's lds_bytes",
            );
        }
        if self.xcds == 0 || !self.compute_units.is_multiple_of(self.xcds) {
            return bad("xcds must be non-zero and divide compute_units");
        }
        if let Some(p) = &self.analytical_performance {
            let rates = [
                p.valu_lanes_per_clock,
                p.vopd_ops_per_issue,
                p.wave64_valu_clocks,
                p.trans_clocks,
                p.f64_clocks,
                p.wmma_clocks,
                p.salu_per_clock,
                p.lds_bytes_per_clock,
                p.vmem_bytes_per_clock,
            ];
            if rates.contains(&0)
                || p.matrix_ops_per_clock.values().any(|&r| r == 0)
                || p.memory_bytes_per_second == 0
                || self.clock_mhz == 0
            {
                return bad(
                    "analytical_performance's rates and clocks, and clock_mhz, must be non-zero",
                );
            }
        }
        if self.wave_sizes.is_empty() || self.wave_sizes.iter().any(|w| ![32, 64].contains(w)) {
            return bad("wave_sizes must be 32 and/or 64");
        }
        let q = &self.queues;
        if !q.min_size.is_power_of_two() || !q.max_size.is_power_of_two() || q.min_size > q.max_size
        {
            return bad("queue sizes must be powers of two with min_size <= max_size");
        }
        if self.max_workgroup_size == 0 || self.max_workgroup_size > 1024 {
            return bad("max_workgroup_size must be 1..=1024");
        }
        if self.lds_bytes > 65536 || self.compute_units == 0 || self.cache_line_bytes == 0 {
            return bad(
                "lds_bytes must be at most 65536; compute_units and cache_line_bytes non-zero",
            );
        }
        Ok(())
    }

    /// Checks that softgpu runs the profile's processor and honours its
    /// quirks.
    fn check_emulated(&self) -> Result<()> {
        let bad = |why: &str| Err(invalid(format!("device profile {}: {why}", self.name)));
        let family = softgpu_isa::Family::of_target(&self.name);
        if family.is_some_and(|f| !f.executed()) {
            return bad("softgpu decodes this processor's code but does not run it yet");
        }
        let honoured = family.map_or(&[][..], softgpu_exec::quirks::quirks);
        if let Some(q) = self
            .quirks
            .iter()
            .find(|q| !honoured.iter().any(|h| h.name == q.as_str()))
        {
            return bad(&format!(
                "quirk {q} is not a behaviour softgpu honours for {} (it honours: {})",
                self.name,
                honoured
                    .iter()
                    .map(|h| h.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if softgpu_exec::DeviceConfig::new(&self.name).is_err() {
            return bad("the executor does not emulate this processor");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_parse_and_name_their_isa() {
        for name in Profile::built_in_names() {
            let p = Profile::built_in(name).unwrap();
            // Another part of a processor (mi250x) names its processor.
            let processor = OTHER_PARTS
                .iter()
                .find(|(n, _, _)| *n == name)
                .map_or(name, |(_, processor, _)| *processor);
            assert_eq!(p.name, processor);
            assert_eq!(p.isa_name(), format!("amdgcn-amd-amdhsa--{processor}"));
            assert_ne!(p.asic_family_id, 0, "{name} states its ASIC family");
        }
        assert!(Profile::built_in("gfx9000").is_err());
    }

    #[test]
    fn profiles_named_by_path_are_bounded_regular_files() {
        // A device that never ends and a FIFO nobody writes: each an error
        // naming the file, at once (not endless memory, not a hang).
        let start = std::time::Instant::now();
        let e = Profile::named_or_path("/dev/zero").unwrap_err().to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("not a regular file"),
            "{e}"
        );
        let fifo =
            std::env::temp_dir().join(format!("softgpu-profile-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let e = Profile::named_or_path(fifo.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("FIFO"), "{e}");
        std::fs::remove_file(&fifo).unwrap();
        let big = std::env::temp_dir().join(format!("softgpu-profile-big-{}", std::process::id()));
        std::fs::write(&big, vec![b' '; MAX_PROFILE_SIZE as usize + 1]).unwrap();
        let e = Profile::named_or_path(big.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("limit"), "{e}");
        std::fs::remove_file(&big).unwrap();
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn built_in_profiles_state_where_every_field_comes_from() {
        for name in Profile::built_in_names() {
            let p = Profile::built_in(name).unwrap();
            assert_eq!(p.schema, 2);
            assert!(p.profile_id.contains(name), "{}", p.profile_id);
            assert_eq!(p.max_fidelity, Fidelity::TimingEstimated);
            assert!(!p.conformance_allowed, "no conformance claims yet");
            for field in Profile::provenanced_fields() {
                assert!(p.source_of(&field).is_some(), "{name}: {field}");
            }
            assert_eq!(p.source_of("simds_per_cu").unwrap().source, Source::Llvm);
            // Every behaviour the executor honours for the part's family is
            // listed (gfx12's were measured on no part yet: none).
            let family = softgpu_isa::Family::of_target(&p.name).unwrap();
            let honoured: Vec<&str> = softgpu_exec::quirks::quirks(family)
                .iter()
                .map(|q| q.name)
                .collect();
            assert_eq!(p.quirks, honoured, "{name}");
        }
        // FIELDS lists exactly the part's fields of the struct.
        let p = Profile::built_in("gfx1151").unwrap();
        let serde_json::Value::Object(map) = serde_json::to_value(&p).unwrap() else {
            panic!("a profile serializes as an object");
        };
        let mut keys: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| !V2_META.contains(k) && !["provenance", PERFORMANCE].contains(k))
            .collect();
        let mut fields = [Profile::FIELDS, Profile::OPTIONAL_FIELDS].concat();
        keys.sort_unstable();
        fields.sort_unstable();
        assert_eq!(keys, fields);
        // And Performance::FIELDS the performance section's.
        let section = &map[PERFORMANCE];
        let mut keys: Vec<&str> = section
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut fields = Performance::FIELDS.to_vec();
        keys.sort_unstable();
        fields.sort_unstable();
        assert_eq!(keys, fields);
    }

    #[test]
    fn level_and_source_names_are_the_documents_spellings() {
        for f in [Fidelity::Abi, Fidelity::IsaExact, Fidelity::TimingEstimated] {
            assert_eq!(serde_json::to_value(f).unwrap(), f.name());
        }
        for s in [
            Source::AmdSpec,
            Source::Llvm,
            Source::KfdTopology,
            Source::Measured,
            Source::SoftgpuDefault,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
    }

    /// Errors of a schema 2 document name the field at fault.
    #[test]
    fn schema_2_errors_name_the_field() {
        let text = include_str!("../profiles/gfx1151.json");
        let edit = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut doc: serde_json::Value = serde_json::from_str(text).unwrap();
            f(&mut doc);
            Profile::from_json(&doc.to_string())
                .unwrap_err()
                .to_string()
        };
        let e = edit(&|d| {
            d["fields"].as_object_mut().unwrap().remove("clock_mhz");
        });
        assert!(e.contains("clock_mhz"), "{e}");
        let e = edit(&|d| {
            d["fields"]["compute_units"]
                .as_object_mut()
                .unwrap()
                .remove("source");
        });
        assert!(e.contains("compute_units"), "{e}");
        let e = edit(&|d| d["fields"]["l2_cache_bytes"]["source"] = "rumour".into());
        assert!(e.contains("l2_cache_bytes") && e.contains("rumour"), "{e}");
        let e = edit(&|d| d["fields"]["clock_mhz"]["ref"] = " ".into());
        assert!(e.contains("clock_mhz"), "{e}");
        let e = edit(&|d| {
            d["fields"]["warp_size"] =
                serde_json::json!({"value": 32, "source": "llvm", "ref": "x"})
        });
        assert!(e.contains("warp_size"), "{e}");
        let e = edit(&|d| d["max_fidelity"] = "cycle-exact".into());
        assert!(e.contains("cycle-exact"), "{e}");
        let e = edit(&|d| d["quirks"] = serde_json::json!(["fast-math-everywhere"]));
        assert!(e.contains("fast-math-everywhere"), "{e}");
        let e = edit(&|d| {
            d[PERFORMANCE]
                .as_object_mut()
                .unwrap()
                .remove("memory_latency_ns");
        });
        assert!(e.contains("memory_latency_ns"), "{e}");
        let e = edit(&|d| d[PERFORMANCE]["trans_clocks"]["source"] = "guess".into());
        assert!(e.contains("analytical_performance.trans_clocks"), "{e}");
        let e = edit(&|d| d[PERFORMANCE]["lds_bytes_per_clock"]["value"] = 0.into());
        assert!(e.contains("non-zero"), "{e}");
        let e = edit(&|d| {
            d.as_object_mut().unwrap().remove(PERFORMANCE);
        });
        assert!(e.contains(PERFORMANCE), "{e}");
        // Schema 1 is still read, without provenance.
        let mut v1 = serde_json::Map::new();
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        for (k, v) in doc["fields"].as_object().unwrap() {
            v1.insert(k.clone(), v["value"].clone());
        }
        v1.insert("schema".into(), 1.into());
        let p = Profile::from_json(&serde_json::Value::Object(v1).to_string()).unwrap();
        assert!(p.provenance.is_empty());
        assert_eq!(p.compute_units, 40);
    }

    #[test]
    fn bad_documents_are_errors() {
        let mut p = Profile::built_in("gfx1151").unwrap();
        p.queues.min_size = 3;
        let text = serde_json::to_string(&p).unwrap();
        assert!(Profile::from_json(&text).is_err());
        assert!(Profile::from_json("{}").is_err());
        let unknown = text.replacen('{', "{\"extra\":1,", 1);
        assert!(Profile::from_json(&unknown).is_err());
        assert!(Profile::named_or_path("/nonexistent/profile.json").is_err());
    }
    /// The CDNA profiles, whose processors are not targets yet: each
    /// document parses, states where every field comes from (the optional
    /// ones too), and describes its part; a runtime refuses it, naming why.
    const CDNA: [(&str, &str, &str); 4] = [
        ("gfx90a", "gfx90a", include_str!("../profiles/gfx90a.json")),
        ("mi250x", "gfx90a", include_str!("../profiles/mi250x.json")),
        ("gfx942", "gfx942", include_str!("../profiles/gfx942.json")),
        ("mi300a", "gfx942", include_str!("../profiles/mi300a.json")),
    ];

    #[test]
    fn cdna_profiles_parse_and_state_where_every_field_comes_from() {
        // (name, CUs, XCDs, SEs, APU, L2, LDS per CU, f16 matrix ops/CU/clk)
        let facts = [
            ("gfx90a", 104, 1, 8, false, 8 << 20, 1024),
            ("mi250x", 110, 1, 8, false, 8 << 20, 1024),
            ("gfx942", 304, 8, 32, false, 4 << 20, 2048),
            ("mi300a", 228, 6, 24, true, 4 << 20, 2048),
        ];
        for ((name, processor, text), fact) in CDNA.iter().zip(facts) {
            assert_eq!(*name, fact.0);
            let p = Profile::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.name, *processor);
            assert_eq!(p.schema, 2);
            assert!(p.profile_id.contains(name), "{}", p.profile_id);
            assert_eq!(p.max_fidelity, Fidelity::TimingEstimated);
            assert!(!p.conformance_allowed && p.quirks.is_empty());
            let optional = Profile::OPTIONAL_FIELDS
                .iter()
                .map(|f| f.to_string())
                .chain(
                    Performance::OPTIONAL_FIELDS
                        .iter()
                        .map(|f| format!("{PERFORMANCE}.{f}")),
                );
            for field in Profile::provenanced_fields().chain(optional) {
                assert!(p.source_of(&field).is_some(), "{name}: {field}");
            }
            assert_eq!(p.asic_family_id, 141, "{name}: AMDGPU_FAMILY_AI");
            assert_eq!(
                (p.compute_units, p.xcds, p.shader_engines, p.is_apu),
                (fact.1, fact.2, fact.3, fact.4),
                "{name}"
            );
            assert_eq!(p.l2_cache_bytes, fact.5, "{name}");
            assert_eq!((p.simds_per_cu, p.wave_sizes.as_slice()), (4, &[64][..]));
            assert_eq!((p.max_waves_per_simd, p.max_waves_per_cu), (8, 32));
            assert_eq!(
                (p.cus_per_wgp, p.lds_bytes_per_wgp, p.lds_bytes),
                (1, 65536, 65536)
            );
            let perf = p.analytical_performance.as_ref().unwrap();
            assert_eq!(perf.matrix_ops_per_clock(MatrixType::F16), Some(fact.6));
            assert_eq!(perf.matrix_ops_per_clock(MatrixType::F64), Some(256));
            // XF32 and FP8 are gfx940's.
            let gfx942 = *processor == "gfx942";
            assert_eq!(perf.matrix_ops_per_clock(MatrixType::Fp8).is_some(), gfx942);
            assert_eq!(
                perf.matrix_ops_per_clock(MatrixType::Xf32).is_some(),
                gfx942
            );
            // Until the processor is a target, softgpu refuses the profile.
            let runs = Profile::from_json(text);
            if is_target(processor) {
                runs.unwrap();
            } else {
                // softgpu decodes CDNA's code (`Family::of_target` knows
                // the processor) but does not run it yet.
                let e = runs.unwrap_err().to_string();
                assert!(e.contains("does not run it yet"), "{e}");
            }
        }
        // The table of other parts names these files.
        for (name, processor, text) in OTHER_PARTS {
            let (_, p, t) = CDNA.iter().find(|(n, _, _)| n == name).unwrap();
            assert_eq!((processor, text), (p, t));
        }
    }

    #[test]
    fn other_parts_are_refused_until_their_processor_is_emulated() {
        for name in ["mi250x", "mi300a", "gfx90a", "gfx942"] {
            let processor = if name.starts_with("mi250") || name == "gfx90a" {
                "gfx90a"
            } else {
                "gfx942"
            };
            if is_target(processor) {
                let p = Profile::named_or_path(name).unwrap();
                assert_eq!(p.name, processor);
                assert!(Profile::built_in_names().any(|n| n == name));
                continue;
            }
            assert!(!Profile::built_in_names().any(|n| n == name));
            // By name (not read as a file): the reason, naming the processor.
            for e in [
                Profile::built_in(name).unwrap_err(),
                Profile::named_or_path(name).unwrap_err(),
            ] {
                let e = e.to_string();
                assert!(
                    e.contains(processor) && e.contains("does not emulate yet"),
                    "{e}"
                );
            }
        }
        let e = Profile::built_in("mi999").unwrap_err().to_string();
        assert!(e.contains("no built-in profile mi999"), "{e}");
    }

    /// The matrix rates: a part's peak is CUs x rate x clock, as AMD's
    /// figures; one MFMA's clocks follow from its operations; RDNA states
    /// none.
    #[test]
    fn matrix_rates_give_the_parts_peaks_and_an_mfma_its_clocks() {
        let parse = |name: &str| {
            let (_, _, text) = CDNA.iter().find(|(n, _, _)| *n == name).unwrap();
            Profile::parse(text).unwrap()
        };
        let close = |got: Option<f64>, tera: f64| {
            let got = got.unwrap() / 1e12;
            assert!((got - tera).abs() / tera < 1e-3, "{got} vs {tera}");
        };
        let mi300x = parse("gfx942");
        close(mi300x.peak_matrix_ops(MatrixType::F16), 1307.4);
        close(mi300x.peak_matrix_ops(MatrixType::Fp8), 2614.9);
        close(mi300x.peak_matrix_ops(MatrixType::F64), 163.4);
        close(mi300x.peak_matrix_ops(MatrixType::Xf32), 653.7);
        let mi300a = parse("mi300a");
        close(mi300a.peak_matrix_ops(MatrixType::Bf16), 980.6);
        let mi210 = parse("gfx90a");
        close(mi210.peak_matrix_ops(MatrixType::F32), 45.3);
        close(mi210.peak_matrix_ops(MatrixType::I8), 181.0);
        assert_eq!(mi210.peak_matrix_ops(MatrixType::Fp8), None);
        // v_mfma_f32_32x32x8_f16: 2 x 32 x 32 x 8 operations on one of the
        // CU's four matrix cores at 1024 / 4 per clock: 64 clocks.
        let perf = mi210.analytical_performance.as_ref().unwrap();
        let ops = 2 * 32 * 32 * 8;
        assert_eq!(perf.matrix_clocks(MatrixType::F16, ops, 4), Some(64));
        assert_eq!(perf.matrix_clocks(MatrixType::Fp8, ops, 4), None);
        // RDNA parts state no MFMA rates (WMMA is wmma_clocks).
        let rdna = Profile::built_in("gfx1151").unwrap();
        let perf = rdna.analytical_performance.as_ref().unwrap();
        assert!(perf.matrix_ops_per_clock.is_empty());
        assert!(MatrixType::ALL
            .iter()
            .all(|&t| rdna.peak_matrix_ops(t).is_none()));
        for t in MatrixType::ALL {
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
    }
}
