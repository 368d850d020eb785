#!/usr/bin/env bash
# screenshot.sh: the README's picture of the app, made by the real program.
#
#   bash packaging/screenshot.sh [--build DIR] [--out FILE]
#
# Starts build/app/gui/radixchat under Xvfb (xvfb-run) on the bundled model
# with a fresh data directory, sends three questions of one chat (so the
# cache panel shows them as one path of the radix tree), saves the window
# once the last reply is stored, and quits. Writes docs/radixchat.png unless
# --out says otherwise, reduced to 256 colours when ImageMagick's convert is
# there (smaller in git). Needs xvfb-run (package xvfb) and a GUI build.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
out="$root/docs/radixchat.png"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "screenshot.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
app="$build/app/gui/radixchat"
if [ ! -x "$app" ]; then
  echo "screenshot.sh: $app is missing: build the radixchat target (a GUI build)" >&2
  exit 1
fi
if ! command -v xvfb-run >/dev/null; then
  echo "screenshot.sh: xvfb-run not found (apt-get install xvfb xauth)" >&2
  exit 1
fi

data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
raw="$data/shot.png"
QT_QPA_PLATFORM=xcb timeout 600 xvfb-run -a -s '-screen 0 1440x900x24' "$app" \
  --data-dir "$data" \
  --send "What is a KV cache?" \
  --send "Why does reusing a prefix save time?" \
  --send "And what does LRU mean?" \
  --screenshot "$raw" --quit-after-reply
if [ ! -s "$raw" ]; then
  echo "screenshot.sh: the app left no screenshot" >&2
  exit 1
fi
if ! { command -v convert >/dev/null && convert "$raw" -colors 256 "PNG8:$out" 2>/dev/null; }; then
  cp "$raw" "$out"
fi
echo "wrote $out" >&2
