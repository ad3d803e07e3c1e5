//! The runtime's host-operation packets, which the streams are built on.

use std::sync::{Arc, Mutex};

use softgpu_runtime::queue::{packet_type, Queue, QueueError, QueueSpec};
use softgpu_runtime::signal::{Condition, Order, Signal, WaitHint};
use softgpu_runtime::Runtime;

fn publish(rt: &Runtime, q: &Queue, packet: [u8; 64]) {
    let index = q
        .write_index
        .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    let slot = q.ring + (index % q.size as u64) * 64;
    rt.arena.write(slot + 4, &packet[4..]).unwrap();
    let word = u32::from_le_bytes(packet[0..4].try_into().unwrap());
    rt.arena.store_u32(slot, word).unwrap();
    q.doorbell.store(index as i64, Order::Release);
}

fn queue(rt: &Arc<Runtime>, errors: Arc<Mutex<Vec<String>>>) -> Arc<Queue> {
    let spec = QueueSpec {
        size: 64,
        single: true,
        on_error: Some(Box::new(move |e: &QueueError| {
            errors.lock().unwrap().push(e.to_string())
        })),
    };
    rt.create_queue(rt.agent_handles[1], spec).unwrap()
}

#[test]
fn host_ops_run_in_order_and_complete_their_signal() {
    let rt = Runtime::init(|| Ok(softgpu_runtime::Config::default())).unwrap();
    let errors = Arc::new(Mutex::new(Vec::new()));
    let q = queue(&rt, errors.clone());
    let log = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(Signal::new(1));
    let handle = rt.signals.insert(done.clone());
    for k in 0..200 {
        let log = log.clone();
        let completion = if k == 199 { handle } else { 0 };
        let op = Box::new(move || {
            log.lock().unwrap().push(k);
            Ok(())
        });
        publish(&rt, &q, q.host_op_packet(op, completion));
        if k % 50 == 0 {
            // Let the ring drain (64 slots).
            while q.read_index.load(std::sync::atomic::Ordering::Acquire) < k + 1 {
                std::thread::yield_now();
            }
        }
    }
    let v = done.wait(Condition::Eq, 0, None, WaitHint::Blocked, Order::Acquire);
    assert_eq!(v, 0);
    assert_eq!(*log.lock().unwrap(), (0..200).collect::<Vec<_>>());
    assert!(done.times().is_some());
    assert!(errors.lock().unwrap().is_empty());
    rt.destroy_queue(q.address).unwrap();
    let _ = rt.signals.remove(handle);
    Runtime::shut_down().unwrap();
}

fn wait_for_error(errors: &Mutex<Vec<String>>) -> String {
    for _ in 0..1000 {
        if let Some(e) = errors.lock().unwrap().first() {
            return e.clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("the queue did not fail");
}

#[test]
fn a_failing_host_op_stops_the_queue_and_a_foreign_vendor_packet_is_invalid() {
    let rt = Runtime::init(|| Ok(softgpu_runtime::Config::default())).unwrap();
    let errors = Arc::new(Mutex::new(Vec::new()));
    let q = queue(&rt, errors.clone());
    publish(&rt, &q, q.host_op_packet(Box::new(|| Err("no".into())), 0));
    assert!(wait_for_error(&errors).contains("host operation failed: no"));
    rt.destroy_queue(q.address).unwrap();
    q.discard_host_ops();

    let errors = Arc::new(Mutex::new(Vec::new()));
    let q = queue(&rt, errors.clone());
    let mut vendor = q.host_op_packet(Box::new(|| Ok(())), 0);
    vendor[4] ^= 1; // no magic
    publish(&rt, &q, vendor);
    assert!(wait_for_error(&errors).contains("vendor-specific"));
    // The registered closure never ran; discarding drops it.
    q.discard_host_ops();
    rt.destroy_queue(q.address).unwrap();
    assert_eq!(vendor[0], packet_type::VENDOR_SPECIFIC);
    Runtime::shut_down().unwrap();
}
