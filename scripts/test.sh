#!/usr/bin/env bash
# The README's test command: installs the test toolchain if missing, then
# runs every test of the workspace. Tests that need clang-19 and friends
# fail (never skip) when the tools are absent.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's wall time goes to stderr ("test step: N s: …").
step() {
  local start=$SECONDS
  "$@"
  echo "test step: $((SECONDS - start)) s: $*" >&2
}
scripts/install-test-deps.sh
# The C-ABI tests load the built libhsa-runtime64.so.1 and
# libamdhip64.so.5, and the HIP programs are also built through the
# `softgpu hipcc` binary; `cargo test` builds neither cdylibs nor other
# packages' binaries by itself, so they are built first. Every release
# build here selects the whole workspace with its tests: cargo resolves
# features per invocation, and a narrower selection (one package, or no
# dev-dependencies) resolves some shared dependencies differently and
# rebuilds the executor, Cranelift and everything above them, minutes of
# CI each time.
step cargo build --release --workspace --lib --bins --tests --examples
# Every test runs with the JIT tier in verify mode: each compiled block
# runs in both tiers from the same state and any difference faults, so the
# whole suite holds the JIT to the interpreter (docs/ARCHITECTURE.md,
# "Execution tiers"). The examples below run with the JIT plainly on.
# (The executor crates' unit tests, `[lib] test = false`, run once, below,
# in the test profile: their test harnesses in release too would cost
# minutes.)
SOFTGPU_JIT=verify step cargo test --workspace --release "$@"
# The executor crates' unit tests, and the instruction tests once more, in
# the test profile
# (opt-level 2, debug assertions on), which the release run has off: it adds
# overflow checks to the instruction semantics and the standard library's
# checks of unsafe preconditions (aligned raw-pointer dereferences,
# `from_raw_parts` and `copy_nonoverlapping` arguments) to the arena's and
# the pool's unsafe code. (Miri cannot run here: docs/ARCHITECTURE.md.)
# The release run above already held every case to both tiers; this pass
# is for the checks the release profile leaves out, so it runs the JIT
# plainly on (tiering up as a dispatch would) rather than verifying. It
# leaves out the instruction tests' JIT-against-interpreter comparisons
# (`jit::*`, `jit_classes::*`), which the release run made: here
# Cranelift is unoptimised (see Cargo.toml), and they took 100 of the
# pass's 120 seconds of running.
SOFTGPU_JIT=on step cargo test -p softgpu-arena -p softgpu-interp -p softgpu-jit -p softgpu-exec \
  --lib --test instructions "$@" -- --skip jit:: --skip jit_classes::
# The Rust API's examples check their own results and exit non-zero when
# one is wrong.
for example in vector_add sgemm reduction graph two_streams; do
  "${CARGO_TARGET_DIR:-target}"/release/examples/"$example"
done
