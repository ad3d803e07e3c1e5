//! What the safe API costs on the host, measured with an empty kernel
//! (`examples/bin/empty-gfx1151.hsaco`, committed, so no compiler is
//! needed): a dispatch's round trip, the host time to enqueue one dispatch,
//! the host time per node to launch a graph, and upload / download
//! bandwidth.
//!
//! Run with `cargo bench -p softgpu --bench api`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use softgpu::{Args, Device, Graph, GraphExec, Kernel, Node, Stream};

const EMPTY_KERNEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/bin/empty-gfx1151.hsaco"
);
/// Dispatches enqueued between two waits. Each is a few packets, so a batch
/// stays well inside a stream's ring and the host never waits for room.
const BATCH: u64 = 256;
/// Dispatch nodes of each benchmarked graph.
const NODES: usize = 100;
/// Bytes each upload / download moves.
const TRANSFER_BYTES: usize = 64 << 20;

/// A stream and the empty kernel, with arguments for it.
struct Fixture {
    stream: Stream,
    empty: Kernel,
    /// A view of a small buffer, which the arguments keep alive.
    args: Args,
}

impl Fixture {
    fn new() -> Fixture {
        let device = Device::open_for(0, "gfx1151").expect("device 0 (gfx1151)");
        let stream = device.stream().expect("stream");
        let empty = stream
            .load(EMPTY_KERNEL, "empty")
            .expect("the empty kernel");
        let unused = stream.allocate(4).expect("buffer");
        let args = Args::new().view(&unused);
        Fixture {
            stream,
            empty,
            args,
        }
    }

    /// Enqueues the empty kernel on one workgroup of one wave.
    fn dispatch(&self) {
        self.stream
            .dispatch_args(&self.empty, 1, 32, &self.args)
            .expect("dispatch");
    }

    fn synchronize(&self) {
        self.stream.synchronize().expect("synchronize");
    }

    /// Records the empty dispatch as a graph node after `after`.
    fn node(&self, graph: &mut Graph<'_>, after: &[Node]) -> Node {
        graph
            .dispatch_args(after, &self.empty, 1, 32, &self.args)
            .expect("graph dispatch")
    }

    /// `NODES` empty dispatches, each after the one before.
    fn chain(&self) -> GraphExec {
        let mut graph = self.stream.graph().expect("graph");
        let mut last = None;
        for _ in 0..NODES {
            last = Some(self.node(&mut graph, last.as_slice()));
        }
        graph.finish().expect("finish")
    }

    /// `NODES` independent empty dispatches, joined by a last node.
    fn fan_in(&self) -> GraphExec {
        let mut graph = self.stream.graph().expect("graph");
        let nodes: Vec<Node> = (0..NODES).map(|_| self.node(&mut graph, &[])).collect();
        graph.join(&nodes).expect("join");
        graph.finish().expect("finish")
    }
}

/// Enqueue, then wait: the latency of one empty dispatch.
fn dispatch_round_trip(c: &mut Criterion) {
    let f = Fixture::new();
    c.bench_function("dispatch_round_trip", |b| {
        b.iter(|| {
            f.dispatch();
            f.synchronize();
        })
    });
}

/// Host time to enqueue one dispatch; the waits for the batches run
/// outside the timed part.
fn dispatch_host_cost(c: &mut Criterion) {
    let f = Fixture::new();
    c.bench_function("dispatch_host_cost", |b| {
        b.iter_custom(|iters| {
            let mut enqueueing = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let batch = left.min(BATCH);
                let start = Instant::now();
                for _ in 0..batch {
                    f.dispatch();
                }
                enqueueing += start.elapsed();
                f.synchronize();
                left -= batch;
            }
            enqueueing
        })
    });
}

/// Host time of `Stream::launch` per dispatch node, for a chain (each node
/// after the one before) and a fan-in (independent nodes joined at the end).
fn graph_node_host_cost(c: &mut Criterion) {
    let f = Fixture::new();
    let (chain, fan_in) = (f.chain(), f.fan_in());
    let mut group = c.benchmark_group("graph_node_host_cost");
    group.throughput(Throughput::Elements(NODES as u64));
    for (name, mut exec) in [("chain", chain), ("fan_in", fan_in)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut launching = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    f.stream.launch(&mut exec).expect("launch");
                    launching += start.elapsed();
                    f.synchronize();
                }
                launching
            })
        });
    }
    group.finish();
}

/// `upload_blocking` and `read_blocking` of 64 MiB of f32.
fn transfer_bandwidth(c: &mut Criterion) {
    let f = Fixture::new();
    let host = vec![1.5f32; TRANSFER_BYTES / 4];
    let buffer = f.stream.allocate(TRANSFER_BYTES).expect("buffer");
    let mut group = c.benchmark_group("transfer");
    group.throughput(Throughput::Bytes(TRANSFER_BYTES as u64));
    group.bench_function("upload", |b| {
        b.iter(|| f.stream.upload_blocking(&buffer, &host).expect("upload"))
    });
    group.bench_function("download", |b| {
        b.iter(|| black_box(f.stream.read_vec::<f32>(&buffer).expect("read")))
    });
    group.finish();
}

criterion_group! {
    name = api;
    // Short measurements: the whole run stays within about two minutes.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = dispatch_round_trip, dispatch_host_cost, graph_node_host_cost, transfer_bandwidth
}
criterion_main!(api);
