// Which compute backend an engine would run on here, and why, without
// loading a model: what `radixchat-cli info` prints. The engine makes the
// same choice in Engine::create (and may still fall back to the CPU when the
// CUDA backend fails to start; ModelInfo::backend_reason says so).
//
// Never throws or aborts; the first call loads the CUDA plugin when the
// build has one (later calls reuse that answer).
#pragma once

#include <string>

#include "radixchat/engine-config.h"

namespace rc {

struct BackendProbe {
  std::string backend;      // "cpu" or "cuda"
  std::string device;       // "CPU (2 threads)" or the CUDA device name
  std::string reason;       // why this backend, one line
  bool cuda_built = false;  // this build made the CUDA plugin
  std::string cuda_plugin;  // one line: "loaded from PATH", "not installed (...)", ...
};

BackendProbe probe_backend(BackendSetting requested);

}  // namespace rc
