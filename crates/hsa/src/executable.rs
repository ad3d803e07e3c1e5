//! Code object readers, executables, their symbols, and the AMD loader
//! extension (`hsa_ven_amd_loader.h`).
//!
//! Readers copy the code object (from memory or from a file descriptor),
//! so a client may free its buffer or close its file afterwards. Loading
//! places the image in device memory and decodes it once; freezing
//! publishes the kernels to the packet processors.
//!
//! What the runtime does not keep and HSA reports lives here, keyed by
//! handle: each executable's profile and default rounding mode, the
//! variables defined read-only, and the loaded-code-object handles of the
//! loader extension (generation-checked like every runtime handle, so a
//! loaded code object of a destroyed executable is refused).
//!
//! Variables with program allocation (`hsa_executable_global_variable_define`)
//! belong to no GPU: they are recorded for the CPU agent (index 0), whose
//! symbols are the executable's "program symbols".

use softgpu_codeobj::MAX_FILE_SIZE;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_void};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use softgpu_runtime::error::invalid;
use softgpu_runtime::executable::{LoadedCodeObject, Symbol, SymbolKind};
use softgpu_runtime::handle::Handles;
use softgpu_runtime::{Error, Runtime};

use crate::system::{c_str, callback, each, put_bytes, refuse, HandleCallback};
use crate::{
    guard, guard_status, non_null, put, runtime, unsupported, Status,
    HSA_STATUS_ERROR_INVALID_CODE_OBJECT, HSA_STATUS_ERROR_INVALID_FILE, HSA_STATUS_SUCCESS,
};

symver!("executable");

// ---------------------------------------------------------------------------
// State the C layer keeps.

const PROFILE_FULL: u32 = 1;
const ROUNDING_NEAR: u32 = 2;

/// Profile and default rounding mode an executable was created with.
#[derive(Clone, Copy)]
struct CreatedWith {
    profile: u32,
    rounding: u32,
}

/// A loaded code object: the executable and the device address of its
/// image (unique among the executable's loaded code objects).
struct LoadedRef {
    executable: u64,
    image_base: u64,
}

#[derive(Default)]
struct Side {
    created: HashMap<u64, CreatedWith>,
    /// Symbols defined with `hsa_executable_readonly_variable_define`.
    readonly: HashSet<u64>,
    /// Loaded-code-object handle by (executable, image base).
    loaded: HashMap<(u64, u64), u64>,
}

fn side() -> std::sync::MutexGuard<'static, Side> {
    static SIDE: LazyLock<Mutex<Side>> = LazyLock::new(Mutex::default);
    SIDE.lock().unwrap_or_else(|e| e.into_inner())
}

fn loaded_table() -> &'static Handles<LoadedRef> {
    static TABLE: OnceLock<Handles<LoadedRef>> = OnceLock::new();
    TABLE.get_or_init(|| Handles::new("loaded code object", 0x4C))
}

/// The loaded-code-object handle of an image, made on first use.
fn loaded_handle(executable: u64, image_base: u64) -> u64 {
    let mut s = side();
    *s.loaded.entry((executable, image_base)).or_insert_with(|| {
        loaded_table().insert(Arc::new(LoadedRef {
            executable,
            image_base,
        }))
    })
}

/// The executable and loaded code object behind a handle; a forged handle
/// or one of a destroyed executable is an invalid code object.
fn loaded_of(rt: &Runtime, handle: u64) -> Result<(u64, LoadedCodeObject), Error> {
    let stale =
        || Error::InvalidCodeObject(format!("{handle:#x} is not a live loaded code object"));
    let r = loaded_table().get(handle).map_err(|_| stale())?;
    let all = rt.loaded_code_objects(r.executable).map_err(|_| stale())?;
    let lco = all
        .into_iter()
        .find(|l| l.program.image_base == r.image_base)
        .ok_or_else(stale)?;
    Ok((r.executable, lco))
}

/// Drops what is kept for a destroyed executable.
fn forget_executable(executable: u64) {
    let mut s = side();
    s.created.remove(&executable);
    let gone: Vec<(u64, u64)> = s
        .loaded
        .keys()
        .filter(|(e, _)| *e == executable)
        .copied()
        .collect();
    for key in gone {
        if let Some(h) = s.loaded.remove(&key) {
            let _ = loaded_table().remove(h);
        }
    }
}

/// Drops everything (the last `hsa_shut_down`): every handle from before is
/// stale now.
pub(crate) fn forget_all() {
    let mut s = side();
    *s = Side::default();
    loaded_table().clear();
}

// ---------------------------------------------------------------------------
// Code object readers.

/// A read failure: a bad descriptor (`HSA_STATUS_ERROR_INVALID_FILE`), or
/// bytes that cannot be a code object
/// (`HSA_STATUS_ERROR_INVALID_CODE_OBJECT`).
#[derive(Debug, thiserror::Error)]
enum ReadError {
    /// `fstat` refused the descriptor (closed, say).
    #[error("file descriptor {fd}: {source}")]
    Stat { fd: i32, source: std::io::Error },
    #[error("file descriptor {fd} is a directory")]
    Directory { fd: i32 },
    /// A device (`/dev/zero`) is no code object and may never end.
    #[error("file descriptor {fd} is a device, not a file or pipe")]
    Device { fd: i32 },
    #[error("reading file descriptor {fd}: {source}")]
    Read { fd: i32, source: std::io::Error },
    #[error(
        "file descriptor {fd}: the code object is larger than the limit of {MAX_FILE_SIZE} bytes"
    )]
    FileTooLarge { fd: i32 },
    #[error("size 0")]
    EmptyRange,
    #[error("size {len} is larger than the limit of {MAX_FILE_SIZE} bytes")]
    RangeTooLarge { len: u64 },
    #[error("{len} bytes at offset {offset} lie beyond the file's {total} bytes")]
    BeyondFile { len: u64, offset: u64, total: u64 },
    #[error("the file ends {read} bytes into the {len}-byte code object")]
    Truncated { read: u64, len: u64 },
    #[error("the file is empty from the read offset on")]
    Empty,
}

impl ReadError {
    /// The status the reader exports return.
    fn status(&self) -> Status {
        match self {
            ReadError::Stat { .. }
            | ReadError::Directory { .. }
            | ReadError::Device { .. }
            | ReadError::Read { .. }
            | ReadError::FileTooLarge { .. } => HSA_STATUS_ERROR_INVALID_FILE,
            ReadError::EmptyRange
            | ReadError::RangeTooLarge { .. }
            | ReadError::BeyondFile { .. }
            | ReadError::Truncated { .. }
            | ReadError::Empty => HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        }
    }
}

/// The caller's descriptor as a `File` that is never closed by us.
///
/// # Safety
/// `fd` must be an open descriptor for as long as the `File` is used (the
/// C caller's, crate docs, "Memory").
unsafe fn borrow_fd(fd: i32) -> std::mem::ManuallyDrop<std::fs::File> {
    use std::os::unix::io::FromRawFd;
    // SAFETY: `fd` is open while the File is used (this function's
    // contract), and the File is never dropped, so we never close the
    // caller's descriptor: the File only borrows it.
    std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// Reads from a fixed offset with `pread`, leaving the descriptor's own
/// offset alone, so std's `take` / `read_to_end` can drive it.
struct ReadAt<'a> {
    file: &'a std::fs::File,
    offset: u64,
}

impl std::io::Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// `pread` until `len` bytes or end of file (`len` None: to end of file),
/// or plain `read` to end of file when `offset` is None (descriptors that
/// cannot seek: pipes, sockets). Grows with what is read, so a hostile
/// `len` allocates nothing it does not fill, and reads at most
/// [`MAX_FILE_SIZE`] + 1 bytes: more is refused, whatever the descriptor
/// (a pipe that never ends included).
///
/// # Safety
/// As for [`borrow_fd`], for the call.
unsafe fn read_fd(fd: i32, offset: Option<u64>, len: Option<u64>) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    // SAFETY: `fd` is open for the call (this function's contract).
    let file = unsafe { borrow_fd(fd) };
    let mut out = Vec::new();
    let most = len.unwrap_or(u64::MAX).min(MAX_FILE_SIZE + 1);
    let result = match offset {
        Some(offset) => ReadAt {
            file: &file,
            offset,
        }
        .take(most)
        .read_to_end(&mut out),
        None => Patient { file: &file, fd }.take(most).read_to_end(&mut out),
    };
    result.map_err(|source| ReadError::Read { fd, source })?;
    if out.len() as u64 > MAX_FILE_SIZE {
        return Err(ReadError::FileTooLarge { fd });
    }
    Ok(out)
}

/// How long a read of a pipe or socket waits for its next bytes.
const PIPE_WAIT_MS: i32 = 5_000;

/// A pipe or socket read that waits at most [`PIPE_WAIT_MS`] for each
/// chunk: an empty FIFO whose writer never writes (or never closes) is an
/// error naming the descriptor, not a call that never returns.
struct Patient<'a> {
    file: &'a std::fs::File,
    fd: i32,
}

impl std::io::Read for Patient<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut ready = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid, writable pollfd; poll only writes `revents`.
        match unsafe { libc::poll(&mut ready, 1, PIPE_WAIT_MS) } {
            // EINTR comes back as `Interrupted`, which `read_to_end` retries.
            n if n < 0 => Err(std::io::Error::last_os_error()),
            0 => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no data arrived for {} s", PIPE_WAIT_MS / 1000),
            )),
            _ => (&*self.file).read(buf),
        }
    }
}

/// The size of an open regular file, or an error for a bad descriptor.
fn file_size(fd: i32) -> Result<Option<u64>, ReadError> {
    // SAFETY: `libc::stat` is plain integers, for which all zeros is a
    // valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat that fstat only writes; any
    // `fd` value is allowed (a bad one is EBADF).
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        let source = std::io::Error::last_os_error();
        return Err(ReadError::Stat { fd, source });
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => Ok(Some(st.st_size as u64)),
        libc::S_IFDIR => Err(ReadError::Directory { fd }),
        libc::S_IFCHR | libc::S_IFBLK => Err(ReadError::Device { fd }),
        _ => Ok(None),
    }
}

/// Percent-encodes a path as the loader's URI syntax asks.
fn uri_encode(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/_.~-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `file://` URI of a descriptor's file and range.
fn file_uri(fd: i32, offset: u64, size: u64) -> String {
    let path = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("/proc/self/fd/{fd}"));
    format!(
        "file://{}#offset={offset:#x}&size={size}",
        uri_encode(&path)
    )
}

/// Reads a code object from `fd`: `range` = (offset, size), or from the
/// current offset to end of file. Returns the bytes and their URI.
///
/// # Safety
/// If `fd` is open now it must stay open for the call (the C caller's
/// contract, crate docs, "Memory"); a closed or bad `fd` is refused.
unsafe fn read_code_object(
    fd: i32,
    range: Option<(u64, u64)>,
) -> Result<(Vec<u8>, String), ReadError> {
    // Refuses a bad descriptor: past this, `fd` is open.
    let size = file_size(fd)?;
    let (bytes, offset) = match range {
        Some((offset, len)) => {
            if len == 0 {
                return Err(ReadError::EmptyRange);
            }
            if len > MAX_FILE_SIZE {
                return Err(ReadError::RangeTooLarge { len });
            }
            if let Some(total) = size {
                if offset > total || len > total - offset {
                    return Err(ReadError::BeyondFile { len, offset, total });
                }
            }
            // SAFETY: fstat succeeded, so `fd` is open, and stays so for
            // the call (this function's contract).
            let bytes = unsafe { read_fd(fd, Some(offset), Some(len))? };
            if (bytes.len() as u64) < len {
                return Err(ReadError::Truncated {
                    read: bytes.len() as u64,
                    len,
                });
            }
            (bytes, offset)
        }
        None => {
            // SAFETY: lseek touches no memory of ours, and SEEK_CUR 0
            // changes no offset (it fails on a pipe).
            let pos = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
            // SAFETY: fstat succeeded, so `fd` is open, and stays so for
            // the call (this function's contract).
            unsafe {
                if pos < 0 {
                    (read_fd(fd, None, None)?, 0)
                } else {
                    (read_fd(fd, Some(pos as u64), None)?, pos as u64)
                }
            }
        }
    };
    if bytes.is_empty() {
        return Err(ReadError::Empty);
    }
    let uri = file_uri(fd, offset, bytes.len() as u64);
    Ok((bytes, uri))
}

/// Makes a reader from a descriptor (both file exports).
///
/// # Safety
/// The C caller's contract of those exports: `fd`, if open, stays open for
/// the call, and `reader` is NULL or valid for a write of a handle (crate
/// docs, "Memory", "Outputs").
unsafe fn reader_from_fd(
    name: &'static str,
    fd: i32,
    range: Option<(u64, u64)>,
    reader: *mut u64,
) -> Status {
    guard_status(name, || {
        let rt = runtime()?;
        non_null(reader, "code_object_reader")?;
        // SAFETY: `fd` as this function's contract says.
        match unsafe { read_code_object(fd, range) } {
            Ok((bytes, uri)) => {
                let h = rt.reader_from_memory(&bytes, &uri)?;
                // SAFETY: non-null (checked), valid for the write by this
                // function's contract.
                unsafe { put(reader, h) }?;
                Ok(HSA_STATUS_SUCCESS)
            }
            Err(e) => refuse(name, e.status(), e),
        }
    })
}

/// `hsa_code_object_reader_create_from_file`: reads from the descriptor's
/// current offset to end of file (with `pread`, so the offset is left as
/// it was; a pipe is read with `read`).
#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_reader_create_from_file(
    file: i32,
    code_object_reader: *mut u64,
) -> Status {
    // SAFETY: the C caller's descriptor and output (crate docs, "Memory",
    // "Outputs") meet `reader_from_fd`'s contract.
    unsafe {
        reader_from_fd(
            "hsa_code_object_reader_create_from_file",
            file,
            None,
            code_object_reader,
        )
    }
}

/// `hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size`.
#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(
    file: i32,
    offset: usize,
    size: usize,
    code_object_reader: *mut u64,
) -> Status {
    // SAFETY: the C caller's descriptor and output (crate docs, "Memory",
    // "Outputs") meet `reader_from_fd`'s contract.
    unsafe {
        reader_from_fd(
            "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
            file,
            Some((offset as u64, size as u64)),
            code_object_reader,
        )
    }
}

/// `hsa_code_object_reader_create_from_memory`: copies the bytes.
#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_reader_create_from_memory(
    code_object: *const c_void,
    size: usize,
    code_object_reader: *mut u64,
) -> Status {
    guard("hsa_code_object_reader_create_from_memory", || {
        let rt = runtime()?;
        non_null(code_object, "code_object")?;
        non_null(code_object_reader, "code_object_reader")?;
        if size == 0 {
            return Err(invalid("code object size is 0"));
        }
        // SAFETY: non-null (checked); by hsa.h the C caller's buffer holds
        // `size` bytes, unchanged during the call (crate docs, "Inputs",
        // "No races on arguments"). `reader_from_memory` copies them.
        let bytes = unsafe { std::slice::from_raw_parts(code_object as *const u8, size) };
        let uri = format!(
            "memory://{}#offset={:#x}&size={size}",
            std::process::id(),
            code_object as usize
        );
        let h = rt.reader_from_memory(bytes, &uri)?;
        // SAFETY: non-null (checked) and the C caller's output for the
        // value written (crate docs, "Outputs").
        unsafe { put(code_object_reader, h) }
    })
}

/// `hsa_code_object_reader_destroy`.
#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_reader_destroy(code_object_reader: u64) -> Status {
    guard("hsa_code_object_reader_destroy", || {
        runtime()?.readers.remove(code_object_reader).map(|_| ())
    })
}

// ---------------------------------------------------------------------------
// Executables.

fn check_profile(profile: u32) -> Result<(), Error> {
    if profile <= PROFILE_FULL {
        Ok(())
    } else {
        Err(invalid(format!("{profile} is not an hsa_profile_t")))
    }
}

/// Makes an executable and records how it was created.
///
/// # Safety
/// `out` must be NULL or valid for a write of a handle (the exports'
/// `executable` output, crate docs, "Outputs").
unsafe fn create(
    rt: &Runtime,
    with: CreatedWith,
    frozen: bool,
    out: *mut u64,
) -> Result<(), Error> {
    check_profile(with.profile)?;
    non_null(out, "executable")?;
    let h = rt.create_executable();
    side().created.insert(h, with);
    if frozen {
        rt.freeze(h)?;
    }
    // SAFETY: non-null (checked) and the C caller's output for the
    // value written (crate docs, "Outputs").
    unsafe { put(out, h) }
}

/// `hsa_executable_create` (deprecated form).
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_create(
    profile: u32,
    executable_state: u32,
    _options: *const c_char,
    executable: *mut u64,
) -> Status {
    guard("hsa_executable_create", || {
        let rt = runtime()?;
        if executable_state > 1 {
            return Err(invalid(format!(
                "{executable_state} is not an hsa_executable_state_t"
            )));
        }
        let with = CreatedWith {
            profile,
            rounding: ROUNDING_NEAR,
        };
        // SAFETY: `executable` is the C caller's output for a handle.
        unsafe { create(&rt, with, executable_state == 1, executable) }
    })
}

/// `hsa_executable_create_alt`. The default rounding mode may also be
/// `DEFAULT`, which HIP passes.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_create_alt(
    profile: u32,
    default_float_rounding_mode: u32,
    _options: *const c_char,
    executable: *mut u64,
) -> Status {
    guard("hsa_executable_create_alt", || {
        let rt = runtime()?;
        if default_float_rounding_mode > ROUNDING_NEAR {
            return Err(invalid(format!(
                "{default_float_rounding_mode} is not an hsa_default_float_rounding_mode_t"
            )));
        }
        let with = CreatedWith {
            profile,
            rounding: default_float_rounding_mode,
        };
        // SAFETY: `executable` is the C caller's output for a handle.
        unsafe { create(&rt, with, false, executable) }
    })
}

/// `hsa_executable_destroy`: its symbols and loaded code objects become
/// invalid and its images are freed.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_destroy(executable: u64) -> Status {
    guard("hsa_executable_destroy", || {
        let rt = runtime()?;
        let symbols = rt.executable_symbols(executable, None)?;
        rt.destroy_executable(executable)?;
        forget_executable(executable);
        let mut s = side();
        for h in symbols {
            s.readonly.remove(&h);
        }
        Ok(())
    })
}

/// `hsa_executable_load_program_code_object`: program code objects (the
/// agent-independent half of HSAIL-era programs) do not exist for
/// clang-built AMDGPU code.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_load_program_code_object(
    executable: u64,
    code_object_reader: u64,
    _options: *const c_char,
    _loaded_code_object: *mut u64,
) -> Status {
    guard("hsa_executable_load_program_code_object", || {
        let rt = runtime()?;
        rt.executables.get(executable)?;
        rt.readers.get(code_object_reader)?;
        Err(unsupported(
            "hsa_executable_load_program_code_object: softgpu loads agent code objects only \
             (use hsa_executable_load_agent_code_object)",
        ))
    })
}

/// `hsa_executable_load_agent_code_object`.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_load_agent_code_object(
    executable: u64,
    agent: u64,
    code_object_reader: u64,
    _options: *const c_char,
    loaded_code_object: *mut u64,
) -> Status {
    guard("hsa_executable_load_agent_code_object", || {
        let rt = runtime()?;
        let base = rt.load_agent_code_object(executable, agent, code_object_reader)?;
        if !loaded_code_object.is_null() {
            // SAFETY: non-null (checked) and the C caller's output for an
            // hsa_loaded_code_object_t (crate docs, "Outputs").
            unsafe { put(loaded_code_object, loaded_handle(executable, base)) }?;
        }
        Ok(())
    })
}

/// `hsa_executable_freeze`.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_freeze(executable: u64, _options: *const c_char) -> Status {
    guard("hsa_executable_freeze", || runtime()?.freeze(executable))
}

/// `hsa_executable_get_info`: profile, state, default rounding mode.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_get_info(
    executable: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_executable_get_info", || {
        let rt = runtime()?;
        let frozen = rt.is_frozen(executable)?;
        non_null(value, "value")?;
        let with = side()
            .created
            .get(&executable)
            .copied()
            .unwrap_or(CreatedWith {
                profile: PROFILE_FULL,
                rounding: ROUNDING_NEAR,
            });
        let out = value as *mut u32;
        // SAFETY: non-null (checked) and the C caller's output for the
        // attribute's type (crate docs, "Outputs"): every one is a 32-bit
        // enum.
        unsafe {
            match attribute {
                1 => put(out, with.profile),
                2 => put(out, frozen as u32),
                3 => put(out, with.rounding),
                other => Err(invalid(format!("{other} is not an hsa_executable_info_t"))),
            }
        }
    })
}

/// Validation: the number of kernels whose entry point is not a decodable
/// instruction (0 = valid). Loading already refused malformed objects.
///
/// # Safety
/// `result` must be NULL or valid for a write of a uint32_t (the exports'
/// output, crate docs, "Outputs").
unsafe fn validate(executable: u64, result: *mut u32) -> Result<(), Error> {
    let rt = runtime()?;
    if !rt.is_frozen(executable)? {
        return Err(Error::NotFrozen);
    }
    non_null(result, "result")?;
    let mut bad = 0u32;
    for l in rt.loaded_code_objects(executable)? {
        for k in &l.program.code_object.kernels {
            if !l.program.entry_runs(k) {
                bad += 1;
            }
        }
    }
    // SAFETY: non-null (checked) and the C caller's output for the
    // value written (crate docs, "Outputs").
    unsafe { put(result, bad) }
}

/// `hsa_executable_validate`.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_validate(executable: u64, result: *mut u32) -> Status {
    // SAFETY: `result` is the C caller's output for a uint32_t.
    guard("hsa_executable_validate", || unsafe {
        validate(executable, result)
    })
}

/// `hsa_executable_validate_alt`.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_validate_alt(
    executable: u64,
    _options: *const c_char,
    result: *mut u32,
) -> Status {
    // SAFETY: `result` is the C caller's output for a uint32_t.
    guard("hsa_executable_validate_alt", || unsafe {
        validate(executable, result)
    })
}

/// Defines a variable for agent index `agent` (a handle).
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string (the C caller's input,
/// crate docs, "Inputs").
unsafe fn define(
    executable: u64,
    agent: u64,
    name: *const c_char,
    address: *mut c_void,
    readonly: bool,
) -> Result<(), Error> {
    let rt = runtime()?;
    // SAFETY: `name` as this function's contract says, which is
    // `c_str`'s.
    let name = unsafe { c_str(name, "variable_name") }?;
    non_null(address, "address")?;
    rt.define_variable(executable, agent, name, address as u64)?;
    if readonly {
        let h = rt.symbol_by_name(executable, name, Some(agent))?;
        side().readonly.insert(h);
    }
    Ok(())
}

/// `hsa_executable_global_variable_define`: a program-allocation variable.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_global_variable_define(
    executable: u64,
    variable_name: *const c_char,
    address: *mut c_void,
) -> Status {
    guard("hsa_executable_global_variable_define", || {
        let cpu = runtime()?.agent_handles[0];
        // SAFETY: the C caller's arguments meet the helper's contract,
        // which is this export's.
        unsafe { define(executable, cpu, variable_name, address, false) }
    })
}

/// `hsa_executable_agent_global_variable_define`.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_agent_global_variable_define(
    executable: u64,
    agent: u64,
    variable_name: *const c_char,
    address: *mut c_void,
) -> Status {
    guard("hsa_executable_agent_global_variable_define", || {
        // SAFETY: the C caller's arguments meet the helper's contract,
        // which is this export's.
        unsafe { define(executable, agent, variable_name, address, false) }
    })
}

/// `hsa_executable_readonly_variable_define`.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_readonly_variable_define(
    executable: u64,
    agent: u64,
    variable_name: *const c_char,
    address: *mut c_void,
) -> Status {
    guard("hsa_executable_readonly_variable_define", || {
        // SAFETY: the C caller's arguments meet the helper's contract,
        // which is this export's.
        unsafe { define(executable, agent, variable_name, address, true) }
    })
}

// ---------------------------------------------------------------------------
// Symbols.

/// A symbol by name: an agent's own, else a program-allocation one; with
/// no agent, any.
fn find_symbol(
    rt: &Runtime,
    executable: u64,
    name: &str,
    agent: Option<u64>,
) -> Result<u64, Error> {
    match agent {
        None => rt.symbol_by_name(executable, name, None),
        Some(a) => match rt.symbol_by_name(executable, name, Some(a)) {
            Err(Error::InvalidSymbolName(_)) => {
                rt.symbol_by_name(executable, name, Some(rt.agent_handles[0]))
            }
            other => other,
        },
    }
}

/// `hsa_executable_get_symbol_by_name`.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_get_symbol_by_name(
    executable: u64,
    symbol_name: *const c_char,
    agent: *const u64,
    symbol: *mut u64,
) -> Status {
    guard("hsa_executable_get_symbol_by_name", || {
        let rt = runtime()?;
        // SAFETY: the C caller's NUL-terminated string (crate docs,
        // "Inputs"); `c_str` refuses NULL.
        let name = unsafe { c_str(symbol_name, "symbol_name") }?;
        non_null(symbol, "symbol")?;
        // SAFETY: a non-null `agent` is the C caller's hsa_agent_t input
        // (crate docs, "Inputs"); read unaligned, so alignment is not
        // relied on.
        let agent = (!agent.is_null()).then(|| unsafe { agent.read_unaligned() });
        let h = find_symbol(&rt, executable, name, agent)?;
        // SAFETY: non-null (checked) and the C caller's output for the
        // value written (crate docs, "Outputs").
        unsafe { put(symbol, h) }
    })
}

/// `hsa_executable_get_symbol` (deprecated form; the module name and call
/// convention are ignored).
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_get_symbol(
    executable: u64,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    agent: u64,
    _call_convention: i32,
    symbol: *mut u64,
) -> Status {
    guard("hsa_executable_get_symbol", || {
        let rt = runtime()?;
        // SAFETY: the C caller's NUL-terminated string (crate docs,
        // "Inputs"); `c_str` refuses NULL.
        let name = unsafe { c_str(symbol_name, "symbol_name") }?;
        non_null(symbol, "symbol")?;
        let h = find_symbol(&rt, executable, name, Some(agent))?;
        // SAFETY: non-null (checked) and the C caller's output for the
        // value written (crate docs, "Outputs").
        unsafe { put(symbol, h) }
    })
}

/// `callback(executable, symbol, data)`.
pub type SymbolCallback = unsafe extern "C" fn(u64, u64, *mut c_void) -> Status;
/// `callback(executable, agent, symbol, data)`.
pub type AgentSymbolCallback = unsafe extern "C" fn(u64, u64, u64, *mut c_void) -> Status;
/// `callback(executable, loaded_code_object, data)`.
pub type LoadedCallback = unsafe extern "C" fn(u64, u64, *mut c_void) -> Status;

/// `hsa_executable_iterate_symbols` (deprecated form): every symbol.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_iterate_symbols(
    executable: u64,
    callback: Option<SymbolCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_executable_iterate_symbols", || {
        let rt = runtime()?;
        let symbols = rt.executable_symbols(executable, None)?;
        let f = self::callback(callback)?;
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(symbols, |s| unsafe { f(executable, s, data) }))
    })
}

/// `hsa_executable_iterate_agent_symbols`: kernels and agent variables of
/// one agent.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_iterate_agent_symbols(
    executable: u64,
    agent: u64,
    callback: Option<AgentSymbolCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_executable_iterate_agent_symbols", || {
        let rt = runtime()?;
        let symbols = rt.executable_symbols(executable, Some(agent))?;
        let f = self::callback(callback)?;
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(symbols, |s| unsafe { f(executable, agent, s, data) }))
    })
}

/// `hsa_executable_iterate_program_symbols`: program-allocation variables
/// (those defined with `hsa_executable_global_variable_define`; code
/// objects define none).
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_iterate_program_symbols(
    executable: u64,
    callback: Option<SymbolCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_executable_iterate_program_symbols", || {
        let rt = runtime()?;
        let symbols = rt.executable_symbols(executable, Some(rt.agent_handles[0]))?;
        let f = self::callback(callback)?;
        // SAFETY: the client's callback, of the signature hsa.h declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(symbols, |s| unsafe { f(executable, s, data) }))
    })
}

/// `hsa_executable_symbol_info_t` attributes.
mod symbol_info {
    pub const TYPE: u32 = 0;
    pub const NAME_LENGTH: u32 = 1;
    pub const NAME: u32 = 2;
    pub const MODULE_NAME_LENGTH: u32 = 3;
    pub const MODULE_NAME: u32 = 4;
    pub const LINKAGE: u32 = 5;
    pub const VARIABLE_ALLOCATION: u32 = 6;
    pub const VARIABLE_SEGMENT: u32 = 7;
    pub const VARIABLE_ALIGNMENT: u32 = 8;
    pub const VARIABLE_SIZE: u32 = 9;
    pub const VARIABLE_IS_CONST: u32 = 10;
    pub const KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
    pub const KERNEL_KERNARG_SEGMENT_ALIGNMENT: u32 = 12;
    pub const KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
    pub const KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
    pub const KERNEL_DYNAMIC_CALLSTACK: u32 = 15;
    pub const INDIRECT_FUNCTION_CALL_CONVENTION: u32 = 16;
    pub const IS_DEFINITION: u32 = 17;
    pub const KERNEL_CALL_CONVENTION: u32 = 18;
    pub const AGENT: u32 = 20;
    pub const VARIABLE_ADDRESS: u32 = 21;
    pub const KERNEL_OBJECT: u32 = 22;
    pub const INDIRECT_FUNCTION_OBJECT: u32 = 23;
}

/// Whether a loaded variable lies in a read-only segment of its image.
fn in_readonly_segment(rt: &Runtime, executable: Option<u64>, address: u64) -> bool {
    let Some(loaded) = executable.and_then(|e| rt.loaded_code_objects(e).ok()) else {
        return false;
    };
    loaded.iter().any(|l| {
        let base = l.program.image_base;
        address >= base
            && l.program
                .code_object
                .image
                .segment_at(address - base)
                .is_some_and(|s| !s.writable)
    })
}

/// `hsa_executable_symbol_get_info`: every attribute of
/// `hsa_executable_symbol_info_t`. Kernel attributes asked of a variable
/// (and the reverse) are invalid arguments; there are no indirect
/// functions. Addresses and kernel objects read 0 until the executable is
/// frozen, as HSA says.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_symbol_get_info(
    executable_symbol: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_executable_symbol_get_info", || {
        let rt = runtime()?;
        let sym = rt.symbols.get(executable_symbol)?;
        non_null(value, "value")?;
        let executable = rt.symbol_executable(executable_symbol);
        let frozen = executable
            .and_then(|e| rt.is_frozen(e).ok())
            .unwrap_or(false);
        // SAFETY: `value` is non-null (checked) and the C caller's output
        // for the attribute's type (crate docs, "Outputs"): `symbol_info`'s
        // contract.
        unsafe {
            symbol_info(
                &rt,
                &sym,
                executable_symbol,
                executable,
                frozen,
                attribute,
                value,
            )
        }
    })
}

/// The body of [`hsa_executable_symbol_get_info`].
///
/// # Safety
/// `value` must be NULL or valid for a write of the attribute's type (the C
/// caller's output contract, crate docs, "Outputs").
unsafe fn symbol_info(
    rt: &Runtime,
    sym: &Symbol,
    handle: u64,
    executable: Option<u64>,
    frozen: bool,
    attribute: u32,
    value: *mut c_void,
) -> Result<(), Error> {
    use symbol_info::*;
    const KIND_VARIABLE: u32 = 0;
    const KIND_KERNEL: u32 = 1;
    const LINKAGE_MODULE: u32 = 0;
    const LINKAGE_PROGRAM: u32 = 1;
    const ALLOCATION_AGENT: u32 = 0;
    const ALLOCATION_PROGRAM: u32 = 1;
    const SEGMENT_GLOBAL: u32 = 0;
    const SEGMENT_READONLY: u32 = 1;
    let u32_out = value as *mut u32;
    let not_for = |what: &str| {
        Err(invalid(format!(
            "symbol attribute {attribute} applies to {what}; {} is a {}",
            sym.name,
            match sym.kind {
                SymbolKind::Kernel(_) => "kernel",
                SymbolKind::Variable { .. } => "variable",
            }
        )))
    };
    // SAFETY: by this function's contract `value` is valid for the
    // attribute's type; each arm writes the type hsa.h gives it (the name as
    // long as its length attribute says).
    unsafe {
        match attribute {
            TYPE => put(
                u32_out,
                match sym.kind {
                    SymbolKind::Kernel(_) => KIND_KERNEL,
                    SymbolKind::Variable { .. } => KIND_VARIABLE,
                },
            ),
            NAME_LENGTH => put(u32_out, sym.name.len() as u32),
            NAME => put_bytes(value, sym.name.as_bytes()),
            // No module linkage: module names are empty.
            MODULE_NAME_LENGTH => put(u32_out, 0),
            MODULE_NAME => Ok(()),
            AGENT => put(value as *mut u64, rt.agent_handles[sym.agent]),
            LINKAGE => put(
                u32_out,
                if sym.global {
                    LINKAGE_PROGRAM
                } else {
                    LINKAGE_MODULE
                },
            ),
            IS_DEFINITION => put(value as *mut bool, true),
            INDIRECT_FUNCTION_OBJECT | INDIRECT_FUNCTION_CALL_CONVENTION => {
                not_for("indirect functions")
            }
            _ => match &sym.kind {
                SymbolKind::Variable {
                    address,
                    size,
                    external,
                } => {
                    let readonly = if *external {
                        side().readonly.contains(&handle)
                    } else {
                        in_readonly_segment(rt, executable, *address)
                    };
                    match attribute {
                        VARIABLE_ADDRESS => {
                            put(value as *mut u64, if frozen { *address } else { 0 })
                        }
                        VARIABLE_ALLOCATION => put(
                            u32_out,
                            if sym.agent == 0 {
                                ALLOCATION_PROGRAM
                            } else {
                                ALLOCATION_AGENT
                            },
                        ),
                        VARIABLE_SEGMENT => put(
                            u32_out,
                            if readonly {
                                SEGMENT_READONLY
                            } else {
                                SEGMENT_GLOBAL
                            },
                        ),
                        // The alignment the variable has in memory (its
                        // address's, up to a page).
                        VARIABLE_ALIGNMENT => put(u32_out, 1 << address.trailing_zeros().min(12)),
                        VARIABLE_SIZE => put(u32_out, (*size).min(u32::MAX as u64) as u32),
                        VARIABLE_IS_CONST => put(value as *mut bool, readonly),
                        KERNEL_OBJECT
                        | KERNEL_KERNARG_SEGMENT_SIZE
                        | KERNEL_KERNARG_SEGMENT_ALIGNMENT
                        | KERNEL_GROUP_SEGMENT_SIZE
                        | KERNEL_PRIVATE_SEGMENT_SIZE
                        | KERNEL_DYNAMIC_CALLSTACK
                        | KERNEL_CALL_CONVENTION => not_for("kernels"),
                        other => Err(invalid(format!(
                            "{other} is not an hsa_executable_symbol_info_t"
                        ))),
                    }
                }
                SymbolKind::Kernel(k) => {
                    let kernel = k.kernel();
                    let meta = &kernel.meta;
                    let d = &kernel.descriptor;
                    match attribute {
                        KERNEL_OBJECT => {
                            put(value as *mut u64, if frozen { k.object() } else { 0 })
                        }
                        KERNEL_KERNARG_SEGMENT_SIZE => put(u32_out, meta.kernarg_segment_size),
                        KERNEL_KERNARG_SEGMENT_ALIGNMENT => {
                            put(u32_out, meta.kernarg_segment_align.max(16))
                        }
                        KERNEL_GROUP_SEGMENT_SIZE => put(u32_out, meta.group_segment_fixed_size),
                        KERNEL_PRIVATE_SEGMENT_SIZE => {
                            put(u32_out, meta.private_segment_fixed_size)
                        }
                        KERNEL_DYNAMIC_CALLSTACK => put(
                            value as *mut bool,
                            meta.uses_dynamic_stack || d.uses_dynamic_stack,
                        ),
                        // The call convention is the index of the kernel's
                        // wave size among the ISA's (hsa_isa_get_info).
                        KERNEL_CALL_CONVENTION => {
                            let wave = if d.wave32 { 32 } else { 64 };
                            let agent = &rt.agents[sym.agent];
                            let index = agent.profile.wave_sizes.iter().position(|&w| w == wave);
                            put(u32_out, index.unwrap_or(0) as u32)
                        }
                        VARIABLE_ADDRESS | VARIABLE_ALLOCATION | VARIABLE_SEGMENT
                        | VARIABLE_ALIGNMENT | VARIABLE_SIZE | VARIABLE_IS_CONST => {
                            not_for("variables")
                        }
                        other => Err(invalid(format!(
                            "{other} is not an hsa_executable_symbol_info_t"
                        ))),
                    }
                }
            },
        }
    }
}

// ---------------------------------------------------------------------------
// The AMD loader extension.

/// Whether `addr` lies in live device memory, registered host memory or a
/// loaded image.
fn is_live_address(rt: &Runtime, addr: u64) -> bool {
    rt.arena.allocation_of(addr).is_some()
        || rt.pointer_info(addr).kind.is_some()
        || rt.executable_containing(addr).is_some()
}

/// `hsa_ven_amd_loader_query_host_address`: device addresses are host
/// addresses in softgpu, so a live address maps to itself.
#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_host_address(
    device_address: *const c_void,
    host_address: *mut *const c_void,
) -> Status {
    guard("hsa_ven_amd_loader_query_host_address", || {
        let rt = runtime()?;
        non_null(device_address, "device_address")?;
        non_null(host_address, "host_address")?;
        let addr = device_address as u64;
        if !is_live_address(&rt, addr) {
            return Err(invalid(format!(
                "{addr:#x} is not inside a live allocation or loaded code object"
            )));
        }
        // SAFETY: non-null (checked) and the C caller's output for the
        // value written (crate docs, "Outputs").
        unsafe { put(host_address, device_address) }
    })
}

/// `hsa_ven_amd_loader_query_segment_descriptors`: not provided (softgpu
/// keeps no per-segment record of where each segment's bytes came from).
#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_segment_descriptors(
    _segment_descriptors: *mut c_void,
    num_segment_descriptors: *mut usize,
) -> Status {
    guard("hsa_ven_amd_loader_query_segment_descriptors", || {
        runtime()?;
        non_null(num_segment_descriptors, "num_segment_descriptors")?;
        Err(unsupported(
            "hsa_ven_amd_loader_query_segment_descriptors: use \
             hsa_ven_amd_loader_executable_iterate_loaded_code_objects and \
             hsa_ven_amd_loader_loaded_code_object_get_info (load base and size)",
        ))
    })
}

/// `hsa_ven_amd_loader_query_executable`: the executable whose loaded
/// code holds a device address.
#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_executable(
    device_address: *const c_void,
    executable: *mut u64,
) -> Status {
    guard("hsa_ven_amd_loader_query_executable", || {
        let rt = runtime()?;
        non_null(device_address, "device_address")?;
        non_null(executable, "executable")?;
        let addr = device_address as u64;
        let e = rt
            .executable_containing(addr)
            .ok_or_else(|| invalid(format!("no executable's loaded code holds {addr:#x}")))?;
        // SAFETY: non-null (checked) and the C caller's output for the
        // value written (crate docs, "Outputs").
        unsafe { put(executable, e) }
    })
}

/// `hsa_ven_amd_loader_executable_iterate_loaded_code_objects`, in load
/// order.
#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_executable_iterate_loaded_code_objects(
    executable: u64,
    callback: Option<LoadedCallback>,
    data: *mut c_void,
) -> Status {
    guard_status(
        "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
        || {
            let rt = runtime()?;
            let loaded = rt.loaded_code_objects(executable)?;
            let f = self::callback(callback)?;
            let handles: Vec<u64> = loaded
                .iter()
                .map(|l| loaded_handle(executable, l.program.image_base))
                .collect();
            // SAFETY: the client's callback, of the signature the header declares,
            // called with its own `data` (crate docs, "Callbacks").
            Ok(each(handles, |h| unsafe { f(executable, h, data) }))
        },
    )
}

/// The URI of a loaded code object's reader (memory for readers made
/// elsewhere than the reader exports).
fn uri_of(l: &LoadedCodeObject) -> String {
    let origin = &l.reader.origin;
    if origin.starts_with("file://") || origin.starts_with("memory://") {
        origin.clone()
    } else {
        format!(
            "memory://{}#offset={:#x}&size={}",
            std::process::id(),
            l.reader.bytes.as_ptr() as usize,
            l.reader.bytes.len()
        )
    }
}

/// `hsa_ven_amd_loader_loaded_code_object_get_info`. softgpu reads every
/// code object into memory when the reader is made, so the storage type is
/// always memory (a copy that lives as long as the executable); the URI
/// still names the file a reader was made from.
#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_loaded_code_object_get_info(
    loaded_code_object: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    guard("hsa_ven_amd_loader_loaded_code_object_get_info", || {
        const KIND_AGENT: u32 = 2;
        const STORAGE_TYPE_MEMORY: u32 = 2;
        let rt = runtime()?;
        let (executable, l) = loaded_of(&rt, loaded_code_object)?;
        non_null(value, "value")?;
        let base = l.program.image_base;
        let uri = uri_of(&l);
        // SAFETY: `value` is non-null (checked) and the C caller's output
        // for the attribute's type (crate docs, "Outputs"); each arm writes
        // the type hsa_ven_amd_loader.h gives it (the URI as long as its
        // length attribute says).
        unsafe {
            match attribute {
                1 => put(value as *mut u64, executable),
                2 => put(value as *mut u32, KIND_AGENT),
                3 => put(value as *mut u64, rt.agent_handles[l.agent]),
                4 => put(value as *mut u32, STORAGE_TYPE_MEMORY),
                5 => put(value as *mut u64, l.reader.bytes.as_ptr() as u64),
                6 => put(value as *mut u64, l.reader.bytes.len() as u64),
                7 => Err(unsupported(
                    "HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_FILE: softgpu keeps \
                     every code object in memory (storage type MEMORY; the URI names the file)",
                )),
                // The image's virtual address 0 is placed at `base`.
                8 => put(value as *mut i64, base as i64),
                9 => put(value as *mut u64, base),
                10 => put(value as *mut u64, l.program.code_object.image.size),
                11 => put(value as *mut u32, uri.len() as u32),
                12 => put_bytes(value, uri.as_bytes()),
                other => Err(invalid(format!(
                    "{other} is not an hsa_ven_amd_loader_loaded_code_object_info_t"
                ))),
            }
        }
    })
}

/// `hsa_ven_amd_loader_iterate_executables`.
#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_iterate_executables(
    callback: Option<HandleCallback>,
    data: *mut c_void,
) -> Status {
    guard_status("hsa_ven_amd_loader_iterate_executables", || {
        let rt = runtime()?;
        let f = self::callback(callback)?;
        let all: Vec<u64> = rt.executables.all().into_iter().map(|(h, _)| h).collect();
        // SAFETY: the client's callback, of the signature the header declares,
        // called with its own `data` (crate docs, "Callbacks").
        Ok(each(all, |e| unsafe { f(e, data) }))
    })
}

/// Function pointers in each minor version of the loader table
/// (`hsa_ven_amd_loader_1_00_pfn_t` has 3, 1.01 adds 2, 1.02 and 1.03 one
/// each).
pub(crate) const LOADER_TABLE_ENTRIES: [usize; 4] = [3, 5, 6, 7];

/// Writes the first `entries` pointers of the loader table (version 1.03,
/// whose earlier versions are its prefixes) to `out`.
///
/// Never inlined: the exports' addresses must stay in this file's codegen
/// unit. If the body were imported into another unit (ThinLTO), LLVM would
/// copy these exports' `.symver` directives there, where they are not
/// defined, and the assembler would refuse them.
///
/// # Safety
/// `out` must be non-null, pointer-aligned and valid for writes of
/// `entries` pointers (the C caller's function-pointer table, which C
/// aligns as its pointer members).
#[inline(never)]
pub(crate) unsafe fn write_loader_table(out: *mut c_void, entries: usize) {
    let all: [usize; 7] = [
        hsa_ven_amd_loader_query_host_address as *const () as usize,
        hsa_ven_amd_loader_query_segment_descriptors as *const () as usize,
        hsa_ven_amd_loader_query_executable as *const () as usize,
        hsa_ven_amd_loader_executable_iterate_loaded_code_objects as *const () as usize,
        hsa_ven_amd_loader_loaded_code_object_get_info as *const () as usize,
        hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size as *const ()
            as usize,
        hsa_ven_amd_loader_iterate_executables as *const () as usize,
    ];
    let n = entries.min(all.len());
    // SAFETY: at most `entries` pointers into the caller's aligned table
    // (this function's contract); `all` is ours, so they cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(all.as_ptr(), out as *mut usize, n) };
}
