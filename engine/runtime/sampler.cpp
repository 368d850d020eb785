#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

namespace rc::runtime {

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  return best;
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), rng_state_(params.seed ^ 0x9E3779B97F4A7C15ull) {}

double Sampler::next_uniform() {
  // SplitMix64: tiny, fast, and fully specified.
  uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

int32_t Sampler::sample(std::span<float> logits, std::span<const int32_t> history) {
  const int n = static_cast<int>(logits.size());
  if (params_.repetition_penalty != 1.0f && params_.repeat_last_n > 0) {
    const size_t from = history.size() > static_cast<size_t>(params_.repeat_last_n)
                            ? history.size() - params_.repeat_last_n
                            : 0;
    std::unordered_set<int32_t> seen(history.begin() + from, history.end());
    for (int32_t t : seen) {
      if (t < 0 || t >= n) continue;
      float& l = logits[t];
      l = l > 0 ? l / params_.repetition_penalty : l * params_.repetition_penalty;
    }
  }
  if (params_.temperature <= 0.0f) return argmax(logits);

  const float top = logits[size_t(argmax(logits))];
  auto weight = [&](int32_t t) {
    return std::exp((logits[size_t(t)] - top) / params_.temperature);
  };
  const bool top_k = params_.top_k > 0 && params_.top_k < n;
  if (!top_k && params_.top_p >= 1.0f && params_.min_p <= 0.0f) {
    // Nothing truncates: every token is a candidate and no order is needed.
    // Tokens masked to -inf (structured output) weigh nothing.
    probs_.resize(size_t(n));
    double sum = 0;
    int32_t last = 0;
    for (int32_t t = 0; t < n; ++t) {
      probs_[size_t(t)] = weight(t);
      sum += probs_[size_t(t)];
      if (probs_[size_t(t)] > 0) last = t;
    }
    double r = next_uniform() * sum;
    for (int32_t t = 0; t < n; ++t) {
      r -= probs_[size_t(t)];
      if (r < 0 && probs_[size_t(t)] > 0) return t;
    }
    return last;
  }

  // The normalising sum: over the top-k candidates, else over every token.
  order_.resize(size_t(n));
  std::iota(order_.begin(), order_.end(), 0);
  auto by_logit = [&](int32_t a, int32_t b) {
    return logits[size_t(a)] > logits[size_t(b)] ||
           (logits[size_t(a)] == logits[size_t(b)] && a < b);
  };
  const int limit = top_k ? params_.top_k : n;
  double sum = 0;
  int sorted = limit;
  if (!top_k) {
    weights_.resize(size_t(n));
    for (int32_t t = 0; t < n; ++t) sum += weights_[size_t(t)] = weight(t);
    sorted = cut_bound(sum);
  }
  // Only the prefix the cuts can reach is sorted: a 150k-token sort costs
  // tens of milliseconds per token.
  std::nth_element(order_.begin(), order_.begin() + (sorted - 1), order_.end(), by_logit);
  std::sort(order_.begin(), order_.begin() + sorted, by_logit);
  probs_.resize(size_t(sorted));
  for (int i = 0; i < sorted; ++i) {
    const int32_t t = order_[size_t(i)];
    probs_[size_t(i)] = top_k ? weight(t) : weights_[size_t(t)];
  }
  if (top_k) {
    for (float w : probs_) sum += w;
  }
  for (float& p : probs_) p = static_cast<float>(p / sum);
  int keep = sorted;
  // Tokens masked to -inf are never candidates, even when top-k would keep
  // more than are left.
  while (keep > 1 && probs_[size_t(keep) - 1] == 0) --keep;

  // min-p: drop tokens much less likely than the best one.
  if (params_.min_p > 0.0f) {
    const float floor = params_.min_p * probs_[0];
    int k = 1;
    while (k < keep && probs_[size_t(k)] >= floor) ++k;
    keep = k;
  }
  // top-p: the smallest prefix whose mass reaches top_p.
  if (params_.top_p < 1.0f) {
    double mass = 0;
    int k = 0;
    while (k < keep) {
      mass += probs_[size_t(k++)];
      if (mass >= params_.top_p) break;
    }
    keep = std::max(k, 1);
  }

  double total = 0;
  for (int i = 0; i < keep; ++i) total += probs_[size_t(i)];
  double r = next_uniform() * total;
  for (int i = 0; i < keep; ++i) {
    r -= probs_[size_t(i)];
    if (r < 0) return order_[size_t(i)];
  }
  return order_[size_t(keep) - 1];
}

int Sampler::cut_bound(double sum) const {
  const int n = static_cast<int>(weights_.size());
  // Tokens whose weight is at least `th`, and their mass.
  auto above = [&](float th, double* mass) {
    int count = 0;
    double m = 0;
    for (float w : weights_) {
      if (w >= th) {
        ++count;
        m += w;
      }
    }
    if (mass) *mass = m;
    return count;
  };
  int bound = n;
  if (params_.min_p > 0.0f) {
    // Every token min-p keeps weighs at least min_p of the best (weight 1),
    // with a margin for the rounding of the normalised comparison.
    bound = std::min(bound, above(params_.min_p * 0.999f, nullptr));
  }
  if (params_.top_p < 1.0f) {
    // The largest weight threshold whose tokens still reach top_p's mass
    // (with a margin): by bisection over [0, 1], the best token weighing 1.
    const double target = std::min(1.0, double(params_.top_p) + 1e-4) * sum;
    float lo = 0.0f, hi = 1.0f;
    for (int i = 0; i < 40; ++i) {
      const float mid = 0.5f * (lo + hi);
      double mass = 0;
      above(mid, &mass);
      if (mass >= target) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    bound = std::min(bound, above(lo, nullptr));
  }
  return std::max(bound, 1);
}

}  // namespace rc::runtime
