#!/usr/bin/env bash
# Gather what the GPU machine needs to run binaries of a build made here: the named executables
# of BUILD_DIR (stripped), its shared libraries (libkokkosattn), the Kokkos it was configured
# against, the build root's C++ runtime (the GPU machine's libstdc++ is older) and the CUDA
# runtime, and OpenBLAS where a binary links it. cuDNN and nvrtc come from the GPU machine's torch
# environment (scripts/gpu-env.sh).
#
#   scripts/device-carry.sh BUILD_DIR DEST [EXECUTABLE...]    (paths relative to BUILD_DIR)
#
# DEST is emptied first; run the binaries there with LD_LIBRARY_PATH=DEST (gpu_env DEST does).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:?usage: scripts/device-carry.sh BUILD_DIR DEST [EXECUTABLE...]}" && pwd -P)
dest=${2:?usage: scripts/device-carry.sh BUILD_DIR DEST [EXECUTABLE...]}
shift 2
root=${KOKKOSATTN_BUILDROOT:-/var/cache/kokkos-attention/buildroot}
log() { printf '[device-carry] %s\n' "$*" >&2; }

rm -rf "$dest"
mkdir -p "$dest"
for exe in "$@"; do
  cp "$build/$exe" "$dest/"
  strip --strip-debug "$dest/$(basename "$exe")"
done
find "$build" -maxdepth 3 -name 'libkokkosattn*.so*' -exec cp -a {} "$dest/" \;
kokkos_dir=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
kokkos_lib=$(cd "$kokkos_dir/../.." && pwd)
cp -a "$kokkos_lib"/libkokkos*.so* "$dest/"
for lib in libstdc++.so.6 libgomp.so.1 libgcc_s.so.1; do
  cp -L "$root/usr/lib/x86_64-linux-gnu/$lib" "$dest/"
done
# The runtime libraries a binary links from the root, found by one ldd per executable: a build
# with Kokkos Kernels on the root's OpenBLAS (naive's GEMMs) links it and libgfortran (42 MB
# together: a GPU build meant for the device tool, 64 MiB carried, should use cuBLAS instead);
# Fortran programs (the module's examples) the Fortran runtime. The root's libopenblas.so.0 is
# an absolute alternatives link: resolved inside the root. A build with an nvptx offload target
# (scripts/fortran-offload.sh) also needs libgomp's CUDA plugin, loaded from the library path.
in_root() { KOKKOSATTN_SKIP_SETUP=1 "$here/in-root.sh" "$@"; }
for exe in "$@"; do
  deps=$(in_root ldd "$build/$exe" 2>/dev/null || true)
  for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
    [[ $deps == *"$lib"* && ! -e $dest/$lib ]] || continue
    cp -L "$root$(in_root readlink -f "/usr/lib/x86_64-linux-gnu/$lib")" "$dest/$lib"
  done
done
if [[ -n $(sed -n 's/^KokkosAttn_FORTRAN_OFFLOAD:STRING=//p' "$build/CMakeCache.txt") ]]; then
  cp -L "$root/usr/lib/x86_64-linux-gnu/libgomp-plugin-nvptx.so.1" "$dest/"
fi
cp -L /usr/local/cuda/lib64/libcudart.so.13 "$dest/"
find "$dest" -maxdepth 1 -type f -name 'libkokkos*.so*' -exec strip --strip-debug {} +
log "$(du -sh "$dest" | cut -f1) in $dest: $(ls "$dest" | tr '\n' ' ')"
