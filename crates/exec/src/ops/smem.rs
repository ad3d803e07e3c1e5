//! SMEM: scalar loads through the constant cache, and cache controls.

use softgpu_isa::Inst;

use super::{nop, Env, Exec, Flow, Result, Trap};
use crate::wave::Wave;

/// `s_load_bN` / `s_buffer_load_bN`: `dwords` dwords at base + offset.
fn load(w: &mut Wave, env: &mut Env, i: &Inst, dwords: usize, buffer: bool) -> Result {
    let base = if buffer {
        // A buffer resource: the base address is the low 48 bits.
        w.read_s64(i.src[0]) & 0xffff_ffff_ffff
    } else {
        w.read_s64(i.src[0])
    };
    let soffset = match i.src[1] {
        softgpu_isa::Operand::None => 0,
        op => w.read_s32(op) as u64,
    };
    // The address is dword-aligned: the low two bits are ignored.
    let addr = base.wrapping_add(i.imm as i64 as u64).wrapping_add(soffset) & !3;
    let mut values = [0u32; 16];
    for (k, v) in values[..dwords].iter_mut().enumerate() {
        let a = addr + 4 * k as u64;
        *v = env.arena.load_u32(a).map_err(|_| Trap::Memory {
            space: "scalar",
            lane: None,
            addr: a,
            len: 4,
        })?;
    }
    w.write_sn(i.dst[0], &values[..dwords]);
    Ok(Flow::Next)
}

macro_rules! sload {
    ($n:expr, $buffer:expr) => {
        (|w: &mut Wave, env: &mut Env, i: &Inst| load(w, env, i, $n, $buffer)) as Exec
    };
}

pub const TABLE: &[(&str, Exec)] = &[
    ("s_load_b32", sload!(1, false)),
    ("s_load_b64", sload!(2, false)),
    ("s_load_b128", sload!(4, false)),
    ("s_load_b256", sload!(8, false)),
    ("s_load_b512", sload!(16, false)),
    ("s_buffer_load_b32", sload!(1, true)),
    ("s_buffer_load_b64", sload!(2, true)),
    ("s_buffer_load_b128", sload!(4, true)),
    ("s_buffer_load_b256", sload!(8, true)),
    ("s_buffer_load_b512", sload!(16, true)),
    ("s_gl1_inv", nop as Exec),
    ("s_dcache_inv", nop as Exec),
    // Address-translation probes only warm caches on hardware.
    ("s_atc_probe", nop as Exec),
    ("s_atc_probe_buffer", nop as Exec),
];
