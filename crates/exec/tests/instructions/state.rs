//! The state a case sets and checks: every register, the test buffer, LDS
//! and scratch. Whatever a case does not set starts as noise, and whatever
//! it does not expect must end as it started.

use softgpu_exec::harness::{
    Bench, Lanes, BUFFER_BYTES, LDS_BYTES, MAX_LANES, NUM_SGPRS, SCRATCH_LANE_BYTES,
};

use crate::syntax::{Half, Loc, Space, Value};

/// The bench addresses values may name.
#[derive(Clone, Copy)]
pub struct Addrs {
    pub buffer: u64,
    pub code: u64,
}

/// MODE as gfx11 kernels usually start: round to nearest even, f32 and
/// f16/f64 denormals kept, DX10 clamp and IEEE mode on (rsrc1's defaults
/// for compute kernels built by clang).
pub const DEFAULT_MODE: u32 = 3 << 4 | 3 << 6 | 1 << 8 | 1 << 9;

/// MODE as `target`'s kernels start: gfx12 has no IEEE mode, so its
/// launches leave the bit clear (the executor's launch ABI, `abi.rs`).
pub fn default_mode(target: &str) -> u32 {
    match softgpu_isa::Family::of_target(target) {
        Some(softgpu_isa::Family::Gfx12) => DEFAULT_MODE & !(1 << 9),
        _ => DEFAULT_MODE,
    }
}

const EXEC_LO: usize = 126;
const NULL: usize = 124;

#[derive(Clone, PartialEq)]
pub struct State {
    pub lanes: usize,
    pub vgpr: Vec<Lanes>,
    pub sgpr: [u32; NUM_SGPRS],
    pub scc: bool,
    pub mode: u32,
    pub buffer: Vec<u8>,
    pub lds: Vec<u8>,
    pub scratch: Vec<u8>,
}

/// A VGPR's name: `vN`, or `aN` for CDNA's AccVGPRs (the file's second
/// 256 registers).
fn vgpr_name(r: usize) -> String {
    match r.checked_sub(256) {
        Some(a) => format!("a{a}"),
        None => format!("v{r}"),
    }
}

/// A repeatable pseudo-random word for position `k` (splitmix64).
fn noise(k: u64) -> u32 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

fn noise_bytes(len: usize, seed: u64) -> Vec<u8> {
    (0..len / 4)
        .flat_map(|i| noise(seed + i as u64).to_le_bytes())
        .collect()
}

impl State {
    /// Noise everywhere, except: EXEC has every lane on, `null` reads 0,
    /// SCC is 0 and MODE is `mode`; `vgprs` registers per lane (the
    /// bench's file: 512 on CDNA, whose AccVGPRs follow the VGPRs).
    pub fn noise(lanes: usize, mode: u32, vgprs: usize) -> State {
        let vgpr = (0..vgprs)
            .map(|r| std::array::from_fn(|l| noise((r * MAX_LANES + l) as u64)))
            .collect();
        let mut sgpr = std::array::from_fn(|s| noise(0x10_0000 + s as u64));
        sgpr[NULL] = 0;
        let mut state = State {
            lanes,
            vgpr,
            sgpr,
            scc: false,
            mode,
            buffer: noise_bytes(BUFFER_BYTES, 0x20_0000),
            lds: noise_bytes(LDS_BYTES, 0x30_0000),
            scratch: noise_bytes(SCRATCH_LANE_BYTES * MAX_LANES, 0x40_0000),
        };
        state.set_mask(EXEC_LO, state.full_mask());
        state
    }

    pub fn full_mask(&self) -> u64 {
        if self.lanes == 64 {
            u64::MAX
        } else {
            (1 << self.lanes) - 1
        }
    }

    pub fn exec(&self) -> u64 {
        self.mask(EXEC_LO)
    }

    fn mask(&self, reg: usize) -> u64 {
        let lo = self.sgpr[reg] as u64;
        if self.lanes == 64 {
            lo | (self.sgpr[reg + 1] as u64) << 32
        } else {
            lo
        }
    }

    fn set_mask(&mut self, reg: usize, v: u64) {
        self.sgpr[reg] = v as u32;
        if self.lanes == 64 {
            self.sgpr[reg + 1] = (v >> 32) as u32;
        }
    }

    pub fn load_into(&self, bench: &mut Bench) -> Result<(), String> {
        let w = &mut bench.wave;
        w.lanes = self.lanes;
        w.vgpr.copy_from_slice(&self.vgpr);
        w.sgpr = self.sgpr;
        w.scc = self.scc;
        w.mode.bits = self.mode;
        w.hwreg.fill(0);
        w.scratch
            .fill_from(&self.scratch)
            .map_err(|e| format!("scratch: {e:?}"))?;
        bench.lds.copy_from_slice(&self.lds);
        bench.write_buffer(&self.buffer).map_err(|e| e.to_string())
    }

    pub fn from_bench(bench: &Bench) -> Result<State, String> {
        let w = &bench.wave;
        Ok(State {
            lanes: w.lanes,
            vgpr: w.vgpr.to_vec(),
            sgpr: w.sgpr,
            scc: w.scc,
            mode: w.mode.bits,
            buffer: bench.read_buffer().map_err(|e| e.to_string())?,
            lds: bench.lds.clone(),
            scratch: w.scratch.to_vec(),
        })
    }

    /// The lanes a location without `:LANE` covers: every lane for an
    /// input, the lanes EXEC enabled for an expectation.
    fn lanes_of(loc: &Loc, all: u64) -> Option<u64> {
        match *loc {
            Loc::Vgpr { lane: Some(l), .. } | Loc::Mem { lane: Some(l), .. } => Some(1 << l),
            Loc::Vgpr { .. }
            | Loc::Mem {
                space: Space::Scratch,
                ..
            } => Some(all),
            _ => None,
        }
    }

    /// Writes `value` at `loc`; per-lane locations take the lanes of
    /// `lanes` (see [`State::lanes_of`]). `actual` resolves `nan?`.
    pub fn write(
        &mut self,
        loc: &Loc,
        value: &Value,
        lanes: u64,
        addrs: Addrs,
        actual: Option<&State>,
    ) -> Result<(), String> {
        let full = self.full_mask();
        let resolve = |lane: usize| -> Result<u64, String> {
            let got = actual.map(|a| a.read(loc, lane));
            resolve(value, lane, full, addrs, got)
        };
        match Self::lanes_of(loc, lanes) {
            Some(mask) => {
                for lane in (0..MAX_LANES).filter(|l| mask >> l & 1 != 0) {
                    let v = resolve(lane)?;
                    self.store(loc, lane, v)?;
                }
            }
            None => {
                let v = resolve(0)?;
                self.store(loc, 0, v)?;
            }
        }
        Ok(())
    }

    fn store(&mut self, loc: &Loc, lane: usize, v: u64) -> Result<(), String> {
        match *loc {
            Loc::Vgpr {
                reg, dwords, half, ..
            } => {
                if reg as usize + dwords as usize > self.vgpr.len() {
                    return Err(format!("{loc:?}: this target has no such register"));
                }
                for k in 0..dwords as usize {
                    let cell = &mut self.vgpr[reg as usize + k][lane];
                    let word = (v >> (32 * k)) as u32;
                    *cell = match half {
                        Half::Whole => word,
                        Half::Lo => (*cell & 0xffff_0000) | (word & 0xffff),
                        Half::Hi => (*cell & 0xffff) | word << 16,
                    };
                }
            }
            Loc::Sgpr { reg, dwords } => {
                for k in 0..dwords as usize {
                    self.sgpr[reg as usize + k] = (v >> (32 * k)) as u32;
                }
            }
            Loc::Mask { reg } => self.set_mask(reg as usize, v),
            Loc::Scc => self.scc = v != 0,
            Loc::Mode => self.mode = v as u32,
            Loc::ModeField { shift, width } => {
                let m = ((1u32 << width) - 1) << shift;
                self.mode = (self.mode & !m) | ((v as u32) << shift & m);
            }
            Loc::Mem { .. } => {
                let (bytes, at) = self.mem(loc, lane)?;
                bytes[at..at + mem_len(loc)].copy_from_slice(&v.to_le_bytes()[..mem_len(loc)]);
            }
        }
        Ok(())
    }

    /// The value at `loc` in `lane`.
    pub fn read(&self, loc: &Loc, lane: usize) -> u64 {
        match *loc {
            Loc::Vgpr {
                reg, dwords, half, ..
            } => (0..dwords as usize).fold(0, |acc, k| {
                let cell = self.vgpr[(reg as usize + k) % self.vgpr.len()][lane];
                let word = match half {
                    Half::Whole => cell,
                    Half::Lo => cell & 0xffff,
                    Half::Hi => cell >> 16,
                };
                acc | (word as u64) << (32 * k)
            }),
            Loc::Sgpr { reg, dwords } => (0..dwords as usize).fold(0, |acc, k| {
                acc | (self.sgpr[reg as usize + k] as u64) << (32 * k)
            }),
            Loc::Mask { reg } => self.mask(reg as usize),
            Loc::Scc => self.scc as u64,
            Loc::Mode => self.mode as u64,
            Loc::ModeField { shift, width } => (self.mode >> shift & ((1 << width) - 1)) as u64,
            Loc::Mem { space, off, .. } => {
                let (bytes, base) = match space {
                    Space::Buffer => (&self.buffer, 0),
                    Space::Lds => (&self.lds, 0),
                    Space::Scratch => (&self.scratch, lane * SCRATCH_LANE_BYTES),
                };
                let mut word = [0u8; 8];
                let n = mem_len(loc);
                if let Some(src) = bytes.get(base + off..base + off + n) {
                    word[..n].copy_from_slice(src);
                }
                u64::from_le_bytes(word)
            }
        }
    }

    fn mem(&mut self, loc: &Loc, lane: usize) -> Result<(&mut [u8], usize), String> {
        let Loc::Mem { space, off, .. } = *loc else {
            unreachable!()
        };
        let (bytes, base, limit) = match space {
            Space::Buffer => (&mut self.buffer, 0, BUFFER_BYTES),
            Space::Lds => (&mut self.lds, 0, LDS_BYTES),
            Space::Scratch => (
                &mut self.scratch,
                lane * SCRATCH_LANE_BYTES,
                SCRATCH_LANE_BYTES,
            ),
        };
        if off + mem_len(loc) > limit {
            return Err(format!("{loc:?} is past the end ({limit} bytes)"));
        }
        Ok((bytes, base + off))
    }

    /// Every difference between `self` (what ran) and `want`, described.
    pub fn diff(&self, want: &State) -> Vec<String> {
        let mut out = Vec::new();
        for r in 0..self.vgpr.len() {
            let (got, exp) = (&self.vgpr[r], &want.vgpr[r]);
            let bad: Vec<usize> = (0..MAX_LANES).filter(|&l| got[l] != exp[l]).collect();
            if let Some(&first) = bad.first() {
                out.push(format!(
                    "{} lanes {}: got {:#010x} want {:#010x}{}",
                    vgpr_name(r),
                    lane_list(&bad),
                    got[first],
                    exp[first],
                    float_hint(got[first], exp[first])
                ));
            }
        }
        for s in 0..NUM_SGPRS {
            if self.sgpr[s] != want.sgpr[s] {
                out.push(format!(
                    "{}: got {:#010x} want {:#010x}",
                    sgpr_name(s),
                    self.sgpr[s],
                    want.sgpr[s]
                ));
            }
        }
        if self.scc != want.scc {
            out.push(format!(
                "scc: got {} want {}",
                self.scc as u8, want.scc as u8
            ));
        }
        if self.mode != want.mode {
            out.push(format!("mode: got {:#x} want {:#x}", self.mode, want.mode));
        }
        for (name, got, exp) in [
            ("mem", &self.buffer, &want.buffer),
            ("lds", &self.lds, &want.lds),
            ("scr", &self.scratch, &want.scratch),
        ] {
            if let Some(at) = (0..got.len()).find(|&i| got[i] != exp[i]) {
                let count = (0..got.len()).filter(|&i| got[i] != exp[i]).count();
                let word = at & !3;
                let w = |b: &[u8]| u32::from_le_bytes(b[word..word + 4].try_into().unwrap());
                let place = if name == "scr" {
                    format!(
                        "lane {} offset {:#x}",
                        word / SCRATCH_LANE_BYTES,
                        word % SCRATCH_LANE_BYTES
                    )
                } else {
                    format!("offset {word:#x}")
                };
                out.push(format!(
                    "{name} {place}: got {:#010x} want {:#010x} ({count} bytes differ)",
                    w(got),
                    w(exp)
                ));
            }
        }
        out
    }
}

fn mem_len(loc: &Loc) -> usize {
    match *loc {
        Loc::Mem { bytes, .. } => bytes as usize,
        _ => 0,
    }
}

/// `value` for `lane`; `nan?` takes the actual value when it is a NaN of
/// the width asked for, else the default NaN (so the difference shows).
fn resolve(
    value: &Value,
    lane: usize,
    full: u64,
    addrs: Addrs,
    actual: Option<u64>,
) -> Result<u64, String> {
    Ok(match value {
        Value::Int(v) => *v,
        Value::AllLanes => full,
        Value::Lane { mul, add } => (lane as u64).wrapping_mul(*mul).wrapping_add(*add),
        Value::Buffer(off) => addrs.buffer + off,
        Value::BufferBits { off, shift, or } => (addrs.buffer + off) >> shift | or,
        Value::Code(off) => addrs.code + off,
        Value::List(items) => {
            return resolve(&items[lane % items.len()], lane, full, addrs, actual)
        }
        Value::LaneBits(bits) => (0..full.count_ones() as usize)
            .filter(|&l| bits[l % bits.len()])
            .fold(0, |m, l| m | 1 << l),
        Value::AnyNan(bits) => {
            let is_nan = |v: u64| match bits {
                16 => half::f16::from_bits(v as u16).is_nan(),
                32 => f32::from_bits(v as u32).is_nan(),
                _ => f64::from_bits(v).is_nan(),
            };
            match actual {
                Some(v) if is_nan(v) => v,
                Some(_) => match bits {
                    16 => 0x7e00,
                    32 => 0x7fc0_0000,
                    _ => 0x7ff8_0000_0000_0000,
                },
                None => return Err("nan? is only an expectation".into()),
            }
        }
    })
}

fn sgpr_name(s: usize) -> String {
    match s {
        106 => "vcc_lo".into(),
        107 => "vcc_hi".into(),
        108..=123 => format!("ttmp{}", s - 108),
        124 => "null".into(),
        125 => "m0".into(),
        126 => "exec_lo".into(),
        127 => "exec_hi".into(),
        _ => format!("s{s}"),
    }
}

/// `0-31` / `0,2,4` style.
fn lane_list(lanes: &[usize]) -> String {
    let contiguous = lanes.windows(2).all(|w| w[1] == w[0] + 1);
    match lanes {
        [one] => one.to_string(),
        [first, .., last] if contiguous => format!("{first}-{last}"),
        _ => lanes
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The two words read as f32, when either looks like a float.
fn float_hint(got: u32, want: u32) -> String {
    let (g, w) = (f32::from_bits(got), f32::from_bits(want));
    if g.is_normal() || w.is_normal() {
        format!(" (as f32: {g:e} vs {w:e})")
    } else {
        String::new()
    }
}
