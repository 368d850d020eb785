#include "purge.h"

#include <optional>
#include <unordered_map>
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

namespace {

// The root-to-leaf token paths of a snapshot's tree.
std::vector<std::vector<Token>> leaf_paths(const CacheSnapshot& snap) {
  std::unordered_map<NodeId, std::vector<NodeId>> children;
  for (const CacheNodeInfo& n : snap.nodes)
    if (n.id != kRootNode) children[n.parent].push_back(n.id);
  std::unordered_map<NodeId, const CacheNodeInfo*> by_id;
  for (const CacheNodeInfo& n : snap.nodes) by_id[n.id] = &n;
  std::vector<std::vector<Token>> paths;
  std::vector<std::pair<NodeId, std::vector<Token>>> todo{{kRootNode, {}}};
  while (!todo.empty()) {
    auto [id, path] = std::move(todo.back());
    todo.pop_back();
    const std::vector<Token>& own = by_id.at(id)->tokens;
    path.insert(path.end(), own.begin(), own.end());
    auto c = children.find(id);
    if (c == children.end()) {
      if (!path.empty()) paths.push_back(std::move(path));
      continue;
    }
    for (NodeId child : c->second) todo.emplace_back(child, path);
  }
  return paths;
}

}  // namespace

Result<ForgetResult> forget_holding(KvCache& cache, tiers::KvTiers* tiers,
                                    const tiers::TokenWindows& windows) {
  std::vector<std::vector<Token>> gone;
  std::vector<std::vector<Token>> kept;
  for (std::vector<Token>& path : leaf_paths(cache.snapshot())) {
    const std::optional<size_t> at = windows.first_match(path);
    if (!at) {
      kept.push_back(std::move(path));
      continue;
    }
    const size_t keep = *at > kDocumentMarginTokens ? *at - kDocumentMarginTokens : 0;
    if (keep > 0) kept.emplace_back(path.begin(), path.begin() + std::ptrdiff_t(keep));
    gone.push_back(std::move(path));
  }
  ForgetResult result = forget_prefixes(cache, tiers, gone, kept);
  if (tiers == nullptr) return result;
  Result<int64_t> swept = tiers->erase_holding(windows);
  if (!swept.ok()) return swept.status();
  result.tier_blocks += swept.value();
  return result;
}

}  // namespace rc::runtime
