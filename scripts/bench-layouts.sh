#!/usr/bin/env bash
# What a View's layout costs on the GPU (issue 18), in one go ON the GPU machine, from the
# repository root: kokkosattn_bench_layouts (the front end on LayoutRight and LayoutLeft Views, a
# Plan of the LayoutLeft ones, the raw-pointer path), then torch's cuDNN and flash SDPA on the
# same shapes (benchmarks/peers.py, own process), then one Markdown table.
#
#   scripts/bench-layouts.sh BIN_DIR OUT_DIR [RUN_ID]
#
# BIN_DIR: kokkosattn_bench_layouts and its libraries (scripts/device-carry.sh). Writes
# OUT_DIR/ours.json, torch.json and table.md. BENCH_ARGS: extra arguments for our tool.
set -uo pipefail
BIN=${1:?usage: scripts/bench-layouts.sh BIN_DIR OUT_DIR [RUN_ID]}
OUT=${2:?usage: scripts/bench-layouts.sh BIN_DIR OUT_DIR [RUN_ID]}
RUN_ID=${3:-layouts-$(date -u +%Y-%m-%dT%H%M%SZ)}
source "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
gpu_env "$BIN"
mkdir -p "$OUT"
"$BIN/kokkosattn_bench_layouts" --run-id "$RUN_ID" --out "$OUT/ours.json" ${BENCH_ARGS:-} ||
  echo "bench-layouts: kokkosattn_bench_layouts exited $?" >&2
"$PY" benchmarks/peers.py --family torch --impls torch-cudnn,torch-flash --exps fa,codelab \
  --t 8192 --run-id "$RUN_ID" --out "$OUT/torch.json" || echo "bench-layouts: torch exited $?" >&2
"$PY" benchmarks/gpu/layout_table.py "$OUT/ours.json" "$OUT/torch.json" | tee "$OUT/table.md"
