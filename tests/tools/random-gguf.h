// Deterministic random-weight GGUF models of any llama/qwen2/qwen3 shape and
// weight type, for tests and benchmarks that need shapes the bundled model
// does not have. Weights look like a freshly initialised model (matrices
// N(0, 0.02), norms 1 + N(0, 0.02), biases N(0, 0.02)) so forward passes
// give finite, sane values. The same spec and seed always give the same
// bytes: every tensor draws from its own stream keyed by (seed, name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gguf-writer.h"
#include "radixchat/status.h"

namespace rc::testing {

struct RandomModelSpec {
  std::string arch = "llama";  // llama | qwen2 | qwen3
  int dim = 64;
  int layers = 2;
  int heads = 4;
  int kv_heads = 2;
  int ffn = 128;
  // Head size written as attention.key_length/value_length; 0: dim / heads
  // (and no key_length key). Qwen3 has heads * head_dim != dim.
  int head_dim = 0;
  int vocab = 300;  // ignored when vocab_from is set
  int ctx = 256;
  // f32 f16 bf16 q8_0 q4_0 q5_0 q5_1 q4_k q5_k q6_k, or the mixes q4_k_m /
  // q5_k_m (Q4_K / Q5_K, with Q6_K for output (and a tied token_embd) and
  // for attn_v / ffn_down of the layers llama.cpp's _M gives more bits). As
  // llama.cpp's quantizer does, a K-quant tensor whose rows are not whole
  // 256-blocks falls back: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0 (what
  // Q4_K_M / Q5_K_M files of Qwen2.5-0.5B and similar widths contain).
  std::string type = "f32";
  uint64_t seed = 1;
  bool tied_output = false;  // omit output.weight
  float rope_base = 10000.0f;
  // Write rope_freqs.weight as llama.cpp's converter does for Llama 3.1
  // (factor 8, low 1, high 4, original context 8192).
  bool llama3_rope = false;
  // Instead: rope.scaling.type "llama3" with its parameters as metadata
  // (factor 8, low 1, high 4, original context 8192), no tensor.
  bool llama3_rope_metadata = false;
  // Copy the vocabulary from a GGUF or a sentencepiece tokenizer.model;
  // empty: a synthetic SPM vocabulary (<unk> <s> </s>, 256 byte pieces when
  // vocab >= 300, chat markers as user-defined pieces, then filler pieces).
  std::string vocab_from;
  std::string chat_template = "radixchat";  // written as tokenizer.chat_template; "" for none
  // Built weights instead of random ones: greedy decoding copies text the
  // context holds (copy-gguf.h). rope_base is then the circuit's own.
  bool copy = false;
};

// Checks the spec (types vs row lengths, heads vs dims, ...): invalid_argument.
Status check_spec(const RandomModelSpec& spec);
// Adds metadata, vocabulary and tensors (filled lazily at write time).
Status add_random_model(const RandomModelSpec& spec, model::GgufWriter& w);
Status write_random_model(const RandomModelSpec& spec, const std::string& path);

// The weight type of one tensor under `type` (handles the _m mixes); cols
// (the row length) > 0 applies the K-quant fallback for rows that are not
// whole 256-blocks. A tied token_embd is typed as "output.weight".
kernels::DType weight_type_for(const std::string& type, const std::string& tensor_name, int layer,
                               int n_layers, int64_t cols = 0);

// Synthetic vocabulary pieces (see RandomModelSpec::vocab_from); exposed for tokenizer tests.
struct VocabPieces {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  int32_t bos = 1, eos = 2, unk = 0;
};
VocabPieces synthetic_vocab(int n_vocab);
// The vocabulary of a GGUF or sentencepiece tokenizer.model (types as GGUF's token_type).
Result<VocabPieces> vocab_from_file(const std::string& path);
// Adds tokenizer.ggml.* keys for a llama (sentencepiece) vocabulary.
void add_vocab_metadata(const VocabPieces& v, bool add_space_prefix, model::GgufWriter& w);

}  // namespace rc::testing
