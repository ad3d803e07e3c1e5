//! Compiles OpenCL C or HIP device source into an AMD gfx11 code object.
//!
//! The compile runs the Debian LLVM 19 toolchain (`clang-19`, `ld.lld-19`,
//! `llvm-as-19`, `llvm-extract-19`, `llvm-dis-19`) with the ROCm device libraries (`rocm-device-libs`), the
//! same recipe for every caller:
//!
//! * OpenCL C: `clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa
//!   -mcpu=TARGET --rocm-device-lib-path=LIBS -O3 -ffp-contract=off -c`, then
//!   `ld.lld-19 -shared`.
//! * HIP (device code only): `clang-19 -x hip --cuda-device-only
//!   --no-gpu-bundle-output --offload-arch=TARGET -nogpuinc
//!   --rocm-device-lib-path=LIBS -O3 -ffp-contract=off -include softgpu_hip.h -c`
//!   (clang links HIP device output itself). [`HIP_HEADER`], a small header
//!   embedded in this crate, stands in for the HIP runtime headers.
//!
//! Defines, include directories and extra options follow the recipe on the
//! command line, so an option such as `-O2` overrides the recipe's. `LIBS`
//! is a folder this crate builds: links to Debian's device libraries plus
//! the gfx11 `oclc_isa_version_NNNN.bc` constants Debian lacks.
//!
//! Results are cached on disk by content (see [`Compiler::cache_dir`]).
//!
//! ```no_run
//! use softgpu_compiler::{Compiler, Language};
//! let code = Compiler::new("gfx1151")?
//!     .define("N", "256")
//!     .compile("kernel void k(global int *p) { p[get_global_id(0)] = N; }", Language::OpenCl)?;
//! assert!(code.starts_with(b"\x7fELF"));
//! # Ok::<(), softgpu_compiler::CompileError>(())
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod cache;
mod devlibs;
mod diag;
mod error;
pub mod hip_program;
mod tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

pub use diag::{Diagnostic, Severity};
pub use error::CompileError;

/// The minimal HIP device header force-included into every HIP compile
/// (HIP is compiled with `-nogpuinc`, without the HIP runtime headers): the
/// qualifiers, `threadIdx`/`blockIdx`/`blockDim`/`gridDim`, `__syncthreads`,
/// atomics, a few math functions, `printf` (hostcall by default, buffered
/// with `-mprintf-kind=buffered`, whose `__printf_alloc` it defines) and
/// `assert` (ROCm's message through hostcall `fprintf` to stderr, then a
/// trap).
pub const HIP_HEADER: &str = include_str!("../include/softgpu_hip.h");

/// Whether HIP `source` includes the HIP runtime headers (`#include
/// <hip/hip_runtime.h>` or any other `hip/` header): then it is compiled
/// with Debian's headers, which softgpu's stand-in would clash with; else
/// the stand-in is force-included, so a bare kernel file needs none.
fn includes_hip_headers(source: &str) -> bool {
    source.lines().any(|line| {
        let line = line.trim_start();
        line.strip_prefix('#')
            .map(|d| d.trim_start())
            .and_then(|d| d.strip_prefix("include"))
            .is_some_and(|file| {
                let file = file.trim_start();
                file.starts_with("<hip/") || file.starts_with("\"hip/")
            })
    })
}

/// The buffered-printf allocator linked into OpenCL code objects that call
/// it (see the file's comment): clang emits the call after the device
/// libraries were linked, so their copy never is.
const PRINTF_ALLOC_CL: &str = include_str!("../include/softgpu_printf_alloc.cl");

/// The Debian packages of the whole toolchain.
pub const TOOLCHAIN_PACKAGES: [&str; 4] = ["clang-19", "lld-19", "llvm-19", "rocm-device-libs"];

/// Where Debian's `rocm-device-libs` puts the device bitcode libraries.
pub const DEBIAN_BITCODE_DIR: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";

/// Bump when the compile recipe changes: it is part of every cache key.
const RECIPE_VERSION: u32 = 3;

/// A source language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// OpenCL C 2.0 (`.cl`).
    OpenCl,
    /// HIP device code (`.hip`).
    Hip,
}

impl Language {
    /// The language of a file, from its extension (`.cl` or `.hip`).
    pub fn from_path(path: &Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "cl" => Some(Language::OpenCl),
            "hip" => Some(Language::Hip),
            _ => None,
        }
    }
}

/// A successful compile: the code object and the warnings clang or lld printed.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The code object: a linked ELF shared object for the target.
    pub code: Vec<u8>,
    /// Warnings (and their notes); kept in the cache, so a cache hit reports
    /// the same warnings as the compile that filled it.
    pub warnings: Vec<Diagnostic>,
}

/// Compiles device source for one emulated target (gfx10.3, gfx11 or gfx12). Cheap to build and clone;
/// `&self` methods may run from several threads at once.
#[derive(Clone, Debug)]
pub struct Compiler {
    target: String,
    options: Vec<String>,
    defines: Vec<(String, String)>,
    include_dirs: Vec<PathBuf>,
    cache_dir: Option<PathBuf>,
    search_path: Option<Vec<PathBuf>>,
    bitcode_dir: PathBuf,
}

impl Compiler {
    /// A compiler for `target`, a processor softgpu emulates such as
    /// `gfx1100`, `gfx1151` or `gfx1201` (`softgpu_isa::TARGETS`). Nothing
    /// is run yet.
    pub fn new(target: &str) -> Result<Compiler, CompileError> {
        if softgpu_isa::target::target(target).is_none() {
            return Err(CompileError::BadTarget {
                target: target.to_string(),
            });
        }
        Ok(Compiler {
            target: target.to_string(),
            options: Vec::new(),
            defines: Vec::new(),
            include_dirs: Vec::new(),
            cache_dir: default_cache_dir(
                std::env::var_os("XDG_CACHE_HOME"),
                std::env::var_os("HOME"),
            ),
            search_path: None,
            bitcode_dir: PathBuf::from(DEBIAN_BITCODE_DIR),
        })
    }

    /// Adds a clang option (after the recipe's, so it can override them),
    /// e.g. `-mwavefrontsize64`, `-O1`, `-g`.
    pub fn option(mut self, option: &str) -> Compiler {
        self.options.push(option.to_string());
        self
    }

    /// Adds `-DNAME=VALUE`.
    pub fn define(mut self, name: &str, value: &str) -> Compiler {
        self.defines.push((name.to_string(), value.to_string()));
        self
    }

    /// Adds `-I DIR` (made absolute against the current directory).
    pub fn include_dir(mut self, dir: impl AsRef<Path>) -> Compiler {
        let dir = dir.as_ref();
        self.include_dirs
            .push(std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()));
        self
    }

    /// The on-disk cache directory; `None` disables the cache. The default
    /// is `$XDG_CACHE_HOME/softgpu`, else `$HOME/.cache/softgpu` (none when
    /// neither variable is set). The device-library folder lives there too
    /// (in the system temp directory when there is no cache).
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Compiler {
        self.cache_dir = dir;
        self
    }

    /// Directories searched for `clang-19`, `ld.lld-19`, `llvm-as-19`, `llvm-extract-19` and `llvm-dis-19`
    /// instead of `$PATH` (an empty list finds nothing).
    pub fn search_path(mut self, dirs: Vec<PathBuf>) -> Compiler {
        self.search_path = Some(dirs);
        self
    }

    /// Where the ROCm device bitcode libraries are (default [`DEBIAN_BITCODE_DIR`]).
    pub fn bitcode_dir(mut self, dir: impl Into<PathBuf>) -> Compiler {
        self.bitcode_dir = dir.into();
        self
    }

    /// The target this compiler builds for.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Compiles `source` into a code object.
    pub fn compile(&self, source: &str, language: Language) -> Result<Vec<u8>, CompileError> {
        Ok(self.compile_with_diagnostics(source, language)?.code)
    }

    /// Compiles the file at `path`, its language from the extension (`.cl`,
    /// `.hip`). Diagnostics name the file; `#include "..."` finds headers
    /// beside it.
    pub fn compile_file(&self, path: impl AsRef<Path>) -> Result<Vec<u8>, CompileError> {
        let path = path.as_ref();
        let language = Language::from_path(path).ok_or_else(|| CompileError::UnknownLanguage {
            path: path.to_path_buf(),
        })?;
        let source = std::fs::read_to_string(path)
            .map_err(|e| CompileError::io(format!("reading {}", path.display()), e))?;
        let path = std::path::absolute(path)
            .map_err(|e| CompileError::io(format!("resolving {}", path.display()), e))?;
        Ok(self.run(&source, language, Some(&path))?.code)
    }

    /// Like [`Compiler::compile`], also returning the warnings.
    pub fn compile_with_diagnostics(
        &self,
        source: &str,
        language: Language,
    ) -> Result<Compiled, CompileError> {
        self.run(source, language, None)
    }

    /// Assembles AMDGPU assembly (`.amdhsa_kernel` directives and all) for
    /// this compiler's target into a linked code object, with clang-19 and
    /// ld.lld-19: what tests use for kernels no source language can express
    /// (hostile descriptors, exact metadata).
    pub fn assemble(&self, source: &str) -> Result<Vec<u8>, CompileError> {
        let tc = self.toolchain()?;
        let work = tempfile::Builder::new()
            .prefix("softgpu-assemble-")
            .tempdir()
            .map_err(|e| CompileError::io("creating a temporary directory", e))?;
        let (obj, linked) = (
            work.path().join("kernel.o"),
            work.path().join("kernel.hsaco"),
        );
        let mut cmd = Command::new(&tc.clang);
        cmd.args(["-x", "assembler", "-target", "amdgcn-amd-amdhsa"])
            .arg(format!("-mcpu={}", self.target))
            .args(["-c", "-", "-o"])
            .arg(&obj);
        let out = tools::run(&mut cmd, Some(source.as_bytes()))?;
        check(&cmd, &out, &String::from_utf8_lossy(&out.stderr))?;
        let mut ld = Command::new(&tc.lld);
        ld.arg("-shared").arg(&obj).arg("-o").arg(&linked);
        let out = tools::run(&mut ld, None)?;
        check(&ld, &out, &String::from_utf8_lossy(&out.stderr))?;
        read(&linked)
    }

    /// The device-library folder for this target (as passed to clang with
    /// `--rocm-device-lib-path`), for running clang by hand.
    pub fn device_lib_dir(&self) -> Result<PathBuf, CompileError> {
        self.device_lib_dir_for(&[])
    }

    /// The device-library folder holding the ISA-version library of this
    /// target and of every processor in `processors`, which need not be
    /// ones softgpu emulates (a fat binary built with `softgpu hipcc
    /// --offload-arch=gfx908,gfx1100` carries code for real hardware too).
    /// A name that is not `gfx` and a version is refused; one clang does
    /// not know is clang's to refuse.
    pub fn device_lib_dir_for(&self, processors: &[&str]) -> Result<PathBuf, CompileError> {
        let tc = self.toolchain()?;
        let fp = devlibs::fingerprint(&tc, &tools::version(&tc.clang)?)?;
        let root = self.support_dir();
        let mut dir = devlibs::ensure(&root, &tc, &fp, &self.target)?;
        for p in processors {
            dir = devlibs::ensure(&root, &tc, &fp, p)?;
        }
        Ok(dir)
    }

    fn toolchain(&self) -> Result<tools::Toolchain, CompileError> {
        match &self.search_path {
            Some(dirs) => tools::resolve(dirs, &self.bitcode_dir),
            None => tools::resolve(&tools::env_search_path(), &self.bitcode_dir),
        }
    }

    /// Where the device libraries and the HIP header are written.
    fn support_dir(&self) -> PathBuf {
        self.cache_dir.clone().unwrap_or_else(|| {
            // One folder per user: `/proc/self` belongs to the process's user.
            use std::os::unix::fs::MetadataExt;
            let name = match std::fs::metadata("/proc/self") {
                Ok(m) => format!("softgpu-compiler-{}", m.uid()),
                Err(_) => "softgpu-compiler".to_string(),
            };
            std::env::temp_dir().join(name)
        })
    }

    /// Hash of everything the output depends on except included headers
    /// (which the cache records and checks separately).
    fn cache_key(
        &self,
        source: &str,
        language: Language,
        file: Option<&Path>,
        versions: [&str; 2],
        libs: &str,
    ) -> String {
        let mut h = Sha256::new();
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(b"softgpu-compiler");
        field(&RECIPE_VERSION.to_le_bytes());
        field(self.target.as_bytes());
        field(format!("{language:?}").as_bytes());
        field(versions[0].as_bytes());
        field(versions[1].as_bytes());
        field(libs.as_bytes());
        for o in &self.options {
            field(b"option");
            field(o.as_bytes());
        }
        for (n, v) in &self.defines {
            field(b"define");
            field(n.as_bytes());
            field(v.as_bytes());
        }
        for d in &self.include_dirs {
            field(b"include");
            field(d.as_os_str().as_encoded_bytes());
        }
        if let Some(f) = file {
            field(b"file");
            field(f.as_os_str().as_encoded_bytes());
        }
        match language {
            Language::Hip => field(HIP_HEADER.as_bytes()),
            Language::OpenCl => field(PRINTF_ALLOC_CL.as_bytes()),
        }
        field(source.as_bytes());
        hex(&h.finalize()[..16])
    }

    fn run(
        &self,
        source: &str,
        language: Language,
        file: Option<&Path>,
    ) -> Result<Compiled, CompileError> {
        let tc = self.toolchain()?;
        let clang_version = tools::version(&tc.clang)?;
        let lld_version = tools::version(&tc.lld)?;
        let libs_fp = devlibs::fingerprint(&tc, &clang_version)?;
        let key = self.cache_key(
            source,
            language,
            file,
            [&clang_version, &lld_version],
            &libs_fp,
        );
        let entry = format!("{key}-{}", self.target);
        if let Some(dir) = &self.cache_dir {
            if let Some((code, log)) = cache::lookup(dir, &entry) {
                return Ok(Compiled {
                    code,
                    warnings: diag::parse(&log),
                });
            }
        }

        let support = self.support_dir();
        let libs = devlibs::ensure(&support, &tc, &libs_fp, &self.target)?;
        let work = tempfile::Builder::new()
            .prefix("softgpu-compile-")
            .tempdir()
            .map_err(|e| CompileError::io("creating a temporary directory", e))?;
        let obj = work.path().join("kernel.o");
        let depfile = work.path().join("kernel.d");
        let t = &self.target;
        let mut cmd = Command::new(&tc.clang);
        let mut header = None;
        match language {
            Language::OpenCl => {
                cmd.args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa"])
                    .arg(format!("-mcpu={t}"));
            }
            Language::Hip => {
                cmd.args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"])
                    .arg(format!("--offload-arch={t}"));
                if includes_hip_headers(source) {
                    // A real HIP file: Debian's HIP headers, as hipcc uses.
                    tools::require_hip_headers()?;
                    cmd.arg(format!("--rocm-path={}", hip_program::HIP_PATH))
                        .arg(format!("--hip-path={}", hip_program::HIP_PATH));
                } else {
                    let h = devlibs::hip_header(&support)?;
                    cmd.arg("-nogpuinc").arg("-include").arg(&h);
                    header = Some(h);
                }
            }
        }
        cmd.arg(format!("--rocm-device-lib-path={}", libs.display()))
            .args(["-O3", "-ffp-contract=off"]);
        for (n, v) in &self.defines {
            cmd.arg(format!("-D{n}={v}"));
        }
        for d in &self.include_dirs {
            cmd.arg("-I").arg(d);
        }
        cmd.args(&self.options)
            .args(["-MD", "-MT", "out", "-MF"])
            .arg(&depfile)
            .arg("-c")
            .arg(file.unwrap_or(Path::new("-")))
            .arg("-o")
            .arg(&obj);
        let out = tools::run(&mut cmd, file.is_none().then_some(source.as_bytes()))?;
        let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
        check(&cmd, &out, &log)?;

        let mut code = read(&obj)?;
        // clang links HIP device-only output itself (ET_DYN); OpenCL gives ET_REL.
        const ET_DYN: u8 = 3;
        if code.get(16) != Some(&ET_DYN) {
            let linked = work.path().join("kernel.hsaco");
            let mut ld = Command::new(&tc.lld);
            ld.arg("-shared").arg(&obj);
            if code.windows(14).any(|w| w == b"__printf_alloc") {
                ld.arg(self.printf_alloc(&tc, work.path())?);
            }
            ld.arg("-o").arg(&linked);
            let out = tools::run(&mut ld, None)?;
            log.push_str(&String::from_utf8_lossy(&out.stderr));
            check(&ld, &out, &String::from_utf8_lossy(&out.stderr))?;
            code = read(&linked)?;
        }

        if let Some(dir) = &self.cache_dir {
            // The headers read, except the source itself and our own header.
            let text = std::fs::read_to_string(&depfile).unwrap_or_default();
            let deps: Option<Vec<cache::Dep>> = cache::parse_depfile(&text)
                .into_iter()
                .filter(|d| Some(Path::new(d)) != file && Some(Path::new(d)) != header.as_deref())
                .map(|path| {
                    let hash = cache::hash_file(Path::new(&path))?;
                    (!path.contains('\n')).then_some(cache::Dep { path, hash })
                })
                .collect();
            // A header that cannot be read back is not cached (rare; the next
            // compile simply runs clang again).
            if let Some(deps) = deps {
                cache::store(dir, &entry, &code, &deps, &log)?;
            }
        }
        Ok(Compiled {
            code,
            warnings: diag::parse(&log),
        })
    }
}

impl Compiler {
    /// Compiles [`PRINTF_ALLOC_CL`] for the target into `dir`.
    fn printf_alloc(&self, tc: &tools::Toolchain, dir: &Path) -> Result<PathBuf, CompileError> {
        let obj = dir.join("printf_alloc.o");
        let mut cmd = Command::new(&tc.clang);
        cmd.args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa"])
            .arg(format!("-mcpu={}", self.target))
            .args(["-nogpulib", "-O3"]);
        if self.options.iter().any(|o| o == "-mcode-object-version=4") {
            cmd.arg("-DSOFTGPU_COV4");
        }
        cmd.args(self.options.iter().filter(|o| o.starts_with("-m")))
            .args(["-c", "-", "-o"])
            .arg(&obj);
        let out = tools::run(&mut cmd, Some(PRINTF_ALLOC_CL.as_bytes()))?;
        check(&cmd, &out, &String::from_utf8_lossy(&out.stderr))?;
        Ok(obj)
    }
}

/// Turns a failed tool run into [`CompileError::Diagnostics`] (or
/// [`CompileError::ToolFailed`] when it printed no error).
fn check(cmd: &Command, out: &std::process::Output, log: &str) -> Result<(), CompileError> {
    if out.status.success() {
        return Ok(());
    }
    let diagnostics = diag::parse(log);
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Err(CompileError::Diagnostics {
            diagnostics,
            log: log.to_string(),
        })
    } else {
        Err(tools::failed(cmd, out))
    }
}

fn read(path: &Path) -> Result<Vec<u8>, CompileError> {
    std::fs::read(path).map_err(|e| CompileError::io(format!("reading {}", path.display()), e))
}

/// `$XDG_CACHE_HOME/softgpu`, else `$HOME/.cache/softgpu` (empty values
/// count as unset).
fn default_cache_dir(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<std::ffi::OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    set(xdg_cache_home)
        .map(|x| x.join("softgpu"))
        .or_else(|| set(home).map(|h| h.join(".cache").join("softgpu")))
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `PID-N`, unique within this machine at this moment, for temporary names.
fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Writes `path` atomically: a temporary file beside it, then a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CompileError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .map_err(|e| CompileError::io(format!("creating {}", parent.display()), e))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = parent.join(format!(".{name}.{}", unique_suffix()));
    let r = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r.map_err(|e| CompileError::io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_cache_dir_prefers_xdg() {
        let d = |x: Option<&str>, h: Option<&str>| {
            default_cache_dir(x.map(Into::into), h.map(Into::into))
        };
        assert_eq!(d(Some("/x"), Some("/h")), Some(PathBuf::from("/x/softgpu")));
        assert_eq!(
            d(None, Some("/h")),
            Some(PathBuf::from("/h/.cache/softgpu"))
        );
        assert_eq!(
            d(Some(""), Some("/h")),
            Some(PathBuf::from("/h/.cache/softgpu"))
        );
        assert_eq!(d(None, None), None);
    }

    #[test]
    fn targets() {
        for t in [
            "gfx1100", "gfx1101", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1200", "gfx1201",
            "gfx1030", "gfx1036",
        ] {
            assert!(Compiler::new(t).is_ok(), "{t}");
        }
        for t in [
            "gfx1010", "gfx1300", "gfx11", "gfx110", "gfx11000", "sm_80", "GFX1100", "gfx11zz", "",
        ] {
            assert!(
                matches!(Compiler::new(t), Err(CompileError::BadTarget { .. })),
                "{t}"
            );
        }
    }

    #[test]
    fn languages() {
        assert_eq!(
            Language::from_path(Path::new("a/k.cl")),
            Some(Language::OpenCl)
        );
        assert_eq!(Language::from_path(Path::new("k.hip")), Some(Language::Hip));
        assert_eq!(Language::from_path(Path::new("k.c")), None);
        assert_eq!(Language::from_path(Path::new("cl")), None);
    }
}
