#!/usr/bin/env bash
# Installs what the tests need on Debian 12 (bookworm), if it is missing:
# clang/lld/llvm 19 (compiling kernels, llvm-mc/llvm-objdump oracles),
# the ROCm device libraries (OpenCL/HIP math), and a host C compiler
# (the differential test builds its host side with cc).
set -euo pipefail

need=()
for tool in clang-19:clang-19 ld.lld-19:lld-19 llvm-mc-19:llvm-19 llvm-objdump-19:llvm-19 llvm-as-19:llvm-19 cc:gcc; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
[ -e /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc ] || need+=(rocm-device-libs)

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
