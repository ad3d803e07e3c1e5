//! Helpers shared by the CLI's end-to-end tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use softgpu_test_support::bytes::{bytes_of, from_bytes};

/// The `softgpu` binary as the tests run it: with the environment the
/// tests assume (`SOFTGPU_JIT=verify` unless set, as scripts/test.sh runs
/// them: `softgpu_test_support::env`).
pub fn softgpu_command() -> Command {
    softgpu_test_support::env::command(env!("CARGO_BIN_EXE_softgpu"))
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh scratch directory for one test.
pub fn scratch(tag: &str) -> PathBuf {
    softgpu_test_support::fresh_dir(&format!("cli-test-{tag}"))
}

/// Writes `values` as little-endian f32 to `path`; returns the path as text.
pub fn f32_file(path: &Path, values: &[f32]) -> String {
    std::fs::write(path, bytes_of(values)).unwrap();
    path.to_string_lossy().into_owned()
}

pub fn read_f32(path: &Path) -> Vec<f32> {
    from_bytes(&std::fs::read(path).unwrap())
}
