// Private (scratch) memory: what a wave sees before it writes, and how much
// of a large private array a kernel may touch. `volatile` keeps every
// access a real scratch load or store.

// Reads element `at` of a private array it never wrote, then fills the
// array with `mark`: a later wave on the same worker that still saw `mark`
// would be reading the previous wave's scratch.
__kernel void peek_then_dirty(__global uint* out, uint at, uint mark) {
    volatile uint a[256];
    out[get_global_id(0)] = a[at & 255];
    for (uint i = 0; i < 256; i++) a[i] = mark;
}

// Writes element `at` and reads it back: no initcheck report.
__kernel void write_then_read(__global uint* out, uint at, uint v) {
    volatile uint a[256];
    a[at & 255] = v + get_global_id(0);
    out[get_global_id(0)] = a[at & 255];
}

// A private array near the limit (gfx11: 262,136 bytes per work-item in
// wave32; LLVM allows half in wave64, so CDNA's is half as long) of which
// each work-item touches one word, or all when `all`.
#define WORDS (__AMDGCN_WAVEFRONT_SIZE == 64 ? 30000 : 60000)
__kernel void big_private(__global uint* out, uint at, uint all) {
    volatile uint a[WORDS];
    uint n = all ? WORDS : 1;
    for (uint i = 0; i < n; i++) a[(at + i) % WORDS] = i + get_global_id(0);
    out[get_global_id(0)] = a[at % WORDS];
}
