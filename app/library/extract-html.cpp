// html_text(): the visible text of an HTML page, for the library. Not a full
// HTML parser: it needs only to keep the words a reader sees, in order, and
// drop what is never shown (scripts, styles, comments, markup).
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string>

#include "library/extract.h"

namespace rc::library {
namespace {

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The named entities pages commonly use; any other stays as written.
struct Entity {
  const char* name;
  std::uint32_t cp;
};
constexpr std::array<Entity, 18> kEntities = {{
    {"amp", '&'},
    {"lt", '<'},
    {"gt", '>'},
    {"quot", '"'},
    {"apos", '\''},
    {"nbsp", 0xA0},
    {"ndash", 0x2013},
    {"mdash", 0x2014},
    {"hellip", 0x2026},
    {"lsquo", 0x2018},
    {"rsquo", 0x2019},
    {"ldquo", 0x201C},
    {"rdquo", 0x201D},
    {"copy", 0xA9},
    {"reg", 0xAE},
    {"trade", 0x2122},
    {"laquo", 0xAB},
    {"raquo", 0xBB},
}};

// Decodes the entity at text[i] ('&') into `out`; returns the bytes used,
// 0 when it is not one (the '&' is then kept as text).
size_t decode_entity(std::string_view text, size_t i, std::string& out) {
  const size_t semi = text.find(';', i);
  if (semi == std::string_view::npos || semi - i > 12) return 0;
  const std::string_view body = text.substr(i + 1, semi - i - 1);
  if (body.size() >= 2 && body[0] == '#') {
    const bool hex = body[1] == 'x' || body[1] == 'X';
    const std::string_view digits = body.substr(hex ? 2 : 1);
    if (digits.empty()) return 0;
    std::uint32_t cp = 0;
    for (char c : digits) {
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : hex && std::isxdigit(static_cast<unsigned char>(c))
                        ? (std::tolower(static_cast<unsigned char>(c)) - 'a' + 10)
                        : -1;
      if (d < 0) return 0;
      cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
      if (cp > 0x10FFFF) cp = 0x110000;  // saturate: replaced below
    }
    append_utf8(out, cp);
    return semi - i + 1;
  }
  for (const Entity& e : kEntities) {
    if (body == e.name) {
      append_utf8(out, e.cp);
      return semi - i + 1;
    }
  }
  return 0;
}

// Where "</" + tag starts at or after `from`, in any letter case; npos when
// the element is never closed.
size_t find_end_tag(std::string_view html, size_t from, std::string_view tag) {
  for (size_t i = html.find("</", from); i != std::string_view::npos; i = html.find("</", i + 2)) {
    if (html.size() - i - 2 < tag.size()) return std::string_view::npos;
    bool same = true;
    for (size_t k = 0; same && k < tag.size(); ++k)
      same = std::tolower(static_cast<unsigned char>(html[i + 2 + k])) == tag[k];
    if (same) return i;
  }
  return std::string_view::npos;
}

bool is_block(std::string_view tag) {
  static constexpr std::array<std::string_view, 30> kBlocks = {
      "p",      "div",    "br",   "li",     "ul",         "ol",         "h1",      "h2",
      "h3",     "h4",     "h5",   "h6",     "tr",         "table",      "section", "article",
      "header", "footer", "nav",  "aside",  "pre",        "blockquote", "hr",      "dt",
      "dd",     "title",  "main", "figure", "figcaption", "form"};
  for (std::string_view b : kBlocks)
    if (tag == b) return true;
  return false;
}

}  // namespace

std::string html_text(std::string_view html) {
  std::string raw;  // text with '\n' for block boundaries, blanks not yet collapsed
  raw.reserve(html.size());
  for (size_t i = 0; i < html.size();) {
    const char c = html[i];
    if (c == '&') {
      const size_t used = decode_entity(html, i, raw);
      if (used) {
        i += used;
        continue;
      }
      raw += c;
      ++i;
      continue;
    }
    if (c != '<') {
      raw += c;
      ++i;
      continue;
    }
    if (html.substr(i, 4) == "<!--") {
      const size_t end = html.find("-->", i + 4);
      i = end == std::string_view::npos ? html.size() : end + 3;
      continue;
    }
    const size_t close = html.find('>', i);
    if (close == std::string_view::npos) break;  // an unfinished tag shows nothing
    std::string_view inner = html.substr(i + 1, close - i - 1);
    const bool end_tag = !inner.empty() && inner[0] == '/';
    if (end_tag) inner.remove_prefix(1);
    size_t n = 0;
    while (n < inner.size() && (std::isalnum(static_cast<unsigned char>(inner[n])))) ++n;
    const std::string tag = lower_ascii(inner.substr(0, n));
    i = close + 1;
    if (!end_tag && (tag == "script" || tag == "style" || tag == "noscript" || tag == "template" ||
                     tag == "head")) {
      // Their content is never shown: skip to the matching end tag. <head>
      // goes too, except that its <title> would be lost; pages repeat the
      // title in the body far more often than not.
      const size_t end = find_end_tag(html, i, tag);
      if (end == std::string_view::npos) break;
      const size_t gt = html.find('>', end);
      i = gt == std::string_view::npos ? html.size() : gt + 1;
      continue;
    }
    if (is_block(tag)) raw += '\n';
  }

  // Collapse: runs of spaces and tabs to one space, blanks around line
  // breaks dropped, at most one empty line in a row.
  std::string out;
  out.reserve(raw.size());
  int newlines = 0;
  bool space = false;
  for (char c : raw) {
    if (c == '\n') {
      ++newlines;
      space = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
      space = true;
      continue;
    }
    if (!out.empty()) {
      if (newlines) {
        out.append(std::min(newlines, 2), '\n');
      } else if (space) {
        out += ' ';
      }
    }
    newlines = 0;
    space = false;
    out += c;
  }
  if (!out.empty()) out += '\n';
  return out;
}

}  // namespace rc::library
