#include "default-model.h"

#include <cstdlib>

#ifndef RADIXCHAT_SOURCE_DIR
#error "RADIXCHAT_SOURCE_DIR must be defined for default-model.cpp (engine/CMakeLists.txt)"
#endif

namespace rc::model {

std::string default_model_path() {
  if (const char* env = std::getenv("RADIXCHAT_MODEL"); env && *env) return env;
  return std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/radixchat-demo.gguf";
}

std::string sidecar_tokenizer_path(const std::string& model_path) {
  const size_t slash = model_path.find_last_of('/');
  return (slash == std::string::npos ? std::string() : model_path.substr(0, slash + 1)) +
         "tokenizer.model";
}

}  // namespace rc::model
