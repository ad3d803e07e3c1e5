//! Streams: ordered, asynchronous work on one device.
//!
//! A stream is an AQL queue of the runtime. A dispatch is a kernel dispatch
//! packet; uploads, reads, fills, copies, event records and the releases of
//! what queued work holds are host-operation packets the queue's processor
//! runs in their turn; waiting for another stream's event is a barrier
//! packet. So everything runs in the order it was enqueued, with no host
//! waits, exactly like work on a hardware queue.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use softgpu_runtime::queue::{packet_type, Queue, QueueSpec};
use softgpu_runtime::signal::{Order, Signal};

use crate::budget::{Charge, MemoryBudget};
use crate::buffer::{Buffer, BufferInner, View};
use crate::device::{Device, DeviceInner};
use crate::error::{Error, Result};
use crate::event::{Event, LaneState, Marker, Readback, Submission};
use crate::graph::{Graph, GraphExec};
use crate::kernel::{Args, Kernel, Module};
use crate::scalar::{to_bytes, Scalar};

/// Packets in each stream's ring.
const RING_PACKETS: u32 = 1024;
/// Sleep while the ring is full.
const RING_FULL_NAP: Duration = Duration::from_micros(20);

/// The queue a stream currently feeds, with its failure state. A failed
/// queue stops for good, so the stream replaces it (see [`Stream::lane`]).
struct Lane {
    queue: Arc<Queue>,
    state: Arc<LaneState>,
}

/// An ordered sequence of device work. Calls enqueue and return; use
/// [`Stream::submit`] or [`Stream::synchronize`] to wait.
///
/// `Send` but not `Sync`: one thread feeds a stream at a time, which is
/// what keeps its order well defined.
pub struct Stream {
    device: Device,
    lane: RefCell<Lane>,
    /// The failure of a replaced queue that no wait has reported yet.
    pending: RefCell<Option<Error>>,
    budget: Option<MemoryBudget>,
}

/// A workgroup count or size in up to three dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3(pub [u32; 3]);

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3([x, 1, 1])
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3([x, y, 1])
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3([x, y, z])
    }
}
impl From<[u32; 3]> for Dim3 {
    fn from(d: [u32; 3]) -> Dim3 {
        Dim3(d)
    }
}

/// A byte pattern for [`Stream::fill`].
#[derive(Clone, Debug)]
pub struct Pattern(Vec<u8>);

impl From<u8> for Pattern {
    fn from(b: u8) -> Pattern {
        Pattern(vec![b])
    }
}
impl From<u32> for Pattern {
    fn from(w: u32) -> Pattern {
        Pattern(w.to_le_bytes().to_vec())
    }
}
impl From<f32> for Pattern {
    fn from(w: f32) -> Pattern {
        Pattern(w.to_le_bytes().to_vec())
    }
}

/// One stream operation, owning what it uses: what a call enqueues and a
/// graph node replays.
pub(crate) enum Op {
    Fill {
        buffer: Arc<BufferInner>,
        offset: u64,
        len: u64,
        pattern: Vec<u8>,
    },
    Copy {
        from: Arc<BufferInner>,
        from_at: u64,
        to: Arc<BufferInner>,
        to_at: u64,
        len: u64,
    },
    Dispatch {
        kernel: Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        args: Args,
    },
    /// Nothing to run: only orders its dependencies before its dependents.
    Join,
}

impl Op {
    /// A checked fill.
    pub(crate) fn fill(dst: View<'_>, Pattern(pattern): Pattern) -> Result<Op> {
        if !dst.bytes().is_multiple_of(pattern.len() as u64) {
            return Err(Error::Invalid(format!(
                "a fill of {} bytes is not a whole number of {}-byte patterns",
                dst.bytes(),
                pattern.len()
            )));
        }
        Ok(Op::Fill {
            buffer: dst.inner(),
            offset: dst.offset(),
            len: dst.bytes(),
            pattern,
        })
    }

    /// A checked copy.
    pub(crate) fn copy(src: View<'_>, dst: View<'_>) -> Result<Op> {
        if src.bytes() != dst.bytes() {
            return Err(Error::Invalid(format!(
                "copy from {} bytes into {} bytes",
                src.bytes(),
                dst.bytes()
            )));
        }
        Ok(Op::Copy {
            from: src.inner(),
            from_at: src.offset(),
            to: dst.inner(),
            to_at: dst.offset(),
            len: src.bytes(),
        })
    }
}

/// A kernarg segment in the kernarg pool, freed when the dispatch that
/// reads it has completed.
struct Kernarg {
    device: Arc<DeviceInner>,
    addr: u64,
}

impl Drop for Kernarg {
    fn drop(&mut self) {
        let _ = self.device.rt.free(self.addr);
    }
}

/// A signal handle registered for a barrier packet, removed once the
/// barrier has run.
struct SignalHandle {
    device: Arc<DeviceInner>,
    handle: u64,
}

impl Drop for SignalHandle {
    fn drop(&mut self) {
        let _ = self.device.rt.signals.remove(self.handle);
    }
}

impl Stream {
    pub(crate) fn new(device: Device) -> Result<Stream> {
        let lane = Lane::open(&device.inner)?;
        Ok(Stream {
            device,
            lane: RefCell::new(lane),
            pending: RefCell::new(None),
            budget: None,
        })
    }

    /// The device the stream runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Allocates device memory (contents undefined until written).
    pub fn allocate(&self, bytes: u64) -> Result<Buffer> {
        let charge = self.charge(bytes, "an allocation")?;
        Buffer::allocate(
            &self.device.inner,
            self.device.inner.device_pool,
            bytes,
            charge,
        )
    }

    /// Charges this stream's memory budget, if it has one.
    fn charge(&self, bytes: u64, what: &str) -> Result<Option<Charge>> {
        self.budget
            .as_ref()
            .map(|b| b.charge(bytes, what))
            .transpose()
    }

    /// Makes the stream's allocations and upload staging count against
    /// `budget` (which other streams may share).
    pub fn with_memory_budget(mut self, budget: &MemoryBudget) -> Stream {
        self.budget = Some(budget.clone());
        self
    }

    /// Allocates device memory and zeroes it in stream order.
    pub fn allocate_zeroed(&self, bytes: u64) -> Result<Buffer> {
        let buffer = self.allocate(bytes)?;
        self.fill(&buffer, 0u8)?;
        Ok(buffer)
    }

    /// Allocates fine-grained system memory, which the host and every
    /// device see coherently.
    pub fn allocate_shared(&self, bytes: u64) -> Result<Buffer> {
        let charge = self.charge(bytes, "an allocation")?;
        Buffer::allocate(
            &self.device.inner,
            self.device.inner.system_pool,
            bytes,
            charge,
        )
    }

    /// Makes host memory a buffer without copying: kernels read and write
    /// `data` in place.
    ///
    /// # Safety
    /// `data` must stay valid (not freed, moved or reallocated) until the
    /// returned buffer is dropped and all work using it has completed, and
    /// the host must not access it while queued work may.
    pub unsafe fn import_host(&self, data: &mut [u8]) -> Result<Buffer> {
        // SAFETY: forwarded to the caller.
        unsafe { Buffer::import(&self.device.inner, data) }
    }

    /// Copies `data` to the start of `dst` in stream order. The slice is
    /// copied into staging memory now, so the caller may reuse it at once;
    /// the staging is released once the copy has run.
    pub fn upload<'a, T: Scalar>(&self, dst: impl Into<View<'a>>, data: &[T]) -> Result<()> {
        let dst = dst.into();
        let view = dst.try_slice(..(std::mem::size_of_val(data) as u64))?;
        // Charged before the staging copy is made, released after it ran.
        let charge = self.charge(view.bytes(), "upload staging")?;
        let staging = to_bytes(data);
        let (buffer, offset) = (view.inner(), view.offset());
        self.host_op(&*self.lane()?, move || {
            let _charge = charge;
            buffer.write(offset, &staging)
        })
    }

    /// [`Stream::upload`] at byte `offset` of `dst`.
    pub fn upload_at<T: Scalar>(&self, dst: &Buffer, offset: u64, data: &[T]) -> Result<()> {
        self.upload(dst.try_slice(offset..)?, data)
    }

    /// [`Stream::upload`], then waits for the stream.
    pub fn upload_blocking<'a, T: Scalar>(
        &self,
        dst: impl Into<View<'a>>,
        data: &[T],
    ) -> Result<()> {
        self.upload(dst, data)?;
        self.synchronize()
    }

    /// Reads `src` in stream order.
    pub fn read<'a>(&self, src: impl Into<View<'a>>) -> Result<Readback> {
        let src = src.into();
        let (buffer, offset, len) = (src.inner(), src.offset(), src.bytes());
        let data = Arc::new(Mutex::new(None));
        let out = data.clone();
        let lane = self.lane()?;
        self.host_op(&lane, move || {
            let bytes = buffer.read(offset, len)?;
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(bytes);
            Ok(())
        })?;
        Ok(Readback {
            marker: self.marker(&lane)?,
            data,
        })
    }

    /// [`Stream::read`] and wait, as values of `T`.
    pub fn read_blocking<'a, T: Scalar>(&self, src: impl Into<View<'a>>) -> Result<Vec<T>> {
        self.read(src)?.wait_as()
    }

    /// Fills `dst` with a repeated pattern (a byte, a 32-bit word or an
    /// `f32`) in stream order. The view's length must be a whole number of
    /// patterns.
    pub fn fill<'a>(&self, dst: impl Into<View<'a>>, pattern: impl Into<Pattern>) -> Result<()> {
        self.run(&Op::fill(dst.into(), pattern.into())?)
    }

    /// Copies `src` to `dst` (equal lengths; overlap allowed) in stream
    /// order.
    pub fn copy<'a, 'b>(&self, src: impl Into<View<'a>>, dst: impl Into<View<'b>>) -> Result<()> {
        self.run(&Op::copy(src.into(), dst.into())?)
    }

    /// Loads a code object file on the stream's device.
    pub fn load(&self, path: impl AsRef<std::path::Path>) -> Result<Module> {
        Module::load(&self.device, path)
    }

    /// Loads a code object from bytes on the stream's device.
    pub fn load_bytes(&self, bytes: &[u8]) -> Result<Module> {
        Module::load_bytes(&self.device, bytes)
    }

    /// Compiles OpenCL C or HIP device source for the device and loads it.
    /// OpenCL C is compiled with `-cl-kernel-arg-info`, so argument
    /// errors can name the argument.
    pub fn compile(&self, source: &str, language: crate::Language) -> Result<Module> {
        let mut compiler = self.device.compiler()?;
        if language == crate::Language::OpenCl {
            compiler = compiler.option("-cl-kernel-arg-info");
        }
        let code = compiler.compile(source, language)?;
        self.load_bytes(&code)
    }

    /// Runs `kernel` on `grid` workgroups of `block` work-items each (as
    /// HIP counts). The arguments are checked against the kernel's metadata
    /// now; the buffers they name stay alive until the kernel has run.
    pub fn dispatch(
        &self,
        kernel: &Kernel,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &Args,
    ) -> Result<()> {
        self.enqueue_dispatch(kernel, grid.into().0, block.into().0, args)
    }

    /// Checks a dispatch without enqueueing it; returns the grid in
    /// work-items and the LDS bytes per workgroup.
    pub(crate) fn check_dispatch(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        args: &Args,
    ) -> Result<([u32; 3], u32)> {
        // Device handles opened separately share the agent: compare that.
        if kernel.device().index != self.device.inner.index {
            return Err(Error::Invalid(format!(
                "kernel {} was loaded on another device",
                kernel.name()
            )));
        }
        args.check(kernel.info())?;
        let items = launch_shape(self.device.properties(), kernel, grid, block)?;
        let lds = check_lds(self.device.properties(), kernel, args.dynamic_lds)?;
        Ok((items, lds))
    }

    fn enqueue_dispatch(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        args: &Args,
    ) -> Result<()> {
        let (items, lds) = self.check_dispatch(kernel, grid, block, args)?;
        let kernarg = self.kernarg(kernel, items, block, args)?;
        let packet = dispatch_packet(kernel, items, block, lds, kernarg.addr);
        // One lane for both packets: the release must follow the dispatch.
        let lane = self.lane()?;
        self.publish(&lane, packet)?;
        let keep = (args.buffers(), kernel.clone(), kernarg);
        self.host_op(&lane, move || {
            drop(keep);
            Ok(())
        })
    }

    /// Enqueues one operation (as recorded in a graph or made by a call).
    pub(crate) fn run(&self, op: &Op) -> Result<()> {
        match op {
            Op::Fill {
                buffer,
                offset,
                len,
                pattern,
            } => {
                let (buffer, offset, len, pattern) =
                    (buffer.clone(), *offset, *len, pattern.clone());
                self.host_op(&*self.lane()?, move || {
                    let bytes: Vec<u8> =
                        pattern.iter().copied().cycle().take(len as usize).collect();
                    buffer.write(offset, &bytes)
                })
            }
            Op::Copy {
                from,
                from_at,
                to,
                to_at,
                len,
            } => {
                let (from, from_at, to, to_at, len) =
                    (from.clone(), *from_at, to.clone(), *to_at, *len);
                self.host_op(&*self.lane()?, move || {
                    to.write(to_at, &from.read(from_at, len)?)
                })
            }
            Op::Dispatch {
                kernel,
                grid,
                block,
                args,
            } => self.enqueue_dispatch(kernel, *grid, *block, args),
            Op::Join => Ok(()),
        }
    }

    /// Marks this point of the stream.
    pub fn record_event(&self) -> Result<Event> {
        Ok(Event {
            marker: self.marker(&*self.lane()?)?,
        })
    }

    /// Makes later work of this stream wait (on the device, not the host)
    /// until `event` has completed, whichever stream recorded it.
    ///
    /// If the event's stream fails before reaching it, this stream waits
    /// until it is dropped.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        let device = self.device.inner.clone();
        let handle = device.rt.signals.insert(event.marker.signal.clone());
        let guard = SignalHandle { device, handle };
        let mut p = [0u8; 64];
        let header = packet_type::BARRIER_AND as u16 | 1 << 8 | 2 << 9 | 2 << 11;
        p[0..2].copy_from_slice(&header.to_le_bytes());
        p[8..16].copy_from_slice(&handle.to_le_bytes());
        let lane = self.lane()?;
        self.publish(&lane, p)?;
        self.host_op(&lane, move || {
            drop(guard);
            Ok(())
        })
    }

    /// Starts recording a graph of work to replay on this stream with
    /// [`Stream::launch`].
    pub fn graph(&self) -> Graph<'_> {
        Graph::new(self)
    }

    /// Replays a finished graph in stream order.
    pub fn launch(&self, exec: &mut GraphExec) -> Result<()> {
        exec.launch_on(self)
    }

    /// Everything enqueued so far, to wait for.
    pub fn submit(&self) -> Result<Submission> {
        Ok(Submission {
            marker: self.marker(&*self.lane()?)?,
        })
    }

    /// Waits for everything enqueued so far; returns a kernel fault (or
    /// other failure) that happened in that work and was not yet reported
    /// by another wait.
    pub fn synchronize(&self) -> Result<()> {
        self.submit()?.wait()
    }

    /// The current lane, replacing a failed queue by a fresh one. A
    /// failure nobody has waited for yet is kept for the next marker, so
    /// the next wait reports it and it is never lost.
    fn lane(&self) -> Result<std::cell::Ref<'_, Lane>> {
        if self.lane.borrow().state.has_failed() {
            let fresh = Lane::open(&self.device.inner)?;
            let old = self.lane.replace(fresh);
            if !old.state.reported.load(Ordering::Acquire) {
                *self.pending.borrow_mut() = Some(old.state.error());
            }
            old.close(&self.device.inner);
        }
        Ok(self.lane.borrow())
    }

    /// Publishes one packet: body first, then the header atomically, then
    /// the doorbell, as an HSA client does.
    fn publish(&self, lane: &Lane, packet: [u8; 64]) -> Result<()> {
        let q = &lane.queue;
        let index = q.write_index.fetch_add(1, Ordering::AcqRel);
        while index - q.read_index.load(Ordering::Acquire) >= q.size as u64 {
            if lane.state.has_failed() {
                return Err(lane.state.error());
            }
            std::thread::sleep(RING_FULL_NAP);
        }
        let arena = &self.device.inner.rt.arena;
        let slot = q.ring + (index % q.size as u64) * 64;
        arena
            .write(slot + 4, &packet[4..])
            .map_err(|e| Error::Runtime(e.to_string()))?;
        let word = u32::from_le_bytes(packet[0..4].try_into().expect("4 bytes"));
        arena
            .store_u32(slot, word)
            .map_err(|e| Error::Runtime(e.to_string()))?;
        q.doorbell.store(index as i64, Order::Release);
        Ok(())
    }

    /// Enqueues a host operation.
    fn host_op(
        &self,
        lane: &Lane,
        op: impl FnOnce() -> Result<(), String> + Send + 'static,
    ) -> Result<()> {
        let packet = lane.queue.host_op_packet(Box::new(op), 0);
        self.publish(lane, packet)
    }

    /// Enqueues a marker: a host operation that stamps and completes a
    /// fresh signal.
    fn marker(&self, lane: &Lane) -> Result<Marker> {
        let signal = Arc::new(Signal::new(1));
        let done = signal.clone();
        self.host_op(lane, move || {
            let now = softgpu_runtime::trace::now_ns();
            done.set_times(now, now);
            done.subtract(1, Order::Release);
            Ok(())
        })?;
        Ok(Marker {
            signal,
            lane: lane.state.clone(),
            prior: self.pending.take(),
        })
    }

    /// Builds the kernarg segment in the kernarg pool.
    fn kernarg(
        &self,
        kernel: &Kernel,
        items: [u32; 3],
        block: [u32; 3],
        args: &Args,
    ) -> Result<Kernarg> {
        let bytes = softgpu_exec::build_kernarg(
            kernel.kref.kernel(),
            items,
            block,
            args.dynamic_lds,
            &args.exec_args(),
        )
        .map_err(|e| Error::Launch {
            kernel: kernel.name().into(),
            why: e.to_string(),
        })?;
        let device = self.device.inner.clone();
        let addr = device
            .rt
            .allocate(device.kernarg_pool, bytes.len() as u64)?;
        let kernarg = Kernarg { device, addr };
        kernarg
            .device
            .rt
            .arena
            .write(addr, &bytes)
            .map_err(|e| Error::Runtime(e.to_string()))?;
        Ok(kernarg)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Queued work holds buffers, kernargs and signal handles: let it
        // finish (or fail) before the queue goes.
        if !self.lane.get_mut().state.has_failed() {
            if let Ok(submission) = self.submit() {
                let _ = submission.wait();
            }
        }
        self.lane.get_mut().close(&self.device.inner);
    }
}

impl Lane {
    fn open(device: &Arc<DeviceInner>) -> Result<Lane> {
        let state = Arc::new(LaneState::new());
        let theirs = state.clone();
        let spec = QueueSpec {
            size: RING_PACKETS,
            single: true,
            on_error: Some(Box::new(move |e| theirs.fail(Error::from(e)))),
        };
        let queue = device.rt.create_queue(device.agent_handle, spec)?;
        Ok(Lane { queue, state })
    }

    /// Stops the queue and drops what its unrun host operations hold.
    fn close(&self, device: &DeviceInner) {
        let _ = device.rt.destroy_queue(self.queue.address);
        self.queue.discard_host_ops();
    }
}

/// Checks the launch against the device and kernel; returns the grid in
/// work-items.
fn launch_shape(
    profile: &softgpu_runtime::profile::Profile,
    kernel: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
) -> Result<[u32; 3]> {
    let bad = |why: String| Error::Launch {
        kernel: kernel.name().into(),
        why,
    };
    let threads = block
        .iter()
        .try_fold(1u64, |acc, &b| acc.checked_mul(b as u64));
    let info = kernel.info();
    let limit = match info.max_workgroup_size {
        0 => profile.max_workgroup_size,
        k => k.min(profile.max_workgroup_size),
    };
    if grid.contains(&0) || block.contains(&0) {
        return Err(bad(format!(
            "grid {grid:?} and block {block:?} must be non-zero"
        )));
    }
    if threads.is_none_or(|t| t > limit as u64) {
        return Err(bad(format!("block {block:?} exceeds {limit} work-items")));
    }
    if let Some(req) = info.required_workgroup_size {
        if req != block {
            return Err(bad(format!(
                "the kernel requires block {req:?}, got {block:?}"
            )));
        }
    }
    let mut items = [0u32; 3];
    for d in 0..3 {
        if block[d] > profile.max_workgroup_dims[d] || block[d] > u16::MAX as u32 {
            return Err(bad(format!(
                "block dimension {d} is {}, above the device limit",
                block[d]
            )));
        }
        items[d] = grid[d].checked_mul(block[d]).ok_or_else(|| {
            bad(format!(
                "grid dimension {d}: {} groups of {} overflow",
                grid[d], block[d]
            ))
        })?;
    }
    Ok(items)
}

/// Checks static plus dynamic LDS against the device; returns the total.
fn check_lds(
    profile: &softgpu_runtime::profile::Profile,
    kernel: &Kernel,
    dynamic: u32,
) -> Result<u32> {
    let total = kernel.info().lds_bytes.checked_add(dynamic);
    match total {
        Some(t) if t <= profile.lds_bytes => Ok(t),
        _ => Err(Error::Launch {
            kernel: kernel.name().into(),
            why: format!(
                "{} static + {dynamic} dynamic LDS bytes exceed the device's {}",
                kernel.info().lds_bytes,
                profile.lds_bytes
            ),
        }),
    }
}

/// The kernel dispatch packet (completion via a following host operation).
fn dispatch_packet(
    kernel: &Kernel,
    items: [u32; 3],
    block: [u32; 3],
    lds: u32,
    kernarg: u64,
) -> [u8; 64] {
    let dims: u16 = if items[2] > 1 || block[2] > 1 {
        3
    } else if items[1] > 1 || block[1] > 1 {
        2
    } else {
        1
    };
    let mut p = [0u8; 64];
    let header = packet_type::KERNEL_DISPATCH as u16 | 1 << 8 | 2 << 9 | 2 << 11;
    p[0..2].copy_from_slice(&header.to_le_bytes());
    p[2..4].copy_from_slice(&dims.to_le_bytes());
    for d in 0..3 {
        p[4 + 2 * d..6 + 2 * d].copy_from_slice(&(block[d] as u16).to_le_bytes());
        p[12 + 4 * d..16 + 4 * d].copy_from_slice(&items[d].to_le_bytes());
    }
    p[28..32].copy_from_slice(&lds.to_le_bytes());
    p[32..40].copy_from_slice(&kernel.kref.object().to_le_bytes());
    p[40..48].copy_from_slice(&kernarg.to_le_bytes());
    p
}
