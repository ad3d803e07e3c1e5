//! Finding and running the Debian LLVM 19 tools.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::CompileError;

/// The tools a compile needs and the Debian package of each.
const TOOLS: [(&str, &str); 5] = [
    ("clang-19", "clang-19"),
    ("ld.lld-19", "lld-19"),
    ("llvm-as-19", "llvm-19"),
    ("llvm-extract-19", "llvm-19"),
    ("llvm-dis-19", "llvm-19"),
];

/// A library every device-library folder must hold (from `rocm-device-libs`).
pub(crate) const PROBE_LIBRARY: &str = "ocml.bc";

/// The tools found for one compile, as absolute paths.
#[derive(Clone, Debug)]
pub(crate) struct Toolchain {
    pub clang: PathBuf,
    pub lld: PathBuf,
    pub llvm_as: PathBuf,
    /// Removes the OpenCL library's `printf` stub (see `devlibs`).
    pub llvm_extract: PathBuf,
    /// Turns ockl's bitcode into text for its clock repair (see `devlibs`).
    pub llvm_dis: PathBuf,
    /// Folder of the ROCm device bitcode libraries.
    pub bitcode_dir: PathBuf,
}

/// Looks the tools up in `search_path` (not in `$PATH` unless that is what
/// is passed) and checks the device libraries; reports everything missing at once.
pub(crate) fn resolve(
    search_path: &[PathBuf],
    bitcode_dir: &Path,
) -> Result<Toolchain, CompileError> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let mut packages = Vec::new();
    for (tool, package) in TOOLS {
        match find(tool, search_path) {
            Some(p) => found.push(p),
            None => {
                missing.push(tool.to_string());
                if !packages.iter().any(|p| p == package) {
                    packages.push(package.to_string());
                }
            }
        }
    }
    let probe = bitcode_dir.join(PROBE_LIBRARY);
    if !probe.is_file() {
        missing.push(probe.display().to_string());
        packages.push("rocm-device-libs".to_string());
    }
    if !missing.is_empty() {
        return Err(CompileError::MissingTools { missing, packages });
    }
    let mut found = found.into_iter();
    Ok(Toolchain {
        clang: found.next().unwrap(),
        lld: found.next().unwrap(),
        llvm_as: found.next().unwrap(),
        llvm_extract: found.next().unwrap(),
        llvm_dis: found.next().unwrap(),
        bitcode_dir: bitcode_dir.to_path_buf(),
    })
}

/// The first executable file called `name` in `dirs`.
fn find(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The directories of `$PATH`.
pub(crate) fn env_search_path() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

/// A tool's file name, for messages.
pub(crate) fn tool_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
        .into_owned()
}

/// Runs `cmd`, feeding `stdin` to it (from a thread, so a tool that writes a
/// lot of output while reading cannot deadlock against us).
pub(crate) fn run(cmd: &mut Command, stdin: Option<&[u8]>) -> Result<Output, CompileError> {
    let name = tool_name(Path::new(cmd.get_program()));
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| CompileError::io(format!("cannot run `{name}`"), e))?;
    let writer = match (stdin, child.stdin.take()) {
        (Some(bytes), Some(mut pipe)) => {
            let bytes = bytes.to_vec();
            // A tool that stops reading early (it failed) closes the pipe: its
            // exit status and diagnostics tell why, so a write error is ignored.
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let out = child
        .wait_with_output()
        .map_err(|e| CompileError::io(format!("waiting for `{name}`"), e))?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    Ok(out)
}

/// Runs a helper step that must succeed; its failure is a [`CompileError::ToolFailed`].
pub(crate) fn run_checked(cmd: &mut Command, stdin: Option<&[u8]>) -> Result<Output, CompileError> {
    let out = run(cmd, stdin)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(failed(cmd, &out))
    }
}

pub(crate) fn failed(cmd: &Command, out: &Output) -> CompileError {
    CompileError::ToolFailed {
        tool: tool_name(Path::new(cmd.get_program())),
        status: out.status.to_string(),
        log: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// `TOOL --version` (first run per tool path per process; then remembered).
pub(crate) fn version(tool: &Path) -> Result<String, CompileError> {
    static VERSIONS: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let map = VERSIONS.get_or_init(Default::default);
    if let Some(v) = map.lock().unwrap_or_else(|e| e.into_inner()).get(tool) {
        return Ok(v.clone());
    }
    let out = run_checked(Command::new(tool).arg("--version"), None)?;
    let v = String::from_utf8_lossy(&out.stdout).into_owned();
    map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(tool.to_path_buf(), v.clone());
    Ok(v)
}

/// Fails with [`CompileError::MissingTools`] when Debian's HIP headers are
/// not installed (a HIP file that includes `<hip/hip_runtime.h>` needs
/// them).
pub(crate) fn require_hip_headers() -> Result<(), CompileError> {
    let header = Path::new(crate::hip_program::HIP_PATH).join("include/hip/hip_runtime.h");
    if header.is_file() {
        return Ok(());
    }
    Err(CompileError::MissingTools {
        missing: vec![header.display().to_string()],
        packages: vec!["libamdhip64-dev".into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_search_path_misses_every_tool() {
        let e = resolve(&[], Path::new("/nonexistent-softgpu-bitcode")).unwrap_err();
        let CompileError::MissingTools { missing, packages } = &e else {
            panic!("{e:?}")
        };
        // Five tools and the device libraries.
        assert_eq!(missing.len(), 6, "{missing:?}");
        assert_eq!(
            packages,
            &["clang-19", "lld-19", "llvm-19", "rocm-device-libs"]
        );
        assert!(e
            .to_string()
            .contains("apt-get install clang-19 lld-19 llvm-19 rocm-device-libs"));
    }
}
