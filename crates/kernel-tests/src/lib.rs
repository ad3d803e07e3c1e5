//! Test support for running real clang-19 gfx11 kernels on the softgpu executor.
//!
//! * [`compile`] turns OpenCL C or HIP source into a gfx11 code object with
//!   `softgpu-compiler` (Debian's `clang-19`, `lld-19`, `llvm-19`,
//!   `rocm-device-libs`). Errors, including missing tools, make it panic with
//!   the compiler's message (tests fail, they never skip).
//! * Byte/slice helpers, a deterministic PRNG (both from
//!   `softgpu-test-support`) and ULP comparisons for checking kernel
//!   results against CPU references.
//!
//! * [`diffgen`]: the differential generator for OpenCL C built-ins (random
//!   kernels on softgpu vs a host-C oracle), used by
//!   `tests/builtins_differential.rs` and the `diffgen` binary. Its runner is
//!   the one place of this library that calls `softgpu-exec`.
//!
//! The executor-facing helpers of the other tests live in `tests/common/mod.rs`.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use softgpu_compiler::Compiler;

pub mod diffgen;
/// Source language of a kernel: `Lang::OpenCl` (OpenCL C 2.0) or `Lang::Hip`
/// (device-only HIP with `softgpu-compiler`'s header force-included).
pub use softgpu_compiler::Language as Lang;
pub use softgpu_compiler::HIP_HEADER;

/// The targets every kernel test runs on: one part of each family (see
/// [`per_target!`]).
pub const TARGETS: [&str; 5] = ["gfx1151", "gfx1201", "gfx1030", "gfx90a", "gfx942"];

/// Directory holding the kernel sources of this crate.
pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

/// Reads `kernels/NAME`.
pub fn kernel_source(name: &str) -> String {
    let p = kernels_dir().join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// Language implied by a kernel file name (`.cl` → OpenCL, `.hip` → HIP).
pub fn lang_of(name: &str) -> Lang {
    Lang::from_path(Path::new(name))
        .unwrap_or_else(|| panic!("kernel file {name}: expected a .cl or .hip extension"))
}

/// Compiles `kernels/NAME` for `target` (language from the extension).
pub fn compile_kernel(name: &str, target: &str, extra_flags: &[&str]) -> Arc<Vec<u8>> {
    compile_cached(&kernel_source(name), lang_of(name), target, extra_flags)
}

/// Compiles `source` into a gfx11 code object (an ELF shared object) for `target`.
///
/// Results are cached in-process and on disk (`softgpu-compiler`'s cache,
/// placed under the cargo target directory). Panics with the compiler's
/// message on a compile error, and with the list of Debian packages to
/// install when a tool is missing.
pub fn compile(source: &str, lang: Lang, target: &str, extra_flags: &[&str]) -> Vec<u8> {
    compile_cached(source, lang, target, extra_flags)
        .as_ref()
        .clone()
}

type MemoKey = (String, Lang, String, Vec<String>);
type CacheSlot = Arc<OnceLock<Arc<Vec<u8>>>>;

/// Like [`compile`] but returns the shared bytes: the same kernel asked for
/// by several tests (threads) of one process is compiled once.
pub fn compile_cached(
    source: &str,
    lang: Lang,
    target: &str,
    extra_flags: &[&str],
) -> Arc<Vec<u8>> {
    static MEMO: OnceLock<Mutex<HashMap<MemoKey, CacheSlot>>> = OnceLock::new();
    let key = (
        source.to_string(),
        lang,
        target.to_string(),
        extra_flags.iter().map(|f| f.to_string()).collect(),
    );
    let slot = MEMO
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone();
    slot.get_or_init(|| {
        let code = compiler(target, extra_flags)
            .compile(source, lang)
            .unwrap_or_else(|e| panic!("compiling a {lang:?} kernel for {target}: {e}"));
        Arc::new(code)
    })
    .clone()
}

/// A `softgpu-compiler` for `target` with `extra_flags`, caching under the
/// target directory.
fn compiler(target: &str, extra_flags: &[&str]) -> Compiler {
    let c = Compiler::new(target)
        .unwrap_or_else(|e| panic!("{e}"))
        .cache_dir(disk_cache_dir());
    extra_flags.iter().fold(c, |c, f| c.option(f))
}

/// `target/<profile>/kernel-cache`, derived from the test executable's path
/// (`target/<profile>/deps/NAME-HASH`), so tests never write into `$HOME`.
/// `SOFTGPU_KERNEL_CACHE=0` disables it.
pub(crate) fn disk_cache_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        if std::env::var_os("SOFTGPU_KERNEL_CACHE").is_some_and(|v| v == "0") {
            return None;
        }
        let exe = std::env::current_exe().ok()?;
        let deps = exe.parent()?;
        if deps.file_name()? != "deps" {
            return None;
        }
        Some(deps.parent()?.join("kernel-cache"))
    })
    .clone()
}

/// A per-process scratch directory under the system temp dir, named after the
/// process id; folders left by exited processes are removed on first use.
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        // Remove the folders of earlier test processes that have exited.
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = name.strip_prefix("softgpu-kt-") {
                    if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                        let _ = std::fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        let d = tmp.join(format!("softgpu-kt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", d.display()));
        d
    })
}

/// The device-library folder `softgpu-compiler` passes to clang (with the
/// gfx11 `oclc_isa_version_NNNN.bc` files of every target in [`TARGETS`]).
pub fn device_lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut dir = PathBuf::new();
        for t in TARGETS {
            dir = compiler(t, &[])
                .device_lib_dir()
                .unwrap_or_else(|e| panic!("{e}"));
        }
        dir
    })
}

// ---------------------------------------------------------------------------
// Byte helpers and the PRNG, shared with the other crates' tests

pub use softgpu_test_support::bytes::{bytes_of, from_bytes, FromBytes, ToBytes};
pub use softgpu_test_support::Rng;

// ---------------------------------------------------------------------------
// Float comparison

/// Distance in units in the last place between two f32 (0 when both are NaN
/// or equal, including +0 vs -0; `u64::MAX` when exactly one is NaN).
pub fn ulp_diff_f32(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    if a == b {
        return 0;
    }
    fn key(x: f32) -> i64 {
        let b = x.to_bits() as i32;
        (if b < 0 { i32::MIN.wrapping_sub(b) } else { b }) as i64
    }
    key(a).abs_diff(key(b))
}

/// Distance in units in the last place between two f64 (see [`ulp_diff_f32`]).
pub fn ulp_diff_f64(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    if a == b {
        return 0;
    }
    fn key(x: f64) -> i128 {
        let b = x.to_bits() as i64;
        (if b < 0 { i64::MIN.wrapping_sub(b) } else { b }) as i128
    }
    key(a).abs_diff(key(b)) as u64
}

/// Asserts `got[i]` is within `max_ulp` of `want[i]` for all i; the message
/// names the first few mismatches and their inputs' index.
pub fn assert_ulp_f32(what: &str, got: &[f32], want: &[f32], max_ulp: u64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<String> = (0..got.len())
        .filter(|&i| ulp_diff_f32(got[i], want[i]) > max_ulp)
        .take(8)
        .map(|i| {
            format!(
                "  [{i}] got {:e} ({:#010x}) want {:e} ({:#010x}), {} ulp",
                got[i],
                got[i].to_bits(),
                want[i],
                want[i].to_bits(),
                ulp_diff_f32(got[i], want[i])
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: mismatches beyond {max_ulp} ulp:\n{}",
        bad.join("\n")
    );
}

/// f64 version of [`assert_ulp_f32`].
pub fn assert_ulp_f64(what: &str, got: &[f64], want: &[f64], max_ulp: u64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<String> = (0..got.len())
        .filter(|&i| ulp_diff_f64(got[i], want[i]) > max_ulp)
        .take(8)
        .map(|i| {
            format!(
                "  [{i}] got {:e} ({:#018x}) want {:e} ({:#018x}), {} ulp",
                got[i],
                got[i].to_bits(),
                want[i],
                want[i].to_bits(),
                ulp_diff_f64(got[i], want[i])
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: mismatches beyond {max_ulp} ulp:\n{}",
        bad.join("\n")
    );
}

/// Asserts two slices are equal, reporting the first few differing indices.
pub fn assert_slice_eq<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<String> = (0..got.len())
        .filter(|&i| got[i] != want[i])
        .take(8)
        .map(|i| format!("  [{i}] got {:?} want {:?}", got[i], want[i]))
        .collect();
    let count = (0..got.len()).filter(|&i| got[i] != want[i]).count();
    assert!(
        bad.is_empty(),
        "{what}: {count} mismatches, first:\n{}",
        bad.join("\n")
    );
}

/// Defines `mod NAME { #[test] fn gfx1151() ; fn gfx1201() ; fn gfx1030() ;
/// fn gfx90a() ; fn gfx942() }`, each calling `FUNCTION(target)`: one
/// part of each family (gfx1151, RDNA3.5, stands for gfx11: it runs
/// gfx1100's instruction set plus scalar float ops; gfx1100, the default
/// device, runs in the runtime's, the CLI's and the API's tests).
#[macro_export]
macro_rules! per_target {
    ($name:ident, $func:ident) => {
        mod $name {
            #[test]
            fn gfx1151() {
                super::$func("gfx1151")
            }
            #[test]
            fn gfx1201() {
                super::$func("gfx1201")
            }
            #[test]
            fn gfx1030() {
                super::$func("gfx1030")
            }
            #[test]
            fn gfx90a() {
                super::$func("gfx90a")
            }
            #[test]
            fn gfx942() {
                super::$func("gfx942")
            }
        }
    };
}

/// The executor settings the environment asks for (`SOFTGPU_THREADS`,
/// ...) over the tests' defaults (`SOFTGPU_JIT=verify`, as the README's
/// test command sets: `softgpu_test_support::env`): the tests' base
/// settings.
pub fn env_default() -> softgpu_exec::Settings {
    softgpu_env::settings_from(softgpu_test_support::env::var).unwrap_or_else(|e| panic!("{e}"))
}

/// A device for `target` with the tests' base settings ([`env_default`]).
pub fn env_device(target: &str) -> softgpu_exec::DeviceConfig {
    softgpu_env::device_config_from(target, softgpu_test_support::env::var)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_a_trivial_kernel() {
        let src = "kernel void k(global int *p) { p[get_global_id(0)] = 1; }";
        for t in TARGETS {
            let a = compile_cached(src, Lang::OpenCl, t, &[]);
            let b = compile_cached(src, Lang::OpenCl, t, &[]);
            assert!(Arc::ptr_eq(&a, &b), "in-process cache");
            assert!(a.starts_with(b"\x7fELF"));
        }
        assert!(device_lib_dir().join("oclc_isa_version_1151.bc").exists());
    }

    #[test]
    #[should_panic(expected = "<stdin>:1:15: error")]
    fn compile_errors_panic_with_the_compilers_message() {
        compile("kernel void k(", Lang::OpenCl, "gfx1151", &[]);
    }

    /// A plain `cargo test` holds the JIT to the interpreter, as the
    /// README's test command does.
    #[test]
    fn the_tests_run_with_jit_verify_unless_set() {
        if std::env::var_os("SOFTGPU_JIT").is_none_or(|v| v.is_empty()) {
            assert_eq!(env_default().get_jit(), softgpu_exec::JitMode::Verify);
        }
    }

    #[test]
    fn ulps() {
        assert_eq!(ulp_diff_f32(1.0, f32::from_bits(1.0f32.to_bits() + 3)), 3);
        assert_eq!(ulp_diff_f32(-0.0, 0.0), 0);
        assert_eq!(ulp_diff_f32(f32::from_bits(1), -f32::from_bits(1)), 2);
        assert_eq!(ulp_diff_f64(f64::NAN, f64::NAN), 0);
    }
}
