// KvCache::forget: what only deleted prompts used leaves the tree, what a
// kept prompt, a request or a pin holds stays. The oracle for the random
// cases is the prompts themselves: after forget, a gone prompt matches no
// further than some kept prompt shares with it, and every kept prompt
// matches exactly as far as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cache-oracle.h"
#include "cache-test-util.h"

namespace rc::test {
namespace {

using Paths = std::vector<std::vector<Token>>;

int64_t forget(KvCache& c, const Paths& gone, const Paths& kept, Paths* dropped = nullptr) {
  Paths out;
  const int64_t n = c.forget(gone, kept, out);
  if (dropped) *dropped = out;
  EXPECT_TRUE(c.check_integrity().ok()) << c.check_integrity().to_string();
  return n;
}

TEST(Forget, TheSharedPrefixStaysTheRestGoes) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("SYSabc"));
  run_request(*c, chars("SYSdef"));
  Paths dropped;
  EXPECT_EQ(forget(*c, {chars("SYSabc")}, {chars("SYSdef")}, &dropped), 3);
  EXPECT_EQ(c->peek_prefix(chars("SYSabc")), 3);
  EXPECT_EQ(c->peek_prefix(chars("SYSdef")), 6);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0], chars("SYSabc"));
}

TEST(Forget, AKeptPromptThatLeavesANodePartwaySplitsIt) {
  // Only the gone prompt was cached; the kept one shares its first three
  // tokens (another conversation's system prompt, now only on disk).
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("SYSabcXYZ"));
  EXPECT_EQ(forget(*c, {chars("SYSabcXYZ")}, {chars("SYSqq")}), 6);
  EXPECT_EQ(c->peek_prefix(chars("SYSabcXYZ")), 3);
  EXPECT_EQ(c->node_count(), 1);
}

TEST(Forget, EverythingBelowAGoneNodeGoesToo) {
  // A regenerated reply extends the deleted prompt: it held that prompt too.
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("SYSabc"));
  run_request(*c, chars("SYSabcR1"));
  run_request(*c, chars("SYSabcR2"));
  run_request(*c, chars("SYSdef"));
  EXPECT_EQ(forget(*c, {chars("SYSabc")}, {chars("SYSdef")}), 6);  // abc, R, 1, 2
  EXPECT_EQ(c->peek_prefix(chars("SYSabcR2")), 3);
  EXPECT_EQ(c->peek_prefix(chars("SYSdef")), 6);
}

TEST(Forget, LockedAndPinnedNodesStay) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  Request running = run_request(*c, chars("RUNabc"), /*keep_lock=*/true);
  Request pinned = run_request(*c, chars("PINabc"));
  ASSERT_TRUE(c->pin(pinned.insert.node).ok());
  EXPECT_EQ(forget(*c, {chars("RUNabc"), chars("PINabc")}, {}), 0);
  EXPECT_EQ(c->peek_prefix(chars("RUNabc")), 6);
  EXPECT_EQ(c->peek_prefix(chars("PINabc")), 6);
  ASSERT_TRUE(c->unlock(running.insert.node).ok());
  EXPECT_EQ(forget(*c, {chars("RUNabc")}, {}), 6);
}

TEST(Forget, EventsReportEachDroppedNode) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("SYSabc"));
  run_request(*c, chars("SYSdef"));
  std::vector<CacheEvent> drained;
  bool lost = false;
  c->events().drain(drained);
  drained.clear();
  forget(*c, {chars("SYSabc")}, {chars("SYSdef")});
  lost = c->events().drain(drained);
  EXPECT_FALSE(lost);
  const auto evicts = std::count_if(drained.begin(), drained.end(), [](const CacheEvent& e) {
    return e.kind == CacheEventKind::evict;
  });
  EXPECT_EQ(evicts, 1);
  EXPECT_EQ(c->stats().evictions, 0u);  // not LRU evictions
}

size_t lcp(const std::vector<Token>& a, const std::vector<Token>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

struct RandomCase {
  CachePolicy policy;
  int page_size;
};

class ForgetRandom : public ::testing::TestWithParam<RandomCase> {};

TEST_P(ForgetRandom, GoneMatchesNoFurtherThanKeptAndKeptIsUntouched) {
  const RandomCase rc = GetParam();
  std::mt19937 rng(77);
  for (int round = 0; round < 60; ++round) {
    auto c = make_cache(rc.policy, rc.page_size, 4096);
    // Prompts over a small alphabet from a few stems, so they share prefixes.
    Paths prompts;
    const int n = 4 + int(rng() % 8);
    for (int i = 0; i < n; ++i) {
      std::vector<Token> p;
      if (!prompts.empty() && rng() % 3 != 0) {
        const auto& base = prompts[rng() % prompts.size()];
        p.assign(base.begin(), base.begin() + long(rng() % (base.size() + 1)));
      }
      const int extra = 1 + int(rng() % 24);
      for (int k = 0; k < extra; ++k) p.push_back(Token(rng() % 4));
      prompts.push_back(p);
      run_request(*c, p);
    }
    Paths gone, kept;
    for (const auto& p : prompts) (rng() % 2 ? gone : kept).push_back(p);
    std::vector<int64_t> kept_before;
    for (const auto& k : kept) kept_before.push_back(c->peek_prefix(k));
    // Event replay from a snapshot reconstructs the tree after forget too.
    std::vector<CacheEvent> events;
    c->events().drain(events);
    Replayer replay;
    replay.start(c->snapshot());
    forget(*c, gone, kept);
    events.clear();
    ASSERT_FALSE(c->events().drain(events));
    for (const CacheEvent& e : events) replay.apply(e);
    if (rc.policy == CachePolicy::radix) replay.expect_equal(c->snapshot(), /*recency=*/false);
    for (size_t i = 0; i < kept.size(); ++i)
      EXPECT_EQ(c->peek_prefix(kept[i]), kept_before[i]) << "round " << round;
    for (const auto& g : gone) {
      size_t shared = 0;
      for (const auto& k : kept) shared = std::max(shared, lcp(g, k));
      shared -= shared % size_t(rc.page_size);
      EXPECT_LE(size_t(c->peek_prefix(g)), shared) << "round " << round;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, ForgetRandom,
                         ::testing::Values(RandomCase{CachePolicy::radix, 1},
                                           RandomCase{CachePolicy::radix, 4},
                                           RandomCase{CachePolicy::hash, 1},
                                           RandomCase{CachePolicy::hash, 4}));

}  // namespace
}  // namespace rc::test
