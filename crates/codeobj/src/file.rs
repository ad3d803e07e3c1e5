//! Bounded reads of code-object and input files.

use std::io::Read;
use std::path::Path;

/// The largest file [`read_file`] callers in softgpu accept: 1 GiB, the
/// same as the largest image ([`crate::MAX_IMAGE_SIZE`]).
pub const MAX_FILE_SIZE: u64 = 1 << 30;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {why}")]
pub struct FileError {
    /// The path as given.
    pub path: String,
    /// What went wrong.
    pub why: String,
    /// The operating system's error kind, when the error came from it.
    pub io_kind: Option<std::io::ErrorKind>,
}

/// Reads a whole regular file of at most `limit` bytes.
///
/// Anything else is refused with an error naming the path: a directory,
/// device (`/dev/zero`), FIFO or socket is never opened for reading (a FIFO
/// would block, a device may never end), and at most `limit + 1` bytes are
/// read whatever the file's metadata says, so a file that grows or lies
/// about its size (`/proc`) cannot exhaust memory.
pub fn read_file(path: impl AsRef<Path>, limit: u64) -> Result<Vec<u8>, FileError> {
    let path = path.as_ref();
    let error = |why: String, io_kind| FileError {
        path: path.display().to_string(),
        why,
        io_kind,
    };
    let io = |e: std::io::Error| error(e.to_string(), Some(e.kind()));
    // Checked before opening: opening a FIFO for reading blocks.
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    if !kind.is_file() {
        return Err(error(
            format!(
                "not a regular file ({}); softgpu reads only regular files",
                describe(kind)
            ),
            None,
        ));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(error("not a regular file".into(), None));
    }
    let too_large = || error(format!("larger than the limit of {limit} bytes"), None);
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(io)?;
    if out.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(out)
}

fn describe(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_large_files() {
        let e = read_file("/dev/zero", MAX_FILE_SIZE).unwrap_err();
        assert!(
            e.to_string().contains("/dev/zero") && e.why.contains("character device"),
            "{e}"
        );
        let e = read_file("/", MAX_FILE_SIZE).unwrap_err();
        assert!(e.why.contains("directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("softgpu-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("ten");
        std::fs::write(&f, [7u8; 10]).unwrap();
        assert_eq!(read_file(&f, 10).unwrap(), [7u8; 10]);
        let e = read_file(&f, 9).unwrap_err();
        assert!(e.why.contains("limit of 9 bytes"), "{e}");
        let e = read_file(dir.join("absent"), 9).unwrap_err();
        assert_eq!(e.io_kind, Some(std::io::ErrorKind::NotFound));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_at_most_the_limit_from_files_whose_size_lies() {
        // /proc files report size 0 but have content.
        let bytes = read_file("/proc/self/status", 1 << 20).unwrap();
        assert!(!bytes.is_empty());
        let e = read_file("/proc/self/status", 8).unwrap_err();
        assert!(e.why.contains("limit of 8 bytes"), "{e}");
    }
}
