//! Builds C programs against the freshly built `libhsa-runtime64.so.1` and
//! runs them, as an unmodified HSA client would be run.
//!
//! The library is the cdylib cargo built for this test run (found beside
//! the test executable); a temporary folder gets it under its SONAME, the
//! program is linked with `gcc` against Debian's `hsa.h`
//! (`libhsa-runtime-dev`) and run with `LD_LIBRARY_PATH` pointing there.
//! Missing tools or headers fail the test, naming the packages.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use softgpu_test_support::tool;

/// The folder holding `libhsa-runtime64.so.1` (our build).
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> → target/<profile>/libhsa_runtime64.so
        let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
        let built = profile_dir.join("libhsa_runtime64.so");
        assert!(
            built.exists(),
            "{} is missing: run `cargo build --release -p softgpu-hsa` first \
             (scripts/test.sh does; `cargo test` does not build a cdylib)",
            built.display()
        );
        assert_fresh(&built);
        let dir = profile_dir.join("hsa-test-lib");
        std::fs::create_dir_all(&dir).expect("create lib dir");
        let link = dir.join("libhsa-runtime64.so.1");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&built, &link).expect("symlink the library");
        dir
    })
}

/// Fails when a source the library is built from is newer than the
/// library, so the tests never pass against a stale build.
fn assert_fresh(library: &Path) {
    let built = std::fs::metadata(library)
        .and_then(|m| m.modified())
        .expect("library mtime");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for dir in [
        "hsa/src",
        "runtime/src",
        "arena/src",
        "interp/src",
        "interp/src/ops",
        "jit/src",
        "exec/src",
        "codeobj/src",
        "isa/src",
    ] {
        for entry in std::fs::read_dir(root.join(dir))
            .expect("source dir")
            .flatten()
        {
            let modified = entry
                .metadata()
                .and_then(|m| m.modified())
                .expect("source mtime");
            assert!(
                modified <= built,
                "{} is newer than {}: run `cargo build --release -p softgpu-hsa` (scripts/test.sh does)",
                entry.path().display(),
                library.display()
            );
        }
    }
}

/// Where compiled test programs go.
fn bin_dir() -> PathBuf {
    let dir = lib_dir()
        .parent()
        .expect("profile dir")
        .join("hsa-test-bin");
    std::fs::create_dir_all(&dir).expect("create bin dir");
    dir
}

/// Compiles `tests/c/NAME.c` (plus `tests/c/harness.h` if it includes it)
/// and links it against our library. Returns the executable.
pub fn build_c(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    assert!(
        Path::new("/usr/include/hsa/hsa.h").exists(),
        "/usr/include/hsa/hsa.h is missing: install the Debian package libhsa-runtime-dev"
    );
    let exe = bin_dir().join(name);
    let out = tool::output(
        Command::new("gcc")
            .args([
                "-std=gnu11",
                "-O1",
                "-Wall",
                "-Werror",
                "-D__HIP_PLATFORM_AMD__",
            ])
            .arg("-I/usr/include/hsa")
            .arg("-I/usr/include")
            .arg(format!(
                "-I{}",
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../include")
                    .display()
            ))
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib_dir().display()))
            .arg("-l:libhsa-runtime64.so.1")
            .arg("-lpthread"),
    );
    assert!(
        out.status.success(),
        "gcc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs a program against our library with extra environment variables.
pub fn run(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    // With the tests' defaults (SOFTGPU_JIT=verify unless set), as
    // scripts/test.sh runs the programs.
    let mut cmd = softgpu_test_support::env::command(exe);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", lib_dir())
        .env_remove("SOFTGPU_TRACE")
        .env_remove("SOFTGPU_CAPTURE")
        .env_remove("SOFTGPU_PROFILE")
        .env_remove("SOFTGPU_DEVICES");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()))
}

/// Runs scenario `args[0]` of a C test program, asserting it succeeded and
/// printed `OK <scenario>`; returns its stderr for further checks.
pub fn scenario(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let name = args[0];
    let out = run(exe, args, env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stdout.contains(&format!("OK {name}")),
        "scenario {name} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stderr
}

/// Runs and asserts success; returns stdout.
pub fn run_ok(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = run(exe, args, env);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A kernel compiled from OpenCL C source for `target`, written to a file
/// a C program can load. Returns the path.
pub fn kernel_file(name: &str, source: &str, target: &str) -> PathBuf {
    let compiler = softgpu_compiler::Compiler::new(target).unwrap_or_else(|e| panic!("{e}"));
    let bytes = compiler
        .compile(source, softgpu_compiler::Language::OpenCl)
        .unwrap_or_else(|e| panic!("compiling {name}: {e}"));
    let path = bin_dir().join(format!("{name}-{target}.hsaco"));
    std::fs::write(&path, bytes.as_slice()).expect("write code object");
    path
}
