//! Runs a program both ways and compares: the host oracle (compiled with
//! `cc`), softgpu (the kernel compiled with clang-19 for a target and wave
//! size), bit for bit except that any NaN equals any NaN.

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;

use softgpu_exec::{Arg, Device, DispatchDesc, DispatchError, Launch};

use super::data::{inputs, Layout};
use super::emit::{self, KERNEL};
use super::gen::Program;
use super::types::read_value;
use crate::{compile_cached, scratch_dir, Lang};

/// A target and wave size to run on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub target: String,
    pub wave64: bool,
}

impl Config {
    /// Every kernel-test target in wave32 and wave64 (CDNA's in wave64,
    /// its only width).
    pub fn all() -> Vec<Config> {
        let mut v = vec![];
        for t in crate::TARGETS {
            let only64 = softgpu_isa::target::wave64_only(t);
            for wave64 in [false, true].into_iter().filter(|&w| w || !only64) {
                v.push(Config {
                    target: t.into(),
                    wave64,
                });
            }
        }
        v
    }

    /// clang options: correctly rounded f32 division (as the oracle's), the
    /// wave size.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f = vec!["-cl-fp32-correctly-rounded-divide-sqrt"];
        if self.wave64 {
            f.push("-mwavefrontsize64");
        }
        f
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let w = if self.wave64 { 64 } else { 32 };
        write!(f, "{} wave{w}", self.target)
    }
}

/// A program with its inputs and the oracle's outputs.
pub struct Case {
    pub program: Program,
    pub layout: Layout,
    pub input: Vec<u8>,
    pub want: Vec<u8>,
}

impl Case {
    /// Generates the inputs and runs the host oracle (panics, naming the
    /// Debian package, when there is no C compiler).
    pub fn new(program: Program) -> Case {
        let layout = Layout::new(&program);
        let input = inputs(&program, &layout);
        let want = run_host(
            &emit::host(&program, &layout),
            &input,
            layout.host_out_bytes(),
        );
        Case {
            program,
            layout,
            input,
            want,
        }
    }

    /// The kernel's source.
    pub fn opencl(&self) -> String {
        emit::opencl(&self.program, &self.layout)
    }

    /// The host oracle's source.
    pub fn host(&self) -> String {
        emit::host(&self.program, &self.layout)
    }

    /// Compiles the kernel for `cfg` (panics with clang's message on a
    /// compile error) and runs it on `dev`, returning the output buffer.
    pub fn run_gpu(&self, dev: &Device, cfg: &Config) -> Result<Vec<u8>, String> {
        let code = compile_cached(&self.opencl(), Lang::OpenCl, &cfg.target, &cfg.flags());
        let prog = dev.load(&code).map_err(|e| format!("load: {e}"))?;
        let p = &self.program;
        let inb = dev.alloc_from(&self.input).map_err(|e| e.to_string())?;
        // A pattern, so an output the kernel never writes shows up.
        let outb = dev
            .alloc_from(&vec![0xa5; self.layout.out_bytes])
            .map_err(|e| e.to_string())?;
        let launch = Launch {
            grid: [p.lanes.div_ceil(p.block), 1, 1],
            block: [p.block, 1, 1],
            dynamic_lds: 0,
        };
        let args = [Arg::Buffer(inb), Arg::Buffer(outb), Arg::U32(p.lanes)];
        let res = (prog.kernel(KERNEL).map_err(DispatchError::from))
            .and_then(|kernel| dev.dispatch(&DispatchDesc::launch(&prog, kernel, &launch, &args)));
        let out = dev.read(&outb).map_err(|e| e.to_string());
        let _ = dev.free(inb);
        let _ = dev.free(outb);
        res.map_err(|e| format!("dispatch on {cfg}: {e}"))?;
        out
    }

    /// The statements whose outputs differ from the oracle's.
    pub fn compare(&self, got: &[u8], cfg: &Config) -> Vec<Mismatch> {
        let p = &self.program;
        let mut v = vec![];
        for (i, (k, s)) in p.stmts.iter().enumerate() {
            let out = s.out_ty();
            let at = self.layout.outs[i];
            let bad: Vec<usize> = (0..p.lanes as usize)
                .filter(|&lane| {
                    // The oracle flags lanes whose result hinged on a
                    // signalling NaN (host_prelude.c: `unspecified`).
                    if self.want[self.layout.skip_at(i) + lane] != 0 {
                        return false;
                    }
                    let g = read_value(got, at, out, lane);
                    let w = read_value(&self.want, at, out, lane);
                    g.iter().zip(&w).any(|(a, b)| !out.elem.same(*a, *b))
                })
                .collect();
            let Some(&lane) = bad.first() else { continue };
            let inputs = s
                .vars
                .iter()
                .enumerate()
                .map(|(vi, var)| {
                    let st = var.storage();
                    let val = read_value(&self.input, self.layout.vars[i][vi], st, lane);
                    let name = if vi == 0 {
                        "c".into()
                    } else {
                        format!("v{vi}")
                    };
                    let how = if var.half_load { " (half bits)" } else { "" };
                    format!("{name}: {} = {}{how}", st.cl(), st.show(&val))
                })
                .collect();
            v.push(Mismatch {
                seed: p.seed,
                stmt: *k,
                config: cfg.to_string(),
                focus: s.focus.clone(),
                lanes: bad.len(),
                of: p.lanes as usize,
                lane,
                source: emit::ocl_stmt(s, &self.layout.vars[i], at),
                inputs,
                got: out.show(&read_value(got, at, out, lane)),
                want: out.show(&read_value(&self.want, at, out, lane)),
            });
        }
        v
    }
}

/// One statement whose result differs from the oracle's.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub seed: u64,
    pub stmt: usize,
    pub config: String,
    pub focus: String,
    /// Lanes that differ, of `of`.
    pub lanes: usize,
    pub of: usize,
    /// The first of them.
    pub lane: usize,
    pub source: String,
    pub inputs: Vec<String>,
    pub got: String,
    pub want: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            f,
            "seed {} statement {} on {}: {} of {} lanes differ ({})",
            self.seed, self.stmt, self.config, self.lanes, self.of, self.focus
        )?;
        write!(f, "{}", self.source)?;
        writeln!(f, "  first at lane (gid) {}:", self.lane)?;
        for i in &self.inputs {
            writeln!(f, "    {i}")?;
        }
        writeln!(f, "    got  {}", self.got)?;
        writeln!(f, "    want {}", self.want)?;
        write!(
            f,
            "  reproduce: cargo run --release -p softgpu-kernel-tests --bin diffgen -- --first {} --seeds 1 --stmt {} --target {}{}",
            self.seed,
            self.stmt,
            self.config.split(' ').next().unwrap_or(""),
            if self.config.ends_with("64") { " --wave64" } else { " --wave32" }
        )
    }
}

/// Compiles and runs the host oracle; outputs are cached on disk by source
/// and input (next to the kernel cache), so reruns skip `cc`.
fn run_host(source: &str, input: &[u8], out_bytes: usize) -> Vec<u8> {
    let mut h = DefaultHasher::new();
    (source, input).hash(&mut h);
    let key = format!("{:016x}", h.finish());
    let cached: Option<PathBuf> =
        crate::disk_cache_dir().map(|d| d.join("diffgen-host").join(format!("{key}.out")));
    if let Some(out) = cached.as_ref().and_then(|p| std::fs::read(p).ok()) {
        if out.len() == out_bytes {
            return out;
        }
    }
    let dir = scratch_dir().join(format!("diffgen-{key}"));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let (src, exe, fin, fout) = (
        dir.join("host.c"),
        dir.join("host"),
        dir.join("in.bin"),
        dir.join("out.bin"),
    );
    std::fs::write(&src, source).unwrap();
    std::fs::write(&fin, input).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        // The oracle has no undefined behaviour, so the optimisation level
        // cannot change its results; -O0 compiles fastest.
        .args(["-O0", "-std=gnu11", "-ffp-contract=off", "-fno-fast-math", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run the host C compiler `{cc}` ({e}): install the Debian package gcc (or set CC)")
        });
    assert!(
        out.status.success(),
        "host oracle {} does not compile:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let st = Command::new(&exe).arg(&fin).arg(&fout).status().unwrap();
    assert!(st.success(), "host oracle {} failed: {st}", exe.display());
    let res = std::fs::read(&fout).unwrap();
    assert_eq!(res.len(), out_bytes, "host oracle output size");
    if let Some(p) = cached {
        // Written whole, then renamed: a concurrent reader sees all or nothing.
        let _ = std::fs::create_dir_all(p.parent().unwrap());
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &res).is_ok() {
            let _ = std::fs::rename(&tmp, &p);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    res
}
