// The copy model: RandomModelSpec::copy writes a llama model of the spec's
// shape and weight types whose weights are built, not drawn, so that greedy
// decoding continues text the context already holds (an induction-head
// circuit in ordinary llama tensors). Drafted decoding's prompt lookup then
// gets accepted drafts on a model that costs exactly what the random model of
// the same shape costs per token. How it works is in copy-gguf.cpp.
// Called by add_random_model / check_spec (random-gguf.h); no other callers.
#pragma once

#include <cstdint>

#include "model/gguf-writer.h"
#include "radixchat/status.h"
#include "random-gguf.h"

namespace rc::testing {

// invalid_argument unless the shape can hold the circuit: llama, head dim
// 64, at least 8 query heads per KV head, at least 2 layers, dim >= 672,
// an output.weight of its own (not tied) and no llama3 rope.
Status check_copy_spec(const RandomModelSpec& spec);
// rope.freq_base of the copy model (its rotary frequencies are 0.13^i).
float copy_rope_base();
// Adds every tensor (metadata is written by add_random_model).
void add_copy_tensors(const RandomModelSpec& spec, int64_t n_vocab, model::GgufWriter& w);

}  // namespace rc::testing
