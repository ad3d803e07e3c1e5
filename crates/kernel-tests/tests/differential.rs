//! Differential test: random integer and floating-point expressions, compiled
//! both as OpenCL C kernels (run on the emulator) and as host C (gcc/cc on
//! x86-64, SSE, `-ffp-contract=off`), compared bit for bit (floats: bit exact,
//! except that any NaN equals any NaN).
//!
//! The generated C avoids undefined behaviour: wrapping arithmetic is done on
//! unsigned types, divisions are guarded against zero and INT_MIN / -1, shift
//! counts are masked, float → int conversions are saturating helpers, and float
//! bit patterns of NaNs are canonicalised before they reach integer code.

mod common;
use common::*;
use softgpu_exec::Arg;
use std::fmt::Write as _;
use std::process::Command;

const SEED: u64 = 0x5eed_d1ff;
const NEXPR: usize = 40;
const NINPUT: usize = 256;
const MAX_DEPTH: u32 = 5;

/// Helpers shared by both sides; `OCL` selects the OpenCL spelling.
const PRELUDE: &str = r#"
#ifdef OCL
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef char i8;
#define FSQRT(v) sqrt(v)
#define FABS(v) fabs(v)
static uint fbits(float f) { return f != f ? 0x7fc00000u : as_uint(f); }
static float bitsf(uint u) { return as_float(u); }
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef signed char i8;
typedef uint64_t ulong;
typedef int64_t i64;
#define FSQRT(v) sqrtf(v)
#define FABS(v) fabsf(v)
static uint fbits(float f) { uint u; memcpy(&u, &f, 4); return f != f ? 0x7fc00000u : u; }
static float bitsf(uint u) { float f; memcpy(&f, &u, 4); return f; }
#endif
#define SMIN (-2147483647 - 1)
static uint divu(uint a, uint b) { return b ? a / b : a; }
static uint remu(uint a, uint b) { return b ? a % b : a; }
static uint divs(uint a, uint b) {
  int x = (int)a, y = (int)b;
  return (y == 0 || (x == SMIN && y == -1)) ? a : (uint)(x / y);
}
static uint rems(uint a, uint b) {
  int x = (int)a, y = (int)b;
  return (y == 0 || (x == SMIN && y == -1)) ? 0u : (uint)(x % y);
}
static uint minu(uint a, uint b) { return a < b ? a : b; }
static uint maxs(uint a, uint b) { return (int)a > (int)b ? a : b; }
static uint mulhi(uint a, uint b) { return (uint)(((ulong)a * (ulong)b) >> 32); }
static uint f2u(float v) {
  if (!(v == v)) return 0u;
  if (v >= 2147483648.0f) return 2147483647u;
  if (v < -2147483648.0f) return (uint)SMIN;
  return (uint)(int)v;
}
static float fminx(float a, float b) { return a < b ? a : b; }
static float fmaxx(float a, float b) { return a > b ? a : b; }
"#;

struct Gen {
    rng: Rng,
}

impl Gen {
    fn uconst(&mut self) -> String {
        let v = match self.rng.below(4) {
            0 => self.rng.below(8) as u32,
            1 => [0xffff_ffff, 0x8000_0000, 0x7fff_ffff, 31, 32, 0xff][self.rng.below(6) as usize],
            _ => self.rng.next_u32(),
        };
        format!("{v:#x}u")
    }

    fn fconst(&mut self) -> String {
        let v: f32 = match self.rng.below(3) {
            0 => [0.0, 1.0, -1.0, 0.5, 3.0, 1e-3, 65536.0][self.rng.below(7) as usize],
            1 => self.rng.f32_in(-10.0, 10.0),
            _ => (self.rng.f64_in(-30.0, 30.0).exp2() * self.rng.f64_in(-2.0, 2.0)) as f32,
        };
        // `{:e}` is the shortest round-tripping decimal: an exact literal.
        format!("({v:e}f)")
    }

    fn u(&mut self, depth: u32) -> String {
        if depth >= MAX_DEPTH || (depth > 1 && self.rng.chance(0.25)) {
            return match self.rng.below(5) {
                0 => "a".into(),
                1 => "b".into(),
                2 => "c".into(),
                3 => self.uconst(),
                _ => ["a", "b", "c"][self.rng.below(3) as usize].into(),
            };
        }
        let d = depth + 1;
        match self.rng.below(26) {
            0 => format!("({} + {})", self.u(d), self.u(d)),
            1 => format!("({} - {})", self.u(d), self.u(d)),
            2 => format!("({} * {})", self.u(d), self.u(d)),
            3 => format!("divu({}, {})", self.u(d), self.u(d)),
            4 => format!("remu({}, {})", self.u(d), self.u(d)),
            5 => format!("divs({}, {})", self.u(d), self.u(d)),
            6 => format!("rems({}, {})", self.u(d), self.u(d)),
            7 => format!("({} << ({} & 31u))", self.u(d), self.u(d)),
            8 => format!("({} >> ({} & 31u))", self.u(d), self.u(d)),
            9 => format!("(uint)((int){} >> ({} & 31u))", self.u(d), self.u(d)),
            10 => format!("({} & {})", self.u(d), self.u(d)),
            11 => format!("({} | {})", self.u(d), self.u(d)),
            12 => format!("({} ^ {})", self.u(d), self.u(d)),
            13 => format!("(~{})", self.u(d)),
            14 => format!("(uint)({} < {})", self.u(d), self.u(d)),
            15 => format!("(uint)((int){} <= (int){})", self.u(d), self.u(d)),
            16 => format!(
                "({} > {} ? {} : {})",
                self.u(d),
                self.u(d),
                self.u(d),
                self.u(d)
            ),
            17 => format!("minu({}, {})", self.u(d), self.u(d)),
            18 => format!("maxs({}, {})", self.u(d), self.u(d)),
            19 => format!("(uint)(uchar){}", self.u(d)),
            20 => format!("(uint)(int)(short){}", self.u(d)),
            21 => format!("(uint)(int)(i8){}", self.u(d)),
            22 => format!("mulhi({}, {})", self.u(d), self.u(d)),
            23 => format!("f2u({})", self.f(d)),
            24 => format!("fbits({})", self.f(d)),
            _ => format!("(uint)({} < {})", self.f(d), self.f(d)),
        }
    }

    fn f(&mut self, depth: u32) -> String {
        if depth >= MAX_DEPTH || (depth > 1 && self.rng.chance(0.25)) {
            return match self.rng.below(3) {
                0 => "x".into(),
                1 => "y".into(),
                _ => self.fconst(),
            };
        }
        let d = depth + 1;
        match self.rng.below(16) {
            0 => format!("({} + {})", self.f(d), self.f(d)),
            1 => format!("({} - {})", self.f(d), self.f(d)),
            2 => format!("({} * {})", self.f(d), self.f(d)),
            3 => format!("({} / {})", self.f(d), self.f(d)),
            4 => format!("FSQRT(FABS({}))", self.f(d)),
            5 => format!("(-{})", self.f(d)),
            6 => format!(
                "({} < {} ? {} : {})",
                self.f(d),
                self.f(d),
                self.f(d),
                self.f(d)
            ),
            7 => format!(
                "({} > {} ? {} : {})",
                self.u(d),
                self.u(d),
                self.f(d),
                self.f(d)
            ),
            8 => format!("fminx({}, {})", self.f(d), self.f(d)),
            9 => format!("fmaxx({}, {})", self.f(d), self.f(d)),
            10 => format!("(float){}", self.u(d)),
            11 => format!("(float)(int){}", self.u(d)),
            12 => format!("bitsf({})", self.u(d)),
            13 => format!(
                "(float)((double){} * (double){} + (double){})",
                self.f(d),
                self.f(d),
                self.f(d)
            ),
            14 => format!("(float)((double){} / (double){})", self.f(d), self.f(d)),
            _ => format!("(({} * {}) + {})", self.f(d), self.f(d), self.f(d)), // no contraction
        }
    }
}

/// Generated expression functions (shared C text) plus both drivers.
struct Program {
    functions: String,
}

fn generate() -> Program {
    let mut g = Gen {
        rng: Rng::new(SEED),
    };
    let mut functions = String::from(PRELUDE);
    for e in 0..NEXPR {
        let (ue, fe) = (g.u(0), g.f(0));
        writeln!(
            functions,
            "static uint eu_{e}(uint a, uint b, uint c, float x, float y) {{ return {ue}; }}"
        )
        .unwrap();
        writeln!(
            functions,
            "static float ef_{e}(uint a, uint b, uint c, float x, float y) {{ return {fe}; }}"
        )
        .unwrap();
    }
    Program { functions }
}

fn opencl_source(p: &Program) -> String {
    let mut s = String::from("#define OCL 1\n");
    s.push_str(&p.functions);
    for e in 0..NEXPR {
        writeln!(
            s,
            "kernel void expr_{e}(global const uint *A, global const uint *B, global const uint *C, \
             global const float *X, global const float *Y, global uint *OU, global float *OF, uint n) {{\n\
             \x20 uint i = get_global_id(0);\n\
             \x20 if (i < n) {{ OU[i] = eu_{e}(A[i], B[i], C[i], X[i], Y[i]); OF[i] = ef_{e}(A[i], B[i], C[i], X[i], Y[i]); }}\n}}"
        )
        .unwrap();
    }
    s
}

fn host_source(p: &Program) -> String {
    let mut s = String::from("#include <stdio.h>\n#include <stdlib.h>\n");
    s.push_str(&p.functions);
    s.push_str(
        "int main(int argc, char **argv) {\n\
         \x20 FILE *in = fopen(argv[1], \"rb\"); FILE *out = fopen(argv[2], \"wb\");\n\
         \x20 if (!in || !out) return 2;\n\
         \x20 uint n; if (fread(&n, 4, 1, in) != 1) return 3;\n\
         \x20 uint *a = malloc(4 * n), *b = malloc(4 * n), *c = malloc(4 * n);\n\
         \x20 float *x = malloc(4 * n), *y = malloc(4 * n);\n\
         \x20 if (fread(a, 4, n, in) != n || fread(b, 4, n, in) != n || fread(c, 4, n, in) != n ||\n\
         \x20     fread(x, 4, n, in) != n || fread(y, 4, n, in) != n) return 4;\n\
         \x20 uint *ou = malloc(4 * n); float *of = malloc(4 * n);\n",
    );
    for e in 0..NEXPR {
        writeln!(
            s,
            "  for (uint i = 0; i < n; i++) {{ ou[i] = eu_{e}(a[i], b[i], c[i], x[i], y[i]); of[i] = ef_{e}(a[i], b[i], c[i], x[i], y[i]); }}\n\
             \x20 fwrite(ou, 4, n, out); fwrite(of, 4, n, out);"
        )
        .unwrap();
    }
    s.push_str("  fclose(out);\n  return 0;\n}\n");
    s
}

struct Inputs {
    a: Vec<u32>,
    b: Vec<u32>,
    c: Vec<u32>,
    x: Vec<f32>,
    y: Vec<f32>,
}

fn inputs() -> Inputs {
    let mut rng = Rng::new(SEED ^ 1);
    let special_u = [
        0u32,
        1,
        2,
        0xffff_ffff,
        0x8000_0000,
        0x7fff_ffff,
        31,
        32,
        0xfffe,
    ];
    let special_f = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40, // denormal
        3.0e9,
        -2.5,
    ];
    let u = |rng: &mut Rng| -> u32 {
        match rng.below(4) {
            0 => special_u[rng.below(special_u.len() as u64) as usize],
            1 => rng.below(100) as u32,
            _ => rng.next_u32(),
        }
    };
    let gen_u = |rng: &mut Rng| -> Vec<u32> { (0..NINPUT).map(|_| u(rng)).collect() };
    let (a, b, c) = (gen_u(&mut rng), gen_u(&mut rng), gen_u(&mut rng));
    let gen_f = |rng: &mut Rng| -> Vec<f32> {
        (0..NINPUT)
            .map(|_| match rng.below(5) {
                0 => special_f[rng.below(special_f.len() as u64) as usize],
                1 => rng.range_i64(-20, 20) as f32,
                2 => rng.f32_in(-2.0, 2.0),
                _ => (rng.f64_in(-60.0, 60.0).exp2() * rng.f64_in(-1.0, 1.0)) as f32,
            })
            .collect()
    };
    let (x, y) = (gen_f(&mut rng), gen_f(&mut rng));
    Inputs { a, b, c, x, y }
}

/// Host results: for each expression, (uint results, float results).
fn run_host(p: &Program, inp: &Inputs) -> Vec<(Vec<u32>, Vec<f32>)> {
    static HOST: std::sync::OnceLock<Vec<(Vec<u32>, Vec<f32>)>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let dir = scratch_dir().join("differential-host");
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("host.c");
        let exe = dir.join("host");
        std::fs::write(&src, host_source(p)).unwrap();
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let out = Command::new(&cc)
            .args(["-O2", "-ffp-contract=off", "-fno-fast-math", "-std=c99", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lm")
            .output()
            .unwrap_or_else(|e| panic!("cannot run host C compiler `{cc}` ({e}): install the Debian package gcc (or set CC)"));
        assert!(out.status.success(), "host compile failed:\n{}", String::from_utf8_lossy(&out.stderr));
        let mut bytes = (NINPUT as u32).to_le_bytes().to_vec();
        for v in [&inp.a, &inp.b, &inp.c] {
            bytes.extend(v.to_bytes());
        }
        for v in [&inp.x, &inp.y] {
            bytes.extend(v.to_bytes());
        }
        let (fin, fout) = (dir.join("in.bin"), dir.join("out.bin"));
        std::fs::write(&fin, bytes).unwrap();
        let st = Command::new(&exe).arg(&fin).arg(&fout).status().unwrap();
        assert!(st.success(), "host program failed: {st}");
        let res = std::fs::read(&fout).unwrap();
        assert_eq!(res.len(), NEXPR * NINPUT * 8);
        res.chunks(NINPUT * 8)
            .map(|c| (from_bytes::<u32>(&c[..NINPUT * 4]), from_bytes::<f32>(&c[NINPUT * 4..])))
            .collect()
    })
    .clone()
}

fn differential(target: &str) {
    let p = generate();
    let inp = inputs();
    let host = run_host(&p, &inp);
    let gpu = Gpu::new(target);
    let code = compile_cached(
        &opencl_source(&p),
        Lang::OpenCl,
        target,
        &["-cl-fp32-correctly-rounded-divide-sqrt"],
    );
    let prog = gpu.dev.load(&code).unwrap_or_else(|e| panic!("load: {e}"));
    let (da, db, dc, dx, dy) = (
        gpu.buf(&inp.a),
        gpu.buf(&inp.b),
        gpu.buf(&inp.c),
        gpu.buf(&inp.x),
        gpu.buf(&inp.y),
    );
    let mut failures = vec![];
    let exprs: Vec<&str> = p
        .functions
        .lines()
        .filter(|l| l.starts_with("static uint eu_") || l.starts_with("static float ef_"))
        .collect();
    for (e, (hu, hf)) in host.iter().enumerate() {
        let (ou, of) = (gpu.zeros(NINPUT * 4), gpu.zeros(NINPUT * 4));
        gpu.run1d(
            &prog,
            &format!("expr_{e}"),
            NINPUT,
            64,
            &[
                buf(&da),
                buf(&db),
                buf(&dc),
                buf(&dx),
                buf(&dy),
                buf(&ou),
                buf(&of),
                Arg::U32(NINPUT as u32),
            ],
        );
        let gu: Vec<u32> = gpu.read(&ou);
        let gf: Vec<f32> = gpu.read(&of);
        let report = |i: usize| {
            format!(
                "a={:#x} b={:#x} c={:#x} x={:e} ({:#x}) y={:e} ({:#x})",
                inp.a[i],
                inp.b[i],
                inp.c[i],
                inp.x[i],
                inp.x[i].to_bits(),
                inp.y[i],
                inp.y[i].to_bits()
            )
        };
        if let Some(i) = (0..NINPUT).find(|&i| gu[i] != hu[i]) {
            failures.push(format!(
                "uint expr {e}: {}\n  input {i}: {}\n  gpu {:#x} host {:#x}",
                exprs[2 * e],
                report(i),
                gu[i],
                hu[i]
            ));
        }
        let same = |g: f32, h: f32| g.to_bits() == h.to_bits() || (g.is_nan() && h.is_nan());
        if let Some(i) = (0..NINPUT).find(|&i| !same(gf[i], hf[i])) {
            failures.push(format!(
                "float expr {e}: {}\n  input {i}: {}\n  gpu {:e} ({:#x}) host {:e} ({:#x})",
                exprs[2 * e + 1],
                report(i),
                gf[i],
                gf[i].to_bits(),
                hf[i],
                hf[i].to_bits()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differential mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
per_target!(random_expressions, differential);

/// The generated sources must compile (runs without the executor).
#[test]
fn generated_sources_compile() {
    let p = generate();
    for t in TARGETS {
        compile_cached(
            &opencl_source(&p),
            Lang::OpenCl,
            t,
            &["-cl-fp32-correctly-rounded-divide-sqrt"],
        );
    }
    let inp = inputs();
    let host = run_host(&p, &inp);
    assert_eq!(host.len(), NEXPR);
}
