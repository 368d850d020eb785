#include "tier-setup.h"

#include <cstdlib>
#include <filesystem>
#include <unordered_map>

#include "radixchat/tier-clear.h"
#include "tiers/model-fingerprint.h"

namespace rc::runtime {

namespace {

Result<tiers::SealKey> key_from_file(const std::string& path, const std::string& default_name,
                                     const char* tier) {
  std::filesystem::path file = path;
  if (file.empty()) {
    Result<std::filesystem::path> d = tiers::default_key_file(default_name);
    if (!d.ok()) return d.status();
    file = d.value();
  }
  Result<tiers::SealKey> key = tiers::load_or_create_key_file(file);
  if (!key.ok())
    return Status(key.status().code(),
                  std::string("the ") + tier + " tier's sealing key: " + key.status().message());
  return key;
}

}  // namespace

Result<tiers::SealKey> disk_tier_key(const EngineConfig& config) {
  return key_from_file(config.kv_disk_key_file, "kv-disk.key", "disk");
}

Result<tiers::SealKey> redis_tier_key(const EngineConfig& config) {
  if (config.kv_redis_key_file.empty())
    if (const char* env = std::getenv("RADIXCHAT_REDIS_KEY"); env != nullptr && *env) {
      Result<tiers::SealKey> key = tiers::SealKey::from_hex(env);
      if (!key.ok())
        return Status(StatusCode::invalid_argument,
                      "RADIXCHAT_REDIS_KEY: " + key.status().message());
      return key;
    }
  return key_from_file(config.kv_redis_key_file, "redis-" + config.kv_redis_tenant + ".key",
                       "Redis");
}

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
    Result<tiers::SealKey> key = disk_tier_key(config);
    if (!key.ok()) return key.status();
    disk.key = std::make_shared<const tiers::SealKey>(key.value());
    options.disk = disk;
  }
  if (!config.kv_redis.empty()) {
    tiers::RedisStoreOptions redis;
    redis.url = config.kv_redis;
    redis.tenant = config.kv_redis_tenant;
    redis.ttl_seconds = config.kv_redis_ttl_seconds;
    Result<tiers::SealKey> key = redis_tier_key(config);
    if (!key.ok()) return key.status();
    redis.key = std::make_shared<const tiers::SealKey>(key.value());
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

namespace rc {

Result<std::string> disk_tier_folder(const std::string& folder) {
  if (!folder.empty() && folder != "default") return folder;
  Result<std::filesystem::path> d = tiers::default_disk_root();
  if (!d.ok()) return d.status();
  return d.value().string();
}

Result<int64_t> clear_disk_tier(const std::string& folder) {
  Result<std::string> root = disk_tier_folder(folder);
  if (!root.ok()) return root.status();
  return tiers::DiskStore::clear_root(root.value());
}

Result<int64_t> clear_redis_tenant(const std::string& url, const std::string& tenant) {
  tiers::RedisStoreOptions options;
  options.url = url;
  options.tenant = tenant;
  options.timeout_ms = 2000;
  return tiers::RedisStore::clear_tenant(options);
}

}  // namespace rc
