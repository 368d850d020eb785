#!/usr/bin/python3
"""Minimal independent GGUF v2/v3 reader: lists metadata and tensors and
verifies sizes, offsets and alignment.  Needs only the Python standard
library (numpy optional, for load_tensors()).

  /usr/bin/python3 gguf_inspect.py radixchat-demo.gguf
"""
import struct, sys

TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool",
              8: "str", 9: "arr", 10: "u64", 11: "i64", 12: "f64"}
SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q", 11: "<q", 12: "<d"}
# ggml type -> (block size in elements, bytes per block)
GGML = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 30: ("BF16", 1, 2), 8: ("Q8_0", 32, 34), 2: ("Q4_0", 32, 18),
        12: ("Q4_K", 256, 144), 14: ("Q6_K", 256, 210)}


class Reader:
    def __init__(self, buf):
        self.b, self.p = buf, 0

    def need(self, n):
        if self.p + n > len(self.b):
            raise ValueError(f"truncated at offset {self.p} (need {n} bytes)")

    def unpack(self, fmt):
        n = struct.calcsize(fmt)
        self.need(n)
        v = struct.unpack_from(fmt, self.b, self.p)[0]
        self.p += n
        return v

    def string(self):
        n = self.unpack("<Q")
        self.need(n)
        s = bytes(self.b[self.p:self.p + n]).decode("utf-8")
        self.p += n
        return s

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.unpack("<I"), self.unpack("<Q")
            return [self.value(et) for _ in range(n)]
        if t not in SCALAR:
            raise ValueError(f"bad value type {t}")
        v = self.unpack(SCALAR[t])
        return bool(v) if t == 7 else v


def parse(path):
    buf = open(path, "rb").read()
    r = Reader(buf)
    magic = bytes(buf[:4])
    r.p = 4
    if magic != b"GGUF":
        raise ValueError(f"bad magic {magic!r}")
    version = r.unpack("<I")
    if version not in (2, 3):
        raise ValueError(f"unsupported version {version}")
    n_t, n_kv = r.unpack("<Q"), r.unpack("<Q")
    kv, kv_types = {}, {}
    for _ in range(n_kv):
        k = r.string()
        t = r.unpack("<I")
        kv_types[k] = t
        if t == 9:
            # record the element type too
            et = struct.unpack_from("<I", buf, r.p)[0]
            kv_types[k] = (9, et)
        kv[k] = r.value(t)
    tensors = []
    for _ in range(n_t):
        name = r.string()
        nd = r.unpack("<I")
        dims = [r.unpack("<Q") for _ in range(nd)]
        t = r.unpack("<I")
        off = r.unpack("<Q")
        tensors.append({"name": name, "dims": dims, "type": t, "offset": off})
    align = kv.get("general.alignment", 32)
    data_start = r.p + ((-r.p) % align)
    # verify
    errors = []
    end = data_start
    for ti in sorted(tensors, key=lambda x: x["offset"]):
        if ti["type"] not in GGML:
            errors.append(f"{ti['name']}: unknown type {ti['type']}")
            continue
        tn, bs, bb = GGML[ti["type"]]
        n = 1
        for d in ti["dims"]:
            n *= d
        if ti["dims"][0] % bs:
            errors.append(f"{ti['name']}: dim0 not a multiple of block {bs}")
        ti["n_elements"] = n
        ti["nbytes"] = n // bs * bb
        ti["type_name"] = tn
        a = data_start + ti["offset"]
        if ti["offset"] % align:
            errors.append(f"{ti['name']}: offset {ti['offset']} not aligned to {align}")
        if a < end:
            errors.append(f"{ti['name']}: overlaps previous tensor")
        end = a + ti["nbytes"]
        if end > len(buf):
            errors.append(f"{ti['name']}: data past end of file ({end} > {len(buf)})")
    if len({t["name"] for t in tensors}) != len(tensors):
        errors.append("duplicate tensor names")
    return {"version": version, "kv": kv, "kv_types": kv_types, "tensors": tensors, "alignment": align,
            "data_start": data_start, "data_end": end, "file_size": len(buf), "errors": errors, "buf": buf}


def load_tensors(g):
    """name -> numpy float32 array shaped like PyTorch ([out, in]: reversed GGUF dims). F32 only."""
    import numpy as np
    out = {}
    for t in g["tensors"]:
        assert t["type"] == 0, "load_tensors handles F32 only"
        a = np.frombuffer(g["buf"], dtype="<f4", count=t["n_elements"], offset=g["data_start"] + t["offset"])
        out[t["name"]] = a.reshape(list(reversed(t["dims"]))).astype(np.float32)
    return out


def short(v):
    if isinstance(v, list):
        head = ", ".join(repr(x) for x in v[:6])
        return f"[{len(v)} items: {head}{', ...' if len(v) > 6 else ''}]"
    if isinstance(v, str) and len(v) > 100:
        return repr(v[:100]) + f"... ({len(v)} chars)"
    return repr(v)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "radixchat-demo.gguf"
    g = parse(path)
    print(f"file {path}: GGUF v{g['version']}, {len(g['kv'])} metadata keys, {len(g['tensors'])} tensors, "
          f"alignment {g['alignment']}, data at {g['data_start']}, file size {g['file_size']}")
    for k, v in g["kv"].items():
        t = g["kv_types"][k]
        tn = f"arr[{TYPE_NAMES[t[1]]}]" if isinstance(t, tuple) else TYPE_NAMES[t]
        print(f"  {k:45s} {tn:9s} {short(v)}")
    total = 0
    for t in g["tensors"]:
        total += t.get("n_elements", 0)
        print(f"  tensor {t['name']:28s} {t.get('type_name', t['type']):5s} dims {str(t['dims']):14s} offset {t['offset']}")
    print(f"total parameters {total}; tensor data ends at {g['data_end']} (file size {g['file_size']}, "
          f"trailing {g['file_size'] - g['data_end']} bytes)")
    tok = g["kv"].get("tokenizer.ggml.tokens")
    if tok:
        for key in ("bos", "eos", "unknown", "padding"):
            i = g["kv"].get(f"tokenizer.ggml.{key}_token_id")
            if i is not None:
                print(f"  {key} token id {i} = {tok[i]!r}")
    if g["errors"]:
        print("ERRORS:")
        for e in g["errors"]:
            print("  " + e)
        sys.exit(1)
    print("OK: all tensor offsets aligned, in bounds, non-overlapping; sizes match types and dims")


if __name__ == "__main__":
    main()
