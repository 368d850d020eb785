#include "model-weights.h"

#include <cstdint>
#include <initializer_list>

#include "model-file.h"

namespace rc::model {

namespace {

std::string shape_str(std::initializer_list<int64_t> shape) {
  std::string s = "[";
  bool first = true;
  for (int64_t d : shape) {
    s += (first ? "" : ", ") + std::to_string(d);
    first = false;
  }
  return s + "]";
}

enum class Need { required, optional };

// Binds `name` as a Weight of GGUF shape `shape` (ne order). Trailing
// dimensions of 1 are ignored on both sides, as converters differ there.
// Sets *found (when non-null) to whether the tensor exists.
Status bind(const GgufFile& f, const std::string& name, std::initializer_list<int64_t> shape,
            const char* meaning, bool f32_only, Need need, kernels::Weight* out, uint64_t* total,
            bool* found = nullptr) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (found) *found = t != nullptr;
  if (!t) {
    if (need == Need::optional) return {};
    return Status(StatusCode::not_found, "tensor '" + name + "' is missing");
  }
  std::array<int64_t, 4> want = {1, 1, 1, 1};
  size_t i = 0;
  for (int64_t d : shape) want[i++] = d;
  if (t->ne != want) {
    return Status(StatusCode::corrupt_data, "tensor '" + name + "' has shape " + t->shape_string() +
                                                ", expected " + shape_str(shape) + " (" + meaning +
                                                ")");
  }
  if (!t->supported) {
    return Status(StatusCode::unsupported,
                  "tensor '" + name + "' has type " + ggml_type_name(t->type_id) +
                      " (supported: " + kernels::supported_dtypes_list() + ")");
  }
  if (f32_only && t->type != kernels::DType::f32) {
    return Status(
        StatusCode::unsupported,
        "tensor '" + name + "' is " + kernels::dtype_name(t->type) + "; 1-D tensors must be F32");
  }
  // The kernels read floats and fp16 halves in place.
  const uintptr_t align = t->type == kernels::DType::f32 ? 4 : 2;
  if (reinterpret_cast<uintptr_t>(t->data) % align != 0) {
    return Status(StatusCode::unsupported,
                  "tensor '" + name + "' data is not " + std::to_string(align) + "-byte aligned");
  }
  *out = kernels::Weight{t->type, t->data, t->ne[1], t->ne[0]};
  *total += t->n_bytes;
  return {};
}

}  // namespace

Result<ModelWeights> bind_model_weights(const GgufFile& f, const ModelConfig& c) {
  ModelWeights w;
  const int64_t dim = c.dim, q = int64_t(c.n_heads) * c.head_dim;
  const int64_t kv = int64_t(c.n_kv_heads) * c.head_dim, ffn = c.ffn_dim, vocab = c.n_vocab;
  uint64_t* tot = &w.total_bytes;
  const Need req = Need::required;
  if (Status s = bind(f, "token_embd.weight", {dim, vocab}, "embedding_length x vocabulary", false,
                      req, &w.token_embd, tot);
      !s.ok())
    return s;
  if (Status s =
          bind(f, "output_norm.weight", {dim}, "embedding_length", true, req, &w.output_norm, tot);
      !s.ok())
    return s;
  bool has_output = false;
  if (Status s = bind(f, "output.weight", {dim, vocab}, "embedding_length x vocabulary", false,
                      Need::optional, &w.output, tot, &has_output);
      !s.ok())
    return s;
  w.tied_output = !has_output;
  if (w.tied_output) w.output = w.token_embd;
  if (f.find_tensor("rope_freqs.weight")) {
    if (Status s = bind(f, "rope_freqs.weight", {c.rope.n_rot / 2}, "rope.dimension_count / 2",
                        true, req, &w.rope_freqs, tot);
        !s.ok())
      return s;
  }

  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w.layers[l];
    const std::string b = "blk." + std::to_string(l) + ".";
    struct Item {
      const char* name;
      std::initializer_list<int64_t> shape;
      const char* meaning;
      bool f32;
      kernels::Weight* out;
    };
    const Item items[] = {
        {"attn_norm.weight", {dim}, "embedding_length", true, &L.attn_norm},
        {"attn_q.weight", {dim, q}, "embedding_length x head_count*head_dim", false, &L.attn_q},
        {"attn_k.weight", {dim, kv}, "embedding_length x head_count_kv*head_dim", false, &L.attn_k},
        {"attn_v.weight", {dim, kv}, "embedding_length x head_count_kv*head_dim", false, &L.attn_v},
        {"attn_output.weight",
         {q, dim},
         "head_count*head_dim x embedding_length",
         false,
         &L.attn_output},
        {"ffn_norm.weight", {dim}, "embedding_length", true, &L.ffn_norm},
        {"ffn_gate.weight",
         {dim, ffn},
         "embedding_length x feed_forward_length",
         false,
         &L.ffn_gate},
        {"ffn_up.weight", {dim, ffn}, "embedding_length x feed_forward_length", false, &L.ffn_up},
        {"ffn_down.weight",
         {ffn, dim},
         "feed_forward_length x embedding_length",
         false,
         &L.ffn_down},
    };
    for (const Item& it : items) {
      if (Status s = bind(f, b + it.name, it.shape, it.meaning, it.f32, req, it.out, tot); !s.ok())
        return s;
    }
    if (c.qk_norm) {
      const int64_t hd = c.head_dim;
      if (Status s = bind(f, b + "attn_q_norm.weight", {hd}, "attention.key_length", true, req,
                          &L.attn_q_norm, tot);
          !s.ok())
        return s;
      if (Status s = bind(f, b + "attn_k_norm.weight", {hd}, "attention.key_length", true, req,
                          &L.attn_k_norm, tot);
          !s.ok())
        return s;
    }
    // qwen2 always carries Q/K/V biases; llama files occasionally do.
    const Need bias_need = c.qkv_bias ? Need::required : Need::optional;
    struct Bias {
      const char* name;
      int64_t n;
      const char* meaning;
      const float** out;
    };
    const Bias biases[] = {{"attn_q.bias", q, "head_count*head_dim", &L.bias_q},
                           {"attn_k.bias", kv, "head_count_kv*head_dim", &L.bias_k},
                           {"attn_v.bias", kv, "head_count_kv*head_dim", &L.bias_v}};
    for (const Bias& bi : biases) {
      kernels::Weight bw;
      if (Status s = bind(f, b + bi.name, {bi.n}, bi.meaning, true, bias_need, &bw, tot); !s.ok())
        return s;
      *bi.out = static_cast<const float*>(bw.data);
    }
  }
  return w;
}

Result<std::unique_ptr<ModelFile>> load_model(std::unique_ptr<GgufFile> file) {
  auto prefixed = [&file](const Status& s) {
    return file->path().empty() ? s : Status(s.code(), file->path() + ": " + s.message());
  };
  Result<ModelConfig> cfg = parse_model_config(*file);
  if (!cfg.ok()) return prefixed(cfg.status());
  Result<ModelWeights> w = bind_model_weights(*file, *cfg);
  if (!w.ok()) return prefixed(w.status());
  auto m = std::make_unique<ModelFile>();
  m->file = std::move(file);
  m->config = std::move(cfg).value();
  m->weights = std::move(w).value();
  m->config.tied_output = m->weights.tied_output;
  return m;
}

Result<std::unique_ptr<ModelFile>> load_model(const std::string& path) {
  Result<std::unique_ptr<GgufFile>> f = GgufFile::open(path);
  if (!f.ok()) return f.status();
  return load_model(std::move(f).value());
}

}  // namespace rc::model
