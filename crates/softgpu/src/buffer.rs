//! Buffers and views.

use std::ffi::c_void;
use std::sync::Arc;

use crate::device::DeviceInner;
use crate::error::{Error, Result};

/// The allocation behind a [`Buffer`]. Queued operations hold it too, so
/// the memory is freed only once no queued work can touch it.
pub(crate) struct BufferInner {
    pub device: Arc<DeviceInner>,
    pub addr: u64,
    pub len: u64,
    /// Host memory registered by [`crate::Stream::import_host`], which is
    /// unregistered rather than freed.
    pub imported: bool,
    /// Budget charges (a stream's budget, a scratch pool's limit),
    /// released with the memory.
    pub charges: Vec<crate::budget::Charge>,
    /// The call that frees the memory, for reports of later accesses to
    /// it (set by [`Buffer::freed_by`]; else "dropping its Buffer").
    pub freed_by: std::sync::OnceLock<&'static str>,
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        let rt = &self.device.rt();
        let _ = if self.imported {
            rt.unlock(self.addr)
        } else {
            let by = self.freed_by.get().copied();
            rt.free_by(self.addr, by.unwrap_or("dropping its Buffer"))
        };
    }
}

impl BufferInner {
    /// Writes `bytes` at `offset`; bounds were checked when the view was made.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> Result<(), softgpu_runtime::exec::MemError> {
        let arena = &self.device.rt().arena;
        arena.write(self.addr + offset, bytes)
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, softgpu_runtime::exec::MemError> {
        let mut out = vec![0u8; len as usize];
        self.read_into(offset, &mut out)?;
        Ok(out)
    }

    /// Reads `out.len()` bytes at `offset` into `out`.
    pub fn read_into(
        &self,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), softgpu_runtime::exec::MemError> {
        self.device.rt().arena.read(self.addr + offset, out)
    }
}

/// Device memory. It belongs to its device, so any stream of that device
/// may use it; dropping it while work is queued is safe because the queued
/// work keeps the memory alive until it has run.
pub struct Buffer {
    pub(crate) inner: Arc<BufferInner>,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Buffer({:#x}, {} bytes)",
            self.inner.addr, self.inner.len
        )
    }
}

impl Buffer {
    /// Names the call that will free the memory when the last handle to it
    /// is dropped (`hipFree`, say): a kernel that touches it afterwards is
    /// reported as touching memory "freed by" that call. The first name
    /// given stays.
    pub fn freed_by(&self, call: &'static str) {
        let _ = self.inner.freed_by.set(call);
    }

    pub(crate) fn allocate(
        device: &Arc<DeviceInner>,
        pool: u64,
        bytes: u64,
        charges: Vec<crate::budget::Charge>,
        origin: softgpu_runtime::exec::Origin,
    ) -> Result<Buffer> {
        // A zero-byte buffer still gets an address (one granule), so views
        // and pointers to it are valid, if useless.
        let access = softgpu_runtime::exec::Access::ReadWrite;
        let addr = device
            .rt()
            .allocate_with(pool, bytes.max(1), origin, access)?;
        Ok(Buffer {
            inner: Arc::new(BufferInner {
                device: device.clone(),
                addr,
                len: bytes,
                imported: false,
                charges,
                freed_by: Default::default(),
            }),
        })
    }

    /// Registers `len` bytes of host memory at `addr` with the device,
    /// zero-copy.
    ///
    /// # Safety
    /// As for [`crate::Stream::import_host`].
    pub(crate) unsafe fn import(device: &Arc<DeviceInner>, addr: u64, len: u64) -> Result<Buffer> {
        // SAFETY: the caller keeps the memory valid while the buffer lives.
        let addr = unsafe { device.rt().lock(addr, len) }?;
        Ok(Buffer {
            inner: Arc::new(BufferInner {
                device: device.clone(),
                addr,
                len,
                imported: true,
                charges: Vec::new(),
                freed_by: Default::default(),
            }),
        })
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.inner.len as usize
    }

    /// The device address kernels see, as a pointer (it equals the host
    /// address here; hrx's signature, so it cannot fail in softgpu).
    pub fn device_ptr(&self) -> Result<*mut c_void> {
        Ok(self.inner.addr as *mut c_void)
    }

    /// The device address as an integer (what a kernel argument holds).
    pub fn address(&self) -> u64 {
        self.inner.addr
    }

    /// A view of the whole buffer, what a kernel's pointer argument binds.
    pub fn binding(&self) -> View<'_> {
        View {
            buffer: self,
            offset: 0,
            len: self.inner.len,
        }
    }

    /// The view of `length` bytes from `offset`, or an error when it
    /// leaves the buffer (or the sum overflows).
    pub fn try_slice(&self, offset: usize, length: usize) -> Result<View<'_>> {
        self.binding().slice(offset, length)
    }

    /// Like [`Buffer::try_slice`] but panics on a bad range, as slicing a
    /// Rust slice does.
    pub fn slice(&self, offset: usize, length: usize) -> View<'_> {
        self.try_slice(offset, length)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The view from `offset` to the end of the buffer.
    pub fn slice_from(&self, offset: usize) -> Result<View<'_>> {
        let rest = self.bytes().checked_sub(offset).ok_or(Error::OutOfBounds {
            start: offset as u64,
            end: self.inner.len,
            len: self.inner.len,
        })?;
        self.try_slice(offset, rest)
    }
}

/// A byte range of a buffer. `Copy` and borrowed, so it cannot outlive the
/// buffer; queueing work with it takes a reference on the buffer.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    buffer: &'a Buffer,
    offset: u64,
    len: u64,
}

impl<'a> From<&'a Buffer> for View<'a> {
    fn from(b: &'a Buffer) -> View<'a> {
        b.binding()
    }
}

impl<'a> View<'a> {
    /// The buffer viewed.
    pub fn owner(&self) -> &'a Buffer {
        self.buffer
    }

    /// Byte offset into the buffer.
    pub fn offset(&self) -> usize {
        self.offset as usize
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the view has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Device address of the view's first byte.
    pub fn address(&self) -> u64 {
        self.buffer.inner.addr + self.offset
    }

    /// `length` bytes from `offset` of this view (relative to the view).
    /// Bounds are computed with checked arithmetic, so `usize::MAX`-sized
    /// ranges cannot wrap into bounds.
    pub fn slice(&self, offset: usize, length: usize) -> Result<View<'a>> {
        let (start, len) = (offset as u64, length as u64);
        let out = Error::OutOfBounds {
            start,
            end: start.saturating_add(len),
            len: self.len,
        };
        let end = start.checked_add(len).ok_or(out.clone())?;
        if end > self.len {
            return Err(out);
        }
        Ok(View {
            buffer: self.buffer,
            offset: self.offset + start,
            len,
        })
    }

    pub(crate) fn inner(&self) -> Arc<BufferInner> {
        self.buffer.inner.clone()
    }

    /// Byte offset and length as the internals count them.
    pub(crate) fn range(&self) -> (u64, u64) {
        (self.offset, self.len)
    }
}
