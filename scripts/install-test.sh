#!/usr/bin/env bash
# Install test: install the build tree to a throw-away prefix, then configure
# and build examples/ as a project of its own against that prefix
# (find_package(KokkosAttn)), and run the built codelab_demo (by default in its
# --quick mode, writing its report into the temporary directory;
# KOKKOSATTN_DEMO_ARGS overrides the arguments; KOKKOSATTN_INSTALL_TEST_RUN=0 builds without
# running, for builds against a CUDA Kokkos on a machine without a GPU;
# KOKKOSATTN_INSTALL_TEST_KEEP=DIR keeps the installed library and the examples built against it
# there, e.g. to run them on a GPU machine). The consumer is
# configured with the build's C++ compiler (nvcc_wrapper for a CUDA Kokkos) and its Kokkos.
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
cxx_compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
kokkos_dir=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
kk_dir=$(sed -n 's/^KokkosKernels_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
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
[[ -n $cxx_compiler ]] && args+=("-DCMAKE_CXX_COMPILER=$cxx_compiler")
[[ -n $kokkos_dir && $kokkos_dir != *NOTFOUND ]] && args+=("-DKokkos_DIR=$kokkos_dir")
# A library built with Kokkos Kernels: its package config finds it again (as a user's would).
[[ -n $kk_dir && $kk_dir != *NOTFOUND ]] && args+=("-DKokkosKernels_DIR=$kk_dir")
[[ -n $cuda_compiler && $cuda_compiler != *NOTFOUND ]] && args+=("-DCMAKE_CUDA_COMPILER=$cuda_compiler")
# Built with the MPI component: find_package(KokkosAttn COMPONENTS MPI) must find it.
grep -q 'set(KokkosAttn_HAVE_MPI ON)' "$build/KokkosAttnConfig.cmake" &&
  args+=(-DKOKKOSATTN_EXAMPLES_REQUIRE_MPI=ON)
# Built with the Fortran module: find_package(KokkosAttn COMPONENTS Fortran) must find it.
fortran_compiler=$(sed -n 's/^CMAKE_Fortran_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
with_fortran=0
if [[ -n $fortran_compiler && $fortran_compiler != *NOTFOUND ]] &&
  grep -q '^KokkosAttn_ENABLE_FORTRAN:BOOL=ON' "$build/CMakeCache.txt"; then
  with_fortran=1
  args+=("-DCMAKE_Fortran_COMPILER=$fortran_compiler" -DKOKKOSATTN_EXAMPLES_REQUIRE_FORTRAN=ON)
fi
cmake "${args[@]}"
grep -q '^KokkosAttn_DIR:PATH='"$tmp/prefix" "$tmp/build/CMakeCache.txt" || {
  log "FAILED: examples/ did not use the installed KokkosAttn (is find_package(KokkosAttn) in examples/CMakeLists.txt?)"
  exit 1
}
log "building examples/"
cmake --build "$tmp/build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

demo=$(find "$tmp/build" -type f -name codelab_demo -perm -u+x | head -n1)
[[ -n $demo ]] || { log "FAILED: codelab_demo was not built"; exit 1; }
if [[ -n ${KOKKOSATTN_INSTALL_TEST_KEEP:-} ]]; then
  keep=$KOKKOSATTN_INSTALL_TEST_KEEP
  mkdir -p "$keep"
  cp -a "$tmp/prefix/lib"*/libkokkosattn* "$keep/" 2>/dev/null || true
  for exe in minimal_sdpa readme_example codelab_demo attention_c surrogate_layer; do
    [[ -x $tmp/build/$exe ]] && cp "$tmp/build/$exe" "$keep/installed-$exe"
  done
  log "kept the installed library and examples in $keep"
fi
if [[ ${KOKKOSATTN_INSTALL_TEST_RUN:-1} == 0 ]]; then
  log "PASSED (built only; not run: KOKKOSATTN_INSTALL_TEST_RUN=0, e.g. a CUDA Kokkos and no GPU)"
  exit 0
fi
# The C API's example, built from C against the installed kokkosattn.h and KokkosAttn::c_api.
if [[ -x $tmp/build/attention_c ]]; then
  log "running attention_c"
  "$tmp/build/attention_c"
else
  log "FAILED: attention_c (the C API's example) was not built"
  exit 1
fi
# The Fortran module's example, against the installed module and KokkosAttn::kokkosattn_fortran.
if ((with_fortran)); then
  if [[ -x $tmp/build/surrogate_layer ]]; then
    log "running surrogate_layer"
    "$tmp/build/surrogate_layer"
  else
    log "FAILED: surrogate_layer (the Fortran module's example) was not built"
    exit 1
  fi
fi
demo_args=${KOKKOSATTN_DEMO_ARGS:---quick --out $tmp/demo-report}
log "running $(basename "$demo") $demo_args"
# shellcheck disable=SC2086
"$demo" $demo_args
log "PASSED"
