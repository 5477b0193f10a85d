#!/usr/bin/env bash
# Builds the frontend fuzzer (clang, libFuzzer, ASan, UBSan) in build-fuzz/
# and runs it for N seconds (default 60):
#
#   scripts/fuzz.sh [seconds [more libFuzzer options...]]
#
# Seeds: tests/fuzz/corpus and every .tfm under tests/lit, examples/ and
# frontend/ (the prelude). The working corpus (seeds plus what the fuzzer
# finds) is kept in build-fuzz/corpus between runs; crashes, hangs and leaks
# are written to build-fuzz/artifacts/. Replay one with
#   build-fuzz/tfc-frontend-fuzzer build-fuzz/artifacts/crash-...
# or see its diagnostics under the sanitizers with
#   build-fuzz/tfc-parse-asan build-fuzz/artifacts/crash-...
# Environment: TFC_FUZZ_BUILD_DIR (default build-fuzz), TFC_FUZZ_JOBS (run
# that many fuzzing processes with -fork; default 1), CXX (default clang++).
set -euo pipefail

seconds=${1:-60}
shift || true
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TFC_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${TFC_FUZZ_JOBS:-1}

cmake -G Ninja -S "$root/tests/fuzz" -B "$build" \
  -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >/dev/null
ninja -C "$build" tfc-frontend-fuzzer tfc-parse-asan

corpus=$build/corpus
artifacts=$build/artifacts
mkdir -p "$corpus" "$artifacts"
# Seeds are copied under a name derived from their path, so files with the
# same base name in different folders do not overwrite each other.
while IFS= read -r -d '' seed; do
  rel=${seed#"$root"/}
  cp "$seed" "$corpus/seed-${rel//\//_}"
done < <(find "$root/tests/fuzz/corpus" "$root/tests/lit" "$root/examples" \
           "$root/frontend" \
           -name '*.tfm' -type f -print0 2>/dev/null)

args=(-max_total_time="$seconds" -max_len=4096 -timeout=5 -rss_limit_mb=2048
      -dict="$root/tests/fuzz/tfm.dict" -artifact_prefix="$artifacts/"
      -print_final_stats=1)
if [ "$jobs" -gt 1 ]; then
  args+=(-fork="$jobs" -ignore_crashes=0)
fi
exec "$build/tfc-frontend-fuzzer" "${args[@]}" "$@" "$corpus"
