//! Executor throughput on the two benchmark kernels of `examples/` (the
//! committed gfx1151 code objects), with 1 and 2 worker threads, in
//! lane-instructions per second.
//!
//! `cargo bench -p softgpu --bench dispatch` (it lives beside the API's
//! bench so that criterion is no dev-dependency of the executor).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use softgpu_exec::{Arg, Device, DeviceConfig, DispatchDesc, Launch};

/// Embedded bytes aligned for the ELF reader (`include_bytes!` alone is not).
#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

static ALU: &Aligned<[u8]> = &Aligned(*include_bytes!(
    "../../../examples/bin/alu_bench-gfx1151.hsaco"
));
static MEM: &Aligned<[u8]> = &Aligned(*include_bytes!(
    "../../../examples/bin/mem_bench-gfx1151.hsaco"
));

const ALU_ITEMS: u32 = 64 * 256;
const ALU_ITERS: i32 = 32;
const MEM_ITEMS: u32 = 1 << 18;

fn device(threads: usize) -> Device {
    let mut config = DeviceConfig::default();
    (config.arena_bytes(1 << 30).settings_mut())
        .threads(threads)
        .expect("threads");
    Device::new(&config).expect("device")
}

fn bench(c: &mut Criterion) {
    for (name, code) in [("alu_bench", &ALU.0), ("mem_bench", &MEM.0)] {
        let mut group = c.benchmark_group(name);
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for threads in [1usize, 2] {
            let device = device(threads);
            let program = device.load(code).expect("load");
            let (launch, args) = if name == "alu_bench" {
                let out = device.alloc_zeroed(4 * ALU_ITEMS as u64).unwrap();
                let launch = Launch {
                    grid: [ALU_ITEMS / 256, 1, 1],
                    block: [256, 1, 1],
                    dynamic_lds: 0,
                };
                (
                    launch,
                    vec![
                        Arg::Buffer(out),
                        Arg::I32(ALU_ITERS),
                        Arg::F32(0.999),
                        Arg::F32(0.001),
                        Arg::F32(0.998),
                    ],
                )
            } else {
                let input: Vec<u8> = (0..4 * MEM_ITEMS)
                    .flat_map(|i| (i as f32).to_le_bytes())
                    .collect();
                let inb = device.alloc_from(&input).unwrap();
                let out = device.alloc_zeroed(16 * MEM_ITEMS as u64).unwrap();
                let launch = Launch {
                    grid: [MEM_ITEMS / 256, 1, 1],
                    block: [256, 1, 1],
                    dynamic_lds: 0,
                };
                (
                    launch,
                    vec![
                        Arg::Buffer(inb),
                        Arg::Buffer(out),
                        Arg::F32(1.5),
                        Arg::I32(MEM_ITEMS as i32),
                    ],
                )
            };
            // The instruction count of a dispatch is fixed: measure it once.
            let kernel = program.kernel(name).expect("kernel");
            let desc = DispatchDesc::launch(&program, kernel, &launch, &args);
            let stats = device.dispatch(&desc).expect("dispatch").counters;
            group.throughput(Throughput::Elements(stats.lane_instructions));
            group.bench_with_input(BenchmarkId::new("threads", threads), &threads, |b, _| {
                b.iter(|| device.dispatch(&desc).expect("dispatch"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
