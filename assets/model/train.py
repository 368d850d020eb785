#!/usr/bin/python3
"""Train the RadixChat demo model (CPU, Debian python3-torch).

Usage:
  /usr/bin/python3 train.py --time-budget 3300     # as run for the shipped model
  /usr/bin/python3 train.py --steps N              # fixed step count
Reads work/convs_{train,val}.jsonl + tokenizer.model, writes work/ckpt.pt
(every --ckpt-every seconds and at the end) and logs to stdout.
"""
import argparse, json, math, os, sys, time

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import Config, Transformer  # noqa: E402
from chat_format import render, encode  # noqa: E402

WORK = os.path.join(HERE, "work")


def tokenize(sp, name):
    path = os.path.join(WORK, f"{name}.bin")
    if os.path.exists(path):
        return np.fromfile(path, dtype=np.uint16)
    ids = []
    for line in open(os.path.join(WORK, f"convs_{name}.jsonl")):
        c = json.loads(line)
        ids += encode(sp, render(c["system"], c["turns"]))
    a = np.array(ids, dtype=np.uint16)
    a.tofile(path)
    return a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr", type=float, default=1e-4)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--wd", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=0, help="fixed total steps (0: from --time-budget)")
    ap.add_argument("--time-budget", type=float, default=3300.0, help="seconds of training")
    ap.add_argument("--ckpt-every", type=float, default=300.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--init", default="", help="start from this checkpoint's weights (stage 2)")
    ap.add_argument("--schedule", choices=["steps", "time"], default="steps",
                    help="time: cosine over elapsed/--time-budget (robust to CPU contention)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, "tokenizer.model"))
    train = tokenize(sp, "train")
    val = tokenize(sp, "val")
    print(f"train tokens {len(train)}, val tokens {len(val)}", flush=True)

    cfg = Config(vocab_size=sp.get_piece_size())
    model = Transformer(cfg)
    tokens_before, steps_before = 0, 0
    if args.init:
        ck0 = torch.load(args.init, map_location="cpu")
        model.load_state_dict(ck0["model"])
        tokens_before = ck0.get("tokens_before", 0) + ck0["tokens"]
        steps_before = ck0.get("steps_before", 0) + ck0["step"]
        print(f"init from {args.init}: {steps_before} steps, {tokens_before} tokens before", flush=True)
    print(f"params {model.n_params()}  config {cfg.to_dict()}", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    nodecay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.wd},
                             {"params": nodecay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)

    T, B = args.seq, args.batch
    # validation windows: consecutive non-overlapping 1024+1 windows
    nval = (len(val) - 1) // T
    val_x = torch.from_numpy(val[: nval * T].astype(np.int64)).view(nval, T)
    val_y = torch.from_numpy(val[1: nval * T + 1].astype(np.int64)).view(nval, T)

    def evaluate(n=None):
        model.eval()
        idx = range(nval if n is None else min(n, nval))
        tot = 0.0
        with torch.no_grad():
            for i in range(0, len(idx), B):
                xs, ys = val_x[i:i + B], val_y[i:i + B]
                lo = model(xs)
                tot += F.cross_entropy(lo.reshape(-1, lo.size(-1)), ys.reshape(-1), reduction="sum").item()
        model.train()
        return tot / (len(idx) * T)

    def save(step, total, extra):
        tmp = os.path.join(WORK, "ckpt.pt.tmp")
        torch.save({"model": model.state_dict(), "config": cfg.to_dict(), "step": step,
                    "total_steps": total, "args": vars(args),
                    "tokens_before": tokens_before, "steps_before": steps_before, "optimizer": opt.state_dict(), **extra}, tmp)
        os.replace(tmp, os.path.join(WORK, "ckpt.pt"))

    total = args.steps if args.steps else 10**9
    t0 = time.time()
    last_ckpt = t0
    progress = 0.0
    step_times = []
    tokens = 0
    step = 0
    while True:
        ts = time.time()
        elapsed = ts - t0
        if args.schedule == "time":
            total = 10**9
            if elapsed >= args.time_budget:
                break
        elif args.steps == 0 and step >= 10:
            # re-estimate total steps from recent speed so training ends on budget
            recent = float(np.mean(step_times[-20:]))
            total = max(step + 1, step + int((args.time_budget - elapsed) / recent))
        if step >= total:
            break
        # cosine schedule on progress; progress never goes backwards
        progress = max(progress, elapsed / args.time_budget if args.schedule == "time" else step / max(total, 1))
        if step < args.warmup:
            lr = args.lr * (step + 1) / args.warmup
        else:
            lr = args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * min(1.0, progress)))
        for g in opt.param_groups:
            g["lr"] = lr
        starts = rng.integers(0, len(train) - T - 1, size=B)
        x = torch.from_numpy(np.stack([train[s:s + T] for s in starts]).astype(np.int64))
        y = torch.from_numpy(np.stack([train[s + 1:s + T + 1] for s in starts]).astype(np.int64))
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens += B * T
        dt = time.time() - ts
        step_times.append(dt)
        if step % 5 == 0 or step <= 10:
            el = time.time() - t0
            print(f"step {step}/{total if total < 10**9 else '?'} loss {loss.item():.4f} lr {lr:.2e} gn {gn:.2f} "
                  f"dt {dt:.2f}s tok/s {B * T / dt:.0f} avg_tok/s {tokens / el:.0f} elapsed {el:.0f}s tokens {tokens}",
                  flush=True)
        if time.time() - last_ckpt > args.ckpt_every:
            vl = evaluate(16)
            print(f"ckpt step {step} val_loss(16 windows) {vl:.4f}", flush=True)
            save(step, total, {"tokens": tokens, "elapsed": time.time() - t0, "val_loss_16": vl})
            last_ckpt = time.time()
        if args.steps == 0 and time.time() - t0 > args.time_budget * 1.08:
            print("hard deadline reached", flush=True)
            break
    el = time.time() - t0
    vl = evaluate()
    print(f"done steps {step} tokens {tokens} elapsed {el:.0f}s avg_tok/s {tokens / el:.0f} "
          f"val_loss(all {nval} windows) {vl:.4f} val_ppl {math.exp(vl):.2f}", flush=True)
    save(step, step, {"tokens": tokens, "elapsed": el, "val_loss": vl, "val_windows": nval, "final": True})


if __name__ == "__main__":
    main()
