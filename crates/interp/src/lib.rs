//! The softgpu interpreter, internal to softgpu: a decoded [`Program`]
//! and the semantics of each instruction ([`ops`]), run a whole wave at a
//! time over a [`Wave`]'s registers, with the memory sanitizers handlers
//! call ([`sanitize`]). It depends on the device arena only; the JIT tier
//! builds on it, and the machine (`softgpu-exec`) schedules waves through
//! it. Nothing here reads the environment or spawns a thread.
//!
//! [`Program`]: program::Program
//! [`Wave`]: wave::Wave

#![forbid(unsafe_code)]
// Float predicates are written exactly as the ISA defines them for NaN:
// `!(a >= b)` (true for NaN) is not `a < b`, and `a < b || a > b` is not
// `a != b`. Clippy's suggestions would change results, so they are off.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::double_comparisons)]

pub mod checks;
pub mod float;
pub mod ops;
pub mod placement;
pub mod program;
pub mod sanitize;
pub mod trap;
pub mod wave;
