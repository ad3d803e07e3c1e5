//! Global wave sync: the `ds_gws_barrier` barriers that HIP's cooperative
//! groups use for a grid-wide `sync()` (`__ockl_grid_sync`).
//!
//! A GWS barrier spans workgroups, so it can only complete if every
//! workgroup that will arrive is running at the same time. A dispatch of a
//! program that uses GWS therefore runs each workgroup on its own host
//! thread (`dispatch.rs`), and a wave arriving at a barrier blocks its
//! thread until the expected number of waves has arrived. A fault anywhere
//! in the dispatch releases the waiting waves with an error instead of
//! leaving them blocked, and so does the dispatch's deadline: waves that
//! all block at a barrier some wave never reaches run no instructions, so
//! the waiting itself watches the clock.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use softgpu_interp::ops::{GridSync, GWS_RESOURCES as RESOURCES};
use softgpu_interp::trap::GwsError;

use crate::watch::Watch;

/// The GWS barriers of one dispatch.
pub struct Gws<'a> {
    state: Mutex<[Barrier; RESOURCES]>,
    released: Condvar,
    /// The dispatch's watch: once it is abandoned (another workgroup
    /// faulted, or the deadline passed) waiting waves stop waiting.
    watch: &'a Watch<'a>,
}

#[derive(Clone, Copy, Default)]
struct Barrier {
    arrived: u32,
    generation: u64,
}

impl<'a> Gws<'a> {
    pub(crate) fn new(watch: &'a Watch<'a>) -> Gws<'a> {
        Gws {
            state: Mutex::new([Barrier::default(); RESOURCES]),
            released: Condvar::new(),
            watch,
        }
    }
}

impl GridSync for Gws<'_> {
    fn barrier(&self, resource: u32, waves: u32) -> Result<(), GwsError> {
        let r = resource as usize;
        if r >= RESOURCES {
            return Err(GwsError::BadResource(resource));
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let b = &mut state[r];
        b.arrived += 1;
        if b.arrived >= waves.max(1) {
            b.arrived = 0;
            b.generation += 1;
            self.released.notify_all();
            return Ok(());
        }
        let generation = b.generation;
        loop {
            // Timed, so a dispatch abandoned meanwhile is noticed.
            let (s, _) = self
                .released
                .wait_timeout(state, Duration::from_millis(5))
                .unwrap_or_else(|e| e.into_inner());
            state = s;
            if state[r].generation != generation {
                return Ok(());
            }
            if self.watch.aborted() || self.watch.check_deadline().is_err() {
                return Err(GwsError::Aborted);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::Fault;
    use softgpu_interp::trap::FaultKind;
    use std::sync::atomic::Ordering;

    #[test]
    fn a_barrier_completes_when_every_wave_has_arrived() {
        let watch = Watch::unlimited("k");
        let gws = Gws::new(&watch);
        let passed = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..3 {
                        gws.barrier(1, 4).unwrap();
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(passed.load(Ordering::Relaxed), 12);
    }

    #[test]
    fn an_abandoned_dispatch_releases_waiting_waves() {
        let watch = Watch::unlimited("k");
        let gws = Gws::new(&watch);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| gws.barrier(0, 2));
            std::thread::sleep(Duration::from_millis(20));
            watch.fail(Fault::setup("k", "elsewhere".into()));
            assert_eq!(waiter.join().unwrap(), Err(GwsError::Aborted));
        });
        assert_eq!(gws.barrier(64, 1), Err(GwsError::BadResource(64)));
    }

    #[test]
    fn the_deadline_releases_waves_no_other_wave_will_join() {
        let watch = Watch::new("k", u64::MAX, Duration::from_millis(30));
        let gws = Gws::new(&watch);
        assert_eq!(gws.barrier(3, 2), Err(GwsError::Aborted));
        let fault = watch.into_fault().0.expect("a timeout fault");
        assert_eq!(fault.kind, FaultKind::Timeout);
    }
}
