//! Misuse is an error, not undefined behaviour: arguments, ranges,
//! targets, faulting kernels.

mod common;

use softgpu::{Args, Device, Error};

#[test]
fn wrong_arguments_name_the_argument() {
    let (_device, stream, module) = common::setup();
    let vadd = module.kernel("vadd").unwrap();
    let x = stream.allocate(64).unwrap();
    let count = stream
        .dispatch_args(&vadd, 1, 1, &Args::new().view(&x))
        .unwrap_err();
    assert!(
        matches!(
            count,
            Error::ArgumentCount {
                expected: 4,
                given: 1,
                ..
            }
        ),
        "{count}"
    );
    assert!(count.to_string().contains("n"), "{count}");
    let kind = Args::new().view(&x).value(1.0f32).view(&x).value(4u32);
    let kind = stream.dispatch_args(&vadd, 1, 1, &kind).unwrap_err();
    match &kind {
        Error::Argument { index, name, .. } => {
            assert_eq!(*index, 1);
            assert!(name.contains('b'), "{kind}");
        }
        other => panic!("{other}"),
    }
    let size = Args::new().view(&x).view(&x).view(&x).value(4u64);
    let size = stream.dispatch_args(&vadd, 1, 1, &size).unwrap_err();
    match &size {
        Error::Argument {
            index: 3,
            name,
            why,
            ..
        } => {
            assert!(name.contains('n') && why.contains("u64"), "{size}");
        }
        other => panic!("{other}"),
    }
    let pointer = Args::new().view(&x).view(&x).view(&x).view(&x);
    assert!(stream.dispatch_args(&vadd, 1, 1, &pointer).is_err());
    // A float of the right size for `uint n`: refused by its declared type
    // (it would reach the kernel as 1069547520).
    let float = Args::new().view(&x).view(&x).view(&x).value(1.5f32);
    let float = stream.dispatch_args(&vadd, 1, 1, &float).unwrap_err();
    match &float {
        Error::Argument { index: 3, why, .. } => assert!(
            why.contains("declared an integer") && why.contains("f32"),
            "{float}"
        ),
        other => panic!("{other}"),
    }
}

#[test]
fn every_scalar_kind_reaches_the_kernel() {
    let (_device, stream, module) = common::setup();
    let mixed = module.kernel("mixed").unwrap();
    let info = mixed.info();
    assert_eq!(info.args.len(), 5);
    assert_eq!(info.args[2].size, 8);
    assert_eq!(info.args[4].size, 2);
    let out = stream.allocate_zeroed(4).unwrap();
    let args = Args::new()
        .view(&out)
        .value(1u32)
        .value(20u64)
        .value(300.0f64)
        .value(half::f16::from_f32(4000.0));
    stream.dispatch_args(&mixed, 1, 1, &args).unwrap();
    assert_eq!(stream.read_vec::<u32>(&out).unwrap(), vec![4321]);
}

#[test]
fn bad_launches_are_errors() {
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let x = stream.allocate(64).unwrap();
    let args = Args::new().view(&x).value(1.0f32);
    assert!(stream.dispatch_args(&scale, 1, 2048, &args).is_err());
    assert!(stream.dispatch_args(&scale, 0, 64, &args).is_err());
    assert!(stream.dispatch_args(&scale, u32::MAX, 64, &args).is_err());
    let lds = args.clone().dynamic_lds(1 << 20);
    assert!(matches!(
        stream.dispatch_args(&scale, 1, 1, &lds),
        Err(Error::Launch { .. })
    ));
    assert!(module.kernel("nope").is_err());
}

#[test]
fn slices_are_bounds_checked() {
    let (_device, stream, _module) = common::setup();
    let x = stream.allocate(100).unwrap();
    // hrx's form: (offset, length), in bytes.
    assert_eq!(x.try_slice(10, 10).unwrap().len(), 10);
    assert_eq!(x.try_slice(0, 100).unwrap().len(), 100);
    assert_eq!(x.try_slice(90, 10).unwrap().offset(), 90);
    assert!(x.try_slice(100, 0).unwrap().is_empty());
    assert!(matches!(
        x.try_slice(90, 11),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(x.try_slice(101, 0).is_err());
    // Sums that overflow are refused, not wrapped into bounds.
    assert!(x.try_slice(usize::MAX, 2).is_err());
    assert!(x.try_slice(1, usize::MAX).is_err());
    let v = x.slice(10, 40);
    assert_eq!(v.address(), x.address() + 10);
    assert_eq!(v.owner().address(), x.address());
    assert_eq!(x.device_ptr().unwrap() as u64, x.address());
    // A view's slice is relative to the view.
    assert!(v.slice(0, 41).is_err());
    assert!(v.slice(usize::MAX - 5, 6).is_err());
    let tail = v.slice(30, 10).unwrap();
    assert_eq!((tail.offset(), tail.len()), (40, 10));
    assert!(matches!(x.slice_from(101), Err(Error::OutOfBounds { .. })));
    assert_eq!(x.slice_from(60).unwrap().len(), 40);
}

#[test]
#[should_panic]
fn slice_panics_out_of_bounds() {
    let (_device, stream, _module) = common::setup();
    let x = stream.allocate(8).unwrap();
    let _ = x.slice(4, 8);
}

#[test]
fn open_for_checks_the_target() {
    let device = Device::open(0).unwrap();
    let target = device.target().to_string();
    assert!(Device::open_for(0, &target).is_ok());
    let err = Device::open_for(0, "gfx1030").unwrap_err();
    assert!(matches!(err, Error::WrongTarget { .. }), "{err}");
    assert!(Device::open(1000).is_err());
    assert!(device.properties().lds_bytes > 0);
}

#[test]
fn a_fault_is_structured_and_the_stream_recovers() {
    let (_device, stream, module) = common::setup();
    let wild = module.kernel("wild").unwrap();
    let x = stream.allocate(256).unwrap();
    stream
        .dispatch_args(&wild, 1, 32, &Args::new().view(&x))
        .unwrap();
    let err = stream.submit().unwrap().wait().unwrap_err();
    let Error::Fault(fault) = &err else {
        panic!("{err}")
    };
    assert_eq!(fault.kernel(), "wild");
    let site = fault.site().expect("a site");
    assert_eq!(site.workgroup, [0, 0, 0]);
    assert!(site.address.is_some_and(|a| a < 0x1000), "{err}");
    assert!(!site.instruction.is_empty());
    assert!(err.to_string().contains("wild"), "{err}");
    // The stream replaces its stopped queue and keeps working.
    let scale = module.kernel("scale").unwrap();
    stream.fill_pattern(x.slice(0, 16), 2.0f32).unwrap();
    stream
        .dispatch_args(&scale, 1, 4, &Args::new().view(&x).value(3.0f32))
        .unwrap();
    assert_eq!(
        stream.read_vec::<f32>(x.slice(0, 16)).unwrap(),
        vec![6.0; 4]
    );
}

#[test]
fn work_after_an_unreported_fault_waits_for_it_to_be_reported() {
    let (_device, stream, module) = common::setup();
    let wild = module.kernel("wild").unwrap();
    let x = stream.allocate_zeroed(256).unwrap();
    stream.synchronize().unwrap();
    stream
        .dispatch_args(&wild, 1, 32, &Args::new().view(&x))
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    // Enqueueing goes on, but behind the failure: the fill does not run,
    // and every wait until the fault is reported reports it.
    stream.fill_pattern(&x, 5u32).unwrap();
    let pending = stream.submit().unwrap();
    let first = stream.synchronize();
    assert!(matches!(first, Err(Error::Fault(_))), "{first:?}");
    assert!(matches!(pending.wait(), Err(Error::Fault(_))));
    // Reported: the stream starts afresh.
    assert_eq!(
        stream.read_vec::<u32>(x.slice(0, 8)).unwrap(),
        vec![0, 0],
        "the fill queued behind the fault never ran"
    );
    stream.fill_pattern(&x, 5u32).unwrap();
    assert_eq!(stream.read_vec::<u32>(x.slice(0, 8)).unwrap(), vec![5, 5]);
    stream.synchronize().unwrap();
}
