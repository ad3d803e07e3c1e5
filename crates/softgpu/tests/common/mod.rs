//! Shared test kernels, compiled from OpenCL C at test time.

#![allow(dead_code)]

use softgpu::{Device, Language, Module, Stream};

pub const SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, uint n) {
    uint i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
__kernel void scale(__global float* x, float k) {
    x[get_global_id(0)] *= k;
}
__kernel void mixed(__global uint* out, uint a, ulong b, double c, half h) {
    out[0] = a + (uint)b + (uint)c + (uint)(float)h;
}
__kernel void wild(__global int* p) {
    *(__global int*)(0x40ul + get_global_id(0) * 4) = 1;
}
__kernel void wait_flag(volatile __global uint* flag, __global uint* seen, uint tries) {
    uint i = 0;
    while (i < tries && atomic_add(flag, 0u) == 0) i++;
    seen[0] = i < tries;
}
__kernel void set_flag(volatile __global uint* flag) {
    atomic_xchg(flag, 1u);
}
__kernel void spin(__global float* x, uint n) {
    float acc = x[get_global_id(0)];
    for (uint i = 0; i < n; i++) acc = acc * 0.5f + 1.0f;
    x[get_global_id(0)] = acc;
}
"#;

/// Device 0 of an instance configured from the environment over the
/// tests' defaults (so `SOFTGPU_JIT=verify`, unless set otherwise, holds
/// the JIT to the interpreter here too), a stream, and [`SOURCE`]
/// compiled and loaded.
pub fn setup() -> (Device, Stream, Module) {
    let config = softgpu_env::config_from(softgpu_test_support::env::var)
        .expect("the environment's configuration");
    let device = softgpu::Instance::new(&config)
        .and_then(|i| i.device(0))
        .expect("device 0");
    let stream = device.stream().expect("stream");
    let module = stream
        .compile(SOURCE, Language::OpenCl)
        .unwrap_or_else(|e| panic!("{e}"));
    (device, stream, module)
}
