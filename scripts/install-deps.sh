#!/usr/bin/env bash
# Installs everything tfc needs on Debian 12. Safe to run again: apt-get skips what is there.
set -euo pipefail
packages=(
  cmake ninja-build ccache clang g++ make python3
  libclang-rt-14-dev  # libFuzzer and the sanitizers' runtimes (scripts/fuzz.sh)
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libhalide14-0-dev
  libcli11-dev libgtest-dev nlohmann-json3-dev
  libpcre2-dev libicu-dev pkg-config  # runtime/tokenizer: GPT-2 regex, Unicode normalization
  zlib1g-dev libzstd-dev libedit-dev libcurl4-openssl-dev libxml2-dev
  pocl-opencl-icd ocl-icd-opencl-dev  # the GPU schedules run on the CPU (tests/lit/cuda/opencl-*.test)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all packages present"
