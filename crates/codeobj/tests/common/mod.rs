//! This crate's helpers: its test kernels compiled with clang-19, and
//! llvm-readelf-19's view of their metadata. The tools run through
//! `softgpu-test-support`, which fails a test whose tool is missing.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub use softgpu_test_support::tool::run;
use softgpu_test_support::tool::{clang_cl as clang, link as lld};

pub const CLANG: &str = "clang-19";
pub const READELF: &str = "llvm-readelf-19";

pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

fn out_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "codeobj-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compile OpenCL C `src` (a file under tests/kernels) for `mcpu` with extra flags,
/// link it with ld.lld-19 -shared and return the code object path and bytes.
pub fn compile_cl(src: &str, mcpu: &str, extra: &[&str]) -> (PathBuf, Vec<u8>) {
    let d = out_dir();
    let obj = d.join("k.o");
    cl_object(src, mcpu, extra, &obj);
    link(&[obj], &d.join("k.hsaco"))
}

/// Compiles OpenCL file `src` (in `tests/kernels`) into the object `obj`.
fn cl_object(src: &str, mcpu: &str, extra: &[&str], obj: &Path) {
    clang_cl(src, mcpu, extra, "-c", obj);
}

/// Runs clang-19 on OpenCL file `src` (in `tests/kernels`) for `mcpu` with
/// `extra` options, in `mode` (`-c` an object, `-S` assembly), into `out`.
fn clang_cl(src: &str, mcpu: &str, extra: &[&str], mode: &str, out: &Path) {
    let flags: Vec<&str> = ["-O3", mode].iter().chain(extra).copied().collect();
    clang(&kernels_dir().join(src), mcpu, &flags, out);
}

/// Links `objects` into the code object `hsaco`; returns it and its bytes.
fn link(objects: &[PathBuf], hsaco: &Path) -> (PathBuf, Vec<u8>) {
    lld(objects, hsaco);
    let bytes = std::fs::read(hsaco).unwrap();
    (hsaco.to_path_buf(), bytes)
}

/// Compile HIP device code `src` for the given offload archs. With `bundle` the
/// result is a clang offload bundle, else a plain ELF code object (one arch only).
pub fn compile_hip(src: &str, archs: &[&str], bundle: bool, extra: &[&str]) -> (PathBuf, Vec<u8>) {
    let d = out_dir();
    let out = d.join(if bundle { "k.bundle" } else { "k.hsaco" });
    let srcp = kernels_dir().join(src);
    let arch_args: Vec<String> = archs
        .iter()
        .map(|a| format!("--offload-arch={a}"))
        .collect();
    let mut args = vec!["-x", "hip", "--cuda-device-only"];
    if !bundle {
        args.push("--no-gpu-bundle-output");
    }
    args.extend(arch_args.iter().map(String::as_str));
    args.extend_from_slice(&["-nogpulib", "-nogpuinc", "-O3"]);
    args.extend_from_slice(extra);
    args.extend_from_slice(&[srcp.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    run(CLANG, &args);
    let bytes = std::fs::read(&out).unwrap();
    (out, bytes)
}

/// `llvm-readelf-19 --notes` output for a file.
pub fn readelf_notes(path: &Path) -> String {
    run(READELF, &["--notes", path.to_str().unwrap()])
}

/// Parse the YAML-ish metadata from `llvm-readelf --notes` into per-kernel maps of
/// top-level scalar keys (`.name`, `.sgpr_count`, …) and arg lists of key maps.
/// Deliberately small: handles exactly the layout llvm-readelf prints.
pub struct YamlKernel {
    pub keys: std::collections::BTreeMap<String, String>,
    pub args: Vec<std::collections::BTreeMap<String, String>>,
}

pub fn readelf_kernels(notes: &str) -> Vec<YamlKernel> {
    let mut kernels: Vec<YamlKernel> = Vec::new();
    let mut in_kernels = false;
    let mut in_args = false;
    for line in notes.lines() {
        if line.starts_with("amdhsa.kernels:") {
            in_kernels = true;
            continue;
        }
        if !in_kernels {
            continue;
        }
        if !line.starts_with(' ') {
            // next top-level key
            in_kernels = line.starts_with("amdhsa.kernels");
            if !in_kernels {
                break;
            }
            continue;
        }
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if indent == 2 && t.starts_with("- ") {
            kernels.push(YamlKernel {
                keys: Default::default(),
                args: Vec::new(),
            });
            in_args = false;
        }
        let body = t.trim_start_matches("- ");
        let body_indent = indent + (t.len() - body.len());
        let Some((k, v)) = body.split_once(':') else {
            continue;
        };
        let k = k.trim().to_string();
        let v = v.trim().trim_matches('\'').to_string();
        let kern = kernels.last_mut().expect("kernel entry");
        if body_indent == 4 {
            in_args = k == ".args";
            if !in_args {
                kern.keys.insert(k, v);
            }
        } else if in_args && body_indent == 8 {
            if t.starts_with("- ") {
                kern.args.push(std::collections::BTreeMap::new());
            }
            kern.args.last_mut().expect("arg").insert(k, v);
        }
    }
    kernels
}

/// Compiles each OpenCL file of `srcs` to an object and links them all
/// into one code object, as Tensile links its kernels: one metadata note
/// per object.
pub fn compile_cl_linked(srcs: &[&str], mcpu: &str) -> (PathBuf, Vec<u8>) {
    let d = out_dir();
    let objects: Vec<PathBuf> = (srcs.iter().enumerate())
        .map(|(i, src)| {
            let obj = d.join(format!("k{i}.o"));
            cl_object(src, mcpu, &[], &obj);
            obj
        })
        .collect();
    link(&objects, &d.join("linked.hsaco"))
}

/// Compile OpenCL C `src` to assembly (`-S`) with the same flags as [`compile_cl`].
pub fn compile_cl_asm(src: &str, mcpu: &str, extra: &[&str]) -> String {
    let out = out_dir().join("k.s");
    clang_cl(src, mcpu, extra, "-S", &out);
    std::fs::read_to_string(out).unwrap()
}

/// The `.amdhsa_*` directives of each `.amdhsa_kernel NAME` block in assembly text.
pub fn amdhsa_directives(
    asm: &str,
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, i64>> {
    let mut out = std::collections::BTreeMap::new();
    let mut cur: Option<String> = None;
    for line in asm.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix(".amdhsa_kernel ") {
            cur = Some(name.trim().to_string());
            out.insert(name.trim().to_string(), std::collections::BTreeMap::new());
        } else if t.starts_with(".end_amdhsa_kernel") {
            cur = None;
        } else if let (Some(k), Some(rest)) = (&cur, t.strip_prefix(".amdhsa_")) {
            let mut it = rest.split_whitespace();
            if let (Some(key), Some(v)) = (it.next(), it.next()) {
                if let Ok(v) = v.parse::<i64>() {
                    out.get_mut(k).unwrap().insert(key.to_string(), v);
                }
            }
        }
    }
    out
}
