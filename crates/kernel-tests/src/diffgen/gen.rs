//! The program model and its random generator.
//!
//! A program is one kernel of many independent statements. Each statement
//! loads its own inputs, computes a result `r` of one (vector) type through
//! a small tree of control flow (`if`/`else`, `switch`, loops whose trip
//! counts and conditions depend on the work-item id and on input data, so
//! lanes diverge), and stores `r` to its own output region. Every value is a
//! tree of calls from the catalogue; the host oracle evaluates the same tree
//! component by component.
//!
//! Determinism: statement `k` of seed `s` is generated from its own PRNG
//! stream (`stmt_rng(s, k)`), so it is the same program text whether it is
//! generated inside the whole kernel or alone (`Program::only`).

use super::catalogue::{entry, library_deviates, Arg, Builtin, Round, Src, CATALOGUE};
use super::types::{Scalar, Ty, WIDTHS};
use crate::Rng;

/// What a statement's inputs may hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    /// Any bits.
    Any,
    /// The statement's control word (`c`, a `uint` the conditions read).
    Ctl,
    /// Floats whose conversion to `to` in `round` (no `_sat`) is in range:
    /// out-of-range float → integer conversions are undefined.
    FloatToInt { to: Scalar, round: Round },
    /// Operands of `mul24`/`mad24`: 24-bit signed (int) or unsigned (uint).
    Int24,
}

/// One input of a statement: `ty` per work-item, in its own buffer region.
#[derive(Clone, Debug)]
pub struct Var {
    pub ty: Ty,
    /// Stored as half bits and read with `vload_halfN` (`ty` is float).
    pub half_load: bool,
    pub domain: Domain,
}

impl Var {
    /// The type of the stored bits.
    pub fn storage(&self) -> Ty {
        if self.half_load {
            self.ty.with(Scalar::Half)
        } else {
            self.ty
        }
    }
}

/// An operation of an expression tree.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Builtin(&'static Builtin),
    /// `convert_T{_sat}{_rtX}` to the node's type.
    Convert {
        sat: bool,
        round: Round,
    },
    /// `as_T` between element types of one size.
    As,
}

/// An expression of type `ty`.
#[derive(Clone, Debug)]
pub struct Expr {
    pub ty: Ty,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub enum Kind {
    /// Input `v{i}` of the statement.
    Var(usize),
    /// The statement's result so far (`r`), inside loops.
    Acc,
    /// A constant (one component's bits), broadcast to the width.
    Const(u64),
    Call(Op, Vec<Expr>),
}

impl Expr {
    /// The source type of the call's first argument.
    pub fn arg_ty(&self, i: usize) -> Ty {
        match &self.kind {
            Kind::Call(_, args) => args[i].ty,
            _ => panic!("not a call"),
        }
    }
}

/// Control flow around the assignments to `r`. Conditions, selectors and
/// trip counts are C text valid in OpenCL and host C alike (they read only
/// `gid` and `c`, both 32-bit unsigned).
#[derive(Clone, Debug)]
pub enum Body {
    Assign(Expr),
    Seq(Vec<Body>),
    If(String, Box<Body>, Option<Box<Body>>),
    /// `switch (sel)`: arm `i` is `case i`, the last arm `default`.
    Switch(String, Vec<Body>),
    Loop(String, Box<Body>),
}

/// How `r` reaches memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Store {
    /// `vstoreN(r, ...)`.
    Plain,
    /// `vstore_halfN{_rtX}(r, ...)` (float or double `r`).
    Half(Round),
    /// `vstoreM(as_UM(r), ...)`: reinterpreted as another type of the same
    /// size.
    As(Ty),
}

/// One statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// Inputs; `vars[0]` is the control word `c`.
    pub vars: Vec<Var>,
    pub ty: Ty,
    /// Initial value of `r` (`None`: zero).
    pub init: Option<Expr>,
    pub body: Body,
    pub store: Store,
    /// What this statement is there to cover, for reports.
    pub focus: String,
}

impl Stmt {
    /// The type written to the output region.
    pub fn out_ty(&self) -> Ty {
        match self.store {
            Store::Plain => self.ty,
            Store::Half(_) => self.ty.with(Scalar::Half),
            Store::As(t) => t,
        }
    }
}

/// A whole generated kernel.
#[derive(Clone, Debug)]
pub struct Program {
    pub seed: u64,
    /// Work-items (`n`); those past it return at once.
    pub lanes: u32,
    /// Work-group size.
    pub block: u32,
    /// Statements with their index in the seed's full program.
    pub stmts: Vec<(usize, Stmt)>,
}

/// What a statement covers: the call (or store) at the root of its main
/// assignment.
#[derive(Clone, Copy, Debug)]
pub enum Focus {
    Builtin(&'static Builtin, Scalar),
    /// `round: None`: any mode (integer → integer, where it changes nothing).
    Convert {
        from: Scalar,
        to: Scalar,
        sat: bool,
        round: Option<Round>,
    },
    As {
        from: Scalar,
        to: Scalar,
    },
    HalfStore {
        from: Scalar,
        round: Round,
    },
    HalfLoad,
    /// A result of `from` bytes per element stored as `to`-byte elements.
    Reinterpret {
        from: usize,
        to: usize,
    },
}

/// Every focus, in a fixed order: program `s` covers the entries whose index
/// is `s % SLICES` modulo [`SLICES`], so the seeds `0..SLICES` cover all of
/// them (every built-in over every element type it accepts, every
/// conversion with every rounding mode and saturation it allows).
pub fn focus_list() -> Vec<Focus> {
    let mut v = vec![];
    for b in CATALOGUE {
        for t in Scalar::ALL {
            if b.res.admits(t) {
                v.push(Focus::Builtin(b, t));
            }
        }
    }
    for to in Scalar::ALL {
        for from in Scalar::ALL {
            let sats: &[bool] = if to.is_int() {
                &[false, true]
            } else {
                &[false]
            };
            for &sat in sats {
                if from.is_int() && to.is_int() {
                    v.push(Focus::Convert {
                        from,
                        to,
                        sat,
                        round: None,
                    });
                } else {
                    for r in Round::ALL
                        .into_iter()
                        .filter(|&r| !library_deviates(from, to, r))
                    {
                        v.push(Focus::Convert {
                            from,
                            to,
                            sat,
                            round: Some(r),
                        });
                    }
                }
            }
        }
    }
    for from in Scalar::ALL {
        for to in Scalar::ALL {
            if from != to && from.bytes() == to.bytes() {
                v.push(Focus::As { from, to });
            }
        }
    }
    for from in [Scalar::Float, Scalar::Double] {
        for round in Round::ALL {
            v.push(Focus::HalfStore { from, round });
        }
    }
    v.push(Focus::HalfLoad);
    for from in [1, 2, 4, 8] {
        for to in [1, 2, 4, 8] {
            if from != to {
                v.push(Focus::Reinterpret { from, to });
            }
        }
    }
    v
}

/// Number of coverage slices (see [`focus_list`]).
pub const SLICES: u64 = 12;
/// Statements with a random focus added to every program.
pub const EXTRA: usize = 8;

fn mix(seed: u64, k: u64, salt: u64) -> u64 {
    let mut r = Rng::new(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt);
    r.next_u64()
}

/// The PRNG of statement `k` of seed `seed` (its text) ...
pub fn stmt_rng(seed: u64, k: usize) -> Rng {
    Rng::new(mix(seed, k as u64, 0x5747))
}

/// ... and of its input data.
pub fn data_rng(seed: u64, k: usize) -> Rng {
    Rng::new(mix(seed, k as u64, 0xda7a))
}

impl Program {
    /// The program of `seed`.
    pub fn generate(seed: u64) -> Program {
        let all = focus_list();
        let mut rng = Rng::new(mix(seed, 0, 0x9e0));
        let lanes = 64 + rng.below(200) as u32;
        let block = [32, 64, 128, 256][rng.below(4) as usize];
        let mine = (0..all.len()).filter(|i| *i as u64 % SLICES == seed % SLICES);
        let mut foci: Vec<Focus> = mine.map(|i| all[i]).collect();
        for _ in 0..EXTRA {
            foci.push(all[rng.below(all.len() as u64) as usize]);
        }
        let stmts = foci
            .iter()
            .enumerate()
            .map(|(k, f)| (k, StmtGen::new(seed, k, lanes).stmt(f)))
            .collect();
        Program {
            seed,
            lanes,
            block,
            stmts,
        }
    }

    /// The same program reduced to the statements in `keep` (by index).
    pub fn only(mut self, keep: &[usize]) -> Program {
        self.stmts.retain(|(k, _)| keep.contains(k));
        self
    }
}

/// Generates one statement.
struct StmtGen {
    rng: Rng,
    vars: Vec<Var>,
    lanes: u32,
    /// The statement's type (that of `r`), once chosen.
    ty: Ty,
}

/// Options for a generated sub-expression.
#[derive(Clone, Copy, Default)]
struct Want {
    /// Float values must carry determined NaN payloads (they will be
    /// reinterpreted as integers).
    exact: bool,
    /// The root must not be a multiplication: see [`StmtGen::convert`].
    no_mul: bool,
    /// Inside a loop: `r` may be read.
    in_loop: bool,
}

const MAX_DEPTH: u32 = 3;

impl StmtGen {
    fn new(seed: u64, k: usize, lanes: u32) -> StmtGen {
        StmtGen {
            rng: stmt_rng(seed, k),
            vars: vec![Var {
                ty: Ty::new(Scalar::UInt, 1),
                half_load: false,
                domain: Domain::Ctl,
            }],
            lanes,
            ty: Ty::new(Scalar::Int, 1),
        }
    }

    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.rng.below(v.len() as u64) as usize]
    }

    /// Widths weighted toward the short ones (smaller code), every one used.
    fn width(&mut self) -> u8 {
        self.pick(&[1, 1, 1, 2, 2, 3, 4, 4, 8, 16])
    }

    fn stmt(mut self, focus: &Focus) -> Stmt {
        let mut store = Store::Plain;
        let (elem, name) = match *focus {
            Focus::Builtin(b, t) => {
                let args: Vec<&str> = b
                    .args
                    .iter()
                    .map(|a| match a {
                        Arg::Res => "T",
                        Arg::ResScalar => "scalar",
                        Arg::Src => "S",
                        Arg::SrcUnsigned => "unsigned S",
                        Arg::Divisor => "constant",
                        Arg::Int24 => "24-bit",
                    })
                    .collect();
                (
                    t,
                    format!("{}({}) with T = {}", b.name, args.join(", "), t.cl()),
                )
            }
            Focus::Convert {
                from,
                to,
                sat,
                round,
            } => (
                to,
                format!(
                    "convert {} -> {} sat={sat} round={round:?}",
                    from.cl(),
                    to.cl()
                ),
            ),
            Focus::As { from, to } => (to, format!("as_{} of {}", to.cl(), from.cl())),
            Focus::HalfStore { from, round } => {
                store = Store::Half(round);
                (
                    from,
                    format!("vstore_half{} of {}", round.suffix(), from.cl()),
                )
            }
            Focus::HalfLoad => (Scalar::Float, "vload_half".to_string()),
            Focus::Reinterpret { from, to } => {
                let e = self.pick(&same_size(from));
                (
                    e,
                    format!("reinterpret {from}-byte elements as {to}-byte ones"),
                )
            }
        };
        let mut width = self.width();
        if let Focus::Reinterpret { from, to } = *focus {
            // Whole vectors of 1, 2, 4, 8 or 16 elements on both sides (no
            // 3-vectors: their storage has padding).
            let ws: Vec<u8> = WIDTHS
                .iter()
                .copied()
                .filter(|&w| w != 3 && WIDTHS.contains(&((w as usize * from / to) as u8)))
                .filter(|&w| (w as usize * from).is_multiple_of(to))
                .collect();
            width = self.pick(&ws);
            let out_elem = self.pick(&same_size(to));
            store = Store::As(Ty::new(out_elem, (width as usize * from / to) as u8));
        }
        self.ty = Ty::new(elem, width);
        if let Focus::Builtin(..) | Focus::Convert { .. } | Focus::As { .. } | Focus::HalfLoad =
            focus
        {
            // Random stores on top of the focus: half stores, reinterpretation.
            if elem == Scalar::Float || elem == Scalar::Double {
                if self.rng.chance(0.08) {
                    store = Store::Half(self.pick(&Round::ALL));
                }
            } else if width != 3 && self.rng.chance(0.06) {
                let to = self.pick(&[1usize, 2, 4, 8]);
                let total = width as usize * elem.bytes();
                if total.is_multiple_of(to) && WIDTHS.contains(&((total / to) as u8)) {
                    let e = self.pick(&same_size(to));
                    store = Store::As(Ty::new(e, (total / to) as u8));
                }
            }
        }
        let base = Want {
            // A float result reinterpreted as another type must have exact
            // NaN payloads.
            exact: matches!(store, Store::As(_)) && elem.is_float(),
            // See `convert`.
            no_mul: elem == Scalar::Float
                && matches!(store, Store::Half(r) if r.resolve(Scalar::Half) == Round::Rte),
            in_loop: false,
        };

        let mut body = self.shape(2, true);
        let holes = count_holes(&body);
        let at = self.rng.below(holes as u64) as usize;
        let mut next = 0;
        self.fill(&mut body, false, &mut next, at, focus, base);
        let init = if self.rng.chance(0.5) {
            None
        } else {
            Some(self.expr(self.ty, 1, base))
        };
        Stmt {
            vars: self.vars,
            ty: self.ty,
            init,
            body,
            store,
            focus: name,
        }
    }

    /// A control-flow shape with placeholder assignments. At the top, a
    /// plain assignment is rare: most statements diverge.
    fn shape(&mut self, depth: u32, top: bool) -> Body {
        let hole = || {
            Body::Assign(Expr {
                ty: Ty::new(Scalar::Int, 1),
                kind: Kind::Acc,
            })
        };
        if depth == 0 || self.rng.chance(if top { 0.15 } else { 0.45 }) {
            return hole();
        }
        match self.rng.below(8) {
            0..=2 => {
                let c = self.cond();
                let t = self.shape(depth - 1, false);
                let e = self
                    .rng
                    .chance(0.5)
                    .then(|| Box::new(self.shape(depth - 1, false)));
                Body::If(c, Box::new(t), e)
            }
            3 | 4 => {
                let sel = self.selector();
                let arms = 2 + self.rng.below(3);
                Body::Switch(
                    sel,
                    (0..arms).map(|_| self.shape(depth - 1, false)).collect(),
                )
            }
            5 | 6 => {
                let trips = self.trips();
                Body::Loop(trips, Box::new(self.shape(depth - 1, false)))
            }
            _ => Body::Seq(vec![
                self.shape(depth - 1, false),
                self.shape(depth - 1, false),
            ]),
        }
    }

    /// Replaces the placeholders: hole `at` gets the focus, the others random
    /// expressions of the statement's type.
    fn fill(
        &mut self,
        b: &mut Body,
        in_loop: bool,
        next: &mut usize,
        at: usize,
        f: &Focus,
        want: Want,
    ) {
        match b {
            Body::Assign(e) => {
                let want = Want { in_loop, ..want };
                *e = if *next == at {
                    self.focus_expr(f, want)
                } else {
                    self.expr(self.ty, 2, want)
                };
                *next += 1;
            }
            Body::Seq(v) | Body::Switch(_, v) => {
                for x in v {
                    self.fill(x, in_loop, next, at, f, want);
                }
            }
            Body::If(_, t, e) => {
                self.fill(t, in_loop, next, at, f, want);
                if let Some(e) = e {
                    self.fill(e, in_loop, next, at, f, want);
                }
            }
            Body::Loop(_, x) => self.fill(x, true, next, at, f, want),
        }
    }

    fn focus_expr(&mut self, f: &Focus, want: Want) -> Expr {
        let ty = self.ty;
        match *f {
            Focus::Builtin(b, _) => self.builtin(b, ty, MAX_DEPTH, want),
            Focus::Convert {
                from, sat, round, ..
            } => {
                let round = round.unwrap_or_else(|| self.pick(&Round::ALL));
                self.convert(ty, from, sat, round, MAX_DEPTH, want)
            }
            Focus::As { from, .. } => self.reinterpret(ty, from, MAX_DEPTH, want),
            Focus::HalfLoad => {
                let v = self.new_var(ty, Domain::Any, true);
                Expr {
                    ty,
                    kind: Kind::Var(v),
                }
            }
            Focus::HalfStore { .. } | Focus::Reinterpret { .. } => self.call(ty, MAX_DEPTH, want),
        }
    }

    fn cond(&mut self) -> String {
        let one = |g: &mut StmtGen| -> String {
            match g.rng.below(6) {
                0 => format!("(gid & {}u) != 0u", g.pick(&[1, 2, 3, 4, 5, 8, 16, 32])),
                1 => {
                    let m = 2 + g.rng.below(6);
                    format!("gid % {m}u == {}u", g.rng.below(m))
                }
                2 => format!("gid < {}u", g.rng.below(g.lanes as u64)),
                3 => format!("(c & {}u) != 0u", g.pick(&[1, 2, 4, 6, 64, 0x300])),
                4 => format!("(c >> {}) % 3u == 0u", g.rng.below(8)),
                _ => format!("((gid ^ c) & {}u) == 0u", g.pick(&[1, 3, 7])),
            }
        };
        match self.rng.below(6) {
            0 => format!("({}) && ({})", one(self), one(self)),
            1 => format!("({}) || !({})", one(self), one(self)),
            _ => one(self),
        }
    }

    fn selector(&mut self) -> String {
        let m = 2 + self.rng.below(4);
        match self.rng.below(4) {
            0 => format!("gid % {m}u"),
            1 => format!("c % {m}u"),
            2 => format!("(gid ^ c) % {m}u"),
            _ => format!("(gid >> {}) % {m}u", 1 + self.rng.below(3)),
        }
    }

    fn trips(&mut self) -> String {
        match self.rng.below(4) {
            0 => "gid % 4u".into(),
            1 => "c & 3u".into(),
            2 => format!("(gid >> {}) & 3u", 1 + self.rng.below(3)),
            _ => "(gid + c) % 5u".into(),
        }
    }

    fn new_var(&mut self, ty: Ty, domain: Domain, half_load: bool) -> usize {
        self.vars.push(Var {
            ty,
            half_load,
            domain,
        });
        self.vars.len() - 1
    }

    /// A leaf: `r` (in loops), a constant, an input used before or a new one.
    fn leaf(&mut self, ty: Ty, want: Want) -> Expr {
        let float_exact = want.exact && ty.elem.is_float();
        if want.in_loop && ty == self.ty && !float_exact && self.rng.chance(0.4) {
            return Expr {
                ty,
                kind: Kind::Acc,
            };
        }
        if self.rng.chance(0.12) {
            let bits = self.constant(ty.elem);
            return Expr {
                ty,
                kind: Kind::Const(bits),
            };
        }
        let reusable: Vec<usize> = (1..self.vars.len())
            .filter(|&i| {
                let v = &self.vars[i];
                v.ty == ty && v.domain == Domain::Any && !(v.half_load && float_exact)
            })
            .collect();
        if !reusable.is_empty() && self.rng.chance(0.25) {
            let v = self.pick(&reusable);
            return Expr {
                ty,
                kind: Kind::Var(v),
            };
        }
        let half = ty.elem == Scalar::Float && !float_exact && self.rng.chance(0.15);
        let v = self.new_var(ty, Domain::Any, half);
        Expr {
            ty,
            kind: Kind::Var(v),
        }
    }

    fn constant(&mut self, t: Scalar) -> u64 {
        if t.is_int() {
            let (lo, hi) = t.int_range();
            let v: i128 = match self.rng.below(4) {
                0 => self.rng.range_i64(-4, 9) as i128,
                1 => self.pick(&[lo, hi, lo + 1, hi - 1, 7, 100, 1000, 255, 65535]),
                2 => 1i128 << self.rng.below(t.bits() as u64 - t.is_signed_int() as u64),
                _ => self.rng.next_u64() as i128,
            };
            return (v.clamp(lo, hi) as u64) & t.mask();
        }
        let v: f64 = match self.rng.below(3) {
            0 => self.pick(&[0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -2.5, 65504.0, 1.0e-3]),
            1 => self.rng.range_i64(-300, 300) as f64 / 8.0,
            _ => self.rng.f64_in(-1.0, 1.0) * 2f64.powi(self.rng.range_i64(-20, 20) as i32),
        };
        match t {
            Scalar::Half => super::data::f64_to_half(v) as u64,
            Scalar::Float => (v as f32).to_bits() as u64,
            _ => v.to_bits(),
        }
    }

    /// A random expression of type `ty` at most `depth` calls deep.
    fn expr(&mut self, ty: Ty, depth: u32, want: Want) -> Expr {
        if depth == 0 || self.rng.chance(0.35) {
            return self.leaf(ty, want);
        }
        self.call(ty, depth, want)
    }

    /// A random call returning `ty`.
    fn call(&mut self, ty: Ty, depth: u32, want: Want) -> Expr {
        let t = ty.elem;
        if want.exact && t.is_float() {
            // Only bit moves keep NaN payloads determined.
            return match self.rng.below(3) {
                0 => self.builtin(
                    entry("select", &[Arg::Res, Arg::Res, Arg::Src]),
                    ty,
                    depth,
                    want,
                ),
                1 => self.builtin(
                    entry("bitselect", &[Arg::Res, Arg::Res, Arg::Res]),
                    ty,
                    depth,
                    want,
                ),
                _ => {
                    let from = Scalar::int(t.bytes(), self.rng.chance(0.5));
                    self.reinterpret(ty, from, depth, want)
                }
            };
        }
        for _ in 0..8 {
            let e = match self.rng.below(10) {
                0 | 1 => {
                    let from = self.pick(&Scalar::ALL);
                    let sat = t.is_int() && self.rng.chance(0.5);
                    let round = self.pick(&Round::ALL);
                    if library_deviates(from, t, round) {
                        continue;
                    }
                    self.convert(ty, from, sat, round, depth, want)
                }
                2 => {
                    let from = self.pick(&same_size(t.bytes()));
                    if from == t {
                        continue;
                    }
                    self.reinterpret(ty, from, depth, want)
                }
                _ => {
                    let cands: Vec<&'static Builtin> =
                        CATALOGUE.iter().filter(|b| b.res.admits(t)).collect();
                    let b = self.pick(&cands);
                    if want.no_mul && b.name == "op_mul" {
                        continue;
                    }
                    self.builtin(b, ty, depth, want)
                }
            };
            return e;
        }
        self.leaf(ty, want)
    }

    fn builtin(&mut self, b: &'static Builtin, ty: Ty, depth: u32, want: Want) -> Expr {
        let t = ty.elem;
        let src = match b.src {
            Src::None => t,
            Src::EitherSign | Src::Mask => Scalar::int(t.bytes(), self.rng.chance(0.5)),
            Src::HalfSize => Scalar::int(t.bytes() / 2, t.is_signed_int()),
        };
        let sub = Want {
            no_mul: false,
            exact: want.exact || (b.exact_args && t.is_float()),
            ..want
        };
        let d = depth.saturating_sub(1);
        let scalar = Ty::new(t, 1);
        let mut args: Vec<Expr> = b
            .args
            .iter()
            .map(|a| match a {
                Arg::Res => self.expr(ty, d, sub),
                Arg::ResScalar => self.expr(scalar, d, sub),
                // The mask's bits decide, not its value: any expression.
                Arg::Src => self.expr(
                    ty.with(src),
                    d,
                    Want {
                        exact: false,
                        ..sub
                    },
                ),
                Arg::SrcUnsigned => self.expr(ty.with(src.unsigned()), d, sub),
                Arg::Divisor => {
                    let (lo, hi) = t.int_range();
                    let mut v = 0;
                    while v == 0 || v == -1 {
                        v = match self.rng.below(4) {
                            0 => self.rng.range_i64(-20, 20) as i128,
                            1 => self.pick(&[3, 7, 10, 1000, 641, 0x5555, 1 << 20, hi, lo]),
                            2 => {
                                1i128 << self.rng.below(t.bits() as u64 - t.is_signed_int() as u64)
                            }
                            _ => t.int_value(self.rng.next_u64()),
                        };
                        v = v.clamp(lo, hi);
                    }
                    Expr {
                        ty,
                        kind: Kind::Const(v as u64 & t.mask()),
                    }
                }
                Arg::Int24 => {
                    let v = self.new_var(ty, Domain::Int24, false);
                    Expr {
                        ty,
                        kind: Kind::Var(v),
                    }
                }
            })
            .collect();
        if b.ordered {
            // clamp(x, min(p, q), max(p, q)): lo <= hi always.
            let (p, q) = (args[1].clone(), args[2].clone());
            let pair = [Arg::Res, Arg::Res];
            let lo_hi = |name| Expr {
                ty: p.ty,
                kind: Kind::Call(Op::Builtin(entry(name, &pair)), vec![p.clone(), q.clone()]),
            };
            args[1] = lo_hi("min");
            args[2] = lo_hi("max");
        }
        Expr {
            ty,
            kind: Kind::Call(Op::Builtin(b), args),
        }
    }

    /// `convert_T{_sat}{_rtX}(x)` with `x` of element type `from`.
    ///
    /// clang-19 compiles a round-to-nearest float → half conversion of a
    /// product (`vstore_half_rte(a * b)`, `convert_half(a * b)`) to
    /// `v_fma_mixlo_f16 a, b, +0`, which turns a product of −0 into +0: a
    /// compiler defect, not softgpu's, so the generator never puts a float
    /// multiplication directly under such a conversion (`Want::no_mul`).
    fn convert(
        &mut self,
        ty: Ty,
        from: Scalar,
        sat: bool,
        round: Round,
        depth: u32,
        want: Want,
    ) -> Expr {
        let src = ty.with(from);
        let arg = if from.is_float() && ty.elem.is_int() && !sat {
            // Out-of-range conversions are undefined: a leaf in range.
            let v = self.new_var(src, Domain::FloatToInt { to: ty.elem, round }, false);
            Expr {
                ty: src,
                kind: Kind::Var(v),
            }
        } else {
            let no_mul = from == Scalar::Float
                && ty.elem == Scalar::Half
                && round.resolve(Scalar::Half) == Round::Rte;
            let sub = Want {
                exact: false,
                no_mul,
                ..want
            };
            self.expr(src, depth.saturating_sub(1), sub)
        };
        Expr {
            ty,
            kind: Kind::Call(Op::Convert { sat, round }, vec![arg]),
        }
    }

    /// `as_T(x)` with `x` of element type `from` (same size).
    fn reinterpret(&mut self, ty: Ty, from: Scalar, depth: u32, want: Want) -> Expr {
        // Reading a float's bits needs a determined payload.
        let sub = Want {
            exact: from.is_float(),
            no_mul: false,
            ..want
        };
        let arg = self.expr(ty.with(from), depth.saturating_sub(1), sub);
        Expr {
            ty,
            kind: Kind::Call(Op::As, vec![arg]),
        }
    }
}

/// The element types of `bytes` bytes.
pub fn same_size(bytes: usize) -> Vec<Scalar> {
    Scalar::ALL
        .into_iter()
        .filter(|t| t.bytes() == bytes)
        .collect()
}

fn count_holes(b: &Body) -> usize {
    match b {
        Body::Assign(_) => 1,
        Body::Seq(v) | Body::Switch(_, v) => v.iter().map(count_holes).sum(),
        Body::If(_, t, e) => count_holes(t) + e.as_ref().map_or(0, |e| count_holes(e)),
        Body::Loop(_, x) => count_holes(x),
    }
}
