//! Events: cross-stream ordering and timing.

mod common;

use softgpu::Args;

#[test]
fn stream_b_waits_for_stream_a_kernel() {
    let (device, a, module) = common::setup();
    let (spin, scale) = (
        module.kernel("spin").unwrap(),
        module.kernel("scale").unwrap(),
    );
    let b = device.stream().unwrap();
    let x = a.allocate(4 * 64).unwrap();
    a.upload(&x, &[2.0f32; 64]).unwrap();
    // A slow kernel first, so B would read too early without the event.
    let slow = a.allocate(4 * 64).unwrap();
    a.fill_pattern(&slow, 0.0f32).unwrap();
    a.dispatch_args(&spin, 1, 64, &Args::new().view(&slow).value(100_000u32))
        .unwrap();
    a.dispatch_args(&scale, 1, 64, &Args::new().view(&x).value(10.0f32))
        .unwrap();
    let written = a.record_event().unwrap();
    b.wait_event(&written).unwrap();
    let seen: Vec<f32> = b.read_vec(&x).unwrap();
    assert_eq!(seen, vec![20.0; 64]);
    assert!(written.is_complete().unwrap());
}

#[test]
fn elapsed_time_is_non_negative() {
    let (_device, stream, module) = common::setup();
    let spin = module.kernel("spin").unwrap();
    let x = stream.allocate_zeroed(4 * 64).unwrap();
    let start = stream.record_event().unwrap();
    stream
        .dispatch_args(&spin, 1, 64, &Args::new().view(&x).value(10_000u32))
        .unwrap();
    let end = stream.record_event().unwrap();
    end.synchronize().unwrap();
    let t = end.elapsed_since(&start).unwrap();
    assert!(t.as_nanos() > 0, "a kernel ran between the events");
    assert_eq!(start.elapsed_since(&end).unwrap().as_nanos(), 0);
}

#[test]
fn events_are_shared_across_threads() {
    let (_device, stream, _module) = common::setup();
    let event = stream.record_event().unwrap();
    let waiter = std::thread::spawn(move || event.synchronize());
    waiter.join().unwrap().unwrap();
}

/// A stream waiting for an event of a stream that faults before reaching
/// it fails too, instead of waiting forever.
#[test]
fn waiting_on_a_faulted_streams_event_fails_instead_of_hanging() {
    let (device, a, module) = common::setup();
    let (wild, scale) = (
        module.kernel("wild").unwrap(),
        module.kernel("scale").unwrap(),
    );
    let b = device.stream().unwrap();
    let x = a.allocate(4 * 64).unwrap();
    a.dispatch_args(&wild, 1, 64, &Args::new().view(&x))
        .unwrap();
    let never = a.record_event().unwrap();
    b.wait_event(&never).unwrap();
    b.dispatch_args(&scale, 1, 64, &Args::new().view(&x).value(2.0f32))
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        tx.send(b.synchronize().map_err(|e| e.to_string())).unwrap();
        b
    });
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("stream b still waits for an event that will never come");
    let err = result.expect_err("stream b ran past a failed dependency");
    assert!(err.contains("failed"), "{err}");
    let b = waiter.join().unwrap();
    assert!(a.synchronize().is_err(), "stream a's fault is reported");
    // Both streams work again.
    a.fill_pattern(&x, 1.0f32).unwrap();
    b.wait_event(&a.record_event().unwrap()).unwrap();
    b.dispatch_args(&scale, 1, 64, &Args::new().view(&x).value(2.0f32))
        .unwrap();
    assert_eq!(b.read_vec::<f32>(&x).unwrap(), vec![2.0; 64]);
}

/// The other order: the fault has already happened (unreported) when the
/// event is recorded, so the stream records it on a fresh queue. The event
/// still marks a point after failed work, so waiting for it fails; and the
/// fault is still reported to the stream's own next wait.
#[test]
fn an_event_recorded_after_an_unreported_fault_fails_its_waiters() {
    let (device, a, module) = common::setup();
    let (wild, scale) = (
        module.kernel("wild").unwrap(),
        module.kernel("scale").unwrap(),
    );
    let b = device.stream().unwrap();
    let x = a.allocate(4 * 64).unwrap();
    b.fill_pattern(&x, 1.0f32).unwrap();
    b.synchronize().unwrap();
    a.dispatch_args(&wild, 1, 64, &Args::new().view(&x))
        .unwrap();
    let settled = a.submit().unwrap();
    while settled.is_complete().is_ok_and(|done| !done) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let after_fault = a.record_event().unwrap();
    b.wait_event(&after_fault).unwrap();
    b.dispatch_args(&scale, 1, 64, &Args::new().view(&x).value(2.0f32))
        .unwrap();
    let err = b.synchronize().expect_err("b ran past a failed point");
    assert!(err.to_string().contains("failed"), "{err}");
    match a.synchronize() {
        Err(softgpu::Error::Fault(f)) => assert_eq!(f.kernel(), "wild"),
        other => panic!("a's fault is reported to a: {other:?}"),
    }
    assert_eq!(
        b.read_vec::<f32>(&x).unwrap(),
        vec![1.0; 64],
        "b's scale never ran"
    );
}
