//! Per-allocation confinement through the Rust API: every access a kernel
//! makes must fall inside one live allocation (byte-exactly) that allows
//! it; anything else is a fault naming the allocation it hit or missed.
//! Legal edge accesses raise nothing.

use softgpu::{Args, Device, Error, Language, Module, Stream};

const SOURCE: &str = r#"
__kernel void write_at(__global char* c, long index) {
    if (get_global_id(0) == 0) c[index] = 7;
}
__kernel void read_at(__global const char* c, long index, __global char* out) {
    if (get_global_id(0) == 0) out[0] = c[index];
}
__kernel void write_int_at(__global int* c, long index) {
    if (get_global_id(0) == 0) c[index] = 7;
}
__kernel void copy4(__global const float4* in, __global float4* out) {
    out[get_global_id(0)] = in[get_global_id(0)];
}
__kernel void last_bytes(__global const uchar* in, __global uchar* out, uint n) {
    uint i = get_global_id(0);
    if (i < n) out[i] = in[i] + 1;
}
// What the ABI lets a kernel read: its kernel arguments, its dispatch
// packet and its queue; it may write none of them (another queue's
// descriptor is covered through the HSA library, tests/dispatch.rs).
__kernel void read_abi(__global uint* out) {
    out[0] = *(__global const uint*)(size_t)__builtin_amdgcn_kernarg_segment_ptr();
    out[1] = *(__global const uint*)(size_t)__builtin_amdgcn_dispatch_ptr();
    out[2] = *(__global const uint*)(size_t)__builtin_amdgcn_queue_ptr();
}
__kernel void write_kernarg(__global uint* out) {
    *(__global uint*)(size_t)__builtin_amdgcn_kernarg_segment_ptr() = 1;
}
__kernel void write_packet(__global uint* out) {
    *(__global uint*)(size_t)__builtin_amdgcn_dispatch_ptr() = 1;
}
"#;

fn buffer_with<T: softgpu::Scalar>(stream: &Stream, data: &[T]) -> softgpu::Buffer {
    let b = stream.allocate(std::mem::size_of_val(data)).unwrap();
    stream.upload_blocking(&b, data).unwrap();
    b
}

fn setup() -> (Device, Stream, Module) {
    let device = Device::open(0).expect("device 0");
    let stream = device.stream().expect("stream");
    let module = stream
        .compile(SOURCE, Language::OpenCl)
        .unwrap_or_else(|e| panic!("{e}"));
    (device, stream, module)
}

/// Runs `kernel` over one workgroup of 32 and returns the fault, if any.
fn run(
    stream: &Stream,
    module: &Module,
    kernel: &str,
    args: &Args,
) -> Option<Box<softgpu::KernelFault>> {
    let k = module.kernel(kernel).unwrap();
    stream.dispatch_args(&k, 1, 32, args).unwrap();
    match stream.submit().unwrap().wait() {
        Ok(()) => None,
        Err(Error::Fault(f)) => Some(f),
        Err(e) => panic!("{kernel}: {e}"),
    }
}

#[test]
fn small_overflows_are_reported_and_the_neighbour_is_unchanged() {
    let (_d, stream, module) = setup();
    let c = stream.allocate_zeroed(1001).unwrap();
    let neighbour = stream.allocate_zeroed(4096).unwrap();
    stream.fill_pattern(neighbour.binding(), 0x5au8).unwrap();
    for (index, expect) in [
        (1001i64, "0 bytes past the end of a 1001-byte allocation"),
        (1004, "3 bytes past the end of a 1001-byte allocation"),
        (
            1001 + 4096,
            "4096 bytes past the end of a 1001-byte allocation",
        ),
        (-1, "0 bytes before the start of a 1001-byte allocation"),
    ] {
        let f = run(
            &stream,
            &module,
            "write_at",
            &Args::new().view(&c).value(index),
        )
        .unwrap_or_else(|| panic!("a write at c[{index}] went unreported"));
        let text = f.to_string();
        assert!(text.contains(expect), "c[{index}]:\n{text}");
        assert!(
            text.contains("Stream::allocate"),
            "names who allocated it:\n{text}"
        );
        assert_eq!(f.argument(), Some("c"), "names the argument:\n{text}");
        let a = f.allocation().expect("the allocation");
        assert_eq!((a.base, a.len), (c.address(), 1001));
        let site = f.site().expect("a site");
        assert_eq!(site.lane, Some(0));
        assert!(
            site.instruction.starts_with("global_store")
                || site.instruction.starts_with("flat_store"),
            "{text}"
        );
    }
    assert!(
        stream
            .read_vec::<u8>(neighbour.binding())
            .unwrap()
            .iter()
            .all(|&b| b == 0x5a),
        "the neighbouring buffer changed"
    );
    // An int store 4 bytes past the end, and reads on either side.
    let ints = stream.allocate_zeroed(4 * 100).unwrap();
    let f = run(
        &stream,
        &module,
        "write_int_at",
        &Args::new().view(&ints).value(100i64),
    )
    .expect("int overflow");
    assert!(
        f.to_string()
            .contains("0 bytes past the end of a 400-byte allocation"),
        "{f}"
    );
    let out = stream.allocate_zeroed(4).unwrap();
    for index in [1001i64, -1, 2000] {
        let f = run(
            &stream,
            &module,
            "read_at",
            &Args::new().view(&c).value(index).view(&out),
        )
        .unwrap_or_else(|| panic!("a read at c[{index}] returned garbage silently"));
        assert!(f.to_string().contains("read refused"), "{f}");
    }
}

#[test]
fn legal_edge_accesses_raise_nothing() {
    let (_d, stream, module) = setup();
    // The last byte of an odd-sized buffer.
    let c = stream.allocate_zeroed(1001).unwrap();
    assert!(run(
        &stream,
        &module,
        "write_at",
        &Args::new().view(&c).value(1000i64)
    )
    .is_none());
    let out = stream.allocate_zeroed(1).unwrap();
    assert!(run(
        &stream,
        &module,
        "read_at",
        &Args::new().view(&c).value(1000i64).view(&out)
    )
    .is_none());
    // Whole-buffer 16-byte vector loads and stores (32 lanes × 16 bytes).
    let a = buffer_with(&stream, &[1.5f32; 128]);
    let b = stream.allocate_zeroed(512).unwrap();
    assert!(run(&stream, &module, "copy4", &Args::new().view(&a).view(&b)).is_none());
    assert_eq!(stream.read_vec::<f32>(b.binding()).unwrap(), vec![1.5; 128]);
    // Odd sizes: every byte of 1..=31-byte buffers.
    for n in [1u32, 3, 7, 17, 31] {
        let input = buffer_with(&stream, &vec![9u8; n as usize]);
        let output = stream.allocate_zeroed(n as usize).unwrap();
        assert!(run(
            &stream,
            &module,
            "last_bytes",
            &Args::new().view(&input).view(&output).value(n)
        )
        .is_none());
        assert_eq!(
            stream.read_vec::<u8>(output.binding()).unwrap(),
            vec![10; n as usize]
        );
    }
    // The ABI's read-only memory reads fine.
    let abi = stream.allocate_zeroed(12).unwrap();
    assert!(run(&stream, &module, "read_abi", &Args::new().view(&abi)).is_none());
    let words = stream.read_vec::<u32>(abi.binding()).unwrap();
    assert_eq!(
        words[0] as u64,
        abi.address() & 0xffff_ffff,
        "kernarg[0] is the out pointer"
    );
    assert_eq!(
        words[1] & 0xff,
        2,
        "the dispatch packet's header says KERNEL_DISPATCH"
    );
}

#[test]
fn kernels_may_not_write_their_arguments_packet_or_queue() {
    let (_d, stream, module) = setup();
    let x = stream.allocate_zeroed(4).unwrap();
    for (kernel, what) in [
        ("write_kernarg", "kernarg segment"),
        ("write_packet", "AQL queue's packet ring"),
    ] {
        let f = run(&stream, &module, kernel, &Args::new().view(&x))
            .unwrap_or_else(|| panic!("{kernel} wrote read-only memory"));
        let text = f.to_string();
        assert!(
            text.contains("which kernels may only read"),
            "{kernel}:\n{text}"
        );
        assert!(text.contains(what), "{kernel} names {what}:\n{text}");
    }
}

/// A fault in code built with `-g` names its source line: file, line and
/// column of the faulting statement, from the code object's DWARF, in the
/// fault's site and its report.
#[test]
fn a_fault_in_code_built_with_g_names_its_source_line() {
    // The faulting store is on line 4 of this source (line 1 is empty).
    const WITH_LINES: &str = r#"
__kernel void store_past(__global int* out, int n) {
    int i = get_global_id(0);
    out[i + n] = i;
}
"#;
    let device = Device::open(0).unwrap();
    let code = device
        .compiler()
        .unwrap()
        .option("-g")
        .compile(WITH_LINES, Language::OpenCl)
        .unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().unwrap();
    let module = stream.load_bytes(&code).unwrap();
    let out = stream.allocate_zeroed(64 * 4).unwrap();
    let args = Args::new().view(&out).value(64i32);
    stream
        .dispatch_args(&module.kernel("store_past").unwrap(), 1, 64, &args)
        .unwrap();
    let err = stream.synchronize().unwrap_err();
    let Error::Fault(f) = &err else {
        panic!("{err}")
    };
    let site = f.site().expect("a site");
    // Every work-item writes past the end; the report blames the first.
    assert_eq!(site.thread, Some([0, 0, 0]), "{f}");
    let frame = site
        .source
        .first()
        .unwrap_or_else(|| panic!("no source line: {f}"));
    assert_eq!(frame.line, Some(4), "{f}");
    assert!(frame.column.is_some(), "{f}");
    assert_eq!(frame.function.as_deref(), Some("store_past"), "{f}");
    let text = f.to_string();
    assert!(
        text.contains(":4:") && text.contains("in store_past"),
        "{text}"
    );
}
