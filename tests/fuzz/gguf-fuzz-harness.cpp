#include "gguf-fuzz-harness.h"

#include <string_view>

#include "model/gguf-reader.h"
#include "model/model-config.h"
#include "model/model-weights.h"
#include "tokenizer/chat-template.h"
#include "tokenizer/spm-proto.h"
#include "tokenizer/tokenizer.h"

namespace rc::testing {

namespace {

volatile uint8_t g_sink;  // keeps the touched bytes from being optimised away

void touch(const void* p, uint64_t n) {
  if (!p || n == 0) return;
  const uint8_t* b = static_cast<const uint8_t*>(p);
  g_sink = static_cast<uint8_t>(b[0] + b[n - 1]);
}

void touch(const kernels::Weight& w) {
  if (!w.data) return;
  touch(w.data, static_cast<uint64_t>(w.rows) * kernels::row_bytes(w.type, w.cols));
}

void exercise(const model::GgufFile& f) {
  for (const auto& [key, value] : f.metadata()) {
    (void)model::gguf_value_summary(value);
    (void)f.get_u32(key);
    (void)f.get_i64(key);
    (void)f.get_f32(key);
    (void)f.get_bool(key);
    (void)f.get_string(key);
    (void)f.get_string_array(key);
    (void)f.get_f32_array(key);
    (void)f.get_i32_array(key);
  }
  for (const model::GgufTensorInfo& t : f.tensors()) {
    (void)t.shape_string();
    touch(t.data, t.n_bytes);
  }
  Result<model::ModelConfig> cfg = model::parse_model_config(f);
  if (cfg.ok()) {
    (void)model::describe(*cfg);
    Result<model::ModelWeights> w = model::bind_model_weights(f, *cfg);
    if (w.ok()) {
      touch(w->token_embd);
      touch(w->output);
      touch(w->output_norm);
      touch(w->rope_freqs);
      for (const model::LayerWeights& l : w->layers) {
        for (const kernels::Weight* x :
             {&l.attn_norm, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_norm,
              &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
          touch(*x);
        }
      }
    }
  }
  // Tokenizer on small vocabularies only: sentencepiece's own load time grows
  // with the vocabulary and is not what is being fuzzed.
  const model::GgufArray* toks = f.find_array("tokenizer.ggml.tokens");
  if (toks && toks->count <= 4096) {
    Result<std::unique_ptr<tok::Tokenizer>> t = tok::Tokenizer::from_gguf(f);
    if (t.ok()) {
      Result<std::vector<int32_t>> ids =
          (*t)->encode("Hello <s> w\xC3\xB6rld \xF0\x9F\x99\x82 <|end|>", true);
      if (ids.ok()) {
        (void)(*t)->decode(*ids, true);
        tok::StreamDecoder sd(**t);
        for (int32_t id : *ids) (void)sd.push(id);
        (void)sd.flush();
      }
      Result<tok::ChatTemplate> tmpl = tok::ChatTemplate::for_model(&f, t->get());
      if (tmpl.ok()) {
        const tok::ChatMessage msgs[] = {{"system", "s"}, {"user", "u"}};
        (void)tok::render_tokens(*tmpl, **t, msgs, true);
      }
    }
  }
}

}  // namespace

bool fuzz_gguf_once(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (size < 4 || bytes.substr(0, 4) != "GGUF") {
    (void)tok::parse_spm_model(bytes);
  }
  Result<std::unique_ptr<model::GgufFile>> strict = model::GgufFile::from_memory({data, size});
  if (strict.ok()) exercise(**strict);
  model::GgufOpenOptions opt;
  opt.allow_unsupported_types = true;
  Result<std::unique_ptr<model::GgufFile>> loose = model::GgufFile::from_memory({data, size}, opt);
  if (loose.ok() && !strict.ok()) exercise(**loose);
  return strict.ok() || loose.ok();
}

}  // namespace rc::testing
