//! The JIT tier as dispatches use it, and the mode that chooses it.
//!
//! With the `jit` feature (the default), compiled blocks are softgpu-jit's.
//! Without it, this module is the JIT's stand-in: a [`Tier`] that cannot
//! exist, so the run loop's block path is dead code and the interpreter
//! runs everything, and a device refuses a mode that asks for compiled
//! blocks (`JitMode::check`, a `ConfigError` naming the `jit` feature)
//! instead of quietly running without them. This is the one place the
//! executor looks at the feature.

use softgpu_interp::program::Program;

#[cfg(feature = "jit")]
pub(crate) use softgpu_jit::{verify, Ranges, Tier};

#[cfg(not(feature = "jit"))]
pub(crate) use absent::{verify, Ranges, Tier};

/// How dispatches use the JIT tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitMode {
    /// The interpreter runs everything.
    Off,
    /// Compiled blocks run where they can.
    On,
    /// Every compiled block runs on the wave's registers and then the
    /// interpreter runs the same slots from the same state; any difference
    /// in a register, SCC or the next PC is a fault naming the block and
    /// the register. The interpreter's results are kept. This is how the
    /// tests hold the two tiers to identical results.
    Verify,
}

/// [`JitMode::On`] when the executor is built with its `jit` feature (the
/// default), else [`JitMode::Off`]: the default configuration works in
/// either build.
impl Default for JitMode {
    fn default() -> JitMode {
        if JitMode::BUILT {
            JitMode::On
        } else {
            JitMode::Off
        }
    }
}

impl JitMode {
    /// Whether this build has the JIT tier (softgpu-exec's `jit` feature,
    /// which softgpu-runtime's and softgpu's `jit` features turn on).
    pub const BUILT: bool = cfg!(feature = "jit");

    /// `0`/`off`, `1`/`on` or `verify` (`SOFTGPU_JIT`'s values).
    pub fn parse(text: &str) -> Result<JitMode, String> {
        match text.trim() {
            "0" | "off" => Ok(JitMode::Off),
            "1" | "on" => Ok(JitMode::On),
            "verify" => Ok(JitMode::Verify),
            _ => Err(format!("{text:?} is none of 0, 1, verify")),
        }
    }

    /// The blocks a run of `program` from slot `entry` uses in this mode,
    /// all compiled now (the instruction bench's).
    pub(crate) fn blocks(self, program: &Program, entry: u32, wave64: bool) -> Option<Tier<'_>> {
        match self {
            JitMode::Off => None,
            JitMode::On => Tier::of(program, entry, wave64, false),
            JitMode::Verify => Tier::of(program, entry, wave64, true),
        }
    }

    /// The blocks a dispatch starts with. With the JIT on, a unit is
    /// compiled only once it has run long enough in the interpreter
    /// ([`TIER_UP_INSTRUCTIONS`](softgpu_interp::program::TIER_UP_INSTRUCTIONS);
    /// the dispatch's workers tier up between workgroups,
    /// [`JitMode::tier_up`]), so a dispatch never waits for code it would
    /// barely run. Verification compiles at once, so every block is held
    /// to the interpreter.
    pub(crate) fn dispatch_blocks(
        self,
        program: &Program,
        entry: u32,
        wave64: bool,
    ) -> Option<Tier<'_>> {
        match self {
            JitMode::On => self.tier_up(program, entry, wave64, 0),
            JitMode::Off | JitMode::Verify => self.blocks(program, entry, wave64),
        }
    }

    /// After a workgroup ran `retired` wave instructions in the
    /// interpreter: the blocks to run the next one with, once they exist
    /// (see `Program::tier_up`).
    pub(crate) fn tier_up(
        self,
        program: &Program,
        entry: u32,
        wave64: bool,
        retired: u64,
    ) -> Option<Tier<'_>> {
        match self {
            JitMode::On => Tier::tier_up(program, entry, wave64, retired),
            JitMode::Off | JitMode::Verify => None,
        }
    }
}

/// The JIT's stand-in: its types have no values, so every `Option<Tier>`
/// is `None` and the methods below are never called.
#[cfg(not(feature = "jit"))]
mod absent {
    use std::convert::Infallible;
    use std::marker::PhantomData;

    use softgpu_arena::Memory;
    use softgpu_interp::ops::{Env, Trap};
    use softgpu_interp::program::Program;
    use softgpu_interp::wave::Wave;

    /// A program's compiled blocks: none without the JIT.
    #[derive(Clone, Copy)]
    pub(crate) struct Tier<'a> {
        never: Infallible,
        _program: PhantomData<&'a Program>,
    }

    /// A compiled block: none without the JIT.
    pub(crate) struct Block {
        never: Infallible,
    }

    /// A thread's allowed ranges for blocks: nothing without the JIT.
    #[derive(Clone, Copy)]
    pub(crate) struct Ranges;

    impl Ranges {
        pub(crate) fn of_thread(_: &Memory) -> Ranges {
            Ranges
        }
    }

    impl<'a> Tier<'a> {
        pub(crate) fn of(_: &'a Program, _: u32, _: bool, _: bool) -> Option<Tier<'a>> {
            None
        }

        pub(crate) fn tier_up(_: &'a Program, _: u32, _: bool, _: u64) -> Option<Tier<'a>> {
            None
        }

        pub(crate) fn block_at(self, _: u32) -> Option<(&'a Block, bool)> {
            match self.never {}
        }

        pub(crate) fn block_count(self) -> usize {
            match self.never {}
        }
    }

    impl Block {
        pub(crate) fn slots(&self) -> u32 {
            match self.never {}
        }

        pub(crate) fn runs_under(&self, _: u32) -> bool {
            match self.never {}
        }

        pub(crate) fn runs_in(&self, _: &Env) -> bool {
            match self.never {}
        }

        pub(crate) fn run(
            &self,
            _: &mut Wave,
            _: &mut [u8],
            _: &Memory,
            _: &Ranges,
        ) -> Option<(u32, u32)> {
            match self.never {}
        }
    }

    pub(crate) fn verify(
        block: &Block,
        _: &Program,
        _: &mut Wave,
        _: &mut Env,
    ) -> Result<Option<(u32, u32)>, Trap> {
        match block.never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default mode is one the build runs, and a build without the JIT
    /// refuses the modes that need it by name instead of running without
    /// blocks.
    #[test]
    fn modes_need_the_jit_they_ask_for() {
        assert_eq!(JitMode::default().check().unwrap(), JitMode::default());
        assert_eq!(JitMode::Off.check().unwrap(), JitMode::Off);
        for mode in [JitMode::On, JitMode::Verify] {
            let checked = mode.check();
            assert_eq!(checked.is_ok(), JitMode::BUILT);
            match checked {
                Ok(m) => assert_eq!(m, mode),
                Err(e) => {
                    assert_eq!(
                        (e.setting(), e.value()),
                        ("jit", format!("{mode:?}").as_str())
                    );
                    assert!(e.to_string().contains("`jit` cargo feature"), "{e}");
                }
            }
        }
        assert_eq!(JitMode::default() == JitMode::On, JitMode::BUILT);
    }

    #[test]
    fn parse_takes_the_variable_values() {
        assert_eq!(JitMode::parse(" 0 "), Ok(JitMode::Off));
        assert_eq!(JitMode::parse("off"), Ok(JitMode::Off));
        assert_eq!(JitMode::parse("1"), Ok(JitMode::On));
        assert_eq!(JitMode::parse("on"), Ok(JitMode::On));
        assert_eq!(JitMode::parse("verify"), Ok(JitMode::Verify));
        assert!(JitMode::parse("yes").is_err());
    }
}
