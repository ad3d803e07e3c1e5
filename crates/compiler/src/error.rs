//! The error type of every compile.

use std::path::PathBuf;

use crate::diag::{Diagnostic, Severity};
use crate::TOOLCHAIN_PACKAGES;

/// Why a compile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The target is not a processor softgpu emulates.
    #[error(
        "unsupported target `{target}` (supported: {})",
        softgpu_isa::target::supported()
    )]
    BadTarget {
        /// The name that was given.
        target: String,
    },

    /// A name that is not an AMDGPU processor (`gfx` and its version
    /// digits: `gfx90a`, `gfx1030`, `gfx1151`), given for a device-library
    /// folder ([`Compiler::device_lib_dir_for`](crate::Compiler::device_lib_dir_for)).
    #[error("`{processor}` is not an AMDGPU processor name (gfx followed by its version, e.g. gfx90a or gfx1100)")]
    BadProcessor {
        /// The name that was given.
        processor: String,
    },

    /// A tool or the ROCm device libraries are not installed.
    #[error("{}", missing_message(missing, packages))]
    MissingTools {
        /// What was not found: tool names (`clang-19`, `ld.lld-19`,
        /// `llvm-as-19`, `llvm-extract-19`, `llvm-dis-19`) or the path of a missing device library.
        missing: Vec<String>,
        /// The Debian packages that provide them.
        packages: Vec<String>,
    },

    /// clang or lld rejected the input; `diagnostics` holds at least one error.
    #[error("{}", diagnostics_message(diagnostics, log))]
    Diagnostics {
        /// Every diagnostic parsed from the tool's standard error, in order.
        diagnostics: Vec<Diagnostic>,
        /// The tool's whole standard error.
        log: String,
    },

    /// A tool failed without printing an error diagnostic (for example it crashed).
    #[error("`{tool}` failed ({status}):\n{log}")]
    ToolFailed {
        /// The tool's name.
        tool: String,
        /// How it exited.
        status: String,
        /// Its standard output and standard error.
        log: String,
    },

    /// [`Compiler::compile_file`](crate::Compiler::compile_file) was given a
    /// file whose extension is neither `.cl` nor `.hip`.
    #[error("{}: unknown source language (expected a .cl or .hip file)", path.display())]
    UnknownLanguage {
        /// The file.
        path: PathBuf,
    },

    /// Reading or writing a file, or starting a tool, failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl CompileError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> CompileError {
        CompileError::Io {
            context: context.into(),
            source,
        }
    }
}

fn missing_message(missing: &[String], packages: &[String]) -> String {
    format!(
        "the gfx11 toolchain is incomplete: {} not found (Debian package{} {}); \
         install the toolchain with `apt-get install {}`",
        missing.join(", "),
        if packages.len() == 1 { "" } else { "s" },
        packages.join(", "),
        TOOLCHAIN_PACKAGES.join(" ")
    )
}

fn diagnostics_message(diagnostics: &[Diagnostic], log: &str) -> String {
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    format!(
        "compile failed with {errors} error{}:\n{}",
        if errors == 1 { "" } else { "s" },
        log.trim_end()
    )
}
