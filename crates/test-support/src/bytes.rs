//! Numbers to and from little-endian bytes, the layout of device memory,
//! kernel arguments and the files the CLI reads and writes.
//!
//! ```
//! use softgpu_test_support::bytes::{bytes_of, from_bytes};
//!
//! let b = bytes_of(&[1.0f32, -2.0]);
//! assert_eq!(b[..4], 1.0f32.to_le_bytes());
//! assert_eq!(from_bytes::<f32>(&b), [1.0, -2.0]);
//! ```

/// Little-endian bytes of a slice of plain numbers.
pub trait ToBytes {
    /// The slice as little-endian bytes.
    fn to_bytes(&self) -> Vec<u8>;
}

/// Parse little-endian bytes into numbers.
pub trait FromBytes: Sized {
    /// Parses `bytes` (its length must be a multiple of the element size).
    fn vec_from_bytes(bytes: &[u8]) -> Vec<Self>;
}

macro_rules! bytes_impl {
    ($($t:ty),*) => {$(
        impl ToBytes for [$t] {
            fn to_bytes(&self) -> Vec<u8> {
                self.iter().flat_map(|v| v.to_le_bytes()).collect()
            }
        }
        impl FromBytes for $t {
            fn vec_from_bytes(bytes: &[u8]) -> Vec<Self> {
                const N: usize = std::mem::size_of::<$t>();
                assert!(bytes.len().is_multiple_of(N), "byte length {} not a multiple of {}", bytes.len(), N);
                bytes.chunks_exact(N).map(|c| <$t>::from_le_bytes(c.try_into().unwrap())).collect()
            }
        }
    )*};
}
bytes_impl!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// Shorthand: numbers → little-endian bytes.
pub fn bytes_of<T>(v: &[T]) -> Vec<u8>
where
    [T]: ToBytes,
{
    v.to_bytes()
}

/// Shorthand: little-endian bytes → numbers.
pub fn from_bytes<T: FromBytes>(b: &[u8]) -> Vec<T> {
    T::vec_from_bytes(b)
}
