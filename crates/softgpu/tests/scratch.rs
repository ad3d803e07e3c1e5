//! The per-stream scratch pool and bounded upload staging.

mod common;

use softgpu::{Args, Error, MemoryBudget};

#[test]
fn scratch_is_rounded_reused_once_idle_and_limited() {
    let (device, stream, module) = common::setup();
    let spin = module.kernel("spin").unwrap();
    let first = stream.scratch(1000).unwrap();
    assert_eq!(first.bytes(), 1024);
    let addr = first.address();
    stream.recycle(first).unwrap();
    let again = stream.scratch(600).unwrap();
    assert_eq!(
        again.address(),
        addr,
        "an idle buffer of the size is reused"
    );

    // While queued work uses a recycled buffer, it is not handed out.
    stream.fill_pattern(&again, 0.0f32).unwrap();
    stream
        .dispatch_args(&spin, 1, 64, &Args::new().view(&again).value(300_000u32))
        .unwrap();
    stream.recycle(again).unwrap();
    let other = stream.scratch(1024).unwrap();
    assert_ne!(other.address(), addr);
    assert_eq!(stream.scratch_bytes(), 2048);
    stream.synchronize().unwrap();
    let reused = stream.scratch(1024).unwrap();
    assert_eq!(reused.address(), addr);

    // Only the pool's own buffers go back to it.
    let plain = stream.allocate(1024).unwrap();
    assert!(matches!(stream.recycle(plain), Err(Error::Invalid(_))));
    let theirs = device.stream().unwrap().scratch(1024).unwrap();
    assert!(matches!(stream.recycle(theirs), Err(Error::Invalid(_))));

    // The limit covers handed-out and idle buffers; idle ones are freed to
    // make room, handed-out ones are not.
    stream.recycle(other).unwrap();
    stream.set_scratch_limit(3072);
    let big = stream.scratch(2048).unwrap();
    assert_eq!(
        stream.scratch_bytes(),
        1024 + 2048,
        "the idle 1 KiB was freed"
    );
    let err = stream.scratch(2048).unwrap_err();
    assert!(matches!(err, Error::Budget { .. }), "{err}");
    drop(big);
    assert_eq!(stream.scratch_bytes(), 1024);
    stream.scratch(2048).unwrap();
}

#[test]
fn scratch_is_charged_to_the_memory_budget() {
    let (device, _stream, _module) = common::setup();
    let budget = MemoryBudget::new(4096);
    let stream = device.stream().unwrap().with_memory_budget(budget.clone());
    let a = stream.scratch(3000).unwrap();
    assert_eq!(budget.used(), 4096);
    assert!(matches!(stream.scratch(10), Err(Error::Budget { .. })));
    stream.recycle(a).unwrap();
    assert_eq!(budget.used(), 4096, "an idle scratch buffer is still held");
    // A request of another size frees the idle buffer to fit.
    let b = stream.scratch(2000).unwrap();
    assert_eq!(b.bytes(), 2048);
    assert_eq!(budget.used(), 2048);
}

/// Staging is bounded: uploads to a stream stuck behind slow work wait
/// rather than pile up, and big uploads stream through in pieces.
#[test]
fn upload_staging_is_bounded() {
    const MIB: usize = 1 << 20;
    let (device, gate, module) = common::setup();
    let spin = module.kernel("spin").unwrap();
    let stream = device.stream().unwrap();
    let slow = gate.allocate_zeroed(4 * 64).unwrap();
    gate.dispatch_args(&spin, 1, 64, &Args::new().view(&slow).value(20_000_000u32))
        .unwrap();
    stream.wait_event(&gate.record_event().unwrap()).unwrap();
    let target = stream.allocate(40 * MIB).unwrap();
    let data: Vec<u32> = (0..(40 * MIB / 4) as u32).collect();
    for _ in 0..3 {
        stream.upload(&target, &data).unwrap();
        assert!(
            stream.staging_bytes() <= 64 * MIB,
            "{} bytes staged",
            stream.staging_bytes()
        );
    }
    let back: Vec<u32> = stream.read_vec(&target).unwrap();
    assert!(back == data, "the pieces of an upload land in order");
    assert_eq!(stream.staging_bytes(), 0);
}
