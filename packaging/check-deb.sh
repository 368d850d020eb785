#!/usr/bin/env bash
# Builds the .deb and checks it as a distribution would: contents and
# metadata, desktop-file-validate, appstreamcli validate, lintian (no
# errors), then unpacks it with dpkg -x into a temporary root and runs the
# unpacked radixchat-cli on the unpacked bundled model.
#   packaging/check-deb.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deb=$("$here/build-deb.sh" "${1:-}")
echo "package: $deb"

fail() { echo "check-deb: $*" >&2; exit 1; }

info=$(dpkg-deb --info "$deb")
grep -q '^ Package: radixchat$' <<<"$info" || fail "package name"
grep -q '^ Depends: .*libc6' <<<"$info" || fail "no shlibdeps-computed Depends line"
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for f in ./usr/bin/radixchat-cli \
         ./usr/share/radixchat/radixchat-demo.gguf ./usr/share/radixchat/tokenizer.model \
         ./usr/share/applications/io.github.radixchat.RadixChat.desktop \
         ./usr/share/metainfo/io.github.radixchat.RadixChat.metainfo.xml \
         ./usr/share/icons/hicolor/scalable/apps/radixchat.svg \
         ./usr/share/icons/hicolor/256x256/apps/radixchat.png \
         ./usr/share/man/man1/radixchat-cli.1.gz \
         ./usr/share/doc/radixchat/copyright; do
  grep -qx "$f" <<<"$contents" || fail "missing $f"
done
if grep -q ' \./usr/\(lib\|include\)/' <<<"$(dpkg-deb --contents "$deb")"; then
  fail "libraries or headers leaked into the package"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg -x "$deb" "$tmp/root"
desktop-file-validate "$tmp/root/usr/share/applications/io.github.radixchat.RadixChat.desktop"
appstreamcli validate --no-net --explain \
  "$tmp/root/usr/share/metainfo/io.github.radixchat.RadixChat.metainfo.xml"
lintian --fail-on error "$deb"

# The unpacked program must find the unpacked model, not the source tree's.
env -u RADIXCHAT_MODEL "$tmp/root/usr/bin/radixchat-cli" info | tee "$tmp/info.txt"
grep -q "bundled model: $tmp/root/usr/share/radixchat/radixchat-demo.gguf" "$tmp/info.txt" ||
  fail "the unpacked radixchat-cli does not use the unpacked model"
env -u RADIXCHAT_MODEL "$tmp/root/usr/bin/radixchat-cli" generate \
  --prompt "What is a radix tree?" --max-tokens 16 --threads 2
"$tmp/root/usr/bin/radixchat-cli" --version
echo "check-deb: ok"
