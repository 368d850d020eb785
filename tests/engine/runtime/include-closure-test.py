#!/usr/bin/env python3
"""What a source file reaches through its includes (docs/architecture.md
section 1): fails when a file given reaches a forbidden header, directly or
through others, and prints the chain that does. Used to keep the scheduler
below the public engine API: it needs the request types
(radixchat/request.h), never radixchat/engine.h.

Walks quoted includes textually, resolving each against the including
file's folder, then the include roots of the engine and the floors below it."""
import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def closure(start, roots):
    """{file: the file that included it} for everything `start` reaches."""
    seen = {start: None}
    todo = [start]
    while todo:
        cur = todo.pop()
        for name in INCLUDE.findall(cur.read_text(encoding="utf-8")):
            for folder in [cur.parent] + roots:
                found = folder / name
                if found.is_file():
                    found = found.resolve()
                    if found not in seen:
                        seen[found] = cur
                        todo.append(found)
                    break
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, type=Path)
    ap.add_argument("--forbid", action="append", required=True, help="path under --root")
    ap.add_argument("files", nargs="+", help="paths under --root")
    a = ap.parse_args()
    root = a.root.resolve()
    roots = [root / d for d in ("engine", "engine/include", "kernels", "base/include")]
    forbidden = {(root / f).resolve() for f in a.forbid}
    missing = [f for f in list(a.files) + a.forbid if not (root / f).is_file()]
    if missing:
        sys.exit(f"no such file: {', '.join(missing)}")
    failed = False
    for f in a.files:
        seen = closure((root / f).resolve(), roots)
        for bad in forbidden & set(seen):
            chain, cur = [], bad
            while cur is not None:
                chain.append(cur.relative_to(root).as_posix())
                cur = seen[cur]
            print(f"{f} reaches {bad.relative_to(root)}: " + " <- ".join(chain))
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
