#!/usr/bin/python3
"""Export a training checkpoint to GGUF v3 (architecture `llama`, all F32).

Written from the GGUF spec, no gguf-py.  Usage:
  /usr/bin/python3 export_gguf.py [--ckpt work/ckpt.pt] [--out radixchat-demo.gguf]

Layout notes
  * A PyTorch Linear weight [out, in] (row-major) is written with GGUF dims
    [in, out] (innermost first) and the same bytes.
  * RoPE: the model was trained with Meta's original adjacent-pair RoPE
    (rotates (x[2i], x[2i+1]) of each head), which is what GGUF `llama`
    readers assume, so attn_q / attn_k are written WITHOUT the row
    permutation that exporters from the HF rotate-half layout apply.
  * Embeddings are tied: there is no output.weight; readers use token_embd.
"""
import argparse, os, struct, sys

import numpy as np
import sentencepiece as spm
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from chat_format import JINJA  # noqa: E402
from set_sampling import RECOMMENDED  # noqa: E402

ALIGN = 32
# GGUF metadata value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
GGML_F32 = 0
MARKERS = ["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]


def s_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def s_val(t, v):
    if t == U32:
        return struct.pack("<I", v)
    if t == I32:
        return struct.pack("<i", v)
    if t == F32:
        return struct.pack("<f", v)
    if t == BOOL:
        return struct.pack("<B", 1 if v else 0)
    if t == STR:
        return s_str(v)
    if t == U64:
        return struct.pack("<Q", v)
    raise ValueError(t)


def s_kv(key, t, v, elem=None):
    out = s_str(key) + struct.pack("<I", t)
    if t == ARR:
        out += struct.pack("<IQ", elem, len(v))
        if elem == F32:
            out += np.asarray(v, dtype="<f4").tobytes()
        elif elem == I32:
            out += np.asarray(v, dtype="<i4").tobytes()
        else:
            out += b"".join(s_val(elem, x) for x in v)
    else:
        out += s_val(t, v)
    return out


def tokenizer_vocab(sp):
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        p = sp.id_to_piece(i)
        tokens.append(p)
        scores.append(sp.get_score(i))
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_byte(i):
            types.append(6)
        elif p in MARKERS:
            types.append(4)
        elif sp.is_unused(i):
            types.append(5)
        else:
            types.append(1)
    return tokens, scores, types


def tensors_from_state(sd, cfg):
    """GGUF name -> float32 numpy array in PyTorch layout ([out, in])."""
    out = {"token_embd.weight": sd["tok_embeddings.weight"]}
    for l in range(cfg["n_layers"]):
        p = f"layers.{l}."
        b = f"blk.{l}."
        out[b + "attn_norm.weight"] = sd[p + "attention_norm.weight"]
        out[b + "attn_q.weight"] = sd[p + "attention.wq.weight"]
        out[b + "attn_k.weight"] = sd[p + "attention.wk.weight"]
        out[b + "attn_v.weight"] = sd[p + "attention.wv.weight"]
        out[b + "attn_output.weight"] = sd[p + "attention.wo.weight"]
        out[b + "ffn_norm.weight"] = sd[p + "ffn_norm.weight"]
        out[b + "ffn_gate.weight"] = sd[p + "feed_forward.w1.weight"]
        out[b + "ffn_up.weight"] = sd[p + "feed_forward.w3.weight"]
        out[b + "ffn_down.weight"] = sd[p + "feed_forward.w2.weight"]
    out["output_norm.weight"] = sd["norm.weight"]
    return {k: v.detach().float().contiguous().numpy() for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(HERE, "work", "ckpt.pt"))
    ap.add_argument("--tokenizer", default=os.path.join(HERE, "tokenizer.model"))
    ap.add_argument("--out", default=os.path.join(HERE, "radixchat-demo.gguf"))
    args = ap.parse_args()

    ck = torch.load(args.ckpt, map_location="cpu")
    cfg = ck["config"]
    sp = spm.SentencePieceProcessor(model_file=args.tokenizer)
    assert sp.get_piece_size() == cfg["vocab_size"]
    tokens, scores, types = tokenizer_vocab(sp)
    end_id = sp.piece_to_id("<|end|>")
    hd = cfg["dim"] // cfg["n_heads"]

    kv = [
        s_kv("general.architecture", STR, "llama"),
        s_kv("general.name", STR, "radixchat-demo"),
        s_kv("general.description", STR, "RadixChat bundled demo model: tiny Llama-architecture chat model trained on CPU (see assets/model/README.md)"),
        s_kv("general.license", STR, "see assets/model/README.md (training data: WordNet 3.0 licence, public-domain Jargon File, BSD fortunes, project-written Q&A)"),
        s_kv("general.file_type", U32, 0),  # ALL_F32
        s_kv("general.alignment", U32, ALIGN),
        s_kv("llama.context_length", U32, cfg["max_seq_len"]),
        s_kv("llama.embedding_length", U32, cfg["dim"]),
        s_kv("llama.block_count", U32, cfg["n_layers"]),
        s_kv("llama.feed_forward_length", U32, cfg["hidden_dim"]),
        s_kv("llama.rope.dimension_count", U32, hd),
        s_kv("llama.attention.head_count", U32, cfg["n_heads"]),
        s_kv("llama.attention.head_count_kv", U32, cfg["n_kv_heads"]),
        s_kv("llama.attention.layer_norm_rms_epsilon", F32, cfg["norm_eps"]),
        s_kv("llama.rope.freq_base", F32, cfg["rope_theta"]),
        s_kv("llama.vocab_size", U32, cfg["vocab_size"]),
        s_kv("tokenizer.ggml.model", STR, "llama"),
        s_kv("tokenizer.ggml.tokens", ARR, tokens, STR),
        s_kv("tokenizer.ggml.scores", ARR, scores, F32),
        s_kv("tokenizer.ggml.token_type", ARR, types, I32),
        s_kv("tokenizer.ggml.bos_token_id", U32, sp.bos_id()),
        s_kv("tokenizer.ggml.eos_token_id", U32, end_id),
        s_kv("tokenizer.ggml.unknown_token_id", U32, sp.unk_id()),
        s_kv("tokenizer.ggml.padding_token_id", U32, sp.eos_id()),
        s_kv("tokenizer.ggml.add_bos_token", BOOL, True),
        s_kv("tokenizer.ggml.add_eos_token", BOOL, False),
        s_kv("tokenizer.ggml.add_space_prefix", BOOL, False),
        s_kv("tokenizer.chat_template", STR, JINJA),
    ] + [s_kv(key, t, v) for key, t, v in RECOMMENDED]

    tens = tensors_from_state(ck["model"], cfg)
    infos, blobs, off = [], [], 0
    for name, a in tens.items():
        dims = list(reversed(a.shape))  # GGUF order: innermost first
        infos.append(s_str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
                     + struct.pack("<IQ", GGML_F32, off))
        data = a.astype("<f4").tobytes()
        pad = (-len(data)) % ALIGN
        blobs.append(data + b"\0" * pad)
        off += len(data) + pad

    head = b"GGUF" + struct.pack("<IQQ", 3, len(tens), len(kv)) + b"".join(kv) + b"".join(infos)
    head += b"\0" * ((-len(head)) % ALIGN)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)
    os.replace(tmp, args.out)
    n = sum(a.size for a in tens.values())
    print(f"wrote {args.out}: {len(tens)} tensors, {n} params, {len(kv)} kv, {os.path.getsize(args.out)} bytes; "
          f"checkpoint step {ck['step']} tokens {ck.get('tokens')}")


if __name__ == "__main__":
    main()
