// KV events with the tier in vLLM's `medium` field (app/kv-events/tier-medium.h)
// from a real engine with a host tier under a small pool on the bundled
// model: prompts that share a prefix push each other out of the pool, and
// one comes back. Every batch goes through encode_batch, decode_batch and a
// BlockTree, as a subscriber would hold it.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "radixchat/engine.h"
#include "radixchat/kv-block-tree.h"
#include "radixchat/kv-events.h"
#include "test-paths.h"
#include "tier-medium.h"

namespace rc::kv_events {
namespace {

TEST(TierMedium, NamesThePoolAndTheFastestTierUp) {
  ModelInfo cuda, cpu;
  cuda.backend = "cuda";
  cpu.backend = "cpu";
  EXPECT_EQ(pool_medium(cuda), "GPU");
  EXPECT_EQ(pool_medium(cpu), "CPU");
  TierStats t;
  EXPECT_EQ(tier_medium(t, "GPU"), "");
  t.enabled = true;
  for (const char* name : {"host", "disk", "redis"}) {
    TierInfo i;
    i.name = name;
    i.state = std::string(name) == "redis" ? "down" : "up";
    t.tiers.push_back(i);
  }
  EXPECT_EQ(tier_medium(t, "GPU"), "CPU");
  EXPECT_EQ(tier_medium(t, "CPU"), "HOST");
  t.tiers[0].state = "down";
  EXPECT_EQ(tier_medium(t, "CPU"), "DISK");
  t.tiers[1].state = "down";
  t.tiers[2].state = "up";
  EXPECT_EQ(tier_medium(t, "CPU"), "REDIS");
}

std::vector<int32_t> prompt(const std::vector<int32_t>& shared, uint32_t seed, int n, int vocab) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t = shared;
  while (int(t.size()) < n) t.push_back(int32_t(3 + rng() % uint32_t(vocab - 3)));
  return t;
}

TEST(TierMedium, DemotedBlocksSinkToTheHostTierAndComeBackToThePool) {
  EngineConfig cfg;
  cfg.model_path = rc::test::test_model_path();
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = 320;
  cfg.kv_host_bytes = int64_t(64) << 20;
  auto created = Engine::create(cfg);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  Engine& e = *created.value();
  const std::string pool = pool_medium(e.model_info());
  ASSERT_EQ(pool, "CPU");  // this suite runs the CPU backend
  const std::string lower = tier_medium(e.stats().tiers, pool);
  ASSERT_EQ(lower, "HOST");

  TieredBlockMapper mapper(pool, lower);
  BlockTree sub;
  std::map<std::string, std::set<BlockHash>> stored;  // medium -> hashes published
  std::set<BlockHash> removed_from_pool;
  std::set<BlockHash> sunk_before_removed;  // a HOST block not removed from the pool first
  auto publish = [&](std::vector<Event> events) {
    if (events.empty()) return;
    for (const Event& ev : events) {
      if (ev.kind == EventKind::cleared) continue;
      EXPECT_TRUE(ev.medium == pool || ev.medium == lower) << ev.medium;
      if (ev.kind == EventKind::removed) {
        EXPECT_EQ(ev.medium, pool) << "only the pool removes blocks";
        removed_from_pool.insert(ev.block_hashes.begin(), ev.block_hashes.end());
      } else {
        for (const BlockHash& h : ev.block_hashes) {
          stored[ev.medium].insert(h);
          if (ev.medium == lower && !removed_from_pool.count(h)) sunk_before_removed.insert(h);
        }
      }
    }
    Batch b;
    b.events = std::move(events);
    Result<Batch> back = decode_batch(encode_batch(b));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    sub.apply(back.value());
  };
  auto pump = [&] {
    bool overflowed = false;
    std::vector<Event> out;
    for (const CacheEvent& ce : e.drain_events(&overflowed))
      ASSERT_TRUE(mapper.apply(ce, out)) << cache_event_kind_name(ce.kind) << " #" << ce.seq;
    ASSERT_FALSE(overflowed);
    publish(std::move(out));
  };
  publish(mapper.reset(e.cache_snapshot()));

  const int vocab = e.model_info().n_vocab;
  const std::vector<int32_t> shared = prompt({1}, 99, 70, vocab);
  std::vector<std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 4; ++i) prompts.push_back(prompt(shared, 10 + i, 200, vocab));
  for (const auto& p : prompts) {
    ASSERT_TRUE(e.last_logits(p).ok());
    pump();
  }
  const std::set<BlockHash> sunk = stored[lower];
  ASSERT_FALSE(sunk.empty()) << "no block sank to the host tier";
  EXPECT_TRUE(sunk_before_removed.empty()) << "a block sank while still in the pool";
  // A sunk block hangs from a block the subscriber knows (or is a first block).
  size_t sunk_in_tree = 0;
  for (const auto& [b, depth] : sub.walk()) {
    if (b->medium != lower) continue;
    ++sunk_in_tree;
    EXPECT_FALSE(sub.has_unknown_parent(*b));
  }
  EXPECT_GT(sunk_in_tree, 0u);

  // The first prompt again: its blocks are loaded back (promote) and
  // published as the pool's again, under the same hashes.
  const uint64_t loaded_before = e.stats().tiers.loaded_tokens;
  ASSERT_TRUE(e.last_logits(prompts[0]).ok());
  pump();
  ASSERT_GT(e.stats().tiers.loaded_tokens, loaded_before) << "nothing was loaded";
  size_t back_in_pool = 0;
  for (const auto& [b, depth] : sub.walk())
    if (b->medium == pool && sunk.count(b->hash)) ++back_in_pool;
  EXPECT_GT(back_in_pool, 0u) << "no sunk block came back with the pool's medium";

  // The subscriber's pool blocks are exactly the engine's cached pages.
  const CacheSnapshot snap = e.cache_snapshot();
  size_t pages = 0;
  for (const CacheNodeInfo& n : snap.nodes) pages += n.pages.size();
  size_t pool_blocks = 0;
  for (const auto& [b, depth] : sub.walk()) pool_blocks += b->medium == pool ? 1 : 0;
  EXPECT_EQ(pool_blocks, pages);
}

}  // namespace
}  // namespace rc::kv_events
