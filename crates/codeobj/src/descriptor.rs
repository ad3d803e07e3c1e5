//! The 64-byte AMDHSA kernel descriptor.

use crate::Error;

/// A decoded AMDHSA kernel descriptor (the 64 bytes at the `NAME.kd` symbol).
///
/// The raw words are kept in [`raw`](Self::raw) and the `compute_pgm_rsrc*` fields;
/// the other public fields are decoded from them using the GFX10/GFX11 bit layout
/// (on GFX12 a few rsrc1/rsrc3 bits changed meaning; read the raw words there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelDescriptor {
    /// The 64 raw bytes.
    pub raw: [u8; 64],
    /// Bytes 0..4: `GROUP_SEGMENT_FIXED_SIZE` (static LDS bytes).
    pub group_segment_fixed_size: u32,
    /// Bytes 4..8: `PRIVATE_SEGMENT_FIXED_SIZE` (scratch bytes per work-item).
    pub private_segment_fixed_size: u32,
    /// Bytes 8..12: `KERNARG_SIZE`.
    pub kernarg_size: u32,
    /// Bytes 16..24: `KERNEL_CODE_ENTRY_BYTE_OFFSET`, relative to the descriptor.
    pub kernel_code_entry_byte_offset: i64,
    /// Bytes 44..48: `COMPUTE_PGM_RSRC3`.
    pub compute_pgm_rsrc3: u32,
    /// Bytes 48..52: `COMPUTE_PGM_RSRC1`.
    pub compute_pgm_rsrc1: u32,
    /// Bytes 52..56: `COMPUTE_PGM_RSRC2`.
    pub compute_pgm_rsrc2: u32,
    /// Bytes 56..58: `KERNEL_CODE_PROPERTIES`.
    pub kernel_code_properties: u16,
    /// Bytes 58..60: `KERNARG_PRELOAD` (spec length bits 0..7, spec offset bits 7..16).
    pub kernarg_preload: u16,

    // kernel_code_properties
    /// `ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER` (user SGPRs: 4).
    pub enable_sgpr_private_segment_buffer: bool,
    /// `ENABLE_SGPR_DISPATCH_PTR` (user SGPRs: 2).
    pub enable_sgpr_dispatch_ptr: bool,
    /// `ENABLE_SGPR_QUEUE_PTR` (user SGPRs: 2).
    pub enable_sgpr_queue_ptr: bool,
    /// `ENABLE_SGPR_KERNARG_SEGMENT_PTR` (user SGPRs: 2).
    pub enable_sgpr_kernarg_segment_ptr: bool,
    /// `ENABLE_SGPR_DISPATCH_ID` (user SGPRs: 2).
    pub enable_sgpr_dispatch_id: bool,
    /// `ENABLE_SGPR_FLAT_SCRATCH_INIT` (user SGPRs: 2).
    pub enable_sgpr_flat_scratch_init: bool,
    /// `ENABLE_SGPR_PRIVATE_SEGMENT_SIZE` (user SGPRs: 1).
    pub enable_sgpr_private_segment_size: bool,
    /// `ENABLE_WAVEFRONT_SIZE32`: the kernel runs in wave32 (else wave64).
    pub wave32: bool,
    /// `USES_DYNAMIC_STACK`.
    pub uses_dynamic_stack: bool,

    // compute_pgm_rsrc1
    /// `GRANULATED_WORKITEM_VGPR_COUNT` (rsrc1 bits 0..6).
    pub granulated_workitem_vgpr_count: u8,
    /// `GRANULATED_WAVEFRONT_SGPR_COUNT` (rsrc1 bits 6..10).
    pub granulated_wavefront_sgpr_count: u8,
    /// `PRIORITY` (rsrc1 bits 10..12).
    pub priority: u8,
    /// `FLOAT_ROUND_MODE_32` (rsrc1 bits 12..14): 0 nearest even, 1 +inf, 2 -inf, 3 zero.
    pub float_round_mode_32: u8,
    /// `FLOAT_ROUND_MODE_16_64` (rsrc1 bits 14..16).
    pub float_round_mode_16_64: u8,
    /// `FLOAT_DENORM_MODE_32` (rsrc1 bits 16..18): 0 flush src+dst, 1 flush dst, 2 flush src, 3 no flush.
    pub float_denorm_mode_32: u8,
    /// `FLOAT_DENORM_MODE_16_64` (rsrc1 bits 18..20).
    pub float_denorm_mode_16_64: u8,
    /// `PRIV` (rsrc1 bit 20).
    pub priv_: bool,
    /// `ENABLE_DX10_CLAMP` (rsrc1 bit 21; `WG_RR_EN` on GFX12).
    pub dx10_clamp: bool,
    /// `DEBUG_MODE` (rsrc1 bit 22).
    pub debug_mode: bool,
    /// `ENABLE_IEEE_MODE` (rsrc1 bit 23; `DISABLE_PERF` on GFX12).
    pub ieee_mode: bool,
    /// `BULKY` (rsrc1 bit 24).
    pub bulky: bool,
    /// `CDBG_USER` (rsrc1 bit 25).
    pub cdbg_user: bool,
    /// `FP16_OVFL` (rsrc1 bit 26).
    pub fp16_ovfl: bool,
    /// `WGP_MODE` (rsrc1 bit 29).
    pub wgp_mode: bool,
    /// `MEM_ORDERED` (rsrc1 bit 30).
    pub mem_ordered: bool,
    /// `FWD_PROGRESS` (rsrc1 bit 31).
    pub fwd_progress: bool,

    // compute_pgm_rsrc2
    /// `ENABLE_PRIVATE_SEGMENT` (rsrc2 bit 0; `ENABLE_SGPR_PRIVATE_SEGMENT_WAVEFRONT_OFFSET`).
    pub enable_private_segment: bool,
    /// `USER_SGPR_COUNT` (rsrc2 bits 1..6).
    pub user_sgpr_count: u8,
    /// `ENABLE_TRAP_HANDLER` (rsrc2 bit 6).
    pub enable_trap_handler: bool,
    /// `ENABLE_SGPR_WORKGROUP_ID_X` (rsrc2 bit 7).
    pub enable_sgpr_workgroup_id_x: bool,
    /// `ENABLE_SGPR_WORKGROUP_ID_Y` (rsrc2 bit 8).
    pub enable_sgpr_workgroup_id_y: bool,
    /// `ENABLE_SGPR_WORKGROUP_ID_Z` (rsrc2 bit 9).
    pub enable_sgpr_workgroup_id_z: bool,
    /// `ENABLE_SGPR_WORKGROUP_INFO` (rsrc2 bit 10).
    pub enable_sgpr_workgroup_info: bool,
    /// `ENABLE_VGPR_WORKITEM_ID` (rsrc2 bits 11..13): 0 X, 1 X+Y, 2 X+Y+Z.
    pub enable_vgpr_workitem_id: u8,
    /// `ENABLE_EXCEPTION_ADDRESS_WATCH` (rsrc2 bit 13).
    pub enable_exception_address_watch: bool,
    /// `ENABLE_EXCEPTION_MEMORY` (rsrc2 bit 14).
    pub enable_exception_memory: bool,
    /// `GRANULATED_LDS_SIZE` (rsrc2 bits 15..24; the CP sets it, normally 0).
    pub granulated_lds_size: u16,
    /// `ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION` (rsrc2 bit 24).
    pub enable_exception_fp_invalid_operation: bool,
    /// `ENABLE_EXCEPTION_FP_DENORMAL_SOURCE` (rsrc2 bit 25).
    pub enable_exception_fp_denormal_source: bool,
    /// `ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO` (rsrc2 bit 26).
    pub enable_exception_fp_division_by_zero: bool,
    /// `ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW` (rsrc2 bit 27).
    pub enable_exception_fp_overflow: bool,
    /// `ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW` (rsrc2 bit 28).
    pub enable_exception_fp_underflow: bool,
    /// `ENABLE_EXCEPTION_IEEE_754_FP_INEXACT` (rsrc2 bit 29).
    pub enable_exception_fp_inexact: bool,
    /// `ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO` (rsrc2 bit 30).
    pub enable_exception_int_divide_by_zero: bool,

    // compute_pgm_rsrc3 (its layout per processor: [`Rsrc3`])
    /// `SHARED_VGPR_COUNT` (rsrc3 bits 0..4, GFX10/GFX11).
    pub shared_vgpr_count: u8,
    /// `INST_PREF_SIZE` (rsrc3 bits 4..10 on GFX11; 4..12 on GFX12).
    pub inst_pref_size: u8,
    /// `TRAP_ON_START` (rsrc3 bit 10, GFX11).
    pub trap_on_start: bool,
    /// `TRAP_ON_END` (rsrc3 bit 11, GFX11).
    pub trap_on_end: bool,
    /// `IMAGE_OP` (rsrc3 bit 31, GFX11+).
    pub image_op: bool,
    /// GFX90A/GFX942: the first AccVGPR's index in the unified register
    /// file, in registers (rsrc3's `ACCUM_OFFSET`, bits 0..6, counts
    /// granules of 4 less one: 4 to 256); 0 elsewhere.
    pub accum_offset: u16,
    /// GFX90A/GFX942: `TG_SPLIT` (rsrc3 bit 16): a workgroup's waves may
    /// run on different compute units, so they share no L1 cache
    /// (AMDGPUUsage's memory model for tgsplit mode).
    pub tg_split: bool,
}

/// The layout of compute_pgm_rsrc3, which differs by processor
/// (AMDGPUUsage, "compute_pgm_rsrc3").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rsrc3 {
    /// GFX10 and GFX11: SHARED_VGPR_COUNT, a 6-bit INST_PREF_SIZE,
    /// TRAP_ON_START/END, IMAGE_OP.
    Gfx10,
    /// GFX12: an 8-bit INST_PREF_SIZE and IMAGE_OP.
    Gfx12,
    /// GFX90A and GFX942 (CDNA): ACCUM_OFFSET and TG_SPLIT.
    Gfx90a,
}

impl Rsrc3 {
    /// The layout of processor `target`'s descriptors (`gfx1151`,
    /// `gfx90a`, …).
    pub fn of_target(target: &str) -> Rsrc3 {
        if target.starts_with("gfx12") {
            Rsrc3::Gfx12
        } else if target == "gfx90a" || target.starts_with("gfx94") {
            Rsrc3::Gfx90a
        } else {
            Rsrc3::Gfx10
        }
    }
}

fn bits(v: u32, lo: u32, n: u32) -> u32 {
    (v >> lo) & ((1u32 << n) - 1)
}

fn bit(v: u32, b: u32) -> bool {
    (v >> b) & 1 != 0
}

fn u32_at(raw: &[u8; 64], at: usize) -> u32 {
    u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]])
}

impl KernelDescriptor {
    /// Decode 64 descriptor bytes, rsrc3 in the `layout` of the code's
    /// processor.
    pub fn parse(bytes: &[u8], layout: Rsrc3) -> Result<Self, Error> {
        let rdna = layout != Rsrc3::Gfx90a;
        let raw: [u8; 64] = bytes
            .get(..64)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                Error::Image(format!(
                    "kernel descriptor needs 64 bytes, only {} available",
                    bytes.len()
                ))
            })?;
        let mut off = [0u8; 8];
        off.copy_from_slice(&raw[16..24]);
        let r1 = u32_at(&raw, 48);
        let r2 = u32_at(&raw, 52);
        let r3 = u32_at(&raw, 44);
        let kcp = u16::from_le_bytes([raw[56], raw[57]]);
        let p = u32::from(kcp);
        Ok(KernelDescriptor {
            raw,
            group_segment_fixed_size: u32_at(&raw, 0),
            private_segment_fixed_size: u32_at(&raw, 4),
            kernarg_size: u32_at(&raw, 8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(off),
            compute_pgm_rsrc3: r3,
            compute_pgm_rsrc1: r1,
            compute_pgm_rsrc2: r2,
            kernel_code_properties: kcp,
            kernarg_preload: u16::from_le_bytes([raw[58], raw[59]]),

            enable_sgpr_private_segment_buffer: bit(p, 0),
            enable_sgpr_dispatch_ptr: bit(p, 1),
            enable_sgpr_queue_ptr: bit(p, 2),
            enable_sgpr_kernarg_segment_ptr: bit(p, 3),
            enable_sgpr_dispatch_id: bit(p, 4),
            enable_sgpr_flat_scratch_init: bit(p, 5),
            enable_sgpr_private_segment_size: bit(p, 6),
            wave32: bit(p, 10),
            uses_dynamic_stack: bit(p, 11),

            granulated_workitem_vgpr_count: bits(r1, 0, 6) as u8,
            granulated_wavefront_sgpr_count: bits(r1, 6, 4) as u8,
            priority: bits(r1, 10, 2) as u8,
            float_round_mode_32: bits(r1, 12, 2) as u8,
            float_round_mode_16_64: bits(r1, 14, 2) as u8,
            float_denorm_mode_32: bits(r1, 16, 2) as u8,
            float_denorm_mode_16_64: bits(r1, 18, 2) as u8,
            priv_: bit(r1, 20),
            dx10_clamp: bit(r1, 21),
            debug_mode: bit(r1, 22),
            ieee_mode: bit(r1, 23),
            bulky: bit(r1, 24),
            cdbg_user: bit(r1, 25),
            fp16_ovfl: bit(r1, 26),
            wgp_mode: bit(r1, 29),
            mem_ordered: bit(r1, 30),
            fwd_progress: bit(r1, 31),

            enable_private_segment: bit(r2, 0),
            user_sgpr_count: bits(r2, 1, 5) as u8,
            enable_trap_handler: bit(r2, 6),
            enable_sgpr_workgroup_id_x: bit(r2, 7),
            enable_sgpr_workgroup_id_y: bit(r2, 8),
            enable_sgpr_workgroup_id_z: bit(r2, 9),
            enable_sgpr_workgroup_info: bit(r2, 10),
            enable_vgpr_workitem_id: bits(r2, 11, 2) as u8,
            enable_exception_address_watch: bit(r2, 13),
            enable_exception_memory: bit(r2, 14),
            granulated_lds_size: bits(r2, 15, 9) as u16,
            enable_exception_fp_invalid_operation: bit(r2, 24),
            enable_exception_fp_denormal_source: bit(r2, 25),
            enable_exception_fp_division_by_zero: bit(r2, 26),
            enable_exception_fp_overflow: bit(r2, 27),
            enable_exception_fp_underflow: bit(r2, 28),
            enable_exception_fp_inexact: bit(r2, 29),
            enable_exception_int_divide_by_zero: bit(r2, 30),

            shared_vgpr_count: if layout == Rsrc3::Gfx10 {
                bits(r3, 0, 4) as u8
            } else {
                0
            },
            inst_pref_size: match layout {
                Rsrc3::Gfx10 => bits(r3, 4, 6),
                Rsrc3::Gfx12 => bits(r3, 4, 8),
                Rsrc3::Gfx90a => 0,
            } as u8,
            trap_on_start: layout == Rsrc3::Gfx10 && bit(r3, 10),
            trap_on_end: layout == Rsrc3::Gfx10 && bit(r3, 11),
            image_op: rdna && bit(r3, 31),
            accum_offset: if rdna {
                0
            } else {
                (bits(r3, 0, 6) as u16 + 1) * 4
            },
            tg_split: !rdna && bit(r3, 16),
        })
    }

    /// Number of user SGPRs implied by the `KERNEL_CODE_PROPERTIES` enables
    /// (excluding preloaded kernel arguments); compare with [`user_sgpr_count`](Self::user_sgpr_count).
    pub fn enabled_user_sgprs(&self) -> u32 {
        let mut n = 0;
        if self.enable_sgpr_private_segment_buffer {
            n += 4;
        }
        for (on, k) in [
            (self.enable_sgpr_dispatch_ptr, 2),
            (self.enable_sgpr_queue_ptr, 2),
            (self.enable_sgpr_kernarg_segment_ptr, 2),
            (self.enable_sgpr_dispatch_id, 2),
            (self.enable_sgpr_flat_scratch_init, 2),
            (self.enable_sgpr_private_segment_size, 1),
        ] {
            if on {
                n += k;
            }
        }
        n
    }

    /// Number of kernel-argument SGPRs preloaded (`KERNARG_PRELOAD_SPEC_LENGTH`).
    pub fn kernarg_preload_length(&self) -> u32 {
        u32::from(self.kernarg_preload & 0x7f)
    }

    /// Kernarg dword offset of the first preloaded argument (`KERNARG_PRELOAD_SPEC_OFFSET`).
    pub fn kernarg_preload_offset(&self) -> u32 {
        u32::from(self.kernarg_preload >> 7)
    }

    /// The wavefront size, 32 or 64.
    pub fn wavefront_size(&self) -> u32 {
        if self.wave32 {
            32
        } else {
            64
        }
    }
}
