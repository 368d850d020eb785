#!/usr/bin/env bash
# Part of check-deb.sh: every file the desktop entry and the man pages name
# must be in the unpacked packages.
#   check-named-files.sh ROOT CUDA(yes|no)
# ROOT holds every package of the build. Checked: the desktop entry's Exec
# and TryExec programs and its Icon; each program in usr/bin has a man page;
# each absolute path and each "name(1)" a man page mentions exists (a path
# under /usr/lib/radixchat/ only when the build has the CUDA plugin).
set -euo pipefail
root=$1 cuda=$2
fail() { echo "check-named-files: FAIL: $*" >&2; exit 1; }
checked=0

for entry in "$root"/usr/share/applications/*.desktop; do
  [[ -e "$entry" ]] || continue
  for key in Exec TryExec; do
    prog=$(sed -n "s/^$key=\([^ ]*\).*/\1/p" "$entry" | head -1)
    [[ -z "$prog" ]] && continue
    [[ "$prog" == /* ]] || prog=/usr/bin/$prog
    [[ -x "$root$prog" ]] || fail "$(basename "$entry") $key names $prog, not in the package"
    checked=$((checked + 1))
  done
  icon=$(sed -n 's/^Icon=//p' "$entry" | head -1)
  [[ -n "$icon" ]] || fail "$(basename "$entry") has no Icon"
  compgen -G "$root/usr/share/icons/hicolor/*/apps/$icon.*" >/dev/null ||
    fail "$(basename "$entry") Icon=$icon: no such icon in the package"
  checked=$((checked + 1))
done

for exe in "$root"/usr/bin/*; do
  page="$root/usr/share/man/man1/$(basename "$exe").1.gz"
  [[ -f "$page" ]] || fail "$(basename "$exe") has no man page"
  checked=$((checked + 1))
done

for page in "$root"/usr/share/man/man*/*.gz; do
  text=$(zcat "$page" | sed 's/\\-/-/g; s/\\f[BIRP]//g')
  while read -r path; do
    [[ -z "$path" ]] && continue
    if [[ "$path" == /usr/lib/radixchat/* && $cuda != yes ]]; then continue; fi
    [[ -e "$root$path" ]] || fail "$(basename "$page") names $path, not in the packages"
    checked=$((checked + 1))
  done < <(grep -o '/\(usr\|etc\)/[A-Za-z0-9_./+-]*[A-Za-z0-9_]' <<<"$text" | sort -u)
  while read -r name section; do
    [[ -f "$root/usr/share/man/man$section/$name.$section.gz" ]] ||
      fail "$(basename "$page") refers to $name($section), not in the packages"
    checked=$((checked + 1))
  done < <(grep -o '^\.BR [a-z][a-z0-9-]* ([1-8])' <<<"$text" | sed 's/^\.BR \(.*\) (\(.\))/\1 \2/')
done
((checked > 0)) || fail "nothing was checked"
echo "check-named-files: ok ($checked names)"
