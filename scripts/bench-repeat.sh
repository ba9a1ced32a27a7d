#!/usr/bin/env bash
# Repeated one-process runs of kokkosattn_bench_gpu (cudnn and cuda interleaved per repetition
# inside each run), ON the GPU machine, from the repository root, and the cuda/cudnn ratio per
# shape over the runs (benchmarks/gpu/ratio_summary.py): median, min and max separate a margin
# from run-to-run noise. Default shapes: the resolve line of the cuda kernels (head dim 128,
# T = S = 4096, 8192, 16384).
#
#   scripts/bench-repeat.sh BIN_DIR OUT_DIR [RUNS] [kokkosattn_bench_gpu arguments...]
#
# BIN_DIR as for scripts/bench-gpu.sh. Writes OUT_DIR/run-<i>.json, run-<i>.log, summary.md.
set -uo pipefail
BIN=${1:?usage: scripts/bench-repeat.sh BIN_DIR OUT_DIR [RUNS] [bench args...]}
OUT=${2:?usage: scripts/bench-repeat.sh BIN_DIR OUT_DIR [RUNS] [bench args...]}
RUNS=${3:-7}
shift $(($# < 3 ? $# : 3))
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--exp fa --h 128 --t 4096,8192,16384)
BIN=$(cd "$BIN" && pwd)
source "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
gpu_env "$BIN"
mkdir -p "$OUT"
files=()
for i in $(seq 1 "$RUNS"); do
  "$BIN/kokkosattn_bench_gpu" --impl cudnn,cuda --run-id "repeat-$i" --out "$OUT/run-$i.json" \
    "${ARGS[@]}" >"$OUT/run-$i.log" 2>&1 || echo "bench-repeat: run $i exited $?" >&2
  [ -s "$OUT/run-$i.json" ] && files+=("$OUT/run-$i.json")
done
[ ${#files[@]} -gt 0 ] || { echo "bench-repeat: no run wrote results" >&2; exit 1; }
python3 benchmarks/gpu/ratio_summary.py --out "$OUT/summary.md" "${files[@]}"
