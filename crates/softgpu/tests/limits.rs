//! Launch limits and private memory through the Rust API: an impossible
//! request is an error naming the limit before anything runs; private
//! memory reads zero until written and costs only what is touched.

use softgpu::{Args, Device, Error, Language, Module};
use softgpu_test_support::kernel::Kernel;

/// A wave32 gfx1151 kernel `k` that only ends, with `private` bytes of
/// private segment in its descriptor and metadata, assembled with clang-19
/// and ld.lld-19.
fn assembled(private: u64) -> Vec<u8> {
    Kernel {
        private,
        private_segment: true,
        ..Kernel::default()
    }
    .assemble("gfx1151")
}

fn launch_error(r: softgpu::Result<()>) -> String {
    match r {
        Err(e @ Error::Launch { .. }) => e.to_string(),
        Err(e) => panic!("expected a launch error, got {e}"),
        Ok(()) => panic!("expected a launch error, the dispatch was accepted"),
    }
}

#[test]
fn private_segment_beyond_the_hardware_limit_is_refused() {
    let device = Device::open(0).unwrap();
    let stream = device.stream().unwrap();
    let huge = Module::load_bytes(&device, &assembled(1 << 30)).unwrap();
    let k = huge.kernel("k").unwrap();
    let text = launch_error(stream.dispatch_args(&k, 1024, 1024, &Args::new()));
    assert!(
        text.contains("private segment of 1073741824 bytes per work-item")
            && text.contains("limit of 262136 bytes per work-item in wave32"),
        "{text}"
    );
    let edge = Module::load_bytes(&device, &assembled(262_136)).unwrap();
    let k = edge.kernel("k").unwrap();
    stream.dispatch_args(&k, 16, 1024, &Args::new()).unwrap();
    stream.synchronize().unwrap();
}

#[test]
fn workgroup_and_lds_limits_and_their_edges() {
    let device = Device::open(0).unwrap();
    let stream = device.stream().unwrap();
    let edge = Module::load_bytes(&device, &assembled(0)).unwrap();
    let k = edge.kernel("k").unwrap();
    stream.dispatch_args(&k, 2, 1024, &Args::new()).unwrap();
    stream
        .dispatch_args(&k, 1, 32, &Args::new().dynamic_lds(64 * 1024))
        .unwrap();
    stream.synchronize().unwrap();
    let text = launch_error(stream.dispatch_args(&k, 1, 1025, &Args::new()));
    assert!(text.contains("1024 work-items"), "{text}");
    let text =
        launch_error(stream.dispatch_args(&k, 1, 32, &Args::new().dynamic_lds(64 * 1024 + 1)));
    assert!(text.contains("65536"), "{text}");
    let text = launch_error(stream.dispatch_args(&k, 1u32 << 31, 4, &Args::new()));
    assert!(text.contains("overflow"), "{text}");
    let text = launch_error(stream.dispatch_args(&k, 0, 32, &Args::new()));
    assert!(text.contains("non-zero"), "{text}");
}

const PRIVATE: &str = r#"
__kernel void peek_then_dirty(__global uint* out, uint at, uint mark) {
    volatile uint a[256];
    out[get_global_id(0)] = a[at & 255];
    for (uint i = 0; i < 256; i++) a[i] = mark;
}
__kernel void big_private(__global uint* out, uint at) {
    volatile uint a[60000];
    a[at % 60000] = get_global_id(0);
    out[get_global_id(0)] = a[at % 60000];
}
"#;

/// softgpu zeroes private memory for every wave (real hardware leaves what
/// an earlier wave wrote), so an uninitialised private array reads zeros.
#[test]
fn private_memory_reads_zero_until_written_and_is_lazy() {
    let device = Device::open(0).unwrap();
    let stream = device.stream().unwrap();
    let module = stream
        .compile(PRIVATE, Language::OpenCl)
        .unwrap_or_else(|e| panic!("{e}"));
    let peek = module.kernel("peek_then_dirty").unwrap();
    let n = 64 * 64;
    let out = stream.allocate_zeroed(n * 4).unwrap();
    for _ in 0..2 {
        let args = Args::new().view(&out).value(5u32).value(0xdead_beef_u32);
        stream.dispatch_args(&peek, 64, 64, &args).unwrap();
        let seen: Vec<u32> = stream.read_vec(&out).unwrap();
        assert!(seen.iter().all(|&v| v == 0), "{:x?}", &seen[..8]);
    }
    // 240,000 bytes per work-item declared, one word touched: the declared
    // private memory of all 262,144 work-items would be 63 GB.
    let big = module.kernel("big_private").unwrap();
    let out = stream.allocate_zeroed(256 * 1024 * 4).unwrap();
    stream
        .dispatch_args(&big, 1024, 256, &Args::new().view(&out).value(777u32))
        .unwrap();
    let seen: Vec<u32> = stream.read_vec(&out).unwrap();
    assert!(seen.iter().enumerate().all(|(i, &v)| v == i as u32));
}
