#!/usr/bin/env bash
# A variant of libkokkosattn.so for an A/B run on the GPU machine: some translation units of a
# build tree recompiled with a directory of replacement headers first on the include path (and
# extra flags), then the library relinked with the build's own link command. The build tree is not
# touched; the variant goes to DEST/libkokkosattn.so beside the new objects and the ptxas report.
#
#   scripts/variant-lib.sh BUILD_DIR DEST INCLUDE_DIR [-DNAME=VALUE ...] -- SOURCE...
#
# SOURCE: paths of the sources to recompile relative to the repository (e.g.
# backends/portable/portable_run_cuda.cpp, cuda/sm80/inst/fwd_f32_h128.cu). INCLUDE_DIR holds the
# replacement headers under the names the sources include them by (portable/..., sm80/...): a
# quoted include finds it before the repository's copy (the including file's own directory has no
# such subdirectory). Carry DEST beside the main library (scripts/device-carry.sh, then
# LD_LIBRARY_PATH=DEST first). Commands come from `ninja -t commands kokkosattn`; they run in the
# build root like the build (scripts/in-root.sh). VARIANT_SOURCE_ROOT=DIR compiles each SOURCE
# from DIR instead (a `git worktree` of a base commit: headers next to the source come from there
# too), for the library before a change beside the build of after it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd -P)
die() { printf '[variant-lib] ERROR: %s\n' "$*" >&2; exit 1; }
usage="usage: scripts/variant-lib.sh BUILD_DIR DEST INCLUDE_DIR [-DNAME=VALUE ...] -- SOURCE..."
[[ $# -ge 5 ]] || die "$usage"
build=$(cd "$1" && pwd -P) || die "no build tree at $1"
mkdir -p "$2"
dest=$(cd "$2" && pwd -P)
inc=$(cd "$3" && pwd -P) || die "no include directory at $3"
shift 3
defs=()
while [[ $# -gt 0 && $1 != -- ]]; do defs+=("$1"); shift; done
[[ ${1:-} == -- ]] || die "$usage"
shift
[[ $# -gt 0 ]] || die "$usage"
in_root() { KOKKOSATTN_SKIP_SETUP=1 "$here/in-root.sh" "$@"; }

commands=$(cd "$build" && ninja -t commands kokkosattn)
link=$(tail -n 1 <<<"$commands")
[[ $link == *"-o core/libkokkosattn.so "* ]] || die "the last command of kokkosattn is not its link"
: >"$dest/ptxas.txt"
for src in "$@"; do
  cmd=$(grep -F -- " -c $repo/$src " <<<"$commands" || grep -F -- " -c $repo/$src" <<<"$commands" ||
    true)
  [[ -n $cmd && $(wc -l <<<"$cmd") -eq 1 ]] || die "no single compile command for $src"
  obj=$(sed -E 's/.* -o ([^ ]+)( .*)?$/\1/' <<<"$cmd")
  [[ $obj == *.o ]] || die "no object file in the compile command of $src"
  new="$dest/$(basename "$obj")"
  rm -f "$new"
  # The replacement headers first, the dependency file dropped, the object into DEST.
  cmd=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//' <<<"$cmd")
  cmd=${cmd/ -I/ -I$inc ${defs[*]} -Xptxas=-v -I}
  cmd=${cmd/ -o $obj/ -o $new}
  if [[ -n ${VARIANT_SOURCE_ROOT:-} ]]; then
    cmd=${cmd/ -c $repo\/$src/ -c $VARIANT_SOURCE_ROOT/$src}
  fi
  printf '[variant-lib] %s\n' "$src" >&2
  in_root bash -c "cd '$build' && $cmd" 2>&1 | grep -E 'Compiling entry|registers|spill' \
    >>"$dest/ptxas.txt" || true
  [[ -s $new ]] || die "compiling $src failed"
  link=${link// $obj / $new }
done
link=${link/ -o core\/libkokkosattn.so / -o $dest\/libkokkosattn.so }
link=$(sed -E 's/ -Wl,--dependency-file=[^ ]+//' <<<"$link")
in_root bash -c "cd '$build' && ${link#: && }"
printf '[variant-lib] %s (ptxas report: %s)\n' "$dest/libkokkosattn.so" "$dest/ptxas.txt" >&2
