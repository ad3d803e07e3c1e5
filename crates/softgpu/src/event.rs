//! Completion tracking: submissions, events and readbacks.
//!
//! Each is a signal that a host operation in the stream decrements when
//! the stream reaches it, plus the stream's failure state, so a waiter
//! learns of a fault instead of waiting forever for work that will never
//! run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use softgpu_runtime::signal::{wait_any, Condition, Order, Signal, WaitHint};

use crate::error::{Error, Result};
use crate::scalar::{from_bytes, Scalar};

/// The failure state of one queue of a stream, shared with its error
/// callback and with everything waiting on that queue.
pub(crate) struct LaneState {
    /// Becomes 1 when the queue stops on an error.
    pub failed: Arc<Signal>,
    pub error: Mutex<Option<Error>>,
    /// Whether a waiter has returned the error to the user already.
    pub reported: AtomicBool,
}

impl LaneState {
    pub fn new() -> LaneState {
        LaneState {
            failed: Arc::new(Signal::new(0)),
            error: Mutex::new(None),
            reported: AtomicBool::new(false),
        }
    }

    /// Called from a queue's error callback. The first failure is the
    /// one reported: a later one on another queue of the lane is usually
    /// its consequence (a barrier whose dependency failed).
    pub fn fail(&self, error: Error) {
        self.error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(error);
        self.failed.store(1, Order::Release);
    }

    pub fn has_failed(&self) -> bool {
        self.failed.load(Order::Acquire) != 0
    }

    /// The error, marking it reported.
    pub fn error(&self) -> Error {
        self.reported.store(true, Ordering::Release);
        self.peek()
    }

    /// The error, without marking it reported: the stream goes on
    /// refusing work until a wait returns it.
    pub fn peek(&self) -> Error {
        let e = self.error.lock().unwrap_or_else(|e| e.into_inner());
        e.clone().unwrap_or(Error::Stopped)
    }
}

/// A point in a stream: completes when the stream reaches it.
#[derive(Clone)]
pub(crate) struct Marker {
    pub signal: Arc<Signal>,
    pub lane: Arc<LaneState>,
}

impl Marker {
    fn is_complete(&self) -> bool {
        self.signal.load(Order::Acquire) == 0
    }

    /// Whether the stream has passed the marker; the stream's failure if
    /// it stopped first (still to be reported by a wait).
    fn poll(&self) -> Result<bool> {
        if self.is_complete() {
            Ok(true)
        } else if self.lane.has_failed() {
            Err(self.lane.peek())
        } else {
            Ok(false)
        }
    }

    /// Blocks until the stream reaches the marker or fails first.
    fn wait(&self) -> Result<()> {
        let watched = [
            (self.signal.clone(), Condition::Eq, 0),
            (self.lane.failed.clone(), Condition::Ne, 0),
        ];
        while wait_any(&watched, None, WaitHint::Active).is_none() {}
        if self.is_complete() {
            Ok(())
        } else {
            Err(self.lane.error())
        }
    }
}

/// Work submitted so far on a stream, to wait for.
#[derive(Clone)]
pub struct Submission {
    pub(crate) marker: Marker,
}

impl Submission {
    /// Whether the work has run; the failure (a kernel fault, say) if the
    /// stream stopped before it.
    pub fn is_complete(&self) -> Result<bool> {
        self.marker.poll()
    }

    /// Waits for the work; a kernel fault (or other stream failure) before
    /// this point is returned as the error.
    pub fn wait(self) -> Result<()> {
        self.marker.wait()
    }
}

/// A point recorded in a stream, for other streams to wait on and for
/// timing. `Send + Sync`: any thread may wait on it.
#[derive(Clone)]
pub struct Event {
    pub(crate) marker: Marker,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event(complete: {})", self.marker.is_complete())
    }
}

impl Event {
    /// Whether the stream has passed the event; the failure if the
    /// stream stopped before it.
    pub fn is_complete(&self) -> Result<bool> {
        self.marker.poll()
    }

    /// Blocks until the stream passes the event.
    pub fn synchronize(&self) -> Result<()> {
        self.marker.wait()
    }

    /// Time from `earlier` to this event, waiting for both. Events of
    /// different streams may have run in either order; then the result is
    /// zero rather than negative.
    pub fn elapsed_since(&self, earlier: &Event) -> Result<Duration> {
        self.synchronize()?;
        earlier.synchronize()?;
        let at = |e: &Event| e.marker.signal.times().map_or(0, |(_, end)| end);
        Ok(Duration::from_nanos(at(self).saturating_sub(at(earlier))))
    }
}

/// Values a stream will read back (bytes unless read with
/// [`crate::Stream::read_as`]); [`Readback::wait`] returns them.
pub struct Readback<T: Scalar = u8> {
    pub(crate) marker: Marker,
    pub(crate) data: Arc<Mutex<Option<Vec<T>>>>,
    /// The [`crate::Stream::id`] of the stream that reads.
    pub(crate) stream: usize,
}

impl<T: Scalar> Readback<T> {
    /// Whether the read has run; the failure if the stream stopped first.
    pub fn is_complete(&self) -> Result<bool> {
        self.marker.poll()
    }

    /// Waits for the read on `stream`, the stream that reads, and returns
    /// the values (a readback of another stream is an error).
    pub fn wait(self, stream: &crate::Stream) -> Result<Vec<T>> {
        if stream.id() != self.stream {
            return Err(Error::Invalid(format!(
                "a readback of stream {} waited on stream {}",
                self.stream,
                stream.id()
            )));
        }
        self.marker.wait()?;
        let mut data = self.data.lock().unwrap_or_else(|e| e.into_inner());
        data.take().ok_or(Error::Stopped)
    }
}

impl Readback<u8> {
    /// Waits and returns the bytes as values of `T`.
    pub fn wait_as<T: Scalar>(self, stream: &crate::Stream) -> Result<Vec<T>> {
        let bytes = self.wait(stream)?;
        if bytes.len() % T::SIZE != 0 {
            return Err(Error::Invalid(format!(
                "{} bytes are not a whole number of {} values",
                bytes.len(),
                T::NAME
            )));
        }
        Ok(from_bytes(&bytes))
    }
}
