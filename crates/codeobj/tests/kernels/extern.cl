// Default-visibility globals are preemptible in a shared object, so the linker
// emits R_AMDGPU_ABS64 against their symbols. With -DWITH_UNDEFINED the object
// also references `not_defined_anywhere`, which stays undefined after
// `ld.lld -shared`, so placing the image must fail.
__attribute__((visibility("default"))) __global int visible = 7;
__attribute__((visibility("default"))) __global int *__global visible_ptr = &visible;

#ifdef WITH_UNDEFINED
__attribute__((visibility("default"))) extern __global int not_defined_anywhere;
__global int *__global undefined_ptr = &not_defined_anywhere;
#endif

__kernel void use_extern(__global int *out) {
  out[0] = *visible_ptr;
#ifdef WITH_UNDEFINED
  out[1] = *undefined_ptr;
#endif
}
