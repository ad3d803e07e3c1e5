//! System, agent, ISA and extension information through
//! `libhsa-runtime64.so.1`: the C programs `tests/c/info.c` and
//! `tests/c/sys_absent.c`, Debian's `rocminfo` run against our library,
//! and the library's exported symbols against the functions real clients
//! import.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use object::read::elf::{ElfFile64, FileHeader, Sym};
use object::{elf, Endianness};

fn info_program() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| common::build_c("info"))
}

/// The value after `key: ` on the first line that has it.
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}: ");
    out.lines()
        .find_map(|l| l.trim_start().strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {key:?} line in:\n{out}"))
}

#[test]
fn info_reports_the_default_system() {
    let out = common::run_ok(info_program(), &[], &[]);
    assert!(out.contains("OK info"), "{out}");
    assert_eq!(field(&out, "refcount"), "ok");
    assert_eq!(field(&out, "system version"), "1.1");
    assert_eq!(field(&out, "timestamp frequency"), "1000000000");
    assert!(field(&out, "build").starts_with("softgpu "), "{out}");
    assert_eq!(field(&out, "extension loader"), "yes");
    assert_eq!(field(&out, "extension images"), "no");
    assert_eq!(field(&out, "loader extension"), "1.3");
    assert_eq!(field(&out, "extension name"), "HSA_EXTENSION_AMD_LOADER");
    assert_eq!(field(&out, "gpu agents"), "1");
    assert!(
        field(&out, "status NOT_INITIALIZED").starts_with("HSA_STATUS_ERROR_NOT_INITIALIZED"),
        "{out}"
    );
    assert!(field(&out, "status 0x1004").starts_with("HSA_STATUS_ERROR_INVALID_AGENT"));
    assert!(field(&out, "status 0x28").starts_with("HSA_STATUS_ERROR_INVALID_MEMORY_POOL"));

    // Agent 0 is the CPU, agent 1 the gfx1151 GPU from the default profile.
    assert!(out.contains("agent 0: CPU name="), "{out}");
    assert!(
        out.contains("agent 1: GPU name=gfx1151 vendor=AMD"),
        "{out}"
    );
    let gpu = &out[out.find("agent 1: GPU").unwrap()..];
    assert_eq!(field(gpu, "isa"), "amdgcn-amd-amdhsa--gfx1151");
    assert_eq!(field(gpu, "product"), "AMD Radeon 8060S Graphics (softgpu)");
    assert_eq!(field(gpu, "uuid"), "GPU-softgpu0000000");
    assert_eq!(field(gpu, "compute units"), "40");
    assert_eq!(field(gpu, "wavefront size"), "32");
    assert_eq!(field(gpu, "workgroup max size"), "1024");
    assert_eq!(field(gpu, "isa workgroup max size"), "1024");
    assert_eq!(field(gpu, "queue max size"), "131072");
    assert_eq!(field(gpu, "cache line"), "128");
    assert_eq!(field(gpu, "chip id"), "5510");
    assert_eq!(field(gpu, "max waves per cu"), "32");
    assert_eq!(field(gpu, "caches"), "32768 2097152 33554432 0");
    assert_eq!(field(gpu, "cache L1"), "level 1 size 32768");
    assert_eq!(field(gpu, "cache L3"), "level 3 size 33554432");
    let waves: Vec<&str> = gpu
        .lines()
        .filter_map(|l| l.trim().strip_prefix("wavefront: "))
        .collect();
    assert_eq!(waves, ["32", "64"]);
}

#[test]
fn info_reports_two_devices() {
    let out = common::run_ok(info_program(), &[], &[("SOFTGPU_DEVICES", "2")]);
    assert_eq!(field(&out, "gpu agents"), "2", "{out}");
    assert!(out.contains("agent 1: GPU name=gfx1151"), "{out}");
    assert!(out.contains("agent 2: GPU name=gfx1151"), "{out}");
    let second = &out[out.find("agent 2: GPU").unwrap()..];
    assert_eq!(field(second, "uuid"), "GPU-softgpu0000001");
    assert_eq!(field(second, "isa"), "amdgcn-amd-amdhsa--gfx1151");
}

#[test]
fn info_reports_the_gfx1100_profile() {
    let out = common::run_ok(info_program(), &[], &[("SOFTGPU_PROFILE", "gfx1100")]);
    assert!(
        out.contains("agent 1: GPU name=gfx1100 vendor=AMD"),
        "{out}"
    );
    let gpu = &out[out.find("agent 1: GPU").unwrap()..];
    assert_eq!(field(gpu, "isa"), "amdgcn-amd-amdhsa--gfx1100");
    assert_eq!(field(gpu, "product"), "AMD Radeon RX 7900 XTX (softgpu)");
    assert_eq!(field(gpu, "compute units"), "96");
    assert_eq!(field(gpu, "chip id"), "29772");
    assert_eq!(field(gpu, "caches"), "32768 6291456 100663296 0");
    // softgpu's attributes (include/softgpu_ext.h): the profile, its
    // revision and its fidelity (2: timing-estimated).
    assert_eq!(
        field(gpu, "profile"),
        "softgpu/gfx1100/radeon-rx-7900-xtx revision 2 fidelity 2"
    );
}

#[test]
fn absent_features_refuse() {
    let exe = common::build_c("sys_absent");
    let out = common::run(&exe, &[], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("OK absent"),
        "sys_absent failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // Each refusal says what was asked, once.
    assert!(
        stderr.contains("not supported: hsa_ext_image_create: images are not supported"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not supported: hsa_amd_svm_prefetch_async"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("hsa_ext_image_create: images").count(),
        1,
        "{stderr}"
    );
}

/// Builds the LD_PRELOAD shim that answers rocminfo's kernel-driver checks.
fn rocminfo_shim() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/sys_rocminfo_shim.c");
    let out = common::lib_dir()
        .parent()
        .unwrap()
        .join("hsa-test-bin/sys_rocminfo_shim.so");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let built = Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg(&src)
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| panic!("cannot run gcc ({e}): install the Debian package gcc"));
    assert!(
        built.status.success(),
        "gcc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    out
}

#[test]
fn rocminfo_runs_against_our_library() {
    let rocminfo = Path::new("/usr/bin/rocminfo");
    assert!(
        rocminfo.exists(),
        "/usr/bin/rocminfo is missing: install the Debian package rocminfo"
    );
    let shim = rocminfo_shim();
    let out = common::run(rocminfo, &[], &[("LD_PRELOAD", shim.to_str().unwrap())]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "rocminfo failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(!stdout.contains("hsa api call failure"), "{stdout}");
    assert!(stdout.contains("gfx1151"), "{stdout}");
    assert!(stdout.contains("amdgcn-amd-amdhsa--gfx1151"), "{stdout}");
    assert!(
        stdout.contains("AMD Radeon 8060S Graphics (softgpu)"),
        "{stdout}"
    );
    assert!(stdout.contains("Runtime Version:         1.1"), "{stdout}");
    assert!(stdout.contains("*** Done ***"), "{stdout}");
}

/// The function names `tests/data/hsa-imports.txt` lists (first column):
/// what a HIP runtime, rocminfo and ROCm's conformance tests import.
fn imported_functions() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hsa-imports.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the list of functions HSA clients import)",
            path.display()
        )
    });
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Defined dynamic symbols of the library with their version names.
fn exported_symbols(lib: &Path) -> Vec<(String, Option<String>)> {
    let data = std::fs::read(lib).unwrap_or_else(|e| panic!("{}: {e}", lib.display()));
    let file = ElfFile64::<Endianness>::parse(data.as_slice()).expect("an ELF64 shared object");
    let endian = file.endian();
    let sections = file
        .elf_header()
        .sections(endian, data.as_slice())
        .expect("sections");
    let symbols = sections
        .symbols(endian, data.as_slice(), elf::SHT_DYNSYM)
        .expect("dynamic symbol table");
    let versions = sections
        .versions(endian, data.as_slice())
        .expect("version sections")
        .expect("the library has symbol versions");
    let mut out = Vec::new();
    for (index, sym) in symbols.enumerate() {
        if sym.st_shndx(endian) == elf::SHN_UNDEF {
            continue;
        }
        let name =
            String::from_utf8_lossy(sym.name(endian, symbols.strings()).expect("symbol name"));
        let version = versions
            .version(versions.version_index(endian, index))
            .expect("version index")
            .map(|v| String::from_utf8_lossy(v.name()).into_owned());
        out.push((name.into_owned(), version));
    }
    out
}

#[test]
fn exports_cover_hsa_imports() {
    let lib = common::lib_dir().join("libhsa-runtime64.so.1");
    let exported = exported_symbols(&lib);
    let wanted = imported_functions();
    assert!(
        wanted.len() > 90,
        "hsa-imports.txt lists {} functions",
        wanted.len()
    );
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|f| {
            !exported
                .iter()
                .any(|(n, v)| n == *f && v.as_deref() == Some("ROCR_1"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{} imported functions are not exported with version ROCR_1: {missing:?}",
        missing.len()
    );
    // Every hsa_* export carries the version, and nothing else leaks.
    for (name, version) in &exported {
        if name.starts_with("hsa_") {
            assert_eq!(version.as_deref(), Some("ROCR_1"), "{name}");
        } else {
            assert_eq!(name, "ROCR_1", "unexpected export {name}");
        }
    }
}

/// docs/SUPPORT.md's "Every HSA export" names every export, so the list of
/// functions and their states cannot fall behind the library.
#[test]
fn support_lists_every_export() {
    let lib = common::lib_dir().join("libhsa-runtime64.so.1");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/SUPPORT.md");
    let support = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let section = support
        .split("### Every HSA export")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("SUPPORT.md has the section \"Every HSA export\"");
    let missing: Vec<String> = exported_symbols(&lib)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.starts_with("hsa_") && !section.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "SUPPORT.md's \"Every HSA export\" does not list: {missing:?}"
    );
}
