//! What each GPU family's hardware sets up for a wave beyond the user SGPRs
//! the kernel descriptor asks for: where the workgroup IDs arrive, whether
//! the wave is told its scratch offset, and which MODE bits the descriptor
//! controls. The dispatch reads this table; a family's launch differences
//! live here, not in the scheduler.

use softgpu_codeobj::KernelDescriptor;
use softgpu_interp::wave::{PRIVATE_APERTURE, SCRATCH_BUFFER_BASE};
use softgpu_isa::resource::BufferResource;
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
    /// What the private segment buffer user SGPRs hold.
    pub private_buffer: PrivateBuffer,
    /// Whether the work-item IDs arrive packed in v0 (x, y and z in 10-bit
    /// fields: gfx11 and gfx12) or one VGPR each, x in v0, y in v1, z in v2
    /// (gfx10), each as `enable_vgpr_workitem_id` enables it (AMDGPUUsage,
    /// "Initial Kernel Execution State": packed since GFX90A and GFX11).
    pub packed_ids: bool,
}

/// What the four private segment buffer user SGPRs hold, when the kernel
/// descriptor enables them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivateBuffer {
    /// Unused by the code (gfx11 and gfx12 reach scratch with `scratch_*`
    /// instructions): the private aperture and the lane's scratch size,
    /// only so the registers are well-formed.
    Unused,
    /// A buffer resource the code addresses scratch through with MUBUF
    /// instructions (LLVM's default for gfx10 and gfx90a is MUBUF
    /// scratch): swizzled by lane as the hardware lays scratch out
    /// (§"Buffer addressing" of the RDNA2 guide: 4-byte elements, index
    /// stride of the wave's width, the thread ID added to the index), based
    /// at [`SCRATCH_BUFFER_BASE`], where buffer accesses reach the wave's
    /// own private memory; its words in `layout`'s V# layout.
    Swizzled { layout: Family },
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
    private_buffer: PrivateBuffer::Unused,
    packed_ids: true,
};

/// gfx10.3 places the system SGPRs as gfx11 does (AMDGPUUsage, "Initial
/// Kernel Execution State", shared by GFX6-GFX11) and takes MODE's IEEE and
/// DX10_CLAMP bits from rsrc1; its code reaches scratch through the private
/// segment buffer, and the work-item IDs come one VGPR each.
const GFX10: LaunchAbi = LaunchAbi {
    private_buffer: PrivateBuffer::Swizzled {
        layout: Family::Gfx10,
    },
    packed_ids: false,
    ..GFX11
};

const GFX12: LaunchAbi = LaunchAbi {
    workgroup_ids: WorkgroupIds::Architected,
    scratch_offset_sgpr: false,
    float_mode: FloatMode::Fixed {
        ieee: false,
        dx10_clamp: true,
    },
    private_buffer: PrivateBuffer::Unused,
    packed_ids: true,
};

/// gfx90a (CDNA2) places the system SGPRs as gfx11 does and takes MODE's
/// bits from rsrc1; clang-19's code reaches scratch with MUBUF through the
/// private segment buffer (a gfx9-layout V#) plus the scratch wave offset
/// (`s_add_u32 s0, s0, s15`), and sets FLAT_SCRATCH from the flat scratch
/// init pair (`s_add_u32 flat_scratch_lo, s10, s15`); the work-item IDs
/// come packed in v0 (AMDGPUUsage: packed since GFX90A).
const GFX90A: LaunchAbi = LaunchAbi {
    private_buffer: PrivateBuffer::Swizzled {
        layout: Family::Gfx90a,
    },
    ..GFX11
};

/// gfx940-gfx942 (CDNA3) have architected flat scratch (AMDGPUUsage's
/// processor table): the hardware sets the scratch base, the descriptor
/// may not ask for the private segment buffer or flat scratch init, and no
/// scratch offset SGPR is written (clang-19's gfx942 kernels enable the
/// private segment and still take the workgroup IDs right after the user
/// SGPRs: `s_mov_b32 s12, s6`); the code reaches scratch with
/// `scratch_*` instructions. The workgroup IDs stay in system SGPRs (no
/// architected SGPRs, unlike gfx12).
const GFX94: LaunchAbi = LaunchAbi {
    scratch_offset_sgpr: false,
    ..GFX11
};

/// The launch ABI of `family`.
pub const fn launch_abi(family: Family) -> &'static LaunchAbi {
    match family {
        Family::Gfx11 => &GFX11,
        Family::Gfx12 => &GFX12,
        Family::Gfx10 => &GFX10,
        Family::Gfx90a => &GFX90A,
        Family::Gfx94 => &GFX94,
    }
}

impl LaunchAbi {
    /// The four private segment buffer dwords for a wave of `lanes` lanes
    /// with `lane_bytes` bytes of scratch each.
    pub fn private_segment_buffer(&self, lanes: usize, lane_bytes: u32) -> [u32; 4] {
        match self.private_buffer {
            PrivateBuffer::Unused => {
                let [a, b] = [PRIVATE_APERTURE as u32, (PRIVATE_APERTURE >> 32) as u32];
                [a, b, lane_bytes, 0]
            }
            PrivateBuffer::Swizzled { layout } => {
                // Base SCRATCH_BUFFER_BASE, stride 0, SWIZZLE_ENABLE (4-byte
                // elements); NUM_RECORDS all of the aperture (a raw buffer:
                // the lane's own scratch bounds are checked where the access
                // lands); DST_SEL_XYZW = XYZW, INDEX_STRIDE the wave's width
                // (2: 32, 3: 64), ADD_TID_ENABLE; where the layout has them
                // (gfx10), RESOURCE_LEVEL 1 and OOB_SELECT 3 (raw).
                let has = |field| BufferResource::field_bits(layout, field) > 0;
                let v = BufferResource {
                    base_address: SCRATCH_BUFFER_BASE,
                    swizzle_enable: 1,
                    num_records: u32::MAX,
                    dst_sel_x: 4,
                    dst_sel_y: 5,
                    dst_sel_z: 6,
                    dst_sel_w: 7,
                    index_stride: if lanes == 64 { 3 } else { 2 },
                    add_tid_enable: 1,
                    // GCN reads DATA_FORMAT 0 as an unbound resource
                    // (`resource::format_invalid`), so CDNA's V# says
                    // 32-bit UINT (DATA_FORMAT 4, NUM_FORMAT 4); gfx10's
                    // raw buffer keeps FORMAT 0.
                    format: if layout.is_gcn() { 4 | 4 << 4 } else { 0 },
                    resource_level: has("resource_level") as u32,
                    oob_select: if has("oob_select") { 3 } else { 0 },
                    ..Default::default()
                };
                // Every value fits its field (`private_buffer_words` pins
                // the words), so the fallback is never taken.
                v.encode(layout).unwrap_or_default()
            }
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// gfx10's private segment buffer: base 2^48 - 4 GiB (words 0 and 1's
    /// low half), SWIZZLE_ENABLE at bit 31 of word 1, every record, and
    /// word 3's DST_SEL XYZW (0xfac), INDEX_STRIDE (bits 21-22: 32 or 64
    /// lanes), ADD_TID_ENABLE (23), RESOURCE_LEVEL (24), OOB_SELECT 3.
    #[test]
    fn private_buffer_words() {
        let abi = launch_abi(Family::Gfx10);
        let word3 = 0xfac | 1 << 23 | 1 << 24 | 3 << 28;
        assert_eq!(
            abi.private_segment_buffer(32, 64),
            [0, 0x8000_ffff, u32::MAX, word3 | 2 << 21]
        );
        assert_eq!(
            abi.private_segment_buffer(64, 64),
            [0, 0x8000_ffff, u32::MAX, word3 | 3 << 21]
        );
    }

    /// gfx90a's private segment buffer in gfx9's V# layout (CDNA3 guide,
    /// "Buffer Resource"): gfx10's base and swizzle words, and word 3's
    /// DST_SEL XYZW (0xfac), NUM_FORMAT UINT (bits 12-14: 4), DATA_FORMAT
    /// 32 (bits 15-18: 4), INDEX_STRIDE 64 (bits 21-22: 3) and
    /// ADD_TID_ENABLE (23); gfx9 has no RESOURCE_LEVEL or OOB_SELECT.
    /// gfx942 has none: architected flat scratch.
    #[test]
    fn cdna_private_buffer_words() {
        let abi = launch_abi(Family::Gfx90a);
        let word3 = 0xfac | 4 << 12 | 4 << 15 | 3 << 21 | 1 << 23;
        assert_eq!(
            abi.private_segment_buffer(64, 64),
            [0, 0x8000_ffff, u32::MAX, word3]
        );
        assert_eq!(
            launch_abi(Family::Gfx94).private_buffer,
            PrivateBuffer::Unused
        );
    }
}
