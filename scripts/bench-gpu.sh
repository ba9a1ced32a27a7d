#!/usr/bin/env bash
# The GPU benchmark in one go, ON the GPU machine, from the repository root: our backends
# (kokkosattn_bench_gpu --impl cudnn,cuda) and the peers (benchmarks/peers.py: torch SDPA with
# each backend forced, then JAX in its own process), one run_id, merged into one results file
# plus a markdown table (OUT_JSON with .md instead of .json).
#
#   scripts/bench-gpu.sh BIN_DIR OUT_JSON [RUN_ID]
#
# BIN_DIR holds kokkosattn_bench_gpu and the shared libraries it needs (see docs/cudnn.md);
# cuDNN and nvrtc come from the torch environment's nvidia/ wheels. Knobs (environment):
# PYTHON (python with torch and jax), TORCH_BUDGET_S / JAX_BUDGET_S (seconds after which the
# peer starts no new shape; its remaining rows say so), BENCH_ARGS (extra arguments for
# kokkosattn_bench_gpu), OURS_IMPLS (our backends, one process each; default "cudnn cuda"),
# PEER_ARGS (extra arguments for both peers), BENCH_TMP (folder for the part files; a fresh
# temporary one by default).
set -uo pipefail
BIN=${1:?usage: scripts/bench-gpu.sh BIN_DIR OUT_JSON [RUN_ID]}
OUT=${2:?usage: scripts/bench-gpu.sh BIN_DIR OUT_JSON [RUN_ID]}
RUN_ID=${3:-gpu-$(date -u +%Y-%m-%dT%H%M%SZ)}
source "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
gpu_env "$BIN"
TMP=${BENCH_TMP:-$(mktemp -d)} # BENCH_TMP: keep the part files there
mkdir -p "$TMP"
echo "bench-gpu: run_id $RUN_ID, python $PY, nvidia libs ${NV:-none}"

# Each of our backends in its own process, as each peer runs: our cudnn timed round robin beside
# cuda ran up to 9% slower than alone (H100, session 37, docs/cudnn.md), alone within 3% of
# torch's cuDNN path on the same shapes.
for impl in ${OURS_IMPLS:-cudnn cuda}; do
  "$BIN/kokkosattn_bench_gpu" --impl "$impl" --run-id "$RUN_ID" --out "$TMP/ours-$impl.json" \
    ${BENCH_ARGS:-} || echo "bench-gpu: kokkosattn_bench_gpu --impl $impl exited $?" >&2
done
"$PY" benchmarks/peers.py --family torch --impls torch-cudnn,torch-flash,torch-efficient,torch-math \
  --run-id "$RUN_ID" --out "$TMP/torch.json" --budget-s "${TORCH_BUDGET_S:-150}" ${PEER_ARGS:-} ||
  echo "bench-gpu: torch peers exited $?" >&2
XLA_PYTHON_CLIENT_PREALLOCATE=false "$PY" benchmarks/peers.py --family jax \
  --impls jax-cudnn,jax-xla --exps fa,codelab --run-id "$RUN_ID" --out "$TMP/jax.json" \
  --budget-s "${JAX_BUDGET_S:-45}" ${PEER_ARGS:-} || echo "bench-gpu: jax peers exited $?" >&2
ours=()
for impl in ${OURS_IMPLS:-cudnn cuda}; do ours+=("$TMP/ours-$impl.json"); done
"$PY" benchmarks/gpu/merge_results.py --run-id "$RUN_ID" --out "$OUT" \
  --markdown "${OUT%.json}.md" "${ours[@]}" "$TMP/torch.json" "$TMP/jax.json"
