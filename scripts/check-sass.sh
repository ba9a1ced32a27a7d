#!/usr/bin/env bash
# Reads the SASS of compiled sm90 kernel objects (cuobjdump/nvdisasm from
# scripts/fetch-sass-tools.sh) and fails when a kernel has no HGMMA (the wgmma tensor-core
# GEMMs) or touches local memory (STL/LDL: register spills or a stack frame), the two things
# `nvcc -Xptxas -v` was checked for by hand before. No GPU needed; CTest `sm90_sass_check`.
# Exit 77 (skipped) when the tools have not been fetched.
#
#   scripts/check-sass.sh [--expect N] OBJECT...
#
# Objects without device code (host-side translation units of the family) are listed and
# skipped; --expect N fails unless exactly N kernels were read.
set -uo pipefail
expect=
if [[ ${1:-} == --expect ]]; then
  expect=$2
  shift 2
fi
if ! tools=$("$(dirname "${BASH_SOURCE[0]}")/fetch-sass-tools.sh" --cached); then
  echo "SKIPPED: cuobjdump/nvdisasm not fetched (run scripts/fetch-sass-tools.sh on the host)"
  exit 77
fi
failed=0
total=0
for obj in "$@"; do
  sass=$(NVDISASM_PATH=$tools "$tools/cuobjdump" -sass "$obj" 2>&1) || {
    echo "FAIL $obj: cuobjdump: $sass"
    failed=1
    continue
  }
  kernels=$(grep -c 'Function : ' <<<"$sass")
  hgmma=$(grep -c 'HGMMA' <<<"$sass")
  local_mem=$(grep -cE '\b(STL|LDL)(\.|\s)' <<<"$sass")
  name=$(basename "$obj")
  total=$((total + kernels))
  if ((kernels == 0)); then
    echo "--   $name: no kernels"
  elif ((hgmma == 0 || local_mem > 0)); then
    echo "FAIL $name: $kernels kernel(s), $hgmma HGMMA, $local_mem local-memory instructions"
    failed=1
  else
    echo "ok   $name: $kernels kernel(s), $hgmma HGMMA, no local memory"
  fi
done
if [[ -n $expect && $total -ne $expect ]]; then
  echo "FAIL: $total kernels read, $expect expected"
  failed=1
fi
exit $failed
