#include "tiers/kv-tiers.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "tiers/kv-page-io.h"
#include "tiers/tier-sweep.h"

namespace rc::tiers {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Weight of a new sample in the cost model's moving averages.
constexpr double kAverageWeight = 0.25;

void average_in(double& avg, double sample) {
  avg = avg == 0 ? sample : avg + kAverageWeight * (sample - avg);
}

}  // namespace

KvTiers::KvTiers(const Keyspace& space, const TierOptions& options, kernels::Backend& backend,
                 kernels::KvPool& pool)
    : space_(space),
      options_(options),
      backend_(backend),
      pool_(pool),
      page_size_(pool.shape().page_size) {}

Result<std::unique_ptr<KvTiers>> KvTiers::open(const Keyspace& space, const TierOptions& options,
                                               kernels::Backend& backend, kernels::KvPool& pool) {
  if (Status s = space.validate(); !s.ok()) return s;
  const int ps = pool.shape().page_size;
  if (options.block_tokens <= 0 || options.block_tokens % ps != 0 ||
      space.block_tokens != options.block_tokens)
    return Status(StatusCode::invalid_argument,
                  "KV tier blocks of " + std::to_string(options.block_tokens) +
                      " tokens are not a whole number of " + std::to_string(ps) + "-token pages");
  std::unique_ptr<KvTiers> t(new KvTiers(space, options, backend, pool));
  if (options.host_bytes > 0) {
    Tier host;
    host.name = "host";
    host.where = "RAM";
    host.budget = options.host_bytes;
    host.store = std::make_unique<MemoryStore>(space, options.host_bytes);
    t->tiers_.push_back(std::move(host));
  }
  if (options.disk) {
    Result<std::unique_ptr<DiskStore>> disk = DiskStore::open(space, *options.disk);
    if (!disk.ok()) return disk.status();
    Tier tier;
    tier.name = "disk";
    tier.where = disk.value()->folder().string();
    tier.budget = options.disk->budget_bytes;
    tier.store = std::move(disk.value());
    t->tiers_.push_back(std::move(tier));
  }
  if (options.redis) {
    Result<std::unique_ptr<RedisStore>> redis = RedisStore::open(space, *options.redis);
    if (!redis.ok()) return redis.status();
    Tier tier;
    tier.name = "redis";
    tier.where = redis.value()->url().redacted();
    tier.redis = redis.value().get();
    tier.store = std::move(redis.value());
    t->tiers_.push_back(std::move(tier));
  }
  for (Tier& tier : t->tiers_) {
    tier.store->set_drop_listener([raw = t.get()](const BlockKey& key) { raw->forget(key); });
  }
  t->writer_ = std::thread([raw = t.get()] { raw->writer_loop(); });
  return t;
}

KvTiers::~KvTiers() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait_for(lock, std::chrono::duration<double>(kShutdownWaitSeconds),
                      [&] { return queue_.empty() && !writing_; });
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void KvTiers::forget(const BlockKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  known_.erase(key);
}

void KvTiers::enqueue(Block block) {
  const int64_t bytes = int64_t(block.payload.size());
  std::lock_guard<std::mutex> g(mu_);
  if (known_.count(block.key) || queued_.count(block.key)) return;
  if (queue_bytes_ + bytes > options_.write_queue_bytes) {
    ++blocks_dropped_;
    return;
  }
  queued_.insert(block.key);
  queue_bytes_ += bytes;
  ++blocks_queued_;
  queue_.push_back(std::move(block));
  cv_.notify_one();
}

void KvTiers::store(std::span<const int32_t> tokens, std::span<const int32_t> pages) {
  if (tiers_.empty()) return;
  const size_t bt = size_t(space_.block_tokens), pages_per_block = bt / size_t(page_size_);
  BlockKey parent{};
  for (size_t at = 0; at + bt <= tokens.size(); at += bt) {
    const std::span<const int32_t> block_tokens = tokens.subspan(at, bt);
    const BlockKey key = chain_key(space_, parent, block_tokens);
    bool have;
    {
      std::lock_guard<std::mutex> g(mu_);
      have = known_.count(key) || queued_.count(key);
    }
    if (!have) {
      Block b;
      b.key = key;
      b.parent = parent;
      b.tokens.assign(block_tokens.begin(), block_tokens.end());
      b.payload =
          pack_block(backend_, pool_, pages.subspan(at / size_t(page_size_), pages_per_block));
      enqueue(std::move(b));
    }
    parent = key;
  }
}

void KvTiers::writer_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Block block = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    bool everywhere = true;
    std::vector<std::pair<size_t, std::string>> outcomes;  // tier, failure ("" = written)
    for (size_t i = 0; i < tiers_.size(); ++i) {
      Tier& tier = tiers_[i];
      Result<bool> has = tier.store->contains(block.key);
      if (has.ok() && has.value()) continue;
      Status put = has.ok() ? tier.store->put(block) : has.status();
      if (!put.ok()) everywhere = false;
      outcomes.emplace_back(i, put.ok() ? std::string() : put.to_string());
    }
    lock.lock();
    for (auto& [i, failure] : outcomes) tiers_[i].write_error = std::move(failure);
    queued_.erase(block.key);
    queue_bytes_ -= int64_t(block.payload.size());
    if (everywhere) known_.insert(block.key);
    writing_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

KvTiers::Plan KvTiers::plan(std::span<const int32_t> tokens, int64_t matched) {
  Plan p;
  p.matched = matched;
  if (tiers_.empty()) return p;
  const int64_t bt = space_.block_tokens;
  p.first_block = matched / bt;
  const std::vector<BlockKey> keys = chain_keys(space_, tokens);
  for (size_t b = size_t(p.first_block); b < keys.size(); ++b) {
    int found = -1;
    for (size_t i = 0; i < tiers_.size() && found < 0; ++i) {
      Result<bool> has = tiers_[i].store->contains(keys[b]);
      if (has.ok() && has.value()) found = int(i);
    }
    if (found < 0) break;
    p.keys.push_back(keys[b]);
    p.tier.push_back(found);
    p.load_ms += tiers_[size_t(found)].ms_per_block;
  }
  if (p.keys.empty()) return p;
  p.tokens = (p.first_block + int64_t(p.keys.size())) * bt - matched;
  p.recompute_ms = prefill_ms_per_token_ > 0 ? double(p.tokens) * prefill_ms_per_token_
                                             : std::numeric_limits<double>::infinity();
  p.load = p.load_ms <= p.recompute_ms;
  return p;
}

int64_t KvTiers::load(const Plan& plan, std::span<const int32_t> pages) {
  const int64_t bt = space_.block_tokens;
  int64_t loaded = 0;
  size_t page = 0;
  for (size_t b = 0; b < plan.keys.size(); ++b) {
    const int skip = b == 0 ? int(plan.matched - plan.first_block * bt) : 0;
    const size_t n_pages = size_t((bt - skip) / page_size_);
    Result<Block> got = Status(StatusCode::not_found, "");
    // The planned tier first; a tier below it may still hold a good copy.
    for (size_t i = size_t(plan.tier[b]); i < tiers_.size() && !got.ok(); ++i) {
      const Clock::time_point t0 = Clock::now();
      got = tiers_[i].store->get(plan.keys[b]);
      const double ms = ms_since(t0);
      if (!got.ok()) continue;
      Tier& tier = tiers_[i];
      std::lock_guard<std::mutex> g(mu_);
      average_in(tier.ms_per_block, ms);
      tier.load_ms += ms;
      tier.loaded_tokens += uint64_t(bt - skip);
    }
    if (!got.ok() || !unpack_block(backend_, pool_, pages.subspan(page, n_pages),
                                   got.value().payload, int(bt), skip)
                          .ok()) {
      std::lock_guard<std::mutex> g(mu_);
      ++load_failures_;
      break;
    }
    page += n_pages;
    loaded += bt - skip;
    enqueue(std::move(got.value()));  // back into the faster tiers that lack it
  }
  std::lock_guard<std::mutex> g(mu_);
  if (loaded > 0) ++loads_;
  loaded_tokens_ += uint64_t(loaded);
  return loaded;
}

void KvTiers::note_prefill(int64_t tokens, double ms) {
  if (tokens <= 0) return;
  std::lock_guard<std::mutex> g(mu_);
  average_in(prefill_ms_per_token_, ms / double(tokens));
}

int64_t KvTiers::held_tokens(std::span<const int32_t> path, int64_t from) const {
  if (tiers_.empty()) return 0;
  const int64_t bt = space_.block_tokens;
  const std::vector<BlockKey> keys = chain_keys(space_, path);
  int64_t held = 0;
  std::lock_guard<std::mutex> g(mu_);
  for (int64_t b = std::max<int64_t>(from / bt, 0); b < int64_t(keys.size()); ++b) {
    if (!known_.count(keys[size_t(b)]) && !queued_.count(keys[size_t(b)])) continue;
    held += (b + 1) * bt - std::max(from, b * bt);
  }
  return held;
}

std::vector<std::pair<std::string, int64_t>> KvTiers::held_from_start(
    std::span<const int32_t> tokens) const {
  const std::vector<BlockKey> keys = chain_keys(space_, tokens);
  std::vector<std::pair<std::string, int64_t>> out;
  for (const Tier& tier : tiers_) {
    int64_t blocks = 0;
    for (const BlockKey& key : keys) {
      Result<bool> has = tier.store->contains(key);
      if (!has.ok() || !has.value()) break;
      ++blocks;
    }
    out.emplace_back(tier.name, blocks * space_.block_tokens);
  }
  return out;
}

TierStats KvTiers::stats() const {
  TierStats s;
  s.enabled = !tiers_.empty();
  s.block_tokens = space_.block_tokens;
  s.block_bytes = space_.block_payload_bytes();
  for (const Tier& tier : tiers_) {
    const StoreStats st = tier.store->stats();
    TierInfo info;
    info.name = tier.name;
    info.where = tier.where;
    info.state = tier.redis ? redis_state_name(tier.redis->state()) : "up";
    if (tier.redis) info.error = tier.redis->last_error();
    info.budget_bytes = tier.redis ? tier.redis->maxmemory() : tier.budget;
    info.bytes = st.bytes;
    info.blocks = st.blocks;
    info.hits = uint64_t(st.hits);
    info.misses = uint64_t(st.misses);
    info.puts = uint64_t(st.puts);
    info.refused = uint64_t(st.refused_corrupt + st.refused_foreign);
    info.evictions = uint64_t(st.evictions);
    info.errors = uint64_t(st.errors);
    s.tiers.push_back(std::move(info));
  }
  std::lock_guard<std::mutex> g(mu_);
  for (size_t i = 0; i < tiers_.size(); ++i) {
    // A tier that answers but failed its last write (disk full, a folder
    // made read-only) is "failing", with the reason, until a write succeeds.
    if (!tiers_[i].write_error.empty() && s.tiers[i].state == "up") {
      s.tiers[i].state = "failing";
      s.tiers[i].error = tiers_[i].write_error;
    }
    s.tiers[i].loaded_tokens = tiers_[i].loaded_tokens;
    s.tiers[i].load_ms = tiers_[i].load_ms;
    s.tiers[i].ms_per_block = tiers_[i].ms_per_block;
  }
  s.loads = loads_;
  s.recomputes = recomputes_;
  s.loaded_tokens = loaded_tokens_;
  s.load_failures = load_failures_;
  s.prefill_ms_per_token = prefill_ms_per_token_;
  s.blocks_queued = blocks_queued_;
  s.blocks_dropped = blocks_dropped_;
  s.queue_bytes = queue_bytes_;
  return s;
}

void KvTiers::clear_local() {
  flush();
  for (Tier& tier : tiers_) {
    if (!tier.redis) (void)tier.store->clear();  // local stores always clear
  }
}

int64_t KvTiers::erase(const std::vector<BlockKey>& keys) {
  flush();
  int64_t held = 0;
  for (const BlockKey& key : keys) {
    bool any = false;
    for (Tier& tier : tiers_) {
      Result<bool> has = tier.store->contains(key);
      if (has.ok() && has.value()) any = true;
      (void)tier.store->erase(key);  // a tier down now keeps it: Redis's TTL ends it
    }
    held += any ? 1 : 0;
    std::lock_guard<std::mutex> g(mu_);
    known_.erase(key);
  }
  return held;
}

Result<int64_t> KvTiers::erase_holding(const TokenWindows& windows) {
  flush();
  std::unordered_set<BlockKey, BlockKeyHash> found;
  Status trouble;
  for (Tier& tier : tiers_) {
    Result<std::vector<BlockKey>> keys = blocks_holding(*tier.store, windows);
    if (!keys.ok()) {
      if (trouble.ok())
        trouble =
            Status(keys.status().code(),
                   "the " + tier.name + " tier could not be swept: " + keys.status().message());
      continue;
    }
    found.insert(keys.value().begin(), keys.value().end());
  }
  const int64_t erased = erase({found.begin(), found.end()});
  if (!trouble.ok()) return trouble;
  return erased;
}

void KvTiers::flush() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

}  // namespace rc::tiers
