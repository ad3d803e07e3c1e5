//! The element and argument types the API accepts, sealed so that every
//! one has a fixed little-endian layout the checks can rely on.

mod sealed {
    pub trait Sealed {}
}

/// A plain value type: kernel scalar arguments, upload and read elements.
/// Sealed: only the listed types implement it.
pub trait Scalar: sealed::Sealed + Copy + Send + 'static {
    /// Bytes of one value.
    const SIZE: usize;
    /// The type's name, for error messages.
    const NAME: &'static str;
    /// Appends the little-endian bytes.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads a value from exactly [`Scalar::SIZE`] bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const NAME: &'static str = stringify!($t);
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one value's bytes"))
            }
        }
    )*};
}

scalar!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, half::f16);

/// The bytes of a slice of values.
pub(crate) fn to_bytes<T: Scalar>(data: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * T::SIZE);
    for v in data {
        v.put(&mut out);
    }
    out
}

/// Values from bytes (whose length is a multiple of the size).
pub(crate) fn from_bytes<T: Scalar>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::get).collect()
}
