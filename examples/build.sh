#!/usr/bin/env bash
# Regenerates examples/bin/<kernel>-<target>.hsaco from examples/kernels/.
#
# Needs the Debian packages clang-19 lld-19 llvm-19 rocm-device-libs (no ROCm
# install, no GPU). rocm-device-libs 5.2.3 lacks the oclc_isa_version_*.bc
# files for gfx11 and gfx12, so this script builds a private device-library folder:
# symlinks to every Debian bitcode library plus the missing ISA-version
# constants, assembled with llvm-as-19.
#
# Usage: examples/build.sh [TARGET...]   (default: gfx1151 gfx1100 gfx1201 gfx1030 gfx90a gfx942)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/kernels"
out="$here/bin"
bitcode=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(gfx1151 gfx1100 gfx1201 gfx1030 gfx90a gfx942)

# --- tools -----------------------------------------------------------------
missing=()
command -v clang-19 >/dev/null || missing+=(clang-19)
command -v ld.lld-19 >/dev/null || missing+=(lld-19)
command -v llvm-as-19 >/dev/null || missing+=(llvm-19)
[ -f "$bitcode/ocml.bc" ] || missing+=(rocm-device-libs)
if [ ${#missing[@]} -gt 0 ]; then
  echo "build.sh: missing Debian packages: ${missing[*]}" >&2
  echo "  install them with: apt-get install -y ${missing[*]}" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# --- device libraries --------------------------------------------------------
libs="$work/device-libs"
mkdir -p "$libs"
for f in "$bitcode"/*.bc; do ln -s "$f" "$libs/"; done
# clang-19's amdgcn data layout, asked from clang itself.
: > "$work/empty.cl"
layout="$(clang-19 -x cl -target amdgcn-amd-amdhsa -nogpulib -S -emit-llvm -o - "$work/empty.cl" |
  sed -n 's/^target datalayout = "\(.*\)"$/\1/p')"
[ -n "$layout" ] || { echo "build.sh: could not read clang-19's amdgcn datalayout" >&2; exit 1; }
# gfx<major><minor><stepping>, the last two hex digits, the major decimal
# before them -> major*1000 + minor*100 + stepping: gfx1151 -> 11501,
# gfx1201 -> 12001, gfx942 -> 9402.
isa_version() {
  local d="${1#gfx}"
  local major="${d:0:${#d}-2}"
  echo $(( major * 1000 + 16#${d: -2:1} * 100 + 16#${d: -1} ))
}
for t in "${targets[@]}"; do
  d="${t#gfx}"
  bc="$libs/oclc_isa_version_$d.bc"
  [ -e "$bc" ] && continue
  cat > "$work/isa_$d.ll" <<LL
target datalayout = "$layout"
target triple = "amdgcn-amd-amdhsa"

@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 $(isa_version "$t"), align 4
LL
  llvm-as-19 "$work/isa_$d.ll" -o "$bc"
done

# --- kernels -----------------------------------------------------------------
mkdir -p "$out"
cd "$src" # relative source paths keep the code objects free of local paths
for t in "${targets[@]}"; do
  for k in *.cl; do
    name="${k%.cl}"
    clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu="$t" \
      --rocm-device-lib-path="$libs" -O3 -ffp-contract=off -cl-kernel-arg-info -c "$k" -o "$work/$name-$t.o"
    ld.lld-19 -shared "$work/$name-$t.o" -o "$out/$name-$t.hsaco"
    chmod 644 "$out/$name-$t.hsaco"
    echo "examples/bin/$name-$t.hsaco"
  done
  for k in *.hip; do
    name="${k%.hip}"
    clang-19 -x hip --cuda-device-only --no-gpu-bundle-output --offload-arch="$t" \
      -nogpulib -nogpuinc -O3 -ffp-contract=off -fhip-kernel-arg-name "$k" -o "$out/$name-$t.hsaco"
    chmod 644 "$out/$name-$t.hsaco"
    echo "examples/bin/$name-$t.hsaco"
  done
done
