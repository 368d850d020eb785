// Deterministic pseudo-random prompts for the runtime tests: n token ids in
// [3, vocab) (past the usual <unk> <s> </s>), the same for the same seed on
// every platform.
#pragma once

#include <cstdint>
#include <vector>

namespace rc::runtime::testing {

inline std::vector<int32_t> prompt_ids(int n, int vocab, uint32_t seed) {
  std::vector<int32_t> ids;
  uint32_t x = seed;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    ids.push_back(3 + int32_t((x >> 8) % uint32_t(vocab - 3)));
  }
  return ids;
}

}  // namespace rc::runtime::testing
