#include "tier-setup.h"

#include "tiers/model-fingerprint.h"

namespace rc::runtime {

bool wants_tiers(const EngineConfig& config) {
  return config.kv_host_bytes > 0 || !config.kv_disk.empty() || !config.kv_redis.empty();
}

Result<std::unique_ptr<tiers::KvTiers>> open_tiers(const EngineConfig& config,
                                                   const model::ModelFile& model,
                                                   CachePolicy policy, kernels::Backend& backend,
                                                   kernels::KvPool& pool) {
  if (policy == CachePolicy::off)
    return Status(StatusCode::invalid_argument,
                  "cache tiers need a cache that reuses prefixes (not --cache off)");
  if (config.kv_host_bytes < 0 || config.kv_disk_bytes <= 0)
    return Status(StatusCode::invalid_argument, "a tier's byte budget must be positive");
  tiers::TierOptions options;
  options.block_tokens = config.kv_block_tokens;
  options.host_bytes = config.kv_host_bytes;
  if (!config.kv_disk.empty()) {
    tiers::DiskStoreOptions disk;
    if (config.kv_disk != "default") disk.root = config.kv_disk;
    disk.budget_bytes = config.kv_disk_bytes;
    options.disk = disk;
  }
  if (!config.kv_redis.empty()) {
    tiers::RedisStoreOptions redis;
    redis.url = config.kv_redis;
    redis.tenant = config.kv_redis_tenant;
    options.redis = redis;
  }
  const tiers::Keyspace space =
      tiers::Keyspace::of(tiers::model_fingerprint(*model.file), pool.shape(), model.config.rope,
                          config.kv_block_tokens);
  return tiers::KvTiers::open(space, options, backend, pool);
}

}  // namespace rc::runtime
