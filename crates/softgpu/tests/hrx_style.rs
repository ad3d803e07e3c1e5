//! A client written against hrx-rs's API (`../shared/docs/hrx-api.md`),
//! run on softgpu with only its `use` line changed. Everything inside
//! `hrx_program` is kept as an hrx program would write it: `unsafe` around
//! `load` and `dispatch` (safe in softgpu, so the compiler calls those
//! blocks unused), `mut` streams for calls that take `&mut self` in hrx
//! (`&self` here), destination-first copies, `usize` sizes, bindings plus
//! packed constants. Only `compile_kernels` is softgpu-specific: it writes
//! the code object the program loads, compiled from source now.

#![allow(unused_unsafe, unused_mut, clippy::unnecessary_mut_passed)]

use softgpu as hrx;

use std::path::{Path, PathBuf};

const SOURCE: &str = r#"
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    uint i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void fill_index(__global uint* out, uint base, ulong stride) {
    uint i = get_global_id(0);
    out[i] = base + (uint)stride * i;
}
"#;

/// Compiles [`SOURCE`] for device 0 into a code object file.
fn compile_kernels(dir: &Path) -> PathBuf {
    let device = softgpu::Device::open(0).unwrap();
    let code = device
        .compiler()
        .unwrap()
        .option("-cl-kernel-arg-info")
        .compile(SOURCE, softgpu::Language::OpenCl)
        .unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join("kernels.hsaco");
    std::fs::write(&path, code).unwrap();
    path
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn float_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The hrx program: written for hrx-rs, untouched apart from `use`.
fn hrx_program(code_object: &Path) -> hrx::Result<()> {
    let device = hrx::Device::open_for(0, "gfx1151")?;
    assert_eq!(device.target().to_string(), "gfx1151");
    assert!(!device.supports_shared_interop()?);
    let mut stream = device.stream()?;
    assert_eq!(stream.device_id(), 0);
    let other = hrx::Stream::open()?;
    assert_ne!(stream.id(), other.id());

    // SAFETY: a code object this program compiled from its own source.
    let saxpy = unsafe { stream.load(code_object, "saxpy")? };
    let info = saxpy.info();
    assert_eq!(saxpy.symbol(), "saxpy");
    assert_eq!(info.binding_count, 2);
    assert_eq!(info.constant_byte_length, 8, "a float and a uint");
    assert_eq!(info.workgroup_size, [0, 0, 0], "any block");

    const N: usize = 1000;
    let x_values: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let y_values = vec![1.0f32; N];
    let x = stream.allocate(4 * N)?;
    let y = stream.allocate_zeroed(4 * N)?;
    assert_eq!(x.bytes(), 4 * N);
    stream.upload(x.binding(), &float_bytes(&x_values))?;
    stream.upload_blocking_at(&y, 0, &float_bytes(&y_values))?;

    let mut constants = hrx::Constants::new();
    constants.push(2.0f32)?;
    constants.push(N as u32)?;
    let grid = [N.div_ceil(64) as u32, 1, 1];
    // SAFETY: the kernel touches only its bindings, each in range.
    unsafe {
        stream.dispatch(
            &saxpy,
            grid,
            [64, 1, 1],
            &constants,
            &[x.binding(), y.binding()],
        )?
    };
    let mut out = vec![0u8; 4 * N];
    stream.read_blocking(y.binding(), &mut out)?;
    let want: Vec<f32> = x_values.iter().map(|v| 2.0 * v + 1.0).collect();
    assert_eq!(floats(&out), want);

    // copy(dst, src): y's second half becomes x's first half.
    let half = 4 * N / 2;
    stream.copy(y.slice(half, half), x.slice(0, half))?;
    let mut tail = vec![0u8; half];
    stream.read_blocking_at(&y, half, &mut tail)?;
    assert_eq!(floats(&tail), x_values[..N / 2]);
    let readback = stream.read(x.try_slice(4, 8)?)?;
    assert_eq!(floats(&readback.wait(&mut stream)?), [1.0, 2.0]);

    // A view's slice is relative to the view, and checked.
    let view = y.slice(16, 64);
    assert_eq!((view.slice(8, 8)?.offset(), view.len()), (24, 64));
    assert!(view.slice(60, 8).is_err());
    assert!(y.try_slice(usize::MAX, 2).is_err());

    // Constants::indices packs each value argument at its own size.
    // SAFETY: a code object this program compiled from its own source.
    let fill = unsafe { stream.load(code_object, "fill_index")? };
    assert_eq!(fill.info().workgroup_size, [64, 1, 1]);
    let indices = hrx::Constants::indices(&fill, &[100, 3])?;
    assert_eq!(indices.as_bytes().len(), 4 + 8);
    let ids = stream.allocate(4 * 128)?;
    // SAFETY: the kernel touches only its bindings, each in range.
    unsafe { stream.dispatch(&fill, [2, 1, 1], [64, 1, 1], &indices, &[ids.binding()])? };
    let mut id_bytes = vec![0u8; 4 * 128];
    stream.read_blocking(ids.binding(), &mut id_bytes)?;
    let got: Vec<u32> = id_bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, (0..128).map(|i| 100 + 3 * i).collect::<Vec<u32>>());

    // A graph: fill, then copy, then dispatch, replayed twice.
    let mut graph = stream.graph()?;
    let filled = graph.fill(&[], y.binding(), 0)?;
    let copied = graph.copy(&[filled], y.slice(0, 16), x.slice(0, 16))?;
    // SAFETY: the kernel touches only its bindings, each in range.
    let ran = unsafe {
        graph.dispatch(
            &[copied],
            &saxpy,
            grid,
            [64, 1, 1],
            &constants,
            &[x.binding(), y.binding()],
        )?
    };
    graph.join(&[ran])?;
    let mut exec = graph.finish()?;
    for _ in 0..2 {
        stream.launch(&mut exec)?;
    }
    let event = stream.record_event()?;
    other.wait_event(&event)?;
    let submission = stream.submit()?;
    submission.wait()?;
    assert!(event.is_complete()?);
    event.synchronize()?;
    stream.read_blocking(y.binding(), &mut out)?;
    let got = floats(&out);
    // y = 2x + (x for the first 4 elements, else 0).
    assert_eq!(got[..4], [0.0, 3.0, 6.0, 9.0]);
    assert_eq!(
        got[4..],
        x_values[4..].iter().map(|v| 2.0 * v).collect::<Vec<_>>()
    );

    // Scratch and the memory budget.
    let budget = hrx::MemoryBudget::new(1 << 20);
    let mut bounded = device.stream()?.with_memory_budget(budget);
    assert!(bounded.memory_budget().is_some());
    bounded.set_scratch_limit(1 << 16);
    let scratch = bounded.scratch(1000)?;
    assert!(scratch.bytes() >= 1000);
    bounded.recycle(scratch)?;
    assert!(bounded.allocate(2 << 20).is_err(), "over budget");
    stream.synchronize()?;
    Ok(())
}

#[test]
fn an_hrx_program_runs_with_only_its_use_line_changed() {
    let dir = std::env::temp_dir().join(format!("softgpu-hrx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let code_object = compile_kernels(&dir);
    let result = hrx_program(&code_object);
    let _ = std::fs::remove_dir_all(&dir);
    result.unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn bindings_and_constants_are_checked_against_the_kernel() {
    let dir = std::env::temp_dir().join(format!("softgpu-hrx-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let code_object = compile_kernels(&dir);
    let stream = hrx::Stream::open().unwrap();
    let saxpy = stream.load(&code_object, "saxpy").unwrap();
    let fill = stream.load(&code_object, "fill_index.kd").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let x = stream.allocate(64).unwrap();
    let mut constants = hrx::Constants::new();
    constants.push(1.0f32).unwrap();
    let err = |r: hrx::Result<()>| r.unwrap_err();
    // One binding short, then a constant short: each named.
    let e = err(stream.dispatch(&saxpy, 1, 16, &constants, &[x.binding()]));
    assert!(
        matches!(
            e,
            hrx::Error::Bindings {
                what: "bindings",
                expected: 2,
                given: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = err(stream.dispatch(&saxpy, 1, 16, &constants, &[x.binding(), x.binding()]));
    assert!(
        matches!(
            e,
            hrx::Error::Bindings {
                what: "constant bytes",
                expected: 8,
                given: 4,
                ..
            }
        ),
        "{e}"
    );
    // A block other than the compiled workgroup size.
    let indices = hrx::Constants::indices(&fill, &[0, 1]).unwrap();
    let e = err(stream.dispatch(&fill, 1, 32, &indices, &[x.binding()]));
    assert!(matches!(e, hrx::Error::Launch { .. }), "{e}");
    // indices wants one value per value argument.
    assert!(hrx::Constants::indices(&fill, &[1]).is_err());
    // A readback waits on the stream that reads.
    let other = hrx::Stream::open().unwrap();
    let readback = stream.read(x.binding()).unwrap();
    assert!(matches!(readback.wait(&other), Err(hrx::Error::Invalid(_))));
}
