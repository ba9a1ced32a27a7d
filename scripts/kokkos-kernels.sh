#!/usr/bin/env bash
# Build and cache Kokkos Kernels from ../shared/third_party's snapshot against a Kokkos, for the
# project's own builds (a site with its own Kokkos Kernels passes KokkosKernels_ROOT instead;
# docs/building.md). Components BLAS and BATCHED, no explicit instantiations (the library's
# GEMMs instantiate in our translation units, a 20 s build), and a BLAS TPL:
#
#   scripts/kokkos-kernels.sh                      # against the build root's Kokkos, OpenBLAS
#   scripts/kokkos-kernels.sh --kokkos PREFIX      # against a Kokkos install (device-kokkos.sh's)
#   scripts/kokkos-kernels.sh ... --tpl cublas     # cuBLAS instead (a CUDA Kokkos)
#   scripts/kokkos-kernels.sh ... --print-prefix   # the prefix if cached, else exit 1
#
# Prints the install prefix on stdout (configure with -DKokkosKernels_ROOT=<prefix>); messages
# go to stderr. Cache: <deps cache>/kokkos-kernels-<tpl>-<key>, the key hashing the tarball, the
# Kokkos it was built against (its config file), the TPL and `recipe` below. Runs in the build
# root (scripts/in-root.sh), like scripts/device-kokkos.sh, whose layout this follows.
# KOKKOSATTN_KEEP_WORK=1 keeps the build directory (and its logs) of a failed build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd -P)
# shellcheck source=scripts/deps-cache.sh
source "$here/deps-cache.sh"

log() { printf '[kokkos-kernels] %s\n' "$*" >&2; }
die() { printf '[kokkos-kernels] ERROR: %s\n' "$*" >&2; exit 1; }

snapshot=$repo/../shared/third_party/kokkos-kernels-4.7.99-2fc2af19.tar.gz
recipe=3 # bump when the options below (or the root's BLAS) change

kokkos=/usr tpl=blas print_only=0 jobs=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kokkos) kokkos=${2:?}; shift 2 ;;
    --tpl) tpl=${2:?}; shift 2 ;;
    --print-prefix) print_only=1; shift ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
case "$tpl" in
  # OpenBLAS exports the Fortran names (sgemm_): the mangling is given, so that configuring
  # needs no Fortran compiler to detect it; LAPACK is not used.
  blas) tpl_opts=(-DKokkosKernels_ENABLE_TPL_BLAS=ON -DBLAS_LIBRARIES=openblas
    "-DF77_BLAS_MANGLE=(name,NAME) name ## _" -DKokkosKernels_ENABLE_TPL_LAPACK=OFF) ;;
  # cuSOLVER (found beside cuBLAS and on by default) needs cuSPARSE: neither is used.
  cublas) tpl_opts=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
    -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF) ;;
  *) die "--tpl: expected blas or cublas, got '$tpl'" ;;
esac
[[ -f $snapshot ]] || die "no Kokkos Kernels snapshot at $snapshot"
if [[ ${KOKKOSATTN_IN_ROOT:-0} == 1 ]]; then
  die "run this script on the host (it enters the build root itself)"
fi
root() { KOKKOSATTN_SKIP_SETUP=1 "$here/in-root.sh" "$@"; }

kokkos_config=$(root sh -c "ls '$kokkos'/lib*/cmake/Kokkos/KokkosConfig.cmake \
  '$kokkos'/lib/*/cmake/Kokkos/KokkosConfig.cmake 2>/dev/null | head -n1") ||
  true
[[ -n $kokkos_config ]] || die "--kokkos: no KokkosConfig.cmake under $kokkos"
key=$(printf '%s\n' "$(sha256sum "$snapshot" | cut -d' ' -f1)" \
  "$(root sha256sum "$kokkos_config" | cut -d' ' -f1)" "$tpl" "$recipe" | sha256sum | cut -c1-12)
entry=kokkos-kernels-$tpl-$key
deps_claim "$entry" "$print_only"
work=$deps_work prefix=$deps_prefix

log "building Kokkos Kernels ($tpl) against $kokkos into $prefix"
tar -xzf "$snapshot" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
rm -rf --one-file-system "$prefix"
# The compiler is Kokkos's own (nvcc_wrapper for a CUDA Kokkos), as Kokkos Kernels requires.
cxx=$(root sh -c "sed -n 's/^set(Kokkos_CXX_COMPILER \"\\(.*\\)\")$/\\1/p' '$kokkos_config' | head -n1")
opts=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 -DCMAKE_CXX_EXTENSIONS=OFF
  "-DKokkos_ROOT=$kokkos" "-DCMAKE_INSTALL_PREFIX=$prefix"
  -DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON
  -DKokkosKernels_ENABLE_COMPONENT_BATCHED=ON -DKokkosKernels_ADD_DEFAULT_ETI=OFF
  -DKokkosKernels_INST_FLOAT=OFF -DKokkosKernels_INST_DOUBLE=OFF
  -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_ENABLE_TESTS=OFF
  # A static library that shared libkokkosattn links (the device builds are shared).
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON "${tpl_opts[@]}")
[[ -z $cxx ]] || opts+=("-DCMAKE_CXX_COMPILER=$cxx")
t0=$SECONDS
(
  root cmake -S "$src" -B "$work/build" "${opts[@]}" >"$work/configure.log" 2>&1 ||
    { tail -n 40 "$work/configure.log" >&2; exit 1; }
  root cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log" >&2; exit 1; }
  root cmake --install "$work/build" >"$work/install.log" 2>&1 ||
    { tail -n 20 "$work/install.log" >&2; exit 1; }
) || die "Kokkos Kernels build failed (logs were in $work)"
{
  echo "source=$(basename "$snapshot")"
  echo "kokkos=$kokkos ($kokkos_config)"
  echo "tpl=$tpl"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) seconds=$((SECONDS - t0))"
} >"$prefix/.complete"
log "Kokkos Kernels installed in $((SECONDS - t0)) s: $prefix"
printf '%s\n' "$prefix"
