//! Occupancy: how many waves of a kernel a real part keeps resident per
//! SIMD and per compute unit, and which resource stops more.
//!
//! The model is RDNA3's (gfx11), from the facts LLVM's AMDGPU target
//! encodes for these processors (`AMDGPUBaseInfo` and `GCNSubtarget`),
//! which each profile states with its provenance:
//! - each SIMD holds at most `max_waves_per_simd` (16) waves;
//! - its VGPR file holds `vgprs_per_simd_wave32` VGPRs per lane in wave32
//!   (half in wave64): 1536 on the parts with 1.5x VGPRs (gfx1100,
//!   gfx1101, gfx1151), else 1024, allocated in blocks of
//!   `vgpr_alloc_granule_wave32` (24 or 16; half in wave64);
//! - SGPRs never limit a gfx10+ wave (each has its own fixed set);
//! - LDS is `lds_bytes_per_wgp` (128 KiB) per workgroup processor, shared
//!   by its SIMDs (WGP mode, the default of compute kernels), or half per
//!   compute unit (CU mode); a workgroup takes its LDS whole. A part
//!   without workgroup processors (CDNA, `cus_per_wgp` 1) is a WGP of one
//!   CU: both modes are the CU and its LDS;
//! - a workgroup's waves stay on one WGP (or CU) and are spread over its
//!   SIMDs.
//!
//! `tests/occupancy.rs` holds the model to LLVM's own figure (the
//! `; Occupancy:` clang-19 prints for a kernel compiled with a fixed
//! workgroup size) over a matrix of register, LDS and workgroup sizes.

use crate::profile::Profile;

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

impl KernelResources {
    /// What a launch of `kernel` in workgroups of `workgroup_size`
    /// work-items with `dynamic_lds` bytes beyond its own LDS asks.
    pub fn of(kernel: &softgpu_codeobj::Kernel, workgroup_size: u32, dynamic_lds: u32) -> Self {
        KernelResources {
            wave_size: if kernel.descriptor.wave32 { 32 } else { 64 },
            vgprs: kernel.meta.vgpr_count,
            lds_bytes: kernel
                .descriptor
                .group_segment_fixed_size
                .saturating_add(dynamic_lds),
            workgroup_size,
            wgp_mode: kernel.descriptor.wgp_mode,
        }
    }
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
    /// Whole workgroups one workgroup processor (a compute unit on a
    /// part without them) holds within those waves (0: a workgroup needs
    /// more than the SIMDs can give it).
    pub workgroups_per_wgp: u32,
    /// Waves per SIMD once only whole workgroups are counted: below
    /// `waves_per_simd` when the waves left over do not make another
    /// workgroup (LLVM's figure does not round so).
    pub whole_group_waves_per_simd: u32,
}

/// Waves of `kernel` resident per SIMD and CU on `profile`'s part.
pub fn occupancy(profile: &Profile, kernel: &KernelResources) -> Occupancy {
    let wave64 = u32::from(kernel.wave_size == 64);
    let max_waves = profile.max_waves_per_simd;
    let file = profile.vgprs_per_simd_wave32 >> wave64;
    let granule = profile.vgpr_alloc_granule_wave32 >> wave64;
    let allocated = kernel.vgprs.max(1).next_multiple_of(granule);
    let by_vgprs = (file / allocated).min(max_waves);
    let cus_per_wgp = profile.cus_per_wgp.max(1);
    let simds_per_wgp = cus_per_wgp * profile.simds_per_cu;
    let (lds, simds) = if kernel.wgp_mode {
        (profile.lds_bytes_per_wgp, simds_per_wgp)
    } else {
        (
            profile.lds_bytes_per_wgp / cus_per_wgp,
            profile.simds_per_cu,
        )
    };
    let waves_per_group = kernel.workgroup_size.max(1).div_ceil(kernel.wave_size);
    // Workgroups one WGP (or CU) can hold by LDS, then by waves.
    let groups_by_lds = lds.checked_div(kernel.lds_bytes).unwrap_or(u32::MAX);
    // A workgroup of fewer waves than SIMDs still fills one slot of each
    // SIMD it uses: round up.
    let by_lds = groups_by_lds
        .saturating_mul(waves_per_group)
        .div_ceil(simds);
    let (mut waves, mut limit) = (max_waves, Limit::WaveSlots);
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
        workgroups_per_wgp: groups * (simds_per_wgp / simds),
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
        assert_eq!(
            occupancy(&gfx("gfx1102"), &kernel(128, 0, 64)).waves_per_simd,
            8
        );
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
