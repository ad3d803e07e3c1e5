//! Inline constants: the 9-bit source codes 128..=248 resolved per operand type.

use crate::Ty;

/// Float inline constants for codes 240..=248 as (f16, f32, f64) bits.
const FLOATS: [(u16, u32, u64); 9] = [
    (0x3800, 0x3f00_0000, 0x3fe0_0000_0000_0000), // 0.5
    (0xb800, 0xbf00_0000, 0xbfe0_0000_0000_0000), // -0.5
    (0x3c00, 0x3f80_0000, 0x3ff0_0000_0000_0000), // 1.0
    (0xbc00, 0xbf80_0000, 0xbff0_0000_0000_0000), // -1.0
    (0x4000, 0x4000_0000, 0x4000_0000_0000_0000), // 2.0
    (0xc000, 0xc000_0000, 0xc000_0000_0000_0000), // -2.0
    (0x4400, 0x4080_0000, 0x4010_0000_0000_0000), // 4.0
    (0xc400, 0xc080_0000, 0xc010_0000_0000_0000), // -4.0
    (0x3118, 0x3e22_f983, 0x3fc4_5f30_6dc9_c882), // 1/(2*pi)
];

/// Whether `bits` is one of the float inline constants as an f32.
pub fn is_inline_float_f32(bits: u32) -> bool {
    FLOATS.iter().any(|&(_, f32_bits, _)| f32_bits == bits)
}

/// How LLVM prints the float inline constants (f64 1/(2*pi) is longer).
const FLOAT_TEXT: [&str; 9] = [
    "0.5",
    "-0.5",
    "1.0",
    "-1.0",
    "2.0",
    "-2.0",
    "4.0",
    "-4.0",
    "0.15915494",
];

/// The integer an inline-integer code stands for.
fn int_of(code: u16) -> Option<i64> {
    match code {
        128..=192 => Some(code as i64 - 128),
        193..=208 => Some(192 - code as i64),
        _ => None,
    }
}

/// Value of inline constant `code` for an operand of type `ty`, or None if
/// `code` is not an inline constant.
///
/// Integer codes are sign-extended to the operand width (32 bits for 16-bit
/// and packed operands, as the hardware does). Float codes give the value in
/// the operand's float width; packed integer (V2B16) operands get the f32
/// bits, packed f16 operands the f16 value in the low half only.
pub fn inline_value(code: u16, ty: Ty) -> Option<u64> {
    if let Some(i) = int_of(code) {
        return Some(match ty.dwords() {
            2 => i as u64,
            _ => i as i32 as u32 as u64,
        });
    }
    let (h, s, d) = *FLOATS.get(code.checked_sub(240)? as usize)?;
    Some(match ty {
        Ty::F64 | Ty::B64 => d,
        // bf16 is the high half of an f32.
        Ty::BF16 => (s >> 16) as u64,
        Ty::F16 | Ty::B16 | Ty::V2F16 => h as u64,
        _ if ty.dwords() == 2 => d,
        _ => s as u64,
    })
}

/// The printed text of inline constant `code` for type `ty` (None: print the
/// value in hex, as LLVM does for float codes on 16-bit integer operands).
pub fn inline_text(code: u16, ty: Ty) -> Option<String> {
    if let Some(i) = int_of(code) {
        return Some(i.to_string());
    }
    let k = code.checked_sub(240)? as usize;
    if ty == Ty::B16 {
        return None;
    }
    if k == 8 && matches!(ty, Ty::F64 | Ty::B64) {
        return Some("0.15915494309189532".into());
    }
    FLOAT_TEXT.get(k).map(|s| s.to_string())
}

/// Reverse of [`inline_value`]: the code whose value for `ty` is `value`.
pub fn inline_code(value: u64, ty: Ty) -> Option<u16> {
    (128..=248).find(|&c| inline_value(c, ty) == Some(value))
}

/// How LLVM prints a 32-bit literal `lit` in an operand of type `ty`.
///
/// The printer sees only the value, not whether it came from a literal or
/// an inline code, so a literal whose value is also an inline constant
/// prints like one (`s_addc_u32 s1, s1, 0`). The value it sees depends on
/// the operand type; the rules below were found by disassembling literals
/// of every type with llvm-mc-19 (see `tests/completeness.rs`).
pub fn literal_text(lit: u32, ty: Ty) -> String {
    match ty {
        // The literal is the high half of the double.
        // The literal is the high half of the double. LLVM treats the wide
        // 8-register WMMA accumulators (wave32) the same way.
        Ty::F64 | Ty::B256 | Ty::B512 | Ty::B1024 => {
            f64_text((lit as u64) << 32).unwrap_or_else(|| format!("{lit:#x}"))
        }
        // Zero-extended: no negative integers, no float names.
        Ty::B64 if lit <= 64 => lit.to_string(),
        Ty::B64 => format!("{lit:#x}"),
        Ty::F16 => half_text(lit as u16, HALF_F16),
        // bf16 names the low half's value but shows the whole word in hex.
        Ty::BF16 => half_name(lit as u16, HALF_BF16).unwrap_or_else(|| format!("{lit:#x}")),
        // 16-bit integers: the 32-bit value is checked first, then only the
        // low half is shown.
        Ty::B16 => word_text(lit).unwrap_or_else(|| format!("{:#x}", lit as u16)),
        Ty::V2F16 => packed_text(lit, HALF_F16),
        Ty::V2BF16 => packed_text(lit, HALF_BF16),
        _ => word_text(lit).unwrap_or_else(|| format!("{lit:#x}")),
    }
}

/// 16-bit float bit patterns of the float inline constants (0.5, -0.5, 1.0,
/// -1.0, 2.0, -2.0, 4.0, -4.0, 1/(2*pi)), in [`FLOAT_TEXT`] order.
type HalfConsts = [u16; 9];
const HALF_F16: HalfConsts = [
    0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
];
const HALF_BF16: HalfConsts = [
    0x3f00, 0xbf00, 0x3f80, 0xbf80, 0x4000, 0xc000, 0x4080, 0xc080, 0x3e22,
];

/// A 32-bit value that LLVM names: an integer in -16..=64 or an f32 inline
/// float constant.
fn word_text(v: u32) -> Option<String> {
    if (-16..=64).contains(&(v as i32)) {
        return Some((v as i32).to_string());
    }
    let k = FLOATS.iter().position(|f| f.1 == v)?;
    Some(FLOAT_TEXT[k].to_string())
}

/// A 16-bit value: an integer in -16..=64 (as i16), a float constant of the
/// 16-bit format, else hex.
fn half_text(v: u16, consts: HalfConsts) -> String {
    half_name(v, consts).unwrap_or_else(|| format!("{v:#x}"))
}

fn half_name(v: u16, consts: HalfConsts) -> Option<String> {
    if (-16..=64).contains(&(v as i16)) {
        return Some((v as i16).to_string());
    }
    let k = consts.iter().position(|&c| c == v)?;
    Some(FLOAT_TEXT[k].to_string())
}

/// A packed 16-bit pair: a 32-bit inline integer, a 16-bit float constant
/// in the low half (high half zero), else the whole word in hex.
fn packed_text(v: u32, consts: HalfConsts) -> String {
    if (-16..=64).contains(&(v as i32)) {
        return (v as i32).to_string();
    }
    match consts.iter().position(|&c| c as u32 == v) {
        Some(k) => FLOAT_TEXT[k].to_string(),
        None => format!("{v:#x}"),
    }
}

/// The name of an f64 value LLVM prints as a constant (0 and the float
/// inline constants other than 1/(2*pi), whose low half is not zero).
fn f64_text(v: u64) -> Option<String> {
    if v == 0 {
        return Some("0".into());
    }
    let k = FLOATS[..8].iter().position(|f| f.2 == v)?;
    Some(FLOAT_TEXT[k].to_string())
}
