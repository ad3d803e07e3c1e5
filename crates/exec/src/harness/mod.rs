//! A one-wave test bench: runs a few instructions on a wave whose registers,
//! memory, LDS and scratch the caller sets and inspects directly.
//!
//! This is how instruction-level tests drive the executor: the code goes
//! through the same decoder, handler binding (plain and general handlers)
//! and hot loop as a dispatch, but without a kernel descriptor or launch
//! ABI in the way, so a test states exactly the inputs an instruction sees
//! and checks every register it may or may not write.

use softgpu_codeobj::{CodeObject, FeatureSetting, Image, Segment};
use softgpu_isa::{Family, Op};

use crate::dispatch::{run_wave, Stop, QUANTUM};
use crate::watch::Watch;
use softgpu_arena::{Arena, MemError};
use softgpu_interp::ops::sopp::WorkgroupBarrier;
use softgpu_interp::ops::{Env, Scratch};
use softgpu_interp::program::Program;
use softgpu_interp::wave::Wave;

// What the instruction-level tests inspect besides the bench: the register
// file's shape, the trap a snippet ended with and the instruction table
// (which opcodes have a handler). The modules they come from are private.
pub use softgpu_interp::ops::handler;
pub use softgpu_interp::trap::{MemCause, Space, Trap};
pub use softgpu_interp::wave::{Lanes, MAX_LANES, NUM_SGPRS, NUM_VGPRS, SHARED_APERTURE};

/// Bytes of the test buffer kernels address through [`Bench::buffer`].
pub const BUFFER_BYTES: usize = 64 * 1024;
/// Bytes of LDS the wave sees.
pub const LDS_BYTES: usize = 64 * 1024;
/// Private (scratch) bytes per lane.
pub const SCRATCH_LANE_BYTES: usize = 1024;
/// Largest snippet [`Bench::run`] takes.
pub const CODE_BYTES: usize = 64 * 1024;

/// `s_endpgm` in `family`'s SOPP word (gfx11 and gfx12: opcode 48, gfx10:
/// 1), appended to every snippet so it always ends.
fn s_endpgm(family: Family) -> [u8; 4] {
    let opcode = Op::S_ENDPGM
        .encoding(family)
        .map_or(48, |e| e.opcode as u32);
    (0xbf80_0000 | opcode << 16).to_le_bytes()
}

/// One wave with its memory.
pub struct Bench {
    arena: Arena,
    family: Family,
    buffer: u64,
    /// Where snippets are placed, so a test knows their addresses in advance.
    code: u64,
    /// The workgroup's LDS.
    pub lds: Vec<u8>,
    /// The wave (with its family's register file:
    /// [`Wave::for_family`]); set `lanes` (32 or 64), registers, EXEC and MODE before
    /// [`Bench::run`]. Its scratch holds [`SCRATCH_LANE_BYTES`] per lane.
    pub wave: Wave,
    tmp: Box<Scratch>,
    /// How snippets use the JIT tier's compiled blocks (from
    /// `SOFTGPU_JIT`, else on); the interpreter runs the rest.
    pub jit: crate::tier::JitMode,
    /// Blocks the JIT compiled for the last snippet run.
    pub jit_blocks: usize,
    /// Times a block of the last snippet run left early for the
    /// interpreter (a memory access the wave-wide checks do not allow).
    pub jit_exits: u64,
}

/// Why a snippet did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("instruction {index} (`{text}`) trapped: {trap} ({trap:?})")]
    Trap {
        index: u32,
        text: String,
        trap: Trap,
    },
    #[error("device memory: {0}")]
    Memory(#[from] MemError),
    #[error("unknown target {0} (supported: {list})", list = softgpu_isa::target::supported())]
    Target(String),
    #[error(transparent)]
    Config(#[from] crate::error::ConfigError),
}

impl Bench {
    /// A bench for `target` (e.g. `gfx1100`) with a zeroed buffer, LDS and
    /// scratch and a fresh wave32.
    pub fn new(target: &str, jit: crate::tier::JitMode) -> Result<Bench, BenchError> {
        let family = Family::of_target(target).ok_or_else(|| BenchError::Target(target.into()))?;
        let arena = Arena::new(16 << 20)?;
        let buffer = arena.alloc(BUFFER_BYTES as u64)?;
        let code = arena.alloc(CODE_BYTES as u64 + 4)?;
        let mut wave = Wave::for_family(family);
        wave.scratch.reset(
            SCRATCH_LANE_BYTES,
            softgpu_interp::wave::MAX_LANES,
            false,
            None,
        );
        Ok(Bench {
            arena,
            family,
            buffer,
            code,
            lds: vec![0; LDS_BYTES],
            wave,
            tmp: Box::default(),
            jit,
            jit_blocks: 0,
            jit_exits: 0,
        })
    }

    /// Device address of the test buffer.
    pub fn buffer(&self) -> u64 {
        self.buffer
    }

    /// Device address every snippet starts at.
    pub fn code_address(&self) -> u64 {
        self.code
    }

    /// The bench's device memory: for tests that need allocations besides
    /// the test buffer, or a refused access explained as a dispatch's
    /// fault report explains it ([`Arena::explain`]).
    pub fn arena(&self) -> &Arena {
        &self.arena
    }

    /// Reads the whole test buffer.
    pub fn read_buffer(&self) -> Result<Vec<u8>, BenchError> {
        let mut out = vec![0; BUFFER_BYTES];
        self.arena.read(self.buffer, &mut out)?;
        Ok(out)
    }

    /// Overwrites the test buffer from its start.
    pub fn write_buffer(&self, data: &[u8]) -> Result<(), BenchError> {
        Ok(self
            .arena
            .write(self.buffer, &data[..data.len().min(BUFFER_BYTES)])?)
    }

    /// Places `code` (followed by `s_endpgm`) at [`Bench::code_address`],
    /// decodes it once and runs the wave from its first instruction to the
    /// end; returns the number of instructions the wave ran. Barriers
    /// release at once (the wave is alone in its workgroup).
    pub fn run(&mut self, code: &[u8], budget: u64) -> Result<u64, BenchError> {
        if code.len() > CODE_BYTES {
            return Err(MemError::OutOfRange {
                addr: self.code,
                len: code.len() as u64,
            }
            .into());
        }
        let mut image = code.to_vec();
        image.extend_from_slice(&s_endpgm(self.family));
        self.run_placed(self.code, image, budget)
    }

    fn run_placed(&mut self, base: u64, image: Vec<u8>, budget: u64) -> Result<u64, BenchError> {
        // A mode this build cannot run is refused, not run without blocks.
        self.jit.check()?;
        self.arena.write(base, &image)?;
        let program = Program::new(code_object(&image), base, image, self.family);
        let wave = &mut self.wave;
        wave.pc = 0;
        wave.ended = false;
        wave.at_barrier = false;
        wave.retired = 0;
        wave.live_lanes = wave.full_mask();
        // The bench's one wave is a whole grid: a GWS barrier it arrives
        // at completes when it expects one wave.
        let watch = Watch::unlimited("bench");
        let gws = crate::gws::Gws::new(&watch);
        let jit = self.jit.blocks(&program, 0, wave.lanes == 64);
        self.jit_blocks = jit.map_or(0, |tier| tier.block_count());
        let mem = softgpu_arena::Memory::new(&self.arena, None);
        let mut env = Env {
            mem,
            lds: &mut self.lds,
            code: program.code(),
            tmp: &mut self.tmp,
            gws: &gws,
            barrier: WorkgroupBarrier {
                signals: 0,
                members: 1,
            },
            sanitizer: None,
            contained: Default::default(),
        };
        let mut stats = crate::dispatch::DispatchCounters::default();
        loop {
            let step = if wave.retired >= budget {
                Err(Trap::Budget(budget))
            } else {
                let turn = QUANTUM.min(budget - wave.retired);
                run_wave::<false>(&program, wave, &mut env, jit, turn, &mut stats, &mut [])
            };
            self.jit_exits = stats.jit_exits;
            match step {
                Ok(Stop::End) => return Ok(wave.retired),
                // A lone wave completes every barrier it reaches.
                Ok(Stop::Barrier) => {
                    wave.at_barrier = false;
                    env.barrier.signals = 0;
                }
                Ok(Stop::Yield) => {}
                Err(trap) => {
                    return Err(BenchError::Trap {
                        index: wave.pc,
                        text: program.text_for(wave.pc, wave.lanes == 64),
                        trap,
                    })
                }
            }
        }
    }
}

/// A code object holding nothing but `image` as its executable text.
fn code_object(image: &[u8]) -> CodeObject {
    let size = image.len() as u64;
    CodeObject {
        target: String::new(),
        target_id: String::new(),
        version: 5,
        e_flags: 0,
        xnack: FeatureSetting::Unsupported,
        sramecc: FeatureSetting::Unsupported,
        metadata_version: None,
        image: Image {
            size,
            segments: vec![Segment {
                offset: 0,
                data: image.to_vec(),
                mem_size: size,
                executable: true,
                writable: false,
            }],
            relocations: Vec::new(),
        },
        kernels: Vec::new(),
        symbols: Vec::new(),
        text: 0..size,
        printf: Vec::new(),
        debug: None,
    }
}

#[cfg(test)]
mod tests;
