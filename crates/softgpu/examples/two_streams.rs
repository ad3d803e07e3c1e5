//! Two streams ordered by an event: stream A produces, stream B waits on
//! the device (no host wait) and consumes.
//!
//! Run with `cargo run --release -p softgpu --example two_streams`.

use softgpu::{Args, Device, Language};

const SOURCE: &str = r#"
__kernel void ramp(__global float* x) { x[get_global_id(0)] = get_global_id(0); }
__kernel void square(__global float* x) { float v = x[get_global_id(0)]; x[get_global_id(0)] = v * v; }
"#;

fn main() -> Result<(), softgpu::Error> {
    let device = Device::open(0)?;
    let (a, b) = (device.stream()?, device.stream()?);
    let module = a.compile(SOURCE, Language::OpenCl)?;
    let (ramp, square) = (module.kernel("ramp")?, module.kernel("square")?);
    let x = a.allocate(4 * 1024)?;
    a.dispatch_args(&ramp, 16, 64, &Args::new().view(&x))?;
    let produced = a.record_event()?;
    b.wait_event(&produced)?;
    b.dispatch_args(&square, 16, 64, &Args::new().view(&x))?;
    let out: Vec<f32> = b.read_vec(&x)?;
    println!("x[10] = {}, x[1000] = {}", out[10], out[1000]);
    assert_eq!(out[1000], 1_000_000.0);
    Ok(())
}
