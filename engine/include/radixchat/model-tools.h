// Model-file helpers for tools that do not run a model (radixchat-cli
// tokenize / gguf-info, the GUI's model picker): they read only a GGUF's
// header and vocabulary, so they work on vocabulary-only GGUFs and on models
// whose tensor types RadixChat cannot compute with (check_model_file says
// whether it could).
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

// What Engine::create checks first, without the weights' pages or a
// backend: the file opens as a model RadixChat can run (architecture,
// shapes, every tensor present with a supported type and in bounds), and
// its vocabulary and chat template load. ok, or the error create() would
// give (empty path: the bundled model). Lets a caller keep a working engine
// until a new file is known to be loadable.
Status check_model_file(const std::string& path);

// A readable report of a GGUF file: format, architecture and
// hyper-parameters (or why the model cannot be loaded), tokenizer, chat
// template, metadata (arrays abbreviated) and every tensor.
Result<std::string> describe_gguf(const std::string& path);

}  // namespace rc
