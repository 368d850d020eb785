// A loaded model: the mapped GGUF file, its hyper-parameters and weight
// views. Immutable after load_model(); the weights point into `file`, so a
// ModelFile is only ever handled through the unique_ptr load_model returns.
#pragma once

#include <memory>
#include <string>

#include "gguf-reader.h"
#include "model-config.h"
#include "model-weights.h"
#include "radixchat/status.h"

namespace rc::model {

struct ModelFile {
  std::unique_ptr<GgufFile> file;
  ModelConfig config;
  ModelWeights weights;
};

// Opens, validates and binds a GGUF model. Errors are prefixed with the path.
Result<std::unique_ptr<ModelFile>> load_model(const std::string& path);
// The same over an already opened file (takes ownership).
Result<std::unique_ptr<ModelFile>> load_model(std::unique_ptr<GgufFile> file);

}  // namespace rc::model
