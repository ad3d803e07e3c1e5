//! Parsed metadata and descriptors checked against LLVM's own tools:
//! `llvm-readelf-19 --notes` for the metadata and the `.amdhsa_kernel`
//! directives of `clang -S` for the kernel descriptors.

mod common;

use common::*;
use softgpu_codeobj::*;
use softgpu_test_support::tool::run_with_stdin;

fn check_meta_against_readelf(path: &std::path::Path, co: &CodeObject) {
    let notes = readelf_notes(path);
    let yk = readelf_kernels(&notes);
    assert_eq!(
        yk.len(),
        co.kernels.len(),
        "kernel count in {}",
        path.display()
    );
    assert!(
        notes.contains(&format!("amdhsa.target:   {}", co.target_id)),
        "target id {} not in notes",
        co.target_id
    );
    for y in &yk {
        let name = &y.keys[".name"];
        let k = co
            .kernel(name)
            .unwrap_or_else(|| panic!("kernel {name} not parsed"));
        let m = &k.meta;
        let num = |key: &str| -> Option<u64> { y.keys.get(key).map(|v| v.parse().unwrap()) };
        assert_eq!(y.keys[".symbol"], m.symbol);
        assert_eq!(
            num(".kernarg_segment_size"),
            Some(m.kernarg_segment_size.into()),
            "{name}"
        );
        assert_eq!(
            num(".kernarg_segment_align"),
            Some(m.kernarg_segment_align.into()),
            "{name}"
        );
        assert_eq!(
            num(".group_segment_fixed_size"),
            Some(m.group_segment_fixed_size.into()),
            "{name}"
        );
        assert_eq!(
            num(".private_segment_fixed_size"),
            Some(m.private_segment_fixed_size.into()),
            "{name}"
        );
        assert_eq!(
            num(".wavefront_size"),
            Some(m.wavefront_size.into()),
            "{name}"
        );
        assert_eq!(num(".sgpr_count"), Some(m.sgpr_count.into()), "{name}");
        assert_eq!(num(".vgpr_count"), Some(m.vgpr_count.into()), "{name}");
        assert_eq!(
            num(".sgpr_spill_count").unwrap_or(0),
            u64::from(m.sgpr_spill_count)
        );
        assert_eq!(
            num(".vgpr_spill_count").unwrap_or(0),
            u64::from(m.vgpr_spill_count)
        );
        assert_eq!(
            num(".max_flat_workgroup_size"),
            Some(m.max_flat_workgroup_size.into()),
            "{name}"
        );
        assert_eq!(
            y.keys
                .get(".uses_dynamic_stack")
                .map(|v| v == "true")
                .unwrap_or(false),
            m.uses_dynamic_stack,
            "{name}"
        );
        assert_eq!(y.keys.get(".language"), m.language.as_ref(), "{name}");
        assert_eq!(y.args.len(), m.args.len(), "{name} arg count");
        for (i, (ya, a)) in y.args.iter().zip(&m.args).enumerate() {
            let ctx = format!("{name} arg {i}");
            assert_eq!(ya[".offset"].parse::<u32>().unwrap(), a.offset, "{ctx}");
            assert_eq!(ya[".size"].parse::<u32>().unwrap(), a.size, "{ctx}");
            assert_eq!(ya[".value_kind"], a.value_kind.as_str(), "{ctx}");
            assert!(
                !matches!(a.value_kind, ValueKind::Other(_)),
                "{ctx}: unknown kind"
            );
            assert_eq!(
                a.value_kind.is_hidden(),
                ya[".value_kind"].starts_with("hidden_"),
                "{ctx}"
            );
            assert_eq!(ya.get(".name"), a.name.as_ref(), "{ctx}");
            assert_eq!(ya.get(".type_name"), a.type_name.as_ref(), "{ctx}");
            assert_eq!(ya.get(".access"), a.access.as_ref(), "{ctx}");
            assert_eq!(ya.get(".actual_access"), a.actual_access.as_ref(), "{ctx}");
            let flag = |k: &str| ya.get(k).map(|v| v == "true").unwrap_or(false);
            assert_eq!(flag(".is_const"), a.is_const, "{ctx}");
            assert_eq!(flag(".is_restrict"), a.is_restrict, "{ctx}");
            assert_eq!(flag(".is_volatile"), a.is_volatile, "{ctx}");
            assert_eq!(flag(".is_pipe"), a.is_pipe, "{ctx}");
            let space = ya.get(".address_space").map(|s| s.as_str());
            let expect = a.address_space.map(|s| match s {
                AddressSpace::Global => "global",
                AddressSpace::Constant => "constant",
                AddressSpace::Local => "local",
                AddressSpace::Private => "private",
                AddressSpace::Generic => "generic",
                AddressSpace::Region => "region",
            });
            assert_eq!(space, expect, "{ctx}");
            assert!(
                a.align.is_power_of_two() && a.offset % a.align == 0,
                "{ctx}"
            );
        }
        // Descriptor and metadata agree.
        assert_eq!(k.descriptor.wave32, m.wavefront_size == 32, "{name}");
        assert_eq!(
            k.descriptor.group_segment_fixed_size, m.group_segment_fixed_size,
            "{name}"
        );
        assert_eq!(
            k.descriptor.private_segment_fixed_size, m.private_segment_fixed_size,
            "{name}"
        );
        if co.version >= 5 {
            // Code object v4 metadata has no .uses_dynamic_stack key.
            assert_eq!(
                k.descriptor.uses_dynamic_stack, m.uses_dynamic_stack,
                "{name}"
            );
        }
    }
}

fn check_descriptors_against_asm(asm: &str, co: &CodeObject) {
    let dirs = amdhsa_directives(asm);
    assert_eq!(dirs.len(), co.kernels.len());
    for (name, d) in &dirs {
        let k = co
            .kernel(name)
            .unwrap_or_else(|| panic!("kernel {name} missing"));
        let kd = &k.descriptor;
        let b = |x: bool| i64::from(x);
        let ours: Vec<(&str, i64)> = vec![
            (
                "group_segment_fixed_size",
                kd.group_segment_fixed_size.into(),
            ),
            (
                "private_segment_fixed_size",
                kd.private_segment_fixed_size.into(),
            ),
            ("kernarg_size", kd.kernarg_size.into()),
            ("user_sgpr_count", kd.user_sgpr_count.into()),
            (
                "user_sgpr_private_segment_buffer",
                b(kd.enable_sgpr_private_segment_buffer),
            ),
            ("user_sgpr_dispatch_ptr", b(kd.enable_sgpr_dispatch_ptr)),
            ("user_sgpr_queue_ptr", b(kd.enable_sgpr_queue_ptr)),
            (
                "user_sgpr_kernarg_segment_ptr",
                b(kd.enable_sgpr_kernarg_segment_ptr),
            ),
            ("user_sgpr_dispatch_id", b(kd.enable_sgpr_dispatch_id)),
            (
                "user_sgpr_flat_scratch_init",
                b(kd.enable_sgpr_flat_scratch_init),
            ),
            (
                "user_sgpr_private_segment_size",
                b(kd.enable_sgpr_private_segment_size),
            ),
            ("wavefront_size32", b(kd.wave32)),
            ("uses_dynamic_stack", b(kd.uses_dynamic_stack)),
            ("enable_private_segment", b(kd.enable_private_segment)),
            (
                "system_sgpr_private_segment_wavefront_offset",
                b(kd.enable_private_segment),
            ),
            (
                "system_sgpr_workgroup_id_x",
                b(kd.enable_sgpr_workgroup_id_x),
            ),
            (
                "system_sgpr_workgroup_id_y",
                b(kd.enable_sgpr_workgroup_id_y),
            ),
            (
                "system_sgpr_workgroup_id_z",
                b(kd.enable_sgpr_workgroup_id_z),
            ),
            (
                "system_sgpr_workgroup_info",
                b(kd.enable_sgpr_workgroup_info),
            ),
            ("system_vgpr_workitem_id", kd.enable_vgpr_workitem_id.into()),
            ("float_round_mode_32", kd.float_round_mode_32.into()),
            ("float_round_mode_16_64", kd.float_round_mode_16_64.into()),
            ("float_denorm_mode_32", kd.float_denorm_mode_32.into()),
            ("float_denorm_mode_16_64", kd.float_denorm_mode_16_64.into()),
            ("dx10_clamp", b(kd.dx10_clamp)),
            ("ieee_mode", b(kd.ieee_mode)),
            ("fp16_overflow", b(kd.fp16_ovfl)),
            ("workgroup_processor_mode", b(kd.wgp_mode)),
            ("memory_ordered", b(kd.mem_ordered)),
            ("forward_progress", b(kd.fwd_progress)),
            ("shared_vgpr_count", kd.shared_vgpr_count.into()),
            ("accum_offset", kd.accum_offset.into()),
            ("tg_split", b(kd.tg_split)),
            (
                "exception_fp_ieee_invalid_op",
                b(kd.enable_exception_fp_invalid_operation),
            ),
            (
                "exception_fp_denorm_src",
                b(kd.enable_exception_fp_denormal_source),
            ),
            (
                "exception_fp_ieee_div_zero",
                b(kd.enable_exception_fp_division_by_zero),
            ),
            (
                "exception_fp_ieee_overflow",
                b(kd.enable_exception_fp_overflow),
            ),
            (
                "exception_fp_ieee_underflow",
                b(kd.enable_exception_fp_underflow),
            ),
            (
                "exception_fp_ieee_inexact",
                b(kd.enable_exception_fp_inexact),
            ),
            (
                "exception_int_div_zero",
                b(kd.enable_exception_int_divide_by_zero),
            ),
        ];
        let mut checked = 0;
        for (key, v) in ours {
            if let Some(&want) = d.get(key) {
                assert_eq!(v, want, "{name}: .amdhsa_{key}");
                checked += 1;
            }
        }
        assert!(checked >= 25, "{name}: only {checked} directives compared");
        // VGPR granule: 8 in wave32, 4 in wave64 (GFX10+).
        let g = if kd.wave32 { 8 } else { 4 };
        let nv = d["next_free_vgpr"].max(1);
        assert!(
            !co.target.starts_with("gfx1")
                || i64::from(kd.granulated_workitem_vgpr_count) == (nv + g - 1) / g - 1,
            "{name}: granulated VGPR count for next_free_vgpr {nv}"
        );
        assert!(kd.enabled_user_sgprs() <= u32::from(kd.user_sgpr_count));
    }
}

fn check_cl(src: &str, mcpu: &str, flags: &[&str], version: u32) -> CodeObject {
    let (path, bytes) = compile_cl(src, mcpu, flags);
    let co = load(&bytes).unwrap_or_else(|e| panic!("{src} {mcpu} {flags:?}: {e}"));
    assert_eq!(co.target, mcpu);
    assert_eq!(co.version, version);
    assert_eq!(co.target_id, format!("amdgcn-amd-amdhsa--{mcpu}"));
    check_meta_against_readelf(&path, &co);
    check_descriptors_against_asm(&compile_cl_asm(src, mcpu, flags), &co);
    for k in &co.kernels {
        assert_eq!(k.entry_offset, co.symbol(&k.name).unwrap().value);
        assert!(co.text.contains(&k.entry_offset));
        assert_eq!(co.symbol(&k.symbol).unwrap().kind, SymbolKind::Object);
        assert_eq!(co.symbol(&k.symbol).unwrap().size, 64);
    }
    co
}

#[test]
fn multi_gfx1100_v5() {
    let co = check_cl("multi.cl", "gfx1100", &[], 5);
    assert_eq!(co.metadata_version, Some([1, 2]));
    assert_eq!(co.kernels.len(), 6);
    let lds = co.kernel("lds_reverse").unwrap();
    assert_eq!(lds.meta.group_segment_fixed_size, 256);
    assert_eq!(lds.meta.reqd_workgroup_size, Some([64, 1, 1]));
    assert_eq!(lds.meta.max_flat_workgroup_size, 64);
    let p = co.kernel("private_array").unwrap();
    assert!(p.meta.private_segment_fixed_size >= 67 * 4);
    assert!(p.descriptor.enable_private_segment);
    assert_eq!(p.meta.workgroup_size_hint, Some([128, 2, 1]));
    assert!(p.meta.args[1].is_volatile);
    let d = co.kernel("dyn_lds").unwrap();
    assert_eq!(d.meta.args[1].value_kind, ValueKind::DynamicSharedPointer);
    assert_eq!(d.meta.args[1].address_space, Some(AddressSpace::Local));
    assert_eq!(d.meta.args[1].pointee_align, Some(4));
    assert!(d.meta.args[0].is_restrict);
    assert_eq!(d.meta.args[5].type_name.as_deref(), Some("float4"));
    assert_eq!(d.meta.args[5].align, 16);
    assert_eq!(d.meta.kernarg_segment_align, 16);
    let x = co.kernel("xyz").unwrap();
    assert_eq!(x.descriptor.enable_vgpr_workitem_id, 2);
    assert!(x.descriptor.enable_sgpr_workgroup_id_y && x.descriptor.enable_sgpr_workgroup_id_z);
    let im = co.kernel("images").unwrap();
    let kinds: Vec<_> = im
        .meta
        .args
        .iter()
        .take(3)
        .map(|a| a.value_kind.clone())
        .collect();
    assert_eq!(
        kinds,
        [ValueKind::Image, ValueKind::Sampler, ValueKind::Image]
    );
    assert_eq!(im.meta.args[0].access.as_deref(), Some("read_only"));
    let say = co.kernel("say").unwrap();
    assert!(say
        .meta
        .args
        .iter()
        .any(|a| a.value_kind == ValueKind::HiddenPrintfBuffer));
    assert_eq!(co.printf.len(), 1);
    assert!(co.printf[0].contains("hello %d %s"), "{:?}", co.printf);
    // v5 hidden arguments.
    let vadd_like = co.kernel("private_array").unwrap();
    assert!(vadd_like
        .meta
        .args
        .iter()
        .any(|a| a.value_kind == ValueKind::HiddenBlockCountX));
    assert!(vadd_like
        .meta
        .args
        .iter()
        .any(|a| a.value_kind == ValueKind::HiddenGroupSizeX));
    assert!(vadd_like
        .meta
        .args
        .iter()
        .any(|a| a.value_kind == ValueKind::HiddenRemainderX));
}

#[test]
fn multi_gfx1151_v4() {
    let co = check_cl("multi.cl", "gfx1151", &["-mcode-object-version=4"], 4);
    assert_eq!(co.metadata_version, Some([1, 1]));
    let k = co.kernel("say").unwrap();
    assert!(k
        .meta
        .args
        .iter()
        .any(|a| a.value_kind == ValueKind::HiddenGlobalOffsetX));
    assert!(k
        .meta
        .args
        .iter()
        .all(|a| a.value_kind != ValueKind::HiddenBlockCountX));
}

#[test]
fn multi_wave64() {
    let co = check_cl("multi.cl", "gfx1100", &["-mwavefrontsize64"], 5);
    for k in &co.kernels {
        assert!(!k.descriptor.wave32, "{}", k.name);
        assert_eq!(k.meta.wavefront_size, 64);
        assert_eq!(k.descriptor.wavefront_size(), 64);
    }
}

#[test]
fn vadd_gfx1200_and_gfx1201() {
    for t in ["gfx1200", "gfx1201"] {
        let co = check_cl("vadd.cl", t, &[], 5);
        assert!(co.kernels[0].descriptor.wave32);
    }
}

#[test]
fn vadd_gfx90a_wave64_only() {
    let co = check_cl("vadd.cl", "gfx90a", &[], 5);
    assert_eq!(co.kernels[0].meta.wavefront_size, 64);
}

#[test]
fn hip_function_pointers_and_recursion() {
    let (path, bytes) = compile_hip("fptr.hip", &["gfx1151"], false, &[]);
    let co = load(&bytes).unwrap();
    assert_eq!(co.target, "gfx1151");
    check_meta_against_readelf(&path, &co);
    let r = co.kernel("recurse").unwrap();
    assert!(r.meta.uses_dynamic_stack);
    assert!(r.descriptor.uses_dynamic_stack);
    assert!(r.descriptor.enable_private_segment);
    let a = co.kernel("apply").unwrap();
    assert!(a.descriptor.uses_dynamic_stack);
    // The function-pointer table: one RELATIVE64 per entry, pointing at functions.
    let rel: Vec<_> = co
        .image
        .relocations
        .iter()
        .filter(|r| r.kind == RelocKind::Relative64)
        .collect();
    assert_eq!(rel.len(), 3);
    let ops = co.symbol("ops").unwrap();
    let base = 0x1_2345_0000u64;
    let placed = co.image.place(base).unwrap();
    let mut targets = Vec::new();
    for i in 0..3 {
        let at = (ops.value + 8 * i) as usize;
        let v = u64::from_le_bytes(placed[at..at + 8].try_into().unwrap());
        targets.push(v - base);
    }
    for (t, f) in targets.iter().zip(["_Z4add1i", "_Z5twicei", "_Z3negi"]) {
        let s = co.symbol(f).unwrap_or_else(|| panic!("symbol {f}"));
        assert_eq!(*t, s.value, "{f}");
        assert_eq!(s.kind, SymbolKind::Function);
        assert!(co.text.contains(t));
    }
}

/// Source locations from the code object's DWARF (`-g`) agree with
/// `llvm-symbolizer-19` at every 4-byte step of the text: the same frames
/// (innermost first, then the functions it was inlined into), each with
/// the same file, line and column.
#[test]
fn source_frames_match_llvm_symbolizer() {
    let (path, bytes) = compile_cl("multi.cl", "gfx1151", &["-g"]);
    let co = load(&bytes).unwrap();
    let debug = co.debug.as_ref().expect("a -g code object has line tables");
    let offsets: Vec<u64> = co.text.clone().step_by(4).collect();
    let input: String = offsets.iter().map(|o| format!("{o:#x}\n")).collect();
    let out = run_with_stdin(
        "llvm-symbolizer-19",
        &[
            &format!("--obj={}", path.display()),
            "--functions=none",
            "--inlining",
        ],
        &input,
    );
    // One block of "file:line:column" lines per address, blank-separated.
    let blocks: Vec<Vec<&str>> = out
        .split("\n\n")
        .map(|b| b.lines().filter(|l| !l.is_empty()).collect())
        .filter(|b: &Vec<&str>| !b.is_empty())
        .collect();
    assert_eq!(blocks.len(), offsets.len(), "{out}");
    let mut located = 0;
    for (offset, want) in offsets.iter().zip(&blocks) {
        let frames = debug.frames(*offset);
        if want == &["??:0:0"] {
            assert!(
                frames.iter().all(|f| f.line.is_none()),
                "{offset:#x}: {frames:?}"
            );
            continue;
        }
        let got: Vec<String> = frames
            .iter()
            .map(|f| {
                format!(
                    "{}:{}:{}",
                    f.file.as_deref().unwrap_or("??"),
                    f.line.unwrap_or(0),
                    f.column.unwrap_or(0)
                )
            })
            .collect();
        // Line 0 (code the compiler made, tied to no line): the symbolizer
        // still prints a column, addr2line drops both; the file must agree.
        let want: Vec<String> = want
            .iter()
            .map(|w| match w.rsplitn(3, ':').collect::<Vec<_>>().as_slice() {
                [_, "0", file] => format!("{file}:0:0"),
                _ => w.to_string(),
            })
            .collect();
        assert_eq!(got, want, "at {offset:#x}");
        located += 1;
    }
    assert!(
        located > offsets.len() / 2,
        "{located} of {} located",
        offsets.len()
    );
    // Without -g there is nothing to read.
    let (_, plain) = compile_cl("multi.cl", "gfx1151", &[]);
    assert!(load(&plain).unwrap().debug.is_none());
}
