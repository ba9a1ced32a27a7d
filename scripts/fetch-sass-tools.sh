#!/usr/bin/env bash
# Fetch cuobjdump and nvdisasm (pinned PyPI wheels `nvidia-cuda-cuobjdump`,
# `nvidia-cuda-nvdisasm`; the build root's CUDA toolkit has neither), verify the wheels' sha256,
# unpack them into a cache outside the repository and print the folder holding both binaries.
# With them the SASS of our kernels can be read on the build machine, no GPU needed:
#
#   T=$(scripts/fetch-sass-tools.sh)
#   NVDISASM_PATH=$T $T/cuobjdump -sass build-cuda/cuda/CMakeFiles/.../sm90_fwd_bf16_h128_long.cu.o
#   (grep HGMMA for the tensor-core GEMMs, STL/LDL for spills, and where they sit)
#
# `--cached`: print the folder only if it has been fetched (status 1 otherwise, nothing
# downloaded); scripts/check-sass.sh asks this way.
# Environment: KOKKOSATTN_DEPS_CACHE (scripts/deps-cache.sh), PIP (default: python3 -m pip).
# All messages go to stderr; stdout is the path.
set -euo pipefail

version=13.5.37
tag=py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64
declare -A sha256=(
  [nvidia_cuda_cuobjdump]=38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58
  [nvidia_cuda_nvdisasm]=d3fdbdd49fa53e2e4aacd3db8259d052bd2b049ececdcb69e92e083c6728e7ca
)

log() { printf '[fetch-sass-tools] %s\n' "$*" >&2; }

# shellcheck source=scripts/deps-cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/deps-cache.sh"
if dest=$(deps_find "sass-tools-$version") && [[ -x $dest/cuobjdump && -x $dest/nvdisasm ]]; then
  printf '%s\n' "$dest"
  exit 0
fi
[[ ${1:-} == --cached ]] && exit 1
cache=$(deps_writable_cache) || { log "ERROR: no writable dependency cache"; exit 1; }
dest=$cache/sass-tools-$version
tmp=$(mktemp -d "$cache/.sass-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
read -r -a pip <<<"${PIP:-python3 -m pip}"
for name in nvidia_cuda_cuobjdump nvidia_cuda_nvdisasm; do
  wheel=$name-$version-$tag.whl
  log "downloading $wheel"
  "${pip[@]}" download --quiet --no-deps --only-binary=:all: -d "$tmp" \
    "${name//_/-}==$version" >&2
  echo "${sha256[$name]}  $tmp/$wheel" | sha256sum -c --quiet - >&2 ||
    { log "ERROR: sha256 mismatch for $wheel"; exit 1; }
  python3 -m zipfile -e "$tmp/$wheel" "$tmp/$name" >&2
  bin=$(find "$tmp/$name" -type f \( -name cuobjdump -o -name nvdisasm \) | head -1)
  [[ -n $bin ]] || { log "ERROR: no binary in $wheel"; exit 1; }
  mkdir -p "$tmp/bin"
  install -m 755 "$bin" "$tmp/bin/"
done
rm -rf "$dest"
mv "$tmp/bin" "$dest"
printf 'sass tools %s\n' "$version" >"$dest/.complete"
printf '%s\n' "$dest"
