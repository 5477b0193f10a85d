#!/usr/bin/env bash
# Offline CUDA check (no GPU needed): the PTX of every kernel of every example
# model assembles with ptxas for sm_80 (A100) and sm_90 (H100/H200).
#
#   scripts/check-ptx.sh [BUILD [MODEL.tfm...]]
#
# BUILD is the build folder holding bin/tfc (default build), or the tfc
# executable itself (as the lit test passes it). Without models,
# every examples/**/*.tfm that declares a `model` is checked. For each model,
# `tfc dump --emit=ptx -o DIR/` writes one NAME.ptx per kernel (the PTX Halide
# generates for the kernel's GPU loops with the CUDA schedules, compute
# capability 8.0); identical PTX is assembled once (by hash), with
# `ptxas -arch=sm_80` and `-arch=sm_90`, jobs in parallel. Prints
#   ptx: N kernels of M models assemble for sm_80 and sm_90
# or each failure (model, kernel, arch, ptxas's message) and exits 1.
# Without the CUDA toolkit (PTXAS, default /usr/local/cuda/bin/ptxas) it
# prints "ptx: skipped: no ptxas ..." and exits 0.
# Environment: PTXAS, TFC_PTX_JOBS (parallel jobs, default nproc).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[[ $# -gt 0 ]] && shift
case $build in /*) ;; *) build=$PWD/$build ;; esac
if [[ -f $build && -x $build ]]; then
  tfc=$build
else
  tfc=$build/bin/tfc
fi
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
jobs=${TFC_PTX_JOBS:-$(nproc 2>/dev/null || echo 2)}

if [[ ! -x $ptxas ]]; then
  echo "ptx: skipped: no ptxas at $ptxas (install the CUDA toolkit or set PTXAS)"
  exit 0
fi
if [[ ! -x $tfc ]]; then
  echo "error: no $tfc (build tfc first)" >&2
  exit 2
fi

models=("$@")
if [[ ${#models[@]} -eq 0 ]]; then
  while IFS= read -r f; do
    grep -qE '^[[:space:]]*model\b' "$f" && models+=("$f")
  done < <(find "$root/examples" -name '*.tfm' | sort)
fi
if [[ ${#models[@]} -eq 0 ]]; then
  echo "error: no models to check" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tfc-ptx.XXXXXX")
trap 'rm -rf "$work"' EXIT

# 1. Dump each model's PTX into its own folder (models in parallel).
for i in "${!models[@]}"; do
  printf '%s\t%s\n' "$i" "${models[$i]}"
done > "$work/models.tsv"
export tfc work
cut -f1 "$work/models.tsv" | xargs -r -P "$jobs" -I{} bash -c '
  model=$(awk -F"\t" -v i={} "\$1 == i { print \$2 }" "$work/models.tsv")
  mkdir -p "$work/m{}"
  if ! "$tfc" dump --emit=ptx "$model" -o "$work/m{}/" \
       > "$work/m{}.log" 2>&1; then
    echo "$model" >> "$work/dump-failed"
  fi' || true

failed=0
if [[ -s $work/dump-failed ]]; then
  while IFS= read -r model; do
    i=$(awk -F'\t' -v m="$model" '$2 == m { print $1; exit }' "$work/models.tsv")
    echo "FAIL dump $model:"
    sed 's/^/  /' "$work/m$i.log"
  done < "$work/dump-failed"
  failed=1
fi

# 2. Assemble each distinct PTX module for both architectures.
: > "$work/kernels.tsv"
kernels=0
nogpu=0
for i in "${!models[@]}"; do
  for f in "$work/m$i"/*.ptx; do
    [[ -e $f ]] || continue
    kernels=$((kernels + 1))
    printf '%s\t%s\t%s\n' "$(sha256sum < "$f" | cut -c1-64)" "$i" "$f" \
      >> "$work/kernels.tsv"
  done
  if [[ -f $work/m$i.log ]]; then
    n=$(grep -c '^no GPU code in ' "$work/m$i.log" || true)
    nogpu=$((nogpu + n))
  fi
done
sort -u -k1,1 "$work/kernels.tsv" > "$work/unique.tsv"
distinct=$(wc -l < "$work/unique.tsv")

export ptxas
for arch in sm_80 sm_90; do
  awk -F'\t' -v a="$arch" '{ print $1 "\t" $3 "\t" a }' "$work/unique.tsv"
done | xargs -r -P "$jobs" -d '\n' -n1 bash -c '
  IFS=$'"'"'\t'"'"' read -r hash file arch <<< "$1"
  if ! "$ptxas" -arch="$arch" -o /dev/null "$file" \
       > "$work/$hash.$arch.log" 2>&1; then
    echo "$hash $arch" >> "$work/ptxas-failed"
  fi' _ || true

if [[ -s $work/ptxas-failed ]]; then
  failed=1
  while read -r hash arch; do
    # Every kernel of every model that has this PTX.
    awk -F'\t' -v h="$hash" '$1 == h { print $2 "\t" $3 }' "$work/kernels.tsv" |
      while IFS=$'\t' read -r i f; do
        model=$(awk -F'\t' -v i="$i" '$1 == i { print $2 }' "$work/models.tsv")
        echo "FAIL ptxas -arch=$arch: ${model#"$root"/} kernel $(basename "$f" .ptx)"
      done
    sed 's/^/  /' "$work/$hash.$arch.log"
  done < <(sort -u "$work/ptxas-failed")
fi

if [[ $failed -ne 0 ]]; then
  echo "ptx: FAILED ($kernels kernels of ${#models[@]} models, $distinct distinct PTX modules)"
  exit 1
fi
extra=""
[[ $nogpu -gt 0 ]] && extra=", $nogpu kernels without GPU code"
echo "ptx: $kernels kernels of ${#models[@]} models assemble for sm_80 and sm_90 ($distinct distinct PTX modules$extra)"
