//! `softgpu hipcc`: builds a HIP program with clang++-19 and Debian's HIP
//! headers, linked against softgpu's HIP runtime library (the recipe is
//! `softgpu_compiler::hip_program`), taking what ROCm's `hipcc` takes.
//!
//! Besides clang's options it answers hipcc's own: `--version` (the HIP
//! version, then clang's), `HIPCC_VERBOSE` (prints the command), and
//! softgpu's `--print-devlibs` (the device-library folder to give plain
//! `clang++-19` as `--rocm-device-lib-path`). Run as `hipcc` (a link to
//! the `softgpu` executable under that name) it is this command.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use softgpu_compiler::hip_program::{
    self, HIPRTC_LIBRARY, HIP_LIBRARY, HIP_PATH, HIP_SONAME, HIP_VERSION,
};
use softgpu_compiler::Compiler;

/// softgpu's option asking for the device-library folder.
const PRINT_DEVLIBS: &str = "--print-devlibs";

/// The folder of the running `softgpu` executable, holding softgpu's HIP
/// library; makes the links to it (`libamdhip64.so.5`, `libhiprtc.so`)
/// when missing.
fn hip_lib_dir() -> Result<PathBuf, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("finding the softgpu executable: {e}"))?;
    let dir = exe
        .parent()
        .ok_or("the softgpu executable has no folder")?
        .to_path_buf();
    let lib = dir.join(HIP_LIBRARY);
    if !lib.is_file() {
        return Err(hip_program::missing_library_message(&lib));
    }
    for name in [HIP_SONAME, HIPRTC_LIBRARY] {
        link_library(&dir, name)?;
    }
    Ok(dir)
}

/// Makes `dir/name` a link to the HIP library unless something is there.
fn link_library(dir: &Path, name: &str) -> Result<(), String> {
    let link = dir.join(name);
    if std::fs::symlink_metadata(&link).is_ok() {
        return Ok(());
    }
    // Another hipcc may make it at the same moment: that is fine too.
    match std::os::unix::fs::symlink(HIP_LIBRARY, &link) {
        Err(e) if !link.exists() => Err(format!("making {}: {e}", link.display())),
        _ => Ok(()),
    }
}

/// `clang++-19` in `$PATH`.
fn find_clang() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(hip_program::CLANG_CXX))
        .find(|p| p.is_file())
}

/// The processor of the first GPU, as `SOFTGPU_PROFILE`/`SOFTGPU_DEVICES`
/// say: what the program will run on.
fn device_target() -> Result<String, String> {
    let config = softgpu_env::config().map_err(|e| e.to_string())?;
    Ok(config.get_devices()[0].name.clone())
}

/// The device-library folder holding every processor the build targets.
fn device_libs(targets: &[String], target: &str) -> Result<PathBuf, String> {
    let users: Vec<&str> = targets.iter().map(String::as_str).collect();
    let compiler = Compiler::new(target).map_err(|e| e.to_string())?;
    compiler
        .device_lib_dir_for(&users)
        .map_err(|e| e.to_string())
}

fn plan(args: &[String]) -> Result<(PathBuf, Vec<String>), String> {
    let clang = find_clang().ok_or_else(hip_program::missing_clang_message)?;
    let inputs = hip_program::inputs(args);
    let target = device_target()?;
    let libs = if inputs.handles_device_code() {
        Some(device_libs(&inputs.targets, &target)?)
    } else {
        None
    };
    let hip = if inputs.links {
        Some(hip_lib_dir()?)
    } else {
        None
    };
    let recipe = hip_program::Recipe {
        target: &target,
        device_lib_dir: libs.as_deref(),
        hip_lib_dir: hip.as_deref(),
    };
    if inputs.user_arch && inputs.handles_device_code() {
        if let Some(t) = hip_program::added_target(&inputs, &recipe) {
            eprintln!(
                "softgpu hipcc: also compiling for {t}, the softgpu device (no --offload-arch \
                 names a processor softgpu runs)"
            );
        }
    }
    Ok((clang, hip_program::clang_args(args, &recipe)))
}

/// Runs clang++-19 with the recipe's arguments; exits as clang does.
pub fn run(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == PRINT_DEVLIBS) {
        return print_devlibs(args);
    }
    if args.iter().any(|a| a == "--version") {
        println!(
            "HIP version: {HIP_VERSION} (softgpu hipcc {}, Debian's HIP headers in {HIP_PATH})",
            env!("CARGO_PKG_VERSION")
        );
    }
    let (clang, full) = match plan(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("softgpu hipcc: {e}");
            return ExitCode::FAILURE;
        }
    };
    if softgpu_env::hipcc_verbose() {
        let words: Vec<String> = full.iter().map(|a| crate::seeds::quote(a)).collect();
        eprintln!("hipcc-cmd: {} {}", clang.display(), words.join(" "));
    }
    match std::process::Command::new(&clang).args(&full).status() {
        Ok(s) => match s.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
            None => ExitCode::FAILURE,
        },
        Err(e) => {
            eprintln!("softgpu hipcc: running {}: {e}", clang.display());
            ExitCode::FAILURE
        }
    }
}

/// `--print-devlibs [--offload-arch=X…]`: the folder to give plain
/// clang++-19 as `--rocm-device-lib-path` for those processors.
fn print_devlibs(args: &[String]) -> ExitCode {
    match device_target().and_then(|t| device_libs(&hip_program::inputs(args).targets, &t)) {
        Ok(dir) => {
            println!("{}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("softgpu hipcc: {e}");
            ExitCode::FAILURE
        }
    }
}
