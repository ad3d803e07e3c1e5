//! The runtime core end to end: code objects loaded into executables,
//! kernels dispatched through AQL packets written into a queue's ring,
//! barrier packets, malformed packets and kernel faults, memory pools,
//! and dispatch capture and replay.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use softgpu_exec::{build_kernarg, Arg};
use softgpu_runtime::agent::PoolKind;
use softgpu_runtime::queue::{packet_type, Queue, QueueError, QueueSpec};
use softgpu_runtime::signal::{Condition, Order, Signal, WaitHint};
use softgpu_runtime::{Error, Runtime};

const SOURCE: &str = r#"
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, uint n) {
    uint i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
__kernel void wild(__global int* p) {
    *(__global int*)(0x40ul + get_global_id(0) * 4) = 1;
}
"#;

fn code_object() -> Vec<u8> {
    softgpu_compiler::Compiler::new("gfx1151")
        .and_then(|c| c.compile(SOURCE, softgpu_compiler::Language::OpenCl))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A runtime with the test kernels loaded and frozen.
struct Fixture {
    rt: Arc<Runtime>,
    gpu: u64,
    executable: u64,
}

impl Fixture {
    fn new() -> Fixture {
        let rt = Runtime::init().unwrap();
        let gpu = rt.agent_handles[1];
        let reader = rt.reader_from_memory(&code_object(), "test").unwrap();
        let executable = rt.create_executable();
        rt.load_code_object(executable, gpu, reader).unwrap();
        rt.freeze(executable).unwrap();
        Fixture {
            rt,
            gpu,
            executable,
        }
    }

    fn kernel(&self, name: &str) -> softgpu_runtime::executable::KernelRef {
        let sym = self
            .rt
            .symbol_by_name(self.executable, &format!("{name}.kd"), Some(self.gpu))
            .unwrap();
        match &self.rt.symbols.get(sym).unwrap().kind {
            softgpu_runtime::executable::SymbolKind::Kernel(k) => k.clone(),
            _ => panic!("{name} is not a kernel"),
        }
    }

    fn pool(&self, agent: usize, kind: PoolKind) -> u64 {
        *self.rt.agents[agent]
            .pools
            .iter()
            .find(|p| self.rt.pool(**p).unwrap().kind == kind)
            .unwrap()
    }

    fn queue(&self, on_error: Option<softgpu_runtime::queue::ErrorCallback>) -> Arc<Queue> {
        self.rt
            .create_queue(
                self.gpu,
                QueueSpec {
                    size: 64,
                    single: true,
                    on_error,
                },
            )
            .unwrap()
    }

    /// Kernargs for `kernel` in the kernarg pool.
    fn kernargs(&self, name: &str, grid: u32, block: u32, args: &[Arg]) -> u64 {
        let k = self.kernel(name);
        let bytes = build_kernarg(k.kernel(), [grid, 1, 1], [block, 1, 1], 0, args).unwrap();
        let addr = self
            .rt
            .allocate(self.pool(0, PoolKind::Kernarg), bytes.len() as u64)
            .unwrap();
        self.rt.arena.write(addr, &bytes).unwrap();
        addr
    }

    fn dispatch_packet(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        kernarg: u64,
        signal: u64,
    ) -> [u8; 64] {
        let k = self.kernel(name);
        let mut p = [0u8; 64];
        let header = packet_type::KERNEL_DISPATCH as u16 | 1 << 8 | 2 << 9 | 2 << 11;
        p[0..2].copy_from_slice(&header.to_le_bytes());
        p[2..4].copy_from_slice(&1u16.to_le_bytes());
        p[4..6].copy_from_slice(&(block as u16).to_le_bytes());
        p[6..8].copy_from_slice(&1u16.to_le_bytes());
        p[8..10].copy_from_slice(&1u16.to_le_bytes());
        p[12..16].copy_from_slice(&grid.to_le_bytes());
        p[16..20].copy_from_slice(&1u32.to_le_bytes());
        p[20..24].copy_from_slice(&1u32.to_le_bytes());
        p[32..40].copy_from_slice(&k.object().to_le_bytes());
        p[40..48].copy_from_slice(&kernarg.to_le_bytes());
        p[56..64].copy_from_slice(&signal.to_le_bytes());
        p
    }

    fn barrier_packet(&self, and: bool, deps: &[u64], signal: u64) -> [u8; 64] {
        let mut p = [0u8; 64];
        let kind = if and {
            packet_type::BARRIER_AND
        } else {
            packet_type::BARRIER_OR
        };
        p[0..2].copy_from_slice(&(kind as u16 | 1 << 8).to_le_bytes());
        for (k, d) in deps.iter().enumerate() {
            p[8 + 8 * k..16 + 8 * k].copy_from_slice(&d.to_le_bytes());
        }
        p[56..64].copy_from_slice(&signal.to_le_bytes());
        p
    }

    /// Publishes a packet as a client does: body first, then the header
    /// word atomically, then the doorbell.
    fn submit(&self, queue: &Queue, packet: [u8; 64]) {
        let index = queue.write_index.fetch_add(1, Ordering::AcqRel);
        let slot = queue.ring + (index % queue.size as u64) * 64;
        self.rt.arena.write(slot + 4, &packet[4..]).unwrap();
        let word = u32::from_le_bytes(packet[0..4].try_into().unwrap());
        self.rt.arena.store_u32(slot, word).unwrap();
        queue.doorbell.store(index as i64, Order::Release);
    }

    fn signal(&self, value: i64) -> (u64, Arc<Signal>) {
        let s = Arc::new(Signal::new(value));
        (self.rt.signals.insert(s.clone()), s)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.rt.destroy_executable(self.executable);
        let _ = Runtime::shut_down();
    }
}

fn wait_zero(s: &Signal) -> i64 {
    s.wait(
        Condition::Eq,
        0,
        Some(Duration::from_secs(60)),
        WaitHint::Blocked,
        Order::Acquire,
    )
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn upload(f: &Fixture, data: &[f32]) -> u64 {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let addr =
        f.rt.allocate(f.pool(1, PoolKind::CoarseDevice), bytes.len() as u64)
            .unwrap();
    f.rt.arena.write(addr, &bytes).unwrap();
    addr
}

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
            QueueError::InvalidPacket(m) => assert!(m.contains(what), "{what}: {m}"),
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
        Err(Error::OutOfResources(_))
    ));
    let a = f.rt.allocate(pool, 100).unwrap();
    assert_eq!(a % 4096, 0, "pool allocations are page-aligned");
    let info = f.rt.pointer_info(a + 50);
    assert_eq!((info.base, info.len), (a, 4096));
    f.rt.free(a).unwrap();
    assert!(f.rt.free(a).is_err(), "double free");
    assert!(f.rt.free(a + 8).is_err(), "not an allocation start");
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
    // SAFETY: both vectors outlive the unlock below.
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
