//! The runaway watch of one dispatch: its instruction budget and its
//! wall-clock deadline, the first fault of any worker, the errors the
//! waves ran past (`Checks::contain`), and the waves that were still in
//! flight when the dispatch was stopped.
//!
//! Workers add the instructions they ran to one shared counter once per
//! `FLUSH` instructions (not per instruction, and not per wave), and look
//! at the clock at the same moments, so the watch costs an atomic add and a
//! clock read per few thousand instructions. The budget is therefore
//! enforced to within `FLUSH` instructions per worker thread.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::fault::{Errors, Fault, WaveState};
use crate::plan::Plan;
use softgpu_interp::ops::Trap;
use softgpu_interp::trap::FaultKind;
use softgpu_interp::wave::Wave;

/// Instructions a worker runs between looks at the shared counter, the
/// clock and the abort flag.
pub(crate) const FLUSH: u64 = 4096;

/// How many in-flight waves a report lists; the rest are counted.
pub const REPORTED_WAVES: usize = 16;

/// What every worker of a dispatch shares.
pub(crate) struct Watch<'a> {
    kernel: &'a str,
    budget: u64,
    timeout: Duration,
    /// None when the timeout is too far away to represent.
    deadline: Option<Instant>,
    /// Wave instructions the workers have reported so far.
    retired: AtomicU64,
    /// Set once the dispatch is being abandoned: workers stop at their next
    /// look, waves blocked at a grid barrier stop waiting.
    abort: AtomicBool,
    /// The first fault; later ones are consequences and dropped.
    fault: Mutex<Option<Fault>>,
    /// Waves that were in flight when their worker stopped.
    waves: Mutex<Vec<WaveState>>,
    /// The errors the waves ran past.
    found: Mutex<Found>,
}

/// The errors a dispatch ran past, and which it has seen.
#[derive(Default)]
struct Found {
    errors: Errors,
    seen: HashSet<ErrorKey>,
}

/// What makes an error distinct: its kind and instruction slot, and for
/// all but races the workgroup, wave and lane (a race is one error
/// however many lanes make it).
type ErrorKey = (FaultKind, u32, [u32; 3], u32, Option<usize>);

/// Distinct errors a dispatch tells apart at most; beyond, each is
/// counted (a runaway loop of faults must not grow memory without end).
const SEEN: usize = 1 << 20;

/// A worker's instructions not yet added to the shared counter.
#[derive(Default)]
pub(crate) struct Meter {
    pending: u64,
}

impl<'a> Watch<'a> {
    pub fn new(kernel: &'a str, budget: u64, timeout: Duration) -> Watch<'a> {
        Watch {
            kernel,
            budget,
            timeout,
            deadline: Instant::now().checked_add(timeout),
            retired: AtomicU64::new(0),
            abort: AtomicBool::new(false),
            fault: Mutex::new(None),
            waves: Mutex::new(Vec::new()),
            found: Mutex::default(),
        }
    }

    /// A watch that never stops anything (for the one-wave bench).
    pub fn unlimited(kernel: &'a str) -> Watch<'a> {
        Watch::new(kernel, u64::MAX, Duration::MAX)
    }

    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }

    /// Counts `n` more instructions of a worker; once it has run [`FLUSH`]
    /// since its last look, checks the budget, the clock and the abort
    /// flag. Err means the worker must stop (the reason is recorded).
    #[inline]
    pub fn tick(&self, meter: &mut Meter, n: u64) -> Result<(), ()> {
        meter.pending += n;
        if meter.pending < FLUSH {
            return Ok(());
        }
        self.look(meter)
    }

    #[cold]
    fn look(&self, meter: &mut Meter) -> Result<(), ()> {
        let n = std::mem::take(&mut meter.pending);
        let total = self.retired.fetch_add(n, Ordering::Relaxed) + n;
        if self.aborted() {
            return Err(());
        }
        if total > self.budget {
            self.fail(self.stopped(
                FaultKind::Budget,
                format!(
                    "the dispatch ran past its budget of {} wave instructions (runaway kernel? raise it with SOFTGPU_BUDGET)",
                    self.budget
                ),
            ));
            return Err(());
        }
        self.check_deadline()
    }

    /// Whether the deadline has passed; if so the dispatch is stopped with
    /// a timeout fault. Also called by waves blocked at a grid barrier.
    pub fn check_deadline(&self) -> Result<(), ()> {
        match self.deadline {
            Some(d) if Instant::now() >= d => {
                self.fail(self.stopped(
                    FaultKind::Timeout,
                    format!(
                        "the dispatch ran past its wall-clock limit of {} s (hung kernel? raise it with SOFTGPU_TIMEOUT)",
                        self.timeout.as_secs_f64()
                    ),
                ));
                Err(())
            }
            _ => Ok(()),
        }
    }

    fn stopped(&self, kind: FaultKind, reason: String) -> Fault {
        let mut fault = Fault::setup(self.kernel, reason);
        fault.kind = kind;
        fault
    }

    /// Records a fault (unless an earlier one is) and abandons the dispatch.
    pub fn fail(&self, fault: Fault) {
        let mut first = self.fault.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(fault);
        self.abort.store(true, Ordering::Relaxed);
    }

    /// Records the waves a stopping worker still had in flight.
    pub fn in_flight(&self, waves: impl IntoIterator<Item = WaveState>) {
        self.waves
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(waves);
    }

    /// Records an error `wave` of workgroup `group` ran past at slot `pc`,
    /// unless it is one already seen.
    pub fn contained(&self, plan: &Plan, group: [u32; 3], wave: &Wave, pc: u32, trap: Trap) {
        let kind = trap.kind();
        let key = match kind {
            FaultKind::Race => (kind, pc, [0; 3], 0, None),
            _ => (kind, pc, group, wave.id, trap.lane()),
        };
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if found.seen.len() < SEEN && !found.seen.insert(key) {
            return;
        }
        if found.errors.recorded.len() < Errors::RECORDED {
            let fault = Fault::from_trap(plan, group, wave, pc, trap);
            found.errors.recorded.push(fault);
        } else {
            found.errors.unrecorded += 1;
        }
    }

    /// The dispatch's fault, if any (a runaway one, budget or timeout,
    /// lists the waves that were in flight), and the errors it ran past.
    pub fn into_fault(self) -> (Option<Fault>, Errors) {
        let found = self.found.into_inner().unwrap_or_else(|e| e.into_inner());
        let Some(mut fault) = self.fault.into_inner().unwrap_or_else(|e| e.into_inner()) else {
            return (None, found.errors);
        };
        if matches!(fault.kind, FaultKind::Budget | FaultKind::Timeout) {
            let mut waves = self.waves.into_inner().unwrap_or_else(|e| e.into_inner());
            waves.sort_by_key(|w| (w.workgroup[2], w.workgroup[1], w.workgroup[0], w.wave));
            fault.more_waves = waves.len().saturating_sub(REPORTED_WAVES);
            waves.truncate(REPORTED_WAVES);
            fault.waves = waves;
        }
        (Some(fault), found.errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_counts_every_worker_together() {
        let watch = Watch::new("k", 3 * FLUSH, Duration::from_secs(60));
        let (mut a, mut b) = (Meter::default(), Meter::default());
        assert!(watch.tick(&mut a, FLUSH - 1).is_ok());
        assert!(watch.tick(&mut a, 1).is_ok());
        assert!(watch.tick(&mut b, 2 * FLUSH).is_ok());
        assert!(watch.tick(&mut b, FLUSH).is_err());
        assert!(watch.aborted());
        // Another worker stops at its next look, and the first reason stays.
        assert!(watch.tick(&mut a, FLUSH).is_err());
        let fault = watch.into_fault().0.unwrap();
        assert_eq!(fault.kind, FaultKind::Budget);
        assert!(fault.reason.contains("12288"), "{}", fault.reason);
    }

    #[test]
    fn a_past_deadline_times_the_dispatch_out() {
        let watch = Watch::new("k", u64::MAX, Duration::ZERO);
        assert!(watch.tick(&mut Meter::default(), FLUSH).is_err());
        assert_eq!(watch.into_fault().0.unwrap().kind, FaultKind::Timeout);
        let forever = Watch::unlimited("k");
        assert!(forever.check_deadline().is_ok());
        assert!(forever.tick(&mut Meter::default(), FLUSH).is_ok());
        assert!(forever.into_fault().0.is_none());
    }

    #[test]
    fn a_report_lists_the_first_waves_in_workgroup_order_and_counts_the_rest() {
        let watch = Watch::new("k", 0, Duration::from_secs(60));
        let wave = |g: u32, w: u32| WaveState {
            workgroup: [g % 3, g / 3, 0],
            wave: w,
            pc: 0x1000,
            offset: 0,
            instruction: "s_branch 65535".into(),
            wait: crate::fault::Wait::No,
        };
        watch.in_flight((0..10).rev().flat_map(|g| [wave(g, 1), wave(g, 0)]));
        assert!(watch.tick(&mut Meter::default(), FLUSH).is_err());
        let fault = watch.into_fault().0.unwrap();
        assert_eq!(fault.waves.len(), REPORTED_WAVES);
        assert_eq!(fault.more_waves, 20 - REPORTED_WAVES);
        assert_eq!(fault.waves[0], wave(0, 0));
        assert_eq!(fault.waves[1], wave(0, 1));
        assert_eq!(fault.waves[2], wave(1, 0));
        let text = fault.to_string();
        assert!(
            text.contains("waves in flight (20)") && text.contains("… and 4 more"),
            "{text}"
        );
    }
}
