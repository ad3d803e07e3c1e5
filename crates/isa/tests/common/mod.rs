//! Helpers shared by the oracle tests: llvm-mc-19 as the oracle of
//! encodings and texts. The tools run through `softgpu-test-support`,
//! which fails a test whose tool is missing.
#![allow(dead_code)]

use std::process::Command;

use softgpu_test_support::fresh_dir;
pub use softgpu_test_support::tool::run;

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

const MARKER: [u8; 4] = [0x34, 0x12, 0x69, 0xB0]; // s_movk_i32 s105, 0x1234
const MARKER_TEXT: &str = "s_movk_i32 s105, 0x1234";
/// The marker as gfx9 (CDNA) names s105.
const MARKER_TEXT_GFX9: &str = "s_movk_i32 xnack_mask_hi, 0x1234";

/// Disassemble each instruction with llvm-mc-19; one text per input.
pub fn llvm_mc_disassemble(insts: &[Vec<u8>], cpu: &str) -> Vec<String> {
    // One folder per call: tests of one binary run at once.
    let dir = fresh_dir("isa");
    let path = dir.join(format!("in-{cpu}.txt"));
    let text: String = insts
        .iter()
        .map(|b| {
            let all: Vec<String> = b
                .iter()
                .chain(&MARKER)
                .map(|x| format!("0x{x:02x}"))
                .collect();
            all.join(",") + "\n"
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    let out = run(
        "llvm-mc-19",
        &[
            "--disassemble",
            "-arch=amdgcn",
            &format!("-mcpu={cpu}"),
            path.to_str().unwrap(),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    let mut res = vec![String::new()];
    for line in out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != ".text")
    {
        if line == MARKER_TEXT || line == MARKER_TEXT_GFX9 {
            res.push(String::new());
        } else {
            let cur = res.last_mut().unwrap();
            if !cur.is_empty() {
                cur.push_str(" ;; ");
            }
            cur.push_str(line);
        }
    }
    res.pop();
    assert_eq!(
        res.len(),
        insts.len(),
        "llvm-mc output out of step with its input"
    );
    res
}

/// Two `s_nop 0` and the marker after each candidate: an instruction that
/// starts inside a rejected candidate reaches at most 8 bytes past its end,
/// so the marker is never swallowed.
const PAD: [u8; 8] = [0, 0, 0x80, 0xbf, 0, 0, 0x80, 0xbf];

/// Disassemble many candidate words with one llvm-mc-19 run. Each result is
/// the text if the candidate is exactly one instruction llvm accepts, else
/// None. `mattr` is passed as `-mattr=` when not empty.
pub fn llvm_mc_each(cands: &[Vec<u8>], cpu: &str, mattr: &str) -> Vec<Option<String>> {
    use std::collections::HashSet;
    // One directory per call: tests run in parallel threads of one process.
    let dir = fresh_dir("isa-each");
    let path = dir.join("in.txt");
    let text: String = cands
        .iter()
        .map(|c| {
            let all: Vec<String> = c
                .iter()
                .chain(&PAD)
                .chain(&MARKER)
                .map(|x| format!("0x{x:02x}"))
                .collect();
            all.join(",") + "\n"
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    let mut args = vec![
        "--disassemble".to_string(),
        "-arch=amdgcn".into(),
        format!("-mcpu={cpu}"),
    ];
    if !mattr.is_empty() {
        args.push(format!("-mattr={mattr}"));
    }
    args.push(path.to_str().unwrap().into());
    // Its warnings are the answer: the status is not looked at.
    let out = softgpu_test_support::tool::output(Command::new("llvm-mc-19").args(&args));
    let _ = std::fs::remove_dir_all(&dir);
    // "<file>:<line>:<col>: warning: ..." marks a line as rejected.
    let warned: HashSet<usize> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| {
            let head = l.split(": warning:").next()?;
            let mut it = head.rsplitn(3, ':');
            it.next()?.parse::<usize>().ok()?;
            it.next()?.parse::<usize>().ok()
        })
        .collect();
    let mut segs: Vec<Vec<String>> = vec![Vec::new()];
    for line in String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != ".text")
    {
        if line == MARKER_TEXT || line == MARKER_TEXT_GFX9 {
            segs.push(Vec::new());
        } else {
            segs.last_mut().unwrap().push(line.to_string());
        }
    }
    segs.pop();
    assert_eq!(segs.len(), cands.len(), "llvm-mc output out of step");
    segs.into_iter()
        .enumerate()
        .map(|(i, s)| match &s[..] {
            [t, a, b]
                if !warned.contains(&(i + 1))
                    && a == "s_nop 0"
                    && b == "s_nop 0"
                    && !invalid(t) =>
            {
                Some(t.clone())
            }
            _ => None,
        })
        .collect()
}

/// Whether llvm flags the text as invalid. Its note on a true16 high half in
/// a 32-bit encoding (which it prints as v(N+128)) does not count: the
/// disassembler prints the same note.
fn invalid(text: &str) -> bool {
    text.replace(
        "/*Invalid register, operand has 'VS_32_Lo128' register class*/",
        "",
    )
    .replace(
        "/*Invalid register, operand has 'VGPR_32_Lo128' register class*/",
        "",
    )
    .contains("Invalid")
}

/// Assemble each line with `llvm-mc-19 -show-encoding` (`mattr` passed as
/// `-mattr=` when not empty); one encoding per line.
pub fn assemble(lines: &[&str], cpu: &str, mattr: &str) -> Vec<Vec<u8>> {
    let dir = fresh_dir("isa-as");
    let path = dir.join("in.s");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut args = vec![
        "-arch=amdgcn".to_string(),
        format!("-mcpu={cpu}"),
        "-show-encoding".into(),
    ];
    if !mattr.is_empty() {
        args.push(format!("-mattr={mattr}"));
    }
    args.push(path.to_str().unwrap().into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run("llvm-mc-19", &args);
    let _ = std::fs::remove_dir_all(&dir);
    let encs: Vec<Vec<u8>> = out
        .lines()
        .filter_map(|l| l.split_once("encoding: [")?.1.split_once(']'))
        .map(|(bytes, _)| {
            bytes
                .split(',')
                .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        encs.len(),
        lines.len(),
        "llvm-mc did not encode every line:\n{out}"
    );
    encs
}
