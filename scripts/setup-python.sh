#!/usr/bin/env bash
# Sets up the Python tooling environment (tools/gen_fixtures.py, tools/count_params.py).
# Usage: scripts/setup-python.sh [VENV_DIR]       (default: <repo>/.venv, git-ignored)
#
# Interpreter: always Debian 12's /usr/bin/python3 (3.11.2), never whatever python3 is
# first on PATH (pyenv etc.), because PyTorch comes from Debian's python3-torch package
# (1.13.1, CPU only, ~150 MB of .debs) which is built for that interpreter. The venv is made
# with --system-site-packages so it sees torch and numpy; the rest is pinned in
# tools/requirements.txt and installed from PyPI as wheels.
# Idempotent: apt-get runs only for missing packages; an existing venv is reused and pip
# does nothing when the pins are already satisfied.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$repo/.venv}
req=$repo/tools/requirements.txt
py=/usr/bin/python3

apt_packages=(python3 python3-venv python3-pip-whl python3-setuptools-whl python3-numpy python3-torch)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "setup-python: apt-get install ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A venv made from another interpreter (e.g. pyenv's) cannot see Debian's torch: rebuild it.
if [ -x "$venv/bin/python" ] &&
   ! "$venv/bin/python" -c 'import sys; sys.exit(sys.base_prefix != "/usr")' 2>/dev/null; then
  echo "setup-python: $venv was not made from $py; recreating it"
  rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "setup-python: creating $venv from $py ($("$py" --version 2>&1))"
  "$py" -m venv --system-site-packages "$venv"
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --only-binary=:all: -r "$req"

"$venv/bin/python" - <<'PY'
import sys, torch, numpy, transformers, safetensors
assert torch.__version__.startswith("1.13"), torch.__version__
print(f"setup-python: ok: python {sys.version.split()[0]} ({sys.executable}), torch {torch.__version__}, "
      f"numpy {numpy.__version__}, transformers {transformers.__version__}, safetensors {safetensors.__version__}")
PY
