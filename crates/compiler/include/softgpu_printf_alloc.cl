// The buffered-printf allocator OpenCL printf records are reserved with,
// linked by softgpu-compiler into OpenCL code objects that call it. clang's
// printf lowering (AMDGPUPrintfRuntimeBinding) emits the call during code
// generation, after the device libraries were linked, so the device
// library's copy is never pulled in; this one is linked by ld.lld instead.
// Same buffer layout as the device library's (header: bytes used, buffer
// size; records from byte 8); a record that does not fit is dropped and
// counted in the two words just past the size (dropped bytes, dropped
// records), which softgpu's host side reports.
__global char *__printf_alloc(uint bytes) {
  __constant ulong *implicit = (__constant ulong *)__builtin_amdgcn_implicitarg_ptr();
#ifdef SOFTGPU_COV4
  __global uint *buf = (__global uint *)implicit[3];
#else
  __global uint *buf = (__global uint *)implicit[9];
#endif
  if (!buf) return 0;
  uint size = buf[1];
  uint off = __atomic_load_n(buf, __ATOMIC_RELAXED);
  for (;;) {
    if ((ulong)off + bytes + 8 > size) {
      __global uint *dropped = buf + size / 4;
      __atomic_fetch_add(dropped, bytes, __ATOMIC_RELAXED);
      __atomic_fetch_add(dropped + 1, 1u, __ATOMIC_RELAXED);
      return 0;
    }
    if (__atomic_compare_exchange_n(buf, &off, off + bytes, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      break;
  }
  return (__global char *)buf + 8 + off;
}
