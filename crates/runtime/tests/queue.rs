//! The runtime core end to end: code objects loaded into executables,
//! kernels dispatched through AQL packets written into a queue's ring,
//! barrier packets, malformed packets and kernel faults, memory pools,
//! and dispatch capture and replay.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use softgpu_exec::Arg;
use softgpu_runtime::agent::PoolKind;
use softgpu_runtime::queue::{packet_type, Queue, QueueError};
use softgpu_runtime::signal::Order;
use softgpu_runtime::Error;

#[test]
fn vector_add_through_an_aql_queue_wrapping_the_ring() {
    let f = Fixture::new();
    let queue = f.queue(None);
    let n = 1000u32;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let (da, db) = (upload(&f, &a), upload(&f, &b));
    // More packets than ring slots: the processor must recycle them.
    for round in 0..150u32 {
        let dc = upload(&f, &vec![0.0; n as usize]);
        let args = [
            Arg::Pointer(da),
            Arg::Pointer(db),
            Arg::Pointer(dc),
            Arg::U32(n - round),
        ];
        let kernarg = f.kernargs("vadd", n, 64, &args);
        let (h, s) = f.signal(1);
        f.submit(&queue, f.dispatch_packet("vadd", n, 64, kernarg, h));
        assert_eq!(wait_zero(&s), 0, "dispatch {round} did not complete");
        let mut out = vec![0u8; 4 * n as usize];
        f.rt.arena.read(dc, &mut out).unwrap();
        let c = floats(&out);
        for i in 0..n as usize {
            let want = if (i as u32) < n - round {
                a[i] + b[i]
            } else {
                0.0
            };
            assert_eq!(c[i], want, "round {round} element {i}");
        }
        let (start, end) = s.times().expect("dispatch times recorded");
        assert!(end >= start);
        f.rt.free(dc).unwrap();
    }
    assert_eq!(queue.read_index.load(Ordering::Acquire), 150);
    f.rt.destroy_queue(queue.address).unwrap();
    assert!(
        f.rt.queue(queue.address).is_err(),
        "a destroyed queue is gone"
    );
}

#[test]
fn barrier_packets_wait_for_their_dependencies() {
    let f = Fixture::new();
    let queue = f.queue(None);
    let n = 64u32;
    let da = upload(&f, &vec![0.0; n as usize]);
    let db = upload(&f, &vec![1.0; n as usize]);
    let dc = upload(&f, &vec![0.0; n as usize]);
    let (dep_h, dep) = f.signal(1);
    let (other_h, _other) = f.signal(1);
    let (and_h, and_done) = f.signal(1);
    let (or_h, or_done) = f.signal(1);
    let (k_h, k_done) = f.signal(1);
    f.submit(&queue, f.barrier_packet(true, &[dep_h], and_h));
    f.submit(&queue, f.barrier_packet(false, &[other_h, dep_h], or_h));
    let args = [
        Arg::Pointer(da),
        Arg::Pointer(db),
        Arg::Pointer(dc),
        Arg::U32(n),
    ];
    let kernarg = f.kernargs("vadd", n, 64, &args);
    f.submit(&queue, f.dispatch_packet("vadd", n, 64, kernarg, k_h));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        and_done.load(Order::Acquire),
        1,
        "the AND barrier must wait"
    );
    assert_eq!(
        k_done.load(Order::Acquire),
        1,
        "packets behind a barrier wait"
    );
    // Data the kernel reads is written before the dependency is released.
    let twos: Vec<u8> = [2.0f32; 64].iter().flat_map(|v| v.to_le_bytes()).collect();
    f.rt.arena.write(da, &twos).unwrap();
    dep.store(0, Order::Release);
    assert_eq!(wait_zero(&k_done), 0);
    assert_eq!(and_done.load(Order::Acquire), 0);
    assert_eq!(
        or_done.load(Order::Acquire),
        0,
        "OR needs only one dependency"
    );
    let mut out = vec![0u8; 256];
    f.rt.arena.read(dc, &mut out).unwrap();
    assert!(
        floats(&out).iter().all(|&v| v == 3.0),
        "the kernel saw the data released before it"
    );
    f.rt.destroy_queue(queue.address).unwrap();
}

type Errors = Arc<Mutex<Vec<QueueError>>>;

fn recording_queue(f: &Fixture) -> (Arc<Queue>, Errors) {
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    let queue = f.queue(Some(Box::new(move |e: &QueueError| {
        sink.lock().unwrap().push(e.clone());
    })));
    (queue, errors)
}

fn wait_for_error(errors: &Mutex<Vec<QueueError>>) -> QueueError {
    for _ in 0..600 {
        if let Some(e) = errors.lock().unwrap().first() {
            return e.clone();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the queue's error callback was not called");
}

/// A dependency that goes negative (the work it tracks failed) fails the
/// barrier and its queue, for AND and OR barriers alike, instead of
/// leaving the queue waiting forever.
#[test]
fn a_negative_dependency_fails_the_barrier() {
    let f = Fixture::new();
    for all in [true, false] {
        let (queue, errors) = recording_queue(&f);
        let (dep_h, dep) = f.signal(1);
        let (done_h, done) = f.signal(1);
        f.submit(&queue, f.barrier_packet(all, &[dep_h], done_h));
        std::thread::sleep(Duration::from_millis(30));
        dep.store(-1, Order::Release);
        match wait_for_error(&errors) {
            QueueError::DependencyFailed { value } => assert_eq!(value, -1),
            other => panic!("expected a failed dependency, got {other}"),
        }
        assert_eq!(done.load(Order::Acquire), 1, "the barrier did not complete");
        f.rt.destroy_queue(queue.address).unwrap();
    }
}

#[test]
fn malformed_packets_call_the_error_callback_and_stop_the_queue() {
    let f = Fixture::new();
    type Corrupt = Box<dyn Fn(&mut [u8; 64])>;
    let cases: Vec<(&str, Corrupt)> = vec![
        ("dimensions", Box::new(|p| p[2] = 0)),
        (
            "kernel object",
            Box::new(|p| p[32..40].copy_from_slice(&0xdead_0000u64.to_le_bytes())),
        ),
        ("unused", Box::new(|p| p[6] = 7)),
        ("packet type", Box::new(|p| p[0] = 7)),
        (
            "AGENT_DISPATCH",
            Box::new(|p| p[0] = packet_type::AGENT_DISPATCH),
        ),
        (
            "completion signal",
            Box::new(|p| p[56..64].copy_from_slice(&0x77u64.to_le_bytes())),
        ),
    ];
    for (what, corrupt) in cases {
        let (queue, errors) = recording_queue(&f);
        let kernarg = f.kernargs(
            "vadd",
            64,
            64,
            &[
                Arg::Pointer(0),
                Arg::Pointer(0),
                Arg::Pointer(0),
                Arg::U32(0),
            ],
        );
        let mut p = f.dispatch_packet("vadd", 64, 64, kernarg, 0);
        corrupt(&mut p);
        f.submit(&queue, p);
        match wait_for_error(&errors) {
            e @ (QueueError::InvalidPacket(..) | QueueError::LaunchRefused { .. }) => {
                let m = e.to_string();
                assert!(m.contains(what), "{what}: {m}")
            }
            other => panic!("{what}: expected an invalid packet, got {other}"),
        }
        // The queue stopped: a valid packet behind it is not run.
        let (h, s) = f.signal(1);
        f.submit(&queue, f.dispatch_packet("vadd", 64, 64, kernarg, h));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(s.load(Order::Acquire), 1);
        f.rt.destroy_queue(queue.address).unwrap();
    }
}

#[test]
fn a_kernel_fault_reaches_the_error_callback_and_the_process_goes_on() {
    let f = Fixture::new();
    let (queue, errors) = recording_queue(&f);
    let kernarg = f.kernargs("wild", 64, 64, &[Arg::Pointer(0)]);
    let (h, s) = f.signal(1);
    f.submit(&queue, f.dispatch_packet("wild", 64, 64, kernarg, h));
    match wait_for_error(&errors) {
        QueueError::KernelFault(report) => {
            let text = report.to_string();
            assert!(text.contains("wild"), "{text}");
            assert!(text.contains("0x40"), "the address: {text}");
        }
        other => panic!("expected a kernel fault, got {other}"),
    }
    assert_eq!(
        s.load(Order::Acquire),
        1,
        "a faulted dispatch does not complete"
    );
    f.rt.destroy_queue(queue.address).unwrap();
    // Another queue still works.
    let queue = f.queue(None);
    let n = 64;
    let da = upload(&f, &vec![1.0; n]);
    let dc = upload(&f, &vec![0.0; n]);
    let kernarg = f.kernargs(
        "vadd",
        64,
        64,
        &[
            Arg::Pointer(da),
            Arg::Pointer(da),
            Arg::Pointer(dc),
            Arg::U32(64),
        ],
    );
    let (h, s) = f.signal(1);
    f.submit(&queue, f.dispatch_packet("vadd", 64, 64, kernarg, h));
    assert_eq!(wait_zero(&s), 0);
    f.rt.destroy_queue(queue.address).unwrap();
}

#[test]
fn pools_charge_allocations_and_refuse_exhaustion() {
    let f = Fixture::new();
    let pool = f.pool(1, PoolKind::CoarseDevice);
    let capacity = f.rt.pool(pool).unwrap().capacity;
    assert!(matches!(
        f.rt.allocate(pool, capacity + 1),
        Err(Error::PoolFull { .. })
    ));
    let a = f.rt.allocate(pool, 100).unwrap();
    assert_eq!(a % 4096, 0, "pool allocations are page-aligned");
    let info = f.rt.pointer_info(a + 50);
    assert_eq!((info.base, info.len), (a, 4096));
    f.rt.free(a).unwrap();
    assert!(f.rt.free(a).is_err(), "double free");
    assert!(f.rt.free(a + 8).is_err(), "not an allocation start");
    // Device memory is confined byte-exactly to what was asked; a kernarg
    // pool allocation reaches its whole 4 KiB granule, as ROCr's does (a
    // kernel reads its hidden arguments past the explicit ones a program
    // sized the buffer for).
    let device = f.rt.allocate(pool, 16).unwrap();
    assert!(f.rt.arena.check(device, 16).is_ok() && f.rt.arena.check(device, 17).is_err());
    let kernarg_pool = f.pool(0, PoolKind::Kernarg);
    let args = f.rt.allocate(kernarg_pool, 16).unwrap();
    assert!(f.rt.arena.check(args, 4096).is_ok() && f.rt.arena.check(args, 4097).is_err());
    let group = f.pool(1, PoolKind::Group);
    assert!(f.rt.allocate(group, 64).is_err(), "LDS is not allocatable");
    assert!(f.rt.allocate(0x1234, 64).is_err(), "forged pool handle");
}

#[test]
fn locked_host_memory_is_reachable_by_kernels() {
    let f = Fixture::new();
    let queue = f.queue(None);
    let host: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut out = vec![0f32; 64];
    // SAFETY: both vectors outlive the unlock below, and Rust reads `out`
    // only once the kernel has finished (the signal wait orders it).
    let (a, c) = unsafe {
        (
            f.rt.lock(host.as_ptr() as u64, 256).unwrap(),
            f.rt.lock(out.as_mut_ptr() as u64, 256).unwrap(),
        )
    };
    let kernarg = f.kernargs(
        "vadd",
        64,
        64,
        &[
            Arg::Pointer(a),
            Arg::Pointer(a),
            Arg::Pointer(c),
            Arg::U32(64),
        ],
    );
    let (h, s) = f.signal(1);
    f.submit(&queue, f.dispatch_packet("vadd", 64, 64, kernarg, h));
    assert_eq!(wait_zero(&s), 0);
    f.rt.unlock(a).unwrap();
    f.rt.unlock(c).unwrap();
    assert!(f.rt.unlock(c).is_err(), "not locked any more");
    let want: Vec<f32> = host.iter().map(|v| 2.0 * v).collect();
    // The kernel wrote `out` through the pointer `lock` was given; its
    // completion signal (acquired above) orders those writes before this.
    assert_eq!(out, want);
    f.rt.destroy_queue(queue.address).unwrap();
}
