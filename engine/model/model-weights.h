// Views of a model's tensors as kernels::Weight, bound and shape-checked
// against a ModelConfig. Views point into the GGUF mapping: they are valid
// while the GgufFile lives (ModelFile keeps both together).
//
// Shapes are given as the runner sees them: Weight [rows = out features]
// [cols = in features], i.e. rows = GGUF ne[1], cols = ne[0]. 1-D tensors
// (norms, biases, rope_freqs) have rows == 1 and must be F32 because the
// kernels read them as float arrays.
#pragma once

#include <vector>

#include "backend.h"
#include "gguf-reader.h"
#include "model-config.h"
#include "radixchat/status.h"

namespace rc::model {

struct LayerWeights {
  kernels::Weight attn_norm;    // [1][dim] F32
  kernels::Weight attn_q;       // [n_heads * head_dim][dim]
  kernels::Weight attn_k;       // [n_kv_heads * head_dim][dim]
  kernels::Weight attn_v;       // [n_kv_heads * head_dim][dim]
  kernels::Weight attn_output;  // [dim][n_heads * head_dim]
  kernels::Weight ffn_norm;     // [1][dim] F32
  kernels::Weight ffn_gate;     // [ffn_dim][dim]
  kernels::Weight ffn_up;       // [ffn_dim][dim]
  kernels::Weight ffn_down;     // [dim][ffn_dim]
  // Per-head Q/K RMSNorm weights (qwen3), [1][head_dim] F32; data null when absent.
  kernels::Weight attn_q_norm;
  kernels::Weight attn_k_norm;
  // Q/K/V biases (qwen2 always; llama when the file has them), F32; else null.
  const float* bias_q = nullptr;  // [n_heads * head_dim]
  const float* bias_k = nullptr;  // [n_kv_heads * head_dim]
  const float* bias_v = nullptr;  // [n_kv_heads * head_dim]
};

struct ModelWeights {
  kernels::Weight token_embd;   // [n_vocab][dim]
  kernels::Weight output_norm;  // [1][dim] F32
  kernels::Weight output;       // [n_vocab][dim]; == token_embd when tied
  bool tied_output = false;
  // Llama 3.1 frequency divisors, [1][n_rot / 2] F32; data == nullptr when
  // absent. Already folded into ModelConfig::rope's llama3 fields.
  kernels::Weight rope_freqs;
  std::vector<LayerWeights> layers;
  uint64_t total_bytes = 0;  // bytes of all bound tensors (tied output counted once)
};

// Binds every tensor the architecture needs. Errors name the tensor:
// not_found for a missing one, corrupt_data for a wrong shape ("tensor
// 'blk.3.attn_q.weight' has shape [256, 200], expected [256, 256]"),
// unsupported for a 1-D tensor that is not F32.
Result<ModelWeights> bind_model_weights(const GgufFile& file, const ModelConfig& config);

}  // namespace rc::model
