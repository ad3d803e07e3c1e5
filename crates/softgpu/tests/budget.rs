//! Memory budgets shared by streams: charged before, released after use.

mod common;

use softgpu::{Args, Error, MemoryBudget};

#[test]
fn a_shared_budget_caps_allocations_and_staging() {
    let (device, gate, module) = common::setup();
    let spin = module.kernel("spin").unwrap();
    let budget = MemoryBudget::new(3 * 4096);
    let one = device.stream().unwrap().with_memory_budget(budget.clone());
    let two = device.stream().unwrap().with_memory_budget(budget.clone());
    let a = one.allocate(4096).unwrap();
    let b = two.allocate(4096).unwrap();
    assert_eq!(budget.used(), 8192);
    let err = one.allocate(8192).unwrap_err();
    assert!(matches!(err, Error::Budget { free: 4096, .. }), "{err}");
    drop(b);
    assert_eq!(budget.used(), 4096);

    // Hold stream `one` behind a slow kernel: staging and a dropped buffer
    // stay charged until the work using them has run.
    let slow = gate.allocate_zeroed(4 * 64).unwrap();
    gate.dispatch_args(&spin, 1, 64, &Args::new().view(&slow).value(1_000_000u32))
        .unwrap();
    one.wait_event(&gate.record_event().unwrap()).unwrap();
    one.upload(&a, &[7u32; 1024]).unwrap();
    assert_eq!(budget.used(), 8192);
    assert!(matches!(
        one.upload(&a, &[1u8; 8192]),
        Err(Error::OutOfBounds { .. })
    ));
    let c = one.allocate(4096).unwrap();
    assert!(matches!(
        one.upload(&c, &[1u32; 1024]),
        Err(Error::Budget { .. })
    ));
    let read = one.read(&a).unwrap();
    drop(a);
    assert_eq!(budget.used(), 3 * 4096);
    assert_eq!(read.wait_as::<u32>(&one).unwrap(), vec![7; 1024]);
    one.synchronize().unwrap();
    assert_eq!(budget.used(), 4096);
    drop(c);
    assert_eq!(budget.used(), 0);
}
