// The model part of a block key (block-key.h): a hash of what decides the
// K and V a model computes, never of where the file lives.
//
// Hashed, in file order: every tensor's name, type, shape and ALL of its
// bytes, and every metadata key and value except general.* (names, authors,
// URLs, with general.architecture kept) and tokenizer.* (the vocabulary maps
// text to ids; the same ids give the same K/V). A sample of the bytes was
// rejected: two fine-tunes, or a model and its re-quantization, may differ
// only in bytes a sample skips, and a shared key would then load one model's
// K/V into the other, which no checksum can detect. XXH3 runs at memory speed
// and the engine reads the same bytes when it loads the weights, so the cost
// is one pass over memory already resident.
//
// Any thread; the GgufFile must outlive the call.
#pragma once

#include "model/gguf-reader.h"
#include "tiers/block-key.h"

namespace rc::tiers {

Hash128 model_fingerprint(const model::GgufFile& file);

}  // namespace rc::tiers
