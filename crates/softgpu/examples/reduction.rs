//! A multi-pass sum reduction with the committed code object
//! `examples/bin/reduce-gfx1151.hsaco` (no compiler needed): each pass sums
//! 512 values per workgroup into one partial, and the passes run back to
//! back in one stream, with no host wait between them, until one value is
//! left. Checked against the same tree summed on the CPU (bit for bit) and
//! against an f64 sum.
//!
//! Run with `cargo run --release -p softgpu --example reduction`.

use softgpu::{Args, Device, Error};

const CODE_OBJECT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/bin/reduce-gfx1151.hsaco"
);
/// The kernel's required workgroup size; each work-item loads two values.
const BLOCK: usize = 256;
const PER_GROUP: usize = 2 * BLOCK;
const N: usize = 3_000_017;

fn main() -> Result<(), Error> {
    let device = Device::open_for(0, "gfx1151")?;
    let stream = device.stream()?;
    let reduce = stream.load(CODE_OBJECT, "reduce_sum")?;
    let values: Vec<f32> = (0..N).map(|i| (i * 7919 % 1000) as f32 / 1000.0).collect();
    let mut current = stream.allocate(4 * N)?;
    stream.upload(&current, &values)?;
    let start = stream.record_event()?;
    let (mut len, mut passes) = (N, 0);
    while len > 1 {
        let groups = len.div_ceil(PER_GROUP);
        let partials = stream.allocate(4 * groups)?;
        let args = Args::new().view(&current).view(&partials).value(len as i32);
        stream.dispatch_args(&reduce, groups as u32, BLOCK as u32, &args)?;
        // Replacing (dropping) the pass's input is safe: queued work keeps it.
        current = partials;
        len = groups;
        passes += 1;
    }
    let end = stream.record_event()?;
    let sum: Vec<f32> = stream.read_vec(&current)?;
    let tree = cpu_tree_sum(&values);
    let exact: f64 = values.iter().map(|&v| v as f64).sum();
    println!(
        "sum of {N} values in {passes} passes ({:.2?}): {} (CPU tree {tree}, f64 {exact:.3})",
        end.elapsed_since(&start)?,
        sum[0]
    );
    if sum[0] == tree {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "device sum {} != CPU {tree}",
            sum[0]
        )))
    }
}

/// The kernel's passes on the CPU: the same pairing, level by level.
fn cpu_tree_sum(values: &[f32]) -> f32 {
    let mut level = values.to_vec();
    while level.len() > 1 {
        level = level.chunks(PER_GROUP).map(group_sum).collect();
    }
    level[0]
}

/// One workgroup: work-item `l` adds values `l` and `l + BLOCK` (zero past
/// the end), then halves the stride in LDS until one sum is left.
fn group_sum(chunk: &[f32]) -> f32 {
    let at = |i: usize| chunk.get(i).copied().unwrap_or(0.0);
    let mut s: Vec<f32> = (0..BLOCK).map(|l| at(l) + at(l + BLOCK)).collect();
    let mut stride = BLOCK / 2;
    while stride > 0 {
        for l in 0..stride {
            s[l] += s[l + stride];
        }
        stride /= 2;
    }
    s[0]
}
