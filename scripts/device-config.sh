#!/usr/bin/env bash
# Build this project against a device-enabled Kokkos, the way a user with their own Kokkos does:
# plain CMake, Kokkos_ROOT and Kokkos' compiler (docs/building.md "Against your own Kokkos"), no
# presets, no Makefile. The Kokkos comes from scripts/device-kokkos.sh (built from
# ../shared/third_party, cached); the toolchain is the build root's.
#
#   scripts/device-config.sh cuda   Kokkos CUDA+OpenMP+Serial (sm_90): library, tests, examples,
#                                   then the install test (examples/ against the installed
#                                   package; run only where a GPU is present)
#   scripts/device-config.sh hip    Kokkos HIP+Serial (gfx90a): library, front end and examples
#                                   compiled with hipcc (compile only: no AMD GPU here)
#
# Build trees: build-kokkos-cuda, build-kokkos-hip (KOKKOSATTN_DEVICE_BUILD_PREFIX changes the
# prefix). Exits 0 with a SKIPPED line when the Kokkos sources are not beside the repository.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd -P)
log() { printf '[device-config] %s\n' "$*" >&2; }
die() { printf '[device-config] ERROR: %s\n' "$*" >&2; exit 1; }

backend=${1:-}
[[ $backend == cuda || $backend == hip ]] || die "usage: scripts/device-config.sh cuda|hip"
if [[ -z ${KOKKOSATTN_KOKKOS_SOURCE:-} && ! -f $repo/../shared/third_party/kokkos-4.6.99-28848dfa.tar.gz ]]; then
  log "SKIPPED: no Kokkos sources at ../shared/third_party (set KOKKOSATTN_KOKKOS_SOURCE)"
  exit 0
fi
if [[ $backend == cuda && ! -x /usr/local/cuda/bin/nvcc ]]; then
  log "SKIPPED: no CUDA toolkit at /usr/local/cuda (the root uses the host's)"
  exit 0
fi
build=${KOKKOSATTN_DEVICE_BUILD_PREFIX:-$repo/build-kokkos}-$backend
jobs=${JOBS:-2}
in_root() { KOKKOSATTN_SKIP_SETUP=1 "$here/in-root.sh" "$@"; }
source "$here/deps-cache.sh"

t0=$SECONDS
kokkos=$("$here/device-kokkos.sh" --backend "$backend")
t_kokkos=$((SECONDS - t0))

# Shared libraries, as Spack and most sites build them (and small binaries to carry).
args=(-S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON
  "-DKokkos_ROOT=$kokkos")
if [[ $backend == cuda ]]; then
  fe=$("$here/fetch-cudnn-frontend.sh")
  # naive's GEMMs on cuBLAS through Kokkos Kernels (the codelab's unfused baseline on the GPU).
  kk=$("$here/kokkos-kernels.sh" --kokkos "$kokkos" --tpl cublas --jobs "$jobs")
  args+=("-DCMAKE_CXX_COMPILER=$kokkos/bin/nvcc_wrapper" "-DKokkosAttn_CUDNN_FRONTEND_DIR=$fe"
    -DKokkosAttn_ENABLE_KOKKOSKERNELS=ON "-DKokkosKernels_ROOT=$kk")
  env=()
else
  args+=(-DCMAKE_CXX_COMPILER=hipcc -DKokkosAttn_ENABLE_TESTS=OFF)
  env=(HIP_PLATFORM=amd)
fi

mkdir -p "$build"
# CMake keeps a cached Kokkos_DIR whatever Kokkos_ROOT says: start afresh when it is another's.
if [[ -f $build/CMakeCache.txt ]] && ! deps_check_configured "$build" "$kokkos" 2>/dev/null; then
  log "$build was configured against another Kokkos: removing its CMakeCache.txt"
  rm -f "$build/CMakeCache.txt"
fi
log "configuring $build against $kokkos"
in_root env "${env[@]}" cmake "${args[@]}" >"$build/device-config-configure.log" 2>&1 ||
  { tail -n 40 "$build/device-config-configure.log" >&2; die "configure failed (log: $build/device-config-configure.log)"; }
if [[ $backend == cuda ]]; then
  expect=(KokkosAttn_ENABLE_CUDA=ON KokkosAttn_ENABLE_TPL_CUDNN=ON KokkosAttn_ENABLE_KOKKOSKERNELS=ON)
else expect=(KokkosAttn_ENABLE_HIP=ON); fi
deps_check_configured "$build" "$kokkos" "${expect[@]}" || die "configured against the wrong Kokkos"
log "building ($jobs jobs)"
t1=$SECONDS
in_root env "${env[@]}" cmake --build "$build" -j "$jobs" ||
  die "build failed"
t_build=$((SECONDS - t1))

t_install=0
if [[ $backend == cuda ]]; then
  t2=$SECONDS
  # The examples link a CUDA Kokkos: they run only where a GPU is (the test binaries likewise).
  if [[ -e /dev/nvidia0 ]]; then run=1; else run=0; fi
  KOKKOSATTN_INSTALL_TEST_RUN=$run "$here/install-test.sh" "$build"
  t_install=$((SECONDS - t2))
fi
log "$backend configuration OK: Kokkos ${t_kokkos} s (0 when cached), build ${t_build} s," \
  "install test ${t_install} s"
