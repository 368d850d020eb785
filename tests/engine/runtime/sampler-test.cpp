#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
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

// The nucleus a full sort gives: top-k, then min-p, then top-p over the
// descending order (lowest id first on ties), as the sampler documents.
std::set<int32_t> reference_nucleus(const std::vector<float>& logits, const SamplingParams& p) {
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  size_t keep = p.top_k > 0 ? std::min<size_t>(p.top_k, order.size()) : order.size();
  std::vector<double> w(keep);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i)
    sum += w[i] = std::exp((logits[order[i]] - logits[order[0]]) / p.temperature);
  size_t k = keep;
  if (p.min_p > 0) {
    k = 1;
    while (k < keep && w[k] >= p.min_p * w[0]) ++k;
  }
  if (p.top_p < 1) {
    double mass = 0;
    size_t j = 0;
    while (j < k) {
      mass += w[j++] / sum;
      if (mass >= p.top_p) break;
    }
    k = j;
  }
  return std::set<int32_t>(order.begin(), order.begin() + long(k));
}

// On an 8,000-token vocabulary, peaked and flat rows, the sampler only ever
// returns tokens of the full sort's nucleus, and with a flat row (a nucleus
// of thousands, past the first sorted prefix) it reaches deep into it.
TEST(Sampler, TruncationMatchesAFullSortOnALargeVocabulary) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float scale : {8.0f, 0.2f}) {
    std::vector<float> row(8000);
    for (float& l : row) l = scale * normal(rng);
    for (float top_p : {0.5f, 0.9f, 1.0f}) {
      for (float min_p : {0.0f, 0.05f}) {
        for (int top_k : {0, 40}) {
          SamplingParams p;
          p.temperature = 0.9f;
          p.top_p = top_p;
          p.min_p = min_p;
          p.top_k = top_k;
          p.seed = 17;
          const std::set<int32_t> nucleus = reference_nucleus(row, p);
          Sampler s(p);
          std::set<int32_t> seen;
          for (int i = 0; i < 150; ++i) {
            std::vector<float> l = row;
            const int32_t t = s.sample(l, {});
            ASSERT_TRUE(nucleus.count(t)) << "scale " << scale << " top_p " << top_p << " min_p "
                                          << min_p << " top_k " << top_k << ": token " << t;
            seen.insert(t);
          }
          if (scale < 1 && top_k == 0 && min_p == 0 && top_p > 0.5f) {
            EXPECT_GT(seen.size(), 100u) << "a flat nucleus is sampled deep";
          }
        }
      }
    }
  }
}

// Without any truncation no order is built; masked tokens still never come out.
TEST(Sampler, MaskedTokensNeverSampledWithoutTruncation) {
  SamplingParams p;
  p.temperature = 1.5f;
  p.seed = 23;
  Sampler s(p);
  const float inf = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> l = {-inf, 0.3f, -inf, 0.1f, -inf};
    const int32_t t = s.sample(l, {});
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

}  // namespace rc::runtime
