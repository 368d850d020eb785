// A plain fp32 forward pass of llama / qwen2 / qwen3 GGUFs, written
// straight from the architectures' published definitions, as the oracle
// the engine's forward (runtime/model-runner) is checked against.
//
// Independent of the engine on purpose: it reads the GGUF metadata keys
// and tensors itself (not through ModelConfig / ModelWeights), decodes
// weights with the reference dequantize_row (the definition of a weight,
// tested against known-answer blocks), recomputes every position from
// scratch without a KV cache or pages, accumulates dot products in
// double, and applies rope_freqs.weight as plain per-pair divisors of the
// frequency, as ggml does (no recovery of the llama3 parameters). Slow and
// simple; for small random models only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gguf-reader.h"

namespace rc::testing {

// Logits [n_vocab] of the last of `tokens` (positions 0..n-1, no BOS
// added). Throws std::runtime_error on a file it cannot run.
std::vector<float> naive_last_logits(const model::GgufFile& file,
                                     const std::vector<int32_t>& tokens);

}  // namespace rc::testing
