#!/usr/bin/env bash
# Part of check-deb.sh: what a build without the GUI and without CUDA would
# package, read from its generated install scripts (configure only: no
# compile, a few seconds). It must install no desktop entry, metainfo, icon
# or radixchat(1), and CPack must make only the radixchat package. The same
# reading of the real build tree must find them (so the check can fail).
#   check-configure-only.sh SOURCE_DIR SCRATCH_DIR REAL_BUILD_DIR
set -euo pipefail
src=$1 scratch=$2 real=$3
fail() { echo "check-configure-only: FAIL: $*" >&2; exit 1; }

# The install() destinations of a tree, one file name a line.
installed() { find "$1" -name cmake_install.cmake -exec cat {} + | grep -o '[A-Za-z0-9_.-]*\.\(desktop\|metainfo\.xml\|svg\|1\.gz\|so\)"' | tr -d '"' | sort -u; }
components() { sed -n 's/^set(CPACK_COMPONENTS_ALL "\(.*\)")$/\1/p' "$1/CPackConfig.cmake"; }

cmake -S "$src" -B "$scratch" -G Ninja -DRADIXCHAT_GUI=OFF -DRADIXCHAT_CUDA=OFF \
  -DRADIXCHAT_TESTS=OFF >"$scratch.log" 2>&1 || { cat "$scratch.log"; fail "configure failed"; }
nogui=$(installed "$scratch")
for f in io.github.radixchat.RadixChat.desktop io.github.radixchat.RadixChat.metainfo.xml \
         radixchat.svg radixchat.1.gz libradixchat-cuda.so; do
  grep -qx "$f" <<<"$nogui" && fail "a build without GUI and CUDA would install $f"
done
grep -qx radixchat-cli.1.gz <<<"$nogui" || fail "cannot read the install scripts (no radixchat-cli.1.gz)"
[[ "$(components "$scratch")" == Unspecified ]] ||
  fail "a CPU-only build packages components '$(components "$scratch")', not only radixchat"

# The real tree, read the same way.
have=$(installed "$real")
if grep -q '^RADIXCHAT_GUI:BOOL=ON' "$real/CMakeCache.txt"; then
  grep -qx io.github.radixchat.RadixChat.desktop <<<"$have" ||
    fail "the check cannot see the desktop entry of the GUI build"
fi
if [[ -f "$real/lib/radixchat/libradixchat-cuda.so" ]]; then
  [[ "$(components "$real")" == "Unspecified;cuda" ]] || fail "CUDA build without the cuda component"
fi
echo "check-configure-only: ok (no GUI, no CUDA: $(echo $nogui))"
