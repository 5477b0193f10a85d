#!/usr/bin/env bash
# Builds the fuzzers (clang, libFuzzer, ASan, UBSan) in build-fuzz/ and runs
# them for N seconds in all (default 60): two thirds for the frontend, one
# third for the runtime.
#
#   scripts/fuzz.sh [seconds [more libFuzzer options...]]
#
# Frontend (tests/fuzz/FrontendFuzzer.cpp): each input is lexed and parsed,
# then loaded with the prelude, elaborated to the tfc dialect and verified.
# Runtime (tests/fuzz/RuntimeFuzzer.cpp): each input is a .safetensors file,
# read and validated, every tensor read, and passed through the executor's
# input checks; inputs starting with '{' are also parsed as a JSON Plan.
# Its seeds are tests/fuzz/runtime-corpus; its working corpus is
# build-fuzz/runtime-corpus. TFC_FUZZ_TARGET=frontend|runtime runs only one
# (for all the seconds).
#
# Seeds: tests/fuzz/corpus and every .tfm under tests/lit, examples/ and
# frontend/ (the prelude), with their `import "..."` lines replaced by the
# imported text (the fuzzer loads in-memory sources, which cannot import).
# The working corpus (seeds plus what the fuzzer finds) is kept in
# build-fuzz/corpus between runs; crashes, hangs and leaks are written to
# build-fuzz/artifacts/. Replay one with
#   build-fuzz/tfc-frontend-fuzzer build-fuzz/artifacts/crash-...
# (TFC_FUZZ_PRINT=1 in the environment prints the diagnostics and the IR),
# or see the parser's diagnostics under the sanitizers with
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
  -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DCMAKE_BUILD_TYPE=Fuzz \
  >/dev/null
ninja -C "$build" tfc-frontend-fuzzer tfc-parse-asan tfc-runtime-fuzzer

corpus=$build/corpus
artifacts=$build/artifacts
mkdir -p "$corpus" "$artifacts"

# Prints `file` with each `import "path"` line replaced by the imported file
# (relative to the importing one), recursively up to a small depth.
inline_imports() {
  local file=$1 depth=$2 line
  local dir
  dir=$(dirname "$file")
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $line =~ ^[[:space:]]*import[[:space:]]+\"([^\"]+)\" ]] &&
       [ "$depth" -lt 8 ] && [ -f "$dir/${BASH_REMATCH[1]}" ]; then
      inline_imports "$dir/${BASH_REMATCH[1]}" $((depth + 1))
    else
      printf '%s\n' "$line"
    fi
  done <"$file"
}

# Seeds are copied under a name derived from their path, so files with the
# same base name in different folders do not overwrite each other. Tests of
# the elaborator's limits that take seconds say "Not a fuzzer seed": the
# fuzzer would spend its time mutating them.
while IFS= read -r -d '' seed; do
  rel=${seed#"$root"/}
  if grep -q 'Not a fuzzer seed' "$seed"; then
    continue
  fi
  if grep -q '^[[:space:]]*import[[:space:]]' "$seed"; then
    inline_imports "$seed" 0 >"$corpus/seed-${rel//\//_}"
  else
    cp "$seed" "$corpus/seed-${rel//\//_}"
  fi
done < <(find "$root/tests/fuzz/corpus" "$root/tests/lit" "$root/examples" \
           "$root/frontend" \
           -name '*.tfm' -type f -print0 2>/dev/null)

target=${TFC_FUZZ_TARGET:-both}
case $target in
  frontend) frontend_seconds=$seconds; runtime_seconds=0 ;;
  runtime) frontend_seconds=0; runtime_seconds=$seconds ;;
  *) frontend_seconds=$(( (seconds * 2 + 2) / 3 ))
     runtime_seconds=$(( seconds - frontend_seconds )) ;;
esac

# -timeout: an input at the elaborator's step or op limit (ElaboratorImpl.h)
# takes up to ~10 s under the sanitizers on an idle machine; a hang is longer.
common=(-timeout=30 -rss_limit_mb=2048 -artifact_prefix="$artifacts/"
        -print_final_stats=1)
if [ "$jobs" -gt 1 ]; then
  common+=(-fork="$jobs" -ignore_crashes=0)
fi
if [ "$frontend_seconds" -gt 0 ]; then
  "$build/tfc-frontend-fuzzer" -max_total_time="$frontend_seconds" \
    -max_len=4096 -dict="$root/tests/fuzz/tfm.dict" "${common[@]}" "$@" \
    "$corpus"
fi
if [ "$runtime_seconds" -gt 0 ]; then
  mkdir -p "$build/runtime-corpus"
  "$build/tfc-runtime-fuzzer" -max_total_time="$runtime_seconds" \
    -max_len=4096 "${common[@]}" "$@" \
    "$build/runtime-corpus" "$root/tests/fuzz/runtime-corpus"
fi
