//! The recipe for building whole HIP programs (host and device code) with
//! `clang++-19` and Debian's HIP headers, linked against softgpu's HIP
//! runtime library: the argument list behind `softgpu hipcc`.
//!
//! Pure functions only; running clang is the caller's business. The user's
//! arguments keep their order; the recipe adds
//!
//! * `-x hip` before `.hip`, `.cu` and `.cpp` sources (and `-x none`
//!   before any other input after them, so object files and libraries stay
//!   what they are), unless the user chose a language with `-x` themselves;
//! * what ROCm's `hipcc` adds: `-O3` when the user gives no `-O` option
//!   (clang's own default is `-O0`, which makes kernels 30-60× longer), and
//!   `-mllvm -amdgpu-early-inline-all=true -mllvm
//!   -amdgpu-function-calls=false` unless the user asks for `-O0`; `--genco`
//!   becomes clang's `--cuda-device-only` (a device code object, no link);
//!   a link of `-fgpu-rdc` code gets `--hip-link` (its device code is linked
//!   then, so it is given the HIP options below too);
//! * when HIP sources are compiled (or `-fgpu-rdc` code linked):
//!   `--offload-arch=TARGET` (unless the user gave `--offload-arch`; a list
//!   of processors softgpu does not run, such as `gfx908`, is compiled as
//!   given and gets TARGET added, see [`Recipe::target`]),
//!   `--rocm-path=/usr --hip-path=/usr` (Debian's HIP headers) and
//!   `--rocm-device-lib-path=LIBS` (the folder
//!   [`crate::Compiler::device_lib_dir_for`] builds);
//! * when the run links a program: `-L DIR -lamdhip64 -Wl,-rpath,DIR`, DIR
//!   holding softgpu's library as `libamdhip64.so` and under its SONAME
//!   [`HIP_SONAME`], so the program finds it with no environment set (and
//!   `libhiprtc.so`, so `-lhiprtc` links to the same library, which
//!   exports hiprtc as HIP 5.2's does).
//!
//! ```
//! use std::path::Path;
//! use softgpu_compiler::hip_program::{clang_args, Recipe};
//! let args: Vec<String> = ["-O2", "prog.hip", "-o", "prog"].map(String::from).to_vec();
//! let recipe = Recipe {
//!     target: "gfx1151",
//!     device_lib_dir: Some(Path::new("/libs")),
//!     hip_lib_dir: Some(Path::new("/sg")),
//! };
//! let out = clang_args(&args, &recipe);
//! assert!(out.contains(&"--offload-arch=gfx1151".to_string()));
//! assert!(!out.contains(&"-O3".to_string()), "the user chose -O2");
//! assert!(out.ends_with(&["-L".into(), "/sg".into(), "-lamdhip64".into(), "-Wl,-rpath,/sg".into()]));
//! ```

use std::path::Path;

/// The compiler driver a HIP program is built with.
pub const CLANG_CXX: &str = "clang++-19";

/// The Debian packages a HIP program build needs.
pub const HIP_PACKAGES: [&str; 5] = [
    "clang-19",
    "lld-19",
    "llvm-19",
    "rocm-device-libs",
    "libamdhip64-dev",
];

/// Where Debian's HIP headers are (`/usr/include/hip`): the `--rocm-path`
/// and `--hip-path` clang is given.
pub const HIP_PATH: &str = "/usr";

/// The file name softgpu's HIP runtime library is built under.
pub const HIP_LIBRARY: &str = "libamdhip64.so";

/// The SONAME of the HIP runtime library: the name programs look for.
pub const HIP_SONAME: &str = "libamdhip64.so.5";

/// The name `-lhiprtc` finds: a link to the HIP library, which exports
/// hiprtc (in HIP 5.2 hiprtc is part of `libamdhip64`; later ROCm splits it
/// out, and programs written for it link `-lhiprtc`).
pub const HIPRTC_LIBRARY: &str = "libhiprtc.so";

/// The HIP version softgpu's runtime reports, that of Debian's HIP headers
/// (`hip_version.h`): what `hipconfig --version` prints.
pub const HIP_VERSION: &str = "5.2.21153";

/// The optimisation ROCm's hipcc chooses when the user gives none.
pub const DEFAULT_OPT: &str = "-O3";

/// The LLVM options ROCm's hipcc adds unless optimisation is off: inline
/// every device function and emit no calls.
pub const INLINE_ALL: [&str; 4] = [
    "-mllvm",
    "-amdgpu-early-inline-all=true",
    "-mllvm",
    "-amdgpu-function-calls=false",
];

/// The source extensions compiled as HIP.
pub const SOURCE_EXTENSIONS: [&str; 3] = ["hip", "cu", "cpp"];

/// What the recipe adds to the user's arguments.
#[derive(Clone, Copy, Debug)]
pub struct Recipe<'a> {
    /// The `--offload-arch` added when the user gives none, or none softgpu
    /// runs ([`added_target`]), e.g. `gfx1151`.
    pub target: &'a str,
    /// The device-library folder (`--rocm-device-lib-path`); needed when
    /// [`Inputs::compiles_hip`].
    pub device_lib_dir: Option<&'a Path>,
    /// The folder holding softgpu's HIP library; needed when [`Inputs::links`].
    pub hip_lib_dir: Option<&'a Path>,
}

/// What a command line asks clang to do, as far as the recipe cares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// The input files (not option values), in order.
    pub files: Vec<String>,
    /// Whether any input is HIP source (by extension, or `-x hip` given).
    pub compiles_hip: bool,
    /// Whether the run links a host program (inputs given, and none of
    /// `-c`, `-S`, `-E`, `-M`, `-MM`, `-fsyntax-only`, `--cuda-device-only`,
    /// `--offload-device-only`).
    pub links: bool,
    /// Whether the user gave `-x`.
    pub user_language: bool,
    /// Whether the user gave `--offload-arch` (or `--cuda-gpu-arch`).
    pub user_arch: bool,
    /// The processors those options name (`gfx1100` of
    /// `--offload-arch=gfx1100:xnack-`), in order, each once.
    pub targets: Vec<String>,
    /// The user's last `-O` option (`-O2`, `-O0`, `-Os`, ...), if any.
    pub user_opt: Option<String>,
    /// Whether `-fgpu-rdc` is in effect (relocatable device code).
    pub rdc: bool,
    /// Whether only device code is built (`--cuda-device-only`,
    /// `--offload-device-only`, `--genco`).
    pub device_only: bool,
}

impl Inputs {
    /// Whether clang handles device code: HIP sources are compiled, or
    /// relocatable device code is linked.
    pub fn handles_device_code(&self) -> bool {
        self.compiles_hip || (self.links && self.rdc)
    }
}

/// Options whose value is the next argument (so that argument is no input).
const TAKES_VALUE: [&str; 28] = [
    "-o",
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-x",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-isysroot",
    "-iprefix",
    "-MF",
    "-MT",
    "-MQ",
    "-Xlinker",
    "-Xclang",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xarch_host",
    "-Xarch_device",
    "-Xoffload-linker",
    "-mllvm",
    "-target",
    "-T",
    "-u",
];

/// hipcc's spelling of clang's `--cuda-device-only`.
const GENCO: &str = "--genco";

/// Options that build device code only.
const DEVICE_ONLY: [&str; 3] = [GENCO, "--cuda-device-only", "--offload-device-only"];

/// Options that stop clang before the host link.
const NO_LINK: [&str; 9] = [
    GENCO,
    "-c",
    "-S",
    "-E",
    "-M",
    "-MM",
    "-fsyntax-only",
    "--cuda-device-only",
    "--offload-device-only",
];

/// Whether `file` is a source the recipe compiles as HIP.
pub fn is_hip_source(file: &str) -> bool {
    Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e))
}

/// Reads the user's arguments.
pub fn inputs(args: &[String]) -> Inputs {
    let mut r = Inputs::default();
    let mut no_link = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if TAKES_VALUE.contains(&a) {
            if a == "-x" {
                r.user_language = true;
                if args.get(i + 1).is_some_and(|l| l == "hip") {
                    r.compiles_hip = true;
                }
            }
            i += 2;
            continue;
        }
        if a.starts_with("-x") && a.len() > 2 {
            r.user_language = true;
            r.compiles_hip |= &a[2..] == "hip";
        } else if a.starts_with("--offload-arch") || a.starts_with("--cuda-gpu-arch") {
            r.user_arch = true;
        } else if NO_LINK.contains(&a) {
            no_link = true;
            r.device_only |= DEVICE_ONLY.contains(&a);
        } else if a.starts_with("-O") {
            r.user_opt = Some(a.to_string());
        } else if a == "-fgpu-rdc" || a == "-fno-gpu-rdc" {
            r.rdc = a == "-fgpu-rdc";
        } else if a == "-" || !a.starts_with('-') {
            r.compiles_hip |= is_hip_source(a);
            r.files.push(a.to_string());
        }
        i += 1;
    }
    r.links = !no_link && !r.files.is_empty();
    r.targets = user_targets(args);
    r
}

/// The processors the user's `--offload-arch`/`--cuda-gpu-arch` options
/// name (`gfx1100` of `--offload-arch=gfx1100:xnack-`), in order.
fn user_targets(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let value = ["--offload-arch", "--cuda-gpu-arch"]
            .iter()
            .find_map(|flag| {
                if a == flag {
                    args.get(i + 1).map(String::as_str)
                } else {
                    a.strip_prefix(flag).and_then(|r| r.strip_prefix('='))
                }
            });
        if let Some(v) = value {
            for t in v.split(',') {
                let processor = t.split(':').next().unwrap_or(t);
                if !processor.is_empty() && !out.iter().any(|o| o == processor) {
                    out.push(processor.to_string());
                }
            }
        }
        i += 1;
    }
    out
}

/// The processor the recipe adds to the user's `--offload-arch` list: the
/// recipe's target when the user names none, or, for a program (host code
/// and its fat binary), names only processors softgpu does not run
/// (`--offload-arch=gfx908`: the fat binary then carries gfx908 code for
/// real hardware and the target's for softgpu). Device code built alone
/// for named processors is built for exactly those (a per-processor
/// `--cuda-device-only -emit-llvm -o main_gfx908.bc` has one output).
pub fn added_target<'a>(what: &Inputs, recipe: &Recipe<'a>) -> Option<&'a str> {
    if what.targets.is_empty() {
        return Some(recipe.target);
    }
    let runs_here = |t: &String| softgpu_isa::target::target(t).is_some();
    (!what.device_only && !what.targets.iter().any(runs_here)).then_some(recipe.target)
}

/// The whole `clang++-19` argument list for the user's `args`.
///
/// # Panics
/// If the inputs need a folder the recipe lacks (`device_lib_dir` when HIP
/// is compiled, `hip_lib_dir` when a program is linked): check [`inputs`]
/// first.
pub fn clang_args(args: &[String], recipe: &Recipe) -> Vec<String> {
    let what = inputs(args);
    let mut out = Vec::new();
    if what.user_opt.is_none() {
        out.push(DEFAULT_OPT.to_string());
    }
    if what.handles_device_code() {
        if what.user_opt.as_deref() != Some("-O0") {
            out.extend(INLINE_ALL.map(String::from));
        }
        if let Some(t) = added_target(&what, recipe) {
            out.push(format!("--offload-arch={t}"));
        }
        out.push(format!("--rocm-path={HIP_PATH}"));
        out.push(format!("--hip-path={HIP_PATH}"));
        let libs = recipe
            .device_lib_dir
            .expect("HIP sources are compiled: the recipe needs the device-library folder");
        out.push(format!("--rocm-device-lib-path={}", libs.display()));
        if what.links && what.rdc {
            out.push("--hip-link".to_string());
        }
    }
    let mut in_hip = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if TAKES_VALUE.contains(&a.as_str()) {
            out.push(a.clone());
            if let Some(v) = args.get(i + 1) {
                out.push(v.clone());
            }
            i += 2;
            continue;
        }
        let input = a == "-" || !a.starts_with('-');
        if input && !what.user_language {
            // Switch the language only where it changes between inputs.
            let hip = is_hip_source(a);
            if hip != in_hip {
                out.extend([
                    "-x".to_string(),
                    if hip { "hip" } else { "none" }.to_string(),
                ]);
                in_hip = hip;
            }
        }
        out.push(if a == GENCO {
            "--cuda-device-only".to_string()
        } else {
            a.clone()
        });
        i += 1;
    }
    if what.links {
        let dir = recipe
            .hip_lib_dir
            .expect("a program is linked: the recipe needs softgpu's HIP library folder")
            .display()
            .to_string();
        out.extend([
            "-L".to_string(),
            dir.clone(),
            "-lamdhip64".to_string(),
            format!("-Wl,-rpath,{dir}"),
        ]);
    }
    out
}

/// The message for a missing `clang++-19`.
pub fn missing_clang_message() -> String {
    format!(
        "{CLANG_CXX} not found in PATH: install the Debian packages {} (apt-get install {})",
        HIP_PACKAGES.join(", "),
        HIP_PACKAGES.join(" ")
    )
}

/// The message for a missing softgpu HIP library at `path`.
pub fn missing_library_message(path: &Path) -> String {
    format!(
        "softgpu's HIP runtime library {} is missing: build it with \
         `cargo build --release -p softgpu-hip` (it is built next to the softgpu executable)",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn user_targets_are_read_from_every_spelling() {
        let args: Vec<String> = [
            "--offload-arch=gfx1100:xnack-",
            "--offload-arch",
            "gfx1151",
            "--cuda-gpu-arch=gfx1100,gfx1201",
            "k.hip",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            super::user_targets(&args),
            ["gfx1100", "gfx1151", "gfx1201"]
        );
    }

    use super::*;
    use std::path::PathBuf;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn recipe<'a>(libs: &'a Path, hip: &'a Path) -> Recipe<'a> {
        Recipe {
            target: "gfx1151",
            device_lib_dir: Some(libs),
            hip_lib_dir: Some(hip),
        }
    }

    #[test]
    fn compile_and_link_one_source() {
        let (l, h) = (PathBuf::from("/L"), PathBuf::from("/H"));
        let out = clang_args(&s(&["-O2", "prog.hip", "-o", "prog"]), &recipe(&l, &h));
        assert_eq!(
            out,
            s(&[
                "-mllvm",
                "-amdgpu-early-inline-all=true",
                "-mllvm",
                "-amdgpu-function-calls=false",
                "--offload-arch=gfx1151",
                "--rocm-path=/usr",
                "--hip-path=/usr",
                "--rocm-device-lib-path=/L",
                "-O2",
                "-x",
                "hip",
                "prog.hip",
                "-o",
                "prog",
                "-L",
                "/H",
                "-lamdhip64",
                "-Wl,-rpath,/H",
            ])
        );
    }

    #[test]
    fn compile_only_does_not_link() {
        let args = s(&["-c", "a.cu", "-o", "a.o"]);
        let i = inputs(&args);
        assert!(i.compiles_hip && !i.links);
        let l = PathBuf::from("/L");
        let r = Recipe {
            target: "gfx1100",
            device_lib_dir: Some(&l),
            hip_lib_dir: None,
        };
        let out = clang_args(&args, &r);
        assert!(out.contains(&"--offload-arch=gfx1100".to_string()));
        assert!(!out.iter().any(|a| a.contains("amdhip64")));
        for flag in ["-S", "-E", "-fsyntax-only", "--cuda-device-only", "-M"] {
            assert!(!inputs(&s(&[flag, "k.hip"])).links, "{flag}");
        }
    }

    #[test]
    fn link_only_objects_adds_no_hip_options() {
        let args = s(&["a.o", "b.o", "-o", "prog", "-lm"]);
        let i = inputs(&args);
        assert!(i.links && !i.compiles_hip);
        assert_eq!(i.files, s(&["a.o", "b.o"]));
        let h = PathBuf::from("/H");
        let r = Recipe {
            target: "gfx1151",
            device_lib_dir: None,
            hip_lib_dir: Some(&h),
        };
        assert_eq!(
            clang_args(&args, &r),
            s(&[
                "-O3",
                "a.o",
                "b.o",
                "-o",
                "prog",
                "-lm",
                "-L",
                "/H",
                "-lamdhip64",
                "-Wl,-rpath,/H"
            ])
        );
    }

    #[test]
    fn languages_switch_between_inputs() {
        let (l, h) = (PathBuf::from("/L"), PathBuf::from("/H"));
        let out = clang_args(
            &s(&["a.hip", "b.cu", "c.o", "libd.a", "e.cpp", "-o", "p"]),
            &recipe(&l, &h),
        );
        let start = out.iter().position(|a| a == "a.hip").unwrap() - 2;
        assert_eq!(
            out[start..start + 13],
            s(&[
                "-x", "hip", "a.hip", "b.cu", "-x", "none", "c.o", "libd.a", "-x", "hip", "e.cpp",
                "-o", "p"
            ])
        );
    }

    #[test]
    fn user_choices_are_kept() {
        let (l, h) = (PathBuf::from("/L"), PathBuf::from("/H"));
        let out = clang_args(
            &s(&["--offload-arch=gfx1100", "-x", "hip", "k.c", "-c"]),
            &recipe(&l, &h),
        );
        assert!(!out.contains(&"--offload-arch=gfx1151".to_string()));
        assert_eq!(out.iter().filter(|a| *a == "-x").count(), 1);
        assert!(out.contains(&"--rocm-device-lib-path=/L".to_string()));
    }

    #[test]
    fn hipcc_defaults_unless_the_user_chooses() {
        let (l, h) = (PathBuf::from("/L"), PathBuf::from("/H"));
        // No -O: ROCm hipcc's -O3 and the inlining options, before the
        // user's arguments so they can override them.
        let out = clang_args(&s(&["k.hip", "-o", "k"]), &recipe(&l, &h));
        assert_eq!(
            out[..5],
            s(&[
                "-O3",
                "-mllvm",
                "-amdgpu-early-inline-all=true",
                "-mllvm",
                "-amdgpu-function-calls=false"
            ])
        );
        // -O0: no inlining options, no -O3.
        let out = clang_args(&s(&["-O0", "-g", "k.hip"]), &recipe(&l, &h));
        assert!(!out.iter().any(|a| a == "-O3" || a == "-mllvm"), "{out:?}");
        // Linking plain objects: -O3 only (hipcc passes it to the link too).
        let out = clang_args(&s(&["a.o"]), &recipe(&l, &h));
        assert!(out.contains(&"-O3".into()) && !out.contains(&"-mllvm".into()));
    }

    #[test]
    fn genco_builds_device_code_only() {
        let (l, h) = (PathBuf::from("/L"), PathBuf::from("/H"));
        let args = s(&["--genco", "k.hip", "-o", "k.co"]);
        assert!(!inputs(&args).links);
        let out = clang_args(&args, &recipe(&l, &h));
        assert!(out.contains(&"--cuda-device-only".into()));
        assert!(!out.iter().any(|a| a == "--genco" || a.contains("amdhip64")));
    }

    #[test]
    fn relocatable_device_code_is_linked_as_hip() {
        let (l, h) = (PathBuf::from("/L"), PathBuf::from("/H"));
        let out = clang_args(&s(&["-fgpu-rdc", "a.o", "b.o", "-o", "p"]), &recipe(&l, &h));
        for want in [
            "--hip-link",
            "--offload-arch=gfx1151",
            "--rocm-device-lib-path=/L",
            "-lamdhip64",
        ] {
            assert!(out.contains(&want.into()), "{want} missing: {out:?}");
        }
        let out = clang_args(&s(&["-fgpu-rdc", "-fno-gpu-rdc", "a.o"]), &recipe(&l, &h));
        assert!(!out.contains(&"--hip-link".into()));
    }

    #[test]
    fn foreign_targets_get_the_device_target_added() {
        let (l, h) = (PathBuf::from("/L"), PathBuf::from("/H"));
        let r = recipe(&l, &h);
        // Only processors softgpu does not run: the device's is added.
        let a = s(&[
            "--offload-arch=gfx908",
            "--offload-arch=gfx1010:xnack-",
            "k.hip",
        ]);
        assert_eq!(added_target(&inputs(&a), &r), Some("gfx1151"));
        assert_eq!(
            clang_args(&a, &r)
                .iter()
                .filter(|x| x.starts_with("--offload-arch"))
                .count(),
            3
        );
        // Device code alone for named processors: exactly those.
        let a = s(&[
            "--cuda-device-only",
            "-c",
            "-emit-llvm",
            "--offload-arch=gfx803",
            "k.hip",
        ]);
        assert_eq!(added_target(&inputs(&a), &r), None);
        // One it runs (even not the default device's): the list is kept.
        let a = s(&["--offload-arch=gfx908,gfx1100", "k.hip"]);
        assert_eq!(added_target(&inputs(&a), &r), None);
    }

    #[test]
    fn option_values_are_not_inputs() {
        let i = inputs(&s(&[
            "-o", "x.cpp", "-I", "inc.hip", "-include", "h.cu", "-MF", "d.cpp", "m.o",
        ]));
        assert_eq!(i.files, s(&["m.o"]));
        assert!(!i.compiles_hip);
        let i = inputs(&s(&["--version"]));
        assert!(i.files.is_empty() && !i.links);
    }

    #[test]
    fn sources_by_extension() {
        for f in ["a.hip", "dir/b.cu", "c.cpp"] {
            assert!(is_hip_source(f), "{f}");
        }
        for f in ["a.o", "libx.a", "c.c", "hip", "x.so"] {
            assert!(!is_hip_source(f), "{f}");
        }
    }

    #[test]
    fn messages_name_the_fix() {
        assert!(missing_clang_message().contains("libamdhip64-dev"));
        assert!(missing_clang_message().contains("clang-19"));
        let m = missing_library_message(Path::new("/t/libamdhip64.so"));
        assert!(m.contains("cargo build --release -p softgpu-hip"));
        assert!(m.contains("/t/libamdhip64.so"));
    }
}
