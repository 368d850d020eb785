// What Engine::create decides before the engine thread runs: the cache
// setting a name stands for, how large the KV pool is by default, how much
// device memory to leave beside it, and a pass over the weights so they
// are resident before the first request. Pure functions; the creating thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "device-select.h"
#include "model/gguf-reader.h"
#include "model/model-config.h"
#include "radixchat/cache.h"
#include "radixchat/engine-config.h"

namespace rc::runtime {

struct CacheChoice {
  CachePolicy policy;
  int page_size;
};

// The policy and page size a cache setting stands for.
CacheChoice cache_choice(CacheSetting setting);

// The kernels' name for a backend setting.
kernels::DeviceRequest device_request(BackendSetting setting);

// Enough pool for several full contexts, capped at 1 GiB of KV.
int64_t default_pool_tokens(int n_ctx, int64_t bytes_per_token);

// Device memory the engine leaves free for everything but the KV pool and
// the weights: the runner's scratch, the backend's GEMM scratch (16-bit
// activations, a dequantized weight chunk of at most 64 MiB), cuBLAS's
// workspace, and a margin for the context and fragmentation.
int64_t device_reserve_bytes(const model::ModelConfig& mc, int max_batch, int max_rows,
                             int64_t free_bytes);

// Touches every page of every tensor (reporting progress from 0.05 to 0.9)
// so that weights are resident before the first request. False when the
// caller cancelled.
bool prefault_weights(const model::GgufFile& file, const std::function<bool(float)>& progress);

}  // namespace rc::runtime
