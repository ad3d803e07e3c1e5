//! Device printf through the Rust API: HIP hostcall printf (clang-19's
//! default), HIP buffered printf (`-mprintf-kind=buffered`), OpenCL C
//! printf, and HIP `assert`. Kernels are compiled from source at test time
//! (a missing toolchain fails the tests).
//!
//! Where the expectations come from: every expected line is produced by
//! the host C library's `snprintf` with the same format string and the
//! same values, passed with C's argument promotions (the `c!` macro), so
//! the device output must equal what a host C program would print.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, MutexGuard};

use softgpu::printf::{set_sink, CaptureSink};
use softgpu::{Args, Device, Error, Language, Module, Stream};

/// The output sink is process-wide: tests that capture take turns.
static TURN: Mutex<()> = Mutex::new(());

struct Capture {
    sink: Arc<CaptureSink>,
    _turn: MutexGuard<'static, ()>,
}

impl Capture {
    fn start() -> Capture {
        let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let sink = CaptureSink::new();
        set_sink(Some(sink.clone()));
        Capture { sink, _turn: turn }
    }
    fn take(&self) -> (String, String) {
        self.sink.take()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        set_sink(None);
    }
}

/// The host C library's formatting of `fmt` with `args` (already promoted
/// to the C types a variadic call passes).
macro_rules! c {
    ($fmt:expr $(, $arg:expr)* $(,)?) => {{
        let f = CString::new($fmt).unwrap();
        let mut buf = vec![0u8; 8192];
        // SAFETY: `buf` holds 8192 bytes; the format's conversions match
        // the promoted argument types given.
        let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), f.as_ptr() $(, $arg)*) };
        assert!(n >= 0 && (n as usize) < buf.len());
        buf.truncate(n as usize);
        String::from_utf8(buf).unwrap()
    }};
}

const HIP: &str = r#"
extern "C" __global__ void values(const char *name, double d, float f) {
  if (threadIdx.x + blockIdx.x != 0) return;
  printf("ints %hhd %hd %d %ld %lld\n", (signed char)-5, (short)-300, -70000, -5000000000L, -9000000000000LL);
  printf("unsigned %hhu %hu %u %lu %llu\n", (unsigned char)250, (unsigned short)65000, 4000000000u,
         18000000000000000000UL, 18446744073709551615ULL);
  printf("hex %x %X %#x %08x %llx %o %#o\n", 0xbeefu, 0xbeefu, 255u, 0x1234u, 0x123456789abcdefULL, 511u, 8u);
  printf("chars %c%c%c [%3c] [%-3c]\n", 'a', 'b', 'c', 'x', 'y');
  printf("strings %s [%10s] [%-10s] [%.3s] <%s> [%8s]\n", "const", "right", "left", "truncate", name, name);
  printf("floats %f %.2f %10.3f %-10.1f| %e %.3E %g %G %a %A\n", d, d, (double)f, d, d, d, d, 1e-10, d, d);
  printf("floats2 %+f % f %08.2f %.0f %#.0f %g %g\n", d, d, -d, 2.5, 2.5, 100000.0, 1000000.0);
  printf("star [%*d] [%-*d] [%.*f] [%*.*f]\n", 6, 42, 6, 42, 3, d, 9, 2, d);
  printf("ptr %p %p\n", (void *)0x1234, (void *)0);
  printf("percent 100%% done\n");
  printf("sizes %zu %td %jd\n", (unsigned long)123, (long)-45, (long)-67);
  printf("no args\n");
}

extern "C" __global__ void items(int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < n; k++) printf("item %d line %d\n", i, k);
}

extern "C" __global__ void longmsg(const char *tail) {
  if (threadIdx.x != 0) return;
  printf("long: 0123456789012345678901234567890123456789012345678901234567890123456789 "
         "%s | %d %d %d %d %d %d %d %d %d %d | %s | %f\n",
         "a string argument that is longer than the fifty-six bytes of one hostcall payload",
         1, 2, 3, 4, 5, 6, 7, 8, 9, 10, tail, 0.125);
}

extern "C" __global__ void diverge(int *out) {
  int i = threadIdx.x;
  if (i % 3 == 0) {
    printf("div %d fizz\n", i);
  } else if (i % 3 == 1) {
    for (int k = 0; k < i % 4; k++) printf("div %d loop %d\n", i, k);
  } else {
    printf("div %d other %f\n", i, i * 0.5);
  }
  out[i] = i;
}

extern "C" __global__ void flood(int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < n; k++) printf("flood %d %d\n", i, k);
}

typedef unsigned long long u64x2 __attribute__((ext_vector_type(2)));
extern "C" __device__ u64x2 __ockl_hostcall_preview(unsigned int, u64, u64, u64, u64, u64, u64, u64, u64);
extern "C" __global__ void other_service(u64 *out) {
  int i = threadIdx.x;
  out[i] = __ockl_hostcall_preview(7, i, 1, 2, 3, 4, 5, 6, 7).x + 1;
  out[i] += __ockl_hostcall_preview(7, i, 1, 2, 3, 4, 5, 6, 7).y;
  printf("after %d\n", i);
}

extern "C" __global__ void check(int *p) {
  int i = threadIdx.x;
  assert(i < 5);
  p[i] = i;
}
"#;

const OPENCL: &str = r#"
kernel void values(double d, float f) {
  if (get_global_id(0) != 0) return;
  printf("ints %hhd %hd %d %ld\n", (char)-5, (short)-300, -70000, -5000000000L);
  printf("unsigned %hhu %hu %u %lu\n", (uchar)250, (ushort)65000, 4000000000u, 18000000000000000000UL);
  printf("hex %x %X %#x %08x %lx %o\n", 0xbeefu, 0xbeefu, 255u, 0x1234u, 0x123456789abcdefUL, 511u);
  printf("chars %c%c%c [%3c]\n", 'a', 'b', 'c', 'x');
  printf("strings %s [%10s] [%-10s] [%.3s]\n", "const", "right", "left", "truncate");
  printf("floats %f %.2f %10.3f %e %.3E %g %a\n", d, d, f, d, d, d, d);
  printf("vectors %v4d | %v2f | %v4hhd | %v3u\n", (int4)(1, -2, 3, 4), (float2)(0.5f, 1.5f),
         (char4)(1, 2, 3, 4), (uint3)(7, 8, 9));
  printf("percent 100%% tab\there\n");
}

kernel void items(int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) printf("item %d line %d\n", i, k);
}

kernel void flood(int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) printf("flood %d %d\n", i, k);
}

kernel void diverge(global int *out) {
  int i = get_local_id(0);
  if (i % 3 == 0) {
    printf("div %d fizz\n", i);
  } else if (i % 3 == 1) {
    for (int k = 0; k < i % 4; k++) printf("div %d loop %d\n", i, k);
  } else {
    printf("div %d other %f\n", i, i * 0.5);
  }
  out[i] = i;
}
"#;

const D: f64 = std::f64::consts::PI;
const F: f32 = 2.5;

fn open() -> (Device, Stream) {
    let device = Device::open(0).expect("device 0");
    let stream = device.stream().expect("stream");
    (device, stream)
}

fn load(
    device: &Device,
    stream: &Stream,
    source: &str,
    language: Language,
    options: &[&str],
) -> Module {
    let mut compiler = device
        .compiler()
        .expect("compiler (clang-19 and the device libraries)");
    for o in options {
        compiler = compiler.option(o);
    }
    let code = compiler.compile(source, language).expect("compile");
    stream.load_bytes(&code).expect("load")
}

/// A NUL-terminated string in device memory.
fn device_string(stream: &Stream, s: &str) -> softgpu::Buffer {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    let buf = stream.allocate(bytes.len()).unwrap();
    stream.upload(&buf, &bytes).unwrap();
    buf
}

fn hip_values_expected() -> Vec<String> {
    let name = CString::new("runtime name").unwrap();
    let (d, f) = (D, F as f64);
    let (right, left, trunc, cst) = (
        CString::new("right").unwrap(),
        CString::new("left").unwrap(),
        CString::new("truncate").unwrap(),
        CString::new("const").unwrap(),
    );
    vec![
        c!(
            "ints %hhd %hd %d %ld %lld\n",
            -5i32,
            -300i32,
            -70000i32,
            -5_000_000_000i64,
            -9_000_000_000_000i64
        ),
        c!(
            "unsigned %hhu %hu %u %lu %llu\n",
            250u32,
            65000u32,
            4_000_000_000u32,
            18_000_000_000_000_000_000u64,
            u64::MAX
        ),
        c!(
            "hex %x %X %#x %08x %llx %o %#o\n",
            0xbeefu32,
            0xbeefu32,
            255u32,
            0x1234u32,
            0x123456789abcdefu64,
            511u32,
            8u32
        ),
        c!(
            "chars %c%c%c [%3c] [%-3c]\n",
            'a' as i32,
            'b' as i32,
            'c' as i32,
            'x' as i32,
            'y' as i32
        ),
        c!(
            "strings %s [%10s] [%-10s] [%.3s] <%s> [%8s]\n",
            cst.as_ptr(),
            right.as_ptr(),
            left.as_ptr(),
            trunc.as_ptr(),
            name.as_ptr(),
            name.as_ptr()
        ),
        c!(
            "floats %f %.2f %10.3f %-10.1f| %e %.3E %g %G %a %A\n",
            d,
            d,
            f,
            d,
            d,
            d,
            d,
            1e-10,
            d,
            d
        ),
        c!(
            "floats2 %+f % f %08.2f %.0f %#.0f %g %g\n",
            d,
            d,
            -d,
            2.5,
            2.5,
            100000.0,
            1000000.0
        ),
        c!(
            "star [%*d] [%-*d] [%.*f] [%*.*f]\n",
            6i32,
            42i32,
            6i32,
            42i32,
            3i32,
            d,
            9i32,
            2i32,
            d
        ),
        c!(
            "ptr %p %p\n",
            0x1234usize as *const libc::c_void,
            std::ptr::null::<libc::c_void>()
        ),
        c!("percent 100%% done\n"),
        c!("sizes %zu %td %jd\n", 123usize, -45isize, -67i64),
        c!("no args\n"),
    ]
}

fn lines(s: &str) -> Vec<String> {
    s.split_inclusive('\n').map(str::to_string).collect()
}

/// Checks that every work-item's lines are all there, once, in order.
fn check_items(out: &str, items: i32, n: i32) {
    let mut seen: HashMap<i32, Vec<i32>> = HashMap::new();
    for l in out.lines() {
        let w: Vec<&str> = l.split(' ').collect();
        assert_eq!(w.len(), 4, "unexpected line {l:?}");
        assert_eq!((w[0], w[2]), ("item", "line"), "unexpected line {l:?}");
        seen.entry(w[1].parse().unwrap())
            .or_default()
            .push(w[3].parse().unwrap());
    }
    assert_eq!(seen.len(), items as usize, "work-items seen");
    for i in 0..items {
        assert_eq!(
            seen[&i],
            (0..n).collect::<Vec<_>>(),
            "work-item {i}'s lines"
        );
    }
}

fn diverge_expected(items: i32) -> Vec<String> {
    let mut v = Vec::new();
    for i in 0..items {
        match i % 3 {
            0 => v.push(c!("div %d fizz\n", i)),
            1 => (0..i % 4).for_each(|k| v.push(c!("div %d loop %d\n", i, k))),
            _ => v.push(c!("div %d other %f\n", i, i as f64 * 0.5)),
        }
    }
    v.sort();
    v
}

fn sorted(s: &str) -> Vec<String> {
    let mut v = lines(s);
    v.sort();
    v
}

/// The HIP checks shared by the hostcall and buffered forms.
fn hip_suite(options: &[&str]) {
    let cap = Capture::start();
    let (device, stream) = open();
    let module = load(&device, &stream, HIP, Language::Hip, options);

    let name = device_string(&stream, "runtime name");
    let values = module.kernel("values").unwrap();
    stream
        .dispatch_args(&values, 1, 32, &Args::new().view(&name).value(D).value(F))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, err) = cap.take();
    assert_eq!(err, "");
    assert_eq!(lines(&out), hip_values_expected());

    // 2 groups of 48: wave32, so each group has a full and a partial wave.
    let items = module.kernel("items").unwrap();
    stream
        .dispatch_args(&items, 2, 48, &Args::new().value(3i32))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, err) = cap.take();
    assert_eq!(err, "");
    check_items(&out, 96, 3);

    let tail_text = "a runtime string, also longer than one payload: ".repeat(3);
    let tail = device_string(&stream, &tail_text);
    let longmsg = module.kernel("longmsg").unwrap();
    stream
        .dispatch_args(&longmsg, 1, 1, &Args::new().view(&tail))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, _) = cap.take();
    let a = CString::new(
        "a string argument that is longer than the fifty-six bytes of one hostcall payload",
    )
    .unwrap();
    let t = CString::new(tail_text).unwrap();
    let expected = c!(
        "long: 0123456789012345678901234567890123456789012345678901234567890123456789 \
         %s | %d %d %d %d %d %d %d %d %d %d | %s | %f\n",
        a.as_ptr(),
        1i32,
        2i32,
        3i32,
        4i32,
        5i32,
        6i32,
        7i32,
        8i32,
        9i32,
        10i32,
        t.as_ptr(),
        0.125f64
    );
    assert_eq!(out, expected);

    let diverge = module.kernel("diverge").unwrap();
    let buf = stream.allocate(64 * 4).unwrap();
    stream
        .dispatch_args(&diverge, 1, 64, &Args::new().view(&buf))
        .unwrap();
    let written: Vec<i32> = stream.read_vec(&buf).unwrap();
    assert_eq!(written, (0..64).collect::<Vec<_>>());
    let (out, _) = cap.take();
    assert_eq!(sorted(&out), diverge_expected(64));
}

#[test]
fn hip_hostcall_printf() {
    hip_suite(&[]);
}

#[test]
fn hip_buffered_printf() {
    hip_suite(&["-mprintf-kind=buffered"]);
}

#[test]
fn hip_buffered_printf_overflow_is_reported() {
    let cap = Capture::start();
    let (device, stream) = open();
    let module = load(
        &device,
        &stream,
        HIP,
        Language::Hip,
        &["-mprintf-kind=buffered"],
    );
    let flood = module.kernel("flood").unwrap();
    // 4096 work-items × 10 records of 36-40 bytes: more than the 1 MiB buffer.
    stream
        .dispatch_args(&flood, 16, 256, &Args::new().value(10i32))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, err) = cap.take();
    let printed = out.lines().count();
    assert!(printed > 1000 && printed < 40960, "{printed} lines printed");
    let dropped: usize = err
        .split("bytes (")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no overflow report in {err:?}"));
    assert!(err.contains("printf buffer overflow"), "{err}");
    assert_eq!(printed + dropped, 40960, "printed + dropped records");
    // The buffer is reset: the next dispatch prints in full.
    stream
        .dispatch_args(&flood, 1, 4, &Args::new().value(2i32))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, err) = cap.take();
    assert_eq!(out.lines().count(), 8);
    assert_eq!(err, "");
}

/// The dropped-records count of an overflow report.
fn dropped_records(err: &str) -> usize {
    assert!(err.contains("printf buffer overflow"), "{err}");
    err.split("bytes (")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no overflow report in {err:?}"))
}

#[test]
fn opencl_printf_overflow_is_reported() {
    let cap = Capture::start();
    let (device, stream) = open();
    let module = load(&device, &stream, OPENCL, Language::OpenCl, &[]);
    let flood = module.kernel("flood").unwrap();
    // 4096 work-items × 30 records of 12 bytes: more than the 1 MiB buffer.
    stream
        .dispatch_args(&flood, 16, 256, &Args::new().value(30i32))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, err) = cap.take();
    let printed = out.lines().count();
    assert!(
        printed > 1000 && printed < 122880,
        "{printed} lines printed"
    );
    assert_eq!(
        printed + dropped_records(&err),
        122880,
        "printed + dropped records"
    );
}

#[test]
fn opencl_printf() {
    let cap = Capture::start();
    let (device, stream) = open();
    let module = load(&device, &stream, OPENCL, Language::OpenCl, &[]);
    let values = module.kernel("values").unwrap();
    stream
        .dispatch_args(&values, 1, 32, &Args::new().value(D).value(F))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, err) = cap.take();
    assert_eq!(err, "");
    let (d, f) = (D, F as f64);
    let s = |x: &str| CString::new(x).unwrap();
    let (cst, right, left, trunc) = (s("const"), s("right"), s("left"), s("truncate"));
    let expected = vec![
        c!(
            "ints %hhd %hd %d %ld\n",
            -5i32,
            -300i32,
            -70000i32,
            -5_000_000_000i64
        ),
        c!(
            "unsigned %hhu %hu %u %lu\n",
            250u32,
            65000u32,
            4_000_000_000u32,
            18_000_000_000_000_000_000u64
        ),
        c!(
            "hex %x %X %#x %08x %lx %o\n",
            0xbeefu32,
            0xbeefu32,
            255u32,
            0x1234u32,
            0x123456789abcdefu64,
            511u32
        ),
        c!(
            "chars %c%c%c [%3c]\n",
            'a' as i32,
            'b' as i32,
            'c' as i32,
            'x' as i32
        ),
        c!(
            "strings %s [%10s] [%-10s] [%.3s]\n",
            cst.as_ptr(),
            right.as_ptr(),
            left.as_ptr(),
            trunc.as_ptr()
        ),
        c!("floats %f %.2f %10.3f %e %.3E %g %a\n", d, d, f, d, d, d, d),
        // OpenCL vectors: each element with the conversion, joined by commas
        // (OpenCL C 2.0, 6.13.13.2).
        format!(
            "vectors {} | {} | {} | {}\n",
            ["1", "-2", "3", "4"].join(","),
            [c!("%f", 0.5f64), c!("%f", 1.5f64)].join(","),
            "1,2,3,4",
            "7,8,9"
        ),
        c!("percent 100%% tab\there\n"),
    ];
    assert_eq!(lines(&out), expected);

    let items = module.kernel("items").unwrap();
    stream
        .dispatch_args(&items, 3, 40, &Args::new().value(4i32))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, _) = cap.take();
    check_items(&out, 120, 4);

    let diverge = module.kernel("diverge").unwrap();
    let buf = stream.allocate(64 * 4).unwrap();
    stream
        .dispatch_args(&diverge, 1, 64, &Args::new().view(&buf))
        .unwrap();
    stream.synchronize().unwrap();
    let (out, _) = cap.take();
    assert_eq!(sorted(&out), diverge_expected(64));
}

#[test]
fn hip_assert_prints_and_faults() {
    let cap = Capture::start();
    let (device, stream) = open();
    let module = load(&device, &stream, HIP, Language::Hip, &[]);
    let check = module.kernel("check").unwrap();
    let buf = stream.allocate(8 * 4).unwrap();
    stream
        .dispatch_args(&check, 1, 8, &Args::new().view(&buf))
        .unwrap();
    let r = stream.synchronize();
    let (out, err) = cap.take();
    assert_eq!(out, "");
    let line = HIP
        .lines()
        .position(|l| l.contains("assert(i < 5)"))
        .unwrap()
        + 1;
    // The format of ROCm's HIP `__assert_fail`.
    let expected = format!("<stdin>:{line}: check: Device-side assertion `i < 5' failed.\n");
    assert_eq!(
        err,
        expected.repeat(3),
        "one message per failing work-item (5, 6, 7)"
    );
    match r {
        Err(Error::Fault(f)) => assert_eq!(f.kernel(), "check"),
        other => panic!("expected a kernel fault, got {other:?}"),
    }
}

#[test]
fn unknown_hostcall_service_is_reported_once() {
    let cap = Capture::start();
    let (device, stream) = open();
    let module = load(&device, &stream, HIP, Language::Hip, &[]);
    let k = module.kernel("other_service").unwrap();
    let buf = stream.allocate(64 * 8).unwrap();
    stream
        .dispatch_args(&k, 1, 64, &Args::new().view(&buf))
        .unwrap();
    let got: Vec<u64> = stream.read_vec(&buf).unwrap();
    // The host answers an unknown service with zeros.
    assert_eq!(got, vec![1u64; 64]);
    let (out, err) = cap.take();
    assert_eq!(sorted(&out), {
        let mut v: Vec<String> = (0..64i32).map(|i| c!("after %d\n", i)).collect();
        v.sort();
        v
    });
    assert_eq!(
        err.matches("hostcall service 7 is not provided by softgpu")
            .count(),
        1,
        "{err}"
    );
}

/// Device output goes through the C library's `stdout` `FILE`, so it keeps
/// its place among a C host program's own `printf` output even when
/// stdout is a pipe (fully buffered). Runs itself as a child process.
#[test]
fn stdio_sink_interleaves_with_c_stdout() {
    const CHILD: &str = "SOFTGPU_PRINTF_TEST_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let (device, stream) = open();
        let module = load(&device, &stream, HIP, Language::Hip, &[]);
        let items = module.kernel("items").unwrap();
        // SAFETY: plain C printf calls with matching arguments.
        unsafe { libc::printf(c"host 1\n".as_ptr()) };
        stream
            .dispatch_args(&items, 1, 1, &Args::new().value(1i32))
            .unwrap();
        stream.synchronize().unwrap();
        // SAFETY: as above.
        unsafe { libc::printf(c"host 2\n".as_ptr()) };
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stdio_sink_interleaves_with_c_stdout",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let at = |s: &str| {
        text.find(s)
            .unwrap_or_else(|| panic!("no {s:?} in {text:?}"))
    };
    assert!(at("host 1\n") < at("item 0 line 0\n"), "{text}");
    assert!(at("item 0 line 0\n") < at("host 2\n"), "{text}");
}
