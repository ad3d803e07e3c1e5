//! Architectural state of one wave, laid out `[register][lane]`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::float::{Fp, Round};
use softgpu_isa::{sreg, Operand, Special};

/// Maximum lanes in a wave.
pub const MAX_LANES: usize = 64;
/// VGPRs a wave may address (v0..v255): the file of an RDNA wave.
pub const NUM_VGPRS: usize = 256;
/// A CDNA wave's file: v0..v255 and the AccVGPRs a0..a255 after them
/// (`softgpu_isa::AGPR_BASE`), one numbering for both.
pub const NUM_VGPRS_CDNA: usize = 512;
/// Scalar operand space: s0..s105, vcc, ttmp, null, m0, exec.
pub const NUM_SGPRS: usize = 128;

/// One vector register: a value per lane.
pub type Lanes = [u32; MAX_LANES];

/// Aperture bases that generic (flat) addresses are routed by. The values
/// match what ROCm reports on RDNA, so kernels see familiar pointers.
pub const SHARED_APERTURE: u64 = 0x1_0000 << 32;
pub const PRIVATE_APERTURE: u64 = 0x2_0000 << 32;
pub const APERTURE_SIZE: u64 = 1 << 32;
/// Where the private segment buffer resource of a family that reaches
/// scratch through MUBUF (gfx10) points: a V# base has 48 bits, too few for
/// [`PRIVATE_APERTURE`], so the resource is based 4 GiB below 2^48, above
/// every host address the arena can map (user space ends at 2^47). A
/// buffer access landing in `[SCRATCH_BUFFER_BASE, + APERTURE_SIZE)` is
/// the wave's own private memory, laid out as the resource swizzles it.
pub const SCRATCH_BUFFER_BASE: u64 = (1 << 48) - APERTURE_SIZE;

/// The MODE register fields the executor honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mode {
    /// Raw MODE bits as `s_getreg` reads them.
    pub bits: u32,
}

impl Mode {
    /// FLOAT_DENORM_MODE for f32: bit 0 keeps input denormals, bit 1 keeps
    /// output denormals (0 flushes both, 3 neither).
    fn denorm32(self) -> u32 {
        (self.bits >> 4) & 3
    }
    /// The same for f16 and f64.
    fn denorm16_64(self) -> u32 {
        (self.bits >> 6) & 3
    }
    /// f32 denormals are flushed on input or output (the plain handlers
    /// then take the general path).
    #[inline(always)]
    pub fn flush_f32(self) -> bool {
        self.denorm32() != 3
    }
    #[inline(always)]
    pub fn flush_in_f32(self) -> bool {
        self.denorm32() & 1 == 0
    }
    #[inline(always)]
    pub fn flush_out_f32(self) -> bool {
        self.denorm32() & 2 == 0
    }
    #[inline(always)]
    pub fn flush_in_f16_f64(self) -> bool {
        self.denorm16_64() & 1 == 0
    }
    #[inline(always)]
    pub fn flush_out_f16_f64(self) -> bool {
        self.denorm16_64() & 2 == 0
    }
    /// DX10 clamp: a clamped NaN becomes 0 (else it stays a NaN).
    pub fn dx10_clamp(self) -> bool {
        self.bits & (1 << 8) != 0
    }
    /// IEEE mode: min/max quiet signalling NaNs; output modifiers are off.
    pub fn ieee(self) -> bool {
        self.bits & (1 << 9) != 0
    }
    /// FP16_OVFL (bit 23): overflowing f16 results, and gfx12's f32 to
    /// fp8/bf8 conversions, saturate to the largest finite value.
    pub fn fp16_ovfl(self) -> bool {
        self.bits & (1 << 23) != 0
    }
    /// What float lane functions read: the two FP_ROUND fields and IEEE.
    #[inline(always)]
    pub fn fp(self) -> Fp {
        Fp {
            r32: Round::from_bits(self.bits),
            r16: Round::from_bits(self.bits >> 2),
            ieee: self.ieee(),
        }
    }
}

/// One wave's registers and control state.
pub struct Wave {
    pub vgpr: Box<[Lanes]>,
    pub sgpr: [u32; NUM_SGPRS],
    pub scc: bool,
    /// Index of the next instruction in the program.
    pub pc: u32,
    pub lanes: usize,
    pub mode: Mode,
    /// TRAPSTS and other rarely used hardware registers, by hwreg id.
    pub hwreg: [u32; 64],
    /// Lanes present in this wave (a partial last wave has fewer).
    pub live_lanes: u64,
    /// The wave's index within its workgroup.
    pub id: u32,
    /// `HW_ID1` without WAVE_ID: the SIMD, WGP, array and engine it runs
    /// on (`crate::placement`).
    pub hw_id: u32,
    pub ended: bool,
    pub at_barrier: bool,
    /// This wave's private memory (see [`PrivateMemory`]).
    pub scratch: PrivateMemory,
    /// Instructions this wave has retired (for the runaway budget).
    pub retired: u64,
}

/// Registers per lane in `family`'s VGPR file: CDNA's 512 (ArchVGPRs then
/// AccVGPRs), RDNA's 256.
pub const fn vgprs_of(family: softgpu_isa::Family) -> usize {
    if family.is_gcn() {
        NUM_VGPRS_CDNA
    } else {
        NUM_VGPRS
    }
}

impl Wave {
    /// A wave with RDNA's file of [`NUM_VGPRS`] VGPRs.
    pub fn new() -> Wave {
        Wave::with_vgprs(NUM_VGPRS)
    }

    /// A wave with `family`'s register file: CDNA's 512 registers per lane
    /// (ArchVGPRs then AccVGPRs), RDNA's 256.
    pub fn for_family(family: softgpu_isa::Family) -> Wave {
        Wave::with_vgprs(vgprs_of(family))
    }

    /// A wave whose file holds `vgprs` registers per lane: [`NUM_VGPRS`]
    /// for RDNA, [`NUM_VGPRS_CDNA`] for CDNA (whose AccVGPRs follow the
    /// VGPRs). The file is allocated per wave (256 bytes a register), so
    /// RDNA waves keep their 64 KiB and only CDNA waves pay for 128 KiB.
    pub fn with_vgprs(vgprs: usize) -> Wave {
        Wave {
            vgpr: vec![[0u32; MAX_LANES]; vgprs].into_boxed_slice(),
            sgpr: [0; NUM_SGPRS],
            scc: false,
            pc: 0,
            lanes: 32,
            mode: Mode::default(),
            hwreg: [0; 64],
            live_lanes: 0,
            id: 0,
            hw_id: 0,
            ended: false,
            at_barrier: false,
            scratch: PrivateMemory::default(),
            retired: 0,
        }
    }

    /// Mask with one bit per lane of the wave size.
    #[inline(always)]
    pub fn full_mask(&self) -> u64 {
        if self.lanes == 64 {
            u64::MAX
        } else {
            (1u64 << self.lanes) - 1
        }
    }

    #[inline(always)]
    pub fn exec(&self) -> u64 {
        let lo = self.sgpr[sreg::EXEC_LO as usize] as u64;
        if self.lanes == 64 {
            lo | (self.sgpr[sreg::EXEC_HI as usize] as u64) << 32
        } else {
            lo
        }
    }

    #[inline(always)]
    pub fn set_exec(&mut self, mask: u64) {
        self.sgpr[sreg::EXEC_LO as usize] = mask as u32;
        if self.lanes == 64 {
            self.sgpr[sreg::EXEC_HI as usize] = (mask >> 32) as u32;
        }
    }

    #[inline(always)]
    pub fn vcc(&self) -> u64 {
        self.read_mask(Operand::Sgpr(sreg::VCC_LO))
    }

    /// Reads a 32-bit scalar operand.
    #[inline(always)]
    pub fn read_s32(&self, op: Operand) -> u32 {
        match op {
            Operand::Sgpr(r) => self.sgpr[r as usize],
            Operand::Const(c) => c as u32,
            Operand::Special(s) => self.special(s) as u32,
            _ => 0,
        }
    }

    /// Reads a 64-bit scalar operand (an SGPR pair or a 64-bit constant).
    #[inline(always)]
    pub fn read_s64(&self, op: Operand) -> u64 {
        match op {
            Operand::Sgpr(r) => {
                let r = r as usize;
                let hi = if r + 1 < NUM_SGPRS {
                    self.sgpr[r + 1]
                } else {
                    0
                };
                self.sgpr[r] as u64 | (hi as u64) << 32
            }
            Operand::Const(c) => c,
            // As 64-bit operands the apertures read as full addresses.
            Operand::Special(s @ (Special::SharedBase | Special::PrivateBase)) => {
                self.special(s) << 32
            }
            Operand::Special(s @ (Special::SharedLimit | Special::PrivateLimit)) => {
                self.special(s) << 32 | 0xffff_ffff
            }
            Operand::Special(s) => self.special(s),
            _ => 0,
        }
    }

    /// Reads `N` consecutive scalar registers.
    #[inline(always)]
    pub fn read_sn<const N: usize>(&self, op: Operand) -> [u32; N] {
        let mut out = [0u32; N];
        match op {
            Operand::Sgpr(r) => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = *self.sgpr.get(r as usize + i).unwrap_or(&0);
                }
            }
            Operand::Const(c) => {
                out[0] = c as u32;
                if N > 1 {
                    out[1] = (c >> 32) as u32;
                }
            }
            _ => {}
        }
        out
    }

    /// Reads a lane mask operand (one SGPR in wave32, a pair in wave64).
    #[inline(always)]
    pub fn read_mask(&self, op: Operand) -> u64 {
        if self.lanes == 64 {
            self.read_s64(op)
        } else {
            self.read_s32(op) as u64
        }
    }

    fn special(&self, s: Special) -> u64 {
        match s {
            Special::Scc => self.scc as u64,
            Special::Vccz => (self.vcc() == 0) as u64,
            Special::Execz => (self.exec() == 0) as u64,
            Special::SharedBase => SHARED_APERTURE >> 32,
            Special::SharedLimit => (SHARED_APERTURE + APERTURE_SIZE - 1) >> 32,
            Special::PrivateBase => PRIVATE_APERTURE >> 32,
            Special::PrivateLimit => (PRIVATE_APERTURE + APERTURE_SIZE - 1) >> 32,
            Special::PopsExitingWaveId | Special::LdsDirect => 0,
        }
    }

    /// Writes one scalar register; writes to `null` are dropped.
    #[inline(always)]
    pub fn write_s32(&mut self, op: Operand, value: u32) {
        if let Operand::Sgpr(r) = op {
            if r != sreg::NULL {
                self.sgpr[r as usize] = value;
            }
        }
    }

    /// Writes a scalar register pair.
    #[inline(always)]
    pub fn write_s64(&mut self, op: Operand, value: u64) {
        if let Operand::Sgpr(r) = op {
            if r != sreg::NULL && (r as usize) + 1 < NUM_SGPRS {
                self.sgpr[r as usize] = value as u32;
                self.sgpr[r as usize + 1] = (value >> 32) as u32;
            }
        }
    }

    /// Writes `values` to consecutive scalar registers.
    pub fn write_sn(&mut self, op: Operand, values: &[u32]) {
        if let Operand::Sgpr(r) = op {
            if r == sreg::NULL {
                return;
            }
            for (i, v) in values.iter().enumerate() {
                if let Some(slot) = self.sgpr.get_mut(r as usize + i) {
                    *slot = *v;
                }
            }
        }
    }

    /// Writes a lane mask operand.
    #[inline(always)]
    pub fn write_mask(&mut self, op: Operand, mask: u64) {
        if self.lanes == 64 {
            self.write_s64(op, mask)
        } else {
            self.write_s32(op, mask as u32)
        }
    }

    /// The per-lane values of a 32-bit source: a VGPR by reference, anything
    /// else (a high half, a scalar, a constant) written into `buf`.
    #[inline(always)]
    pub fn vsrc<'a>(&'a self, op: Operand, buf: &'a mut Lanes) -> &'a Lanes {
        match op {
            Operand::Vgpr(r) => &self.vgpr[r as usize],
            other => {
                self.load_src(other, buf);
                buf
            }
        }
    }

    /// Writes the per-lane values of a 32-bit source into `buf` (the
    /// wave's lanes; the rest of `buf` is left as it was).
    #[inline(always)]
    pub fn load_src(&self, op: Operand, buf: &mut Lanes) {
        let n = self.lanes;
        match op {
            Operand::Vgpr(r) => buf[..n].copy_from_slice(&self.vgpr[r as usize][..n]),
            Operand::VgprHi(r) => {
                let v = &self.vgpr[r as usize];
                for l in 0..n {
                    buf[l] = v[l] >> 16;
                }
            }
            other => {
                // Constant-length fills are a few vector stores; wave32
                // touches only the half it uses.
                let v = self.read_s32(other);
                if n == 32 {
                    buf[..32].fill(v);
                } else {
                    buf.fill(v);
                }
            }
        }
    }

    /// Lane `l` of a 32-bit source (for per-lane code such as memory ops).
    #[inline(always)]
    pub fn lane32(&self, op: Operand, l: usize) -> u32 {
        match op {
            Operand::Vgpr(r) => self.vgpr[r as usize][l],
            Operand::VgprHi(r) => self.vgpr[r as usize][l] >> 16,
            other => self.read_s32(other),
        }
    }

    /// The file's row for register `r` (a VGPR, or CDNA's AccVGPR at
    /// `AGPR_BASE` up). A program checks every operand's range once at
    /// load (`program::operands_valid`), so the mask never changes a valid
    /// register; it keeps a tuple's later dwords inside the file without a
    /// bounds check (the file's size is a power of two).
    #[inline(always)]
    pub fn row(&self, r: usize) -> usize {
        r & (self.vgpr.len() - 1)
    }

    /// Lane `l` of a 64-bit source.
    #[inline(always)]
    pub fn lane64(&self, op: Operand, l: usize) -> u64 {
        match op {
            Operand::Vgpr(r) => {
                let r = r as usize;
                self.vgpr[r][l] as u64 | (self.vgpr[self.row(r + 1)][l] as u64) << 32
            }
            other => self.read_s64(other),
        }
    }

    /// Writes `values` to the lanes of a VGPR selected by `mask`.
    #[inline(always)]
    pub fn write_v32(&mut self, op: Operand, values: &Lanes, mask: u64) {
        let lanes = self.lanes;
        let full = self.full_mask();
        match op {
            Operand::Vgpr(r) => {
                let d = &mut self.vgpr[r as usize];
                match (lanes, mask == full) {
                    (32, true) => d[..32].copy_from_slice(&values[..32]),
                    (_, true) => d.copy_from_slice(values),
                    (32, false) => blend::<32>(d, values, mask),
                    _ => blend::<64>(d, values, mask),
                }
            }
            Operand::VgprHi(r) => {
                let d = &mut self.vgpr[r as usize];
                for l in 0..lanes {
                    if mask >> l & 1 != 0 {
                        d[l] = (d[l] & 0xffff) | values[l] << 16;
                    }
                }
            }
            _ => {}
        }
    }

    /// Writes one lane of a VGPR range starting at `op`.
    #[inline(always)]
    pub fn set_lane(&mut self, op: Operand, l: usize, dword: usize, value: u32) {
        if let Operand::Vgpr(r) = op {
            let row = self.row(r as usize + dword);
            self.vgpr[row][l] = value;
        }
    }

    /// Reads one lane of a VGPR range starting at `op`.
    #[inline(always)]
    pub fn get_lane(&self, op: Operand, l: usize, dword: usize) -> u32 {
        match op {
            Operand::Vgpr(r) => self.vgpr[self.row(r as usize + dword)][l],
            other if dword == 0 => self.read_s32(other),
            other => (self.read_s64(other) >> 32) as u32,
        }
    }
}

/// Writes `values` into the lanes of `d` that `mask` selects, as a select
/// per lane (vectorisable) rather than a branch.
#[inline(always)]
fn blend<const N: usize>(d: &mut Lanes, values: &Lanes, mask: u64) {
    for l in 0..N {
        d[l] = if mask >> l & 1 != 0 { values[l] } else { d[l] };
    }
}

impl Default for Wave {
    fn default() -> Self {
        Wave::new()
    }
}

/// Bytes of one page of private memory: the unit it is materialised in.
/// Small enough that a lane touching a few bytes of a large private segment
/// costs little, large enough that most accesses need one page lookup.
pub const PRIVATE_PAGE: usize = 4096;

/// One materialised page, with its initcheck bits (one per byte, set when
/// the byte is written; kept only while initcheck is on). `repr(C)` puts
/// `data` first, so a pointer to the page is one to its bytes (what the
/// JIT's page table holds, [`PrivateMemory::jit_pages`]).
#[repr(C)]
struct PrivatePage {
    data: [u8; PRIVATE_PAGE],
    written: [u64; PRIVATE_PAGE / 64],
}

// The JIT reads the page table as pointers (`PrivateMemory::jit_pages`).
const _: () =
    assert!(std::mem::size_of::<Option<Box<PrivatePage>>>() == std::mem::size_of::<*mut u8>());

impl PrivatePage {
    fn zeroed() -> Box<PrivatePage> {
        Box::new(PrivatePage {
            data: [0; PRIVATE_PAGE],
            written: [0; PRIVATE_PAGE / 64],
        })
    }
}

/// The bound on the private memory one dispatch may materialise, shared by
/// all its waves.
#[derive(Debug)]
pub struct PrivateBudget {
    limit: u64,
    used: AtomicU64,
}

impl PrivateBudget {
    pub fn new(limit: u64) -> PrivateBudget {
        PrivateBudget {
            limit,
            used: AtomicU64::new(0),
        }
    }

    /// The limit in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Takes `bytes` from the budget, or refuses when it would pass the limit.
    fn take(&self, bytes: u64) -> bool {
        let before = self.used.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > self.limit {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// Why a private memory access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivateError {
    /// initcheck: the byte at this flat offset was never written since the
    /// wave started.
    Unwritten(usize),
    /// Materialising another page would pass the dispatch's budget (its
    /// limit in bytes).
    OverBudget(u64),
}

/// A wave's private (scratch) memory, lane-major: lane `l` owns the flat
/// offsets `l * lane_bytes..(l + 1) * lane_bytes`.
///
/// Pages are materialised on the first write to them (a read of a page
/// never written reads zeros without materialising it), so a large declared
/// private segment costs only what the kernel touches. [`PrivateMemory::reset`]
/// starts every wave from zeros by clearing only the pages the previous
/// wave touched; cleared pages are kept for reuse.
#[derive(Default)]
pub struct PrivateMemory {
    lane_bytes: usize,
    /// Page table over the wave's flat offsets.
    pages: Vec<Option<Box<PrivatePage>>>,
    /// Indexes of the pages materialised since the last reset.
    touched: Vec<u32>,
    /// Zeroed pages ready for reuse.
    spare: Vec<Box<PrivatePage>>,
    /// initcheck on: writes set written bits and reads check them.
    track: bool,
    /// The dispatch's budget; `None` is unbounded (the test bench).
    budget: Option<Arc<PrivateBudget>>,
}

impl PrivateMemory {
    /// Starts a wave: `lanes` lanes of `lane_bytes` each, all zero, with
    /// initcheck bits when `track`, and fresh pages charged to `budget`.
    pub fn reset(
        &mut self,
        lane_bytes: usize,
        lanes: usize,
        track: bool,
        budget: Option<&Arc<PrivateBudget>>,
    ) {
        self.release_touched();
        self.lane_bytes = lane_bytes;
        self.track = track;
        let pages = (lane_bytes * lanes).div_ceil(PRIVATE_PAGE);
        // Every entry is empty after the release, so the table can be
        // resized freely.
        self.pages.resize_with(pages, || None);
        let same = match (&self.budget, budget) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.budget = budget.cloned();
        }
    }

    /// Private bytes per lane.
    #[inline(always)]
    pub fn lane_bytes(&self) -> usize {
        self.lane_bytes
    }

    /// Clears the pages touched since the last reset and keeps them as
    /// spares.
    fn release_touched(&mut self) {
        for index in self.touched.drain(..) {
            if let Some(mut page) = self.pages[index as usize].take() {
                page.data.fill(0);
                if self.track {
                    page.written.fill(0);
                }
                self.spare.push(page);
            }
        }
    }

    /// Frees all but `keep_bytes` of spare pages and drops the budget (a
    /// worker kept for the next dispatch).
    pub fn trim(&mut self, keep_bytes: usize) {
        self.release_touched();
        self.spare.truncate(keep_bytes / PRIVATE_PAGE);
        self.budget = None;
    }

    /// Reads `out.len()` bytes at flat offset `at` (the caller checked the
    /// lane's range).
    #[inline]
    pub fn read(&self, at: usize, out: &mut [u8]) -> Result<(), PrivateError> {
        self.read_as(at, out, self.track)
    }

    /// [`PrivateMemory::read`], checking written bytes only when `track`.
    pub fn read_as(&self, at: usize, out: &mut [u8], track: bool) -> Result<(), PrivateError> {
        let mut done = 0;
        while done < out.len() {
            let (index, within) = ((at + done) / PRIVATE_PAGE, (at + done) % PRIVATE_PAGE);
            let n = (PRIVATE_PAGE - within).min(out.len() - done);
            let piece = &mut out[done..done + n];
            match self.pages.get(index).and_then(|p| p.as_deref()) {
                Some(page) => {
                    if track {
                        unwritten(page, within, n)
                            .map_err(|k| PrivateError::Unwritten(at + done + k))?;
                    }
                    piece.copy_from_slice(&page.data[within..within + n]);
                }
                None if track => return Err(PrivateError::Unwritten(at + done)),
                None => piece.fill(0),
            }
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at flat offset `at` (the caller checked the lane's
    /// range), materialising pages as needed.
    #[inline]
    pub fn write(&mut self, at: usize, data: &[u8]) -> Result<(), PrivateError> {
        let track = self.track;
        let mut done = 0;
        while done < data.len() {
            let (index, within) = ((at + done) / PRIVATE_PAGE, (at + done) % PRIVATE_PAGE);
            let n = (PRIVATE_PAGE - within).min(data.len() - done);
            let page = match self.pages[index].as_deref_mut() {
                Some(page) => page,
                None => self.materialise(index)?,
            };
            page.data[within..within + n].copy_from_slice(&data[done..done + n]);
            if track {
                mark_written(page, within, n);
            }
            done += n;
        }
        Ok(())
    }

    /// Gives page `index` a zeroed page: a spare, or a fresh one if the
    /// budget allows.
    #[cold]
    fn materialise(&mut self, index: usize) -> Result<&mut PrivatePage, PrivateError> {
        let page = match self.spare.pop() {
            Some(page) => page,
            None => {
                if let Some(budget) = &self.budget {
                    if !budget.take(PRIVATE_PAGE as u64) {
                        return Err(PrivateError::OverBudget(budget.limit));
                    }
                }
                PrivatePage::zeroed()
            }
        };
        self.touched.push(index as u32);
        Ok(self.pages[index].insert(page))
    }

    /// For the JIT: the page table and its length, one host pointer a
    /// page (to its bytes: `Option<Box<PrivatePage>>` is a nullable
    /// pointer and `PrivatePage` starts with them; null for a page not
    /// materialised, which reads zero), so lane `l`'s bytes at private
    /// address `a` are at offset `(l * lane_bytes + a) % PRIVATE_PAGE` of
    /// entry `(l * lane_bytes + a) / PRIVATE_PAGE`. The table moves only at
    /// a reset. `None` when initcheck is on: its bits are kept only here.
    pub fn jit_pages(&self) -> Option<(*const *mut u8, usize)> {
        (!self.track).then(|| (self.pages.as_ptr().cast(), self.pages.len()))
    }

    /// Materialises the pages holding the `len` bytes at flat offset `at`
    /// (the caller checked the lane's range), as a write to them would:
    /// what the JIT does before a block stores there.
    pub fn materialise_range(&mut self, at: usize, len: usize) -> Result<(), PrivateError> {
        let first = at / PRIVATE_PAGE;
        let end = at.saturating_add(len).div_ceil(PRIVATE_PAGE);
        // Pages past the table (none, for a checked range) are skipped.
        for index in first..end.min(self.pages.len()) {
            if self.pages[index].is_none() {
                self.materialise(index)?;
            }
        }
        Ok(())
    }

    /// The whole private memory, flat (for tests and the bench).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0; self.pages.len() * PRIVATE_PAGE];
        for (index, page) in self.pages.iter().enumerate() {
            if let Some(page) = page {
                out[index * PRIVATE_PAGE..][..PRIVATE_PAGE].copy_from_slice(&page.data);
            }
        }
        out
    }

    /// Overwrites private memory from flat offset 0 (for tests and the
    /// bench); bytes beyond the wave's pages are ignored.
    pub fn fill_from(&mut self, data: &[u8]) -> Result<(), PrivateError> {
        let n = data.len().min(self.pages.len() * PRIVATE_PAGE);
        self.write(0, &data[..n])
    }
}

/// initcheck: the offset (from `within`) of the first byte of `n` that was
/// never written.
#[inline]
fn unwritten(page: &PrivatePage, within: usize, n: usize) -> Result<(), usize> {
    for k in 0..n {
        let b = within + k;
        if page.written[b / 64] >> (b % 64) & 1 == 0 {
            return Err(k);
        }
    }
    Ok(())
}

fn mark_written(page: &mut PrivatePage, within: usize, n: usize) {
    for b in within..within + n {
        page.written[b / 64] |= 1 << (b % 64);
    }
}
