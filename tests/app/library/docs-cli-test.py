#!/usr/bin/python3
"""radixchat-cli's documents end to end: `docs` add/list/search/rm, every
bad input refused with one stderr line naming it and the library unchanged,
`generate --doc`, `docs rm`'s purge of the document's KV from the disk
tier, and `serve --library` (GET /v1/documents, the chat
request's "documents" field, usage.prompt_tokens_details.document_tokens,
a 400 naming an unknown document).

Usage: docs-cli-test.py RADIXCHAT_CLI MODEL
"""
import json
import os
import random
import stat
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


# The cache tiers' folders and keys of this test, never the user's: set in main().
ENV = dict(os.environ)


def run(cli, *args):
    return subprocess.run([cli] + list(args), capture_output=True, text=True, timeout=300,
                          env=ENV)


def listing(cli, lib):
    r = run(cli, "docs", "list", "--json", "--library", lib)
    check(r.returncode == 0, "docs list --json: " + r.stderr)
    return json.loads(r.stdout) if r.returncode == 0 else None


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def docs_commands(cli, model, d):
    lib = os.path.join(d, "library.db")
    write(os.path.join(d, "garden.md"), b"# Garden\n\nThe stone bridge crosses a quiet river.\n")
    write(os.path.join(d, "market.html"),
          b"<html><body><script>hidden()</script><p>Bread &amp; silver at the market.</p></body></html>")
    r = run(cli, "docs", "add", os.path.join(d, "garden.md"), os.path.join(d, "market.html"),
            "--library", lib, "--model", model)
    check(r.returncode == 0 and "added garden.md" in r.stdout and "added market.html" in r.stdout,
          "docs add: " + r.stdout + r.stderr)
    check(stat.S_IMODE(os.stat(lib).st_mode) == 0o600, "the library file is 0600")
    docs = listing(cli, lib)
    check([x["name"] for x in docs] == ["garden.md", "market.html"], "library order: %r" % docs)
    check(docs[1]["format"] == "html" and docs[1]["tokens"] > 0 and docs[1]["chunks"] == 1,
          "html document: %r" % docs[1])
    # The same text again is the same document.
    write(os.path.join(d, "copy.md"), b"# Garden\n\nThe stone bridge crosses a quiet river.\n")
    r = run(cli, "docs", "add", os.path.join(d, "copy.md"), "--library", lib, "--model", model)
    check(r.returncode == 0 and "garden.md: already in the library" in r.stdout,
          "same text twice: " + r.stdout + r.stderr)
    r = run(cli, "docs", "search", "silver bread", "--json", "--library", lib)
    hits = json.loads(r.stdout) if r.returncode == 0 else []
    check(len(hits) == 1 and hits[0]["document"] == "market.html" and "hidden" not in hits[0]["text"],
          "docs search: %r %s" % (hits, r.stderr))

    bad = {
        "empty.txt": (b"", "is empty"),
        "blob.bin": (b"\x7fELF\x00\x01\x02", "binary file"),
        "latin1.txt": (b"caf\xe9\n", "not UTF-8"),
        "scan.pdf": (b"%PDF-1.4\n1 0 obj\n<< >>\nendobj\ntrailer\n<< >>\n%%EOF\n", "PDF"),
    }
    before = listing(cli, lib)
    for name, (data, why) in bad.items():
        path = os.path.join(d, name)
        write(path, data)
        r = run(cli, "docs", "add", path, "--library", lib)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and name in lines[0] and why in lines[0],
              "bad %s: rc %d, stderr %r" % (name, r.returncode, r.stderr))
    # A batch with one bad file adds none of them.
    write(os.path.join(d, "fine.txt"), b"fine words\n")
    r = run(cli, "docs", "add", os.path.join(d, "fine.txt"), os.path.join(d, "empty.txt"),
            "--library", lib, "--model", model)
    check(r.returncode == 1 and "empty.txt" in r.stderr, "batch with a bad file: " + r.stderr)
    r = run(cli, "docs", "rm", "nothing.md", "--library", lib)
    check(r.returncode == 1 and "no document named 'nothing.md'" in r.stderr, "rm unknown: " + r.stderr)
    r = run(cli, "docs", "add", os.path.join(d, "missing.txt"), "--library", lib)
    check(r.returncode == 1 and "missing.txt" in r.stderr, "missing file: " + r.stderr)
    check(listing(cli, lib) == before, "bad input changed the library")

    r = run(cli, "generate", "--model", model, "--threads", "1", "--library", lib,
            "--doc", "market.html", "--doc", "garden.md", "--prompt", "The bridge", "--max-tokens", "2")
    check(r.returncode == 0 and "documents: " in r.stderr, "generate --doc: " + r.stderr)
    r = run(cli, "generate", "--model", model, "--library", lib, "--doc", "nothing.md",
            "--prompt", "x", "--max-tokens", "1")
    check(r.returncode == 1 and "nothing.md" in r.stderr, "generate --doc unknown: " + r.stderr)

    # Kept warm: stored in the library, shown by list, undone by unpin.
    r = run(cli, "docs", "pin", "garden.md", "--library", lib)
    check(r.returncode == 0 and "kept warm" in r.stdout, "docs pin: " + r.stdout + r.stderr)
    check([x["pinned"] for x in listing(cli, lib)] == [True, False], "pinned in the listing")
    r = run(cli, "docs", "list", "--library", lib)
    check("\tkept warm" in r.stdout.splitlines()[0], "docs list shows it: " + r.stdout)
    r = run(cli, "docs", "unpin", "garden.md", "--library", lib)
    check(r.returncode == 0 and not any(x["pinned"] for x in listing(cli, lib)),
          "docs unpin: " + r.stdout + r.stderr)
    r = run(cli, "docs", "pin", "nothing.md", "--library", lib)
    check(r.returncode == 1 and "no document named 'nothing.md'" in r.stderr,
          "pin unknown: " + r.stderr)

    r = run(cli, "docs", "rm", "garden.md", "--library", lib)
    check(r.returncode == 0, "docs rm: " + r.stderr)
    check([x["name"] for x in listing(cli, lib)] == ["market.html"], "after rm")
    return lib


def prose(topic, seed):
    """About 300 tokens of sentences; two seeds share no run of eight words."""
    words = ["river", "stone", "garden", "winter", "market", "letter", "window", "green",
             "quiet", "bright", "old", "small", "walks", "opens", "finds", "keeps"]
    rng = random.Random(seed)
    lines = [topic + " " + " ".join(rng.choice(words) for _ in range(8)) + "." for _ in range(16)]
    return ("Notes on %s.\n" % topic + "\n".join(lines) + "\n").encode()


def block_files(folder):
    return sum(f.endswith(".rckv") for _, _, files in os.walk(folder) for f in files)


def purge_on_rm(cli, model, d):
    """docs rm purges the removed document's KV blocks from the disk tier
    (the default folder, as the app writes there), and only its."""
    lib = os.path.join(d, "purge.db")
    write(os.path.join(d, "orchard.md"), prose("orchard", 1))
    write(os.path.join(d, "harbour.md"), prose("harbour", 2))
    r = run(cli, "docs", "add", os.path.join(d, "orchard.md"), os.path.join(d, "harbour.md"),
            "--library", lib, "--model", model)
    check(r.returncode == 0, "docs add for the purge: " + r.stderr)
    for doc in ("orchard.md", "harbour.md"):
        r = run(cli, "generate", "--model", model, "--threads", "1", "--library", lib,
                "--doc", doc, "--kv-disk", "default", "--prompt", "Where is the river?", "--max-tokens", "1")
        check(r.returncode == 0, "generate --kv-disk default: " + r.stderr)
    kv = os.path.join(ENV["XDG_CACHE_HOME"], "radixchat", "kv")
    before = block_files(kv)
    r = run(cli, "docs", "rm", "orchard.md", "--library", lib, "--model", model)
    words = r.stdout.split()
    purged = int(words[words.index("purged") + 1]) if "purged" in words else 0
    check(r.returncode == 0 and purged > 0, "docs rm purges: %r %r" % (r.stdout, r.stderr))
    check(block_files(kv) == before - purged, "blocks left: %d of %d, %d purged"
          % (block_files(kv), before, purged))
    # harbour.md's blocks are still there: its prompt loads them back.
    r = run(cli, "generate", "--model", model, "--threads", "1", "--library", lib,
            "--doc", "harbour.md", "--kv-disk", "default", "--prompt", "Where is the river?", "--max-tokens", "1")
    check(r.returncode == 0 and "loaded from the tiers" in r.stderr,
          "the other document stays in the tier: " + r.stderr)
    r = run(cli, "docs", "rm", "harbour.md", "--library", lib, "--model", model)
    check(r.returncode == 0 and block_files(kv) == 0,
          "the last document's purge leaves no block: %r, %d left" % (r.stdout, block_files(kv)))


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def server(cli, model, lib):
    # Kept warm: the server pins it before listening, so the first question
    # already finds the document cached.
    r = run(cli, "docs", "pin", "market.html", "--library", lib)
    check(r.returncode == 0, "docs pin market.html: " + r.stderr)
    srv = subprocess.Popen([cli, "serve", "--model", model, "--threads", "1", "--port", "0",
                            "--library", lib], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        line = srv.stdout.readline().strip()
        base = line.split("listening on ")[-1]
        with urllib.request.urlopen(base + "/documents", timeout=30) as r:
            listed = json.loads(r.read())
        check([x["name"] for x in listed["data"]] == ["market.html"], "GET /v1/documents: %r" % listed)
        msgs = [{"role": "user", "content": "What is sold?"}]
        code, body = post(base + "/chat/completions",
                          {"messages": msgs, "documents": ["market.html"], "max_tokens": 2})
        details = body.get("usage", {}).get("prompt_tokens_details", {})
        check(code == 200 and details.get("document_tokens", 0) > 0, "chat with documents: %r" % body)
        check(details.get("cached_tokens", 0) >= details.get("document_tokens", 1),
              "the first question finds the kept-warm document cached: %r" % body)
        code, body = post(base + "/chat/completions",
                          {"messages": msgs, "documents": ["market.html"], "max_tokens": 2})
        details = body.get("usage", {}).get("prompt_tokens_details", {})
        check(code == 200 and details.get("cached_tokens", 0) >= details.get("document_tokens", 1),
              "second question reuses the documents: %r" % body)
        code, body = post(base + "/chat/completions",
                          {"messages": msgs, "documents": ["nope.pdf"], "max_tokens": 2})
        check(code == 400 and "nope.pdf" in body["error"]["message"]
              and body["error"]["param"] == "documents", "unknown document: %d %r" % (code, body))
        code, body = post(base + "/chat/completions",
                          {"messages": msgs, "documents": "market.html", "max_tokens": 2})
        check(code == 400, "documents not an array: %d %r" % (code, body))
    finally:
        srv.terminate()
        _, err = srv.communicate(timeout=60)
    check("kept warm (pinned): market.html" in err, "serve says what it kept warm: " + err)


def main():
    cli, model = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        ENV["XDG_CACHE_HOME"] = os.path.join(d, "cache")
        ENV["XDG_DATA_HOME"] = os.path.join(d, "data")
        purge_on_rm(cli, model, d)
        lib = docs_commands(cli, model, d)
        server(cli, model, lib)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
