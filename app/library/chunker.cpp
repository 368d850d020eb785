#include "library/chunker.h"

#include <algorithm>

namespace rc::library {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// A piece of the text that is never split further, and whether a paragraph
// ends with it (the preferred place to end a chunk).
struct Unit {
  size_t begin, end;
  int tokens;
  bool ends_paragraph;
};

// The spans of `text[begin, end)` cut after each separator of `level`:
// 0 blank lines (paragraphs), 1 sentence ends and line breaks, 2 spaces.
// Leading and trailing blanks of each piece are dropped.
std::vector<std::pair<size_t, size_t>> cut(std::string_view text, size_t begin, size_t end,
                                           int level) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t start = begin;
  auto emit = [&](size_t stop) {
    size_t b = start, e = stop;
    while (b < e && is_space(text[b])) ++b;
    while (e > b && is_space(text[e - 1])) --e;
    if (b < e) out.emplace_back(b, e);
  };
  for (size_t i = begin; i < end; ++i) {
    const char c = text[i];
    bool boundary = false;
    if (level == 0) {
      boundary =
          c == '\n' && i + 1 < end &&
          (text[i + 1] == '\n' || (text[i + 1] == '\r' && i + 2 < end && text[i + 2] == '\n'));
    } else if (level == 1) {
      boundary =
          c == '\n' || ((c == '.' || c == '!' || c == '?') && i + 1 < end && is_space(text[i + 1]));
    } else {
      boundary = is_space(c);
    }
    if (boundary) {
      emit(i + 1);
      start = i + 1;
    }
  }
  emit(end);
  return out;
}

// Pieces of at most `max_bytes` bytes, never inside a UTF-8 character: a
// "word" too long for one chunk (minified code, a base64 blob).
void cut_bytes(std::string_view text, size_t begin, size_t end, size_t max_bytes,
               const TokenCounter& count, std::vector<Unit>& out) {
  while (begin < end) {
    size_t stop = std::min(end, begin + max_bytes);
    while (stop < end && stop > begin + 1 &&
           (static_cast<unsigned char>(text[stop]) & 0xC0) == 0x80)
      --stop;
    out.push_back({begin, stop, count(text.substr(begin, stop - begin)), false});
    begin = stop;
  }
}

void units_of(std::string_view text, size_t begin, size_t end, int level, int max_tokens,
              const TokenCounter& count, std::vector<Unit>& out) {
  for (auto [b, e] : cut(text, begin, end, level)) {
    const int n = count(text.substr(b, e - b));
    if (n <= max_tokens) {
      out.push_back({b, e, n, false});
    } else if (level < 2) {
      units_of(text, b, e, level + 1, max_tokens, count, out);
    } else {
      // A byte is at most one token with byte fallback, so max_tokens bytes fit.
      cut_bytes(text, b, e, static_cast<size_t>(max_tokens), count, out);
    }
  }
}

}  // namespace

std::vector<ChunkSpan> split_chunks(std::string_view text, const TokenCounter& count,
                                    int min_tokens, int max_tokens) {
  std::vector<Unit> units;
  for (auto [b, e] : cut(text, 0, text.size(), 0)) {
    const size_t first = units.size();
    units_of(text, b, e, 0, max_tokens, count, units);
    if (units.size() > first) units.back().ends_paragraph = true;
  }
  std::vector<ChunkSpan> chunks;
  ChunkSpan cur;
  bool open = false;
  auto close = [&] {
    if (!open) return;
    cur.tokens = count(text.substr(cur.begin, cur.end - cur.begin));
    chunks.push_back(cur);
    open = false;
  };
  for (const Unit& u : units) {
    // Units are counted alone; the joined text may count a little
    // differently, which the stored count (recounted on close) reflects.
    if (open && cur.tokens + u.tokens > max_tokens) close();
    if (!open) {
      cur = {u.begin, u.end, 0};
      open = true;
    }
    cur.end = u.end;
    cur.tokens += u.tokens;
    if (u.ends_paragraph && cur.tokens >= min_tokens) close();
  }
  close();
  return chunks;
}

}  // namespace rc::library
