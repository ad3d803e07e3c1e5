//! The on-disk cache of compiled code objects.
//!
//! An entry is two files under `CACHE/objects/`: `KEY-TARGET.hsaco` (the code
//! object) and `KEY-TARGET.meta` (the headers the source included, each with
//! a hash of its content, and the tools' standard error so warnings survive
//! a cache hit). The key hashes everything else the output depends on (see
//! `Compiler::cache_key`). An entry is used only while every recorded header
//! still has the recorded content; relative header paths (found through the
//! current directory) are checked relative to the current directory. Both
//! files are written atomically (temporary file, then rename), the metadata
//! first.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{write_atomic, CompileError};

const META_HEADER: &str = "softgpu-compiler cache 1\n";

/// A header the compile read, with the hash of the content it had.
#[derive(Clone, Debug)]
pub(crate) struct Dep {
    pub path: String,
    pub hash: String,
}

pub(crate) fn paths(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let objects = dir.join("objects");
    (
        objects.join(format!("{name}.hsaco")),
        objects.join(format!("{name}.meta")),
    )
}

/// The cached code object and tool log, if the entry exists, is intact and
/// its headers are unchanged.
pub(crate) fn lookup(dir: &Path, name: &str) -> Option<(Vec<u8>, String)> {
    let (code_path, meta_path) = paths(dir, name);
    let code = std::fs::read(code_path).ok()?;
    if code.len() < 64 || !code.starts_with(b"\x7fELF") {
        return None;
    }
    let meta = std::fs::read_to_string(meta_path).ok()?;
    let mut rest = meta.strip_prefix(META_HEADER)?;
    loop {
        let (line, tail) = rest.split_once('\n')?;
        rest = tail;
        if line == "log" {
            break;
        }
        let (hash, path) = line.strip_prefix("dep ")?.split_once(' ')?;
        if hash_file(Path::new(path))? != hash {
            return None;
        }
    }
    Some((code, rest.to_string()))
}

/// Stores an entry (metadata first, so a code object never appears without it).
pub(crate) fn store(
    dir: &Path,
    name: &str,
    code: &[u8],
    deps: &[Dep],
    log: &str,
) -> Result<(), CompileError> {
    let (code_path, meta_path) = paths(dir, name);
    let mut meta = String::from(META_HEADER);
    for d in deps {
        meta.push_str(&format!("dep {} {}\n", d.hash, d.path));
    }
    meta.push_str("log\n");
    meta.push_str(log);
    write_atomic(&meta_path, meta.as_bytes())?;
    write_atomic(&code_path, code)
}

/// Hex SHA-256 of a file's content.
pub(crate) fn hash_file(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(crate::hex(&Sha256::digest(&bytes)))
}

/// The prerequisites of a Makefile rule written by clang's `-MD -MF FILE -MT out`
/// (`out: a.h b\ c.h \` continuation lines), unescaped.
pub(crate) fn parse_depfile(text: &str) -> Vec<String> {
    let body = text.split_once(": ").map_or("", |(_, b)| b);
    let mut deps = Vec::new();
    let mut cur = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some('\r') => {
                    chars.next();
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                }
                Some(&n @ (' ' | '#' | '\\' | '\t')) => {
                    cur.push(n);
                    chars.next();
                }
                _ => cur.push('\\'),
            },
            '$' if chars.peek() == Some(&'$') => {
                cur.push('$');
                chars.next();
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    deps.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        deps.push(cur);
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depfile() {
        let text = "out: inc/h.h /abs/a\\ b.h \\\n  /x/$$y.h c\\#d.h\n";
        assert_eq!(
            parse_depfile(text),
            ["inc/h.h", "/abs/a b.h", "/x/$y.h", "c#d.h"]
        );
        assert!(parse_depfile("out:\n").is_empty());
    }
}
