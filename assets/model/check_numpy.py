#!/usr/bin/python3
"""Second, independent forward pass in plain numpy, written from the GGUF /
ggml `llama` conventions (not from model.py): reads radixchat-demo.gguf
with gguf_inspect.py and recomputes every golden case's last-position logits
and greedy tokens, then reports the difference from golden.json.

ggml conventions used: a tensor with GGUF dims [in, out] is a row-major
[out, in] matrix; y = W x.  RoPE (llama, "normal" mode) rotates adjacent
pairs (x[2i], x[2i+1]) with angle pos * base^(-2i/n_rot).  GQA: query head
h reads KV head h // (n_head / n_head_kv).  Output uses token_embd when
output.weight is absent.
  /usr/bin/python3 check_numpy.py [golden.json [model.gguf]]
"""
import json, os, sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_inspect  # noqa: E402


def rmsnorm(x, w, eps):
    return x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + eps).astype(np.float32) * w


def rope(x, base):
    # x: [T, H, D]
    T, H, D = x.shape
    pos = np.arange(T, dtype=np.float64)[:, None]
    theta = pos * base ** (-np.arange(0, D, 2, dtype=np.float64) / D)  # [T, D/2]
    c, s = np.cos(theta)[:, None, :].astype(np.float32), np.sin(theta)[:, None, :].astype(np.float32)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def forward(g, W, ids):
    kv = g["kv"]
    nh, nkv = kv["llama.attention.head_count"], kv["llama.attention.head_count_kv"]
    d = kv["llama.embedding_length"]
    hd = d // nh
    eps = kv["llama.attention.layer_norm_rms_epsilon"]
    base = kv["llama.rope.freq_base"]
    x = W["token_embd.weight"][ids]  # [T, d]
    T = len(ids)
    mask = np.triu(np.full((T, T), -np.inf, dtype=np.float32), 1)
    for l in range(kv["llama.block_count"]):
        b = f"blk.{l}."
        h = rmsnorm(x, W[b + "attn_norm.weight"], eps)
        q = (h @ W[b + "attn_q.weight"].T).reshape(T, nh, hd)
        k = (h @ W[b + "attn_k.weight"].T).reshape(T, nkv, hd)
        v = (h @ W[b + "attn_v.weight"].T).reshape(T, nkv, hd)
        q, k = rope(q, base), rope(k, base)
        o = np.empty((T, nh, hd), dtype=np.float32)
        for hh in range(nh):
            kh = hh // (nh // nkv)
            s = q[:, hh] @ k[:, kh].T / np.sqrt(hd) + mask
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            o[:, hh] = s @ v[:, kh]
        x = x + o.reshape(T, d) @ W[b + "attn_output.weight"].T
        h = rmsnorm(x, W[b + "ffn_norm.weight"], eps)
        gt = h @ W[b + "ffn_gate.weight"].T
        up = h @ W[b + "ffn_up.weight"].T
        x = x + ((gt / (1 + np.exp(-gt))) * up) @ W[b + "ffn_down.weight"].T
    x = rmsnorm(x, W["output_norm.weight"], eps)
    out = W.get("output.weight", W["token_embd.weight"])
    return x[-1] @ out.T


def main():
    gpath = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "golden.json")
    gg = json.load(open(gpath))
    mpath = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(gpath)), gg["model"])
    g = gguf_inspect.parse(mpath)
    W = gguf_inspect.load_tensors(g)
    worst = 0.0
    for c in gg["cases"]:
        lg = forward(g, W, c["tokens"])
        ref = np.array(c["last_logits"], dtype=np.float32)
        diff = float(np.abs(lg - ref).max())
        rng = float(ref.max() - ref.min())
        ids, gr = list(c["tokens"]), []
        for _ in range(len(c["greedy"])):
            t = int(np.argmax(forward(g, W, ids)))
            gr.append(t)
            ids.append(t)
        worst = max(worst, diff / rng)
        print(f"{c['name']:20s} T={len(c['tokens']):4d} max|dlogit|={diff:.2e} (range {rng:.1f}) "
              f"argmax {'same' if int(np.argmax(lg)) == int(np.argmax(ref)) else 'DIFF'} "
              f"greedy {'same' if gr == c['greedy'] else 'DIFF'}", flush=True)
    print(f"worst max|dlogit|/range = {worst:.2e}")


if __name__ == "__main__":
    main()
