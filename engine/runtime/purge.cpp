#include "purge.h"

#include <unordered_set>

#include "tiers/block-key.h"

namespace rc::runtime {

ForgetResult forget_prefixes(KvCache& cache, tiers::KvTiers* tiers,
                             const std::vector<std::vector<int32_t>>& gone,
                             const std::vector<std::vector<int32_t>>& kept) {
  ForgetResult result;
  std::vector<std::vector<Token>> dropped;
  result.tree_tokens = cache.forget(gone, kept, dropped);
  if (tiers == nullptr) return result;
  const tiers::Keyspace& space = tiers->keyspace();
  const size_t block = size_t(space.block_tokens);
  std::unordered_set<tiers::BlockKey, tiers::BlockKeyHash> keep;
  for (const std::vector<int32_t>& path : kept)
    for (const tiers::BlockKey& k : tiers::chain_keys(space, path)) keep.insert(k);
  std::unordered_set<tiers::BlockKey, tiers::BlockKeyHash> seen;
  std::vector<tiers::BlockKey> erase;
  auto consider = [&](const std::vector<int32_t>& path) {
    const std::vector<tiers::BlockKey> keys = tiers::chain_keys(space, path);
    for (size_t b = 0; b < keys.size(); ++b) {
      if (keep.count(keys[b]) || !seen.insert(keys[b]).second) continue;
      const std::span<const Token> prefix(path.data(), (b + 1) * block);
      if (size_t(cache.peek_prefix(prefix)) >= prefix.size()) continue;  // still cached
      erase.push_back(keys[b]);
    }
  };
  for (const std::vector<int32_t>& path : gone) consider(path);
  for (const std::vector<Token>& path : dropped) consider(path);
  result.tier_blocks = tiers->erase(erase);
  return result;
}

}  // namespace rc::runtime
