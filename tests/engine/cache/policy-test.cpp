// The hash-block and off caches, and all three policies through the one
// KvCache interface.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "cache-oracle.h"
#include "cache-test-util.h"

namespace rc::test {
namespace {

void expect_ok(const KvCache& c) {
  Status s = c.check_integrity();
  EXPECT_TRUE(s.ok()) << s.to_string();
}

TEST(HashCache, MatchesWholeBlocksOfEarlierRequests) {
  auto c = make_cache(CachePolicy::hash, 4, 64);
  Request a = run_request(*c, chars("abcdefghij"));  // 2 full blocks + tail
  EXPECT_EQ(a.insert.cached_tokens, 0);
  EXPECT_EQ(c->node_count(), 2);
  MatchResult m = c->match_prefix(chars("abcdefgXij"));
  EXPECT_EQ(m.tokens, 4);
  EXPECT_EQ(m.pages, std::vector<PageId>{a.insert.pages[0]});
  EXPECT_EQ(c->match_prefix(chars("abcdefghij")).tokens, 8);
  EXPECT_EQ(c->match_prefix(chars("Xbcdefgh")).tokens, 0) << "a block is keyed by its parent too";
  expect_ok(*c);
}

TEST(HashCache, SecondInsertFreesDuplicates) {
  auto c = make_cache(CachePolicy::hash, 2, 16);
  std::vector<PageId> p1, p2;
  ASSERT_TRUE(c->alloc_pages(2, p1).ok());
  ASSERT_TRUE(c->alloc_pages(2, p2).ok());
  ASSERT_TRUE(c->insert(chars("abcd"), p1).ok());
  auto r = c->insert(chars("abcd"), p2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cached_tokens, 4);
  EXPECT_EQ(r->pages, p1);
  EXPECT_EQ(c->free_page_count(), 14);
  expect_ok(*c);
}

TEST(HashCache, EvictsLeastRecentTailBlocksFirstAndKeepsLockedOnes) {
  auto c = make_cache(CachePolicy::hash, 2, 16);
  run_request(*c, chars("aabbcc"));
  Request b = run_request(*c, chars("xxyy"), /*keep_lock=*/true);
  run_request(*c, chars("aabbdd"));  // aa, bb used again; cc is the oldest
  EXPECT_EQ(c->evict(2), 2);
  EXPECT_EQ(c->match_prefix(chars("aabbcc")).tokens, 4) << "cc went first";
  EXPECT_EQ(c->evict(100), 6) << "dd, then bb, then aa; xx yy are locked";
  EXPECT_EQ(c->match_prefix(chars("xxyy")).tokens, 4);
  ASSERT_TRUE(c->unlock(b.insert.node).ok());
  expect_ok(*c);
}

TEST(HashCache, FullPoolWithEverythingLockedReturnsNoPages) {
  auto c = make_cache(CachePolicy::hash, 16, 4);
  Request a = run_request(*c, std::vector<Token>(64, 3), /*keep_lock=*/true);
  ASSERT_TRUE(a.status.ok());
  std::vector<PageId> out;
  EXPECT_EQ(c->alloc_pages(1, out).code(), StatusCode::no_pages);
  expect_ok(*c);
}

TEST(HashCache, PinnedBlocksGoLast) {
  auto c = make_cache(CachePolicy::hash, 2, 16);
  Request sys = run_request(*c, chars("SSYY"));
  ASSERT_TRUE(c->pin(sys.insert.node).ok());
  run_request(*c, chars("aabb"));
  EXPECT_EQ(c->evict(4), 4);
  EXPECT_EQ(c->match_prefix(chars("SSYY")).tokens, 4);
  EXPECT_EQ(c->evict(4), 4);
  EXPECT_EQ(c->node_count(), 0);
  expect_ok(*c);
}

TEST(OffCache, NeverReusesButKeepsTheProtocolWorking) {
  auto c = make_cache(CachePolicy::off, 1, 16);
  for (int i = 0; i < 10; ++i) {
    Request r = run_request(*c, chars("same prompt"));
    ASSERT_TRUE(r.status.ok()) << r.status.to_string();
    EXPECT_EQ(r.match.tokens, 0);
    expect_ok(*c);
  }
  EXPECT_EQ(c->stats().hit_tokens, 0u);
  Request locked = run_request(*c, chars("0123456789abcdef"), /*keep_lock=*/true);
  ASSERT_TRUE(locked.status.ok());
  EXPECT_EQ(run_request(*c, chars("x")).status.code(), StatusCode::no_pages);
  expect_ok(*c);
}

// Every policy, same interface, random requests under memory pressure and
// with some requests kept locked: every invariant holds after every step.
class AnyPolicy : public ::testing::TestWithParam<std::tuple<CachePolicy, int>> {};

TEST_P(AnyPolicy, RandomRequestsKeepInvariants) {
  auto [policy, ps] = GetParam();
  auto c = make_cache(policy, ps, 256 / ps);
  std::mt19937 rng(7);
  std::vector<std::vector<Token>> keys;
  std::vector<NodeHandle> locked;
  for (int step = 0; step < 1500; ++step) {
    std::vector<Token> key;
    if (!keys.empty() && rng() % 4 != 0) {
      key = keys[rng() % keys.size()];
      key.resize(rng() % (key.size() + 1));
    }
    size_t len = key.size() + 1 + rng() % 48;
    while (key.size() < len) key.push_back(Token(rng() % 2));
    keys.push_back(key);
    const int64_t peeked = c->peek_prefix(key);
    MatchResult m = c->match_prefix(key);
    ASSERT_EQ(m.tokens, peeked);
    ASSERT_EQ(m.tokens % ps, 0);
    ASSERT_EQ(m.pages.size(), size_t(m.tokens / ps));
    if (policy == CachePolicy::off) {
      ASSERT_EQ(m.tokens, 0);
    }
    ASSERT_TRUE(c->lock(m.node).ok());
    std::vector<PageId> table = m.pages;
    int64_t need = (int64_t(key.size()) - m.tokens + ps - 1) / ps;
    if (c->alloc_pages(need, table).ok()) {
      size_t aligned = key.size() / size_t(ps) * size_t(ps);
      auto r = c->insert(std::span(key.data(), aligned), std::span(table.data(), aligned / ps));
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      ASSERT_TRUE(c->free_pages(std::span(table).subspan(aligned / ps)).ok());
      if (rng() % 5 == 0) {
        ASSERT_TRUE(c->lock(r->node).ok());
        locked.push_back(r->node);
      }
    }
    ASSERT_TRUE(c->unlock(m.node).ok());
    if (locked.size() > 3 || (!locked.empty() && rng() % 3 == 0)) {
      ASSERT_TRUE(c->unlock(locked.front()).ok());
      locked.erase(locked.begin());
    }
    if (rng() % 10 == 0) c->evict(int64_t(rng() % 64));
    Status s = c->check_integrity();
    ASSERT_TRUE(s.ok()) << s.to_string() << " at step " << step;
    CacheStats st = c->stats();
    ASSERT_EQ(st.free_pages + st.evictable_pages + st.protected_pages, st.total_pages);
  }
  CacheStats st = c->stats();
  EXPECT_GT(st.evictions, 0u);
  if (policy != CachePolicy::off) {
    EXPECT_GT(st.hit_tokens, 0u);
  }
  std::vector<CacheEvent> events;
  c->events().drain(events);
  EXPECT_FALSE(events.empty());
}

INSTANTIATE_TEST_SUITE_P(Policies, AnyPolicy,
                         ::testing::Combine(::testing::Values(CachePolicy::radix, CachePolicy::hash,
                                                              CachePolicy::off),
                                            ::testing::Values(1, 16)),
                         [](const auto& info) {
                           return std::string(cache_policy_name(std::get<0>(info.param))) +
                                  "_page" + std::to_string(std::get<1>(info.param));
                         });

TEST(EventQueue, OverflowIsReportedAndResyncWorks) {
  CacheConfig cfg;
  cfg.total_pages = 256;
  cfg.event_capacity = 8;
  auto c = std::move(make_kv_cache(cfg)).value();
  for (int i = 0; i < 10; ++i) run_request(*c, chars("req " + std::to_string(i)));
  std::vector<CacheEvent> events;
  EXPECT_TRUE(c->events().drain(events)) << "overflow must be reported";
  EXPECT_EQ(events.size(), 8u);
  // Resync: a snapshot, then events from its next_seq on replay exactly.
  Replayer r;
  r.start(c->snapshot());
  run_request(*c, chars("req 3 again"));
  events.clear();
  EXPECT_FALSE(c->events().drain(events));
  for (const CacheEvent& e : events) r.apply(e);
  r.expect_equal(c->snapshot());
}

TEST(EventQueue, DrainsFromAnotherThread) {
  CacheConfig cfg;
  cfg.total_pages = 4096;
  auto c = std::move(make_kv_cache(cfg)).value();
  std::atomic<bool> done{false};
  size_t seen = 0;
  std::thread viewer([&] {
    std::vector<CacheEvent> ev;
    while (!done.load()) {
      c->events().drain(ev);
      seen += ev.size();
      ev.clear();
    }
    c->events().drain(ev);
    seen += ev.size();
  });
  uint64_t emitted = 0;
  for (int i = 0; i < 500; ++i) {
    run_request(*c, chars("conversation " + std::to_string(i % 37) + " turn " + std::to_string(i)));
    if (i % 50 == 0) c->evict(100);
  }
  emitted = c->snapshot().next_seq;
  done = true;
  viewer.join();
  EXPECT_EQ(seen, emitted);
}

}  // namespace
}  // namespace rc::test
