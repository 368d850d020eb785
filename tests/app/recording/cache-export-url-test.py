#!/usr/bin/env python3
"""cache-export --url against a real `radixchat-cli serve` (bundled model).

Two chat requests fill the cache; the oracle is the server's own GET
/v1/cache. The SVG must parse as XML with one node element per node of that
snapshot, each labelled with the node's text as the server decoded it
(shown as tree-svg.cpp shows it: line breaks as "\u21b5", a label of
spaces as "\u2420"s, nothing printed as "\u27e8special\u27e9", then clipped
to 20 bytes on a character boundary and "..."), with its token count. The PNG must carry the PNG signature, an IHDR of the SVG's size,
and image data that is not one flat colour. A wrong API key is one line on
stderr. PNG needs a GUI build: a CLI built without Qt must say so instead.
Usage: cache-export-url-test.py RADIXCHAT_CLI
"""
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import urllib.request
import xml.etree.ElementTree as ET
import zlib

KEY = "export-key"
SVG_NS = "{http://www.w3.org/2000/svg}"


def request(base, path, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {KEY}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


MARKS = {"<s>": "BOS", "<|begin_of_text|>": "BOS", "</s>": "EOS",
         "<|end|>": "\u23ce end", "<|eot_id|>": "\u23ce end", "<|im_end|>": "\u23ce end",
         "<|endoftext|>": "\u23ce end", "<|im_start|>": "\u25b8",
         "<|start_header_id|>": "\u25b8", "<|end_header_id|>": ""}


def readable(text):
    """The chat templates' control tokens as the marks radixchat/cache-text.h
    documents: "<|end|>" reads "\u23ce end", a role "<|user|>" "\u25b8user"."""
    text = re.sub("|".join(re.escape(k) for k in MARKS), lambda m: MARKS[m.group(0)], text)
    return re.sub(r"<\|([A-Za-z_]{1,24})\|>", "\u25b8\\1", text)


def label(text):
    text = readable(text)
    blank = text.strip(" \t\r\n") == ""
    text = "".join("\u21b5" if c == "\n" else "\u21e5" if c == "\t" else
                   "\u2420" if c == " " and blank else "" if c == "\r" else c for c in text)
    text = text or "\u27e8special\u27e9"
    b = text.encode()
    if len(b) > 20:
        cut = 20
        while cut > 0 and (b[cut] & 0xC0) == 0x80:
            cut -= 1
        text = b[:cut].decode() + "..."
    return "".join(" " if ord(c) < 0x20 else c for c in text)


def check_svg(path, cache):
    root = ET.parse(path).getroot()
    groups = {g.get("data-id"): g for g in root.iter(SVG_NS + "g") if g.get("class") == "node"}
    assert len(groups) == len(cache["nodes"]), (len(groups), len(cache["nodes"]))
    for n in cache["nodes"]:
        g = groups[str(n["id"])]
        want = "root" if n["parent"] is None else label(n["text"])
        texts = g.findall(SVG_NS + "text")
        assert texts[0].text == want, (texts[0].text, want)
        if n["parent"] is not None:
            assert texts[1].get("class") == "count", texts[1].attrib
            assert texts[1].text == str(len(n["tokens"])), (texts[1].text, n)
    return int(root.get("width")), int(root.get("height"))


def check_png(path, size):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    w, h = struct.unpack(">II", data[16:24])
    assert (w, h) == size, ((w, h), size)
    idat, at = b"", 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    raw = zlib.decompress(idat)
    # Filter bytes aside, a blank picture compresses to a handful of values.
    assert len(set(raw)) > 32, f"{len(set(raw))} distinct bytes: a flat image?"


def main():
    cli = sys.argv[1]
    srv = subprocess.Popen([cli, "serve", "--port", "0", "--threads", "1", "--api-key", KEY],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = srv.stdout.readline()
        assert line.startswith("listening on "), line
        base = line.split()[2].rstrip("/").removesuffix("/v1")
        for q in ("hello there", "hello again, what is a radix tree?"):
            request(base, "/v1/chat/completions", {
                "messages": [{"role": "system", "content": "You are a helpful assistant."},
                             {"role": "user", "content": q}], "max_tokens": 4})
        cache = request(base, "/v1/cache")
        assert len(cache["nodes"]) > 2, cache["nodes"]
        with tempfile.TemporaryDirectory() as tmp:
            svg, png = os.path.join(tmp, "live.svg"), os.path.join(tmp, "live.png")
            r = subprocess.run([cli, "cache-export", "--url", base, "--api-key", KEY,
                                "--format", "svg", "--out", svg], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            size = check_svg(svg, cache)
            r = subprocess.run([cli, "cache-export", "--url", base + "/v1", "--api-key", KEY,
                                "--out", png], capture_output=True, text=True)
            if r.returncode != 0 and "built without Qt" in r.stderr:
                print("PNG skipped:", r.stderr.strip())
            else:
                assert r.returncode == 0, r.stderr
                assert len(r.stderr.strip().splitlines()) == 1, r.stderr
                check_png(png, size)
            bad = subprocess.run([cli, "cache-export", "--url", base, "--api-key", "wrong",
                                  "--out", svg], capture_output=True, text=True)
            assert bad.returncode == 1 and "refused the API key" in bad.stderr, bad.stderr
            assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    finally:
        srv.send_signal(signal.SIGINT)
        srv.wait(timeout=60)
    print("ok:", len(cache["nodes"]), "nodes, picture", size)


if __name__ == "__main__":
    main()
