#!/usr/bin/env bash
# One line per kernel of the given objects: a hash of its SASS instructions (names, addresses and
# comments dropped) and its instruction count. Two builds whose digests match run the same
# machine code, so a refactor of kernel code that keeps them equal cannot change its speed:
#
#   scripts/sass-digest.sh build-a/cuda/.../*.cu.o > a.txt
#   scripts/sass-digest.sh build-b/cuda/.../*.cu.o > b.txt && diff a.txt b.txt
#
# Lines are sorted (template arguments, and so symbol names and their order, may change). Needs
# cuobjdump/nvdisasm from scripts/fetch-sass-tools.sh; no GPU.
set -euo pipefail
tools=$("$(dirname "${BASH_SOURCE[0]}")/fetch-sass-tools.sh" --cached) ||
  { echo "sass-digest: cuobjdump/nvdisasm not fetched (scripts/fetch-sass-tools.sh)" >&2; exit 2; }
for obj in "$@"; do
  NVDISASM_PATH=$tools "$tools/cuobjdump" -sass "$obj" | awk -v obj="$(basename "$obj")" '
    function flush() { if (n) { printf "%d %s\n", n, body } ; body = ""; n = 0 }
    /Function : / { flush(); next }
    /^[ \t]+\/\*[0-9a-f]+\*\/ / {
      line = $0
      sub(/^[ \t]+\/\*[0-9a-f]+\*\/[ \t]*/, "", line) # the address
      sub(/[ \t]*\/\*.*$/, "", line)               # the encoding comment
      sub(/;[ \t]*$/, "", line)
      body = body "|" line; n++
    }
    END { flush() }' | while read -r count body; do
    printf '%s %6d\n' "$(printf '%s' "$body" | sha256sum | cut -c1-16)" "$count"
  done
done | sort
