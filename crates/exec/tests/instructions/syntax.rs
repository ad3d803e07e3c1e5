//! The case-file language.
//!
//! A file is a list of blocks. A block is
//!
//! ```text
//! # Why these cases expect what they expect (ISA section, rule).
//! @waves @targets gfx1151          <- optional directives
//! v_add_nc_u32_e64 v0, v1, v2 clamp   <- one or more instructions, run
//!                                        in order; each counts as tested
//!     v1=0xffffffff v2=1 => v0=0xffffffff   # per-case reason
//!     v1=5 v2=7          => v0=12
//! ```
//!
//! Case lines are indented: `inputs => expectations`, each a list of
//! `location=value` separated by spaces (a line ending with `\` continues
//! on the next indented line, for long per-lane lists such as a matrix one
//! register per line; the reason goes on the last line). Everything a case
//! does not set starts as noise (EXEC excepted: all lanes on), and
//! everything it does not expect must end unchanged, so a write to the
//! wrong register, lane, half or byte fails the case. Every case needs a
//! reason: a `#` comment on its line, or the comment above its block (a
//! comment covers the blocks after it up to the next blank line or
//! comment).
//!
//! An instruction llvm-mc-19 cannot write (true16 `.h` operands, `op_sel`
//! on VOPC) may be given as its machine code in llvm-mc's `encoding:`
//! notation followed by the instruction it stands for, for readers:
//! `[0x0a,0x18,0x02,0xd4,0x01,0x05,0x02,0x00] v_cmp_eq_f16_e64 s10, v1.h, v2.h`.
//!
//! Directives: `@wave32` (the default), `@wave64`, `@waves` (both; the
//! instruction text may then write `{vcc}`, `{exec}` and `{s0}`, which
//! become `vcc_lo`/`vcc`, `exec_lo`/`exec`, `s0`/`s[0:1]`), `@targets T…`
//! (default gfx1100, gfx1151 and gfx1201; a block without `@targets` also
//! runs on gfx1030 wherever llvm-mc-19 assembles it for gfx10, unless it
//! is written as machine code or holds an image instruction or a buffer
//! format load or store, whose cases give gfx11's format numbers),
//! `@gfx11: REASON` (the block holds for gfx11 only, and why: gfx1100 and
//! gfx1151; gfx1030 is still tried), `@mattr +feature` (passed to
//! llvm-mc).
//!
//! Locations:
//! - `vN`, `v[N:N+1]` (64-bit), `vN.l` / `vN.h` (one 16-bit half: the other
//!   half must stay as it was), each optionally `:LANE`. Without a lane, an
//!   input sets every lane and an expectation checks the lanes EXEC had on.
//! - `sN`, `s[N:N+1]`, `vcc_lo`, `vcc_hi`, `exec_lo`, `exec_hi`, `m0`,
//!   `null`; `vcc` and `exec` are a lane mask (one SGPR in wave32, a pair
//!   in wave64); `{sN}` likewise is the lane mask at `sN` (`sN` in wave32,
//!   `s[N:N+1]` in wave64, as `{sN}` in a `@waves` instruction); `scc`.
//! - `mode` (the raw MODE register) or one field of it: `round32`,
//!   `round16`, `denorm32`, `denorm16` (0 flush in and out, 3 keep),
//!   `dx10`, `ieee`. The default MODE is round to nearest even, denormals
//!   kept, DX10 clamp and IEEE on.
//! - memory: `mem[OFF]` (the test buffer, whose address is `@buf`),
//!   `lds[OFF]`, `scr[OFF]` (every lane's scratch, or `scr[OFF]:LANE`);
//!   `mem8`, `mem16`, `mem64` (and `lds8`…) for other widths.
//! - `fault=TEXT` (expectations only): the snippet must trap, with TEXT in
//!   the report.
//!
//! Values: integers (`12`, `-1`, `0xff`, `0b101`; negative ones are two's
//! complement of the location's width); floats as the bits of their type,
//! `f:1.5` (f32), `h:1.5` (f16), `bf:1.5` (bf16), `d:1.5` (f64), `h2:LO:HI`
//! (two f16 in one dword), with names `inf`, `nan` (the default quiet NaN),
//! `snan`, `max`, `min` (smallest normal), `dmin`, `dmax` (smallest and
//! largest denormal), each optionally negated (`f:-0`, `h:-inf`); `f:nan?`
//! (likewise `h:`, `d:`) accepts any NaN, for results whose payload the ISA
//! does not pin down; `all` (every lane of the wave); `lane`, `lane*4`,
//! `lane*4+16` (per lane); `@buf`, `@buf+16` (the test buffer's address);
//! `@buf>>8`, `@buf+256>>40|0x2a00000` (bits of it shifted down, with
//! constant bits or-ed in: an image descriptor's base address fields);
//! `@pc`, `@pc+4` (the address of the block's first instruction);
//! `[a,b,c]` (per lane, repeated cyclically over the wave); a float kind
//! before a list applies to each item (`f:[1,-2.5,inf]` is
//! `[f:1,f:-2.5,f:inf]`, `h2:[1:2,3:4]`, `d:[1,2]`: long per-lane matrices
//! stay readable); `lanes:1101`
//! (a lane mask, one bit per lane from lane 0 on, repeated cyclically over
//! the wave like a list, `_` allowed between digits).

use std::fmt;

/// Where a block comes from, for messages.
#[derive(Clone, Debug)]
pub struct Pos {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Which half of a 32-bit register a location names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    Whole,
    Lo,
    Hi,
}

/// Memory a location can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// The bench's global test buffer (`mem`).
    Buffer,
    Lds,
    /// Each lane's private memory (`scr`).
    Scratch,
}

/// The left-hand side of an assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// `vN`, `vN.l`, `v[N:M]`, optionally `:LANE`.
    Vgpr {
        reg: u16,
        dwords: u8,
        half: Half,
        lane: Option<usize>,
    },
    /// `sN`, `s[N:M]`, `m0`, `vcc_lo`, `exec_hi`, …
    Sgpr {
        reg: u8,
        dwords: u8,
    },
    /// `vcc` / `exec`: one SGPR in wave32, a pair in wave64.
    Mask {
        reg: u8,
    },
    Scc,
    /// The whole MODE register.
    Mode,
    /// A MODE field: `ieee`, `dx10`, `denorm32`, `denorm16`, `round32`, `round16`.
    ModeField {
        shift: u8,
        width: u8,
    },
    /// `mem[OFF]`, `lds8[OFF]`, `scr16[OFF]:LANE`, …: `bytes` at offset `off`.
    Mem {
        space: Space,
        off: usize,
        bytes: u8,
        lane: Option<usize>,
    },
}

/// The right-hand side of an assignment.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(u64),
    /// Any NaN of this many bits (`f:nan?`): for results whose payload the
    /// ISA leaves open.
    AnyNan(u8),
    /// The wave's full lane mask (`all`).
    AllLanes,
    /// `lane * mul + add`.
    Lane {
        mul: u64,
        add: u64,
    },
    /// The test buffer's address plus an offset (`@buf+16`).
    Buffer(u64),
    /// Bits of the test buffer's address, as an image descriptor holds
    /// them: `(@buf + off) >> shift | or` (`@buf>>8`, `@buf>>40|0x2a00000`).
    BufferBits {
        off: u64,
        shift: u32,
        or: u64,
    },
    /// The snippet's address plus an offset (`@pc+4`).
    Code(u64),
    /// Per-lane values, repeated cyclically over the wave (`[1,2,3]`).
    List(Vec<Value>),
    /// A lane mask, one bit per lane from lane 0, repeated cyclically over
    /// the wave (`lanes:1101`).
    LaneBits(Vec<bool>),
}

#[derive(Clone, Debug)]
pub struct Assign {
    pub loc: Loc,
    pub value: Value,
}

/// One line of a block: inputs, what must hold afterwards, and why.
#[derive(Clone, Debug)]
pub struct Case {
    pub line: usize,
    pub inputs: Vec<Assign>,
    pub expects: Vec<Assign>,
    /// `fault=TEXT`: the snippet must trap with TEXT in the report.
    pub fault: Option<String>,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct Directives {
    pub wave32: bool,
    pub wave64: bool,
    /// Targets to run on (default gfx1100, gfx1151 and gfx1201).
    pub targets: Vec<String>,
    /// Why the block holds for gfx11 only (`@gfx11: REASON`), if it does.
    pub gfx11_only: Option<String>,
    /// Extra `-mattr` for llvm-mc.
    pub mattr: Option<String>,
    /// The block names no targets: it holds for the defaults, and runs on
    /// gfx1030 too where its code is gfx10 code (`main.rs`).
    pub default_targets: bool,
}

#[derive(Clone, Debug)]
pub struct Block {
    pub pos: Pos,
    pub directives: Directives,
    /// Instructions as written (before `{vcc}`-style substitution).
    pub asm: Vec<String>,
    pub cases: Vec<Case>,
    /// The comment lines above the block.
    pub comment: String,
}

pub const DEFAULT_TARGETS: [&str; 3] = ["gfx1100", "gfx1151", "gfx1201"];

/// The targets of a `@gfx11:` block.
pub const GFX11_TARGETS: [&str; 2] = ["gfx1100", "gfx1151"];

/// Parses one case file.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<Block>, String> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut comment = String::new();
    let mut directives = Directives::default();
    let mut errors = Vec::new();
    // A case continued over lines ending with `\`: its first line and text.
    let mut pending: Option<(usize, String)> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let pos = Pos {
            file: file.to_string(),
            line,
        };
        let trimmed = raw.trim();
        let indented = raw.starts_with([' ', '\t']);
        let case_line = indented && !trimmed.is_empty() && !trimmed.starts_with('#');
        if let Some((first, text)) = &mut pending {
            if !case_line {
                errors.push(format!(
                    "{}:{first}: the case's last line ends with `\\`",
                    pos.file
                ));
                pending = None;
            } else {
                text.push(' ');
                text.push_str(trimmed.trim_end_matches('\\'));
                if trimmed.ends_with('\\') {
                    continue;
                }
            }
        } else if case_line && trimmed.ends_with('\\') {
            pending = Some((line, trimmed.trim_end_matches('\\').to_string()));
            continue;
        }
        if trimmed.is_empty() {
            comment.clear();
            continue;
        }
        if case_line {
            let (line, joined) = pending.take().unwrap_or((line, trimmed.to_string()));
            match blocks.last_mut() {
                Some(b) if b.pos.line < line => match parse_case(line, &joined) {
                    Ok(c) => b.cases.push(c),
                    Err(e) => errors.push(format!("{pos}: {e}")),
                },
                _ => errors.push(format!("{pos}: a case line before any instruction")),
            }
        } else if let Some(text) = trimmed.strip_prefix('#') {
            if blocks
                .last()
                .is_some_and(|b| b.comment == comment && !comment.is_empty())
            {
                // A comment after blocks starts a new paragraph's reason.
                comment.clear();
            }
            comment.push_str(text.trim());
            comment.push('\n');
        } else if trimmed.starts_with('@') {
            if let Err(e) = parse_directives(trimmed, &mut directives) {
                errors.push(format!("{pos}: {e}"));
            }
        } else {
            let continues = blocks.last().is_some_and(|b| b.cases.is_empty());
            if continues {
                blocks.last_mut().unwrap().asm.push(trimmed.to_string());
            } else {
                blocks.push(Block {
                    pos,
                    directives: finish_directives(std::mem::take(&mut directives)),
                    asm: vec![trimmed.to_string()],
                    cases: Vec::new(),
                    // A comment covers the blocks after it up to a blank line.
                    comment: comment.clone(),
                });
            }
        }
    }
    if let Some((first, _)) = pending {
        errors.push(format!(
            "{file}:{first}: the case's last line ends with `\\`"
        ));
    }
    for b in &blocks {
        if b.cases.is_empty() {
            errors.push(format!("{}: instruction without cases", b.pos));
        }
        for c in &b.cases {
            if c.reason.is_empty() && b.comment.is_empty() {
                errors.push(format!(
                    "{}:{}: case without a reason (comment the block or the line)",
                    b.pos.file, c.line
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(blocks)
    } else {
        Err(errors.join("\n"))
    }
}

fn parse_directives(line: &str, d: &mut Directives) -> Result<(), String> {
    if let Some(reason) = line.strip_prefix("@gfx11:") {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err("@gfx11: needs the reason the block holds for gfx11 only".into());
        }
        d.gfx11_only = Some(reason.to_string());
        return Ok(());
    }
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.next() {
        match w {
            "@wave32" => d.wave32 = true,
            "@wave64" => d.wave64 = true,
            "@waves" => (d.wave32, d.wave64) = (true, true),
            "@targets" => {
                while let Some(t) = words.next_if(|t| !t.starts_with('@')) {
                    d.targets.push(t.to_string());
                }
            }
            "@mattr" => {
                d.mattr = Some(words.next().ok_or("@mattr needs a value")?.to_string());
            }
            other => return Err(format!("unknown directive {other}")),
        }
    }
    Ok(())
}

fn finish_directives(mut d: Directives) -> Directives {
    if !d.wave64 {
        d.wave32 = true;
    }
    if d.targets.is_empty() {
        d.default_targets = true;
        let targets: &[&str] = if d.gfx11_only.is_some() {
            &GFX11_TARGETS
        } else {
            &DEFAULT_TARGETS
        };
        d.targets = targets.iter().map(|t| t.to_string()).collect();
    }
    d
}

fn parse_case(line: usize, text: &str) -> Result<Case, String> {
    let (body, reason) = match text.split_once('#') {
        Some((b, r)) => (b, r.trim().to_string()),
        None => (text, String::new()),
    };
    let (ins, outs) = body
        .split_once("=>")
        .ok_or("a case needs `inputs => expectations`")?;
    let inputs = ins
        .split_whitespace()
        .map(parse_assign)
        .collect::<Result<Vec<_>, _>>()?;
    let mut expects = Vec::new();
    let mut fault = None;
    for word in outs.split_whitespace() {
        match word.strip_prefix("fault=") {
            Some(text) => fault = Some(text.to_string()),
            None => expects.push(parse_assign(word)?),
        }
    }
    if expects.is_empty() && fault.is_none() {
        return Err("a case must expect something".into());
    }
    Ok(Case {
        line,
        inputs,
        expects,
        fault,
        reason,
    })
}

fn parse_assign(word: &str) -> Result<Assign, String> {
    let (lhs, rhs) = word
        .split_once('=')
        .ok_or_else(|| format!("`{word}` is not location=value"))?;
    Ok(Assign {
        loc: parse_loc(lhs).ok_or_else(|| format!("unknown location `{lhs}`"))?,
        value: parse_value(rhs).ok_or_else(|| format!("bad value `{rhs}` in `{word}`"))?,
    })
}

fn num(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else if let Some(b) = s.strip_prefix("0b") {
        u64::from_str_radix(&b.replace('_', ""), 2).ok()
    } else if let Some(neg) = s.strip_prefix('-') {
        num(neg).map(|v| v.wrapping_neg())
    } else {
        s.replace('_', "").parse().ok()
    }
}

/// `N` or `N:M` inside brackets, as (first, count).
fn range(s: &str) -> Option<(u64, u64)> {
    match s.split_once(':') {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            (b >= a).then_some((a, b - a + 1))
        }
        None => Some((num(s)?, 1)),
    }
}

fn parse_loc(s: &str) -> Option<Loc> {
    // A trailing `:LANE` selects one lane (registers and scratch); a
    // bracketed range has its own colon, so look after the bracket.
    let (body, lane) = match s.rfind(']') {
        Some(close) => match &s[close + 1..] {
            "" => (s, None),
            tail => (&s[..=close], Some(num(tail.strip_prefix(':')?)? as usize)),
        },
        None => match s.split_once(':') {
            Some((b, l)) => (b, Some(num(l)? as usize)),
            None => (s, None),
        },
    };
    let named_sgpr = |name: &str| -> Option<(u8, u8)> {
        Some(match name {
            "vcc_lo" => (106, 1),
            "vcc_hi" => (107, 1),
            "m0" => (125, 1),
            "null" => (124, 1),
            "exec_lo" => (126, 1),
            "exec_hi" => (127, 1),
            _ => return None,
        })
    };
    let mode_field = |shift, width| Some(Loc::ModeField { shift, width });
    // `{sN}`: the lane mask at sN.
    if let Some(n) = body.strip_prefix("{s").and_then(|b| b.strip_suffix('}')) {
        let reg = num(n)?;
        return (lane.is_none() && reg < 105).then_some(Loc::Mask { reg: reg as u8 });
    }
    let loc = match body {
        "vcc" => Loc::Mask { reg: 106 },
        "exec" => Loc::Mask { reg: 126 },
        "scc" => Loc::Scc,
        "mode" => Loc::Mode,
        "round32" => mode_field(0, 2)?,
        "round16" => mode_field(2, 2)?,
        "denorm32" => mode_field(4, 2)?,
        "denorm16" => mode_field(6, 2)?,
        "dx10" => mode_field(8, 1)?,
        "ieee" => mode_field(9, 1)?,
        _ => {
            if let Some((reg, dwords)) = named_sgpr(body) {
                Loc::Sgpr { reg, dwords }
            } else if let Some(mem) = parse_mem(body, lane) {
                mem
            } else {
                let (kind, rest) = body.split_at(1);
                let (rest, half) = match rest.strip_suffix(".l") {
                    Some(r) => (r, Half::Lo),
                    None => match rest.strip_suffix(".h") {
                        Some(r) => (r, Half::Hi),
                        None => (rest, Half::Whole),
                    },
                };
                let (first, count) = match rest.strip_prefix('[') {
                    Some(r) => range(r.strip_suffix(']')?)?,
                    None => (num(rest)?, 1),
                };
                match kind {
                    // CDNA's AccVGPR aN is the file's register 256 + N.
                    "v" | "a" if first + count <= 256 && count <= 2 => Loc::Vgpr {
                        reg: (first + if kind == "a" { 256 } else { 0 }) as u16,
                        dwords: count as u8,
                        half: if count == 1 { half } else { Half::Whole },
                        lane,
                    },
                    "s" if first + count <= 106 && count <= 2 && half == Half::Whole => Loc::Sgpr {
                        reg: first as u8,
                        dwords: count as u8,
                    },
                    _ => return None,
                }
            }
        }
    };
    let lane_ok = matches!(
        loc,
        Loc::Vgpr { .. }
            | Loc::Mem {
                space: Space::Scratch,
                ..
            }
    );
    (lane.is_none() || lane_ok).then_some(loc)
}

fn parse_mem(body: &str, lane: Option<usize>) -> Option<Loc> {
    let (name, rest) = body.split_once('[')?;
    let off = num(rest.strip_suffix(']')?)? as usize;
    let (space, width) = if let Some(w) = name.strip_prefix("mem") {
        (Space::Buffer, w)
    } else if let Some(w) = name.strip_prefix("lds") {
        (Space::Lds, w)
    } else if let Some(w) = name.strip_prefix("scr") {
        (Space::Scratch, w)
    } else {
        return None;
    };
    let bytes = match width {
        "8" => 1,
        "16" => 2,
        "" | "32" => 4,
        "64" => 8,
        _ => return None,
    };
    Some(Loc::Mem {
        space,
        off,
        bytes,
        lane,
    })
}

fn parse_value(s: &str) -> Option<Value> {
    // `KIND:[a,b]`: the kind applies to every item.
    if let Some((kind, list)) = s.split_once(":[") {
        let items = list.strip_suffix(']')?.split(',');
        return Some(Value::List(
            items
                .map(|item| parse_value(&format!("{kind}:{item}")))
                .collect::<Option<Vec<_>>>()?,
        ));
    }
    if let Some(list) = s.strip_prefix('[') {
        let items = list.strip_suffix(']')?.split(',');
        return Some(Value::List(
            items.map(parse_value).collect::<Option<Vec<_>>>()?,
        ));
    }
    if s == "all" {
        return Some(Value::AllLanes);
    }
    if let Some(bits) = s.strip_prefix("lanes:") {
        let bits: Vec<bool> = bits
            .chars()
            .filter(|&c| c != '_')
            .map(|c| match c {
                '0' => Some(false),
                '1' => Some(true),
                _ => None,
            })
            .collect::<Option<_>>()?;
        return (!bits.is_empty()).then_some(Value::LaneBits(bits));
    }
    if let Some(rest) = s.strip_prefix("@buf").filter(|r| r.contains(">>")) {
        return buffer_bits(rest);
    }
    for (name, make) in [
        ("@buf", Value::Buffer as fn(u64) -> Value),
        ("@pc", Value::Code),
    ] {
        if let Some(rest) = s.strip_prefix(name) {
            let off = match rest.strip_prefix('+') {
                Some(o) => num(o)?,
                None if rest.is_empty() => 0,
                None => return None,
            };
            return Some(make(off));
        }
    }
    if let Some(rest) = s.strip_prefix("lane") {
        return parse_lane_expr(rest);
    }
    if let Some((kind, v)) = s.split_once(':') {
        if let Some(bits) = any_nan(kind, v) {
            return Some(Value::AnyNan(bits));
        }
        return float(kind, v).map(Value::Int);
    }
    num(s).map(Value::Int)
}

/// `[+OFF]>>SHIFT[|OR]` after `@buf`.
fn buffer_bits(rest: &str) -> Option<Value> {
    let (rest, or) = match rest.split_once('|') {
        Some((r, o)) => (r, num(o)?),
        None => (rest, 0),
    };
    let (off, shift) = rest.split_once(">>")?;
    let off = match off.strip_prefix('+') {
        Some(o) => num(o)?,
        None if off.is_empty() => 0,
        None => return None,
    };
    let shift = u32::try_from(num(shift)?).ok().filter(|&s| s < 64)?;
    Some(Value::BufferBits { off, shift, or })
}

fn parse_lane_expr(rest: &str) -> Option<Value> {
    let (mul, add) = match rest.split_once('+') {
        Some((m, a)) => (m, num(a)?),
        None => (rest, 0),
    };
    let mul = match mul.strip_prefix('*') {
        Some(m) => num(m)?,
        None if mul.is_empty() => 1,
        None => return None,
    };
    Some(Value::Lane { mul, add })
}

fn any_nan(kind: &str, v: &str) -> Option<u8> {
    if v != "nan?" {
        return None;
    }
    Some(match kind {
        "h" => 16,
        "f" => 32,
        "d" => 64,
        _ => return None,
    })
}

/// A float literal as the bits of its type: `f:` f32, `h:` f16, `bf:`
/// bf16, `d:` f64, `h2:LO:HI` two f16 packed. Besides decimal numbers:
/// `inf`, `nan` (the default quiet NaN), `snan` (a signalling NaN with
/// payload 1), `max`, `min` (smallest normal), `dmin`/`dmax` (smallest and
/// largest denormal), each with an optional leading `-`.
pub fn float(kind: &str, v: &str) -> Option<u64> {
    if kind == "h2" {
        let (lo, hi) = v.split_once(':')?;
        return Some(float("h", lo)? | float("h", hi)? << 16);
    }
    let (neg, mag) = match v.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, v),
    };
    // (sign bit, exponent+mantissa bits of the specials, parse)
    let (sign, specials, parse): (u64, [u64; 7], fn(f64) -> u64) = match kind {
        "f" => (
            1 << 31,
            [
                0x7f80_0000,
                0x7fc0_0000,
                0x7f80_0001,
                0x7f7f_ffff,
                0x0080_0000,
                1,
                0x007f_ffff,
            ],
            |x| (x as f32).to_bits() as u64,
        ),
        "h" => (
            1 << 15,
            [0x7c00, 0x7e00, 0x7c01, 0x7bff, 0x0400, 1, 0x03ff],
            |x| half::f16::from_f64(x).to_bits() as u64,
        ),
        "bf" => (
            1 << 15,
            [0x7f80, 0x7fc0, 0x7f81, 0x7f7f, 0x0080, 1, 0x007f],
            |x| half::bf16::from_f64(x).to_bits() as u64,
        ),
        "d" => (
            1 << 63,
            [
                0x7ff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x7ff0_0000_0000_0001,
                0x7fef_ffff_ffff_ffff,
                0x0010_0000_0000_0000,
                1,
                0x000f_ffff_ffff_ffff,
            ],
            |x| x.to_bits(),
        ),
        _ => return None,
    };
    let names = ["inf", "nan", "snan", "max", "min", "dmin", "dmax"];
    let bits = match names.iter().position(|&n| n == mag) {
        Some(k) => specials[k],
        // f32 literals parse straight to f32 (one rounding); the others
        // via f64, which is exact for every decimal a case file needs.
        None if kind == "f" => mag.parse::<f32>().ok()?.to_bits() as u64,
        None => parse(mag.parse::<f64>().ok()?),
    };
    Some(if neg { bits | sign } else { bits })
}
