//! Helpers shared by the CLI's end-to-end tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh scratch directory for one test.
pub fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("softgpu-cli-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `values` as little-endian f32 to `path`; returns the path as text.
pub fn f32_file(path: &Path, values: &[f32]) -> String {
    std::fs::write(path, f32_bytes(values)).unwrap();
    path.to_string_lossy().into_owned()
}

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|x| f32::from_le_bytes(x.try_into().unwrap()))
        .collect()
}
