//! Instruction semantics on small hand-written gfx11 assembly kernels.
//!
//! Each test assembles a kernel with clang-19 / ld.lld-19 (the tests fail,
//! never skip, when the Debian packages clang-19, lld-19 and llvm-19 are
//! missing), runs one wave32 workgroup of 32 lanes, and checks what it
//! stored against values computed here.
//!
//! Kernel ABI of every test: `s[0:1]` kernarg pointer; the preamble loads
//! `s[4:5]` = out, `s[6:7]` = in, and sets `v1` = lane × 4. Input word
//! `k * 32 + lane` is read with [`ld`], output word `k * 32 + lane` written
//! with [`st`].

use softgpu_exec::{Arg, Device, DeviceConfig, DispatchDesc, Launch};
use softgpu_test_support::kernel::{self, Kernel};

const LANES: usize = 32;

/// Optional kernel resources.
#[derive(Default, Clone, Copy)]
struct Res {
    lds: u32,
    scratch: u32,
    /// Assemble with true16 syntax (`v0.h`): llvm-mc-19
    /// `-mattr=+real-true16`, which clang-19 cannot pass to its assembler.
    true16: bool,
}

/// Assembles `body` into a code object with kernel `k`.
fn assemble(body: &str, res: Res) -> Vec<u8> {
    let body = format!(
        "\ts_load_b128 s[4:7], s[0:1], 0x0\n\ts_waitcnt lgkmcnt(0)\n\
         \tv_lshlrev_b32 v1, 2, v0\n{body}\n\ts_endpgm"
    );
    let kernel = Kernel {
        body: &body,
        private: res.scratch.into(),
        lds: res.lds.into(),
        kernarg: 16,
        kernarg_ptr: true,
        private_segment: res.scratch > 0,
        vgprs: 64,
        sgprs: 32,
        max_workgroup: LANES as u32,
        args: &[
            "{ .address_space: global, .offset: 0, .size: 8, .value_kind: global_buffer }",
            "{ .address_space: global, .offset: 8, .size: 8, .value_kind: global_buffer }",
        ],
        directives: &[
            ".amdhsa_system_sgpr_workgroup_id_x 1",
            ".amdhsa_system_vgpr_workitem_id 0",
            ".amdhsa_float_denorm_mode_32 3",
            ".amdhsa_float_denorm_mode_16_64 3",
            ".amdhsa_ieee_mode 1",
            ".amdhsa_dx10_clamp 1",
        ],
        ..Kernel::default()
    };
    let source = kernel.source("gfx1100");
    if res.true16 {
        kernel::assemble_with("gfx1100", "+real-true16", &source)
    } else {
        kernel::assemble("gfx1100", &source)
    }
}

/// A deterministic gfx1100 device (one worker thread) for these tests.
fn test_device() -> Device {
    let mut config = DeviceConfig::new("gfx1100").unwrap();
    config
        .arena_bytes(64 << 20)
        .settings_mut()
        .threads(1)
        .unwrap()
        // Both tiers, compared: these cases hold the JIT to the interpreter.
        .jit(softgpu_exec::JitMode::Verify)
        .unwrap();
    Device::new(&config).unwrap()
}

/// Runs `body` over one 32-lane wave with input words `input` and returns
/// `out_words` output words (zero-initialised).
fn run_with(body: &str, res: Res, input: &[u32], out_words: usize) -> Vec<u32> {
    let code = assemble(body, res);
    let dev = test_device();
    let prog = dev.load(&code).unwrap();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let inb = dev
        .alloc_from(if bytes.is_empty() { &[0; 4] } else { &bytes })
        .unwrap();
    let outb = dev.alloc_zeroed(4 * out_words as u64).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [LANES as u32, 1, 1],
        dynamic_lds: 0,
    };
    let args = [Arg::Buffer(outb), Arg::Buffer(inb)];
    dev.dispatch(&DispatchDesc::launch(
        &prog,
        prog.kernel("k").unwrap(),
        &launch,
        &args,
    ))
    .unwrap_or_else(|e| panic!("dispatch failed: {e}"));
    dev.read(&outb)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn run(body: &str, input: &[u32], out_words: usize) -> Vec<u32> {
    run_with(body, Res::default(), input, out_words)
}

/// Loads input word `k * 32 + lane` into `reg`.
fn ld(reg: &str, k: usize) -> String {
    format!(
        "\tglobal_load_b32 {reg}, v1, s[6:7] offset:{}\n\ts_waitcnt vmcnt(0)\n",
        128 * k
    )
}

/// Stores `reg` to output word `k * 32 + lane`.
fn st(reg: &str, k: usize) -> String {
    format!("\tglobal_store_b32 v1, {reg}, s[4:5] offset:{}\n", 128 * k)
}

/// Input columns: column `c` holds `cols[c][lane]`.
fn columns(cols: &[[u32; LANES]]) -> Vec<u32> {
    cols.iter().flat_map(|c| c.iter().copied()).collect()
}

fn lanes(f: impl Fn(usize) -> u32) -> [u32; LANES] {
    std::array::from_fn(f)
}

fn fb(x: f32) -> u32 {
    x.to_bits()
}

/// Output column `k`.
fn col(out: &[u32], k: usize) -> &[u32] {
    &out[k * LANES..(k + 1) * LANES]
}

fn check(out: &[u32], k: usize, what: &str, want: impl Fn(usize) -> u32) {
    for l in 0..LANES {
        assert_eq!(
            col(out, k)[l],
            want(l),
            "{what}: lane {l}: got {:#x}, want {:#x}",
            col(out, k)[l],
            want(l)
        );
    }
}

/// A few awkward f32 inputs per lane.
fn floats(seed: u32) -> [u32; LANES] {
    lanes(|l| fb(((l as f32) - 11.5) * 0.37 * (seed as f32 + 1.0)))
}

#[test]
fn vop3_abs_neg_clamp_omod() {
    let (a, b) = (floats(1), floats(2));
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_add_f32_e64 v4, |v2|, -v3\n".to_string(),
        "\tv_add_f32_e64 v5, v2, v3 clamp\n".to_string(),
        "\tv_mul_f32_e64 v6, v2, v3 mul:2\n".to_string(),
        "\tv_fma_f32 v7, -v2, v3, 1.0 div:2\n".to_string(),
        st("v4", 0),
        st("v5", 1),
        st("v6", 2),
        st("v7", 3),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b]), 4 * LANES);
    let (fa, fb_) = (
        |l: usize| f32::from_bits(a[l]),
        |l: usize| f32::from_bits(b[l]),
    );
    check(&out, 0, "|a| + -b", |l| fb(fa(l).abs() - fb_(l)));
    check(&out, 1, "clamp", |l| fb((fa(l) + fb_(l)).clamp(0.0, 1.0)));
    // These kernels run in IEEE mode, where hardware ignores omod (the
    // instruction-level cases in vop_mode.txt cover where it applies).
    check(&out, 2, "mul:2 (ignored)", |l| fb(fa(l) * fb_(l)));
    check(&out, 3, "fma div:2 (ignored)", |l| {
        fb((-fa(l)).mul_add(fb_(l), 1.0))
    });
}

#[test]
fn dpp16_row_shift_bound_ctrl_and_row_mask() {
    let a = lanes(|l| 100 + l as u32);
    let body = [
        ld("v2", 0),
        "\tv_mov_b32 v3, 7\n\tv_mov_b32 v4, 7\n\tv_mov_b32 v5, 7\n\tv_mov_b32 v6, 7\n".to_string(),
        "\tv_mov_b32_dpp v3, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1\n".to_string(),
        "\tv_mov_b32_dpp v4, v2 row_shr:1 row_mask:0xf bank_mask:0xf\n".to_string(),
        "\tv_mov_b32_dpp v5, v2 row_ror:3 row_mask:0x2 bank_mask:0xf\n".to_string(),
        "\tv_add_nc_u32_dpp v6, v2, v2 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0x5\n"
            .to_string(),
        st("v3", 0),
        st("v4", 1),
        st("v5", 2),
        st("v6", 3),
    ]
    .concat();
    let out = run(&body, &a, 4 * LANES);
    check(&out, 0, "row_shr:1 bound_ctrl", |l| {
        if l % 16 == 0 {
            0
        } else {
            a[l - 1]
        }
    });
    check(&out, 1, "row_shr:1 keeps old", |l| {
        if l % 16 == 0 {
            7
        } else {
            a[l - 1]
        }
    });
    check(&out, 2, "row_ror:3 row 1 only", |l| {
        if l < 16 {
            7
        } else {
            a[(l & !15) | ((l + 13) % 16)]
        }
    });
    // Bank mask 0x5: only banks 0 and 2 (lanes 0-3 and 8-11 of each row) write.
    check(&out, 3, "quad_perm bank_mask", |l| {
        if (l % 16) / 4 % 2 == 0 {
            a[(l & !3) | (3 - l % 4)] + a[l]
        } else {
            7
        }
    });
}

#[test]
fn dpp8_lane_select() {
    let a = lanes(|l| l as u32 * 3 + 1);
    let body = [
        ld("v2", 0),
        "\tv_mov_b32_dpp v3, v2 dpp8:[7,6,5,4,3,2,1,0]\n".to_string(),
        "\tv_add_nc_u32_dpp v4, v2, v2 dpp8:[1,1,1,1,0,0,0,0]\n".into(),
        st("v3", 0),
        st("v4", 1),
    ]
    .concat();
    let out = run(&body, &a, 2 * LANES);
    check(&out, 0, "dpp8 reverse", |l| a[(l & !7) | (7 - l % 8)]);
    check(&out, 1, "dpp8 add", |l| {
        a[(l & !7) | if l % 8 < 4 { 1 } else { 0 }] + a[l]
    });
}

#[test]
fn vopd_halves_read_before_write() {
    let (a, b) = (floats(3), floats(4));
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_mov_b32 v4, v3\n".to_string(),
        // Y reads v2 before X overwrites it; X reads v3 before Y overwrites it.
        "\tv_dual_mov_b32 v2, v3 :: v_dual_add_f32 v3, v2, v4\n".to_string(),
        st("v2", 0),
        st("v3", 1),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b]), 2 * LANES);
    check(&out, 0, "X", |l| b[l]);
    check(&out, 1, "Y", |l| {
        fb(f32::from_bits(a[l]) + f32::from_bits(b[l]))
    });
}

#[test]
fn cndmask_with_sgpr_mask_and_carry_chain() {
    let (a, b) = (
        lanes(|l| (l as u32).wrapping_mul(0x9e37_79b9)),
        lanes(|l| (l as u32 ^ 0x55).wrapping_mul(0x85eb_ca6b)),
    );
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_cmp_gt_u32_e64 s10, v2, v3\n".to_string(),
        "\tv_cndmask_b32_e64 v4, v2, v3, s10\n".to_string(),
        // 64-bit add of {a, b} + {b, a} through the carry.
        "\tv_add_co_u32 v5, vcc_lo, v2, v3\n".to_string(),
        "\tv_add_co_ci_u32_e32 v6, vcc_lo, v3, v2, vcc_lo\n".to_string(),
        "\tv_sub_co_u32 v7, s11, v2, v3\n".to_string(),
        "\tv_cndmask_b32_e64 v8, 0, 1, s11\n".to_string(),
        st("v4", 0),
        st("v5", 1),
        st("v6", 2),
        st("v8", 3),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b]), 4 * LANES);
    check(
        &out,
        0,
        "cndmask",
        |l| if a[l] > b[l] { b[l] } else { a[l] },
    );
    let sum = |l: usize| {
        ((b[l] as u64) << 32 | a[l] as u64).wrapping_add((a[l] as u64) << 32 | b[l] as u64)
    };
    check(&out, 1, "add lo", |l| sum(l) as u32);
    check(&out, 2, "add hi", |l| (sum(l) >> 32) as u32);
    check(&out, 3, "borrow", |l| (b[l] > a[l]) as u32);
}

#[test]
fn readlane_writelane_readfirstlane() {
    let a = lanes(|l| 1000 + l as u32);
    let body = [
        ld("v2", 0),
        "\tv_mov_b32 v3, 0\n".to_string(),
        "\tv_readlane_b32 s10, v2, 5\n".to_string(),
        "\tv_writelane_b32 v3, s10, 7\n".to_string(),
        "\ts_mov_b32 exec_lo, 0xfff0\n".to_string(),
        "\tv_readfirstlane_b32 s11, v2\n".to_string(),
        "\ts_mov_b32 exec_lo, -1\n".to_string(),
        "\tv_mov_b32 v4, s11\n".to_string(),
        st("v3", 0),
        st("v4", 1),
    ]
    .concat();
    let out = run(&body, &a, 2 * LANES);
    check(&out, 0, "writelane", |l| if l == 7 { 1005 } else { 0 });
    check(&out, 1, "readfirstlane", |_| 1004);
}

#[test]
fn permlane16_and_x16() {
    let a = lanes(|l| 0x100 + l as u32);
    // Selects: lane i of each row reads lane (15 - i) of its own row (permlane16)
    // or of the other row (permlanex16).
    let (lo, hi) = (0x89ab_cdefu32, 0x0123_4567u32);
    let body = [
        ld("v2", 0),
        format!("\ts_mov_b32 s10, {lo:#x}\n\ts_mov_b32 s11, {hi:#x}\n"),
        "\tv_mov_b32 v3, 0\n\tv_mov_b32 v4, 0\n".to_string(),
        "\tv_permlane16_b32 v3, v2, s10, s11\n".to_string(),
        "\tv_permlanex16_b32 v4, v2, s10, s11\n".to_string(),
        st("v3", 0),
        st("v4", 1),
    ]
    .concat();
    let out = run(&body, &a, 2 * LANES);
    let sel = |i: usize| (((hi as u64) << 32 | lo as u64) >> (4 * i)) as usize & 15;
    check(&out, 0, "permlane16", |l| a[(l & 16) | sel(l % 16)]);
    check(&out, 1, "permlanex16", |l| a[((l & 16) ^ 16) | sel(l % 16)]);
}

#[test]
fn saveexec_and_scalar_carry_and_64bit_shifts() {
    let a = lanes(|l| l as u32);
    let body = [
        ld("v2", 0),
        "\tv_mov_b32 v3, 1\n".to_string(),
        "\tv_cmp_gt_u32_e32 vcc_lo, 10, v2\n".to_string(),
        "\ts_and_saveexec_b32 s12, vcc_lo\n".to_string(),
        "\tv_mov_b32 v3, 2\n".to_string(),
        "\ts_or_b32 exec_lo, exec_lo, s12\n".to_string(),
        // Scalar 64-bit add through SCC: 0xffffffff_fffffffe + 3.
        "\ts_mov_b32 s14, -2\n\ts_mov_b32 s15, -1\n".to_string(),
        "\ts_add_u32 s16, s14, 3\n\ts_addc_u32 s17, s15, 0\n".to_string(),
        "\ts_cselect_b32 s18, 1, 0\n".to_string(),
        "\ts_lshl_b64 s[20:21], s[14:15], 36\n".to_string(),
        "\ts_lshr_b64 s[22:23], s[14:15], 40\n".to_string(),
        "\ts_ashr_i64 s[24:25], s[14:15], 1\n".to_string(),
        "\tv_mov_b32 v4, s16\n\tv_mov_b32 v5, s17\n\tv_mov_b32 v6, s18\n".to_string(),
        "\tv_mov_b32 v7, s21\n\tv_mov_b32 v8, s22\n\tv_mov_b32 v9, s24\n".to_string(),
        // VALU 64-bit shift by a per-lane amount.
        "\tv_mov_b32 v10, 0x12345678\n\tv_mov_b32 v11, 0x9abcdef0\n".to_string(),
        "\tv_lshrrev_b64 v[12:13], v2, v[10:11]\n".to_string(),
        "\tv_ashrrev_i64 v[14:15], v2, v[10:11]\n".to_string(),
        st("v3", 0),
        st("v4", 1),
        st("v5", 2),
        st("v6", 3),
        st("v7", 4),
        st("v8", 5),
        st("v9", 6),
        st("v12", 7),
        st("v15", 8),
    ]
    .concat();
    let out = run(&body, &a, 9 * LANES);
    check(&out, 0, "saveexec", |l| if l < 10 { 2 } else { 1 });
    check(&out, 1, "s_add_u32", |_| 1);
    check(&out, 2, "s_addc_u32", |_| 0);
    check(&out, 3, "carry out", |_| 1);
    let x: u64 = 0xffff_ffff_ffff_fffe;
    check(&out, 4, "s_lshl_b64", |_| ((x << 36) >> 32) as u32);
    check(&out, 5, "s_lshr_b64", |_| (x >> 40) as u32);
    check(&out, 6, "s_ashr_i64", |_| ((x as i64) >> 1) as u32);
    let v: u64 = 0x9abc_def0_1234_5678;
    check(&out, 7, "v_lshrrev_b64", |l| (v >> l) as u32);
    check(&out, 8, "v_ashrrev_i64 hi", |l| {
        (((v as i64) >> l) >> 32) as u32
    });
}

#[test]
fn bit_ops_perm_align_bfe_bfi() {
    let a = lanes(|l| (l as u32 + 1).wrapping_mul(0x9e37_79b9));
    let b = lanes(|l| (l as u32 + 7).wrapping_mul(0x85eb_ca6b));
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_perm_b32 v4, v2, v3, 0x0c0a0703\n".to_string(),
        "\tv_alignbit_b32 v5, v2, v3, 13\n".to_string(),
        "\tv_alignbyte_b32 v6, v2, v3, 3\n".to_string(),
        "\tv_bfe_u32 v7, v2, 5, 11\n".to_string(),
        "\tv_bfe_i32 v8, v2, 20, 12\n".to_string(),
        "\tv_bfi_b32 v9, 0xff00ff0, v2, v3\n".to_string(),
        st("v4", 0),
        st("v5", 1),
        st("v6", 2),
        st("v7", 3),
        st("v8", 4),
        st("v9", 5),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b]), 6 * LANES);
    let cat = |l: usize| (a[l] as u64) << 32 | b[l] as u64;
    let byte = |l: usize, s: u32| (cat(l) >> (8 * s)) as u32 & 0xff;
    // Selector bytes (low to high): 3, 7, 0x0a (sign of byte 5), 0x0c (zero).
    check(&out, 0, "perm", |l| {
        byte(l, 3) | byte(l, 7) << 8 | (if byte(l, 5) & 0x80 != 0 { 0xff } else { 0 }) << 16
    });
    check(&out, 1, "alignbit", |l| (cat(l) >> 13) as u32);
    check(&out, 2, "alignbyte", |l| (cat(l) >> 24) as u32);
    check(&out, 3, "bfe_u32", |l| (a[l] >> 5) & 0x7ff);
    check(&out, 4, "bfe_i32", |l| ((a[l] as i32) >> 20) as u32);
    check(&out, 5, "bfi", |l| (0xff00ff0 & a[l]) | (!0xff00ff0 & b[l]));
}

#[test]
fn sub_dword_and_d16_loads_and_stores() {
    let words = lanes(|l| 0x80f1_7f02u32.rotate_left(l as u32 * 3));
    let body = [
        "\tv_mov_b32 v20, 0x11112222\n".to_string(),
        "\tglobal_load_u8 v2, v1, s[6:7] offset:1\n".to_string(),
        "\tglobal_load_i8 v3, v1, s[6:7] offset:3\n".to_string(),
        "\tglobal_load_u16 v4, v1, s[6:7] offset:2\n".to_string(),
        "\tglobal_load_i16 v5, v1, s[6:7]\n".to_string(),
        "\tv_mov_b32 v6, v20\n\tv_mov_b32 v7, v20\n\tv_mov_b32 v8, v20\n".to_string(),
        "\tglobal_load_d16_b16 v6, v1, s[6:7]\n".to_string(),
        "\tglobal_load_d16_hi_b16 v7, v1, s[6:7] offset:2\n".to_string(),
        "\tglobal_load_d16_i8 v8, v1, s[6:7] offset:3\n".to_string(),
        "\ts_waitcnt vmcnt(0)\n".to_string(),
        st("v2", 0),
        st("v3", 1),
        st("v4", 2),
        st("v5", 3),
        st("v6", 4),
        st("v7", 5),
        st("v8", 6),
        // Byte and short stores into a zeroed column.
        "\tglobal_store_b8 v1, v20, s[4:5] offset:896\n".to_string(),
        "\tglobal_store_b16 v1, v20, s[4:5] offset:898\n".to_string(),
        "\tglobal_store_d16_hi_b16 v1, v20, s[4:5] offset:1024\n".to_string(),
    ]
    .concat();
    let out = run(&body, &words, 9 * LANES);
    let b = |l: usize, k: u32| (words[l] >> (8 * k)) & 0xff;
    check(&out, 0, "u8", |l| b(l, 1));
    check(&out, 1, "i8", |l| b(l, 3) as u8 as i8 as i32 as u32);
    check(&out, 2, "u16", |l| words[l] >> 16);
    check(&out, 3, "i16", |l| words[l] as u16 as i16 as i32 as u32);
    check(&out, 4, "d16 lo", |l| 0x1111_0000 | (words[l] & 0xffff));
    check(&out, 5, "d16 hi", |l| 0x2222 | (words[l] & 0xffff_0000));
    check(&out, 6, "d16 i8", |l| {
        0x1111_0000 | (b(l, 3) as u8 as i8 as u16 as u32)
    });
    check(&out, 7, "b8 + b16", |_| 0x2222_0022);
    check(&out, 8, "d16_hi b16", |_| 0x1111);
}

#[test]
fn buffer_load_out_of_range_reads_zero() {
    let a = lanes(|l| 500 + l as u32);
    let body = [
        // V#: base = in, stride 0, num_records = 64 bytes (lanes 0..15).
        "\ts_mov_b32 s8, s6\n\ts_and_b32 s9, s7, 0xffff\n\ts_mov_b32 s10, 64\n\ts_mov_b32 s11, 0x31016fac\n".to_string(),
        "\tbuffer_load_b32 v2, v1, s[8:11], 0 offen\n".to_string(),
        "\tv_mov_b32 v3, 9\n".to_string(),
        "\tbuffer_store_b32 v3, v1, s[8:11], 0 offen offset:32\n".to_string(),
        "\ts_waitcnt vmcnt(0)\n".to_string(),
        st("v2", 0),
    ]
    .concat();
    let mut input = a.to_vec();
    input.extend([0u32; LANES]);
    let out = run(&body, &input, LANES);
    check(&out, 0, "buffer load", |l| if l < 16 { a[l] } else { 0 });
    // Stores at byte 32 + 4l land for l < 8 (bytes 32..64), which the loads above already read.
}

#[test]
fn flat_routes_to_lds_and_scratch() {
    let a = lanes(|l| 77 * l as u32 + 5);
    let body = [
        ld("v2", 0),
        // LDS: write through a flat pointer into the shared aperture, read
        // back with ds_load.
        "\ts_mov_b64 s[8:9], src_shared_base\n".to_string(),
        "\tv_mov_b32 v10, v1\n\tv_mov_b32 v11, s9\n".to_string(),
        "\tflat_store_b32 v[10:11], v2\n".to_string(),
        "\ts_waitcnt vmcnt(0) lgkmcnt(0)\n".to_string(),
        "\tds_load_b32 v5, v1\n".to_string(),
        // Scratch: write with scratch_store, read back through a flat
        // pointer into the private aperture (per-lane, so every lane uses
        // the same offset).
        "\tscratch_store_b32 off, v2, off offset:8\n".to_string(),
        "\ts_mov_b64 s[12:13], src_private_base\n".to_string(),
        "\tv_mov_b32 v12, 8\n\tv_mov_b32 v13, s13\n".to_string(),
        "\tflat_load_b32 v6, v[12:13]\n".to_string(),
        "\ts_waitcnt vmcnt(0) lgkmcnt(0)\n".to_string(),
        st("v5", 0),
        st("v6", 1),
    ]
    .concat();
    let out = run_with(
        &body,
        Res {
            lds: 256,
            scratch: 16,
            ..Res::default()
        },
        &a,
        2 * LANES,
    );
    check(&out, 0, "flat -> LDS", |l| a[l]);
    check(&out, 1, "scratch -> flat", |l| a[l]);
}

#[test]
fn global_atomics_return_old_value() {
    let body = [
        "\tv_mov_b32 v2, 0\n\tv_mov_b32 v3, 1\n".to_string(),
        // Every lane adds 1 to out[0]; the returned olds are a permutation of 0..31.
        "\tglobal_atomic_add_u32 v4, v2, v3, s[4:5] glc\n".to_string(),
        "\tv_add_nc_u32 v5, 3, v0\n".to_string(),
        "\tglobal_atomic_max_u32 v6, v2, v5, s[4:5] offset:4 glc\n".to_string(),
        "\tv_mov_b32 v7, 0\n".to_string(),
        // Compare-and-swap on out[2] (initially 0): data v8 = lane+100, compare v9 = 0.
        "\tv_add_nc_u32 v8, 100, v0\n\tv_mov_b32 v9, 0\n".to_string(),
        "\tglobal_atomic_cmpswap_b32 v10, v2, v[8:9], s[4:5] offset:8 glc\n".to_string(),
        "\ts_waitcnt vmcnt(0)\n".to_string(),
        "\tglobal_store_b32 v1, v4, s[4:5] offset:128\n".to_string(),
        "\tglobal_store_b32 v1, v10, s[4:5] offset:256\n".to_string(),
    ]
    .concat();
    let out = run(&body, &[], 3 * LANES);
    assert_eq!(out[0], 32);
    assert_eq!(out[1], 34);
    let mut olds = col(&out, 1).to_vec();
    olds.sort();
    assert_eq!(olds, (0..32).collect::<Vec<u32>>());
    // Lanes run in order: lane 0 swaps (sees 0), the rest see 100.
    assert_eq!(out[2], 100);
    check(&out, 2, "cmpswap old", |l| if l == 0 { 0 } else { 100 });
}

#[test]
fn float_min_max_nan_rules_and_cmp_class() {
    let qnan = 0x7fc0_0000u32;
    let snan = 0x7fa0_0000u32;
    let a = [
        qnan,
        snan,
        fb(-0.0),
        fb(1.0),
        fb(f32::NEG_INFINITY),
        0x0000_0001,
        fb(2.0),
        qnan,
    ];
    let b = [
        fb(3.0),
        fb(3.0),
        fb(0.0),
        qnan,
        fb(-1.0),
        fb(-0.0),
        snan,
        qnan,
    ];
    let a = lanes(|l| a[l % 8]);
    let b = lanes(|l| b[l % 8]);
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_max_f32 v4, v2, v3\n".to_string(),
        "\tv_min_f32 v5, v2, v3\n".to_string(),
        // Class mask: signaling NaN (bit 0), quiet NaN (1), -inf (2), -0 (5),
        // +denormal (7): 0b1010100111.
        "\tv_cmp_class_f32_e64 s10, v2, 0xa7\n".to_string(),
        "\tv_cndmask_b32_e64 v6, 0, 1, s10\n".to_string(),
        st("v4", 0),
        st("v5", 1),
        st("v6", 2),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b]), 3 * LANES);
    // IEEE mode (RDNA3 pseudocode of V_MAX_F32/V_MIN_F32): a quiet NaN
    // operand loses to a number; a signalling NaN comes back quieted.
    let quieted = snan | 0x0040_0000;
    let want_max = [
        fb(3.0),
        quieted,
        fb(0.0),
        fb(1.0),
        fb(-1.0),
        0x0000_0001,
        quieted,
        qnan,
    ];
    let want_min = [
        fb(3.0),
        quieted,
        fb(-0.0),
        fb(1.0),
        fb(f32::NEG_INFINITY),
        fb(-0.0),
        quieted,
        qnan,
    ];
    check(&out, 0, "max", |l| want_max[l % 8]);
    check(&out, 1, "min", |l| want_min[l % 8]);
    let class = [1, 1, 1, 0, 1, 1, 0, 1];
    check(&out, 2, "cmp_class", |l| class[l % 8]);
}

fn h(x: f32) -> u32 {
    half::f16::from_f32(x).to_bits() as u32
}
fn hf(bits: u32) -> f32 {
    half::f16::from_bits(bits as u16).to_f32()
}

#[test]
fn f16_ops_and_opsel() {
    let a = lanes(|l| h(l as f32 * 0.25 - 3.0) | h(l as f32 + 0.5) << 16);
    let b = lanes(|l| h(1.5 - l as f32 * 0.125) | h(-2.0) << 16);
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_mov_b32 v4, 0\n\tv_mov_b32 v5, 0\n\tv_mov_b32 v7, 0x12340000\n".to_string(),
        "\tv_add_f16_e64 v4, v2, v3\n".to_string(),
        "\tv_mul_f16_e64 v5, -v2, |v3|\n".to_string(),
        "\tv_pk_add_f16 v6, v2, v3 op_sel:[1,0] op_sel_hi:[0,1]\n".to_string(),
        "\tv_fma_f16 v7, v2, v3, v2 op_sel:[0,1,1,0]\n".to_string(),
        "\tv_cvt_f32_f16_e64 v8, -v2\n".to_string(),
        st("v4", 0),
        st("v5", 1),
        st("v6", 2),
        st("v7", 3),
        st("v8", 4),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b]), 5 * LANES);
    let (alo, ahi) = (|l: usize| hf(a[l] & 0xffff), |l: usize| hf(a[l] >> 16));
    let (blo, bhi) = (|l: usize| hf(b[l] & 0xffff), |l: usize| hf(b[l] >> 16));
    check(&out, 0, "add_f16", |l| h(alo(l) + blo(l)));
    check(&out, 1, "mul_f16 neg/abs", |l| h(-alo(l) * blo(l).abs()));
    check(&out, 2, "pk_add op_sel", |l| {
        h(ahi(l) + blo(l)) | h(alo(l) + bhi(l)) << 16
    });
    check(&out, 3, "fma_f16 op_sel", |l| {
        0x1234_0000 | h((alo(l) as f64).mul_add(bhi(l) as f64, ahi(l) as f64) as f32)
    });
    check(&out, 4, "cvt_f32_f16 neg", |l| fb(-alo(l)));
}

/// True16 operands of the 32-bit encodings: a VGPR of 128 or more in a
/// 16-bit slot is the high half of v(N-128), for sources (src0 included),
/// destinations and DPP sources. LLVM 19 has true16 syntax only for some
/// ops; the others (`v_cvt_f32_f16`, VOPC) are written as words.
#[test]
fn true16_high_halves_in_32bit_encodings() {
    let a = lanes(|l| h(l as f32 * 0.5 - 4.0) | h(l as f32 * 0.25 + 1.0) << 16);
    let b = lanes(|l| h(2.0 - l as f32 * 0.125) | h(l as f32 - 8.0) << 16);
    let vop1 = |op: u32, d: u32, s0: u32| 0x7E00_0000u32 | d << 17 | op << 9 | s0;
    let vopc = |op: u32, s0: u32, s1: u32| 0x7C00_0000u32 | op << 17 | s1 << 9 | s0;
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_mov_b32 v4, 0x12340000\n\tv_mov_b32 v5, 0x5678\n".into(),
        "\tv_mov_b32 v6, 0xffff0000\n\tv_mov_b32 v8, 0xabcd0000\n".into(),
        // v4.l = a.h + b.l; v4.h is kept.
        "\tv_add_f16_e32 v4.l, v2.h, v3.l\n".into(),
        // A high half into a high half; the low half is kept.
        "\tv_mov_b16_e32 v5.h, v2.h\n".into(),
        "\tv_mov_b16_e32 v6.l, v3.h\n".into(),
        // v_cvt_f32_f16_e32 v7, v2.h (src0 field v130).
        format!("\t.long {:#x}\n", vop1(11, 7, 256 + 130)),
        // v_cmp_lt_f16_e32 vcc_lo, v2.h, v3.h (src0 v130, vsrc1 v131).
        format!("\t.long {:#x}\n", vopc(1, 256 + 130, 131)),
        "\tv_cndmask_b32_e64 v9, 0, 1, vcc_lo\n".into(),
        // DPP16 with high halves: lane l reads a.h of lane l^1.
        "\tv_mul_f16_dpp v8.l, v2.h, v3.h quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n".into(),
        st("v4", 0),
        st("v5", 1),
        st("v6", 2),
        st("v7", 3),
        st("v9", 4),
        st("v8", 5),
    ]
    .concat();
    let res = Res {
        true16: true,
        ..Res::default()
    };
    let out = run_with(&body, res, &columns(&[a, b]), 6 * LANES);
    let ahi = |l: usize| hf(a[l] >> 16);
    let (blo, bhi) = (|l: usize| hf(b[l] & 0xffff), |l: usize| hf(b[l] >> 16));
    check(&out, 0, "add_f16 v2.h + v3.l", |l| {
        0x1234_0000 | h(ahi(l) + blo(l))
    });
    check(&out, 1, "mov_b16 v5.h, v2.h", |l| {
        a[l] & 0xffff_0000 | 0x5678
    });
    check(&out, 2, "mov_b16 v6.l, v3.h", |l| 0xffff_0000 | b[l] >> 16);
    check(&out, 3, "cvt_f32_f16 v2.h", |l| fb(ahi(l)));
    check(&out, 4, "cmp_lt_f16 v2.h, v3.h", |l| {
        (ahi(l) < bhi(l)) as u32
    });
    check(&out, 5, "mul_f16 dpp v2.h", |l| {
        0xabcd_0000 | h(ahi(l ^ 1) * bhi(l))
    });
}

#[test]
fn dot4_iu8_signedness_from_neg_bits() {
    let a = lanes(|l| 0x80ff_7f01u32.rotate_left(l as u32 * 8 % 32));
    let b = lanes(|l| 0xfe03_8081u32.wrapping_add(l as u32 * 0x0101_0101));
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        "\tv_mov_b32 v5, 10\n".to_string(),
        "\tv_dot4_i32_iu8 v4, v2, v3, v5 neg_lo:[1,1,0]\n".to_string(),
        "\tv_dot4_i32_iu8 v6, v2, v3, v5 neg_lo:[0,1,0]\n".to_string(),
        "\tv_dot4_u32_u8 v7, v2, v3, v5\n".to_string(),
        st("v4", 0),
        st("v6", 1),
        st("v7", 2),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b]), 3 * LANES);
    let dot = |l: usize, sa: bool, sb: bool| {
        (0..4).fold(10i64, |acc, k| {
            let (x, y) = ((a[l] >> (8 * k)) & 0xff, (b[l] >> (8 * k)) & 0xff);
            let x = if sa { x as u8 as i8 as i64 } else { x as i64 };
            let y = if sb { y as u8 as i8 as i64 } else { y as i64 };
            acc + x * y
        }) as u32
    };
    check(&out, 0, "signed x signed", |l| dot(l, true, true));
    check(&out, 1, "unsigned x signed", |l| dot(l, false, true));
    check(&out, 2, "u8", |l| dot(l, false, false));
}

#[test]
fn new_valu_ops() {
    let a = lanes(|l| (l as u32 + 3).wrapping_mul(0x9e37_79b9));
    let b = lanes(|l| (l as u32 + 9).wrapping_mul(0x85eb_ca6b));
    let c = lanes(|l| (l as u32).wrapping_mul(0x0101_0101) ^ 0x0100_0001);
    let body = [
        ld("v2", 0),
        ld("v3", 1),
        ld("v4", 2),
        "\tv_lerp_u8 v5, v2, v3, v4\n".to_string(),
        "\tv_mov_b32 v6, 0\n".to_string(),
        "\tv_and_b16 v6, v2, v3\n".to_string(),
        "\ts_mov_b32 s20, 0x47000000\n\tv_cvt_pk_i16_f32 v7, s20, 0xc6fffe00\n".to_string(),
        "\tv_mov_b32 v9, 0\n".to_string(),
        "\tv_qsad_pk_u16_u8 v[10:11], v[2:3], v4, 0\n".to_string(),
        st("v5", 0),
        st("v6", 1),
        st("v7", 2),
        st("v10", 3),
        st("v11", 4),
    ]
    .concat();
    let out = run(&body, &columns(&[a, b, c]), 5 * LANES);
    let byte = |v: u32, k: u32| (v >> (8 * k)) & 0xff;
    check(&out, 0, "lerp_u8", |l| {
        (0..4).fold(0, |acc, k| {
            acc | ((byte(a[l], k) + byte(b[l], k) + (byte(c[l], k) & 1)) >> 1) << (8 * k)
        })
    });
    check(&out, 1, "and_b16", |l| a[l] & b[l] & 0xffff);
    // 32768.0 saturates to 32767; -32767.0 converts exactly.
    check(&out, 2, "cvt_pk_i16_f32", |_| {
        0x7fff | (-32767i16 as u16 as u32) << 16
    });
    let src = |l: usize| (b[l] as u64) << 32 | a[l] as u64;
    let sad = |x: u32, y: u32| {
        (0..4)
            .map(|k| (byte(x, k) as i32 - byte(y, k) as i32).unsigned_abs())
            .sum::<u32>()
    };
    let q = |l: usize| {
        (0..4).fold(0u64, |acc, k| {
            acc | (sad((src(l) >> (8 * k)) as u32, c[l]) as u64 & 0xffff) << (16 * k)
        })
    };
    check(&out, 3, "qsad lo", |l| q(l) as u32);
    check(&out, 4, "qsad hi", |l| (q(l) >> 32) as u32);
}

#[test]
fn wmma_f32_16x16x16_f16_matches_cpu_matmul() {
    // RDNA3 wave32 layout: lane l (and l + 16) holds row l of A and column l
    // of B, 16 f16 values in v[2:9] / v[10:17]; result element (2r + l/16,
    // l % 16) is in VGPR r of lane l.
    let av = |i: usize, k: usize| ((i * 3 + k * 5) % 7) as f32 - 3.0;
    let bv = |k: usize, j: usize| ((k * 2 + j) % 5) as f32 * 0.5 - 1.0;
    let mut input = Vec::new();
    for r in 0..8 {
        input.extend(lanes(|l| {
            h(av(l % 16, 2 * r)) | h(av(l % 16, 2 * r + 1)) << 16
        }));
    }
    for r in 0..8 {
        input.extend(lanes(|l| {
            h(bv(2 * r, l % 16)) | h(bv(2 * r + 1, l % 16)) << 16
        }));
    }
    let mut body: String = (0..16).map(|r| ld(&format!("v{}", r + 2), r)).collect();
    body += "\tv_mov_b32 v18, 0\n\tv_mov_b32 v19, 0\n\tv_mov_b32 v20, 0\n\tv_mov_b32 v21, 0\n";
    body += "\tv_mov_b32 v22, 0\n\tv_mov_b32 v23, 0\n\tv_mov_b32 v24, 0\n\tv_mov_b32 v25, 0\n";
    body += "\tv_wmma_f32_16x16x16_f16 v[18:25], v[2:9], v[10:17], v[18:25]\n";
    for r in 0..8 {
        body += &st(&format!("v{}", 18 + r), r);
    }
    let out = run(&body, &input, 8 * LANES);
    for r in 0..8 {
        check(&out, r, "wmma", |l| {
            let (i, j) = (2 * r + l / 16, l % 16);
            fb((0..16).map(|k| av(i, k) * bv(k, j)).sum())
        });
    }
}

#[test]
fn ds_append_and_storexchg() {
    let body = [
        "\tv_mov_b32 v2, 0\n\tds_store_b32 v2, v2\n".to_string(),
        "\ts_mov_b32 m0, 0\n".to_string(),
        "\tv_cmp_gt_u32_e32 vcc_lo, 12, v0\n".to_string(),
        "\ts_and_saveexec_b32 s10, vcc_lo\n".to_string(),
        "\tds_append v3\n".to_string(),
        "\ts_mov_b32 exec_lo, -1\n".to_string(),
        "\tds_append v4\n".to_string(),
        "\tv_add_nc_u32 v5, 1000, v0\n".to_string(),
        "\tds_storexchg_rtn_b32 v6, v1, v5 offset:4\n".to_string(),
        "\tds_storexchg_rtn_b32 v7, v1, v0 offset:4\n".to_string(),
        "\ts_waitcnt lgkmcnt(0)\n".to_string(),
        st("v3", 0),
        st("v4", 1),
        st("v6", 2),
        st("v7", 3),
    ]
    .concat();
    let out = run_with(
        &body,
        Res {
            lds: 256,
            ..Res::default()
        },
        &[],
        4 * LANES,
    );
    // The 12 active lanes all see the old counter 0 (the others keep v3 = 0).
    check(&out, 0, "append (12 lanes)", |_| 0);
    check(&out, 1, "append (32 lanes)", |_| 12);
    check(&out, 2, "storexchg first", |_| 0);
    check(&out, 3, "storexchg second", |l| 1000 + l as u32);
}

/// Runs `body` and returns the dispatch's fault report.
fn fault_of(body: &str) -> String {
    let code = assemble(body, Res::default());
    let dev = test_device();
    let prog = dev.load(&code).unwrap();
    let buf = dev.alloc_zeroed(4 * LANES as u64).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [LANES as u32, 1, 1],
        dynamic_lds: 0,
    };
    let args = [Arg::Buffer(buf), Arg::Buffer(buf)];
    match dev.dispatch(&DispatchDesc::launch(
        &prog,
        prog.kernel("k").unwrap(),
        &launch,
        &args,
    )) {
        Ok(_) => panic!("the kernel ran without a fault"),
        Err(e) => e.to_string(),
    }
}

/// Graphics instructions softgpu does not run (exports, and image ops
/// such as the `_pck` loads) decode to their full length but do not run:
/// reaching one faults with its name. Words nothing decodes fault as
/// illegal, the report saying why.
#[test]
fn graphics_instructions_fault_as_unsupported() {
    for (body, name) in [
        (
            "\timage_load_pck v0, v[4:5], s[8:15] dmask:0x1 dim:SQ_RSRC_IMG_2D\n",
            "image_load_pck",
        ),
        ("\texp mrt0 v0, v1, v2, v3 done\n", "exp"),
    ] {
        let why = fault_of(body);
        assert!(
            why.contains(&format!("unsupported instruction {name} ")),
            "{name}: {why}"
        );
    }
    let why = fault_of("\t.long 0xffffffff\n");
    assert!(why.contains("illegal instruction (FFFFFFFF)"), "{why}");
}

/// A store whose last lane is just past the end of its buffer (lanes
/// storing `lane` to word `lane + 1` of a 32-word buffer) faults at that
/// lane, the report naming its address, how far past the end it is, the
/// allocation and the kernel argument; every lane before it has stored,
/// word 0 is untouched.
#[test]
fn store_past_the_end_faults_at_the_last_lane_after_the_others() {
    let code = assemble(
        "\tglobal_store_b32 v1, v0, s[4:5] offset:4\n",
        Res::default(),
    );
    let dev = test_device();
    let prog = dev.load(&code).unwrap();
    let buf = dev.alloc_zeroed(4 * LANES as u64).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [LANES as u32, 1, 1],
        dynamic_lds: 0,
    };
    let args = [Arg::Buffer(buf), Arg::Buffer(buf)];
    let why = match dev.dispatch(&DispatchDesc::launch(
        &prog,
        prog.kernel("k").unwrap(),
        &launch,
        &args,
    )) {
        Ok(_) => panic!("the kernel ran without a fault"),
        Err(e) => e.to_string(),
    };
    let end = buf.addr() + 4 * LANES as u64;
    for want in [
        format!("global memory write refused: 4 bytes at {end:#x} are 0 bytes past the end of a 128-byte allocation at {:#x}", buf.addr()),
        format!(
            ", lane {} (blockIdx (0, 0, 0), threadIdx ({}, 0, 0))\n",
            LANES - 1,
            LANES - 1
        ),
        format!("address {end:#x}"),
        "the allocation is kernel argument `#0`".to_string(),
    ] {
        assert!(why.contains(&want), "`{want}` not in:\n{why}");
    }
    let words: Vec<u32> = dev
        .read(&buf)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<u32> = (0..LANES as u32).map(|w| w.saturating_sub(1)).collect();
    assert_eq!(words, want);
}
