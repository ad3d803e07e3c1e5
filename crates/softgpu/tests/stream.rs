//! Streams: ordering of uploads, dispatches and reads; fills and copies;
//! buffer lifetimes across queued work.

mod common;

use softgpu::Args;
use softgpu_test_support::bytes::from_bytes;

#[test]
fn vector_add_matches_the_cpu() {
    let (_device, stream, module) = common::setup();
    let vadd = module.kernel("vadd").unwrap();
    let n = 1000u32;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let bytes = 4 * n as usize;
    let (da, db, dc) = (
        stream.allocate(bytes).unwrap(),
        stream.allocate(bytes).unwrap(),
        stream.allocate(bytes).unwrap(),
    );
    stream.upload(&da, &a).unwrap();
    stream.upload(&db, &b).unwrap();
    let args = Args::new().view(&da).view(&db).view(&dc).value(n);
    stream
        .dispatch_args(&vadd, n.div_ceil(64), 64, &args)
        .unwrap();
    // No host wait between upload, dispatch and read: the stream orders them.
    let c: Vec<f32> = stream.read(&dc).unwrap().wait_as(&stream).unwrap();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(c, expected);
}

#[test]
fn dispatches_run_in_order() {
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let x = stream.allocate(4 * 64).unwrap();
    stream.upload(&x, &[1.0f32; 64]).unwrap();
    for k in [2.0f32, 3.0, 5.0] {
        stream
            .dispatch_args(&scale, 1, 64, &Args::new().view(&x).value(k))
            .unwrap();
    }
    let after_scales = stream.read(x.slice(0, 8)).unwrap();
    stream.fill_pattern(&x, 7.0f32).unwrap();
    let after_fill = stream.read(&x).unwrap();
    assert_eq!(after_scales.wait_as::<f32>(&stream).unwrap(), vec![30.0; 2]);
    assert_eq!(after_fill.wait_as::<f32>(&stream).unwrap(), vec![7.0; 64]);
}

#[test]
fn fill_copy_and_zeroed_allocation() {
    let (_device, stream, _module) = common::setup();
    let zero = stream.allocate_zeroed(100).unwrap();
    assert_eq!(stream.read_vec::<u8>(&zero).unwrap(), vec![0u8; 100]);
    let src = stream.allocate_shared(16).unwrap();
    stream.upload(&src, &[1u32, 2, 3, 4]).unwrap();
    let dst = stream.allocate(16).unwrap();
    stream.fill_pattern(&dst, 0xabu8).unwrap();
    stream.copy(dst.slice(8, 8), src.slice(4, 8)).unwrap();
    let got: Vec<u32> = stream.read_vec(&dst).unwrap();
    assert_eq!(got, vec![0xabababab, 0xabababab, 2, 3]);
    assert!(stream.copy(dst.slice(0, 8), src.slice(0, 4)).is_err());
    assert!(stream.fill_pattern(dst.slice(0, 6), 1u32).is_err());
    assert!(stream.upload(dst.slice(0, 4), &[1u32, 2]).is_err());
    stream.upload_at(&dst, 12, &[9u32]).unwrap();
    assert!(stream.upload_at(&dst, 14, &[9u32]).is_err());
    assert!(stream.upload_at(&dst, usize::MAX, &[9u32]).is_err());
    assert_eq!(
        stream.read_vec::<u32>(dst.slice_from(12).unwrap()).unwrap(),
        vec![9]
    );
}

#[test]
fn buffers_dropped_while_queued_stay_alive() {
    let (device, stream, module) = common::setup();
    let (spin, vadd) = (
        module.kernel("spin").unwrap(),
        module.kernel("vadd").unwrap(),
    );
    // Stream `gate` keeps `stream` waiting behind a slow kernel.
    let gate = device.stream().unwrap();
    let slow = gate.allocate(4 * 64).unwrap();
    gate.fill_pattern(&slow, 1.0f32).unwrap();
    gate.dispatch_args(&spin, 1, 64, &Args::new().view(&slow).value(1_000_000u32))
        .unwrap();
    let opened = gate.record_event().unwrap();
    stream.wait_event(&opened).unwrap();
    let n = 4096u32;
    let bytes = 4 * n as usize;
    // Inputs written beforehand by another stream: only the dispatch
    // holds them once the handles are dropped.
    let other = device.stream().unwrap();
    let (a, b, c) = (
        other.allocate(bytes).unwrap(),
        other.allocate(bytes).unwrap(),
        other.allocate(bytes).unwrap(),
    );
    other.upload(&a, &vec![1.0f32; n as usize]).unwrap();
    other
        .upload_blocking(&b, &vec![2.0f32; n as usize])
        .unwrap();
    let args = Args::new().view(&a).view(&b).view(&c).value(n);
    stream.dispatch_args(&vadd, n / 64, 64, &args).unwrap();
    drop(args);
    drop(a);
    drop(b);
    let result = stream.read(&c).unwrap();
    drop(c);
    // Memory freed too early would be handed out again here and trashed.
    let junk: Vec<_> = (0..3).map(|_| other.allocate(bytes).unwrap()).collect();
    for j in &junk {
        other.fill_pattern(j, -9.0f32).unwrap();
    }
    other.synchronize().unwrap();
    assert!(
        !result.is_complete().unwrap(),
        "the gate should still hold the stream"
    );
    assert_eq!(
        result.wait_as::<f32>(&stream).unwrap(),
        vec![3.0; n as usize]
    );
}

#[test]
fn submissions_complete() {
    let (_device, stream, _module) = common::setup();
    let x = stream.allocate(1 << 20).unwrap();
    stream.fill_pattern(&x, 3u32).unwrap();
    let s = stream.submit().unwrap();
    s.clone().wait().unwrap();
    assert!(s.is_complete().unwrap());
    stream.synchronize().unwrap();
}

#[test]
fn handles_of_the_same_device_share_kernels_and_buffers() {
    let (device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    // A second handle to the same GPU of the same instance.
    let again = device.instance().device(0).unwrap().stream().unwrap();
    let x = stream.allocate(4 * 32).unwrap();
    stream.fill_pattern(&x, 2.0f32).unwrap();
    let done = stream.record_event().unwrap();
    again.wait_event(&done).unwrap();
    again
        .dispatch_args(&scale, 1, 32, &Args::new().view(&x).value(4.0f32))
        .unwrap();
    assert_eq!(again.read_vec::<f32>(&x).unwrap(), vec![8.0; 32]);
}

#[test]
fn imported_host_memory_is_used_in_place() {
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let mut host = vec![0u8; 4 * 64];
    for (k, c) in host.chunks_exact_mut(4).enumerate() {
        c.copy_from_slice(&(k as f32).to_le_bytes());
    }
    // SAFETY: `host` outlives the buffer and is untouched until the stream
    // has finished with it.
    let buffer = unsafe { stream.import_host(host.as_mut_ptr().cast(), host.len()) }.unwrap();
    assert_eq!(buffer.address(), host.as_ptr() as u64);
    stream
        .dispatch_args(&scale, 1, 64, &Args::new().view(&buffer).value(2.0f32))
        .unwrap();
    stream.synchronize().unwrap();
    drop(buffer);
    let got: Vec<f32> = from_bytes(&host);
    assert_eq!(got, (0..64).map(|k| 2.0 * k as f32).collect::<Vec<_>>());
}

#[test]
fn typed_reads_check_their_length_and_round_trip() {
    let (_device, stream, _module) = common::setup();
    let x = stream.allocate(4 * 1000 + 2).unwrap();
    let values: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 3.0).collect();
    stream.upload(&x, &values).unwrap();
    let back = stream
        .read_as::<f32>(x.slice(0, 4000))
        .unwrap()
        .wait(&stream)
        .unwrap();
    assert_eq!(back, values);
    let bytes = stream.read(x.slice(4, 8)).unwrap().wait(&stream).unwrap();
    assert_eq!(
        bytes,
        [values[1].to_le_bytes(), values[2].to_le_bytes()].concat()
    );
    assert!(matches!(
        stream.read_as::<u32>(&x),
        Err(softgpu::Error::Invalid(_))
    ));
}

/// A host function that panics on the queue's packet path fails the
/// stream with an error naming the panic, promptly: the processor thread
/// survives it, so the wait does not hang.
#[test]
fn a_panicking_host_function_fails_the_stream_instead_of_hanging_it() {
    let (_device, stream, _module) = common::setup();
    stream.host_fn(|| panic!("forced for the test")).unwrap();
    let start = std::time::Instant::now();
    let e = stream.synchronize().expect_err("the stream must fail");
    assert!(e.to_string().contains("forced for the test"), "{e}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}

/// A stream's CU mask is applied as set (one bit per unit), refused when
/// it turns on one CU of a WGP pair, and reset to every unit by `None`.
#[test]
fn cu_masks_are_applied_and_checked() {
    let (device, stream, _module) = common::setup();
    let units = device.properties().compute_units;
    assert!(
        !stream.set_cu_mask(Some(&[0xf])).unwrap(),
        "no process-wide mask reduces it"
    );
    let mask = stream.cu_mask().unwrap();
    assert_eq!(mask.len(), units.div_ceil(32) as usize);
    assert_eq!(mask[0], 0xf);
    assert!(mask[1..].iter().all(|&w| w == 0));
    // gfx11 enables a WGP's two CUs together.
    assert!(stream.set_cu_mask(Some(&[0x1])).is_err());
    assert_eq!(
        stream.cu_mask().unwrap()[0],
        0xf,
        "a refused mask changes nothing"
    );
    stream.set_cu_mask(None).unwrap();
    let on: u32 = stream
        .cu_mask()
        .unwrap()
        .iter()
        .map(|w| w.count_ones())
        .sum();
    assert_eq!(on, units);
}
