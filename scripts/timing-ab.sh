#!/usr/bin/env bash
# Interleaved A/B of two builds of our CUDA kernels, ON the GPU machine: kokkosattn_cuda_timing
# (the kernels' framework-free entry, CUDA events, median of 30 after 3 warm-ups) of build A and
# build B, each directory holding its own kokkosattn_cuda_timing and libkokkosattn.so (the
# binary must pair with its library). ABBA order over ROUNDS rounds (default 4), a fresh process
# per run; FAMILY=sm80|sm90 forces a kernel family (default: the library's choice).
#
#   scripts/timing-ab.sh A_DIR B_DIR OUT_DIR [ROUNDS]
#   python3 cuda/tools/timing_ab_table.py OUT_DIR --a a --b b      # the table (B ms / A ms)
#
# Extra flags for the timing tool: TIMING_ARGS (default: the FA sweep at T 512..16384, H 64,
# 128, 256). Used for benchmarks/results/h200-2026-12-01-kernel-contract-ab.md.
set -uo pipefail
a=$(cd "${1:?usage: scripts/timing-ab.sh A_DIR B_DIR OUT_DIR [ROUNDS]}" && pwd)
b=$(cd "${2:?usage: scripts/timing-ab.sh A_DIR B_DIR OUT_DIR [ROUNDS]}" && pwd)
out=${3:?usage: scripts/timing-ab.sh A_DIR B_DIR OUT_DIR [ROUNDS]}
rounds=${4:-4}
mkdir -p "$out"
source "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
# Both directories on the path after the run's own: a build without the shared Kokkos/CUDA
# libraries beside it (an A/A of one copied binary, an old build) finds them in the other.
gpu_env "$b:$a"
base=$LD_LIBRARY_PATH
read -r -a args <<<"${TIMING_ARGS:---repeats 30 --T 512,1024,2048,4096,8192,16384 --H 64,128,256}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv \
  >"$out/gpu.txt" 2>&1
run() { # NAME DIR ROUND
  env ${FAMILY:+KOKKOSATTN_CUDA_KERNEL=$FAMILY} LD_LIBRARY_PATH="$2:$base" \
    "$2/kokkosattn_cuda_timing" "${args[@]}" >"$out/$1$3.txt" 2>&1
  echo "$1$3: exit $? $(date +%T)" >>"$out/ab-order.txt"
}
for ((r = 1; r <= rounds; ++r)); do
  if ((r % 2 == 1)); then run a "$a" $r; run b "$b" $r; else run b "$b" $r; run a "$a" $r; fi
done
