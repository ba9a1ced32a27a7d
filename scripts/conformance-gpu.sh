#!/usr/bin/env bash
# The GPU conformance run of issue 20, ON the GPU machine: the random matrix drawn in the gpu mix
# (--mix gpu: bf16/f16, head dims 64/128/256, what the GPU kernels serve) on cuda (the library's
# kernel choice: sm90 on Hopper) with cudnn, and on cuda with sm80 forced, SHARDS processes each,
# both sets at once (the f64 reference on the host is the bound, one core per process).
#
#   scripts/conformance-gpu.sh BIN_DIR OUT_DIR [SEED]
#
# BIN_DIR as for scripts/gpu-check.sh. SEED (default 20261207) seeds the first set, SEED + 1 the
# second, and so on.
# Knobs: SHARDS (8 per set), CASES (counted cases per set, 12000), BUDGET (seconds of random
# cases per shard, 450). OUT_DIR/{cuda-cudnn,sm80}/ get the shard logs and the merged table.txt,
# summary.json, conformance.json. Exit status: the worse of the two merges (0: no failure).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(cd "${1:?usage: scripts/conformance-gpu.sh BIN_DIR OUT_DIR [SEED]}" && pwd)
out=${2:?usage: scripts/conformance-gpu.sh BIN_DIR OUT_DIR [SEED]}
seed=${3:-20261207}
shards=${SHARDS:-8} cases=${CASES:-12000} budget=${BUDGET:-450}
source "$here/gpu-env.sh"
gpu_env "$bin"
mkdir -p "$out"
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
common=(--supported-only --mix gpu --cases "$cases" --time-budget "$budget")
run_set() { # NAME SEED ENV_ASSIGNMENT CONFORMANCE_ARGS...
  local name=$1 s=$2 e=$3
  shift 3
  env "$e" SHARD_TIMEOUT=$((budget + 90)) "$here/conformance-shards.sh" \
    "$bin/kokkos-attn-conformance" "$out/$name" "$shards" --seed "$s" "${common[@]}" "$@" \
    >"$out/$name.log" 2>&1
}
# Sets (SETS, default "cuda-cudnn sm80"): cuda-cudnn (the library's cuda kernel choice beside
# cudnn; a case counts when either serves it), sm80 (cuda, sm80 forced), sm90 (cuda alone, the
# library's choice: sm90 on Hopper; cuda-cudnn also counts cases only cudnn serves).
status=0
pids=()
names=()
k=0
for name in ${SETS:-cuda-cudnn sm80}; do
  case $name in
  cuda-cudnn) run_set "$name" $((seed + k)) KOKKOSATTN_CUDA_KERNEL= --backend cuda,cudnn & ;;
  sm80) run_set "$name" $((seed + k)) KOKKOSATTN_CUDA_KERNEL=sm80 --backend cuda & ;;
  sm90) run_set "$name" $((seed + k)) KOKKOSATTN_CUDA_KERNEL= --backend cuda & ;;
  *) echo "conformance-gpu.sh: unknown set $name" >&2; exit 2 ;;
  esac
  pids+=($!)
  names+=("$name")
  k=$((k + 1))
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  rc=$?
  ((rc > status)) && status=$rc
  echo "== ${names[$i]} (seed $((seed + i)), exit $rc)"
  grep -A3 "^feature" "$out/${names[$i]}/table.txt"
  grep "cases, .* results" "$out/${names[$i]}/table.txt"
done
exit $status
