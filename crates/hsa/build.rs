//! Gives every `hsa_*`/`hsa_amd_*` export the `ROCR_1` symbol version and the
//! library the SONAME `libhsa-runtime64.so.1`, as ROCm's library has.
//!
//! The exports are found by scanning the sources for `extern "C" fn hsa_…`,
//! so the list of versioned symbols cannot drift from the code. The
//! `.symver` directives for a source file go to `OUT_DIR/symver_<file>.s`,
//! which that file includes with `symver!`: the assembler wants each
//! directive in the same object as the symbol it versions.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let src = Path::new("src");
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(src).expect("src dir") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            println!("cargo:rerun-if-changed={}", path.display());
            let text = std::fs::read_to_string(&path).expect("source file");
            let first = names.len();
            for line in text.lines() {
                if let Some(rest) = line
                    .trim_start()
                    .strip_prefix("pub unsafe extern \"C\" fn ")
                {
                    names.push(rest.split('(').next().unwrap_or("").to_string());
                } else if let Some(rest) = line.trim_start().strip_prefix("pub extern \"C\" fn ") {
                    names.push(rest.split('(').next().unwrap_or("").to_string());
                }
            }
            let stem = path.file_stem().expect("file name").to_string_lossy();
            let mut asm = String::new();
            for n in names[first..].iter().filter(|n| n.starts_with("hsa_")) {
                writeln!(asm, ".symver {n}, {n}@@ROCR_1").unwrap();
            }
            std::fs::write(Path::new(&out).join(format!("symver_{stem}.s")), asm)
                .expect("write symver file");
        }
    }
    names.retain(|n| n.starts_with("hsa_"));
    names.sort();
    names.dedup();
    let mut map = String::from("ROCR_1 {\n  global:\n");
    for n in &names {
        writeln!(map, "    {n};").unwrap();
    }
    map.push_str("  local:\n    *;\n};\n");
    let map_path = Path::new(&out).join("hsa.map");
    std::fs::write(&map_path, map).expect("write hsa.map");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map_path.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
