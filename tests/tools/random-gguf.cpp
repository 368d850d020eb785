#include "random-gguf.h"

#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

#include "copy-gguf.h"
#include "cpu/quant.h"
#include "model/gguf-reader.h"
#include "splitmix.h"
#include "tokenizer/chat-template.h"
#include "tokenizer/spm-proto.h"

namespace rc::testing {

using kernels::DType;
using model::GgufOwnedValue;
using model::GgufWriter;

namespace {

Status bad(std::string msg) { return Status(StatusCode::invalid_argument, std::move(msg)); }

using Rng = SplitMix64;

bool parse_type(const std::string& t, DType* out) {
  static const std::pair<const char*, DType> kTypes[] = {
      {"f32", DType::f32},   {"f16", DType::f16},     {"bf16", DType::bf16},
      {"q8_0", DType::q8_0}, {"q4_0", DType::q4_0},   {"q5_0", DType::q5_0},
      {"q5_1", DType::q5_1}, {"q4_k", DType::q4_k},   {"q5_k", DType::q5_k},
      {"q6_k", DType::q6_k}, {"q4_k_m", DType::q4_k}, {"q5_k_m", DType::q5_k}};
  for (auto& [n, d] : kTypes) {
    if (t == n) {
      *out = d;
      return true;
    }
  }
  return false;
}

uint32_t file_type_id(const std::string& t) {  // llama.cpp's general.file_type values
  if (t == "f32") return 0;
  if (t == "f16") return 1;
  if (t == "q4_0") return 2;
  if (t == "q8_0") return 7;
  if (t == "q5_0") return 8;
  if (t == "q5_1") return 9;
  if (t == "q5_k") return 16;  // Q5_K_S
  if (t == "q5_k_m") return 17;
  if (t == "q4_k") return 14;  // Q4_K_S: all Q4_K
  if (t == "q4_k_m") return 15;
  if (t == "q6_k") return 18;
  return 32;  // bf16
}

// Adds a tensor [rows][cols] (GGUF ne {cols, rows}) whose fp32 values are
// mean + std * N(0,1), converted to `type` when the file is written.
void add_random(GgufWriter& w, const std::string& name, DType type, int64_t cols, int64_t rows,
                float mean, float std, uint64_t seed) {
  std::vector<int64_t> ne = {cols};
  if (rows > 1) ne.push_back(rows);
  const uint64_t s = name_hash(seed, name);
  w.add_tensor_fill(name, type, ne, [=](uint8_t* dst, size_t n_bytes) {
    Rng rng{s};
    std::vector<float> row(static_cast<size_t>(cols));
    const size_t rb = n_bytes / static_cast<size_t>(rows);
    for (int64_t r = 0; r < rows; ++r) {
      for (float& v : row) v = mean + std * rng.normal();
      kernels::quantize_row(type, row.data(), dst + r * rb, cols);
    }
  });
}

}  // namespace

Result<VocabPieces> vocab_from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::not_found, path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  VocabPieces v;
  if (bytes.compare(0, 4, "GGUF") == 0) {
    auto f = model::GgufFile::from_memory(
        {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, {true});
    if (!f.ok()) return f.status();
    auto toks = (*f)->get_string_array("tokenizer.ggml.tokens");
    if (!toks.ok()) return toks.status();
    for (auto t : *toks) v.tokens.emplace_back(t);
    auto sc = (*f)->get_f32_array("tokenizer.ggml.scores");
    v.scores = sc.ok() ? *sc : std::vector<float>(v.tokens.size(), 0.0f);
    auto ty = (*f)->get_i32_array("tokenizer.ggml.token_type");
    v.types = ty.ok() ? *ty : std::vector<int32_t>(v.tokens.size(), 1);
    auto id = [&f](const char* key, int32_t fallback) {
      Result<uint32_t> r = (*f)->get_u32_or(key, static_cast<uint32_t>(fallback));
      return r.ok() ? static_cast<int32_t>(*r) : fallback;
    };
    v.bos = id("tokenizer.ggml.bos_token_id", 1);
    v.eos = id("tokenizer.ggml.eos_token_id", 2);
    v.unk = id("tokenizer.ggml.unknown_token_id", 0);
    return v;
  }
  Result<tok::SpmModel> m = tok::parse_spm_model(bytes);
  if (!m.ok()) return m.status();
  for (const tok::SpmPiece& p : m->pieces) {
    v.tokens.push_back(p.piece);
    v.scores.push_back(p.score);
    v.types.push_back(static_cast<int32_t>(p.type));
  }
  v.bos = m->bos_id;
  v.eos = m->eos_id;
  v.unk = m->unk_id;
  return v;
}

namespace {

DType mix_type(const std::string& type, const std::string& name, int layer, int n_layers) {
  DType t = DType::f32;
  parse_type(type, &t);
  if (type != "q4_k_m" && type != "q5_k_m") return t;
  if (name == "output.weight") return DType::q6_k;
  // llama.cpp's use_more_bits(): first and last eighth, and every third layer between.
  const bool more =
      layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
  const bool bumpable = name.find("attn_v.weight") != std::string::npos ||
                        name.find("ffn_down.weight") != std::string::npos;
  return bumpable && more ? DType::q6_k : t;
}

}  // namespace

DType weight_type_for(const std::string& type, const std::string& name, int layer, int n_layers,
                      int64_t cols) {
  const DType t = mix_type(type, name, layer, n_layers);
  if (cols <= 0 || cols % 256 == 0) return t;
  switch (t) {  // llama.cpp's fallback for rows that are not whole super-blocks
    case DType::q4_k:
      return DType::q5_0;
    case DType::q5_k:
      return DType::q5_1;
    case DType::q6_k:
      return DType::q8_0;
    default:
      return t;
  }
}

Status check_spec(const RandomModelSpec& s) {
  if (s.arch != "llama" && s.arch != "qwen2" && s.arch != "qwen3") {
    return bad("--arch must be llama, qwen2 or qwen3");
  }
  DType t;
  if (!parse_type(s.type, &t)) {
    return bad(
        "--type must be one of f32 f16 bf16 q8_0 q4_0 q5_0 q5_1 q4_k q5_k q6_k q4_k_m q5_k_m");
  }
  if (s.dim <= 0 || s.layers <= 0 || s.heads <= 0 || s.kv_heads <= 0 || s.ffn <= 0 || s.ctx <= 0 ||
      s.head_dim < 0 || (s.vocab <= 3 && s.vocab_from.empty())) {
    return bad("sizes must be positive (and --vocab > 3)");
  }
  if ((s.head_dim == 0 && s.dim % s.heads != 0) || s.heads % s.kv_heads != 0) {
    return bad(
        "--dim must be a multiple of --heads (or --head-dim given), and --heads of "
        "--kv-heads");
  }
  const int head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.heads;
  if (head_dim % 2 != 0) return bad("head dim must be even");
  // Every quantized row length (dim, ffn, q width) must hold whole blocks;
  // K-quants fall back to 32-blocks where rows are not whole 256-blocks.
  const int64_t block = kernels::block_elems(t) > 1 ? 32 : 1;
  const int64_t q_width = int64_t(s.heads) * head_dim;
  if (s.dim % block != 0 || s.ffn % block != 0 || q_width % block != 0) {
    return bad("--type " + s.type + " needs --dim, --ffn and heads * head dim multiples of " +
               std::to_string(block));
  }
  return s.copy ? check_copy_spec(s) : Status();
}

VocabPieces synthetic_vocab(int n) {
  VocabPieces v;
  auto add = [&v](std::string p, float score, int32_t type) {
    v.tokens.push_back(std::move(p));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0, 2);
  add("<s>", 0, 3);
  add("</s>", 0, 3);
  if (n >= 300) {
    for (int b = 0; b < 256; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", b);
      add(buf, 0, 6);
    }
    for (const char* m : {"<|system|>", "<|user|>", "<|assistant|>", "<|end|>"}) add(m, 0, 4);
  }
  // Single characters, then "▁" + letter pairs, with falling scores (merge priority).
  const std::string sp = "\xE2\x96\x81";
  std::vector<std::string> filler = {sp};
  for (char c = 'a'; c <= 'z'; ++c) filler.push_back(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c) filler.push_back(sp + c);
  for (char a = 'a'; a <= 'z'; ++a)
    for (char b = 'a'; b <= 'z'; ++b) filler.push_back(std::string{a, b});
  size_t k = 0;
  while (static_cast<int>(v.tokens.size()) < n) {
    std::string p = k < filler.size() ? filler[k] : "<filler-" + std::to_string(k) + ">";
    add(p, -static_cast<float>(k), 1);
    ++k;
  }
  v.tokens.resize(n);
  v.scores.resize(n);
  v.types.resize(n);
  return v;
}

void add_vocab_metadata(const VocabPieces& v, bool add_space_prefix, GgufWriter& w) {
  w.set_string("tokenizer.ggml.model", "llama");
  w.set("tokenizer.ggml.tokens", GgufOwnedValue::strings(v.tokens));
  w.set("tokenizer.ggml.scores", GgufOwnedValue::f32s(v.scores));
  w.set("tokenizer.ggml.token_type", GgufOwnedValue::i32s(v.types));
  w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos));
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos));
  w.set_u32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk));
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_space_prefix", add_space_prefix);
}

Status add_random_model(const RandomModelSpec& s, GgufWriter& w) {
  if (Status st = check_spec(s); !st.ok()) return st;
  VocabPieces vocab;
  if (!s.vocab_from.empty()) {
    Result<VocabPieces> v = vocab_from_file(s.vocab_from);
    if (!v.ok()) return v.status();
    vocab = std::move(v).value();
  } else {
    vocab = synthetic_vocab(s.vocab);
  }
  const int64_t n_vocab = static_cast<int64_t>(vocab.tokens.size());
  const std::string a = s.arch + ".";
  const int head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.heads;
  w.set_string("general.architecture", s.arch);
  w.set_string("general.name", (s.copy ? "copy-" : "random-") + s.arch + "-" + s.type);
  w.set_u32("general.file_type", file_type_id(s.type));
  w.set_u32(a + "context_length", static_cast<uint32_t>(s.ctx));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.dim));
  w.set_u32(a + "block_count", static_cast<uint32_t>(s.layers));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(s.ffn));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.heads));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.kv_heads));
  w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_f32(a + "rope.freq_base", s.copy ? copy_rope_base() : s.rope_base);
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(head_dim));
  if (s.head_dim > 0) {
    w.set_u32(a + "attention.key_length", static_cast<uint32_t>(head_dim));
    w.set_u32(a + "attention.value_length", static_cast<uint32_t>(head_dim));
  }
  if (s.llama3_rope_metadata) {
    w.set_string(a + "rope.scaling.type", "llama3");
    w.set_f32(a + "rope.scaling.factor", 8.0f);
    w.set_f32(a + "rope.scaling.low_freq_factor", 1.0f);
    w.set_f32(a + "rope.scaling.high_freq_factor", 4.0f);
    w.set_u32(a + "rope.scaling.original_context_length", 8192);
  }
  add_vocab_metadata(vocab, /*add_space_prefix=*/s.vocab_from.empty(), w);
  if (!s.chat_template.empty()) {
    Result<tok::ChatTemplate> t = tok::ChatTemplate::by_name(s.chat_template);
    if (!t.ok()) return t.status();
    w.set_string("tokenizer.chat_template", t->reference_jinja());
  }

  if (s.copy) {
    add_copy_tensors(s, n_vocab, w);
    return {};
  }
  const int64_t dim = s.dim, q = int64_t(s.heads) * head_dim;
  const int64_t kv = int64_t(s.kv_heads) * head_dim, ffn = s.ffn;
  auto wt = [&](const std::string& name, int layer, int64_t cols) {
    return weight_type_for(s.type, name, layer, s.layers, cols);
  };
  // Embedding rows are gathered, not multiplied, but stay in the file's
  // type like llama.cpp's; a tied one is quantized as the output.
  const std::string embd_as = s.tied_output ? "output.weight" : "token_embd.weight";
  add_random(w, "token_embd.weight", wt(embd_as, 0, dim), dim, n_vocab, 0, 0.02f, s.seed);
  add_random(w, "output_norm.weight", DType::f32, dim, 1, 1.0f, 0.02f, s.seed);
  if (!s.tied_output) {
    add_random(w, "output.weight", wt("output.weight", 0, dim), dim, n_vocab, 0, 0.02f, s.seed);
  }
  if (s.llama3_rope) {
    // As convert_hf_to_gguf.py: divisors of each pair's frequency.
    const double factor = 8, lo = 1, hi = 4, orig = 8192;
    std::vector<float> f;
    for (int i = 0; i < head_dim / 2; ++i) {
      const double freq = std::pow(double(s.rope_base), -2.0 * i / head_dim);
      const double wl = 2 * std::numbers::pi / freq;
      if (wl < orig / hi)
        f.push_back(1.0f);
      else if (wl > orig / lo)
        f.push_back(static_cast<float>(factor));
      else {
        const double sm = (orig / wl - lo) / (hi - lo);
        f.push_back(static_cast<float>(1.0 / ((1 - sm) / factor + sm)));
      }
    }
    std::vector<uint8_t> bytes(f.size() * 4);
    std::memcpy(bytes.data(), f.data(), bytes.size());
    w.add_tensor("rope_freqs.weight", DType::f32, {static_cast<int64_t>(f.size())}, bytes);
  }
  for (int l = 0; l < s.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    auto mat = [&](const char* n, int64_t cols, int64_t rows) {
      add_random(w, b + n, wt(b + n, l, cols), cols, rows, 0, 0.02f, s.seed);
    };
    add_random(w, b + "attn_norm.weight", DType::f32, dim, 1, 1.0f, 0.02f, s.seed);
    mat("attn_q.weight", dim, q);
    mat("attn_k.weight", dim, kv);
    mat("attn_v.weight", dim, kv);
    mat("attn_output.weight", q, dim);
    add_random(w, b + "ffn_norm.weight", DType::f32, dim, 1, 1.0f, 0.02f, s.seed);
    mat("ffn_gate.weight", dim, ffn);
    mat("ffn_up.weight", dim, ffn);
    mat("ffn_down.weight", ffn, dim);
    if (s.arch == "qwen3") {  // per-head norms, spread so skipping them shows
      add_random(w, b + "attn_q_norm.weight", DType::f32, head_dim, 1, 1.0f, 0.3f, s.seed);
      add_random(w, b + "attn_k_norm.weight", DType::f32, head_dim, 1, 1.0f, 0.3f, s.seed);
    }
    if (s.arch == "qwen2") {
      add_random(w, b + "attn_q.bias", DType::f32, q, 1, 0, 0.02f, s.seed);
      add_random(w, b + "attn_k.bias", DType::f32, kv, 1, 0, 0.02f, s.seed);
      add_random(w, b + "attn_v.bias", DType::f32, kv, 1, 0, 0.02f, s.seed);
    }
  }
  return {};
}

Status write_random_model(const RandomModelSpec& spec, const std::string& path) {
  GgufWriter w;
  if (Status s = add_random_model(spec, w); !s.ok()) return s;
  return w.write_file(path);
}

}  // namespace rc::testing
