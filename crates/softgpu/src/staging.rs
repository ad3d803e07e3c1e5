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
/// How often a waiting uploader rechecks whether its stream failed.
const RECHECK: Duration = Duration::from_millis(10);

/// One stream's staging account.
pub(crate) struct Staging {
    used: Mutex<u64>,
    released: Condvar,
}

/// Staging bytes held by one queued upload, returned when it has run (or
/// been discarded).
pub(crate) struct Lease {
    staging: Arc<Staging>,
    bytes: u64,
}

impl Staging {
    pub fn new() -> Arc<Staging> {
        Arc::new(Staging {
            used: Mutex::new(0),
            released: Condvar::new(),
        })
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        *self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `bytes` (at most [`STAGING_CHUNK`]), waiting while the stream
    /// holds too much; fails if the stream fails meanwhile.
    pub fn lease(self: &Arc<Staging>, bytes: u64, lane: &LaneState) -> Result<Lease> {
        debug_assert!(bytes <= STAGING_CHUNK);
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
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
        Ok(Lease {
            staging: self.clone(),
            bytes,
        })
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut used = self.staging.used.lock().unwrap_or_else(|e| e.into_inner());
        *used -= self.bytes;
        self.staging.released.notify_all();
    }
}
