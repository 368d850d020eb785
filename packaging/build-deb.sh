#!/usr/bin/env bash
# Builds the Debian packages from a build tree (default: ./build, configured
# and built as by quickstart.sh) and prints their paths, one a line:
# radixchat_*.deb always, radixchat-cuda_*.deb when the build has the CUDA
# plugin (packaging/CMakeLists.txt).
#   packaging/build-deb.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
cmake --build "$build" >/dev/null
cd "$build"
rm -f "$build"/deb/radixchat*.deb
cpack -G DEB -B "$build/deb" >/dev/null
ls "$build"/deb/radixchat*.deb
