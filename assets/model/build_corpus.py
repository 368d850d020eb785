#!/usr/bin/python3
"""Build the chat corpus for the RadixChat demo model.

Sources (Debian packages, all freely redistributable):
  wordnet-base  /usr/share/wordnet/data.{noun,verb,adj,adv}   (WordNet 3.0 licence)
  jargon-text   /usr/share/doc/jargon-text/jargon.txt.gz       (public domain)
  fortunes, fortunes-min  /usr/share/games/fortunes/*          (BSD)
  domain_facts.py  question/answer pairs written for this project
Writes work/convs_{train,val}.jsonl and work/spm_text.txt.
Usage: /usr/bin/python3 build_corpus.py [--seed 1234]
"""
import argparse, gzip, json, os, random, re

from domain_facts import TOPICS, SMALLTALK, FRAMES, SYSTEM_PROMPTS_DOMAIN, SYSTEM_PROMPTS_GENERAL

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work")


def read_text(path):
    b = open(path, "rb").read()
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("latin-1")


def lowerfirst(q):
    return q[0].lower() + q[1:] if q[:2] != "KV" and not q.startswith(("RadixAttention", "RadixChat", "LRU", "GQA")) else q


# ---------------------------------------------------------------- domain
def domain_pairs(rng):
    pairs = set()
    for _, qs, ans in TOPICS:
        for q in qs:
            for a in ans:
                for f in FRAMES:
                    pairs.add((f.format(q=q, lq=lowerfirst(q)), a))
    return sorted(pairs)


def smalltalk_pairs():
    return sorted({(q, a) for qs, ans in SMALLTALK for q in qs for a in ans})


# ---------------------------------------------------------------- wordnet
POS = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}


def wordnet_items(rng, n_max):
    items = []
    for part in ("noun", "verb", "adj", "adv"):
        for line in open(f"/usr/share/wordnet/data.{part}", encoding="latin-1"):
            if line.startswith("  "):
                continue
            head, _, gloss = line.partition("|")
            f = head.split()
            pos = POS[f[2]]
            n = int(f[3], 16)
            words = [re.sub(r"\(.*\)$", "", f[4 + 2 * i]).replace("_", " ") for i in range(n)]
            gloss = gloss.strip()
            exs = re.findall(r'"([^"]+)"', gloss)
            defs = re.sub(r'"[^"]*"', "", gloss).strip(" ;")
            defs = re.sub(r"\s*;\s*;*", "; ", defs).strip(" ;")
            if not defs:
                continue
            w = words[0]
            qform = rng.choice([
                f"What does {w} mean?", f"Define {w}.", f'What is the meaning of the word "{w}"?',
                f"What does the {pos} {w} mean?", f"Define the word {w}.", f"{w}?",
                f"What is {'a ' if pos == 'noun' else ''}{w}?" if pos == "noun" else f"What does it mean to {w}?" if pos == "verb" else f"What does {w} mean?",
            ])
            ans = f"{w[0].upper() + w[1:]} ({pos}): {defs}."
            if exs and rng.random() < 0.7:
                ans += f' For example: "{exs[0]}".'
            syn = [x for x in words[1:] if x != w]
            if syn and rng.random() < 0.6:
                ans += " Similar words: " + ", ".join(syn[:4]) + "."
            items.append((qform, ans))
    rng.shuffle(items)
    return items[:n_max]


# ---------------------------------------------------------------- jargon
def jargon_items(rng):
    txt = gzip.open("/usr/share/doc/jargon-text/jargon.txt.gz", "rt", encoding="utf-8").read()
    lines = txt.split("\n")
    entries, cur = [], None
    for ln in lines:
        m = re.match(r"^   :([^:]+):(.*)$", ln)
        if m:
            if cur:
                entries.append(cur)
            cur = [m.group(1).strip(), m.group(2).strip(), []]
        elif cur is not None:
            cur[2].append(ln.strip())
    if cur:
        entries.append(cur)
    items = []
    for term, pron, body in entries:
        paras = [re.sub(r"\s+", " ", p).strip() for p in "\n".join(body).split("\n\n")]
        paras = [p for p in paras if p and not p.startswith("[") or (p.startswith("[") and len(p) > 60)]
        if not paras:
            continue
        text = ""
        for p in paras:
            p = re.sub(r"\{([^}]*)\}", r"\1", p)
            if len(text) + len(p) > 700 and text:
                break
            text += ("\n\n" if text else "") + p
        if len(text) > 900:
            cut = text[:900].rfind(". ")
            text = text[: cut + 1] if cut > 200 else text[:900]
        if len(text) < 30:
            continue
        q = rng.choice([f'What does "{term}" mean in hacker jargon?', f"What is {term}?",
                        f"In the Jargon File, what is {term}?", f"Define {term} (hacker slang).",
                        f"What does {term} mean?", f"Explain the jargon term {term}."])
        items.append((q, text))
    return items


# ---------------------------------------------------------------- fortunes
FORTUNE_TOPICS = {"computers": "computers", "education": "education", "food": "food",
                  "humorists": "humor", "kids": "children", "law": "the law", "linux": "Linux",
                  "literature": "literature", "love": "love", "medicine": "medicine",
                  "science": "science", "sports": "sports", "wisdom": "wisdom", "work": "work",
                  "pets": "pets", "people": "people", "platitudes": "life", "tao": "the Tao",
                  "riddles": "riddles", "startrek": "Star Trek", "pratchett": "Discworld",
                  "fortunes": None, "cookie": None, "miscellaneous": None, "magic": "magic",
                  "paradoxum": "paradoxes", "goedel": "logic", "songs-poems": "poems",
                  "definitions": None, "linuxcookie": "Linux", "debian": "Debian",
                  "perl": "Perl", "zippy": None, "news": "the news", "art": "art"}


def fortune_items(rng):
    items = []
    for fn, topic in FORTUNE_TOPICS.items():
        p = f"/usr/share/games/fortunes/{fn}"
        if not os.path.exists(p):
            continue
        for f in read_text(p).split("\n%\n"):
            f = f.strip("%\n").rstrip()
            f = f.replace("\t", "    ")
            f = "\n".join(l.rstrip() for l in f.split("\n")).strip("\n")
            if not (20 <= len(f) <= 500) or "\x08" in f:
                continue
            qs = ["Tell me a fortune.", "Give me a quote.", "Say something interesting.",
                  "Tell me something.", "Share a fortune cookie.", "Can you give me a quote?"]
            if topic:
                qs += [f"Give me a quote about {topic}.", f"Tell me something about {topic}.",
                       f"Do you know a saying about {topic}?"]
            items.append((rng.choice(qs), f))
    return items


# ---------------------------------------------------------------- assemble
def make_convs(rng, items, sys_prompts, src, turn_weights=(0.6, 0.3, 0.1), p_sys=0.5, small=None):
    convs, i = [], 0
    items = list(items)
    rng.shuffle(items)
    while i < len(items):
        n = rng.choices([1, 2, 3], weights=turn_weights)[0]
        turns = [list(t) for t in items[i:i + n]]
        i += n
        if small and rng.random() < 0.1:
            turns.insert(0, list(rng.choice(small)))
        system = rng.choice(sys_prompts) if rng.random() < p_sys else None
        convs.append({"src": src, "system": system, "turns": turns})
    return convs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--wordnet", type=int, default=45000)
    ap.add_argument("--domain-repeat", type=int, default=6)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(WORK, exist_ok=True)

    dom = domain_pairs(rng)
    small = smalltalk_pairs()
    wn = wordnet_items(rng, args.wordnet)
    jg = jargon_items(rng)
    ft = fortune_items(rng)
    print(f"distinct domain pairs {len(dom)}, smalltalk {len(small)}, wordnet {len(wn)}, jargon {len(jg)}, fortunes {len(ft)}")

    # hold out 2% of each source (distinct items) before any repetition
    def split(items):
        items = list(items)
        rng.shuffle(items)
        k = max(1, int(len(items) * 0.02))
        return items[k:], items[:k]

    dom_tr, dom_va = split(dom)
    wn_tr, wn_va = split(wn)
    jg_tr, jg_va = split(jg)
    ft_tr, ft_va = split(ft)

    train, val = [], []
    for r in range(args.domain_repeat):
        train += make_convs(rng, rng.sample(dom_tr, min(len(dom_tr), 1500)) + small * 3,
                            SYSTEM_PROMPTS_DOMAIN + SYSTEM_PROMPTS_GENERAL[:2], "domain", p_sys=0.6)
    val += make_convs(rng, dom_va, SYSTEM_PROMPTS_DOMAIN, "domain", p_sys=0.6)
    for items, va, src in ((wn_tr, wn_va, "wordnet"), (jg_tr, jg_va, "jargon"), (ft_tr, ft_va, "fortunes")):
        train += make_convs(rng, items, SYSTEM_PROMPTS_GENERAL, src, small=small)
        val += make_convs(rng, va, SYSTEM_PROMPTS_GENERAL, src, small=small)
    rng.shuffle(train)
    rng.shuffle(val)
    for name, convs in (("train", train), ("val", val)):
        with open(os.path.join(WORK, f"convs_{name}.jsonl"), "w") as f:
            for c in convs:
                f.write(json.dumps(c, ensure_ascii=False) + "\n")
    # sentencepiece training text: one line per line of every field (train only)
    seen = set()
    with open(os.path.join(WORK, "spm_text.txt"), "w") as f:
        for c in train:
            fields = ([c["system"]] if c["system"] else []) + [x for t in c["turns"] for x in t]
            for x in fields:
                if x in seen:
                    continue
                seen.add(x)
                for ln in x.split("\n"):
                    if ln.strip():
                        f.write(ln + "\n")
    chars = sum(len(json.dumps(c)) for c in train)
    by = {}
    for c in train:
        by[c["src"]] = by.get(c["src"], 0) + sum(len(x) for t in c["turns"] for x in t)
    print(f"train convs {len(train)} val convs {len(val)} ~chars {chars}; chars by source {by}")


if __name__ == "__main__":
    main()
