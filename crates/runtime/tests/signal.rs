//! HSA signals: arithmetic, memory orders, waiting, async handlers, wait_any.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use softgpu_runtime::signal::{
    wait_any, AsyncHandlers, Condition, Order, Signal, WaitHint, RECHECK_INTERVAL,
};

const ORDERS: [Order; 4] = [
    Order::Relaxed,
    Order::Acquire,
    Order::Release,
    Order::AcqRel,
];
const CONDITIONS: [Condition; 4] = [Condition::Eq, Condition::Ne, Condition::Lt, Condition::Gte];
/// Generous bound for "this should happen": only guards against hanging.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the calling thread has used so far: CPU time and the number of
/// times it blocked (voluntary context switches, one per sleep).
#[derive(Clone, Copy, Debug)]
struct ThreadUsage {
    cpu: Duration,
    sleeps: i64,
}

impl ThreadUsage {
    fn now() -> ThreadUsage {
        // SAFETY: rusage is plain data; all-zero is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is a valid, writable rusage.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        assert_eq!(rc, 0, "getrusage failed");
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        ThreadUsage {
            cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
            sleeps: usage.ru_nvcsw,
        }
    }

    /// Usage since `earlier`.
    fn since(self, earlier: ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu: self.cpu - earlier.cpu,
            sleeps: self.sleeps - earlier.sleeps,
        }
    }
}

/// Most sleeps an idle thread may take in 300 ms: one per
/// `RECHECK_INTERVAL` (6) plus slack; a polling loop takes hundreds.
const IDLE_SLEEPS_PER_300MS: i64 = 20;

/// A blocked, acquiring wait that gives up (and so fails the test) only
/// after `PATIENCE`.
fn wait_for(s: &Signal, condition: Condition, compare: i64) -> i64 {
    s.wait(
        condition,
        compare,
        Some(PATIENCE),
        WaitHint::Blocked,
        Order::Acquire,
    )
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

#[test]
fn signals_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Signal>();
    check::<AsyncHandlers>();
}

#[test]
fn condition_holds_table() {
    let cases = [
        (Condition::Eq, 3, 3, true),
        (Condition::Eq, 3, 4, false),
        (Condition::Ne, 3, 4, true),
        (Condition::Ne, 3, 3, false),
        (Condition::Lt, -1, 0, true),
        (Condition::Lt, 0, 0, false),
        (Condition::Lt, 1, 0, false),
        (Condition::Gte, 0, 0, true),
        (Condition::Gte, 1, 0, true),
        (Condition::Gte, -1, 0, false),
    ];
    for (c, v, cmp, expected) in cases {
        assert_eq!(c.holds(v, cmp), expected, "{c:?}({v}, {cmp})");
    }
}

#[test]
fn arithmetic_and_return_values() {
    let s = Signal::new(10);
    assert_eq!(s.load(Order::Acquire), 10);
    s.store(20, Order::Release);
    assert_eq!(s.load(Order::Relaxed), 20);
    s.silent_store(21, Order::Relaxed);
    assert_eq!(s.load(Order::Acquire), 21);
    s.add(5, Order::AcqRel);
    assert_eq!(s.load(Order::Acquire), 26);
    s.subtract(30, Order::AcqRel);
    assert_eq!(s.load(Order::Acquire), -4);
    s.store(0b1100, Order::Relaxed);
    s.and(0b1010, Order::AcqRel);
    assert_eq!(s.load(Order::Acquire), 0b1000);
    s.or(0b0011, Order::AcqRel);
    assert_eq!(s.load(Order::Acquire), 0b1011);
    s.xor(0b0110, Order::AcqRel);
    assert_eq!(s.load(Order::Acquire), 0b1101);
    assert_eq!(s.exchange(99, Order::AcqRel), 0b1101);
    assert_eq!(s.load(Order::Acquire), 99);
    // A failing CAS returns the observed value and changes nothing.
    assert_eq!(s.cas(1, 2, Order::AcqRel), 99);
    assert_eq!(s.load(Order::Acquire), 99);
    // A succeeding CAS returns the expected (old) value.
    assert_eq!(s.cas(99, 7, Order::AcqRel), 99);
    assert_eq!(s.load(Order::Acquire), 7);
}

#[test]
fn arithmetic_wraps() {
    let s = Signal::new(i64::MAX);
    s.add(1, Order::Relaxed);
    assert_eq!(s.load(Order::Relaxed), i64::MIN);
    s.subtract(1, Order::Relaxed);
    assert_eq!(s.load(Order::Relaxed), i64::MAX);
}

#[test]
fn every_order_is_valid_for_every_operation() {
    for order in ORDERS {
        let s = Signal::new(1);
        assert_eq!(s.load(order), 1);
        s.store(2, order);
        s.silent_store(3, order);
        s.add(4, order);
        s.subtract(1, order);
        s.and(0xF, order);
        s.or(0x10, order);
        s.xor(0x1, order);
        assert_eq!(s.load(order), 0x17, "{order:?}");
        assert_eq!(s.exchange(5, order), 0x17);
        assert_eq!(s.cas(5, 6, order), 5);
        assert_eq!(s.cas(5, 7, order), 6);
        let v = s.wait(Condition::Eq, 6, None, WaitHint::Active, order);
        assert_eq!(v, 6, "{order:?}");
        for c in CONDITIONS {
            let v = s.wait(c, 0, Some(Duration::ZERO), WaitHint::Blocked, order);
            assert_eq!(v, 6, "{order:?} {c:?}");
        }
    }
}

#[test]
fn wait_returns_at_once_when_condition_holds() {
    let s = Signal::new(5);
    for hint in [WaitHint::Active, WaitHint::Blocked] {
        // A forever wait that would hang if it did not check first.
        assert_eq!(s.wait(Condition::Eq, 5, None, hint, Order::Acquire), 5);
        assert_eq!(s.wait(Condition::Ne, 0, None, hint, Order::Acquire), 5);
        assert_eq!(s.wait(Condition::Lt, 6, None, hint, Order::Acquire), 5);
        assert_eq!(s.wait(Condition::Gte, 5, None, hint, Order::Acquire), 5);
    }
}

#[test]
fn wait_wakes_when_eight_threads_subtract() {
    for hint in [WaitHint::Active, WaitHint::Blocked] {
        let s = Arc::new(Signal::new(8));
        let start = Arc::new(Barrier::new(9));
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (s, start) = (s.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    thread::sleep(Duration::from_millis(20));
                    s.subtract(1, Order::Release);
                })
            })
            .collect();
        start.wait();
        let v = s.wait(Condition::Eq, 0, None, hint, Order::Acquire);
        assert_eq!(v, 0);
        for w in workers {
            w.join().unwrap();
        }
    }
}

#[test]
fn wait_wakes_on_store_from_other_thread() {
    let s = Arc::new(Signal::new(1));
    let setter = {
        let s = s.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            s.store(42, Order::Release);
        })
    };
    let v = wait_for(&s, Condition::Gte, 10);
    assert_eq!(v, 42);
    setter.join().unwrap();
}

#[test]
fn wait_ignores_changes_that_do_not_satisfy() {
    let s = Arc::new(Signal::new(3));
    let worker = {
        let s = s.clone();
        thread::spawn(move || {
            for _ in 0..3 {
                thread::sleep(Duration::from_millis(20));
                s.subtract(1, Order::Release);
            }
        })
    };
    let v = wait_for(&s, Condition::Eq, 0);
    assert_eq!(v, 0, "woke on an intermediate value");
    worker.join().unwrap();
}

#[test]
fn every_condition_wakes_on_each_operation() {
    // (operation, start value, condition, compare) where the operation
    // makes the condition hold.
    type Op = fn(&Signal);
    let cases: [(Op, i64, Condition, i64); 8] = [
        (|s| s.store(0, Order::Release), 1, Condition::Eq, 0),
        (|s| s.add(1, Order::Release), 0, Condition::Gte, 1),
        (|s| s.subtract(2, Order::Release), 1, Condition::Lt, 0),
        (|s| s.and(0, Order::Release), 7, Condition::Eq, 0),
        (|s| s.or(8, Order::Release), 0, Condition::Ne, 0),
        (|s| s.xor(1, Order::Release), 1, Condition::Eq, 0),
        (
            |s| assert_eq!(s.exchange(9, Order::AcqRel), 0),
            0,
            Condition::Eq,
            9,
        ),
        (
            |s| assert_eq!(s.cas(4, 5, Order::AcqRel), 4),
            4,
            Condition::Eq,
            5,
        ),
    ];
    for (i, (op, start, condition, compare)) in cases.into_iter().enumerate() {
        let s = Arc::new(Signal::new(start));
        let waiter = {
            let s = s.clone();
            thread::spawn(move || wait_for(&s, condition, compare))
        };
        thread::sleep(Duration::from_millis(20));
        op(&s);
        let v = waiter.join().unwrap();
        assert!(condition.holds(v, compare), "case {i}: woke with {v}");
    }
}

/// Round trips between two threads that each park on a signal the other
/// sets. Every hop must be woken by the modification itself: the waiters'
/// periodic re-check alone would make each hop take a whole
/// `RECHECK_INTERVAL`, so the bound (a quarter of that per hop, thousands of
/// times a working hand-off) only fails when notification is broken.
#[test]
fn modifications_wake_parked_waiters_promptly() {
    const ROUNDS: u32 = 40;
    let ping = Arc::new(Signal::new(0));
    let pong = Arc::new(Signal::new(0));
    let echo = {
        let (ping, pong) = (ping.clone(), pong.clone());
        thread::spawn(move || {
            for i in 1..=ROUNDS as i64 {
                thread::sleep(Duration::from_micros(200)); // let the other side park
                wait_for(&ping, Condition::Eq, i);
                pong.store(i, Order::Release);
            }
        })
    };
    let start = Instant::now();
    for i in 1..=ROUNDS as i64 {
        ping.store(i, Order::Release);
        thread::sleep(Duration::from_micros(200));
        let v = wait_for(&pong, Condition::Eq, i);
        assert_eq!(v, i);
    }
    let elapsed = start.elapsed();
    echo.join().unwrap();
    let bound = RECHECK_INTERVAL / 4 * (2 * ROUNDS);
    assert!(
        elapsed < bound,
        "{ROUNDS} round trips took {elapsed:?} (bound {bound:?})"
    );
}

#[test]
fn wait_times_out_with_unchanged_value() {
    let s = Signal::new(5);
    for hint in [WaitHint::Active, WaitHint::Blocked] {
        let timeout = Duration::from_millis(100);
        let start = Instant::now();
        let v = s.wait(Condition::Eq, 0, Some(timeout), hint, Order::Acquire);
        assert_eq!(v, 5);
        assert!(
            start.elapsed() >= timeout,
            "returned after {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn huge_timeout_means_forever_not_overflow() {
    let s = Signal::new(1);
    assert_eq!(
        s.wait(
            Condition::Eq,
            1,
            Some(Duration::MAX),
            WaitHint::Blocked,
            Order::Acquire
        ),
        1
    );
}

#[test]
fn waiting_thread_uses_little_cpu() {
    for hint in [WaitHint::Active, WaitHint::Blocked] {
        let s = Arc::new(Signal::new(1));
        let waiter = {
            let s = s.clone();
            thread::spawn(move || {
                let (usage0, wall0) = (ThreadUsage::now(), Instant::now());
                let v = s.wait(Condition::Eq, 0, None, hint, Order::Acquire);
                (v, ThreadUsage::now().since(usage0), wall0.elapsed())
            })
        };
        thread::sleep(Duration::from_millis(300));
        s.store(0, Order::Release);
        let (v, used, wall) = waiter.join().unwrap();
        assert_eq!(v, 0);
        assert!(
            wall >= Duration::from_millis(200),
            "{hint:?}: woke early after {wall:?}"
        );
        assert!(
            used.cpu * 2 < wall,
            "{hint:?}: waiter used {used:?} in {wall:?}"
        );
        assert!(
            used.sleeps <= IDLE_SLEEPS_PER_300MS,
            "{hint:?}: waiter polled: {used:?}"
        );
    }
}

#[test]
fn silent_store_is_seen_by_loads_and_waits() {
    let s = Arc::new(Signal::new(1));
    s.silent_store(2, Order::Release);
    assert_eq!(s.load(Order::Acquire), 2);
    assert_eq!(
        s.wait(
            Condition::Eq,
            2,
            Some(Duration::ZERO),
            WaitHint::Active,
            Order::Acquire
        ),
        2
    );
    // A parked waiter still sees a silent store when it re-checks.
    let waiter = {
        let s = s.clone();
        thread::spawn(move || wait_for(&s, Condition::Eq, 0))
    };
    thread::sleep(Duration::from_millis(30));
    s.silent_store(0, Order::Release);
    assert_eq!(waiter.join().unwrap(), 0);
}

#[test]
fn value_ptr_is_stable_and_reads_the_value() {
    let s = Signal::new(17);
    let before = s.value_ptr();
    let s = Arc::new(s); // moving the Signal must not move its value
    assert_eq!(s.value_ptr(), before);
    assert_eq!(before as usize % 8, 0, "value must be 8-byte aligned");
    s.store(-3, Order::Release);
    // SAFETY: the pointer is valid while `s` lives.
    assert_eq!(unsafe { before.read_volatile() }, -3);
    // Writes through it (as a kernel would) are seen by loads.
    // SAFETY: as above, and no other thread touches the signal now.
    unsafe { (before as *mut i64).write_volatile(8) };
    assert_eq!(s.load(Order::Acquire), 8);
}

#[test]
fn times_round_trip() {
    let s = Signal::new(0);
    assert_eq!(s.times(), None);
    s.set_times(100, 250);
    assert_eq!(s.times(), Some((100, 250)));
    s.set_times(300, 400);
    assert_eq!(s.times(), Some((300, 400)));
}

#[test]
fn stress_concurrent_add_subtract_is_exact() {
    const THREADS: i64 = 4;
    const ITERS: i64 = 10_000;
    let s = Arc::new(Signal::new(0));
    let target = THREADS * ITERS * 2;
    let waiter = {
        let s = s.clone();
        thread::spawn(move || wait_for(&s, Condition::Eq, target))
    };
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let s = s.clone();
            thread::spawn(move || {
                for i in 0..ITERS {
                    let order = ORDERS[((t + i) % 4) as usize];
                    s.add(3, order);
                    s.subtract(1, order);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(s.load(Order::Acquire), target);
    assert_eq!(waiter.join().unwrap(), target);
}

#[test]
fn stress_cas_increments_are_exact() {
    let s = Arc::new(Signal::new(0));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let s = s.clone();
            thread::spawn(move || {
                for _ in 0..10_000 {
                    let mut seen = s.load(Order::Relaxed);
                    loop {
                        let old = s.cas(seen, seen + 1, Order::AcqRel);
                        if old == seen {
                            break;
                        }
                        seen = old;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(s.load(Order::Acquire), 40_000);
}

#[test]
fn wait_any_returns_the_signal_that_fired() {
    let signals: Vec<_> = (0..3).map(|_| Arc::new(Signal::new(1))).collect();
    let list: Vec<_> = signals
        .iter()
        .map(|s| (s.clone(), Condition::Eq, 0))
        .collect();
    let setter = {
        let s = signals[1].clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            s.store(0, Order::Release);
        })
    };
    assert_eq!(
        wait_any(&list, Some(PATIENCE), WaitHint::Blocked),
        Some((1, 0))
    );
    setter.join().unwrap();
    // Signals untouched by the wait.
    assert_eq!(signals[0].load(Order::Acquire), 1);
    assert_eq!(signals[2].load(Order::Acquire), 1);
}

#[test]
fn wait_any_with_mixed_conditions() {
    let a = Arc::new(Signal::new(5));
    let b = Arc::new(Signal::new(5));
    let list = vec![
        (a.clone(), Condition::Lt, 0),
        (b.clone(), Condition::Gte, 10),
    ];
    let setter = {
        let b = b.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            b.add(7, Order::Release);
        })
    };
    assert_eq!(
        wait_any(&list, Some(PATIENCE), WaitHint::Active),
        Some((1, 12))
    );
    setter.join().unwrap();
    a.store(-1, Order::Release);
    assert_eq!(wait_any(&list, None, WaitHint::Active), Some((0, -1)));
}

#[test]
fn wait_any_times_out_and_handles_empty_list() {
    let s = Arc::new(Signal::new(1));
    let list = vec![
        (s.clone(), Condition::Eq, 0),
        (s.clone(), Condition::Gte, 2),
    ];
    let timeout = Duration::from_millis(100);
    let start = Instant::now();
    assert_eq!(wait_any(&list, Some(timeout), WaitHint::Blocked), None);
    assert!(start.elapsed() >= timeout);
    assert_eq!(wait_any(&[], None, WaitHint::Blocked), None);
}

#[test]
fn async_handler_fires_once_per_condition_and_rearms() {
    let handlers = AsyncHandlers::new();
    let s = Arc::new(Signal::new(1));
    let calls = counter();
    let (tx, rx) = mpsc::channel();
    let c = calls.clone();
    handlers.register(
        s.clone(),
        Condition::Eq,
        0,
        Box::new(move |v| {
            c.fetch_add(1, Ordering::SeqCst);
            tx.send(v).unwrap();
            true
        }),
    );
    thread::sleep(Duration::from_millis(30));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "fired before the condition held"
    );
    s.store(0, Order::Release);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(0));
    // Still 0 and unchanged: no further calls (several safety-net periods).
    thread::sleep(Duration::from_millis(200));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "re-fired without a change");
    // Storing the same value is no change.
    s.store(0, Order::Release);
    thread::sleep(Duration::from_millis(100));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "re-fired on a same-value store"
    );
    // Leave and re-enter the condition: fires again.
    s.store(1, Order::Release);
    s.store(0, Order::Release);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(0));
}

#[test]
fn async_handler_rearms_on_change_within_condition() {
    let handlers = AsyncHandlers::new();
    let s = Arc::new(Signal::new(0));
    let (tx, rx) = mpsc::channel();
    handlers.register(
        s.clone(),
        Condition::Gte,
        5,
        Box::new(move |v| {
            tx.send(v).unwrap();
            true
        }),
    );
    s.store(5, Order::Release);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(5));
    s.add(1, Order::Release);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(6));
}

#[test]
fn async_handler_returning_false_is_removed() {
    let handlers = AsyncHandlers::new();
    let s = Arc::new(Signal::new(0)); // condition already holds
    let calls = counter();
    let (tx, rx) = mpsc::channel();
    let c = calls.clone();
    handlers.register(
        s.clone(),
        Condition::Eq,
        0,
        Box::new(move |v| {
            c.fetch_add(1, Ordering::SeqCst);
            tx.send(v).unwrap();
            false
        }),
    );
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(0));
    for _ in 0..3 {
        s.store(1, Order::Release);
        s.store(0, Order::Release);
        thread::sleep(Duration::from_millis(30));
    }
    thread::sleep(Duration::from_millis(100));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn panicking_handler_is_dropped_and_others_keep_working() {
    let handlers = AsyncHandlers::new();
    let s = Arc::new(Signal::new(1));
    let panics = counter();
    let p = panics.clone();
    handlers.register(
        s.clone(),
        Condition::Ne,
        1,
        Box::new(move |_| {
            p.fetch_add(1, Ordering::SeqCst);
            panic!("deliberate panic in a signal handler (expected by the test)");
        }),
    );
    let (tx, rx) = mpsc::channel();
    handlers.register(
        s.clone(),
        Condition::Ne,
        1,
        Box::new(move |v| {
            tx.send(v).unwrap();
            true
        }),
    );
    s.store(2, Order::Release);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(2));
    s.store(3, Order::Release);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(3));
    // The thread survived: a new registration on another signal works too.
    let other = Arc::new(Signal::new(0));
    let (tx2, rx2) = mpsc::channel();
    handlers.register(
        other.clone(),
        Condition::Eq,
        0,
        Box::new(move |v| {
            tx2.send(v).unwrap();
            false
        }),
    );
    assert_eq!(rx2.recv_timeout(PATIENCE), Ok(0));
    assert_eq!(
        panics.load(Ordering::SeqCst),
        1,
        "panicking handler ran again"
    );
}

#[test]
fn handler_may_modify_signals_and_register_handlers() {
    let handlers = Arc::new(AsyncHandlers::new());
    let first = Arc::new(Signal::new(1));
    let second = Arc::new(Signal::new(1));
    let (tx, rx) = mpsc::channel();
    {
        let (h, first2, second) = (handlers.clone(), first.clone(), second.clone());
        handlers.register(
            first.clone(),
            Condition::Eq,
            0,
            Box::new(move |_| {
                let tx = tx.clone();
                h.register(
                    second.clone(),
                    Condition::Eq,
                    0,
                    Box::new(move |v| {
                        tx.send(v).unwrap();
                        false
                    }),
                );
                second.store(0, Order::Release); // wakes the handler thread itself
                first2.store(5, Order::Release); // modifies its own signal
                false
            }),
        );
    }
    first.store(0, Order::Release);
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(0));
    assert_eq!(first.load(Order::Acquire), 5);
}

/// Like `modifications_wake_parked_waiters_promptly`, for the handler thread:
/// each round the handler answers a change of `ping` by setting `pong`.
#[test]
fn handler_thread_is_woken_promptly_by_changes() {
    const ROUNDS: u32 = 40;
    let handlers = AsyncHandlers::new();
    let ping = Arc::new(Signal::new(0));
    let pong = Arc::new(Signal::new(0));
    let p = pong.clone();
    handlers.register(
        ping.clone(),
        Condition::Gte,
        1,
        Box::new(move |v| {
            p.store(v, Order::Release);
            true
        }),
    );
    let start = Instant::now();
    for i in 1..=ROUNDS as i64 {
        thread::sleep(Duration::from_micros(200)); // let the handler thread sleep
        ping.store(i, Order::Release);
        let v = wait_for(&pong, Condition::Eq, i);
        assert_eq!(v, i);
    }
    let elapsed = start.elapsed();
    let bound = RECHECK_INTERVAL / 4 * (2 * ROUNDS);
    assert!(
        elapsed < bound,
        "{ROUNDS} round trips took {elapsed:?} (bound {bound:?})"
    );
}

#[test]
fn many_handlers_on_many_signals() {
    let handlers = AsyncHandlers::new();
    let signals: Vec<_> = (0..32).map(|_| Arc::new(Signal::new(1))).collect();
    let (tx, rx) = mpsc::channel();
    for (i, s) in signals.iter().enumerate() {
        let tx = tx.clone();
        handlers.register(
            s.clone(),
            Condition::Eq,
            0,
            Box::new(move |_| {
                tx.send(i).unwrap();
                false
            }),
        );
    }
    for s in signals.iter().rev() {
        s.subtract(1, Order::Release);
    }
    let mut seen: Vec<usize> = (0..32)
        .map(|_| rx.recv_timeout(PATIENCE).unwrap())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..32).collect::<Vec<_>>());
}

#[test]
fn shutdown_waits_for_running_handler_and_drops_pending() {
    struct SetOnDrop(Arc<AtomicBool>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    let handlers = AsyncHandlers::new();
    let busy = Arc::new(Signal::new(0));
    let (started_tx, started_rx) = mpsc::channel();
    let finished = Arc::new(AtomicBool::new(false));
    let f = finished.clone();
    handlers.register(
        busy,
        Condition::Eq,
        0,
        Box::new(move |_| {
            started_tx.send(()).unwrap();
            thread::sleep(Duration::from_millis(150));
            f.store(true, Ordering::SeqCst);
            false
        }),
    );
    let pending_dropped = Arc::new(AtomicBool::new(false));
    let guard = SetOnDrop(pending_dropped.clone());
    let never = Arc::new(Signal::new(1));
    handlers.register(
        never.clone(),
        Condition::Eq,
        0,
        Box::new(move |_| {
            let _keep = &guard;
            true
        }),
    );
    started_rx.recv_timeout(PATIENCE).unwrap();
    handlers.shutdown();
    assert!(
        finished.load(Ordering::SeqCst),
        "shutdown did not wait for the running handler"
    );
    assert!(
        pending_dropped.load(Ordering::SeqCst),
        "pending handler not dropped"
    );
    // Registrations after shutdown are dropped, not run.
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    handlers.register(
        Arc::new(Signal::new(0)),
        Condition::Eq,
        0,
        Box::new(move |_| {
            r.store(true, Ordering::SeqCst);
            false
        }),
    );
    thread::sleep(Duration::from_millis(50));
    assert!(!ran.load(Ordering::SeqCst));
    // The dropped registration released its signal.
    assert_eq!(Arc::strong_count(&never), 1);
}

#[test]
fn drop_joins_the_handler_thread() {
    let handlers = AsyncHandlers::new();
    let s = Arc::new(Signal::new(1));
    handlers.register(s.clone(), Condition::Eq, 0, Box::new(|_| true));
    drop(handlers);
    // Dropping the handler thread's registration unwatches the signal, so
    // this holder is the only one left.
    assert_eq!(Arc::strong_count(&s), 1);
}

#[test]
fn handler_thread_sleeps_while_nothing_changes() {
    let handlers = AsyncHandlers::new();
    // Something registered but never satisfied keeps the thread watching.
    handlers.register(
        Arc::new(Signal::new(1)),
        Condition::Eq,
        0,
        Box::new(|_| true),
    );
    let s = Arc::new(Signal::new(0));
    let (tx, rx) = mpsc::channel();
    handlers.register(
        s.clone(),
        Condition::Gte,
        0,
        Box::new(move |_| {
            tx.send((ThreadUsage::now(), Instant::now())).unwrap();
            true
        }),
    );
    let (usage0, wall0) = rx.recv_timeout(PATIENCE).unwrap();
    thread::sleep(Duration::from_millis(300));
    s.add(1, Order::Release);
    let (usage1, wall1) = rx.recv_timeout(PATIENCE).unwrap();
    let (used, wall) = (usage1.since(usage0), wall1 - wall0);
    assert!(
        wall >= Duration::from_millis(250),
        "re-fired early after {wall:?}"
    );
    assert!(
        used.cpu * 2 < wall,
        "handler thread used {used:?} in {wall:?}"
    );
    assert!(
        used.sleeps <= IDLE_SLEEPS_PER_300MS,
        "handler thread polled: {used:?}"
    );
}

/// `hsa_signal_destroy` with threads parked on the signal: every waiter
/// wakes and returns the last value instead of sleeping until its own
/// timeout (none here).
#[test]
fn destroying_a_signal_wakes_its_64_waiters() {
    let signal = Arc::new(Signal::new(5));
    let started = Arc::new(Barrier::new(65));
    let (tx, rx) = mpsc::channel();
    for _ in 0..64 {
        let (signal, started, tx) = (signal.clone(), started.clone(), tx.clone());
        thread::spawn(move || {
            started.wait();
            let v = signal.wait(Condition::Eq, 0, None, WaitHint::Blocked, Order::Acquire);
            tx.send(v).unwrap();
        });
    }
    started.wait();
    thread::sleep(Duration::from_millis(50));
    assert!(
        rx.try_recv().is_err(),
        "a waiter returned before the destroy"
    );
    signal.destroy();
    for _ in 0..64 {
        let v = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("a waiter still sleeps after the destroy");
        assert_eq!(v, 5);
    }
}
