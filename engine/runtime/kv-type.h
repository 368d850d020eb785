// The KV pool's element type from its user-facing name (EngineConfig::kv_type,
// ModelBenchConfig::kv_type, --kv-type).
#pragma once

#include <string>

#include "dtype.h"
#include "radixchat/status.h"

namespace rc::runtime {

// f16 | bf16 | f32; invalid_argument naming the choices otherwise.
inline Result<kernels::DType> parse_kv_type(const std::string& name) {
  if (name == "f16") return kernels::DType::f16;
  if (name == "bf16") return kernels::DType::bf16;
  if (name == "f32") return kernels::DType::f32;
  return Status(StatusCode::invalid_argument,
                "unknown KV type '" + name + "' (expected f16, bf16 or f32)");
}

}  // namespace rc::runtime
