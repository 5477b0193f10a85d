#!/usr/bin/env bash
# Writes the runtime fuzzer's plan seed,
# tests/fuzz/runtime-corpus/plan-v3-kv-cache.json: the serialized Plan (the
# JSON form, runtime/Plan.cpp) of tests/fuzz/corpus/kv_cache_plan.tfm, as
# `tfc emit` embeds it in the generated <model>.cpp. Run it from the
# repository root after a change of the plan format (RuntimeTests'
# PlanTest.FuzzSeedIsACurrentPlan fails until then):
#
#   scripts/make-plan-seed.sh [build/bin/tfc]
#
# The seed must stay under 4096 bytes (scripts/fuzz.sh runs the fuzzer with
# -max_len=4096, which cuts longer inputs).
set -euo pipefail
tfc=$(realpath "${1:-build/bin/tfc}")
seed=tests/fuzz/runtime-corpus/plan-v3-kv-cache.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Run in the model's folder: the plan's locations name the file as given.
(cd tests/fuzz/corpus && "$tfc" emit kv_cache_plan.tfm -o "$work/out" -j1 >/dev/null)
python3 - "$work/out/kv_seed.cpp" "$seed.tmp" <<'PY'
import re
import sys

source = open(sys.argv[1]).read()
found = re.search(r"kPlanJson\[\] = \{(.*?)\};", source, re.S)
if not found:
    sys.exit("no kPlanJson in " + sys.argv[1])
data = bytes(int(b) for b in found.group(1).split(",") if b.strip())
if len(data) >= 4096:
    sys.exit("the plan is %d bytes; the fuzzer reads at most 4096" % len(data))
open(sys.argv[2], "wb").write(data)
PY
mv "$seed.tmp" "$seed"
echo "wrote $seed ($(wc -c <"$seed") bytes)"
