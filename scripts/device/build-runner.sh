#!/usr/bin/env bash
# Builds bench/device/runner.cpp against one model compiled by tfc:
#   scripts/device/build-runner.sh TARGET MODEL.tfm OUT [tfc options]
# TARGET is host, cuda or opencl (`tfc compile --target`: the kernels as
# objects in a static library), or emit-host / emit-cuda (`tfc emit
# --target`: the kernels as C++ sources, built here by the C++ compiler
# alone). OUT is the runner (stripped); the model's library or sources stay
# in OUT.model/ (or in RUNNER_MODEL_DIR). TFC (default: build/bin/tfc, else
# tfc on PATH) compiles; CXX (default c++) builds.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 TARGET MODEL.tfm OUT [tfc options]" >&2; exit 2; }
target=$1 tfm=$2 out=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
tfc=${TFC:-$root/build/bin/tfc}
[ -x "$tfc" ] || tfc=$(command -v tfc)
dir=${RUNNER_MODEL_DIR:-$out.model}
rm -rf "$dir"
case $target in
emit-*)
  "$tfc" emit "$tfm" --target "${target#emit-}" --class Model -o "$dir" "$@" >"$dir.log"
  name=$(sed -n 's/^emitted \([^:]*\):.*/\1/p' "$dir.log")
  # The kernels' sources, the API, the tfc runtime and (CUDA) Halide's CUDA
  # runtime, which Halide 14 ships only as object code.
  sources=("$dir"/*.cpp "$dir/lib/libtfc_runtime.a")
  [ -f "$dir/lib/libhalide_runtime_cuda.a" ] &&
    sources+=("$dir/lib/libhalide_runtime_cuda.a")
  ;;
*)
  "$tfc" compile "$tfm" --target "$target" --class Model -o "$dir" "$@" >"$dir.log"
  name=$(sed -n 's/^compiled \([^:]*\):.*/\1/p' "$dir.log")
  sources=("$dir/$name.cpp" "$dir/lib$name.a" "$dir/lib/libtfc_runtime.a")
  ;;
esac
${CXX:-c++} -std=c++17 -O2 -w -I "$dir" -I "$dir/include" \
  -DTFC_MODEL_HEADER="\"$name.h\"" -DTFC_MODEL_CLASS=tfc_generated::Model \
  "$root/bench/device/runner.cpp" "${sources[@]}" -lpthread -ldl -o "$out.tmp"
strip "$out.tmp"
mv "$out.tmp" "$out"
