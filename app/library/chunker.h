// Cuts a document's text into chunks for retrieval: about kChunkMinTokens
// to kChunkMaxTokens tokens each, ending at a paragraph where one ends in
// that range, else at a sentence or line, else between words. Chunks are
// spans of the text (its own spacing kept), in order, covering every
// non-blank part of it. Any thread; pure.
#pragma once

#include <string_view>
#include <vector>

#include "library/library.h"

namespace rc::library {

inline constexpr int kChunkMinTokens = 128;
inline constexpr int kChunkMaxTokens = 256;

struct ChunkSpan {
  size_t begin = 0;  // byte offsets into the text
  size_t end = 0;
  int tokens = 0;  // count(text[begin, end))
};

// `max_tokens` >= 16 and `min_tokens` <= `max_tokens`; a single word longer
// than max_tokens is cut at UTF-8 character boundaries.
std::vector<ChunkSpan> split_chunks(std::string_view text, const TokenCounter& count,
                                    int min_tokens = kChunkMinTokens,
                                    int max_tokens = kChunkMaxTokens);

}  // namespace rc::library
