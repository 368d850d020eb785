"""Llama-architecture model used to train the bundled RadixChat demo model.

RoPE follows Meta's original llama code: it rotates ADJACENT pairs
(x[2i], x[2i+1]) of each head's dimensions with frequency
theta^(-2i/head_dim).  That is the layout the GGUF `llama` architecture
assumes for the stored Q/K weights, so the exporter writes wq/wk unpermuted.
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab_size: int = 4096
    dim: int = 256
    n_layers: int = 6
    n_heads: int = 8
    n_kv_heads: int = 2
    hidden_dim: int = 704
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_seq_len: int = 1024

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, seq_len, theta, start=0):
    # frequency for pair i: theta^(-2i/head_dim)
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    t = torch.arange(start, start + seq_len, dtype=torch.float64)
    ang = torch.outer(t, inv)  # [T, head_dim/2]
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin):
    # x: [B, H, T, D]; rotate adjacent pairs (x[2i], x[2i+1])
    x0 = x[..., 0::2]
    x1 = x[..., 1::2]
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.n_heads = c.n_heads
        self.n_kv = c.n_kv_heads
        self.hd = c.dim // c.n_heads
        self.wq = nn.Linear(c.dim, c.n_heads * self.hd, bias=False)
        self.wk = nn.Linear(c.dim, c.n_kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(c.dim, c.n_kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(c.n_heads * self.hd, c.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        rep = self.n_heads // self.n_kv
        # GQA: query head h uses kv head h // rep (llama.cpp convention)
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        # causal attention, computed in query chunks so each chunk only
        # multiplies against the keys it can see (same result, less work)
        scale = 1.0 / math.sqrt(self.hd)
        C = 256
        outs = []
        for s in range(0, T, C):
            e = min(T, s + C)
            att = (q[:, :, s:e] * scale) @ k[:, :, :e].transpose(-2, -1)
            att = att + mask[s:e, :e]
            att = torch.softmax(att, dim=-1)
            outs.append(att @ v[:, :, :e])
        y = torch.cat(outs, dim=2) if len(outs) > 1 else outs[0]
        y = y.transpose(1, 2).reshape(B, T, -1)
        return self.wo(y)


class FeedForward(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.w1 = nn.Linear(c.dim, c.hidden_dim, bias=False)  # gate
        self.w2 = nn.Linear(c.hidden_dim, c.dim, bias=False)  # down
        self.w3 = nn.Linear(c.dim, c.hidden_dim, bias=False)  # up

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.attention_norm = RMSNorm(c.dim, c.norm_eps)
        self.attention = Attention(c)
        self.ffn_norm = RMSNorm(c.dim, c.norm_eps)
        self.feed_forward = FeedForward(c)

    def forward(self, x, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.c = c
        self.tok_embeddings = nn.Embedding(c.vocab_size, c.dim)
        self.layers = nn.ModuleList([Block(c) for _ in range(c.n_layers)])
        self.norm = RMSNorm(c.dim, c.norm_eps)
        # output projection is tied to tok_embeddings (no separate weight)
        self.apply(self._init)
        for n, p in self.named_parameters():
            if n.endswith("wo.weight") or n.endswith("w2.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layers))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        B, T = idx.shape
        cos, sin = rope_tables(self.c.dim // self.c.n_heads, T, self.c.rope_theta)
        mask = torch.full((T, T), float("-inf")).triu(1)
        x = self.tok_embeddings(idx)
        for l in self.layers:
            x = l(x, cos, sin, mask)
        x = self.norm(x)
        return x @ self.tok_embeddings.weight.t()

    def n_params(self):
        return sum(p.numel() for p in self.parameters())
