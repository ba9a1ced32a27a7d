#!/usr/bin/env bash
# The GPU checks of a CUDA build in one go, ON the GPU machine, from the repository root:
# device tests, compute-sanitizer on the small cases, the conformance runner on the GPU
# backends, and the codelab demo. Every step logs to OUT_DIR/<step>.log and the summary line of
# each goes to OUT_DIR/summary.txt; the script exits non-zero if any step failed.
#
#   scripts/gpu-check.sh BIN_DIR OUT_DIR [STEPS]
#
# BIN_DIR holds kokkosattn_gpu_tests, kokkos-attn-conformance, codelab_demo and the shared
# libraries they need (docs/cudnn.md, "Running elsewhere"); cuDNN and nvrtc come from the torch
# environment's nvidia/ wheels when it exists. STEPS (default all): comma list of tests,
# sanitizer, conformance, demo, demo-full, and for a build against a Kokkos with CUDA (issue 18)
# frontend (the front end's tests on Kokkos::Cuda), frontend-sanitizer, unit (the host unit
# tests of that build), examples (the README example, minimal_sdpa and their installed-package
# builds, when BIN_DIR has them), conformance-kokkos (every backend on Kokkos::Cuda through the
# front end). Knobs: CONFORMANCE_S (time budget per conformance run, default 60),
# CONFORMANCE_SEED / CONFORMANCE_SEED_SM80 / CONFORMANCE_SEED_KOKKOS (the runs' seeds, default
# 5 / 6 / 8: a new seed draws cases nobody has run), DEMO_ARGS (extra arguments for both demo
# runs).
set -uo pipefail
BIN=${1:?usage: scripts/gpu-check.sh BIN_DIR OUT_DIR [STEPS]}
OUT=${2:?usage: scripts/gpu-check.sh BIN_DIR OUT_DIR [STEPS]}
STEPS=${3:-tests,sanitizer,conformance,demo,demo-full}
BIN=$(cd "$BIN" && pwd)
mkdir -p "$OUT"
source "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
gpu_env "$BIN"
failed=0

# step NAME COMMAND...: runs COMMAND with its output in NAME.log, records pass/fail and seconds.
step() {
  local name=$1
  shift
  local t0=$SECONDS
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  local verdict=pass
  [ $rc -ne 0 ] && verdict="FAIL (exit $rc)" && failed=1
  echo "$name: $verdict, $((SECONDS - t0)) s: $*" | tee -a "$OUT/summary.txt"
}
want() { [[ ",$STEPS," == *",$1,"* ]]; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$OUT/gpu.txt" 2>&1

if want tests; then
  step tests "$BIN/kokkosattn_gpu_tests"
fi
if want frontend; then
  # KOKKOSATTN_LOG=1: one line per call, naming the backend and any layout copies.
  step frontend env KOKKOSATTN_LOG=1 "$BIN/kokkosattn_gpu_tests" -tc='frontend*'
fi
if want frontend-sanitizer; then
  # The layout-copy kernels (tile transposes through team scratch) and a run through them.
  step frontend-memcheck compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BIN/kokkosattn_gpu_tests" -tc='frontend*layout copies*,frontend*head dims*'
  step frontend-racecheck compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$BIN/kokkosattn_gpu_tests" -tc='frontend*layout copies*'
fi
if want unit; then
  step unit env OMP_NUM_THREADS=8 OMP_PROC_BIND=false "$BIN/kokkosattn_tests"
fi
if want examples; then
  for exe in readme_example minimal_sdpa installed-readme_example installed-minimal_sdpa; do
    [ -x "$BIN/$exe" ] && step "$exe" env KOKKOSATTN_LOG=1 "$BIN/$exe"
  done
fi
if want conformance-kokkos; then
  step conformance-kokkos "$BIN/kokkos-attn-conformance" --backend naive,portable,cuda,cudnn \
    --supported-only --time-budget "${CONFORMANCE_S:-60}" --seed "${CONFORMANCE_SEED_KOKKOS:-8}"
fi
if want sanitizer; then
  step memcheck compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BIN/kokkosattn_gpu_tests" -tc='cuda/sanitizer_smoke*'
  step racecheck compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$BIN/kokkosattn_gpu_tests" -tc='cuda/sanitizer_smoke*'
  # The Hopper kernel on its edge cases (ragged tiles, padding rows, fully masked rows).
  step memcheck-sm90 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BIN/kokkosattn_gpu_tests" -tc='cuda/sm90/varlen*,cuda/sm90/causal*'
  step racecheck-sm90 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$BIN/kokkosattn_gpu_tests" -tc='cuda/sm90/varlen*'
  # Named-barrier misuse (divergent or mismatched bar.sync) in the warp-specialised kernel
  # (~85 s on the H200).
  step synccheck-sm90 compute-sanitizer --tool synccheck --error-exitcode 9 \
    "$BIN/kokkosattn_gpu_tests" -tc='cuda/sm90/*,cuda/sanitizer_smoke*'
fi
if want conformance; then
  # The library's own kernel choice (sm90 where it serves, sm80 otherwise), then sm80 forced.
  step conformance "$BIN/kokkos-attn-conformance" --backend cuda,cudnn --supported-only \
    --time-budget "${CONFORMANCE_S:-60}" --seed "${CONFORMANCE_SEED:-5}"
  step conformance-sm80 env KOKKOSATTN_CUDA_KERNEL=sm80 "$BIN/kokkos-attn-conformance" \
    --backend cuda --supported-only --time-budget "${CONFORMANCE_S:-60}" \
    --seed "${CONFORMANCE_SEED_SM80:-6}"
fi
if want demo; then
  step demo "$BIN/codelab_demo" --out "$OUT/report" ${DEMO_ARGS:-}
fi
if want demo-full; then
  step demo-full "$BIN/codelab_demo" --full --out "$OUT/report-full" ${DEMO_ARGS:-}
fi
exit $failed
