//! Lanes: the AQL queues behind a stream, and how work gets onto them.
//!
//! A lane's first queue carries the stream's own order. A graph replay may
//! open more queues (up to [`MAX_QUEUES`]) so independent branches run at
//! the same time; all of a lane's queues share one failure state, so a
//! fault on any of them is the stream's fault.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use softgpu_runtime::queue::{packet_type, HostOp, HostOpError, Queue, QueueSpec};
use softgpu_runtime::signal::{Order, Signal};

use crate::device::DeviceInner;
use crate::error::{Error, Result};
use crate::event::{LaneState, Marker};

/// Packets in each queue's ring.
const RING_PACKETS: u32 = 1024;
/// Sleep while a ring is full.
const RING_FULL_NAP: Duration = Duration::from_micros(20);
/// Queues one lane may use: the stream's own plus graph branches.
pub(crate) const MAX_QUEUES: usize = 4;
/// Dependency signals one barrier packet holds.
const BARRIER_SLOTS: usize = 5;

/// The queues a stream currently feeds, with their shared failure state.
/// A failed lane stops for good, so the stream replaces it.
pub(crate) struct Lane {
    device: Arc<DeviceInner>,
    pub state: Arc<LaneState>,
    /// `queues[0]` is the stream's order; the others open on demand.
    queues: RefCell<Vec<Arc<Queue>>>,
    /// The CU mask every queue of the lane gets (`None`: every unit).
    cu_mask: RefCell<Option<Vec<u32>>>,
}

/// Completes a marker's signal when its host operation runs. If the
/// operation is dropped unrun (its queue failed or closed) the signal goes
/// to -1 instead, which fails any barrier waiting for it, so a failure
/// propagates to dependent queues instead of leaving them waiting forever.
struct Completion {
    signal: Arc<Signal>,
    done: bool,
}

impl Completion {
    fn complete(mut self) {
        let now = softgpu_runtime::trace::now_ns();
        self.signal.set_times(now, now);
        self.signal.subtract(1, Order::Release);
        self.done = true;
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        if !self.done {
            self.signal.store(-1, Order::Release);
        }
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
        let _ = self.device.rt().signals.remove(self.handle);
    }
}

impl Lane {
    pub fn open(device: &Arc<DeviceInner>) -> Result<Lane> {
        let lane = Lane {
            device: device.clone(),
            state: Arc::new(LaneState::new()),
            queues: RefCell::new(Vec::new()),
            cu_mask: RefCell::new(None),
        };
        lane.queue(0)?;
        Ok(lane)
    }

    /// Sets the CU mask of every queue of the lane, now and opened later
    /// (`None`: every unit); says whether the process-wide mask reduced
    /// it.
    pub fn set_cu_mask(&self, mask: Option<&[u32]>) -> Result<bool> {
        let mut reduced = false;
        for q in self.queues.borrow().iter() {
            reduced |= q.set_cu_mask(mask)? == softgpu_runtime::cu_mask::Applied::Reduced;
        }
        *self.cu_mask.borrow_mut() = mask.map(<[u32]>::to_vec);
        Ok(reduced)
    }

    /// The CU mask as applied (one bit per unit).
    pub fn cu_mask(&self) -> Result<Vec<u32>> {
        Ok(self.queue(0)?.cu_mask())
    }

    /// The mask given to [`Lane::set_cu_mask`], for a lane replacing this
    /// one.
    pub fn requested_cu_mask(&self) -> Option<Vec<u32>> {
        self.cu_mask.borrow().clone()
    }

    /// Queue `k`, opening queues up to it if needed.
    fn queue(&self, k: usize) -> Result<Arc<Queue>> {
        debug_assert!(k < MAX_QUEUES);
        if let Some(q) = self.queues.borrow().get(k) {
            return Ok(q.clone());
        }
        let mut queues = self.queues.borrow_mut();
        while queues.len() <= k {
            let theirs = self.state.clone();
            let spec = QueueSpec {
                size: RING_PACKETS,
                single: true,
                on_error: Some(Box::new(move |e| theirs.fail(Error::from(e)))),
            };
            let queue = self
                .device
                .rt()
                .create_queue(self.device.agent_handle, spec)?;
            if let Some(mask) = &*self.cu_mask.borrow() {
                queue.set_cu_mask(Some(mask))?;
            }
            queues.push(queue);
        }
        Ok(queues[k].clone())
    }

    /// Publishes one packet on queue `k`: body first, then the header
    /// atomically, then the doorbell, as an HSA client does.
    pub fn publish(&self, k: usize, packet: [u8; 64]) -> Result<()> {
        let q = self.queue(k)?;
        self.publish_on(&q, packet, true)
    }

    /// Publishes a packet on queue `k` without ringing the doorbell, for a
    /// batch (a graph replay) whose last packet rings: the processor takes
    /// every packet whose header is valid, so one ring serves them all.
    pub fn publish_quietly(&self, k: usize, packet: [u8; 64]) -> Result<()> {
        let q = self.queue(k)?;
        self.publish_on(&q, packet, false)
    }

    fn publish_on(&self, q: &Queue, packet: [u8; 64], ring: bool) -> Result<()> {
        let index = q.write_index.fetch_add(1, Ordering::AcqRel);
        while index - q.read_index.load(Ordering::Acquire) >= q.size as u64 {
            if self.state.has_failed() {
                return Err(self.state.error());
            }
            // Quiet packets ahead of us must be running to make room.
            q.doorbell.store(index as i64 - 1, Order::Release);
            std::thread::sleep(RING_FULL_NAP);
        }
        let arena = &self.device.rt().arena;
        let slot = q.ring + (index % q.size as u64) * 64;
        arena
            .write(slot + 4, &packet[4..])
            .map_err(softgpu_runtime::Error::from)?;
        let word = u32::from_le_bytes(packet[0..4].try_into().expect("4 bytes"));
        arena
            .store_u32(slot, word)
            .map_err(softgpu_runtime::Error::from)?;
        if ring {
            q.doorbell.store(index as i64, Order::Release);
        }
        Ok(())
    }

    /// Enqueues a host operation on queue `k`.
    pub fn host_op(
        &self,
        k: usize,
        op: impl FnOnce() -> Result<(), HostOpError> + Send + 'static,
    ) -> Result<()> {
        let q = self.queue(k)?;
        // On a failed queue the runtime drops the operation at once, so
        // what it holds is released (and a signal point goes to -1).
        let op: HostOp = Box::new(op);
        let packet = q.host_op_packet(op, 0);
        self.publish_on(&q, packet, true)
    }

    /// Keeps `held` alive until queue `k` reaches this point.
    pub fn release_after(&self, k: usize, held: impl Send + 'static) -> Result<()> {
        self.host_op(k, move || {
            drop(held);
            Ok(())
        })
    }

    /// A fresh signal that queue `k` completes (to 0, stamped with the
    /// time) when it reaches this point, or sets to -1 if it never will.
    pub fn signal_point(&self, k: usize) -> Result<Arc<Signal>> {
        let signal = Arc::new(Signal::new(1));
        let completion = Completion {
            signal: signal.clone(),
            done: false,
        };
        self.host_op(k, move || {
            completion.complete();
            Ok(())
        })?;
        Ok(signal)
    }

    /// A marker on queue `k`.
    pub fn marker(&self, k: usize) -> Result<Marker> {
        Ok(Marker {
            signal: self.signal_point(k)?,
            lane: self.state.clone(),
        })
    }

    /// Makes queue `k` wait (on the device) until every signal in `deps`
    /// is 0; a dependency that fails fails this lane too.
    pub fn wait_for(&self, k: usize, deps: &[Arc<Signal>]) -> Result<()> {
        for group in deps.chunks(BARRIER_SLOTS) {
            let handles: Vec<SignalHandle> = group
                .iter()
                .map(|s| SignalHandle {
                    device: self.device.clone(),
                    handle: self.device.rt().signals.insert(s.clone()),
                })
                .collect();
            let mut p = [0u8; 64];
            let header = packet_type::BARRIER_AND as u16 | 1 << 8 | 2 << 9 | 2 << 11;
            p[0..2].copy_from_slice(&header.to_le_bytes());
            for (slot, h) in handles.iter().enumerate() {
                p[8 + 8 * slot..16 + 8 * slot].copy_from_slice(&h.handle.to_le_bytes());
            }
            self.publish(k, p)?;
            self.release_after(k, handles)?;
        }
        Ok(())
    }

    /// Stops every queue and drops what their unrun host operations hold
    /// (their markers go to -1).
    pub fn close(&self) {
        for queue in self.queues.borrow().iter() {
            let _ = self.device.rt().destroy_queue(queue.address);
            queue.discard_host_ops();
        }
    }
}
