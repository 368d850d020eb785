#!/usr/bin/python3
"""How readable the bundled model's replies are at a few sampling settings:
the share of reply words found in a dictionary, over first-run questions
asked with several seeds.  Chooses the recommendation that set_sampling.py
writes into the GGUF (general.sampling.*).  Standard library only; needs a
built radixchat-cli and a word list (Debian: wamerican).

  /usr/bin/python3 sampling_check.py --cli build/app/radixchat-cli \
      [--model radixchat-demo.gguf] [--seeds 5] [--words /usr/share/dict/words]

Each setting is "temperature,top_k,top_p,min_p" (0 for off); the default list
runs greedy, the app's old default and lower temperatures.
"""
import argparse, json, os, re, socket, subprocess, sys, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
QUESTIONS = [
    "Hello!", "What is prefix caching?", "How does the radix tree work?",
    "Why does multi-turn chat hit the cache?", "What is RadixAttention?",
    "How does cache eviction work?", "What is a KV cache?", "Who are you?",
    "What does the word harbor mean?", "What does the word river mean?",
    "What is a hacker?", "Tell me a fortune.",
]
SETTINGS = ["0,0,1,0", "0.7,40,0.95,0.05", "0.5,40,0.95,0.05", "0.4,40,0.95,0.1",
            "0.3,40,0.95,0.1", "0.2,40,0.95,0.1"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ask(port, question, setting, seed):
    temp, top_k, top_p, min_p = (float(x) for x in setting.split(","))
    body = {"messages": [{"role": "user", "content": question}], "max_tokens": 96,
            "temperature": temp, "top_k": int(top_k), "top_p": top_p, "min_p": min_p,
            "seed": seed}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions",
                                 json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)["choices"][0]["message"]["content"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", default=os.path.join(HERE, "radixchat-demo.gguf"))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--words", default="/usr/share/dict/words")
    ap.add_argument("--setting", action="append", help="temperature,top_k,top_p,min_p")
    args = ap.parse_args()
    words = {w.strip().lower() for w in open(args.words, encoding="utf-8", errors="ignore")}
    port = free_port()
    server = subprocess.Popen([args.cli, "serve", "--model", args.model, "--port", str(port),
                               "--cache", "off"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        print(f"{len(QUESTIONS)} questions x {args.seeds} seeds, words in {args.words}")
        print("temperature,top_k,top_p,min_p   dictionary words   replies of dictionary words only"
              "   replies with a repeat")
        for setting in args.setting or SETTINGS:
            found = total = repeats = clean = 0
            greedy = setting.split(",")[0] in ("0", "0.0")
            for q in QUESTIONS:
                for seed in range(1 if greedy else args.seeds):
                    tokens = re.findall(r"[A-Za-z]+", ask(port, q, setting, seed + 1))
                    asked = {t.lower() for t in re.findall(r"[A-Za-z]+", q)}
                    known = [t.lower() in words or t.lower() in asked for t in tokens]
                    total += len(tokens)
                    found += sum(known)
                    clean += all(known)
                    repeats += any(tokens[i:i + 4] == tokens[i + 4:i + 8]
                                   for i in range(len(tokens) - 7))
            n = len(QUESTIONS) * (1 if greedy else args.seeds)
            print(f"{setting:<32} {100.0 * found / max(total, 1):5.1f}% of {total:5d}"
                  f"   {clean:3d} of {n}   {repeats:3d} of {n}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    sys.exit(main())
