//! Internal to softgpu's tests: what the test suites of several crates
//! share. Only ever a dev-dependency (or a dependency of the test-only
//! `softgpu-kernel-tests`); never published.
//!
//! * [`tool`]: runs the LLVM 19 tools (`clang-19`, `llvm-mc-19`,
//!   `ld.lld-19`, `llvm-objdump-19`, ...). A missing tool fails the test,
//!   naming the Debian package to install; no test skips.
//! * [`kernel`]: a minimal kernel in AMDGPU assembly (`.amdhsa_kernel`
//!   descriptor and code object metadata) from a template, assembled into a
//!   code object.
//! * [`Rng`]: the tests' one deterministic pseudo-random generator.
//! * [`bytes`]: numbers to and from little-endian bytes.
//! * [`env`](mod@env): the environment as the tests see it, with the defaults
//!   scripts/test.sh sets (`SOFTGPU_JIT=verify`), for in-process
//!   configuration ([`env::var`]) and child processes ([`env::command`]).
//! * [`fresh_dir`]: a new scratch folder.
//!
//! Standard library only, so it adds nothing to the features cargo
//! resolves for the crates under test.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod bytes;
pub mod env;
pub mod kernel;
pub mod tool;

mod rng;
pub use rng::Rng;

/// A new, empty folder under the system's temporary folder, named after
/// `tag`, this process and a per-process count (so tests running at once
/// never share one). The caller removes it when done, or leaves it to be
/// looked at.
pub fn fresh_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "softgpu-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}
