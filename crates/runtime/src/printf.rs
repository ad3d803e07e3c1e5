//! Device printf: formatting, output, and the buffered-printf service.
//!
//! Two device-side printf forms reach the host here:
//!
//! * **Buffered** (OpenCL C printf, HIP `-mprintf-kind=buffered`): the
//!   kernel's `hidden_printf_buffer` argument points at a [`PrintfBuffer`].
//!   Its header is two 32-bit words, the bytes used so far (after the
//!   header) and the buffer size the device may fill (header included);
//!   records follow from byte 8. A work-item reserves a record with an
//!   atomic compare-exchange on the first word and gives up (drops the
//!   record) when it would not fit. An OpenCL record is the format id (a
//!   32-bit word) and the arguments, each as many bytes as the code
//!   object's `amdhsa.printf` entry `id:count:size:...:format` says
//!   (strings inline, vectors whole). A HIP record starts with a control
//!   word, `record bytes << 2 | 2` when the format is a constant (bit 0 is
//!   the stream), then the format's 64-bit hash (the entry is
//!   `0:0:hash,format`) or, for a runtime format, the string inline, then
//!   8-byte arguments with strings inline, padded to 8 bytes. After the
//!   dispatch, in stream order, [`PrintfBuffer::drain`] formats and prints
//!   the records and resets the header.
//! * **Hostcall** (HIP's default): see [`crate::hostcall`], which collects
//!   a message per work-item and calls [`format()`] on it.
//!
//! Formatting hands every conversion specification to the C library's
//! `snprintf` with the value converted to the C type the specification
//! names, as ROCm's host side does, so the output is the host C library's.
//! Output goes to a process-wide [`Sink`]: by default [`StdioSink`], the C
//! `stdout`/`stderr` `FILE`s (so it interleaves with a C host program's own
//! stdio output); tests install a [`CaptureSink`].
//!
//! Nothing the device wrote is trusted: records are read through the
//! arena's checked accessors, and a malformed record, an unknown format or
//! an overflowing buffer becomes a message on standard error.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, RwLock};

use softgpu_exec::arena::{Access, AllocSpec, Arena, MemError};

/// Which C stream a device message goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutStream {
    Stdout,
    Stderr,
}

/// Where device output goes.
pub trait Sink: Send + Sync {
    /// Writes one complete message (one printf call's output).
    fn write(&self, stream: OutStream, bytes: &[u8]);
}

/// The C library's `stdout` and `stderr`: `fwrite`, then `fflush`.
pub struct StdioSink;

extern "C" {
    // glibc's standard streams.
    static stdout: *mut libc::FILE;
    static stderr: *mut libc::FILE;
}

impl Sink for StdioSink {
    fn write(&self, stream: OutStream, bytes: &[u8]) {
        // SAFETY: glibc initialises `stdout`/`stderr` before `main` and
        // never changes them behind our back; reading the pointer is a
        // plain load of an initialised static.
        let file = unsafe {
            match stream {
                OutStream::Stdout => stdout,
                OutStream::Stderr => stderr,
            }
        };
        if file.is_null() {
            return;
        }
        // SAFETY: `file` is a live C stream; `bytes` is valid for
        // `bytes.len()` bytes. stdio locks the stream itself.
        unsafe {
            libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), file);
            libc::fflush(file);
        }
    }
}

/// A sink that keeps the output, for tests.
#[derive(Default)]
pub struct CaptureSink {
    out: Mutex<(Vec<u8>, Vec<u8>)>,
}

impl CaptureSink {
    pub fn new() -> Arc<CaptureSink> {
        Arc::new(CaptureSink::default())
    }

    /// Takes what was written so far to stdout and stderr.
    pub fn take(&self) -> (String, String) {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (o, e) = std::mem::take(&mut *g);
        (
            String::from_utf8_lossy(&o).into_owned(),
            String::from_utf8_lossy(&e).into_owned(),
        )
    }
}

impl Sink for CaptureSink {
    fn write(&self, stream: OutStream, bytes: &[u8]) {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        match stream {
            OutStream::Stdout => g.0.extend_from_slice(bytes),
            OutStream::Stderr => g.1.extend_from_slice(bytes),
        }
    }
}

static SINK: RwLock<Option<Arc<dyn Sink>>> = RwLock::new(None);

/// Installs the process-wide sink for device output; returns the previous
/// one (`None` means [`StdioSink`]).
pub fn set_sink(sink: Option<Arc<dyn Sink>>) -> Option<Arc<dyn Sink>> {
    let mut g = SINK.write().unwrap_or_else(|e| e.into_inner());
    std::mem::replace(&mut *g, sink)
}

/// Writes a message to the current sink.
pub fn emit(stream: OutStream, bytes: &[u8]) {
    let sink = SINK.read().unwrap_or_else(|e| e.into_inner()).clone();
    match sink {
        Some(s) => s.write(stream, bytes),
        None => StdioSink.write(stream, bytes),
    }
}

/// Reports a problem with device output on standard error (through the
/// sink, so tests see it).
pub(crate) fn complain(what: &str) {
    emit(OutStream::Stderr, format!("softgpu: {what}\n").as_bytes());
}

/// What a conversion asks its argument source for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// An integer, a character, a pointer or a `*` width/precision.
    Int,
    /// A floating-point value.
    Float,
    /// A `%s` string.
    Str,
    /// An OpenCL vector's bytes.
    Vector,
}

/// One argument as the device stored it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Little-endian bits of `size` bytes (1, 2, 4 or 8).
    Bits { bits: u64, size: usize },
    /// A string's bytes (without the NUL) or a vector's bytes.
    Bytes(Vec<u8>),
}

/// The arguments of one message, in order.
pub trait ArgSource {
    /// The next argument, `None` when there is none (or it is malformed).
    fn next(&mut self, want: Want) -> Option<Value>;
}

/// Arguments as a stream of 8-byte words (hostcall messages, HIP buffered
/// records): numbers one word each (floats as `double`), strings inline,
/// NUL-terminated and padded to 8 bytes.
pub struct Words<'a> {
    pub data: &'a [u8],
    pub at: usize,
}

impl ArgSource for Words<'_> {
    fn next(&mut self, want: Want) -> Option<Value> {
        let rest = self.data.get(self.at..)?;
        match want {
            Want::Str => {
                let len = rest.iter().position(|&b| b == 0)?;
                self.at += (len + 1).next_multiple_of(8);
                Some(Value::Bytes(rest[..len].to_vec()))
            }
            _ => {
                let w = rest.get(..8)?;
                self.at += 8;
                Some(Value::Bits {
                    bits: u64::from_le_bytes(w.try_into().ok()?),
                    size: 8,
                })
            }
        }
    }
}

/// Arguments of an OpenCL record, sized by the format's entry.
///
/// A `%s` argument is stored inline, its entry size being the string's
/// length plus the NUL rounded up to 4. LLVM 19's printf pass writes the
/// string in 4-byte pieces *without* the NUL, though, so a string whose
/// length is a multiple of 4 takes 4 bytes less than its entry says and
/// what follows moves up by 4. Such a string is recognised by its last
/// 4-byte piece: a real tail is characters then zero padding, starting
/// with a character; anything else (a zero first byte, or no zero at all)
/// is the next argument or the never-written end of the record, which the
/// host keeps zeroed. (Ambiguous only when the next argument's bytes look
/// like a string tail: a small integer (below 2^24, low byte non-zero) or
/// a string of up to 3 characters after such a string.)
struct Sized<'a> {
    data: &'a [u8],
    at: usize,
    sizes: std::slice::Iter<'a, usize>,
}

impl ArgSource for Sized<'_> {
    fn next(&mut self, want: Want) -> Option<Value> {
        let size = *self.sizes.next()?;
        let a = self.data.get(self.at..self.at + size)?;
        match want {
            Want::Str => {
                let mut take = size;
                if size >= 4 && size % 4 == 0 && !a[..size - 4].contains(&0) {
                    let tail = &a[size - 4..];
                    let real = tail[0] != 0
                        && tail
                            .iter()
                            .position(|&b| b == 0)
                            .is_some_and(|z| tail[z..].iter().all(|&b| b == 0));
                    if !real {
                        take = size - 4;
                    }
                }
                self.at += take;
                let s = &a[..take];
                let len = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                Some(Value::Bytes(s[..len].to_vec()))
            }
            Want::Vector => {
                self.at += size;
                Some(Value::Bytes(a.to_vec()))
            }
            _ if size <= 8 && size > 0 => {
                self.at += size;
                let mut w = [0u8; 8];
                w[..size].copy_from_slice(a);
                Some(Value::Bits {
                    bits: u64::from_le_bytes(w),
                    size,
                })
            }
            _ => None,
        }
    }
}

/// Widths and precisions past this are clamped (a device value, not a
/// reason to allocate gigabytes).
const MAX_FIELD: i64 = 1 << 16;

/// One parsed conversion specification.
struct Spec {
    flags: String,
    width: Option<i64>,
    precision: Option<i64>,
    vector: Option<usize>,
    length: String,
    conversion: u8,
}

/// Formats `fmt` with the arguments from `args`, as C printf would. A
/// conversion whose argument is missing is copied out as written.
pub fn format(fmt: &[u8], args: &mut dyn ArgSource) -> Vec<u8> {
    let mut out = Vec::with_capacity(fmt.len() + 32);
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec {
            flags: String::new(),
            width: None,
            precision: None,
            vector: None,
            length: String::new(),
            conversion: 0,
        };
        let mut missing = false;
        while let Some(&c @ (b'-' | b'+' | b' ' | b'#' | b'0')) = fmt.get(i) {
            spec.flags.push(c as char);
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            i += 1;
            match int_arg(args) {
                Some(w) if w < 0 => {
                    spec.flags.push('-');
                    spec.width = Some(w.saturating_neg());
                }
                Some(w) => spec.width = Some(w),
                None => missing = true,
            }
        } else {
            spec.width = digits(fmt, &mut i);
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                i += 1;
                match int_arg(args) {
                    // A negative precision is taken as if omitted.
                    Some(p) if p < 0 => {}
                    Some(p) => spec.precision = Some(p),
                    None => missing = true,
                }
            } else {
                spec.precision = Some(digits(fmt, &mut i).unwrap_or(0));
            }
        }
        if fmt.get(i) == Some(&b'v') {
            i += 1;
            spec.vector = digits(fmt, &mut i).map(|n| n as usize);
        }
        while let Some(&c @ (b'h' | b'l' | b'L' | b'q' | b'j' | b'z' | b't')) = fmt.get(i) {
            spec.length.push(c as char);
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            out.extend_from_slice(&fmt[start..]);
            break;
        };
        i += 1;
        spec.conversion = conv;
        let written = &fmt[start..i];
        if conv == b'%' {
            out.push(b'%');
            continue;
        }
        if missing {
            out.extend_from_slice(written);
            continue;
        }
        if !convert(&spec, args, &mut out) {
            out.extend_from_slice(written);
        }
    }
    out
}

fn digits(fmt: &[u8], i: &mut usize) -> Option<i64> {
    let begin = *i;
    let mut v: i64 = 0;
    while let Some(&c @ b'0'..=b'9') = fmt.get(*i) {
        v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
        *i += 1;
    }
    (*i > begin).then_some(v)
}

fn int_arg(args: &mut dyn ArgSource) -> Option<i64> {
    match args.next(Want::Int)? {
        Value::Bits { bits, .. } => Some(bits as u32 as i32 as i64),
        Value::Bytes(_) => None,
    }
}

/// Formats one conversion into `out`; false when its argument is missing
/// or the conversion is unknown.
fn convert(spec: &Spec, args: &mut dyn ArgSource, out: &mut Vec<u8>) -> bool {
    if let Some(n) = spec.vector {
        let Some(Value::Bytes(bytes)) = args.next(Want::Vector) else {
            return false;
        };
        if !matches!(n, 2 | 3 | 4 | 8 | 16) {
            return false;
        }
        let slots = if n == 3 { 4 } else { n };
        let size = bytes.len() / slots;
        if !matches!(size, 1 | 2 | 4 | 8) {
            return false;
        }
        let float = matches!(
            spec.conversion,
            b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A'
        );
        for k in 0..n {
            if k > 0 {
                out.push(b',');
            }
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(&bytes[k * size..(k + 1) * size]);
            let bits = u64::from_le_bytes(w);
            let value = Value::Bits { bits, size };
            // `hl` is OpenCL's 32-bit vector element; C has no such length.
            let length = if spec.length == "hl" {
                ""
            } else {
                &spec.length
            };
            if !one(spec, length, value, float, out) {
                return false;
            }
        }
        return true;
    }
    let want = match spec.conversion {
        b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'c' | b'p' => Want::Int,
        b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' => Want::Float,
        b's' => Want::Str,
        // `%n` writes nothing the host could honour: it prints nothing.
        b'n' => return args.next(Want::Int).is_some(),
        _ => return false,
    };
    let Some(value) = args.next(want) else {
        return false;
    };
    one(spec, &spec.length, value, want == Want::Float, out)
}

/// Formats one scalar value through `snprintf`.
fn one(spec: &Spec, length: &str, value: Value, float: bool, out: &mut Vec<u8>) -> bool {
    let mut c = String::from("%");
    c.push_str(&spec.flags);
    if let Some(w) = spec.width {
        c.push_str(&w.min(MAX_FIELD).to_string());
    }
    if let Some(p) = spec.precision {
        c.push('.');
        c.push_str(&p.min(MAX_FIELD).to_string());
    }
    let conv = spec.conversion as char;
    match value {
        Value::Bytes(s) if conv == 's' => {
            c.push('s');
            let s: Vec<u8> = s.into_iter().take_while(|&b| b != 0).collect();
            let Ok(s) = CString::new(s) else {
                return false;
            };
            snprintf(
                &c,
                |buf, n, f| {
                    // SAFETY: `buf` holds `n` bytes, `f` is a NUL-terminated
                    // format with one `%s`, `s` a NUL-terminated string.
                    unsafe { libc::snprintf(buf, n, f, s.as_ptr()) }
                },
                out,
            )
        }
        Value::Bits { bits, size } if float => {
            let x = match size {
                8 => f64::from_bits(bits),
                4 => f32::from_bits(bits as u32) as f64,
                2 => f16_to_f64(bits as u16),
                _ => return false,
            };
            c.push(conv);
            snprintf(
                &c,
                |buf, n, f| {
                    // SAFETY: one floating conversion, given a `double`.
                    unsafe { libc::snprintf(buf, n, f, x) }
                },
                out,
            )
        }
        Value::Bits { bits, size } => {
            let bits = if size < 8 {
                bits & ((1u64 << (size * 8)) - 1)
            } else {
                bits
            };
            match conv {
                'c' => {
                    c.push('c');
                    let ch = bits as u8 as libc::c_int;
                    snprintf(
                        &c,
                        |buf, n, f| {
                            // SAFETY: one `%c`, given an `int`.
                            unsafe { libc::snprintf(buf, n, f, ch) }
                        },
                        out,
                    )
                }
                'p' => {
                    c.push('p');
                    let p = bits as usize as *const libc::c_void;
                    snprintf(
                        &c,
                        |buf, n, f| {
                            // SAFETY: one `%p`, given a pointer it only prints.
                            unsafe { libc::snprintf(buf, n, f, p) }
                        },
                        out,
                    )
                }
                'd' | 'i' => {
                    let v: i64 = match length {
                        "hh" => bits as i8 as i64,
                        "h" => bits as i16 as i64,
                        "l" | "ll" | "q" | "j" | "z" | "t" | "L" => bits as i64,
                        _ if size == 8 && length.is_empty() && spec.vector.is_some() => bits as i64,
                        _ => bits as i32 as i64,
                    };
                    c.push_str("ll");
                    c.push(conv);
                    snprintf(
                        &c,
                        |buf, n, f| {
                            // SAFETY: one `%lld`-style conversion, given a `long long`.
                            unsafe { libc::snprintf(buf, n, f, v as libc::c_longlong) }
                        },
                        out,
                    )
                }
                'u' | 'o' | 'x' | 'X' => {
                    let v: u64 = match length {
                        "hh" => bits as u8 as u64,
                        "h" => bits as u16 as u64,
                        "l" | "ll" | "q" | "j" | "z" | "t" | "L" => bits,
                        _ if size == 8 && length.is_empty() && spec.vector.is_some() => bits,
                        _ => bits as u32 as u64,
                    };
                    c.push_str("ll");
                    c.push(conv);
                    snprintf(
                        &c,
                        |buf, n, f| {
                            // SAFETY: one `%llu`-style conversion, given an
                            // `unsigned long long`.
                            unsafe { libc::snprintf(buf, n, f, v as libc::c_ulonglong) }
                        },
                        out,
                    )
                }
                _ => false,
            }
        }
        Value::Bytes(_) => false,
    }
}

/// Runs one `snprintf` call (growing the buffer when it was too small) and
/// appends the result.
fn snprintf(
    spec: &str,
    call: impl Fn(*mut libc::c_char, libc::size_t, *const libc::c_char) -> libc::c_int,
    out: &mut Vec<u8>,
) -> bool {
    let Ok(f) = CString::new(spec) else {
        return false;
    };
    let mut buf = vec![0u8; 128];
    let n = call(buf.as_mut_ptr().cast(), buf.len(), f.as_ptr());
    let Ok(n) = usize::try_from(n) else {
        return false;
    };
    if n >= buf.len() {
        buf = vec![0u8; n + 1];
        let m = call(buf.as_mut_ptr().cast(), buf.len(), f.as_ptr());
        if usize::try_from(m) != Ok(n) {
            return false;
        }
    }
    out.extend_from_slice(&buf[..n]);
    true
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The printf formats of one code object (`amdhsa.printf`).
#[derive(Debug, Default)]
pub struct FormatTable {
    /// OpenCL: by format id, the argument sizes and the format.
    by_id: HashMap<u32, (Vec<usize>, Vec<u8>)>,
    /// HIP buffered: by the format's hash.
    by_hash: HashMap<u64, Vec<u8>>,
    /// Whether the records are HIP's (self-sized, hashed formats).
    hip: bool,
}

impl FormatTable {
    /// Parses a code object's entries, telling the record form from them:
    /// HIP's entries are `N:N:<hash in hex>,format`; with no entries at
    /// all (OpenCL always has one per printf) the records can only be HIP's
    /// runtime-format ones.
    pub fn for_code_object(entries: &[String]) -> FormatTable {
        let hip_entry = |e: &String| {
            e.splitn(3, ':')
                .nth(2)
                .and_then(|r| r.split_once(','))
                .is_some_and(|(h, _)| {
                    // The hash is printed without leading zeros.
                    (1..=16).contains(&h.len()) && h.bytes().all(|b| b.is_ascii_hexdigit())
                })
        };
        FormatTable::parse(entries, entries.iter().all(hip_entry))
    }

    /// Parses the code object's entries; `hip` says which record form its
    /// kernels write. Malformed entries are reported and left out.
    pub fn parse(entries: &[String], hip: bool) -> FormatTable {
        let mut t = FormatTable {
            hip,
            ..FormatTable::default()
        };
        for e in entries {
            if hip {
                let parsed = e.splitn(3, ':').nth(2).and_then(|rest| {
                    let (hash, fmt) = rest.split_once(',')?;
                    Some((u64::from_str_radix(hash, 16).ok()?, fmt))
                });
                match parsed {
                    Some((hash, fmt)) => {
                        t.by_hash.insert(hash, fmt.as_bytes().to_vec());
                    }
                    None => complain(&format!("malformed printf format entry {e:?}")),
                }
                continue;
            }
            let mut parts = e.splitn(3, ':');
            let parsed = (|| {
                let id: u32 = parts.next()?.parse().ok()?;
                let count: usize = parts.next()?.parse().ok()?;
                let mut rest = parts.next()?;
                let mut sizes = Vec::with_capacity(count);
                for _ in 0..count {
                    let (s, r) = rest.split_once(':')?;
                    sizes.push(s.parse().ok()?);
                    rest = r;
                }
                Some((id, sizes, unescape(rest)))
            })();
            match parsed {
                Some((id, sizes, fmt)) => {
                    t.by_id.insert(id, (sizes, fmt));
                }
                None => complain(&format!("malformed printf format entry {e:?}")),
            }
        }
        t
    }
}

/// Undoes the C escapes the OpenCL printf pass writes into the metadata.
fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = b[i];
        i += 1;
        out.push(match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'v' => 11,
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                let mut k = 0;
                while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                v as u8
            }
            other => other,
        });
    }
    out
}

/// Default printf buffer bytes (header and drop counters included).
pub const PRINTF_BUFFER_BYTES: u64 = 1 << 20;

/// A buffered-printf buffer in device memory. The last 8 bytes hold the
/// dropped-bytes and dropped-records counters that softgpu's
/// `__printf_alloc` (HIP header, and the object softgpu-compiler links into
/// OpenCL code) keeps; the size word excludes them. A code object built
/// elsewhere, with the ROCm device library's allocator, drops records
/// without counting them. Dropping the buffer prints what is left in it
/// (so the output of a dispatch that faulted still appears) and frees it.
pub struct PrintfBuffer {
    arena: Arc<Arena>,
    addr: u64,
    bytes: u64,
    formats: Arc<FormatTable>,
    lock: Mutex<()>,
}

impl PrintfBuffer {
    /// Allocates a buffer of `bytes` (at least 64) in `arena` for kernels
    /// whose formats are `formats`.
    pub fn new(
        arena: &Arc<Arena>,
        bytes: u64,
        formats: Arc<FormatTable>,
    ) -> crate::Result<PrintfBuffer> {
        let bytes = bytes.max(64).next_multiple_of(8).min(u32::MAX as u64);
        let addr = arena
            .alloc_with(AllocSpec::internal(
                bytes,
                "the printf buffer",
                Access::ReadWrite,
            ))
            .map_err(|source| crate::Error::OutOfMemory {
                what: "the printf buffer".into(),
                source,
            })?;
        let b = PrintfBuffer {
            arena: arena.clone(),
            addr,
            bytes,
            formats,
            lock: Mutex::new(()),
        };
        // Zeroed, so the never-written ends of records read as zero.
        let unusable = |source| crate::Error::OutOfMemory {
            what: "the printf buffer".into(),
            source,
        };
        arena
            .write(addr, &vec![0u8; bytes as usize])
            .map_err(unusable)?;
        b.reset().map_err(unusable)?;
        Ok(b)
    }

    /// A buffer of the default size ([`PRINTF_BUFFER_BYTES`]) for the
    /// kernels of `code`, with its printf formats.
    pub fn for_code_object(
        arena: &Arc<Arena>,
        code: &softgpu_codeobj::CodeObject,
    ) -> crate::Result<PrintfBuffer> {
        let formats = Arc::new(FormatTable::for_code_object(&code.printf));
        PrintfBuffer::new(arena, PRINTF_BUFFER_BYTES, formats)
    }

    /// The device address kernels get as `hidden_printf_buffer`.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    fn limit(&self) -> u64 {
        self.bytes - 8
    }

    fn reset(&self) -> Result<(), MemError> {
        self.arena
            .store_dwords(self.addr, &[0, self.limit() as u32])?;
        self.arena.store_dwords(self.addr + self.limit(), &[0, 0])
    }

    /// Prints the records the device wrote and empties the buffer. Call it
    /// only when no kernel writes the buffer.
    pub fn drain(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        if let Err(e) = self.drain_locked() {
            complain(&format!("printf buffer at {:#x}: {e}", self.addr));
        }
        if let Err(e) = self.reset() {
            complain(&format!("printf buffer at {:#x}: {e}", self.addr));
        }
    }

    fn drain_locked(&self) -> Result<(), RecordError> {
        let used = self.arena.load_u32(self.addr)? as u64;
        let mut counters = [0u32; 2];
        self.arena
            .load_dwords(self.addr + self.limit(), &mut counters)?;
        let capacity = self.limit() - 8;
        let used = if used > capacity {
            complain(&format!(
                "printf buffer: the device claims {used} bytes of {capacity}; reading {capacity}"
            ));
            capacity
        } else {
            used
        };
        let mut data = vec![0u8; used as usize];
        self.arena.read(self.addr + 8, &mut data)?;
        self.arena.write(self.addr + 8, &vec![0u8; used as usize])?;
        let result = if self.formats.hip {
            self.print_hip(&data)
        } else {
            self.print_opencl(&data)
        };
        if counters[0] != 0 {
            complain(&format!(
                "printf buffer overflow: {} bytes ({} records) dropped; the buffer holds {capacity} bytes",
                counters[0], counters[1]
            ));
        }
        result
    }

    fn print_opencl(&self, data: &[u8]) -> Result<(), RecordError> {
        let mut at = 0;
        while at + 4 <= data.len() {
            let id = u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes"));
            if id == 0 {
                // Space reserved but never written (a record torn by a fault).
                return Err(RecordError::Unwritten { at });
            }
            let (sizes, fmt) =
                (self.formats.by_id.get(&id)).ok_or(RecordError::UnknownFormat { id, at })?;
            let end = at + 4 + sizes.iter().sum::<usize>();
            let record = data
                .get(at + 4..end)
                .ok_or(RecordError::PastTheData { id, at })?;
            let text = format(
                fmt,
                &mut Sized {
                    data: record,
                    at: 0,
                    sizes: sizes.iter(),
                },
            );
            emit(OutStream::Stdout, &text);
            at = end;
        }
        Ok(())
    }

    fn print_hip(&self, data: &[u8]) -> Result<(), RecordError> {
        let mut at = 0;
        while at + 4 <= data.len() {
            let control = u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes"));
            let size = (control >> 2) as usize;
            let record = data
                .get(at..at + size)
                .filter(|_| size >= 4)
                .ok_or(RecordError::Size { at, size })?;
            let stream = if control & 1 != 0 {
                OutStream::Stderr
            } else {
                OutStream::Stdout
            };
            let mut words = Words {
                data: record,
                at: 4,
            };
            let fmt = if control & 2 != 0 {
                let hash = record
                    .get(4..12)
                    .map(|h| u64::from_le_bytes(h.try_into().expect("8 bytes")))
                    .ok_or(RecordError::NoFormatHash { at })?;
                words.at = 12;
                match self.formats.by_hash.get(&hash) {
                    Some(f) => f.clone(),
                    None => {
                        complain(&format!(
                            "unknown printf format hash {hash:#018x}; record skipped"
                        ));
                        at += size;
                        continue;
                    }
                }
            } else {
                match words.next(Want::Str) {
                    Some(Value::Bytes(f)) => f,
                    _ => return Err(RecordError::NoFormatString { at }),
                }
            };
            let text = format(&fmt, &mut words);
            emit(stream, &text);
            at += size;
        }
        Ok(())
    }
}

/// Why the records of a printf buffer could not all be printed (said on
/// stderr; the rest of the buffer is skipped).
#[derive(Debug, thiserror::Error)]
enum RecordError {
    /// The buffer's memory refused an access.
    #[error(transparent)]
    Memory(#[from] MemError),
    /// Space reserved but never written (a record torn by a fault).
    #[error("an unwritten record at byte {at}")]
    Unwritten { at: usize },
    #[error("unknown printf format id {id} at byte {at}; the rest is skipped")]
    UnknownFormat { id: u32, at: usize },
    #[error("record of format {id} at byte {at} runs past the data")]
    PastTheData { id: u32, at: usize },
    #[error("record at byte {at} claims {size} bytes")]
    Size { at: usize, size: usize },
    #[error("record at byte {at} has no format hash")]
    NoFormatHash { at: usize },
    #[error("record at byte {at} has no format string")]
    NoFormatString { at: usize },
}

impl Drop for PrintfBuffer {
    fn drop(&mut self) {
        self.drain();
        let _ = self.arena.free(self.addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[u64]) -> Vec<u8> {
        args.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn fmt(f: &str, args: &[u64]) -> String {
        let data = words(args);
        let mut w = Words { data: &data, at: 0 };
        String::from_utf8(format(f.as_bytes(), &mut w)).unwrap()
    }

    #[test]
    fn conversions_match_c() {
        // Expectations: what C's printf prints for these values.
        assert_eq!(
            fmt("%d|%5d|%-5d|%05d", &[(-7i32) as u32 as u64, 42, 42, 42]),
            "-7|   42|42   |00042"
        );
        assert_eq!(
            fmt(
                "%hhd %hd %u %x %X %o",
                &[0x1ff, 0x18000, 0xffff_ffff, 255, 255, 8]
            ),
            "-1 -32768 4294967295 ff FF 10"
        );
        assert_eq!(
            fmt("%lld %llx", &[u64::MAX, u64::MAX]),
            "-1 ffffffffffffffff"
        );
        assert_eq!(
            fmt(
                "%.3f %e %g %a",
                &[
                    1.5f64.to_bits(),
                    1234.5f64.to_bits(),
                    0.0001f64.to_bits(),
                    1.0f64.to_bits()
                ]
            ),
            "1.500 1.234500e+03 0.0001 0x1p+0"
        );
        assert_eq!(
            fmt(
                "%*d|%-*d|%.*f",
                &[4, 7, (-4i32) as u32 as u64, 7, 2, 1.23456f64.to_bits()]
            ),
            "   7|7   |1.23"
        );
        assert_eq!(
            fmt("%c%c %% %p %p", &[b'o' as u64, b'k' as u64, 0, 0x1000]),
            "ok % (nil) 0x1000"
        );
        let mut s = b"hi\0\0\0\0\0\0".to_vec();
        s.extend(words(&[5]));
        let mut w = Words { data: &s, at: 0 };
        assert_eq!(format(b"[%4s] %d", &mut w), b"[  hi] 5");
        // Missing arguments are copied out as written.
        assert_eq!(fmt("%d %d", &[1]), "1 %d");
    }

    #[test]
    fn vectors_and_sized_arguments() {
        let sized = |data: &[u8], sizes: &[usize], f: &[u8]| {
            let mut s = Sized {
                data,
                at: 0,
                sizes: sizes.iter(),
            };
            String::from_utf8(format(f, &mut s)).unwrap()
        };
        let mut d: Vec<u8> = [1i32, -2, 3, 4]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        d.extend(2.5f32.to_le_bytes());
        assert_eq!(sized(&d, &[16, 4], b"%v4d %f"), "1,-2,3,4 2.500000");
        let h: Vec<u8> = [1.0f32, 0.5].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(sized(&h, &[8], b"%v2hlf"), "1.000000,0.500000");
        // LLVM 19 writes "left" in 4 bytes though its entry says 8: the
        // next argument follows at once, the record's last 4 bytes unwritten.
        let d = b"t\0\0\0leftnext\0\0\0\0\0\0\0\0";
        assert_eq!(sized(d, &[4, 8, 8], b"%s|%s|%s"), "t|left|next");
    }

    /// Drains `records` (written after the header) from a fresh buffer;
    /// returns what was printed on stdout and stderr.
    fn drain(table: FormatTable, records: &[u8], dropped: [u32; 2]) -> (String, String) {
        static TURN: Mutex<()> = Mutex::new(());
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let arena = Arc::new(Arena::new(1 << 20).unwrap());
        let sink = CaptureSink::new();
        let previous = set_sink(Some(sink.clone()));
        {
            let b = PrintfBuffer::new(&arena, 4096, Arc::new(table)).unwrap();
            arena.write(b.addr() + 8, records).unwrap();
            arena.store_u32(b.addr(), records.len() as u32).unwrap();
            arena.store_dwords(b.addr() + b.limit(), &dropped).unwrap();
            b.drain();
            // Drained and reset: dropping it prints nothing more.
        }
        set_sink(previous);
        sink.take()
    }

    #[test]
    fn bad_records_are_reported_not_trusted() {
        let cl = || FormatTable::parse(&["1:1:4:v=%d\\n".into()], false);
        let mut r: Vec<u8> = [1u32, 5, 9, 0]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let (out, err) = drain(cl(), &r, [0, 0]);
        assert_eq!(out, "v=5\n");
        assert!(
            err.contains("unknown printf format id 9 at byte 8"),
            "{err}"
        );
        // A record cut short by the end of the data.
        r.truncate(8);
        r.extend(1u32.to_le_bytes());
        let (out, err) = drain(cl(), &r, [0, 0]);
        assert_eq!(out, "v=5\n");
        assert!(err.contains("runs past the data"), "{err}");
        // A HIP record claiming more bytes than there are, and an overflow.
        let hip = FormatTable::parse(&["0:0:1f,h\n".into()], true);
        let mut h = vec![];
        h.extend(((12u32 << 2) | 2).to_le_bytes());
        h.extend(0x1fu64.to_le_bytes());
        h.extend(((4000u32 << 2) | 2).to_le_bytes());
        let (out, err) = drain(hip, &h, [640, 16]);
        assert_eq!(out, "h\n");
        assert!(err.contains("claims 4000 bytes"), "{err}");
        assert!(err.contains("640 bytes (16 records) dropped"), "{err}");
    }

    #[test]
    fn unescapes_opencl_formats() {
        assert_eq!(unescape(r"a\nb\t\\\101"), b"a\nb\t\\A");
        let t = FormatTable::parse(&["1:2:4:8:x=%d y=%ld\\n".into(), "bad".into()], false);
        assert_eq!(t.by_id[&1], (vec![4, 8], b"x=%d y=%ld\n".to_vec()));
    }
}
