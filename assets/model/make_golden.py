#!/usr/bin/python3
"""Golden data for the C++ engine's tests, from the SHIPPED GGUF file.

Reloads the weights from radixchat-demo.gguf with gguf_inspect.py (so the
golden data reflects exactly the bytes shipped), runs the PyTorch reference
forward (model.py) in float32, and writes golden.json:

  {"version": 1, "model": "radixchat-demo.gguf", "n_vocab": 4096,
   "bos_id": 1, "eos_id": <|end|> id, "tokenizer": "tokenizer.model",
   "cases": [{"name", "text", "tokens", "last_logits", "greedy"}]}

  text        exact input text (chat template rendered; BOS is not part of
              the text, it is the id 1 prepended to the sentencepiece ids)
  tokens      ids as fed: [1] + sentencepiece.encode(text)
  last_logits float32 logits at the last position (n_vocab values)
  greedy      32 argmax continuation tokens (no stop at <|end|>)

Also writes work/samples.md (greedy replies, stopping at <|end|>).
Usage: /usr/bin/python3 make_golden.py [--gguf radixchat-demo.gguf]
"""
import argparse, json, os, sys

import numpy as np
import sentencepiece as spm
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import Config, Transformer  # noqa: E402
from chat_format import render, encode  # noqa: E402
import gguf_inspect  # noqa: E402

SYS = "You are RadixChat, a small assistant that explains prefix caching."
A1 = ("Prefix caching keeps the KV cache of prompts after a request ends. When a new prompt starts with the "
      "same tokens, the engine reuses the cached keys and values for that shared prefix and only computes the new part.")
A2 = ("A radix tree is a compressed trie. Each edge holds a run of symbols instead of one symbol, and a node "
      "with a single child is merged into its parent, so long shared prefixes take little space.")
A3 = ("When memory for the KV cache runs out, the engine evicts cached tokens that no request is using.")


def cases():
    long_turns = [("What is a KV cache?", "A KV cache stores the key and value vectors that each attention layer computed "
                   "for earlier tokens. When the model generates the next token it reuses them instead of recomputing the whole prompt."),
                  ("What is prefix caching?", A1), ("What is a radix tree?", A2),
                  ("What is LRU?", "LRU means least recently used. The entry that has gone unused for the longest time "
                   "is evicted first, on the bet that it is the least likely to be needed again soon."),
                  ("What is a page in the KV cache?", "The KV cache is split into fixed-size pages, each holding the keys "
                   "and values of a few tokens. A page table maps a sequence's positions to pages, so memory is not "
                   "fragmented and cached pages can be shared."),
                  ("What does serendipity mean?", "Serendipity (noun): good luck in making unexpected and fortunate discoveries."),
                  ("Tell me a fortune.", "A journey of a thousand miles begins with a single step."),
                  ("What is grouped-query attention?", None)]
    return [
        ("sys_prefix_caching", render(SYS, [("What is prefix caching?", None)])),
        ("sys_radix_tree", render(SYS, [("What is a radix tree?", None)])),
        ("sys_eviction", render(SYS, [("How does cache eviction work?", None)])),
        ("hello_no_system", render(None, [("Hello!", None)])),
        ("multi_turn_2", render(SYS, [("What is prefix caching?", A1), ("What is a radix tree?", None)])),
        ("multi_turn_3", render(SYS, [("What is prefix caching?", A1), ("What is a radix tree?", A2),
                                      ("What happens when the KV cache is full?", None)])),
        ("general_word", render("You are a helpful assistant.", [("What does serendipity mean?", None)])),
        ("long_multi_turn", render(SYS, long_turns)),
    ]


SAMPLES = [
    (SYS, [("What is prefix caching?", None)]),
    (None, [("Why does multi-turn chat hit the cache?", None)]),
    (SYS, [("What is RadixAttention?", None)]),
    ("You are a helpful assistant.", [("What does the word harbor mean?", None)]),
    (None, [("Hello!", None)]),
    ("You are a helpful assistant.", [("What is a hacker?", None)]),
]


def load_model(gguf_path):
    g = gguf_inspect.parse(gguf_path)
    assert not g["errors"], g["errors"]
    kv = g["kv"]
    cfg = Config(vocab_size=kv["llama.vocab_size"], dim=kv["llama.embedding_length"],
                 n_layers=kv["llama.block_count"], n_heads=kv["llama.attention.head_count"],
                 n_kv_heads=kv["llama.attention.head_count_kv"], hidden_dim=kv["llama.feed_forward_length"],
                 norm_eps=kv["llama.attention.layer_norm_rms_epsilon"], rope_theta=kv["llama.rope.freq_base"],
                 max_seq_len=kv["llama.context_length"])
    t = gguf_inspect.load_tensors(g)
    sd = {"tok_embeddings.weight": t["token_embd.weight"], "norm.weight": t["output_norm.weight"]}
    for l in range(cfg.n_layers):
        b, p = f"blk.{l}.", f"layers.{l}."
        for gn, pn in (("attn_norm", "attention_norm"), ("attn_q", "attention.wq"), ("attn_k", "attention.wk"),
                       ("attn_v", "attention.wv"), ("attn_output", "attention.wo"), ("ffn_norm", "ffn_norm"),
                       ("ffn_gate", "feed_forward.w1"), ("ffn_up", "feed_forward.w3"), ("ffn_down", "feed_forward.w2")):
            sd[p + pn + ".weight"] = t[b + gn + ".weight"]
    m = Transformer(cfg)
    m.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()}, strict=True)
    m.eval()
    return m, cfg, kv


@torch.no_grad()
def last_logits(m, ids):
    return m(torch.tensor([ids], dtype=torch.long))[0, -1].float()


@torch.no_grad()
def greedy(m, ids, n, stop=None):
    ids = list(ids)
    out = []
    for _ in range(n):
        nxt = int(torch.argmax(last_logits(m, ids)))
        out.append(nxt)
        ids.append(nxt)
        if stop is not None and nxt == stop:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default=os.path.join(HERE, "radixchat-demo.gguf"))
    ap.add_argument("--out", default=os.path.join(HERE, "golden.json"))
    ap.add_argument("--n-greedy", type=int, default=32)
    ap.add_argument("--no-samples", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(2)
    m, cfg, kv = load_model(args.gguf)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, "tokenizer.model"))
    assert kv["tokenizer.ggml.tokens"] == [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    end_id = sp.piece_to_id("<|end|>")
    assert kv["tokenizer.ggml.eos_token_id"] == end_id
    out = {"version": 1, "model": os.path.basename(args.gguf), "tokenizer": "tokenizer.model",
           "n_vocab": cfg.vocab_size, "bos_id": 1, "eos_id": end_id, "n_greedy": args.n_greedy, "dtype": "float32",
           "cases": []}
    for name, text in cases():
        ids = encode(sp, text)
        assert sp.decode(ids[1:]) == text
        lg = last_logits(m, ids)
        g = greedy(m, ids, args.n_greedy)
        out["cases"].append({"name": name, "text": text, "tokens": ids,
                             "last_logits": [float(f"{x:.9g}") for x in lg.tolist()], "greedy": g})
        print(f"{name}: {len(ids)} tokens, argmax {int(torch.argmax(lg))}, greedy -> {sp.decode(g)!r}", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    if args.no_samples:
        return
    # samples for the README
    lines = []
    for system, turns in SAMPLES:
        text = render(system, turns)
        g = greedy(m, encode(sp, text), 120, stop=end_id)
        reply = sp.decode([t for t in g if t != end_id])
        lines.append("```\n" + (f"[system] {system}\n" if system else "") + f"[user] {turns[-1][0]}\n"
                     f"[assistant] {reply}\n```\n")
        print(lines[-1], flush=True)
    with open(os.path.join(HERE, "work", "samples.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
