//! A stream's scratch pool: temporary device buffers reused across
//! iterations instead of allocated and freed each time.
//!
//! Sizes are rounded up to a power of two so similar requests share
//! buffers. A recycled buffer is handed out again only once nothing else
//! holds it — no queued work of any stream, no graph — so reuse can never
//! alias live data. Everything the pool made (handed out or idle) counts
//! against its limit.

use std::sync::Arc;

use crate::budget::MemoryBudget;
use crate::buffer::BufferInner;
use crate::error::{Error, Result};

/// The scratch limit a stream starts with.
pub(crate) const DEFAULT_SCRATCH_LIMIT: u64 = 256 << 20;
/// The smallest scratch buffer.
const MIN_SCRATCH: u64 = 256;

pub(crate) struct ScratchPool {
    /// Bytes of scratch the pool's buffers hold.
    pub limit: MemoryBudget,
    /// Recycled buffers.
    idle: Vec<Arc<BufferInner>>,
}

impl ScratchPool {
    pub fn new() -> ScratchPool {
        ScratchPool {
            limit: MemoryBudget::of_bytes(DEFAULT_SCRATCH_LIMIT),
            idle: Vec::new(),
        }
    }

    /// The size a request for `bytes` is served with.
    pub fn size_for(bytes: u64) -> Result<u64> {
        bytes
            .max(MIN_SCRATCH)
            .checked_next_power_of_two()
            .ok_or_else(|| Error::Invalid(format!("a scratch buffer of {bytes} bytes")))
    }

    /// An idle buffer of `size` bytes nothing else holds.
    pub fn take(&mut self, size: u64) -> Option<Arc<BufferInner>> {
        let at = self
            .idle
            .iter()
            .position(|b| b.len == size && Arc::strong_count(b) == 1)?;
        Some(self.idle.swap_remove(at))
    }

    /// Frees the idle buffers nothing else holds, returning their bytes to
    /// the limit (and to any budget).
    pub fn trim(&mut self) {
        self.idle.retain(|b| Arc::strong_count(b) > 1);
    }

    /// Whether `buffer` was made by this pool.
    pub fn owns(&self, buffer: &BufferInner) -> bool {
        buffer.charges.iter().any(|c| c.is_to(&self.limit))
    }

    pub fn put(&mut self, buffer: Arc<BufferInner>) {
        self.idle.push(buffer);
    }
}
