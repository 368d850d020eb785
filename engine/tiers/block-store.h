// The interface every tier below the pool offers (disk-store.h,
// redis-store.h): whole KV blocks (block-format.h) by key, in one keyspace.
//
// Results: get() returns the block, not_found on a miss, corrupt_data when
// the stored bytes were refused (counted in stats; the bad copy is erased,
// so the caller recomputes and may put it again), or another code when the
// store itself failed (disk I/O, Redis down). A failed store call never
// leaves a half-written block visible. Implementations are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "radixchat/status.h"
#include "tiers/block-format.h"

namespace rc::tiers {

struct StoreStats {
  int64_t bytes = 0;   // encoded bytes held; -1 where the store cannot know (Redis)
  int64_t blocks = 0;  // blocks held; -1 likewise
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t puts = 0;
  int64_t refused_corrupt = 0;  // truncated, malformed or checksum
  int64_t refused_foreign = 0;  // another keyspace or key under this key
  int64_t evictions = 0;
  int64_t errors = 0;  // I/O or connection failures
};

class BlockStore {
 public:
  virtual ~BlockStore() = default;
  virtual const Keyspace& keyspace() const = 0;
  virtual Result<Block> get(const BlockKey& key) = 0;
  // Stores (or replaces) a block; invalid_argument when it does not fit the keyspace.
  virtual Status put(const Block& block) = 0;
  // True when a block is held under key (not verified: get() may still refuse it).
  virtual Result<bool> contains(const BlockKey& key) = 0;
  // ok also when nothing was held.
  virtual Status erase(const BlockKey& key) = 0;
  virtual StoreStats stats() const = 0;
  // Calls `visit` with every block this store holds for its keyspace (a
  // purge's sweep: tier-sweep.h), without counting hits or changing what
  // eviction drops next. A block that fails its checks is skipped. `visit`
  // must not call back into the store. An error when the store itself
  // failed (disk I/O, Redis down); the blocks visited before it were real.
  using BlockVisitor = std::function<void(const Block&)>;
  virtual Status for_each_block(const BlockVisitor& visit) = 0;
  // Erases every block this store holds for its keyspace. A shared store
  // (Redis) refuses with invalid_argument: other engines read those blocks.
  virtual Status clear() = 0;
  // Called (under the store's lock: it must not call back into the store)
  // whenever the store drops a block it held: budget eviction, a refused
  // copy, erase. Stores that cannot see their evictions (Redis) never call
  // it. Set once, before the store is shared between threads.
  using DropListener = std::function<void(const BlockKey&)>;
  virtual void set_drop_listener(DropListener listener) { (void)listener; }
};

}  // namespace rc::tiers
