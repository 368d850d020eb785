#!/usr/bin/python3
"""Documents in the chat, measured: bench-report.sh's helper.

Two documents, a PDF and a Markdown note of about DOC_TOKENS tokens each as
MODEL's tokenizer counts them (default 450: together, with their headers,
they fit the default document budget of a 2,048-token context, half of it,
so they go in whole), go into a fresh library. A server on that
library with a disk tier answers a first question naming both (everything
computed), a follow-up naming both (their KV is in the tree), and a third
naming them in the other order (the canonical layout makes it the same
prefix). Once its disk writes are done it stops; a new server on the same
disk folder answers a fourth question (the documents load from the tier),
and a server without the tier answers the same question cold. Prints one
JSON object: the document tokens, each time to first token (streamed, first
content chunk), the tokens loaded from the tier and the ratios.

  bench-documents.py CLI MODEL THREADS [DOC_TOKENS]
"""
import json
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "py"))
from serve_client import start_serve, stop_serve, stream_ttft, text, tier_writes_done  # noqa: E402


def tokens(cli, model, words):
    out = subprocess.run([cli, "tokenize", "--model", model, "--text", words],
                         capture_output=True, text=True, check=True).stdout
    return len(json.loads(out))


def sized_text(cli, model, target, seed):
    """Seeded words, about `target` tokens of MODEL's tokenizer."""
    n = 64
    while tokens(cli, model, text(n, seed)) < target:
        n *= 2
    lo, hi = n // 2, n
    while hi - lo > 8:
        mid = (lo + hi) // 2
        if tokens(cli, model, text(mid, seed)) < target:
            lo = mid
        else:
            hi = mid
    return text(hi, seed)


def pdf(words):
    """A one-font PDF with a text layer holding `words`, 12 to a line, as
    many pages as it takes (poppler extracts it back)."""
    w = words.split()
    lines = [" ".join(w[i:i + 12]) for i in range(0, len(w), 12)]
    pages = [lines[i:i + 60] for i in range(0, len(lines), 60)]
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", None,
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for page in pages:
        ops = "BT /F1 10 Tf 12 TL 40 760 Td " + " ".join(f"({t}) Tj T*" for t in page) + " ET"
        objs.append(f"<< /Length {len(ops)} >>\nstream\n{ops}\nendstream")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                    f"/Resources << /Font << /F1 3 0 R >> >> /Contents {len(objs)} 0 R >>")
        kids.append(f"{len(objs)} 0 R")
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out, offsets = b"%PDF-1.4\n", []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def ask(port, question, documents):
    body = {"messages": [{"role": "user", "content": question}], "documents": documents,
            "max_tokens": 4, "temperature": 0}
    seconds, usage = stream_ttft(port, body)
    details = usage["prompt_tokens_details"]
    return {"ttft_ms": 1000 * seconds, "document_tokens": details.get("document_tokens", 0),
            "cached_tokens": details.get("cached_tokens", 0),
            "loaded_tokens": details.get("tier_loaded_tokens", 0)}


def main():
    cli, model, threads = sys.argv[1], sys.argv[2], sys.argv[3]
    doc_tokens = int(sys.argv[4]) if len(sys.argv) > 4 else 450
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        (d / "report.pdf").write_bytes(pdf(sized_text(cli, model, doc_tokens, 21)))
        (d / "notes.md").write_text("# Notes\n\n" + sized_text(cli, model, doc_tokens, 22) + "\n")
        library = str(d / "library.db")
        subprocess.run([cli, "docs", "--library", library, "--model", model, "add",
                        str(d / "report.pdf"), str(d / "notes.md")],
                       check=True, stdout=subprocess.DEVNULL)
        both, reversed_ = ["report.pdf", "notes.md"], ["notes.md", "report.pdf"]
        common = ["--model", model, "--threads", threads, "--library", library]
        disk = ["--kv-disk", str(d / "kv"), "--kv-disk-key-file", str(d / "kv.key")]
        server, port = start_serve(cli, *common, *disk)
        try:
            first = ask(port, "What does the report say first?", both)
            follow = ask(port, "And what do the notes add?", both)
            other = ask(port, "Which of the two is longer?", reversed_)
            while not tier_writes_done(port):
                time.sleep(0.1)
        finally:
            stop_serve(server)
        server, port = start_serve(cli, *common, *disk)
        try:
            restart = ask(port, "Summarise both in one line.", both)
        finally:
            stop_serve(server)
        server, port = start_serve(cli, *common)
        try:
            cold = ask(port, "Summarise both in one line.", both)
        finally:
            stop_serve(server)
    print(json.dumps({
        "document_tokens": first["document_tokens"],
        "ttft_ms_first": first["ttft_ms"], "ttft_ms_follow_up": follow["ttft_ms"],
        "ttft_ms_other_order": other["ttft_ms"], "follow_up_ratio": follow["ttft_ms"] / first["ttft_ms"],
        "other_order_ratio": other["ttft_ms"] / first["ttft_ms"],
        "other_order_cached_tokens": other["cached_tokens"],
        "ttft_ms_restart": restart["ttft_ms"], "ttft_ms_cold": cold["ttft_ms"],
        "restart_ratio": restart["ttft_ms"] / cold["ttft_ms"],
        "restart_loaded_tokens": restart["loaded_tokens"],
        "restart_loaded_share": restart["loaded_tokens"] / max(restart["document_tokens"], 1),
    }))


if __name__ == "__main__":
    main()
