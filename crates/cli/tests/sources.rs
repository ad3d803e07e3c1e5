//! End-to-end tests of `softgpu info`, `softgpu compile` and `softgpu run`
//! on `.cl` sources. The kernels are compiled at test time (clang-19,
//! lld-19, rocm-device-libs), each test with its own empty compile cache.

use std::path::Path;
use std::process::Output;

mod common;
use common::{f32_file, read_f32, scratch, softgpu_command, text};

/// Runs `softgpu` with a fresh compile cache in `dir` and without the
/// device-selection variables, plus `env`.
fn softgpu_in(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = softgpu_command();
    cmd.args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("SOFTGPU_DEVICES")
        .env_remove("SOFTGPU_PROFILE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cannot run softgpu")
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed:\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

const VADD: &str = "\
kernel void vadd(global const float *a, global const float *b, global float *c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
";

fn write(dir: &Path, name: &str, source: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, source).unwrap();
    p.to_string_lossy().into_owned()
}

/// The values of the built-in profile document of the runtime crate
/// (schema 2 keeps each under `fields.NAME.value`).
fn profile(name: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../runtime/profiles")
        .join(format!("{name}.json"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let fields = doc["fields"].as_object().expect("a schema 2 profile");
    fields
        .iter()
        .map(|(k, v)| (k.clone(), v["value"].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn info_json(dir: &Path, env: &[(&str, &str)]) -> serde_json::Value {
    let out = softgpu_in(dir, env, &["info", "--json"]);
    ok(&out, "softgpu info --json");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("info --json is not JSON ({e}): {}", text(&out.stdout)))
}

#[test]
fn info_text_names_the_default_device() {
    let dir = scratch("info-text");
    let out = softgpu_in(&dir, &[], &["info"]);
    ok(&out, "softgpu info");
    let stdout = text(&out.stdout);
    let marketing = profile("gfx1151")["marketing_name"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!marketing.is_empty());
    for want in [
        "device 0: gfx1151",
        marketing.as_str(),
        "amdgcn-amd-amdhsa--gfx1151",
        "compute units",
        // Each value says where it comes from, and the profile its fidelity.
        "SIMDs per CU         2  [llvm: ",
        "fidelity timing-estimated, conformance claims not allowed",
        "built-in profiles: gfx1151, gfx1100, gfx1101, gfx1102, gfx1103, gfx1150, gfx1152, gfx1200, gfx1201, gfx1030, gfx1031, gfx1032, gfx1034, gfx1035, gfx1036",
        // The figures the time estimate uses, with theirs.
        "analytical performance (peaks: 29.7 TFLOP/s FP32 with dual issue, 256 GB/s memory)",
        "    f64_clocks               32  [amd-spec: ",
        "    dpp16-reserved-controls-read-row-lane-0: the DPP16 controls reserved",
    ] {
        assert!(stdout.contains(want), "info lacks {want:?}:\n{stdout}");
    }
    assert!(!stdout.contains("device 1:"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn info_json_follows_the_environment() {
    let dir = scratch("info-json");
    let json = info_json(&dir, &[]);
    let devices = json["devices"].as_array().expect("no devices array");
    assert_eq!(devices.len(), 1, "{json}");
    assert_eq!(devices[0]["index"], 0);
    assert_eq!(devices[0]["name"], "gfx1151");
    let want = profile("gfx1151");
    for key in [
        "marketing_name",
        "compute_units",
        "wave_sizes",
        "memory",
        "queues",
    ] {
        assert_eq!(devices[0][key], want[key], "{key}");
    }
    assert_eq!(
        devices[0]["provenance"]["lds_bytes"]["source"], "llvm",
        "{json}"
    );
    assert_eq!(devices[0]["max_fidelity"], "timing-estimated", "{json}");
    let names: Vec<&str> = json["profiles"]
        .as_array()
        .expect("no profiles array")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"gfx1151") && names.contains(&"gfx1100"),
        "{json}"
    );

    let json = info_json(&dir, &[("SOFTGPU_DEVICES", "2")]);
    let devices = json["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "{json}");
    assert_eq!(devices[1]["index"], 1);
    assert_eq!(devices[1]["name"], "gfx1151");

    let json = info_json(&dir, &[("SOFTGPU_PROFILE", "gfx1100")]);
    assert_eq!(json["devices"][0]["name"], "gfx1100", "{json}");
    assert_eq!(
        json["devices"][0]["marketing_name"],
        profile("gfx1100")["marketing_name"]
    );

    for bad in ["0", "17", "two"] {
        let out = softgpu_in(&dir, &[("SOFTGPU_DEVICES", bad)], &["info", "--json"]);
        assert!(!out.status.success(), "SOFTGPU_DEVICES={bad} was accepted");
        assert!(
            text(&out.stderr).contains("SOFTGPU_DEVICES"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = softgpu_in(&dir, &[("SOFTGPU_PROFILE", "gfx9999")], &["info"]);
    assert!(!out.status.success(), "an unknown profile was accepted");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_writes_a_code_object_inspect_lists() {
    let dir = scratch("compile");
    let src = write(&dir, "vadd.cl", VADD);
    let out = softgpu_in(&dir, &[], &["compile", &src]);
    ok(&out, "softgpu compile");
    // Default output: the source with extension .hsaco.
    let hsaco = dir.join("vadd.hsaco");
    let code = std::fs::read(&hsaco).expect("no vadd.hsaco written");
    assert!(code.starts_with(b"\x7fELF"));
    let out = softgpu_in(&dir, &[], &["inspect", hsaco.to_str().unwrap()]);
    ok(&out, "softgpu inspect");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("gfx1151") && stdout.contains("kernel vadd"),
        "{stdout}"
    );

    // -o and --target.
    let other = dir.join("other.co");
    let out = softgpu_in(
        &dir,
        &[],
        &[
            "compile",
            &src,
            "-o",
            other.to_str().unwrap(),
            "--target",
            "gfx1100",
        ],
    );
    ok(&out, "softgpu compile -o --target");
    let out = softgpu_in(
        &dir,
        &[],
        &["inspect", "--target", "gfx1100", other.to_str().unwrap()],
    );
    ok(&out, "softgpu inspect gfx1100");
    assert!(
        text(&out.stdout).contains("gfx1100"),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_reports_errors_with_their_line() {
    let dir = scratch("syntax");
    let src = write(
        &dir,
        "broken.cl",
        "kernel void k(global int *p) {\n  p[0] = 1;\n  p[1] = undeclared_thing;\n}\n",
    );
    let out = softgpu_in(&dir, &[], &["compile", &src]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "a broken source compiled:\n{stderr}");
    assert!(stderr.contains("error:"), "{stderr}");
    assert!(
        stderr.contains(&format!("{src}:3:")),
        "the error does not name the file and line 3:\n{stderr}"
    );
    assert!(stderr.contains("undeclared_thing"), "{stderr}");
    assert!(!dir.join("broken.hsaco").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_names_the_packages_when_the_toolchain_is_missing() {
    let dir = scratch("notools");
    let src = write(&dir, "vadd.cl", VADD);
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let out = softgpu_in(
        &dir,
        &[("PATH", empty.to_str().unwrap())],
        &["compile", &src],
    );
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "compiled without a toolchain");
    assert!(
        stderr.contains("clang-19") && stderr.contains("apt-get install"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_defines_reach_the_source_and_warnings_are_printed() {
    let dir = scratch("defines");
    let src = write(
        &dir,
        "fill.cl",
        "kernel void fill(global float *out) {\n  int unused_conversion = 2.5;\n  out[get_global_id(0)] = VALUE * SCALE;\n}\n",
    );
    let hsaco = dir.join("fill.hsaco");
    let out = softgpu_in(
        &dir,
        &[],
        &["compile", &src, "-D", "VALUE=21.0f", "-DSCALE=2"],
    );
    ok(&out, "softgpu compile -D");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{src}:2:")) && stderr.contains("warning:"),
        "the warning is not reported as file:line:col: warning: …\n{stderr}"
    );
    let c = dir.join("c.bin");
    let out_arg = format!("{}:256", c.display());
    let out = softgpu_in(
        &dir,
        &[],
        &[
            "run",
            hsaco.to_str().unwrap(),
            "--kernel",
            "fill",
            "--grid",
            "1",
            "--block",
            "64",
            "--out",
            &out_arg,
        ],
    );
    ok(&out, "softgpu run fill");
    assert_eq!(read_f32(&c), vec![42.0; 64]);
    // Without the defines the source does not compile.
    let out = softgpu_in(&dir, &[], &["compile", &src]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("VALUE"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_compiles_a_cl_source() {
    let dir = scratch("run-cl");
    let src = write(&dir, "vadd.cl", VADD);
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let (pa, pb) = (
        f32_file(&dir.join("a.bin"), &a),
        f32_file(&dir.join("b.bin"), &b),
    );
    let pc = dir.join("c.bin");
    let out_arg = format!("{}:{}", pc.display(), 4 * n);
    let run = |tail: &[&str]| {
        let mut args = vec![
            "run", &src, "--kernel", "vadd", "--grid", "4", "--block", "256",
        ];
        args.extend(tail);
        softgpu_in(&dir, &[], &args)
    };
    let out = run(&["--in", &pa, "--in", &pb, "--out", &out_arg, "--i32", "1000"]);
    ok(&out, "softgpu run vadd.cl");
    let c = read_f32(&pc);
    assert_eq!(c.len(), n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }
    // Argument names come from the source (-cl-kernel-arg-info).
    let out = run(&["--in", &pa, "--in", &pb, "--out", &out_arg]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "a missing argument was accepted");
    assert!(stderr.contains("int n"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A HIP file as HIP programmers write one (`<hip/hip_runtime.h>`, a
/// template, printf, device malloc) runs and compiles: the kernel is found
/// by its source name, its printf reaches stdout (through the hostcall
/// buffer), its `malloc` gets memory from the listener's heap, and
/// `inspect` shows the demangled name beside the symbol.
#[test]
fn run_and_compile_take_a_real_hip_source_with_printf() {
    let dir = scratch("run-hip");
    let src = write(
        &dir,
        "scale.hip",
        "#include <hip/hip_runtime.h>\n\
         #include <cstdio>\n\
         template <typename T> __device__ T twice(T x) { return x + x; }\n\
         __global__ void scale(const float* in, float* out, int n) {\n\
           int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
           if (i < n) out[i] = twice(in[i]);\n\
           if (i == 0) {\n\
             float* p = (float*)malloc(4 * sizeof(float));\n\
             p[3] = in[1];\n\
             printf(\"scale: n = %d, in[1] = %.1f\\n\", n, p[3]);\n\
             free(p);\n\
           }\n\
         }\n",
    );
    let input: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let pin = f32_file(&dir.join("in.bin"), &input);
    let pout = dir.join("out.bin");
    let out_arg = format!("{}:256", pout.display());
    let args = [
        "run", &src, "--kernel", "scale", "--grid", "1", "--block", "64", "--in", &pin, "--out",
        &out_arg, "--i32", "64",
    ];
    let out = softgpu_in(&dir, &[], &args);
    ok(&out, "softgpu run scale.hip");
    assert!(
        text(&out.stdout).contains("scale: n = 64, in[1] = 1.0"),
        "{}",
        text(&out.stdout)
    );
    let want: Vec<f32> = input.iter().map(|x| 2.0 * x).collect();
    assert_eq!(read_f32(&pout), want);
    let object = dir.join("scale.hsaco").to_string_lossy().into_owned();
    ok(
        &softgpu_in(&dir, &[], &["compile", &src, "-o", &object]),
        "compile",
    );
    let listing = softgpu_in(&dir, &[], &["inspect", &object]);
    assert!(
        text(&listing.stdout).contains("kernel _Z5scalePKfPfi (scale(float const*, float*, int))"),
        "{}",
        text(&listing.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// OpenCL's printf (the buffered printf buffer) under `softgpu run`.
#[test]
fn run_prints_what_an_opencl_kernel_printfs() {
    let dir = scratch("run-printf");
    let src = write(
        &dir,
        "hello.cl",
        "kernel void hello(global int *x) {\n\
           if (get_global_id(0) == 1) printf(\"hello %d from work-item 1\\n\", x[1]);\n\
         }\n",
    );
    let px = dir.join("x.bin");
    std::fs::write(&px, [5i32, 6, 7, 8].map(i32::to_le_bytes).concat()).unwrap();
    let px = px.to_string_lossy().into_owned();
    let args = [
        "run", &src, "--kernel", "hello", "--grid", "1", "--block", "4", "--in", &px,
    ];
    let out = softgpu_in(&dir, &[], &args);
    ok(&out, "softgpu run hello.cl");
    assert_eq!(text(&out.stdout), "hello 6 from work-item 1\n");
    let _ = std::fs::remove_dir_all(&dir);
}
