# Sourced by the scripts that run our binaries on the GPU machine (bench-gpu.sh, bench-repeat.sh,
# gpu-check.sh): gpu_env BIN_DIR sets PY (PYTHON, else python3, else the torch environment's
# python when python3 has no torch) and NV (that python's nvidia/ wheels, or empty), and puts
# BIN_DIR and the wheels' cuDNN and CUDA libraries first on LD_LIBRARY_PATH.
gpu_env() {
  PY=${PYTHON:-python3}
  if ! "$PY" -c "import torch" 2>/dev/null && [ -x /opt/torch/.venv/bin/python ]; then
    PY=/opt/torch/.venv/bin/python
  fi
  NV=$("$PY" -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]) + '/nvidia')" 2>/dev/null)
  export LD_LIBRARY_PATH="$1:${NV:+$NV/cudnn/lib:$NV/cu13/lib:}${LD_LIBRARY_PATH:-}"
}
