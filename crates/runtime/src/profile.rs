//! Device profiles: what a GPU agent reports and how big its resources are.
//!
//! A profile is a JSON document. `gfx1100` and `gfx1151` are built in;
//! `SOFTGPU_PROFILE` names a built-in profile or a path to a JSON file.

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Result};

/// The profile chosen when `SOFTGPU_PROFILE` is unset.
pub const DEFAULT_PROFILE: &str = "gfx1151";

const BUILT_IN: [(&str, &str); 2] = [
    ("gfx1151", include_str!("../profiles/gfx1151.json")),
    ("gfx1100", include_str!("../profiles/gfx1100.json")),
];

/// One GPU's description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Format version of the document.
    pub schema: u32,
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
    pub simds_per_cu: u32,
    pub shader_engines: u32,
    pub shader_arrays_per_engine: u32,
    pub wave_sizes: Vec<u32>,
    pub max_waves_per_cu: u32,
    pub max_workgroup_size: u32,
    pub max_workgroup_dims: [u32; 3],
    pub max_grid_dims: [u32; 3],
    pub lds_bytes: u32,
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

impl Profile {
    /// The names of the built-in profiles.
    pub fn built_in_names() -> impl Iterator<Item = &'static str> {
        BUILT_IN.iter().map(|(n, _)| *n)
    }

    /// A built-in profile by name.
    pub fn built_in(name: &str) -> Result<Profile> {
        let (_, text) = BUILT_IN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            invalid(format!(
                "no built-in profile {name} (built in: {})",
                Self::built_in_names().collect::<Vec<_>>().join(", ")
            ))
        })?;
        Profile::from_json(text)
    }

    /// Parses and checks a profile document.
    pub fn from_json(text: &str) -> Result<Profile> {
        let p: Profile =
            serde_json::from_str(text).map_err(|e| invalid(format!("device profile: {e}")))?;
        p.validate()?;
        Ok(p)
    }

    /// A built-in name or a path to a JSON file.
    pub fn named_or_path(spec: &str) -> Result<Profile> {
        if BUILT_IN.iter().any(|(n, _)| *n == spec) {
            return Profile::built_in(spec);
        }
        let text = std::fs::read_to_string(spec)
            .map_err(|e| invalid(format!("device profile {spec}: {e}")))?;
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

    /// The full ISA name HSA reports, e.g. `amdgcn-amd-amdhsa--gfx1151`.
    pub fn isa_name(&self) -> String {
        format!("amdgcn-amd-amdhsa--{}", self.name)
    }

    fn validate(&self) -> Result<()> {
        let bad = |why: &str| Err(invalid(format!("device profile {}: {why}", self.name)));
        if self.schema != 1 {
            return bad("unknown schema version (expected 1)");
        }
        if softgpu_exec::Device::new(softgpu_exec::DeviceConfig {
            target: self.name.clone(),
            arena_bytes: 1 << 12,
            threads: Some(1),
            ..Default::default()
        })
        .is_err()
        {
            return bad("the executor does not emulate this processor");
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_parse_and_name_their_isa() {
        for name in Profile::built_in_names() {
            let p = Profile::built_in(name).unwrap();
            assert_eq!(p.name, name);
            assert_eq!(p.isa_name(), format!("amdgcn-amd-amdhsa--{name}"));
            assert_ne!(p.asic_family_id, 0, "{name} states its ASIC family");
        }
        assert!(Profile::built_in("gfx9000").is_err());
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
}
