//! HSA signals: a 64-bit value that agents update atomically and threads
//! wait on, plus the asynchronous handler thread behind
//! `hsa_amd_signal_async_handler`.
//!
//! # How waiting works
//!
//! A waiter first spins for a few microseconds (cheap when the value is
//! about to change), then parks. To park it registers a `Notifier` (a
//! flag + condvar) with every signal it waits on, re-checks the values and
//! sleeps until a notifier flag is raised. Every operation that changes a
//! value, after the change, looks at the signal's watcher count and, only
//! when it is non-zero, raises the flag of each registered notifier. A
//! `SeqCst` fence on both sides (after the waiter's registration, after the
//! modifier's change) guarantees that either the waiter's re-check sees the
//! new value or the modifier sees the registration, so no wake-up is lost;
//! with nobody waiting a modification costs one fence and one load, no lock.
//!
//! The same notifiers serve [`wait_any`] (one notifier registered on several
//! signals) and the [`AsyncHandlers`] thread (one notifier registered once
//! per handler). Parked threads also re-check every [`RECHECK_INTERVAL`]
//! as a safety net for changes that notify nobody: silent stores and writes
//! through [`Signal::value_ptr`] (for example by kernels).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long a parked waiter (or the idle-but-watching handler thread) sleeps
/// at most before re-checking on its own. Only matters for changes that skip
/// notification (silent stores, raw writes through [`Signal::value_ptr`]).
pub const RECHECK_INTERVAL: Duration = Duration::from_millis(50);

/// How long a parked waiter on a shared (IPC) signal sleeps at most: a
/// change made by another process notifies nobody here.
pub const SHARED_RECHECK: Duration = Duration::from_millis(1);

/// How many times a runtime has stopped (the last `hsa_shut_down`). A wait
/// that began before a stop returns, as if its timeout had passed, instead
/// of waiting for signals that nothing will set any more: ROCr leaves such
/// waiters blocked forever.
static STOPS: AtomicU64 = AtomicU64::new(0);

/// Ends every wait in progress (within [`RECHECK_INTERVAL`]): the runtime
/// is going away.
pub(crate) fn end_waits() {
    STOPS.fetch_add(1, Ordering::SeqCst);
}

/// Spin budget before parking for [`WaitHint::Active`].
const ACTIVE_SPIN: Duration = Duration::from_micros(10);
/// Spin budget before parking for [`WaitHint::Blocked`].
const BLOCKED_SPIN: Duration = Duration::from_micros(2);
/// Checks between two clock reads while spinning.
const SPIN_BATCH: u32 = 16;

/// Memory order of a signal operation, as HSA names them: `relaxed`,
/// `scacquire`, `screlease` and `scacq_screl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

impl Order {
    /// The order for a read-modify-write: every HSA order is valid as is.
    fn rmw(self) -> Ordering {
        match self {
            Order::Relaxed => Ordering::Relaxed,
            Order::Acquire => Ordering::Acquire,
            Order::Release => Ordering::Release,
            Order::AcqRel => Ordering::AcqRel,
        }
    }

    /// The order for a pure load. A load cannot release (Rust panics on
    /// `Release`/`AcqRel` loads), so those become `Acquire`, the strongest
    /// part of them a load can honour.
    fn load(self) -> Ordering {
        match self {
            Order::Relaxed => Ordering::Relaxed,
            _ => Ordering::Acquire,
        }
    }

    /// The order for a pure store. A store cannot acquire (Rust panics on
    /// `Acquire`/`AcqRel` stores), so those become `Release`.
    fn store(self) -> Ordering {
        match self {
            Order::Relaxed => Ordering::Relaxed,
            _ => Ordering::Release,
        }
    }
}

/// A wait condition, `HSA_SIGNAL_CONDITION_*`: compares the signal value
/// (left) with the compare value (right).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Condition {
    Eq,
    Ne,
    Lt,
    Gte,
}

impl Condition {
    /// Whether `value <condition> compare`.
    pub fn holds(self, value: i64, compare: i64) -> bool {
        match self {
            Condition::Eq => value == compare,
            Condition::Ne => value != compare,
            Condition::Lt => value < compare,
            Condition::Gte => value >= compare,
        }
    }
}

/// `hsa_wait_state_t`: how eager the waiter is. Only the spin budget before
/// parking differs; every wait eventually parks so no core is burnt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitHint {
    Blocked,
    Active,
}

/// Locks a mutex, ignoring poison: every critical section here leaves its
/// data consistent, and handlers never run under a lock.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One parked thread's wake-up flag. The flag is raised under the mutex and
/// checked under it before sleeping, so a notification that arrives between
/// a thread's last check and its sleep is never lost.
struct Notifier {
    woken: Mutex<bool>,
    condvar: Condvar,
}

impl Notifier {
    fn new() -> Arc<Notifier> {
        Arc::new(Notifier {
            woken: Mutex::new(false),
            condvar: Condvar::new(),
        })
    }

    /// Raises the flag and wakes the sleeper, if any.
    fn notify(&self) {
        *lock(&self.woken) = true;
        self.condvar.notify_one();
    }

    /// Sleeps until notified or `limit` passes (None: no limit), then lowers
    /// the flag. May return early (spurious wake-up); callers re-check.
    fn sleep(&self, limit: Option<Duration>) {
        let mut woken = lock(&self.woken);
        if !*woken {
            woken = match limit {
                Some(d) => {
                    let r = self.condvar.wait_timeout(woken, d);
                    r.unwrap_or_else(PoisonError::into_inner).0
                }
                None => self
                    .condvar
                    .wait(woken)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
        *woken = false;
    }
}

/// Where a signal's value lives.
enum Cell {
    /// In this process's own memory; boxed so [`Signal::value_ptr`] stays
    /// valid even if the `Signal` moves.
    Own(Box<AtomicI64>),
    /// In memory other processes map too (an IPC signal, `crate::ipc_signal`).
    Shared {
        value: std::ptr::NonNull<AtomicI64>,
        /// Gives the memory back once the signal is gone.
        release: Option<Box<dyn FnOnce() + Send + Sync>>,
    },
}

// SAFETY: `Shared::value` points to memory that `Signal::shared`'s caller
// guarantees stays mapped until `release` runs (in `Signal::drop`), and it
// is only ever accessed as an `AtomicI64`, which is `Sync`; the release
// closure is `Send + Sync` itself.
unsafe impl Send for Cell {}
// SAFETY: as for `Send`.
unsafe impl Sync for Cell {}

/// An HSA signal. Shared as `Arc<Signal>`; every method takes `&self`.
pub struct Signal {
    value: Cell,
    /// Number of entries in `watchers`, readable without the lock so that
    /// modifications with nobody waiting take no lock.
    watcher_count: AtomicUsize,
    /// Notifiers of threads parked on (or handler threads watching) this signal.
    watchers: Mutex<Vec<Arc<Notifier>>>,
    /// Bumped on each notifying change while watched: lets the handler thread
    /// tell "changed and back" from "unchanged" (re-arm semantics).
    epoch: AtomicU64,
    /// Start and end timestamps of the work that completed this signal.
    times: Mutex<Option<(u64, u64)>>,
    /// Called with each stored value (a queue's doorbell notes when each
    /// packet was submitted).
    on_store: std::sync::OnceLock<StoreHook>,
    /// Set by [`Signal::destroy`]: waits in progress end.
    destroyed: std::sync::atomic::AtomicBool,
}

/// What [`Signal::set_on_store`] installs.
pub type StoreHook = Box<dyn Fn(i64) + Send + Sync>;

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal")
            .field("value", &self.load(Order::Relaxed))
            .field("watchers", &self.watcher_count.load(Ordering::Relaxed))
            .finish()
    }
}

impl Signal {
    /// A signal holding `initial`.
    pub fn new(initial: i64) -> Signal {
        Signal::over(Cell::Own(Box::new(AtomicI64::new(initial))))
    }

    fn over(value: Cell) -> Signal {
        Signal {
            value,
            watcher_count: AtomicUsize::new(0),
            watchers: Mutex::new(Vec::new()),
            epoch: AtomicU64::new(0),
            destroyed: std::sync::atomic::AtomicBool::new(false),
            times: Mutex::new(None),
            on_store: std::sync::OnceLock::new(),
        }
    }

    /// A signal whose value is the 8 bytes at `value` (left as they are),
    /// which other processes may map and change too; `release` runs when
    /// the signal is dropped.
    ///
    /// # Safety
    /// `value` is 8-byte aligned, stays mapped and readable and writable
    /// until `release` has run, and is only accessed atomically meanwhile.
    pub unsafe fn shared(value: *mut i64, release: Box<dyn FnOnce() + Send + Sync>) -> Signal {
        let value = std::ptr::NonNull::new(value.cast::<AtomicI64>()).expect("a mapped address");
        Signal::over(Cell::Shared {
            value,
            release: Some(release),
        })
    }

    /// Whether other processes may change the value (an IPC signal).
    pub fn is_shared(&self) -> bool {
        matches!(self.value, Cell::Shared { .. })
    }

    /// The value's atomic.
    #[inline]
    fn cell(&self) -> &AtomicI64 {
        match &self.value {
            Cell::Own(value) => value,
            // SAFETY: mapped and only accessed atomically while the signal
            // lives (`Signal::shared`'s contract).
            Cell::Shared { value, .. } => unsafe { value.as_ref() },
        }
    }

    /// Installs the function called with every value stored (once per
    /// signal; a second hook is ignored).
    pub fn set_on_store(&self, hook: StoreHook) {
        let _ = self.on_store.set(hook);
    }

    fn stored(&self, value: i64) {
        if let Some(hook) = self.on_store.get() {
            hook(value);
        }
    }

    /// The current value.
    pub fn load(&self, order: Order) -> i64 {
        self.cell().load(order.load())
    }

    /// Sets the value and wakes waiters if it changed.
    pub fn store(&self, value: i64, order: Order) {
        // A swap (not a store) tells whether the value changed.
        self.stored(value);
        let old = self.cell().swap(value, order.rmw());
        self.changed(old, value);
    }

    /// Sets the value without waking anyone (HSA "silent" store, for when
    /// the caller knows nobody needs waking). Later loads see it, spinning
    /// waiters see it at once and parked ones within [`RECHECK_INTERVAL`].
    pub fn silent_store(&self, value: i64, order: Order) {
        self.stored(value);
        self.cell().store(value, order.store());
    }

    /// Adds `v` (wrapping).
    pub fn add(&self, v: i64, order: Order) {
        let old = self.cell().fetch_add(v, order.rmw());
        self.changed(old, old.wrapping_add(v));
    }

    /// Subtracts `v` (wrapping).
    pub fn subtract(&self, v: i64, order: Order) {
        let old = self.cell().fetch_sub(v, order.rmw());
        self.changed(old, old.wrapping_sub(v));
    }

    /// Bitwise AND with `v`.
    pub fn and(&self, v: i64, order: Order) {
        let old = self.cell().fetch_and(v, order.rmw());
        self.changed(old, old & v);
    }

    /// Bitwise OR with `v`.
    pub fn or(&self, v: i64, order: Order) {
        let old = self.cell().fetch_or(v, order.rmw());
        self.changed(old, old | v);
    }

    /// Bitwise XOR with `v`.
    pub fn xor(&self, v: i64, order: Order) {
        let old = self.cell().fetch_xor(v, order.rmw());
        self.changed(old, old ^ v);
    }

    /// Sets the value to `v`; returns the previous value.
    pub fn exchange(&self, v: i64, order: Order) -> i64 {
        let old = self.cell().swap(v, order.rmw());
        self.changed(old, v);
        old
    }

    /// Sets the value to `new` if it is `expected`; returns the value
    /// observed before (equal to `expected` exactly when it succeeded).
    pub fn cas(&self, expected: i64, new: i64, order: Order) -> i64 {
        let result = self
            .cell()
            .compare_exchange(expected, new, order.rmw(), order.load());
        match result {
            Ok(old) => {
                self.changed(old, new);
                old
            }
            Err(old) => old,
        }
    }

    /// Blocks until `condition(value, compare)` holds, `timeout` passes
    /// (None: no limit) or the runtime stops; returns the last value
    /// observed, which satisfies the condition unless the wait timed out or
    /// was ended. Loads use `order`.
    pub fn wait(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Option<Duration>,
        hint: WaitHint,
        order: Order,
    ) -> i64 {
        let ordering = order.load();
        let check = || {
            let v = self.cell().load(ordering);
            condition.holds(v, compare).then_some(v)
        };
        block_on(&[self], deadline_after(timeout), hint, check)
            .unwrap_or_else(|| self.cell().load(ordering))
    }

    /// Address of the 64-bit value (`hsa_amd_signal_value_pointer`). Valid
    /// while the `Signal` lives, even if it moves. Writes through it are
    /// seen by loads but wake nobody at once (see [`RECHECK_INTERVAL`]).
    pub fn value_ptr(&self) -> *const i64 {
        self.cell().as_ptr().cast_const()
    }

    /// Records when the work that completes this signal ran (ns, monotonic
    /// clock), for `hsa_amd_profiling_get_dispatch_time` and friends.
    pub fn set_times(&self, start_ns: u64, end_ns: u64) {
        *lock(&self.times) = Some((start_ns, end_ns));
    }

    /// The timestamps recorded by [`Signal::set_times`], if any.
    pub fn times(&self) -> Option<(u64, u64)> {
        *lock(&self.times)
    }

    /// Ends every wait on the signal in progress (they return the last
    /// value, as a timeout would): its client destroyed it
    /// (`hsa_signal_destroy`), so nothing will set it any more. ROCr leaves
    /// such waiters reading freed memory; here they wake and return.
    pub fn destroy(&self) {
        self.destroyed.store(true, Ordering::SeqCst);
        if self.watcher_count.load(Ordering::SeqCst) != 0 {
            self.wake_watchers();
        }
    }

    /// Whether [`Signal::destroy`] was called.
    pub fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::SeqCst)
    }

    /// Wakes watchers after a modification that turned `old` into `new`.
    #[inline]
    fn changed(&self, old: i64, new: i64) {
        if old == new {
            return;
        }
        // Pairs with the fence in `add_watcher`: either we see its count or
        // its re-check sees our change.
        fence(Ordering::SeqCst);
        if self.watcher_count.load(Ordering::Relaxed) != 0 {
            self.wake_watchers();
        }
    }

    /// Slow path of [`Signal::changed`]: somebody is watching.
    #[cold]
    fn wake_watchers(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
        for notifier in lock(&self.watchers).iter() {
            notifier.notify();
        }
    }

    /// The change counter read by the handler thread.
    fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Registers `notifier` to be raised on every change. The caller must
    /// re-check the value after this returns, before sleeping.
    fn add_watcher(&self, notifier: &Arc<Notifier>) {
        let mut watchers = lock(&self.watchers);
        watchers.push(notifier.clone());
        self.watcher_count.fetch_add(1, Ordering::Relaxed);
        drop(watchers);
        // Pairs with the fence in `changed`.
        fence(Ordering::SeqCst);
    }

    /// Undoes one [`Signal::add_watcher`] of `notifier`.
    fn remove_watcher(&self, notifier: &Arc<Notifier>) {
        let mut watchers = lock(&self.watchers);
        if let Some(i) = watchers.iter().position(|n| Arc::ptr_eq(n, notifier)) {
            watchers.swap_remove(i);
            self.watcher_count.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        if let Cell::Shared { release, .. } = &mut self.value {
            if let Some(release) = release.take() {
                release();
            }
        }
    }
}

/// A notifier registered with a signal for as long as this guard lives.
struct Watch<'a> {
    signal: &'a Signal,
    notifier: &'a Arc<Notifier>,
}

impl<'a> Watch<'a> {
    fn new(signal: &'a Signal, notifier: &'a Arc<Notifier>) -> Watch<'a> {
        signal.add_watcher(notifier);
        Watch { signal, notifier }
    }
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        self.signal.remove_watcher(self.notifier);
    }
}

/// The instant `timeout` from now; None when there is no limit (or it is
/// too far away to represent, e.g. HSA's `u64::MAX` converted).
fn deadline_after(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|d| Instant::now().checked_add(d))
}

/// Spins on `check` for the hint's budget (cut short by `deadline`).
fn spin<T>(
    check: &mut impl FnMut() -> Option<T>,
    deadline: Option<Instant>,
    hint: WaitHint,
) -> Option<T> {
    let budget = match hint {
        WaitHint::Active => ACTIVE_SPIN,
        WaitHint::Blocked => BLOCKED_SPIN,
    };
    let mut end = Instant::now() + budget;
    if let Some(d) = deadline {
        end = end.min(d);
    }
    loop {
        for _ in 0..SPIN_BATCH {
            if let Some(found) = check() {
                return Some(found);
            }
            std::hint::spin_loop();
        }
        if Instant::now() >= end {
            return None;
        }
    }
}

/// Waits until `check` finds something, watching `signals` for changes:
/// spins briefly, then parks. None once `deadline` has passed.
fn block_on<T>(
    signals: &[&Signal],
    deadline: Option<Instant>,
    hint: WaitHint,
    mut check: impl FnMut() -> Option<T>,
) -> Option<T> {
    let stops = STOPS.load(Ordering::SeqCst);
    if let Some(found) = spin(&mut check, deadline, hint) {
        return Some(found);
    }
    let notifier = Notifier::new();
    let _watches: Vec<Watch> = signals.iter().map(|s| Watch::new(s, &notifier)).collect();
    let recheck = if signals.iter().any(|s| s.is_shared()) {
        SHARED_RECHECK
    } else {
        RECHECK_INTERVAL
    };
    loop {
        if let Some(found) = check() {
            return Some(found);
        }
        if STOPS.load(Ordering::SeqCst) != stops || signals.iter().any(|s| s.is_destroyed()) {
            return None;
        }
        let nap = match deadline {
            None => recheck,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return None;
                }
                left.min(recheck)
            }
        };
        notifier.sleep(Some(nap));
    }
}

/// Blocks until one `(signal, condition, compare)` holds or `timeout`
/// passes (`hsa_amd_signal_wait_any`, BARRIER_OR packets). Returns the index
/// of the first entry found to hold and the value seen, None on timeout or
/// when the runtime stops (or
/// at once for an empty list, which could never be satisfied). Loads
/// acquire, stronger than the relaxed order HSA promises here.
pub fn wait_any(
    signals: &[(Arc<Signal>, Condition, i64)],
    timeout: Option<Duration>,
    hint: WaitHint,
) -> Option<(usize, i64)> {
    if signals.is_empty() {
        return None;
    }
    let check = || {
        signals.iter().enumerate().find_map(|(i, (s, cond, cmp))| {
            let v = s.load(Order::Acquire);
            cond.holds(v, *cmp).then_some((i, v))
        })
    };
    let watched: Vec<&Signal> = signals.iter().map(|(s, _, _)| &**s).collect();
    block_on(&watched, deadline_after(timeout), hint, check)
}

/// A handler as given to [`AsyncHandlers::register`].
type Handler = Box<dyn FnMut(i64) -> bool + Send>;

/// One registered async handler, watched by the handler thread's notifier
/// from registration until it is dropped.
struct Registration {
    signal: Arc<Signal>,
    condition: Condition,
    compare: i64,
    handler: Handler,
    notifier: Arc<Notifier>,
    /// The (epoch, value) the handler last ran for: it is not run again until
    /// the signal has changed since.
    fired: Option<(u64, i64)>,
}

impl Registration {
    fn new(
        signal: Arc<Signal>,
        condition: Condition,
        compare: i64,
        handler: Handler,
        notifier: &Arc<Notifier>,
    ) -> Registration {
        signal.add_watcher(notifier);
        Registration {
            signal,
            condition,
            compare,
            handler,
            notifier: notifier.clone(),
            fired: None,
        }
    }

    /// Runs the handler if the condition holds on a signal state it has not
    /// run for yet. Returns whether to keep the registration: the handler's
    /// answer, false if it panicked.
    fn poll(&mut self) -> bool {
        // Epoch first: a change racing with these reads bumps the epoch
        // after we read it, so it is seen next time (at worst run twice).
        let state = (self.signal.epoch(), self.signal.load(Order::Acquire));
        if self.fired == Some(state) || !self.condition.holds(state.1, self.compare) {
            return true;
        }
        self.fired = Some(state);
        let handler = &mut self.handler;
        catch_unwind(AssertUnwindSafe(|| handler(state.1))).unwrap_or(false)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.signal.remove_watcher(&self.notifier);
    }
}

/// State shared by [`AsyncHandlers`] and its thread.
struct HandlerShared {
    /// Raised by watched signal changes, new registrations and shutdown.
    notifier: Arc<Notifier>,
    /// Registrations not yet picked up by the thread.
    incoming: Mutex<Vec<Registration>>,
    stop: AtomicBool,
}

impl HandlerShared {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// The handler thread's body: pick up registrations, run those whose
    /// condition holds, sleep until something changes.
    fn run(&self) {
        let mut active: Vec<Registration> = Vec::new();
        while !self.stopped() {
            active.append(&mut lock(&self.incoming));
            if !self.poll_all(&mut active) {
                break;
            }
            // Idle with nothing registered: only a registration or shutdown
            // can give work, and both notify.
            let shared = active.iter().any(|r| r.signal.is_shared());
            let limit = match (active.is_empty(), shared) {
                (true, _) => None,
                (false, true) => Some(SHARED_RECHECK),
                (false, false) => Some(RECHECK_INTERVAL),
            };
            self.notifier.sleep(limit);
        }
        drop(active);
        drop(std::mem::take(&mut *lock(&self.incoming)));
    }

    /// Polls every registration, dropping those done with. Returns false
    /// when shutdown was asked for (checked between handlers).
    fn poll_all(&self, active: &mut Vec<Registration>) -> bool {
        let mut i = 0;
        while i < active.len() {
            if self.stopped() {
                return false;
            }
            if active[i].poll() {
                i += 1;
            } else {
                active.swap_remove(i);
            }
        }
        true
    }
}

/// The running handler thread.
struct HandlerThread {
    shared: Arc<HandlerShared>,
    join: JoinHandle<()>,
}

impl HandlerThread {
    fn start() -> HandlerThread {
        let shared = Arc::new(HandlerShared {
            notifier: Notifier::new(),
            incoming: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let theirs = shared.clone();
        let join = thread::Builder::new()
            .name("softgpu-signal-handlers".into())
            .spawn(move || theirs.run())
            .expect("softgpu: cannot start the signal handler thread");
        HandlerThread { shared, join }
    }

    /// Asks the thread to stop and waits for it, unless called from the
    /// thread itself (a handler shutting the runtime down), which then exits
    /// once that handler returns.
    fn stop(self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.notifier.notify();
        if self.join.thread().id() != thread::current().id() {
            let _ = self.join.join();
        }
    }
}

#[derive(Default)]
struct HandlersState {
    thread: Option<HandlerThread>,
    shut_down: bool,
}

/// The async signal handlers of one runtime (`hsa_amd_signal_async_handler`),
/// run one at a time on a thread started at the first registration.
///
/// The thread sleeps until a watched signal changes (or, at most,
/// [`RECHECK_INTERVAL`] while handlers are registered). Handlers may modify
/// signals and register handlers: no lock is held while they run.
#[derive(Default)]
pub struct AsyncHandlers {
    state: Mutex<HandlersState>,
}

impl AsyncHandlers {
    /// No handlers and no thread yet.
    pub fn new() -> AsyncHandlers {
        AsyncHandlers::default()
    }

    /// Calls `handler(value)` on the handler thread once
    /// `condition(value, compare)` holds for `signal`. If it returns true it
    /// stays registered and runs again the next time the condition holds
    /// after the signal changed; false (or a panic) removes it. After
    /// [`AsyncHandlers::shutdown`] the handler is dropped without running.
    pub fn register(
        &self,
        signal: Arc<Signal>,
        condition: Condition,
        compare: i64,
        handler: Box<dyn FnMut(i64) -> bool + Send>,
    ) {
        let mut state = lock(&self.state);
        if state.shut_down {
            return;
        }
        let shared = &state.thread.get_or_insert_with(HandlerThread::start).shared;
        let registration = Registration::new(signal, condition, compare, handler, &shared.notifier);
        lock(&shared.incoming).push(registration);
        shared.notifier.notify();
    }

    /// Stops the thread once the handler it is running (if any) returns and
    /// drops every pending handler; later registrations are dropped too.
    /// Waits for the thread unless called from a handler.
    pub fn shutdown(&self) {
        let thread = {
            let mut state = lock(&self.state);
            state.shut_down = true;
            state.thread.take()
        };
        if let Some(thread) = thread {
            thread.stop();
        }
    }
}

impl Drop for AsyncHandlers {
    fn drop(&mut self) {
        self.shutdown();
    }
}
