//! The emulated device: its memory, loaded programs and dispatch entry point.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use softgpu_codeobj::Kernel;
use softgpu_isa::Family;

use crate::args::{bad_launch, build_kernarg_with, check_shape, Buffer};
use crate::config::DeviceConfig;
use crate::desc::{DispatchDesc, DispatchOutcome, Grid, InMemory, Kernarg, RawDispatch};
use crate::dispatch::{DispatchCounters, Outcome};
use crate::error::{DispatchError, LaunchRule};
use crate::fault::Errors;
use crate::hotspots::Hotspots;
use crate::plan::Plan;
use crate::tier::JitMode;
use softgpu_arena::{Access, AllocSpec, Arena, MemError};
use softgpu_interp::checks::{Checks, Schedule};
use softgpu_interp::placement::ComputeUnits;
use softgpu_interp::program::Program;

/// The most scratch one wave may have on gfx11: `COMPUTE_TMPRING_SIZE.WAVESIZE`
/// is a 15-bit count of 64-dword (256-byte) units. LLVM refuses to compile a
/// kernel whose stack exceeds this wave size's share
/// (`GCNSubtarget::getMaxWaveScratchSize` divided by the wave size, in
/// `AMDGPUAsmPrinter`), and ROCr refuses queues asking for more than
/// 262,128 bytes per work-item; a dispatch asking for more is refused here.
pub const MAX_WAVE_SCRATCH_BYTES: u64 = 256 * ((1 << 15) - 1);

/// The private segment one work-item may have: the wave's maximum shared
/// by its lanes (262,136 bytes in wave32, 131,068 in wave64).
pub fn max_private_segment_bytes(wave32: bool) -> u32 {
    (MAX_WAVE_SCRATCH_BYTES / if wave32 { 32 } else { 64 }) as u32
}

/// Largest workgroup the device accepts, and its LDS size.
const MAX_WORKGROUP: u32 = 1024;
const LDS_BYTES: u32 = 64 * 1024;

/// An emulated GPU.
pub struct Device {
    arena: Arc<Arena>,
    target: String,
    family: Family,
    threads: usize,
    budget: u64,
    dynamic_stack_bytes: u32,
    dispatch_ids: AtomicU64,
    /// [`Checks::bits`] of the sanitizers on for the next dispatch.
    checks: AtomicU8,
    timeout: Duration,
    schedule: Mutex<Schedule>,
    jit: Mutex<JitMode>,
    scratch_limit: u64,
    /// Every compute unit: where dispatches without a CU mask run.
    units: ComputeUnits,
    /// The device memory of finished dispatches, kept for the next ones
    /// with a kernarg segment of the same length (at most
    /// [`SPARE_DISPATCH_MEMORY`]): placing three fresh allocations, each
    /// in a window of its own on cold pages, was most of a small
    /// dispatch's host cost.
    spare_memory: Mutex<Vec<DispatchMemory>>,
}

/// How many finished dispatches' memory a device keeps.
const SPARE_DISPATCH_MEMORY: usize = 8;

impl Drop for Device {
    fn drop(&mut self) {
        // The arena may outlive the device (it is shared by a runtime's
        // agents): its spare blocks go back to it.
        let spare = std::mem::take(
            self.spare_memory
                .get_mut()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for memory in spare {
            memory.release(&self.arena);
        }
    }
}

impl Device {
    /// A device with its own memory of the config's `arena_bytes`.
    pub fn new(config: &DeviceConfig) -> Result<Device, DispatchError> {
        let arena = Arc::new(Arena::new(config.get_arena_bytes())?);
        Device::with_arena(config, arena)
    }

    /// A device over memory shared with others (several GPU agents of one
    /// runtime see one address space, as HSA's system memory requires);
    /// the config's `arena_bytes` is ignored.
    pub fn with_arena(config: &DeviceConfig, arena: Arc<Arena>) -> Result<Device, DispatchError> {
        let settings = config.get_settings();
        let threads = settings
            .get_threads()
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1)
            .max(1);
        let checks = settings.get_checks();
        arena.track_writes(checks.init);
        Ok(Device {
            jit: Mutex::new(settings.get_jit()),
            arena,
            target: config.get_target().to_string(),
            family: config.get_family(),
            threads,
            budget: settings.get_instruction_budget(),
            dynamic_stack_bytes: settings.get_dynamic_stack_bytes(),
            dispatch_ids: AtomicU64::new(0),
            checks: AtomicU8::new(checks.bits()),
            timeout: settings.get_timeout(),
            schedule: Mutex::new(settings.get_schedule()),
            scratch_limit: settings.get_scratch_limit(),
            units: config.get_topology().all(),
            spare_memory: Mutex::new(Vec::new()),
        })
    }

    /// The processor this device emulates, e.g. `gfx1151`.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// How dispatches use the JIT tier's compiled blocks.
    pub fn jit(&self) -> JitMode {
        *self.jit.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets how later dispatches use the JIT tier; refused
    /// ([`DispatchError::Config`]) for a mode this build cannot run.
    pub fn set_jit(&self, mode: JitMode) -> Result<(), DispatchError> {
        *self.jit.lock().unwrap_or_else(|e| e.into_inner()) = mode.check()?;
        Ok(())
    }

    /// Worker threads dispatches run on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The sanitizers on for the dispatches that start from now on.
    pub fn checks(&self) -> Checks {
        Checks::from_bits(self.checks.load(Ordering::Relaxed))
    }

    /// Turns sanitizers on or off for dispatches that start from now on.
    pub fn set_checks(&self, checks: Checks) {
        self.checks.store(checks.bits(), Ordering::Relaxed);
        self.arena.track_writes(checks.init);
    }

    /// The wave order of dispatches that start from now on.
    pub fn schedule(&self) -> Schedule {
        *self.schedule.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the wave order of dispatches that start from now on.
    pub fn set_schedule(&self, schedule: Schedule) {
        *self.schedule.lock().unwrap_or_else(|e| e.into_inner()) = schedule;
    }

    /// The device memory (for runtimes built on the executor).
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// A new zeroed buffer of `len` bytes.
    pub fn alloc_zeroed(&self, len: u64) -> Result<Buffer, DispatchError> {
        Ok(Buffer {
            addr: self
                .arena
                .alloc_with(AllocSpec::new(len, "Device::alloc"))?,
            len,
        })
    }

    /// A new buffer holding a copy of `data`.
    pub fn alloc_from(&self, data: &[u8]) -> Result<Buffer, DispatchError> {
        let b = self.alloc_zeroed(data.len() as u64)?;
        self.arena.write(b.addr, data)?;
        Ok(b)
    }

    /// Frees a buffer; later accesses to it fault.
    pub fn free(&self, buffer: Buffer) -> Result<(), DispatchError> {
        Ok(self.arena.free_by(buffer.addr, "Device::free")?)
    }

    /// A copy of the buffer's contents.
    pub fn read(&self, buffer: &Buffer) -> Result<Vec<u8>, DispatchError> {
        let mut out = vec![0u8; buffer.len as usize];
        self.arena.read(buffer.addr, &mut out)?;
        Ok(out)
    }

    /// Writes `data` at the start of the buffer (no more than it holds).
    pub fn write(&self, buffer: &Buffer, data: &[u8]) -> Result<(), DispatchError> {
        if data.len() as u64 > buffer.len {
            return Err(MemError::OutOfRange {
                addr: buffer.addr,
                len: data.len() as u64,
            }
            .into());
        }
        Ok(self.arena.write(buffer.addr, data)?)
    }

    /// Loads a code object (or the entry of an offload bundle for this
    /// device's target): places its image in device memory with relocations
    /// applied and decodes its code once.
    pub fn load(&self, bytes: &[u8]) -> Result<Program, DispatchError> {
        self.load_as(bytes, "Device::load")
    }

    /// [`Device::load`] on behalf of API call `api` (named in reports of
    /// faults in the image's memory).
    pub fn load_as(&self, bytes: &[u8], api: &'static str) -> Result<Program, DispatchError> {
        self.load_decoding(bytes, api, None)
    }

    // Hidden: for tests of the lazy path on small code objects.
    /// [`Device::load`], decoding a kernel at a time at its first dispatch
    /// whatever the text's size, as for text over
    /// [`crate::EAGER_TEXT_BYTES`].
    #[doc(hidden)]
    pub fn load_lazily(&self, bytes: &[u8]) -> Result<Program, DispatchError> {
        self.load_decoding(bytes, "Device::load", Some(true))
    }

    /// Loads as [`Device::load_as`] does, decoding lazily as `lazily` says
    /// (`None`: by the text's size).
    fn load_decoding(
        &self,
        bytes: &[u8],
        api: &'static str,
        lazily: Option<bool>,
    ) -> Result<Program, DispatchError> {
        let code_object = softgpu_codeobj::load_for_target(bytes, &self.target)?;
        for k in &code_object.kernels {
            for w in &k.warnings {
                eprintln!(
                    "softgpu: warning: kernel {}: {w}",
                    softgpu_codeobj::demangle(&k.name)
                );
            }
        }
        let (base, image) = place_image(&self.arena, &code_object, api)?;
        Ok(match lazily {
            None => Program::new(code_object, base, image, self.family),
            Some(l) => Program::decoding(code_object, base, image, self.family, l),
        })
    }

    /// Runs one dispatch to completion or to its first fault. Every rule
    /// the launch must keep (see [`Device::check`]) is checked before
    /// anything is allocated for it.
    pub fn dispatch(&self, desc: &DispatchDesc) -> Result<DispatchOutcome, DispatchError> {
        if desc.hotspots {
            let ((counters, hotspots), findings) =
                self.dispatch_as::<(DispatchCounters, Hotspots)>(desc)?;
            Ok(DispatchOutcome {
                counters,
                hotspots: Some(hotspots),
                findings,
            })
        } else {
            let (counters, findings) = self.dispatch_as::<DispatchCounters>(desc)?;
            Ok(DispatchOutcome {
                counters,
                hotspots: None,
                findings,
            })
        }
    }

    /// Checks a dispatch against the device's and the kernel's limits
    /// (shape, workgroup size, LDS, private segment, kernel arguments)
    /// without running it, as [`Device::dispatch`] does before it
    /// allocates anything. A runtime checks a packet with this before it
    /// captures or queues anything for it.
    pub fn check(&self, desc: &DispatchDesc) -> Result<(), DispatchError> {
        self.checked(desc).map(drop)
    }

    /// The dispatch path shared by plain dispatches and those counting hotspots, generic
    /// over what the dispatch returns (its counters, or counters and hotspots).
    fn dispatch_as<O: Outcome>(&self, desc: &DispatchDesc) -> Result<(O, Errors), DispatchError> {
        match self.checked(desc)? {
            Checked::Segment {
                grid,
                group_segment_bytes,
                kernarg,
            } => self.run_segment(desc, grid, group_segment_bytes, &kernarg),
            Checked::InMemory {
                raw,
                scratch_lane_bytes,
            } => {
                let staged = self.stage_overrun_kernarg(desc.kernel, raw.kernarg)?;
                let raw = RawDispatch {
                    kernarg: staged.unwrap_or(raw.kernarg),
                    ..raw
                };
                let result = self.run_raw(desc.program, desc.kernel, &raw, scratch_lane_bytes);
                if let Some(block) = staged {
                    let _ = self.arena.free_by(block, "the end of the dispatch");
                }
                result
            }
        }
    }

    /// A kernarg segment that starts in a live allocation but runs past its
    /// end (a client that sized the buffer for its explicit arguments only,
    /// as several of AMD's own HSA tests do) is not a dead queue: the
    /// kernel reads a copy whose bytes past the allocation are zero, and a
    /// warning names both sizes. Returns the copy, if one was needed.
    fn stage_overrun_kernarg(
        &self,
        kernel: &Kernel,
        kernarg: u64,
    ) -> Result<Option<u64>, DispatchError> {
        let needed = kernarg_bytes(kernel);
        if needed == 0 || self.arena.check(kernarg, needed).is_ok() {
            return Ok(None);
        }
        let Some(held) = self.kernarg_held(kernarg, needed) else {
            // Freed since the check: refused as the check refuses it.
            return self.check_kernarg_address(kernel, kernarg).map(|_| None);
        };
        let mut segment = vec![0u8; needed as usize];
        self.arena.read(kernarg, &mut segment[..held as usize])?;
        let copy = self.arena.alloc_with(AllocSpec::internal(
            needed,
            "the kernarg segment's copy",
            Access::ReadOnly,
        ))?;
        self.arena.write(copy, &segment)?;
        eprintln!(
            "softgpu: warning: kernel {}: its kernarg segment is {needed} bytes but the allocation at {kernarg:#x} holds only {held} of them; the kernel reads a copy whose last {} bytes are zero",
            kernel.name,
            needed - held
        );
        Ok(Some(copy))
    }

    /// Bytes of a live allocation from `kernarg` to its end, when that is
    /// some but fewer than the `needed` bytes of the segment.
    fn kernarg_held(&self, kernarg: u64, needed: u64) -> Option<u64> {
        let (start, len) = self.arena.allocation_of(kernarg)?;
        let held = start + len - kernarg;
        (held > 0 && held < needed).then_some(held)
    }

    /// Every check of [`Device::check`], in the order a dispatch makes
    /// them; returns what the dispatch runs.
    fn checked<'d>(&self, desc: &'d DispatchDesc) -> Result<Checked<'d>, DispatchError> {
        if !self.family.executed() {
            return Err(DispatchError::NotExecuted(self.target.clone()));
        }
        let kernel = desc.kernel;
        let grid = work_items(kernel, desc.grid, desc.block)?;
        let group_segment_bytes = group_segment_bytes(desc)?;
        let kernel_limits = || {
            check_launch(
                kernel,
                grid,
                desc.block,
                group_segment_bytes,
                Enforce::Kernel,
            )
        };
        let kernarg = match desc.kernarg {
            Kernarg::InMemory(memory) => {
                let raw = raw_dispatch(desc, grid, group_segment_bytes, memory);
                let scratch_lane_bytes = self.check_raw(kernel, &raw)?;
                return Ok(Checked::InMemory {
                    raw,
                    scratch_lane_bytes,
                });
            }
            Kernarg::Args(args) => {
                kernel_limits()?;
                let segment = build_kernarg_with(
                    kernel,
                    grid,
                    desc.block,
                    desc.dynamic_lds,
                    args,
                    &desc.services,
                )?;
                Cow::Owned(segment)
            }
            Kernarg::Bytes(bytes) => {
                kernel_limits()?;
                Cow::Borrowed(bytes)
            }
        };
        self.private_lane_bytes(kernel, desc.private_segment_bytes)?;
        check_kernarg_length(kernel, &kernarg)?;
        Ok(Checked::Segment {
            grid,
            group_segment_bytes,
            kernarg,
        })
    }

    /// Runs a checked dispatch with its kernarg segment: the segment, AQL
    /// packet and queue are placed in device memory for the duration of
    /// the dispatch.
    fn run_segment<O: Outcome>(
        &self,
        desc: &DispatchDesc,
        grid: [u32; 3],
        group_segment_bytes: u32,
        kernarg: &[u8],
    ) -> Result<(O, Errors), DispatchError> {
        let (program, kernel) = (desc.program, desc.kernel);
        let private_segment_bytes = fixed_private_segment(kernel).max(desc.private_segment_bytes);
        let memory = self.dispatch_memory(kernarg)?;
        let packet = packet(
            kernel,
            program,
            grid,
            desc.block,
            private_segment_bytes,
            group_segment_bytes,
            memory.kernarg,
        );
        let raw = RawDispatch {
            private_segment_bytes,
            ..raw_dispatch(desc, grid, group_segment_bytes, memory.addresses())
        };
        // The memory is kept (or freed) whichever way the dispatch ends.
        let result = (self.arena.write(memory.packet, &packet))
            .map_err(DispatchError::from)
            .and_then(|()| self.check_raw(kernel, &raw))
            .and_then(|scratch_lane_bytes| self.run_raw(program, kernel, &raw, scratch_lane_bytes));
        self.keep_dispatch_memory(memory);
        result
    }

    /// Device memory for a dispatch with `kernarg`: a finished dispatch's
    /// of the same kernarg length, the segment rewritten, or new.
    fn dispatch_memory(&self, kernarg: &[u8]) -> Result<DispatchMemory, MemError> {
        let spare = {
            let mut spare = self.spare_memory.lock().unwrap_or_else(|e| e.into_inner());
            let same = spare.iter().position(|m| m.kernarg_len == kernarg.len());
            same.map(|k| spare.swap_remove(k))
        };
        match spare {
            Some(memory) => match self.arena.write(memory.kernarg, kernarg) {
                Ok(()) => Ok(memory),
                Err(e) => {
                    memory.release(&self.arena);
                    Err(e)
                }
            },
            None => DispatchMemory::new(&self.arena, kernarg),
        }
    }

    /// Keeps a finished dispatch's memory for the next, or frees it.
    fn keep_dispatch_memory(&self, memory: DispatchMemory) {
        let mut spare = self.spare_memory.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARE_DISPATCH_MEMORY {
            spare.push(memory);
        } else {
            drop(spare);
            memory.release(&self.arena);
        }
    }

    /// Runs a dispatch laid out in device memory and checked
    /// (`Device::check_raw` gave its scratch bytes per lane).
    fn run_raw<O: Outcome>(
        &self,
        program: &Program,
        kernel: &Kernel,
        raw: &RawDispatch,
        scratch_lane_bytes: u32,
    ) -> Result<(O, Errors), DispatchError> {
        // A registered host range the client has since unmapped would take
        // the process down when touched: close it to kernels first.
        self.arena.forget_unmapped_host();
        let program = program.for_kernel(kernel);
        if let Some(why) = program.split_misuse(kernel) {
            return Err(bad_launch(kernel, LaunchRule::CodeObject, why));
        }
        let groups: [u32; 3] = std::array::from_fn(|d| raw.grid[d].div_ceil(raw.block[d]));
        let plan = Plan {
            program,
            kernel,
            arena: &self.arena,
            groups,
            grid: raw.grid,
            block: raw.block,
            lds_bytes: raw.group_segment_bytes.max(static_lds(kernel)) as usize,
            scratch_lane_bytes: scratch_lane_bytes as usize,
            scratch_budget: Arc::new(softgpu_interp::wave::PrivateBudget::new(self.scratch_limit)),
            kernarg: raw.kernarg,
            epoch: raw.epoch,
            dispatch_packet: raw.packet,
            queue: raw.queue,
            dispatch_id: self.dispatch_ids.fetch_add(1, Ordering::Relaxed),
            threads: self.threads,
            budget: self.budget,
            checks: self.checks(),
            timeout: self.timeout,
            schedule: self.schedule(),
            jit: self.jit(),
            units: raw
                .compute_units
                .clone()
                .unwrap_or_else(|| self.units.clone()),
        };
        O::run(&plan).map_err(DispatchError::Fault)
    }

    /// Checks a dispatch laid out in device memory against the device's
    /// and the kernel's limits (shape, LDS, private segment, kernarg
    /// segment) without running it; returns its scratch bytes per lane.
    /// Every dispatch path does this before running. The workgroup size is
    /// held to the hardware's limit only, as a GPU's packet processor does
    /// (see `Enforce::Hardware`).
    fn check_raw(&self, kernel: &Kernel, raw: &RawDispatch) -> Result<u32, DispatchError> {
        check_launch(
            kernel,
            raw.grid,
            raw.block,
            raw.group_segment_bytes,
            Enforce::Hardware,
        )?;
        let groups: [u32; 3] = std::array::from_fn(|a| raw.grid[a].div_ceil(raw.block[a].max(1)));
        if let Some(why) = crate::abi::launch_abi(self.family).refuses_groups(groups) {
            return Err(bad_launch(kernel, LaunchRule::Shape, why));
        }
        let lane_bytes = self.private_lane_bytes(kernel, raw.private_segment_bytes)?;
        self.check_kernarg_address(kernel, raw.kernarg)?;
        if raw.compute_units.as_ref().is_some_and(|u| u.is_empty()) {
            // A GPU would leave such a dispatch waiting forever.
            return Err(bad_launch(
                kernel,
                LaunchRule::ComputeUnits,
                "the queue's CU mask enables no compute unit, so no workgroup can start".into(),
            ));
        }
        Ok(lane_bytes)
    }

    /// Scratch bytes per lane: the kernel's fixed size (or more, if the
    /// dispatch asks) plus the dynamic stack for kernels that need one;
    /// refused beyond the hardware's per-work-item limit.
    fn private_lane_bytes(&self, kernel: &Kernel, requested: u32) -> Result<u32, DispatchError> {
        check_private_segment(kernel, requested)?;
        let fixed = kernel
            .descriptor
            .private_segment_fixed_size
            .max(kernel.meta.private_segment_fixed_size)
            .max(requested);
        let wave32 = kernel.descriptor.wave32;
        let max = max_private_segment_bytes(wave32);
        let lanes = if wave32 { 32 } else { 64 };
        let dynamic = kernel.descriptor.uses_dynamic_stack || kernel.meta.uses_dynamic_stack;
        let stack = if dynamic { self.dynamic_stack_bytes } else { 0 };
        match fixed.checked_add(stack) {
            Some(total) if total <= max => Ok(total),
            _ => Err(bad_launch(
                kernel, LaunchRule::PrivateSegment,
                format!(
                    "private segment of {fixed} bytes per work-item plus the {stack}-byte dynamic stack exceeds the gfx11 limit of {max} bytes per work-item in wave{lanes}"
                ),
            )),
        }
    }

    /// The kernarg segment a kernel with arguments reads must be readable
    /// device memory.
    fn check_kernarg_address(&self, kernel: &Kernel, kernarg: u64) -> Result<(), DispatchError> {
        let needed = kernarg_bytes(kernel);
        if needed == 0 {
            return Ok(());
        }
        if kernarg == 0 {
            return Err(bad_launch(
                kernel,
                LaunchRule::Kernarg,
                format!(
                    "the kernarg address is null; the kernel reads {needed} bytes of arguments"
                ),
            ));
        }
        if self.arena.check(kernarg, needed).is_ok() || self.kernarg_held(kernarg, needed).is_some()
        {
            // Wholly readable, or a start inside an allocation the segment
            // runs past (see `stage_overrun_kernarg`).
            return Ok(());
        }
        Err(bad_launch(
            kernel,
            LaunchRule::Kernarg,
            format!(
                "the kernarg segment at {kernarg:#x} ({needed} bytes) is not readable device memory"
            ),
        ))
    }
}

/// Refuses a private segment per work-item (the larger of the kernel
/// descriptor's, the metadata's and the dispatch's `requested`) beyond what
/// gfx11 allows ([`max_private_segment_bytes`]).
pub fn check_private_segment(kernel: &Kernel, requested: u32) -> Result<(), DispatchError> {
    let (descriptor, meta) = (
        kernel.descriptor.private_segment_fixed_size,
        kernel.meta.private_segment_fixed_size,
    );
    let fixed = descriptor.max(meta).max(requested);
    let wave32 = kernel.descriptor.wave32;
    let max = max_private_segment_bytes(wave32);
    let lanes = if wave32 { 32 } else { 64 };
    if fixed > max {
        return Err(bad_launch(
            kernel, LaunchRule::PrivateSegment,
            format!(
                "private segment of {fixed} bytes per work-item (kernel descriptor {descriptor}, metadata {meta}, dispatch {requested}) exceeds the gfx11 limit of {max} bytes per work-item in wave{lanes} ({MAX_WAVE_SCRATCH_BYTES} bytes per wave)"
            ),
        ));
    }
    Ok(())
}

/// Bytes of the kernarg segment the kernel reads (descriptor or metadata).
fn kernarg_bytes(kernel: &Kernel) -> u64 {
    kernel
        .meta
        .kernarg_segment_size
        .max(kernel.descriptor.kernarg_size) as u64
}

/// What a checked dispatch runs.
enum Checked<'d> {
    /// A kernarg segment to place in device memory for the dispatch.
    Segment {
        grid: [u32; 3],
        group_segment_bytes: u32,
        kernarg: Cow<'d, [u8]>,
    },
    /// A dispatch a runtime has laid out in memory, and its scratch bytes
    /// per lane.
    InMemory {
        raw: RawDispatch,
        scratch_lane_bytes: u32,
    },
}

/// The grid in work-items.
fn work_items(kernel: &Kernel, grid: Grid, block: [u32; 3]) -> Result<[u32; 3], DispatchError> {
    let workgroups = match grid {
        Grid::WorkItems(items) => return Ok(items),
        Grid::Workgroups(workgroups) => workgroups,
    };
    let mut items = [0u32; 3];
    for (d, items) in items.iter_mut().enumerate() {
        *items = workgroups[d].checked_mul(block[d]).ok_or_else(|| {
            bad_launch(
                kernel, LaunchRule::Shape,
                format!(
                    "dimension {d}: {} workgroups of {} work-items exceed the {} work-items an AQL grid dimension holds",
                    workgroups[d],
                    block[d],
                    u32::MAX
                ),
            )
        })?;
    }
    Ok(items)
}

/// LDS bytes per workgroup: as the dispatch says, else the kernel's static
/// LDS plus the dispatch's dynamic LDS.
fn group_segment_bytes(desc: &DispatchDesc) -> Result<u32, DispatchError> {
    if let Some(bytes) = desc.group_segment_bytes {
        return Ok(bytes);
    }
    let (kernel, dynamic_lds) = (desc.kernel, desc.dynamic_lds);
    static_lds(kernel).checked_add(dynamic_lds).ok_or_else(|| {
        bad_launch(
            kernel,
            LaunchRule::GroupSegment,
            format!("{dynamic_lds} bytes of dynamic LDS overflow; the device has {LDS_BYTES}"),
        )
    })
}

/// The dispatch `desc` describes, laid out at `memory`.
fn raw_dispatch(
    desc: &DispatchDesc,
    grid: [u32; 3],
    group_segment_bytes: u32,
    memory: InMemory,
) -> RawDispatch {
    RawDispatch {
        grid,
        block: desc.block,
        group_segment_bytes,
        private_segment_bytes: desc.private_segment_bytes,
        kernarg: memory.kernarg,
        packet: memory.packet,
        queue: memory.queue,
        epoch: desc.epoch,
        compute_units: desc.compute_units.clone(),
    }
}

/// A supplied kernarg segment must hold all the kernel reads.
fn check_kernarg_length(kernel: &Kernel, kernarg: &[u8]) -> Result<(), DispatchError> {
    let needed = kernarg_bytes(kernel);
    if (kernarg.len() as u64) < needed {
        return Err(bad_launch(
            kernel, LaunchRule::Kernarg,
            format!(
                "{} bytes of kernel arguments supplied; the kernel's kernarg segment is {needed} bytes",
                kernarg.len()
            ),
        ));
    }
    Ok(())
}

/// The kernel's own scratch bytes per work-item (descriptor or metadata).
fn fixed_private_segment(kernel: &Kernel) -> u32 {
    kernel
        .descriptor
        .private_segment_fixed_size
        .max(kernel.meta.private_segment_fixed_size)
}

/// Places a code object's image in a new allocation, with relocations
/// applied: its segments are open to kernels as the ELF says (read-only
/// unless writable), the gaps between them not at all. Returns the base.
pub fn place_image(
    arena: &Arena,
    code_object: &softgpu_codeobj::CodeObject,
    api: &'static str,
) -> Result<(u64, Vec<u8>), DispatchError> {
    let image_bytes = code_object.image.size.max(1);
    // The runtime's own memory, though a program's call loads it: a
    // module left loaded at exit is not a leak of device memory.
    let spec = AllocSpec::internal(image_bytes, api, Access::HostOnly);
    let base = arena.alloc_with(spec)?;
    let placed = (|| -> Result<Vec<u8>, DispatchError> {
        let image = code_object.image.place(base)?;
        arena.write(base, &image)?;
        Ok(image)
    })();
    let image = match placed {
        Ok(image) => image,
        Err(e) => {
            let _ = arena.free_by(base, api);
            return Err(e);
        }
    };
    for seg in &code_object.image.segments {
        let access = if seg.writable {
            Access::ReadWrite
        } else {
            Access::ReadOnly
        };
        let range = seg.range();
        // Segments start where the ELF puts them; the shadow has 8-byte
        // granules, so a segment's first granule opens from its start.
        let start = range.start / 8 * 8;
        arena.protect(base + start, range.end.min(image_bytes) - start, access)?;
    }
    Ok((base, image))
}

/// The kernel's static LDS bytes.
fn static_lds(kernel: &Kernel) -> u32 {
    kernel
        .descriptor
        .group_segment_fixed_size
        .max(kernel.meta.group_segment_fixed_size)
}

/// Per-dispatch device memory: kernarg segment, AQL packet, fake queue.
struct DispatchMemory {
    kernarg: u64,
    /// The kernarg segment's length (its allocation's, unless 0: then 1).
    kernarg_len: usize,
    packet: u64,
    queue: u64,
}

impl DispatchMemory {
    fn new(arena: &Arena, kernarg: &[u8]) -> Result<DispatchMemory, MemError> {
        // Kernels may read all three, never write them.
        let read_only =
            |len: u64, what| arena.alloc_with(AllocSpec::internal(len, what, Access::ReadOnly));
        let k = read_only(kernarg.len().max(1) as u64, "the kernarg segment")?;
        arena.write(k, kernarg)?;
        let p = read_only(64, "the dispatch packet")?;
        // An hsa_queue_t-sized zeroed block for kernels that read the queue.
        let q = read_only(256, "the queue descriptor")?;
        Ok(DispatchMemory {
            kernarg: k,
            kernarg_len: kernarg.len(),
            packet: p,
            queue: q,
        })
    }

    /// Where the kernarg segment, packet and queue are.
    fn addresses(&self) -> InMemory {
        InMemory {
            kernarg: self.kernarg,
            packet: self.packet,
            queue: self.queue,
        }
    }

    fn release(self, arena: &Arena) {
        for a in [self.kernarg, self.packet, self.queue] {
            let _ = arena.free_by(a, "the end of the dispatch");
        }
    }
}

/// Whose workgroup-size limits a launch is held to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Enforce {
    /// The kernel's own (its metadata's maximum and required size), as
    /// language runtimes check them before launching.
    Kernel,
    /// The hardware's only: a GPU's packet processor never reads a
    /// kernel's metadata, so an AQL packet beyond the kernel's compiled
    /// maximum runs there (and may misbehave as the compiler's
    /// assumptions break), as it does here.
    Hardware,
}

fn check_launch(
    kernel: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
    group_segment_bytes: u32,
    enforce: Enforce,
) -> Result<(), DispatchError> {
    check_shape(kernel, grid, block)?;
    let threads = block.iter().map(|&b| b as u64).product::<u64>();
    let max = match enforce {
        Enforce::Kernel => kernel.meta.max_flat_workgroup_size.clamp(1, MAX_WORKGROUP),
        Enforce::Hardware => MAX_WORKGROUP,
    } as u64;
    let groups = (0..3).try_fold(1u64, |n, d| {
        n.checked_mul(grid[d].div_ceil(block[d]) as u64)
    });
    if groups.is_none() {
        return Err(bad_launch(
            kernel,
            LaunchRule::Shape,
            format!("grid {grid:?} of block {block:?} has more than 2^64 workgroups"),
        ));
    }
    if threads > max {
        return Err(bad_launch(
            kernel,
            LaunchRule::WorkgroupSize,
            format!("block {block:?} has {threads} work-items; this kernel allows at most {max}"),
        ));
    }
    if let Some(req) = kernel
        .meta
        .reqd_workgroup_size
        .filter(|_| enforce == Enforce::Kernel)
    {
        if req != block {
            return Err(bad_launch(
                kernel,
                LaunchRule::WorkgroupSize,
                format!(
                    "block {block:?} differs from the kernel's required workgroup size {req:?}"
                ),
            ));
        }
    }
    // A descriptor's static LDS counts even when the dispatch asks for less.
    let lds = group_segment_bytes.max(static_lds(kernel)) as u64;
    if lds > LDS_BYTES as u64 {
        return Err(bad_launch(
            kernel,
            LaunchRule::GroupSegment,
            format!("{lds} bytes of LDS requested; the device has {LDS_BYTES}"),
        ));
    }
    Ok(())
}

/// The AQL kernel dispatch packet a kernel finds behind its dispatch pointer.
fn packet(
    kernel: &Kernel,
    program: &Program,
    grid: [u32; 3],
    block: [u32; 3],
    scratch: u32,
    lds: u32,
    kernarg: u64,
) -> [u8; 64] {
    let header = crate::packet::Header {
        packet_type: crate::packet::packet_type::KERNEL_DISPATCH,
        ..Default::default()
    };
    crate::packet::KernelDispatchPacket {
        header: header.bits(),
        setup: crate::packet::dimensions(grid),
        private_segment_size: scratch,
        group_segment_size: lds,
        kernel_object: program.image_base + kernel.descriptor_offset,
        kernarg_address: kernarg,
        ..Default::default()
    }
    // The launch checks each dimension of the block fits in 16 bits.
    .with_shape(block, grid)
    .to_bytes()
}
