//! The memory sanitizers through the Rust API: initcheck for LDS and
//! racecheck for LDS and global memory, each proven by a kernel with the
//! bug (reported, with the report's fields checked) and one without (runs
//! clean, with correct results). Kernels are OpenCL C compiled at test time.
//!
//! Every test turns init and race on for GPU 0; the setting is shared by
//! the whole process, which is this test binary alone.

use softgpu::{Args, Checks, Device, Error, KernelFault, Language, Module, Stream};

const SOURCE: &str = r#"
// A 256-element tile reversed through LDS.
__kernel void tile_reverse(__global const float* in, __global float* out) {
    __local float tile[256];
    uint l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[255 - l];
}
// The same, but the tile load misses the last element.
__kernel void tile_reverse_short(__global const float* in, __global float* out) {
    __local float tile[256];
    uint l = get_local_id(0);
    if (l < 255) tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[255 - l];
}
// Tree reduction of 256 values per workgroup.
__kernel void reduce(__global const uint* in, __global uint* out) {
    __local uint part[256];
    uint l = get_local_id(0);
    part[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 128; s > 0; s >>= 1) {
        if (l < s) part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = part[0];
}
// The same without the barrier between the steps.
__kernel void reduce_no_barrier(__global const uint* in, __global uint* out) {
    __local uint part[256];
    uint l = get_local_id(0);
    part[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 128; s > 0; s >>= 1) {
        if (l < s) part[l] += part[l + s];
    }
    if (l == 0) out[get_group_id(0)] = part[0];
}
// A 16-bin histogram in LDS with atomics, merged into global bins.
__kernel void histogram(__global const uint* in, __global uint* bins) {
    __local uint local_bins[16];
    uint l = get_local_id(0);
    if (l < 16) local_bins[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&local_bins[in[get_global_id(0)] % 16]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 16) atomic_add(&bins[l], local_bins[l]);
}
// Every workgroup's first work-item writes element 0: a race.
__kernel void all_write_first(__global uint* out) {
    if (get_local_id(0) == 0) out[0] = get_group_id(0) + 1;
}
// Every work-item counts atomically, but one of workgroup 1 also stores
// plainly to the counter: a plain write racing atomics.
__kernel void count_and_store(__global uint* out) {
    if (get_group_id(0) == 1 && get_local_id(0) == 7) out[0] = 0;
    else atomic_inc(&out[0]);
}
// Work-items count in LDS atomically, and one of wave 1 reads the counter
// before the barrier: a plain read racing atomics of other waves.
__kernel void peek_local_count(__global uint* out) {
    __local uint n;
    uint l = get_local_id(0);
    if (l == 0) n = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&n);
    if (l == 100) out[get_group_id(0)] = n;
    barrier(CLK_LOCAL_MEM_FENCE);
}
// Each work-item adds its element and the next: the last reads one past.
__kernel void pair_sum(__global const uint* in, __global uint* out) {
    uint i = get_global_id(0);
    out[i] = in[i] + in[i + 1];
}
// Every work-item writes two elements.
__kernel void write_two(__global uint* out) {
    uint i = get_global_id(0);
    out[2 * i] = i;
    out[2 * i + 1] = i;
}
// Every work-item writes its own element.
__kernel void own_elements(__global uint* out) {
    out[get_global_id(0)] = get_group_id(0) + 1;
}
"#;

fn setup() -> (Stream, Module) {
    let device = Device::open(0).expect("device 0");
    device
        .set_checks(Checks {
            init: true,
            race: true,
            ..Checks::default()
        })
        .unwrap();
    assert!(device.checks().unwrap().race);
    let stream = device.stream().expect("stream");
    let module = stream
        .compile(SOURCE, Language::OpenCl)
        .unwrap_or_else(|e| panic!("{e}"));
    (stream, module)
}

/// Runs `kernel` on `groups` workgroups of 256 work-items over `input`
/// and an output of `out_words` u32; the output, or the fault.
fn run(
    stream: &Stream,
    module: &Module,
    kernel: &str,
    groups: u32,
    input: &[u32],
    out_words: usize,
) -> Result<Vec<u32>, Box<KernelFault>> {
    let k = module.kernel(kernel).unwrap();
    let inp = stream.allocate(4 * input.len().max(1)).unwrap();
    stream.upload(&inp, input).unwrap();
    let out = stream.allocate_zeroed(4 * out_words).unwrap();
    let args = if input.is_empty() {
        Args::new().view(&out)
    } else {
        Args::new().view(&inp).view(&out)
    };
    stream.dispatch_args(&k, groups, 256, &args).unwrap();
    match stream.read_vec::<u32>(&out) {
        Ok(v) => Ok(v),
        Err(Error::Fault(f)) => Err(f),
        Err(e) => panic!("{kernel}: {e}"),
    }
}

/// The waves a race report names: the faulting one ("this … by wave N")
/// and the earlier one ("with a … by wave M").
fn waves_named(reason: &str) -> Vec<u32> {
    reason
        .match_indices("wave ")
        .filter_map(|(i, m)| {
            let rest = &reason[i + m.len()..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn initcheck_reports_an_lds_read_of_an_element_never_loaded() {
    let (stream, module) = setup();
    let input: Vec<u32> = (0..256).map(|i| (i as f32).to_bits()).collect();
    let good = run(&stream, &module, "tile_reverse", 1, &input, 256).unwrap();
    let want: Vec<u32> = (0..256).rev().map(|i| (i as f32).to_bits()).collect();
    assert_eq!(good, want);

    let f = run(&stream, &module, "tile_reverse_short", 1, &input, 256).unwrap_err();
    eprintln!("{f}");
    let site = f.site().expect("a site");
    assert!(f.reason().starts_with("initcheck:"), "{f}");
    // Work-item 0 reads tile[255], the element no one wrote: LDS offset
    // 255 * 4, in wave 0, lane 0.
    assert!(f.reason().contains("LDS offset 0x3fc"), "{f}");
    assert!(f.reason().contains("4-byte read"), "{f}");
    assert_eq!((site.wave, site.lane), (0, Some(0)), "{f}");
    assert!(site.instruction.starts_with("ds_load"), "{f}");
}

#[test]
fn racecheck_reports_a_reduction_missing_its_barrier() {
    let (stream, module) = setup();
    let input: Vec<u32> = (0..512).collect();
    let sums = run(&stream, &module, "reduce", 2, &input, 2).unwrap();
    assert_eq!(sums, vec![(0..256).sum::<u32>(), (256..512).sum::<u32>()]);

    let f = run(&stream, &module, "reduce_no_barrier", 2, &input, 2).unwrap_err();
    eprintln!("{f}");
    let site = f.site().expect("a site");
    assert!(f.reason().starts_with("racecheck:"), "{f}");
    assert!(f.reason().contains("hazard on LDS offset"), "{f}");
    assert!(
        ["read-after-write", "write-after-read", "write-after-write"]
            .iter()
            .any(|k| f.reason().contains(k)),
        "{f}"
    );
    let waves = waves_named(f.reason());
    assert_eq!(waves.len(), 2, "{f}");
    assert_eq!(waves[0], site.wave, "{f}");
    assert_ne!(waves[0], waves[1], "a race is between two waves: {f}");
    // Both instructions: the faulting one in the site, the earlier one
    // with its pc and disassembly in the reason.
    assert!(site.instruction.starts_with("ds_"), "{f}");
    assert!(f.reason().contains("at pc 0x"), "{f}");
    assert!(f.reason().contains("`ds_"), "{f}");
}

#[test]
fn lds_atomics_are_not_races() {
    let (stream, module) = setup();
    let input: Vec<u32> = (0..1024u32).map(|i| i * 7 + i / 3).collect();
    let bins = run(&stream, &module, "histogram", 4, &input, 16).unwrap();
    let mut want = vec![0u32; 16];
    for v in &input {
        want[(v % 16) as usize] += 1;
    }
    assert_eq!(bins, want);
}

/// A plain access racing atomics is a race, in global memory and in LDS;
/// the report says one of the two is atomic.
#[test]
fn racecheck_reports_a_plain_access_racing_atomics() {
    let (stream, module) = setup();
    for (kernel, space) in [
        ("count_and_store", "hazard on global memory"),
        ("peek_local_count", "hazard on LDS offset"),
    ] {
        let err = run(&stream, &module, kernel, 4, &[], 4).unwrap_err();
        eprintln!("{err}");
        assert!(err.reason().starts_with("racecheck: "), "{kernel}: {err}");
        assert!(err.reason().contains(space), "{kernel}: {err}");
        assert!(
            err.reason()
                .contains("one of them is atomic but the other is not"),
            "{kernel}: {err}"
        );
    }
}

/// initcheck of device memory: a kernel reading an element nothing wrote
/// is reported at that element; once the host writes it, or when a kernel
/// wrote the whole buffer, the same read runs clean.
#[test]
fn initcheck_reports_a_read_of_device_memory_never_written() {
    let (stream, module) = setup();
    let (pair_sum, write_two) = (
        module.kernel("pair_sum").unwrap(),
        module.kernel("write_two").unwrap(),
    );
    let input = stream.allocate(4 * 512).unwrap();
    stream
        .upload(&input, &(0..256u32).collect::<Vec<_>>())
        .unwrap();
    let out = stream.allocate(4 * 256).unwrap();
    let args = Args::new().view(&input).view(&out);
    stream.dispatch_args(&pair_sum, 1, 256, &args).unwrap();
    let err = stream.synchronize().unwrap_err();
    let Error::Fault(f) = &err else {
        panic!("{err}")
    };
    eprintln!("{f}");
    let unwritten = input.address() + 4 * 256;
    assert!(
        f.reason()
            .starts_with("initcheck: 4-byte read of global memory"),
        "{f}"
    );
    assert!(f.reason().contains("since it was allocated"), "{f}");
    assert!(
        f.reason().contains("byte 1024 of a 2048-byte allocation"),
        "{f}"
    );
    assert_eq!(f.argument(), Some("in"), "{f}");
    assert!(
        f.reason().contains(&format!(
            "first unwritten byte: global memory at {unwritten:#x}"
        )),
        "{f}"
    );
    // Written by the host, then by a kernel: no report.
    stream.upload_at(&input, 4 * 256, &[256u32]).unwrap();
    stream.dispatch_args(&pair_sum, 1, 256, &args).unwrap();
    let sums = stream.read_vec::<u32>(&out).unwrap();
    assert_eq!(sums, (0..256u32).map(|i| 2 * i + 1).collect::<Vec<_>>());
    let fresh = stream.allocate(4 * 512).unwrap();
    stream
        .dispatch_args(&write_two, 1, 256, &Args::new().view(&fresh))
        .unwrap();
    let args = Args::new().view(&fresh).view(&out);
    stream.dispatch_args(&pair_sum, 1, 256, &args).unwrap();
    let sums = stream.read_vec::<u32>(&out).unwrap();
    // fresh[k] = k / 2, so fresh[i] + fresh[i + 1] = i.
    assert_eq!(sums, (0..256u32).collect::<Vec<_>>());
}

#[test]
fn racecheck_reports_workgroups_writing_one_global_element() {
    let (stream, module) = setup();
    let own = run(&stream, &module, "own_elements", 4, &[], 1024).unwrap();
    let want: Vec<u32> = (0..1024).map(|i| i / 256 + 1).collect();
    assert_eq!(own, want);

    let k = module.kernel("all_write_first").unwrap();
    let out = stream.allocate_zeroed(4).unwrap();
    stream
        .dispatch_args(&k, 4, 256, &Args::new().view(&out))
        .unwrap();
    let err = stream.synchronize().unwrap_err();
    let Error::Fault(f) = &err else {
        panic!("{err}")
    };
    eprintln!("{f}");
    let site = f.site().expect("a site");
    assert!(
        f.reason()
            .starts_with("racecheck: write-after-write hazard on global memory"),
        "{f}"
    );
    assert_eq!(site.address, Some(out.address()), "{f}");
    assert!(f.reason().contains(&format!("{:#x}", out.address())), "{f}");
    // Two different workgroups, both named, and both instructions stores.
    let groups: Vec<&str> = f
        .reason()
        .match_indices("workgroup (")
        .map(|(i, _)| &f.reason()[i..i + 20])
        .collect();
    assert_eq!(groups.len(), 2, "{f}");
    assert_ne!(groups[0], groups[1], "{f}");
    assert!(site.instruction.starts_with("global_store"), "{f}");
    assert!(f.reason().contains("`global_store"), "{f}");
}

/// Workgroups exchanging data through global memory across a grid barrier
/// (`ds_gws_barrier`, what HIP's `grid.sync()` runs), and without it.
const GRID_SOURCE: &str = r#"
__kernel void rotate(__global int* a, __global int* b, int n) {
    int i = get_global_id(0);
    a[i] = 3 * i + 1;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0) __builtin_amdgcn_ds_gws_barrier(get_num_groups(0) - 1, 0);
    barrier(CLK_GLOBAL_MEM_FENCE);
    b[i] = a[(i + n / 2) % n];
}
__kernel void rotate_unsynced(__global int* a, __global int* b, int n) {
    int i = get_global_id(0);
    a[i] = 3 * i + 1;
    barrier(CLK_GLOBAL_MEM_FENCE);
    b[i] = a[(i + n / 2) % n];
}
"#;

#[test]
fn a_grid_barrier_orders_workgroups_for_racecheck() {
    let (stream, _) = setup();
    let module = stream
        .compile(GRID_SOURCE, Language::OpenCl)
        .unwrap_or_else(|e| panic!("{e}"));
    let n: i32 = 4 * 64;
    let run = |name: &str| {
        let a = stream.allocate_zeroed(4 * n as usize).unwrap();
        let b = stream.allocate_zeroed(4 * n as usize).unwrap();
        let args = Args::new().view(&a).view(&b).value(n);
        stream
            .dispatch_args(&module.kernel(name).unwrap(), 4, 64, &args)
            .unwrap();
        stream.read_vec::<i32>(&b)
    };
    let want: Vec<i32> = (0..n).map(|i| 3 * ((i + n / 2) % n) + 1).collect();
    assert_eq!(run("rotate").unwrap(), want);
    let err = run("rotate_unsynced").unwrap_err();
    let Error::Fault(f) = &err else {
        panic!("{err}")
    };
    eprintln!("{f}");
    assert!(f.reason().starts_with("racecheck:"), "{f}");
    assert!(f.reason().contains("hazard on global memory"), "{f}");
}
