//! Bounded upload staging.
//!
//! [`crate::Stream::upload`] copies the caller's slice into host staging
//! so the caller may reuse it at once. Without a bound, a loop of uploads
//! to a busy stream would pile up staging without limit; with one, the
//! uploader waits for earlier uploads to run once the stream holds
//! [`STAGING_LIMIT`] bytes of staging.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::error::Result;
use crate::event::LaneState;

/// Staging bytes one stream may hold.
pub(crate) const STAGING_LIMIT: u64 = 64 << 20;
/// The largest piece an upload is staged in, so one big upload streams
/// through the bound instead of needing all of it at once.
pub(crate) const STAGING_CHUNK: u64 = STAGING_LIMIT / 4;
/// Staging buffers a stream keeps for reuse (their capacity together stays
/// within [`STAGING_LIMIT`]).
const SPARE_BUFFERS: usize = 8;
/// How often a waiting uploader rechecks whether its stream failed.
const RECHECK: Duration = Duration::from_millis(10);

/// One stream's staging account, and the staging buffers it reuses (a
/// fresh buffer costs a page fault per 4 KiB on first touch).
pub(crate) struct Staging {
    used: Mutex<u64>,
    released: Condvar,
    spare: Mutex<Vec<Vec<u8>>>,
}

/// The staging copy of one piece of a queued upload, given back when it
/// has run (or been discarded).
pub(crate) struct Lease {
    staging: Arc<Staging>,
    pub data: Vec<u8>,
}

impl Staging {
    pub fn new() -> Arc<Staging> {
        Arc::new(Staging {
            used: Mutex::new(0),
            released: Condvar::new(),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        *lock(&self.used)
    }

    /// A staging copy of `piece` (at most [`STAGING_CHUNK`] bytes), once
    /// the stream holds little enough staging; fails if the stream fails
    /// while waiting.
    pub fn stage(self: &Arc<Staging>, piece: &[u8], lane: &LaneState) -> Result<Lease> {
        let bytes = piece.len() as u64;
        debug_assert!(bytes <= STAGING_CHUNK);
        self.reserve(bytes, lane)?;
        let mut data = lock(&self.spare).pop().unwrap_or_default();
        data.clear();
        data.extend_from_slice(piece);
        Ok(Lease {
            staging: self.clone(),
            data,
        })
    }

    /// Waits until `bytes` more fit under the limit, and takes them.
    fn reserve(&self, bytes: u64, lane: &LaneState) -> Result<()> {
        let mut used = lock(&self.used);
        while *used + bytes > STAGING_LIMIT {
            if lane.has_failed() {
                return Err(lane.error());
            }
            used = self
                .released
                .wait_timeout(used, RECHECK)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *used += bytes;
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for Lease {
    fn drop(&mut self) {
        let data = std::mem::take(&mut self.data);
        let bytes = data.len() as u64;
        let mut spare = lock(&self.staging.spare);
        let kept: usize = spare.iter().map(Vec::capacity).sum();
        if spare.len() < SPARE_BUFFERS && (kept + data.capacity()) as u64 <= STAGING_LIMIT {
            spare.push(data);
        }
        drop(spare);
        *lock(&self.staging.used) -= bytes;
        self.staging.released.notify_all();
    }
}
