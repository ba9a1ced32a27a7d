#!/usr/bin/env bash
# Fetch the header-only cudnn-frontend C++ API at a pinned version from its PyPI wheel
# (`nvidia-cudnn-frontend`; the wheel carries include/ since 1.5), verify the wheel's sha256,
# unpack it into a cache outside the repository and print the include directory.
#
#   scripts/fetch-cudnn-frontend.sh     prints /var/cache/kokkos-attention/deps/cudnn-frontend-1.32.0/include
#
# Environment: KOKKOSATTN_DEPS_CACHE (default /var/cache/kokkos-attention/deps, falls back to
# ~/.cache/kokkos-attention/deps when that is not writable), PIP (default: python3 -m pip).
# The build root (scripts/in-root.sh) has no pip but sees the default cache at the same path,
# so `make configure` fetches on the host first and passes the path to CMake
# (-DKokkosAttn_CUDNN_FRONTEND_DIR); CMake itself never downloads. Only the headers are used;
# the wheel's Python extension is never loaded, so the wheel's Python tag (cp312) does not
# matter. All messages go to stderr; stdout is the path.
set -euo pipefail

version=1.32.0
wheel=nvidia_cudnn_frontend-1.32.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
sha256=8b354a8e550c083eb247f1eb39a7d69a4a269075f5a01e4fcbd2531680b17239

log() { printf '[fetch-cudnn-frontend] %s\n' "$*" >&2; }

# shellcheck source=scripts/deps-cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/deps-cache.sh"
if dest=$(deps_find "cudnn-frontend-$version") && [[ -f $dest/include/cudnn_frontend.h ]]; then
  printf '%s\n' "$dest/include"
  exit 0
fi
cache=$(deps_writable_cache) || { log "ERROR: no writable dependency cache"; exit 1; }
dest=$cache/cudnn-frontend-$version
if [[ ${KOKKOSATTN_IN_ROOT:-0} == 1 ]] && ! python3 -m pip --version >/dev/null 2>&1; then
  log "ERROR: $dest missing and the build root has no pip; run scripts/fetch-cudnn-frontend.sh"
  log "       on the host first (make configure does), or set KokkosAttn_CUDNN_FRONTEND_DIR"
  exit 1
fi

tmp=$(mktemp -d "$cache/.cudnn-frontend.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
read -r -a pip <<<"${PIP:-python3 -m pip}"
log "downloading nvidia-cudnn-frontend==$version from PyPI"
"${pip[@]}" download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  -d "$tmp" "nvidia-cudnn-frontend==$version" >&2
[[ -f $tmp/$wheel ]] || { log "ERROR: expected $wheel, got: $(ls "$tmp")"; exit 1; }
got=$(sha256sum "$tmp/$wheel" | cut -d' ' -f1)
if [[ $got != "$sha256" ]]; then
  log "ERROR: sha256 mismatch for $wheel: expected $sha256, got $got"
  exit 1
fi
python3 - "$tmp/$wheel" "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    members = [m for m in z.namelist() if m.startswith("include/")]
    z.extractall(sys.argv[2], members)
PY
[[ -f $tmp/x/include/cudnn_frontend.h ]] || { log "ERROR: no include/cudnn_frontend.h in $wheel"; exit 1; }
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/x/include" "$dest/include"
printf 'nvidia-cudnn-frontend %s\n%s  %s\n' "$version" "$sha256" "$wheel" >"$dest/.complete"
log "unpacked to $dest"
printf '%s\n' "$dest/include"
