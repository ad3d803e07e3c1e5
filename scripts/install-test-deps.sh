#!/usr/bin/env bash
# Installs what the tests need on Debian 12 (bookworm), if it is missing:
# clang/lld/llvm 19 (compiling kernels, llvm-mc/llvm-objdump oracles),
# the ROCm device libraries (OpenCL/HIP math), a host C compiler (the
# differential test builds its host side with cc), Debian's HSA headers
# (the C-ABI tests build HSA programs against hsa.h and link them with our
# libhsa-runtime64.so.1), Debian's HIP headers and library (libamdhip64-dev)
# rocminfo (an unmodified HSA tool run on it), Debian's prebuilt ROCm
# libraries whose gfx1030 kernels run on softgpu (rocRAND, hipRAND,
# rocSPARSE, hipSPARSE, with their headers) and pocl with the OpenCL ICD
# loader and headers (`softgpu bench --suite` compares against it).
set -euo pipefail

need=()
for tool in clang-19:clang-19 ld.lld-19:lld-19 llvm-mc-19:llvm-19 llvm-objdump-19:llvm-19 llvm-as-19:llvm-19 cc:gcc; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
[ -e /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc ] || need+=(rocm-device-libs)
[ -e /usr/include/hsa/hsa.h ] || need+=(libhsa-runtime-dev)
# HIP programs are compiled against Debian's HIP headers and linked against
# Debian's libamdhip64.so (as a user's build would be), then run on
# softgpu's library.
[ -e /usr/include/hip/hip_runtime.h ] && [ -e /usr/lib/x86_64-linux-gnu/libamdhip64.so ] || need+=(libamdhip64-dev)
command -v rocminfo >/dev/null 2>&1 || need+=(rocminfo)
# Programs linked against Debian's prebuilt ROCm libraries run their
# gfx1030 code objects on an emulated gfx1030.
for lib in rocrand hiprand rocsparse hipsparse; do
  [ -e "/usr/lib/x86_64-linux-gnu/lib$lib.so" ] || need+=("lib$lib-dev")
done
# `softgpu bench --suite` runs its kernels on pocl too, through a C harness
# built against the OpenCL headers and ICD loader.
[ -e /etc/OpenCL/vendors/pocl.icd ] || need+=(pocl-opencl-icd)
[ -e /usr/include/CL/cl.h ] && [ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so ] || need+=(ocl-icd-opencl-dev ocl-icd-libopencl1)

if [ ${#need[@]} -eq 0 ]; then
  echo "test dependencies present"
  exit 0
fi

# De-duplicate.
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
echo "installing: ${need[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q "${need[@]}"
