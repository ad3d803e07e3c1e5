//! hiprtc: HIP C++ compiled at run time, as rocFFT builds every kernel
//! (with `--gpu-architecture=gfx1100 -O3 -mcumode -std=c++14`) and loads
//! the result with `hipModuleLoadData`.
//!
//! A program is compiled by `softgpu-compiler` (clang-19 and Debian's HIP
//! headers, as `softgpu hipcc` compiles device code), with what ROCm's
//! hiprtc gives a source implicitly: the HIP runtime header, included
//! first, and the program's named headers on its include path. Name
//! expressions (`hiprtcAddNameExpression`) are instantiated by taking
//! their address after the source, and lowered by matching the compiled
//! kernels' demangled names. The results are hiprtc's own codes
//! (`hiprtcResult`), never a HIP error, and leave HIP's last error alone.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::state::lock;

/// `hiprtcResult` values (HIP 5.2's `hiprtc.h`).
const SUCCESS: c_int = 0;
const INVALID_INPUT: c_int = 3;
const INVALID_PROGRAM: c_int = 4;
const INVALID_OPTION: c_int = 5;
const COMPILATION: c_int = 6;
const NO_NAME_EXPRESSIONS_AFTER_COMPILATION: c_int = 8;
const NO_LOWERED_NAMES_BEFORE_COMPILATION: c_int = 9;
const NAME_EXPRESSION_NOT_VALID: c_int = 10;
const INTERNAL_ERROR: c_int = 11;

/// The names of the codes, as `hiprtcGetErrorString` returns them.
fn code_name(code: c_int) -> &'static CStr {
    match code {
        0 => c"HIPRTC_SUCCESS",
        1 => c"HIPRTC_ERROR_OUT_OF_MEMORY",
        2 => c"HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
        3 => c"HIPRTC_ERROR_INVALID_INPUT",
        4 => c"HIPRTC_ERROR_INVALID_PROGRAM",
        5 => c"HIPRTC_ERROR_INVALID_OPTION",
        6 => c"HIPRTC_ERROR_COMPILATION",
        7 => c"HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        8 => c"HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        9 => c"HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        10 => c"HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        11 => c"HIPRTC_ERROR_INTERNAL_ERROR",
        _ => c"HIPRTC_ERROR_INVALID_INPUT (unknown hiprtcResult)",
    }
}

/// A failed hiprtc call: its code and why (printed with SOFTGPU_VERBOSE).
struct RtcError {
    code: c_int,
    why: String,
}

fn fail<T>(code: c_int, why: impl Into<String>) -> Result<T, RtcError> {
    Err(RtcError {
        code,
        why: why.into(),
    })
}

/// Runs a hiprtc call: its error's code, a contained panic as an internal
/// error (never unwinding into C).
fn rtc_guard(name: &str, body: impl FnOnce() -> Result<(), RtcError>) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(e)) => {
            if softgpu_env::verbose() {
                eprintln!("softgpu: {name}: {}", e.why);
            }
            e.code
        }
        Err(_) => {
            eprintln!("softgpu: internal error in {name} (a panic was contained)");
            INTERNAL_ERROR
        }
    }
}

/// One `hiprtcProgram`.
struct Program {
    source: String,
    /// The name the program was created with (for messages).
    name: String,
    /// `(include name, contents)` of each header given at creation.
    headers: Vec<(String, String)>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Name expressions added before compiling.
    expressions: Vec<String>,
    compiled: bool,
    log: CString,
    code: Vec<u8>,
    /// Each name expression's mangled name, after a successful compile.
    lowered: HashMap<String, CString>,
}

/// Live programs by handle (a non-null tag, never an address).
fn programs() -> &'static Mutex<HashMap<usize, Arc<Program>>> {
    static PROGRAMS: OnceLock<Mutex<HashMap<usize, Arc<Program>>>> = OnceLock::new();
    PROGRAMS.get_or_init(Default::default)
}

/// Handles are tagged far above any address a program might pass instead.
const HANDLE_TAG: usize = 0x5f70_0000_0000;

fn program(handle: *mut std::ffi::c_void) -> Result<Arc<Program>, RtcError> {
    let live = lock(programs()).get(&(handle as usize)).cloned();
    live.ok_or_else(|| not_live(handle))
}

fn not_live(handle: *mut std::ffi::c_void) -> RtcError {
    RtcError {
        code: INVALID_PROGRAM,
        why: format!("{handle:p} is not a live hiprtc program"),
    }
}

/// A C string argument, which must not be null.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn text(p: *const c_char, what: &str) -> Result<String, RtcError> {
    if p.is_null() {
        return fail(INVALID_INPUT, format!("{what} is null"));
    }
    // SAFETY: non-null, NUL-terminated (this function's contract).
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The `i`-th string of a C array of strings.
///
/// # Safety
/// `array` holds at least `i + 1` pointers, each null or NUL-terminated.
unsafe fn nth(array: *const *const c_char, i: usize, what: &str) -> Result<String, RtcError> {
    // SAFETY: `array` holds `i + 1` pointers (contract).
    let p = unsafe { *array.add(i) };
    // SAFETY: each null or NUL-terminated (contract).
    unsafe { text(p, &format!("{what} {i}")) }
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetErrorString(result: c_int) -> *const c_char {
    code_name(result).as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcVersion(major: *mut c_int, minor: *mut c_int) -> c_int {
    rtc_guard("hiprtcVersion", || {
        if major.is_null() || minor.is_null() {
            return fail(INVALID_INPUT, "major or minor is null");
        }
        // SAFETY: non-null, the caller's ints (hiprtc's contract).
        unsafe {
            major.write(5);
            minor.write(2);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcCreateProgram(
    prog: *mut *mut std::ffi::c_void,
    src: *const c_char,
    name: *const c_char,
    num_headers: c_int,
    headers: *const *const c_char,
    include_names: *const *const c_char,
) -> c_int {
    rtc_guard("hiprtcCreateProgram", || {
        if prog.is_null() {
            return fail(INVALID_INPUT, "prog is null");
        }
        // SAFETY: C strings or null (hiprtc's contract), checked inside.
        let source = unsafe { text(src, "src") }?;
        let name = if name.is_null() {
            "default_program".to_string()
        } else {
            // SAFETY: non-null, NUL-terminated.
            unsafe { text(name, "name") }?
        };
        if num_headers < 0 || (num_headers > 0 && (headers.is_null() || include_names.is_null())) {
            return fail(
                INVALID_INPUT,
                format!("{num_headers} headers, but no arrays of them"),
            );
        }
        let mut named = Vec::new();
        for i in 0..num_headers as usize {
            // SAFETY: both arrays hold `num_headers` strings (contract).
            let (file, contents) = unsafe {
                (
                    nth(include_names, i, "include name")?,
                    nth(headers, i, "header")?,
                )
            };
            named.push((file, contents));
        }
        let program = Arc::new(Program {
            source,
            name,
            headers: named,
            state: Mutex::new(State::default()),
        });
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        let handle = HANDLE_TAG + NEXT.fetch_add(1, Ordering::Relaxed);
        lock(programs()).insert(handle, program);
        // SAFETY: non-null, the caller's hiprtcProgram.
        unsafe { prog.write(handle as *mut std::ffi::c_void) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcDestroyProgram(prog: *mut *mut std::ffi::c_void) -> c_int {
    rtc_guard("hiprtcDestroyProgram", || {
        if prog.is_null() {
            return fail(INVALID_INPUT, "prog is null");
        }
        // SAFETY: non-null, the caller's hiprtcProgram.
        let handle = unsafe { prog.read() };
        if lock(programs()).remove(&(handle as usize)).is_none() {
            return Err(not_live(handle));
        }
        // SAFETY: as above.
        unsafe { prog.write(std::ptr::null_mut()) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcAddNameExpression(
    prog: *mut std::ffi::c_void,
    name_expression: *const c_char,
) -> c_int {
    rtc_guard("hiprtcAddNameExpression", || {
        let p = program(prog)?;
        // SAFETY: a C string or null, checked.
        let expression = unsafe { text(name_expression, "name_expression") }?;
        let mut state = lock(&p.state);
        if state.compiled {
            return fail(
                NO_NAME_EXPRESSIONS_AFTER_COMPILATION,
                "name expressions must be added before hiprtcCompileProgram",
            );
        }
        state.expressions.push(expression);
        Ok(())
    })
}

/// What the options ask for: the target, and clang's own options.
struct Options {
    target: Option<String>,
    clang: Vec<String>,
}

fn parse_options(options: Vec<String>) -> Result<Options, RtcError> {
    let mut parsed = Options {
        target: None,
        clang: Vec::new(),
    };
    for option in options {
        let arch = ["--gpu-architecture=", "--offload-arch=", "-arch="]
            .iter()
            .find_map(|prefix| option.strip_prefix(prefix));
        if let Some(arch) = arch {
            // `gfx1100:xnack-`: the processor is what compiles here.
            let processor = arch.split(':').next().unwrap_or(arch);
            parsed.target = Some(processor.to_string());
        } else if option.starts_with('-') {
            parsed.clang.push(option);
        } else {
            return fail(INVALID_OPTION, format!("`{option}` is not an option"));
        }
    }
    Ok(parsed)
}

/// The device the program is compiled for when no option names one: the
/// calling thread's current HIP device, as ROCm's hiprtc does.
fn current_target() -> Result<String, RtcError> {
    let hip = crate::state::hip().map_err(|e| RtcError {
        code: INTERNAL_ERROR,
        why: e.message,
    })?;
    Ok(hip.current().device.target().to_string())
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcCompileProgram(
    prog: *mut std::ffi::c_void,
    num_options: c_int,
    options: *const *const c_char,
) -> c_int {
    rtc_guard("hiprtcCompileProgram", || {
        let p = program(prog)?;
        if num_options < 0 || (num_options > 0 && options.is_null()) {
            return fail(
                INVALID_INPUT,
                format!("{num_options} options, but no array of them"),
            );
        }
        let mut given = Vec::new();
        for i in 0..num_options as usize {
            // SAFETY: `options` holds `num_options` strings (contract).
            given.push(unsafe { nth(options, i, "option") }?);
        }
        let options = parse_options(given)?;
        let target = match options.target {
            Some(t) => t,
            None => current_target()?,
        };
        let mut state = lock(&p.state);
        let outcome = compile(&p, &state.expressions, &target, &options.clang);
        state.compiled = true;
        match outcome {
            Ok((code, lowered)) => {
                state.code = code;
                state.lowered = lowered;
                state.log = CString::default();
                Ok(())
            }
            Err(e) => {
                state.code.clear();
                let log = e.to_string();
                let why = format!("{}: compilation failed:\n{log}", p.name);
                state.log = CString::new(log.replace('\0', " ")).unwrap_or_default();
                fail(COMPILATION, why)
            }
        }
    })
}

/// The source hiprtc compiles: the HIP runtime header first (hiprtc's
/// sources include none), then the program, then one address-of per name
/// expression, which instantiates a template kernel it names.
fn full_source(p: &Program, expressions: &[String]) -> String {
    let mut source = String::from("#include <hip/hip_runtime.h>\n#line 1\n");
    source += &p.source;
    source.push('\n');
    for (i, e) in expressions.iter().enumerate() {
        source += &format!("static auto __softgpu_hiprtc_name_{i} __attribute__((used)) = &{e};\n");
    }
    source
}

/// Why a program did not compile; its message is the program's log.
#[derive(Debug, thiserror::Error)]
enum BuildError {
    /// The temporary folder for the program's headers could not be made.
    #[error("creating a folder for the program's headers: {0}")]
    HeaderFolder(#[source] std::io::Error),
    /// A header could not be written into that folder.
    #[error("{}: {source}", .path.display())]
    Header {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The compiler could not be set up, or the source did not compile
    /// (its diagnostics).
    #[error(transparent)]
    Compile(#[from] softgpu_compiler::CompileError),
    /// The compiled code object could not be read back for the name
    /// expressions' kernels.
    #[error(transparent)]
    CodeObject(#[from] softgpu_codeobj::Error),
}

/// Compiles `p` for `target`: the code object and each name expression's
/// lowered name, or why not (the program's log).
fn compile(
    p: &Program,
    expressions: &[String],
    target: &str,
    options: &[String],
) -> Result<(Vec<u8>, HashMap<String, CString>), BuildError> {
    let headers = tempfile::Builder::new()
        .prefix("softgpu-hiprtc-")
        .tempdir()
        .map_err(BuildError::HeaderFolder)?;
    let headers_at = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| BuildError::Header { path, source }
    };
    for (name, contents) in &p.headers {
        let path = headers.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(headers_at(parent))?;
        }
        std::fs::write(&path, contents).map_err(headers_at(&path))?;
    }
    let mut compiler = softgpu_compiler::Compiler::new(target)?.include_dir(headers.path());
    for o in options {
        compiler = compiler.option(o);
    }
    let code = compiler.compile(
        &full_source(p, expressions),
        softgpu_compiler::Language::Hip,
    )?;
    let lowered = lower(&code, expressions)?;
    Ok((code, lowered))
}

/// Each name expression's mangled kernel name: the kernel whose demangled
/// name, without its return type and parameters, is the expression (spaces
/// and a leading `&` ignored).
fn lower(
    code: &[u8],
    expressions: &[String],
) -> Result<HashMap<String, CString>, softgpu_codeobj::Error> {
    if expressions.is_empty() {
        return Ok(HashMap::new());
    }
    let object = softgpu_codeobj::load(code)?;
    let bare = |s: &str| -> String { s.chars().filter(|c| !c.is_whitespace()).collect() };
    let mut lowered = HashMap::new();
    for e in expressions {
        let want = bare(e.trim_start_matches('&'));
        let found = object.kernels.iter().find(|k| {
            let demangled = softgpu_codeobj::demangle(&k.name);
            let d: &str = &demangled;
            let without_params = d.rsplit_once('(').map_or(d, |(head, _)| head);
            // `void k<int>`: drop the return type before the name.
            let name = without_params
                .rsplit_once(' ')
                .map_or(without_params, |(_, n)| n);
            bare(name) == want || bare(without_params) == want || k.name == *e
        });
        // A symbol name from an ELF string table has no NUL inside.
        if let Some(name) = found.and_then(|k| CString::new(k.name.clone()).ok()) {
            lowered.insert(e.clone(), name);
        }
    }
    Ok(lowered)
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetLoweredName(
    prog: *mut std::ffi::c_void,
    name_expression: *const c_char,
    lowered_name: *mut *const c_char,
) -> c_int {
    rtc_guard("hiprtcGetLoweredName", || {
        let p = program(prog)?;
        // SAFETY: a C string or null, checked.
        let expression = unsafe { text(name_expression, "name_expression") }?;
        if lowered_name.is_null() {
            return fail(INVALID_INPUT, "lowered_name is null");
        }
        let state = lock(&p.state);
        if !state.compiled {
            return fail(
                NO_LOWERED_NAMES_BEFORE_COMPILATION,
                "compile the program first",
            );
        }
        let Some(name) = state.lowered.get(&expression) else {
            return fail(
                NAME_EXPRESSION_NOT_VALID,
                format!("`{expression}` was not added, or names no kernel of the program"),
            );
        };
        // SAFETY: non-null, the caller's pointer; the string lives as long
        // as the program, as hiprtc promises.
        unsafe { lowered_name.write(name.as_ptr()) };
        Ok(())
    })
}

/// Writes `bytes` (and its size) for a Get/GetSize pair.
///
/// # Safety
/// `out` is null or the caller's buffer of the size the paired call gave.
unsafe fn copy_out(bytes: &[u8], out: *mut c_char) -> Result<(), RtcError> {
    if out.is_null() {
        return fail(INVALID_INPUT, "the output buffer is null");
    }
    // SAFETY: the caller's buffer of the size the size call returned.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out as *mut u8, bytes.len()) };
    Ok(())
}

unsafe fn size_out(size: usize, out: *mut usize) -> Result<(), RtcError> {
    if out.is_null() {
        return fail(INVALID_INPUT, "the size pointer is null");
    }
    // SAFETY: non-null, the caller's size_t.
    unsafe { out.write(size) };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetProgramLogSize(
    prog: *mut std::ffi::c_void,
    size: *mut usize,
) -> c_int {
    rtc_guard("hiprtcGetProgramLogSize", || {
        let p = program(prog)?;
        let n = lock(&p.state).log.as_bytes_with_nul().len();
        // SAFETY: null or the caller's size_t.
        unsafe { size_out(n, size) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetProgramLog(
    prog: *mut std::ffi::c_void,
    log: *mut c_char,
) -> c_int {
    rtc_guard("hiprtcGetProgramLog", || {
        let p = program(prog)?;
        let state = lock(&p.state);
        // SAFETY: the caller's buffer of hiprtcGetProgramLogSize bytes.
        unsafe { copy_out(state.log.as_bytes_with_nul(), log) }
    })
}

/// The code object a successful compile of `prog` made.
fn compiled_code(prog: *mut std::ffi::c_void) -> Result<Vec<u8>, RtcError> {
    let p = program(prog)?;
    let code = lock(&p.state).code.clone();
    if code.is_empty() {
        return fail(
            INVALID_PROGRAM,
            "the program has no code: it was not compiled, or failed to",
        );
    }
    Ok(code)
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetCodeSize(prog: *mut std::ffi::c_void, size: *mut usize) -> c_int {
    rtc_guard("hiprtcGetCodeSize", || {
        let code = compiled_code(prog)?;
        // SAFETY: null or the caller's size_t.
        unsafe { size_out(code.len(), size) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetCode(prog: *mut std::ffi::c_void, code: *mut c_char) -> c_int {
    rtc_guard("hiprtcGetCode", || {
        let compiled = compiled_code(prog)?;
        // SAFETY: the caller's buffer of hiprtcGetCodeSize bytes.
        unsafe { copy_out(&compiled, code) }
    })
}
symver!("rtc");
