// L2: KV blocks in host memory, with a byte budget and LRU eviction.
//
// The tier between the pool and the disk: on a GPU backend it is the host
// RAM a device pool spills to; on the CPU backend it is a second RAM pool
// beside L1, which is how the suite runs the spill-and-reload path without
// a GPU. Blocks are kept decoded (this process wrote them; no bytes leave
// memory), so get() costs one copy of the payload.
//
// Thread-safe: one mutex around the map and the LRU list.
#pragma once

#include <list>
#include <mutex>
#include <unordered_map>

#include "tiers/block-store.h"

namespace rc::tiers {

class MemoryStore final : public BlockStore {
 public:
  MemoryStore(const Keyspace& space, int64_t budget_bytes);

  const Keyspace& keyspace() const override { return space_; }
  Result<Block> get(const BlockKey& key) override;
  Status put(const Block& block) override;
  Result<bool> contains(const BlockKey& key) override;
  Status erase(const BlockKey& key) override;
  StoreStats stats() const override;
  Status for_each_block(const BlockVisitor& visit) override;
  Status clear() override;
  void set_drop_listener(DropListener listener) override { on_drop_ = std::move(listener); }

 private:
  struct Entry {
    Block block;
    std::list<BlockKey>::iterator lru;
  };
  void drop_locked(const BlockKey& key);

  Keyspace space_;
  int64_t budget_;
  int64_t block_bytes_;
  mutable std::mutex mu_;
  std::list<BlockKey> lru_;  // front = least recently used
  std::unordered_map<BlockKey, Entry, BlockKeyHash> map_;
  StoreStats stats_;
  DropListener on_drop_;
};

}  // namespace rc::tiers
