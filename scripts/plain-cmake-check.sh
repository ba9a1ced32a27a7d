#!/usr/bin/env bash
# A user's build against their own CUDA Kokkos, without this project's build root, presets,
# Makefile or scripts in the build itself: a Kokkos (CUDA + OpenMP + Serial, sm_90) built with
# this machine's own compilers (scripts/device-kokkos.sh --host, cached), then exactly the
# commands of docs/building.md, "The plain way": configure with Kokkos' nvcc_wrapper and
# Kokkos_ROOT, build the library and the examples, install, and build examples/ as a project of
# its own against the installed package. Compile only: nothing runs without a GPU.
#
#   scripts/plain-cmake-check.sh        (build tree: build-plain-cuda; KOKKOSATTN_PLAIN_BUILD)
#
# Needs g++, CMake >= 3.25 and the CUDA toolkit on this machine (not in the root). Exits 0 with a
# SKIPPED line when the Kokkos sources are not beside the repository.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd -P)
log() { printf '[plain-cmake] %s\n' "$*" >&2; }
die() { printf '[plain-cmake] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -z ${KOKKOSATTN_KOKKOS_SOURCE:-} && ! -f $repo/../shared/third_party/kokkos-4.6.99-28848dfa.tar.gz ]]; then
  log "SKIPPED: no Kokkos sources at ../shared/third_party (set KOKKOSATTN_KOKKOS_SOURCE)"
  exit 0
fi
if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  log "SKIPPED: no CUDA toolkit at /usr/local/cuda"
  exit 0
fi
for tool in g++ cmake /usr/local/cuda/bin/nvcc; do
  command -v "$tool" >/dev/null || die "$tool not found on this machine"
done
build=${KOKKOSATTN_PLAIN_BUILD:-$repo/build-plain-cuda}
# CUDA C++20 needs CMake >= 3.25.2 (Debian 12 has 3.25.1): then CMake from PyPI, cached, as a
# user would `pip install cmake`.
# shellcheck source=scripts/deps-cache.sh
source "$here/deps-cache.sh"
have=$(cmake --version | sed -n '1s/cmake version //p')
if ! printf '%s\n%s\n' 3.25.2 "$have" | sort -V -C; then
  if ! cm=$(deps_find cmake-pip-3.31); then
    cm=$(deps_writable_cache)/cmake-pip-3.31
    log "CMake $have is older than 3.25.2: installing cmake 3.31 from PyPI into $cm"
    rm -rf "$cm"
    python3 -m pip install --quiet --target "$cm" 'cmake>=3.31,<3.32' >&2 ||
      die "pip install cmake failed"
    touch "$cm/.complete"
  fi
  export PATH=$cm/bin:$PATH PYTHONPATH=$cm${PYTHONPATH:+:$PYTHONPATH}
fi
jobs=${JOBS:-2}
export PATH=/usr/local/cuda/bin:$PATH
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

t0=$SECONDS
kokkos=$("$here/device-kokkos.sh" --backend cuda --host)
fe=$("$here/fetch-cudnn-frontend.sh")
t_kokkos=$((SECONDS - t0))

log "configuring $build against $kokkos ($(g++ -dumpfullversion), $(cmake --version | head -n1))"
t1=$SECONDS
mkdir -p "$build"
cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DKokkos_ROOT="$kokkos" -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" \
  -DKokkosAttn_CUDNN_FRONTEND_DIR="$fe" -DKokkosAttn_ENABLE_TESTS=OFF \
  -DKokkosAttn_ENABLE_EXAMPLES=ON >"$build/plain-configure.log" 2>&1 ||
  { tail -n 40 "$build/plain-configure.log" >&2; die "configure failed"; }
deps_check_configured "$build" "$kokkos" KokkosAttn_ENABLE_CUDA=ON KokkosAttn_ENABLE_TPL_CUDNN=ON ||
  die "configured against the wrong Kokkos"
cmake --build "$build" -j "$jobs" || die "build failed"
prefix=$build/install-prefix
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null || die "install failed"
cmake -S "$repo/examples" -B "$build/consumer" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DKokkos_ROOT="$kokkos" \
  -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" >"$build/consumer-configure.log" 2>&1 ||
  { tail -n 40 "$build/consumer-configure.log" >&2; die "consumer configure failed"; }
cmake --build "$build/consumer" -j "$jobs" || die "consumer build failed"
log "OK: Kokkos ${t_kokkos} s (0 when cached), library + examples + installed consumer" \
  "$((SECONDS - t1)) s"
