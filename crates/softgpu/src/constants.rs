//! hrx's dispatch form: buffer bindings plus packed constants.
//!
//! A kernel's explicit arguments are pointers (bindings) and values
//! (constants). [`crate::Stream::dispatch`] takes the pointers as a list of
//! views and the values as one byte string, the IREE-HAL-style ABI hrx
//! uses; this module turns the pair into the same checked [`Args`] the
//! typed form builds, so both forms share every check that follows.

use crate::buffer::View;
use crate::error::{Error, Result};
use crate::kernel::{ArgKind, Args, ExportInfo, Kernel};
use crate::scalar::Scalar;

/// Most constant bytes one dispatch takes: far above any kernarg segment
/// a compiler emits, low enough that a runaway `push` loop is refused.
const MAX_CONSTANT_BYTES: usize = 64 * 1024;

/// The by-value arguments of a dispatch, packed in argument order, each
/// at its own size with no padding between them
/// ([`ExportInfo::constant_byte_length`] bytes in all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Constants {
    bytes: Vec<u8>,
}

impl Constants {
    /// No constants (for kernels whose arguments are all pointers).
    pub fn new() -> Constants {
        Constants::default()
    }

    /// Appends `value`'s little-endian bytes.
    pub fn push<T: Scalar>(&mut self, value: T) -> Result<()> {
        if self.bytes.len() + T::SIZE > MAX_CONSTANT_BYTES {
            return Err(Error::Invalid(format!(
                "constants would exceed {MAX_CONSTANT_BYTES} bytes"
            )));
        }
        value.put(&mut self.bytes);
        Ok(())
    }

    /// Constants already packed by the caller.
    pub fn from_bytes(bytes: &[u8]) -> Constants {
        Constants {
            bytes: bytes.to_vec(),
        }
    }

    /// The packed bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Number of packed bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether there are no constants.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Packs `values` for `kernel`: one value per by-value argument, in
    /// order, as a 4-byte word or zero-extended to an 8-byte one as the
    /// argument's size says. Any other size, or a count that differs from
    /// the kernel's value arguments, is an error naming the argument.
    pub fn indices(kernel: &Kernel, values: &[u32]) -> Result<Constants> {
        let info = kernel.info();
        let slots: Vec<_> = info
            .args
            .iter()
            .enumerate()
            .filter(|(_, a)| a.kind == ArgKind::Value)
            .collect();
        if slots.len() != values.len() {
            return Err(Error::Bindings {
                kernel: info.name.clone(),
                what: "index constants",
                expected: slots.len(),
                given: values.len(),
            });
        }
        let mut out = Constants::new();
        for ((index, arg), &v) in slots.into_iter().zip(values) {
            match arg.size {
                4 => out.push(v)?,
                8 => out.push(u64::from(v))?,
                n => {
                    return Err(Error::Argument {
                        kernel: info.name.clone(),
                        index,
                        name: arg.label(),
                        why: format!("is a {n}-byte value, not a 4- or 8-byte index"),
                    })
                }
            }
        }
        Ok(out)
    }
}

/// The typed arguments a bindings-and-constants dispatch stands for: each
/// pointer argument takes the next binding, each value argument the next
/// bytes of `constants`. The counts are checked against `info` first, so
/// a short list is named as such rather than as a wrong argument.
pub(crate) fn args_of(info: &ExportInfo, constants: &Constants, bindings: &[View]) -> Result<Args> {
    let count = |what, expected, given| {
        Err(Error::Bindings {
            kernel: info.name.clone(),
            what,
            expected,
            given,
        })
    };
    if bindings.len() != info.binding_count {
        return count("bindings", info.binding_count, bindings.len());
    }
    if constants.len() != info.constant_byte_length {
        return count("constant bytes", info.constant_byte_length, constants.len());
    }
    let (mut args, mut views, mut at) = (Args::new(), bindings.iter(), 0usize);
    for (index, arg) in info.args.iter().enumerate() {
        match arg.kind {
            ArgKind::Pointer => args = args.view(*views.next().expect("counted above")),
            ArgKind::Value => {
                let end = at + arg.size as usize;
                args = args.raw(constants.as_bytes()[at..end].to_vec());
                at = end;
            }
            _ => {
                return Err(Error::Argument {
                    kernel: info.name.clone(),
                    index,
                    name: arg.label(),
                    why: "this argument kind cannot be passed as a binding or constant".into(),
                })
            }
        }
    }
    Ok(args)
}
