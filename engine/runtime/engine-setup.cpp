#include "engine-setup.h"

#include <algorithm>

namespace rc::runtime {

CacheChoice cache_choice(CacheSetting setting) {
  switch (setting) {
    case CacheSetting::radix_page16:
      return {CachePolicy::radix, 16};
    case CacheSetting::hash16:
      return {CachePolicy::hash, 16};
    case CacheSetting::off:
      return {CachePolicy::off, 1};
    case CacheSetting::radix:
      break;
  }
  return {CachePolicy::radix, 1};
}

kernels::DeviceRequest device_request(BackendSetting setting) {
  switch (setting) {
    case BackendSetting::cpu:
      return kernels::DeviceRequest::cpu;
    case BackendSetting::cuda:
      return kernels::DeviceRequest::cuda;
    case BackendSetting::automatic:
      break;
  }
  return kernels::DeviceRequest::automatic;
}

int64_t default_pool_tokens(int n_ctx, int64_t bytes_per_token) {
  const int64_t wanted = std::max<int64_t>(8LL * n_ctx, 16384);
  const int64_t cap = (1LL << 30) / std::max<int64_t>(bytes_per_token, 1);
  return std::max<int64_t>(std::min(wanted, cap), n_ctx);
}

int64_t device_reserve_bytes(const model::ModelConfig& mc, int max_batch, int max_rows,
                             int64_t free_bytes) {
  const int64_t q = int64_t(mc.n_heads) * mc.head_dim, kv = int64_t(mc.n_kv_heads) * mc.head_dim;
  const int64_t widest = std::max<int64_t>(mc.dim, std::max<int64_t>(mc.ffn_dim, q));
  const int64_t runner = int64_t(max_batch) * (2 * mc.dim + 2 * q + 2 * kv + 2 * mc.ffn_dim) * 4 +
                         int64_t(max_rows) * (mc.dim + mc.n_vocab) * 4;
  const int64_t gemm = int64_t(max_batch) * widest * 2 + (80LL << 20);
  return runner + gemm + (256LL << 20) + free_bytes / 20;
}

bool prefault_weights(const model::GgufFile& file, const std::function<bool(float)>& progress) {
  uint64_t total = 0;
  for (const model::GgufTensorInfo& t : file.tensors()) total += t.n_bytes;
  uint64_t done = 0, next_report = 0;
  volatile uint8_t sink = 0;
  for (const model::GgufTensorInfo& t : file.tensors()) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    for (uint64_t off = 0; p && off < t.n_bytes; off += 4096) sink = sink + p[off];
    done += t.n_bytes;
    if (done >= next_report) {
      if (!progress(0.05f + 0.85f * float(done) / float(std::max<uint64_t>(total, 1))))
        return false;
      next_report = done + total / 50;
    }
  }
  return true;
}

}  // namespace rc::runtime
