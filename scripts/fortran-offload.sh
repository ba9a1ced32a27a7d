#!/usr/bin/env bash
# Give the build root's gfortran an NVIDIA offload target, so that the OpenACC and OpenMP device
# examples (examples/fortran/attention_openacc.f90, attention_openmp.f90) run on the GPU instead
# of the host fallback. The root's gfortran 14 is built for nvptx offloading; Debian ships the
# offload compiler separately: gcc-14-offload-nvptx (with nvptx-tools) and libgomp's CUDA plugin,
# libgomp-plugin-nvptx1. Installs them into the root (idempotent; a rebuilt root drops them, and
# this script puts them back), then configure with -DKokkosAttn_FORTRAN_OFFLOAD=nvptx-none.
#
#   scripts/fortran-offload.sh              # install if missing
#   scripts/fortran-offload.sh --check      # exit 1 unless installed
#
# At run time the GPU machine needs libgomp-plugin-nvptx.so.1 beside the binaries (it loads the
# driver's libcuda.so.1); scripts/device-carry.sh copies it when a binary was built this way.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
packages=(gcc-14-offload-nvptx libgomp-plugin-nvptx1)
installed() {
  KOKKOSATTN_SKIP_SETUP=1 "$here/in-root.sh" dpkg-query -W -f='${Status}\n' "${packages[@]}" \
    2>/dev/null | grep -c "install ok installed" | grep -qx "${#packages[@]}"
}
if [[ ${1:-} == --check ]]; then
  installed
  exit
fi
"$here/buildroot-setup.sh" --quiet
if installed; then
  echo "[fortran-offload] ${packages[*]}: installed" >&2
  exit 0
fi
echo "[fortran-offload] installing ${packages[*]} into the build root" >&2
KOKKOSATTN_SKIP_SETUP=1 "$here/in-root.sh" bash -c \
  "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${packages[*]}"
installed
