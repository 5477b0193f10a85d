#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after
# scripts/device/prepare.sh built .device/ here (docs/cuda.md has the exact
# device-tool call). Modes (default: check):
#   check    every case of scripts/device/models.txt: the GPU result against
#            tfc's CPU result (random weights) or the PyTorch reference
#            (fixtures), max abs error <= 1e-4; then compute-sanitizer
#            memcheck of BERT-base b1 and a GPT-2 decode step
#   time     tfc's median/min/max ms per case (20 runs after 3 warm-ups)
#   profile  per-kernel GPU times (ncu) of BERT-base b1 and b8, GPT-2
#            prefill and one decode step
#   peer     PyTorch CUDA, eager and torch.compile, same shapes
#            (bench/device/torch_peer.py)
#   peak     the GPU's fp32 FMA peak and copy bandwidth (bench/device/peak.cu)
#   all      check, time, peak, peer and profile, each under its own timeout
#            (about 5 minutes on an H200: one device call); the ncu CSVs go
#            into $OUT/ncu.tgz, so that no more than 8 files come back
# Results go to stdout and $OUT/MODE.txt (the device tool brings $OUT back).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mode=${1:-check}
out=${OUT:-$root/out}
mkdir -p "$out"
exec > >(tee "$out/$mode.txt") 2>&1
dev=.device
fails=0

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader

cases() { grep -v '^#' scripts/device/models.txt | grep -v '^ *$'; }
# The line of models.txt for case $1.
case_line() { cases | awk -v c="$1" '$1 == c'; }

# run_case runs the case's runner under "${wrap[@]}" (a tool such as
# compute-sanitizer or ncu, or nothing).
wrap=()
run_case() { # CASE TFM ENTRY (BATCH SEQ PAST | EXPECT) [runner args...]
  local case=$1 tfm=$2 entry=$3
  local bin=$dev/bin/$(basename "$tfm" .tfm)
  if [[ "$case" == emit:* ]]; then
    bin=$dev/bin/emit-$(basename "$tfm" .tfm)
    case=fixture:${case#emit:}
  fi
  if [[ "$case" == fixture:* ]]; then
    local f=tests/fixtures/${case#fixture:}.safetensors expect=()
    [ "$4" != - ] && expect=(--expect "$4")
    shift 4
    "${wrap[@]}" "$bin" --entry "$entry" --weights "$f" --inputs "$f" \
      --reference "$f" "${expect[@]}" --label "$case" "$@"
  else
    local a=$4 b=$5 c=$6
    shift 6
    "${wrap[@]}" "$bin" --entry "$entry" --batch "$a" --seq "$b" --past "$c" \
      --reference "$dev/refs/$case.safetensors" --label "$case" "$@"
  fi
}

case $mode in
check)
  while read -r line; do
    run_case $line || { echo "FAILED: $line"; fails=$((fails + 1)); }
  done < <(cases)
  # The tiled linears, fused attention and row reductions (BERT-base b1),
  # then the GEMV linears and the decode step's attention (GPT-2 decode).
  wrap=(compute-sanitizer --tool memcheck --error-exitcode 9)
  for case in bert_base_b1 gpt2_decode; do
    echo "== compute-sanitizer memcheck, $case"
    run_case $(case_line $case) ||
      { echo "FAILED: memcheck $case"; fails=$((fails + 1)); }
  done
  ;;
time)
  while read -r line; do
    [[ "$line" == fixture:* || "$line" == emit:* ]] && continue
    run_case $line --repeat 20 --warmup 3 --tolerance 1e30 \
      || fails=$((fails + 1))
  done < <(cases)
  ;;
profile)
  wrap=(ncu --clock-control none --metrics gpu__time_duration.sum --csv
    --print-units base)
  for case in gpt2_decode bert_base_b8 gpt2_prefill bert_base_b1; do
    echo "== ncu: $(case_line $case)"
    run_case $(case_line $case) >"$out/ncu-$case.csv" ||
      fails=$((fails + 1))
    python3 bench/device/ncu_summary.py "$out/ncu-$case.csv"
  done
  ;;
peer)
  PYTHONUNBUFFERED=1 python3 bench/device/torch_peer.py || fails=$((fails + 1))
  ;;
peak)
  nvcc -O3 -arch=native -o /tmp/tfc-peak bench/device/peak.cu &&
    /tmp/tfc-peak || fails=$((fails + 1))
  ;;
all)
  for spec in "check 150" "time 50" "peak 15" "peer 130" "profile 60"; do
    set -- $spec
    timeout "$2" bash "$root/scripts/device/run.sh" "$1" >/dev/null 2>&1 ||
      { echo "FAILED or timed out: $1"; fails=$((fails + 1)); }
    tail -n 1 "$out/$1.txt"
  done
  (cd "$out" && tar czf ncu.tgz ncu-*.csv && rm -f ncu-*.csv)
  grep -h '^time\|^peer\|^peak' "$out/time.txt" "$out/peer.txt" "$out/peak.txt"
  ;;
*)
  echo "run.sh: unknown mode '$mode' (check, time, profile, peer, peak, all)"
  exit 2
  ;;
esac
echo "run.sh $mode: $fails failure(s)"
[ $fails -eq 0 ]
