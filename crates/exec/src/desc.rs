//! The dispatch descriptor: everything [`Device::dispatch`] needs to run one
//! kernel dispatch, as named fields.
//!
//! [`Device::dispatch`]: crate::Device::dispatch

use softgpu_codeobj::Kernel;

use crate::args::{Arg, Launch, Services};
use crate::dispatch::DispatchCounters;
use crate::hotspots::Hotspots;
use softgpu_interp::placement::ComputeUnits;
use softgpu_interp::program::Program;

/// The size of a dispatch's grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// Workgroups in each dimension (HIP's `gridDim`): every workgroup is
    /// whole.
    Workgroups([u32; 3]),
    /// Work-items in each dimension (HSA's convention, an AQL packet's
    /// grid size): the last workgroup of a dimension may be partial.
    WorkItems([u32; 3]),
}

/// Where a dispatch's kernel arguments come from, which also decides whose
/// workgroup-size limits it is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kernarg<'a> {
    /// Explicit arguments, checked against the kernel's metadata: the
    /// executor lays out the kernarg segment (hidden arguments included,
    /// with null service pointers, see [`crate::args::build_kernarg`]) and places
    /// it, an AQL packet and a queue descriptor in device memory for the
    /// duration of the dispatch. The launch is held to the kernel's own
    /// limits, as a language runtime checks them.
    Args(&'a [Arg]),
    /// A ready-made kernarg segment (replaying a captured dispatch), at
    /// least as long as the kernel's; placed like [`Kernarg::Args`]'s.
    Bytes(&'a [u8]),
    /// A kernarg segment, AQL packet and queue already in device memory
    /// (a runtime's packet processor). The launch is held to the
    /// hardware's limits only, as a GPU's packet processor never reads a
    /// kernel's metadata.
    InMemory(InMemory),
}

/// Device addresses of a dispatch a runtime has laid out in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InMemory {
    /// The kernarg segment (0 when the kernel takes no arguments).
    pub kernarg: u64,
    /// The AQL packet the kernel sees behind its dispatch pointer.
    pub packet: u64,
    /// The queue the kernel sees behind its queue pointer.
    pub queue: u64,
}

/// Everything one kernel dispatch needs. Build one with
/// [`DispatchDesc::new`] or [`DispatchDesc::launch`] and change the fields
/// that differ from the defaults those give:
///
/// ```no_run
/// # use softgpu_exec::{Arg, Device, DispatchDesc, DispatchError, Grid, Kernarg, Program};
/// # fn run(device: &Device, program: &Program, args: &[Arg]) -> Result<(), DispatchError> {
/// let kernel = program.kernel("vector_add")?;
/// let desc = DispatchDesc {
///     grid: Grid::WorkItems([1000, 1, 1]),
///     block: [256, 1, 1],
///     kernarg: Kernarg::Args(args),
///     ..DispatchDesc::new(program, kernel)
/// };
/// let counters = device.dispatch(&desc)?.counters;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct DispatchDesc<'a> {
    /// The loaded code object the kernel belongs to.
    pub program: &'a Program,
    /// The kernel to run, one of `program`'s ([`Program::kernel`]).
    pub kernel: &'a Kernel,
    /// The grid, in workgroups or in work-items.
    pub grid: Grid,
    /// Work-items per workgroup in each dimension (HIP's `blockDim`).
    pub block: [u32; 3],
    /// The kernel's arguments.
    pub kernarg: Kernarg<'a>,
    /// The runtime services (printf buffer, hostcall buffer, heap) the
    /// hidden arguments point at when the executor lays out the kernarg
    /// segment ([`Kernarg::Args`]); absent ones are null.
    pub services: Services,
    /// Bytes of dynamic LDS after the kernel's static LDS; also the value
    /// of the hidden dynamic-LDS-size argument when the executor lays out
    /// the kernarg segment ([`Kernarg::Args`]).
    pub dynamic_lds: u32,
    /// LDS bytes per workgroup, static plus dynamic, as an AQL packet's
    /// group segment size says; `None`: the kernel's static LDS plus
    /// `dynamic_lds`. The kernel's static LDS counts even when this says
    /// less.
    pub group_segment_bytes: Option<u32>,
    /// Scratch bytes per work-item the dispatch asks for; the kernel's own
    /// need is always given, so 0 asks for no more than that.
    pub private_segment_bytes: u32,
    /// The compute units the dispatch may run on (a queue's CU mask);
    /// `None`: all of the device's.
    pub compute_units: Option<ComputeUnits>,
    /// [`softgpu_arena::Arena::serial`] when the dispatch was queued
    /// (`None`: just now): accesses to memory reallocated since are refused
    /// as stale.
    pub epoch: Option<u32>,
    /// Whether to count, for every instruction of the program, how many
    /// times a wave executed it and with how many active lanes
    /// ([`DispatchOutcome::hotspots`]). Slower; a dispatch without it runs
    /// no counting code at all.
    pub hotspots: bool,
}

impl<'a> DispatchDesc<'a> {
    /// A dispatch of `kernel` (of `program`) with the defaults: one
    /// work-item in one workgroup, no explicit arguments, no dynamic LDS,
    /// no scratch beyond the kernel's own, every compute unit, queued just
    /// now, no per-instruction counts.
    pub fn new(program: &'a Program, kernel: &'a Kernel) -> DispatchDesc<'a> {
        DispatchDesc {
            program,
            kernel,
            grid: Grid::WorkItems([1, 1, 1]),
            block: [1, 1, 1],
            kernarg: Kernarg::Args(&[]),
            services: Services::default(),
            dynamic_lds: 0,
            group_segment_bytes: None,
            private_segment_bytes: 0,
            compute_units: None,
            epoch: None,
            hotspots: false,
        }
    }

    /// A dispatch of `kernel` over `launch` (a grid of whole workgroups)
    /// with explicit arguments `args`, as a language runtime launches it;
    /// the other fields as [`DispatchDesc::new`] sets them.
    pub fn launch(
        program: &'a Program,
        kernel: &'a Kernel,
        launch: &Launch,
        args: &'a [Arg],
    ) -> DispatchDesc<'a> {
        DispatchDesc {
            grid: Grid::Workgroups(launch.grid),
            block: launch.block,
            kernarg: Kernarg::Args(args),
            dynamic_lds: launch.dynamic_lds,
            ..DispatchDesc::new(program, kernel)
        }
    }
}

/// What a dispatch that ran to completion returns.
#[derive(Clone, Debug)]
pub struct DispatchOutcome {
    /// Its counters.
    pub counters: DispatchCounters,
    /// Its per-instruction counts, when [`DispatchDesc::hotspots`] asked
    /// for them.
    pub hotspots: Option<Hotspots>,
    /// What the sanitizers found in a launch that ran past its findings
    /// (`Checks::contain`; a refused access fails the launch instead).
    pub findings: crate::fault::Errors,
}

/// A dispatch as an AQL packet describes it, kept by a runtime between
/// checking the packet and running it ([`RawDispatch::desc`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawDispatch {
    /// Work-items in each dimension.
    pub grid: [u32; 3],
    /// Work-items per workgroup in each dimension.
    pub block: [u32; 3],
    /// LDS bytes per workgroup, static plus dynamic.
    pub group_segment_bytes: u32,
    /// Scratch bytes per work-item the dispatch asks for (at least the
    /// kernel's own need is always given).
    pub private_segment_bytes: u32,
    /// Device address of the kernarg segment.
    pub kernarg: u64,
    /// Device address of the AQL packet the kernel sees behind its
    /// dispatch pointer.
    pub packet: u64,
    /// Device address of the queue the kernel sees behind its queue
    /// pointer.
    pub queue: u64,
    /// As [`DispatchDesc::epoch`].
    pub epoch: Option<u32>,
    /// The compute units it may run on (a queue's CU mask); `None`: all.
    pub compute_units: Option<ComputeUnits>,
}

impl RawDispatch {
    /// The descriptor that runs this packet's dispatch of `kernel`.
    pub fn desc<'a>(&self, program: &'a Program, kernel: &'a Kernel) -> DispatchDesc<'a> {
        DispatchDesc {
            grid: Grid::WorkItems(self.grid),
            block: self.block,
            kernarg: Kernarg::InMemory(InMemory {
                kernarg: self.kernarg,
                packet: self.packet,
                queue: self.queue,
            }),
            group_segment_bytes: Some(self.group_segment_bytes),
            private_segment_bytes: self.private_segment_bytes,
            compute_units: self.compute_units.clone(),
            epoch: self.epoch,
            ..DispatchDesc::new(program, kernel)
        }
    }
}
