//! Buffers and views.

use std::ops::{Bound, RangeBounds};
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
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        let rt = &self.device.rt;
        let _ = if self.imported {
            rt.unlock(self.addr)
        } else {
            rt.free_by(self.addr, "dropping its Buffer")
        };
    }
}

impl BufferInner {
    /// Writes `bytes` at `offset`; bounds were checked when the view was made.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> Result<(), String> {
        let arena = &self.device.rt.arena;
        arena
            .write(self.addr + offset, bytes)
            .map_err(|e| e.to_string())
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; len as usize];
        self.read_into(offset, &mut out)?;
        Ok(out)
    }

    /// Reads `out.len()` bytes at `offset` into `out`.
    pub fn read_into(&self, offset: u64, out: &mut [u8]) -> Result<(), String> {
        let arena = &self.device.rt.arena;
        arena
            .read(self.addr + offset, out)
            .map_err(|e| e.to_string())
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
    pub(crate) fn allocate(
        device: &Arc<DeviceInner>,
        pool: u64,
        bytes: u64,
        charges: Vec<crate::budget::Charge>,
        api: &'static str,
    ) -> Result<Buffer> {
        // A zero-byte buffer still gets an address (one granule), so views
        // and pointers to it are valid, if useless.
        let origin = softgpu_exec::arena::Origin::new(api);
        let access = softgpu_exec::arena::Access::ReadWrite;
        let addr = device
            .rt
            .allocate_with(pool, bytes.max(1), origin, access)?;
        Ok(Buffer {
            inner: Arc::new(BufferInner {
                device: device.clone(),
                addr,
                len: bytes,
                imported: false,
                charges,
            }),
        })
    }

    /// Registers host memory with the device, zero-copy.
    ///
    /// # Safety
    /// As for [`crate::Stream::import_host`].
    pub(crate) unsafe fn import(device: &Arc<DeviceInner>, data: &mut [u8]) -> Result<Buffer> {
        let (addr, len) = (data.as_mut_ptr() as u64, data.len() as u64);
        // SAFETY: the caller keeps the memory valid while the buffer lives.
        let addr = unsafe { device.rt.lock(addr, len) }?;
        Ok(Buffer {
            inner: Arc::new(BufferInner {
                device: device.clone(),
                addr,
                len,
                imported: true,
                charges: Vec::new(),
            }),
        })
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.inner.len
    }

    /// The device address kernels see (equal to the host address here).
    pub fn device_ptr(&self) -> u64 {
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

    /// A view of `range` (bytes), or an error when it leaves the buffer.
    pub fn try_slice(&self, range: impl RangeBounds<u64>) -> Result<View<'_>> {
        self.binding().try_slice(range)
    }

    /// Like [`Buffer::try_slice`] but panics on a bad range, as slicing a
    /// Rust slice does.
    pub fn slice(&self, range: impl RangeBounds<u64>) -> View<'_> {
        self.try_slice(range).unwrap_or_else(|e| panic!("{e}"))
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
    pub fn buffer(&self) -> &'a Buffer {
        self.buffer
    }

    /// Byte offset into the buffer.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Length in bytes.
    pub fn bytes(&self) -> u64 {
        self.len
    }

    /// Device address of the view's first byte.
    pub fn device_ptr(&self) -> u64 {
        self.buffer.inner.addr + self.offset
    }

    /// A sub-range of this view. Every bound is computed with checked
    /// arithmetic, so `u64::MAX`-sized ranges cannot wrap into bounds.
    pub fn try_slice(&self, range: impl RangeBounds<u64>) -> Result<View<'a>> {
        let (start, end) = resolve(&range, self.len)?;
        Ok(View {
            buffer: self.buffer,
            offset: self.offset + start,
            len: end - start,
        })
    }

    /// Like [`View::try_slice`] but panics on a bad range.
    pub fn slice(&self, range: impl RangeBounds<u64>) -> View<'a> {
        self.try_slice(range).unwrap_or_else(|e| panic!("{e}"))
    }

    pub(crate) fn inner(&self) -> Arc<BufferInner> {
        self.buffer.inner.clone()
    }
}

/// The `[start, end)` a range names inside `len` bytes.
fn resolve(range: &impl RangeBounds<u64>, len: u64) -> Result<(u64, u64)> {
    let overflow = |start: u64| Error::OutOfBounds {
        start,
        end: u64::MAX,
        len,
    };
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).ok_or(overflow(s))?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1).ok_or(overflow(start))?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::OutOfBounds { start, end, len });
    }
    Ok((start, end))
}
