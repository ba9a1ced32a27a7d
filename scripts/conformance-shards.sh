#!/usr/bin/env bash
# Runs kokkos-attn-conformance as N processes sharing one random matrix (--shard K/N), then
# merges their results into one table and report (--merge). For machines with many cores where
# one process is bound by a single core (e.g. GPU backends whose graph builds are serialised).
#
#   scripts/conformance-shards.sh BINARY OUTDIR N [conformance args...]
#
# OUTDIR gets shard-K.log / shard-K.tsv, and from the merge summary.json, conformance.json,
# conformance.junit.xml and table.txt (the merged table, reasons and totals). Exit status: the
# merge's (0 all passed, 1 failures), or 2 when a shard itself broke (status >= 2).
# SHARD_TIMEOUT=S kills a shard still running after S seconds (its finished cases are kept).
set -u
bin=$1 out=$2 n=$3
shift 3
mkdir -p "$out"
pids=()
for ((k = 0; k < n; k++)); do
  ${SHARD_TIMEOUT:+timeout --signal=KILL "$SHARD_TIMEOUT"} "$bin" "$@" --shard "$k/$n" --json "" --junit "" --tsv "$out/shard-$k.tsv" \
    >"$out/shard-$k.log" 2>&1 &
  pids+=($!)
done
broken=0
for ((k = 0; k < n; k++)); do
  wait "${pids[$k]}"
  rc=$?
  if ((rc >= 2)); then
    echo "shard $k/$n exited with $rc (see $out/shard-$k.log)" >&2
    broken=1
  fi
done
grep -h "^FAIL\|^  case:\|^  reproduce:" "$out"/shard-*.log
files=()
for ((k = 0; k < n; k++)); do
  [[ -f $out/shard-$k.tsv ]] && files+=("$out/shard-$k.tsv")
done
"$bin" --merge "${files[@]}" --summary-json "$out/summary.json" --json "$out/conformance.json" \
  --junit "$out/conformance.junit.xml" | tee "$out/table.txt"
rc=${PIPESTATUS[0]}
((broken)) && exit 2
exit "$rc"
