//! Streams: ordered, asynchronous work on one device.
//!
//! A stream is an AQL queue of the runtime. A dispatch is a kernel dispatch
//! packet; uploads, reads, fills, copies, event records and the releases of
//! what queued work holds are host-operation packets the queue's processor
//! runs in their turn; waiting for another stream's event is a barrier
//! packet. So everything runs in the order it was enqueued, with no host
//! waits, exactly like work on a hardware queue.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use softgpu_runtime::exec::Origin;
use softgpu_runtime::packet::{packet_type, Header, KernelDispatchPacket};
use softgpu_runtime::queue::HostOpError;

use crate::budget::{Charge, MemoryBudget};
use crate::buffer::{Buffer, BufferInner, View};
use crate::constants::Constants;
use crate::device::{Device, DeviceInner};
use crate::error::{Error, Result};
use crate::event::{Event, Marker, Readback, Submission};
use crate::graph::{Graph, GraphExec};
use crate::kernel::{Args, Artifact, Kernel, Module};
use crate::lane::Lane;
use crate::scalar::{as_bytes, as_bytes_mut, zeroed, Scalar};
use crate::scratch::ScratchPool;
use crate::staging::{Staging, STAGING_CHUNK};

/// An ordered sequence of device work. Calls enqueue and return; use
/// [`Stream::submit`] or [`Stream::synchronize`] to wait.
///
/// `Send` but not `Sync`: one thread feeds a stream at a time, which is
/// what keeps its order well defined.
pub struct Stream {
    device: Device,
    id: usize,
    lane: RefCell<Lane>,
    budget: Option<MemoryBudget>,
    staging: Arc<Staging>,
    scratch: RefCell<ScratchPool>,
}

/// Source of [`Stream::id`]s.
static STREAM_IDS: AtomicUsize = AtomicUsize::new(0);

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

/// One host-side stream operation, owning what it uses: what a call
/// enqueues and a graph node replays. (Dispatches are prepared apart: see
/// [`PreparedDispatch`].)
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
    /// A host function (a C-ABI layer's copy with raw pointers, a HIP host
    /// node), run afresh each time.
    Host(HostFn),
    /// Nothing to run: only orders its dependencies before its dependents.
    Join,
}

/// A host function a graph may replay many times.
pub type HostFn = Arc<dyn Fn() -> std::result::Result<(), String> + Send + Sync>;

impl Op {
    /// A checked fill.
    pub(crate) fn fill(dst: View<'_>, Pattern(pattern): Pattern) -> Result<Op> {
        let (offset, len) = dst.range();
        if !len.is_multiple_of(pattern.len() as u64) {
            return Err(Error::Invalid(format!(
                "a fill of {len} bytes is not a whole number of {}-byte patterns",
                pattern.len()
            )));
        }
        Ok(Op::Fill {
            buffer: dst.inner(),
            offset,
            len,
            pattern,
        })
    }

    /// A checked copy (destination first, as `memcpy`).
    pub(crate) fn copy(dst: View<'_>, src: View<'_>) -> Result<Op> {
        let ((to_at, len), (from_at, src_len)) = (dst.range(), src.range());
        if src_len != len {
            return Err(Error::Invalid(format!(
                "copy from {src_len} bytes into {len} bytes"
            )));
        }
        Ok(Op::Copy {
            from: src.inner(),
            from_at,
            to: dst.inner(),
            to_at,
            len,
        })
    }
}

/// A kernarg segment in the kernarg pool, freed when the dispatches that
/// read it have completed.
pub(crate) struct Kernarg {
    device: Arc<DeviceInner>,
    addr: u64,
    bytes: u64,
    /// The printf and hostcall buffers its hidden arguments point at.
    services: crate::services::Provided,
}

impl Drop for Kernarg {
    fn drop(&mut self) {
        self.device.give_back_kernarg(self.addr, self.bytes);
    }
}

/// A checked dispatch ready to publish: its packet, and what must live
/// until it has run (kernarg segment, buffers, code).
pub(crate) struct PreparedDispatch {
    pub packet: [u8; 64],
    pub held: (Kernarg, Vec<Arc<BufferInner>>, Kernel),
    /// The printf buffer to drain after each run of the packet.
    pub printf: Option<Arc<softgpu_runtime::printf::PrintfBuffer>>,
}

impl PreparedDispatch {
    /// Enqueues the host operation printing the dispatch's buffered
    /// printf output, if it has any, right after the dispatch.
    pub(crate) fn drain_printf(&self, lane: &Lane, k: usize) -> Result<()> {
        match &self.printf {
            Some(p) => {
                let p = p.clone();
                lane.host_op(k, move || {
                    p.drain();
                    Ok(())
                })
            }
            None => Ok(()),
        }
    }
}

impl Stream {
    pub(crate) fn new(device: Device) -> Result<Stream> {
        let lane = Lane::open(&device.inner)?;
        Ok(Stream {
            device,
            id: STREAM_IDS.fetch_add(1, Ordering::Relaxed),
            lane: RefCell::new(lane),
            budget: None,
            staging: Staging::new(),
            scratch: RefCell::new(ScratchPool::new()),
        })
    }

    /// A stream on device 0 (as [`Device::open`]`(0)` then
    /// [`Device::stream`]).
    pub fn open() -> Result<Stream> {
        Device::open(0)?.stream()
    }

    /// The device the stream runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The index of the stream's device.
    pub fn device_id(&self) -> usize {
        self.device.index()
    }

    /// A number no other stream of the process has.
    pub fn id(&self) -> usize {
        self.id
    }

    /// The device's processor, e.g. `gfx1151`.
    pub fn target(&self) -> &crate::Target {
        self.device.target()
    }

    /// Allocates device memory (contents undefined until written).
    pub fn allocate(&self, bytes: usize) -> Result<Buffer> {
        self.allocate_for(bytes, "Stream::allocate")
    }

    /// [`Stream::allocate`] on behalf of API call `api`, which fault
    /// reports name as the allocation's origin (a runtime built on this
    /// crate passes its own function, e.g. `hipMalloc`).
    pub fn allocate_for(&self, bytes: usize, api: &'static str) -> Result<Buffer> {
        let bytes = bytes as u64;
        let charges = self.charge(bytes, "an allocation")?;
        Buffer::allocate(
            &self.device.inner,
            self.device.inner.device_pool,
            bytes,
            charges,
            Origin::new(api),
        )
    }

    /// Charges this stream's memory budget, if it has one.
    fn charge(&self, bytes: u64, what: &str) -> Result<Vec<Charge>> {
        self.budget.iter().map(|b| b.charge(bytes, what)).collect()
    }

    /// Makes the stream's allocations, upload staging and scratch count
    /// against `budget` (a clone shares it: other streams may use it too).
    pub fn with_memory_budget(mut self, budget: MemoryBudget) -> Stream {
        self.budget = Some(budget);
        self
    }

    /// The budget set by [`Stream::with_memory_budget`], if any.
    pub fn memory_budget(&self) -> Option<&MemoryBudget> {
        self.budget.as_ref()
    }

    /// Allocates device memory and zeroes it in stream order.
    pub fn allocate_zeroed(&self, bytes: usize) -> Result<Buffer> {
        let buffer = self.allocate(bytes)?;
        self.fill(&buffer, 0)?;
        Ok(buffer)
    }

    /// Allocates fine-grained system memory, which the host and every
    /// device see coherently.
    pub fn allocate_shared(&self, bytes: usize) -> Result<Buffer> {
        self.allocate_shared_for(bytes, "Stream::allocate_shared")
    }

    /// [`Stream::allocate_shared`] on behalf of API call `api` (see
    /// [`Stream::allocate_for`]).
    pub fn allocate_shared_for(&self, bytes: usize, api: &'static str) -> Result<Buffer> {
        let bytes = bytes as u64;
        let charges = self.charge(bytes, "an allocation")?;
        Buffer::allocate(
            &self.device.inner,
            self.device.inner.system_pool,
            bytes,
            charges,
            Origin::new(api),
        )
    }

    /// Makes `bytes` of host memory at `pointer` a buffer without copying:
    /// kernels read and write it in place.
    ///
    /// # Safety
    /// The memory must be valid for reads and writes of `bytes` bytes and
    /// stay so (not freed, moved or reallocated) until the returned buffer
    /// is dropped and all work using it has completed, and the host must
    /// not access it while queued work may. While imported it is device
    /// memory to every kernel of the device, so a kernel of another stream
    /// that strays into it through a wild pointer reaches it too: no such
    /// kernel may still run when the buffer is dropped.
    pub unsafe fn import_host(&self, pointer: *mut c_void, bytes: usize) -> Result<Buffer> {
        // SAFETY: forwarded to the caller.
        unsafe { Buffer::import(&self.device.inner, pointer as u64, bytes as u64) }
    }

    /// Copies `data` to the start of `dst` in stream order. The slice is
    /// copied into staging memory now, so the caller may reuse it at once;
    /// the staging is released once the copy has run. A stream holds at
    /// most 64 MiB of staging: past that, `upload` waits for earlier
    /// uploads to run, so a producer cannot outrun the device without
    /// bound. `data` may be bytes (as in hrx) or any [`Scalar`].
    pub fn upload<'a, T: Scalar>(&self, dst: impl Into<View<'a>>, data: &[T]) -> Result<()> {
        let view = dst.into().slice(0, std::mem::size_of_val(data))?;
        let bytes = as_bytes(data);
        let (start, _) = view.range();
        for (i, piece) in bytes.chunks(STAGING_CHUNK as usize).enumerate() {
            let offset = start + i as u64 * STAGING_CHUNK;
            self.upload_piece(view.inner(), offset, piece)?;
        }
        Ok(())
    }

    /// Stages and enqueues one piece of an upload.
    fn upload_piece(&self, buffer: Arc<BufferInner>, offset: u64, piece: &[u8]) -> Result<()> {
        let lane = self.lane()?;
        // Both are taken before the staging copy is made and given back
        // once the copy has run.
        let charges = self.charge(piece.len() as u64, "upload staging")?;
        let staged = self.staging.stage(piece, &lane.state)?;
        lane.host_op(0, move || {
            let _charges = charges;
            Ok(buffer.write(offset, &staged.data)?)
        })
    }

    /// Staging bytes this stream holds for uploads that have not run yet.
    pub fn staging_bytes(&self) -> usize {
        self.staging.used() as usize
    }

    /// [`Stream::upload`] at byte `offset` of `dst`.
    pub fn upload_at<T: Scalar>(&self, dst: &Buffer, offset: usize, data: &[T]) -> Result<()> {
        self.upload(dst.slice_from(offset)?, data)
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

    /// [`Stream::upload_at`], then waits for the stream.
    pub fn upload_blocking_at<T: Scalar>(
        &self,
        dst: &Buffer,
        offset: usize,
        data: &[T],
    ) -> Result<()> {
        self.upload_at(dst, offset, data)?;
        self.synchronize()
    }

    /// Reads `src` in stream order: [`Readback::wait`] returns its bytes.
    pub fn read<'a>(&self, src: impl Into<View<'a>>) -> Result<Readback> {
        self.read_as(src)
    }

    /// Reads `src` in stream order as values of `T` (its length must be a
    /// whole number of them), straight into the vector `wait` returns.
    pub fn read_as<'a, T: Scalar>(&self, src: impl Into<View<'a>>) -> Result<Readback<T>> {
        let src = src.into();
        let (offset, len) = src.range();
        if len % T::SIZE as u64 != 0 {
            return Err(Error::Invalid(format!(
                "{len} bytes are not a whole number of {} values",
                T::NAME
            )));
        }
        let (buffer, n) = (src.inner(), len / T::SIZE as u64);
        let data = Arc::new(Mutex::new(None));
        let out = data.clone();
        let lane = self.lane()?;
        lane.host_op(0, move || {
            let mut values = zeroed::<T>(n as usize);
            buffer.read_into(offset, as_bytes_mut(&mut values))?;
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(values);
            Ok(())
        })?;
        Ok(Readback {
            marker: self.marker(&lane)?,
            data,
            stream: self.id,
        })
    }

    /// Reads `src` into `out` once the work before it has run: waits for
    /// the stream. `out` must be exactly as long as `src` (bytes, as in
    /// hrx, or any [`Scalar`]).
    pub fn read_blocking<'a, T: Scalar>(
        &self,
        src: impl Into<View<'a>>,
        out: &mut [T],
    ) -> Result<()> {
        let src = src.into();
        let want = std::mem::size_of_val(out);
        if src.len() != want {
            return Err(Error::Invalid(format!(
                "reading {} bytes into {want} bytes of memory",
                src.len()
            )));
        }
        self.synchronize()?;
        let (offset, _) = src.range();
        src.inner().read_into(offset, as_bytes_mut(out))?;
        Ok(())
    }

    /// [`Stream::read_blocking`] of `out`'s length at byte `offset` of
    /// `src`.
    pub fn read_blocking_at<T: Scalar>(
        &self,
        src: &Buffer,
        offset: usize,
        out: &mut [T],
    ) -> Result<()> {
        self.read_blocking(src.try_slice(offset, std::mem::size_of_val(out))?, out)
    }

    /// Reads `src` as values of `T` and waits: the values.
    pub fn read_vec<'a, T: Scalar>(&self, src: impl Into<View<'a>>) -> Result<Vec<T>> {
        self.read_as(src)?.wait(self)
    }

    /// Fills `dst` with the byte `value` in stream order.
    pub fn fill<'a>(&self, dst: impl Into<View<'a>>, value: u8) -> Result<()> {
        self.fill_pattern(dst, value)
    }

    /// Fills `dst` with a repeated pattern (a byte, a 32-bit word or an
    /// `f32`) in stream order. The view's length must be a whole number of
    /// patterns.
    pub fn fill_pattern<'a>(
        &self,
        dst: impl Into<View<'a>>,
        pattern: impl Into<Pattern>,
    ) -> Result<()> {
        self.run(&Op::fill(dst.into(), pattern.into())?)
    }

    /// A temporary buffer of at least `bytes` from the stream's scratch
    /// pool (sizes round up to a power of two, at least 256 bytes). Give it
    /// back with [`Stream::recycle`] so a later `scratch` can reuse it;
    /// dropping it frees it instead. Scratch counts against the stream's
    /// scratch limit ([`Stream::set_scratch_limit`], 256 MiB at first) and
    /// its memory budget.
    pub fn scratch(&self, bytes: usize) -> Result<Buffer> {
        let size = ScratchPool::size_for(bytes as u64)?;
        let mut pool = self.scratch.borrow_mut();
        if let Some(inner) = pool.take(size) {
            return Ok(Buffer { inner });
        }
        let charges = match self.scratch_charges(&pool, size) {
            Ok(c) => c,
            Err(_) => {
                // Idle buffers hold room another size may need.
                pool.trim();
                self.scratch_charges(&pool, size)?
            }
        };
        let pool_id = self.device.inner.device_pool;
        Buffer::allocate(
            &self.device.inner,
            pool_id,
            size,
            charges,
            // Recycled by the stream, never the program's to free.
            Origin::internal("Stream::scratch"),
        )
    }

    fn scratch_charges(&self, pool: &ScratchPool, size: u64) -> Result<Vec<Charge>> {
        let mut charges = vec![pool.limit.charge(size, "scratch")?];
        charges.extend(self.charge(size, "scratch")?);
        Ok(charges)
    }

    /// Returns a buffer from [`Stream::scratch`] to the pool. It is reused
    /// only once nothing holds it any more — queued work on any stream,
    /// graphs — so recycling right after enqueueing work on it is safe. A
    /// buffer from elsewhere is an error (and is freed as if dropped).
    pub fn recycle(&self, buffer: Buffer) -> Result<()> {
        let mut pool = self.scratch.borrow_mut();
        if !pool.owns(&buffer.inner) {
            return Err(Error::Invalid(format!(
                "{buffer:?} is not a scratch buffer of this stream"
            )));
        }
        pool.put(buffer.inner);
        Ok(())
    }

    /// Sets how many bytes of scratch the stream may hold (handed out and
    /// idle together); idle buffers beyond what is free are freed.
    /// Lowering it below what is handed out makes later `scratch` calls
    /// fail until enough is dropped or recycled.
    pub fn set_scratch_limit(&self, bytes: usize) {
        let bytes = bytes as u64;
        let mut pool = self.scratch.borrow_mut();
        pool.limit.set_limit(bytes);
        if pool.limit.used_bytes() > bytes {
            pool.trim();
        }
    }

    /// Bytes of scratch the stream holds (handed out and idle).
    pub fn scratch_bytes(&self) -> usize {
        self.scratch.borrow().limit.used()
    }

    /// Copies `src` to `dst` (equal lengths; overlap allowed) in stream
    /// order. Destination first, as `memcpy` and hrx.
    pub fn copy<'a, 'b>(&self, dst: impl Into<View<'a>>, src: impl Into<View<'b>>) -> Result<()> {
        self.run(&Op::copy(dst.into(), src.into())?)
    }

    /// Loads the code object file at `path` on the stream's device and
    /// returns its kernel `symbol` (the kernel's name; `name.kd` works
    /// too). Safe here, `unsafe` in hrx: see the crate docs.
    pub fn load(&self, path: impl AsRef<std::path::Path>, symbol: &str) -> Result<Kernel> {
        self.load_module(path)?.kernel(symbol)
    }

    /// Loads the kernel an [`Artifact`] names from its code object.
    pub fn load_artifact(&self, artifact: &Artifact) -> Result<Kernel> {
        self.load_bytes(artifact.code())?.kernel(artifact.symbol())
    }

    /// Loads a code object file on the stream's device: all its kernels.
    pub fn load_module(&self, path: impl AsRef<std::path::Path>) -> Result<Module> {
        Module::load(&self.device, path)
    }

    /// Loads a code object from bytes on the stream's device.
    pub fn load_bytes(&self, bytes: &[u8]) -> Result<Module> {
        Module::load_bytes(&self.device, bytes)
    }

    /// Compiles OpenCL C or HIP device source for the device and loads it.
    /// OpenCL C is compiled with `-cl-kernel-arg-info`, so argument
    /// errors can name the argument.
    #[cfg(feature = "compiler")]
    pub fn compile(&self, source: &str, language: crate::Language) -> Result<Module> {
        let mut compiler = self.device.compiler()?;
        if language == crate::Language::OpenCl {
            compiler = compiler.option("-cl-kernel-arg-info");
        }
        let code = compiler.compile(source, language)?;
        self.load_bytes(&code)
    }

    /// Runs `kernel` on `grid` workgroups of `block` work-items each, with
    /// its pointer arguments bound to `bindings` in order and its value
    /// arguments taken from `constants` (hrx's form; see [`Constants`]).
    /// Both counts are checked against [`Kernel::info`], the block against
    /// the kernel's compiled workgroup size. The buffers stay alive until
    /// the kernel has run. Safe: softgpu confines every access of the
    /// kernel to memory it may touch (the same call is `unsafe` in hrx,
    /// where the hardware does not).
    pub fn dispatch(
        &self,
        kernel: &Kernel,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        constants: &Constants,
        bindings: &[View<'_>],
    ) -> Result<()> {
        let args = crate::constants::args_of(kernel.info(), constants, bindings)?;
        self.dispatch_args(kernel, grid, block, &args)
    }

    /// Runs `kernel` on `grid` workgroups of `block` work-items each (as
    /// HIP counts) with typed arguments in the kernel's order. The
    /// arguments are checked against the kernel's metadata now; the
    /// buffers they name stay alive until the kernel has run.
    pub fn dispatch_args(
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
    fn check_dispatch(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        args: &Args,
    ) -> Result<([u32; 3], u32)> {
        // Device handles opened separately share the agent: compare that
        // (two instances' GPU 0 are different agents).
        if !Arc::ptr_eq(&kernel.device().agent, &self.device.inner.agent) {
            return Err(Error::Invalid(format!(
                "kernel {} was loaded on another device",
                kernel.name()
            )));
        }
        args.check(kernel.info())?;
        args.check_runtime(&self.device.inner)?;
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
        let prepared = self.prepare_dispatch(kernel, grid, block, args)?;
        let rt = self.device.inner.rt();
        rt.reporter.note_launch(prepared.held.0.addr);
        // One lane for both packets: the release must follow the dispatch.
        let lane = self.lane()?;
        lane.publish(0, prepared.packet)?;
        prepared.drain_printf(&lane, 0)?;
        lane.release_after(0, prepared.held)
    }

    /// Checks a dispatch and builds its kernarg segment and packet.
    pub(crate) fn prepare_dispatch(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        args: &Args,
    ) -> Result<PreparedDispatch> {
        let (items, lds) = self.check_dispatch(kernel, grid, block, args)?;
        let kernarg = self.kernarg(kernel, items, block, args)?;
        Ok(PreparedDispatch {
            packet: dispatch_packet(kernel, items, block, lds, kernarg.addr),
            printf: kernarg.services.printf.clone(),
            held: (kernarg, args.buffers(), kernel.clone()),
        })
    }

    /// Enqueues one host-side operation.
    fn run(&self, op: &Op) -> Result<()> {
        run_host_side(&*self.lane()?, 0, op)
    }

    /// Runs `f` on the host in stream order: after the work enqueued
    /// before it, before the work enqueued after it (CUDA's and HIP's
    /// host functions). An error it returns fails the stream like a
    /// kernel fault; if the stream has failed before `f`'s turn, `f` is
    /// dropped unrun.
    pub fn host_fn(&self, f: impl FnOnce() -> Result<(), String> + Send + 'static) -> Result<()> {
        self.lane()?
            .host_op(0, move || f().map_err(HostOpError::from))
    }

    /// Marks this point of the stream.
    pub fn record_event(&self) -> Result<Event> {
        Ok(Event {
            marker: self.marker(&*self.lane()?)?,
        })
    }

    /// Makes later work of this stream wait (on the device, not the host)
    /// until `event` has completed, whichever stream recorded it. If the
    /// event's stream fails before reaching it, this stream fails too.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.lane()?
            .wait_for(0, std::slice::from_ref(&event.marker.signal))
    }

    /// Starts recording a graph of work to replay on this stream with
    /// [`Stream::launch`].
    pub fn graph(&self) -> Result<Graph<'_>> {
        Ok(Graph::new(self))
    }

    /// Replays a finished graph in stream order: it starts after the work
    /// enqueued before it and work enqueued after it waits for all of it.
    /// Independent branches run concurrently.
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
    /// other failure) that happened in that work. After a wait has reported
    /// a failure the stream starts afresh; until then work enqueued after
    /// the failure does not run.
    pub fn synchronize(&self) -> Result<()> {
        self.submit()?.wait()
    }

    /// The current lane; a failed one is replaced by a fresh one once a
    /// wait has reported its failure. Until then work goes on being queued
    /// behind the failure, where it never runs, so nothing enqueued after
    /// a fault (say, after a `wait_event` that failed) runs out of order;
    /// every wait on it reports the failure.
    pub(crate) fn lane(&self) -> Result<std::cell::Ref<'_, Lane>> {
        let stale = {
            let state = &self.lane.borrow().state;
            state.has_failed() && state.reported.load(Ordering::Acquire)
        };
        if stale {
            let fresh = Lane::open(&self.device.inner)?;
            let mask = self.lane.borrow().requested_cu_mask();
            if let Some(mask) = &mask {
                fresh.set_cu_mask(Some(mask))?;
            }
            self.lane.replace(fresh).close();
        }
        Ok(self.lane.borrow())
    }

    /// Restricts the stream's dispatches to the compute units whose bits
    /// `mask` sets (one bit per unit, 32 per word; `None`: every unit), as
    /// `hsa_amd_queue_cu_set_mask` does for a queue, within the
    /// process-wide `HSA_CU_MASK`. Returns whether that mask turned off
    /// units asked for. A mask enabling one CU of a WGP pair is refused.
    pub fn set_cu_mask(&self, mask: Option<&[u32]>) -> Result<bool> {
        self.lane()?.set_cu_mask(mask)
    }

    /// The stream's CU mask as applied: one bit per compute unit.
    pub fn cu_mask(&self) -> Result<Vec<u32>> {
        self.lane()?.cu_mask()
    }

    /// A marker on the stream's own queue.
    fn marker(&self, lane: &Lane) -> Result<Marker> {
        lane.marker(0)
    }

    /// Builds the kernarg segment in the kernarg pool.
    fn kernarg(
        &self,
        kernel: &Kernel,
        items: [u32; 3],
        block: [u32; 3],
        args: &Args,
    ) -> Result<Kernarg> {
        let services = crate::services::provide(&self.device.inner, kernel, &args.services)?;
        let bytes = softgpu_runtime::exec::build_kernarg_with(
            kernel.kref.kernel(),
            items,
            block,
            args.dynamic_lds,
            &args.exec_args(kernel.info()),
            &services.services,
        )
        .map_err(|e| Error::Launch {
            kernel: kernel.name().into(),
            why: e.to_string(),
        })?;
        let device = self.device.inner.clone();
        let len = bytes.len() as u64;
        let addr = device.take_kernarg(len)?;
        let kernarg = Kernarg {
            device,
            addr,
            bytes: len,
            services,
        };
        kernarg
            .device
            .rt()
            .arena
            .write(addr, &bytes)
            .map_err(softgpu_runtime::Error::from)?;
        Ok(kernarg)
    }
}

/// Enqueues a fill or copy on queue `k` of `lane` as a host operation
/// holding what it uses (a join enqueues nothing).
pub(crate) fn run_host_side(lane: &Lane, k: usize, op: &Op) -> Result<()> {
    match op {
        Op::Fill {
            buffer,
            offset,
            len,
            pattern,
        } => {
            let (buffer, offset, len, pattern) = (buffer.clone(), *offset, *len, pattern.clone());
            lane.host_op(k, move || {
                // `Op::fill` made `len` a whole number of patterns.
                let bytes = pattern.repeat(len as usize / pattern.len().max(1));
                Ok(buffer.write(offset, &bytes)?)
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
            lane.host_op(k, move || Ok(to.write(to_at, &from.read(from_at, len)?)?))
        }
        Op::Host(f) => {
            let f = f.clone();
            lane.host_op(k, move || f().map_err(HostOpError::from))
        }
        Op::Join => Ok(()),
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Queued work holds buffers, kernargs and signal handles: let it
        // finish (or fail) before the queues go.
        if !self.lane.get_mut().state.has_failed() {
            if let Ok(submission) = self.submit() {
                let _ = submission.wait();
            }
        }
        self.lane.get_mut().close();
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
    softgpu_runtime::exec::check_private_segment(kernel.kref.kernel(), 0).map_err(|e| match e {
        softgpu_runtime::exec::DispatchError::BadLaunch { why, .. } => bad(why),
        other => bad(other.to_string()),
    })?;
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
    // Barrier bit set, system-scope acquire and release fences.
    let header = Header {
        packet_type: packet_type::KERNEL_DISPATCH,
        barrier: true,
        acquire_scope: 2,
        release_scope: 2,
    };
    KernelDispatchPacket {
        header: header.bits(),
        setup: softgpu_runtime::packet::dimensions(items),
        group_segment_size: lds,
        kernel_object: kernel.kref.object(),
        kernarg_address: kernarg,
        ..KernelDispatchPacket::default()
    }
    // launch_shape checked each dimension fits in 16 bits.
    .with_shape(block, items)
    .to_bytes()
}
