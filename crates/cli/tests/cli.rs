//! End-to-end tests of the `softgpu` binary on the committed example code
//! objects of `examples/bin/`.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{f32_file, scratch, softgpu_command, text};
use softgpu_test_support::bytes::bytes_of;
use softgpu_test_support::kernel::{self, Kernel};
use softgpu_test_support::tool;

fn softgpu(args: &[&str]) -> Output {
    softgpu_command()
        .args(args)
        .output()
        .expect("cannot run softgpu")
}

fn example(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bin")
        .join(name);
    assert!(
        p.exists(),
        "{} is missing (regenerate with examples/build.sh)",
        p.display()
    );
    p.to_string_lossy().into_owned()
}

#[test]
fn demo_passes() {
    let out = softgpu(&["demo", "--threads", "2"]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "softgpu demo failed:\n{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("12 of 12 checks passed"), "{stdout}");
    assert!(stdout.contains("2 worker threads"), "{stdout}");
    assert!(
        stdout.contains("Error::Fault") && stdout.contains("kernel sgemm"),
        "no fault report in:\n{stdout}"
    );
}

/// The demo has no --target: it runs on whatever device SOFTGPU_PROFILE
/// makes, with the code objects embedded for that target.
#[test]
fn demo_passes_on_every_family() {
    for part in ["gfx1100", "gfx1201", "gfx1030", "gfx90a", "gfx942"] {
        let out = softgpu_command()
            .args(["demo", "--threads", "1"])
            .env("SOFTGPU_PROFILE", part)
            .output()
            .expect("cannot run softgpu");
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
        assert!(stdout.contains(&format!("is {part}")), "{stdout}");
        assert!(stdout.contains("12 of 12 checks passed"), "{stdout}");
    }
}

#[test]
fn run_vector_add_writes_output_and_stats() {
    let dir = scratch("run");
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let (pa, pb) = (
        f32_file(&dir.join("a.bin"), &a),
        f32_file(&dir.join("b.bin"), &b),
    );
    let pc = dir.join("c.bin");
    let out_arg = format!("{}:{}", pc.display(), 4 * n);
    let file = example("vector_add-gfx1151.hsaco");
    let out = softgpu(&[
        "run",
        &file,
        "--kernel",
        "vector_add",
        "--grid",
        "4",
        "--block",
        "256",
        "--in",
        &pa,
        "--in",
        &pb,
        "--out",
        &out_arg,
        "--i32",
        "1000",
        "--stats",
    ]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "softgpu run failed:\n{stdout}\n{}",
        text(&out.stderr)
    );
    let c: Vec<f32> = std::fs::read(&pc)
        .unwrap()
        .chunks_exact(4)
        .map(|x| f32::from_le_bytes(x.try_into().unwrap()))
        .collect();
    assert_eq!(c.len(), n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }
    let last = stdout.lines().last().expect("no output");
    let json: serde_json::Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("last line is not JSON ({e}): {last}"));
    for key in [
        "wave_instructions",
        "lane_instructions",
        "seconds",
        "workgroups",
        "threads",
    ] {
        assert!(
            json.get(key).is_some_and(|v| v.is_number()),
            "JSON lacks numeric {key}: {last}"
        );
    }
    assert_eq!(json["workgroups"], 4);
    assert_eq!(json["threads"], 1024);
    // Labelled with the profile and the fidelity its figures have: with
    // the time estimate on the real part, timing-estimated.
    assert_eq!(json["fidelity"], "timing-estimated", "{last}");
    assert_eq!(json["profile"], "softgpu/gfx1151/radeon-8060s", "{last}");
    let estimate = &json["estimate"];
    assert!(estimate["seconds"].as_f64().unwrap() > 0.0, "{last}");
    assert!(estimate["bound"].is_string(), "{last}");
    // The occupancy on the real part, at the launch's block of 256.
    assert_eq!(json["occupancy"]["workgroup_size"], 256, "{last}");
    assert_eq!(json["occupancy"]["waves_per_simd"], 16, "{last}");
    // Lanes past n are masked off, so fewer lane instructions than 32 per wave instruction.
    let (waves, lanes) = (
        json["wave_instructions"].as_u64().unwrap(),
        json["lane_instructions"].as_u64().unwrap(),
    );
    assert!(waves > 0 && lanes > waves && lanes < 32 * waves, "{last}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A code object for another processor runs on a device for it without
/// `--target` (the device follows the object), and `inspect` and `disasm`
/// read it the same way; `--target` still decides, and a mismatch says
/// both processors.
#[test]
fn a_code_object_chooses_its_device() {
    let dir = scratch("own-target");
    let object = dir.join("vector_add-gfx1100.hsaco");
    let object = object.to_str().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kernels/vector_add.cl");
    let compiled = softgpu(&[
        "compile",
        source.to_str().unwrap(),
        "--target",
        "gfx1100",
        "-o",
        object,
    ]);
    assert!(compiled.status.success(), "{}", text(&compiled.stderr));
    let out = vector_add_of(&dir, object, &[], &["--stats"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stats = text(&out.stdout);
    assert!(stats.contains(r#""target":"gfx1100""#), "{stats}");
    let inspected = softgpu(&["inspect", object]);
    assert!(inspected.status.success(), "{}", text(&inspected.stderr));
    assert!(text(&inspected.stdout).contains("gfx1100"));
    assert!(softgpu(&["disasm", object]).status.success());
    let refused = vector_add_of(&dir, object, &["--target", "gfx1151"], &[]);
    let why = text(&refused.stderr);
    assert!(
        !refused.status.success() && why.contains("gfx1100") && why.contains("gfx1151"),
        "{why}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `softgpu run` of `vector_add` in `object` over 64 items, with `options`
/// before the kernel arguments and `tail` after them.
fn vector_add_of(dir: &Path, object: &str, options: &[&str], tail: &[&str]) -> Output {
    let pb = f32_file(&dir.join("b.bin"), &[2.0; 64]);
    let out = format!("{}:256", dir.join("c.bin").display());
    let mut words = vec!["--in", &pb, "--out", &out, "--i32", "64"];
    words.extend(tail);
    run_64(dir, object, options, &words)
}

/// `softgpu run` of `vector_add` in the committed gfx1151 object over 64
/// items, `a` given and `tail` the rest of its arguments.
fn run_vector_add_with(dir: &Path, tail: &[&str]) -> Output {
    run_64(dir, &example("vector_add-gfx1151.hsaco"), &[], tail)
}

/// `softgpu run` of `vector_add` in `object`, one workgroup of 64, with
/// `options`, then `--in a.bin` (64 ones) and `words`.
fn run_64(dir: &Path, object: &str, options: &[&str], words: &[&str]) -> Output {
    let pa = f32_file(&dir.join("a.bin"), &[1.0; 64]);
    let mut args = vec![
        "run",
        object,
        "--kernel",
        "vector_add",
        "--grid",
        "1",
        "--block",
        "64",
    ];
    args.extend(options);
    args.extend(["--in", &pa]);
    args.extend(words);
    softgpu(&args)
}

#[test]
fn run_rejects_wrong_argument_count() {
    let dir = scratch("count");
    let out_arg = format!("{}:256", dir.join("c.bin").display());
    // a, b, c given; n missing.
    let b = f32_file(&dir.join("b.bin"), &[1.0; 64]);
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "a missing argument was accepted");
    assert!(
        stderr.contains("expects 4 arguments") && stderr.contains("got 3"),
        "{stderr}"
    );
    assert!(
        stderr.contains("int n"),
        "the message does not name the missing argument: {stderr}"
    );
    // One too many.
    let out = run_vector_add_with(
        &dir,
        &["--in", &b, "--out", &out_arg, "--i32", "64", "--i32", "1"],
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("got 5"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_rejects_wrong_argument_kind() {
    let dir = scratch("kind");
    let out_arg = format!("{}:256", dir.join("c.bin").display());
    let b = f32_file(&dir.join("b.bin"), &[1.0; 64]);
    // A value where the pointer b is expected.
    let out = run_vector_add_with(&dir, &["--i32", "7", "--out", &out_arg, "--i32", "64"]);
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "a value for a pointer argument was accepted"
    );
    assert!(
        stderr.contains("argument 1") && stderr.contains(" b)") && stderr.contains("pointer"),
        "{stderr}"
    );
    // A buffer where the int n is expected.
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg, "--in", &b]);
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "a buffer for an int argument was accepted"
    );
    assert!(
        stderr.contains("argument 3") && stderr.contains("int n"),
        "{stderr}"
    );
    // A float for the int n: refused by its declared type (it would
    // reach the kernel as 1069547520), a usage error (exit code 2).
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg, "--f32", "1.5"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("argument 3 (int n) is declared an integer")
            && stderr.contains("a floating-point value was given"),
        "{stderr}"
    );
    // An unknown kind: an unknown option, with the nearest known one.
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg, "--float", "1"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown option --float (did you mean --f32?)"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inspect_lists_kernel_and_arguments() {
    let file = example("vector_add-gfx1151.hsaco");
    let out = softgpu(&["inspect", &file]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("gfx1151") && stdout.contains("kernel vector_add"),
        "{stdout}"
    );
    for arg in [" a ", " b ", " c ", " n "] {
        assert!(
            stdout.contains(arg),
            "inspect does not show argument{arg}:\n{stdout}"
        );
    }
    let out = softgpu(&["inspect", "--json", &file]);
    assert!(out.status.success());
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("inspect --json is not JSON");
    assert_eq!(json["kernels"][0]["name"], "vector_add");
    assert_eq!(json["kernels"][0]["wavefront_size"], 32);
    // A small kernel without LDS fills the 16 wave slots of each SIMD
    // (the model itself is held to LLVM's figures in runtime/tests).
    let occ = &json["kernels"][0]["occupancy"];
    assert_eq!(occ["waves_per_simd"], 16, "{occ}");
    assert_eq!(occ["limit"], "wave slots", "{occ}");
    assert!(stdout.contains("occupancy at"), "{stdout}");
}

/// The instruction texts of a disassembly listing (`\tTEXT // OFFSET: BYTES`).
fn instructions(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| l.starts_with('\t'))
        .filter_map(|l| {
            l.split_once("//")
                .map(|(t, _)| t.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .filter(|t| !t.is_empty())
        .collect()
}

/// `softgpu disasm` prints exactly what `llvm-objdump-19 -d` prints —
/// header, section line, labels, columns, branch targets — for every
/// committed example code object (gfx1100, gfx1151, gfx1201; kernels and
/// called functions).
#[test]
fn disasm_matches_llvm_objdump() {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/bin");
    let mut objects: Vec<_> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hsaco"))
        .collect();
    objects.sort();
    assert!(objects.len() > 3, "{objects:?}");
    for object in objects {
        let file = object.to_str().unwrap();
        let ours = softgpu(&["disasm", file]);
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        let theirs = tool::run("llvm-objdump-19", &["-d", file]);
        let ours = text(&ours.stdout);
        assert!(theirs.lines().count() > 10, "{file}: {theirs}");
        for (k, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
            assert_eq!(a, b, "{file}: line {} differs", k + 1);
        }
        assert_eq!(ours, theirs, "{file}");
    }
}

/// RDNA4 (gfx1200, gfx1201) and RDNA2 (gfx1030, gfx1036) code objects,
/// compiled by clang-19 at test time, disassemble as llvm-objdump-19 prints
/// them, run on a device of their own processor, and are inspected with
/// its profile.
#[test]
fn rdna4_and_rdna2_code_disassembles_and_runs() {
    for part in ["gfx1200", "gfx1201", "gfx1030", "gfx1036"] {
        other_family_part(part);
    }
}

/// A `scale` kernel compiled for `part` into a scratch folder, whose
/// disassembly must equal llvm-objdump-19's; the folder and code object.
fn scale_kernel_disassembled(part: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(part);
    let src = dir.join("k.cl");
    std::fs::write(
        &src,
        "kernel void scale(global float *x, float a) {\n\
         uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();\n\
         x[i] = x[i] * a + 1.0f;\n}\n",
    )
    .unwrap();
    let (obj, so) = (dir.join("k.o"), dir.join("k.hsaco"));
    tool::clang_cl(&src, part, &["-O2", "-c"], &obj);
    tool::link(&[&obj], &so);
    let so_s = so.to_str().unwrap();
    let ours = softgpu(&["disasm", so_s]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let llvm = tool::run("llvm-objdump-19", &["-d", &format!("--mcpu={part}"), so_s]);
    let (ours, theirs) = (instructions(&text(&ours.stdout)), instructions(&llvm));
    assert!(
        theirs.iter().any(|t| t.starts_with("global_load_")),
        "{theirs:?}"
    );
    assert_eq!(ours, theirs);
    (dir, so)
}

/// Runs the `scale` kernel of `so` (from [`scale_kernel_disassembled`])
/// on 64 floats with a = 2: x starts zeroed, so every element must become
/// 0 * 2 + 1.
fn scale_runs(dir: &Path, so: &str) {
    let out = dir.join("x.bin");
    let run = softgpu(&[
        "run",
        so,
        "--kernel",
        "scale",
        "--grid",
        "1",
        "--block",
        "64",
        "--out",
        &format!("{}:256", out.display()),
        "--f32",
        "2",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let got = std::fs::read(&out).unwrap();
    let want: Vec<u8> = (0..64).flat_map(|_| 1.0f32.to_le_bytes()).collect();
    assert_eq!(got, want);
}

fn other_family_part(part: &str) {
    let (dir, so) = scale_kernel_disassembled(part);
    let so_s = so.to_str().unwrap();
    scale_runs(&dir, so_s);
    // The object's own processor picks its profile.
    let inspect = text(&softgpu(&["inspect", so_s]).stdout);
    assert!(inspect.contains(part), "{inspect}");
    assert!(!inspect.contains("no profile of"), "{inspect}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// CDNA's code (gfx90a; gfx940, gfx941 and gfx942 as gfx94) disassembles
/// as llvm-objdump-19 does and runs on its part (`other_family_part`), and
/// `inspect` splits the unified register file at ACCUM_OFFSET; the
/// executor runs gfx940's as its family's (a processor with no device
/// profile, so no HSA agent or HIP device, but decoded as gfx942).
#[test]
fn cdna_code_disassembles_and_runs_on_its_parts() {
    for part in ["gfx90a", "gfx942"] {
        other_family_part(part);
    }
    let (dir, so) = scale_kernel_disassembled("gfx940");
    let so_s = so.to_str().unwrap();
    scale_runs(&dir, so_s);
    let inspect = text(&softgpu(&["inspect", so_s]).stdout);
    assert!(inspect.contains(" + AGPRs 0)"), "{inspect}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The instructions of a kernel whose text (after its s_endpgm) holds
/// what compiled code rarely has: image, export, interpolation and LDS-direct instructions
/// (each followed by an ordinary one), literals whose values are inline
/// constants, a true16 high half, the zero word and words that decode to
/// nothing.
const ODD_KERNEL: &str = r#"	s_endpgm
	image_sample v[0:3], [v4, v5], s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_2D
	v_add_f32_e32 v1, v2, v3
	image_load v[0:3], v[4:5], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D
	exp mrt0 v0, v1, v2, v3 done
	v_interp_p10_f32 v0, v1, v2, v3 wait_exp:7
	lds_param_load v1, attr0.x wait_vdst:0
	v_mov_b16_e32 v1.l, v0.h
	v_add_f16_e32 v2.l, v0.h, v1.l
	.long 0x8201ff01, 0x00000000
	.long 0x8201ff01, 0xffffffff
	.long 0x00000000
	.long 0xffffffff
	s_endpgm"#;

#[test]
fn disasm_prints_what_llvm_objdump_prints_for_odd_words() {
    let dir = scratch("odd");
    let so = dir.join("k.hsaco");
    let odd = Kernel {
        body: ODD_KERNEL,
        vgprs: 32,
        sgprs: 32,
        max_workgroup: 64,
        ..Kernel::default()
    };
    // True16 syntax (`v0.h`): llvm-mc-19, as clang cannot ask for it.
    let code = kernel::assemble_with("gfx1100", "+real-true16", &odd.source("gfx1100"));
    std::fs::write(&so, code).unwrap();
    let so = so.to_str().unwrap();
    let ours = softgpu(&["disasm", so, "--target", "gfx1100"]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let llvm = tool::run("llvm-objdump-19", &["-d", "--mcpu=gfx1100", so]);
    let (ours, theirs) = (instructions(&text(&ours.stdout)), instructions(&llvm));
    for needle in [
        "image_sample",
        "v_illegal",
        ".long 0xffffffff",
        "s_addc_u32 s1, s1, 0",
    ] {
        assert!(
            theirs.iter().any(|l| l.starts_with(needle)),
            "llvm-objdump printed no {needle}: {theirs:?}"
        );
    }
    for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "instruction {k} differs");
    }
    assert_eq!(ours.len(), theirs.len(), "instruction counts differ");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture folder written by hand (as `SOFTGPU_CAPTURE` lays it out) for
/// the example vector_add, with the expected results computed on the CPU.
fn hand_made_capture(dir: &Path, n: usize) -> Vec<f32> {
    let code = std::fs::read(example("vector_add-gfx1151.hsaco")).unwrap();
    let object = softgpu_codeobj::load_for_target(&code, "gfx1151").unwrap();
    let kernel = object
        .kernels
        .iter()
        .find(|k| k.name == "vector_add")
        .unwrap();
    let base = softgpu_exec::arena::PREFERRED_BASE;
    let size = (4 * n as u64).next_multiple_of(256);
    let addrs = [
        base + 0x10000,
        base + 0x10000 + size,
        base + 0x10000 + 2 * size,
    ];
    let args = [
        softgpu_exec::Arg::Pointer(addrs[0]),
        softgpu_exec::Arg::Pointer(addrs[1]),
        softgpu_exec::Arg::Pointer(addrs[2]),
        softgpu_exec::Arg::I32(n as i32),
    ];
    let grid = [n.next_multiple_of(64) as u32, 1, 1];
    let kernarg = softgpu_exec::build_kernarg(kernel, grid, [64, 1, 1], 0, &args).unwrap();
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 1.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let c: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let pad = |v: &[f32]| {
        let mut bytes = bytes_of(v);
        bytes.resize(size as usize, 0);
        bytes
    };
    for sub in ["before", "after"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::write(dir.join(sub).join("0.bin"), pad(&a)).unwrap();
        std::fs::write(dir.join(sub).join("1.bin"), pad(&b)).unwrap();
    }
    std::fs::write(dir.join("before/2.bin"), pad(&vec![0.0; n])).unwrap();
    std::fs::write(dir.join("after/2.bin"), pad(&c)).unwrap();
    std::fs::write(dir.join("code.hsaco"), &code).unwrap();
    std::fs::write(dir.join("kernarg.bin"), &kernarg).unwrap();
    let buffers: Vec<_> = addrs
        .iter()
        .map(|a| serde_json::json!({"address": a, "size": size}))
        .collect();
    let json = serde_json::json!({
        "version": 1, "target": "gfx1151", "kernel": "vector_add",
        "grid": grid, "block": [64, 1, 1],
        "group_segment_bytes": 0, "private_segment_bytes": 0, "buffers": buffers,
    });
    std::fs::write(dir.join("dispatch.json"), json.to_string()).unwrap();
    c
}

#[test]
fn replay_reruns_a_capture_and_checks_its_results() {
    let dir = scratch("replay");
    let c = hand_made_capture(&dir, 200);
    let dir_arg = dir.to_string_lossy().into_owned();
    let out = softgpu(&["replay", &dir_arg]);
    assert!(
        out.status.success(),
        "replay failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("3 buffers identical"),
        "{}",
        text(&out.stdout)
    );
    // A capture whose recorded result differs from what the kernel computes
    // is reported, with the first differing byte.
    // 6.5 → 7.5 changes only the third byte of element 7: byte 4*7+2.
    let mut wrong = c.clone();
    assert_eq!(wrong[7], 6.5);
    wrong[7] = 7.5;
    let mut bytes = bytes_of(&wrong);
    bytes.resize(
        std::fs::metadata(dir.join("after/2.bin")).unwrap().len() as usize,
        0,
    );
    std::fs::write(dir.join("after/2.bin"), bytes).unwrap();
    let out = softgpu(&["replay", &dir_arg]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("first difference at byte 30"),
        "{}",
        text(&out.stderr)
    );
    let out = softgpu(&["replay", "/nonexistent/capture"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("dispatch.json"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_converts_to_a_chrome_timeline() {
    let dir = scratch("trace");
    let input = dir.join("t.jsonl");
    let lines = [
        r#"{"v":1,"ts":1000,"kind":"api","name":"hsa_init","dur":500,"status":0}"#,
        r#"{"v":1,"ts":2000,"kind":"packet","queue":3,"index":0,"type":"kernel_dispatch","header":2}"#,
        r#"{"v":1,"ts":2100,"kind":"dispatch","queue":3,"index":0,"kernel":"vadd","grid":[256,1,1],"block":[64,1,1],"dur":9000,"wave_instructions":80,"lane_instructions":2560,"status":"ok"}"#,
    ];
    std::fs::write(&input, lines.join("\n")).unwrap();
    let output = dir.join("t.json");
    let (i, o) = (
        input.to_string_lossy().into_owned(),
        output.to_string_lossy().into_owned(),
    );
    let out = softgpu(&["trace", &i, "-o", &o]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let timeline: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&output).unwrap()).unwrap();
    let events = timeline["traceEvents"].as_array().unwrap();
    let slice = events
        .iter()
        .find(|e| e["name"] == "vadd")
        .expect("dispatch slice");
    assert_eq!(slice["ph"], "X");
    assert_eq!(slice["tid"], 4, "queue 3 is its own track");
    assert_eq!(slice["ts"], 2.1);
    assert_eq!(slice["dur"], 9.0);
    assert_eq!(slice["args"]["grid"], serde_json::json!([256, 1, 1]));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["args"]["name"] == "queue 3"));
    // A line of another schema version is refused.
    std::fs::write(&input, r#"{"v":2,"ts":0,"kind":"api"}"#).unwrap();
    let out = softgpu(&["trace", &i, "-o", &o]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("schema version"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that goes away (`softgpu info | head`) ends the command
/// quietly, as with other tools, not with a panic about a broken pipe.
#[test]
fn a_closed_pipe_ends_output_quietly() {
    let mut child = softgpu_command()
        .arg("info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the first write can happen.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "a panic's exit status");
}

/// A kernel writing past an `--out` buffer: `softgpu run` reports the
/// overflow against the allocation, with the argument's name from the
/// metadata, and exits non-zero.
/// A misspelled option before the kernel's name is named as unknown (not
/// "--kernel not provided"), with the nearest option, exit code 2; a
/// kernel fault exits with 3.
#[test]
fn unknown_options_and_faults_have_their_own_exit_codes() {
    let object = example("vector_add-gfx1151.hsaco");
    let out = softgpu(&["run", &object, "--kernal", "vector_add", "--grid", "1"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown option --kernal (did you mean --kernel?)"),
        "{stderr}"
    );
    let out = softgpu(&["run", &object, "--grid", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--kernel NAME is required"));
    let dir = scratch("exit-fault");
    let b = f32_file(&dir.join("b.bin"), &[1.0; 64]);
    let out_arg = format!("{}:240", dir.join("c.bin").display());
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg, "--i32", "64"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_reports_an_overflow_of_an_out_buffer_by_argument_name() {
    let dir = scratch("overflow");
    let b = f32_file(&dir.join("b.bin"), &[1.0; 64]);
    // 64 work-items add 64 floats; c holds 60.
    let out_arg = format!("{}:240", dir.join("c.bin").display());
    let out = run_vector_add_with(&dir, &["--in", &b, "--out", &out_arg, "--i32", "64"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    let report = format!("{stdout}\n{stderr}");
    for want in [
        "0 bytes past the end of a 240-byte allocation",
        "kernel argument `c`",
        // wave32: work-item 60 is lane 28 of wave 1.
        "wave 1, lane 28",
    ] {
        assert!(
            report.contains(want),
            "the report lacks {want:?}:\n{report}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
