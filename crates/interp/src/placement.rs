//! Where a dispatch's workgroups run: the compute units a queue's CU mask
//! leaves on, and what `s_getreg(HW_REG_HW_ID1)` reads on each.
//!
//! softgpu runs workgroups on host threads, not on compute units; but a
//! program can see which unit it runs on (rocrtst's CU-masking test counts
//! the distinct units a dispatch reaches through `HW_ID1`, and persistent
//! kernels index per-unit state by it). So every workgroup is placed on
//! one unit of the dispatch's set, round-robin in workgroup order, and
//! its waves read that unit's shader engine, array, WGP and CU.

use std::sync::Arc;

/// A GPU's compute-unit layout, as `HW_ID1` names its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Compute units in all.
    pub compute_units: u32,
    /// Shader engines they are spread over.
    pub shader_engines: u32,
    /// Shader arrays in each engine.
    pub arrays_per_engine: u32,
}

impl Default for Topology {
    /// One compute unit: every wave reads engine, array, WGP and CU 0.
    fn default() -> Self {
        Topology {
            compute_units: 1,
            shader_engines: 1,
            arrays_per_engine: 1,
        }
    }
}

/// `HW_ID1` fields on gfx11 (RDNA3 ISA guide, "Hardware registers"):
/// WAVE_ID 4:0, SIMD_ID 9:8, WGP_ID 13:10, SA_ID 16, SE_ID 20:18. A WGP
/// holds two CUs of two SIMDs each, so SIMD_ID's high bit names the CU.
const CU_SHIFT: u32 = 9;
const WGP_SHIFT: u32 = 10;
const SA_SHIFT: u32 = 16;
const SE_SHIFT: u32 = 18;
/// SIMD_ID's low bit: which of its CU's two SIMDs a wave runs on.
pub const SIMD_SHIFT: u32 = 8;

impl Topology {
    /// `HW_ID1` of CU mask bit `bit`. The amdgpu driver spreads mask bits
    /// over the part evenly: bits come in pairs, one WGP each (ROCr
    /// refuses a mask that splits a pair on gfx10 and later), and
    /// successive pairs go to successive shader engines, then arrays, then
    /// WGPs, so a mask of the first n bits is balanced across engines.
    fn hw_id(&self, bit: u32) -> u32 {
        let pair = bit / 2;
        let engines = self.shader_engines.max(1);
        let arrays = self.arrays_per_engine.max(1);
        let se = pair % engines;
        let sa = (pair / engines) % arrays;
        let wgp = pair / (engines * arrays);
        (bit % 2) << CU_SHIFT
            | (wgp & 0xf) << WGP_SHIFT
            | (sa & 1) << SA_SHIFT
            | (se & 7) << SE_SHIFT
    }

    /// Every compute unit.
    pub fn all(&self) -> ComputeUnits {
        self.units(&[])
    }

    /// The units a CU mask enables (bit i of word i / 32 is unit i); an
    /// empty mask means every unit. Bits past the last unit are ignored.
    pub fn units(&self, mask: &[u32]) -> ComputeUnits {
        let on = |bit: u32| {
            mask.is_empty()
                || mask
                    .get(bit as usize / 32)
                    .is_some_and(|w| w >> (bit % 32) & 1 == 1)
        };
        ComputeUnits {
            hw_ids: (0..self.compute_units)
                .filter(|&b| on(b))
                .map(|b| self.hw_id(b))
                .collect(),
        }
    }
}

/// The compute units one dispatch may use, in the order its workgroups
/// are placed on them. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputeUnits {
    hw_ids: Arc<[u32]>,
}

impl ComputeUnits {
    /// How many units.
    pub fn len(&self) -> usize {
        self.hw_ids.len()
    }

    /// Whether no unit is on: such a dispatch could never start.
    pub fn is_empty(&self) -> bool {
        self.hw_ids.is_empty()
    }

    /// `HW_ID1` of the unit that runs workgroup `index` (its WAVE_ID and
    /// SIMD bits 0). Not empty (checked when the dispatch starts).
    pub fn hw_id(&self, index: u64) -> u32 {
        self.hw_ids[(index % self.hw_ids.len() as u64) as usize]
    }
}

/// The id of the workgroup with linear index `index` in a grid of `groups`
/// workgroups (x fastest, then y, then z).
pub fn group_id(groups: [u32; 3], index: u64) -> [u32; 3] {
    let (gx, gy) = (groups[0] as u64, groups[1] as u64);
    [
        (index % gx) as u32,
        ((index / gx) % gy) as u32,
        (index / (gx * gy)) as u32,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gfx1151's layout: 40 CUs in 2 engines of 2 arrays (5 WGPs each).
    const STRIX: Topology = Topology {
        compute_units: 40,
        shader_engines: 2,
        arrays_per_engine: 2,
    };

    #[test]
    fn every_unit_has_its_own_hw_id() {
        let all = STRIX.all();
        let mut ids: Vec<u32> = (0..40).map(|i| all.hw_id(i)).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 40);
        // The 10 bits from bit 9 that rocrtst reads tell them apart too.
        let mut fields: Vec<u32> = ids.iter().map(|id| id >> 9 & 0x3ff).collect();
        fields.dedup();
        assert_eq!(fields.len(), 40);
    }

    #[test]
    fn pairs_share_a_wgp_and_spread_over_engines() {
        let all = STRIX.all();
        let (a, b, c) = (all.hw_id(0), all.hw_id(1), all.hw_id(2));
        assert_eq!(
            a & !(1 << CU_SHIFT),
            b & !(1 << CU_SHIFT),
            "bits 0 and 1: one WGP"
        );
        assert_eq!(a >> SE_SHIFT & 7, 0);
        assert_eq!(c >> SE_SHIFT & 7, 1, "the next pair is on the next engine");
        // The last pair: engine 1, array 1, WGP 4.
        assert_eq!(
            all.hw_id(39),
            1 << CU_SHIFT | 4 << WGP_SHIFT | 1 << SA_SHIFT | 1 << SE_SHIFT
        );
    }

    #[test]
    fn a_mask_selects_its_units_in_bit_order() {
        let units = STRIX.units(&[0b1100_0011, 0xffff_ffff]);
        assert_eq!(units.len(), 4 + 8, "bits past unit 39 are ignored");
        let all = STRIX.all();
        assert_eq!(units.hw_id(2), all.hw_id(6));
        assert_eq!(units.hw_id(4), all.hw_id(32));
        assert_eq!(units.hw_id(12), units.hw_id(0), "workgroups wrap round");
        assert!(STRIX.units(&[0, 0]).is_empty());
    }
}
