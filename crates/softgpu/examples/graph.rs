//! A multi-stage graph recorded once and replayed: fill, two independent
//! scalings, a join, then a copy that depends on both.
//!
//! Run with `cargo run --release -p softgpu --example graph`.

use softgpu::{Args, Device, Language};

const SOURCE: &str = r#"
__kernel void scale(__global float* x, float k) { x[get_global_id(0)] *= k; }
__kernel void add(__global const float* a, __global float* b) { b[get_global_id(0)] += a[get_global_id(0)]; }
"#;

fn main() -> Result<(), softgpu::Error> {
    let device = Device::open(0)?;
    let stream = device.stream()?;
    let module = stream.compile(SOURCE, Language::OpenCl)?;
    let (scale, add) = (module.kernel("scale")?, module.kernel("add")?);
    let n = 256u32;
    let (a, b, out) = (
        stream.allocate(4 * n as usize)?,
        stream.allocate(4 * n as usize)?,
        stream.allocate(4 * n as usize)?,
    );
    let mut graph = stream.graph()?;
    let fill_a = graph.fill_pattern(&[], &a, 1.0f32)?;
    let fill_b = graph.fill_pattern(&[], &b, 2.0f32)?;
    let scale_a = Args::new().view(&a).value(10.0f32);
    let scale_b = Args::new().view(&b).value(100.0f32);
    let sa = graph.dispatch_args(&[fill_a], &scale, n / 64, 64, &scale_a)?;
    let sb = graph.dispatch_args(&[fill_b], &scale, n / 64, 64, &scale_b)?;
    let both = graph.join(&[sa, sb])?;
    let summed = graph.dispatch_args(&[both], &add, n / 64, 64, &Args::new().view(&a).view(&b))?;
    graph.copy(&[summed], &out, &b)?;
    let mut exec = graph.finish()?;
    for _ in 0..10 {
        stream.launch(&mut exec)?;
    }
    let result: Vec<f32> = stream.read_vec(&out)?;
    println!(
        "{} nodes replayed 10 times; out[0] = {}",
        exec.len(),
        result[0]
    );
    assert!(result.iter().all(|&v| v == 210.0));
    Ok(())
}
