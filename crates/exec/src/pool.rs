//! Persistent helper threads for dispatches.
//!
//! Spawning threads for every dispatch cost tens of microseconds, and each
//! new thread started with cold worker state (64 KiB of registers per
//! wave). Helpers live for the process instead and keep their worker state
//! between dispatches.
//!
//! A dispatch offers its work function to up to N helpers and runs it on
//! its own thread as well, so it always makes progress even when every
//! helper is busy with another queue's dispatch. When the calling thread
//! runs out of work it withdraws the offers no helper has taken yet and
//! waits only for the helpers already running the function, which return
//! as soon as the workgroup counter is exhausted. After that nothing can
//! call the function again, which is what makes lending it borrowed data
//! sound.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// The work of one dispatch, with its borrowed lifetime erased. Only
/// called while the dispatch waits in [`run`].
struct Work(*const (dyn Fn() + Sync));

// SAFETY: the pointee is `Sync`, and `run` keeps it alive until no helper
// can call it any more.
unsafe impl Send for Work {}
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
/// (after all have returned) if a helper's run panicked.
pub fn run(work: &(dyn Fn() + Sync), helpers: usize) {
    if helpers == 0 {
        work();
        return;
    }
    let pool = pool();
    pool.grow_to(helpers);
    // SAFETY (of the erasure): the offer is withdrawn and its running
    // helpers waited for below, before `work` goes out of scope.
    let erased: *const (dyn Fn() + Sync + '_) = work;
    let erased: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(erased) };
    let offer = Arc::new(Offer {
        work: Work(erased),
        state: Mutex::new(OfferState {
            open: helpers,
            ..OfferState::default()
        }),
        finished: Condvar::new(),
    });
    {
        let mut queue = lock(&pool.queue);
        for _ in 0..helpers {
            queue.push_back(offer.clone());
        }
    }
    pool.available.notify_all();
    work();
    let mut state = lock(&offer.state);
    state.open = 0;
    while state.running > 0 {
        state = offer
            .finished
            .wait(state)
            .unwrap_or_else(|e| e.into_inner());
    }
    if state.panicked {
        panic!("a dispatch worker thread panicked");
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
            // SAFETY: the offer was open, so its dispatch is still waiting
            // in `run` and keeps the work alive until `running` drops.
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
