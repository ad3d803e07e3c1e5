//! User-mode AQL queues and their packet processors.
//!
//! A queue's ring of 64-byte packets and its `hsa_queue_t` live in device
//! memory, so the client writes packets through plain pointers and a kernel
//! finds the queue behind its queue pointer. Each queue has a processor
//! thread that sleeps on the doorbell signal, consumes packets strictly in
//! order (so the barrier bit holds trivially), runs kernel dispatches on the
//! executor and only then decrements their completion signals.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{fence, AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::json;
/// What a kernel fault reported through [`QueueError::KernelFault`] was.
pub use softgpu_exec::FaultKind;
use softgpu_exec::{ComputeUnits, DispatchDesc, DispatchError, DispatchOutcome, RawDispatch};

use softgpu_exec::arena::{Access, AllocSpec};

use crate::agent::Agent;
use crate::cu_mask::{Applied, Mask};
use crate::error::{Error, Result};
use crate::estimate;
use crate::executable::KernelRef;
use crate::occupancy::{occupancy, KernelResources};
use crate::packet::{
    completion_signal_of, BarrierPacket, Header, HostOpPacket, KernelDispatchPacket,
    QueueDescriptor,
};
use crate::runtime::Runtime;
use crate::signal::{Condition, Order, Signal, WaitHint};
use crate::statistics::DispatchStatistics;
use crate::trace::now_ns;

pub use crate::packet::packet_type;

/// Bytes of one AQL packet.
pub const PACKET_BYTES: u64 = crate::packet::PACKET_BYTES as u64;
/// Bytes reserved for the `hsa_queue_t` (and room for AMD's extensions).
const QUEUE_STRUCT_BYTES: u64 = 256;
/// How long a sleeping processor waits before re-checking the ring, for
/// clients that publish a packet without ringing the doorbell.
const IDLE_RECHECK: Duration = Duration::from_millis(20);

/// Which packet check a refused AQL packet failed. A GPU's command
/// processor raises a distinct queue exception for each, and HSA runtimes
/// report each with its own status (ROCr: `AqlQueue::ExceptionHandler`
/// and `DynamicQueueEventsHandler` in `amd_aql_queue.cpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketRule {
    /// Not a packet type or vendor format the processor runs, or its ring
    /// slot cannot be read.
    Format,
    /// The dimension count is not 1 to 3, a used size is zero, an unused
    /// one is not 1, or the grid is too large.
    Dimensions,
    /// A workgroup larger than the kernel allows, or not its required size.
    WorkgroupSize,
    /// More group segment (LDS) than a workgroup can have.
    GroupSegment,
    /// The kernel object is not a kernel of a frozen executable (0, say).
    CodeObject,
    /// More private segment (scratch) per work-item than the hardware has.
    PrivateSegment,
    /// The kernarg segment is missing, short or not readable.
    Kernarg,
    /// The queue's CU mask leaves no compute unit to run on.
    ComputeUnits,
    /// A completion or dependency signal handle is not a live signal.
    Signal,
}

impl From<softgpu_exec::LaunchRule> for PacketRule {
    fn from(rule: softgpu_exec::LaunchRule) -> Self {
        use softgpu_exec::LaunchRule as L;
        match rule {
            L::Shape => PacketRule::Dimensions,
            L::WorkgroupSize => PacketRule::WorkgroupSize,
            L::GroupSegment => PacketRule::GroupSegment,
            L::PrivateSegment => PacketRule::PrivateSegment,
            L::Kernarg => PacketRule::Kernarg,
            L::ComputeUnits => PacketRule::ComputeUnits,
            L::CodeObject => PacketRule::CodeObject,
        }
    }
}

/// Why a queue stopped.
#[derive(Debug, Clone)]
pub enum QueueError {
    /// A packet the processor cannot accept: the check it failed, and a
    /// message saying how.
    InvalidPacket(PacketRule, String),
    /// The packet at `index` could not be read from the ring (the arena
    /// refused; rule [`PacketRule::Format`]).
    UnreadablePacket {
        index: u64,
        source: softgpu_exec::arena::MemError,
    },
    /// The executor's checks refused the kernel dispatch packet at
    /// `index` (its launch shape or segments): the rule it broke, and the
    /// executor's error.
    LaunchRefused {
        index: u64,
        rule: PacketRule,
        source: Arc<softgpu_exec::DispatchError>,
    },
    /// A dispatched kernel faulted; the executor's report.
    KernelFault(Box<softgpu_exec::Fault>),
    /// The executor refused or could not run the dispatch (bad launch
    /// shape, memory); its error.
    DispatchFailed(Arc<softgpu_exec::DispatchError>),
    /// The queue's agent has no executor device (the runtime's error).
    NoDevice(Arc<crate::Error>),
    /// A host operation (a copy, fill or host function of a client)
    /// returned an error.
    HostOpFailed(HostOpError),
    /// The queue's own machinery failed: a packet's processing or a
    /// dispatch thread panicked (the panic's message).
    Internal(String),
    /// A thread for a concurrent dispatch could not be started.
    Spawn(Arc<std::io::Error>),
    /// A barrier's dependency signal went negative: the work it waited
    /// for (on another queue) failed. The signal's value.
    DependencyFailed { value: i64 },
}

impl std::fmt::Display for QueueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueueError::InvalidPacket(_, m) => write!(f, "invalid packet: {m}"),
            QueueError::UnreadablePacket { index, source } => {
                write!(f, "invalid packet: packet {index}: {source}")
            }
            QueueError::LaunchRefused { index, source, .. } => {
                write!(f, "invalid packet: packet {index}: {source}")
            }
            QueueError::KernelFault(r) => write!(f, "{r}"),
            QueueError::DispatchFailed(e) => write!(f, "dispatch failed: {e}"),
            QueueError::NoDevice(e) => write!(f, "dispatch failed: {e}"),
            QueueError::HostOpFailed(e) => write!(f, "host operation failed: {e}"),
            QueueError::Internal(m) => write!(f, "internal error: {m}"),
            QueueError::Spawn(e) => write!(f, "internal error: dispatch thread: {e}"),
            QueueError::DependencyFailed { value } => write!(
                f,
                "a barrier's dependency signal is {value}: the work it waits for failed"
            ),
        }
    }
}

impl std::error::Error for QueueError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            QueueError::UnreadablePacket { source, .. } => Some(source),
            QueueError::LaunchRefused { source, .. } => Some(&**source),
            QueueError::DispatchFailed(e) => Some(&**e),
            QueueError::NoDevice(e) => Some(&**e),
            QueueError::Spawn(e) => Some(&**e),
            QueueError::HostOpFailed(e) => Some(e),
            _ => None,
        }
    }
}

/// Called on the processor thread when the queue stops on an error.
pub type ErrorCallback = Box<dyn Fn(&QueueError) + Send + Sync>;

/// What a client asks for in `hsa_queue_create`.
pub struct QueueSpec {
    /// Ring size in packets (a power of two within the profile's limits).
    pub size: u32,
    /// Single-producer (true) or multi-producer.
    pub single: bool,
    pub on_error: Option<ErrorCallback>,
}

/// One AQL queue.
pub struct Queue {
    /// Device address of the `hsa_queue_t`.
    pub address: u64,
    /// Device address of the packet ring.
    pub ring: u64,
    pub size: u32,
    pub id: u64,
    pub agent: Arc<Agent>,
    pub doorbell: Arc<Signal>,
    pub doorbell_handle: u64,
    pub read_index: AtomicU64,
    pub write_index: AtomicU64,
    /// The compute units the queue's dispatches run on: its CU mask and
    /// the executor's placement of it.
    cu_mask: Mutex<(Mask, ComputeUnits)>,
    /// The process-wide mask of its agent (`HSA_CU_MASK`; empty: none).
    global_cu_mask: Mask,
    /// Priority set by `hsa_amd_queue_set_priority` (recorded).
    pub priority: AtomicU64,
    running: AtomicBool,
    /// Set once the queue stopped on an error.
    pub failed: Mutex<Option<QueueError>>,
    on_error: Option<ErrorCallback>,
    /// The runtime's check report prints kernel faults already.
    faults_reported: bool,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// (packet index rung, arena serial then), oldest first: when each
    /// packet was submitted, so a dispatch that runs after memory it could
    /// point to was freed and reallocated is caught as stale.
    submitted: Mutex<VecDeque<(u64, u32)>>,
}

/// Doorbell rings remembered per queue (older ones are forgotten; their
/// packets then count as submitted when they run).
const SUBMISSIONS_KEPT: usize = 4096;

static QUEUE_IDS: AtomicU64 = AtomicU64::new(0);

impl Runtime {
    /// Creates a queue on a GPU agent and starts its processor.
    ///
    /// The per-agent limit is checked and the queue inserted under one
    /// hold of the queue table's lock, so threads creating queues at once
    /// cannot all pass the check and exceed the limit together. Whatever
    /// a failed creation acquired (ring, descriptor, doorbell) is released.
    pub fn create_queue(self: &Arc<Self>, agent: u64, spec: QueueSpec) -> Result<Arc<Queue>> {
        let agent = self.agent(agent)?;
        agent
            .device()
            .map_err(|_| Error::InvalidQueueCreation("only GPU agents have queues".into()))?;
        let limits = &agent.profile.queues;
        if !spec.size.is_power_of_two()
            || spec.size < limits.min_size
            || spec.size > limits.max_size
        {
            return Err(Error::InvalidArgument(format!(
                "queue size {} must be a power of two from {} to {}",
                spec.size, limits.min_size, limits.max_size
            )));
        }
        // Held until the queue is in the table. Creating a queue is rare
        // and takes no lock that a holder of this one waits for, so
        // serialising creations costs little and makes the limit exact.
        let mut live = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let on_agent = live
            .values()
            .filter(|q| q.agent.index == agent.index)
            .count();
        if on_agent >= limits.max_queues as usize {
            return Err(Error::OutOfResources(format!(
                "agent already has {on_agent} queues (profile limit)"
            )));
        }
        let queue = self.build_queue(agent, spec)?;
        live.insert(queue.address, queue.clone());
        Ok(queue)
    }

    /// Allocates a queue's ring and descriptor, makes its doorbell and
    /// starts its processor; on an error, releases what it had acquired.
    fn build_queue(self: &Arc<Self>, agent: Arc<Agent>, spec: QueueSpec) -> Result<Arc<Queue>> {
        let mut acquired = Acquired::new(self);
        let ring_bytes = spec.size as u64 * PACKET_BYTES;
        // Kernels may read the ring and the descriptor (the dispatch and
        // queue pointers lead there), never write them.
        let ring = acquired.block(ring_bytes, "an AQL queue's packet ring")?;
        let address = acquired.block(QUEUE_STRUCT_BYTES, "an hsa_queue_t")?;
        // Every slot starts INVALID so the processor waits for real packets.
        for k in 0..spec.size as u64 {
            let invalid = (packet_type::INVALID as u16).to_le_bytes();
            self.arena.write(ring + k * PACKET_BYTES, &invalid)?;
        }
        let topology = agent.profile.topology();
        let global_cu_mask = self
            .cu_masks
            .get(&(agent.index as u32 - 1))
            .cloned()
            .unwrap_or_default();
        // As ROCr's queue constructor: every unit, within the process-wide
        // mask unless HSA_CU_MASK_SKIP_INIT says not yet. A process-wide
        // mask splitting a WGP's pair applies all the same (ROCr's
        // constructor ignores that status too), so no pair rule here.
        let initial_limit = if self.cu_mask_skip_init {
            &[][..]
        } else {
            &global_cu_mask
        };
        let first_mask =
            crate::cu_mask::apply_unchecked(None, initial_limit, topology.compute_units).0;
        let doorbell = Arc::new(Signal::new(-1));
        let doorbell_handle = acquired.signal(doorbell.clone());
        let id = QUEUE_IDS.fetch_add(1, Ordering::Relaxed);
        let descriptor = QueueDescriptor {
            queue_type: spec.single as u32,
            features: 1, // HSA_QUEUE_FEATURE_KERNEL_DISPATCH
            base_address: ring,
            doorbell_signal: doorbell_handle,
            size: spec.size,
            reserved1: 0,
            id,
        };
        self.arena.write(address, &descriptor.to_bytes())?;
        let queue = Arc::new(Queue {
            address,
            ring,
            size: spec.size,
            id,
            agent,
            doorbell,
            doorbell_handle,
            read_index: AtomicU64::new(0),
            write_index: AtomicU64::new(0),
            cu_mask: Mutex::new((first_mask.clone(), topology.units(&first_mask))),
            global_cu_mask,
            priority: AtomicU64::new(0),
            running: AtomicBool::new(true),
            failed: Mutex::new(None),
            on_error: spec.on_error,
            faults_reported: self.reporter.is_on(),
            thread: Mutex::new(None),
            submitted: Mutex::new(VecDeque::new()),
        });
        let (weak_queue, arena) = (Arc::downgrade(&queue), self.arena.clone());
        queue.doorbell.set_on_store(Box::new(move |index| {
            if let (Some(q), Ok(index)) = (weak_queue.upgrade(), u64::try_from(index)) {
                q.note_submission(index, arena.serial());
            }
        }));
        let weak_rt = Arc::downgrade(self);
        let q = queue.clone();
        let handle = std::thread::Builder::new()
            .name(format!("softgpu-queue-{id}"))
            .spawn(move || process(weak_rt, q))
            .map_err(|source| Error::Spawn {
                thread: format!("queue {id}'s packet processor"),
                source,
            })?;
        *queue.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
        // The processor runs: from here `destroy_queue` releases it all.
        acquired.keep();
        Ok(queue)
    }

    /// The queue whose `hsa_queue_t` is at `address`.
    pub fn queue(&self, address: u64) -> Result<Arc<Queue>> {
        let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        queues.get(&address).cloned().ok_or(Error::InvalidHandle {
            kind: "queue",
            handle: address,
        })
    }

    /// Stops a queue's processor (after the packet it is running) and
    /// frees its memory.
    pub fn destroy_queue(&self, address: u64) -> Result<()> {
        let queue = {
            let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            queues.remove(&address).ok_or(Error::InvalidHandle {
                kind: "queue",
                handle: address,
            })?
        };
        queue.stop();
        let _ = self.signals.remove(queue.doorbell_handle);
        let _ = self.arena.free_by(queue.ring, "hsa_queue_destroy");
        let _ = self.arena.free_by(queue.address, "hsa_queue_destroy");
        Ok(())
    }
}

/// What a queue under construction holds so far. Dropped before
/// [`Acquired::keep`] (an early return on an error), it frees the arena
/// blocks and removes the doorbell signal, so a failed creation leaves
/// nothing behind.
struct Acquired<'a> {
    rt: &'a Runtime,
    blocks: Vec<u64>,
    signal: Option<u64>,
}

impl<'a> Acquired<'a> {
    fn new(rt: &'a Runtime) -> Acquired<'a> {
        Acquired {
            rt,
            blocks: Vec::new(),
            signal: None,
        }
    }

    /// Allocates `len` bytes kernels may read but not write, freed on an
    /// error.
    fn block(&mut self, len: u64, what: &'static str) -> Result<u64> {
        let spec = AllocSpec::internal(len, what, Access::ReadOnly);
        let at = self
            .rt
            .arena
            .alloc_with(spec)
            .map_err(|source| Error::OutOfMemory {
                what: format!("the queue's {what}"),
                source,
            })?;
        self.blocks.push(at);
        Ok(at)
    }

    /// Registers the doorbell signal, removed again on an error.
    fn signal(&mut self, signal: Arc<Signal>) -> u64 {
        let handle = self.rt.signals.insert(signal);
        self.signal = Some(handle);
        handle
    }

    /// The queue is complete: its owner releases all this from now on.
    fn keep(mut self) {
        self.blocks.clear();
        self.signal = None;
    }
}

impl Drop for Acquired<'_> {
    fn drop(&mut self) {
        if let Some(handle) = self.signal.take() {
            let _ = self.rt.signals.remove(handle);
        }
        for at in self.blocks.drain(..) {
            let _ = self.rt.arena.free_by(at, "hsa_queue_create");
        }
    }
}

impl Queue {
    fn note_submission(&self, index: u64, serial: u32) {
        let mut s = self.submitted.lock().unwrap_or_else(|e| e.into_inner());
        if s.len() == SUBMISSIONS_KEPT {
            s.pop_front();
        }
        s.push_back((index, serial));
    }

    /// The arena serial when packet `index` was submitted: at the first
    /// doorbell ring that covered it (rings for earlier packets are
    /// dropped). `None` when no ring is remembered.
    fn submitted_at(&self, index: u64) -> Option<u32> {
        let mut s = self.submitted.lock().unwrap_or_else(|e| e.into_inner());
        while s.front().is_some_and(|&(rung, _)| rung < index) {
            s.pop_front();
        }
        s.front().map(|&(_, serial)| serial)
    }

    /// Sets the CU mask (`None`: every unit) as ROCr does, within the
    /// process-wide mask of the agent; says whether that reduced it.
    pub fn set_cu_mask(&self, requested: Option<&[u32]>) -> Result<Applied> {
        let units = self.agent.profile.compute_units;
        let (mask, applied) = crate::cu_mask::apply(requested, &self.global_cu_mask, units)?;
        self.put_cu_mask(mask);
        Ok(applied)
    }

    fn put_cu_mask(&self, mask: Mask) {
        let units = self.agent.profile.topology().units(&mask);
        *self.cu_mask.lock().unwrap_or_else(|e| e.into_inner()) = (mask, units);
    }

    /// The CU mask, one bit per unit (`ceil(units / 32)` words).
    pub fn cu_mask(&self) -> Mask {
        self.cu_mask
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .clone()
    }

    /// Where the queue's dispatches run.
    fn compute_units(&self) -> ComputeUnits {
        self.cu_mask
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .clone()
    }

    /// Stops the processor and waits for it.
    pub fn stop(&self) {
        self.running.store(false, Ordering::Release);
        self.doorbell.store(i64::MIN, Order::Release);
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    fn running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// The header of the packet in ring slot `index`.
    fn header(&self, index: u64) -> &AtomicU16 {
        let at = self.ring + (index % self.size as u64) * PACKET_BYTES;
        // SAFETY: `at` is a 2-aligned address inside the ring, an arena
        // block (256-aligned). The arena stays mapped as long as `self`
        // (the queue holds its agent, which holds the device, which holds
        // the arena), even after `destroy_queue` frees the ring, and Rust
        // code accesses arena memory only atomically (see
        // `softgpu_exec::arena`), so a shared `AtomicU16` over these bytes
        // aliases no non-atomic access.
        unsafe { &*(at as *const AtomicU16) }
    }

    fn fail(&self, error: QueueError) {
        if let Some(cb) = &self.on_error {
            cb(&error);
        } else if !(self.faults_reported && matches!(error, QueueError::KernelFault(_))) {
            eprintln!("softgpu: queue {} stopped: {error}", self.id);
        }
        *lock_failed(self) = Some(error);
        // Nothing on a failed queue will run: release what its host
        // operations hold now (their drop may signal waiters elsewhere).
        self.discard_host_ops();
    }
}

fn lock_failed(queue: &Queue) -> std::sync::MutexGuard<'_, Option<QueueError>> {
    queue.failed.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kernel dispatches a queue runs beside each other at most: packets
/// without the barrier bit start before earlier ones complete, as on a
/// GPU, up to this many at once (each on a runner thread of its own, with
/// the executor's shared helpers).
const MAX_CONCURRENT_DISPATCHES: usize = 16;

/// How often the processor looks for finished concurrent dispatches while
/// it waits for packets.
const RETIRE_RECHECK: Duration = Duration::from_millis(1);

/// Dispatches started beside the processor, oldest first: their packet
/// index and the runner running each.
type InFlight = VecDeque<(u64, Runner)>;

/// A dispatch handed to a runner: runs once, says whether it succeeded.
type Job = Box<dyn FnOnce() -> bool + Send>;

/// A persistent thread of a queue that runs the dispatches started beside
/// the processor, one at a time. Spawning a thread per packet cost tens of
/// microseconds a dispatch; a runner waits for its next job instead. The
/// processor owns its runners: a runner is either idle or holds exactly one
/// dispatch in flight, so there are never more than
/// [`MAX_CONCURRENT_DISPATCHES`] of them, and each dispatch in flight has
/// a thread of its own (a kernel may wait for a later one, as on a GPU).
struct Runner {
    jobs: std::sync::mpsc::Sender<Job>,
    /// One answer per job: true when it succeeded.
    done: std::sync::mpsc::Receiver<bool>,
    thread: JoinHandle<()>,
}

impl Runner {
    /// Starts a runner thread for queue `queue_id`.
    fn spawn(queue_id: u64, number: usize) -> std::io::Result<Runner> {
        let (jobs, take) = std::sync::mpsc::channel::<Job>();
        let (answer, done) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("softgpu-queue-{queue_id}-run{number}"))
            .spawn(move || {
                // Ends when the processor drops its sender.
                while let Ok(job) = take.recv() {
                    if answer.send(job()).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Runner { jobs, done, thread })
    }

    /// Whether the runner's job has ended (its answer, once taken, is
    /// `Some`); `wait` blocks until it has.
    fn answer(&self, wait: bool) -> Option<bool> {
        use std::sync::mpsc::TryRecvError;
        if wait {
            // A runner whose thread is gone answers false.
            return Some(self.done.recv().unwrap_or(false));
        }
        match self.done.try_recv() {
            Ok(ok) => Some(ok),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(false),
        }
    }

    /// Ends the runner's thread (idle: its job, if any, has answered).
    fn stop(self) {
        drop(self.jobs);
        if self.thread.thread().id() != std::thread::current().id() {
            let _ = self.thread.join();
        }
    }
}

/// The runners of a queue that hold no dispatch, and how many were made.
#[derive(Default)]
struct Idle {
    runners: Vec<Runner>,
    made: usize,
}

/// The processor thread: consume packets until stopped or failed.
///
/// A kernel dispatch whose barrier bit is clear starts on a runner of its
/// own (a persistent thread of the queue) and the processor goes on to the next packet, so it may run beside
/// later packets (a kernel may wait for what a later one does, as on a
/// GPU); any other packet, and any packet with the barrier bit, first
/// waits for every dispatch in flight to finish. Slots are released (the
/// header set INVALID, the read index moved) in packet order once their
/// packets are done, so a kernel still running can read its dispatch
/// packet; completion signals fire as each packet completes.
fn process(runtime: Weak<Runtime>, queue: Arc<Queue>) {
    let mut in_flight = InFlight::new();
    let mut idle = Idle::default();
    let mut next = queue.read_index.load(Ordering::Acquire);
    while queue.running() && retire(&queue, &mut in_flight, &mut idle, next, false) {
        let doorbell = queue.doorbell.load(Order::Acquire);
        let header = queue.header(next).load(Ordering::Acquire);
        if header as u8 == packet_type::INVALID {
            // Active: spin a little before sleeping, since a client that
            // just finished waiting for this queue often rings again at
            // once, and waking a sleeping thread costs several µs.
            let nap = if in_flight.is_empty() {
                IDLE_RECHECK
            } else {
                RETIRE_RECHECK
            };
            queue.doorbell.wait(
                Condition::Ne,
                doorbell,
                Some(nap),
                WaitHint::Active,
                Order::Acquire,
            );
            continue;
        }
        let Some(rt) = runtime.upgrade() else { break };
        let at = queue.ring + (next % queue.size as u64) * PACKET_BYTES;
        let mut packet = [0u8; 64];
        // Atomically, as all arena memory: the client's plain stores are
        // ordered before the header's acquire load above, and a kernel
        // scribbling over the ring races atomically, not as a data race.
        if let Err(source) = rt.arena.read(at, &mut packet) {
            queue.fail(QueueError::UnreadablePacket {
                index: next,
                source,
            });
            break;
        }
        let concurrent =
            header as u8 == packet_type::KERNEL_DISPATCH && !Header::from_bits(header).barrier;
        if concurrent && in_flight.len() < MAX_CONCURRENT_DISPATCHES {
            match start_concurrent(&rt, &queue, &mut idle, next, at, &packet) {
                Ok(runner) => in_flight.push_back((next, runner)),
                Err(e) => {
                    queue.fail(e);
                    break;
                }
            }
            next += 1;
            continue;
        }
        // The barrier bit, another packet type, or too many in flight:
        // wait for every dispatch running first.
        if !retire(&queue, &mut in_flight, &mut idle, next, true) {
            break;
        }
        if concurrent {
            continue;
        }
        // A panic on the serial path (a client's host operation, a bug of
        // ours) fails the packet through the error callback instead of
        // ending this thread, which would leave the queue's waiters asleep.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_packet(&rt, &queue, next, at, &packet)
        }))
        .unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            Err(QueueError::Internal(format!(
                "packet {next} panicked: {why}"
            )))
        });
        match ran {
            Ok(completion) => {
                // Release the slot before completing, so a client that sees
                // the signal may reuse it.
                queue
                    .header(next)
                    .store(packet_type::INVALID as u16, Ordering::Release);
                queue.read_index.store(next + 1, Ordering::Release);
                next += 1;
                if let Some(c) = completion {
                    c.subtract(1, Order::Release);
                }
            }
            Err(e) => {
                queue.fail(e);
                break;
            }
        }
    }
    // Stopped or failed: the dispatches already running finish (a
    // stopped queue's hung kernel ends at the executor's timeout), then
    // the runners end.
    retire(&queue, &mut in_flight, &mut idle, next, true);
    for runner in idle.runners.drain(..) {
        runner.stop();
    }
}

/// Releases the slots of finished concurrent dispatches, in order (all of
/// them first when `drain`, else only those already done); returns false
/// when one failed, or the queue has (the processor then stops).
fn retire(
    queue: &Queue,
    in_flight: &mut InFlight,
    idle: &mut Idle,
    next: u64,
    drain: bool,
) -> bool {
    let mut ok = true;
    while let Some((_, runner)) = in_flight.front() {
        let Some(succeeded) = runner.answer(drain) else {
            break;
        };
        let (_, runner) = in_flight.pop_front().expect("front exists");
        idle.runners.push(runner);
        ok &= succeeded;
    }
    // Every slot before the oldest dispatch still running is done.
    let done = in_flight.front().map_or(next, |&(index, _)| index);
    let mut index = queue.read_index.load(Ordering::Acquire);
    while index < done {
        queue
            .header(index)
            .store(packet_type::INVALID as u16, Ordering::Release);
        index += 1;
        queue.read_index.store(index, Ordering::Release);
    }
    ok && lock_failed(queue).is_none()
}

/// Checks a kernel dispatch packet on the processor thread and starts it
/// on a runner of its own (an idle one, else a new one), which completes
/// its signal when it ends (or stops the queue when it fails). A panic in
/// the dispatch is contained on the runner, which lives on: the queue
/// stops with an error, never silently.
fn start_concurrent(
    rt: &Arc<Runtime>,
    queue: &Arc<Queue>,
    idle: &mut Idle,
    index: u64,
    at: u64,
    packet: &[u8; 64],
) -> Result<Runner, QueueError> {
    let header = Header::from_bits(Header::word_of(packet));
    let completion = accept(rt, queue, index, packet)?;
    let prepared = prepare(rt, queue, index, at, packet)?;
    let runner = match idle.runners.pop() {
        Some(runner) => runner,
        None => {
            let runner =
                Runner::spawn(queue.id, idle.made).map_err(|e| QueueError::Spawn(Arc::new(e)))?;
            idle.made += 1;
            runner
        }
    };
    let (rt, queue) = (rt.clone(), queue.clone());
    let job: Job = Box::new(move || {
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let result = launch(&rt, &queue, &prepared, completion.as_ref());
            if header.release_scope != 0 {
                fence(Ordering::SeqCst);
            }
            match result {
                Ok(()) => {
                    if let Some(c) = &completion {
                        c.subtract(1, Order::Release);
                    }
                    true
                }
                Err(e) => {
                    queue.fail(e);
                    false
                }
            }
        }));
        ran.unwrap_or_else(|_| {
            queue.fail(QueueError::Internal(format!(
                "the dispatch of packet {index} panicked"
            )));
            false
        })
    });
    if let Err(refused) = runner.jobs.send(job) {
        // The runner's thread is gone (it never ends while its sender
        // lives, so this is a bug of ours): run nothing, stop the queue.
        drop(refused);
        return Err(QueueError::Internal(format!(
            "the runner for packet {index} has ended"
        )));
    }
    Ok(runner)
}

/// Runs one packet; returns its completion signal (to decrement once the
/// slot is released).
fn run_packet(
    rt: &Runtime,
    queue: &Queue,
    index: u64,
    at: u64,
    packet: &[u8; 64],
) -> Result<Option<Arc<Signal>>, QueueError> {
    let header = Header::from_bits(Header::word_of(packet));
    let kind = header.packet_type;
    let completion = accept(rt, queue, index, packet)?;
    match kind {
        packet_type::KERNEL_DISPATCH => dispatch(rt, queue, index, at, packet, completion.as_ref())?,
        packet_type::BARRIER_AND | packet_type::BARRIER_OR => {
            if !barrier(rt, queue, packet, kind == packet_type::BARRIER_AND)? {
                // The queue is being destroyed: the barrier never completed.
                return Ok(None);
            }
        }
        packet_type::AGENT_DISPATCH => {
            return Err(QueueError::InvalidPacket(
                PacketRule::Format,
                "AGENT_DISPATCH packets are not supported (queues accept kernel dispatch and barrier packets)".into(),
            ))
        }
        packet_type::VENDOR_SPECIFIC => run_host_op(queue, packet, completion.as_ref())?,
        other => {
            return Err(QueueError::InvalidPacket(PacketRule::Format, format!(
                "packet type {other} at index {index} is not an AQL packet type"
            )))
        }
    }
    if header.release_scope != 0 {
        fence(Ordering::SeqCst);
    }
    Ok(completion)
}

/// What every packet starts with: the acquire fence its header asks for,
/// the trace event, and its completion signal looked up.
fn accept(
    rt: &Runtime,
    queue: &Queue,
    index: u64,
    packet: &[u8; 64],
) -> Result<Option<Arc<Signal>>, QueueError> {
    let header = Header::word_of(packet);
    let kind = header as u8;
    if Header::from_bits(header).acquire_scope != 0 {
        fence(Ordering::SeqCst);
    }
    let type_name = match kind {
        packet_type::KERNEL_DISPATCH => "kernel_dispatch",
        packet_type::BARRIER_AND => "barrier_and",
        packet_type::BARRIER_OR => "barrier_or",
        packet_type::VENDOR_SPECIFIC if HostOpPacket::from_bytes(packet).magic == HOST_OP_MAGIC => {
            "host_op"
        }
        _ => "unsupported",
    };
    rt.tracer.event(
        "packet",
        now_ns(),
        || json!({"queue": queue.id, "index": index, "type": type_name, "header": header}),
    );
    completion_signal(rt, completion_signal_of(packet))
}

fn completion_signal(rt: &Runtime, handle: u64) -> Result<Option<Arc<Signal>>, QueueError> {
    if handle == 0 {
        return Ok(None);
    }
    rt.signal(handle).map(Some).map_err(|_| {
        QueueError::InvalidPacket(
            PacketRule::Signal,
            format!("completion signal {handle:#x} is not a live signal"),
        )
    })
}

fn dispatch(
    rt: &Runtime,
    queue: &Queue,
    index: u64,
    at: u64,
    p: &[u8; 64],
    completion: Option<&Arc<Signal>>,
) -> Result<(), QueueError> {
    launch(rt, queue, &prepare(rt, queue, index, at, p)?, completion)
}

/// A kernel dispatch packet checked and ready to run.
struct Launch {
    index: u64,
    kernel: KernelRef,
    raw: RawDispatch,
    device: Arc<softgpu_exec::Device>,
}

/// Checks a kernel dispatch packet (every rule a packet processor
/// checks, and the device's limits) without running it. Runs on the
/// processor thread, in packet order (`submitted_at` relies on it).
fn prepare(
    rt: &Runtime,
    queue: &Queue,
    index: u64,
    at: u64,
    p: &[u8; 64],
) -> Result<Launch, QueueError> {
    let p = KernelDispatchPacket::from_bytes(p);
    let dims = p.dimensions();
    let block = p.workgroup_size();
    let grid = p.grid_size();
    let bad = |rule, why: String| Err(QueueError::InvalidPacket(rule, why));
    if !(1..=3).contains(&dims) {
        return bad(
            PacketRule::Dimensions,
            format!("kernel dispatch with {dims} dimensions (setup must say 1 to 3)"),
        );
    }
    for d in 0..3 {
        let used = d < dims as usize;
        if used && (block[d] == 0 || grid[d] == 0) {
            return bad(
                PacketRule::Dimensions,
                format!(
                    "dimension {d}: workgroup size {} and grid size {} must be non-zero",
                    block[d], grid[d]
                ),
            );
        }
        if !used && (block[d] != 1 || grid[d] != 1) {
            return bad(PacketRule::Dimensions, format!(
                "dimension {d} is unused ({dims}-D dispatch) so its sizes must be 1, got workgroup {} grid {}",
                block[d], grid[d]
            ));
        }
    }
    let object = p.kernel_object;
    let Some(kernel) = rt.kernel_by_object(object) else {
        return bad(
            PacketRule::CodeObject,
            format!("kernel object {object:#x} is not a kernel of a frozen executable"),
        );
    };
    let raw = RawDispatch {
        grid,
        block,
        group_segment_bytes: p.group_segment_size,
        private_segment_bytes: p.private_segment_size,
        kernarg: p.kernarg_address,
        packet: at,
        queue: queue.address,
        epoch: queue.submitted_at(index),
        compute_units: Some(queue.compute_units()),
    };
    let device = queue
        .agent
        .device()
        .map_err(|e| QueueError::NoDevice(Arc::new(e)))?
        .clone();
    // Limits (shape, LDS, private segment, kernarg) before anything is
    // captured or allocated for a hostile packet.
    let desc = raw.desc(&kernel.program, kernel.kernel());
    device.check(&desc).map_err(|e| {
        let rule = match &e {
            DispatchError::BadLaunch { rule, .. } => (*rule).into(),
            _ => PacketRule::Format,
        };
        QueueError::LaunchRefused {
            index,
            rule,
            source: Arc::new(e),
        }
    })?;
    beyond_kernel_limits(kernel.kernel(), block);
    Ok(Launch {
        index,
        kernel,
        raw,
        device,
    })
}

/// Runs a checked dispatch to its end, tracing and capturing it.
fn launch(
    rt: &Runtime,
    queue: &Queue,
    launch: &Launch,
    completion: Option<&Arc<Signal>>,
) -> Result<(), QueueError> {
    let Launch {
        index,
        kernel,
        raw,
        device,
    } = launch;
    let (grid, block) = (raw.grid, raw.block);
    let capture = rt.tracer_capture_begin(kernel, raw, &queue.agent.profile);
    let start = now_ns();
    let desc = DispatchDesc {
        // Statistics estimate the time on the part from every
        // instruction's count.
        hotspots: rt.statistics.enabled(),
        ..raw.desc(&kernel.program, kernel.kernel())
    };
    let result = device.dispatch(&desc);
    let end = now_ns();
    if let Some(c) = completion {
        c.set_times(start, end);
    }
    let record = match &result {
        Ok(outcome) if rt.statistics.enabled() => Some(record(queue, launch, outcome)),
        _ => None,
    };
    rt.tracer.event("dispatch", start, || {
        let (status, stats) = match &result {
            Ok(o) => ("ok".to_string(), Some(o.counters)),
            Err(e) => (e.to_string(), None),
        };
        let profile = &queue.agent.profile;
        let estimate = record.as_ref().and_then(|r| r.estimate.as_ref());
        json!({
            "queue": queue.id, "index": index,
            "kernel": softgpu_codeobj::demangle(&kernel.kernel().name), "symbol": kernel.kernel().name,
            "grid": grid, "block": block, "dur": end - start,
            "profile": profile.profile_id, "profile_revision": profile.revision,
            "fidelity": profile.fidelity_of(estimate.is_some()).name(),
            "wave_instructions": stats.map(|s| s.wave_instructions),
            "lane_instructions": stats.map(|s| s.lane_instructions),
            "estimate": estimate,
            "status": status,
        })
    });
    if let Some(r) = record {
        rt.statistics.push(r);
    }
    if let Some(c) = capture {
        rt.tracer_capture_end(c, kernel, raw);
    }
    rt.reporter.launch(raw.kernarg, &result);
    match result {
        Ok(_) => Ok(()),
        Err(DispatchError::Fault(f)) => Err(QueueError::KernelFault(f)),
        Err(e) => Err(QueueError::DispatchFailed(Arc::new(e))),
    }
}

/// The statistics of a dispatch that ran to its end: its counts, its
/// occupancy and its estimated time on the queue's part.
fn record(queue: &Queue, launch: &Launch, outcome: &DispatchOutcome) -> DispatchStatistics {
    let profile = &queue.agent.profile;
    let (raw, k) = (&launch.raw, launch.kernel.kernel());
    let dynamic_lds = raw
        .group_segment_bytes
        .saturating_sub(k.descriptor.group_segment_fixed_size);
    let size = raw.block.iter().product();
    let occupancy = occupancy(profile, &KernelResources::of(k, size, dynamic_lds));
    let estimate = outcome.hotspots.as_ref().and_then(|counts| {
        let program = &launch.kernel.program;
        estimate::of_dispatch(
            profile,
            program,
            k,
            raw.block,
            dynamic_lds,
            &outcome.counters,
            counts,
        )
    });
    DispatchStatistics {
        queue: queue.id,
        index: launch.index,
        kernel: k.name.clone(),
        grid: raw.grid,
        block: raw.block,
        counters: outcome.counters,
        occupancy,
        fidelity: profile.fidelity_of(estimate.is_some()),
        estimate,
        profile: profile.profile_id.clone(),
        profile_revision: profile.revision,
    }
}

/// Says once per kernel on stderr when a packet's workgroup breaks the
/// kernel's own limits (its compiled maximum or required size). The
/// packet still runs, as on a GPU, whose packet processor never reads a
/// kernel's metadata; but the compiler may have relied on the limit (a
/// barrier dropped for a one-wave workgroup, say), so this is the likely
/// cause of any wrong result.
fn beyond_kernel_limits(kernel: &softgpu_codeobj::Kernel, block: [u32; 3]) {
    static WARNED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let threads: u32 = block.iter().product();
    let max = kernel.meta.max_flat_workgroup_size;
    let why = match kernel.meta.reqd_workgroup_size {
        Some(req) if req != block => format!("is not its required workgroup size {req:?}"),
        _ if max != 0 && threads > max => format!("exceeds its maximum of {max} work-items"),
        _ => return,
    };
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned.insert(kernel.name.clone()) {
        eprintln!(
            "softgpu: kernel {} dispatched with workgroup {block:?}, which {why}; it runs, as on a GPU, but the compiler may have relied on the limit",
            kernel.name
        );
    }
}

/// BARRIER_AND waits for every dependency signal to reach 0, BARRIER_OR
/// for any; null dependencies are ignored. A dependency that goes negative
/// means the work it tracks failed, as in HSA: the barrier completes with
/// an error, so the failure propagates instead of hanging this queue.
/// Returns false when the queue stopped before the dependencies were met.
fn barrier(rt: &Runtime, queue: &Queue, p: &[u8; 64], all: bool) -> Result<bool, QueueError> {
    let mut deps = Vec::new();
    for h in BarrierPacket::from_bytes(p).dep_signal {
        if h != 0 {
            deps.push(rt.signal(h).map_err(|_| {
                QueueError::InvalidPacket(
                    PacketRule::Signal,
                    format!("dependency signal {h:#x} is not a live signal"),
                )
            })?);
        }
    }
    if deps.is_empty() {
        return Ok(true);
    }
    let failed = |value: i64| QueueError::DependencyFailed { value };
    while queue.running() {
        // `< 1` is "reached 0, or failed".
        let settled = if all {
            let mut values = Vec::new();
            deps.retain(|d| {
                let v = d.wait(
                    Condition::Lt,
                    1,
                    Some(IDLE_RECHECK),
                    WaitHint::Blocked,
                    Order::Acquire,
                );
                values.push(v);
                v > 0
            });
            if let Some(&v) = values.iter().find(|&&v| v < 0) {
                return Err(failed(v));
            }
            deps.is_empty()
        } else {
            let watched: Vec<_> = deps.iter().map(|d| (d.clone(), Condition::Lt, 1)).collect();
            match crate::signal::wait_any(&watched, Some(IDLE_RECHECK), WaitHint::Blocked) {
                Some((_, v)) if v < 0 => return Err(failed(v)),
                found => found.is_some(),
            }
        };
        if settled {
            return Ok(true);
        }
    }
    Ok(false)
}

// ---- Host operations: softgpu's own vendor-specific packet ----
//
// Copies, fills and uploads issued by the safe API must run in order with
// the dispatches around them. Rather than a second ordering mechanism, they
// ride the same ring: a VENDOR_SPECIFIC packet carrying HOST_OP_MAGIC and an
// id into a table of closures the processor runs in its turn. A vendor
// packet without the magic stays invalid, as HSA requires.

/// The `magic` of a host-operation packet ([`HostOpPacket`]).
pub const HOST_OP_MAGIC: u32 = 0x5047_4653; // "SFGP"

/// A host operation: runs once on the queue's processor thread, in order.
pub type HostOp = Box<dyn FnOnce() -> std::result::Result<(), HostOpError> + Send>;

/// Why a host operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HostOpError {
    /// Memory refused the operation's access (a copy's or fill's side).
    #[error(transparent)]
    Memory(#[from] softgpu_exec::arena::MemError),
    /// A client's host function failed, with this message.
    #[error("{0}")]
    Failed(String),
}

impl From<String> for HostOpError {
    fn from(message: String) -> HostOpError {
        HostOpError::Failed(message)
    }
}

impl From<&str> for HostOpError {
    fn from(message: &str) -> HostOpError {
        HostOpError::Failed(message.into())
    }
}

/// Pending host operations by (queue id, operation id).
static HOST_OPS: Mutex<std::collections::BTreeMap<(u64, u64), HostOp>> =
    Mutex::new(std::collections::BTreeMap::new());
static HOST_OP_IDS: AtomicU64 = AtomicU64::new(1);

fn host_ops() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<(u64, u64), HostOp>> {
    HOST_OPS.lock().unwrap_or_else(|e| e.into_inner())
}

impl Queue {
    /// Registers `op` and returns the packet (header included) that runs it
    /// when the processor reaches it; `completion` is a signal handle or 0.
    /// The caller publishes the packet like any other.
    ///
    /// On a queue that has failed or stopped the operation could never run,
    /// so it is dropped at once (releasing what it holds) and the packet is
    /// one the queue will never reach. The check is made under the table's
    /// lock, which `fail` and `discard_host_ops` also take after marking the
    /// queue, so no operation can slip in after the discard and be kept.
    pub fn host_op_packet(&self, op: HostOp, completion: u64) -> [u8; 64] {
        let id = HOST_OP_IDS.fetch_add(1, Ordering::Relaxed);
        let mut ops = host_ops();
        let dead = !self.running() || lock_failed(self).is_some();
        let unrunnable = if dead {
            Some(op)
        } else {
            ops.insert((self.id, id), op);
            None
        };
        drop(ops);
        drop(unrunnable);
        let header = Header {
            packet_type: packet_type::VENDOR_SPECIFIC,
            barrier: true,
            acquire_scope: 2,
            release_scope: 2,
        };
        HostOpPacket {
            header: header.bits(),
            magic: HOST_OP_MAGIC,
            id,
            completion_signal: completion,
            ..Default::default()
        }
        .to_bytes()
    }

    /// Drops the host operations this queue never ran (after it failed or
    /// was destroyed), releasing whatever they hold.
    pub fn discard_host_ops(&self) {
        let mut ops = host_ops();
        let mine: Vec<_> = ops
            .range((self.id, 0)..=(self.id, u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        let dropped: Vec<HostOp> = mine.iter().filter_map(|k| ops.remove(k)).collect();
        drop(ops);
        drop(dropped);
    }
}

/// Runs the host operation a vendor-specific packet names.
fn run_host_op(
    queue: &Queue,
    p: &[u8; 64],
    completion: Option<&Arc<Signal>>,
) -> Result<(), QueueError> {
    let p = HostOpPacket::from_bytes(p);
    if p.magic != HOST_OP_MAGIC {
        return Err(QueueError::InvalidPacket(
            PacketRule::Format,
            "vendor-specific packets are not supported".into(),
        ));
    }
    let id = p.id;
    let op = host_ops().remove(&(queue.id, id)).ok_or_else(|| {
        QueueError::InvalidPacket(
            PacketRule::Format,
            format!("host operation {id} is not registered on this queue"),
        )
    })?;
    let start = now_ns();
    let result = op();
    if let Some(c) = completion {
        c.set_times(start, now_ns());
    }
    result.map_err(QueueError::HostOpFailed)
}
