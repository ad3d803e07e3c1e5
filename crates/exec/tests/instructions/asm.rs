//! Assembling every block's instructions with llvm-mc-19, the oracle of
//! what each line encodes to. One llvm-mc run per (target, wave size,
//! features) combination assembles all blocks of all files. A line written
//! as machine code (`[0x0a,0x18,…] text`, see `syntax.rs`) is taken as is.

use std::collections::BTreeMap;
use std::process::Command;

use softgpu_test_support::tool;

/// How a block is assembled and run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Variant {
    pub target: String,
    pub wave64: bool,
    pub mattr: Option<String>,
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} wave{}",
            self.target,
            if self.wave64 { 64 } else { 32 }
        )?;
        if let Some(m) = &self.mattr {
            write!(f, " {m}")?;
        }
        Ok(())
    }
}

/// Rewrites the wave-size-dependent spellings a `@waves` block may use:
/// `{vcc}` and `{exec}` become `vcc_lo`/`exec_lo` in wave32 and `vcc`/
/// `exec` in wave64; `{sN}` becomes `sN` or `s[N:N+1]`.
pub fn substitute(line: &str, wave64: bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        let text = match (name, wave64) {
            ("vcc" | "exec", false) => format!("{name}_lo"),
            ("vcc" | "exec", true) => name.to_string(),
            (s, _) if s.starts_with('s') && s[1..].parse::<u32>().is_ok() => {
                let n: u32 = s[1..].parse().unwrap();
                if wave64 {
                    format!("s[{n}:{}]", n + 1)
                } else {
                    s.to_string()
                }
            }
            _ => format!("{{{name}}}"),
        };
        out.push_str(&text);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Assembles `lines` for `variant`: the bytes of each line, or llvm-mc's
/// error for it.
pub fn assemble(variant: &Variant, lines: &[String]) -> Vec<Result<Vec<u8>, String>> {
    // Machine code written out (`[0x..,..] text`) needs no assembler.
    let mut results: Vec<Option<Result<Vec<u8>, String>>> = lines.iter().map(|l| raw(l)).collect();
    // Lines llvm-mc rejects are reported and left out of a second run, so
    // one bad line cannot hide the encodings of the others.
    let mut todo: Vec<usize> = (0..lines.len()).filter(|&i| results[i].is_none()).collect();
    for _ in 0..2 {
        let (encodings, errors) = run_llvm_mc(variant, todo.iter().map(|&i| &lines[i]));
        if errors.is_empty() && encodings.len() == todo.len() {
            for (&i, bytes) in todo.iter().zip(encodings) {
                results[i] = Some(Ok(bytes));
            }
            break;
        }
        for (line_no, msg) in &errors {
            if let Some(&i) = todo.get(line_no - 1) {
                results[i] = Some(Err(msg.clone()));
            }
        }
        if errors.is_empty() {
            // Every line assembled but the count is off: a line made no
            // instruction (a directive or label) or two.
            for &i in &todo {
                results[i] = Some(Err(format!(
                    "llvm-mc made {} encodings for {} lines; write one instruction per line",
                    encodings.len(),
                    todo.len()
                )));
            }
            break;
        }
        todo.retain(|&i| results[i].is_none());
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not assembled".into())))
        .collect()
}

/// The bytes of a line written as machine code, `[0x0a,0x18,…] text`
/// (llvm-mc's `encoding:` notation, then the instruction it stands for),
/// for encodings llvm-mc-19 cannot write; `None` for assembly.
fn raw(line: &str) -> Option<Result<Vec<u8>, String>> {
    let body = line.trim_start().strip_prefix('[')?;
    let Some((list, _text)) = body.split_once(']') else {
        return Some(Err(format!("no `]` in `{line}`")));
    };
    Some(
        list.split(',')
            .map(|b| {
                let b = b.trim();
                b.strip_prefix("0x")
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("`{b}` is not a byte like 0x1f in `{line}`"))
            })
            .collect(),
    )
}

/// One llvm-mc run: the encodings in order, and errors by input line.
fn run_llvm_mc<'a>(
    variant: &Variant,
    lines: impl Iterator<Item = &'a String>,
) -> (Vec<Vec<u8>>, BTreeMap<usize, String>) {
    let mut args = vec![
        "-arch=amdgcn".to_string(),
        format!("-mcpu={}", variant.target),
        "-show-encoding".to_string(),
    ];
    let mut attrs = Vec::new();
    if variant.wave64 {
        attrs.push("+wavefrontsize64".to_string());
    }
    attrs.extend(variant.mattr.clone());
    if !attrs.is_empty() {
        args.push(format!("-mattr={}", attrs.join(",")));
    }
    let input: String = lines.map(|l| format!("{l}\n")).collect();
    let out = tool::output_with_stdin(Command::new("llvm-mc-19").args(&args), &input);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let encodings = stdout
        .lines()
        .filter_map(|l| l.split_once("encoding: [").map(|(_, e)| e))
        .map(|e| {
            e.trim_end_matches(']')
                .split(',')
                .filter_map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).ok())
                .collect()
        })
        .collect();
    let mut errors = BTreeMap::new();
    for l in String::from_utf8_lossy(&out.stderr).lines() {
        // "<stdin>:LINE:COL: error: message"
        let Some(rest) = l.strip_prefix("<stdin>:") else {
            continue;
        };
        let mut parts = rest.splitn(3, ':');
        if let (Some(n), Some(_), Some(msg)) = (parts.next(), parts.next(), parts.next()) {
            if let (Ok(n), true) = (n.parse::<usize>(), msg.contains("error")) {
                errors.entry(n).or_insert_with(|| msg.trim().to_string());
            }
        }
    }
    (encodings, errors)
}
