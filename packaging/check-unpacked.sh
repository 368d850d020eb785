#!/usr/bin/env bash
# Part of check-deb.sh, run inside without-cuda.sh (no CUDA library visible):
#   check-unpacked.sh CPU_ROOT ALL_ROOT CUDA(yes|no) GUI(yes|no) SCREENSHOT [FAKE_DRIVER]
# FAKE_DRIVER: a stand-in NVIDIA driver reporting one device, so that the
# plugin is opened (and its hidden cuBLAS named) on a machine without a GPU.
# CPU_ROOT holds radixchat unpacked, ALL_ROOT radixchat and radixchat-cuda.
# Both CLIs must start, choose the CPU and say why; the full set must
# generate on its bundled model and run the desktop app under Xvfb.
set -euo pipefail
cpu=$1 all=$2 cuda=$3 gui=$4 shot=$5 fake_driver=${6:-}
fail() { echo "check-unpacked: FAIL: $*" >&2; exit 1; }

for root in "$cpu" "$all"; do
  for exe in "$root"/usr/bin/*; do
    missing=$(ldd "$exe" | grep 'not found' || true)
    [[ -z "$missing" ]] || fail "$exe: $missing"
  done
done

"$cpu/usr/bin/radixchat-cli" info | tee "$cpu/info.txt"
grep -q '^backend: cpu' "$cpu/info.txt" || fail "radixchat alone did not choose the CPU"
if [[ $cuda == yes ]]; then
  grep -q '^cuda plugin: not installed' "$cpu/info.txt" || fail "no 'not installed' reason"
  grep -q '^backend: cpu.*CUDA plugin not installed' "$cpu/info.txt" || fail "the backend line gives no reason"
else
  grep -q '^cuda plugin: not built' "$cpu/info.txt" || fail "no 'not built' reason"
fi

"$all/usr/bin/radixchat-cli" info | tee "$all/info.txt"
grep -q '^backend: cpu' "$all/info.txt" || fail "no CPU without CUDA libraries"
if [[ $cuda == yes ]]; then
  # No GPU answers (no driver visible, or none on this machine): the plugin
  # is not opened. With a driver that has a device, the plugin is there but
  # cuBLAS is not: the reason names the library.
  grep -q "^cuda plugin: not loaded, no NVIDIA GPU found\|^cuda plugin: $all/usr/lib/radixchat/libradixchat-cuda.so did not load: .*libcublas" \
    "$all/info.txt" || fail "neither 'no NVIDIA GPU found' nor the plugin's missing library"
  if [[ -n "$fake_driver" ]]; then
    RADIXCHAT_CUDA_DRIVER="$fake_driver" "$all/usr/bin/radixchat-cli" info | tee "$all/info-driver.txt"
    grep -q "^cuda plugin: $all/usr/lib/radixchat/libradixchat-cuda.so did not load: .*libcublas" \
      "$all/info-driver.txt" || fail "the plugin's missing library is not named"
  fi
fi

# A prompt the demo model continues (a question may get an end-of-text at once).
out=$("$all/usr/bin/radixchat-cli" generate --prompt "A radix tree" --max-tokens 16 \
  --threads 2)
echo "generate: $out"
[[ -n "${out//[[:space:]]/}" ]] || fail "generate printed nothing"

if [[ $gui == yes ]]; then
  xvfb-run -a -s '-screen 0 1280x800x24' "$all/usr/bin/radixchat" --data-dir "$HOME/gui" \
    --send "What is a radix tree?" --screenshot "$shot" --quit-after-reply ||
    fail "the desktop app failed (exit $?)"
  [[ -s "$shot" ]] || fail "no screenshot"
fi
echo "check-unpacked: ok"
