#!/usr/bin/env bash
# Runs a command where no CUDA library is visible, as on a machine without
# NVIDIA's toolkit (build-notes.md "Hiding the CUDA toolkit in a test"):
#   unshare -m packaging/without-cuda.sh COMMAND [ARGS...]
# In its private mount namespace it bind-mounts an empty folder over every
# CUDA toolkit folder under /usr/local, then checks that they really are
# empty and that no libcudart/libcublas is left anywhere ld.so looks (its
# cache still names the hidden files, so a program that needs them fails
# exactly as on a machine without CUDA). Any doubt exits 1, so a caller never
# mistakes "could not hide CUDA" for "runs without CUDA".
set -euo pipefail

fail() { echo "without-cuda: $*" >&2; exit 1; }
[[ $# -ge 1 ]] || fail "usage: unshare -m $0 COMMAND [ARGS...]"
# Outside a private namespace the mounts below would hide CUDA for everyone.
[[ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ]] ||
  fail "not in a private mount namespace (run me under unshare -m)"

empty=$(mktemp -d)
trap 'rmdir "$empty" 2>/dev/null || true' EXIT
hidden=()
for d in /usr/local/cuda /usr/local/cuda-*; do
  [[ -e "$d" ]] || continue
  real=$(readlink -f "$d")
  [[ -d "$real" ]] || continue
  [[ " ${hidden[*]} " == *" $real "* ]] && continue
  mount --bind "$empty" "$real" || fail "cannot bind-mount over $real"
  hidden+=("$real")
done
for d in "${hidden[@]}"; do
  [[ -z "$(ls -A "$d")" ]] || fail "$d is still visible after the bind mount"
done

# Whatever ld.so could still find: its cache entries and the usual folders.
leftover=()
while read -r path; do
  [[ -e "$path" ]] && leftover+=("$path")
done < <(ldconfig -p | awk '/lib(cudart|cublas|cublasLt)\.so/ {print $NF}')
while read -r path; do
  leftover+=("$path")
done < <(find /lib /usr/lib /usr/local/lib -name 'libcudart.so*' -o -name 'libcublas*.so*' 2>/dev/null)
[[ ${#leftover[@]} -eq 0 ]] || fail "CUDA libraries still visible: ${leftover[*]}"
echo "without-cuda: hidden ${hidden[*]:-nothing (no toolkit installed)}; no libcudart/libcublas visible" >&2
"$@"
