//! Persistent helper threads for dispatches.
//!
//! Spawning threads for every dispatch cost tens of microseconds, and each
//! new thread started with cold worker state (64 KiB of registers per
//! wave). Helpers live for the process instead and keep their worker state
//! between dispatches.
//!
//! A dispatch offers its work function to up to N helpers and runs it on
//! its own thread as well, so it always makes progress even when every
//! helper is busy with another queue's dispatch. The work function borrows
//! the dispatch's stack frame, and the helpers see it through a pointer
//! whose lifetime is erased, so [`run`] must not return, or unwind, while a
//! helper may still call it. When the calling thread's own run ends —
//! returning or panicking — a drop guard withdraws the offers no helper has
//! taken yet and waits for the helpers already running the function (they
//! return as soon as the work is exhausted), as `std::thread::scope` does;
//! only then does `run` return or let the panic go on. A helper takes an
//! offer only under the offer's lock and only while it is open, so once the
//! guard has set it closed and seen no helper running, nothing can call
//! the function again. A panic on a helper is caught there and re-raised on
//! the calling thread after the wait.
//!
//! The work function must finish on each thread without help from the
//! others (a dispatch's threads take workgroups from a shared counter until
//! it is exhausted): the calling thread does not run it again after it
//! panicked, and helpers may never take the offers at all.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// The work of one dispatch, with its borrowed lifetime erased. Only
/// called by a helper that took its offer while it was open, that is
/// while the dispatch is still inside [`run`].
struct Work(*const (dyn Fn() + Sync));

// SAFETY: `Work` is only a pointer to a `dyn Fn() + Sync`, which may be
// called from any thread through a shared reference; sending or sharing the
// pointer itself is harmless. Its validity when dereferenced is `run`'s
// business (see `Withdraw`), not the thread's.
unsafe impl Send for Work {}
// SAFETY: as for `Send`.
unsafe impl Sync for Work {}

/// One dispatch's offer to the helpers.
struct Offer {
    work: Work,
    state: Mutex<OfferState>,
    finished: Condvar,
}

#[derive(Default)]
struct OfferState {
    /// Offers still in the queue that a helper may take.
    open: usize,
    /// Helpers running the work now.
    running: usize,
    /// A helper's work panicked.
    panicked: bool,
}

struct Pool {
    queue: Mutex<VecDeque<Arc<Offer>>>,
    available: Condvar,
    helpers: Mutex<usize>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        queue: Mutex::new(VecDeque::new()),
        available: Condvar::new(),
        helpers: Mutex::new(0),
    })
}

/// Runs `work` on the calling thread and on up to `helpers` pool threads
/// at once; returns when every thread running it has returned. Panics
/// (after all have returned) if a helper's run panicked; if the calling
/// thread's own run panics, that panic propagates, again only after every
/// helper running `work` has returned.
pub fn run(work: &(dyn Fn() + Sync), helpers: usize) {
    if helpers == 0 {
        work();
        return;
    }
    let pool = pool();
    pool.grow_to(helpers);
    let erased: *const (dyn Fn() + Sync + '_) = work;
    // SAFETY: only the lifetime changes (same pointee type and layout).
    // Helpers dereference the pointer only after taking an open offer, and
    // `withdraw` below closes the offer and waits for them before `run`
    // returns or unwinds, so no use outlives the borrow of `work`.
    let erased: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(erased) };
    let offer = Arc::new(Offer {
        work: Work(erased),
        state: Mutex::new(OfferState {
            open: helpers,
            ..OfferState::default()
        }),
        finished: Condvar::new(),
    });
    // Armed before any helper can see the offer: on every way out of this
    // function from here on, including a panic in `work()` below, its drop
    // withdraws the offer and waits for the helpers running it.
    let withdraw = Withdraw(&offer);
    {
        let mut queue = lock(&pool.queue);
        for _ in 0..helpers {
            queue.push_back(offer.clone());
        }
    }
    pool.available.notify_all();
    work();
    drop(withdraw);
    if lock(&offer.state).panicked {
        panic!("a dispatch worker thread panicked");
    }
}

/// Withdraws an offer when dropped: closes it to helpers that have not
/// taken it yet and waits for those running it. Dropped on return and on
/// unwinding alike, which is what keeps the erased borrow in [`Work`] from
/// outliving the work function.
struct Withdraw<'a>(&'a Offer);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        // Nothing here may panic: a panic while unwinding aborts (poisoned
        // locks are taken over, since the state stays consistent: each
        // helper updates it in one critical section).
        let mut state = lock(&self.0.state);
        state.open = 0;
        while state.running > 0 {
            state = self
                .0
                .finished
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Pool {
    /// Starts helpers until there are at least `n`.
    fn grow_to(&'static self, n: usize) {
        let mut helpers = lock(&self.helpers);
        while *helpers < n {
            let spawned = std::thread::Builder::new()
                .name(format!("softgpu-worker-{}", *helpers))
                .spawn(move || self.serve());
            if spawned.is_err() {
                // Fewer helpers only means less parallelism: the calling
                // thread still runs every workgroup no helper takes.
                break;
            }
            *helpers += 1;
        }
    }

    /// A helper's life: take offers and run them.
    fn serve(&self) {
        loop {
            let offer = {
                let mut queue = lock(&self.queue);
                loop {
                    if let Some(o) = queue.pop_front() {
                        break o;
                    }
                    queue = self
                        .available
                        .wait(queue)
                        .unwrap_or_else(|e| e.into_inner());
                }
            };
            {
                let mut state = lock(&offer.state);
                if state.open == 0 {
                    continue; // withdrawn: the dispatch is over
                }
                state.open -= 1;
                state.running += 1;
            }
            // SAFETY: the offer was open when this helper counted itself in
            // `running` (under the offer's lock), so its dispatch has not yet
            // finished `Withdraw::drop`, which cannot finish until `running`
            // drops back: the work function `run` borrowed is still alive
            // until this helper decrements `running` below.
            let work = unsafe { &*offer.work.0 };
            let result = catch_unwind(AssertUnwindSafe(work));
            let mut state = lock(&offer.state);
            state.running -= 1;
            state.panicked |= result.is_err();
            offer.finished.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_item_is_done_once_with_borrowed_state() {
        for helpers in [0, 1, 3] {
            let items: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
            let next = AtomicUsize::new(0);
            let work = || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                items[i].fetch_add(1, Ordering::Relaxed);
            };
            run(&work, helpers);
            assert!(items.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        }
    }

    /// The calling thread's run panics while helpers are inside the work
    /// function: `run` must not unwind past the borrowed state until they
    /// have returned (the old code returned at once, leaving them calling a
    /// closure whose frame was gone), the panic must reach the caller, and
    /// the pool must serve later dispatches.
    #[test]
    fn a_panic_on_the_calling_thread_waits_for_the_helpers() {
        use std::time::{Duration, Instant};
        let caller = std::thread::current().id();
        let items: Vec<AtomicUsize> = (0..200).map(|_| AtomicUsize::new(0)).collect();
        let next = AtomicUsize::new(0);
        // Helpers inside the work function now, and ever.
        let inside = AtomicUsize::new(0);
        let entered = AtomicUsize::new(0);
        let result = catch_unwind(AssertUnwindSafe(|| {
            let work = || {
                if std::thread::current().id() == caller {
                    // Let a helper get going (the pool is shared with the
                    // other tests, so one may take a while to be free).
                    let deadline = Instant::now() + Duration::from_secs(20);
                    while entered.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                        std::thread::yield_now();
                    }
                    // Unwinds without the panic hook, whose message (and
                    // backtrace, under RUST_BACKTRACE) would take long
                    // enough for the helpers to finish anyway.
                    std::panic::resume_unwind(Box::new("the caller's work panicked"));
                }
                inside.fetch_add(1, Ordering::SeqCst);
                entered.fetch_add(1, Ordering::SeqCst);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() {
                        break;
                    }
                    // Slow enough that helpers are still at it when the
                    // caller panics.
                    std::thread::sleep(Duration::from_micros(200));
                    items[i].fetch_add(1, Ordering::Relaxed);
                }
                inside.fetch_sub(1, Ordering::SeqCst);
            };
            run(&work, 2);
        }));
        let payload = result.expect_err("the caller's panic propagates");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"the caller's work panicked")
        );
        assert!(entered.load(Ordering::SeqCst) > 0, "no helper ran the work");
        assert_eq!(
            inside.load(Ordering::SeqCst),
            0,
            "run unwound while a helper was still running the work"
        );
        // The helpers finished the work the caller abandoned.
        assert!(items.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        // And the pool still serves dispatches.
        let count = AtomicUsize::new(0);
        let work = || while count.fetch_add(1, Ordering::Relaxed) < 1000 {};
        run(&work, 2);
        assert!(count.load(Ordering::Relaxed) >= 1000);
    }

    #[test]
    fn concurrent_dispatches_share_the_helpers() {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        let count = AtomicUsize::new(0);
                        let work = || {
                            while count.fetch_add(1, Ordering::Relaxed) < 100 {}
                        };
                        run(&work, 2);
                        assert!(count.load(Ordering::Relaxed) >= 100);
                    }
                });
            }
        });
    }
}
