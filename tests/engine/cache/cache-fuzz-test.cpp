// Randomized differential test: thousands of random request / match / lock /
// unlock / pin / evict / alloc / free / reset / draft steps over small alphabets (so
// prefixes collide), page sizes 1, 2 and 16, for every policy (radix, hash,
// off) against the oracle of cache-oracle.h; check_integrity() and event
// replay == snapshot after every step.
//
// RADIXCHAT_CACHE_FUZZ_STEPS=N runs the long form instead (N steps per
// policy and page size, e.g. 10000000 for docs/notes/reliability.md):
//   RADIXCHAT_CACHE_FUZZ_STEPS=10000000 test_cache --gtest_filter='CacheFuzzLong*'
// It is skipped in the suite.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "cache-oracle.h"
#include "cache-test-util.h"

namespace rc::test {
namespace {

struct Active {
  std::vector<Token> key;
  size_t len;
  NodeHandle node;
};

class Fuzz {
 public:
  Fuzz(CachePolicy policy, Eviction eviction, int ps, int64_t pages, uint32_t seed, bool merge)
      : rng_(seed), policy_(policy), reuse_(policy != CachePolicy::off) {
    CacheConfig cfg;
    cfg.policy = policy;
    cfg.eviction = eviction;
    cfg.page_size = ps;
    cfg.total_pages = pages;
    cfg.merge_after_evict = merge;
    cache_ = std::move(make_kv_cache(cfg)).value();
    o_.ps = size_t(ps);
    replay_.start(cache_->snapshot());
  }

  void run(int64_t steps) {
    if (::testing::Test::HasFailure()) return;  // an earlier seed failed: its report is enough
    for (int64_t i = 0; i < steps; ++i) {
      step();
      verify();
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << "at step " << i;
        return;
      }
    }
    release_everything();
    if (::testing::Test::HasFailure()) return;
    // The run must have exercised what it is meant to test.
    CacheStats st = cache_->stats();
    EXPECT_GT(st.evictions, 50u);
    EXPECT_GT(no_pages_, 0);
    if (policy_ == CachePolicy::radix) {  // hash has no nodes to split or merge
      EXPECT_GT(st.splits, 50u);
      if (cache_->config().merge_after_evict) {
        EXPECT_GT(st.merges, 0u);
      }
    }
    if (reuse_) {  // off never matches, so nothing is ever pinned or hit
      EXPECT_GT(pinned_evictions_, 0);
      EXPECT_GT(st.hit_tokens, 0u);
    } else {
      EXPECT_EQ(st.hit_tokens, 0u);
    }
    std::printf(
        "%s, page size %d, %lld steps: %llu evictions, %llu splits, %llu merges, "
        "%d pinned evictions, %d no_pages, hit rate %.3f, 0 violations, 0 leaked pages "
        "(%lld free + %lld evictable = %lld after releasing everything)\n",
        cache_policy_name(policy_), cache_->config().page_size, (long long)steps,
        (unsigned long long)st.evictions, (unsigned long long)st.splits,
        (unsigned long long)st.merges, pinned_evictions_, no_pages_, st.hit_rate(),
        (long long)st.free_pages, (long long)st.evictable_pages, (long long)st.total_pages);
  }

 private:
  // End of a run: every lock, pin and held page the test still has goes
  // back. Then nothing may be protected or held and every page must be free
  // or evictable (cached and reclaimable): a page lost anywhere shows here.
  void release_everything() {
    for (const Active& a : active_) {
      ASSERT_TRUE(cache_->unlock(a.node).ok());
      o_.add_ref(o_.locks, a.key, a.len, -1);
    }
    active_.clear();
    for (const Active& p : pinned_) {
      if (cache_->unpin(p.node).ok()) o_.add_ref(o_.pins, p.key, p.len, -1);
    }
    pinned_.clear();
    for (const auto& pages : held_lists_) {
      ASSERT_TRUE(cache_->free_pages(pages).ok());
      held_ -= int64_t(pages.size());
    }
    held_lists_.clear();
    verify();
    const CacheStats st = cache_->stats();
    EXPECT_EQ(held_, 0);
    EXPECT_EQ(st.held_pages, 0) << "leaked held pages";
    EXPECT_EQ(st.protected_pages, 0) << "pages still protected with no lock left";
    EXPECT_EQ(st.free_pages + st.evictable_pages, st.total_pages) << "pages lost";
  }

  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::vector<Token> random_key() {
    const size_t ps = o_.ps;
    size_t len = ps == 1 ? 1 + pick(12) : ps * (1 + pick(4)) + pick(ps);
    std::vector<Token> key;
    if (!history_.empty() && pick(10) < 7) {  // share a prefix with an earlier key
      const auto& h = history_[pick(history_.size())];
      key.assign(h.begin(), h.begin() + ptrdiff_t(pick(h.size() + 1)));
    }
    while (key.size() < len) {
      if (ps == 1) {
        key.push_back(Token(pick(3)));
        continue;
      }
      // Pages drawn from three patterns, sometimes with one token changed,
      // so keys share whole pages and also diverge inside a page.
      std::vector<Token> page(ps, Token(pick(3)));
      if (pick(4) == 0) page[pick(ps)] = Token(pick(3));
      key.insert(key.end(), page.begin(), page.end());
    }
    key.resize(len);
    history_.push_back(key);
    if (history_.size() > 64) history_.erase(history_.begin());
    return key;
  }

  // An eviction happened between `before` and now: check the rules, adopt.
  void judge_eviction(int64_t asked, bool alloc_failed) {
    auto now = cached_prefixes(cache_->snapshot());
    size_t removed = 0;
    bool removed_pinned = false;
    for (const auto& [p, page] : o_.cached) {
      if (now.count(p)) {
        ASSERT_EQ(now.at(p), page) << "a surviving prefix changed page";
        continue;
      }
      ++removed;
      ASSERT_FALSE(o_.locked(p)) << "a locked prefix was evicted";
      removed_pinned |= o_.pinned(p);
    }
    ASSERT_EQ(now.size(), o_.cached.size() - removed) << "eviction added prefixes";
    // Hash evicts inner blocks too: their cached children become unreachable
    // without being evicted, and orphans are evicted without being reachable,
    // so there the evicted tokens are the blocks that went away.
    const int64_t evicted = policy_ == CachePolicy::hash
                                ? (nodes_before_ - cache_->node_count()) * int64_t(o_.ps)
                                : int64_t(removed * o_.ps);
    EXPECT_EQ(cache_->stats().evicted_tokens - evicted_before_, uint64_t(evicted));
    bool unlocked_left = false, unpinned_left = false;
    for (const auto& [p, page] : now) {
      unlocked_left |= !o_.locked(p);
      unpinned_left |= !o_.locked(p) && !o_.pinned(p);
    }
    if (removed_pinned) {
      EXPECT_FALSE(unpinned_left) << "pinned evicted while others were left";
    }
    if (evicted < asked || alloc_failed) {
      EXPECT_FALSE(unlocked_left) << "stopped early";
    }
    if (removed_pinned) ++pinned_evictions_;
    if (alloc_failed) ++no_pages_;
    o_.cached = std::move(now);
  }

  // alloc_pages with the same checks; returns the status.
  Status alloc(int64_t n, std::vector<PageId>& out) {
    const int64_t free_before = cache_->free_page_count();
    evicted_before_ = cache_->stats().evicted_tokens;
    nodes_before_ = cache_->node_count();
    Status s = cache_->alloc_pages(n, out);
    const int64_t shortfall = std::max<int64_t>(0, n - free_before) * int64_t(o_.ps);
    judge_eviction(shortfall, !s.ok());
    if (s.ok()) {
      held_ += n;
    } else {
      EXPECT_EQ(s.code(), StatusCode::no_pages);
    }
    return s;
  }

  void check_match(const std::vector<Token>& key, const MatchResult& m) {
    const size_t want = reuse_ ? o_.match_len(key) : 0;
    ASSERT_EQ(size_t(m.tokens), want);
    EXPECT_EQ(m.pages, o_.pages_of(key, want));
  }

  // Insert `table` (aligned) for key and check every prediction.
  InsertResult insert(const std::vector<Token>& key, std::vector<PageId>& table,
                      size_t matched_pages) {
    const size_t aligned = key.size() / o_.ps * o_.ps;
    const size_t np = aligned / o_.ps;
    const size_t cached =
        o_.match_len(std::vector<Token>(key.begin(), key.begin() + ptrdiff_t(aligned)));
    std::vector<PageId> want = o_.pages_of(key, cached);
    for (size_t i = want.size(); i < np; ++i) want.push_back(table[i]);
    auto r = cache_->insert(std::span(key.data(), aligned), std::span(table.data(), np));
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (!r.ok()) return {};
    EXPECT_EQ(size_t(r->cached_tokens), cached);
    EXPECT_EQ(r->pages, want);
    held_ -= int64_t(np - matched_pages);  // duplicates were freed, the rest is the tree's
    for (size_t l = o_.ps, i = 0; l <= aligned; l += o_.ps, ++i)
      o_.cached[Oracle::head(key, l)] = want[i];
    if (table.size() > np) {
      EXPECT_TRUE(cache_->free_pages(std::span(table).subspan(np)).ok());
      held_ -= int64_t(table.size() - np);
    }
    return std::move(r).value();
  }

  void request() {
    std::vector<Token> key = random_key();
    // peek_prefix predicts match_prefix without touching anything (replay
    // and the snapshot comparison in verify() would see any change).
    ASSERT_EQ(size_t(cache_->peek_prefix(key)), reuse_ ? o_.match_len(key) : 0);
    MatchResult m = cache_->match_prefix(key);
    check_match(key, m);
    ASSERT_TRUE(cache_->lock(m.node).ok());
    o_.add_ref(o_.locks, key, size_t(m.tokens), +1);
    std::vector<PageId> table = m.pages;
    const int64_t need = (int64_t(key.size()) - m.tokens + int64_t(o_.ps) - 1) / int64_t(o_.ps);
    if (alloc(need, table).ok()) {
      InsertResult r = insert(key, table, m.pages.size());
      if (pick(4) == 0 && active_.size() < 4) {  // still running: keep the prefix locked
        ASSERT_TRUE(cache_->lock(r.node).ok());
        const size_t aligned = key.size() / o_.ps * o_.ps;
        o_.add_ref(o_.locks, key, aligned, +1);
        active_.push_back({key, aligned, r.node});
      }
    }
    ASSERT_TRUE(cache_->unlock(m.node).ok());
    o_.add_ref(o_.locks, key, size_t(m.tokens), -1);
  }

  // Two requests compute the same suffix at once; the second insert must
  // free its copies and return the first one's pages.
  void concurrent_pair() {
    std::vector<Token> key = random_key();
    MatchResult a = cache_->match_prefix(key);
    MatchResult b = cache_->match_prefix(key);
    check_match(key, b);
    ASSERT_TRUE(cache_->lock(a.node).ok());
    o_.add_ref(o_.locks, key, size_t(a.tokens), +1);
    const int64_t need = (int64_t(key.size()) - a.tokens + int64_t(o_.ps) - 1) / int64_t(o_.ps);
    std::vector<PageId> ta = a.pages, tb = b.pages;
    if (alloc(need, ta).ok()) {
      if (alloc(need, tb).ok()) {
        insert(key, ta, a.pages.size());
        insert(key, tb, b.pages.size());
      } else {
        insert(key, ta, a.pages.size());
      }
    }
    ASSERT_TRUE(cache_->unlock(a.node).ok());
    o_.add_ref(o_.locks, key, size_t(a.tokens), -1);
  }

  // A verified draft: what the cache holds after `key` (radix only), some of
  // it kept; its event names the node it came from, or none.
  void draft(const std::vector<Token>& key) {
    const Continuation c = cache_->peek_continuation(key, 1 + pick(8));
    EXPECT_EQ(c.tokens.empty(), c.node.id == kNoNode);
    const int64_t n = c.tokens.empty() ? int64_t(1 + pick(4)) : int64_t(c.tokens.size());
    cache_->note_draft(pick(5) == 0 ? stale_ : c.node, n, int64_t(pick(size_t(n) + 1)));
    if (!c.tokens.empty()) stale_ = c.node;
  }

  void step() {
    evicted_before_ = cache_->stats().evicted_tokens;
    nodes_before_ = cache_->node_count();
    const size_t op = pick(100);
    if (op < 40) return request();
    if (op < 48) return concurrent_pair();
    if (op < 58) {
      std::vector<Token> key = random_key();
      if (op >= 55) return draft(key);
      return check_match(key, cache_->match_prefix(key));
    }
    if (op < 72) {
      if (active_.empty()) return;
      size_t i = pick(active_.size());
      ASSERT_TRUE(cache_->unlock(active_[i].node).ok());
      o_.add_ref(o_.locks, active_[i].key, active_[i].len, -1);
      active_.erase(active_.begin() + ptrdiff_t(i));
      return;
    }
    if (op < 80) {
      const int64_t n = int64_t(pick(40));
      const int64_t got = cache_->evict(n);
      judge_eviction(n, false);
      EXPECT_EQ(uint64_t(got), cache_->stats().evicted_tokens - evicted_before_);
      return;
    }
    if (op < 84) {  // pin a cached prefix (a saved system prompt)
      std::vector<Token> key = random_key();
      MatchResult m = cache_->match_prefix(key);
      check_match(key, m);
      if (m.tokens == 0) return;
      ASSERT_TRUE(cache_->pin(m.node).ok());
      o_.add_ref(o_.pins, key, size_t(m.tokens), +1);
      pinned_.push_back({key, size_t(m.tokens), m.node});
      return;
    }
    if (op < 88) {
      if (pinned_.empty()) return;
      size_t i = pick(pinned_.size());
      Status s = cache_->unpin(pinned_[i].node);
      // The node may be gone (pinned nodes are evicted last, not never).
      if (s.ok()) {
        o_.add_ref(o_.pins, pinned_[i].key, pinned_[i].len, -1);
      } else {
        EXPECT_EQ(s.code(), StatusCode::invalid_argument);
      }
      pinned_.erase(pinned_.begin() + ptrdiff_t(i));
      return;
    }
    if (op < 94) {  // a caller holds pages for a while
      std::vector<PageId> pages;
      if (alloc(int64_t(1 + pick(3)), pages).ok()) held_lists_.push_back(pages);
      return;
    }
    if (op < 99) {
      if (held_lists_.empty()) return;
      size_t i = pick(held_lists_.size());
      ASSERT_TRUE(cache_->free_pages(held_lists_[i]).ok());
      held_ -= int64_t(held_lists_[i].size());
      held_lists_.erase(held_lists_.begin() + ptrdiff_t(i));
      return;
    }
    Status s = cache_->reset();
    if (o_.locks.empty()) {
      ASSERT_TRUE(s.ok()) << s.to_string();
      o_.cached.clear();
      o_.pins.clear();
      pinned_.clear();
    } else {
      EXPECT_EQ(s.code(), StatusCode::invalid_argument);
    }
  }

  void verify() {
    Status s = cache_->check_integrity();
    ASSERT_TRUE(s.ok()) << s.to_string();
    CacheSnapshot snap = cache_->snapshot();
    ASSERT_EQ(cached_prefixes(snap), o_.cached);
    EXPECT_EQ(snap.stats.held_pages, held_);
    // Pins on evicted prefixes vanish with them.
    for (auto it = o_.pins.begin(); it != o_.pins.end();)
      it = o_.cached.count(it->first) ? std::next(it) : o_.pins.erase(it);
    std::vector<CacheEvent> events;
    EXPECT_FALSE(cache_->events().drain(events)) << "queue overflowed";
    for (const CacheEvent& e : events) {
      replay_.apply(e);
      if (::testing::Test::HasFatalFailure()) return;
    }
    replay_.expect_equal(snap, policy_ != CachePolicy::hash);
  }

  std::mt19937 rng_;
  CachePolicy policy_;
  bool reuse_;  // off: the tree is kept (and deduplicated) but never matched
  std::unique_ptr<KvCache> cache_;
  Oracle o_;
  Replayer replay_;
  std::vector<std::vector<Token>> history_;
  std::vector<Active> active_, pinned_;
  NodeHandle stale_{kNoNode, 0};  // an earlier draft's node, maybe gone by now
  std::vector<std::vector<PageId>> held_lists_;
  int64_t held_ = 0;
  uint64_t evicted_before_ = 0;
  int64_t nodes_before_ = 0;
  int pinned_evictions_ = 0;
  int no_pages_ = 0;
};

// A policy and, for the radix tree, its eviction order (the oracle checks
// the rules every eviction obeys, not which leaf goes).
struct FuzzPolicy {
  CachePolicy policy;
  Eviction eviction = Eviction::lru;
};
void PrintTo(const FuzzPolicy& p, std::ostream* os) {
  *os << cache_policy_name(p.policy) << (p.eviction == Eviction::gdsf ? " gdsf" : "");
}

// Four seeds per page size (the last one without merging), 5000 steps each.
class CacheFuzz : public ::testing::TestWithParam<FuzzPolicy> {
 protected:
  void run_all(int64_t steps, int seeds) {
    const FuzzPolicy p = GetParam();
    const struct {
      int ps;
      int64_t pages;
      uint32_t seed;
    } cfgs[] = {{1, 48, 1}, {2, 24, 11}, {16, 24, 21}};
    for (const auto& c : cfgs)
      for (int i = 0; i < seeds; ++i)
        Fuzz(p.policy, p.eviction, c.ps, c.pages, c.seed + uint32_t(i),
             seeds == 1 || i != seeds - 1)
            .run(steps);
  }
};

TEST_P(CacheFuzz, AgainstTheOracle) { run_all(5000, 4); }

class CacheFuzzLong : public CacheFuzz {};

// The full-length run, outside the suite: RADIXCHAT_CACHE_FUZZ_STEPS steps
// per page size (one seed each, with merging), so 3 x N per policy.
TEST_P(CacheFuzzLong, AgainstTheOracle) {
  const char* env = std::getenv("RADIXCHAT_CACHE_FUZZ_STEPS");
  if (!env || !*env) GTEST_SKIP() << "set RADIXCHAT_CACHE_FUZZ_STEPS to run";
  run_all(std::strtoll(env, nullptr, 10), 1);
}

const FuzzPolicy kFuzzPolicies[] = {{CachePolicy::radix},
                                    {CachePolicy::radix, Eviction::gdsf},
                                    {CachePolicy::hash},
                                    {CachePolicy::off}};
auto policy_name = [](const auto& info) {
  return std::string(cache_policy_name(info.param.policy)) +
         (info.param.eviction == Eviction::gdsf ? "_gdsf" : "");
};
INSTANTIATE_TEST_SUITE_P(Policies, CacheFuzz, ::testing::ValuesIn(kFuzzPolicies), policy_name);
INSTANTIATE_TEST_SUITE_P(Policies, CacheFuzzLong, ::testing::ValuesIn(kFuzzPolicies), policy_name);

}  // namespace
}  // namespace rc::test
