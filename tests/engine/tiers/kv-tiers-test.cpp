// KvTiers against an oracle: pool pages carry a pattern that is a function
// of the token prefix up to each position, so any KV that comes back from a
// tier can be checked byte for byte; after every operation, every block a
// tier holds has the bytes of its prefix, and the budgets hold.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>

#include "cpu/cpu-backends.h"
#include "radixchat/cache.h"
#include "tier-fixtures.h"
#include "tiers/kv-tiers.h"

namespace rc::tiers {
namespace {

namespace fs = std::filesystem;
using testing::HostPool;
using testing::small_space;

constexpr int kPageSize = 2;
constexpr int kBlockTokens = 4;
constexpr int64_t kPages = 64;

// The byte a position's K (or V) row holds in a layer: a hash of the whole
// prefix up to and including it, so two sequences share bytes exactly
// where they share a prefix.
// The pool is F16: the high byte of each element (odd i) keeps its top
// exponent bit clear, so every value is finite (sealed stores refuse others).
uint8_t expected_byte(uint64_t prefix_hash, int layer, bool v, size_t i) {
  const auto b = uint8_t((prefix_hash >> ((i % 7) * 8)) + uint64_t(layer) * 31 + (v ? 101 : 0) + i);
  return i % 2 ? uint8_t(b & 0xBF) : b;
}

std::vector<uint64_t> prefix_hashes(std::span<const int32_t> tokens) {
  std::vector<uint64_t> h;
  uint64_t x = 1469598103934665603ull;
  for (int32_t t : tokens) {
    x = (x ^ uint64_t(t)) * 1099511628211ull;
    h.push_back(x);
  }
  return h;
}

class Rig {
 public:
  explicit Rig(const TierOptions& options)
      : shape_{2, 2, 8, kPageSize, kPages, kernels::DType::f16},
        pool_(shape_),
        backend_(kernels::make_cpu_backend(1)) {
    space_ = Keyspace::of(small_space().model, shape_, kernels::RopeConfig{}, kBlockTokens);
    auto t = KvTiers::open(space_, options, *backend_, pool_);
    EXPECT_TRUE(t.ok()) << t.status().to_string();
    tiers_ = std::move(t.value());
  }

  int64_t row_bytes() const { return int64_t(shape_.n_kv_heads) * shape_.head_dim * 2; }

  // Writes the pattern of positions [from, end) into `pages` (the
  // sequence's page table from position 0).
  void fill(std::span<const int32_t> tokens, std::span<const int32_t> pages, size_t from = 0) {
    const std::vector<uint64_t> h = prefix_hashes(tokens);
    for (size_t pos = from; pos < tokens.size(); ++pos) {
      for (int l = 0; l < shape_.n_layers; ++l) {
        for (int v = 0; v < 2; ++v) {
          auto* base = static_cast<uint8_t*>(v ? pool_.v(l) : pool_.k(l));
          uint8_t* row =
              base + (int64_t(pages[pos / kPageSize]) * kPageSize + int64_t(pos % kPageSize)) *
                         row_bytes();
          for (int64_t i = 0; i < row_bytes(); ++i) row[i] = expected_byte(h[pos], l, v, size_t(i));
        }
      }
    }
  }

  // Positions [from, to) of `tokens` hold their pattern in `pages` (a table from `from`).
  bool holds(std::span<const int32_t> tokens, int64_t from, int64_t to,
             std::span<const int32_t> pages) {
    const std::vector<uint64_t> h = prefix_hashes(tokens);
    for (int64_t pos = from; pos < to; ++pos) {
      const int64_t rel = pos - from;
      for (int l = 0; l < shape_.n_layers; ++l) {
        for (int v = 0; v < 2; ++v) {
          auto* base = static_cast<uint8_t*>(v ? pool_.v(l) : pool_.k(l));
          const uint8_t* row =
              base +
              (int64_t(pages[size_t(rel / kPageSize)]) * kPageSize + rel % kPageSize) * row_bytes();
          for (int64_t i = 0; i < row_bytes(); ++i)
            if (row[i] != expected_byte(h[size_t(pos)], l, v, size_t(i))) return false;
        }
      }
    }
    return true;
  }

  Keyspace space_;
  kernels::KvPoolShape shape_;
  HostPool pool_;
  std::unique_ptr<kernels::Backend> backend_;
  std::unique_ptr<KvTiers> tiers_;
};

std::vector<int32_t> iota_pages(int first, int n) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(first + i);
  return p;
}

TEST(KvTiers, StoreThenLoadGivesThePoolBytesBack) {
  TierOptions o;
  o.block_tokens = kBlockTokens;
  o.host_bytes = 1 << 20;
  Rig rig(o);
  const std::vector<int32_t> tokens = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};  // 2.5 blocks
  const std::vector<int32_t> pages = iota_pages(0, 5);
  rig.fill(tokens, pages);
  rig.tiers_->store(std::span(tokens).first(10), pages);
  rig.tiers_->flush();
  EXPECT_EQ(rig.tiers_->stats().tiers[0].blocks, 2);  // the half block is never stored
  // The pool already holds 2 tokens: the load starts mid-block.
  KvTiers::Plan plan = rig.tiers_->plan(tokens, 2);
  ASSERT_TRUE(plan.load);
  EXPECT_EQ(plan.tokens, 6);
  const std::vector<int32_t> fresh = {40, 20, 21};
  ASSERT_EQ(rig.tiers_->load(plan, fresh), 6);
  EXPECT_TRUE(rig.holds(tokens, 2, 8, fresh));
  EXPECT_EQ(rig.tiers_->stats().loaded_tokens, 6u);
}

TEST(KvTiers, CostModelRecomputesWhenPrefillIsFaster) {
  TierOptions o;
  o.block_tokens = kBlockTokens;
  o.host_bytes = 1 << 20;
  Rig rig(o);
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<int32_t> pages = iota_pages(0, 4);
  rig.fill(tokens, pages);
  rig.tiers_->store(tokens, pages);
  rig.tiers_->flush();
  // Unmeasured tiers are assumed fast: the first load happens and is timed.
  KvTiers::Plan plan = rig.tiers_->plan(tokens, 0);
  ASSERT_TRUE(plan.load);
  ASSERT_EQ(rig.tiers_->load(plan, iota_pages(10, 4)), 8);
  EXPECT_GT(rig.tiers_->stats().tiers[0].ms_per_block, 0);
  // A prefill measured far faster than any copy: recompute wins.
  rig.tiers_->note_prefill(1000000, 1e-9);
  plan = rig.tiers_->plan(tokens, 0);
  EXPECT_FALSE(plan.load);
  EXPECT_GT(plan.load_ms, plan.recompute_ms);
  // A slow prefill: loading wins again.
  for (int i = 0; i < 100; ++i) rig.tiers_->note_prefill(1, 1000);
  EXPECT_TRUE(rig.tiers_->plan(tokens, 0).load);
}

// Random sequences over a small alphabet (so they share prefixes) are
// stored, evicted by the tiers' budgets and loaded back at random matched
// lengths; every load is checked against the oracle pattern, and after
// every operation every block held has its prefix's bytes and no budget
// is exceeded (the disk by at most the block being written).
TEST(KvTiers, RandomizedAgainstThePrefixOracle) {
  const fs::path root = fs::temp_directory_path() / ("rc-kv-tiers-" + std::to_string(::getpid()));
  fs::remove_all(root);
  TierOptions o;
  o.block_tokens = kBlockTokens;
  Rig probe(o);
  const int64_t block_bytes = probe.space_.block_payload_bytes();
  o.host_bytes = 5 * (block_bytes + 4 * kBlockTokens);
  DiskStoreOptions disk;
  disk.key = testing::test_key();
  disk.root = root;
  disk.budget_bytes = 8 * int64_t(sealed_block_bytes(probe.space_));
  disk.fsync = false;
  o.disk = disk;
  Rig rig(o);
  std::mt19937 rng(1234);
  std::vector<std::vector<int32_t>> seqs;
  for (int i = 0; i < 12; ++i) {
    std::vector<int32_t> s;
    const int n = 4 + int(rng() % 24);
    for (int j = 0; j < n; ++j) s.push_back(int32_t(rng() % 3));
    seqs.push_back(s);
  }
  // Which token prefix each key names, for checking held blocks.
  std::map<std::string, std::vector<int32_t>> prefix_of;
  for (const auto& s : seqs) {
    const std::vector<BlockKey> keys = chain_keys(rig.space_, s);
    for (size_t b = 0; b < keys.size(); ++b)
      prefix_of[keys[b].hex()] =
          std::vector<int32_t>(s.begin(), s.begin() + long((b + 1) * kBlockTokens));
  }
  int loads = 0;
  for (int op = 0; op < 400; ++op) {
    const auto& s = seqs[rng() % seqs.size()];
    const int whole = int(s.size()) / kPageSize * kPageSize;
    if (rng() % 2) {
      const std::vector<int32_t> pages = iota_pages(0, whole / kPageSize);
      rig.fill(std::span(s).first(size_t(whole)), pages);
      rig.tiers_->store(std::span(s).first(size_t(whole)), pages);
      if (rng() % 3 == 0) rig.tiers_->flush();
    } else {
      const int64_t matched = int64_t(rng() % size_t(whole / kPageSize + 1)) * kPageSize;
      const KvTiers::Plan plan = rig.tiers_->plan(s, matched);
      const std::vector<int32_t> fresh = iota_pages(32, int(plan.tokens / kPageSize));
      const int64_t got = plan.load ? rig.tiers_->load(plan, fresh) : 0;
      ASSERT_EQ(got, plan.tokens) << "op " << op;  // nothing here is corrupt
      ASSERT_TRUE(rig.holds(s, matched, matched + got, fresh)) << "op " << op;
      loads += got > 0;
    }
    rig.tiers_->flush();
    const TierStats st = rig.tiers_->stats();
    ASSERT_LE(st.tiers[0].bytes, st.tiers[0].budget_bytes) << "op " << op;
    ASSERT_LE(st.tiers[1].bytes, st.tiers[1].budget_bytes) << "op " << op;
    // Every block either tier holds carries its prefix's bytes.
    for (const auto& [hex, prefix] : prefix_of) {
      const Result<Hash128> key = Hash128::from_hex(hex);
      rig.tiers_->flush();  // the last load's write-back may not evict a planned block
      const KvTiers::Plan p = rig.tiers_->plan(prefix, int64_t(prefix.size()) - kBlockTokens);
      if (p.keys.empty()) continue;
      ASSERT_EQ(p.keys[0], key.value());
      const std::vector<int32_t> fresh = iota_pages(48, kBlockTokens / kPageSize);
      ASSERT_EQ(rig.tiers_->load(p, fresh), kBlockTokens);
      ASSERT_TRUE(
          rig.holds(prefix, int64_t(prefix.size()) - kBlockTokens, int64_t(prefix.size()), fresh))
          << "op " << op;
    }
  }
  EXPECT_GT(loads, 20);
  const TierStats st = rig.tiers_->stats();
  EXPECT_GT(st.tiers[0].evictions, 0u);
  EXPECT_GT(st.tiers[1].evictions, 0u);
  rig.tiers_.reset();
  fs::remove_all(root);
}

// The tiered tree as the scheduler drives it: a RadixCache over the rig's
// pool with the tiers' probe, requests that match, promote from the tiers,
// compute the rest (the oracle pattern), insert, store below and sometimes
// keep their lock. After every request and every eviction: the tree is
// sound, every node's pages hold the bytes of its path (whether computed or
// loaded), every locked node is still in the pool, and the budgets hold.
TEST(KvTiers, RandomizedTieredTreeAgainstTheOracle) {
  const fs::path root =
      fs::temp_directory_path() / ("rc-kv-tiers-tree-" + std::to_string(::getpid()));
  fs::remove_all(root);
  TierOptions o;
  o.block_tokens = kBlockTokens;
  Rig probe(o);
  o.host_bytes = 6 * (probe.space_.block_payload_bytes() + 4 * kBlockTokens);
  DiskStoreOptions disk;
  disk.key = testing::test_key();
  disk.root = root;
  disk.budget_bytes = 10 * int64_t(sealed_block_bytes(probe.space_));
  disk.fsync = false;
  o.disk = disk;
  Rig rig(o);
  CacheConfig cc;
  cc.page_size = kPageSize;
  cc.total_pages = kPages / 2;  // pages 0..31 of the rig's pool
  auto made = make_kv_cache(cc);
  ASSERT_TRUE(made.ok());
  KvCache& cache = *made.value();
  cache.set_tier_probe([&](std::span<const Token> path, int64_t from) {
    return rig.tiers_->held_tokens(path, from);
  });
  std::mt19937 rng(99);
  std::vector<std::vector<int32_t>> seqs;
  for (int i = 0; i < 16; ++i) {
    std::vector<int32_t> s;
    const int n = 8 + int(rng() % 20);
    for (int j = 0; j < n; ++j) s.push_back(int32_t(rng() % 3));
    seqs.push_back(s);
  }
  std::vector<NodeHandle> held;  // locks kept by "running" requests
  int64_t promoted = 0, demoted = 0;
  for (int op = 0; op < 500; ++op) {
    if (!held.empty() && rng() % 3 == 0) {
      ASSERT_TRUE(cache.unlock(held.back()).ok());
      held.pop_back();
    } else if (rng() % 5 == 0) {
      cache.evict(int64_t(1 + rng() % 24));
    } else {
      const auto& s = seqs[rng() % seqs.size()];
      const std::span<const int32_t> key(s.data(), s.size() / kPageSize * kPageSize);
      MatchResult m = cache.match_prefix(key);
      ASSERT_TRUE(cache.lock(m.node).ok());
      // With the writer idle, no put can evict a planned block before the
      // load reads it, so every planned block must come back.
      rig.tiers_->flush();
      const KvTiers::Plan plan = rig.tiers_->plan(key, m.tokens);
      std::vector<PageId> fresh;
      if (plan.load && cache.alloc_pages(plan.tokens / kPageSize, fresh).ok()) {
        const int64_t got = rig.tiers_->load(plan, fresh);
        ASSERT_EQ(got, plan.tokens) << "op " << op;
        std::vector<PageId> table = m.pages;
        table.insert(table.end(), fresh.begin(), fresh.end());
        auto ins = cache.insert(key.first(size_t(m.tokens + got)), table);
        ASSERT_TRUE(ins.ok()) << ins.status().to_string();
        ASSERT_TRUE(cache.lock(ins->node).ok());
        ASSERT_TRUE(cache.unlock(m.node).ok());
        cache.note_promoted(ins->node, got);
        promoted += got;
        m = {m.tokens + got, ins->pages, ins->node};
      }
      std::vector<PageId> table = m.pages;
      if (!cache.alloc_pages(int64_t(key.size()) / kPageSize - int64_t(table.size()), table).ok()) {
        ASSERT_TRUE(cache.unlock(m.node).ok());  // pool short: the request waits
      } else {
        // Compute the rest: the pattern goes into the new positions only,
        // so a wrong load stays wrong for the check below to see.
        rig.fill(key, table, size_t(m.tokens));
        auto ins = cache.insert(key, table);
        ASSERT_TRUE(ins.ok()) << ins.status().to_string();
        rig.tiers_->store(key, ins->pages);
        ASSERT_TRUE(cache.lock(ins->node).ok());
        ASSERT_TRUE(cache.unlock(m.node).ok());
        if (held.size() < 3 && rng() % 2) {
          held.push_back(ins->node);
        } else {
          ASSERT_TRUE(cache.unlock(ins->node).ok());
        }
      }
    }
    if (rng() % 4 == 0) rig.tiers_->flush();
    ASSERT_TRUE(cache.check_integrity().ok()) << "op " << op;
    const CacheSnapshot snap = cache.snapshot();
    std::map<NodeId, const CacheNodeInfo*> by_id;
    for (const CacheNodeInfo& n : snap.nodes) by_id[n.id] = &n;
    for (const NodeHandle& h : held) {
      ASSERT_TRUE(by_id.count(h.id) && by_id[h.id]->lock_ref > 0) << "op " << op;
    }
    for (const CacheNodeInfo& n : snap.nodes) {
      if (n.id == kRootNode) continue;
      std::vector<int32_t> path;
      for (NodeId up = n.id; up != kRootNode; up = by_id[up]->parent)
        path.insert(path.begin(), by_id[up]->tokens.begin(), by_id[up]->tokens.end());
      const int64_t from = int64_t(path.size() - n.tokens.size());
      ASSERT_TRUE(rig.holds(path, from, int64_t(path.size()), n.pages))
          << "op " << op << ": node " << n.id << "'s pages do not hold its path";
    }
    const TierStats st = rig.tiers_->stats();
    ASSERT_LE(st.tiers[0].bytes, st.tiers[0].budget_bytes);
    ASSERT_LE(st.tiers[1].bytes, st.tiers[1].budget_bytes);
  }
  std::vector<CacheEvent> events;
  cache.events().drain(events);
  for (const CacheEvent& e : events) demoted += e.kind == CacheEventKind::demote ? 1 : 0;
  EXPECT_GT(promoted, 0);
  EXPECT_GT(demoted, 0);
  for (const NodeHandle& h : held) ASSERT_TRUE(cache.unlock(h).ok());
  rig.tiers_.reset();
  fs::remove_all(root);
}

}  // namespace
}  // namespace rc::tiers
