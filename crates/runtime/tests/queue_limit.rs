//! `create_queue` under pressure: threads creating queues at once never
//! exceed the agent's queue limit, and a creation that fails (at the limit,
//! or for want of memory after its ring was allocated) leaves nothing
//! behind. (One test per binary: the environment is read when the runtime
//! starts, and the queue count is process-wide.)

mod common;

use std::sync::{Arc, Barrier};

use common::*;
use softgpu_runtime::queue::{Queue, QueueSpec};
use softgpu_runtime::{Error, Runtime};

/// The limit of the test's profile, small so the threads contend for the
/// last slots many times over.
const MAX_QUEUES: usize = 16;
const THREADS: usize = 8;
const ATTEMPTS_PER_THREAD: usize = 4;
/// Ring slots of each queue (the profile's minimum) and bytes it allocates:
/// the ring and the 256-byte `hsa_queue_t` block.
const SLOTS: u32 = 64;
const QUEUE_BYTES: u64 = SLOTS as u64 * 64 + 256;

/// gfx1151 with a small arena (so the test can fill it cheaply) and a
/// limit of [`MAX_QUEUES`].
fn small_profile() -> String {
    let text = include_str!("../profiles/gfx1151.json");
    let mut profile: serde_json::Value = serde_json::from_str(text).unwrap();
    // Schema 2: each field's value is under `fields.NAME.value`.
    profile["fields"]["memory"]["value"] = serde_json::json!({
        "device_bytes": 64u64 << 20,
        "system_bytes": 64u64 << 20,
        "kernarg_bytes": 16u64 << 20,
    });
    profile["fields"]["queues"]["value"]["max_queues"] = MAX_QUEUES.into();
    profile.to_string()
}

fn create(rt: &Arc<Runtime>, gpu: u64) -> Result<Arc<Queue>, Error> {
    rt.create_queue(
        gpu,
        QueueSpec {
            size: SLOTS,
            single: false,
            on_error: None,
        },
    )
}

/// What the runtime holds: arena bytes, live signals, live queues.
fn held(rt: &Runtime) -> (u64, usize, usize) {
    let queues = rt.queues.lock().unwrap().len();
    (rt.arena.used(), rt.signals.all().len(), queues)
}

#[test]
fn concurrent_creation_holds_the_queue_limit_and_failures_leak_nothing() {
    let dir = std::env::temp_dir().join(format!("softgpu-queue-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = dir.join("profile.json");
    std::fs::write(&profile, small_profile()).unwrap();
    // SAFETY: the only test of this binary, before any thread starts.
    // No quarantine: a freed block is free again at once, so the arena
    // can be left with exactly one gap of a chosen size.
    unsafe {
        std::env::set_var("SOFTGPU_PROFILE", &profile);
        std::env::set_var("SOFTGPU_QUARANTINE", "0");
    }
    let f = Fixture::new();
    let rt = f.rt.clone();
    let baseline = held(&rt);

    // Every thread starts at once and tries more queues than its share.
    let start = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (rt, start, gpu) = (rt.clone(), start.clone(), f.gpu);
            std::thread::spawn(move || {
                start.wait();
                (0..ATTEMPTS_PER_THREAD)
                    .map(|_| create(&rt, gpu))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let results: Vec<_> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let mut queues = Vec::new();
    for r in results {
        match r {
            Ok(q) => queues.push(q),
            Err(Error::OutOfResources(m)) => assert!(m.contains("profile limit"), "{m}"),
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    assert_eq!(queues.len(), MAX_QUEUES, "exactly the limit is created");
    let n = MAX_QUEUES as u64;
    assert_eq!(
        held(&rt),
        (
            baseline.0 + n * QUEUE_BYTES,
            baseline.1 + MAX_QUEUES,
            baseline.2 + MAX_QUEUES
        ),
        "refused creations hold no memory, doorbell or queue"
    );
    for q in queues.drain(..) {
        rt.destroy_queue(q.address).unwrap();
    }
    assert_eq!(held(&rt), baseline);

    // Fill the arena but for one gap the size of a ring's block: the ring
    // is allocated there, the hsa_queue_t then finds no room.
    let hole = rt.arena.alloc(SLOTS as u64 * 64).unwrap();
    let mut fillers = Vec::new();
    let mut len = rt.arena.capacity();
    while len > 0 {
        while let Ok(at) = rt.arena.alloc(len) {
            fillers.push(at);
        }
        len /= 2;
    }
    rt.arena.free(hole).unwrap();
    let full = held(&rt);
    for _ in 0..3 {
        let e = create(&rt, f.gpu)
            .err()
            .expect("no room for the hsa_queue_t");
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
        assert_eq!(held(&rt), full, "the failed creation released its ring");
    }
    // The ring's block was freed, not kept: the gap takes it again.
    let again = rt.arena.alloc(SLOTS as u64 * 64).unwrap();
    assert_eq!(again, hole);
    // And now even the ring has no room.
    let e = create(&rt, f.gpu).err().expect("no room for the ring");
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    assert_eq!(
        held(&rt),
        (full.0 + SLOTS as u64 * 64, full.1, full.2),
        "only the test's own block was added"
    );
    rt.arena.free(again).unwrap();
    for at in fillers {
        rt.arena.free(at).unwrap();
    }
    assert_eq!(held(&rt), baseline);

    // The failed creations hold no slot: the whole limit is still there.
    let queues: Vec<_> = (0..MAX_QUEUES)
        .map(|_| create(&rt, f.gpu).unwrap())
        .collect();
    assert!(create(&rt, f.gpu).is_err(), "one past the limit");
    for q in queues {
        rt.destroy_queue(q.address).unwrap();
    }
    assert_eq!(held(&rt), baseline);
    drop(f);
    let _ = std::fs::remove_dir_all(&dir);
}
