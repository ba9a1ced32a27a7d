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
# sanitizer, conformance, demo, demo-full. Knobs: CONFORMANCE_S (time budget per conformance
# run, default 60), DEMO_ARGS (extra arguments for both demo runs).
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
    --time-budget "${CONFORMANCE_S:-60}" --seed 5
  step conformance-sm80 env KOKKOSATTN_CUDA_KERNEL=sm80 "$BIN/kokkos-attn-conformance" \
    --backend cuda --supported-only --time-budget "${CONFORMANCE_S:-60}" --seed 6
fi
if want demo; then
  step demo "$BIN/codelab_demo" --out "$OUT/report" ${DEMO_ARGS:-}
fi
if want demo-full; then
  step demo-full "$BIN/codelab_demo" --full --out "$OUT/report-full" ${DEMO_ARGS:-}
fi
exit $failed
