// Turns a row of logits into a token id. Seeded and reproducible: the RNG
// is a SplitMix64 stream whose draws are mapped to doubles by hand, so the
// same seed gives the same tokens with any standard library.
//
// Threading: one Sampler per request; not shared between threads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "radixchat/sampling.h"

namespace rc::runtime {

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // `history` holds the tokens the repetition penalty looks at (prompt and
  // output so far). `logits` is modified in place (penalty, temperature).
  int32_t sample(std::span<float> logits, std::span<const int32_t> history);

  const SamplingParams& params() const { return params_; }

 private:
  double next_uniform();  // in [0, 1)
  // How long a prefix of the sorted candidates min-p's and top-p's cuts can
  // reach, from weights_ (every token's exp((logit - max) / T)) and their sum.
  int cut_bound(double sum) const;

  SamplingParams params_;
  uint64_t rng_state_;
  std::vector<int32_t> order_;  // candidate ids, reused between calls
  std::vector<float> probs_;
  std::vector<float> weights_;  // every token's weight, when no top-k bounds the sort
};

// Index of the largest logit, lowest index on ties.
int32_t argmax(std::span<const float> logits);

}  // namespace rc::runtime
