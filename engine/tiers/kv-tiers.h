// KvTiers: the cache tiers below the pool, as the scheduler sees them
// (docs/architecture.md section 8).
//
// Tiers, fastest first: host memory (memory-store.h), a local disk folder
// (disk-store.h), a shared Redis (redis-store.h); any of them may be
// absent. The pool (L1) stays the radix tree's; below it, KV lives in
// whole blocks of block_tokens tokens keyed by chain hash (block-key.h).
//
// Writes are write-through: when the scheduler caches a prefix, every whole
// block of it that the tiers do not hold yet is copied out of the pool at
// once (the pages cannot change while the engine thread copies) and queued
// for a writer thread, which puts it into every tier that lacks it. So when
// LRU later evicts those tokens from the pool, their KV is already below:
// eviction demotes without writing, and a quit or a kill -9 loses at most
// the queue. The queue is bounded (blocks beyond it are dropped, counted).
//
// Reads are promotions: plan() finds how many whole blocks after the
// pool's match the tiers hold, and the cost model decides whether loading
// them beats recomputing: each tier's measured time per block against the
// measured prefill time per token (note_prefill). Until a tier has been
// measured it is assumed fast, so the first load measures it. load() reads
// the blocks and writes them into pool pages the caller allocated; a block
// a tier refuses (corrupt, foreign, gone, tier down) ends the load there and
// the rest is recomputed. Nothing a tier returns reaches the pool without
// passing decode_block's checks (disk, Redis) or being this process's own
// (host memory).
//
// Threading: every method on the engine thread (the owner of the pool),
// except stats() and flush(), which any thread may call (the counters they
// read are written under mu_).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_set>
#include <vector>

#include "backend.h"
#include "radixchat/tier-stats.h"
#include "tiers/disk-store.h"
#include "tiers/memory-store.h"
#include "tiers/redis-store.h"
#include "tiers/token-windows.h"

namespace rc::tiers {

struct TierOptions {
  int block_tokens = 64;                   // a multiple of the pool's page size
  int64_t host_bytes = 0;                  // 0: no host tier
  std::optional<DiskStoreOptions> disk;    // unset: no disk tier
  std::optional<RedisStoreOptions> redis;  // unset: no Redis tier
  int64_t write_queue_bytes = int64_t(256) << 20;
};

class KvTiers {
 public:
  // Opens each configured tier. Errors name the tier: a disk folder another
  // process holds, a password Redis refuses, a budget below one block. An
  // unreachable Redis is not an error: it starts down and is retried.
  static Result<std::unique_ptr<KvTiers>> open(const Keyspace& space, const TierOptions& options,
                                               kernels::Backend& backend, kernels::KvPool& pool);
  // Waits for the queued writes (at most kShutdownWait), then stops the writer.
  ~KvTiers();

  // The cache now holds tokens[0, n) in `pages` (n / page_size of them, in
  // order). Queues every whole block of it the tiers do not hold yet.
  void store(std::span<const int32_t> tokens, std::span<const int32_t> pages);

  struct Plan {
    int64_t matched = 0;      // tokens the pool already holds
    int64_t first_block = 0;  // block containing position `matched`
    std::vector<BlockKey> keys;
    std::vector<int> tier;  // index into the tiers, per block
    int64_t tokens = 0;     // tokens loading all of them adds after `matched`
    double load_ms = 0;     // the cost model's estimates
    double recompute_ms = 0;
    bool load = false;  // load beats recompute (false when tokens == 0)
  };
  // The whole blocks of `tokens` after the first `matched` (a multiple of
  // the page size) that some tier holds, consecutively, and the choice.
  Plan plan(std::span<const int32_t> tokens, int64_t matched);
  // Loads the plan's blocks into `pages`, which cover positions
  // [matched, matched + plan.tokens). Returns the tokens loaded after
  // `matched`: all of plan.tokens, or fewer when a block was refused.
  int64_t load(const Plan& plan, std::span<const int32_t> pages);
  // A request's prefill chose to recompute blocks the tiers held.
  void note_recompute() {
    std::lock_guard<std::mutex> g(mu_);
    ++recomputes_;
  }
  // A forward pass prefilled `tokens` tokens in `ms` (the cost model's input).
  void note_prefill(int64_t tokens, double ms);

  // How many tokens of path[from:] lie in whole blocks the tiers hold or
  // are writing (the cache's tier probe: cache.h).
  int64_t held_tokens(std::span<const int32_t> path, int64_t from) const;

  // Per tier (name, tokens), fastest first: how many leading tokens of
  // `tokens` that tier holds in whole blocks, consecutively from the first
  // (key lookups in its index, or one Redis EXISTS per block; nothing is
  // read, counted as a hit or refreshed). Any thread: the stores are
  // thread-safe and the tiers fixed once open.
  std::vector<std::pair<std::string, int64_t>> held_from_start(
      std::span<const int32_t> tokens) const;

  TierStats stats() const;
  // Empties the host and disk tiers (after the queued writes finish); a
  // shared Redis is left alone.
  void clear_local();
  // Returns when every block queued so far was written (or failed).
  void flush();
  // Waits for the queued writes, then erases these blocks from every tier,
  // Redis included (purging what a deleted conversation or document used).
  // Returns how many of them some tier held.
  int64_t erase(const std::vector<BlockKey>& keys);
  // Waits for the queued writes, then erases from every tier each block
  // that holds a run of `windows`' needle, with every block chained below
  // it (tier-sweep.h): a removed document's blocks in any layout. Returns
  // the blocks erased, or an error naming the first tier that could not be
  // read whole (what was found elsewhere is erased all the same).
  Result<int64_t> erase_holding(const TokenWindows& windows);
  const Keyspace& keyspace() const { return space_; }

  static constexpr double kShutdownWaitSeconds = 10;

 private:
  struct Tier {
    std::string name;
    std::string where;
    int64_t budget = -1;
    std::unique_ptr<BlockStore> store;
    RedisStore* redis = nullptr;  // set for the Redis tier (its state)
    uint64_t loaded_tokens = 0;
    double load_ms = 0;
    double ms_per_block = 0;  // moving average of get() time; 0: not measured
    std::string write_error;  // the last write's failure, "" after a success (under mu_)
  };

  KvTiers(const Keyspace& space, const TierOptions& options, kernels::Backend& backend,
          kernels::KvPool& pool);
  void writer_loop();
  void enqueue(Block block);
  void forget(const BlockKey& key);

  Keyspace space_;
  TierOptions options_;
  kernels::Backend& backend_;
  kernels::KvPool& pool_;
  int page_size_;
  std::vector<Tier> tiers_;

  // Keys every tier that was up has (written or read by this process), and
  // keys queued for the writer. A tier dropping a block forgets its key.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::unordered_set<BlockKey, BlockKeyHash> known_;
  std::unordered_set<BlockKey, BlockKeyHash> queued_;
  std::deque<Block> queue_;
  int64_t queue_bytes_ = 0;
  bool writing_ = false;
  bool stop_ = false;
  uint64_t blocks_queued_ = 0;
  uint64_t blocks_dropped_ = 0;
  std::thread writer_;

  // Written by the engine thread under mu_ (stats() reads them from any
  // thread); plan() reads them on the engine thread without it.
  uint64_t loads_ = 0;
  uint64_t recomputes_ = 0;
  uint64_t loaded_tokens_ = 0;
  uint64_t load_failures_ = 0;
  double prefill_ms_per_token_ = 0;
};

}  // namespace rc::tiers
