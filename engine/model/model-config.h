// Hyper-parameters of a GGUF model, for the architectures RadixChat runs.
//
// Keys follow llama.cpp's names ("{arch}.embedding_length", ...). Each
// family is one ArchTraits row (model-config.cpp), not a code path: the
// runner reads the traits. The RoPE convention is a property of the
// architecture as GGUF files carry it: `llama` rotates adjacent pairs
// (converters permute Meta/HF Q/K rows for that), `qwen2` and `qwen3`
// rotate halves (NEOX style). `qwen3` normalises each query and key head
// (RMSNorm over head_dim with attn_q_norm / attn_k_norm) before RoPE and
// has no Q/K/V biases.
//
// Head size: "{arch}.attention.key_length" when present (Qwen3 and some
// llama-family models have n_heads * head_dim != embedding_length), else
// embedding_length / head_count; value_length must equal it.
//
// Llama 3.1 rope scaling: llama.cpp's converter does not store the llama3
// parameters as metadata; it stores their effect as the tensor
// `rope_freqs.weight` (F32, n_rot/2 divisors of each pair's frequency,
// applied as ggml_rope_ext's freq_factors). parse_model_config() recovers
// factor / low / high / original-context from that tensor, checks that the
// recovered parameters reproduce every stored divisor (relative error 1e-3),
// and fails with `unsupported` if the tensor does not follow the llama3
// formula. The parameters are only determined up to a common scale of
// original_context, low and high (the formula depends only on their ratios);
// original_context is taken from "{arch}.rope.scaling.original_context_length"
// when present, else 8192. Without the tensor, rope.scaling.type "llama3"
// takes its parameters from "{arch}.rope.scaling.factor", ".low_freq_factor"
// (default 1), ".high_freq_factor" (default 4) and
// ".original_context_length" (default 8192).
#pragma once

#include <string>

#include "backend.h"
#include "gguf-reader.h"
#include "radixchat/sampling.h"
#include "radixchat/status.h"

namespace rc::model {

enum class Arch { llama, qwen2, qwen3 };
// "llama, qwen2, qwen3": for error messages.
const char* supported_archs_list();

// What sets one architecture apart, as data.
struct ArchTraits {
  const char* name;  // general.architecture
  Arch id;
  bool neox_rope;  // rotate halves instead of adjacent pairs
  bool qkv_bias;   // attn_{q,k,v}.bias required (else optional)
  bool qk_norm;    // attn_q_norm / attn_k_norm [head_dim] required
};
// nullptr for an unsupported architecture.
const ArchTraits* find_arch(std::string_view name);

struct ModelConfig {
  std::string arch;  // general.architecture: "llama", "qwen2" or "qwen3"
  Arch arch_id = Arch::llama;
  bool qkv_bias = false;  // Q/K/V biases required (qwen2)
  bool qk_norm = false;   // per-head Q/K RMSNorm before RoPE (qwen3)
  std::string name;       // general.name; may be empty
  int n_vocab = 0;  // tokenizer.ggml.tokens count (else {arch}.vocab_size, else token_embd rows)
  int n_ctx_train = 0;          // {arch}.context_length
  int dim = 0;                  // {arch}.embedding_length
  int n_layers = 0;             // {arch}.block_count
  int n_heads = 0;              // {arch}.attention.head_count
  int n_kv_heads = 0;           // {arch}.attention.head_count_kv (default: n_heads)
  int head_dim = 0;             // attention.key_length, else dim / n_heads
  int ffn_dim = 0;              // {arch}.feed_forward_length
  float norm_eps = 1e-5f;       // {arch}.attention.layer_norm_rms_epsilon
  kernels::RopeConfig rope;     // n_rot, freq_base, neox_halves, llama3 scaling
  bool has_rope_freqs = false;  // rope_freqs.weight present (llama3 fields recovered from it)
  bool tied_output = false;     // no output.weight: logits use token_embd (set by load_model)
  RecommendedSampling sampling;  // general.sampling.* (recommended-sampling.h)
};

// Reads and checks the hyper-parameters. Fails with `unsupported` for an
// unknown architecture (listing the supported ones) or an unsupported rope
// scaling, `not_found` for a missing required key, `corrupt_data` for
// inconsistent values (heads not dividing dim, zero sizes, ...).
Result<ModelConfig> parse_model_config(const GgufFile& file);

// One line per hyper-parameter, for gguf-info and logs.
std::string describe(const ModelConfig& config);

}  // namespace rc::model
