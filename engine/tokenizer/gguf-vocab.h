// Reading the parts of a GGUF vocabulary that SPM and BPE vocabularies share
// (gguf-vocab.cpp; used by gguf-bpe-vocab.cpp too).
#pragma once

#include <cstdint>
#include <vector>

#include "model/gguf-reader.h"
#include "radixchat/status.h"
#include "spm-proto.h"

namespace rc::tok {

// tokenizer.ggml.tokens with scores (0 when absent) and token_type (normal
// when absent; unknown values are normal, as in llama.cpp). corrupt_data
// for an empty or oversized list or arrays of another length.
Result<std::vector<SpmPiece>> read_vocab_pieces(const model::GgufFile& f);

// An optional special-token id: `fallback` (or -1 when that is past the
// vocabulary) when the key is absent, -1 when negative, corrupt_data naming
// the key when past the n-token vocabulary.
Status read_special_id(const model::GgufFile& f, const char* key, int32_t fallback, int64_t n,
                       int32_t* out);

}  // namespace rc::tok
