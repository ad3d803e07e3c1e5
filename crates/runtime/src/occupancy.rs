//! Occupancy: how many waves of a kernel a real part keeps resident per
//! SIMD and per compute unit, and which resource stops more.
//!
//! The model is RDNA3's (gfx11), from the facts LLVM's AMDGPU target
//! encodes for these processors (`AMDGPUBaseInfo` and `GCNSubtarget`):
//! - each SIMD holds at most 16 waves;
//! - its VGPR file holds 1536 VGPRs per lane in wave32 (768 in wave64) on
//!   the parts with 1.5x VGPRs (gfx1100, gfx1101, gfx1151), else 1024
//!   (512), allocated in blocks of 24 (12) and 16 (8) registers;
//! - SGPRs never limit a gfx10+ wave (each has its own fixed set);
//! - LDS is 128 KiB per workgroup processor, shared by its 4 SIMDs (WGP
//!   mode, the default of compute kernels), or 64 KiB per compute unit of
//!   2 SIMDs (CU mode); a workgroup takes its LDS whole;
//! - a workgroup's waves stay on one WGP (or CU) and are spread over its
//!   SIMDs.
//!
//! `tests/occupancy.rs` holds the model to LLVM's own figure (the
//! `; Occupancy:` clang-19 prints for a kernel compiled with a fixed
//! workgroup size) over a matrix of register, LDS and workgroup sizes.

use crate::profile::Profile;

/// The most waves one gfx11 SIMD holds (LLVM's `getMaxWavesPerEU`).
const MAX_WAVES_PER_SIMD: u32 = 16;
/// LDS of a workgroup processor (two compute units) on gfx10+.
const LDS_PER_WGP: u32 = 128 * 1024;
/// SIMDs per workgroup processor.
const SIMDS_PER_WGP: u32 = 4;

/// What a kernel launch asks of a compute unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// Lanes per wave: 32 or 64.
    pub wave_size: u32,
    /// VGPRs per lane the kernel uses.
    pub vgprs: u32,
    /// LDS bytes per workgroup (static plus dynamic).
    pub lds_bytes: u32,
    /// Work-items per workgroup.
    pub workgroup_size: u32,
    /// Whether the kernel runs in WGP mode (its descriptor's `WGP_MODE`).
    pub wgp_mode: bool,
}

/// The resource that bounds occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The SIMD's wave slots: the kernel reaches the hardware maximum.
    WaveSlots,
    /// The VGPR file.
    Vgprs,
    /// LDS.
    Lds,
}

impl Limit {
    /// The limit's name, as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Limit::WaveSlots => "wave slots",
            Limit::Vgprs => "VGPRs",
            Limit::Lds => "LDS",
        }
    }
}

/// Resident waves of a kernel on the profiled part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// Waves per SIMD the registers, LDS and wave slots allow (LLVM's
    /// "occupancy").
    pub waves_per_simd: u32,
    /// The same per compute unit.
    pub waves_per_cu: u32,
    /// What bounds `waves_per_simd`.
    pub limit: Limit,
    /// Whole workgroups one workgroup processor holds within those waves
    /// (0: a workgroup needs more than the SIMDs can give it).
    pub workgroups_per_wgp: u32,
    /// Waves per SIMD once only whole workgroups are counted: below
    /// `waves_per_simd` when the waves left over do not make another
    /// workgroup (LLVM's figure does not round so).
    pub whole_group_waves_per_simd: u32,
}

impl Profile {
    /// VGPRs per lane one SIMD holds in wave32 (half in wave64): 1536 on
    /// the parts LLVM gives 1.5x VGPRs, else 1024.
    pub fn vgprs_per_simd_wave32(&self) -> u32 {
        match self.name.as_str() {
            "gfx1100" | "gfx1101" | "gfx1151" => 1536,
            _ => 1024,
        }
    }
}

/// Waves of `kernel` resident per SIMD and CU on `profile`'s part.
pub fn occupancy(profile: &Profile, kernel: &KernelResources) -> Occupancy {
    let wave64 = kernel.wave_size == 64;
    let file = profile.vgprs_per_simd_wave32() >> u32::from(wave64);
    let big = profile.vgprs_per_simd_wave32() > 1024;
    let granule = match (big, wave64) {
        (true, false) => 24,
        (true, true) => 12,
        (false, false) => 16,
        (false, true) => 8,
    };
    let allocated = kernel.vgprs.max(1).next_multiple_of(granule);
    let by_vgprs = (file / allocated).min(MAX_WAVES_PER_SIMD);
    let (lds, simds) = if kernel.wgp_mode {
        (LDS_PER_WGP, SIMDS_PER_WGP)
    } else {
        (LDS_PER_WGP / 2, SIMDS_PER_WGP / 2)
    };
    let waves_per_group = kernel.workgroup_size.max(1).div_ceil(kernel.wave_size);
    // Workgroups one WGP (or CU) can hold by LDS, then by waves.
    let groups_by_lds = lds.checked_div(kernel.lds_bytes).unwrap_or(u32::MAX);
    // A workgroup of fewer waves than SIMDs still fills one slot of each
    // SIMD it uses: round up.
    let by_lds = groups_by_lds
        .saturating_mul(waves_per_group)
        .div_ceil(simds);
    let (mut waves, mut limit) = (MAX_WAVES_PER_SIMD, Limit::WaveSlots);
    for (bound, why) in [(by_vgprs, Limit::Vgprs), (by_lds, Limit::Lds)] {
        if bound < waves {
            (waves, limit) = (bound, why);
        }
    }
    let groups = (waves * simds) / waves_per_group;
    Occupancy {
        waves_per_simd: waves,
        waves_per_cu: waves * profile.simds_per_cu,
        limit,
        workgroups_per_wgp: groups * (SIMDS_PER_WGP / simds),
        whole_group_waves_per_simd: (groups * waves_per_group / simds).min(waves),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gfx(name: &str) -> Profile {
        Profile::built_in(name).unwrap()
    }

    fn kernel(vgprs: u32, lds_bytes: u32, workgroup_size: u32) -> KernelResources {
        KernelResources {
            wave_size: 32,
            vgprs,
            lds_bytes,
            workgroup_size,
            wgp_mode: true,
        }
    }

    #[test]
    fn each_resource_bounds_in_its_turn() {
        let p = gfx("gfx1151");
        // Few registers, no LDS: the 16 wave slots.
        let o = occupancy(&p, &kernel(24, 0, 256));
        assert_eq!((o.waves_per_simd, o.limit), (16, Limit::WaveSlots));
        assert_eq!(o.waves_per_cu, 32);
        // 128 VGPRs: 1536 / 144 (rounded up to 24s) = 10 per SIMD.
        let o = occupancy(&p, &kernel(128, 0, 64));
        assert_eq!((o.waves_per_simd, o.limit), (10, Limit::Vgprs));
        // 32 KiB of LDS: 4 groups of 8 waves per WGP, 8 per SIMD.
        let o = occupancy(&p, &kernel(24, 32 * 1024, 256));
        assert_eq!((o.waves_per_simd, o.limit), (8, Limit::Lds));
        // gfx1100's file is also 1.5x; a 1x part allocates 16s of 1024.
        assert_eq!(
            occupancy(&gfx("gfx1100"), &kernel(128, 0, 64)).waves_per_simd,
            10
        );
        let mut small = gfx("gfx1151");
        small.name = "gfx1102".into();
        assert_eq!(occupancy(&small, &kernel(128, 0, 64)).waves_per_simd, 8);
    }

    #[test]
    fn only_whole_workgroups_are_resident() {
        // 1024 work-items are 32 waves, 8 per SIMD of a WGP: VGPRs allow
        // 10 per SIMD, 40 per WGP, but a second group does not fit.
        let o = occupancy(&gfx("gfx1151"), &kernel(128, 0, 1024));
        assert_eq!((o.waves_per_simd, o.limit), (10, Limit::Vgprs));
        assert_eq!((o.workgroups_per_wgp, o.whole_group_waves_per_simd), (1, 8));
        // 256 work-items (8 waves) fit 5 times in 40.
        let o = occupancy(&gfx("gfx1151"), &kernel(128, 0, 256));
        assert_eq!(
            (o.workgroups_per_wgp, o.whole_group_waves_per_simd),
            (5, 10)
        );
    }
}
