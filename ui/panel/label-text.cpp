#include "panel/label-text.h"

#include <cfloat>
#include <cstdint>
#include <cstdio>

namespace rc::ui::panel {

std::string one_line(const std::string& s, size_t max_chars) {
  std::string flat;
  flat.reserve(s.size());
  for (char c : s) {
    if (c == '\n' || c == '\r')
      flat += " \xE2\x86\xB5 ";  // "↵": the line break stays visible
    else if (c == '\t')
      flat += ' ';
    else if (static_cast<unsigned char>(c) < 0x20)
      continue;
    else
      flat += c;
  }
  // Cut by code points so a multi-byte character is never split.
  size_t points = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    if ((static_cast<unsigned char>(flat[i]) & 0xC0) == 0x80) continue;
    if (points == max_chars) return flat.substr(0, i) + "\xE2\x80\xA6";  // "…"
    ++points;
  }
  return flat;
}

std::string clip_lines(const std::string& text, size_t per_line, size_t lines) {
  size_t line = 0, col = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (col == per_line) ++line, col = 0;
    // A line break that would open one line too many is cut with the rest.
    if (line == lines || (text[i] == '\n' && line + 1 == lines))
      return text.substr(0, i) + "\xE2\x80\xA6";
    if (text[i] == '\n')
      ++line, col = 0;
    else
      ++col;
  }
  return text;
}

std::string fit_text(ImFont* font, float size, const std::string& text, float width) {
  if (font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str()).x <= width) return text;
  const float ell = font->CalcTextSizeA(size, FLT_MAX, 0, "\xE2\x80\xA6").x;
  std::string out;
  float w = 0;
  for (size_t i = 0; i < text.size();) {
    size_t j = i + 1;
    while (j < text.size() && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) ++j;
    const float cw = font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str() + i, text.c_str() + j).x;
    if (w + cw + ell > width) break;
    w += cw;
    out.append(text, i, j - i);
    i = j;
  }
  return out + "\xE2\x80\xA6";
}

std::string line_ends(const std::string& text, size_t keep) {
  const std::string flat = one_line(text, SIZE_MAX);
  std::vector<size_t> starts;  // byte offset of each code point
  for (size_t i = 0; i < flat.size(); ++i)
    if ((static_cast<unsigned char>(flat[i]) & 0xC0) != 0x80) starts.push_back(i);
  if (starts.size() <= 2 * keep) return flat;
  return flat.substr(0, starts[keep]) + "\xE2\x80\xA6" + flat.substr(starts[starts.size() - keep]);
}

std::string fit_text_middle(ImFont* font, float size, const std::string& text, float width) {
  if (font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str()).x <= width) return text;
  const float ell = font->CalcTextSizeA(size, FLT_MAX, 0, "\xE2\x80\xA6").x;
  auto is_cont = [&](size_t k) { return (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80; };
  auto width_of = [&](size_t i, size_t j) {
    return font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str() + i, text.c_str() + j).x;
  };
  // The start gets a little more than half: it says what the node is.
  const float head_room = (width - ell) * 0.55f;
  size_t head = 0;
  float w = 0;
  while (head < text.size()) {
    size_t j = head + 1;
    while (j < text.size() && is_cont(j)) ++j;
    const float cw = width_of(head, j);
    if (w + cw > head_room) break;
    w += cw;
    head = j;
  }
  size_t tail = text.size();
  while (tail > head) {
    size_t i = tail - 1;
    while (i > head && is_cont(i)) --i;
    const float cw = width_of(i, tail);
    if (w + cw + ell > width) break;
    w += cw;
    tail = i;
  }
  return text.substr(0, head) + "\xE2\x80\xA6" + text.substr(tail);
}

std::string thousands(int64_t v) {
  // Built digit by digit: std::string::insert here trips a false GCC 12
  // -Wrestrict warning.
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string s;
  if (v < 0) s += '-';
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

std::string page_span(const std::vector<PageId>& pages) {
  if (pages.empty()) return "no pages";
  bool contiguous = true;
  for (size_t i = 1; i < pages.size(); ++i) contiguous &= pages[i] == pages[i - 1] + 1;
  char buf[96];
  if (pages.size() == 1)
    std::snprintf(buf, sizeof buf, "page %d", pages[0]);
  else if (contiguous)
    std::snprintf(buf, sizeof buf, "%zu pages (%d-%d)", pages.size(), pages.front(), pages.back());
  else
    std::snprintf(buf, sizeof buf, "%zu pages (%d, ..., %d)", pages.size(), pages.front(),
                  pages.back());
  return buf;
}

std::string plural(int64_t n, const char* singular, const char* plural_form) {
  std::string s = thousands(n) + " ";
  if (n == 1) return s + singular;
  return plural_form ? s + plural_form : s + singular + "s";
}

std::string draft_text(uint64_t drafted, uint64_t kept) {
  return "drafted " + thousands(int64_t(drafted)) + " \xC2\xB7 kept " + thousands(int64_t(kept));
}

std::string token_range(int64_t depth, int64_t n) {
  if (n <= 0) return "no tokens";
  if (n == 1) return "token " + thousands(depth + 1);
  return "tokens " + thousands(depth + 1) + "-" + thousands(depth + n);
}

}  // namespace rc::ui::panel
