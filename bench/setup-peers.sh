#!/usr/bin/env bash
# Installs the peer engines of the benchmarks.
#
#   bench/setup-peers.sh [VENV_DIR]        (default: <repo>/.venv-peers)
#     for bench/compare_peers.py: PyTorch 2.x, ONNX Runtime, OpenVINO, ONNX and
#     transformers from PyPI, pinned in bench/requirements-peers.txt, in their own venv
#     made from Debian 12's /usr/bin/python3 (3.11; no system site packages, so the
#     project venv's Debian torch 1.13 is not seen). ~6 GB with the CUDA wheels torch
#     pulls; check `df -h` first.
#   bench/setup-peers.sh --decode [VENV_DIR] (default: <repo>/.venv)
#     for bench/compare_decode.py: runs scripts/setup-python.sh first (torch 1.13 from
#     Debian, transformers, safetensors), then the pins of bench/requirements-decode.txt
#     (ONNX Runtime 1.23.2).
# Idempotent: pip does nothing when the pins are satisfied.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pip_install() {
  "$1/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$2"
}
if [ "${1:-}" = "--decode" ]; then
  venv=${2:-$repo/.venv}
  "$repo/scripts/setup-python.sh" "$venv"
  pip_install "$venv" "$repo/bench/requirements-decode.txt"
  "$venv/bin/python" -c 'import onnxruntime as ort, numpy; print(f"setup-peers: ok: onnxruntime {ort.__version__}, numpy {numpy.__version__}")'
  exit 0
fi
venv=${1:-$repo/.venv-peers}
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
pip_install "$venv" "$repo/bench/requirements-peers.txt"
"$venv/bin/python" -c 'import torch, onnxruntime, openvino, onnx, transformers
print(f"setup-peers: ok: torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, "
      f"openvino {openvino.__version__}, onnx {onnx.__version__}, transformers {transformers.__version__}")'
