//! Kernels found by their descriptor symbols (`NAME.kd`) alone, as ROCm's
//! loader finds kernels: hand-written assembly may carry no metadata note,
//! or notes for some kernels only. Such a kernel takes its kernarg segment
//! as one by-value argument of the descriptor's `KERNARG_SIZE` bytes.

mod common;
use common::*;
use softgpu_exec::{Arg, DispatchError};
use softgpu_test_support::kernel::{self, Kernel};

/// What each kernel does: store the dword at kernarg offset 8 to the
/// address at offset 0.
const BODY: &str = "\ts_load_b64 s[2:3], s[0:1], 0x0
\ts_load_b32 s4, s[0:1], 0x8
\ts_waitcnt lgkmcnt(0)
\tv_mov_b32 v1, s4
\tv_mov_b32 v0, 0
\tglobal_store_b32 v0, v1, s[2:3]
\ts_endpgm";

/// Wave32 kernels `NAME` running [`BODY`]; with `metadata`, the note
/// describes one (two arguments), else none does.
fn assembled(kernels: &[(&str, bool)]) -> Vec<u8> {
    let kernels: Vec<Kernel> = (kernels.iter())
        .map(|&(name, metadata)| Kernel {
            name,
            body: BODY,
            kernarg: 16,
            kernarg_ptr: true,
            args: &[
                "{ .address_space: global, .offset: 0, .size: 8, .value_kind: global_buffer }",
                "{ .offset: 8, .size: 4, .value_kind: by_value }",
            ],
            metadata,
            ..Kernel::default()
        })
        .collect();
    kernel::assemble("gfx1100", &kernel::source("gfx1100", &kernels))
}

/// The kernarg segment of the kernels: the output address, then the value.
fn segment(out: u64, value: u32) -> Vec<u8> {
    let mut bytes = out.to_le_bytes().to_vec();
    bytes.extend(value.to_le_bytes());
    bytes.extend([0; 4]);
    bytes
}

#[test]
fn a_code_object_without_metadata_runs_its_kernels_by_their_descriptors() {
    let gpu = Gpu::new("gfx1100");
    let prog = gpu.dev.load(&assembled(&[("bare", false)])).expect("load");
    let kernels = &prog.code_object.kernels;
    assert_eq!(kernels.len(), 1);
    let k = &kernels[0];
    assert_eq!((k.name.as_str(), k.symbol.as_str()), ("bare", "bare.kd"));
    assert!(!k.meta.described);
    // One argument spanning the descriptor's 16-byte kernarg segment.
    assert_eq!(k.meta.args.len(), 1);
    assert_eq!((k.meta.args[0].offset, k.meta.args[0].size), (0, 16));
    assert_eq!(k.meta.wavefront_size, 32);

    let out = gpu.zeros(4);
    gpu.run(
        &prog,
        "bare",
        [32, 1, 1],
        [32, 1, 1],
        &[Arg::Bytes(segment(out.addr(), 0xC0FFEE))],
    );
    assert_eq!(gpu.read::<u32>(&out), [0xC0FFEE]);

    // Arguments it cannot know are refused, not laid out by guess.
    let wrong = gpu.try_run(
        &prog,
        "bare",
        [32, 1, 1],
        [32, 1, 1],
        0,
        &[buf(&out), Arg::U32(1)],
    );
    assert!(
        matches!(wrong, Err(DispatchError::BadArguments { .. })),
        "{wrong:?}"
    );
}

#[test]
fn kernels_a_note_leaves_out_are_found_beside_the_described_ones() {
    let gpu = Gpu::new("gfx1100");
    let code = assembled(&[("noted", true), ("unnoted", false)]);
    let prog = gpu.dev.load(&code).expect("load");
    let names: Vec<(&str, bool)> = (prog.code_object.kernels.iter())
        .map(|k| (k.name.as_str(), k.meta.described))
        .collect();
    assert_eq!(names, [("noted", true), ("unnoted", false)]);
    let (a, b) = (gpu.zeros(4), gpu.zeros(4));
    gpu.run(
        &prog,
        "noted",
        [32, 1, 1],
        [32, 1, 1],
        &[buf(&a), Arg::U32(7)],
    );
    gpu.run(
        &prog,
        "unnoted",
        [32, 1, 1],
        [32, 1, 1],
        &[Arg::Bytes(segment(b.addr(), 9))],
    );
    assert_eq!(
        (gpu.read::<u32>(&a), gpu.read::<u32>(&b)),
        (vec![7], vec![9])
    );
}

/// A gfx90a kernel `k` of `body` whose descriptor allocates 64 VGPRs and
/// splits them at `accum_offset` (ArchVGPRs below, AccVGPRs from there),
/// found by its descriptor.
fn cdna_kernel(body: &str, accum_offset: u32) -> Vec<u8> {
    let source = format!(
        "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"\n\t.amdhsa_code_object_version 5\n\
         \t.text\n\t.globl k\n\t.p2align 8\n\t.type k,@function\nk:\n{body}\n\ts_endpgm\n\
         .Lk_end:\n\t.size k, .Lk_end-k\n\
         \t.rodata\n\t.p2align 6\n\t.amdhsa_kernel k\n\
         \t\t.amdhsa_next_free_vgpr 64\n\t\t.amdhsa_next_free_sgpr 8\n\
         \t\t.amdhsa_accum_offset {accum_offset}\n\t.end_amdhsa_kernel\n"
    );
    kernel::assemble("gfx90a", &source)
}

/// CDNA's unified VGPR file: code that names a VGPR at or past its
/// descriptor's ACCUM_OFFSET, or an AccVGPR past the allocation, would use
/// the other file's registers on hardware; softgpu keeps the files apart,
/// so it refuses such a launch, naming the instruction, rather than run it
/// differently. Code within the split runs.
#[test]
fn cdna_code_past_its_register_split_is_refused() {
    let gpu = Gpu::new("gfx90a");
    let within = [
        "\tv_add_f64 v[30:31], v[0:1], v[0:1]",
        "\tv_mov_b32 v31, 0",
        "\tv_accvgpr_write_b32 a31, 0",
        "\tv_mov_b32 v0, 1",
    ];
    for body in within {
        let prog = gpu.dev.load(&cdna_kernel(body, 32)).expect("load");
        let ran = gpu.try_run(&prog, "k", [64, 1, 1], [64, 1, 1], 0, &[]);
        assert!(ran.is_ok(), "{body}: {ran:?}");
    }
    // v32 is a0 on hardware; a32 would be v64, past the 64 allocated.
    for (body, says) in [
        ("\tv_mov_b32 v32, 0", "v32 is past its ArchVGPRs"),
        // A 64-bit operand's last register counts.
        ("\tv_add_f64 v[32:33], v[0:1], v[0:1]", "v33 is past"),
        ("\tv_accvgpr_write_b32 a32, 0", "a32 is past its allocation"),
    ] {
        let prog = gpu.dev.load(&cdna_kernel(body, 32)).expect("load");
        match gpu.try_run(&prog, "k", [64, 1, 1], [64, 1, 1], 0, &[]) {
            Err(e @ DispatchError::BadLaunch { rule, .. }) => {
                assert_eq!(rule, softgpu_exec::LaunchRule::CodeObject);
                let text = e.to_string();
                assert!(text.contains(says), "{body}: {text}");
                assert!(
                    text.contains("ACCUM_OFFSET is 32") || text.contains("64 VGPRs"),
                    "{text}"
                );
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}
