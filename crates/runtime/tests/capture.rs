//! `SOFTGPU_TRACE` and `SOFTGPU_CAPTURE`: a dispatch through a queue is
//! traced and captured, the trace converts to a Chrome timeline, and the
//! capture replays alone with the same results. (One test per binary: the
//! environment is read when the runtime starts.)

mod common;

use common::*;
use softgpu_exec::Arg;
use softgpu_runtime::capture::Capture;
use softgpu_runtime::Runtime;

#[test]
fn a_traced_dispatch_is_captured_and_replays_identically() {
    let dir = std::env::temp_dir().join(format!("softgpu-capture-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.jsonl");
    let captures = dir.join("captures");
    // SAFETY: the only test of this binary, before any thread starts.
    unsafe {
        std::env::set_var("SOFTGPU_TRACE", &trace);
        std::env::set_var("SOFTGPU_CAPTURE", &captures);
    }
    {
        let f = Fixture::new();
        let queue = f.queue(None);
        let n = 300u32;
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let da = upload(&f, &a);
        let dc = upload(&f, &vec![0.0; n as usize]);
        let kernarg = f.kernargs(
            "vadd",
            n,
            64,
            &[
                Arg::Pointer(da),
                Arg::Pointer(da),
                Arg::Pointer(dc),
                Arg::U32(n),
            ],
        );
        let (h, s) = f.signal(1);
        f.submit(&queue, f.dispatch_packet("vadd", n, 64, kernarg, h));
        assert_eq!(wait_zero(&s), 0);
        f.rt.destroy_queue(queue.address).unwrap();
    }
    assert!(Runtime::get().is_err(), "the fixture shut the runtime down");

    // The trace: a packet and a dispatch event, schema version 1.
    let text = std::fs::read_to_string(&trace).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let dispatch = events
        .iter()
        .find(|e| e["kind"] == "dispatch")
        .expect("a dispatch event");
    assert_eq!(dispatch["v"], 1);
    assert_eq!(dispatch["kernel"], "vadd");
    assert_eq!(dispatch["grid"], serde_json::json!([300, 1, 1]));
    assert_eq!(dispatch["status"], "ok");
    assert!(dispatch["wave_instructions"].as_u64().unwrap() > 0);
    assert!(events
        .iter()
        .any(|e| e["kind"] == "packet" && e["type"] == "kernel_dispatch"));
    let timeline = softgpu_runtime::trace::chrome_trace(text.as_bytes()).unwrap();
    let slices: Vec<_> = timeline["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "vadd")
        .collect();
    assert_eq!(slices.len(), 1, "one slice per dispatch");
    assert!(timeline["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["ph"] == "M"
            && e["args"]["name"]
                .as_str()
                .unwrap_or("")
                .starts_with("queue")));

    // The capture replays alone and matches.
    let one = captures.join("0");
    let capture = Capture::load(&one).unwrap();
    assert_eq!(capture.kernel, "vadd");
    // Labelled with the profile it ran on and its results' fidelity.
    assert_eq!(capture.profile, "softgpu/gfx1151/radeon-8060s");
    assert_eq!(capture.profile_revision, 2);
    assert_eq!(capture.fidelity.name(), "isa-exact");
    assert_eq!(capture.buffers.len(), 2, "a and c");
    let report = capture.replay(&one).unwrap();
    assert_eq!(report.identical, 2);
    assert!(report.different.is_empty());
    // A tampered result is noticed.
    let after = one.join("after/1.bin");
    let mut bytes = std::fs::read(&after).unwrap();
    bytes[40] ^= 1;
    std::fs::write(&after, bytes).unwrap();
    let report = capture.replay(&one).unwrap();
    assert_eq!(report.different.len(), 1);
    assert_eq!(report.different[0].1, 40);
    let _ = std::fs::remove_dir_all(&dir);
}
