//! Vector add from OpenCL C source on the default device: upload, dispatch
//! and read back in one stream, then check against the CPU.
//!
//! Run with `cargo run --release -p softgpu --example vector_add`.

use softgpu::{Args, Device, Language};

const SOURCE: &str = r#"
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, uint n) {
    uint i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
"#;

fn main() -> Result<(), softgpu::Error> {
    let device = Device::open(0)?;
    println!("device 0: {}", device.properties().marketing_name);
    let stream = device.stream()?;
    let vadd = stream.compile(SOURCE, Language::OpenCl)?.kernel("vadd")?;
    let n: u32 = 1 << 16;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (n - i) as f32 * 0.25).collect();
    let bytes = 4 * n as usize;
    let (da, db, dc) = (
        stream.allocate(bytes)?,
        stream.allocate(bytes)?,
        stream.allocate(bytes)?,
    );
    stream.upload(&da, &a)?;
    stream.upload(&db, &b)?;
    let args = Args::new().view(&da).view(&db).view(&dc).value(n);
    let start = stream.record_event()?;
    stream.dispatch_args(&vadd, n.div_ceil(256), 256, &args)?;
    let end = stream.record_event()?;
    let c: Vec<f32> = stream.read_vec(&dc)?;
    let wrong = (0..n as usize).filter(|&i| c[i] != a[i] + b[i]).count();
    println!(
        "{n} elements, {wrong} wrong, kernel took {:?}",
        end.elapsed_since(&start)?
    );
    if wrong == 0 {
        Ok(())
    } else {
        Err(softgpu::Error::Invalid(format!("{wrong} wrong sums")))
    }
}
