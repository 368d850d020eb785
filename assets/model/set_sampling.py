#!/usr/bin/python3
"""Writes the bundled model's recommended sampling into its GGUF as llama.cpp's
general.sampling.* keys, keeping every other key and every tensor byte as
they are (the tensor data moves only as far as the longer header needs, to
the file's alignment).  Running it twice gives the same file.  The values
were chosen with sampling_check.py (see README.md, "Recommended sampling").
Standard library only.

  /usr/bin/python3 set_sampling.py radixchat-demo.gguf
"""
import os, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gguf_inspect import Reader  # noqa: E402

F32, I32 = 6, 5
RECOMMENDED = [
    ("general.sampling.temp", F32, 0.5),
    ("general.sampling.top_k", I32, 40),
    ("general.sampling.top_p", F32, 0.95),
    ("general.sampling.min_p", F32, 0.1),
]


def kv_bytes(key, t, v):
    k = key.encode("utf-8")
    return struct.pack("<Q", len(k)) + k + struct.pack("<I", t) + struct.pack("<f" if t == F32 else "<i", v)


def rewrite(buf, pairs):
    r = Reader(buf)
    r.p = 8
    n_t, n_kv = r.unpack("<Q"), r.unpack("<Q")
    replaced = {k for k, _, _ in pairs}
    kept, align = [], 32
    for _ in range(n_kv):
        start = r.p
        key = r.string()
        t = r.unpack("<I")
        v = r.value(t)
        if key == "general.alignment":
            align = v
        if key not in replaced:
            kept.append(bytes(buf[start:r.p]))
    infos_start = r.p
    for _ in range(n_t):
        r.string()
        nd = r.unpack("<I")
        r.p += 8 * nd + 4 + 8
    infos = bytes(buf[infos_start:r.p])
    data_start = r.p + ((-r.p) % align)
    kept += [kv_bytes(*p) for p in pairs]
    head = bytes(buf[:8]) + struct.pack("<QQ", n_t, len(kept)) + b"".join(kept) + infos
    return head + b"\0" * ((-len(head)) % align) + bytes(buf[data_start:])


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "radixchat-demo.gguf")
    buf = open(path, "rb").read()
    out = rewrite(buf, RECOMMENDED)
    with open(path + ".tmp", "wb") as f:
        f.write(out)
    os.replace(path + ".tmp", path)
    print(f"{path}: {len(RECOMMENDED)} general.sampling.* keys, {len(out)} bytes")


if __name__ == "__main__":
    main()
