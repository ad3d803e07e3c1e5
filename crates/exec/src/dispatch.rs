//! Running one kernel dispatch: the AMDHSA launch ABI, the per-workgroup
//! wave scheduler, and the worker threads that run workgroups in parallel.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::abi::launch_abi;
use crate::fault::{Errors, Fault, WaveState};
use crate::gws::Gws;
use crate::hotspots::{Hotspots, SlotCount};
use crate::plan::Plan;
use crate::schedule::{Permutation, Rng};
use crate::tier::Tier;
use crate::watch::{Meter, Watch};
use softgpu_interp::checks::Schedule;
use softgpu_interp::ops::sopp::WorkgroupBarrier;
use softgpu_interp::ops::{Env, Flow, Trap};
use softgpu_interp::placement::group_id;
use softgpu_interp::program::Program;
use softgpu_interp::trap::FaultKind;
use softgpu_interp::wave::{Wave, MAX_LANES, PRIVATE_APERTURE};

/// Instructions a wave runs before the scheduler gives the next wave of its
/// workgroup a turn, so waves spinning on memory cannot starve the others.
pub(crate) const QUANTUM: u64 = 4096;

/// The most workgroups a dispatch using global wave sync may have: each
/// runs on its own host thread.
pub const MAX_GWS_GROUPS: u64 = 1024;

/// Counters of one dispatch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DispatchCounters {
    /// Instructions executed, counting each wave's once.
    pub wave_instructions: u64,
    /// Instructions executed, counting each active lane's once.
    pub lane_instructions: u64,
    /// Workgroups run.
    pub workgroups: u64,
    /// Work-items launched (grid × block).
    pub threads: u64,
    /// Waves run.
    pub waves: u64,
    /// Wall-clock seconds the dispatch ran.
    pub seconds: f64,
    /// Times a JIT block left for the interpreter to run its slots, at a
    /// memory access the wave-wide checks do not allow.
    pub jit_exits: u64,
}

impl Plan<'_> {
    fn entry(&self) -> Result<u32, Box<Fault>> {
        self.program
            .index_of_offset(self.kernel.entry_offset)
            .ok_or_else(|| {
                Box::new(Fault::setup(
                    &self.kernel.name,
                    format!(
                        "kernel entry {:#x} is not a decoded instruction",
                        self.kernel.entry_offset
                    ),
                ))
            })
    }
}

/// Runs the dispatch to completion or to its first fault (under
/// `Checks::contain`, past every error it can run past: see [`finish`]).
pub fn run(plan: &Plan) -> Result<(DispatchCounters, Errors), Box<Fault>> {
    run_counting::<false>(plan).map(|totals| (totals.stats, totals.found))
}

/// Runs the dispatch like [`run`], also counting every instruction's
/// executions and active lanes.
pub fn run_counting_slots(
    plan: &Plan,
) -> Result<((DispatchCounters, Hotspots), Errors), Box<Fault>> {
    let totals = run_counting::<true>(plan)?;
    let hotspots = Hotspots::new(plan.program, plan.lanes() as u32, totals.counts);
    Ok(((totals.stats, hotspots), totals.found))
}

/// What a dispatch returns: its counters alone, or with its
/// per-instruction [`Hotspots`], and the errors it ran past. Chosen by type, so callers share
/// one dispatch path and the plain dispatch still runs the hot loop
/// compiled without per-instruction counting.
pub(crate) trait Outcome: Sized {
    fn run(plan: &Plan) -> Result<(Self, Errors), Box<Fault>>;
}

impl Outcome for DispatchCounters {
    fn run(plan: &Plan) -> Result<(Self, Errors), Box<Fault>> {
        run(plan)
    }
}

impl Outcome for (DispatchCounters, Hotspots) {
    fn run(plan: &Plan) -> Result<(Self, Errors), Box<Fault>> {
        run_counting_slots(plan)
    }
}

/// The end of a dispatch: its fault, if one stopped it, carrying every
/// error it ran past; else, if it ran past a refused access, the first
/// such as its fault (the launch failed, as on a GPU), carrying the rest;
/// else the findings (initcheck, racecheck) of a launch that succeeded.
fn finish(fault: Option<Fault>, mut found: Errors) -> Result<Errors, Box<Fault>> {
    let primary = match fault {
        Some(f) => f,
        None => {
            let Some(at) = found
                .recorded
                .iter()
                .position(|f| f.kind == FaultKind::Memory)
            else {
                return Ok(found);
            };
            found.recorded.remove(at)
        }
    };
    Err(Box::new(Fault {
        others: found,
        ..primary
    }))
}

/// The counters of all workers together.
struct Totals {
    stats: DispatchCounters,
    /// Per instruction slot; empty unless counting hotspots.
    counts: Vec<SlotCount>,
    /// The errors the dispatch ran past (none unless `Checks::contain`).
    found: Errors,
}

impl Totals {
    fn absorb(&mut self, worker: &Worker) {
        self.stats.wave_instructions += worker.stats.wave_instructions;
        self.stats.lane_instructions += worker.stats.lane_instructions;
        self.stats.waves += worker.stats.waves;
        self.stats.jit_exits += worker.stats.jit_exits;
        for (total, own) in self.counts.iter_mut().zip(&worker.counts) {
            total.add(*own);
        }
    }
}

/// Runs the dispatch; with `HOTSPOTS` every worker also counts per
/// instruction slot (a separate instantiation of the hot loop, so a plain
/// dispatch pays nothing for it).
fn run_counting<const HOTSPOTS: bool>(plan: &Plan) -> Result<Totals, Box<Fault>> {
    let clock = Instant::now();
    let start = Start {
        entry: plan.entry()?,
        user_sgprs: user_sgprs(plan),
    };
    let total = plan.groups.iter().map(|&g| g as u64).product::<u64>();
    let next = AtomicU64::new(0);
    let watch = Watch::new(&plan.kernel.name, plan.budget, plan.timeout);
    let slots = if HOTSPOTS {
        plan.program.slots().len()
    } else {
        0
    };
    let totals = Mutex::new(Totals {
        stats: DispatchCounters::default(),
        counts: vec![SlotCount::default(); slots],
        found: Errors::default(),
    });
    let gws = Gws::new(&watch);
    let sanitize = softgpu_interp::sanitize::Dispatch::new(
        plan.checks,
        plan.groups,
        plan.block,
        plan.lanes() as u32,
    )
    .map_err(|e| Box::new(Fault::setup(&plan.kernel.name, e.to_string())))?;
    let wave64 = plan.lanes() == 64;
    let jit = plan.jit.dispatch_blocks(plan.program, start.entry, wave64);
    // A grid-wide barrier needs every workgroup running at once: one host
    // thread each (see `crate::gws`).
    let threads = if plan.program.uses_gws {
        if total > MAX_GWS_GROUPS {
            return Err(Box::new(Fault::setup(
                &plan.kernel.name,
                format!(
                    "the kernel uses global wave sync (a grid-wide barrier), so all {total} workgroups must run at once; softgpu runs at most {MAX_GWS_GROUPS}"
                ),
            )));
        }
        total as usize
    } else {
        plan.threads
    };
    let order = match plan.schedule {
        Schedule::InOrder => None,
        Schedule::Seeded(seed) => Some(Permutation::new(seed, total)),
    };
    // Workgroups are claimed a few at a time: a claim moves the counter's
    // cache line between threads, which one claim per workgroup made a
    // percent or two of a streaming kernel's time on two threads. Claims
    // stay small enough for the last ones to balance the threads, and are
    // single where every workgroup must be running at once (GWS).
    let batch = if plan.program.uses_gws {
        1
    } else {
        (total / (threads.max(1) as u64 * 32)).clamp(1, 8)
    };
    let work = || {
        let mut worker = Worker::take(slots);
        let mut meter = Meter::default();
        let mut jit = jit;
        // The worker's wave instructions already added to the unit's count.
        let mut counted = 0;
        let mut claimed = 0..0;
        loop {
            if claimed.is_empty() {
                let first = next.fetch_add(batch, Ordering::Relaxed);
                claimed = first..(first + batch).min(total);
            }
            // A claim past the last workgroup is empty.
            let Some(taken) = claimed.next() else { break };
            // Tiering up happens before a workgroup, never after the last
            // one, so no dispatch ends by waiting for a compile.
            let retired = worker.stats.wave_instructions - counted;
            if jit.is_none() && retired >= softgpu_interp::program::TIER_UP_STEP {
                counted = worker.stats.wave_instructions;
                jit = (plan.jit).tier_up(plan.program, start.entry, wave64, retired);
            }
            if watch.aborted() {
                break;
            }
            let index = order.as_ref().map_or(taken, |p| p.at(taken));
            let group = WorkGroup {
                id: group_id(plan.groups, index),
                index,
            };
            let shared = Shared {
                plan,
                start: &start,
                gws: &gws,
                watch: &watch,
                sanitize: sanitize.as_ref(),
                jit,
            };
            if let Err(halt) = worker.run_workgroup::<HOTSPOTS>(&shared, group, &mut meter) {
                if let Halt::Fault(f) = halt {
                    watch.fail(*f);
                }
                break;
            }
        }
        if jit.is_none() {
            // Counted for the next dispatch of the kernel, which compiles
            // it before its first workgroup once the count is reached.
            let retired = worker.stats.wave_instructions - counted;
            plan.program.count_interpreted(start.entry, wave64, retired);
        }
        totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .absorb(&worker);
        worker.keep();
    };
    // The calling thread is one of the workers; persistent helpers are
    // the others.
    let threads = threads.clamp(1, total.max(1) as usize);
    crate::pool::run(&work, threads - 1);
    let (fault, found) = watch.into_fault();
    let mut totals = totals.into_inner().unwrap_or_else(|e| e.into_inner());
    totals.found = finish(fault, found)?;
    let stats = &mut totals.stats;
    stats.workgroups = total;
    stats.threads = total * plan.block.iter().map(|&b| b as u64).product::<u64>();
    stats.seconds = clock.elapsed().as_secs_f64();
    Ok(totals)
}

/// A workgroup: its id, and its linear index in the grid.
#[derive(Clone, Copy)]
struct WorkGroup {
    id: [u32; 3],
    index: u64,
}

/// What all workers of the dispatch share.
struct Shared<'a> {
    plan: &'a Plan<'a>,
    start: &'a Start,
    gws: &'a Gws<'a>,
    watch: &'a Watch<'a>,
    /// The memory sanitizers' dispatch state, when one is on.
    sanitize: Option<&'a softgpu_interp::sanitize::Dispatch>,
    jit: Option<Tier<'a>>,
}

/// Why a worker left a workgroup unfinished.
enum Halt {
    /// It faulted.
    Fault(Box<Fault>),
    /// The dispatch is being stopped (a fault elsewhere, the budget, the
    /// deadline), already recorded in the watch.
    Stopped,
}

/// What every wave of the dispatch starts with.
struct Start {
    /// Slot index of the kernel's first instruction.
    entry: u32,
    user_sgprs: Vec<u32>,
}

/// A worker thread's reusable state.
struct Worker {
    waves: Vec<Wave>,
    lds: Vec<u8>,
    tmp: Box<softgpu_interp::ops::Scratch>,
    /// LDS shadow of the memory sanitizers (empty unless one ran).
    shadow: softgpu_interp::sanitize::LdsShadow,
    stats: DispatchCounters,
    /// Per instruction slot when counting hotspots, else empty.
    counts: Vec<SlotCount>,
    /// The work-item IDs of the last workgroup shape this worker set up.
    ids: WorkItemIds,
}

/// VGPR0's packed work-item IDs and the present lanes of each wave of one
/// workgroup shape. Every full workgroup of a dispatch has the same, so
/// they are computed once (three divisions per lane) and copied per wave.
#[derive(Default)]
struct WorkItemIds {
    key: Option<IdsKey>,
    waves: Vec<(WaveIds, u64)>,
}

/// What a workgroup's ID registers depend on: the block, the part of it
/// present, the wave size, the descriptor's `enable_vgpr_workitem_id` and
/// whether the IDs are packed.
#[derive(Clone, Copy, PartialEq, Eq)]
struct IdsKey {
    block: [u32; 3],
    dims: [u32; 3],
    lanes: usize,
    axes: u8,
    packed: bool,
}

/// The VGPRs a wave starts with its work-item IDs in: `regs[..count]` go
/// to v0, v1, v2.
struct WaveIds {
    regs: [[u32; MAX_LANES]; 3],
    count: usize,
}

impl WorkItemIds {
    /// Each wave's ID registers and live lanes: the axes
    /// `enable_vgpr_workitem_id` enables (x; x and y; x, y and z), packed
    /// into v0 (10 bits each) or one VGPR each, as the launch ABI says.
    fn get(
        &mut self,
        block: [u32; 3],
        dims: [u32; 3],
        lanes: usize,
        axes: u8,
        packed: bool,
    ) -> &[(WaveIds, u64)] {
        let key = Some(IdsKey {
            block,
            dims,
            lanes,
            axes,
            packed,
        });
        if self.key != key {
            self.key = key;
            self.waves.clear();
            let [bx, by, bz] = block;
            let threads = (bx * by * bz) as usize;
            let count = if packed { 1 } else { 1 + axes.min(2) as usize };
            for id in 0..threads.div_ceil(lanes) {
                let mut ids = WaveIds {
                    regs: [[0u32; MAX_LANES]; 3],
                    count,
                };
                let mut live = 0u64;
                for l in 0..lanes {
                    let t = id * lanes + l;
                    let (x, y, z) = (t as u32 % bx, (t as u32 / bx) % by, t as u32 / (bx * by));
                    let present = t < threads && x < dims[0] && y < dims[1] && z < dims[2];
                    live |= (present as u64) << l;
                    let (y, z) = ((axes >= 1) as u32 * y, (axes >= 2) as u32 * z);
                    if packed {
                        ids.regs[0][l] = x | y << 10 | z << 20;
                    } else {
                        [ids.regs[0][l], ids.regs[1][l], ids.regs[2][l]] = [x, y, z];
                    }
                }
                self.waves.push((ids, live));
            }
        }
        &self.waves
    }
}

pub(crate) enum Stop {
    Barrier,
    Yield,
    End,
}

thread_local! {
    /// The worker state this thread used last, kept for its next dispatch:
    /// a wave's registers are 64 KiB, and allocating and clearing them anew
    /// was most of the cost of a small dispatch. (Waves are set up afresh
    /// for every workgroup anyway, as they are within a dispatch.)
    static SPARE_WORKER: std::cell::Cell<Option<Box<Worker>>> = const { std::cell::Cell::new(None) };
}

/// Scratch a kept worker may hold on to per wave; more is freed.
const KEEP_SCRATCH_BYTES: usize = 1 << 20;

impl Worker {
    /// A worker counting executions of `slots` instruction slots (0 when
    /// not counting hotspots): this thread's kept one, or a new one.
    fn take(slots: usize) -> Box<Worker> {
        let mut worker = SPARE_WORKER.take().unwrap_or_else(|| {
            Box::new(Worker {
                waves: Vec::new(),
                lds: Vec::new(),
                tmp: Box::default(),
                shadow: Default::default(),
                stats: DispatchCounters::default(),
                counts: Vec::new(),
                ids: WorkItemIds::default(),
            })
        });
        worker.stats = DispatchCounters::default();
        worker.counts.clear();
        worker.counts.resize(slots, SlotCount::default());
        worker
    }

    /// Keeps this worker for the thread's next dispatch.
    fn keep(mut self: Box<Self>) {
        for wave in &mut self.waves {
            wave.scratch.trim(KEEP_SCRATCH_BYTES);
        }
        SPARE_WORKER.set(Some(self));
    }

    /// Runs one workgroup to its end; on a halt, records its waves that
    /// were still in flight for the report.
    fn run_workgroup<const HOTSPOTS: bool>(
        &mut self,
        shared: &Shared,
        group: WorkGroup,
        meter: &mut Meter,
    ) -> Result<(), Halt> {
        let plan = shared.plan;
        let unit = plan.units.hw_id(group.index);
        let n_waves = self.setup_waves(plan, shared.start, group.id, unit);
        self.stats.waves += n_waves as u64;
        self.lds.clear();
        self.lds.resize(plan.lds_bytes, 0);
        let mut turns = Turns::<HOTSPOTS> {
            plan,
            group: group.id,
            env: Env {
                mem: softgpu_arena::Memory::new(plan.arena, plan.epoch),
                lds: &mut self.lds,
                code: plan.program.code(),
                tmp: &mut self.tmp,
                gws: shared.gws,
                barrier: WorkgroupBarrier {
                    signals: 0,
                    members: n_waves as u32,
                },
                sanitizer: shared.sanitize.map(|s| {
                    s.workgroup(
                        &mut self.shadow,
                        plan.arena,
                        plan.lds_bytes,
                        plan.groups,
                        group.id,
                    )
                }),
                contained: softgpu_interp::trap::Contained::new(plan.checks.contain),
            },
            jit: shared.jit,
            stats: &mut self.stats,
            counts: &mut self.counts,
            watch: shared.watch,
            meter,
        };
        let waves = &mut self.waves[..n_waves];
        let result = match plan.schedule {
            Schedule::InOrder => turns.round_robin(waves),
            Schedule::Seeded(seed) => turns.seeded(waves, Rng::for_group(seed, group.index)),
        };
        if result.is_err() {
            let in_flight = waves.iter().filter(|w| !w.ended);
            shared
                .watch
                .in_flight(in_flight.map(|w| WaveState::of(plan, group.id, w)));
        }
        result
    }

    /// Initialises the workgroup's waves as the AMDHSA ABI specifies.
    /// Sets up the waves of workgroup `group`, placed on the compute unit
    /// whose `HW_ID1` is `unit`; returns how many there are.
    fn setup_waves(&mut self, plan: &Plan, start: &Start, group: [u32; 3], unit: u32) -> usize {
        let lanes = plan.lanes();
        // Work-items of a partial workgroup at the grid's edge are absent.
        let dims: [u32; 3] =
            std::array::from_fn(|d| plan.block[d].min(plan.grid[d] - group[d] * plan.block[d]));
        let d = &plan.kernel.descriptor;
        let abi = launch_abi(plan.program.family);
        let ids = self.ids.get(
            plan.block,
            dims,
            lanes,
            d.enable_vgpr_workitem_id,
            abi.packed_ids,
        );
        let n_waves = ids.len();
        let family = plan.program.family;
        // A worker's waves hold the family's register file (CDNA's 512
        // registers a lane, RDNA's 256).
        let vgprs = softgpu_interp::wave::vgprs_of(family);
        self.waves.retain(|w| w.vgpr.len() == vgprs);
        while self.waves.len() < n_waves {
            self.waves.push(Wave::for_family(family));
        }
        for (id, (wave, (first, live))) in self.waves.iter_mut().zip(ids).enumerate() {
            wave.lanes = lanes;
            wave.id = id as u32;
            // A CU's two SIMDs take its waves in turn.
            wave.hw_id = unit | (id as u32 & 1) << softgpu_interp::placement::SIMD_SHIFT;
            wave.pc = start.entry;
            wave.ended = false;
            wave.at_barrier = false;
            wave.scc = false;
            wave.retired = 0;
            wave.sgpr.fill(0);
            wave.hwreg.fill(0);
            wave.mode.bits = abi.mode_bits(d);
            // Every wave starts from zeroed private memory (hardware leaves
            // whatever was there; zeros make runs repeatable).
            wave.scratch.reset(
                plan.scratch_lane_bytes,
                lanes,
                plan.checks.init,
                Some(&plan.scratch_budget),
            );
            wave.vgpr[..first.count].copy_from_slice(&first.regs[..first.count]);
            wave.live_lanes = *live;
            wave.set_exec(*live);
            load_sgprs(wave, plan, &start.user_sgprs, group);
            for (reg, value) in abi.trap_temporaries(group, id as u32) {
                wave.sgpr[reg] = value;
            }
        }
        n_waves
    }
}

/// One workgroup's waves taking turns on a worker.
struct Turns<'a, 'e, const HOTSPOTS: bool> {
    plan: &'a Plan<'a>,
    group: [u32; 3],
    env: Env<'e>,
    /// The program's compiled blocks for this wave size, if the JIT is on.
    jit: Option<Tier<'a>>,
    stats: &'e mut DispatchCounters,
    counts: &'e mut [SlotCount],
    watch: &'a Watch<'a>,
    meter: &'e mut Meter,
}

impl<const HOTSPOTS: bool> Turns<'_, '_, HOTSPOTS> {
    /// The in-order schedule: every ready wave a full quantum in turn, the
    /// barrier released once every live wave waits at it.
    fn round_robin(&mut self, waves: &mut [Wave]) -> Result<(), Halt> {
        loop {
            let mut live = 0;
            let mut waiting = 0;
            for w in 0..waves.len() {
                if waves[w].ended {
                    continue;
                }
                if !waves[w].at_barrier {
                    self.turn(waves, w, QUANTUM)?;
                }
                if !waves[w].ended {
                    live += 1;
                    waiting += waves[w].at_barrier as usize;
                }
            }
            if live == 0 {
                return Ok(());
            }
            if waiting == live {
                self.release(waves)?;
            }
        }
    }

    /// A seeded schedule: the next wave and the length of its turn drawn
    /// from `rng`.
    fn seeded(&mut self, waves: &mut [Wave], mut rng: Rng) -> Result<(), Halt> {
        let ready = |w: &Wave| !w.ended && !w.at_barrier;
        loop {
            let n_ready = waves.iter().filter(|w| ready(w)).count();
            if n_ready == 0 {
                if waves.iter().all(|w| w.ended) {
                    return Ok(());
                }
                self.release(waves)?;
                continue;
            }
            let pick = rng.below(n_ready as u64) as usize;
            let Some(w) = (0..waves.len()).filter(|&w| ready(&waves[w])).nth(pick) else {
                return Ok(());
            };
            let len = rng.turn(QUANTUM);
            self.turn(waves, w, len)?;
        }
    }

    /// Runs wave `w` for up to `len` instructions and notes where it
    /// stopped.
    fn turn(&mut self, waves: &mut [Wave], w: usize, len: u64) -> Result<(), Halt> {
        let wave = &mut waves[w];
        let before = self.stats.wave_instructions;
        let ran = run_wave::<HOTSPOTS>(
            self.plan.program,
            wave,
            &mut self.env,
            self.jit,
            len,
            self.stats,
            self.counts,
        );
        self.take_contained(wave);
        let stop = ran.map_err(|trap| {
            Halt::Fault(Box::new(Fault::from_trap(
                self.plan, self.group, wave, wave.pc, trap,
            )))
        })?;
        let ran = self.stats.wave_instructions - before;
        let sync = self.plan.checks.sync;
        match stop {
            Stop::Barrier => {
                wave.at_barrier = true;
                if sync {
                    crate::synccheck::arrived(self.plan, self.group, waves, w)
                        .map_err(Halt::Fault)?;
                }
            }
            Stop::End => {
                self.env.barrier.members -= 1;
                if sync {
                    crate::synccheck::ended(self.plan, self.group, waves, w).map_err(Halt::Fault)?
                }
            }
            Stop::Yield => {}
        }
        self.watch.tick(self.meter, ran).map_err(|()| Halt::Stopped)
    }

    /// Hands the errors `wave` ran past in its turn to the watch.
    fn take_contained(&mut self, wave: &Wave) {
        let own = &mut self.env.contained.found;
        let sanitizer = self.env.sanitizer.as_mut().map(|s| &mut s.contained.found);
        let sanitizer = sanitizer.filter(|found| !found.is_empty());
        if own.is_empty() && sanitizer.is_none() {
            return;
        }
        for (pc, trap) in own
            .drain(..)
            .chain(sanitizer.into_iter().flat_map(|f| f.drain(..)))
        {
            self.watch.contained(self.plan, self.group, wave, pc, trap);
        }
    }

    /// Releases the waves waiting at the barrier (all live ones).
    fn release(&mut self, waves: &mut [Wave]) -> Result<(), Halt> {
        if self.plan.checks.sync {
            crate::synccheck::released(self.plan, self.group, waves).map_err(Halt::Fault)?;
        }
        waves.iter_mut().for_each(|w| w.at_barrier = false);
        self.env.barrier.signals = 0;
        // The sanitizers start a new barrier interval exactly here.
        if let Some(s) = self.env.sanitizer.as_mut() {
            s.barrier();
        }
        Ok(())
    }
}

/// The user SGPRs in ABI order, as the kernel descriptor enables them. They
/// are the same for every wave of a dispatch, so they are built once.
fn user_sgprs(plan: &Plan) -> Vec<u32> {
    let d = &plan.kernel.descriptor;
    let mut user: Vec<u32> = Vec::with_capacity(16);
    if d.enable_sgpr_private_segment_buffer {
        let abi = launch_abi(plan.program.family);
        user.extend(abi.private_segment_buffer(plan.lanes(), plan.scratch_lane_bytes as u32));
    }
    let mut push64 = |v: u64| user.extend([v as u32, (v >> 32) as u32]);
    if d.enable_sgpr_dispatch_ptr {
        push64(plan.dispatch_packet);
    }
    if d.enable_sgpr_queue_ptr {
        push64(plan.queue);
    }
    if d.enable_sgpr_kernarg_segment_ptr {
        push64(plan.kernarg);
    }
    if d.enable_sgpr_dispatch_id {
        push64(plan.dispatch_id);
    }
    if d.enable_sgpr_flat_scratch_init {
        push64(PRIVATE_APERTURE);
    }
    if d.enable_sgpr_private_segment_size {
        user.push(plan.scratch_lane_bytes as u32);
    }
    user
}

/// Loads the user SGPRs, then the system SGPRs from `user_sgpr_count` on,
/// as the family's launch ABI places them.
fn load_sgprs(wave: &mut Wave, plan: &Plan, user: &[u32], group: [u32; 3]) {
    let d = &plan.kernel.descriptor;
    let n = user.len().min(wave.sgpr.len());
    wave.sgpr[..n].copy_from_slice(&user[..n]);
    let first = (d.user_sgpr_count as usize).max(n);
    let system = launch_abi(plan.program.family).system_sgprs(d, group);
    for (s, v) in (first..106).zip(system) {
        wave.sgpr[s] = v;
    }
}

/// Runs one wave until it ends, reaches a barrier, yields, or has run
/// `turn` instructions. The hot loop of the executor; with `HOTSPOTS` it
/// also counts each instruction it runs in `counts` (indexed by slot).
/// Profiles `n` slots from `first` as run once by `active` lanes (hints
/// stepped over, or a JIT block's slots).
fn count_slots(counts: &mut [SlotCount], first: usize, n: usize, active: u64) {
    for count in counts.iter_mut().skip(first).take(n) {
        count.add(SlotCount {
            waves: 1,
            lanes: active,
        });
    }
}

pub(crate) fn run_wave<const HOTSPOTS: bool>(
    program: &Program,
    wave: &mut Wave,
    env: &mut Env,
    jit: Option<Tier>,
    turn: u64,
    stats: &mut DispatchCounters,
    counts: &mut [SlotCount],
) -> Result<Stop, Trap> {
    // Counters live in registers during the turn and are added once.
    let mut retired = 0u64;
    let mut lanes = 0u64;
    // This thread's ranges, made once for the run (`Ranges::of_thread`).
    let jit = jit.map(|tier| (tier, crate::tier::Ranges::of_thread(&env.mem)));
    let stop = loop {
        if retired >= turn {
            break Stop::Yield;
        }
        if let Some(((block, verify), ranges)) = jit
            .as_ref()
            .and_then(|(t, r)| Some((t.block_at(wave.pc)?, r)))
        {
            // A compiled block retires all its slots, all but a closing
            // store it leaves to the interpreter, or none.
            if retired + block.slots() as u64 <= turn
                && block.runs_under(wave.mode.bits)
                && block.runs_in(env)
            {
                // EXEC is fixed inside a block.
                let active = wave.exec().count_ones() as u64;
                let start = wave.pc;
                let next = if verify {
                    crate::tier::verify(block, program, wave, env)?
                } else {
                    block.run(wave, env.lds, &env.mem, ranges)
                };
                // A block that left early changed nothing, and one that
                // left its closing store ran all but that slot: either
                // way the interpreter goes on from `wave.pc`.
                if let Some((next, ran)) = next {
                    if HOTSPOTS {
                        count_slots(counts, start as usize, ran as usize, active);
                    }
                    lanes += active * ran as u64;
                    retired += ran as u64;
                    wave.pc = next;
                    if ran == block.slots() {
                        continue;
                    }
                    // The store it left is interpreted below, without
                    // looking for a block there.
                }
                stats.jit_exits += 1;
            }
        }
        let slot = program.slot_at(wave.pc);
        let active = wave.exec().count_ones() as u64;
        if HOTSPOTS {
            if let Some(count) = counts.get_mut(wave.pc as usize) {
                count.add(SlotCount {
                    waves: 1,
                    lanes: active,
                });
            }
        }
        lanes += active;
        retired += 1;
        match (slot.exec)(wave, env, &slot.inst)? {
            Flow::Next if slot.hints_after == 0 => wave.pc += 1,
            Flow::Next => {
                // Step over the hints folded into this slot, as many as the
                // turn has room for, so budgets and hotspot counts stay exact.
                let folded = (slot.hints_after as u64).min(turn - retired);
                let active = wave.exec().count_ones() as u64;
                if HOTSPOTS {
                    count_slots(counts, wave.pc as usize + 1, folded as usize, active);
                }
                lanes += active * folded;
                retired += folded;
                wave.pc += 1 + folded as u32;
            }
            Flow::Branch(simm) => {
                wave.pc = program.branch_target(wave.pc, simm).ok_or_else(|| {
                    Trap::BadJump(
                        program
                            .address_after(wave.pc)
                            .wrapping_add((simm as i64 * 4) as u64),
                    )
                })?
            }
            Flow::Jump(addr) => {
                wave.pc = program.index_of_address(addr).ok_or(Trap::BadJump(addr))?
            }
            Flow::Barrier => {
                wave.pc += 1;
                break Stop::Barrier;
            }
            Flow::Yield => {
                wave.pc += 1;
                break Stop::Yield;
            }
            Flow::End => break Stop::End,
        }
    };
    wave.retired += retired;
    stats.wave_instructions += retired;
    stats.lane_instructions += lanes;
    Ok(stop)
}
