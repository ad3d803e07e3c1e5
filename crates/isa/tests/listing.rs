//! A listing of a whole text section walked with `decode_all`, equal line
//! for line (text and bytes) to `llvm-objdump-19 -d`: graphics instructions
//! are consumed to their true length (so the next word is never misread),
//! and words nothing decodes print as llvm prints them.

mod common;

use common::run;
use softgpu_isa::{decode_all, disassemble, undecodable_text, Family, Inst};

/// Image, export, interpolation and LDS-direct instructions, each followed
/// by an ordinary one; then literals with inline values and words no
/// instruction has.
const SOURCE: &str = r#"
	.text
	image_sample v[0:3], [v4, v5], s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_2D
	v_add_f32_e32 v1, v2, v3
	image_load v[0:3], v[4:5], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D
	s_nop 0
	image_sample_c_d_cl_o v[0:3], [v4, v5, v6, v7, v[8:15]], s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_3D
	v_mov_b32_e32 v0, 1.0
	image_bvh_intersect_ray v[4:7], [v9, v10, v[11:13], v[14:16], v[17:19]], s[4:7]
	s_mov_b32 s0, s1
	image_store v[0:1], [v4, v6], s[8:15] dmask:0x3 dim:SQ_RSRC_IMG_2D_ARRAY a16
	v_sub_f32_e32 v1, v2, v3
	exp mrt0 v0, v1, v2, v3 done
	s_waitcnt vmcnt(0)
	v_interp_p10_f32 v0, v1, v2, v3 wait_exp:7
	lds_param_load v1, attr0.x wait_vdst:0
	lds_direct_load v2 wait_vdst:1
	v_mov_b16_e32 v1.l, v0.h
	.long 0x8201ff01, 0x00000000
	.long 0x8201ff01, 0xffffffff
	.long 0x64040380
	.long 0x00000000
	.long 0xffffffff
	.long 0xfc000000
	s_endpgm
	s_code_end
"#;

/// (text, bytes) of each instruction line of `llvm-objdump-19 -d`.
fn objdump(obj: &str) -> Vec<(String, Vec<u8>)> {
    run("llvm-objdump-19", &["-d", "--mcpu=gfx1100", obj])
        .lines()
        .filter_map(|l| {
            let (text, comment) = l.split_once("//")?;
            let (_, words) = comment.split_once(": ")?;
            let bytes = words
                .split_whitespace()
                .filter_map(|w| u32::from_str_radix(w, 16).ok())
                .flat_map(u32::to_le_bytes)
                .collect();
            Some((text.trim().to_string(), bytes))
        })
        .collect()
}

fn listing(code: &[u8]) -> Vec<(String, Vec<u8>)> {
    decode_all(Family::Gfx11, code)
        .into_iter()
        .map(|(at, r)| {
            let at = at as usize;
            let (text, size) = match r {
                Ok(i) => (disassemble(&i), i.size as usize),
                Err(_) => (undecodable_text(&code[at..]), 4),
            };
            (text, code[at..at + size].to_vec())
        })
        .collect()
}

#[test]
fn listing_matches_llvm_objdump() {
    let dir = std::env::temp_dir().join(format!("softgpu-isa-listing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (s, o, bin) = (dir.join("l.s"), dir.join("l.o"), dir.join("l.bin"));
    std::fs::write(&s, SOURCE).unwrap();
    let (s, o, bin) = (
        s.to_str().unwrap(),
        o.to_str().unwrap(),
        bin.to_str().unwrap(),
    );
    run(
        "llvm-mc-19",
        &[
            "-triple=amdgcn-amd-amdhsa",
            "-mcpu=gfx1100",
            "-mattr=+real-true16",
            "-filetype=obj",
            s,
            "-o",
            o,
        ],
    );
    run(
        "llvm-objcopy-19",
        &["-O", "binary", "--only-section=.text", o, bin],
    );
    let code = std::fs::read(bin).unwrap();
    let want = objdump(o);
    let _ = std::fs::remove_dir_all(&dir);
    let got = listing(&code);
    assert!(want.len() > 20, "objdump listed {} lines", want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "line {k} ({} bytes in): ours {:?}, llvm-objdump {:?}",
            got[..k].iter().map(|l| l.1.len()).sum::<usize>(),
            g.0,
            w.0
        );
    }
    assert_eq!(got.len(), want.len(), "line counts differ");
}

/// An image instruction with NSA addresses is 12 bytes; the instruction
/// after it decodes as itself.
#[test]
fn an_image_instruction_is_followed_by_the_next_one() {
    let words: [u32; 4] = [0xF06C_0F05, 0x1002_0004, 0x0000_0005, 0x0602_0702];
    let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let out = decode_all(Family::Gfx11, &code);
    let ok = |k: usize| -> &Inst { out[k].1.as_ref().unwrap() };
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!((out[0].0, ok(0).size), (0, 12));
    assert_eq!(ok(0).op.name(), "image_sample");
    assert_eq!(out[1].0, 12);
    assert_eq!(disassemble(ok(1)), "v_add_f32_e32 v1, v2, v3");
}
