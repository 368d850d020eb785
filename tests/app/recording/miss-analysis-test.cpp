// explain_miss on hand-built trees, where the answer is known by
// construction (the oracle is the test's own arithmetic).
#include <gtest/gtest.h>

#include "recording/miss-analysis.h"

namespace rc::recording {
namespace {

std::vector<int32_t> range(int32_t from, int n) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(from + i);
  return v;
}

CacheSnapshot tree_of(
    const std::vector<std::pair<NodeId, std::vector<int32_t>>>& children_of_root,
    const std::vector<std::tuple<NodeId, NodeId, std::vector<int32_t>>>& deeper = {}) {
  CacheSnapshot s;
  s.nodes.push_back(CacheNodeInfo{});
  for (const auto& [id, t] : children_of_root) {
    CacheNodeInfo n;
    n.id = id;
    n.parent = kRootNode;
    n.tokens = t;
    s.nodes.push_back(n);
  }
  for (const auto& [id, parent, t] : deeper) {
    CacheNodeInfo n;
    n.id = id;
    n.parent = parent;
    n.tokens = t;
    s.nodes.push_back(n);
  }
  return s;
}

TEST(MissAnalysis, ASpanInsideAPathRealignsAfterIt) {
  // Cached: 0..19, then span {900, 901, 902}, then 100..149.
  std::vector<int32_t> cached = range(0, 20);
  for (int32_t t : {900, 901, 902}) cached.push_back(t);
  const auto tail = range(100, 50);
  cached.insert(cached.end(), tail.begin(), tail.end());
  const CacheSnapshot tree = tree_of({{1, cached}});
  // The prompt has a 2-token span instead, then the same 50 tokens and 5 new.
  std::vector<int32_t> prompt = range(0, 20);
  for (int32_t t : {700, 701}) prompt.push_back(t);
  prompt.insert(prompt.end(), tail.begin(), tail.end());
  for (int32_t t : range(5000, 5)) prompt.push_back(t);
  const MissExplanation x = explain_miss(tree, prompt);
  EXPECT_EQ(x.divergence, 20);
  ASSERT_TRUE(x.realigned);
  EXPECT_EQ(x.prompt_span, (std::vector<int32_t>{700, 701}));
  EXPECT_EQ(x.cached_span, (std::vector<int32_t>{900, 901, 902}));
  EXPECT_EQ(x.run_after, 50);
  EXPECT_EQ(x.would_reuse, 20 + 2 + 50);
}

TEST(MissAnalysis, PicksTheContinuationThatAgreesLongest) {
  // Root -> shared 0..9 -> two branches; the second agrees longer after a span.
  const CacheSnapshot tree = tree_of({{1, range(0, 10)}}, {{2, 1,
                                                            [] {
                                                              auto v = std::vector<int32_t>{800};
                                                              auto t = range(100, 8);
                                                              v.insert(v.end(), t.begin(), t.end());
                                                              return v;
                                                            }()},
                                                           {3, 1, [] {
                                                              auto v = std::vector<int32_t>{801};
                                                              auto t = range(100, 30);
                                                              v.insert(v.end(), t.begin(), t.end());
                                                              return v;
                                                            }()}});
  std::vector<int32_t> prompt = range(0, 10);
  prompt.push_back(999);
  const auto t = range(100, 30);
  prompt.insert(prompt.end(), t.begin(), t.end());
  const MissExplanation x = explain_miss(tree, prompt);
  EXPECT_EQ(x.divergence, 10);
  ASSERT_TRUE(x.realigned);
  EXPECT_EQ(x.cached_span, (std::vector<int32_t>{801}));
  EXPECT_EQ(x.run_after, 30);
  EXPECT_EQ(x.would_reuse, int64_t(prompt.size()));
}

TEST(MissAnalysis, NewContentIsNotRealigned) {
  const CacheSnapshot tree = tree_of({{1, range(0, 40)}});
  std::vector<int32_t> prompt = range(0, 12);
  const auto fresh = range(3000, 30);
  prompt.insert(prompt.end(), fresh.begin(), fresh.end());
  const MissExplanation x = explain_miss(tree, prompt);
  EXPECT_EQ(x.divergence, 12);
  EXPECT_FALSE(x.realigned);
  EXPECT_EQ(x.would_reuse, 12);
  // An empty tree: diverges at 0.
  EXPECT_EQ(explain_miss(tree_of({}), prompt).divergence, 0);
}

// A chat: system prompt, then a user turn, then the template's closing
// (end of turn, assistant header: 5 tokens) and, cached, the reply. A new
// question shares only the closing with the cached one: nothing of what the
// user wrote agrees again, so it is not counted as reusable.
TEST(MissAnalysis, OnlyTheTemplatesClosingTokensAgreeing) {
  const auto system = range(0, 20);
  const std::vector<int32_t> closing = {90, 91, 92, 93, 94};
  std::vector<int32_t> cached = system;
  for (int32_t t : range(500, 13)) cached.push_back(t);  // the old question
  cached.insert(cached.end(), closing.begin(), closing.end());
  for (int32_t t : range(800, 30)) cached.push_back(t);  // its reply
  const CacheSnapshot tree = tree_of({{1, cached}});
  std::vector<int32_t> prompt = system;
  for (int32_t t : range(600, 13)) prompt.push_back(t);  // a new question
  prompt.insert(prompt.end(), closing.begin(), closing.end());

  MissOptions o;
  o.closing_tokens = int(closing.size());
  const MissExplanation x = explain_miss(tree, prompt, o);
  EXPECT_EQ(x.divergence, 20);
  EXPECT_FALSE(x.realigned) << "then " << x.run_after << " tokens agree again";
  EXPECT_EQ(x.run_after, 0);
  EXPECT_EQ(x.would_reuse, 20);
  // Without knowing the template, the closing looks like agreement: the
  // miscount this option exists for.
  const MissExplanation blind = explain_miss(tree, prompt);
  EXPECT_TRUE(blind.realigned);
  EXPECT_EQ(blind.run_after, 5);
  EXPECT_EQ(blind.would_reuse, int64_t(prompt.size()));

  // One more token of the user's text agreeing before the closing is real
  // agreement and counts.
  std::vector<int32_t> cached2 = system;
  for (int32_t t : {700, 701, 702, 42}) cached2.push_back(t);
  cached2.insert(cached2.end(), closing.begin(), closing.end());
  std::vector<int32_t> prompt2 = system;
  for (int32_t t : {600, 601, 42}) prompt2.push_back(t);
  prompt2.insert(prompt2.end(), closing.begin(), closing.end());
  const MissExplanation y = explain_miss(tree_of({{1, cached2}}), prompt2, o);
  ASSERT_TRUE(y.realigned);
  EXPECT_EQ(y.run_after, 6);
  EXPECT_EQ(y.would_reuse, int64_t(prompt2.size()));
}

}  // namespace
}  // namespace rc::recording
