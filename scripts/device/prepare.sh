#!/usr/bin/env bash
# Builds here (no GPU needed) everything the GPU run carries, into .device/
# (ignored by git; name it in the device tool's `carry`):
#   .device/bin/MODEL        bench/device/runner.cpp linked with the model's
#                            `tfc compile --target cuda` library (needs only
#                            libcuda at run time), stripped
#   .device/bin/emit-MODEL   the same runner built by the C++ compiler alone
#                            from `tfc emit --target cuda` sources (emit: cases)
#   .device/refs/CASE.safetensors  tfc's CPU results for each random-weight
#                            case of scripts/device/models.txt (the same runner
#                            linked with the `--target host` library)
# Then, on the GPU machine: bash scripts/device/run.sh (see docs/cuda.md).
#
# Usage: scripts/device/prepare.sh [CASE...]   (default: every case)
# BUILD (default build/) holds bin/tfc; work files go to $BUILD/device.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
tfc=$build/bin/tfc
dest=$root/.device
work=$build/device
[ -x "$tfc" ] || { echo "prepare: no tfc at $tfc (make build first)" >&2; exit 1; }
mkdir -p "$dest/bin" "$dest/refs" "$work/bin-host"

# runner TARGET MODEL.tfm OUT: the runner for the model and target (once).
runner() {
  [ -x "$3" ] && return 0
  echo "prepare: tfc compile $2 --target $1" >&2
  TFC=$tfc RUNNER_MODEL_DIR=$work/$1-$(basename "$2" .tfm) \
    "$root/scripts/device/build-runner.sh" "$1" "$root/$2" "$3"
}

selected() { [ $# -eq 0 ] || [[ " $* " == *" $case "* ]]; }

while read -r case tfm entry a b c; do
  [[ -z "$case" || "$case" == \#* ]] && continue
  selected "$@" || continue
  model=$(basename "$tfm" .tfm)
  if [[ "$case" == emit:* ]]; then
    runner emit-cuda "$tfm" "$dest/bin/emit-$model"
    continue
  fi
  runner cuda "$tfm" "$dest/bin/$model"
  [[ "$case" == fixture:* ]] && continue
  runner host "$tfm" "$work/bin-host/$model"
  echo "prepare: CPU reference $case" >&2
  "$work/bin-host/$model" --entry "$entry" --batch "$a" --seq "$b" --past "$c" \
    --label "$case" --write "$dest/refs/$case.safetensors"
done <"$root/scripts/device/models.txt"

size=$(du -sm "$dest" | cut -f1)
echo "prepare: .device is ${size} MiB (the repository and what it carries travel, 64 MiB at most)"
