// Length of the common prefix of two token spans.
//
// Why not a plain loop: the whole-node case (everything equal) dominates a
// chat trace, and fixed-size memcmp compiles to wide compares, so this runs
// at well under a nanosecond per token; the byte loop only finds the exact
// mismatch inside the last 8-token chunk.
#pragma once

#include <cstddef>
#include <cstring>

#include "radixchat/cache-events.h"

namespace rc {

inline size_t common_prefix(const Token* a, const Token* b, size_t n) {
  size_t i = 0;
  while (i + 8 <= n && std::memcmp(a + i, b + i, 8 * sizeof(Token)) == 0) i += 8;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace rc
