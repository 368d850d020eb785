#include "device-weights.h"

#include <string>
#include <unordered_map>

namespace rc::runtime {
namespace {

uint64_t weight_bytes(const kernels::Weight& w) {
  return w.data ? uint64_t(w.rows) * uint64_t(kernels::row_bytes(w.type, w.cols)) : 0;
}

// Calls f(pointer-to-view, bytes) for every tensor the runner reads,
// including the 1-D ones (norms, biases) and rope_freqs.
template <typename F>
void for_each_tensor(model::ModelWeights& w, int64_t q_width, int64_t kv_width, F f) {
  f(&w.token_embd.data, weight_bytes(w.token_embd), "token_embd");
  f(&w.output_norm.data, weight_bytes(w.output_norm), "output_norm");
  f(&w.output.data, weight_bytes(w.output), "output");
  f(&w.rope_freqs.data, weight_bytes(w.rope_freqs), "rope_freqs");
  for (size_t i = 0; i < w.layers.size(); ++i) {
    model::LayerWeights& l = w.layers[i];
    const std::string p = "blk." + std::to_string(i) + ".";
    f(&l.attn_norm.data, weight_bytes(l.attn_norm), p + "attn_norm");
    f(&l.attn_q.data, weight_bytes(l.attn_q), p + "attn_q");
    f(&l.attn_k.data, weight_bytes(l.attn_k), p + "attn_k");
    f(&l.attn_v.data, weight_bytes(l.attn_v), p + "attn_v");
    f(&l.attn_output.data, weight_bytes(l.attn_output), p + "attn_output");
    f(&l.attn_q_norm.data, weight_bytes(l.attn_q_norm), p + "attn_q_norm");  // qwen3; else null
    f(&l.attn_k_norm.data, weight_bytes(l.attn_k_norm), p + "attn_k_norm");
    f(&l.ffn_norm.data, weight_bytes(l.ffn_norm), p + "ffn_norm");
    f(&l.ffn_gate.data, weight_bytes(l.ffn_gate), p + "ffn_gate");
    f(&l.ffn_up.data, weight_bytes(l.ffn_up), p + "ffn_up");
    f(&l.ffn_down.data, weight_bytes(l.ffn_down), p + "ffn_down");
    // Biases are bare float pointers; their lengths are the matrices' rows.
    auto bias = [&](const float** b, int64_t n, const std::string& name) {
      const void* v = *b;
      f(&v, v ? uint64_t(n) * sizeof(float) : 0, name);
      *b = static_cast<const float*>(v);
    };
    bias(&l.bias_q, q_width, p + "attn_q.bias");
    bias(&l.bias_k, kv_width, p + "attn_k.bias");
    bias(&l.bias_v, kv_width, p + "attn_v.bias");
  }
}

}  // namespace

uint64_t DeviceWeights::bytes_needed(const model::ModelWeights& w) {
  model::ModelWeights copy = w;
  std::unordered_map<const void*, bool> seen;
  uint64_t total = 0;
  const int64_t q = w.layers.empty() ? 0 : w.layers[0].attn_q.rows;
  const int64_t kv = w.layers.empty() ? 0 : w.layers[0].attn_k.rows;
  for_each_tensor(copy, q, kv, [&](const void** data, uint64_t bytes, const std::string&) {
    if (*data && seen.emplace(*data, true).second) total += bytes;
  });
  return total;
}

Result<std::unique_ptr<DeviceWeights>> DeviceWeights::create(const model::ModelFile& model,
                                                             kernels::Backend& backend,
                                                             bool host_copies) {
  std::unique_ptr<DeviceWeights> d(new DeviceWeights(backend));
  const uint64_t need = bytes_needed(model.weights);
  if (backend.host_memory() && !(host_copies && backend.prefers_weight_copies(need))) {
    d->view_ = &model.weights;
    return d;
  }
  d->copy_ = model.weights;
  const int64_t q = int64_t(model.config.n_heads) * model.config.head_dim;
  const int64_t kv = int64_t(model.config.n_kv_heads) * model.config.head_dim;
  std::unordered_map<const void*, void*> copies;  // host tensor -> its copy (tied output)
  Status failure;
  for_each_tensor(d->copy_, q, kv, [&](const void** data, uint64_t bytes, const std::string& name) {
    if (!failure.ok() || !*data) return;
    auto it = copies.find(*data);
    if (it != copies.end()) {
      *data = it->second;
      return;
    }
    void* dst = backend.alloc(bytes);
    if (!dst) {
      const int64_t free = backend.free_memory();
      failure = Status(StatusCode::internal,
                       "out of " + backend.name() + " memory copying the weights (at " + name +
                           "): they need " + std::to_string(need >> 20) + " MiB" +
                           (free >= 0 ? ", " + std::to_string(free >> 20) + " MiB free" : ""));
      return;
    }
    d->owned_.push_back(dst);
    backend.upload(dst, *data, bytes);
    // The copy is what the runner reads: the process need not hold the
    // mapping's pages as well, not even until the last tensor is copied.
    if (model.file) model.file->release_pages(*data, bytes);
    copies.emplace(*data, dst);
    *data = dst;
    d->bytes_ += bytes;
  });
  if (failure.ok()) {
    const std::string err = backend.take_error();
    if (!err.empty()) failure = Status(StatusCode::internal, "copying the weights: " + err);
  }
  if (!failure.ok()) return failure;  // the destructor frees what was copied
  d->view_ = &d->copy_;
  return d;
}

DeviceWeights::~DeviceWeights() {
  for (void* p : owned_) backend_.free(p);
}

}  // namespace rc::runtime
