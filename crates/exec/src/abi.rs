//! What each GPU family's hardware sets up for a wave beyond the user SGPRs
//! the kernel descriptor asks for: where the workgroup IDs arrive, whether
//! the wave is told its scratch offset, and which MODE bits the descriptor
//! controls. The dispatch reads this table; a family's launch differences
//! live here, not in the scheduler.

use softgpu_codeobj::KernelDescriptor;
use softgpu_isa::{sreg, Family};

/// A family's launch ABI (LLVM AMDGPUUsage, "Initial Kernel Execution
/// State", and the subtarget features named below).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchAbi {
    /// Where the workgroup IDs go.
    pub workgroup_ids: WorkgroupIds,
    /// Whether an enabled private segment gives the wave its scratch offset
    /// in a system SGPR. With architected flat scratch the hardware sets
    /// the scratch base itself and no SGPR is written.
    pub scratch_offset_sgpr: bool,
    /// Where MODE's IEEE and DX10_CLAMP bits come from.
    pub float_mode: FloatMode,
}

/// The most workgroups a grid may have along y and z when the IDs share
/// ttmp7's 16-bit halves.
pub const ARCHITECTED_MAX_GROUPS_YZ: u32 = 1 << 16;

/// Where a family puts the workgroup IDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkgroupIds {
    /// In system SGPRs after the user SGPRs, one per enabled axis (gfx11).
    SystemSgprs,
    /// In trap temporaries, whatever the descriptor enables (LLVM's
    /// FeatureArchitectedSGPRs, gfx12): x in ttmp9, y and z in ttmp7's low
    /// and high halves, and the wave's index in its workgroup in ttmp8
    /// bits 25..29 (what `llvm.amdgcn.wave.id` reads).
    Architected,
}

/// How rsrc1 sets MODE's IEEE and DX10_CLAMP bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatMode {
    /// From rsrc1's IEEE_MODE (bit 23) and DX10_CLAMP (bit 21) (gfx11).
    FromDescriptor,
    /// Fixed: the family has no IEEE mode and clamps NaN to zero. gfx12
    /// repurposes rsrc1 bits 21 and 23, and LLVM's subtarget has neither
    /// `hasIEEEMode` nor `hasDX10ClampMode`, so its code is compiled for
    /// IEEE off (output modifiers apply) and DX10 clamping on.
    Fixed { ieee: bool, dx10_clamp: bool },
}

const GFX11: LaunchAbi = LaunchAbi {
    workgroup_ids: WorkgroupIds::SystemSgprs,
    scratch_offset_sgpr: true,
    float_mode: FloatMode::FromDescriptor,
};

const GFX12: LaunchAbi = LaunchAbi {
    workgroup_ids: WorkgroupIds::Architected,
    scratch_offset_sgpr: false,
    float_mode: FloatMode::Fixed {
        ieee: false,
        dx10_clamp: true,
    },
};

/// The launch ABI of `family`.
pub const fn launch_abi(family: Family) -> &'static LaunchAbi {
    match family {
        Family::Gfx11 => &GFX11,
        Family::Gfx12 => &GFX12,
        // No gfx10 code reaches a launch (the family is not executed and
        // no target is gfx10's); gfx11's stands in until gfx10's is written.
        Family::Gfx10 => &GFX11,
    }
}

impl LaunchAbi {
    /// MODE as rsrc1 sets it: round modes, denormal modes, DX10 clamp, IEEE,
    /// and FP16_OVFL (rsrc1 bit 26 to MODE bit 23, both families).
    pub fn mode_bits(&self, d: &KernelDescriptor) -> u32 {
        let (ieee, dx10_clamp) = match self.float_mode {
            FloatMode::FromDescriptor => (d.ieee_mode, d.dx10_clamp),
            FloatMode::Fixed { ieee, dx10_clamp } => (ieee, dx10_clamp),
        };
        (d.float_round_mode_32 as u32 & 3)
            | (d.float_round_mode_16_64 as u32 & 3) << 2
            | (d.float_denorm_mode_32 as u32 & 3) << 4
            | (d.float_denorm_mode_16_64 as u32 & 3) << 6
            | (dx10_clamp as u32) << 8
            | (ieee as u32) << 9
            | (d.fp16_ovfl as u32) << 23
    }

    /// The system SGPR values after the user SGPRs, in ABI order: workgroup
    /// IDs (where they go in SGPRs), workgroup info, the scratch offset.
    pub fn system_sgprs(&self, d: &KernelDescriptor, group: [u32; 3]) -> impl Iterator<Item = u32> {
        let in_sgprs = self.workgroup_ids == WorkgroupIds::SystemSgprs;
        let ids = [
            d.enable_sgpr_workgroup_id_x,
            d.enable_sgpr_workgroup_id_y,
            d.enable_sgpr_workgroup_id_z,
        ];
        let ids = (0..3)
            .filter(move |&a| in_sgprs && ids[a])
            .map(move |a| group[a]);
        // Scratch is per wave already, so the wave's byte offset is zero.
        let info = d.enable_sgpr_workgroup_info.then_some(0);
        let scratch = (self.scratch_offset_sgpr && d.enable_private_segment).then_some(0);
        ids.chain(info).chain(scratch)
    }

    /// Why a grid of `groups` workgroups cannot be launched, if it cannot:
    /// architected IDs have 16 bits for y and z.
    pub fn refuses_groups(&self, groups: [u32; 3]) -> Option<String> {
        let architected = self.workgroup_ids == WorkgroupIds::Architected;
        let over = (1..3).find(|&a| groups[a] > ARCHITECTED_MAX_GROUPS_YZ)?;
        architected.then(|| {
            format!(
                "{} workgroups along {} exceed the {ARCHITECTED_MAX_GROUPS_YZ} the hardware can number (workgroup IDs y and z are 16-bit halves of ttmp7)",
                groups[over],
                ["x", "y", "z"][over]
            )
        })
    }

    /// The trap temporaries the hardware sets (index into the scalar
    /// operand space, value) for wave `wave` of workgroup `group`: none
    /// where the IDs go to SGPRs (a wave's registers start zeroed).
    pub fn trap_temporaries(
        &self,
        group: [u32; 3],
        wave: u32,
    ) -> impl Iterator<Item = (usize, u32)> {
        let ttmp = |n: u8| (sreg::TTMP0 + n) as usize;
        let architected = self.workgroup_ids == WorkgroupIds::Architected;
        architected
            .then(|| {
                [
                    (ttmp(7), group[1] & 0xffff | group[2] << 16),
                    (ttmp(8), (wave & 0x1f) << 25),
                    (ttmp(9), group[0]),
                ]
            })
            .into_iter()
            .flatten()
    }
}
