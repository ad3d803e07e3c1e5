// Does nothing: the API benchmarks (crates/softgpu/benches/api.rs) dispatch
// it to measure what a dispatch costs apart from the kernel's own work. The
// pointer argument makes the dispatch carry a buffer, as real ones do.
kernel void empty(global int *unused) {}
