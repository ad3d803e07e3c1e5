#!/usr/bin/env bash
# AMD's own ROCm libraries as a test suite (issue 43): makes a Debian 13
# (trixie) chroot with debootstrap (once; it is kept), installs Debian's
# rocBLAS, hipBLAS, rocSOLVER and rocFFT with their gfx1100 kernels, builds
# the programs of tests/rocm-libraries against their host APIs with the
# chroot's g++, and runs each on softgpu's HIP runtime as an emulated
# gfx1100. Every call is checked against a host reference in double; a
# program's exit status is its number of wrong or failed calls.
#
#   sudo scripts/rocm-libraries.sh [PROGRAM...]   (blas hipblas solver fft)
#
# Needs root (debootstrap, chroot, mounting /proc), network access to
# deb.debian.org and about 6 GB of disk (rocSOLVER alone is 1.5 GB). The
# chroot lives in $SOFTGPU_ROCM_CHROOT (default target/rocm-trixie).
# Not part of the README's test command: the download does not fit CI's
# budget. Figures are in docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
chroot_dir="${SOFTGPU_ROCM_CHROOT:-$root/target/rocm-trixie}"
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(blas hipblas solver fft)
# clang-19, lld-19 and llvm-19 serve softgpu's hiprtc, which rocFFT builds
# its kernels with; Debian 13's device libraries are LLVM 17's
# (rocm-device-libs-17, a dependency of the HIP headers), linked where
# softgpu's compiler looks for them below.
packages=(librocblas-dev libhipblas-dev librocsolver-dev librocfft-dev libamdhip64-dev g++
  clang-19 lld-19 llvm-19)

if [ "$(id -u)" -ne 0 ]; then
  echo "rocm-libraries.sh: run as root (debootstrap and chroot need it)" >&2
  exit 2
fi

if [ ! -e "$chroot_dir/etc/debian_version" ]; then
  command -v debootstrap >/dev/null 2>&1 || {
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
  }
  debootstrap --variant=minbase trixie "$chroot_dir" http://deb.debian.org/debian
fi
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
mountpoint -q "$chroot_dir/proc" || mount -t proc proc "$chroot_dir/proc"
trap 'umount "$chroot_dir/proc" 2>/dev/null || true' EXIT
if ! chroot "$chroot_dir" dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  chroot "$chroot_dir" apt-get update -q
  chroot "$chroot_dir" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${packages[@]}"
fi

bitcode="$chroot_dir/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"
# (The link points inside the chroot, so from here it may look dangling.)
if [ ! -e "$bitcode" ] && [ ! -L "$bitcode" ]; then
  mkdir -p "$(dirname "$bitcode")"
  ln -s /usr/lib/llvm-17/lib/clang/17/amdgcn/bitcode "$bitcode"
fi

# softgpu's HIP runtime (and the HSA runtime beside it), first on the
# programs' library path: they were linked against Debian's libamdhip64.
cargo build --release -p softgpu-hip -p softgpu-hsa --lib
lib="$chroot_dir/opt/softgpu/lib"
mkdir -p "$lib" "$chroot_dir/opt/softgpu/suite"
cp target/release/libamdhip64.so target/release/libhsa_runtime64.so "$lib/"
ln -sf libamdhip64.so "$lib/libamdhip64.so.5"
ln -sf libhsa_runtime64.so "$lib/libhsa-runtime64.so.1"
cp tests/rocm-libraries/*.h tests/rocm-libraries/*.cpp "$chroot_dir/opt/softgpu/suite/"

declare -A libs=([blas]="-lrocblas" [hipblas]="-lhipblas" [solver]="-lrocsolver -lrocblas" [fft]="-lrocfft")
failed=0
for p in "${programs[@]}"; do
  [ -n "${libs[$p]:-}" ] || { echo "unknown program $p (blas hipblas solver fft)" >&2; exit 2; }
  echo "== $p"
  # shellcheck disable=SC2086 # the library flags are separate words
  chroot "$chroot_dir" g++ -std=c++17 -O1 -D__HIP_PLATFORM_AMD__ \
    -o "/opt/softgpu/suite/$p" "/opt/softgpu/suite/$p.cpp" ${libs[$p]} -lamdhip64
  start=$(date +%s.%N)
  status=0
  chroot "$chroot_dir" env LD_LIBRARY_PATH=/opt/softgpu/lib SOFTGPU_DEVICES=gfx1100 \
    "/opt/softgpu/suite/$p" || status=$?
  echo "== $p: exit status $status, $(echo "$(date +%s.%N) - $start" | bc) s in all"
  [ "$status" -eq 0 ] || failed=$((failed + 1))
done
echo "rocm-libraries: ${#programs[@]} programs, $failed with wrong or failed calls"
[ "$failed" -eq 0 ]
