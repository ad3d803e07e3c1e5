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
        Ty::F16 | Ty::B16 | Ty::BF16 | Ty::V2F16 => h as u64,
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
