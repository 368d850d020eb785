// Model config and weight binding on random GGUFs of each arch and type.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>

#include "cpu/cpu-backends.h"
#include "cpu/quant.h"
#include "model/default-model.h"
#include "model/model-file.h"
#include "random-gguf.h"
#include "runtime/model-runner.h"

namespace rc::model {
namespace {

using kernels::DType;
using rc::testing::RandomModelSpec;

// Owns the bytes a GgufFile points into.
struct Loaded {
  std::vector<uint8_t> bytes;
  Result<std::unique_ptr<ModelFile>> model = Status(StatusCode::internal, "not loaded");
};

std::unique_ptr<Loaded> load(const RandomModelSpec& s,
                             const std::function<void(GgufWriter&)>& edit = {}) {
  auto l = std::make_unique<Loaded>();
  GgufWriter w;
  Status st = rc::testing::add_random_model(s, w);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (edit) edit(w);
  l->bytes = w.serialize();
  auto f = GgufFile::from_memory({l->bytes.data(), l->bytes.size()});
  if (!f.ok()) {
    l->model = f.status();
    return l;
  }
  l->model = load_model(std::move(f).value());
  return l;
}

RandomModelSpec small(const std::string& arch, const std::string& type) {
  RandomModelSpec s;
  s.arch = arch;
  s.type = type;
  const bool k =
      type == "q4_k" || type == "q5_k" || type == "q6_k" || type == "q4_k_m" || type == "q5_k_m";
  s.dim = k ? 256 : 64;
  s.ffn = k ? 512 : 96;
  s.heads = 4;
  s.kv_heads = 2;
  s.layers = type == "q4_k_m" || type == "q5_k_m" ? 8 : 2;
  s.vocab = 300;
  return s;
}

TEST(ModelConfig, EveryArchAndType) {
  for (const char* arch : {"llama", "qwen2"}) {
    for (const char* type : {"f32", "f16", "bf16", "q8_0", "q4_0", "q5_0", "q5_1", "q4_k", "q5_k",
                             "q6_k", "q4_k_m", "q5_k_m"}) {
      SCOPED_TRACE(std::string(arch) + " " + type);
      const RandomModelSpec s = small(arch, type);
      auto l = load(s);
      ASSERT_TRUE(l->model.ok()) << l->model.status().to_string();
      const ModelFile& m = **l->model;
      const ModelConfig& c = m.config;
      EXPECT_EQ(c.arch, arch);
      EXPECT_EQ(c.dim, s.dim);
      EXPECT_EQ(c.n_layers, s.layers);
      EXPECT_EQ(c.n_heads, 4);
      EXPECT_EQ(c.n_kv_heads, 2);
      EXPECT_EQ(c.head_dim, s.dim / 4);
      EXPECT_EQ(c.ffn_dim, s.ffn);
      EXPECT_EQ(c.n_vocab, 300);
      EXPECT_EQ(c.n_ctx_train, 256);
      EXPECT_FLOAT_EQ(c.norm_eps, 1e-5f);
      EXPECT_EQ(c.rope.n_rot, c.head_dim);
      EXPECT_EQ(c.rope.freq_base, 10000.0f);
      EXPECT_EQ(c.rope.neox_halves, std::string(arch) == "qwen2");
      EXPECT_EQ(c.rope.llama3_factor, 0.0f);
      EXPECT_FALSE(c.tied_output);

      const ModelWeights& w = m.weights;
      ASSERT_EQ(w.layers.size(), static_cast<size_t>(s.layers));
      EXPECT_EQ(w.token_embd.rows, 300);
      EXPECT_EQ(w.token_embd.cols, s.dim);
      EXPECT_EQ(w.output_norm.type, DType::f32);
      EXPECT_EQ(w.output_norm.rows, 1);
      const LayerWeights& L = w.layers[0];
      EXPECT_EQ(L.attn_q.rows, s.dim);
      EXPECT_EQ(L.attn_q.cols, s.dim);
      EXPECT_EQ(L.attn_k.rows, 2 * c.head_dim);
      EXPECT_EQ(L.attn_v.rows, 2 * c.head_dim);
      EXPECT_EQ(L.attn_output.cols, s.dim);
      EXPECT_EQ(L.ffn_gate.rows, s.ffn);
      EXPECT_EQ(L.ffn_down.rows, s.dim);
      EXPECT_EQ(L.ffn_down.cols, s.ffn);
      EXPECT_EQ(L.attn_norm.type, DType::f32);
      const DType expect = rc::testing::weight_type_for(type, "blk.1.attn_q.weight", 1, s.layers);
      EXPECT_EQ(L.attn_q.type, expect);
      EXPECT_EQ(w.token_embd.type, expect);
      if (std::string(arch) == "qwen2") {
        EXPECT_NE(L.bias_q, nullptr);
        EXPECT_NE(L.bias_k, nullptr);
        EXPECT_NE(L.bias_v, nullptr);
      } else {
        EXPECT_EQ(L.bias_q, nullptr);
      }
      // Weights decode to initialisation-sized values.
      std::vector<float> row(static_cast<size_t>(L.attn_q.cols));
      kernels::dequantize_row(L.attn_q.type, L.attn_q.data, row.data(), L.attn_q.cols);
      double ss = 0;
      for (float v : row) ss += double(v) * v;
      const double rms = std::sqrt(ss / row.size());
      EXPECT_GT(rms, 0.01);
      EXPECT_LT(rms, 0.04);
      EXPECT_NEAR(static_cast<const float*>(L.attn_norm.data)[0], 1.0f, 0.15f);
    }
  }
}

TEST(ModelConfig, Q4KMMixesTypesLikeLlamaCpp) {
  auto l = load(small("llama", "q4_k_m"));
  ASSERT_TRUE(l->model.ok()) << l->model.status().to_string();
  const ModelWeights& w = (*l->model)->weights;
  EXPECT_EQ(w.output.type, DType::q6_k);
  EXPECT_EQ(w.token_embd.type, DType::q4_k);
  EXPECT_EQ(w.layers[0].attn_v.type, DType::q6_k);    // first eighth
  EXPECT_EQ(w.layers[7].ffn_down.type, DType::q6_k);  // last eighth
  EXPECT_EQ(w.layers[2].attn_v.type, DType::q4_k);
  EXPECT_EQ(w.layers[3].attn_v.type, DType::q6_k);  // (3 - 1) % 3 == 2
  EXPECT_EQ(w.layers[3].attn_q.type, DType::q4_k);
}

// Widths that are not whole 256-blocks (Qwen2.5-0.5B's 896, say): the K
// types fall back as llama.cpp's quantizer does, so the _M files mix in
// Q5_0 / Q5_1 / Q8_0 rows.
TEST(ModelConfig, KQuantMixesFallBackOnNarrowRows) {
  for (const char* type : {"q4_k_m", "q5_k_m"}) {
    SCOPED_TRACE(type);
    const bool q4 = std::string(type) == "q4_k_m";
    RandomModelSpec s = small("qwen2", type);
    s.dim = 192;  // rows of 192: fallback; ffn_down rows of 512: K-quants
    s.ffn = 512;
    s.tied_output = true;
    auto l = load(s);
    ASSERT_TRUE(l->model.ok()) << l->model.status().to_string();
    const ModelWeights& w = (*l->model)->weights;
    EXPECT_EQ(w.token_embd.type, DType::q8_0);  // tied: the output's Q6_K, fallen back
    EXPECT_EQ(w.layers[0].attn_q.type, q4 ? DType::q5_0 : DType::q5_1);
    EXPECT_EQ(w.layers[0].attn_v.type, DType::q8_0);  // Q6_K in the first eighth
    EXPECT_EQ(w.layers[2].attn_v.type, q4 ? DType::q5_0 : DType::q5_1);
    EXPECT_EQ(w.layers[0].ffn_down.type, DType::q6_k);
    EXPECT_EQ(w.layers[2].ffn_down.type, q4 ? DType::q4_k : DType::q5_k);
  }
}

TEST(ModelConfig, TiedOutput) {
  RandomModelSpec s = small("llama", "q8_0");
  s.tied_output = true;
  auto l = load(s);
  ASSERT_TRUE(l->model.ok());
  const ModelFile& m = **l->model;
  EXPECT_TRUE(m.config.tied_output);
  EXPECT_EQ(m.weights.output.data, m.weights.token_embd.data);
  EXPECT_NE(describe(m.config).find("tied"), std::string::npos);
}

TEST(ModelConfig, Llama3RopeScalingRecoveredFromRopeFreqs) {
  for (int dim : {256, 32}) {  // head dim 128 (Llama 3.1's) and a tiny 16
    RandomModelSpec s = small("llama", "f32");
    s.dim = dim;
    s.heads = dim / (dim == 256 ? 128 : 16);
    s.kv_heads = 1;
    s.rope_base = 500000;
    s.llama3_rope = true;
    auto l = load(s);
    ASSERT_TRUE(l->model.ok()) << l->model.status().to_string();
    const ModelFile& m = **l->model;
    const kernels::RopeConfig& r = m.config.rope;
    EXPECT_TRUE(m.config.has_rope_freqs);
    EXPECT_FLOAT_EQ(r.llama3_factor, 8.0f);
    EXPECT_EQ(r.llama3_original_context, 8192);
    ASSERT_NE(m.weights.rope_freqs.data, nullptr);
    // Whatever low/high were recovered, they reproduce every stored divisor.
    const float* f = static_cast<const float*>(m.weights.rope_freqs.data);
    for (int i = 0; i < r.n_rot / 2; ++i) {
      const double freq = std::pow(double(r.freq_base), -2.0 * i / r.n_rot);
      const double wl = 2 * std::numbers::pi / freq, o = r.llama3_original_context;
      double d = 1;
      if (wl > o / r.llama3_low_freq_factor)
        d = r.llama3_factor;
      else if (wl >= o / r.llama3_high_freq_factor) {
        const double sm = (o / wl - r.llama3_low_freq_factor) /
                          (r.llama3_high_freq_factor - r.llama3_low_freq_factor);
        d = 1 / ((1 - sm) / r.llama3_factor + sm);
      }
      EXPECT_NEAR(d, f[i], 1e-3 * f[i]) << "pair " << i;
    }
    if (dim == 256) {  // enough interior points to pin the band exactly
      EXPECT_NEAR(r.llama3_low_freq_factor, 1.0f, 1e-3);
      EXPECT_NEAR(r.llama3_high_freq_factor, 4.0f, 1e-3);
    }
  }
}

TEST(ModelConfig, RopeFreqsThatAreNotLlama3AreRefused) {
  RandomModelSpec s = small("llama", "f32");
  auto l = load(s, [&](GgufWriter& w) {
    std::vector<float> f(s.dim / s.heads / 2);
    for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f + (i % 2) * 3.0f;  // zig-zag
    std::vector<uint8_t> b(f.size() * 4);
    std::memcpy(b.data(), f.data(), b.size());
    w.add_tensor("rope_freqs.weight", DType::f32, {static_cast<int64_t>(f.size())}, b);
  });
  ASSERT_FALSE(l->model.ok());
  EXPECT_EQ(l->model.status().code(), StatusCode::unsupported);
  EXPECT_NE(l->model.status().message().find("rope_freqs.weight"), std::string::npos);
}

struct BadCase {
  const char* what;
  std::function<void(GgufWriter&)> edit;
  StatusCode code;
  const char* message;
};

TEST(ModelConfig, ErrorsNameTheProblem) {
  const BadCase cases[] = {
      {"ffn mismatch", [](GgufWriter& w) { w.set_u32("llama.feed_forward_length", 64); },
       StatusCode::corrupt_data,
       "tensor 'blk.0.ffn_gate.weight' has shape [64, 96], expected [64, 64] (embedding_length x "
       "feed_forward_length)"},
      {"kv heads mismatch", [](GgufWriter& w) { w.set_u32("llama.attention.head_count_kv", 4); },
       StatusCode::corrupt_data,
       "tensor 'blk.0.attn_k.weight' has shape [64, 32], expected [64, 64]"},
      {"missing layer", [](GgufWriter& w) { w.set_u32("llama.block_count", 3); },
       StatusCode::not_found, "tensor 'blk.2.attn_norm.weight' is missing"},
      {"vocab mismatch",
       [](GgufWriter& w) {
         w.set("tokenizer.ggml.tokens", GgufOwnedValue::strings({"<unk>", "<s>", "</s>"}));
       },
       StatusCode::corrupt_data,
       "tensor 'token_embd.weight' has shape [64, 300], expected [64, 3]"},
      {"unknown arch", [](GgufWriter& w) { w.set_string("general.architecture", "gemma"); },
       StatusCode::unsupported,
       "architecture 'gemma' is not supported (supported: llama, qwen2, qwen3)"},
      {"missing key", [](GgufWriter& w) { w.set_string("general.architecture", "qwen2"); },
       StatusCode::not_found, "missing metadata key 'qwen2.context_length'"},
      {"heads", [](GgufWriter& w) { w.set_u32("llama.attention.head_count", 6); },
       StatusCode::corrupt_data,
       "embedding_length 64 is not a multiple of head_count 6 and llama.attention.key_length is "
       "missing"},
      {"key length vs tensors", [](GgufWriter& w) { w.set_u32("llama.attention.key_length", 8); },
       StatusCode::unsupported, "partial rotary embedding (rope.dimension_count 16 != head dim 8)"},
      {"key vs value length",
       [](GgufWriter& w) {
         w.set_u32("llama.attention.key_length", 16);
         w.set_u32("llama.attention.value_length", 32);
       },
       StatusCode::unsupported, "attention.value_length 32 differs from key_length 16"},
      {"odd head size",
       [](GgufWriter& w) {
         w.set_u32("llama.attention.key_length", 15);
         w.set_u32("llama.rope.dimension_count", 15);
       },
       StatusCode::corrupt_data, "head size 15 is odd"},
      {"llama3 metadata",
       [](GgufWriter& w) {
         w.set_string("llama.rope.scaling.type", "llama3");
         w.set_f32("llama.rope.scaling.factor", 8.0f);
         w.set_f32("llama.rope.scaling.low_freq_factor", 4.0f);
         w.set_f32("llama.rope.scaling.high_freq_factor", 1.0f);
       },
       StatusCode::corrupt_data, "llama3 rope scaling needs factor > 1"},
      {"gqa", [](GgufWriter& w) { w.set_u32("llama.attention.head_count_kv", 3); },
       StatusCode::corrupt_data, "head_count 4 is not a multiple of head_count_kv 3"},
      {"zero", [](GgufWriter& w) { w.set_u32("llama.block_count", 0); }, StatusCode::corrupt_data,
       "metadata 'llama.block_count' = 0 is outside 1..4096"},
      {"eps type",
       [](GgufWriter& w) { w.set_string("llama.attention.layer_norm_rms_epsilon", "x"); },
       StatusCode::corrupt_data,
       "metadata 'llama.attention.layer_norm_rms_epsilon' is string, expected f32"},
      {"yarn",
       [](GgufWriter& w) {
         w.set_string("llama.rope.scaling.type", "yarn");
         w.set_f32("llama.rope.scaling.factor", 4.0f);
       },
       StatusCode::unsupported, "rope scaling 'yarn'"},
      {"partial rope", [](GgufWriter& w) { w.set_u32("llama.rope.dimension_count", 8); },
       StatusCode::unsupported, "partial rotary embedding"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    auto l = load(small("llama", "f32"), c.edit);
    ASSERT_FALSE(l->model.ok());
    EXPECT_EQ(l->model.status().code(), c.code) << l->model.status().to_string();
    EXPECT_NE(l->model.status().message().find(c.message), std::string::npos)
        << l->model.status().message();
  }
}

// Qwen3: head size from key_length (heads * head_dim != dim), per-head
// q/k norms required, no biases; errors name the tensor or the key.
TEST(ModelConfig, Qwen3HeadSizeAndQkNorms) {
  RandomModelSpec s = small("qwen3", "q8_0");
  s.dim = 96;
  s.head_dim = 32;  // 4 heads * 32 = 128 != 96
  auto l = load(s);
  ASSERT_TRUE(l->model.ok()) << l->model.status().to_string();
  const ModelFile& m = **l->model;
  EXPECT_EQ(m.config.arch_id, Arch::qwen3);
  EXPECT_EQ(m.config.head_dim, 32);
  EXPECT_TRUE(m.config.qk_norm);
  EXPECT_FALSE(m.config.qkv_bias);
  EXPECT_TRUE(m.config.rope.neox_halves);
  EXPECT_EQ(m.weights.layers[0].attn_q.rows, 128);
  EXPECT_EQ(m.weights.layers[0].attn_output.cols, 128);
  EXPECT_EQ(m.weights.layers[1].attn_k_norm.cols, 32);
  EXPECT_EQ(m.weights.layers[0].bias_q, nullptr);
  EXPECT_NE(describe(m.config).find("q/k norm: per head"), std::string::npos);

  auto no_norm = load(s, [](GgufWriter& w) { w.remove_tensor("blk.1.attn_k_norm.weight"); });
  ASSERT_FALSE(no_norm->model.ok());
  EXPECT_EQ(no_norm->model.status().code(), StatusCode::not_found);
  EXPECT_NE(no_norm->model.status().message().find("tensor 'blk.1.attn_k_norm.weight' is missing"),
            std::string::npos);
  // key_length that disagrees with the tensors: the first one named.
  auto bad_len = load(s, [](GgufWriter& w) {
    w.set_u32("qwen3.attention.key_length", 16);
    w.set_u32("qwen3.attention.value_length", 16);
    w.set_u32("qwen3.rope.dimension_count", 16);
  });
  ASSERT_FALSE(bad_len->model.ok());
  EXPECT_EQ(bad_len->model.status().code(), StatusCode::corrupt_data);
  EXPECT_NE(bad_len->model.status().message().find(
                "tensor 'blk.0.attn_q.weight' has shape [96, 128], expected [96, 64]"),
            std::string::npos)
      << bad_len->model.status().message();
  // Without key_length, dim must split into heads.
  RandomModelSpec odd = s;
  odd.head_dim = 0;
  odd.dim = 100;
  GgufWriter w;
  EXPECT_FALSE(rc::testing::add_random_model(odd, w).ok());  // the tool refuses it too
}

// Head counts, head sizes and widths that disagree with each other or with
// the tensors, in random combinations: each load either fails with a
// status or gives a model whose forward pass runs (no crash, finite logits).
TEST(ModelConfig, RandomHeadGeometryIsAnErrorOrRuns) {
  const RandomModelSpec base = [] {
    RandomModelSpec s = small("qwen3", "f32");
    s.dim = 48, s.heads = 4, s.kv_heads = 2, s.head_dim = 16, s.ffn = 64, s.layers = 1;
    return s;
  }();
  uint32_t x = 12345;
  auto pick = [&x](std::initializer_list<uint32_t> v) {
    x = x * 1664525u + 1013904223u;
    return *(v.begin() + (x >> 8) % v.size());
  };
  int loaded = 0, refused = 0;
  auto backend = kernels::make_reference_backend();
  for (int i = 0; i < 150; ++i) {
    const uint32_t heads = pick({1, 2, 3, 4, 8}), kv = pick({1, 2, 4}), key = pick({8, 12, 16, 32});
    const uint32_t value = pick({16, 16, 8}), rot = pick({16, 16, 12}), emb = pick({48, 48, 64});
    auto l = load(base, [&](GgufWriter& w) {
      w.set_u32("qwen3.attention.head_count", heads);
      w.set_u32("qwen3.attention.head_count_kv", kv);
      w.set_u32("qwen3.attention.key_length", key);
      w.set_u32("qwen3.attention.value_length", value);
      w.set_u32("qwen3.rope.dimension_count", rot);
      w.set_u32("qwen3.embedding_length", emb);
    });
    if (!l->model.ok()) {
      ++refused;
      EXPECT_FALSE(l->model.status().message().empty());
      continue;
    }
    ++loaded;
    const ModelConfig& c = (*l->model)->config;
    auto pool = backend->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, 4, 2});
    auto runner = runtime::ModelRunner::create(**l->model, *backend, *pool, 8, 1);
    ASSERT_TRUE(runner.ok()) << runner.status().to_string();
    const std::vector<int32_t> pages{1, 0}, ids{1, 5, 9};
    runtime::ForwardBatch b;
    b.add(pages, 0, ids.data(), 3, true);
    std::vector<float> logits;
    ASSERT_TRUE((*runner)->forward(b, logits).ok());
    for (float v : logits) ASSERT_TRUE(std::isfinite(v));
  }
  EXPECT_GT(loaded, 0);  // the file's own geometry comes up
  EXPECT_GT(refused, 0);
}

// Llama 3.1 scaling given as rope.scaling.* metadata (no rope_freqs.weight).
TEST(ModelConfig, Llama3RopeScalingFromMetadata) {
  RandomModelSpec s = small("llama", "f32");
  s.llama3_rope_metadata = true;
  s.rope_base = 500000.0f;
  auto l = load(s);
  ASSERT_TRUE(l->model.ok()) << l->model.status().to_string();
  const ModelConfig& c = (*l->model)->config;
  EXPECT_EQ(c.rope.llama3_factor, 8.0f);
  EXPECT_EQ(c.rope.llama3_low_freq_factor, 1.0f);
  EXPECT_EQ(c.rope.llama3_high_freq_factor, 4.0f);
  EXPECT_EQ(c.rope.llama3_original_context, 8192);
  EXPECT_FALSE(c.has_rope_freqs);
}

TEST(ModelConfig, NormMustBeF32AndQwenNeedsBiases) {
  auto f16_norm = load(small("llama", "f16"), [](GgufWriter& w) {
    ASSERT_TRUE(w.remove_tensor("output_norm.weight"));
    w.add_tensor("output_norm.weight", DType::f16, {64}, std::vector<uint8_t>(128, 0));
  });
  ASSERT_FALSE(f16_norm->model.ok());
  EXPECT_EQ(f16_norm->model.status().code(), StatusCode::unsupported);
  EXPECT_EQ(f16_norm->model.status().message(),
            "tensor 'output_norm.weight' is F16; 1-D tensors must be F32");
  auto no_q =
      load(small("llama", "f16"), [](GgufWriter& w) { w.remove_tensor("blk.1.attn_q.weight"); });
  EXPECT_EQ(no_q->model.status().message(), "tensor 'blk.1.attn_q.weight' is missing");

  // qwen2 metadata over llama tensors: biases are required.
  auto l = load(small("llama", "f32"), [](GgufWriter& w) {
    // Rename every llama.* key to qwen2.* by re-setting the architecture and keys.
    w.set_string("general.architecture", "qwen2");
    w.set_u32("qwen2.context_length", 256);
    w.set_u32("qwen2.embedding_length", 64);
    w.set_u32("qwen2.block_count", 2);
    w.set_u32("qwen2.feed_forward_length", 96);
    w.set_u32("qwen2.attention.head_count", 4);
    w.set_u32("qwen2.attention.head_count_kv", 2);
    w.set_f32("qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
  });
  ASSERT_FALSE(l->model.ok());
  EXPECT_EQ(l->model.status().message(), "tensor 'blk.0.attn_q.bias' is missing");
}

TEST(ModelConfig, LoadModelFromFileAndPrefixesErrors) {
  const std::string path = ::testing::TempDir() + "/cfg-test.gguf";
  RandomModelSpec s = small("qwen2", "q8_0");
  ASSERT_TRUE(rc::testing::write_random_model(s, path).ok());
  auto m = load_model(path);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->config.arch, "qwen2");
  EXPECT_EQ((*m)->file->path(), path);
  EXPECT_GT((*m)->weights.total_bytes, 0u);
  // The same spec and seed give the same bytes; another seed does not.
  const std::string again = path + ".2";
  ASSERT_TRUE(rc::testing::write_random_model(s, again).ok());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(path), slurp(again));
  s.seed = 2;
  ASSERT_TRUE(rc::testing::write_random_model(s, again).ok());
  EXPECT_NE(slurp(path), slurp(again));

  auto missing = load_model("/nonexistent.gguf");
  EXPECT_EQ(missing.status().code(), StatusCode::not_found);
  s.seed = 1;
  GgufWriter w;
  ASSERT_TRUE(rc::testing::add_random_model(s, w).ok());
  w.set_u32("qwen2.feed_forward_length", 32);
  ASSERT_TRUE(w.write_file(again).ok());
  auto bad = load_model(again);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind(again + ": tensor 'blk.0.ffn_gate.weight'", 0), 0u)
      << bad.status().message();
  std::remove(path.c_str());
  std::remove(again.c_str());
}

TEST(ModelConfig, BundledModel) {
  const std::string path = std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/radixchat-demo.gguf";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is committed";
  auto m = load_model(path);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const ModelConfig& c = (*m)->config;
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.n_vocab, 4096);
  EXPECT_LT(c.n_kv_heads, c.n_heads);  // GQA, as the recipe promises
  EXPECT_EQ(c.n_ctx_train, 1024);
  EXPECT_FALSE(c.rope.neox_halves);
  EXPECT_EQ(c.rope.n_rot, c.head_dim);
  EXPECT_EQ((*m)->weights.layers.size(), static_cast<size_t>(c.n_layers));
  // Its recommended sampling (assets/model/set_sampling.py).
  EXPECT_EQ(c.sampling.temperature, 0.5f);
  EXPECT_EQ(c.sampling.top_k, 40);
  EXPECT_EQ(c.sampling.top_p, 0.95f);
  EXPECT_EQ(c.sampling.min_p, 0.1f);
  EXPECT_FALSE(c.sampling.repetition_penalty.has_value());
}

// llama.cpp's general.sampling.* keys, in whatever widths a writer chose; a
// bad value is skipped, never a reason to refuse the model; a declared 0 is
// kept (greedy is a choice).
TEST(ModelConfig, RecommendedSamplingIsReadLeniently) {
  auto l = load(small("llama", "f32"), [](GgufWriter& w) {
    w.set_f32("general.sampling.temp", 0.0f);
    w.set_u32("general.sampling.top_k", 20);
    w.set("general.sampling.top_p", GgufOwnedValue::f64(0.9));
    w.set("general.sampling.penalty_last_n", GgufOwnedValue::i64(128));
    w.set_f32("general.sampling.min_p", 7.0f);               // out of range
    w.set_string("general.sampling.penalty_repeat", "1.1");  // not a number
  });
  ASSERT_TRUE(l->model.ok()) << l->model.status().to_string();
  const RecommendedSampling& s = (*l->model)->config.sampling;
  EXPECT_EQ(s.temperature, 0.0f);
  EXPECT_EQ(s.top_k, 20);
  EXPECT_EQ(s.top_p, 0.9f);
  EXPECT_EQ(s.repeat_last_n, 128);
  EXPECT_FALSE(s.min_p.has_value());
  EXPECT_FALSE(s.repetition_penalty.has_value());
  EXPECT_EQ(describe_sampling(s),
            "temperature 0, top-k 20, top-p 0.9, repetition window 128 tokens");
  SamplingParams base;
  base.temperature = 1.0f;
  const SamplingParams over = s.over(base);
  EXPECT_EQ(over.temperature, 0.0f);
  EXPECT_EQ(over.top_k, 20);
  EXPECT_EQ(over.min_p, base.min_p);
  auto none = load(small("llama", "f32"));
  ASSERT_TRUE(none->model.ok());
  EXPECT_TRUE((*none->model)->config.sampling.empty());
  EXPECT_EQ(describe_sampling((*none->model)->config.sampling), "");
}

TEST(ModelConfig, DefaultModelPath) {
  unsetenv("RADIXCHAT_MODEL");
  EXPECT_EQ(default_model_path(),
            std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/radixchat-demo.gguf");
  setenv("RADIXCHAT_MODEL", "/tmp/x.gguf", 1);
  EXPECT_EQ(default_model_path(), "/tmp/x.gguf");
  unsetenv("RADIXCHAT_MODEL");
  EXPECT_EQ(sidecar_tokenizer_path("/a/b/m.gguf"), "/a/b/tokenizer.model");
  EXPECT_EQ(sidecar_tokenizer_path("m.gguf"), "tokenizer.model");
}

}  // namespace
}  // namespace rc::model
