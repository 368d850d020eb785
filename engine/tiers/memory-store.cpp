#include "tiers/memory-store.h"

namespace rc::tiers {

MemoryStore::MemoryStore(const Keyspace& space, int64_t budget_bytes)
    : space_(space),
      budget_(budget_bytes),
      block_bytes_(space.block_payload_bytes() + int64_t(4 * space.block_tokens)) {}

Result<Block> MemoryStore::get(const BlockKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) {
    ++stats_.misses;
    return Status(StatusCode::not_found, "block " + key.hex() + " is not in host memory");
  }
  lru_.splice(lru_.end(), lru_, it->second.lru);
  ++stats_.hits;
  return it->second.block;
}

Status MemoryStore::for_each_block(const BlockVisitor& visit) {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& [key, entry] : map_) visit(entry.block);
  return {};
}

Status MemoryStore::put(const Block& block) {
  if (block.tokens.size() != size_t(space_.block_tokens) ||
      block.payload.size() != size_t(space_.block_payload_bytes()) ||
      chain_key(space_, block.parent, block.tokens) != block.key)
    return Status(StatusCode::invalid_argument, "the block does not fit the host tier's keyspace");
  std::lock_guard<std::mutex> g(mu_);
  drop_locked(block.key);
  if (block_bytes_ > budget_) return {};  // a budget below one block holds nothing
  while (stats_.bytes + block_bytes_ > budget_ && !lru_.empty()) {
    drop_locked(lru_.front());
    ++stats_.evictions;
  }
  lru_.push_back(block.key);
  map_.emplace(block.key, Entry{block, std::prev(lru_.end())});
  stats_.bytes += block_bytes_;
  stats_.blocks = int64_t(map_.size());
  ++stats_.puts;
  return {};
}

Result<bool> MemoryStore::contains(const BlockKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  return map_.count(key) != 0;
}

Status MemoryStore::erase(const BlockKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  drop_locked(key);
  return {};
}

Status MemoryStore::clear() {
  std::lock_guard<std::mutex> g(mu_);
  while (!lru_.empty()) drop_locked(lru_.front());
  return {};
}

StoreStats MemoryStore::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

void MemoryStore::drop_locked(const BlockKey& key) {
  auto it = map_.find(key);
  if (it == map_.end()) return;
  lru_.erase(it->second.lru);
  map_.erase(it);
  stats_.bytes -= block_bytes_;
  stats_.blocks = int64_t(map_.size());
  if (on_drop_) on_drop_(key);
}

}  // namespace rc::tiers
