#!/usr/bin/env bash
# Build and cache a device-enabled Kokkos from a source tarball, for the project's own tests and
# CI (a site with its own Kokkos, from Spack or a module, never needs this; docs/building.md).
#
#   scripts/device-kokkos.sh --backend cuda            # CUDA + OpenMP + Serial, Kokkos_ARCH_HOPPER90
#   scripts/device-kokkos.sh --backend cuda --arch AMPERE80
#   scripts/device-kokkos.sh --backend hip             # HIP + Serial, Kokkos_ARCH_AMD_GFX90A
#   scripts/device-kokkos.sh --backend hip --arch AMD_GFX942
#   scripts/device-kokkos.sh ... --source kokkos.tar.gz [--patch F.patch | --no-patch]
#   scripts/device-kokkos.sh ... --print-prefix       # the prefix if cached, else exit 1
#   scripts/device-kokkos.sh --backend cuda --host     # with the host's toolchain, not the root's
#
# Prints the install prefix on stdout (configure with -DKokkos_ROOT=<prefix>; for CUDA also
# -DCMAKE_CXX_COMPILER=<prefix>/bin/nvcc_wrapper, for HIP -DCMAKE_CXX_COMPILER=hipcc); all
# messages go to stderr. Kokkos allows one GPU architecture per build, hence --arch.
#
# Source: --source, else $KOKKOSATTN_KOKKOS_SOURCE, else ../shared/third_party's Kokkos snapshot
# beside the repository. A tarball whose sha256 is that snapshot's gets its CUDA 13 patch (the
# snapshot's README says why) unless --patch/--no-patch says otherwise.
#
# Cache: <deps cache>/kokkos-<backend>-<arch>[-host]-<key>, where the key hashes the tarball, the
# patch, the compiler's version and `recipe` below (bump it when the Kokkos options change), so a
# change of any rebuilds and nothing else does.
# The deps cache (scripts/deps-cache.sh) is outside the repository and seen by the build root;
# the build runs inside the root (scripts/in-root.sh), or with --host on this machine's own
# compilers and CMake (a Kokkos for builds without the root, scripts/plain-cmake-check.sh), and
# counts as cached only once installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"
repo=$(cd "$here/.." && pwd -P)
# shellcheck source=scripts/deps-cache.sh
source "$here/deps-cache.sh"

log() { printf '[device-kokkos] %s\n' "$*" >&2; }
die() { printf '[device-kokkos] ERROR: %s\n' "$*" >&2; exit 1; }

snapshot_name=kokkos-4.6.99-28848dfa.tar.gz
snapshot_sha=57532705a9f55189796ca85c715ed1be0e5df29017f3b70ef2473ed0f262297f
snapshot_patch=kokkos-4.6.99-28848dfa-cuda13.patch
# The build recipe's version: part of the cache key (change it with the options below).
recipe=1

backend= arch= source=${KOKKOSATTN_KOKKOS_SOURCE:-} patch= patch_mode=auto print_only=0 host=0
jobs=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --backend) backend=${2:?}; shift 2 ;;
    --arch) arch=${2:?}; shift 2 ;;
    --source) source=${2:?}; shift 2 ;;
    --patch) patch=${2:?}; patch_mode=given; shift 2 ;;
    --no-patch) patch_mode=none; shift ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --print-prefix) print_only=1; shift ;;
    --host) host=1; shift ;;
    -h | --help) sed -n '2,24p' "$self" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

case "$backend" in
  cuda) arch=${arch:-HOPPER90} ;;
  hip) arch=${arch:-AMD_GFX90A} ;;
  *) die "--backend: expected cuda or hip, got '${backend}'" ;;
esac
[[ $arch =~ ^[A-Z0-9_]+$ ]] || die "--arch: expected a Kokkos_ARCH_* suffix such as HOPPER90, got '$arch'"

if [[ -z $source ]]; then
  source=$repo/../shared/third_party/$snapshot_name
  [[ -f $source ]] || die "no --source given and no Kokkos snapshot at $source"
fi
[[ -f $source ]] || die "--source: no such file: $source"
source=$(cd "$(dirname "$source")" && pwd -P)/$(basename "$source")
source_sha=$(sha256sum "$source" | cut -d' ' -f1)
case "$patch_mode" in
  auto) [[ $source_sha == "$snapshot_sha" ]] && patch=$(dirname "$source")/$snapshot_patch ;;
  none) patch= ;;
esac
[[ -z $patch || -f $patch ]] || die "patch not found: $patch"
patch_sha=none
[[ -n $patch ]] && patch_sha=$(sha256sum "$patch" | cut -d' ' -f1)

# Where the build runs: the root, or this machine (--host).
toolchain() {
  if [[ $host == 1 ]]; then
    PATH=/usr/local/cuda/bin:$PATH "$@"
  else
    KOKKOSATTN_SKIP_SETUP=1 "$here/in-root.sh" "$@"
  fi
}
# The compiler is part of the key: a Kokkos built by another nvcc/hipcc is another Kokkos.
compiler_version() {
  if [[ $backend == cuda ]]; then
    toolchain sh -c 'nvcc --version | tail -n2; g++ -dumpfullversion'
  else
    toolchain sh -c 'HIP_PLATFORM=amd hipcc --version | head -n3'
  fi
}
if [[ ${KOKKOSATTN_IN_ROOT:-0} == 1 ]]; then
  die "run this script on the host (it enters the build root itself; --host builds there)"
fi
[[ $host == 1 ]] || "$here/buildroot-setup.sh" --quiet || die "build root setup failed"
cc_version=$(compiler_version 2>/dev/null) ||
  die "could not run the $backend compiler (host=$host)"
key=$(printf '%s\n' "$source_sha" "$patch_sha" "$backend" "$arch" "$cc_version" "$host" "$recipe" |
  sha256sum | cut -c1-12)
suffix=
[[ $host == 0 ]] || suffix=-host
entry=kokkos-$backend-${arch,,}$suffix-$key

deps_claim "$entry" "$print_only"
work=$deps_work prefix=$deps_prefix

log "building Kokkos ($backend, Kokkos_ARCH_$arch) from $(basename "$source") into $prefix"
tar -xzf "$source" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
[[ -f $src/CMakeLists.txt ]] || die "$source does not unpack to a Kokkos source tree"
if [[ -n $patch ]]; then
  log "applying $(basename "$patch")"
  patch -s -p1 -d "$src" <"$patch"
fi

# Installed in place (Kokkos' package config records the compiler's path, so the wrapper is
# the installed copy from the start); the entry counts as cached only once .complete exists.
rm -rf --one-file-system "$prefix"
mkdir -p "$prefix/bin"
generator=Ninja
if [[ $host == 1 ]] && ! command -v ninja >/dev/null; then
  generator="Unix Makefiles"
fi
opts=(-G "$generator" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DCMAKE_CXX_STANDARD=20
  -DCMAKE_CXX_EXTENSIONS=OFF -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF
  -DKokkos_ENABLE_EXAMPLES=OFF "-DKokkos_ARCH_$arch=ON" "-DCMAKE_INSTALL_PREFIX=$prefix")
if [[ $backend == cuda ]]; then
  cp "$src/bin/nvcc_wrapper" "$prefix/bin/nvcc_wrapper"
  opts+=("-DCMAKE_CXX_COMPILER=$prefix/bin/nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON
    -DKokkos_ENABLE_OPENMP=ON)
  env=()
else
  # Debian's hipcc (clang 17) has no OpenMP runtime in the root: HIP + Serial. rocThrust is
  # not installed and Kokkos only uses it for sorting.
  opts+=(-DCMAKE_CXX_COMPILER=hipcc -DKokkos_ENABLE_HIP=ON -DKokkos_ENABLE_ROCTHRUST=OFF)
  env=(HIP_PLATFORM=amd)
fi
t0=$SECONDS
(
  cd "$work"
  toolchain env "${env[@]}" cmake -S "$src" -B "$work/build" \
    "${opts[@]}" >"$work/configure.log" 2>&1 || { tail -n 40 "$work/configure.log" >&2; exit 1; }
  toolchain env "${env[@]}" cmake --build "$work/build" \
    -j "$jobs" >"$work/build.log" 2>&1 || { tail -n 60 "$work/build.log" >&2; exit 1; }
  toolchain cmake --install "$work/build" \
    >"$work/install.log" 2>&1 || { tail -n 20 "$work/install.log" >&2; exit 1; }
) || die "Kokkos build failed (logs were in $work)"

{
  echo "source=$(basename "$source") sha256=$source_sha"
  echo "patch=${patch:+$(basename "$patch")} sha256=$patch_sha"
  echo "backend=$backend arch=Kokkos_ARCH_$arch"
  echo "compiler=$(tr '\n' ' ' <<<"$cc_version")"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) seconds=$((SECONDS - t0))"
} >"$prefix/.complete"
log "Kokkos ($backend) installed in $((SECONDS - t0)) s: $prefix"
printf '%s\n' "$prefix"
