//! Behaviours of the real parts the executor honours where the ISA guide
//! is silent, differs from what the hardware was measured to do, or leaves
//! a value undefined. Each has a name device profiles list (`quirks`), so a
//! profile states which behaviours its results include; a profile naming a
//! quirk the executor does not honour for its family is refused.

use softgpu_isa::Family;

/// One named behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quirk {
    /// Its name, as profiles list it.
    pub name: &'static str,
    /// What the part does, and how that is known.
    pub behaviour: &'static str,
}

const GFX11: &[Quirk] = &[
    Quirk {
        name: "dpp16-reserved-controls-read-row-lane-0",
        behaviour: "the DPP16 controls reserved since GFX10 (GFX9's wave shifts 0x130-0x13f and row broadcasts 0x142/0x143, and 0x144-0x14f, 0x170-0x1ff) read lane 0 of the lane's row: measured on gfx11 for 0x142, the others assumed to decode alike (ops/cross_lane.rs)",
    },
    Quirk {
        name: "dpp16-shift-by-zero-reads-own-lane",
        behaviour: "row_shl, row_shr and row_ror by 0 (0x100, 0x110, 0x120) read the lane itself (ops/cross_lane.rs)",
    },
    Quirk {
        name: "div-scale-measured-cases",
        behaviour: "v_div_scale_f32 follows the ISA guide's cases read with f32 denormal tests, and gfx11 hardware's measured results where they differ: zero operands give NaN and set VCC, denormal quotients set VCC (ops/float.rs)",
    },
    Quirk {
        name: "ds-permute-within-32-lane-halves",
        behaviour: "ds_permute_b32 and ds_bpermute_b32 take the lane index mod 32 in wave64 too, so each half permutes within itself, as the guide's pseudocode and gfx10/gfx11 hardware do (ops/ds.rs)",
    },
];

/// The quirks the executor honours for `family`.
pub fn quirks(family: Family) -> &'static [Quirk] {
    match family {
        Family::Gfx11 => GFX11,
        // Not emulated yet: no behaviour to honour.
        Family::Gfx12 | Family::Gfx10 | Family::Gfx90a | Family::Gfx94 => &[],
    }
}
