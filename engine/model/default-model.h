// Where the bundled model lives, so `--model` can be optional.
//
// Order: $RADIXCHAT_MODEL when set and non-empty; else the installed copy,
// <prefix>/share/radixchat/radixchat-demo.gguf beside <prefix>/bin/ of the
// running program (packages); else <source tree>/assets/model/
// radixchat-demo.gguf, the source tree being fixed at build time
// (RADIXCHAT_SOURCE_DIR). Callers only see the resulting path.
#pragma once

#include <string>

namespace rc::model {

std::string default_model_path();
// The tokenizer.model that sits beside a model file (it may not exist).
std::string sidecar_tokenizer_path(const std::string& model_path);

}  // namespace rc::model
