//! An analytical estimate of a dispatch's time on the real part.
//!
//! softgpu runs every instruction exactly but on a CPU, so its own time
//! says nothing about the GPU's. What it does know exactly is the work: how
//! many times each instruction ran, with how many lanes. This module turns
//! those counts into a roofline-style estimate on the profiled part, from
//! the profile's `analytical_performance` figures:
//!
//! - **compute**: the busiest compute unit's SIMDs issuing every VALU
//!   instruction (one clock per wave32 instruction; more for wave64,
//!   transcendental, f64 and WMMA ones; one for a dual-issued `v_dual_*`
//!   pair) and, on their own pipe, every scalar instruction;
//! - **matrix core**: CDNA's MFMA and SMFMAC instructions, each keeping
//!   its SIMD's matrix core busy for its operations at the profile's rate
//!   for its input type (`matrix_ops_per_clock`); the core runs beside
//!   the VALU, so this is a bound of its own;
//! - **vector memory**: the bytes its lanes load and store through the
//!   compute unit's L0 path;
//! - **LDS**: the bytes its lanes move through LDS;
//! - **memory bandwidth**: every byte lanes load from or store to global
//!   memory crossing the memory bus once, for the whole device;
//! - **latency**: each wave's own path (its issue clocks, plus one full
//!   memory or LDS latency for every wait on an outstanding access, plus
//!   the barrier cost) times the rounds of waves the compute unit runs,
//!   as many at once as occupancy allows;
//! - **launch**: a fixed cost per dispatch.
//!
//! The estimate is the launch cost plus the largest of the other bounds,
//! which names what the kernel is bound by. Workgroups are spread evenly
//! over the compute units, so the busiest one has `ceil(groups / CUs)`.
//! It is deterministic: the same counts give the same figures on any host.
//! [`ASSUMPTIONS`] lists what it leaves out.

use serde::Serialize;
use softgpu_exec::{DispatchCounters, Hotspots, Program};
use softgpu_isa::matrix::{self, Elem};
use softgpu_isa::{image, Class, Format, Inst, Num, Op, Ty};

use crate::occupancy::{occupancy, KernelResources, Occupancy};
use crate::profile::{Fidelity, MatrixType, Performance, Profile};

/// What the estimate does not model, as reports state it.
pub const ASSUMPTIONS: &[&str] = &[
    "peak rates at the profile's clock; real parts sustain less",
    "every byte lanes load or store in global memory crosses the memory bus once: no cache reuse, perfect coalescing",
    "scratch traffic stays in the caches",
    "each wait on outstanding memory costs one full latency, within a wave; waves hide each other's latency up to the occupancy",
    "workgroups spread evenly over the compute units",
];

/// What bounds an estimated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// VALU and SALU issue.
    Compute,
    /// CDNA's matrix cores (MFMA/SMFMAC).
    MatrixCore,
    /// The compute units' vector memory path.
    VectorMemory,
    /// LDS bandwidth.
    Lds,
    /// The part's memory bandwidth.
    MemoryBandwidth,
    /// Latency the resident waves cannot hide.
    Latency,
    /// The fixed cost of a dispatch.
    Launch,
}

impl Bound {
    /// The bound's name as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::MatrixCore => "matrix core",
            Bound::VectorMemory => "vector memory",
            Bound::Lds => "LDS",
            Bound::MemoryBandwidth => "memory bandwidth",
            Bound::Latency => "latency",
            Bound::Launch => "launch",
        }
    }
}

/// The work of a dispatch, summed from its [`Hotspots`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Work {
    /// SIMD clocks of VALU issue, all waves together.
    pub valu_clocks: u64,
    /// SIMD clocks of matrix-core work (MFMA/SMFMAC), all waves together.
    pub matrix_clocks: u64,
    /// Scalar instructions (SALU, SMEM, branches, messages).
    pub salu_instructions: u64,
    /// Bytes lanes loaded from and stored to global memory (global, flat,
    /// buffer and image accesses, atomics).
    pub global_bytes: u64,
    /// Bytes lanes moved to and from scratch.
    pub scratch_bytes: u64,
    /// Bytes lanes moved through LDS.
    pub lds_bytes: u64,
    /// Executed waits on outstanding vector memory accesses.
    pub memory_waits: u64,
    /// Executed waits on LDS or scalar memory only.
    pub lds_waits: u64,
    /// Executed workgroup barriers.
    pub barriers: u64,
}

/// An estimated time on the real part and its breakdown, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Estimated kernel time.
    pub seconds: f64,
    /// What bounds it.
    pub bound: Bound,
    /// Each bound's time.
    pub compute_seconds: f64,
    pub matrix_core_seconds: f64,
    pub vector_memory_seconds: f64,
    pub lds_seconds: f64,
    pub memory_bandwidth_seconds: f64,
    pub latency_seconds: f64,
    pub launch_seconds: f64,
    /// The counts it was made from.
    pub work: Work,
    /// The part it estimates, and the fidelity of the figure.
    pub profile: String,
    pub profile_revision: u32,
    pub fidelity: Fidelity,
    /// What the model leaves out.
    pub assumptions: &'static [&'static str],
}

/// The shape of the dispatch the estimate spreads over the part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Workgroups of the dispatch.
    pub workgroups: u64,
    /// Waves of one workgroup.
    pub waves_per_group: u32,
    /// The kernel's occupancy at this launch.
    pub occupancy: Occupancy,
}

/// How one instruction occupies the part, per execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cost {
    /// SIMD clocks of VALU issue.
    Valu(u32),
    /// SIMD clocks of matrix-core work.
    Matrix(u64),
    /// One scalar issue.
    Salu,
    /// A vector memory access of this many bytes per active lane.
    Global(u32),
    Scratch(u32),
    Lds(u32),
    /// A wait: on vector memory (`true`) or on LDS/scalar memory only.
    Wait {
        memory: bool,
    },
    Barrier,
    /// Costs no issue the model counts (`s_nop`, exports).
    Free,
}

const HINTS: [Op; 3] = [Op::S_NOP, Op::S_DELAY_ALU, Op::S_CLAUSE];

const TRANSCENDENTAL: [Op; 15] = [
    Op::V_EXP_F32,
    Op::V_LOG_F32,
    Op::V_RCP_F32,
    Op::V_RCP_IFLAG_F32,
    Op::V_RSQ_F32,
    Op::V_SQRT_F32,
    Op::V_SIN_F32,
    Op::V_COS_F32,
    Op::V_EXP_F16,
    Op::V_LOG_F16,
    Op::V_RCP_F16,
    Op::V_RSQ_F16,
    Op::V_SQRT_F16,
    Op::V_SIN_F16,
    Op::V_COS_F16,
];

const WMMA: [Op; 6] = [
    Op::V_WMMA_F32_16X16X16_F16,
    Op::V_WMMA_F32_16X16X16_BF16,
    Op::V_WMMA_F16_16X16X16_F16,
    Op::V_WMMA_BF16_16X16X16_BF16,
    Op::V_WMMA_I32_16X16X16_IU8,
    Op::V_WMMA_I32_16X16X16_IU4,
];

/// Bytes of one lane's data operands of types `tys`.
fn data_bytes(tys: &[Ty]) -> u32 {
    tys.iter().map(|t| u32::from(t.dwords()) * 4).sum()
}

fn num_bytes(num: Num) -> u32 {
    match num {
        Num::I16 | Num::U16 | Num::F16 => 2,
        Num::B32 | Num::I32 | Num::U32 | Num::F32 => 4,
        Num::B64 | Num::I64 | Num::U64 | Num::F64 => 8,
    }
}

/// gfx12's waits on vector memory (loads, stores, samples, BVH), alone or
/// with LDS.
const GFX12_MEMORY_WAITS: [Op; 6] = [
    Op::S_WAIT_LOADCNT,
    Op::S_WAIT_STORECNT,
    Op::S_WAIT_SAMPLECNT,
    Op::S_WAIT_BVHCNT,
    Op::S_WAIT_LOADCNT_DSCNT,
    Op::S_WAIT_STORECNT_DSCNT,
];

/// The profile's rate class of a matrix instruction with A of `elem`
/// (both 8-bit float encodings share one rate).
fn matrix_type(elem: Elem) -> MatrixType {
    match elem {
        Elem::F64 => MatrixType::F64,
        Elem::F32 => MatrixType::F32,
        Elem::Xf32 => MatrixType::Xf32,
        Elem::F16 => MatrixType::F16,
        Elem::Bf16 => MatrixType::Bf16,
        Elem::I8 => MatrixType::I8,
        Elem::Fp8 | Elem::Bf8 => MatrixType::Fp8,
    }
}

/// The cost of one execution of `inst` on a wave of `wave64`, on a part
/// of `simds_per_cu` SIMDs.
fn cost(inst: &Inst, wave64: bool, perf: &Performance, simds_per_cu: u32) -> Cost {
    let info = inst.op.info();
    let valu = |clocks: u32| Cost::Valu(if wave64 { 2 * clocks } else { clocks });
    // CDNA's MFMA/SMFMAC, from the profile's per-type matrix rate. A
    // profile without a rate for the type charges the VALU's WMMA figure
    // instead: a part without the matrix core would not run the op at
    // all, so this is only a profile's gap.
    if let Some(shape) = matrix::shape(inst.op) {
        return match perf.matrix_clocks(matrix_type(shape.a), shape.ops(), simds_per_cu) {
            Some(clocks) => Cost::Matrix(clocks),
            None => valu(perf.wmma_clocks),
        };
    }
    match info.format {
        Format::Sopp if inst.op == Op::S_WAITCNT => {
            let imm = inst.imm as u16;
            match (imm >> 10 & 63 != 63, imm >> 4 & 63 != 63) {
                (true, _) => Cost::Wait { memory: true },
                (false, true) => Cost::Wait { memory: false },
                _ => Cost::Free,
            }
        }
        // gfx12's split counters: each names what it waits for.
        Format::Sopp if GFX12_MEMORY_WAITS.contains(&inst.op) => Cost::Wait { memory: true },
        Format::Sopp if [Op::S_WAIT_DSCNT, Op::S_WAIT_KMCNT].contains(&inst.op) => {
            Cost::Wait { memory: false }
        }
        Format::Sopp if [Op::S_BARRIER, Op::S_BARRIER_WAIT].contains(&inst.op) => Cost::Barrier,
        // Hints the sequencer consumes without an issue slot.
        Format::Sopp if HINTS.contains(&inst.op) => Cost::Free,
        Format::Sopk if [Op::S_WAITCNT_VMCNT, Op::S_WAITCNT_VSCNT].contains(&inst.op) => {
            Cost::Wait { memory: true }
        }
        Format::Sopk if inst.op == Op::S_WAITCNT_LGKMCNT => Cost::Wait { memory: false },
        Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc | Format::Sopp | Format::Smem => {
            Cost::Salu
        }
        Format::Vopd => Cost::Valu(1),
        Format::Ds => Cost::Lds(data_bytes(&info.dst).max(data_bytes(&info.src[1..]))),
        Format::Exp | Format::LdsDirect => Cost::Free,
        Format::Scratch => match info.class {
            Class::Mem { op, .. } => Cost::Scratch(op.bytes()),
            Class::Rmw { num, .. } => Cost::Scratch(num_bytes(num)),
            _ => Cost::Scratch(4),
        },
        Format::Global | Format::Flat | Format::Mubuf | Format::Mtbuf => match info.class {
            Class::Mem { op, .. } => Cost::Global(op.bytes()),
            Class::Rmw { num, .. } => Cost::Global(num_bytes(num)),
            _ => Cost::Global(4),
        },
        // A dword per enabled dmask channel.
        Format::Mimg => Cost::Global(4 * (inst.aux & image::DMASK).count_ones().max(1)),
        // RDNA's WMMA issues on the VALU.
        _ if WMMA.contains(&inst.op) => valu(perf.wmma_clocks),
        _ if TRANSCENDENTAL.contains(&inst.op) => valu(perf.trans_clocks),
        _ if info.dst.contains(&Ty::F64) || info.src.contains(&Ty::F64) => valu(perf.f64_clocks),
        _ if wave64 => Cost::Valu(perf.wave64_valu_clocks),
        _ => Cost::Valu(1),
    }
}

/// Sums the work of a dispatch of `program` whose instructions ran as
/// `counts` says, on a part of `simds_per_cu` SIMDs with `perf`'s rates.
pub fn work(program: &Program, counts: &Hotspots, perf: &Performance, simds_per_cu: u32) -> Work {
    let wave64 = counts.wave_size() == 64;
    let mut w = Work::default();
    for (slot, n) in program.slots().iter().zip(counts.counts()) {
        if n.waves == 0 {
            continue;
        }
        let bytes = |per_lane: u32| n.lanes * u64::from(per_lane);
        match cost(&slot.inst, wave64, perf, simds_per_cu) {
            Cost::Valu(clocks) => w.valu_clocks += n.waves * u64::from(clocks),
            Cost::Matrix(clocks) => w.matrix_clocks += n.waves * clocks,
            Cost::Salu => w.salu_instructions += n.waves,
            Cost::Global(b) => w.global_bytes += bytes(b),
            Cost::Scratch(b) => w.scratch_bytes += bytes(b),
            Cost::Lds(b) => w.lds_bytes += bytes(b),
            Cost::Wait { memory: true } => w.memory_waits += n.waves,
            Cost::Wait { memory: false } => w.lds_waits += n.waves,
            Cost::Barrier => w.barriers += n.waves,
            Cost::Free => {}
        }
    }
    w
}

/// The estimated time of a dispatch that did `work` in `shape` on
/// `profile`'s part, or `None` when the profile has no performance
/// figures.
pub fn estimate(profile: &Profile, work: &Work, shape: &Shape) -> Option<Estimate> {
    let perf = profile.analytical_performance.as_ref()?;
    let clock = f64::from(profile.clock_mhz) * 1e6;
    let cus = u64::from(profile.compute_units.max(1));
    let groups = shape.workgroups.max(1);
    // The busiest compute unit's share of the dispatch.
    let groups_on_cu = groups.div_ceil(cus);
    let share = groups_on_cu as f64 / groups as f64;
    let waves_on_cu = groups_on_cu * u64::from(shape.waves_per_group.max(1));
    let simds = waves_on_cu.min(u64::from(profile.simds_per_cu.max(1))) as f64;

    let valu = work.valu_clocks as f64 * share / simds;
    let salu = work.salu_instructions as f64 * share / simds / f64::from(perf.salu_per_clock);
    let compute = valu.max(salu) / clock;
    let matrix_core = work.matrix_clocks as f64 * share / simds / clock;
    let vmem_bytes = (work.global_bytes + work.scratch_bytes) as f64 * share;
    let vector_memory = vmem_bytes / f64::from(perf.vmem_bytes_per_clock) / clock;
    let lds = work.lds_bytes as f64 * share / f64::from(perf.lds_bytes_per_clock) / clock;
    let memory_bandwidth = work.global_bytes as f64 / perf.memory_bytes_per_second as f64;

    // One wave's own path, in clocks: its issue, then every wait and
    // barrier at full cost.
    let waves = (groups * u64::from(shape.waves_per_group.max(1))) as f64;
    let issue = (work.valu_clocks + work.matrix_clocks + work.salu_instructions) as f64 / waves;
    let memory_latency = f64::from(perf.memory_latency_ns) * 1e-9 * clock;
    let path = issue
        + work.memory_waits as f64 / waves * memory_latency
        + work.lds_waits as f64 / waves * f64::from(perf.lds_latency_clocks)
        + work.barriers as f64 / waves * f64::from(perf.barrier_clocks);
    let resident =
        u64::from(shape.occupancy.whole_group_waves_per_simd) * u64::from(profile.simds_per_cu);
    let resident = resident.max(u64::from(shape.waves_per_group.max(1)));
    let latency = waves_on_cu.div_ceil(resident) as f64 * path / clock;
    let launch = f64::from(perf.launch_overhead_ns) * 1e-9;

    let (busiest, bound) = [
        (compute, Bound::Compute),
        (matrix_core, Bound::MatrixCore),
        (vector_memory, Bound::VectorMemory),
        (lds, Bound::Lds),
        (memory_bandwidth, Bound::MemoryBandwidth),
        (latency, Bound::Latency),
    ]
    .into_iter()
    .fold(
        (0.0, Bound::Launch),
        |best, b| if b.0 > best.0 { b } else { best },
    );
    Some(Estimate {
        seconds: launch + busiest,
        bound: if launch > busiest {
            Bound::Launch
        } else {
            bound
        },
        compute_seconds: compute,
        matrix_core_seconds: matrix_core,
        vector_memory_seconds: vector_memory,
        lds_seconds: lds,
        memory_bandwidth_seconds: memory_bandwidth,
        latency_seconds: latency,
        launch_seconds: launch,
        work: *work,
        profile: profile.profile_id.clone(),
        profile_revision: profile.revision,
        fidelity: Fidelity::TimingEstimated,
        assumptions: ASSUMPTIONS,
    })
}

/// The estimate of a dispatch of `kernel` (of `program`) that ran in
/// workgroups of `block` with `dynamic_lds` bytes of LDS beyond its own,
/// as `stats` and `counts` say, on `profile`'s part; `None` when the
/// profile has no performance figures.
pub fn of_dispatch(
    profile: &Profile,
    program: &Program,
    kernel: &softgpu_codeobj::Kernel,
    block: [u32; 3],
    dynamic_lds: u32,
    stats: &DispatchCounters,
    counts: &Hotspots,
) -> Option<Estimate> {
    let perf = profile.analytical_performance.as_ref()?;
    let size: u32 = block.iter().product();
    let resources = KernelResources::of(kernel, size, dynamic_lds);
    let shape = Shape {
        workgroups: stats.workgroups,
        waves_per_group: size.div_ceil(resources.wave_size),
        occupancy: occupancy(profile, &resources),
    };
    // The counts are of the slots of the program that ran the kernel.
    let ran = program.for_kernel(kernel);
    let work = work(ran, counts, perf, profile.simds_per_cu);
    estimate(profile, &work, &shape)
}

impl Estimate {
    /// The estimate in a few lines of text, as `profile` and `run
    /// --stats` print it.
    pub fn text(&self) -> String {
        let us = |s: f64| s * 1e6;
        // Only CDNA's code has matrix-core work to show.
        let matrix = if self.matrix_core_seconds > 0.0 {
            format!(", matrix core {:.2} us", us(self.matrix_core_seconds))
        } else {
            String::new()
        };
        format!(
            "estimated time on {} (rev {}, {}): {:.2} us, bound by {}\n  \
             compute {:.2} us{matrix}, vector memory {:.2} us, LDS {:.2} us, memory bandwidth {:.2} us, latency {:.2} us, launch {:.2} us\n  \
             assumes: {}",
            self.profile,
            self.profile_revision,
            self.fidelity.name(),
            us(self.seconds),
            self.bound.name(),
            us(self.compute_seconds),
            us(self.vector_memory_seconds),
            us(self.lds_seconds),
            us(self.memory_bandwidth_seconds),
            us(self.latency_seconds),
            us(self.launch_seconds),
            self.assumptions.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::occupancy::Limit;

    fn shape(workgroups: u64, waves_per_group: u32) -> Shape {
        Shape {
            workgroups,
            waves_per_group,
            occupancy: Occupancy {
                waves_per_simd: 16,
                waves_per_cu: 32,
                limit: Limit::WaveSlots,
                workgroups_per_wgp: 8,
                whole_group_waves_per_simd: 16,
            },
        }
    }

    /// Bytes of global traffic over the part's bandwidth, once they
    /// dominate, are the estimate (plus the launch).
    #[test]
    fn streaming_is_bound_by_memory_bandwidth() {
        let p = Profile::built_in("gfx1100").unwrap();
        let perf = p.analytical_performance.as_ref().unwrap();
        let bytes = 1u64 << 30;
        let w = Work {
            global_bytes: bytes,
            valu_clocks: 1 << 20,
            salu_instructions: 1 << 20,
            ..Work::default()
        };
        let e = estimate(&p, &w, &shape(1 << 16, 8)).unwrap();
        assert_eq!(e.bound, Bound::MemoryBandwidth);
        let ideal = bytes as f64 / perf.memory_bytes_per_second as f64;
        assert!((e.seconds - e.launch_seconds - ideal).abs() < 1e-12);
        assert_eq!(e.fidelity, Fidelity::TimingEstimated);
    }

    /// A dispatch of one small workgroup costs its launch and one wave's
    /// path; a grid many times the CUs spreads over all of them.
    #[test]
    fn small_grids_do_not_fill_the_part() {
        let p = Profile::built_in("gfx1151").unwrap();
        let one = Work {
            valu_clocks: 100,
            salu_instructions: 10,
            ..Work::default()
        };
        let e = estimate(&p, &one, &shape(1, 1)).unwrap();
        assert_eq!(e.bound, Bound::Launch);
        // Work of 40 × 64 groups on 40 CUs: each CU's share is 1/40.
        let many = Work {
            valu_clocks: 40 * 64 * 1_000_000,
            ..Work::default()
        };
        let e = estimate(&p, &many, &shape(40 * 64, 2)).unwrap();
        assert_eq!(e.bound, Bound::Compute);
        let clocks = 64.0 * 1_000_000.0 / 2.0;
        let expect = clocks / (f64::from(p.clock_mhz) * 1e6);
        assert!((e.compute_seconds - expect).abs() / expect < 1e-12);
    }

    #[test]
    fn waits_make_latency_the_bound() {
        let p = Profile::built_in("gfx1151").unwrap();
        let w = Work {
            valu_clocks: 1000,
            salu_instructions: 1000,
            memory_waits: 1000,
            global_bytes: 4000,
            ..Work::default()
        };
        // 100 single-wave groups, one dependent load each, 10 times.
        let e = estimate(&p, &w, &shape(100, 1)).unwrap();
        assert_eq!(e.bound, Bound::Latency, "{}", e.text());
        assert!(e.text().contains("bound by latency"));
    }

    /// An MFMA keeps its SIMD's matrix core busy for its operations at
    /// the profile's rate for its type: MI300X's f16 rate, 2048 per CU per
    /// clock, is 512 per SIMD, so a 32x32x8 (16384 operations) takes 32
    /// clocks. Matrix work beyond the VALU's is the matrix-core bound.
    #[test]
    fn mfma_costs_its_matrix_rate() {
        let p = Profile::built_in("gfx942").unwrap();
        let perf = p.analytical_performance.as_ref().unwrap();
        let gemm = Inst::new(Op::V_MFMA_F32_32X32X8_F16, softgpu_isa::Family::Gfx94);
        assert_eq!(cost(&gemm, true, perf, p.simds_per_cu), Cost::Matrix(32));
        let fp8 = Inst::new(Op::V_MFMA_F32_32X32X16_FP8_FP8, softgpu_isa::Family::Gfx94);
        assert_eq!(cost(&fp8, true, perf, p.simds_per_cu), Cost::Matrix(32));
        // 16 one-wave groups per SIMD of the 304 CUs, each wave running
        // 1000 of these MFMAs beside 1000 VALU instructions.
        let waves = 304 * 4 * 16;
        let w = Work {
            matrix_clocks: waves * 32 * 1000,
            valu_clocks: waves * 4 * 1000,
            ..Work::default()
        };
        let e = estimate(&p, &w, &shape(waves, 1)).unwrap();
        assert_eq!(e.bound, Bound::MatrixCore, "{}", e.text());
        let expect = 16.0 * 32.0 * 1000.0 / (f64::from(p.clock_mhz) * 1e6);
        assert!((e.matrix_core_seconds - expect).abs() / expect < 1e-12);
        assert!(e.text().contains("matrix core"));
    }
}
