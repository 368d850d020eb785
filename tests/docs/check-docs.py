#!/usr/bin/env python3
"""The documentation check: what README.md and docs/ promise still holds.

  check-docs.py --root SOURCE_DIR --cli PATH/TO/radixchat-cli [--gui PATH/TO/radixchat]

Fails (exit 1, one line per problem on stderr) when
  - a relative link or image in README.md or docs/ points to a file that does
    not exist, or to a heading anchor the target Markdown file does not have;
  - a `radixchat-cli SUB` named in the docs' code (fenced blocks and inline
    code) is not a subcommand, or a --flag written after it on the same
    command is not in `radixchat-cli SUB --help`;
  - a --flag in docs/cli.md's section for a subcommand is not in that
    subcommand's --help ("Engine flags": in every command that runs a model);
  - the other way round: an option in a subcommand's --help is not named in
    docs/cli.md's section for it (or, for a command that runs a model, in
    "Engine flags");
  - packaging/radixchat-cli.1 lacks a subcommand, or a man page
    (packaging/*.1) names a --flag its program does not have; with --gui,
    an option of `radixchat --help` missing from packaging/radixchat.1;
  - a code comment cites "docs/architecture.md section N" and
    docs/architecture.md has no section N;
  - code or docs mention design.md, a file that is not in the repository.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys

CODE_DIRS = ["base", "kernels", "engine", "app", "ui", "tests", "packaging"]
CODE_SUFFIXES = {".h", ".cpp", ".inc", ".cu", ".cuh", ".txt", ".cmake", ".sh", ".py", ".mjs"}
ENGINE_COMMANDS = ["generate", "chat", "logits", "bench", "serve"]
FLAG = re.compile(r"--[a-z0-9][a-z0-9-]*")

problems = []


def problem(where, what):
    problems.append(f"{where}: {what}")


def doc_files(root):
    files = [root / "README.md"]
    files += sorted((root / "docs").rglob("*.md"))
    return [f for f in files if f.is_file()]


def split_code(text):
    """(prose lines, code snippets): fenced blocks become one snippet per
    command (indented or backslash-continued lines join the one above);
    inline code spans become one snippet each. Prose keeps line numbers."""
    prose, snippets = [], []
    in_fence = False
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            prose.append((n, ""))
            continue
        if in_fence:
            if snippets and snippets[-1][2] and (line.startswith((" ", "\t")) or snippets[-1][1].endswith("\\")):
                snippets[-1] = (snippets[-1][0], snippets[-1][1].rstrip("\\") + " " + line.strip(), True)
            else:
                snippets.append((n, line, True))
            prose.append((n, ""))
            continue
        prose.append((n, line))
        for span in re.findall(r"`([^`]+)`", line):
            snippets.append((n, span, False))
    return prose, snippets


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[`*_]", "", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found = set()
        in_fence = False
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            elif not in_fence and re.match(r"#{1,6} ", line):
                found.add(slug(line.lstrip("#")))
        cache[path] = found
    return cache[path]


def check_links(root, path):
    prose, _ = split_code(path.read_text(encoding="utf-8"))
    for n, line in prose:
        line = re.sub(r"`[^`]*`", "", line)
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}:{n}"
            if not dest.exists():
                problem(where, f"link to {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problem(where, f"link to {target}: {dest.name} has no heading #{anchor}")


def run_help(argv):
    """The program's --help text, or None when it cannot run or fails. The
    desktop app gets the offscreen platform: --help needs no display."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    try:
        out = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=60, env=env)
    except OSError:
        return None
    return out.stdout if out.returncode == 0 else None


def help_flags(cli, sub):
    """(every --flag the help text mentions, the options it defines): a
    description may name another command's flag, so only the second is what
    the subcommand must document."""
    text = run_help([cli, sub])
    if text is None:
        return set(), set()
    return set(FLAG.findall(text)), option_names(text)


def option_names(help_text):
    """The options a --help defines: CLI11 and Qt both start each option's
    line with its names ("  -h,--help", "  --model TEXT", "  -v, --version")."""
    names = set()
    for line in help_text.split("\n"):
        m = re.match(r"\s+(?:-\w,\s*)?(--[a-z0-9][a-z0-9-]*)", line)
        if m:
            names.add(m.group(1))
    return names - {"--help", "--help-all", "--version"}


def check_cli(root, cli, files):
    top = subprocess.run([cli, "--help"], capture_output=True, text=True, timeout=60).stdout
    subs = set(re.findall(r"^  ([a-z][a-z-]+)\s", top.split("Subcommands:")[-1], re.M))
    if not subs:
        problem(cli, "--help lists no subcommands")
        return
    helps = {s: help_flags(cli, s) for s in subs}
    flags = {s: helps[s][0] for s in subs}
    for path in files:
        _, snippets = split_code(path.read_text(encoding="utf-8"))
        for n, code, _ in snippets:
            for m in re.finditer(r"(?:^|[\s/(])radixchat-cli\s+([a-z][a-z-]*)(?![\w/.-])(.*)", code):
                sub, rest = m.group(1), m.group(2)
                rest = re.split(r"\s#\s|\s\|\s|;|&&", rest)[0]
                where = f"{path.relative_to(root)}:{n}"
                if sub not in subs:
                    problem(where, f"radixchat-cli {sub}: no such subcommand")
                    continue
                for flag in FLAG.findall(rest):
                    if flag not in flags[sub]:
                        problem(where, f"radixchat-cli {sub} has no {flag}")
    cli_md = root / "docs" / "cli.md"
    if not cli_md.exists():
        return
    section, allowed, names = None, None, []
    documented = {s: set() for s in subs}  # flags named in each subcommand's section
    engine_documented = set()
    prose, snippets = split_code(cli_md.read_text(encoding="utf-8"))
    code_by_line = {}
    for n, code, _ in snippets:
        code_by_line.setdefault(n, []).append(code)
    for n, line in prose:
        heading = re.match(r"## (.*)", line)
        if heading:
            section = heading.group(1).strip()
            names = [s.strip() for s in section.split(",")]
            if section == "Engine flags":
                allowed = set.intersection(*(flags.get(c, set()) for c in ENGINE_COMMANDS))
            elif all(s in subs for s in names):
                allowed = set.union(*(flags[s] for s in names))
            else:
                problem(f"docs/cli.md:{n}", f"section '{section}' names no subcommand")
                allowed = None
            continue
        if allowed is None:
            continue
        for code in code_by_line.get(n, []):
            named = set(FLAG.findall(code))
            if section == "Engine flags":
                engine_documented |= named
            else:
                for s in names:
                    documented[s] |= named
            if "radixchat-cli" in code:
                continue  # checked above, against its own subcommand
            for flag in named:
                if flag not in allowed:
                    problem(f"docs/cli.md:{n}", f"'{section}' names {flag}, which its --help lacks")
    for s in sorted(subs):
        where = f"'## {s}'" + (" or 'Engine flags'" if s in ENGINE_COMMANDS else "")
        for flag in sorted(helps[s][1]):
            if flag in documented[s] or (s in ENGINE_COMMANDS and flag in engine_documented):
                continue
            problem("docs/cli.md", f"radixchat-cli {s} has {flag}, which docs/cli.md does not name under {where}")
    check_man_pages(root, subs, set().union(set(FLAG.findall(top)), *flags.values()))


def man_text(path):
    """A man page's text with roff's escaped hyphens and font switches undone."""
    text = path.read_text(encoding="utf-8").replace("\\-", "-")
    return re.sub(r"\\f[BIRP]", "", text)


def check_man_pages(root, subs, cli_flags):
    page = root / "packaging" / "radixchat-cli.1"
    if not page.exists():
        problem("packaging/radixchat-cli.1", "no such file")
        return
    text = man_text(page)
    commands = text.split(".SH COMMANDS", 1)[-1].split("\n.SH ", 1)[0]
    listed = set(re.findall(r"^\.B\s+([a-z][a-z-]*)", commands, re.M))
    for s in sorted(subs - listed):
        problem("packaging/radixchat-cli.1", f"lacks the subcommand {s}")
    for flag in sorted(set(FLAG.findall(text)) - cli_flags - {"--help", "--version"}):
        problem("packaging/radixchat-cli.1", f"names {flag}, which no radixchat-cli subcommand has")


def check_gui_man_page(root, gui):
    """radixchat.1 against `radixchat --help`, both ways (its hidden options,
    for tests and screenshots, are not in --help and need no page)."""
    text = run_help([gui])
    if text is None:
        problem(gui, "--help failed (is the desktop app built?)")
        return
    options = option_names(text)
    page = root / "packaging" / "radixchat.1"
    named = set(FLAG.findall(man_text(page))) - {"--help", "--version"}
    for flag in sorted(options - named):
        problem("packaging/radixchat.1", f"lacks {flag}, which `radixchat --help` lists")
    for flag in sorted(named - options):
        problem("packaging/radixchat.1", f"names {flag}, which `radixchat --help` does not list")


def code_files(root):
    for d in CODE_DIRS:
        for p in sorted((root / d).rglob("*")):
            if p.is_file() and (p.suffix in CODE_SUFFIXES or p.name == "CMakeLists.txt"):
                if "corpus" not in p.parts:
                    yield p
    yield root / "CMakeLists.txt"


def check_citations(root):
    arch = root / "docs" / "architecture.md"
    sections = set()
    if arch.exists():
        sections = set(re.findall(r"^## (\d+)\. ", arch.read_text(encoding="utf-8"), re.M))
    cite = re.compile(r"architecture\.md,?\s+sections?\s+(\d+(?:(?:,\s*|\s+and\s+)\d+)*)")
    for path in list(code_files(root)) + doc_files(root):
        if path == pathlib.Path(__file__).resolve():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        # A citation may wrap onto the next comment line.
        flat = re.sub(r"\n\s*(//|#)\s*", " ", text)
        for m in cite.finditer(flat):
            for num in re.findall(r"\d+", m.group(1)):
                if num not in sections:
                    problem(str(path.relative_to(root)), f"cites docs/architecture.md section {num}, which does not exist")
        if "design.md" in text:
            problem(str(path.relative_to(root)), "mentions design.md, which is not in the repository")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True, type=pathlib.Path)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--gui", help="the desktop app, to check packaging/radixchat.1 against")
    args = ap.parse_args()
    root = args.root.resolve()
    files = doc_files(root)
    for f in files:
        check_links(root, f)
    check_cli(root, args.cli, files)
    if args.gui:
        check_gui_man_page(root, args.gui)
    check_citations(root)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"checked {len(files)} documents: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
