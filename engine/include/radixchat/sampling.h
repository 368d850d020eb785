// Sampling settings of one request (docs/architecture.md section 9).
#pragma once

#include <cstdint>

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

}  // namespace rc
