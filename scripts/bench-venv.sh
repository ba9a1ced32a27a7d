#!/usr/bin/env bash
# Creates (once) the Python environment of the CPU benchmark peers: a venv with PyTorch from
# PyPI, outside the repository, and prints its python. The build root has no pip, so this runs
# on the host. PyPI's Linux torch wheel is the CUDA one: it pulls ~3 GB of nvidia-* wheels
# (about 5.3 GB installed, ~4 min) even though only its CPU SDPA is used; it cannot be imported
# without them. KOKKOSATTN_BENCH_TORCH=0 skips it (make bench then has no torch-cpu rows).
#   scripts/bench-venv.sh            -> prints /var/cache/kokkos-attention/venv-bench/bin/python
set -euo pipefail

venv=${KOKKOSATTN_BENCH_VENV:-/var/cache/kokkos-attention/venv-bench}
stamp="$venv/.kokkosattn-bench-ready"

if [[ ${KOKKOSATTN_BENCH_TORCH:-1} == 0 ]]; then
  echo "bench-venv: KOKKOSATTN_BENCH_TORCH=0: no PyTorch peer" >&2
  exit 3
fi
if [[ ! -f $stamp ]]; then
  echo "bench-venv: installing PyTorch (CPU use only) into $venv (one time, several GB)" >&2
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --progress-bar off torch >&2
  "$venv/bin/python" -c 'import torch; torch.nn.functional.scaled_dot_product_attention' >&2
  touch "$stamp"
fi
echo "$venv/bin/python"
