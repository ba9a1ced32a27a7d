#!/usr/bin/env bash
# Install test: install the build tree to a throw-away prefix, then configure
# and build examples/ as a project of its own against that prefix
# (find_package(KokkosAttn)), and run the built codelab_demo (by default in its
# --quick mode, writing its report into the temporary directory;
# KOKKOSATTN_DEMO_ARGS overrides the arguments).
#
#   scripts/install-test.sh [BUILD_DIR]     (default: build)
#
# Registered as the ctest test `install_test`; also `make install-test`.
# Exits 77 (ctest: skipped) while examples/ or the library target do not
# exist yet. Runs inside the build root (re-executes itself there if needed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd -P)
if [[ ${KOKKOSATTN_IN_ROOT:-0} != 1 ]]; then
  exec "$here/in-root.sh" "$here/install-test.sh" "$@"
fi

build=$(cd "${1:-$repo/build}" && pwd -P)
log() { printf '[install-test] %s\n' "$*"; }
skip() { log "SKIPPED: $*"; exit 77; }

[[ -f $build/CMakeCache.txt ]] || { log "FAILED: $build is not a configured build tree"; exit 1; }
[[ -f $repo/examples/CMakeLists.txt ]] || skip "examples/CMakeLists.txt does not exist yet"
[[ -f $build/KokkosAttnConfig.cmake ]] || skip "no 'kokkosattn' library target yet (core/CMakeLists.txt)"

build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
cuda_compiler=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
tmp=$(mktemp -d /tmp/kokkosattn-install-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

log "installing $build to $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }

if grep -rlI -e "$repo" "$tmp/prefix/lib"*/cmake 2>/dev/null; then
  log "WARNING: installed CMake files above mention the source/build tree ($repo); not relocatable"
fi

log "configuring examples/ standalone against the installed package"
args=(-S "$repo/examples" -B "$tmp/build" -G Ninja
  "-DCMAKE_PREFIX_PATH=$tmp/prefix" "-DCMAKE_BUILD_TYPE=${build_type:-RelWithDebInfo}")
[[ -n $cuda_compiler && $cuda_compiler != *NOTFOUND ]] && args+=("-DCMAKE_CUDA_COMPILER=$cuda_compiler")
cmake "${args[@]}"
grep -q '^KokkosAttn_DIR:PATH='"$tmp/prefix" "$tmp/build/CMakeCache.txt" || {
  log "FAILED: examples/ did not use the installed KokkosAttn (is find_package(KokkosAttn) in examples/CMakeLists.txt?)"
  exit 1
}
log "building examples/"
cmake --build "$tmp/build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

demo=$(find "$tmp/build" -type f -name codelab_demo -perm -u+x | head -n1)
[[ -n $demo ]] || { log "FAILED: codelab_demo was not built"; exit 1; }
demo_args=${KOKKOSATTN_DEMO_ARGS:---quick --out $tmp/demo-report}
log "running $(basename "$demo") $demo_args"
# shellcheck disable=SC2086
"$demo" $demo_args
log "PASSED"
