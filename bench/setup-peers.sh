#!/usr/bin/env bash
# Installs the peer engines of bench/compare_decode.py (ONNX Runtime) into the project
# venv. Usage: bench/setup-peers.sh [VENV_DIR]   (default: <repo>/.venv)
# Runs scripts/setup-python.sh first (idempotent: torch 1.13 from Debian, transformers,
# safetensors), then pip-installs the pins of bench/requirements-peers.txt as wheels.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$repo/.venv}
"$repo/scripts/setup-python.sh" "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --only-binary=:all: -r "$repo/bench/requirements-peers.txt"
"$venv/bin/python" -c 'import onnxruntime as ort, numpy; print(f"setup-peers: ok: onnxruntime {ort.__version__}, numpy {numpy.__version__}")'
