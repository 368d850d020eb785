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

  // Candidates sorted by logit (descending), then truncated by top-k.
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  int keep = n;
  if (params_.top_k > 0 && params_.top_k < n) keep = params_.top_k;
  auto by_logit = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::partial_sort(order_.begin(), order_.begin() + keep, order_.end(), by_logit);
  // Tokens masked to -inf (structured output) are never candidates, even
  // when top-k would keep more than are left.
  while (keep > 1 && std::isinf(logits[order_[keep - 1]]) && logits[order_[keep - 1]] < 0) --keep;
  order_.resize(keep);

  // Softmax with temperature over the candidates.
  probs_.resize(keep);
  const float top = logits[order_[0]];
  double sum = 0;
  for (int i = 0; i < keep; ++i) {
    probs_[i] = std::exp((logits[order_[i]] - top) / params_.temperature);
    sum += probs_[i];
  }
  for (float& p : probs_) p = static_cast<float>(p / sum);

  // min-p: drop tokens much less likely than the best one.
  if (params_.min_p > 0.0f) {
    const float floor = params_.min_p * probs_[0];
    int k = 1;
    while (k < keep && probs_[k] >= floor) ++k;
    keep = k;
  }
  // top-p: the smallest prefix whose mass reaches top_p.
  if (params_.top_p < 1.0f) {
    double mass = 0;
    int k = 0;
    while (k < keep) {
      mass += probs_[k++];
      if (mass >= params_.top_p) break;
    }
    keep = std::max(k, 1);
  }

  double total = 0;
  for (int i = 0; i < keep; ++i) total += probs_[i];
  double r = next_uniform() * total;
  for (int i = 0; i < keep; ++i) {
    r -= probs_[i];
    if (r < 0) return order_[i];
  }
  return order_[keep - 1];
}

}  // namespace rc::runtime
