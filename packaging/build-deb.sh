#!/usr/bin/env bash
# Builds the Debian package from a build tree (default: ./build, configured
# and built as by quickstart.sh) and prints the .deb's path.
#   packaging/build-deb.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
cmake --build "$build" >/dev/null
cd "$build"
cpack -G DEB -B "$build/deb" >/dev/null
ls "$build"/deb/radixchat_*.deb
