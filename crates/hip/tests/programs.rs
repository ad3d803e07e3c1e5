//! Builds and runs the HIP programs of `tests/programs/` on softgpu.
//!
//! Each program checks its own results against a host computation and
//! prints `PASS` (exit 0), or says what was wrong (exit 1). Every test
//! builds its program twice and runs both:
//!
//! 1. as a user's build would, with `clang++-19 -x hip --offload-arch=gfx1151
//!    --offload-arch=gfx1201 --offload-arch=gfx1030 --offload-arch=gfx90a
//!    --offload-arch=gfx942 --rocm-path=/usr --hip-path=/usr
//!    --rocm-device-lib-path=LIBS -O2 ... -lamdhip64`: one fat binary for
//!    the RDNA3.5, RDNA4, RDNA2, CDNA2 and CDNA3 parts, linked against
//!    Debian's `libamdhip64.so`, then run with `LD_LIBRARY_PATH` naming a
//!    folder where `libamdhip64.so.5` links to softgpu's library, on a
//!    device of each part in turn (`SOFTGPU_PROFILE`): the runtime picks
//!    each device's code, and the runtime above the executor is the same
//!    for every family;
//! 2. with `softgpu hipcc`, then run with no environment set.
//!
//! The Debian-library programs (`debian_*.hip`) run on gfx1030 and gfx90a,
//! the parts both softgpu and Debian's prebuilt rocRAND and rocSPARSE have.
//!
//! Needs `clang-19`, `lld-19`, `llvm-19`, `rocm-device-libs` and
//! `libamdhip64-dev`, and softgpu's HIP library and CLI built first:
//! `cargo build --release -p softgpu-hip -p softgpu-cli`. A missing piece
//! fails the test (it never skips).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Debian's HIP runtime library: what a user's build links against.
const DEBIAN_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so";
const CLANG: &str = "clang++-19";
const TARGET: &str = "gfx1151";
/// The RDNA4 part every program is also built for and run on.
const RDNA4: &str = "gfx1201";
/// The RDNA2 part every program is also built for and run on.
const RDNA2: &str = "gfx1030";
/// The CDNA2 and CDNA3 parts every program is also built for and run on
/// (wave64).
const CDNA2: &str = "gfx90a";
const CDNA3: &str = "gfx942";
/// The parts a program runs on unless it says otherwise.
const EVERY_PART: &[&str] = &[TARGET, RDNA4, RDNA2, CDNA2, CDNA3];
/// The parts of a program that exercises the HIP API rather than device
/// code: one wave32 and one wave64 part. What the runtime does for it does
/// not depend on the ISA, and every part's device code is exercised by
/// the programs that run on [`EVERY_PART`]; each part more is a device
/// compile and a run, which the suite's time budget keeps for those.
const API_PARTS: &[&str] = &[TARGET, CDNA3];
/// Longest a program may run before it counts as hung.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// One test program.
#[derive(Default)]
struct Program {
    /// Sources in `tests/programs/`; more than one are compiled with `-c`
    /// one by one, then linked.
    sources: &'static [&'static str],
    /// Environment the program runs with.
    env: &'static [(&'static str, &'static str)],
    /// Text its standard output must contain (besides `PASS`).
    stdout: Vec<String>,
    /// Text its standard error must contain.
    stderr: Vec<String>,
    /// Device code built separately for `hipModuleLoad*`: the code object
    /// and the offload bundle are passed as the program's two arguments.
    module: Option<&'static str>,
    /// Extra compiler options for both builds.
    flags: &'static [&'static str],
    /// Also build and run it through `softgpu hipcc`. Every program is
    /// built with clang++-19 against Debian's library; the `softgpu hipcc`
    /// recipe is proven on the programs that exercise what it does (one
    /// and several translation units, device-code modules, printf,
    /// compressed bundles, the README's sample), which keeps the suite's
    /// time down.
    hipcc: bool,
    /// The parts to build for and run on, when not [`EVERY_PART`] (each
    /// such program says why).
    parts: Option<&'static [&'static str]>,
    /// Libraries to link (`-lNAME`) besides the HIP runtime.
    libraries: &'static [&'static str],
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// The cargo profile folder this test runs from (`target/release`): the
/// test executable is `target/release/deps/programs-HASH`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("cannot find the test executable");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test executable is not in target/PROFILE/deps")
        .to_path_buf()
}

/// softgpu's HIP library, which must be built already.
fn softgpu_library() -> PathBuf {
    built_library("libamdhip64.so", "softgpu-hip")
}

/// The cdylib `file` of softgpu's `package`, which must be built already.
fn built_library(file: &str, package: &str) -> PathBuf {
    let lib = profile_dir().join(file);
    assert!(
        lib.is_file(),
        "softgpu's library {} is missing: build it first with \
         `cargo build --release -p {package}`",
        lib.display()
    );
    lib
}

/// The `softgpu` executable, which must be built already.
fn softgpu_cli() -> PathBuf {
    let exe = profile_dir().join("softgpu");
    assert!(
        exe.is_file(),
        "the softgpu executable {} is missing: build it first with \
         `cargo build --release -p softgpu-cli`",
        exe.display()
    );
    exe
}

/// The device-library folder the compiler crate builds (Debian's device
/// libraries plus the gfx11 and gfx12 `oclc_isa_version_*.bc` they lack).
fn device_libs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // One folder serves every target; each target adds its own
        // `oclc_isa_version` file, so both are asked for (else the suite
        // passes only after another test built the folder for gfx1201).
        let dir = |target| {
            softgpu_compiler::Compiler::new(target)
                .and_then(|c| c.device_lib_dir())
                .unwrap_or_else(|e| panic!("cannot make the device-library folder: {e}"))
        };
        let gfx11 = dir(TARGET);
        for part in [RDNA4, RDNA2] {
            assert_eq!(
                gfx11,
                dir(part),
                "one device-library folder for every target"
            );
        }
        gfx11
    })
}

fn check_toolchain() {
    let ok = Command::new(CLANG)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{CLANG} is missing: install the Debian packages clang-19 lld-19 llvm-19 \
         rocm-device-libs libamdhip64-dev"
    );
    assert!(
        Path::new("/usr/include/hip/hip_runtime.h").is_file() && Path::new(DEBIAN_LIBRARY).exists(),
        "Debian's HIP headers or {DEBIAN_LIBRARY} are missing: install libamdhip64-dev"
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a build step; panics with its output when it fails.
fn build(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "build failed ({}): {cmd:?}\n{}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// How a program is compiled: the two build recipes.
#[derive(Clone, Copy)]
enum Recipe {
    /// clang++-19 by hand for processors (a fat binary when more than
    /// one), linked against Debian's library.
    Clang(&'static [&'static str]),
    /// `softgpu hipcc`.
    Hipcc,
}

impl Recipe {
    fn command(self) -> Command {
        match self {
            Recipe::Clang(_) => Command::new(CLANG),
            Recipe::Hipcc => {
                let mut c = Command::new(softgpu_cli());
                c.arg("hipcc").env_remove("SOFTGPU_PROFILE");
                c
            }
        }
    }

    /// The options a HIP compile gets besides the sources.
    fn hip_options(self, cmd: &mut Command) {
        if let Recipe::Clang(targets) = self {
            cmd.args(["-x", "hip"])
                .args(targets.iter().map(|t| format!("--offload-arch={t}")))
                .args(["--rocm-path=/usr", "--hip-path=/usr"])
                .arg(format!(
                    "--rocm-device-lib-path={}",
                    device_libs().display()
                ));
        }
        cmd.arg("-O2");
    }

    /// The libraries a link gets: Debian's HIP runtime for a clang build
    /// (`softgpu hipcc` adds softgpu's), and the program's own.
    fn link_options(self, p: &Program, cmd: &mut Command) {
        if let Recipe::Clang(_) = self {
            cmd.arg("-lamdhip64");
        }
        cmd.args(p.libraries.iter().map(|l| format!("-l{l}")));
    }

    /// Builds `p` into `dir`; returns the executable.
    fn build_program(self, p: &Program, dir: &Path) -> PathBuf {
        let src = programs_dir();
        let exe = dir.join("prog");
        if let [one] = p.sources {
            let mut cmd = self.command();
            self.hip_options(&mut cmd);
            cmd.args(p.flags);
            cmd.arg(src.join(one)).arg("-o").arg(&exe);
            self.link_options(p, &mut cmd);
            build(&mut cmd);
        } else {
            let mut objects = Vec::new();
            for s in p.sources {
                let obj = dir.join(Path::new(s).with_extension("o"));
                let mut cmd = self.command();
                self.hip_options(&mut cmd);
                cmd.arg("-c").arg(src.join(s)).arg("-o").arg(&obj);
                build(&mut cmd);
                objects.push(obj);
            }
            let mut cmd = self.command();
            cmd.args(&objects).arg("-o").arg(&exe);
            self.link_options(p, &mut cmd);
            build(&mut cmd);
        }
        exe
    }

    /// Builds device-only code: a code object (ELF) and an offload bundle.
    fn build_module(self, source: &str, dir: &Path) -> [PathBuf; 2] {
        let src = programs_dir().join(source);
        let elf = dir.join("kernels.hsaco");
        let bundle = dir.join("kernels.bundle");
        for (out, bundled) in [(&elf, false), (&bundle, true)] {
            let mut cmd = self.command();
            self.hip_options(&mut cmd);
            cmd.arg("--cuda-device-only");
            if !bundled {
                cmd.arg("--no-gpu-bundle-output");
            }
            cmd.arg(&src).arg("-o").arg(out);
            build(&mut cmd);
        }
        [elf, bundle]
    }
}

/// Runs `cmd` with its output in files (no pipe to fill), killing it after
/// [`RUN_TIMEOUT`]; returns (status text, success, stdout, stderr).
fn run_with_timeout(mut cmd: Command, dir: &Path) -> (String, bool, String, String) {
    let (out_path, err_path) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let out = std::fs::File::create(&out_path).unwrap();
    let err = std::fs::File::create(&err_path).unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let start = Instant::now();
    let (status, ok) = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break (s.to_string(), s.success());
        }
        if start.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break (format!("killed after {RUN_TIMEOUT:?} (hung?)"), false);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| text(&std::fs::read(p).unwrap_or_default());
    (status, ok, read(&out_path), read(&err_path))
}

/// How a built program runs.
struct Run<'a> {
    /// Where `libamdhip64.so.5` is softgpu's, if the program needs telling.
    lib_dir: Option<&'a Path>,
    /// The device profile (`SOFTGPU_PROFILE`), if not the default.
    profile: Option<&'a str>,
    /// What the run is, for messages.
    how: &'a str,
}

/// Runs the built program and checks its status and output (an expected
/// text naming the default part names the run's part instead).
fn run_program(p: &Program, exe: &Path, args: &[PathBuf], run: Run) {
    let Run {
        lib_dir,
        profile,
        how,
    } = run;
    let dir = exe.parent().unwrap();
    let mut cmd = softgpu_test_support::env::command(exe);
    cmd.args(args)
        .current_dir(dir)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("SOFTGPU_DEVICES")
        .env_remove("SOFTGPU_PROFILE");
    if let Some(l) = lib_dir {
        cmd.env("LD_LIBRARY_PATH", l);
    }
    if let Some(profile) = profile {
        cmd.env("SOFTGPU_PROFILE", profile);
    }
    cmd.envs(p.env.iter().copied());
    let (status, ok, stdout, stderr) = run_with_timeout(cmd, dir);
    let mut problems = Vec::new();
    if !ok {
        problems.push(status.clone());
    }
    if !stdout.lines().any(|l| l.trim() == "PASS") {
        problems.push("no PASS line on stdout".to_string());
    }
    for want in &p.stdout {
        let want = want.replace(TARGET, profile.unwrap_or(TARGET));
        if !stdout.contains(want.as_str()) {
            problems.push(format!("stdout lacks {want:?}"));
        }
    }
    for want in &p.stderr {
        if !stderr.contains(want.as_str()) {
            problems.push(format!("stderr lacks {want:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} ({how}) failed: {}\n--- stdout ---\n{stdout}--- stderr ---\n{stderr}",
        p.sources.join(" + "),
        problems.join("; ")
    );
}

/// Both builds and runs of one program.
fn check(p: Program) {
    check_toolchain();
    for l in p.libraries {
        let so = format!("/usr/lib/x86_64-linux-gnu/lib{l}.so");
        assert!(
            Path::new(&so).exists(),
            "{so} is missing: install Debian's lib{l}-dev (scripts/install-test-deps.sh does)"
        );
    }
    let lib = softgpu_library();
    softgpu_cli();
    let name = Path::new(p.sources[0])
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let work = tempfile::Builder::new()
        .prefix(&format!("softgpu-hip-{name}-"))
        .tempdir()
        .expect("cannot make a temporary folder");

    // 1 and 3. A user's own build against Debian's library, one fat binary
    // for every part (as a user targets several GPUs; host code compiled
    // once), run on softgpu's, on a device of each part in turn: the
    // runtime must pick each device's code.
    let libs = work.path().join("lib");
    std::fs::create_dir(&libs).unwrap();
    std::os::unix::fs::symlink(&lib, libs.join("libamdhip64.so.5")).unwrap();
    let parts = p.parts.unwrap_or(EVERY_PART);
    let exe = Recipe::Clang(parts).build_program(&p, work.path());
    for part in parts {
        let dir = work.path().join(part);
        std::fs::create_dir(&dir).unwrap();
        // A device-only module is one code object: one per part.
        let args = p
            .module
            .map(|m| {
                Recipe::Clang(std::slice::from_ref(part))
                    .build_module(m, &dir)
                    .to_vec()
            })
            .unwrap_or_default();
        let how = format!(
            "clang++-19 build for {}, LD_LIBRARY_PATH, SOFTGPU_PROFILE={part}",
            parts.join(",")
        );
        let run = Run {
            lib_dir: Some(&libs),
            profile: (*part != TARGET).then_some(*part),
            how: &how,
        };
        run_program(&p, &exe, &args, run);
    }

    // 2. softgpu hipcc, run with no environment.
    if !p.hipcc {
        return;
    }
    let d2 = work.path().join("hipcc");
    std::fs::create_dir(&d2).unwrap();
    let args2 = p
        .module
        .map(|m| Recipe::Hipcc.build_module(m, &d2).to_vec())
        .unwrap_or_default();
    let exe2 = Recipe::Hipcc.build_program(&p, &d2);
    let hipcc = Run {
        lib_dir: None,
        profile: None,
        how: "softgpu hipcc build",
    };
    run_program(&p, &exe2, &args2, hipcc);
}

/// Runs `p`, built for gfx1030 against Debian's HIP library, on Debian's
/// own HIP runtime (AMD's CLR 5.2.3) over softgpu's HSA library: a folder
/// where `libhsa-runtime64.so.1` is softgpu's comes first on the library
/// path, and the device is a gfx1030 (CLR 5.2.3 drives no gfx11 or gfx12
/// part). The program is built as code object v4: CLR 5.2.3 reads kernel
/// metadata through Debian's comgr 2.4, which cannot name the ISA of
/// clang-19's default v5 ("COMGR failed to get code object ISA name").
fn check_on_debian_hip(p: Program) {
    assert!(p.flags.is_empty(), "check_on_debian_hip sets the flags");
    let p = Program {
        flags: &["-mcode-object-version=4"],
        ..p
    };
    check_toolchain();
    let hsa = built_library("libhsa_runtime64.so", "softgpu-hsa");
    let work = tempfile::Builder::new()
        .prefix("softgpu-debian-hip-")
        .tempdir()
        .expect("cannot make a temporary folder");
    let libs = work.path().join("lib");
    std::fs::create_dir(&libs).unwrap();
    std::os::unix::fs::symlink(&hsa, libs.join("libhsa-runtime64.so.1")).unwrap();
    let exe = Recipe::Clang(&[RDNA2]).build_program(&p, work.path());
    let run = Run {
        lib_dir: Some(&libs),
        profile: Some(RDNA2),
        how: "Debian's libamdhip64.so.5 over softgpu's libhsa-runtime64.so.1, gfx1030",
    };
    run_program(&p, &exe, &[], run);
}

/// AMD's own HIP runtime, as Debian ships it, runs programs on softgpu's
/// HSA layer: two devices' enumeration and properties, memory, copies and
/// memsets, kernel launches, streams ordered by events, event timing
/// (`debian_clr.hip`), and two of the suite's own programs.
#[test]
fn debian_hip_runtime_over_softgpu_hsa() {
    check_on_debian_hip(Program {
        env: &[("SOFTGPU_DEVICES", "2")],
        ..one(&["debian_clr.hip"])
    });
    for sources in [&["vector_add.hip"], &["reduction.hip"]] {
        check_on_debian_hip(one(sources));
    }
}

fn one(sources: &'static [&'static str]) -> Program {
    Program {
        sources,
        ..Program::default()
    }
}

/// A program of the HIP API, run on [`API_PARTS`].
fn api(sources: &'static [&'static str]) -> Program {
    Program {
        parts: Some(API_PARTS),
        ..one(sources)
    }
}

/// Debian's prebuilt rocRAND and hipRAND run their own gfx1030 and gfx90a
/// kernels: Philox4x32-10 bit for bit against a reference held to
/// Random123's known answers, five generators' uniform and normal moments.
#[test]
fn debian_rocrand_and_hiprand() {
    check(Program {
        parts: Some(&[RDNA2, CDNA2]),
        libraries: &["rocrand", "hiprand"],
        ..one(&["debian_rocrand.hip"])
    });
}

/// Debian's prebuilt rocSPARSE and hipSPARSE run their own gfx1030 and
/// gfx90a kernels: SpMV, SpMM and CSR/dense conversions against host
/// results.
#[test]
fn debian_rocsparse_and_hipsparse() {
    check(Program {
        parts: Some(&[RDNA2, CDNA2]),
        libraries: &["rocsparse", "hipsparse"],
        ..one(&["debian_rocsparse.hip"])
    });
}

/// A fat binary clang compressed (`--offload-compress`: a zstd `CCOB`
/// bundle) registers and runs.
#[test]
fn compressed_fat_binary() {
    check(Program {
        flags: &["--offload-compress"],
        hipcc: true,
        ..one(&["vector_add.hip"])
    });
}

// --- softgpu hipcc as ROCm's hipcc ----------------------------------------

/// A scratch folder for one test of `softgpu hipcc`'s options.
fn scratch(name: &str) -> tempfile::TempDir {
    check_toolchain();
    softgpu_library();
    tempfile::Builder::new()
        .prefix(&format!("softgpu-hipcc-{name}-"))
        .tempdir()
        .expect("cannot make a temporary folder")
}

/// `softgpu hipcc ARGS` in `dir` with `env`, exactly as given (no `-O` is
/// added: these tests are about hipcc's own defaults); fails the test when
/// the build fails, else returns its standard error.
fn hipcc(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Recipe::Hipcc.command();
    cmd.current_dir(dir).args(args).envs(env.iter().copied());
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "build failed ({}): {cmd:?}\n{}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stderr)
}

fn source(name: &str) -> String {
    programs_dir().join(name).display().to_string()
}

/// Runs a program `softgpu hipcc` built, with no environment set.
fn run_hipcc_build(sources: &'static [&'static str], exe: &Path, args: &[PathBuf], how: &str) {
    let run = Run {
        lib_dir: None,
        profile: None,
        how,
    };
    run_program(&one(sources), exe, args, run);
}

/// With no `-O`, `softgpu hipcc` optimises as ROCm's hipcc does (`-O3`
/// and the two inlining options), and `HIPCC_VERBOSE=1` shows it.
#[test]
fn hipcc_optimises_by_default() {
    let work = scratch("defaults");
    let d = work.path();
    let err = hipcc(
        d,
        &[&source("vector_add.hip"), "-o", "prog"],
        &[("HIPCC_VERBOSE", "1")],
    );
    let cmd = err
        .lines()
        .find(|l| l.starts_with("hipcc-cmd: "))
        .unwrap_or_else(|| panic!("HIPCC_VERBOSE=1 printed no command:\n{err}"));
    for want in [
        " -O3 ",
        "-amdgpu-early-inline-all=true",
        "-amdgpu-function-calls=false",
    ] {
        assert!(cmd.contains(want), "{want} missing from {cmd}");
    }
    run_hipcc_build(
        &["vector_add.hip"],
        &d.join("prog"),
        &[],
        "softgpu hipcc, no -O",
    );
    // -O0 asked for: no -O3 and no inlining options.
    let err = hipcc(
        d,
        &["-O0", &source("vector_add.hip"), "-o", "prog0"],
        &[("HIPCC_VERBOSE", "1")],
    );
    assert!(!err.contains(" -O3 ") && !err.contains("-mllvm"), "{err}");
    let version = Recipe::Hipcc.command().arg("--version").output().unwrap();
    assert!(
        text(&version.stdout).starts_with("HIP version: 5.2."),
        "{}",
        text(&version.stdout)
    );
    assert!(text(&version.stdout).contains("clang version 19"));
}

/// A usual `HIP_ARCHITECTURES` list builds: processors softgpu does not
/// run are compiled into the fat binary (it runs on that hardware too),
/// and the device picks its own entry. A list of foreign processors only
/// gets the device's added, with a note.
#[test]
fn hipcc_builds_fat_binaries_for_any_targets() {
    let work = scratch("targets");
    let d = work.path();
    let src = source("vector_add.hip");
    let err = hipcc(
        d,
        &[
            "--offload-arch=gfx908,gfx1010",
            "--offload-arch=gfx1151",
            &src,
            "-o",
            "fat",
        ],
        &[],
    );
    assert!(!err.contains("also compiling"), "{err}");
    let bytes = std::fs::read(d.join("fat")).unwrap();
    for t in ["gfx908", "gfx1010", "gfx1151"] {
        let id = format!("amdgcn-amd-amdhsa--{t}");
        assert!(
            bytes.windows(id.len()).any(|w| w == id.as_bytes()),
            "no {id} entry in the fat binary"
        );
    }
    run_hipcc_build(
        &["vector_add.hip"],
        &d.join("fat"),
        &[],
        "fat binary gfx908,gfx1010,gfx1151",
    );
    let err = hipcc(d, &["--offload-arch=gfx908", &src, "-o", "foreign"], &[]);
    assert!(err.contains("also compiling for gfx1151"), "{err}");
    run_hipcc_build(
        &["vector_add.hip"],
        &d.join("foreign"),
        &[],
        "--offload-arch=gfx908",
    );
}

/// A program with no code for the device fails with hipErrorNoBinaryForGpu
/// and says on stderr which targets it has.
#[test]
fn missing_device_code_names_the_targets() {
    let work = scratch("nobinary");
    let d = work.path();
    let libs = device_libs().display().to_string();
    build(
        Command::new(CLANG)
            .args([
                "-x",
                "hip",
                "--offload-arch=gfx908",
                "--rocm-path=/usr",
                "--hip-path=/usr",
            ])
            .arg(format!("--rocm-device-lib-path={libs}"))
            .arg(source("vector_add.hip"))
            .args(["-o"])
            .arg(d.join("prog"))
            .arg("-lamdhip64"),
    );
    let lib = d.join("lib");
    std::fs::create_dir(&lib).unwrap();
    std::os::unix::fs::symlink(softgpu_library(), lib.join("libamdhip64.so.5")).unwrap();
    let mut cmd = softgpu_test_support::env::command(d.join("prog"));
    cmd.env("LD_LIBRARY_PATH", &lib)
        .env_remove("SOFTGPU_PROFILE")
        .env_remove("SOFTGPU_DEVICES");
    let (status, ok, stdout, stderr) = run_with_timeout(cmd, d);
    assert!(!ok, "ran without code for gfx1151: {status}\n{stdout}");
    assert!(
        stderr.contains("hipErrorNoBinaryForGpu")
            && stderr.contains("gfx908")
            && stderr.contains("gfx1151"),
        "stderr does not name the device and the binary's targets:\n{stderr}"
    );
}

/// `--genco` builds device code only, which `hipModuleLoad` loads.
#[test]
fn hipcc_genco_builds_a_module() {
    let work = scratch("genco");
    let d = work.path();
    let p = Program {
        module: Some("module_kernels.hip"),
        ..one(&["modules.hip"])
    };
    let [elf, _] = Recipe::Hipcc.build_module("module_kernels.hip", d);
    hipcc(
        d,
        &["--genco", &source("module_kernels.hip"), "-o", "genco.co"],
        &[],
    );
    let exe = Recipe::Hipcc.build_program(&p, d);
    run_hipcc_build(
        &["modules.hip"],
        &exe,
        &[elf, d.join("genco.co")],
        "module built with --genco",
    );
}

/// `-fgpu-rdc`: device code split over translation units is linked when
/// the program is.
#[test]
fn hipcc_links_relocatable_device_code() {
    let work = scratch("rdc");
    let d = work.path();
    for s in ["rdc_device", "rdc_main"] {
        hipcc(
            d,
            &[
                "-fgpu-rdc",
                "-c",
                &source(&format!("{s}.hip")),
                "-o",
                &format!("{s}.o"),
            ],
            &[],
        );
    }
    hipcc(
        d,
        &["-fgpu-rdc", "rdc_device.o", "rdc_main.o", "-o", "prog"],
        &[],
    );
    run_hipcc_build(
        &["rdc_main.hip"],
        &d.join("prog"),
        &[],
        "-fgpu-rdc, two translation units",
    );
}

/// Programs written for ROCm that splits hiprtc out link `-lhiprtc`: it
/// is softgpu's HIP library, which exports hiprtc as HIP 5.2's does.
#[test]
fn hipcc_links_hiprtc() {
    let work = scratch("hiprtc");
    let d = work.path();
    hipcc(
        d,
        &["-O2", &source("rtc.hip"), "-o", "prog", "-lhiprtc"],
        &[],
    );
    run_hipcc_build(&["rtc.hip"], &d.join("prog"), &[], "softgpu hipcc -lhiprtc");
}

/// The README's overhead benchmark (`examples/hip/overhead.hip`) builds
/// and checks its result (its timings are for reading, not for asserting).
/// It measures the host's launch and copy paths, the same for every part,
/// so it runs on one.
#[test]
fn overhead_benchmark() {
    check(Program {
        parts: Some(&[TARGET]),
        ..one(&["../../../../examples/hip/overhead.hip"])
    });
}

/// The README's example (`examples/hip/vector_add.hip`).
#[test]
fn readme_example() {
    check(Program {
        stdout: vec!["1048576 additions on AMD ".into(), "gfx1151".into()],
        hipcc: true,
        ..one(&["../../../../examples/hip/vector_add.hip"])
    });
}

#[test]
fn errors() {
    check(api(&["errors.hip"]));
}

/// (Checks gfx1151's own properties, so it runs on that part only.)
#[test]
fn devices() {
    check(Program {
        env: &[("SOFTGPU_DEVICES", "2")],
        parts: Some(&[TARGET]),
        ..one(&["devices.hip"])
    });
}

/// Contexts across two devices.
#[test]
fn contexts() {
    check(Program {
        env: &[("SOFTGPU_DEVICES", "2")],
        ..api(&["contexts.hip"])
    });
}

/// Memory pools, one on each of two devices.
#[test]
fn pools() {
    check(Program {
        env: &[("SOFTGPU_DEVICES", "2")],
        ..api(&["pools.hip"])
    });
}

/// Memory shared with a child process (the program run again).
#[test]
fn ipc() {
    check(api(&["ipc.hip"]));
}

#[test]
fn driver_copies() {
    check(api(&["driver_copies.hip"]));
}

#[test]
fn vmm() {
    check(api(&["vmm.hip"]));
}

#[test]
fn stream_memops() {
    check(api(&["stream_memops.hip"]));
}

#[test]
fn memory() {
    check(api(&["memory.hip"]));
}

/// The parts whose textures softgpu serves: RDNA's. CDNA3 (gfx940-gfx942)
/// has no images (clang-19 refuses HIP's texture functions there), and
/// CDNA2's image descriptors (gfx9's T# and S#) are not laid out yet, so
/// on gfx90a `hipCreateTextureObject` and `hipBindTexture` refuse with
/// hipErrorInvalidValue.
const IMAGE_PARTS: &[&str] = &[TARGET, RDNA4, RDNA2];

#[test]
fn texture() {
    check(Program {
        parts: Some(IMAGE_PARTS),
        ..one(&["texture.hip"])
    });
}

#[test]
fn texture_mipmap() {
    check(Program {
        parts: Some(IMAGE_PARTS),
        ..one(&["mipmap.hip"])
    });
}

#[test]
fn texture_reference() {
    check(Program {
        module: Some("texture_module.hip"),
        parts: Some(IMAGE_PARTS),
        ..one(&["texture_reference.hip"])
    });
}

#[test]
fn launch() {
    check(one(&["launch.hip"]));
}

#[test]
fn streams() {
    check(api(&["streams.hip"]));
}

#[test]
fn graphs() {
    check(api(&["graphs.hip"]));
}

#[test]
fn graph_update() {
    check(api(&["graph_update.hip"]));
}

#[test]
fn modules() {
    check(Program {
        module: Some("module_kernels.hip"),
        hipcc: true,
        ..api(&["modules.hip"])
    });
}

/// hiprtc compiles with clang-19 and Debian's HIP headers at run time, as
/// rocFFT builds its kernels.
#[test]
fn rtc() {
    check(api(&["rtc.hip"]));
}

#[test]
fn limits() {
    check(api(&["limits.hip"]));
}

#[test]
fn occupancy() {
    check(one(&["occupancy.hip"]));
}

/// (gfx1151 only: RDNA4 has no global wave sync, and the grid sync of
/// Debian's device libraries is built on it, so clang-19 cannot compile
/// the program for gfx1201: "Cannot select: llvm.amdgcn.ds.gws.barrier".)
#[test]
fn cooperative() {
    check(Program {
        parts: Some(&[TARGET]),
        ..one(&["cooperative.hip"])
    });
}

#[test]
fn printf() {
    let mut lines = Vec::new();
    for b in 0..3 {
        for t in 0..4 {
            lines.push(format!(
                "hello from thread {t} of block {b}: value {}\n",
                1000 + 10 * b + t
            ));
        }
    }
    lines.push("formats: 2.50 text Z ff -9000000000\n".to_string());
    check(Program {
        stdout: lines,
        hipcc: true,
        ..one(&["printf.hip"])
    });
}

#[test]
fn overflow() {
    check(Program {
        stdout: vec!["overflow reported as hipErrorIllegalAddress".to_string()],
        stderr: vec![
            "0 bytes past the end of a 400-byte allocation".to_string(),
            "made by hipMalloc".to_string(),
            // clang emits no argument names for HIP kernels: the first is #0.
            "kernel argument `#0`".to_string(),
            // Built with -g: the faulting statement's line, and the kernel
            // by its demangled name.
            "overflow.hip:11:".to_string(),
            "in fill_one_too_many(int*, int)".to_string(),
            // The one work-item past the end: i = n = 100 in block 0.
            "blockIdx (0, 0, 0), threadIdx (100, 0, 0)".to_string(),
        ],
        flags: &["-g"],
        hipcc: true,
        ..one(&["overflow.hip"])
    });
}

/// Device-side malloc/free (ockl's allocator over hostcall service 3): per
/// thread buffers read back by a second kernel and freed, small blocks from
/// ockl's slabs (which need the device-library folder's repaired
/// `ockl.bc`), the heap limit, and an overflow of a malloc'd block reported as device malloc.
#[test]
fn device_malloc() {
    check(Program {
        stdout: vec!["device malloc overflow reported as hipErrorIllegalAddress".to_string()],
        stderr: vec![
            // The int one past the end of the 4096-byte block.
            "0 bytes past the end of a 4096-byte allocation".to_string(),
            "device malloc (a block of its own)".to_string(),
            "in overflow_malloc(int*)".to_string(),
        ],
        flags: &["-g"],
        ..one(&["device_malloc.hip"])
    });
}

/// (gfx1151 only, as `cooperative`: its kernel syncs the grid.)
#[test]
fn multi_device() {
    check(Program {
        env: &[("SOFTGPU_DEVICES", "2")],
        parts: Some(&[TARGET]),
        ..one(&["multi_device.hip"])
    });
}

#[test]
fn fault() {
    check(Program {
        stdout: vec!["fault reported as hipErrorIllegalAddress".to_string()],
        stderr: vec!["wild_write".to_string(), "spin".to_string()],
        env: &[("SOFTGPU_TIMEOUT", "2")],
        ..one(&["fault.hip"])
    });
}

/// Global initcheck on hipMalloc'd memory: no report after hipMemcpy,
/// hipMemset, a device-to-device copy or a kernel's writes; a read of an
/// element nothing wrote is reported with its address.
#[test]
fn initcheck() {
    check(Program {
        stdout: vec!["uninitialized read reported at".to_string()],
        stderr: vec![
            "initcheck: 4-byte read of global memory".to_string(),
            "reads bytes never written since it was allocated".to_string(),
            // The kernel, by its demangled name.
            "kernel copy(int const*, int*) faulted".to_string(),
        ],
        env: &[("SOFTGPU_CHECK", "init")],
        ..api(&["initcheck.hip"])
    });
}

#[test]
fn multi_file() {
    check(Program {
        hipcc: true,
        ..api(&["multi_kernel.hip", "multi_main.hip"])
    });
}

#[test]
fn vector_add() {
    check(Program {
        hipcc: true,
        ..one(&["vector_add.hip"])
    });
}

#[test]
fn matmul() {
    check(one(&["matmul.hip"]));
}

#[test]
fn reduction() {
    check(one(&["reduction.hip"]));
}

#[test]
fn sort() {
    check(one(&["sort.hip"]));
}

#[test]
fn monte_carlo() {
    check(one(&["monte_carlo.hip"]));
}

/// A `.cu` source: `-x hip` in the clang build, by extension in hipcc's.
#[test]
fn stencil_cu() {
    check(Program {
        hipcc: true,
        ..one(&["stencil.cu"])
    });
}

#[test]
fn transpose() {
    check(one(&["transpose.hip"]));
}

#[test]
fn histogram() {
    check(one(&["histogram.hip"]));
}

#[test]
fn nbody() {
    check(one(&["nbody.hip"]));
}

#[test]
fn scan() {
    check(one(&["scan.hip"]));
}

#[test]
fn pipeline() {
    check(one(&["pipeline.hip"]));
}

/// `softgpu check OPTIONS -- EXE` in `EXE`'s folder: its exit code, its
/// standard error and the `--json` document it wrote.
fn check_run(exe: &Path, options: &[&str]) -> (i32, String, serde_json::Value) {
    let dir = exe.parent().unwrap();
    let json = dir.join("report.json");
    let _ = std::fs::remove_file(&json);
    let mut cmd = softgpu_test_support::env::command(softgpu_cli());
    cmd.arg("check")
        .args(options)
        .arg("--json")
        .arg(&json)
        .arg("--")
        .arg(exe)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("SOFTGPU_PROFILE")
        .env_remove("SOFTGPU_DEVICES");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stderr = text(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    let document = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("{cmd:?} wrote no --json ({e}); stderr:\n{stderr}"));
    let document = serde_json::from_str(&document)
        .unwrap_or_else(|e| panic!("--json of {cmd:?} does not parse: {e}"));
    (code, stderr, document)
}

/// The `--json` errors of one kind and kernel (its demangled name).
fn errors_of<'a>(
    document: &'a serde_json::Value,
    kind: &str,
    kernel: &str,
) -> Vec<&'a serde_json::Value> {
    document["errors"]
        .as_array()
        .expect("an errors array")
        .iter()
        .filter(|e| e["kind"] == kind && e["kernel"] == kernel)
        .collect()
}

/// The line of the innermost source frame of an error.
fn line_of(error: &serde_json::Value) -> u64 {
    error["source"][0]["line"].as_u64().unwrap_or(0)
}

/// Builds `check_bugs.hip` with `recipe` and `-g` into a fresh folder.
fn build_bugs(recipe: Recipe, work: &Path) -> PathBuf {
    check_toolchain();
    let dir = work.join(match recipe {
        Recipe::Hipcc => "hipcc",
        Recipe::Clang(_) => "clang",
    });
    std::fs::create_dir(&dir).unwrap();
    let program = Program {
        flags: &["-g"],
        ..one(&["check_bugs.hip"])
    };
    let exe = recipe.build_program(&program, &dir);
    if let Recipe::Clang(_) = recipe {
        // Linked against Debian's library: `softgpu check` must put
        // softgpu's first on the library path itself.
        softgpu_library();
    }
    exe
}

/// memcheck on a program built by `softgpu hipcc -g`: each of the 24
/// threads past the end of a 1000-float buffer (blocks of 256: threads
/// 232..255 of block 3) is refused a read and a write at line 10, each
/// one error; the kernel is named demangled; with leakcheck the one
/// allocation never freed (256 bytes, line 33) is the 49th error; and
/// `--error-exitcode` sets the exit code.
#[test]
fn check_memcheck_and_leakcheck() {
    let work = tempfile::tempdir().unwrap();
    let exe = build_bugs(Recipe::Hipcc, work.path());
    let (code, stderr, doc) = check_run(
        &exe,
        &["--tool", "memcheck,leakcheck", "--error-exitcode", "7"],
    );
    assert_eq!(code, 7, "{stderr}");
    assert!(stderr.contains("ERROR SUMMARY: 49 errors"), "{stderr}");
    assert!(
        stderr.contains("LEAK SUMMARY: 256 bytes leaked in 1 allocations"),
        "{stderr}"
    );
    let scale = errors_of(&doc, "memory", "scale(float const*, float*, float)");
    assert_eq!(scale.len(), 48, "{stderr}");
    let mut threads = Vec::new();
    for e in &scale {
        assert_eq!(line_of(e), 10, "{e}");
        assert_eq!(e["block"], serde_json::json!([3, 0, 0]), "{e}");
        assert_eq!(e["size"], 4, "{e}");
        assert!(e["source"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("check_bugs.hip"));
        assert_eq!(e["allocation"]["made_by"], "hipMalloc", "{e}");
        assert_eq!(e["allocation"]["size"], 4000, "{e}");
        threads.push(e["thread"][0].as_u64().unwrap());
    }
    threads.sort_unstable();
    let twice: Vec<u64> = (232..256).flat_map(|t| [t, t]).collect();
    assert_eq!(
        threads, twice,
        "each overrunning thread, a read and a write"
    );
    assert!(stderr.contains("check_bugs.hip:10:"), "{stderr}");
    // Where the program launched the kernel: the `<<<...>>>` at line 38.
    for e in &scale {
        let launched = e["launch_backtrace"].as_str().unwrap_or_default();
        assert!(launched.contains("check_bugs.hip:38"), "{launched}");
    }
    assert!(stderr.contains("launched at:"), "{stderr}");
    assert!(
        stderr.contains("blockIdx (3, 0, 0), threadIdx (255, 0, 0)"),
        "{stderr}"
    );
    let leaks = doc["leaks"].as_array().unwrap();
    assert_eq!(leaks.len(), 1, "{stderr}");
    assert_eq!(leaks[0]["size"], 256);
    let made_at = leaks[0]["backtrace"].as_str().unwrap_or_default();
    assert!(made_at.contains("check_bugs.hip:33"), "{made_at}");
    // The program's own output is untouched and its fault sticky.
    assert_eq!(doc["summary"]["errors"], 49);
}

/// racecheck and initcheck on the same program built against Debian's
/// library with clang++-19 -g: the race names both lines (the read at 16,
/// the write at 15), once; the reads of memory nothing wrote are each
/// thread's (64 at line 21; LDS: the 32 lanes of wave 0 that read what
/// wave 1 writes later, line 16). `--print-limit` bounds what is printed,
/// not what is counted; without --error-exitcode the exit code is the
/// program's own (0).
#[test]
fn check_racecheck_and_initcheck() {
    let work = tempfile::tempdir().unwrap();
    let exe = build_bugs(Recipe::Clang(&[TARGET]), work.path());
    let (code, stderr, doc) = check_run(
        &exe,
        &[
            "--tool",
            "racecheck",
            "--tool",
            "initcheck",
            "--print-limit",
            "5",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let races = errors_of(&doc, "race", "neighbour_sum(int*)");
    assert_eq!(races.len(), 1, "{stderr}");
    assert_eq!(line_of(races[0]), 16);
    let reason = races[0]["reason"].as_str().unwrap();
    assert!(reason.contains("check_bugs.hip:15:"), "{reason}");
    let global = errors_of(&doc, "uninitialized", "copy(int const*, int*)");
    assert_eq!(global.len(), 64, "{stderr}");
    assert!(global.iter().all(|e| line_of(e) == 21));
    let lds = errors_of(&doc, "uninitialized", "neighbour_sum(int*)");
    assert_eq!(lds.len(), 32, "{stderr}");
    // 1 + 64 + 32 findings, then the 48 refused accesses memcheck always
    // reports.
    assert!(stderr.contains("ERROR SUMMARY: 145 errors"), "{stderr}");
    assert!(stderr.contains("print limit of 5 errors"), "{stderr}");
    assert_eq!(stderr.matches("========= kernel ").count(), 5, "{stderr}");
}

/// A correct program under every tool: no errors, exit 0, an empty JSON
/// error list; built at -O2 and at -O0, whose whole-wave reloads of SGPR
/// spill slots no lane wrote yet are not reads of uninitialized memory.
#[test]
fn check_finds_nothing_in_a_correct_program() {
    check_toolchain();
    for level in ["-O2", "-O0"] {
        let work = tempfile::tempdir().unwrap();
        let flags: &'static [&'static str] = match level {
            "-O0" => &["-g", "-O0"],
            _ => &["-g"],
        };
        let program = Program {
            flags,
            ..one(&["check_clean.hip"])
        };
        let exe = Recipe::Hipcc.build_program(&program, work.path());
        let (code, stderr, doc) = check_run(&exe, &["--tool", "all", "--error-exitcode", "9"]);
        assert_eq!(code, 0, "{level}: {stderr}");
        assert!(
            stderr.contains("ERROR SUMMARY: 0 errors"),
            "{level}: {stderr}"
        );
        assert_eq!(doc["errors"], serde_json::json!([]), "{level}: {stderr}");
        assert_eq!(doc["leaks"], serde_json::json!([]), "{level}: {stderr}");
    }
}

/// Configuration mistakes are printed without `SOFTGPU_VERBOSE`: a
/// malformed value fails the program's first HIP call with a message
/// naming the variable (once), and a misspelled variable is warned about
/// with the name it was probably meant to be, the program running as
/// usual.
#[test]
fn configuration_mistakes_are_never_hidden() {
    check_toolchain();
    let work = tempfile::tempdir().unwrap();
    let exe = Recipe::Hipcc.build_program(&one(&["vector_add.hip"]), work.path());
    let run = |var: &str, value: &str| {
        let out = softgpu_test_support::env::command(&exe)
            .env(var, value)
            .env_remove("SOFTGPU_PROFILE")
            .env_remove("SOFTGPU_DEVICES")
            .output()
            .unwrap();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    };
    let (ok, _, stderr) = run("SOFTGPU_JIT", "maybe");
    assert!(!ok, "a malformed SOFTGPU_JIT was ignored: {stderr}");
    assert_eq!(stderr.matches("SOFTGPU_JIT").count(), 1, "{stderr}");
    let (ok, stdout, stderr) = run("SOFTGPU_CHEK", "race");
    assert!(ok && stdout.contains("PASS"), "{stdout}{stderr}");
    assert!(
        stderr.contains("SOFTGPU_CHEK is not a softgpu variable")
            && stderr.contains("did you mean SOFTGPU_CHECK?"),
        "{stderr}"
    );
}
