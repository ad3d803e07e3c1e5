//! The environment as softgpu's tests see it: the process's variables,
//! over the defaults the README's test command (`scripts/test.sh`, CI)
//! sets, so that a plain `cargo test` runs the tests as CI does.
//!
//! Today that is `SOFTGPU_JIT=verify`: every block the JIT compiles runs
//! in both tiers from the same state and any difference faults, so every
//! test holds the JIT to the interpreter. A value set in the environment
//! (`SOFTGPU_JIT=1 cargo test`) wins.
//!
//! The process environment itself is never changed (setting a variable
//! while test threads read the environment is a data race). Instead the
//! tests' configuration goes through [`var`]
//! (`softgpu_env::config_from(softgpu_test_support::env::var)`) and the
//! programs they start through [`command`]. `cargo run`, the examples and
//! programs linked with softgpu's libraries see the environment as it is.

use std::ffi::{OsStr, OsString};
use std::process::Command;

/// The variables scripts/test.sh sets for the whole test run, with its
/// values: what a test sees when the environment leaves one unset.
pub const DEFAULTS: &[(&str, &str)] = &[("SOFTGPU_JIT", "verify")];

/// The default of `name` under test, if it has one.
pub fn default(name: &str) -> Option<&'static str> {
    DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// The variable `name` as a test sees it: the process's value when it is
/// set and not empty (an empty value means unset to softgpu), else its
/// default under test.
pub fn var(name: &str) -> Option<OsString> {
    var_from(name, std::env::var_os(name))
}

fn var_from(name: &str, set: Option<OsString>) -> Option<OsString> {
    set.filter(|v| !v.is_empty())
        .or_else(|| default(name).map(OsString::from))
}

/// `Command::new(program)` with the test defaults of the variables the
/// environment leaves unset: a softgpu program the test starts (the CLI,
/// a C program on the HSA or HIP library) runs configured as the test is.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (name, _) in DEFAULTS {
        if let Some(value) = var(name) {
            cmd.env(name, value);
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_over_the_defaults() {
        let verify = Some(OsString::from("verify"));
        assert_eq!(var_from("SOFTGPU_JIT", None), verify);
        assert_eq!(var_from("SOFTGPU_JIT", Some("".into())), verify);
        assert_eq!(var_from("SOFTGPU_JIT", Some("0".into())), Some("0".into()));
        assert_eq!(var_from("SOFTGPU_THREADS", None), None);
    }

    #[test]
    fn children_get_the_defaults() {
        let cmd = command("true");
        let jit = cmd.get_envs().find(|(n, _)| *n == "SOFTGPU_JIT");
        assert_eq!(jit.and_then(|(_, v)| v), var("SOFTGPU_JIT").as_deref());
    }
}
