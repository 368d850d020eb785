#!/usr/bin/env python3
"""The docs check checks both ways: run check-docs.py on a small made-up
tree and a fake radixchat-cli whose help is written here, so the expected
problems are known without the real program.

  check-docs-test.py PATH/TO/check-docs.py

A complete tree passes; a flag the program has but docs/cli.md does not name
fails, for a plain subcommand and for a command that runs a model; a man page
without a subcommand fails, and so does one naming a flag nothing has; a flag
only mentioned in another option's description needs no entry.
"""
import pathlib
import subprocess
import sys
import tempfile

ENGINE = ["generate", "chat", "logits", "bench", "serve"]

FAKE_CLI = '''#!/usr/bin/env python3
import sys
ENGINE = %r
EXTRA = %r
args = sys.argv[1:]
if args == ["--help"]:
    print("Usage: radixchat-cli [OPTIONS] SUBCOMMAND\\n\\nSubcommands:")
    for s in ENGINE + ["keygen"]:
        print("  %%-28s does things" %% s)
    sys.exit(0)
sub = args[0]
print("Usage: radixchat-cli %%s [OPTIONS]\\n\\nOptions:" %% sub)
print("  -h,--help                   Print this help message and exit")
if sub in ENGINE:
    print("  --model TEXT                GGUF model file")
    print("  --threads INT:NONNEGATIVE   CPU threads")
if sub == "generate":
    print("  --prompt TEXT REQUIRED      prompt text")
if sub == "keygen":
    print("  --out TEXT REQUIRED         key file (for serve with --model)")
for flag in EXTRA.get(sub, []):
    print("  %%s TEXT   an option the docs may lack" %% flag)
'''

CLI_MD = """# radixchat-cli

## Engine flags

| flag | meaning |
| --- | --- |
| `--model FILE` | the model |
| `--threads N` | threads |

## generate

`--prompt TEXT` is the prompt.

## keygen

`keygen --out FILE` writes a key.
"""

MAN = r""".TH RADIXCHAT-CLI 1
.SH COMMANDS
.TP
.B generate \-\-prompt \fItext\fR
Complete a prompt.
.TP
.B chat
.TP
.B logits
.TP
.B bench
.TP
.B serve \fR[\fB\-\-threads\fR \fIn\fR]
.TP
.B keygen \-\-out \fIfile\fR
"""


def run(checker, tmp, extra=None, cli_md=CLI_MD, man=MAN):
    root = pathlib.Path(tmp) / "root"
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "packaging").mkdir(exist_ok=True)
    (root / "CMakeLists.txt").write_text("")
    (root / "README.md").write_text("# Fake\n\nSee [the CLI](docs/cli.md).\n")
    (root / "docs" / "architecture.md").write_text("# Architecture\n\n## 1. Floors\n")
    (root / "docs" / "cli.md").write_text(cli_md)
    (root / "packaging" / "radixchat-cli.1").write_text(man)
    cli = pathlib.Path(tmp) / "radixchat-cli"
    cli.write_text(FAKE_CLI % (ENGINE, extra or {}))
    cli.chmod(0o755)
    out = subprocess.run([sys.executable, checker, "--root", str(root), "--cli", str(cli)],
                         capture_output=True, text=True, timeout=120)
    return out.returncode, out.stderr


failures = []


def expect(name, result, code, lines):
    got_code, err = result
    if got_code != code:
        failures.append(f"{name}: exit {got_code}, expected {code}; stderr:\n{err}")
    for line in lines:
        if line not in err:
            failures.append(f"{name}: stderr lacks {line!r}; stderr:\n{err}")
    if code == 0 and err.strip():
        failures.append(f"{name}: unexpected problems:\n{err}")


def main():
    checker = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        expect("complete", run(checker, tmp), 0, [])
        expect("undocumented subcommand flag", run(checker, tmp, {"keygen": ["--force"]}), 1,
               ["radixchat-cli keygen has --force, which docs/cli.md does not name under '## keygen'"])
        expect("undocumented engine flag", run(checker, tmp, {"serve": ["--port"]}), 1,
               ["radixchat-cli serve has --port, which docs/cli.md does not name under "
                "'## serve' or 'Engine flags'"])
        expect("man page without a subcommand", run(checker, tmp, man=MAN.replace(".B logits\n", "")), 1,
               ["packaging/radixchat-cli.1: lacks the subcommand logits"])
        expect("a subcommand's name elsewhere in the man page",
               run(checker, tmp, man=MAN.replace(".B logits\n", "") + ".SH FILES\n.B logits\n"), 1,
               ["packaging/radixchat-cli.1: lacks the subcommand logits"])
        expect("man page with a flag nothing has",
               run(checker, tmp, man=MAN + ".TP\n.B \\-\\-no\\-such\\-flag\n"), 1,
               ["packaging/radixchat-cli.1: names --no-such-flag, which no radixchat-cli subcommand has"])
    for f in failures:
        print("FAIL " + f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
