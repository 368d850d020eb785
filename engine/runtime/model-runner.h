// The forward pass of a llama-family model over the paged KV pool.
//
// Reads like llama2.c's forward(): embed, then per layer RMSNorm -> QKV ->
// RoPE -> store K/V in the pool -> paged attention -> output projection ->
// residual -> RMSNorm -> SwiGLU MLP -> residual, then the final norm and the
// vocabulary projection for the rows that need logits.
//
// Threading: a runner is used by one thread (the engine thread). It owns
// scratch buffers in backend memory sized for `max_batch_tokens`, and, for a
// backend whose memory is not host memory (CUDA), a copy of every weight
// made once at creation (device-weights.h); it does not own the model, the
// backend or the pool, which must outlive it.
#pragma once

#include <memory>
#include <vector>

#include "backend.h"
#include "device-weights.h"
#include "forward-batch.h"
#include "model/model-file.h"
#include "radixchat/status.h"

namespace rc::runtime {

// The host-side index arrays of one step, computed once from the batch and
// shared by every layer (and every backend: a device backend uploads them
// once per step, since they do not change between layers).
struct StepIndices {
  std::vector<int32_t> positions;           // [n] position of each new token
  std::vector<int32_t> slots;               // [n] pool slot of each new token
  std::vector<kernels::AttentionSeq> seqs;  // one per sequence; page tables borrowed from the batch
};

// Fills `out` for `batch` over a pool of `page_size`-token pages: token i of
// sequence s sits at position s.n_past + i, in slot
// page_table[pos / page_size] * page_size + pos % page_size, and its query
// row is s.first_token + i. RC_ASSERTs that every page table covers its
// sequence's positions.
void build_step_indices(const ForwardBatch& batch, int page_size, StepIndices& out);

class ModelRunner {
 public:
  // Fails with invalid_argument when the pool's shape does not fit the model
  // and with internal when scratch memory cannot be allocated or the weights
  // cannot be copied to the backend. host_copies: as DeviceWeights::create.
  static Result<std::unique_ptr<ModelRunner>> create(const model::ModelFile& model,
                                                     kernels::Backend& backend,
                                                     kernels::KvPool& pool, int max_batch_tokens,
                                                     int max_logit_rows, bool host_copies = true);
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // Runs one step. On success `logits` holds [batch.n_logit_rows()][n_vocab]
  // floats: each sequence's last n_logits positions, in batch order. Token ids
  // outside the vocabulary and batches over max_batch_tokens are refused
  // with invalid_argument before anything is computed, and so are batches
  // with more than max_logit_rows logit rows, or a sequence asking for more
  // rows than it has new positions.
  // A failure the backend reports (a CUDA error) is returned as internal.
  Status forward(const ForwardBatch& batch, std::vector<float>& logits);
  // The same step, returning the argmax token of each logit row instead of
  // the logits (first on ties): on a device backend only the ids cross the
  // bus. ids has batch.n_logit_rows() entries.
  Status forward_greedy(const ForwardBatch& batch, std::vector<int32_t>& ids);

  int max_batch_tokens() const { return max_tokens_; }
  int max_logit_rows() const { return max_logit_rows_; }
  const model::ModelConfig& config() const { return cfg_; }
  // The weights the steps read (the model's, or the backend's copies:
  // device-weights.h).
  const model::ModelWeights& weights() const { return *w_; }
  // Whether weights() are copies (device-weights.h) rather than the model's.
  bool weights_copied() const { return device_weights_->copied(); }

 private:
  ModelRunner(const model::ModelFile& model, kernels::Backend& backend, kernels::KvPool& pool,
              int max_batch_tokens, int max_logit_rows);
  bool allocate_scratch();
  // Everything up to logits_ [rows][n_vocab] in backend memory; rows is
  // batch.n_logit_rows().
  Status run(const ForwardBatch& batch);
  void run_layer(int layer, int n, const std::vector<kernels::AttentionSeq>& seqs);
  Status backend_status();

  const model::ModelFile& model_;
  const model::ModelConfig& cfg_;
  kernels::Backend& backend_;
  kernels::KvPool& pool_;
  int max_tokens_;
  int max_logit_rows_;

  // Weights as the backend reads them (copies for a device backend).
  std::unique_ptr<DeviceWeights> device_weights_;
  const model::ModelWeights* w_ = nullptr;

  // Host-side per-step index arrays.
  StepIndices step_;
  std::vector<int32_t> last_rows_;

  // Scratch in backend memory; shapes for n tokens of the step.
  std::vector<void*> owned_;
  float* x_ = nullptr;       // [n][dim] residual stream
  float* h_ = nullptr;       // [n][dim] normed input of a block
  float* q_ = nullptr;       // [n][n_heads * head_dim]
  float* k_ = nullptr;       // [n][n_kv_heads * head_dim]
  float* v_ = nullptr;       // [n][n_kv_heads * head_dim]
  float* att_ = nullptr;     // [n][n_heads * head_dim]
  float* gate_ = nullptr;    // [n][ffn_dim]
  float* up_ = nullptr;      // [n][ffn_dim]
  float* last_ = nullptr;    // [rows][dim] rows that need logits
  float* logits_ = nullptr;  // [rows][n_vocab]
  int32_t* ids_ = nullptr;   // [n] token ids in backend memory
};

}  // namespace rc::runtime
