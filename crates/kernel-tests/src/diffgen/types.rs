//! OpenCL C scalar and vector types, their host-C spellings, and values as
//! raw bits (so NaN payloads, −0 and half values survive unchanged).

use std::fmt::Write as _;

/// An OpenCL C scalar type (the element type of a vector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Char,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    Half,
    Float,
    Double,
}

use Scalar::*;

impl Scalar {
    /// Every scalar type.
    pub const ALL: [Scalar; 11] = [
        Char, UChar, Short, UShort, Int, UInt, Long, ULong, Half, Float, Double,
    ];
    /// The integer types.
    pub const INTS: [Scalar; 8] = [Char, UChar, Short, UShort, Int, UInt, Long, ULong];
    /// The floating-point types.
    pub const FLOATS: [Scalar; 3] = [Half, Float, Double];

    /// OpenCL spelling.
    pub fn cl(self) -> &'static str {
        match self {
            Char => "char",
            UChar => "uchar",
            Short => "short",
            UShort => "ushort",
            Int => "int",
            UInt => "uint",
            Long => "long",
            ULong => "ulong",
            Half => "half",
            Float => "float",
            Double => "double",
        }
    }

    /// Host C spelling (typedefs of the host prelude; `f16` holds half bits).
    pub fn host(self) -> &'static str {
        match self {
            Char => "i8",
            UChar => "u8",
            Short => "i16",
            UShort => "u16",
            Int => "i32",
            UInt => "u32",
            Long => "i64",
            ULong => "u64",
            Half => "f16",
            Float => "f32",
            Double => "f64",
        }
    }

    pub fn bytes(self) -> usize {
        match self {
            Char | UChar => 1,
            Short | UShort | Half => 2,
            Int | UInt | Float => 4,
            Long | ULong | Double => 8,
        }
    }

    pub fn bits(self) -> u32 {
        self.bytes() as u32 * 8
    }

    pub fn is_float(self) -> bool {
        matches!(self, Half | Float | Double)
    }

    pub fn is_int(self) -> bool {
        !self.is_float()
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Char | Short | Int | Long)
    }

    /// The integer type of `bytes` bytes with the given signedness.
    pub fn int(bytes: usize, signed: bool) -> Scalar {
        match (bytes, signed) {
            (1, true) => Char,
            (1, false) => UChar,
            (2, true) => Short,
            (2, false) => UShort,
            (4, true) => Int,
            (4, false) => UInt,
            (8, true) => Long,
            (8, false) => ULong,
            _ => panic!("no {bytes}-byte integer type"),
        }
    }

    /// The unsigned integer type of the same size (floats too).
    pub fn unsigned(self) -> Scalar {
        Scalar::int(self.bytes(), false)
    }

    /// Smallest and largest value of an integer type, as i128.
    pub fn int_range(self) -> (i128, i128) {
        assert!(self.is_int());
        let bits = self.bits();
        if self.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    }

    /// `(significand bits incl. the implicit one, minimum normal exponent,
    /// maximum exponent)` of a float type.
    pub fn float_format(self) -> (u32, i32, i32) {
        match self {
            Half => (11, -14, 15),
            Float => (24, -126, 127),
            Double => (53, -1022, 1023),
            _ => panic!("{self:?} is not a float type"),
        }
    }

    /// Bits of a value of this type as an integer of its width.
    pub fn mask(self) -> u64 {
        if self.bits() == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits()) - 1
        }
    }

    /// Integer value of `bits` (sign-extended for signed types).
    pub fn int_value(self, bits: u64) -> i128 {
        let b = self.bits();
        let v = bits & self.mask();
        if self.is_signed_int() && b < 128 && (v >> (b - 1)) & 1 == 1 {
            v as i128 - (1i128 << b)
        } else {
            v as i128
        }
    }

    /// The value of float `bits` as an f64 (exact for every float type).
    pub fn float_value(self, bits: u64) -> f64 {
        match self {
            Half => half_to_f64(bits as u16),
            Float => f32::from_bits(bits as u32) as f64,
            Double => f64::from_bits(bits),
            _ => panic!("{self:?} is not a float type"),
        }
    }

    /// Is `bits` a NaN of this float type?
    pub fn is_nan(self, bits: u64) -> bool {
        self.is_float() && self.float_value(bits).is_nan()
    }

    /// Two results are equal: bit for bit, except that any NaN equals any NaN.
    pub fn same(self, a: u64, b: u64) -> bool {
        let (a, b) = (a & self.mask(), b & self.mask());
        a == b || (self.is_nan(a) && self.is_nan(b))
    }

    /// Human-readable value: decimal, and the bits in hex.
    pub fn show(self, bits: u64) -> String {
        let bits = bits & self.mask();
        let w = self.bytes() * 2;
        if self.is_float() {
            format!("{:e} (0x{bits:0w$x})", self.float_value(bits))
        } else {
            format!("{} (0x{bits:0w$x})", self.int_value(bits))
        }
    }
}

/// IEEE binary16 bits to f64 (exact).
pub fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    sign * match exp {
        0 => man * 2f64.powi(-24),
        31 if man == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1024.0 + man) * 2f64.powi(e - 25),
    }
}

/// The vector widths OpenCL C has (1 = scalar).
pub const WIDTHS: [u8; 6] = [1, 2, 3, 4, 8, 16];

/// A scalar (`width == 1`) or vector type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ty {
    pub elem: Scalar,
    pub width: u8,
}

impl Ty {
    pub fn new(elem: Scalar, width: u8) -> Ty {
        Ty { elem, width }
    }

    /// OpenCL spelling, e.g. `short8`, `float`.
    pub fn cl(self) -> String {
        if self.width == 1 {
            self.elem.cl().to_string()
        } else {
            format!("{}{}", self.elem.cl(), self.width)
        }
    }

    /// The same width with another element type.
    pub fn with(self, elem: Scalar) -> Ty {
        Ty { elem, ..self }
    }

    /// Bytes one work-item's value occupies in a buffer (`vloadN` layout:
    /// a 3-vector takes three elements).
    pub fn bytes(self) -> usize {
        self.elem.bytes() * self.width as usize
    }

    /// Formats one work-item's value (`width` components of raw bits).
    pub fn show(self, comps: &[u64]) -> String {
        let mut s = String::new();
        if self.width > 1 {
            s.push('(');
        }
        for (i, c) in comps.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            write!(s, "{}", self.elem.show(*c)).unwrap();
        }
        if self.width > 1 {
            s.push(')');
        }
        s
    }
}

/// Reads `ty`'s components for work-item `lane` from a buffer region.
pub fn read_value(bytes: &[u8], region: usize, ty: Ty, lane: usize) -> Vec<u64> {
    let n = ty.elem.bytes();
    let start = region + lane * ty.bytes();
    (0..ty.width as usize)
        .map(|k| {
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(&bytes[start + k * n..start + (k + 1) * n]);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// Writes components (little-endian, `elem` bytes each) into `out`.
pub fn write_value(out: &mut Vec<u8>, elem: Scalar, comps: &[u64]) {
    for c in comps {
        out.extend_from_slice(&c.to_le_bytes()[..elem.bytes()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(Char.int_value(0xff), -1);
        assert_eq!(ULong.int_value(u64::MAX), u64::MAX as i128);
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(half_to_f64(0x7bff), 65504.0);
        assert!(Half.same(0x7e00, 0x7c01));
        assert!(!Half.same(0x8000, 0x0000));
        assert_eq!(Ty::new(Short, 8).cl(), "short8");
        assert_eq!(Long.int_range(), (i64::MIN as i128, i64::MAX as i128));
    }
}
