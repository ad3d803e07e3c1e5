//! A differential test generator for OpenCL C built-ins.
//!
//! Random OpenCL C kernels are compiled with clang-19 for gfx11 and run on
//! softgpu; the same programs are emitted as host C (the oracle: each
//! built-in written from the OpenCL C specification, compiled with `cc
//! -ffp-contract=off`) and run on the CPU; results are compared bit for bit
//! (any NaN equals any NaN).
//!
//! * [`types`]: scalar/vector types and values as bits.
//! * [`catalogue`]: the built-ins as data (names, result types, arguments).
//! * [`gen`]: the program model and its seeded generator; the focus list
//!   that makes seeds `0..SLICES` cover every built-in × element type and
//!   every conversion × rounding mode × saturation.
//! * [`data`]: input values (bounds, NaNs, ties, subnormals) and buffer layout.
//! * [`emit`]: OpenCL C and host C text.
//! * [`run`]: host oracle, softgpu run, comparison and mismatch reports.
//!
//! Used by `tests/builtins_differential.rs` (fixed seeds) and the `diffgen`
//! binary (long runs, reproducers).

pub mod catalogue;
pub mod data;
pub mod emit;
pub mod gen;
pub mod run;
pub mod types;

pub use gen::{Program, SLICES};
pub use run::{Case, Config, Mismatch};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_statements_stand_alone() {
        let a = Program::generate(7);
        let b = Program::generate(7);
        let la = data::Layout::new(&a);
        assert_eq!(
            emit::opencl(&a, &la),
            emit::opencl(&b, &data::Layout::new(&b))
        );
        let k = a.stmts[3].0;
        let one = Program::generate(7).only(&[k]);
        let lo = data::Layout::new(&one);
        assert_eq!(
            emit::ocl_stmt(&one.stmts[0].1, &lo.vars[0], lo.outs[0])
                .lines()
                .skip(1)
                .count(),
            emit::ocl_stmt(&a.stmts[3].1, &la.vars[3], la.outs[3])
                .lines()
                .skip(1)
                .count()
        );
    }

    #[test]
    fn the_slices_cover_the_focus_list() {
        let n: usize = (0..SLICES)
            .map(|s| Program::generate(s).stmts.len() - gen::EXTRA)
            .sum();
        assert_eq!(n, gen::focus_list().len());
    }
}
