#!/usr/bin/env bash
# Interleaved A/B of two builds' CPU benchmarks (kokkosattn_bench_cpu, built with
# -DKokkosAttn_ENABLE_BENCHMARKS=ON): ROUNDS rounds (default 8) of A then B, a fresh process per
# run, over the benchmarks FILTER selects (Google Benchmark's --benchmark_filter regex). Prints,
# per benchmark, both medians and the median, min and max of the per-round ratio A / B (rounds
# pair runs that sat next to each other, so a machine's drift cancels). Runs in the build root.
#
#   scripts/bench-cpu-ab.sh A_BIN B_BIN FILTER [ROUNDS]
#   scripts/bench-cpu-ab.sh build-bench/benchmarks/kokkosattn_bench_cpu \
#       /tmp/old/kokkosattn_bench_cpu 'backward/portable/T:1024'
#
# Threads: OMP_NUM_THREADS (default 2, this project's CI machine), bound as `make bench` binds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ ${KOKKOSATTN_IN_ROOT:-0} != 1 ]]; then
  exec "$here/in-root.sh" "$here/bench-cpu-ab.sh" "$@"
fi
[[ $# -ge 3 ]] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
a=$1 b=$2 filter=$3 rounds=${4:-8}
for bin in "$a" "$b"; do
  [[ -x $bin ]] || { echo "bench-cpu-ab: not an executable: $bin" >&2; exit 2; }
done

run() { # BIN LABEL: one line per benchmark, "LABEL name real_time"
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=spread OMP_PLACES=threads "$1" \
    --benchmark_filter="$filter" --benchmark_format=csv 2>/dev/null |
    awk -F, -v label="$2" '$1 ~ /^"/ && $1 != "\"name\"" { print label, $1, $3 }'
}
results=$(for ((r = 0; r < rounds; r++)); do run "$a" A; run "$b" B; done)
[[ -n $results ]] || { echo "bench-cpu-ab: no benchmark matched '$filter'" >&2; exit 1; }
python3 - "$rounds" <<EOF
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in """$results""".splitlines():
    label, name, ms = line.split()
    runs[(name.strip('"'), label)].append(float(ms))
print(f"{'benchmark':60} {'A ms':>9} {'B ms':>9} {'A/B':>6} (min-max over {sys.argv[1]} rounds)")
for name in sorted({n for n, _ in runs}):
    a, b = runs[(name, "A")], runs[(name, "B")]
    r = [x / y for x, y in zip(a, b)]
    print(f"{name:60} {statistics.median(a):9.2f} {statistics.median(b):9.2f} "
          f"{statistics.median(r):6.3f} ({min(r):.3f}-{max(r):.3f})")
EOF
