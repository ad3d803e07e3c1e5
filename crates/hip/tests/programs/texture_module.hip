// Device code for texture_reference's driver-API part, loaded with
// hipModuleLoad: a texture reference the host finds with
// hipModuleGetTexRef, and a kernel reading it.
#include <hip/hip_runtime.h>

texture<float, hipTextureType2D, hipReadModeElementType> module_tex;

extern "C" __global__ void sample_module_tex(float* out, int w, int h) {
  int x = threadIdx.x, y = threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D(module_tex, x + 0.5f, y + 0.5f);
}
