//! Emits a program as an OpenCL C kernel and as the host-C oracle. Both
//! come from the same statements; the host side evaluates each vector
//! expression one component at a time (`for (k...) r[k] = ...`), with scalar
//! operands (`min(float4, float)`) read at component 0.

use std::fmt::Write as _;

use super::data::Layout;
use super::gen::{Body, Expr, Kind, Op, Program, Stmt, Store};
use super::types::Scalar;

/// OpenCL helpers (`op_*`) the kernels call.
pub const OCL_PRELUDE: &str = include_str!("ocl_prelude.cl");
/// The host-C implementations of every built-in.
pub const HOST_PRELUDE: &str = include_str!("host_prelude.c");
/// The kernel's name.
pub const KERNEL: &str = "diffgen";

/// An integer literal of type `t` in OpenCL or host C.
fn int_lit(t: Scalar, bits: u64, host: bool) -> String {
    let v = t.int_value(bits);
    let name = if host { t.host() } else { t.cl() };
    let (sfx, usfx) = if host { ("LL", "ULL") } else { ("L", "UL") };
    if t.is_signed_int() {
        if v == i64::MIN as i128 {
            format!("(({name})(-9223372036854775807{sfx} - 1))")
        } else {
            format!("(({name}){v}{sfx})")
        }
    } else {
        format!("(({name}){v}{usfx})")
    }
}

/// An exact C hexadecimal float literal (`0x1bp-3`) of a finite value.
fn hex_float(v: f64) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0x0p+0"
        } else {
            "0x0p+0"
        }
        .into();
    }
    let b = v.to_bits();
    let sign = if v < 0.0 { "-" } else { "" };
    let exp = ((b >> 52) & 0x7ff) as i64;
    let man = b & ((1 << 52) - 1);
    let (m, e) = if exp == 0 {
        (man, -1074)
    } else {
        (man | (1 << 52), exp - 1075)
    };
    format!("{sign}0x{m:x}p{e:+}")
}

/// A constant of element type `t`, one component.
fn lit(t: Scalar, bits: u64, host: bool) -> String {
    match t {
        _ if t.is_int() => int_lit(t, bits, host),
        Scalar::Half if host => format!("((f16)0x{bits:04x})"),
        Scalar::Half => format!("((half){}f)", hex_float(t.float_value(bits))),
        Scalar::Float => format!("{}f", hex_float(t.float_value(bits))),
        _ => hex_float(t.float_value(bits)),
    }
}

/// The OpenCL text of an expression.
pub fn ocl_expr(e: &Expr) -> String {
    match &e.kind {
        Kind::Var(i) => format!("v{i}"),
        Kind::Acc => "r".into(),
        Kind::Const(bits) if e.ty.width == 1 => lit(e.ty.elem, *bits, false),
        Kind::Const(bits) => format!("(({})({}))", e.ty.cl(), lit(e.ty.elem, *bits, false)),
        Kind::Call(op, args) => {
            let a: Vec<String> = args.iter().map(ocl_expr).collect();
            let name = match op {
                Op::Builtin(b) => b.name.to_string(),
                Op::Convert { sat, round } => format!(
                    "convert_{}{}{}",
                    e.ty.cl(),
                    if *sat { "_sat" } else { "" },
                    round.suffix()
                ),
                Op::As => format!("as_{}", e.ty.cl()),
            };
            format!("{name}({})", a.join(", "))
        }
    }
}

/// The host-C text of component `k` of an expression (`[0]` for scalars).
fn host_expr(e: &Expr) -> String {
    let idx = if e.ty.width == 1 { "[0]" } else { "[k]" };
    match &e.kind {
        Kind::Var(i) => format!("v{i}{idx}"),
        Kind::Acc => format!("r{idx}"),
        Kind::Const(bits) => lit(e.ty.elem, *bits, true),
        Kind::Call(op, args) => {
            let a: Vec<String> = args.iter().map(host_expr).collect();
            let (t, s) = (e.ty.elem.host(), args[0].ty.elem.host());
            match op {
                Op::Builtin(b) if b.name == "select" => {
                    // Scalar select tests c != 0, vector select c's MSB.
                    let test = if e.ty.width == 1 { "nz" } else { "msb" };
                    let m = args[2].ty.elem.host();
                    format!("select_{t}({}, {}, {test}_{m}({}))", a[0], a[1], a[2])
                }
                Op::Builtin(b) => {
                    let key = if b.host_by_src { s } else { t };
                    format!("{}_{key}({})", b.name, a.join(", "))
                }
                Op::Convert { sat, round } => format!(
                    "cvt_{t}_{s}({}, {}, {})",
                    a[0],
                    *sat as u8,
                    round.host(e.ty.elem)
                ),
                Op::As => format!("as_{t}_{s}({})", a[0]),
            }
        }
    }
}

/// Appends `text` indented by `ind` spaces, one line at a time.
fn line(out: &mut String, ind: usize, text: &str) {
    writeln!(out, "{:ind$}{text}", "").unwrap();
}

fn body(out: &mut String, ind: usize, b: &Body, s: &Stmt, host: bool) {
    match b {
        Body::Assign(e) if host => line(
            out,
            ind,
            &format!(
                "for (int k = 0; k < {}; k++) r[k] = {};",
                s.ty.width,
                host_expr(e)
            ),
        ),
        Body::Assign(e) => line(out, ind, &format!("r = {};", ocl_expr(e))),
        Body::Seq(v) => v.iter().for_each(|x| body(out, ind, x, s, host)),
        Body::If(c, t, e) => {
            line(out, ind, &format!("if ({c}) {{"));
            body(out, ind + 2, t, s, host);
            if let Some(e) = e {
                line(out, ind, "} else {");
                body(out, ind + 2, e, s, host);
            }
            line(out, ind, "}");
        }
        Body::Switch(sel, arms) => {
            line(out, ind, &format!("switch ({sel}) {{"));
            for (i, a) in arms.iter().enumerate() {
                if i + 1 == arms.len() {
                    line(out, ind, "default: {");
                } else {
                    line(out, ind, &format!("case {i}: {{"));
                }
                body(out, ind + 2, a, s, host);
                line(out, ind + 2, "break;");
                line(out, ind, "}");
            }
            line(out, ind, "}");
        }
        Body::Loop(trips, x) => {
            let u = if host { "u32" } else { "uint" };
            line(
                out,
                ind,
                &format!("for ({u} j = 0u; j < ({trips}); j++) {{"),
            );
            body(out, ind + 2, x, s, host);
            line(out, ind, "}");
        }
    }
}

/// `vloadN`/`vstoreN` name for a width (`""` for scalars, which use `[]`).
fn vn(w: u8) -> String {
    if w == 1 {
        String::new()
    } else {
        w.to_string()
    }
}

/// One statement as OpenCL C (a `{ ... }` block inside the kernel).
pub fn ocl_stmt(s: &Stmt, vars: &[usize], out_at: usize) -> String {
    let mut o = String::new();
    line(&mut o, 2, &format!("{{ // {}", s.focus));
    for (i, v) in s.vars.iter().enumerate() {
        let at = vars[i];
        let st = v.storage();
        let ptr = format!("((global const {}*)(IN + {at}))", st.elem.cl());
        let load = match (v.half_load, v.ty.width) {
            (true, w) => format!("vload_half{}(gid, {ptr})", vn(w)),
            (false, 1) => format!("{ptr}[gid]"),
            (false, w) => format!("vload{w}(gid, {ptr})"),
        };
        let name = if i == 0 {
            "c".to_string()
        } else {
            format!("v{i}")
        };
        line(&mut o, 4, &format!("const {} {name} = {load};", v.ty.cl()));
    }
    let init = match &s.init {
        Some(e) => ocl_expr(e),
        None => format!("({})0", s.ty.cl()),
    };
    line(&mut o, 4, &format!("{} r = {init};", s.ty.cl()));
    body(&mut o, 4, &s.body, s, false);
    let out = s.out_ty();
    let ptr = format!("((global {}*)(OUT + {out_at}))", out.elem.cl());
    let w = s.ty.width;
    let st = match s.store {
        Store::Plain if w == 1 => format!("{ptr}[gid] = r;"),
        Store::Plain => format!("vstore{w}(r, gid, {ptr});"),
        Store::Half(round) => format!("vstore_half{}{}(r, gid, {ptr});", vn(w), round.suffix()),
        Store::As(t) if t.width == 1 => format!("{ptr}[gid] = as_{}(r);", t.cl()),
        Store::As(t) => format!("vstore{}(as_{}(r), gid, {ptr});", t.width, t.cl()),
    };
    line(&mut o, 4, &st);
    line(&mut o, 2, "}");
    o
}

fn host_stmt(s: &Stmt, vars: &[usize], out_at: usize) -> String {
    let mut o = String::new();
    line(&mut o, 2, &format!("{{ /* {} */", s.focus));
    for (i, v) in s.vars.iter().enumerate() {
        let at = vars[i];
        let st = v.storage();
        let n = st.bytes();
        let src = format!("IN + {at} + (size_t)gid * {n}");
        let name = if i == 0 {
            "c".to_string()
        } else {
            format!("v{i}")
        };
        if i == 0 {
            line(&mut o, 4, &format!("u32 c; memcpy(&c, {src}, 4);"));
        } else if v.half_load {
            line(&mut o, 4, &format!("f32 {name}[{}]; {{ f16 h[{}]; memcpy(h, {src}, {n}); for (int k = 0; k < {}; k++) {name}[k] = load_half(h[k]); }}", st.width, st.width, st.width));
        } else {
            line(
                &mut o,
                4,
                &format!(
                    "{} {name}[{}]; memcpy({name}, {src}, {n});",
                    st.elem.host(),
                    st.width
                ),
            );
        }
    }
    line(
        &mut o,
        4,
        &format!("{} r[{}];", s.ty.elem.host(), s.ty.width),
    );
    match &s.init {
        Some(e) => line(
            &mut o,
            4,
            &format!(
                "for (int k = 0; k < {}; k++) r[k] = {};",
                s.ty.width,
                host_expr(e)
            ),
        ),
        None => line(&mut o, 4, "memset(r, 0, sizeof r);"),
    }
    body(&mut o, 4, &s.body, s, true);
    let out = s.out_ty();
    let dst = format!("OUT + {out_at} + (size_t)gid * {}", out.bytes());
    match s.store {
        Store::Plain | Store::As(_) => line(&mut o, 4, &format!("memcpy({dst}, r, {});", out.bytes())),
        Store::Half(round) => line(
            &mut o,
            4,
            &format!(
                "{{ f16 h[{w}]; for (int k = 0; k < {w}; k++) h[k] = store_half((ld)r[k], {}); memcpy({dst}, h, {}); }}",
                round.host(Scalar::Half),
                out.bytes(),
                w = s.ty.width
            ),
        ),
    }
    line(&mut o, 2, "}");
    o
}

/// The whole kernel.
pub fn opencl(p: &Program, layout: &Layout) -> String {
    let mut o = String::from(OCL_PRELUDE);
    writeln!(
        o,
        "\n// diffgen seed {}: {} work-items in groups of {}",
        p.seed, p.lanes, p.block
    )
    .unwrap();
    writeln!(
        o,
        "kernel void {KERNEL}(global const uchar *IN, global uchar *OUT, uint n) {{"
    )
    .unwrap();
    line(&mut o, 2, "const uint gid = get_global_id(0);");
    line(&mut o, 2, "if (gid >= n) return;");
    for (i, (k, s)) in p.stmts.iter().enumerate() {
        line(&mut o, 2, &format!("// statement {k}"));
        o.push_str(&ocl_stmt(s, &layout.vars[i], layout.outs[i]));
    }
    o.push_str("}\n");
    o
}

/// The host program: `host IN OUT` reads the input buffer and writes the
/// output buffer the kernel would.
pub fn host(p: &Program, layout: &Layout) -> String {
    let mut o = String::from(HOST_PRELUDE);
    writeln!(o, "\n/* diffgen seed {} */", p.seed).unwrap();
    o.push_str("static void body(u32 gid, const u8 *IN, u8 *OUT) {\n");
    for (i, (k, s)) in p.stmts.iter().enumerate() {
        line(&mut o, 2, &format!("/* statement {k} */"));
        line(&mut o, 2, "unspecified = 0;");
        o.push_str(&host_stmt(s, &layout.vars[i], layout.outs[i]));
        line(
            &mut o,
            2,
            &format!("OUT[{}u + gid] = (u8)unspecified;", layout.skip_at(i)),
        );
    }
    o.push_str("}\n");
    write!(
        o,
        r#"
int main(int argc, char **argv) {{
  if (argc != 3) return 2;
  size_t in_bytes = {inb}, out_bytes = {outb};
  u8 *in = calloc(in_bytes + 1, 1), *out = calloc(out_bytes + 1, 1);
  FILE *f = fopen(argv[1], "rb");
  if (!f || fread(in, 1, in_bytes, f) != in_bytes) return 3;
  fclose(f);
  for (u32 gid = 0; gid < {n}u; gid++) body(gid, in, out);
  f = fopen(argv[2], "wb");
  if (!f || fwrite(out, 1, out_bytes, f) != out_bytes) return 4;
  return fclose(f) != 0;
}}
"#,
        inb = layout.in_bytes,
        outb = layout.host_out_bytes(),
        n = p.lanes
    )
    .unwrap();
    o
}
