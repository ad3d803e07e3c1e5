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
    /// Whether it is a float or an integer, checked against a kernel
    /// argument's declared type.
    const NUMERIC: softgpu_codeobj::Numeric;
    /// Appends the little-endian bytes.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads a value from exactly [`Scalar::SIZE`] bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! scalar {
    ($numeric:ident: $($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const NAME: &'static str = stringify!($t);
            const NUMERIC: softgpu_codeobj::Numeric = softgpu_codeobj::Numeric::$numeric;
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one value's bytes"))
            }
        }
    )*};
}

scalar!(Integer: u8, i8, u16, i16, u32, i32, u64, i64);
scalar!(Float: f32, f64, half::f16);

/// The bytes of a slice of values: its memory itself, as every scalar type
/// is plain data laid out little-endian on the hosts softgpu supports.
pub(crate) fn as_bytes<T: Scalar>(data: &[T]) -> &[u8] {
    // SAFETY: the sealed Scalar types are integers and floats: no padding,
    // no invalid bytes; the length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

/// `n` zero values, to read device memory into.
pub(crate) fn zeroed<T: Scalar>(n: usize) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    // SAFETY: all-zero bytes are a valid value (0 or +0.0) of every Scalar
    // type, and exactly n values are initialised before set_len.
    unsafe {
        out.as_mut_ptr().write_bytes(0, n);
        out.set_len(n);
    }
    out
}

/// The bytes of a mutable slice of values, to fill in place.
pub(crate) fn as_bytes_mut<T: Scalar>(data: &mut [T]) -> &mut [u8] {
    // SAFETY: as for `as_bytes`; any bytes written form valid values.
    unsafe {
        std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(data))
    }
}

/// Values from bytes (whose length is a multiple of the size).
pub(crate) fn from_bytes<T: Scalar>(bytes: &[u8]) -> Vec<T> {
    let n = bytes.len() / T::SIZE;
    let mut out: Vec<T> = Vec::with_capacity(n);
    // SAFETY: every bit pattern is a valid value of a Scalar type; exactly
    // n * SIZE bytes are copied into the reserved space before set_len.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), n * T::SIZE);
        out.set_len(n);
    }
    out
}

#[cfg(not(target_endian = "little"))]
compile_error!("softgpu's Scalar byte views assume a little-endian host");
