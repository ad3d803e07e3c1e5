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
    a.fill(&slow, 0.0f32).unwrap();
    a.dispatch(&spin, 1, 64, &Args::new().view(&slow).value(100_000u32))
        .unwrap();
    a.dispatch(&scale, 1, 64, &Args::new().view(&x).value(10.0f32))
        .unwrap();
    let written = a.record_event().unwrap();
    b.wait_event(&written).unwrap();
    let seen: Vec<f32> = b.read_blocking(&x).unwrap();
    assert_eq!(seen, vec![20.0; 64]);
    assert!(written.is_complete());
}

#[test]
fn elapsed_time_is_non_negative() {
    let (_device, stream, module) = common::setup();
    let spin = module.kernel("spin").unwrap();
    let x = stream.allocate_zeroed(4 * 64).unwrap();
    let start = stream.record_event().unwrap();
    stream
        .dispatch(&spin, 1, 64, &Args::new().view(&x).value(10_000u32))
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
