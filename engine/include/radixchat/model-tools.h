// Model-file helpers for tools that do not run a model (radixchat-cli
// tokenize / gguf-info, the GUI's model picker): they read only a GGUF's
// header and vocabulary, so they work on vocabulary-only GGUFs and on models
// whose tensor types RadixChat cannot compute with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

namespace rc {

// The bundled model: $RADIXCHAT_MODEL when set, else the installed copy
// (share/radixchat/ beside the program's bin/), else the source tree's
// assets/model/radixchat-demo.gguf.
std::string bundled_model_path();

// Token ids of `text` with the vocabulary of `model_path` (a GGUF, or a
// sentencepiece tokenizer.model); empty path: the bundled model, or its
// tokenizer.model when the GGUF is not there yet. BOS first only when
// add_bos. Special spellings (<s>, chat markers) become their ids unless
// parse_special is false.
Result<std::vector<int32_t>> tokenize_with_model(const std::string& model_path,
                                                 std::string_view text, bool add_bos,
                                                 bool parse_special = true);

// A readable report of a GGUF file: format, architecture and
// hyper-parameters (or why the model cannot be loaded), tokenizer, chat
// template, metadata (arrays abbreviated) and every tensor.
Result<std::string> describe_gguf(const std::string& path);

}  // namespace rc
