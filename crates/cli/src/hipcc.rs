//! `softgpu hipcc`: builds a HIP program with clang++-19 and Debian's HIP
//! headers, linked against softgpu's HIP runtime library (the recipe is
//! `softgpu_compiler::hip_program`).

use std::path::PathBuf;
use std::process::ExitCode;

use softgpu_compiler::hip_program::{self, HIP_LIBRARY, HIP_SONAME};
use softgpu_compiler::Compiler;

/// The folder of the running `softgpu` executable, holding softgpu's HIP
/// library; makes the `libamdhip64.so.5` link to it when missing.
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
    let soname = dir.join(HIP_SONAME);
    if std::fs::symlink_metadata(&soname).is_err() {
        // Another hipcc may make it at the same moment: that is fine too.
        if let Err(e) = std::os::unix::fs::symlink(HIP_LIBRARY, &soname) {
            if !soname.exists() {
                return Err(format!("making {}: {e}", soname.display()));
            }
        }
    }
    Ok(dir)
}

/// `clang++-19` in `$PATH`.
fn find_clang() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(hip_program::CLANG_CXX))
        .find(|p| p.is_file())
}

fn plan(args: &[String]) -> Result<(PathBuf, Vec<String>), String> {
    let clang = find_clang().ok_or_else(hip_program::missing_clang_message)?;
    let inputs = hip_program::inputs(args);
    // The first GPU's processor, as `SOFTGPU_PROFILE`/`SOFTGPU_DEVICES` say.
    let config = softgpu_env::config().map_err(|e| e.to_string())?;
    let target = config.get_devices()[0].name.clone();
    let libs = if inputs.compiles_hip {
        // One folder serves every target; it needs each target's
        // ISA-version library, so make sure of all the user names.
        let mut targets = hip_program::user_targets(args);
        if targets.is_empty() {
            targets.push(target.clone());
        }
        let mut dir = None;
        for t in &targets {
            let compiler = Compiler::new(t).map_err(|e| e.to_string())?;
            dir = Some(compiler.device_lib_dir().map_err(|e| e.to_string())?);
        }
        dir
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
    Ok((clang, hip_program::clang_args(args, &recipe)))
}

/// Runs clang++-19 with the recipe's arguments; exits as clang does.
pub fn run(args: &[String]) -> ExitCode {
    let (clang, full) = match plan(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("softgpu hipcc: {e}");
            return ExitCode::FAILURE;
        }
    };
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
