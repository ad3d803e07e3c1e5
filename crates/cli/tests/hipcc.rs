//! `softgpu hipcc`: compiles HIP programs with clang++-19 against Debian's
//! HIP headers and links them to the HIP library beside the softgpu
//! executable. The library itself belongs to another crate, so these tests
//! run a copy of `softgpu` in a scratch folder, with Debian's
//! `libamdhip64.so` standing in for softgpu's (the link is what is
//! checked here; running the programs is `softgpu-hip`'s test).

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{scratch, softgpu_command, text};
use softgpu_test_support::tool;

const DEBIAN_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so";

const KERNEL_TU: &str = r#"
#include <hip/hip_runtime.h>
__global__ void twice(int* p) { p[threadIdx.x] *= 2; }
void launch_twice(int* p, int n) { twice<<<1, n>>>(p); }
"#;

const MAIN_TU: &str = r#"
#include <hip/hip_runtime.h>
void launch_twice(int* p, int n);
int main() {
  int* d = nullptr;
  if (hipMalloc(&d, 64 * sizeof(int)) != hipSuccess) return 1;
  launch_twice(d, 64);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
"#;

/// A copy of `softgpu` in `dir`, so the HIP library it looks for is `dir`'s.
fn softgpu_copy(dir: &Path) -> PathBuf {
    let exe = dir.join("softgpu");
    std::fs::copy(env!("CARGO_BIN_EXE_softgpu"), &exe).unwrap();
    exe
}

fn run(exe: &Path, cwd: &Path, args: &[&str]) -> Output {
    softgpu_test_support::env::command(exe)
        .arg("hipcc")
        .args(args)
        .current_dir(cwd)
        .env_remove("SOFTGPU_PROFILE")
        .output()
        .expect("cannot run softgpu")
}

fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn compiles_links_and_sets_the_library_path() {
    let dir = scratch("hipcc-link");
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let exe = softgpu_copy(&bin);
    std::fs::write(dir.join("k.hip"), KERNEL_TU).unwrap();
    std::fs::write(dir.join("main.cpp"), MAIN_TU).unwrap();

    // -c needs no HIP library.
    let out = run(&exe, &dir, &["-O2", "-c", "k.hip", "-o", "k.o"]);
    assert_ok(&out, "hipcc -c k.hip");
    let out = run(&exe, &dir, &["-c", "main.cpp", "-o", "main.o"]);
    assert_ok(&out, "hipcc -c main.cpp");
    let obj = std::fs::read(dir.join("k.o")).unwrap();
    assert!(
        obj.windows(24).any(|w| w == b"__CLANG_OFFLOAD_BUNDLE__"),
        "k.o holds no offload bundle"
    );

    // Linking without the library says how to build it.
    let out = run(&exe, &dir, &["k.o", "main.o", "-o", "prog"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("cargo build --release -p softgpu-hip") && err.contains("libamdhip64.so"),
        "{err}"
    );

    // With a library there (Debian's, standing in), the link makes the
    // SONAME link and a program that finds the folder by itself.
    std::os::unix::fs::symlink(DEBIAN_LIBRARY, bin.join("libamdhip64.so")).unwrap();
    let out = run(&exe, &dir, &["k.o", "main.o", "-o", "prog"]);
    assert_ok(&out, "hipcc k.o main.o");
    assert!(std::fs::symlink_metadata(bin.join("libamdhip64.so.5")).is_ok());
    // `-lhiprtc` finds the same library.
    assert!(std::fs::symlink_metadata(bin.join("libhiprtc.so")).is_ok());
    let prog = dir.join("prog");
    let dynamic = tool::run("llvm-readelf-19", &["-d", prog.to_str().unwrap()]);
    assert!(dynamic.contains("[libamdhip64.so.5]"), "{dynamic}");
    assert!(
        dynamic.contains(&format!("[{}]", bin.display())),
        "{dynamic}"
    );

    // One step from source to program works too, and an --offload-arch of
    // the user's own is kept.
    let out = run(
        &exe,
        &dir,
        &["--offload-arch=gfx1100", "k.hip", "main.cpp", "-o", "prog2"],
    );
    assert_ok(&out, "hipcc k.hip main.cpp");
    let prog = std::fs::read(dir.join("prog2")).unwrap();
    assert!(prog.windows(7).any(|w| w == b"gfx1100"));
    assert!(!prog.windows(7).any(|w| w == b"gfx1151"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_clang_names_the_packages() {
    let dir = scratch("hipcc-noclang");
    let out = softgpu_command()
        .args(["hipcc", "-c", "k.hip"])
        .current_dir(&dir)
        .env("PATH", &dir)
        .output()
        .expect("cannot run softgpu");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("clang++-19") && err.contains("libamdhip64-dev") && err.contains("lld-19"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn clang_errors_fail_the_build() {
    let dir = scratch("hipcc-error");
    std::fs::write(
        dir.join("bad.hip"),
        "__global__ void k() { undeclared(); }\n",
    )
    .unwrap();
    let out = softgpu_command()
        .args(["hipcc", "-c", "bad.hip", "-o", "bad.o"])
        .current_dir(&dir)
        .output()
        .expect("cannot run softgpu");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("undeclared"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Linked under the names of ROCm's tools, the executable is those tools,
/// as a Makefile's `$(ROCM_PATH)/bin/hipcc` and `hipconfig` expect.
#[test]
fn answers_as_hipcc_and_hipconfig_under_their_names() {
    let dir = scratch("hipcc-names");
    let exe = softgpu_copy(&dir);
    for name in ["hipcc", "hipconfig"] {
        std::os::unix::fs::symlink(&exe, dir.join(name)).unwrap();
    }
    let tool_output = |name: &str, args: &[&str]| {
        softgpu_test_support::env::command(dir.join(name))
            .args(args)
            .current_dir(&dir)
            .env_remove("SOFTGPU_PROFILE")
            .output()
            .expect("cannot run the tool")
    };
    // hipconfig prints its answer without a newline unless asked (-n).
    let out = tool_output("hipconfig", &["--platform"]);
    assert_ok(&out, "hipconfig --platform");
    assert_eq!(text(&out.stdout), "amd");
    assert_eq!(
        text(&tool_output("hipconfig", &["--rocmpath", "-n"]).stdout),
        "/usr\n"
    );
    assert!(text(&tool_output("hipconfig", &["--version"]).stdout).starts_with("5.2."));
    assert!(text(&tool_output("hipconfig", &["--cpp_config"]).stdout)
        .contains("-D__HIP_PLATFORM_AMD__"));
    let out = tool_output("hipconfig", &["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--frobnicate"));
    // The same answers through the subcommand.
    let out = softgpu_command()
        .args(["hipconfig", "--platform"])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "amd");

    // The device-library folder for plain clang++-19, for any processor.
    let out = tool_output("hipcc", &["--print-devlibs", "--offload-arch=gfx908"]);
    assert_ok(&out, "hipcc --print-devlibs");
    let libs = PathBuf::from(text(&out.stdout).trim());
    for lib in [
        "oclc_isa_version_1151.bc",
        "oclc_isa_version_908.bc",
        "ocml.bc",
    ] {
        assert!(libs.join(lib).exists(), "{} has no {lib}", libs.display());
    }
    let out = tool_output("hipcc", &["--print-devlibs", "--offload-arch=sm_80"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("sm_80"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
