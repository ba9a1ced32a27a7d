#!/usr/bin/env bash
# Issue 26's CPU measurement: the distributed forward at T = 16k on P ranks x 1 OpenMP thread
# against 1 rank x P threads (the same cores, the same global problem), one JSON line per row.
#
#   scripts/bench-distributed.sh BUILD_DIR [P] [extra kokkosattn_bench_distributed args]
#
# Run inside the build root (scripts/in-root.sh). On a machine with fewer cores than P, both
# sides are oversubscribed the same way (say so next to the numbers).
set -euo pipefail
build=${1:?usage: scripts/bench-distributed.sh BUILD_DIR [P] [args]}
P=${2:-4}
shift $(( $# >= 2 ? 2 : 1 ))
bin="$build/benchmarks/kokkosattn_bench_distributed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,sm
export OMP_PROC_BIND=false
echo "# $(nproc) cores; $P ranks x 1 thread, then 1 rank x $P threads"
OMP_NUM_THREADS=1 mpiexec -n "$P" --oversubscribe "$bin" "$@"
OMP_NUM_THREADS=$P mpiexec -n 1 --oversubscribe "$bin" "$@"
