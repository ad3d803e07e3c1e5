//! Test support for running real clang-19 gfx11 kernels on the softgpu executor.
//!
//! * [`compile`] turns OpenCL C or HIP source into a gfx11 code object with the
//!   Debian toolchain (`clang-19`, `lld-19`, `llvm-19`, `rocm-device-libs`).
//!   Missing tools make it panic (tests fail, they never skip).
//! * Byte/slice helpers, a deterministic PRNG and ULP comparisons for checking
//!   kernel results against CPU references.
//!
//! The executor-facing helpers live in `tests/common/mod.rs` so that this
//! library (and `tests/compile_all.rs`) builds independently of `softgpu-exec`.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

/// The targets every kernel test runs on.
pub const TARGETS: [&str; 2] = ["gfx1100", "gfx1151"];

/// Source language of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// OpenCL C 2.0, compiled with the ROCm device libraries.
    OpenCl,
    /// HIP (device only), with the minimal header `kernels/softgpu_hip.h`
    /// force-included instead of the HIP runtime headers.
    Hip,
}

const PACKAGES: &str = "clang-19 lld-19 llvm-19 rocm-device-libs";
const DEVICE_LIBS: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
/// Bump when the compile recipe changes (invalidates the on-disk cache).
const RECIPE_VERSION: u32 = 1;

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
    if name.ends_with(".hip") {
        Lang::Hip
    } else if name.ends_with(".cl") {
        Lang::OpenCl
    } else {
        panic!("kernel file {name}: expected a .cl or .hip extension")
    }
}

/// Compiles `kernels/NAME` for `target` (language from the extension).
pub fn compile_kernel(name: &str, target: &str, extra_flags: &[&str]) -> Arc<Vec<u8>> {
    compile_cached(&kernel_source(name), lang_of(name), target, extra_flags)
}

/// Compiles `source` into a gfx11 code object (an ELF shared object) for `target`.
///
/// Results are cached in-process and on disk (under the cargo target directory,
/// keyed by a hash of the compiler version, recipe, source and flags).
/// Panics with the compiler's stderr on a compile error, and with the list of
/// Debian packages to install when a tool is missing.
pub fn compile(source: &str, lang: Lang, target: &str, extra_flags: &[&str]) -> Vec<u8> {
    compile_cached(source, lang, target, extra_flags)
        .as_ref()
        .clone()
}

type CacheSlot = Arc<OnceLock<Arc<Vec<u8>>>>;

/// Like [`compile`] but returns the shared cached bytes.
pub fn compile_cached(
    source: &str,
    lang: Lang,
    target: &str,
    extra_flags: &[&str],
) -> Arc<Vec<u8>> {
    static CACHE: OnceLock<Mutex<HashMap<u128, CacheSlot>>> = OnceLock::new();
    let key = cache_key(source, lang, target, extra_flags);
    let slot = {
        let mut map = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        map.entry(key).or_default().clone()
    };
    slot.get_or_init(|| {
        let disk = disk_cache_dir().map(|d| d.join(format!("{key:032x}-{target}.hsaco")));
        if let Some(p) = &disk {
            if let Ok(bytes) = std::fs::read(p) {
                if bytes.starts_with(b"\x7fELF") {
                    return Arc::new(bytes);
                }
            }
        }
        let bytes = compile_uncached(source, lang, target, extra_flags);
        if let Some(p) = &disk {
            let tmp = p.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, &bytes).is_ok() {
                let _ = std::fs::rename(&tmp, p);
            }
        }
        Arc::new(bytes)
    })
    .clone()
}

fn cache_key(source: &str, lang: Lang, target: &str, extra_flags: &[&str]) -> u128 {
    let mut h = Fnv128::new();
    h.write(clang_version().as_bytes());
    h.write(&RECIPE_VERSION.to_le_bytes());
    h.write(format!("{lang:?}\0{target}\0").as_bytes());
    for f in extra_flags {
        h.write(f.as_bytes());
        h.write(b"\0");
    }
    h.write(source.as_bytes());
    if lang == Lang::Hip {
        h.write(HIP_HEADER.as_bytes());
    }
    h.finish()
}

/// 128-bit FNV-1a (stable across Rust versions, unlike `DefaultHasher`).
struct Fnv128(u128);
impl Fnv128 {
    fn new() -> Self {
        Fnv128(0x6c62272e07bb014262b821756295c58d)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u128;
            self.0 = self.0.wrapping_mul(0x0000000001000000000000000000013B);
        }
    }
    fn finish(&self) -> u128 {
        self.0
    }
}

/// `target/<profile>/kernel-cache`, derived from the test executable's path
/// (`target/<profile>/deps/NAME-HASH`). `SOFTGPU_KERNEL_CACHE=0` disables it.
fn disk_cache_dir() -> Option<PathBuf> {
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
        let dir = deps.parent()?.join("kernel-cache");
        std::fs::create_dir_all(&dir).ok()?;
        Some(dir)
    })
    .clone()
}

/// Runs a tool; panics naming the Debian packages when it is not installed.
fn run_tool(cmd: &mut Command) -> Output {
    let program = cmd.get_program().to_string_lossy().into_owned();
    match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == ErrorKind::NotFound => panic!(
            "`{program}` is not installed: the kernel tests need the Debian packages \
             {PACKAGES} (apt-get install -y {PACKAGES})"
        ),
        Err(e) => panic!("cannot run `{program}`: {e}"),
    }
}

fn check(out: Output, what: &str, cmd_line: &str) -> Output {
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n$ {cmd_line}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

fn cmd_line(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

fn run_checked(cmd: &mut Command, what: &str) -> Output {
    let line = cmd_line(cmd);
    let out = run_tool(cmd);
    check(out, what, &line)
}

fn clang_version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        let out = run_checked(
            Command::new("clang-19").arg("--version"),
            "clang-19 --version",
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    })
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

fn unique_dir(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let d = scratch_dir().join(format!("{tag}-{}", N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("cannot create {}: {e}", d.display()));
    d
}

/// clang-19's amdgcn data layout, asked from clang itself.
fn amdgcn_datalayout() -> &'static str {
    static DL: OnceLock<String> = OnceLock::new();
    DL.get_or_init(|| {
        let dir = unique_dir("dl");
        let src = dir.join("empty.cl");
        std::fs::write(&src, "").unwrap();
        let out = run_checked(
            Command::new("clang-19")
                .args(["-x", "cl", "-target", "amdgcn-amd-amdhsa", "-nogpulib"])
                .args(["-S", "-emit-llvm", "-o", "-"])
                .arg(&src),
            "asking clang-19 for the amdgcn datalayout",
        );
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .find_map(|l| l.strip_prefix("target datalayout = \""))
            .and_then(|l| l.strip_suffix('"'))
            .unwrap_or_else(|| panic!("no datalayout in clang-19 output:\n{text}"))
            .to_string()
    })
}

/// `gfx1151` → (`"1151"`, 11501): the oclc_isa_version file suffix and constant.
fn isa_version(target: &str) -> (String, u32) {
    let digits = target
        .strip_prefix("gfx")
        .unwrap_or_else(|| panic!("target {target}: expected gfxNNNN"));
    let b = digits.as_bytes();
    if b.len() != 4 {
        panic!("target {target}: only four-digit gfx targets (gfx10/11/12) are supported");
    }
    let major: u32 = digits[..2].parse().expect("major");
    let minor = (b[2] as char).to_digit(16).expect("minor");
    let step = (b[3] as char).to_digit(16).expect("stepping");
    (digits.to_string(), major * 1000 + minor * 100 + step)
}

/// The device-library folder: symlinks to every Debian bitcode library plus
/// the missing gfx11 `oclc_isa_version_NNNN.bc` files. Built once per process.
pub fn device_lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let src = Path::new(DEVICE_LIBS);
        let entries = std::fs::read_dir(src).unwrap_or_else(|e| {
            panic!(
                "cannot read the ROCm device libraries in {DEVICE_LIBS} ({e}): install the \
                 Debian packages {PACKAGES}"
            )
        });
        let dir = scratch_dir().join("device-libs");
        std::fs::create_dir_all(&dir).unwrap();
        for e in entries {
            let e = e.unwrap();
            let name = e.file_name();
            if Path::new(&name).extension().is_some_and(|x| x == "bc") {
                std::os::unix::fs::symlink(e.path(), dir.join(&name))
                    .unwrap_or_else(|err| panic!("symlink {}: {err}", e.path().display()));
            }
        }
        if !dir.join("ocml.bc").exists() {
            panic!("{DEVICE_LIBS} has no ocml.bc: install the Debian packages {PACKAGES}");
        }
        let dl = amdgcn_datalayout();
        for t in [
            "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
        ] {
            let (suffix, value) = isa_version(t);
            let bc = dir.join(format!("oclc_isa_version_{suffix}.bc"));
            if bc.exists() {
                continue;
            }
            let ll = dir.join(format!("oclc_isa_version_{suffix}.ll"));
            std::fs::write(
                &ll,
                format!(
                    "target datalayout = \"{dl}\"\ntarget triple = \"amdgcn-amd-amdhsa\"\n\n\
                     @__oclc_ISA_version = linkonce_odr protected local_unnamed_addr \
                     addrspace(4) constant i32 {value}, align 4\n"
                ),
            )
            .unwrap();
            run_checked(
                Command::new("llvm-as-19").arg(&ll).arg("-o").arg(&bc),
                "llvm-as-19 (generating the oclc_isa_version library)",
            );
        }
        dir
    })
}

/// Minimal HIP device header used instead of the HIP runtime headers
/// (we compile with `-nogpuinc`; Debian's libamdhip64-dev is not needed).
pub const HIP_HEADER: &str = include_str!("../kernels/softgpu_hip.h");

fn compile_uncached(source: &str, lang: Lang, target: &str, extra_flags: &[&str]) -> Vec<u8> {
    let libs = device_lib_dir();
    let dir = unique_dir(target);
    let obj = dir.join("kernel.o");
    let out = dir.join("kernel.hsaco");
    let mut cmd = Command::new("clang-19");
    match lang {
        Lang::OpenCl => {
            let src = dir.join("kernel.cl");
            std::fs::write(&src, source).unwrap();
            cmd.args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa"])
                .arg(format!("-mcpu={target}"))
                .arg(format!("--rocm-device-lib-path={}", libs.display()))
                .args(["-O3", "-ffp-contract=off"])
                .args(extra_flags)
                .arg("-c")
                .arg(&src);
        }
        Lang::Hip => {
            let hdr = dir.join("softgpu_hip.h");
            std::fs::write(&hdr, HIP_HEADER).unwrap();
            let src = dir.join("kernel.hip");
            std::fs::write(&src, source).unwrap();
            cmd.args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"])
                .arg(format!("--offload-arch={target}"))
                .arg("-nogpuinc")
                .arg(format!("--rocm-device-lib-path={}", libs.display()))
                .args(["-O3", "-ffp-contract=off", "-include"])
                .arg(&hdr)
                .args(extra_flags)
                .arg("-c")
                .arg(&src);
        }
    }
    cmd.arg("-o").arg(&obj);
    run_checked(&mut cmd, &format!("clang-19 compile for {target}"));
    let obj_bytes = std::fs::read(&obj).unwrap();
    // clang links HIP device-only output itself (ET_DYN); OpenCL gives ET_REL.
    const ET_DYN: u8 = 3;
    let bytes = if obj_bytes.len() > 16 && obj_bytes[16] == ET_DYN {
        obj_bytes
    } else {
        run_checked(
            Command::new("ld.lld-19")
                .arg("-shared")
                .arg(&obj)
                .arg("-o")
                .arg(&out),
            &format!("ld.lld-19 link for {target}"),
        );
        std::fs::read(&out).unwrap()
    };
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

// ---------------------------------------------------------------------------
// Byte helpers

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

// ---------------------------------------------------------------------------
// Deterministic PRNG (xoshiro256**, seeded by splitmix64)

/// Small deterministic PRNG so every run sees the same inputs.
#[derive(Clone, Debug)]
pub struct Rng([u64; 4]);

impl Rng {
    /// A generator seeded from `seed`.
    pub fn new(seed: u64) -> Self {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_add(0x9E3779B97F4A7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
            z ^ (z >> 31)
        };
        Rng([next(), next(), next(), next()])
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
    /// Next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Uniform in `lo..hi`.
    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64) as i64
    }
    /// Uniform f32 in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }
    /// Uniform f64 in `[lo, hi)`.
    pub fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
    /// Random boolean with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64_in(0.0, 1.0) < p
    }
    /// `n` uniform f32 in `[lo, hi)`.
    pub fn vec_f32(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32_in(lo, hi)).collect()
    }
    /// `n` uniform f64 in `[lo, hi)`.
    pub fn vec_f64(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.f64_in(lo, hi)).collect()
    }
    /// `n` random u32.
    pub fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.next_u32()).collect()
    }
}

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

/// Defines `mod NAME { #[test] fn gfx1100() ; #[test] fn gfx1151() }`, each
/// calling `FUNCTION(target)`.
#[macro_export]
macro_rules! per_target {
    ($name:ident, $func:ident) => {
        mod $name {
            #[test]
            fn gfx1100() {
                super::$func("gfx1100")
            }
            #[test]
            fn gfx1151() {
                super::$func("gfx1151")
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_versions() {
        assert_eq!(isa_version("gfx1151"), ("1151".into(), 11501));
        assert_eq!(isa_version("gfx1100"), ("1100".into(), 11000));
        assert_eq!(isa_version("gfx1030"), ("1030".into(), 10300));
    }

    #[test]
    fn missing_tool_names_the_packages() {
        let r = std::panic::catch_unwind(|| {
            run_tool(&mut Command::new("softgpu-no-such-tool-19"));
        });
        let e = r.expect_err("a missing tool must panic");
        let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("clang-19 lld-19 llvm-19 rocm-device-libs"),
            "{msg}"
        );
    }

    #[test]
    fn compiles_a_trivial_kernel() {
        let src = "kernel void k(global int *p) { p[get_global_id(0)] = 1; }";
        for t in TARGETS {
            let a = compile_cached(src, Lang::OpenCl, t, &[]);
            let b = compile_cached(src, Lang::OpenCl, t, &[]);
            assert!(Arc::ptr_eq(&a, &b), "in-process cache");
            assert!(a.starts_with(b"\x7fELF"));
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
