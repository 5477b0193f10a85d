#!/usr/bin/env bash
# Builds bench/device/runner.cpp against one model compiled by tfc:
#   scripts/device/build-runner.sh TARGET MODEL.tfm OUT [tfc compile options]
# TARGET is host, cuda or opencl (tfc compile --target). OUT is the runner
# (stripped); the model's library and sources stay in OUT.model/ (or in
# RUNNER_MODEL_DIR). TFC (default: build/bin/tfc, else tfc on PATH)
# compiles; CXX (default c++) links.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 TARGET MODEL.tfm OUT [tfc options]" >&2; exit 2; }
target=$1 tfm=$2 out=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
tfc=${TFC:-$root/build/bin/tfc}
[ -x "$tfc" ] || tfc=$(command -v tfc)
dir=${RUNNER_MODEL_DIR:-$out.model}
rm -rf "$dir"
"$tfc" compile "$tfm" --target "$target" --class Model -o "$dir" "$@" >"$dir.log"
name=$(sed -n 's/^compiled \([^:]*\):.*/\1/p' "$dir.log")
${CXX:-c++} -std=c++17 -O2 -I "$dir" -I "$dir/include" \
  -DTFC_MODEL_HEADER="\"$name.h\"" -DTFC_MODEL_CLASS=tfc_generated::Model \
  "$root/bench/device/runner.cpp" "$dir/$name.cpp" "$dir/lib$name.a" \
  "$dir/lib/libtfc_runtime.a" -lpthread -ldl -o "$out.tmp"
strip "$out.tmp"
mv "$out.tmp" "$out"
