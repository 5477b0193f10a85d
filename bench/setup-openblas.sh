#!/usr/bin/env bash
# Makes OpenBLAS available to bench/compare_pytorch.py without changing the
# system: Debian's python3-torch calls the system libblas.so.3, which is the
# netlib *reference* BLAS unless an optimized BLAS is installed (then PyTorch's
# fp32 matmuls run at a few GFLOP/s). This downloads Debian's
# libopenblas0-pthread with `apt-get download` and unpacks it under
# bench/.deps/openblas; compare_pytorch.py puts its openblas-pthread folder
# (libblas.so.3 -> OpenBLAS) first on LD_LIBRARY_PATH for the PyTorch runs.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=$here/.deps/openblas
if [ -e "$dest/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3" ]; then
  echo "setup-openblas: already in $dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libopenblas0-pthread)
mkdir -p "$dest"
dpkg -x "$tmp"/libopenblas0-pthread_*.deb "$dest"
echo "setup-openblas: OpenBLAS unpacked in $dest"
