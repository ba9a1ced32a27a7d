#!/usr/bin/env bash
# Issue 25's decode sweep in one go, ON the GPU machine, from the repository root: our backends
# (kokkosattn_bench_decode, one process per impl) and the peers (benchmarks/peers_decode.py: torch
# SDPA on the gathered cache, FlashInfer and FlashAttention where importable), one run_id, merged
# into one results file plus a markdown table (OUT_JSON with .md instead of .json): per shape and
# page size, cuda's GB/s and fraction of the copy bandwidth, each peer's GB/s, cuda / best peer.
#
#   scripts/bench-decode.sh BIN_DIR OUT_JSON [RUN_ID]
#
# BIN_DIR holds kokkosattn_bench_decode and the shared libraries it needs (as for bench-gpu.sh).
# Knobs (environment): PYTHON (python with torch), SHAPE_ARGS (arguments for both sides, e.g.
# "--quick" or "--B 8,32 --S 16384"), BENCH_ARGS (ours only), PEER_ARGS (peers only),
# OURS_IMPLS (default "cuda cudnn"), PEER_IMPLS (default
# "torch-sdpa-gathered,flashinfer,flash-attn"), PEER_BUDGET_S (seconds after which the peers
# start no new configuration; default 900), BENCH_TMP (folder for the part files).
set -uo pipefail
BIN=${1:?usage: scripts/bench-decode.sh BIN_DIR OUT_JSON [RUN_ID]}
OUT=${2:?usage: scripts/bench-decode.sh BIN_DIR OUT_JSON [RUN_ID]}
RUN_ID=${3:-decode-$(date -u +%Y-%m-%dT%H%M%SZ)}
source "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
gpu_env "$BIN"
TMP=${BENCH_TMP:-$(mktemp -d)}
mkdir -p "$TMP"
echo "bench-decode: run_id $RUN_ID, python $PY, nvidia libs ${NV:-none}"

# Each impl in its own process, as each peer runs (bench-gpu.sh: cudnn timed beside cuda ran up
# to 9% slower than alone); each process measures the copy bandwidth its rows are divided by.
parts=()
for impl in ${OURS_IMPLS:-cuda cudnn}; do
  "$BIN/kokkosattn_bench_decode" --impl "$impl" --run-id "$RUN_ID" --out "$TMP/ours-$impl.json" \
    ${SHAPE_ARGS:-} ${BENCH_ARGS:-} || echo "bench-decode: --impl $impl exited $?" >&2
  parts+=("$TMP/ours-$impl.json")
done
"$PY" benchmarks/peers_decode.py --impl "${PEER_IMPLS:-torch-sdpa-gathered,flashinfer,flash-attn}" \
  --run-id "$RUN_ID" --out "$TMP/peers.json" --budget-s "${PEER_BUDGET_S:-900}" ${SHAPE_ARGS:-} \
  ${PEER_ARGS:-} || echo "bench-decode: peers_decode.py exited $?" >&2
"$PY" benchmarks/gpu/merge_results.py --run-id "$RUN_ID" --out "$OUT" \
  --markdown "${OUT%.json}.md" "${parts[@]}" "$TMP/peers.json"
