// The KV pool's element type for a KvType setting (EngineConfig::kv_type,
// ModelBenchConfig::kv_type).
#pragma once

#include "dtype.h"
#include "radixchat/engine-config.h"

namespace rc::runtime {

inline kernels::DType kv_dtype(KvType type) {
  switch (type) {
    case KvType::bf16:
      return kernels::DType::bf16;
    case KvType::f32:
      return kernels::DType::f32;
    case KvType::f16:
      break;
  }
  return kernels::DType::f16;
}

}  // namespace rc::runtime
