// Sampling settings of one request (docs/architecture.md section 9).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rc {

struct SamplingParams {
  float temperature = 0.0f;         // <= 0: greedy (argmax)
  int top_k = 0;                    // 0: off
  float top_p = 1.0f;               // 1: off
  float min_p = 0.0f;               // 0: off; keeps tokens with p >= min_p * p_max
  float repetition_penalty = 1.0f;  // 1: off; CTRL-style, on the last `repeat_last_n` tokens
  int repeat_last_n = 64;
  uint64_t seed = 0;  // same seed + same logits -> same tokens, on every platform
};

// The sampling a model's author recommends, from the model file (llama.cpp's
// GGUF keys general.sampling.temp, top_k, top_p, min_p, penalty_repeat and
// penalty_last_n). A key the file does not set, sets with a non-number or sets
// out of range stays empty, and the caller's own default applies. A
// recommended 0 is a real choice (temp 0 is greedy) and is kept.
struct RecommendedSampling {
  std::optional<float> temperature;
  std::optional<int> top_k;
  std::optional<float> top_p;
  std::optional<float> min_p;
  std::optional<float> repetition_penalty;
  std::optional<int> repeat_last_n;

  bool empty() const {
    return !temperature && !top_k && !top_p && !min_p && !repetition_penalty && !repeat_last_n;
  }
  // `base` with each recommended field in place of its own.
  SamplingParams over(SamplingParams base) const {
    base.temperature = temperature.value_or(base.temperature);
    base.top_k = top_k.value_or(base.top_k);
    base.top_p = top_p.value_or(base.top_p);
    base.min_p = min_p.value_or(base.min_p);
    base.repetition_penalty = repetition_penalty.value_or(base.repetition_penalty);
    base.repeat_last_n = repeat_last_n.value_or(base.repeat_last_n);
    return base;
  }
  bool operator==(const RecommendedSampling&) const = default;
};

// "temperature 0.3, top-k 20, min-p 0.1": the fields the model sets, in that
// order; empty when it sets none.
std::string describe_sampling(const RecommendedSampling& s);

}  // namespace rc
