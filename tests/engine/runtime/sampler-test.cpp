#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "runtime/sampler.h"

namespace rc::runtime {

namespace {
std::vector<float> peaked() { return {0.1f, 2.0f, 1.5f, -1.0f, 1.9f, 0.0f}; }
}  // namespace

TEST(Sampler, GreedyIsArgmaxWithLowestIndexOnTies) {
  Sampler s(SamplingParams{});
  std::vector<float> l = peaked();
  EXPECT_EQ(s.sample(l, {}), 1);
  std::vector<float> tie = {3.0f, 1.0f, 3.0f};
  EXPECT_EQ(s.sample(tie, {}), 0);
}

TEST(Sampler, SameSeedSameTokens) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 42;
  Sampler a(p), b(p);
  for (int i = 0; i < 200; ++i) {
    std::vector<float> la = peaked(), lb = peaked();
    ASSERT_EQ(a.sample(la, {}), b.sample(lb, {}));
  }
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  SamplingParams k1;
  k1.temperature = 5.0f;
  k1.top_k = 1;
  SamplingParams p0;
  p0.temperature = 5.0f;
  p0.top_p = 1e-6f;
  Sampler a(k1), b(p0);
  for (int i = 0; i < 50; ++i) {
    std::vector<float> l1 = peaked(), l2 = peaked();
    EXPECT_EQ(a.sample(l1, {}), 1);
    EXPECT_EQ(b.sample(l2, {}), 1);
  }
}

TEST(Sampler, TopKRestrictsSupport) {
  SamplingParams p;
  p.temperature = 10.0f;
  p.top_k = 3;
  p.seed = 7;
  Sampler s(p);
  std::map<int, int> seen;
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> l = peaked();
    seen[s.sample(l, {})]++;
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen.count(1) && seen.count(2) && seen.count(4));
}

TEST(Sampler, FrequenciesFollowSoftmax) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 3;
  Sampler s(p);
  std::vector<int> count(2, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    std::vector<float> l = {0.0f, std::log(3.0f)};  // p = 0.25, 0.75
    count[s.sample(l, {})]++;
  }
  EXPECT_NEAR(count[1] / double(n), 0.75, 0.015);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.min_p = 0.5f;
  p.seed = 11;
  Sampler s(p);
  for (int i = 0; i < 500; ++i) {
    std::vector<float> l = {5.0f, 0.0f, 4.9f, -3.0f};
    const int t = s.sample(l, {});
    EXPECT_TRUE(t == 0 || t == 2);
  }
}

TEST(Sampler, RepetitionPenaltyDemotesSeenTokens) {
  SamplingParams p;
  p.repetition_penalty = 2.0f;
  Sampler s(p);
  std::vector<float> l = {1.0f, 1.5f, 0.2f};
  const std::vector<int32_t> history = {1};
  EXPECT_EQ(s.sample(l, history), 0);  // 1.5 / 2 = 0.75 < 1.0
}

}  // namespace rc::runtime
