//! The device-library folder handed to clang with `--rocm-device-lib-path`.
//!
//! Debian's `rocm-device-libs` (5.2.3) has every library clang links for
//! OpenCL and HIP except the gfx11 ISA-version constants
//! (`oclc_isa_version_NNNN.bc`), so clang refuses gfx11 targets with it. The
//! folder built here holds a symlink to each Debian `.bc` file plus the
//! missing constants, generated with `llvm-as-19`, except `opencl.bc`,
//! which is a copy without its weak `printf` stub (`llvm-extract-19
//! --delete`): the stub would hide clang's OpenCL printf lowering, which
//! gives the kernel a `hidden_printf_buffer` and `amdhsa.printf` formats,
//! and `ockl.bc`, which is a copy whose clock reads work on gfx11 and
//! gfx12 (`steady_clock`, below). It lives under the cache
//! directory, named by a fingerprint of the Debian libraries and clang's
//! version, is built atomically (so processes can share it), and each
//! process checks it once.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

use crate::tools::{self, Toolchain, PROBE_LIBRARY};
use crate::{unique_suffix, write_atomic, CompileError, RECIPE_VERSION};

/// A short hex fingerprint of the Debian bitcode libraries (names, sizes,
/// modification times) and of clang's version.
pub(crate) fn fingerprint(tc: &Toolchain, clang_version: &str) -> Result<String, CompileError> {
    let mut entries = Vec::new();
    let dir = &tc.bitcode_dir;
    let list = std::fs::read_dir(dir)
        .map_err(|e| CompileError::io(format!("reading {}", dir.display()), e))?;
    for e in list.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".bc") {
            continue;
        }
        // `metadata` follows symlinks: the fingerprint tracks the real files.
        let (len, mtime) = match std::fs::metadata(e.path()) {
            Ok(m) => (
                m.len(),
                m.modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos()),
            ),
            Err(_) => continue,
        };
        entries.push(format!("{name}\0{len}\0{mtime}\n"));
    }
    entries.sort();
    let mut h = Sha256::new();
    h.update(RECIPE_VERSION.to_le_bytes());
    h.update(clang_version.as_bytes());
    h.update([0]);
    h.update(dir.as_os_str().as_encoded_bytes());
    h.update([0]);
    for e in &entries {
        h.update(e.as_bytes());
    }
    Ok(crate::hex(&h.finalize()[..8]))
}

/// Makes sure `ROOT/device-libs/FINGERPRINT` exists and holds the ISA-version
/// library of `target`; returns the folder.
pub(crate) fn ensure(
    root: &Path,
    tc: &Toolchain,
    fingerprint: &str,
    target: &str,
) -> Result<PathBuf, CompileError> {
    // Paths already checked by this process. Holding the lock while building
    // keeps the threads of one process from building the same folder twice.
    static READY: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let mut ready = READY
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());

    let parent = root.join("device-libs");
    let dir = parent.join(fingerprint);
    let (digits, value) = isa_version(target).ok_or_else(|| CompileError::BadProcessor {
        processor: target.to_string(),
    })?;
    let isa = dir.join(format!("oclc_isa_version_{digits}.bc"));
    if ready.contains(&isa) {
        return Ok(dir);
    }
    if !ready.contains(&dir) {
        if !dir.join(PROBE_LIBRARY).exists() {
            build_links(&parent, &dir, tc)?;
        }
        ready.insert(dir.clone());
    }
    // An existing entry (a Debian library or one generated earlier) is kept.
    if std::fs::symlink_metadata(&isa).is_err() {
        let ll = format!(
            "target datalayout = \"{}\"\ntarget triple = \"amdgcn-amd-amdhsa\"\n\n\
             @__oclc_ISA_version = linkonce_odr protected local_unnamed_addr \
             addrspace(4) constant i32 {value}, align 4\n",
            datalayout(&tc.clang)?
        );
        let tmp = dir.join(format!(".oclc_isa_version_{digits}.bc.{}", unique_suffix()));
        // llvm-as reads the module from standard input.
        let r = tools::run_checked(
            Command::new(&tc.llvm_as).arg("-").arg("-o").arg(&tmp),
            Some(ll.as_bytes()),
        )
        .and_then(|_| {
            std::fs::rename(&tmp, &isa)
                .map_err(|e| CompileError::io(format!("creating {}", isa.display()), e))
        });
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        r?;
    }
    ready.insert(isa);
    Ok(dir)
}

/// Builds the folder of symlinks under a temporary name and renames it into
/// place; when another process won the race its folder is used.
fn build_links(parent: &Path, dir: &Path, tc: &Toolchain) -> Result<(), CompileError> {
    let bitcode_dir = &tc.bitcode_dir;
    let io = |what: &str, p: &Path, e| CompileError::io(format!("{what} {}", p.display()), e);
    std::fs::create_dir_all(parent).map_err(|e| io("creating", parent, e))?;
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let tmp = parent.join(format!(".{name}.{}", unique_suffix()));
    let result = (|| {
        std::fs::create_dir(&tmp).map_err(|e| io("creating", &tmp, e))?;
        let list = std::fs::read_dir(bitcode_dir).map_err(|e| io("reading", bitcode_dir, e))?;
        for e in list {
            let e = e.map_err(|e| io("reading", bitcode_dir, e))?;
            if Path::new(&e.file_name())
                .extension()
                .is_some_and(|x| x == "bc")
            {
                let link = tmp.join(e.file_name());
                // Debian 12's opencl.bc defines a weak `printf` stub that
                // would hide clang's printf lowering (OpenCL printf would
                // print nothing): the folder gets a copy without it. Other
                // builds (Debian 13's LLVM 17 libraries) have no such stub
                // and are linked as they are.
                if e.file_name() == "ockl.bc" && repair_ockl_clock(tc, &e.path(), &link)? {
                    continue;
                }
                if e.file_name() == "opencl.bc" && defines_printf(tc, &e.path()) {
                    tools::run_checked(
                        Command::new(&tc.llvm_extract)
                            .args(["--delete", "--func=printf"])
                            .arg(e.path())
                            .arg("-o")
                            .arg(&link),
                        None,
                    )?;
                    continue;
                }
                std::os::unix::fs::symlink(e.path(), &link)
                    .map_err(|e| io("creating", &link, e))?;
            }
        }
        match std::fs::rename(&tmp, dir) {
            Ok(()) => Ok(()),
            Err(_) if dir.join(PROBE_LIBRARY).exists() => Ok(()),
            Err(e) => Err(io("creating", dir, e)),
        }
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// ockl 5.2 reads the clock with `s_memrealtime`, an instruction gfx8 to
/// gfx10 have and gfx11 and gfx12 do not, in functions marked
/// `target-features="+s-memrealtime"`: the clock of device `malloc`'s slab
/// allocator (`dm.cl`'s `realtime`), `__ockl_rtcwait_u32` and
/// `__ockl_memrealtime_u64`. For gfx11 LLVM 19 deletes those functions
/// (its pass that removes functions needing features the target lacks)
/// and their calls with them, leaving the allocator's clock undefined: a
/// kernel whose `malloc` takes a block of 3072 bytes or less then spins
/// forever on "a slab was made too recently" (or goes on with garbage);
/// for gfx12 clang stops with "Cannot select". So when Debian's `ockl.bc`
/// uses it, the folder gets a copy (written to `link`) reading
/// `llvm.readsteadycounter` instead, which LLVM lowers per target to the
/// same 100 MHz clock (`s_memrealtime` on gfx10, `s_sendmsg_rtn_b64
/// MSG_RTN_GET_REALTIME` on gfx11 and gfx12; later ockl reads it so).
/// Returns whether it wrote the copy.
fn repair_ockl_clock(tc: &Toolchain, ockl: &Path, link: &Path) -> Result<bool, CompileError> {
    let out = tools::run_checked(
        Command::new(&tc.llvm_dis).arg(ockl).arg("-o").arg("-"),
        None,
    )?;
    let Some(repaired) = steady_clock(&String::from_utf8_lossy(&out.stdout)) else {
        return Ok(false);
    };
    // llvm-as reads the module from standard input (and verifies it).
    tools::run_checked(
        Command::new(&tc.llvm_as).arg("-").arg("-o").arg(link),
        Some(repaired.as_bytes()),
    )?;
    Ok(true)
}

/// The `s_memrealtime` intrinsic (`memrealtime` in the text has no other use).
const MEMREALTIME: &str = "@llvm.amdgcn.s.memrealtime(";
/// The target-independent clock LLVM lowers to each target's own.
const STEADY_COUNTER: &str = "@llvm.readsteadycounter(";
/// The target feature the clock functions ask for.
const MEMREALTIME_FEATURE: &str = "+s-memrealtime";

/// LLVM IR text with every `s_memrealtime` read (and its declaration)
/// replaced by `llvm.readsteadycounter` and `+s-memrealtime` taken out of
/// every `target-features` attribute (dropping an attribute left empty);
/// `None` when the text never reads `s_memrealtime`.
fn steady_clock(ir: &str) -> Option<String> {
    if !ir.contains(MEMREALTIME) {
        return None;
    }
    let text = ir.replace(MEMREALTIME, STEADY_COUNTER);
    Some(
        text.lines()
            .map(without_feature)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    )
}

/// One line with `+s-memrealtime` taken out of its `target-features`.
fn without_feature(line: &str) -> String {
    const KEY: &str = "\"target-features\"=\"";
    let Some(start) = line.find(KEY) else {
        return line.to_string();
    };
    let value_start = start + KEY.len();
    let Some(len) = line[value_start..].find('"') else {
        return line.to_string();
    };
    let value = &line[value_start..value_start + len];
    let kept: Vec<&str> = value
        .split(',')
        .filter(|f| *f != MEMREALTIME_FEATURE)
        .collect();
    let rest = &line[value_start + len + 1..];
    if kept.is_empty() {
        // ` "target-features"=""` reads as no features; drop the pair and
        // the space before it.
        let head = line[..start].strip_suffix(' ').unwrap_or(&line[..start]);
        format!("{head}{rest}")
    } else {
        format!("{}{}\"{rest}", &line[..value_start], kept.join(","))
    }
}

/// Whether the bitcode library at `path` defines `printf`: llvm-extract
/// can extract it alone (it refuses a function that is not there).
fn defines_printf(tc: &Toolchain, path: &Path) -> bool {
    let mut extract = Command::new(&tc.llvm_extract);
    extract.args(["--func=printf", "-o", "/dev/null"]).arg(path);
    tools::run_checked(&mut extract, None).is_ok()
}

/// clang's amdgcn data layout, asked from clang itself (once per clang).
fn datalayout(clang: &Path) -> Result<String, CompileError> {
    static LAYOUTS: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let map = LAYOUTS.get_or_init(Default::default);
    if let Some(dl) = map.lock().unwrap_or_else(|e| e.into_inner()).get(clang) {
        return Ok(dl.clone());
    }
    let mut cmd = Command::new(clang);
    cmd.args(["-x", "cl", "-target", "amdgcn-amd-amdhsa", "-nogpulib"])
        .args(["-S", "-emit-llvm", "-o", "-", "-"]);
    let out = tools::run_checked(&mut cmd, Some(b""))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let dl = text
        .lines()
        .find_map(|l| l.strip_prefix("target datalayout = \""))
        .and_then(|l| l.strip_suffix('"'))
        .ok_or_else(|| CompileError::ToolFailed {
            tool: tools::tool_name(clang),
            status: "no `target datalayout` line in its output".into(),
            log: text.clone().into_owned(),
        })?
        .to_string();
    map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(clang.to_path_buf(), dl.clone());
    Ok(dl)
}

/// `gfx1151` → (`"1151"`, 11501), `gfx90a` → (`"90a"`, 9010): the
/// library's file suffix and the constant (major × 1000 + minor × 100 +
/// stepping, `softgpu_isa::target::version`). `None` for a name that is
/// not `gfx` followed by that form.
pub(crate) fn isa_version(target: &str) -> Option<(&str, u32)> {
    let v = softgpu_isa::target::version(target)?;
    Some((&target[3..], v.major * 1000 + v.minor * 100 + v.stepping))
}

/// Writes the force-included HIP header under `root` (named by its content)
/// and returns its path.
pub(crate) fn hip_header(root: &Path) -> Result<PathBuf, CompileError> {
    let hash = crate::hex(&Sha256::digest(crate::HIP_HEADER.as_bytes())[..8]);
    let path = root.join("include").join(format!("softgpu_hip-{hash}.h"));
    if !path.is_file() {
        write_atomic(&path, crate::HIP_HEADER.as_bytes())?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Debian's ockl 5.2.3 has (`llvm-dis-19` of it): the clock
    /// function, its declaration and the attribute groups asking for the
    /// feature, alone and among others.
    #[test]
    fn the_clock_reads_the_steady_counter_and_no_function_needs_memrealtime() {
        let ir = "define internal fastcc i64 @10() unnamed_addr #25 {\n  \
                  %1 = tail call i64 @llvm.amdgcn.s.memrealtime()\n  ret i64 %1\n}\n\
                  declare i64 @llvm.amdgcn.s.memrealtime() #28\n\
                  attributes #25 = { nounwind \"stack-protector-buffer-size\"=\"8\" \
                  \"target-features\"=\"+s-memrealtime\" }\n\
                  attributes #26 = { \"target-features\"=\"+dpp,+s-memrealtime,+gfx9-insts\" }\n";
        let out = steady_clock(ir).expect("the text reads s_memrealtime");
        assert!(!out.contains("memrealtime"), "{out}");
        assert!(out.contains("%1 = tail call i64 @llvm.readsteadycounter()"));
        assert!(out.contains("declare i64 @llvm.readsteadycounter() #28"));
        assert!(out.contains("attributes #25 = { nounwind \"stack-protector-buffer-size\"=\"8\" }"));
        assert!(out.contains("attributes #26 = { \"target-features\"=\"+dpp,+gfx9-insts\" }"));
        assert_eq!(out.lines().count(), ir.lines().count());
    }

    #[test]
    fn a_library_without_s_memrealtime_is_left_alone() {
        assert_eq!(
            steady_clock("declare i64 @llvm.readsteadycounter()\n"),
            None
        );
    }

    #[test]
    fn isa_versions() {
        // The values are those of Debian's own oclc_isa_version_*.bc
        // (`@__oclc_ISA_version`): 90a is 9010, 1030 is 10300.
        assert_eq!(isa_version("gfx1151"), Some(("1151", 11501)));
        assert_eq!(isa_version("gfx1100"), Some(("1100", 11000)));
        assert_eq!(isa_version("gfx1103"), Some(("1103", 11003)));
        assert_eq!(isa_version("gfx90a"), Some(("90a", 9010)));
        assert_eq!(isa_version("gfx942"), Some(("942", 9402)));
        assert_eq!(isa_version("gfx1030"), Some(("1030", 10300)));
        for bad in [
            "gfx", "gfx9", "gfx9g0", "sm_80", "gfxa00", "gfx1x00", "gfx½0",
        ] {
            assert_eq!(isa_version(bad), None, "{bad}");
        }
    }
}
