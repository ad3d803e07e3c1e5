//! End-to-end tests of `softgpu-compiler` with the real Debian toolchain.
//! They fail (never skip) when clang-19, lld-19, llvm-19 or rocm-device-libs
//! are missing. Every test uses its own temporary cache directory.

use std::path::{Path, PathBuf};

use softgpu_compiler::{CompileError, Compiler, Language, Severity};
use tempfile::TempDir;

const TARGETS: [&str; 2] = ["gfx1151", "gfx1100"];

/// Uses the device libraries (`get_global_id`, `sin` from ocml).
const OPENCL: &str = "\
kernel void scale(global float *p, float a) {
    size_t i = get_global_id(0);
    p[i] = sin(p[i]) * a;
}
";

/// Uses the force-included HIP header (`__global__`, `blockIdx`, ...).
const HIP: &str = r#"
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"#;

fn compiler(target: &str, cache: &TempDir) -> Compiler {
    Compiler::new(target)
        .unwrap()
        .cache_dir(Some(cache.path().to_path_buf()))
}

fn ok<T>(r: Result<T, CompileError>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// The code objects in `CACHE/objects`.
fn cached_objects(cache: &TempDir) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache.path().join("objects"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "hsaco"));
    v.sort();
    v
}

fn check_code_object(code: &[u8], target: &str, kernel: &str) {
    assert!(code.starts_with(b"\x7fELF"), "not an ELF");
    assert_eq!(u16::from_le_bytes([code[18], code[19]]), 0xE0, "e_machine");
    let co = softgpu_codeobj::load(code).unwrap_or_else(|e| panic!("load: {e}"));
    assert_eq!(co.target, target);
    assert!(
        co.kernels.iter().any(|k| k.name == kernel),
        "no kernel {kernel} in {:?}",
        co.kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
    );
}

#[test]
fn opencl_and_hip_compile_for_gfx1151_and_gfx1100() {
    let cache = TempDir::new().unwrap();
    for target in TARGETS {
        let c = compiler(target, &cache);
        check_code_object(&ok(c.compile(OPENCL, Language::OpenCl)), target, "scale");
        check_code_object(&ok(c.compile(HIP, Language::Hip)), target, "vadd");
    }
}

#[test]
fn syntax_error_is_a_diagnostic_with_its_line() {
    let src = "kernel void k(global int *p) {\n    int x = 1;\n    p[0] = x\n}\n";
    let e = Compiler::new("gfx1151")
        .unwrap()
        .cache_dir(None)
        .compile(src, Language::OpenCl)
        .unwrap_err();
    let CompileError::Diagnostics { diagnostics, log } = &e else {
        panic!("expected Diagnostics, got {e:?}")
    };
    let first = diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error diagnostic");
    assert_eq!(first.file.as_deref(), Some("<stdin>"));
    assert_eq!(first.line, Some(3), "{log}");
    assert!(first.column.is_some());
    assert!(first.message.contains("expected ';'"), "{}", first.message);
    assert!(log.contains("expected ';'"));
    assert!(e.to_string().contains("1 error"), "{e}");
}

#[test]
fn hip_errors_are_diagnostics_too() {
    let src = "__global__ void k(int *p) {\n  p[0] = undeclared;\n}\n";
    let e = Compiler::new("gfx1100")
        .unwrap()
        .cache_dir(None)
        .compile(src, Language::Hip)
        .unwrap_err();
    let CompileError::Diagnostics { diagnostics, .. } = &e else {
        panic!("expected Diagnostics, got {e:?}")
    };
    let d = &diagnostics[0];
    assert_eq!((d.severity, d.line), (Severity::Error, Some(2)), "{e}");
    assert!(d.message.contains("undeclared"), "{d}");
}

#[test]
fn link_errors_are_diagnostics() {
    // An external function nobody defines: clang compiles, lld refuses.
    let src = "void helper(global int *p);\nkernel void k(global int *p) { helper(p); }\n";
    let e = Compiler::new("gfx1151")
        .unwrap()
        .cache_dir(None)
        .option("-O0")
        .compile(src, Language::OpenCl)
        .unwrap_err();
    let CompileError::Diagnostics { diagnostics, .. } = &e else {
        panic!("expected Diagnostics, got {e:?}")
    };
    assert!(
        diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && d.message.contains("helper")),
        "{e}"
    );
}

#[test]
fn warnings_are_returned_and_survive_the_cache() {
    let cache = TempDir::new().unwrap();
    let src = "#warning softgpu-test-warning\nkernel void k(global int *p) { p[0] = 1; }\n";
    let c = compiler("gfx1151", &cache);
    for round in 0..2 {
        let out = ok(c.compile_with_diagnostics(src, Language::OpenCl));
        check_code_object(&out.code, "gfx1151", "k");
        let w = &out.warnings[0];
        assert_eq!(w.severity, Severity::Warning, "round {round}");
        assert_eq!(w.line, Some(1));
        assert!(w.message.contains("softgpu-test-warning"), "{w}");
    }
    assert_eq!(cached_objects(&cache).len(), 1);
}

#[test]
fn second_compile_is_served_from_the_disk_cache() {
    let cache = TempDir::new().unwrap();
    let first = ok(compiler("gfx1151", &cache).compile(OPENCL, Language::OpenCl));
    let files = cached_objects(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(std::fs::read(&files[0]).unwrap(), first);
    assert!(files[0].with_extension("meta").is_file());

    // A new compiler with the same inputs gets the same bytes.
    let again = ok(compiler("gfx1151", &cache).compile(OPENCL, Language::OpenCl));
    assert_eq!(again, first);

    // Proof that they come from the disk: replace the entry with another
    // valid code object, and the compile returns it.
    let other = ok(Compiler::new("gfx1151")
        .unwrap()
        .cache_dir(None)
        .compile(HIP, Language::Hip));
    assert_ne!(other, first);
    std::fs::write(&files[0], &other).unwrap();
    assert_eq!(
        ok(compiler("gfx1151", &cache).compile(OPENCL, Language::OpenCl)),
        other
    );

    // A damaged entry is ignored and rewritten.
    std::fs::write(&files[0], b"garbage").unwrap();
    assert_eq!(
        ok(compiler("gfx1151", &cache).compile(OPENCL, Language::OpenCl)),
        first
    );
    assert_eq!(std::fs::read(&files[0]).unwrap(), first);
    assert_eq!(cached_objects(&cache).len(), 1);
}

#[test]
fn target_language_options_and_defines_are_part_of_the_key() {
    let cache = TempDir::new().unwrap();
    let src = "kernel void k(global int *p) { p[0] = N; }\n";
    let base = |t: &str| compiler(t, &cache).define("N", "1");
    let a = ok(base("gfx1151").compile(src, Language::OpenCl));
    let b = ok(base("gfx1100").compile(src, Language::OpenCl));
    let c = ok(base("gfx1151")
        .define("M", "2")
        .compile(src, Language::OpenCl));
    let d = ok(base("gfx1151")
        .option("-mwavefrontsize64")
        .compile(src, Language::OpenCl));
    let e = ok(compiler("gfx1151", &cache)
        .define("N", "7")
        .compile(src, Language::OpenCl));
    assert_eq!(cached_objects(&cache).len(), 5);
    assert_ne!(a, b);
    assert_ne!(a, d);
    assert_ne!(a, e);
    assert_eq!(a, c, "an unused define changes the key, not the code");
    // Same inputs again: no new entry.
    ok(base("gfx1151").compile(src, Language::OpenCl));
    assert_eq!(cached_objects(&cache).len(), 5);
}

#[test]
fn compile_file_reads_headers_beside_it_and_a_changed_header_recompiles() {
    let dir = TempDir::new().unwrap();
    let cache = TempDir::new().unwrap();
    let kernel = dir.path().join("k.cl");
    let header = dir.path().join("value.h");
    std::fs::write(
        &kernel,
        "#include \"value.h\"\nkernel void k(global int *p) { p[0] = VALUE; }\n",
    )
    .unwrap();
    std::fs::write(&header, "#define VALUE 1\n").unwrap();
    let c = compiler("gfx1151", &cache);
    let one = ok(c.compile_file(&kernel));
    check_code_object(&one, "gfx1151", "k");
    assert_eq!(ok(c.compile_file(&kernel)), one);
    assert_eq!(cached_objects(&cache).len(), 1);

    // Same source, different header content: the entry must not be reused.
    std::fs::write(&header, "#define VALUE 2\n").unwrap();
    let two = ok(c.compile_file(&kernel));
    assert_ne!(two, one);
    std::fs::write(&header, "#define VALUE 1\n").unwrap();
    assert_eq!(ok(c.compile_file(&kernel)), one);

    // Diagnostics name the file.
    std::fs::write(&header, "#define VALUE oops\n").unwrap();
    let e = c.compile_file(&kernel).unwrap_err();
    let CompileError::Diagnostics { diagnostics, .. } = &e else {
        panic!("expected Diagnostics, got {e:?}")
    };
    let d = &diagnostics[0];
    assert_eq!(d.file.as_deref(), Some(kernel.to_str().unwrap()), "{e}");
    assert_eq!(d.line, Some(2));

    // The language comes from the extension.
    let e = c.compile_file(dir.path().join("k.c")).unwrap_err();
    assert!(matches!(e, CompileError::UnknownLanguage { .. }), "{e:?}");
}

#[test]
fn include_dirs_are_searched() {
    let inc = TempDir::new().unwrap();
    std::fs::write(
        inc.path().join("softgpu_test_value.h"),
        "#define VALUE 42\n",
    )
    .unwrap();
    let src = "#include <softgpu_test_value.h>\nkernel void k(global int *p) { p[0] = VALUE; }\n";
    let code = ok(Compiler::new("gfx1100")
        .unwrap()
        .cache_dir(None)
        .include_dir(inc.path())
        .compile(src, Language::OpenCl));
    check_code_object(&code, "gfx1100", "k");
}

#[test]
fn without_a_cache_the_compile_is_deterministic() {
    let c = Compiler::new("gfx1151").unwrap().cache_dir(None);
    let a = ok(c.compile(OPENCL, Language::OpenCl));
    let b = ok(c.compile(OPENCL, Language::OpenCl));
    assert_eq!(a, b);
}

#[test]
fn missing_tools_name_the_debian_packages() {
    let empty = TempDir::new().unwrap();
    let c = Compiler::new("gfx1151")
        .unwrap()
        .cache_dir(None)
        .search_path(vec![empty.path().to_path_buf()]);
    for r in [
        c.compile(OPENCL, Language::OpenCl).map(drop),
        c.compile(HIP, Language::Hip).map(drop),
        c.device_lib_dir().map(drop),
    ] {
        let e = r.unwrap_err();
        let CompileError::MissingTools { missing, packages } = &e else {
            panic!("expected MissingTools, got {e:?}")
        };
        assert_eq!(
            missing,
            &[
                "clang-19",
                "ld.lld-19",
                "llvm-as-19",
                "llvm-extract-19",
                "llvm-dis-19"
            ]
        );
        assert_eq!(packages, &["clang-19", "lld-19", "llvm-19"]);
        let msg = e.to_string();
        assert!(
            msg.contains("apt-get install clang-19 lld-19 llvm-19 rocm-device-libs"),
            "{msg}"
        );
    }
    // An empty search path finds nothing either.
    let e = Compiler::new("gfx1100")
        .unwrap()
        .search_path(Vec::new())
        .compile(OPENCL, Language::OpenCl)
        .unwrap_err();
    assert!(matches!(e, CompileError::MissingTools { .. }), "{e:?}");
}

#[test]
fn missing_device_libraries_name_rocm_device_libs() {
    let empty = TempDir::new().unwrap();
    let e = Compiler::new("gfx1151")
        .unwrap()
        .cache_dir(None)
        .bitcode_dir(empty.path())
        .compile(OPENCL, Language::OpenCl)
        .unwrap_err();
    let CompileError::MissingTools { missing, packages } = &e else {
        panic!("expected MissingTools, got {e:?}")
    };
    assert_eq!(packages, &["rocm-device-libs"]);
    assert!(missing[0].ends_with("ocml.bc"), "{missing:?}");
    assert!(e.to_string().contains("rocm-device-libs"), "{e}");
}

#[test]
fn bad_targets_are_refused() {
    for t in ["gfx1010", "gfx1301", "gfx11", "sm_80"] {
        let e = Compiler::new(t).unwrap_err();
        assert!(matches!(e, CompileError::BadTarget { .. }), "{t}: {e:?}");
        assert!(e.to_string().contains(t));
    }
}

#[test]
fn device_lib_dir_holds_the_gfx11_isa_version_library() {
    let cache = TempDir::new().unwrap();
    for (target, digits) in [
        ("gfx1151", "1151"),
        ("gfx1100", "1100"),
        ("gfx1201", "1201"),
    ] {
        let dir = ok(compiler(target, &cache).device_lib_dir());
        assert!(dir.starts_with(cache.path()));
        assert!(dir.join("ocml.bc").exists());
        let isa = dir.join(format!("oclc_isa_version_{digits}.bc"));
        let bytes = std::fs::read(&isa).unwrap();
        assert!(
            bytes.starts_with(b"BC\xc0\xde"),
            "{}: not bitcode",
            isa.display()
        );
    }
    // Built once: both targets share the folder.
    let a = ok(compiler("gfx1151", &cache).device_lib_dir());
    let b = ok(compiler("gfx1100", &cache).device_lib_dir());
    assert_eq!(a, b);
    assert_eq!(
        Path::new(&a).parent().unwrap().read_dir().unwrap().count(),
        1
    );
}

/// ockl's device `malloc` (what clang's HIP headers map `malloc` to).
const DEVICE_MALLOC: &str = r#"
extern "C" __device__ void *__ockl_dm_alloc(unsigned long size);
extern "C" __global__ void small_malloc(void **out, unsigned long size) {
    *out = __ockl_dm_alloc(size);
}
"#;

/// `s_sendmsg_rtn_b64 s[N:N+1], sendmsg(MSG_RTN_GET_REALTIME)`, gfx11's and
/// gfx12's clock read (`llvm-mc-19 -show-encoding`: `0xbe844d83` for
/// `s[4:5]`; bits 16-22 are the destination).
fn reads_realtime(code: &[u8]) -> bool {
    code.chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .any(|w| w & 0xff80_ffff == 0xbe80_4d83)
}

/// ockl's slab allocator (blocks of 3072 bytes or less) paces itself by
/// the clock. Debian's ockl reads it with `s_memrealtime`, which gfx11 and
/// gfx12 lack: for gfx11 LLVM 19 deleted the read (the allocator then spun
/// forever), for gfx12 clang refused the source ("Cannot select"). With the
/// device-library folder's ockl both compile and read the real clock.
#[test]
fn device_malloc_reads_the_realtime_clock_on_gfx11_and_gfx12() {
    let cache = TempDir::new().unwrap();
    for target in ["gfx1151", "gfx1201"] {
        let code = ok(compiler(target, &cache).compile(DEVICE_MALLOC, Language::Hip));
        check_code_object(&code, target, "small_malloc");
        assert!(reads_realtime(&code), "{target}: no realtime clock read");
    }
}
