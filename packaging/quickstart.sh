#!/usr/bin/env bash
# The README's two quick-start commands, on a fresh Debian 12 (bookworm):
#   bash packaging/quickstart.sh run    install what is missing, build, start the desktop app
#                                       (the terminal chat when there is no display)
#   bash packaging/quickstart.sh test   install what is missing, build, run the whole suite
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail

mode=${1:-run}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${RADIXCHAT_BUILD_DIR:-$root/build}

packages=(
  cmake ninja-build g++ pkg-config git
  qt6-base-dev libqt6opengl6-dev qt6-svg-dev libimgui-dev
  libsentencepiece-dev sentencepiece libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libcpp-httplib-dev nlohmann-json3-dev libcli11-dev libxxhash-dev
  libpcre2-dev libpoppler-cpp-dev nodejs npm
  libhiredis-dev redis-server libsodium-dev
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev python3-zmq python3-msgpack
  xvfb xauth xdotool python3
  dpkg-dev lintian desktop-file-utils appstream
)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    # NodeSource's nodejs ships npm itself and conflicts with Debian's npm.
    [[ $p == npm ]] && command -v npm >/dev/null && continue
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return
  local sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  echo "quickstart: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build_all() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j "$(nproc)"
}

install_missing
build_all
case "$mode" in
  run)
    # The desktop app; without a display (ssh, a container) the same engine
    # chats in the terminal instead.
    if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
      echo "quickstart: no display (DISPLAY and WAYLAND_DISPLAY are empty): starting the terminal chat instead of the desktop app" >&2
      exec "$build/app/radixchat-cli" chat
    fi
    exec "$build/app/gui/radixchat" "${@:2}"
    ;;
  test)
    cd "$build"
    # Everything the display and model tests need is installed above: in
    # this suite a skipped test would be a check that never ran, so it fails.
    export RADIXCHAT_TESTS_MUST_RUN=1
    exec ctest --output-on-failure -j "$(nproc)" --timeout 900
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
