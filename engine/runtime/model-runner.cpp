#include "model-runner.h"

#include <cmath>
#include <string>

#include "rc-assert.h"

namespace rc::runtime {

using kernels::AttentionSeq;

Result<std::unique_ptr<ModelRunner>> ModelRunner::create(const model::ModelFile& model,
                                                         kernels::Backend& backend,
                                                         kernels::KvPool& pool,
                                                         int max_batch_tokens, int max_logit_rows,
                                                         bool host_copies) {
  const model::ModelConfig& c = model.config;
  const kernels::KvPoolShape& s = pool.shape();
  if (s.n_layers != c.n_layers || s.n_kv_heads != c.n_kv_heads || s.head_dim != c.head_dim) {
    return Status(StatusCode::invalid_argument, "KV pool shape does not match the model");
  }
  if (max_batch_tokens < 1 || max_logit_rows < 1 || max_logit_rows > max_batch_tokens) {
    return Status(StatusCode::invalid_argument, "batch limits must be positive");
  }
  std::unique_ptr<ModelRunner> r(
      new ModelRunner(model, backend, pool, max_batch_tokens, max_logit_rows));
  Result<std::unique_ptr<DeviceWeights>> weights =
      DeviceWeights::create(model, backend, host_copies);
  if (!weights.ok()) return weights.status();
  r->device_weights_ = std::move(weights.value());
  r->w_ = &r->device_weights_->weights();
  if (!r->allocate_scratch()) {
    return Status(StatusCode::internal, "out of memory for " + std::to_string(max_batch_tokens) +
                                            "-token scratch buffers on " + backend.name());
  }
  return r;
}

ModelRunner::ModelRunner(const model::ModelFile& model, kernels::Backend& backend,
                         kernels::KvPool& pool, int max_batch_tokens, int max_logit_rows)
    : model_(model),
      cfg_(model.config),
      backend_(backend),
      pool_(pool),
      max_tokens_(max_batch_tokens),
      max_logit_rows_(max_logit_rows) {}

ModelRunner::~ModelRunner() {
  for (void* p : owned_) backend_.free(p);
}

void build_step_indices(const ForwardBatch& batch, int page_size, StepIndices& out) {
  const int n = batch.n_tokens();
  out.positions.resize(static_cast<size_t>(n));
  out.slots.resize(static_cast<size_t>(n));
  out.seqs.clear();
  out.seqs.reserve(batch.seqs.size());
  for (const BatchSequence& s : batch.seqs) {
    const std::vector<int32_t>& pt = *s.page_table;
    RC_ASSERT(static_cast<int64_t>(pt.size()) * page_size >= s.n_past + s.n_new);
    for (int i = 0; i < s.n_new; ++i) {
      const int pos = s.n_past + i;
      out.positions[s.first_token + i] = pos;
      out.slots[s.first_token + i] = pt[pos / page_size] * page_size + pos % page_size;
    }
    out.seqs.push_back({pt.data(), s.n_past, s.n_new, s.first_token});
  }
}

bool ModelRunner::allocate_scratch() {
  const size_t n = static_cast<size_t>(max_tokens_);
  const size_t q_width = static_cast<size_t>(cfg_.n_heads) * cfg_.head_dim;
  const size_t kv_width = static_cast<size_t>(cfg_.n_kv_heads) * cfg_.head_dim;
  auto grab = [&](size_t bytes) -> void* {
    void* p = backend_.alloc(bytes);
    if (p) owned_.push_back(p);
    return p;
  };
  x_ = static_cast<float*>(grab(n * cfg_.dim * sizeof(float)));
  h_ = static_cast<float*>(grab(n * cfg_.dim * sizeof(float)));
  q_ = static_cast<float*>(grab(n * q_width * sizeof(float)));
  k_ = static_cast<float*>(grab(n * kv_width * sizeof(float)));
  v_ = static_cast<float*>(grab(n * kv_width * sizeof(float)));
  att_ = static_cast<float*>(grab(n * q_width * sizeof(float)));
  gate_ = static_cast<float*>(grab(n * cfg_.ffn_dim * sizeof(float)));
  up_ = static_cast<float*>(grab(n * cfg_.ffn_dim * sizeof(float)));
  last_ =
      static_cast<float*>(grab(static_cast<size_t>(max_logit_rows_) * cfg_.dim * sizeof(float)));
  logits_ = static_cast<float*>(
      grab(static_cast<size_t>(max_logit_rows_) * cfg_.n_vocab * sizeof(float)));
  ids_ = static_cast<int32_t*>(grab(n * sizeof(int32_t)));
  return owned_.size() == 11;
}

Status ModelRunner::forward(const ForwardBatch& batch, std::vector<float>& logits) {
  Status st = run(batch);
  if (!st.ok()) return st;
  const int rows = batch.n_logit_rows();
  logits.resize(static_cast<size_t>(rows) * cfg_.n_vocab);
  if (rows > 0) backend_.download(logits.data(), logits_, logits.size() * sizeof(float));
  return backend_status();
}

Status ModelRunner::forward_greedy(const ForwardBatch& batch, std::vector<int32_t>& ids) {
  Status st = run(batch);
  if (!st.ok()) return st;
  const int rows = batch.n_logit_rows();
  ids.resize(static_cast<size_t>(rows));
  if (rows > 0) backend_.argmax_rows(logits_, rows, cfg_.n_vocab, ids.data());
  return backend_status();
}

Status ModelRunner::backend_status() {
  const std::string err = backend_.take_error();
  if (err.empty()) return Status();
  return Status(StatusCode::internal, backend_.name() + ": " + err);
}

Status ModelRunner::run(const ForwardBatch& batch) {
  const int n = batch.n_tokens();
  const int rows = batch.n_logit_rows();
  if (n == 0) return Status(StatusCode::invalid_argument, "empty batch");
  if (n > max_tokens_) {
    return Status(
        StatusCode::invalid_argument,
        "batch of " + std::to_string(n) + " tokens exceeds " + std::to_string(max_tokens_));
  }
  if (rows > max_logit_rows_) {
    return Status(StatusCode::invalid_argument, "too many logit rows in one batch");
  }
  for (const BatchSequence& s : batch.seqs) {
    if (s.n_logits < 0 || s.n_logits > s.n_new) {
      return Status(StatusCode::invalid_argument,
                    "a sequence asks for logits of positions it does not compute");
    }
  }
  for (int32_t t : batch.tokens) {
    if (t < 0 || t >= cfg_.n_vocab) {
      return Status(StatusCode::invalid_argument, "token id " + std::to_string(t) +
                                                      " outside vocabulary of " +
                                                      std::to_string(cfg_.n_vocab));
    }
  }

  // Positions and pool slots of every new token; attention descriptors.
  build_step_indices(batch, pool_.shape().page_size, step_);

  // x[n][dim] = token embeddings
  backend_.upload(ids_, batch.tokens.data(), n * sizeof(int32_t));
  backend_.get_rows(w_->token_embd, ids_, x_, n);

  for (int layer = 0; layer < cfg_.n_layers; ++layer) run_layer(layer, n, step_.seqs);

  // Final norm and vocabulary projection only for rows that need logits.
  if (rows == 0) return Status();
  // Gather the rows that need logits: an f32 "table" over x. The
  // upload reuses ids_: the embedding gather that read it is queued before.
  last_rows_.clear();
  for (const BatchSequence& s : batch.seqs) {
    for (int i = s.n_new - s.n_logits; i < s.n_new; ++i) last_rows_.push_back(s.first_token + i);
  }
  backend_.upload(ids_, last_rows_.data(), rows * sizeof(int32_t));
  const kernels::Weight x_table{kernels::DType::f32, x_, n, cfg_.dim};
  backend_.get_rows(x_table, ids_, last_, rows);
  backend_.rmsnorm(last_, static_cast<const float*>(w_->output_norm.data), last_, rows, cfg_.dim,
                   cfg_.norm_eps);
  backend_.matmul(w_->output, nullptr, last_, logits_, rows);  // [rows][n_vocab]
  return Status();
}

void ModelRunner::run_layer(int layer, int n, const std::vector<AttentionSeq>& seqs) {
  const model::LayerWeights& w = w_->layers[layer];
  // Attention block: h = norm(x); q,k,v = h W; [per-head q/k norm]; rope;
  // store; attend; x += att Wo
  backend_.rmsnorm(x_, static_cast<const float*>(w.attn_norm.data), h_, n, cfg_.dim, cfg_.norm_eps);
  const kernels::Backend::MatmulOut qkv[] = {
      {&w.attn_q, w.bias_q, q_},  // [n][q_width]
      {&w.attn_k, w.bias_k, k_},  // [n][kv_width]
      {&w.attn_v, w.bias_v, v_},  // [n][kv_width]
  };
  backend_.matmuls(qkv, h_, n);
  // qwen3: RMSNorm of every query and key head (rows of head_dim) before RoPE.
  if (cfg_.qk_norm) {
    backend_.rmsnorm(q_, static_cast<const float*>(w.attn_q_norm.data), q_, n * cfg_.n_heads,
                     cfg_.head_dim, cfg_.norm_eps);
    backend_.rmsnorm(k_, static_cast<const float*>(w.attn_k_norm.data), k_, n * cfg_.n_kv_heads,
                     cfg_.head_dim, cfg_.norm_eps);
  }
  backend_.rope(q_, step_.positions.data(), n, cfg_.n_heads, cfg_.head_dim, cfg_.rope);
  backend_.rope(k_, step_.positions.data(), n, cfg_.n_kv_heads, cfg_.head_dim, cfg_.rope);
  backend_.kv_store(pool_, layer, k_, v_, step_.slots.data(), n);
  const float scale = 1.0f / std::sqrt(static_cast<float>(cfg_.head_dim));
  backend_.attention(pool_, layer, q_, att_, seqs, cfg_.n_heads, scale);  // [n][q_width]
  backend_.matmul(w.attn_output, nullptr, att_, h_, n);                   // [n][dim]
  backend_.add(x_, h_, static_cast<int64_t>(n) * cfg_.dim);

  // MLP block: x += down(silu(h Wg) * (h Wu)), h = norm(x)
  backend_.rmsnorm(x_, static_cast<const float*>(w.ffn_norm.data), h_, n, cfg_.dim, cfg_.norm_eps);
  const kernels::Backend::MatmulOut gate_up[] = {
      {&w.ffn_gate, nullptr, gate_},  // [n][ffn]
      {&w.ffn_up, nullptr, up_},      // [n][ffn]
  };
  backend_.matmuls(gate_up, h_, n);
  backend_.swiglu(gate_, up_, gate_, static_cast<int64_t>(n) * cfg_.ffn_dim);
  backend_.matmul(w.ffn_down, nullptr, gate_, h_, n);  // [n][dim]
  backend_.add(x_, h_, static_cast<int64_t>(n) * cfg_.dim);
}

}  // namespace rc::runtime
