#include "tier-setup.h"

#include <unordered_map>

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

void mark_held_below(CacheSnapshot& snapshot, const tiers::KvTiers& tiers) {
  std::unordered_map<NodeId, size_t> index;
  for (size_t i = 0; i < snapshot.nodes.size(); ++i) index[snapshot.nodes[i].id] = i;
  snapshot.held_below.assign(snapshot.nodes.size(), 0);
  std::vector<int32_t> path;
  for (size_t i = 0; i < snapshot.nodes.size(); ++i) {
    const CacheNodeInfo& node = snapshot.nodes[i];
    if (node.id == kRootNode || node.tokens.empty()) continue;
    // The path's tokens, root first: walk up to the root, then lay them out.
    std::vector<const CacheNodeInfo*> chain;
    for (NodeId up = node.id; up != kRootNode && index.count(up);
         up = snapshot.nodes[index[up]].parent)
      chain.push_back(&snapshot.nodes[index[up]]);
    path.clear();
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      path.insert(path.end(), (*it)->tokens.begin(), (*it)->tokens.end());
    snapshot.held_below[i] =
        uint32_t(tiers.held_tokens(path, int64_t(path.size()) - int64_t(node.tokens.size())));
  }
}

}  // namespace rc::runtime
