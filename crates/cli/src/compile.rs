//! `softgpu compile`, and compiling the `.cl`/`.hip` sources `softgpu run`
//! is given: OpenCL C or HIP device source into a code object with
//! `softgpu_compiler` (clang-19, lld-19 and the ROCm device libraries).

use std::path::{Path, PathBuf};

use softgpu_compiler::{CompileError, Compiler, Diagnostic, Language};

/// What to compile and how.
pub struct Options<'a> {
    pub target: &'a str,
    /// `NAME=VALUE` or `NAME` (defined as 1).
    pub defines: &'a [String],
    pub include_dirs: &'a [PathBuf],
    /// Extra clang options, after the recipe's.
    pub options: &'a [String],
}

/// Whether `path` names a source file the compiler takes (`.cl`, `.hip`).
pub fn is_source(path: &Path) -> bool {
    Language::from_path(path).is_some()
}

/// A diagnostic as `file:line:col: severity: message`, naming `file` where
/// the compiler saw standard input.
fn show(d: &Diagnostic, file: &str) -> String {
    let mut d = d.clone();
    if d.file.as_deref() == Some("<stdin>") {
        d.file = Some(file.to_string());
    }
    d.to_string()
}

/// Compiles `path` into a code object. Warnings go to standard error; on
/// failure the compiler's output is printed there too and the error says
/// how many errors there were.
pub fn compile_source(path: &Path, opts: &Options) -> Result<Vec<u8>, String> {
    let language = Language::from_path(path).ok_or_else(|| {
        format!(
            "{}: unknown source language (expected a .cl or .hip file)",
            path.display()
        )
    })?;
    let source = softgpu_codeobj::read_file(path, softgpu_codeobj::MAX_FILE_SIZE)
        .map_err(|e| e.to_string())?;
    let source = String::from_utf8(source)
        .map_err(|_| format!("{}: the source is not UTF-8 text", path.display()))?;
    let name = path.display().to_string();
    let mut compiler = Compiler::new(opts.target).map_err(|e| e.to_string())?;
    for d in opts.defines {
        let (n, v) = d.split_once('=').unwrap_or((d.as_str(), "1"));
        if n.is_empty() {
            return Err(format!("-D {d}: expected NAME or NAME=VALUE"));
        }
        compiler = compiler.define(n, v);
    }
    // The source is compiled from standard input: let `#include "..."` find
    // headers beside the file, before the directories given with -I.
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    compiler = compiler.include_dir(parent.unwrap_or(Path::new(".")));
    for dir in opts.include_dirs {
        compiler = compiler.include_dir(dir);
    }
    for o in opts.options {
        compiler = compiler.option(o);
    }
    match compiler.compile_with_diagnostics(&source, language) {
        Ok(compiled) => {
            for w in &compiled.warnings {
                eprintln!("{}", show(w, &name));
            }
            Ok(compiled.code)
        }
        Err(CompileError::Diagnostics { diagnostics, log }) => {
            let log = log.replace("<stdin>", &name);
            eprintln!("{}", log.trim_end());
            let errors = diagnostics
                .iter()
                .filter(|d| d.severity == softgpu_compiler::Severity::Error)
                .count();
            Err(format!(
                "{name}: compile failed with {errors} error{}",
                if errors == 1 { "" } else { "s" }
            ))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// `softgpu compile`: writes the code object to `output` (default: the
/// source with extension `.hsaco`).
pub fn run(file: &Path, output: Option<&Path>, opts: &Options) -> Result<(), String> {
    let code = compile_source(file, opts)?;
    let output = output.map_or_else(|| file.with_extension("hsaco"), Path::to_path_buf);
    std::fs::write(&output, &code).map_err(|e| format!("{}: {e}", output.display()))?;
    println!(
        "wrote {} ({} bytes, {})",
        output.display(),
        code.len(),
        opts.target
    );
    Ok(())
}
